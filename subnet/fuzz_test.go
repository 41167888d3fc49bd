package subnet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func addGoldenSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "TestGolden", pattern))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
}

// FuzzParseIBNDCache: no input panics, read from memory or as a stream,
// both ways agree, and whatever loads writes out a file that loads and
// writes out the same again.
func FuzzParseIBNDCache(f *testing.F) {
	addGoldenSeeds(f, "*.cache")
	f.Add([]byte{0x2b, 0x83, 0xe7, 0x8f, 1, 0, 0, 0})
	f.Add([]byte{0x2b, 0x83, 0xe7, 0x8f})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseIBNDCache(data)
		if _, serr := ReadIBNDCache(bytes.NewReader(data)); (serr == nil) != (err == nil) {
			t.Fatalf("from memory: %v; as a stream: %v", err, serr)
		}
		if err != nil {
			return
		}
		var a bytes.Buffer
		if err := s.WriteIBNDCache(&a); err != nil {
			t.Fatalf("loaded but does not write: %v", err)
		}
		s2, err := ParseIBNDCache(a.Bytes())
		if err != nil {
			t.Fatalf("our output does not load: %v", err)
		}
		var b bytes.Buffer
		if err := s2.WriteIBNDCache(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("second write differs (%v)", err)
		}
		_ = s.WriteTopology(&bytes.Buffer{}, TopologyOptions{Group: true, Full: true, Now: time.Unix(0, 0)})
		_ = s.WritePortsReport(&bytes.Buffer{}, TopologyOptions{})
		var own bytes.Buffer
		if err := s.WriteCache(&own); err != nil {
			t.Fatalf("our cache format: %v", err)
		}
		if _, err := ParseCache(own.Bytes()); err != nil {
			t.Fatalf("our cache does not load: %v", err)
		}
	})
}

// FuzzParseCache: no input panics; what loads writes back identically.
func FuzzParseCache(f *testing.F) {
	for _, name := range []string{"dualport.cache", "mixedrates.cache"} {
		data, err := os.ReadFile(filepath.Join("testdata", "TestGolden", name))
		if err != nil {
			f.Fatal(err)
		}
		s, err := ParseIBNDCache(data)
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		if err := s.WriteCache(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
		f.Add(b.Bytes()[:cacheHeaderLen+10])
	}
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCache(data)
		if _, serr := ReadCache(bytes.NewReader(data)); (serr == nil) != (err == nil) {
			t.Fatalf("from memory: %v; as a stream: %v", err, serr)
		}
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := s.WriteCache(&b); err != nil {
			t.Fatalf("loaded but does not write: %v", err)
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Fatalf("written back differs")
		}
		_ = s.WriteTopology(&bytes.Buffer{}, TopologyOptions{})
		_ = s.WriteIBNDCache(&bytes.Buffer{})
	})
}

// FuzzReadTopology: no input panics; whatever reads prints, and the print
// reads back.
func FuzzReadTopology(f *testing.F) {
	addGoldenSeeds(f, "*.topo")
	addGoldenSeeds(f, "*-g.golden")
	addGoldenSeeds(f, "*-f.golden")
	f.Add([]byte("switchguid=+5\nSwitch 2 \"a\" # \"x\" enhanced port 0 lid 1 lmc 7\n[1] \"b\"[1] # lid 3 12xXDR\n\nHca 1 \"b\"\n[1](99) \"a\"[1] # lid 3 lmc 0 \"a\" lid 1 1x???\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadTopology(bytes.NewReader(data))
		if err != nil || s.Len() == 0 {
			return
		}
		var b bytes.Buffer
		if err := s.WriteTopology(&b, TopologyOptions{Full: true, Now: time.Unix(0, 0)}); err != nil {
			t.Fatalf("read but does not print: %v", err)
		}
		if _, err := ReadTopology(strings.NewReader(b.String())); err != nil {
			t.Fatalf("our output does not read back: %v\n%s", err, b.String())
		}
		_ = s.WriteIBNDCache(&bytes.Buffer{})
	})
}

// FuzzParseDRPath: no input panics; what parses prints as "0,..." and
// that parses back to the same path, of at most MaxHops hops of ports
// 1 and up.
func FuzzParseDRPath(f *testing.F) {
	for _, s := range []string{"0", "0,1", "1,5,3", " 0, 2 ,254", "0,1,", "0,,1", "0,256", "-1", strings.Repeat("1,", 64) + "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseDRPath(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v is not ErrInvalid", s, err)
			}
			return
		}
		if len(p) > MaxHops {
			t.Fatalf("%q: %d hops", s, len(p))
		}
		for _, h := range p {
			if h == 0 {
				t.Fatalf("%q: hop 0 in %v", s, p)
			}
		}
		back, err := ParseDRPath(p.String())
		if err != nil || !bytes.Equal(back, p) {
			t.Fatalf("%q: %v prints %q, which reads back as %v (%v)", s, p, p.String(), back, err)
		}
	})
}

// FuzzParseDiffChecks: no input panics; every check set parses from the
// keys it is made of.
func FuzzParseDiffChecks(f *testing.F) {
	for _, s := range []string{"sw,ca,router,port,lid,nodedesc", "SW, Ca", "", ",", "lid,bogus", "port,,port"} {
		f.Add(s)
	}
	keys := map[DiffChecks]string{DiffSwitch: "sw", DiffCA: "ca", DiffRouter: "router", DiffPort: "port", DiffLID: "lid", DiffNodeDesc: "nodedesc"}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseDiffChecks(s)
		if err != nil {
			return
		}
		var names []string
		for bit, k := range keys {
			if c&bit != 0 {
				names = append(names, k)
				c &^= bit
			}
		}
		if c != 0 {
			t.Fatalf("%q: unknown bits %#x", s, c)
		}
		again, err := ParseDiffChecks(strings.Join(names, ","))
		if err != nil {
			t.Fatalf("%q: its keys %v do not parse: %v", s, names, err)
		}
		want, _ := ParseDiffChecks(s)
		if again != want {
			t.Fatalf("%q: %#x, its keys give %#x", s, want, again)
		}
	})
}
