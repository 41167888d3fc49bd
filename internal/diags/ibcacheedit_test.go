package diags

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/subnet"
)

// TestIBCacheEditLive edits a cache ibnetdiscover wrote with the C
// ibcacheedit and with ours, every option alone and together, and compares
// the files byte for byte, the errors and exit statuses too.
func TestIBCacheEditLive(t *testing.T) { eachRelease(t, testIBCacheEditLive) }

func testIBCacheEditLive(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.cache")
	if _, errOut, code := b.c(t, "ibnetdiscover", "--cache", orig); code != 0 {
		t.Fatalf("ibnetdiscover --cache: %s", errOut)
	}
	s, err := loadSubnetFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	leaf := s.NodesByName("S-leaf-1")[0]
	h3 := s.NodesByName("H-3")[0]
	h3p2 := h3.Port(2)
	if h3p2 == nil {
		h3p2 = h3.Port(1)
	}
	sys := h3.NodeInfo().SystemImageGUID
	for i, args := range [][]string{
		{"--switchguid", leaf.GUID.String() + ":0x1111"},
		{"--caguid", h3.GUID.String() + ":0x2222"},
		{"--sysimgguid", sys.String() + ":0x3333"},
		{"--portguid", h3.GUID.String() + ":" + h3p2.GUID.String() + ":0x4444"},
		{"--portguid", leaf.GUID.String() + ":" + leaf.GUID.String() + ":0x5555"},
		{"--switchguid", leaf.GUID.String() + ":0x1111", "--caguid", h3.GUID.String() + ":0x2222", "--portguid", "0x2222:" + h3p2.GUID.String() + ":0x4444"},
		{"--switchguid", "0x77:0x1"},
		{"--caguid", "0x77:0x1"},
		{"--sysimgguid", "0x77:0x1"},
		{"--portguid", "0x77:0x1:0x2"},
		{"--portguid", h3.GUID.String() + ":0x77:0x2"},
		{"--caguid", "0x77"},
		{"--portguid", "0x77:0x1"},
	} {
		cNew, oNew := filepath.Join(dir, "c.new"), filepath.Join(dir, "ours.new")
		os.Remove(cNew)
		os.Remove(oNew)
		cOut, cErr, cCode := b.c(t, append(append([]string{"ibcacheedit"}, args...), orig, cNew)...)
		out, errOut, code := run(t, "", append(append([]string{"ibtool", "ibcacheedit"}, args...), orig, oNew)...)
		if code != cCode && !(cCode == 255 && code == 2) {
			t.Errorf("%d %q: exit %d, C %d\nours: %s%s\nC: %s%s", i, args, code, cCode, out, errOut, cOut, cErr)
		}
		if m := ibErrorLine.FindStringSubmatch(cOut); m != nil && !strings.Contains(errOut, m[1]) {
			t.Errorf("%d %q: our error %q lacks the C tool's %q", i, args, errOut, m[1])
		}
		cb, cerr := os.ReadFile(cNew)
		ob, oerr := os.ReadFile(oNew)
		if (cerr == nil) != (oerr == nil) || !bytes.Equal(cb, ob) {
			t.Errorf("%d %q: our file (%d bytes, %v) differs from the C tool's (%d bytes, %v)", i, args, len(ob), oerr, len(cb), cerr)
		}
		if i == 0 {
			ns, err := loadSubnetFile(oNew)
			if err != nil || ns.Node(0x1111) == nil || ns.Node(leaf.GUID) != nil {
				t.Errorf("the edited cache does not load with the new switch GUID: %v", err)
			}
		}
	}
	for _, args := range [][]string{{}, {orig}} {
		out, errOut, code := run(t, "", append([]string{"ibtool", "ibcacheedit"}, args...)...)
		cOut, _, cCode := b.c(t, append([]string{"ibcacheedit"}, args...)...)
		m := ibErrorLine.FindStringSubmatch(cOut)
		if code != cCode || m == nil || !strings.Contains(errOut, m[1]) {
			t.Errorf("%q: exit %d (C %d), %q vs %q%s", args, code, cCode, errOut, cOut, out)
		}
	}
	js, _, code := run(t, "", "ibtool", "--json", "ibcacheedit", "--caguid", h3.GUID.String()+":0x2222", orig, filepath.Join(dir, "j.new"))
	var doc struct {
		Result CacheEditResult `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &doc) != nil || len(doc.Result.Changes) != 1 || doc.Result.Changes[0].After != "0x0000000000002222" {
		t.Errorf("--json (exit %d):\n%s", code, js)
	}
}

// FuzzIBCacheEditParse: no cache file makes the editor panic, and one it
// accepts is written back at the same length.
func FuzzIBCacheEditParse(f *testing.F) {
	s := subnet.New()
	var b bytes.Buffer
	if top, err := os.ReadFile(filepath.Join("testdata", "TestIBNetDiscoverOffline", "dualport.topo")); err == nil {
		if ts, err := subnet.ReadTopology(bytes.NewReader(top)); err == nil {
			s = ts
		}
	}
	if err := s.WriteIBNDCache(&b); err == nil {
		f.Add(b.Bytes())
	}
	f.Add([]byte{0x2b, 0x83, 0xe7, 0x8f, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCECache(data)
		if err != nil {
			return
		}
		for _, n := range c.nodes {
			n.guid++
			for _, p := range n.ports {
				p.guid++
			}
		}
		if out := c.bytes(); len(out) != len(data) {
			t.Fatalf("%d bytes written for %d read", len(out), len(data))
		}
	})
}

// TestIBCacheEditArgs reads the options as the C tool splits them.
func TestIBCacheEditArgs(t *testing.T) {
	for _, c := range []struct {
		arg      string
		withNode bool
		ok       bool
	}{
		{"0x1:0x2", false, true}, {"1:", false, false}, {"1", false, false}, {"1:2:3", true, true}, {"1:2", true, false}, {"1::3", true, false},
	} {
		_, err := parseCEEdit(c.arg, c.withNode)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.arg, err)
		}
	}
}

// TestIBCacheEditBadInput: what is not a libibnetdisc cache fails at its
// first bytes, naming the file, and no output file is written; a device
// such as /dev/zero is not read to its end.
func TestIBCacheEditBadInput(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	if err := os.WriteFile(text, []byte("Switch 8 \"S-1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("testdata", "TestIBNetDiscoverOffline", "dualport.cache")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	trailing := filepath.Join(dir, "trailing")
	if err := os.WriteFile(trailing, append(data, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, msg string }{
		{"/dev/zero", "/dev/zero: libibnetdisc cache: offset 0: magic 0x000000"},
		{text, text + ": libibnetdisc cache: offset 0: magic"},
		{trailing, trailing + ": libibnetdisc cache"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		out := filepath.Join(dir, "out")
		_, errOut, code := run(t, "", "ibtool", "ibcacheedit", "--caguid", "0x1:0x2", c.file, out)
		if code != 255 || !strings.Contains(errOut, "loading original cached fabric failed: ") || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want 255 and %q", c.file, code, errOut, c.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: an output file was written", c.file)
		}
	}
}
