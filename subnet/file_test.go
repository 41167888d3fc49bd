package subnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// zeros is an endless stream of zero bytes, as /dev/zero reads; it counts
// what was read from it.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestReadEndlessStreams: a stream that never ends is refused after its
// first bytes, by its magic number or as binary data, whichever reader
// gets it.
func TestReadEndlessStreams(t *testing.T) {
	for name, read := range map[string]func(io.Reader) error{
		"Read":          func(r io.Reader) error { _, _, err := Read(r); return err },
		"ReadTopology":  func(r io.Reader) error { _, err := ReadTopology(r); return err },
		"ReadCache":     func(r io.Reader) error { _, err := ReadCache(r); return err },
		"ReadIBNDCache": func(r io.Reader) error { _, err := ReadIBNDCache(r); return err },
	} {
		z := &zeros{}
		err := read(z)
		if err == nil {
			t.Errorf("%s of zeros: no error", name)
			continue
		}
		if z.n > 1<<20 {
			t.Errorf("%s read %d bytes of zeros before failing: %v", name, z.n, err)
		}
		t.Logf("%s: %v", name, err)
	}
	if _, err := ReadTopology(&zeros{}); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "binary data") {
		t.Errorf("ReadTopology of zeros: %v, want a syntax error about binary data", err)
	}
}

// TestReadFileDevZero is `ibnetdiscover --load-cache /dev/zero`: refused at
// once, naming the file.
func TestReadFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	start := time.Now()
	_, _, err := ReadFile("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero") {
		t.Fatalf("ReadFile(/dev/zero): %v, want an error naming the file", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ReadFile(/dev/zero) took %v", d)
	}
}

// TestReadFileFormats: ReadFile tells the three formats apart and reads
// each to the same subnet.
func TestReadFileFormats(t *testing.T) {
	topo := filepath.Join("testdata", "TestGolden", "dualport.topo")
	ibnd := filepath.Join("testdata", "TestGolden", "dualport.cache")
	s, f, err := ReadFile(ibnd)
	if err != nil || f != FormatIBNDCache {
		t.Fatalf("ReadFile(%s): %v, format %v", ibnd, err, f)
	}
	var own bytes.Buffer
	if err := s.WriteCache(&own); err != nil {
		t.Fatal(err)
	}
	ownPath := filepath.Join(t.TempDir(), "own.cache")
	if err := os.WriteFile(ownPath, own.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s2, f, err := ReadFile(ownPath)
	if err != nil || f != FormatCache {
		t.Fatalf("ReadFile(own cache): %v, format %v", err, f)
	}
	if s2.Len() != s.Len() {
		t.Errorf("own cache: %d nodes of %d", s2.Len(), s.Len())
	}
	s3, f, err := ReadFile(topo)
	if err != nil || f != FormatTopology {
		t.Fatalf("ReadFile(%s): %v, format %v", topo, err, f)
	}
	if s3.Len() != s.Len() {
		t.Errorf("%s: %d nodes of %d", topo, s3.Len(), s.Len())
	}
	if _, _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}

// TestReadShortStreams: a stream that ends within the header of the cache
// its magic number names is a truncated cache, not a panic.
func TestReadShortStreams(t *testing.T) {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], ibndMagic)
	for _, data := range [][]byte{nil, magic[:], append(magic[:], 1, 0, 0, 0), []byte(cacheMagic)} {
		for name, read := range map[string]func(io.Reader) error{
			"Read":          func(r io.Reader) error { _, _, err := Read(r); return err },
			"ReadCache":     func(r io.Reader) error { _, err := ReadCache(r); return err },
			"ReadIBNDCache": func(r io.Reader) error { _, err := ReadIBNDCache(r); return err },
		} {
			if err := read(bytes.NewReader(data)); err == nil && len(data) > 0 {
				t.Errorf("%s(%q): no error", name, data)
			}
		}
	}
	fh := filepath.Join(t.TempDir(), "short.cache")
	if err := os.WriteFile(fh, magic[:], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(fh); err == nil || !strings.Contains(err.Error(), "truncated header") {
		t.Errorf("ReadFile of a 4-byte cache: %v, want a truncated header", err)
	}
}

// TestCacheHeaderLimits: a cache header that declares more than
// MaxFileSize is refused before anything more is read; one that declares
// more than the stream holds costs only what the stream holds.
func TestCacheHeaderLimits(t *testing.T) {
	var hdr [cacheHeaderLen]byte
	copy(hdr[:], cacheMagic)
	binary.LittleEndian.PutUint32(hdr[8:], cacheVersion)
	binary.LittleEndian.PutUint32(hdr[16:], 0xffffffff)
	z := &zeros{}
	_, err := ReadCache(io.MultiReader(bytes.NewReader(hdr[:]), z))
	if !errors.Is(err, ErrTooLarge) || z.n != 0 {
		t.Errorf("ReadCache of a header declaring 4G nodes: %v after %d more bytes, want ErrTooLarge at once", err, z.n)
	}
	binary.LittleEndian.PutUint32(hdr[16:], 1000)
	if _, err := ReadCache(bytes.NewReader(hdr[:])); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "file has 64") {
		t.Errorf("ReadCache of a header alone: %v", err)
	}

	var ih [ibndHeaderLen]byte
	binary.LittleEndian.PutUint32(ih[0:], ibndMagic)
	binary.LittleEndian.PutUint32(ih[4:], ibndVersion)
	binary.LittleEndian.PutUint32(ih[8:], 0xffffffff)
	z = &zeros{}
	if _, err := ReadIBNDCache(io.MultiReader(bytes.NewReader(ih[:]), z)); !errors.Is(err, ErrTooLarge) || z.n != 0 {
		t.Errorf("ReadIBNDCache of a header declaring 4G nodes: %v after %d more bytes", err, z.n)
	}
	binary.LittleEndian.PutUint32(ih[8:], 1)
	z = &zeros{}
	_, err = ReadIBNDCache(io.MultiReader(bytes.NewReader(ih[:]), z))
	if !errors.Is(err, ErrCorrupt) || z.n > 1<<20 {
		t.Errorf("ReadIBNDCache of a valid header and endless zeros: %v after %d bytes, want ErrCorrupt at the first record", err, z.n)
	}
	copy(hdr[16:], []byte{1, 0, 0, 0})
	z = &zeros{}
	if _, err := ReadCache(io.MultiReader(bytes.NewReader(hdr[:]), z)); !errors.Is(err, ErrCorrupt) || z.n > 1<<21 {
		t.Errorf("ReadCache of a valid header and endless zeros: %v after %d bytes, want ErrCorrupt at the first record", err, z.n)
	}
}

// TestOwnCacheChecksumCoversHeader: every byte of our cache counts,
// header included (byte 28 is the start node).
func TestOwnCacheChecksumCoversHeader(t *testing.T) {
	s, err := ParseIBNDCache(goldenCache(t))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteCache(&b); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	if _, err := ParseCache(good); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{28, 32, 36, 40, 60, cacheHeaderLen, len(good) - 1} {
		bad := append([]byte(nil), good...)
		bad[off] ^= 1
		if _, err := ParseCache(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d changed: %v, want ErrCorrupt", off, err)
		}
	}
	v1 := append([]byte(nil), good...)
	v1[8] = 1
	if _, err := ParseCache(v1); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("a version 1 header: %v", err)
	}
}

// TestTopologyStrict: what is not a topology file is an error with its
// line, never an empty or wrong subnet.
func TestTopologyStrict(t *testing.T) {
	const sw = "Switch 2 \"s\" # \"s\" base port 0 lid 1 lmc 0\n"
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n", 1, "unknown line"},
		{"text after a node", sw + "[1] \"c\"[1]\nhello world\n", 3, "unknown line"},
		{"unknown assignment", "colour=blue\n", 1, "unknown assignment"},
		{"port count overflow", "Switch 18446744073709551617 \"s\"\n", 1, "port count"},
		{"switchguid overflow", "switchguid=0x1000000000000000000000\n" + sw, 1, "GUID"},
		{"guid wraps", "switchguid=0xffffffffffffffff\n" + sw + "\n" + strings.Replace(sw, "\"s\"", "\"t\"", 2), 4, "no GUID left"},
		{"ca guids wrap", "caguid=0xfffffffffffffffe\nCa 2 \"h\"\n", 2, "no GUID left"},
		{"guid offset overflow", "switchguid=0xffffffffffffff00\nswitchguid=+0x100\n", 2, "passes 0xffffffffffffffff"},
		{"lid overflow", "Switch 2 \"s\" # \"s\" base port 0 lid 70000 lmc 0\n", 1, "LID"},
		{"port guid overflow", "Ca 1 \"h\"\n[1](1ffffffffffffffffff) \"s\"[1]\n", 2, "GUID"},
		{"vendid", "vendid=0x1000000\n", 1, "24 bits"},
		{"initiated", "# Initiated from node zz port 1\n", 1, "Initiated"},
		{"nul", "Switch 2 \"s\"\x00\n", 1, "binary data"},
		{"long line", "#" + strings.Repeat("x", 5000) + "\n", 1, "longer than 4096 bytes"},
	} {
		_, err := ReadTopology(strings.NewReader(tc.text))
		var te *TopologyError
		switch {
		case err == nil:
			t.Errorf("%s: read without error", tc.name)
		case !errors.As(err, &te) || te.Line != tc.line || !strings.Contains(err.Error(), tc.msg):
			t.Errorf("%s: %v, want line %d and %q", tc.name, err, tc.line, tc.msg)
		}
	}
	// What ibnetdiscover -g and ibsim files hold besides nodes reads.
	ok := "#\n# Topology file\n\nChassis 1 (guid 0x5)\nHostname: x\n\n# Chassis Switches\nNon-Chassis Nodes\n" +
		"width=4\nspeed=7\nvendid=0x2c9\ndevid=0xbd36\nsysimgguid=0x5\nswitchguid=0x5(5)\n" + sw
	if s, err := ReadTopology(strings.NewReader(ok)); err != nil || s.Len() != 1 {
		t.Errorf("a -g style file: %v", err)
	}
}
