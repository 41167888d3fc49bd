package diags

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// physState reads a port's PortPhysicalState by directed route.
func physState(t *testing.T, l *live, dr []byte, port int) iba.PhysPortState {
	t.Helper()
	var pi iba.PortInfo
	if err := smaClient(t, l).SubnGet(context.Background(), ibpath.NewDR(dr...), &pi, uint32(port)); err != nil {
		t.Fatal(err)
	}
	return pi.PortPhysicalState
}

// TestSetPortStateLive disables and enables links on the ibsim floor and
// keeps what the command says (python-rdma's command: no C one exists):
// a dry run, a switch port and a CA port, and the errors for targets it
// cannot use.
func TestSetPortStateLive(t *testing.T) {
	l := startLive(t, machinePeers)
	leaf, port, _ := l.f.Peer("H-3", 2)
	target := fmt.Sprintf("%s@%d", l.dr[leaf], port)
	h3 := fmt.Sprintf("0x%016x", uint64(l.f.Node("H-3").PortGUID(2)))
	// The link of this host's own port is the only way out: no route
	// avoids it.
	for _, bad := range []struct{ arg, msg string }{
		{l.dr[leaf], "Need to have a port index for switch"},
		{"0,1@2", "no DR path exists to"},
		{"0x0002c903ffffffff", "could not find 0x0002c903ffffffff in the subnet"},
		// A CA port is reached through its own link, which is the one cut.
		{fmt.Sprintf("0x%016x", uint64(l.f.Node("H-4").PortGUID(1))), "- try using the peer 0002:c903:00a0:0002 port 2"}, {h3 + "@2", "- try using the peer 0002:c903:00a0:0001 port " + strconv.Itoa(port)},
	} {
		_, errOut, code := l.ours(t, "set_port_state", "--disable", bad.arg)
		if code == 0 || !strings.Contains(errOut, bad.msg) {
			t.Errorf("%s: exit %d, %q", bad.arg, code, errOut)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"dry-run", []string{target, l.dr["S-leaf-2"] + "@2"}},
		{"disable", []string{"--disable", target}},
		{"enable", []string{"--enable", target}},
		{"json", []string{"--json", target}},
		{"init", []string{"--init", target}},
	} {
		out, errOut, code := l.ours(t, "set_port_state", tc.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		golden(t, tc.name, out)
		if tc.name == "disable" {
			if got := physState(t, l, []byte{0, 1}, port); got != 3 {
				t.Errorf("after --disable the port is %v", got)
			}
		}
	}
}

// TestInitAllPortsLive sets every active port of the ibsim fabric to Down
// (ibsim puts both ends in Init) and keeps what it says.
func TestInitAllPortsLive(t *testing.T) {
	l := startLive(t, machinePeers)
	out, errOut, code := l.ours(t, "init_all_ports")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "run", out)
	var pi iba.PortInfo
	if err := smaClient(t, l).SubnGet(context.Background(), ibpath.NewDR(0, 1), &pi, 3); err != nil {
		t.Fatal(err)
	}
	if pi.PortState != 2 {
		t.Errorf("a switch port is %v after init_all_ports", pi.PortState)
	}
}
