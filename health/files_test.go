package health

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The report files of a small leaf-spine, compared with golden files
// (ibdiagnet 1.x cannot run here: no peer to compare with live). Counter
// values move with the check's own MADs and are masked.
func TestWriteFiles(t *testing.T) {
	f := openSim(t, "leafspine:leaves=2,spines=1,hosts=2,uplinks=1")
	r := run(t, f, Options{})
	dir := t.TempDir()
	paths, err := WriteFiles(dir, "ibdiagnet", r.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Files) {
		t.Fatalf("wrote %v, want every one of %v", paths, Files)
	}
	masks := map[string]*regexp.Regexp{
		"pm":     regexp.MustCompile(`(?m)^(port_(xmit|rcv)_(data|pkts)) = 0x[0-9a-f]+$`),
		"sm":     regexp.MustCompile(`(act_count):\d+->\d+`),
		"db_csv": regexp.MustCompile(`(?s)START_(PM_INFO|PM_DELTA|SM_INFO).*?END_(PM_INFO|PM_DELTA|SM_INFO)`),
	}
	for _, ext := range Files {
		got, err := os.ReadFile(filepath.Join(dir, "ibdiagnet."+ext))
		if err != nil {
			t.Fatal(err)
		}
		if m := masks[ext]; m != nil {
			got = m.ReplaceAll(got, []byte("$1 (masked)"))
		}
		golden := filepath.Join("testdata", t.Name(), ext+".golden")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s:\n%s", ext, golden, firstDiff(string(want), string(got)))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n  want " + x + "\n  got  " + y
		}
	}
	return ""
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	var b []byte
	if i == 0 {
		return "0"
	}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
