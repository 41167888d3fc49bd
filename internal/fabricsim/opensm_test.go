package fabricsim

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// startServe runs Main serve in the background until the test ends and
// waits for its control socket.
func startServe(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- Main(ctx, append([]string{"fabricsim", "serve", "--sockname", name}, args...), strings.NewReader(""), &bytes.Buffer{}, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for ctl(context.Background(), []string{"--sockname", name, "status"}, &bytes.Buffer{}) != nil {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not up: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fabricsim serve --no-sm: a real OpenSM brings the fabric up through
// libumad2sim, and the C tools see it.
func TestServeNoSMWithOpenSM(t *testing.T) {
	testbed.Require(t)
	name := fmt.Sprintf("rkfsimO%d-%d", os.Getpid(), seq.Add(1))
	startServe(t, name, "--no-sm", "--lftcap", "30720", "leafspine:leaves=3,spines=2,hosts=3,uplinks=2")
	sim := &testbed.IBSim{SockName: name}
	testbed.StartOpenSM(t, sim, "hca1")
	out, errs, code := testbed.RunC(t, sim, "hca2", "ibhosts")
	if code != 0 || strings.Count(out, "\n") != 9 {
		t.Fatalf("ibhosts: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = testbed.RunC(t, sim, "hca2", "sminfo")
	if code != 0 || !strings.Contains(out, "SMINFO_MASTER") {
		t.Fatalf("sminfo: exit %d\n%s%s", code, out, errs)
	}
}

// Inet mode, as ibsim -r: package ibsim's transport reaches it over UDP.
func TestServeInet(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	name := fmt.Sprintf("rkfsimI%d-%d", os.Getpid(), seq.Add(1))
	startServe(t, name, "--inet", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "fattree:k=2,n=2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{Server: "127.0.0.1", Port: fmt.Sprint(port), Node: "hca3"})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(2*time.Second))
	defer mc.Close()
	var ni iba.NodeInfo
	if err := mc.SubnGet(ctx, mad.Route{DR: &mad.DirectedRoute{Path: []byte{0}}}, &ni, 0); err != nil || ni.NodeType != iba.NodeTypeCA {
		t.Fatalf("NodeInfo over UDP: %+v %v", ni, err)
	}
}
