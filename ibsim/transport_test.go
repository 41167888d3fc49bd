package ibsim_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// The fabric of most tests: two leaves, two spines, two HCAs per leaf.
// H-1 hangs off S-leaf-1 port 1; S-leaf-1 port 3 goes to S-spine-1.
var fatTree = testbed.FatTree{Leaves: 2, Spines: 2, HCAsPerLeaf: 2}

func startFabric(t *testing.T) (*testbed.Fabric, *testbed.IBSim) {
	t.Helper()
	f, err := fatTree.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	return f, testbed.StartIBSim(t, topo)
}

func dial(t *testing.T, cfg ibsim.Config) *ibsim.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func register(t *testing.T, tr *ibsim.Transport, spec mad.AgentSpec) int {
	t.Helper()
	a, err := tr.Register(spec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// drGet builds a directed-route SubnGet (IBA 14.2.1.2): common MAD header
// with class 0x81, hop pointer 0, hop count len(path), permissive DrSLID and
// DrDLID, and the initial path from byte 128 (path[0] is hop 1).
func drGet(tid uint64, attr uint16, mod uint32, path ...byte) []byte {
	m := make([]byte, 256)
	m[0], m[1], m[2], m[3] = 1, 0x81, 1, 0x01 // BaseVersion, class, ClassVersion, SubnGet
	m[6], m[7] = 0, byte(len(path))           // HopPointer, HopCount
	binary.BigEndian.PutUint64(m[8:], tid)
	binary.BigEndian.PutUint16(m[16:], attr)
	binary.BigEndian.PutUint32(m[20:], mod)
	binary.BigEndian.PutUint16(m[32:], 0xffff) // DrSLID
	binary.BigEndian.PutUint16(m[34:], 0xffff) // DrDLID
	copy(m[129:], path)
	return m
}

// lidGet builds a LID-routed Get of class (0x01 SubnGet, 0x04
// PerformanceGet, ...).
func lidGet(class uint8, tid uint64, attr uint16, mod uint32) []byte {
	m := make([]byte, 256)
	m[0], m[1], m[2], m[3] = 1, class, 1, 0x01
	binary.BigEndian.PutUint64(m[8:], tid)
	binary.BigEndian.PutUint16(m[16:], attr)
	binary.BigEndian.PutUint32(m[20:], mod)
	return m
}

const (
	attrNodeInfo     = 0x0011
	attrPortCounters = 0x0012
)

// nodeInfoOf checks a SubnGetResp(NodeInfo) and returns NodeType and
// NodeGUID (IBA 14.2.5.3: data at byte 64, NodeType at +2, NodeGUID +12).
func nodeInfoOf(t *testing.T, p *mad.Packet, tid uint64) (uint8, iba.GUID) {
	t.Helper()
	if p.Err != nil {
		t.Fatalf("reply error: %v", p.Err)
	}
	m := p.MAD
	if len(m) != 256 || m[3] != 0x81 {
		t.Fatalf("not a GetResp: len %d method %#x", len(m), m[3])
	}
	if status := binary.BigEndian.Uint16(m[4:]) & 0x7fff; status != 0 {
		t.Fatalf("MAD status %#x", status)
	}
	if got := binary.BigEndian.Uint64(m[8:]); uint32(got) != uint32(tid) {
		t.Fatalf("reply TID %#x, sent %#x: low 32 bits differ", got, tid)
	}
	return m[64+2], iba.GUID(binary.BigEndian.Uint64(m[64+12:]))
}

func roundTrip(t *testing.T, tr *ibsim.Transport, p *mad.Packet) *mad.Packet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.Timeout = 5 * time.Second
	if err := tr.Send(ctx, p); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r, err := tr.Recv(ctx)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if r.Agent != p.Agent {
		t.Fatalf("reply for agent %d, sent by %d", r.Agent, p.Agent)
	}
	return r
}

func TestDirectRouteNodeInfo(t *testing.T) {
	f, sim := startFabric(t)
	tr := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-1"})
	agent := register(t, tr, mad.AgentSpec{Class: 0x81, ClassVersion: 1})

	h1, leaf, spine := f.Node("H-1"), f.Node("S-leaf-1"), f.Node("S-spine-1")
	cases := []struct {
		path     []byte
		wantType uint8
		wantGUID iba.GUID
	}{
		{nil, 1, h1.GUID},
		{[]byte{1}, 2, leaf.GUID},
		{[]byte{1, byte(fatTree.UplinkPort(1))}, 2, spine.GUID},
	}
	for i, c := range cases {
		// High TID bits are the simulator's to overwrite; the low 32 must
		// come back.
		tid := 0xabcd_1234_0000_0000 | uint64(i+1)
		r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(tid, attrNodeInfo, 0, c.path...)})
		typ, guid := nodeInfoOf(t, r, tid)
		if typ != c.wantType || guid != c.wantGUID {
			t.Errorf("path %v: NodeType %d NodeGUID %v, want %d %v", c.path, typ, guid, c.wantType, c.wantGUID)
		}
		if r.MAD[4]&0x80 == 0 {
			t.Errorf("path %v: D bit not set in the reply", c.path)
		}
	}

	lp, err := tr.LocalPort(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if lp.NodeGUID != h1.GUID || lp.PortGUID != h1.PortGUID(1) || lp.PortNum != 1 || lp.Name != "ibsim:H-1/1" {
		t.Errorf("LocalPort = %+v, want node %v port %v num 1 name ibsim:H-1/1", lp, h1.GUID, h1.PortGUID(1))
	}

	// The C tool agrees on the same fabric.
	out, errOut, code := testbed.RunC(t, sim, "H-1", "smpquery", "-D", "nodeinfo", "0,1")
	if code != 0 {
		t.Fatalf("smpquery: exit %d\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^Guid:\.+0x%016x$`, uint64(leaf.GUID))).MatchString(out) {
		t.Errorf("smpquery -D nodeinfo 0,1 does not show %v:\n%s", leaf.GUID, out)
	}
}

func TestAttachToSwitch(t *testing.T) {
	f, sim := startFabric(t)
	tr := dial(t, ibsim.Config{SockName: sim.SockName, Node: "S-spine-2"})
	lp, err := tr.LocalPort(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sw := f.Node("S-spine-2")
	if lp.NodeGUID != sw.GUID || lp.PortGUID != sw.GUID || lp.PortNum != 0 || tr.Node() != "S-spine-2" {
		t.Errorf("LocalPort = %+v on %q, want switch %v port 0", lp, tr.Node(), sw.GUID)
	}
	agent := register(t, tr, mad.AgentSpec{Class: 0x81})
	r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(7, attrNodeInfo, 0, 2)})
	if _, guid := nodeInfoOf(t, r, 7); guid != f.Node("S-leaf-2").GUID {
		t.Errorf("spine-2 port 2 leads to %v, want S-leaf-2", guid)
	}
}

// TestWithOpenSM covers what needs LIDs: LID-routed SMPs, PMA GMPs, an
// unroutable LID, and an SM-client (ISSM) transport serving requests.
func TestWithOpenSM(t *testing.T) {
	f, sim := startFabric(t)
	testbed.StartOpenSM(t, sim, "H-1")
	ctx := context.Background()

	tr := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-3"})
	h2 := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-2"})
	self, err := tr.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := h2.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if self.LID == 0 || peer.LID == 0 || self.SMLID == 0 {
		t.Fatalf("OpenSM left LIDs unassigned: H-3 %+v, H-2 %+v", self, peer)
	}
	if self.GIDPrefix != 0xfe80000000000000 {
		t.Errorf("GID prefix %#x after the SM sweep, want OpenSM's default fe80::", self.GIDPrefix)
	}

	t.Run("LIDRoutedSMP", func(t *testing.T) {
		agent := register(t, tr, mad.AgentSpec{Class: 0x01, ClassVersion: 1})
		tid := uint64(0x5a5a0001)
		r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: peer.LID, QPN: mad.QP0}, MAD: lidGet(0x01, tid, attrNodeInfo, 0)})
		typ, guid := nodeInfoOf(t, r, tid)
		if typ != 1 || guid != f.Node("H-2").GUID || r.Addr.LID != peer.LID {
			t.Errorf("NodeInfo from LID %d: type %d GUID %v source LID %d, want CA %v", peer.LID, typ, guid, r.Addr.LID, f.Node("H-2").GUID)
		}
	})

	t.Run("UnroutableLID", func(t *testing.T) {
		agent := register(t, tr, mad.AgentSpec{Class: 0x01, ClassVersion: 1})
		start := time.Now()
		r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0x0999}, MAD: lidGet(0x01, 0x77, attrNodeInfo, 0)})
		if !errors.Is(r.Err, ibsim.ErrDropped) {
			t.Fatalf("Err = %v, want ErrDropped", r.Err)
		}
		var de *ibsim.DroppedError
		if !errors.As(r.Err, &de) || de.DLID != 0x0999 || de.AttrID != attrNodeInfo || uint32(de.TID) != 0x77 || !de.Timeout() {
			t.Errorf("DroppedError = %+v", de)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("drop took %v; ibsim bounces at once", d)
		}
	})

	t.Run("PortCounters", func(t *testing.T) {
		agent := register(t, tr, mad.AgentSpec{Class: 0x04, ClassVersion: 1})
		m := lidGet(0x04, 0x1234, attrPortCounters, 0)
		m[64+1] = 1 // PortSelect
		r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: peer.LID, QPN: mad.QP1, QKey: mad.QP1QKey}, MAD: m})
		if r.Err != nil || r.MAD[3] != 0x81 || binary.BigEndian.Uint16(r.MAD[4:]) != 0 {
			t.Fatalf("PerformanceGet(PortCounters): err %v method %#x status %#x", r.Err, r.MAD[3], binary.BigEndian.Uint16(r.MAD[4:]))
		}
		if r.Addr.QPN != mad.QP1 || r.MAD[64+1] != 1 {
			t.Errorf("reply from QP %d, PortSelect %d", r.Addr.QPN, r.MAD[64+1])
		}
		// OpenSM's sweep went through H-2's port, so its packet counters moved.
		if xmitPkts := binary.BigEndian.Uint32(r.MAD[64+32:]); xmitPkts == 0 {
			t.Errorf("PortXmitPkts of H-2 is 0 after an SM sweep")
		}
	})

	t.Run("ISSMServer", func(t *testing.T) {
		srv := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-4", ISSM: true})
		srvLP, err := srv.LocalPort(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-4", ISSM: true}); !errors.Is(err, ibsim.ErrSMExists) {
			t.Errorf("second SM client on H-4: err %v, want ErrSMExists", err)
		}
		// A vendor class (0x09) that ibsim does not answer itself: it goes
		// to the SM client of the destination port.
		const vendorClass = 0x09
		server := register(t, srv, mad.AgentSpec{Class: vendorClass, ClassVersion: 1, Methods: []uint8{0x01}})
		client := register(t, tr, mad.AgentSpec{Class: vendorClass, ClassVersion: 1})

		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req := lidGet(vendorClass, 0x00ee0042, 0x10, 0)
		if err := tr.Send(cctx, &mad.Packet{Agent: client, Addr: mad.Addr{LID: srvLP.LID, QPN: 1}, MAD: req, Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
		got, err := srv.Recv(cctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Agent != server || got.Err != nil || got.MAD[1] != vendorClass || got.Addr.LID != self.LID || got.Addr.QPN != 1 {
			t.Fatalf("server got agent %d err %v class %#x from LID %d QP %d", got.Agent, got.Err, got.MAD[1], got.Addr.LID, got.Addr.QPN)
		}
		resp := append([]byte(nil), got.MAD...)
		resp[3] = 0x81
		resp[64] = 0x99
		if err := srv.Send(cctx, &mad.Packet{Agent: server, Addr: mad.Addr{LID: got.Addr.LID, QPN: got.Addr.QPN}, MAD: resp}); err != nil {
			t.Fatal(err)
		}
		back, err := tr.Recv(cctx)
		if err != nil {
			t.Fatal(err)
		}
		if back.Agent != client || back.Err != nil || back.MAD[3] != 0x81 || back.MAD[64] != 0x99 || uint32(binary.BigEndian.Uint64(back.MAD[8:])) != 0x00ee0042 {
			t.Errorf("client got agent %d err %v method %#x data %#x", back.Agent, back.Err, back.MAD[3], back.MAD[64])
		}
		// The same request to H-2, which has no SM client, bounces.
		if err := tr.Send(cctx, &mad.Packet{Agent: client, Addr: mad.Addr{LID: peer.LID, QPN: 1}, MAD: req, Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
		if b, err := tr.Recv(cctx); err != nil || !errors.Is(b.Err, ibsim.ErrDropped) {
			t.Errorf("request to a port without SM client: %v, %v; want a drop", b, err)
		}
	})
}

// TestConcurrentClients runs 32 goroutines that each send and wait for
// their own replies, matched by the low 32 TID bits; run it with -race.
func TestConcurrentClients(t *testing.T) {
	f, sim := startFabric(t)
	tr := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-2"})
	agent := register(t, tr, mad.AgentSpec{Class: 0x81})
	const workers, each = 32, 20

	var mu sync.Mutex
	waiting := map[uint32]chan *mad.Packet{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recvDone := make(chan error, 1)
	go func() {
		for {
			p, err := tr.Recv(ctx)
			if err != nil {
				recvDone <- err
				return
			}
			tid := uint32(binary.BigEndian.Uint64(p.MAD[8:]))
			mu.Lock()
			ch := waiting[tid]
			delete(waiting, tid)
			mu.Unlock()
			if ch != nil {
				ch <- p
			}
		}
	}()

	want := f.Node("S-leaf-1").GUID
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tid := uint32(w)<<16 | uint32(i)
				ch := make(chan *mad.Packet, 1)
				mu.Lock()
				waiting[tid] = ch
				mu.Unlock()
				if err := tr.Send(ctx, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(uint64(tid), attrNodeInfo, 0, 1), Timeout: 5 * time.Second}); err != nil {
					errs <- err
					return
				}
				select {
				case p := <-ch:
					if g := iba.GUID(binary.BigEndian.Uint64(p.MAD[64+12:])); p.Err != nil || g != want {
						errs <- fmt.Errorf("worker %d: reply %v GUID %v", w, p.Err, g)
						return
					}
				case <-ctx.Done():
					errs <- fmt.Errorf("worker %d request %d: no reply", w, i)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cancel()
	if err := <-recvDone; !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel: %v", err)
	}
	if s := tr.Stats(); s != (ibsim.Stats{}) {
		t.Errorf("stats %+v, want nothing lost", s)
	}
}

func TestCloseUnblocksRecv(t *testing.T) {
	_, sim := startFabric(t)
	before := runtime.NumGoroutine()
	ctx := context.Background()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := tr.Recv(ctx)
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("blocked Recv returned %v, want mad.ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Recv still blocked after Close")
	}
	if _, err := tr.Recv(ctx); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := tr.Send(ctx, &mad.Packet{MAD: drGet(1, attrNodeInfo, 0)}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	waitGoroutines(t, before)
}

func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReconnectKeepsSimulator connects and disconnects 20 times: ibsim
// must stay up and free every slot.
func TestReconnectKeepsSimulator(t *testing.T) {
	f, sim := startFabric(t)
	for i := 0; i < 20; i++ {
		tr, err := ibsim.Dial(context.Background(), ibsim.Config{SockName: sim.SockName, Node: testbed.HCAName(i%4 + 1)})
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if i%2 == 0 {
			agent := register(t, tr, mad.AgentSpec{Class: 0x81})
			r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(uint64(i), attrNodeInfo, 0)})
			if _, g := nodeInfoOf(t, r, uint64(i)); g != f.Node(testbed.HCAName(i%4+1)).GUID {
				t.Fatalf("connection %d answered for %v", i, g)
			}
		}
		if err := tr.Close(); err != nil {
			t.Fatalf("closing connection %d: %v", i, err)
		}
		if !sim.Running() {
			t.Fatalf("ibsim exited after connection %d:\n%s", i, sim.Stderr())
		}
	}
	out, err := sim.Console("Attached")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Client") {
		t.Errorf("slots still taken after 20 disconnects:\n%s", out)
	}
}

func TestDialErrors(t *testing.T) {
	_, sim := startFabric(t)
	ctx := context.Background()

	_, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-99"})
	if !errors.Is(err, ibsim.ErrUnknownNode) || !strings.Contains(err.Error(), "H-99") {
		t.Errorf("unknown node: %v", err)
	}

	_, err = ibsim.Dial(ctx, ibsim.Config{SockName: fmt.Sprintf("nothing-here-%d", time.Now().UnixNano())})
	if !errors.Is(err, ibsim.ErrNotRunning) {
		t.Errorf("no simulator: %v", err)
	}

	_, err = ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: strings.Repeat("x", 40)})
	if err == nil {
		t.Error("a 40-byte node name was accepted")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ibsim.Dial(cancelled, ibsim.Config{SockName: sim.SockName}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Dial: %v", err)
	}

	var open []*ibsim.Transport
	for i := 0; i < ibsim.MaxClients; i++ {
		open = append(open, dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-1"}))
	}
	if _, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-2"}); !errors.Is(err, ibsim.ErrTooManyClients) {
		t.Errorf("11th client: %v", err)
	}
	if _, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName}); !errors.Is(err, ibsim.ErrTooManyClients) {
		t.Errorf("11th client on the default port: %v", err)
	}
	for _, tr := range open {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	}
	if out, _ := sim.Console("Attached"); strings.Contains(out, "Client") {
		t.Errorf("slots still taken:\n%s", out)
	}
	if !sim.Running() {
		t.Fatal("ibsim exited")
	}
}

// TestInjectedDrops uses ibsim's console Error command: every NodeInfo to
// H-2 bounces, other attributes pass.
func TestInjectedDrops(t *testing.T) {
	_, sim := startFabric(t)
	tr := dial(t, ibsim.Config{SockName: sim.SockName, Node: "H-1"})
	agent := register(t, tr, mad.AgentSpec{Class: 0x81})
	if err := sim.SetErrorRate("H-2", 1, 100, attrNodeInfo); err != nil {
		t.Fatal(err)
	}
	// H-1 -> S-leaf-1 port 2 -> H-2.
	r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(1, attrNodeInfo, 0, 1, 2)})
	if !errors.Is(r.Err, ibsim.ErrDropped) {
		t.Errorf("NodeInfo through a 100%% drop: %v", r.Err)
	}
	r = roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(2, 0x0010, 0, 1, 2)})
	if r.Err != nil || !strings.HasPrefix(string(r.MAD[64:]), "H-2") {
		t.Errorf("NodeDescription of H-2: err %v desc %q", r.Err, strings.TrimRight(string(r.MAD[64:128]), "\x00"))
	}
	// 30%: some drops, some answers, and every request accounted for.
	if err := sim.SetErrorRate("H-2", 1, 30, attrNodeInfo); err != nil {
		t.Fatal(err)
	}
	drops := 0
	const n = 200
	for i := 0; i < n; i++ {
		r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(uint64(100+i), attrNodeInfo, 0, 1, 2)})
		if r.Err != nil {
			drops++
		}
	}
	if drops < n/10 || drops > n/2 {
		t.Errorf("%d of %d dropped at a 30%% rate", drops, n)
	}
}

func TestInetMode(t *testing.T) {
	f, err := fatTree.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := testbed.StartIBSimWith(t, topo, testbed.IBSimOptions{Inet: true})
	tr := dial(t, ibsim.Config{Server: sim.Server, Port: fmt.Sprint(sim.Port), Node: "H-4"})
	agent := register(t, tr, mad.AgentSpec{Class: 0x81})
	r := roundTrip(t, tr, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(9, attrNodeInfo, 0, 1)})
	if _, g := nodeInfoOf(t, r, 9); g != f.Node("S-leaf-2").GUID {
		t.Errorf("H-4's leaf is %v, want S-leaf-2", g)
	}
	if err := tr.Close(); err != nil {
		t.Error(err)
	}
	if out, _ := sim.Console("Attached"); strings.Contains(out, "Client") {
		t.Errorf("slot still taken:\n%s", out)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("IBSIM_SOCKNAME", "abc")
	t.Setenv("IBSIM_SERVER_NAME", "host1")
	t.Setenv("IBSIM_SERVER_PORT", "7100")
	t.Setenv("SIM_HOST", "H-3")
	t.Setenv("SIM_SET_ISSM", "1")
	want := ibsim.Config{SockName: "abc", Server: "host1", Port: "7100", Node: "H-3", ISSM: true}
	if got := ibsim.ConfigFromEnv(); got != want {
		t.Errorf("ConfigFromEnv() = %+v, want %+v", got, want)
	}
	t.Setenv("SIM_SET_ISSM", "")
	t.Setenv("IBSIM_SERVER_NAME", "")
	if got := ibsim.ConfigFromEnv(); got.ISSM || got.Server != "" || got.String() != "ibsim abc" {
		t.Errorf("ConfigFromEnv() = %+v (%v)", got, got)
	}
}

// BenchmarkDRNodeInfo measures one-hop DR NodeInfo round trips through
// ibsim: sequential, and with every benchmark goroutine sending at once.
func BenchmarkDRNodeInfo(b *testing.B) {
	f, err := fatTree.Build()
	if err != nil {
		b.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		b.Fatal(err)
	}
	sim := testbed.StartIBSim(b, topo)
	ctx := context.Background()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-1"})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	agent, err := tr.Register(mad.AgentSpec{Class: 0x81})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sequential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := tr.Send(ctx, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(uint64(i), attrNodeInfo, 0, 1), Timeout: time.Second}); err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Recv(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("window32", func(b *testing.B) {
		const window = 32
		sent, got := 0, 0
		for got < b.N {
			for sent < b.N && sent-got < window {
				if err := tr.Send(ctx, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: drGet(uint64(sent), attrNodeInfo, 0, 1), Timeout: time.Second}); err != nil {
					b.Fatal(err)
				}
				sent++
			}
			if _, err := tr.Recv(ctx); err != nil {
				b.Fatal(err)
			}
			got++
		}
	})
}
