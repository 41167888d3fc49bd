package diags

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/openib"
)

// startServer runs ibtool (ibping -S, ibsysstat -S, a test agent) attached
// to node of the live fabric until the test ends, and waits until ready
// says it answers.
func startServer(t *testing.T, node string, ready func() bool, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var out, errb bytes.Buffer
	code := 0
	go func() {
		defer close(done)
		code = Main(ctx, append([]string{"ibtool", "--fabric", "ibsim:" + node}, args...), strings.NewReader(""), &out, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
			if code != 0 {
				t.Errorf("server %v: exit %d: %s%s", args, code, out.String(), errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("server %v did not stop", args)
		}
	})
	for deadline := time.Now().Add(15 * time.Second); !ready(); {
		select {
		case <-done:
			t.Fatalf("server %v exited %d: %s%s", args, code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %v does not answer", args)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// attachLID is the LID of the port ibsim attaches node's clients to (a
// CA's port 1), where a server receives.
func attachLID(t *testing.T, l *live, node string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: l.sim.SockName, Node: node})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	lp, err := tr.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return int(lp.LID)
}

var pingTimes = regexp.MustCompile(`time \d+(\.\d{3})? ms|= \d+\.\d{3}/\d+\.\d{3}/\d+\.\d{3} ms`)

// sameButTimes compares ping outputs with the times taken out.
func sameButTimes(c, ours string) bool {
	return pingTimes.ReplaceAllString(c, "T") == pingTimes.ReplaceAllString(ours, "T")
}

// TestIBPingLive runs our ibping server on a node of the ibsim fabric and
// compares our client with the C client against it (the C server cannot
// receive requests under ibsim), and both clients against a port that
// does not answer.
func TestIBPingLive(t *testing.T) { eachRelease(t, testIBPingLive) }

func testIBPingLive(t *testing.T, p peers) {
	l := startLive(t, p)
	srv := strconv.Itoa(attachLID(t, l, "H-3"))
	startServer(t, "H-3", func() bool {
		out, _, _ := l.ours(t, "ibping", "-t", "200", "-c", "1", "-f", srv)
		return strings.Contains(out, " 1 received")
	}, "ibping", "-S")
	host := openib.HostName()
	for _, args := range [][]string{
		{"-c", "3", "-f", srv},
		{"-c", "1", srv},
		{"-G", "-c", "2", "-f", "0x" + strconv.FormatUint(uint64(l.f.Node("H-3").PortGUID(1)), 16)},
		{"-o", "0x1234", "-c", "1", "-f", srv},        // another OUI: no answer
		{"-c", "2", "-f", strconv.Itoa(l.lid["H-4"])}, // no server there
		{"-c", "0", srv}, // nothing sent
	} {
		cOut, cErr, cCode := l.c(t, "ibping", args...)
		out, errOut, code := l.ours(t, "ibping", args...)
		l.check(t, "ibping", args, cOut, cErr, cCode, out, errOut, code, sameButTimes)
		if args[0] == "-c" && args[1] == "1" && args[2] == srv &&
			(!strings.HasPrefix(out, "Pong from "+host+" (Lid "+srv+"): time ") ||
				!strings.Contains(out, "--- "+host+" (Lid "+srv+") ibping statistics ---\n1 packets transmitted, 1 received, 0% packet loss")) {
			t.Errorf("ibping -c 1: exit %d\n%s", code, out)
		}
	}
	out, errOut, code := l.ours(t, "ibping", "--json", "-c", "2", "-f", srv)
	var doc struct{ Result IBPingResult }
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Result.Received != 2 || doc.Result.Host != host || len(doc.Result.Pings) != 2 {
		t.Errorf("--json: exit %d\n%s%s", code, out, errOut)
	}
}

func TestIBPingUsage(t *testing.T) {
	_, errOut, code := run(t, "", "ibtool", "--fabric", "ibsim:nowhere", "ibping")
	if code != 2 {
		t.Errorf("no destination: exit %d, want 2 (%s)", code, errOut)
	}
	if got := ouiArg("0x123456789"); got != 0x456789 {
		t.Errorf("ouiArg keeps 24 bits: %#x", got)
	}
}
