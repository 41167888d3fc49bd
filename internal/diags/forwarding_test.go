package diags

import (
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

// TestForwardingLayoutFailures lays out a table with an unread block the
// two ways the C tools handle it: ibroute stops there and prints no count;
// dump_fts names the block and goes on with the block read before it.
func TestForwardingLayoutFailures(t *testing.T) {
	sw := &subnet.Node{GUID: 0x1234, Type: iba.NodeTypeSwitch, NumPorts: 4}
	si := iba.SwitchInfo{LinearFDBTop: 200}
	if err := si.MarshalTo(sw.SwitchInfo[:]); err != nil {
		t.Fatal(err)
	}
	sw.LFT = make([]uint8, 256)
	for i := range sw.LFT {
		sw.LFT[i] = uint8(1 + i/64) // block b sends everything out of port b+1
	}
	failed := map[uint32]error{2: &mad.StatusError{Status: 0x1c}}
	noDests := func([]int) (map[int]*lidDest, string) { return nil, "unknown" }

	ib := &ftRequest{o: ftOptions{brief: true}}
	tab := ib.layout(sw, failed, "Lid 7", noDests)
	if tab.ReadError != "SubnGet() failed; MAD status 0x1c AM 0x2" {
		t.Errorf("ibroute: read error %q", tab.ReadError)
	}
	if n := len(tab.Unicast); n != 128 || tab.Unicast[127].Port != 2 {
		t.Errorf("ibroute: %d LIDs shown, want blocks 0 and 1 (128)", n)
	}
	var b strings.Builder
	if err := tab.writeText(&b); err != nil || strings.Contains(b.String(), "dumped") {
		t.Errorf("ibroute prints a count after a failed block:\n%s", b.String())
	}

	df := &ftRequest{o: ftOptions{brief: true, failure: func(kind string, status int, am uint32) string {
		return kind + " failed"
	}}}
	tab = df.layout(sw, failed, "DR path slid 0; dlid 0; 0,1", noDests)
	if len(tab.Errors) != 1 || tab.Errors[0] != "LFT failed" || tab.ReadError != "" {
		t.Errorf("dump_fts: errors %q, read error %q", tab.Errors, tab.ReadError)
	}
	// LIDs 0 to 200 (the top): block 2's LIDs carry block 1's ports.
	if n := len(tab.Unicast); n != 201 || tab.Unicast[130].Port != 2 || tab.Unicast[199].Port != 4 {
		t.Errorf("dump_fts: %d LIDs, LID 130 port %d, LID 199 port %d", n, tab.Unicast[130].Port, tab.Unicast[199].Port)
	}
}
