package diags

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// run runs ibtool in-process as a shell would, argv[0] included.
func run(t *testing.T, stdin string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), argv, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/<TestName>/<name>.golden; subtests
// share their test's files.
func golden(t *testing.T, name, got string) {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	path := filepath.Join("testdata", top, name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testSession is a session on a MAD client a test made itself.
func testSession(e *Env, mc *mad.Client, lp mad.LocalPort) *session {
	return e.sessionOn(&fabric.Fabric{MAD: mc, Local: lp, Resolver: &ibpath.Resolver{MAD: mc}})
}

// noAnswer says whether a message reports a MAD that got no reply: lost
// (timed out) or refused by the transport on every try (dropped).
func noAnswer(msg string) bool {
	return strings.Contains(msg, "timed out") || strings.Contains(msg, "dropped on each of")
}
