package diags

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"

	"github.com/rdmakit/rdmakit/subnet"
)

// TestIBIDsVerifyLive compares ibidsverify with the infiniband-diags
// script: on the live subnet, then on subnets with a duplicate node GUID,
// port GUID and LID made with ibcacheedit and fed to the script through
// its topology cache file (which it reads when not told -R).
func TestIBIDsVerifyLive(t *testing.T) { eachRelease(t, testIBIDsVerifyLive) }

func testIBIDsVerifyLive(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	cOut, _, cCode := b.c(t, "ibidsverify", "-R")
	out, errOut, code := b.ours(t, "ibidsverify", "-R")
	if code != cCode || out != cOut {
		t.Errorf("exit %d (C %d) %s\n--- ours\n%s--- C\n%s", code, cCode, errOut, out, cOut)
	}
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.cache")
	if _, errOut, code := b.c(t, "ibnetdiscover", "--cache", orig); code != 0 {
		t.Fatalf("ibnetdiscover --cache: %s", errOut)
	}
	s, err := loadSubnetFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	clean, _, code := b.c(t, "ibnetdiscover", "-g")
	if code != 0 {
		t.Fatal("ibnetdiscover -g failed")
	}
	h3, h4 := s.NodesByName("H-3")[0], s.NodesByName("H-4")[0]
	leaf1 := s.NodesByName("S-leaf-1")[0]
	hex := func(g iba.GUID) string { return fmt.Sprintf("%x", uint64(g)) }
	const topoCache = "/var/cache/infiniband-diags/ibnetdiscover--.topology"
	saved, savedErr := os.ReadFile(topoCache)
	t.Cleanup(func() {
		if savedErr == nil {
			os.WriteFile(topoCache, saved, 0o644)
		} else {
			os.Remove(topoCache)
		}
	})
	// Neither database (libibnetdisc's, ours) holds duplicate GUIDs, so
	// the faults are made in the text the script reads.
	for i, swap := range [][2]string{
		{"caguid=0x" + hex(h4.GUID), "caguid=0x" + hex(h3.GUID)},
		{"(" + hex(h4.Port(1).GUID) + ")", "(" + hex(h3.Port(1).GUID) + ")"},
		{"(" + hex(h3.Port(1).GUID) + ")", "(" + hex(leaf1.GUID) + ")"},
	} {
		topo := strings.ReplaceAll(clean, swap[0], swap[1])
		topoFile := filepath.Join(dir, fmt.Sprintf("e%d.topo", i))
		if topo == clean || os.MkdirAll(filepath.Dir(topoCache), 0o700) != nil || os.WriteFile(topoCache, []byte(topo), 0o644) != nil || os.WriteFile(topoFile, []byte(topo), 0o644) != nil {
			t.Fatalf("%q: writing the script's topology cache", swap)
		}
		cOut, _, cCode := b.c(t, "ibidsverify")
		out, errOut, code := run(t, "", "ibtool", "ibidsverify", "--topology", topoFile)
		if code != cCode || out != cOut || cCode != 1 || !strings.Contains(out, "already defined") && !strings.Contains(out, "invalid duplicate") {
			t.Errorf("%q: exit %d (C %d) %s\n--- ours\n%s--- C\n%s", swap, code, cCode, errOut, out, cOut)
		}
	}
	js, _, _ := run(t, "", "ibtool", "--json", "ibidsverify", "--load-cache", orig)
	var doc struct {
		Result IDsVerifyResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Result.Problems) != 0 {
		t.Errorf("--json: %v\n%s", err, js)
	}
}

// TestIBIDsVerifyLMC: overlapping LID ranges of end ports with LMC > 0,
// which the script cannot see, are reported.
func TestIBIDsVerifyLMC(t *testing.T) {
	s := subnet.New()
	ca := func(guid uint64, lid uint16, lmc uint8, path ...uint8) {
		var ni iba.NodeInfo
		ni.NodeType, ni.NumPorts, ni.NodeGUID, ni.PortGUID, ni.LocalPortNum = iba.NodeTypeCA, 1, iba.GUID(guid), iba.GUID(guid+1), 1
		nb := make([]byte, subnet.AttrSize)
		ni.MarshalTo(nb)
		n, _, _, err := s.AddNode(nb, subnet.DRPath(path))
		if err != nil {
			t.Fatal(err)
		}
		var pi iba.PortInfo
		pi.LID, pi.LMC, pi.LocalPortNum = lid, lmc, 1
		pb := make([]byte, subnet.AttrSize)
		pi.MarshalTo(pb)
		if _, err := s.SetPortInfo(n, 1, pb); err != nil {
			t.Fatal(err)
		}
	}
	ca(0x10, 4, 2, 0)
	ca(0x20, 6, 0, 0, 1)
	ca(0x30, 8, 1, 0, 2)
	got := lidOverlaps(s)
	if len(got) != 1 || !strings.Contains(got[0], "LID range 4-7") || !strings.Contains(got[0], "LID range 6-6") {
		t.Errorf("overlaps %q", got)
	}
}

// TestIBIDsVerifyTopologyInput: --topology text the script's patterns
// would read as nothing (another file, binary data, a device) is an error
// with the file and line, where the script finds no problem and exits 0.
func TestIBIDsVerifyTopologyInput(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte("# a comment\n"+strings.Repeat("#", 70000)+"\nSwitch 8 \"S-1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	offline := filepath.Join("testdata", "TestIBNetDiscoverOffline")
	for _, c := range []struct{ file, msg string }{
		{passwd, passwd + ": line 1: no node"},
		{long, long + ": line 2: longer than 65536 bytes"},
		{"/dev/zero", "/dev/zero: line 1: longer than 65536 bytes"},
		{filepath.Join(offline, "dualport.cache"), ": line 1: binary data"},
		{filepath.Join(dir, "missing"), "Failed to open ibnet topology"},
	} {
		out, errOut, code := run(t, "", "ibtool", "ibidsverify", "--topology", c.file)
		if code != 1 || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and %q", c.file, code, out, errOut, c.msg)
		}
	}
	if out, errOut, code := run(t, "", "ibtool", "ibidsverify", "--topology", filepath.Join(offline, "dualport.topo")); code != 0 {
		t.Errorf("a topology file: exit %d\n%s%s", code, out, errOut)
	}
}

// FuzzIDsVerify: no topology text makes the script's reader panic, and
// it reports a problem only by setting failed.
func FuzzIDsVerify(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "TestIBNetDiscoverOffline", "dualport.topo")); err == nil {
		f.Add(string(b))
	}
	f.Add("switchguid=0x1(1)\nSwitch\t8 \"S-0000000000000001\"\t\t# \"s\" base port 0 lid 0 lmc 0\n")
	f.Add("caguid=0x2\nCa\t1 \"H-0000000000000002\"\t\t# \"h\"\n[1](3) \t\"S-0000000000000001\"[1]\t\t# lid 0 lmc 0 \"s\" lid 0 4xQDR\n")
	f.Fuzz(func(t *testing.T, text string) {
		v := &idsVerify{lids: map[string]idsRecord{}, nodeGUIDs: map[string]idsRecord{}, portGUIDs: map[string]idsRecord{}}
		if err := v.run(strings.NewReader(text), "fuzz"); err != nil {
			return
		}
		if len(v.out) > 0 && !v.failed {
			t.Fatalf("problems %q without failing", v.out)
		}
	})
}

// TestIBIDsVerifyPythonFlags: python-rdma's --up and -N are taken and
// change nothing here (the checks see linked ports, with no colors).
func TestIBIDsVerifyPythonFlags(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	want, _, wantCode := run(t, "", "ibtool", "--fabric", fab, "ibidsverify")
	for _, flag := range []string{"--up", "-N", "--nocolor"} {
		got, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibidsverify", flag)
		if code != wantCode || got != want {
			t.Errorf("%s: exit %d (want %d) %s\n%s--- without\n%s", flag, code, wantCode, errOut, got, want)
		}
	}
}
