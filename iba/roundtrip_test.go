package iba

import (
	"encoding/hex"
	"strings"
	"testing"
)

// hexBytes assembles a byte literal written as hex, one line per word or
// component, spaces and "|" separators ignored.
func hexBytes(t *testing.T, lines ...string) []byte {
	t.Helper()
	s := strings.NewReplacer(" ", "", "|", "").Replace(strings.Join(lines, ""))
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expect compares one decoded component with the value the layout gives.
func expect[T comparable](t *testing.T, name string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// expectAttr checks where the registry puts an attribute: LookupAttr of
// (class, id) finds want, or nothing when want is "".
func expectAttr(t *testing.T, c Class, id uint16, want string) {
	t.Helper()
	s, ok := LookupAttr(c, id)
	switch {
	case want == "" && ok:
		t.Errorf("LookupAttr(%v, %#x) = %s, want none", c, id, s.Name)
	case want != "" && (!ok || s.Name != want):
		name := "none"
		if ok {
			name = s.Name
		}
		t.Errorf("LookupAttr(%v, %#x) = %s, want %s", c, id, name, want)
	}
}

// fieldNamed finds a component by IBA name; the tests use it to check
// labels and hints against infiniband-diags.
func fieldNamed(t *testing.T, s *Struct, name string) Field {
	t.Helper()
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("%s has no component %s", s.Name, name)
	return Field{}
}

// allowing lists the structures that one of the RPCs may carry.
func allowing(rpcs ...string) []*Struct {
	var out []*Struct
	for _, s := range Structs() {
		for _, r := range rpcs {
			if s.Allows(r) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}
