package diags

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// fuzzFabric is the fabric the fuzz targets run commands on: small,
// in-process and built afresh for each run in about a millisecond, so that
// a Set one input makes cannot change what the next one sees.
const fuzzFabric = "sim:fattree:k=2,n=2"

// fuzzWords splits a fuzzer's string into at most n arguments.
func fuzzWords(s string, n int) []string {
	w := strings.Fields(s)
	return w[:min(len(w), n)]
}

// fuzzStatuses are the exit statuses a command may end with on any input:
// success, failure, usage, a partial answer, saquery's errno values (EIO,
// EINVAL, ENONET, ETIMEDOUT) and IBEXIT's 255.
var fuzzStatuses = map[int]bool{0: true, 1: true, 2: true, 3: true, 5: true, 22: true, 64: true, 110: true, 255: true}

// fuzzCommand runs ibtool with argv (after "ibtool") on fuzzFabric, with
// short MAD waits so that a MAD the fabric drops costs little, and fails
// on a status outside fuzzStatuses or a run that takes seconds. A panic
// fails the fuzz test by itself.
func fuzzCommand(t *testing.T, argv ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	code := Main(ctx, append([]string{"ibtool", "--fabric", fuzzFabric, "-t", "20", "--retries", "0"}, argv...), strings.NewReader(""), &out, &errb)
	if !fuzzStatuses[code] {
		t.Fatalf("%q: exit %d\n%s", argv, code, errb.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("%q took %v", argv, d)
	}
	return out.String(), errb.String(), code
}
