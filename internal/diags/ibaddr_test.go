package diags

import (
	"fmt"
	"strconv"
	"testing"
)

// TestIBAddrLive compares ibaddr with the C ibaddr on the ibsim floor: the
// local port, LIDs, directed routes and GUIDs, every display option, and
// targets that do not resolve.
func TestIBAddrLive(t *testing.T) { eachRelease(t, testIBAddrLive) }

func testIBAddrLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sw, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["H-3"])
	guid := fmt.Sprintf("0x%016x", uint64(l.f.Node("H-4").PortGUID(2)))
	l.compareAll(t, "ibaddr", [][]string{
		{}, {"-g"}, {"-l"}, {"-L"},
		{ca}, {sw}, {"-l", sw}, {"-L", sw}, {"-g", ca}, {ca, "1"}, {sw, "3"},
		{"-D", "0,1"}, {"-D", "0,1,5"}, {"-D", "0"}, {"-g", "-D", l.dr["H-4"]},
		{"-G", guid}, {"-G", "0x0000000000000000"},
		{"-t", "200", "500"}, {"-t", "200", "-D", "0,1,9"},
	})
}

func TestIBAddrJSON(t *testing.T) {
	l := startLive(t, machinePeers)
	out, errOut, code := l.ours(t, "ibaddr", "--json", "-D", "0,1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "dr", out)
}
