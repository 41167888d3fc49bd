package diags

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/openib"
)

// TestIBSysStatLive runs our ibsysstat server on a node of the ibsim
// fabric and compares our client with the C client against it, and both
// against a port with no server.
func TestIBSysStatLive(t *testing.T) { eachRelease(t, testIBSysStatLive) }

func testIBSysStatLive(t *testing.T, p peers) {
	l := startLive(t, p)
	srv := strconv.Itoa(attachLID(t, l, "H-3"))
	startServer(t, "H-3", func() bool {
		_, _, code := l.ours(t, "ibsysstat", "-t", "200", srv)
		return code == 0
	}, "ibsysstat", "-S")
	none := strconv.Itoa(attachLID(t, l, "H-4"))
	l.compareAll(t, "ibsysstat", [][]string{
		{srv}, {srv, "ping"}, {srv, "host"}, {srv, "cpu"},
		{"-G", "0x" + strconv.FormatUint(uint64(l.f.Node("H-3").PortGUID(1)), 16), "host"},
		{"-t", "200", none, "host"},        // no server: the C tool's "Connection timed out"
		{"-t", "200", "-o", "0x1234", srv}, // another OUI: no answer
		{srv, "bogus"},                     // usage
	})
	out, errOut, code := l.ours(t, "ibsysstat", srv, "host")
	if code != 0 || out != openib.HostName()+"\n" {
		t.Errorf("host: exit %d: %q %s", code, out, errOut)
	}
	// python-rdma's cpi, answered by our server.
	out, errOut, code = l.ours(t, "ibsysstat", srv, "cpi")
	if code != 0 || !strings.HasPrefix(out, "BaseVersion......................1\nClassVersion.....................1\n") || !strings.Contains(out, "RespTimeValue....................16\n") {
		t.Errorf("cpi: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = l.ours(t, "ibsysstat", "--json", srv, "cpu")
	var doc struct{ Result IBSysStatResult }
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || !strings.HasPrefix(doc.Result.Text, "cpu 0: model ") {
		t.Errorf("--json cpu: exit %d\n%s", code, out)
	}
}
