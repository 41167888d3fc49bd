package diags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetForms gives the commands that take a target every form of
// one (hca12 of the simulated fat tree, LID 20): LID, hex LID, port GUID
// with and without -G and in python-rdma's colon form, GID, path spec, the
// node's description and a node name map's name for it, and a directed
// route, and wants the output of the LID; a number too wide for a LID is
// refused where the C tools would cut it.
func TestTargetForms(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	names := filepath.Join(t.TempDir(), "map")
	if err := os.WriteFile(names, []byte("0x0002c90300000016 \"compute-12\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	forms := [][]string{
		{"0x14"}, {"0x0002c90300000017"}, {"-G", "0x0002c90300000017"}, {"0002:c903:0000:0017"},
		{"fe80::2:c903:0:17"}, {"IBPath(DLID=20)"}, {"hca12 HCA-1"}, {"0,1,6,3,4"}, {"-D", "0,1,6,3,4"},
	}
	// Lines that name the target as given ("# Node info: DR path ...").
	strip := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	for _, c := range []struct {
		cmd  []string // before the target
		tail []string // after it
		noDR bool     // takes no directed route (a GMP-only command without -D)
		noG  bool     // has no -G
	}{
		{cmd: []string{"smpquery", "nodeinfo"}},
		{cmd: []string{"smpquery", "portinfo"}, tail: []string{"1"}},
		{cmd: []string{"ibaddr"}},
		{cmd: []string{"ibportstate"}, tail: []string{"1"}},
		{cmd: []string{"perfquery", "-E"}, tail: []string{"1"}, noDR: true},
		{cmd: []string{"ibtracert"}, noG: false},
		{cmd: []string{"query", "SubnGet", "NodeInfo"}, noG: true},
		{cmd: []string{"ibchecknode"}},
	} {
		base := append([]string{"ibtool", "--fabric", fab}, c.cmd...)
		want, errOut, code := run(t, "", append(append(base, "20"), c.tail...)...)
		if code != 0 {
			t.Fatalf("%v 20: exit %d: %s", c.cmd, code, errOut)
		}
		for _, f := range forms {
			if (c.noDR && f[0] == "-D") || (c.noG && f[0] == "-G") {
				continue
			}
			got, errOut, code := run(t, "", append(append(base, f...), c.tail...)...)
			if code != 0 || strip(got) != strip(want) {
				t.Errorf("%v %q: exit %d %s\n%s--- by LID\n%s", c.cmd, f, code, errOut, got, want)
			}
		}
	}
	// python-rdma's ibaddr --Lid (-L is the C tool's --Lid_show).
	if got, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibaddr", "--Lid", "20"); code != 0 || got != mustRun(t, "ibtool", "--fabric", fab, "ibaddr", "20") {
		t.Errorf("ibaddr --Lid 20: exit %d %s\n%s", code, errOut, got)
	}
	// A name of the node name map, where a command takes the map.
	want, _, _ := run(t, "", "ibtool", "--fabric", fab, "smpquery", "nodeinfo", "20")
	if got, errOut, code := run(t, "", "ibtool", "--fabric", fab, "smpquery", "--node-name-map", names, "nodeinfo", "compute-12"); code != 0 || got != want {
		t.Errorf("a mapped name: exit %d %s\n%s", code, errOut, got)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"smpquery", "-L", "nodeinfo", "0x0002c90300000017"}, 255, "wider than a LID"},
		{[]string{"smpdump", "0x0002c90300000017", "0x11"}, 2, "the C smpdump would cut it to 0x17"},
		{[]string{"smpdump", "0,1", "0x11"}, 2, "a directed route needs -D"},
		{[]string{"ibtracert", "-L", "0x0002c90300000017"}, 255, "can't resolve destination port"},
		{[]string{"smpquery", "nodeinfo", "no such node"}, 255, `no node is named "no such node"`},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", fab}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}
