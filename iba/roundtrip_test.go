package iba

import (
	"bytes"
	"encoding/hex"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// reservedMask returns a mask with a 1 for every bit of s that belongs to a
// reserved component, nested structures and arrays of them included: the
// bits MarshalTo writes as zero whatever the value (IBA 13.4.3), which a
// round trip must therefore ignore.
func reservedMask(s *Struct) []byte {
	m := make([]byte, s.Size)
	var walk func(s *Struct, base int)
	walk = func(s *Struct, base int) {
		for _, f := range s.Fields {
			for i := 0; i < f.Count; i++ {
				off := base + f.Off + i*f.Bits
				switch {
				case f.Kind == KindStruct && !f.Reserved:
					walk(f.Struct, off)
				case f.Reserved:
					for w := 0; w < f.Bits; w += 64 {
						n := min(64, f.Bits-w)
						putBits(m, off+w, n, ^uint64(0)>>(64-n))
					}
				}
			}
		}
	}
	walk(s, 0)
	return m
}

// TestReservedMaskPartition checks that every bit of every structure is
// either reserved or part of exactly one named component: reservedMask
// and the defined bits are complements, so no bit escapes a round trip.
func TestReservedMaskPartition(t *testing.T) {
	for _, s := range Structs() {
		r, d := reservedMask(s), definedBits(s)
		for i := range r {
			if r[i]&d[i] != 0 || r[i]|d[i] != 0xff {
				t.Errorf("%s: byte %d: reserved %08b, defined %08b", s.Name, i, r[i], d[i])
				break
			}
		}
	}
}

// roundTrip checks each structure of a source file: random bytes ->
// Unmarshal -> MarshalTo gives the bytes back except the reserved bits,
// Unmarshal of that gives the same value, and a buffer one byte short is a
// *DecodeError naming the structure.
func roundTrip(t *testing.T, seed uint64, all []Attribute) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x1ba))
	for _, a := range all {
		s := a.Desc()
		mask := reservedMask(s)
		for range 20 {
			in := make([]byte, s.Size)
			for i := range in {
				in[i] = byte(rng.Uint32())
			}
			v := s.New()
			if err := v.Unmarshal(in); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			out := bytes.Repeat([]byte{0x5a}, s.Size)
			if err := v.MarshalTo(out); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			for i := range in {
				if out[i] != in[i]&^mask[i] {
					t.Fatalf("%s: byte %d: marshalled %#02x from %#02x (reserved mask %#02x)", s.Name, i, out[i], in[i], mask[i])
				}
			}
			w := s.New()
			if err := w.Unmarshal(out); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if !reflect.DeepEqual(v, w) {
				t.Fatalf("%s: value changed in a round trip:\n%+v\n%+v", s.Name, v, w)
			}
		}
		var de *DecodeError
		if err := s.New().Unmarshal(make([]byte, s.Size-1)); !errors.As(err, &de) || de.Struct != s.Name {
			t.Errorf("%s: Unmarshal of %d bytes: %v, want a *DecodeError naming %s", s.Name, s.Size-1, err, s.Name)
		}
	}
}

// declaredIn lists the iba structures a source file of the package
// declares, so that a file's test notices a structure it does not cover.
func declaredIn(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, fl := range st.Fields.List {
				if fl.Tag != nil && strings.Contains(fl.Tag.Value, `iba:"`) {
					names = append(names, ts.Name.Name)
					break
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// checkFile runs roundTrip over all and checks that all is exactly what
// file declares.
func checkFile(t *testing.T, file string, seed uint64, all []Attribute) {
	t.Helper()
	var have []string
	for _, a := range all {
		have = append(have, a.Desc().Name)
	}
	slices.Sort(have)
	if want := declaredIn(t, file); !slices.Equal(have, want) {
		t.Errorf("%s declares %v; the test covers %v", file, want, have)
	}
	roundTrip(t, seed, all)
}

// fuzzDecode is the body of the per-file fuzz targets: arbitrary bytes
// go to every decoder of the file. Nothing may panic; a short buffer is a
// *DecodeError; what decodes re-encodes to the same bits, reserved ones
// aside, and decodes again to the same value.
func fuzzDecode(t *testing.T, all []Attribute, data []byte) {
	for _, a := range all {
		s := a.Desc()
		v := s.New()
		err := v.Unmarshal(data)
		if len(data) < s.Size {
			var de *DecodeError
			if !errors.As(err, &de) || de.Struct != s.Name || de.Offset != len(data) {
				t.Fatalf("%s: %d bytes: %v", s.Name, len(data), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v on %d bytes", s.Name, err, len(data))
		}
		out := make([]byte, s.Size)
		if err := v.MarshalTo(out); err != nil {
			t.Fatal(err)
		}
		mask := reservedMask(s)
		for i := range out {
			if out[i] != data[i]&^mask[i] {
				t.Fatalf("%s: byte %d changed in a round trip", s.Name, i)
			}
		}
		w := s.New()
		if err := w.Unmarshal(out); err != nil || !reflect.DeepEqual(v, w) {
			t.Fatalf("%s: value changed in a round trip (%v)", s.Name, err)
		}
	}
}

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
