package ibdiagconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := `# Define different defaults for all infiniband-diag tools.
#CA=mlx4_0

CA=mlx5_1
Port=2
timeout = 50   # ms
MLX_EPI=false
m_key=0x00000000DEADBEEF
sa_key=12
nd_format=%d
timeout=70
colour=blue
`
	c, err := Parse(strings.NewReader(in), "ibdiag.conf")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("CA=%s Port=%d timeout=%d MLX_EPI=%v m_key=%#x sa_key=%d nd_format=%s unknown=%v",
		*c.CA, *c.Port, *c.Timeout, *c.MlxEPI, *c.MKey, *c.SAKey, *c.NDFormat, c.Unknown)
	want := "CA=mlx5_1 Port=2 timeout=70 MLX_EPI=false m_key=0xdeadbeef sa_key=12 nd_format=%d unknown=[{12 colour blue}]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	empty, err := Parse(strings.NewReader("# nothing\n\n"), "x")
	if err != nil || empty.CA != nil || empty.Port != nil || empty.Timeout != nil || empty.MlxEPI != nil || empty.MKey != nil || empty.SAKey != nil {
		t.Errorf("an empty file sets %+v (%v)", empty, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"CA\n", "line 1: want KEY=VALUE"},
		{"# c\nPort=one\n", `line 2: Port: "one" is not a number of at most 8 bits`},
		{"Port=256\n", "line 1: Port"},
		{"timeout=-5\n", "line 1: timeout"},
		{"m_key=0x1ffffffffffffffff\n", "line 1: m_key"},
		{"sa_key=\n", "line 1: sa_key has no value"},
		{"=5\n", "line 1: no key before '='"},
		{"MLX_EPI=maybe\n", "line 1: MLX_EPI: want true or false"},
		{"CA=mlx5 0\n", "line 1: CA: a device name has no blanks"},
		{"CA=x\n" + strings.Repeat("#", MaxLine+1) + "\n", "line 2: a line longer than"},
		{strings.Repeat("#\n", MaxFile/2+1), "larger than"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "f.conf")
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "f.conf") {
			t.Errorf("%.40q: error %v, want a syntax error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(filepath.Join(dir, "none.conf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	p := filepath.Join(dir, "ibdiag.conf")
	if err := os.WriteFile(p, []byte("timeout=9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadFile(p)
	if err != nil || c.Timeout == nil || *c.Timeout != 9 {
		t.Errorf("ReadFile: %+v, %v", c, err)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Error("read a directory")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("CA=mlx5_0\nPort=1\ntimeout=50 # x\nMLX_EPI=true\nm_key=0x1\nsa_key=2\nnd_format=x\nother=1\n")
	f.Add("#c\n\n=\nCA\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 0 {
				t.Fatalf("error %v is not a SyntaxError", err)
			}
			return
		}
		if c.CA != nil && (*c.CA == "" || strings.ContainsAny(*c.CA, " \t\n")) {
			t.Fatalf("CA %q", *c.CA)
		}
		if c.Port != nil && (*c.Port < 0 || *c.Port > 255) {
			t.Fatalf("Port %d", *c.Port)
		}
		if c.Timeout != nil && *c.Timeout < 0 {
			t.Fatalf("timeout %d", *c.Timeout)
		}
		for _, u := range c.Unknown {
			if u.Key == "" || u.Value == "" || u.Line < 1 {
				t.Fatalf("unknown setting %+v", u)
			}
		}
	})
}

func ExampleParse() {
	c, err := Parse(strings.NewReader("# site defaults\nCA=mlx5_0\nm_key=0x1234\n"), DefaultPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("CA %s, M_Key %#x, timeout set: %v\n", *c.CA, *c.MKey, c.Timeout != nil)
	// Output: CA mlx5_0, M_Key 0x1234, timeout set: false
}
