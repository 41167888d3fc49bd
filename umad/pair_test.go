package umad

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/mad"
)

// TestPair is a planarized end port (package device's smi-split fixture):
// the plane device mlx5_0 carries its GMPs and smi1 its SMPs. Agents are
// registered on the device of their class, MADs go out there, and what
// either device receives comes back numbered by the pair's agents.
func TestPair(t *testing.T) {
	plane := fixturePort(t, "smi-split", "mlx5_0/1")
	if plane.SMIPort == nil || plane.SMIPort == plane || plane.GSIPort != plane {
		t.Fatalf("the fixture's plane port is not split: GSI %v, SMI %v", plane.GSIPort, plane.SMIPort)
	}
	before := runtime.NumGoroutine()
	gsi, gk := newFake(t, plane)
	smi, sk := newFake(t, plane.SMIPort)
	tr := newPair(gsi, smi)

	pma, err := tr.Register(mad.AgentSpec{Class: 0x04, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	dr, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(gk.registered) != 1 || gk.registered[0][21] != 0x04 || len(sk.registered) != 1 || sk.registered[0][21] != 0x81 {
		t.Fatalf("registered: GSI %d agents, SMI %d agents", len(gk.registered), len(sk.registered))
	}
	if pma == dr {
		t.Fatalf("both agents are %d", pma)
	}

	m := bytes.Repeat([]byte{0x5a}, 256)
	for _, c := range []struct {
		agent int
		k     *fakeKernel
		qpn   uint32
	}{{pma, gk, 1}, {dr, sk, 0}} {
		if err := tr.Send(context.Background(), &mad.Packet{Agent: c.agent, MAD: m, Addr: mad.Addr{QPN: c.qpn, LID: 3}}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1024)
		n, err := c.k.peer.Read(buf)
		if err != nil || n != HeaderSize+256 {
			t.Fatalf("agent %d: the device got %d bytes (%v)", c.agent, n, err)
		}
		if h, _ := UnmarshalHeader(buf); h.AgentID != 0 || h.QPN != c.qpn {
			t.Errorf("agent %d went out as %+v", c.agent, h)
		}
	}
	if err := tr.Send(context.Background(), &mad.Packet{Agent: 7, MAD: m}); err == nil || !strings.Contains(err.Error(), "agent 7") {
		t.Errorf("an unknown agent: %v", err)
	}

	reply := bytes.Repeat([]byte{0x11}, 256)
	sk.deliver(t, Header{AgentID: 0, Length: 320, LID: 5}, reply)
	gk.deliver(t, Header{AgentID: 0, Length: 320, QPN: 1, LID: 6}, reply)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := map[int]uint16{}
	for range 2 {
		p, err := tr.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[p.Agent] = p.Addr.LID
	}
	if got[dr] != 5 || got[pma] != 6 {
		t.Errorf("received by agent: %v, want the SMI reply (LID 5) for %d and the GSI one (LID 6) for %d", got, dr, pma)
	}

	lp, err := tr.LocalPort(ctx)
	if err != nil || lp.Name != "mlx5_0/1" {
		t.Errorf("LocalPort = %+v, %v: want the GSI port's", lp, err)
	}
	if !tr.KernelRMPP() {
		t.Error("KernelRMPP is false")
	}

	short, stop := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer stop()
	if _, err := tr.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Recv with nothing to receive = %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Recv(context.Background()); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
	if err := tr.Send(context.Background(), &mad.Packet{Agent: pma, MAD: m}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if _, err := tr.Register(mad.AgentSpec{Class: 0x04, ClassVersion: 1}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Register after Close = %v", err)
	}
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestOpenEndPort: an ordinary end port opens as Open does; a planarized
// one opens its GSI device and then its SMI device, and says which failed.
func TestOpenEndPort(t *testing.T) {
	if _, err := OpenEndPort(nil); err == nil {
		t.Error("no end port: no error")
	}
	f, _ := copyFixture(t, "mlx5-ib")
	devs, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenEndPort(devs[0].Ports[0])
	var oe *OpenError
	if !errors.As(err, &oe) || strings.Contains(err.Error(), "GSI port") {
		t.Errorf("an ordinary port: %v, want Open's error", err)
	}
	f, _ = copyFixture(t, "smi-split")
	devs, err = f.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Name != "mlx5_0" {
			continue
		}
		_, err := OpenEndPort(d.Ports[0])
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "opening the GSI port mlx5_0/1 of mlx5_0/1") {
			t.Errorf("a plane port without device nodes: %v", err)
		}
	}
}
