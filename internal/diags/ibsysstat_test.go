package diags

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestIBSysStatLive runs our ibsysstat server on a node of the ibsim
// fabric and compares our client with the C client against it, and both
// against a port with no server.
func TestIBSysStatLive(t *testing.T) {
	l := startLive(t)
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
	if code != 0 || out != hostAndDomain()+"\n" {
		t.Errorf("host: exit %d: %q %s", code, out, errOut)
	}
	out, _, code = l.ours(t, "ibsysstat", "--json", srv, "cpu")
	var doc struct{ Result IBSysStatResult }
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || !strings.HasPrefix(doc.Result.Text, "cpu 0: model ") {
		t.Errorf("--json cpu: exit %d\n%s", code, out)
	}
}

func TestIBSysStatReply(t *testing.T) {
	cpus := parseCPUInfo(strings.NewReader("processor\t: 0\nmodel name\t: Fast CPU\ncpu MHz\t\t: 2000.0\n\nprocessor\t: 1\nmodel name\t: Fast CPU\n"))
	if len(cpus) != 2 || cpus[0].model != " Fast CPU" || cpus[0].mhz != " 2000.0" || cpus[1].mhz != "(null)" {
		t.Fatalf("cpus %q", cpus)
	}
	got := cString(sysstatReply(0x12, nil, "h", cpus))
	if want := "cpu 0: model  Fast CPU MHZ  2000.0\ncpu 1: model  Fast CPU MHZ (null)\n"; got != want {
		t.Errorf("cpu reply %q, want %q", got, want)
	}
	long := make([]sysstatCPU, 20)
	for i := range long {
		long[i] = sysstatCPU{"m", "1"}
	}
	if r := sysstatReply(0x12, nil, "h", long); len(r) != 216 || r[215] != 0 {
		t.Errorf("a long CPU list must fit one MAD, NUL-terminated")
	}
	if r := sysstatReply(0x10, []byte{1, 2, 3}, "h", nil); r[0] != 1 || r[2] != 3 {
		t.Errorf("ping must echo the request")
	}
}
