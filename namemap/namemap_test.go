package namemap

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
)

func TestParse(t *testing.T) {
	m, err := Parse(strings.NewReader(`# a comment
0x0002c90300000001 "sw-spine-1"
   0x0002c90300000002	leaf 1 # the first leaf
0x0002c90300000001 "second line of a GUID loses"
5 "five"
0x30	"q" # x
0x0002c90300000003
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g    iba.GUID
		want string
		ok   bool
	}{
		{0x0002c90300000001, "sw-spine-1", true},
		{0x0002c90300000002, "leaf 1 ", true},
		{5, "five", true},
		{0x30, "q", true},
		{0x0002c90300000003, "", false},
	} {
		got, ok := m.Lookup(c.g)
		if got != c.want || ok != c.ok {
			t.Errorf("Lookup(%v) = %q, %v; want %q, %v", c.g, got, ok, c.want, c.ok)
		}
	}
	if m.Name(7, "hca7 HCA-1") != "hca7 HCA-1" || m.Len() != 4 {
		t.Errorf("Name of an unnamed node %q, Len %d", m.Name(7, "hca7 HCA-1"), m.Len())
	}
	var nilMap *Map
	if nilMap.Name(1, "x") != "x" || nilMap.Len() != 0 {
		t.Error("the nil map names something")
	}
}

func TestParseErrors(t *testing.T) {
	long := "0x1 " + strings.Repeat("n", MaxLine+10) + "\n0x2 two\n"
	for _, c := range []struct {
		name, in string
		line     int
	}{
		{"not a GUID", "0x1 one\nroot:x:0:0:root:/root:/bin/bash\n", 2},
		{"GUID overflows", "0x10000000000000000 big\n", 1},
		{"a line too long", long, 1},
	} {
		_, err := Parse(strings.NewReader(c.in), "map")
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) || se.Line != c.line {
			t.Errorf("%s: error %v, want a SyntaxError of line %d", c.name, err, c.line)
		}
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrSyntax) {
		t.Errorf("a directory: error %v", err)
	}
	if _, err := Load("/no/such/map"); err == nil {
		t.Error("a missing map named on purpose loaded")
	}
}

func TestClean(t *testing.T) {
	b := make([]byte, 64)
	copy(b, "sw\x01one\x7f")
	if got := Clean(b); got != "sw one " {
		t.Errorf("Clean = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("0x0002c90300000001 \"sw-1\"\n# c\n\n5 five # x\n")
	f.Add("0x1\n0x2 \"\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not a SyntaxError", err)
			}
			return
		}
		for g := range m.names {
			if s, ok := m.Lookup(g); !ok || s == "" || strings.ContainsAny(s, "\"#\n") {
				t.Fatalf("GUID %v named %q", g, s)
			}
		}
	})
}

func ExampleParse() {
	m, err := Parse(strings.NewReader(`0x0002c90300000001 "spine-1"
0x0002c90300000002 "leaf-1"
`), "ib-node-name-map")
	if err != nil {
		fmt.Println(err)
		return
	}
	desc := make([]byte, 64)
	copy(desc, "hca7 HCA-1")
	fmt.Println(m.Name(0x0002c90300000001, "MF0;switch-1:SX6036/U1"))
	fmt.Println(m.NameBytes(0x0002c90300000007, desc))
	// Output:
	// spine-1
	// hca7 HCA-1
}

func TestGUIDs(t *testing.T) {
	m, err := Parse(strings.NewReader("0x2 \"sw\"\n0x1 \"sw\"\n0x3 \"ca\"\n"), "map")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(m.GUIDs("sw")); got != fmt.Sprint([]iba.GUID{1, 2}) {
		t.Errorf("sw: %s", got)
	}
	if got := m.GUIDs("none"); got != nil {
		t.Errorf("none: %v", got)
	}
	var nilMap *Map
	if got := nilMap.GUIDs("sw"); got != nil {
		t.Errorf("nil map: %v", got)
	}
}
