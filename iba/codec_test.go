package iba

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// definedBits returns a mask of the bits of s that belong to named (not
// reserved) components, so that a round trip can ignore reserved bits, which
// MarshalTo writes as zero (IBA 13.4.3: reserved fields are sent as 0).
func definedBits(s *Struct) []byte {
	m := make([]byte, s.Size)
	var walk func(s *Struct, base int)
	walk = func(s *Struct, base int) {
		for _, f := range s.Fields {
			if f.Reserved {
				continue
			}
			for i := 0; i < f.Count; i++ {
				off := base + f.Off + i*f.Bits
				if f.Kind == KindStruct {
					walk(f.Struct, off)
					continue
				}
				for w := 0; w < f.Bits; w += 64 {
					n := min(64, f.Bits-w)
					putBits(m, off+w, n, ^uint64(0)>>(64-n))
				}
			}
		}
	}
	walk(s, 0)
	return m
}

func andMask(b, m []byte) []byte {
	out := make([]byte, len(m))
	for i := range m {
		out[i] = b[i] & m[i]
	}
	return out
}

// TestRoundTripAll checks every declared structure: random bytes ->
// Unmarshal -> MarshalTo gives the bytes back (reserved bits aside), and
// the value survives MarshalTo -> Unmarshal.
func TestRoundTripAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range Structs() {
		t.Run(s.Name, func(t *testing.T) {
			mask := definedBits(s)
			for range 50 {
				in := make([]byte, s.Size)
				for i := range in {
					in[i] = byte(rng.Uint32())
				}
				v := s.New()
				if err := v.Unmarshal(in); err != nil {
					t.Fatal(err)
				}
				out := make([]byte, s.Size)
				for i := range out {
					out[i] = 0xa5 // MarshalTo must write every byte
				}
				if err := v.MarshalTo(out); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, andMask(in, mask)) {
					t.Fatalf("bytes changed in a round trip:\n in  %x\n out %x\n mask %x", in, out, mask)
				}
				w := s.New()
				if err := w.Unmarshal(out); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(v, w) {
					t.Fatalf("value changed in a round trip:\n%+v\n%+v", v, w)
				}
			}
		})
	}
}

func TestShortBuffer(t *testing.T) {
	for _, s := range Structs() {
		v := s.New()
		err := v.Unmarshal(make([]byte, s.Size-1))
		var de *DecodeError
		if !errors.As(err, &de) || de.Struct != s.Name || de.Offset != s.Size-1 {
			t.Errorf("%s: Unmarshal of %d bytes: got %v, want a DecodeError naming it at byte %d", s.Name, s.Size-1, err, s.Size-1)
		}
		if err := v.MarshalTo(make([]byte, s.Size-1)); !errors.As(err, &de) {
			t.Errorf("%s: MarshalTo into a short buffer: got %v", s.Name, err)
		}
	}
}

// TestDescConsistent checks the field tables against the Go types: every
// structure's Desc is the one the registry lists, sizes add up, and names
// within a structure are unique.
func TestDescConsistent(t *testing.T) {
	for _, s := range Structs() {
		if s.New().Desc() != s {
			t.Errorf("%s: New().Desc() is not the registered table", s.Name)
		}
		end := 0
		for _, f := range s.Fields {
			if f.Off != end {
				t.Errorf("%s.%s: offset %d, previous component ends at %d", s.Name, f.Name, f.Off, end)
			}
			end = f.Off + f.Bits*f.Count
		}
		if end != s.Size*8 {
			t.Errorf("%s: components end at bit %d, size is %d bytes", s.Name, end, s.Size)
		}
		if got, ok := StructByName(s.Name); !ok || got != s {
			t.Errorf("StructByName(%q) = %v, %v", s.Name, got, ok)
		}
		for _, a := range s.Aliases {
			if got, ok := StructByName(a); !ok || got != s {
				t.Errorf("StructByName(alias %q) = %v, %v", a, got, ok)
			}
		}
	}
}

func TestGetPutBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		w := 1 + rng.IntN(64)
		off := rng.IntN(128 - w + 1)
		v := rng.Uint64() >> (64 - w)
		orig := append([]byte(nil), b...)
		putBits(b, off, w, v)
		if got := getBits(b, off, w); got != v {
			t.Fatalf("put/get %d bits at %d: got %#x want %#x", w, off, got, v)
		}
		for i := 0; i < 128; i++ {
			if i >= off && i < off+w {
				continue
			}
			if getBits(b, i, 1) != getBits(orig, i, 1) {
				t.Fatalf("putBits(%d, %d) changed bit %d", off, w, i)
			}
		}
	}
}

// FuzzUnmarshal feeds arbitrary bytes to every structure's decoder: the
// first byte picks the structure. Nothing may panic, and what decodes must
// re-encode to the same defined bits.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte{0})
	f.Add(append([]byte{1}, bytes.Repeat([]byte{0xff}, 300)...))
	f.Add(append([]byte{7}, make([]byte, 80)...))
	all := Structs()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		s := all[int(data[0])%len(all)]
		in := data[1:]
		v := s.New()
		if err := v.Unmarshal(in); err != nil {
			if len(in) >= s.Size {
				t.Fatalf("%s: %v on %d bytes", s.Name, err, len(in))
			}
			return
		}
		out := make([]byte, s.Size)
		if err := v.MarshalTo(out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, andMask(in[:s.Size], definedBits(s))) {
			t.Fatalf("%s: round trip changed bytes", s.Name)
		}
	})
}
