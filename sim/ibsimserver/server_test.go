package ibsimserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
	"golang.org/x/sys/unix"
)

const fabric = `
Switch 4 "sw1"
[1] "hca1"[1]
[2] "hca3"[1]
[3] "sw2"[3]

Switch 4 "sw2"
[1] "hca2"[1]
[3] "sw1"[3]

Hca 2 "hca1"
[1] "sw1"[1]

Hca 1 "hca2"
[1] "sw2"[1]

Hca 1 "hca3"
[1] "sw1"[2]
`

var seq atomic.Int64

// serve starts a server on a fresh fabric under a private socket name.
func serve(t testing.TB, runSM bool) (*sim.Fabric, *Server, string) {
	t.Helper()
	return serveTopo(t, fabric, runSM)
}

func serveTopo(t testing.TB, text string, runSM bool) (*sim.Fabric, *Server, string) {
	t.Helper()
	top, err := topo.Parse(strings.NewReader(text), "fabric")
	if err != nil {
		t.Fatal(err)
	}
	// ibsim 0.10, the one Debian ships, has 30720-entry forwarding tables.
	f, err := sim.NewWithOptions(top, sim.Options{LinearFDBCap: 30720})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if runSM {
		if _, err := f.RunSM(ctx, sim.SMConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	name := fmt.Sprintf("rkfs%d-%d", os.Getpid(), seq.Add(1))
	s, err := Listen(f, Config{SockName: name})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return f, s, name
}

// fakeClient speaks the protocol by hand, as libumad2sim does: its data
// socket is bound to in<pid> before CONNECT and connected to out<slot>
// after, one socket throughout (the server's out socket accepts nothing
// else).
type fakeClient struct {
	ctl  *net.UnixConn
	data int // socket fd, -1 when not bound
	slot uint32
}

func dialFake(t *testing.T, base string, pid int, node string, bindIn bool) (*fakeClient, ctlMsg) {
	t.Helper()
	addr := func(s string) *net.UnixAddr {
		return &net.UnixAddr{Name: "@" + base + ":" + s + "\x00", Net: "unixgram"}
	}
	ctl, err := net.DialUnix("unixgram", addr(fmt.Sprintf("ctl%d", pid)), addr("ctl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	fc := &fakeClient{ctl: ctl, data: -1}
	if bindIn {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: "@" + base + fmt.Sprintf(":in%d\x00", pid)}); err != nil {
			t.Fatal(err)
		}
		tv := unix.Timeval{Sec: 5}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		fc.data = fd
	}
	var m ctlMsg
	m.typ, m.length = ctlConnect, 44
	binary.LittleEndian.PutUint32(m.data[0:], uint32(pid))
	copy(m.data[infoNodeID:], node)
	r := fc.call(t, m)
	fc.slot = binary.LittleEndian.Uint32(r.data[0:])
	if fc.data >= 0 && r.typ == ctlConnect {
		if err := unix.Connect(fc.data, &unix.SockaddrUnix{Name: "@" + base + fmt.Sprintf(":out%d\x00", fc.slot)}); err != nil {
			t.Fatal(err)
		}
	}
	return fc, r
}

func (fc *fakeClient) call(t *testing.T, m ctlMsg) ctlMsg {
	t.Helper()
	var b [ctlSize]byte
	if _, err := fc.ctl.Write(m.marshal(b[:])); err != nil {
		t.Fatal(err)
	}
	fc.ctl.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := fc.ctl.Read(b[:])
	if err != nil {
		t.Fatalf("control reply: %v", err)
	}
	r, ok := parseCtl(b[:n])
	if !ok {
		t.Fatalf("bad control reply %x", b[:n])
	}
	return r
}

func (fc *fakeClient) smp(t *testing.T, dlid uint16, mad []byte) ([]byte, uint32) {
	t.Helper()
	buf := make([]byte, reqSize)
	request{dlid: dlid, slid: dlid}.marshal(buf)
	copy(buf[reqMAD:], mad)
	if _, err := unix.Write(fc.data, buf); err != nil {
		t.Fatal(err)
	}
	n, err := unix.Read(fc.data, buf)
	if err != nil || n != reqSize {
		t.Fatalf("data reply: %d bytes, %v", n, err)
	}
	return buf[reqMAD:], parseRequest(buf).status
}

func drNodeInfo(path ...byte) []byte {
	b := make([]byte, 256)
	b[0], b[1], b[2], b[3] = 1, 0x81, 1, 1
	b[7] = uint8(len(path))
	binary.BigEndian.PutUint32(b[8:], 0x00000007) // umad2sim's agent in bits 47-32
	binary.BigEndian.PutUint32(b[12:], 0x1234)
	binary.BigEndian.PutUint16(b[16:], 0x11)
	binary.BigEndian.PutUint16(b[32:], 0xFFFF)
	binary.BigEndian.PutUint16(b[34:], 0xFFFF)
	copy(b[129:], path)
	return b
}

func TestProtocol(t *testing.T) {
	f, _, base := serve(t, true)
	fc, r := dialFake(t, base, 4242, "hca2", true)
	if r.typ != ctlConnect || nodeID(r.data[:]) != "hca2" {
		t.Fatalf("CONNECT reply type %d node %q", r.typ, nodeID(r.data[:]))
	}
	ni := fc.call(t, ctlMsg{clientID: fc.slot, typ: ctlGetNodeInfo, length: 64})
	if ni.typ != ctlGetNodeInfo || ni.data[2] != 1 || ni.data[3] != 1 {
		t.Fatalf("GET_NODEINFO %d %x", ni.typ, ni.data[:8])
	}
	port := fc.call(t, ctlMsg{clientID: fc.slot, typ: ctlGetPort, length: 4})
	_, _, lid, _, _ := f.PortState("hca2", 1)
	if binary.LittleEndian.Uint16(port.data[:]) != lid || port.data[2] != 4 {
		t.Fatalf("GET_PORT %x, want LID %d Active", port.data[:4], lid)
	}
	// A DR SMP two hops out and back; TID bits 47-32 and 31-0 survive.
	reply, status := fc.smp(t, 0xFFFF, drNodeInfo(1, 3))
	if status != 0 || reply[3] != 0x81 || binary.BigEndian.Uint32(reply[12:]) != 0x1234 || binary.BigEndian.Uint16(reply[10:]) != 7 {
		t.Fatalf("reply status %d header %x", status, reply[:16])
	}
	if reply[8+2] != 0 || reply[2+64] != 2 {
		t.Fatalf("NodeInfo type %d", reply[2+64])
	}
	// A MAD the fabric drops comes back at once with status 110.
	_, status = fc.smp(t, 0xFFFF, drNodeInfo(1, 9))
	if status != statusTimed {
		t.Fatalf("dropped MAD: status %d, want 110", status)
	}
	// Unknown client ids and node names get ERROR replies, not silence.
	if r := fc.call(t, ctlMsg{clientID: 63, typ: ctlGetPort}); r.typ != ctlError {
		t.Fatalf("unknown client: type %d", r.typ)
	}
	if _, r := dialFake(t, base, 4243, "nope", true); r.typ != ctlError {
		t.Fatalf("unknown node: type %d", r.typ)
	}
	// A client whose in socket is not bound is refused; the server lives.
	if _, r := dialFake(t, base, 4244, "hca1", false); r.typ != ctlError {
		t.Fatalf("unbound client: type %d", r.typ)
	}
	// One issm client per node.
	var m ctlMsg
	if r := fc.call(t, ctlMsg{clientID: fc.slot, typ: ctlSetISSM, data: func() [64]byte { binary.LittleEndian.PutUint32(m.data[:], 1); return m.data }()}); r.typ != ctlSetISSM {
		t.Fatalf("SET_ISSM: type %d", r.typ)
	}
	if r := fc.call(t, ctlMsg{clientID: fc.slot, typ: ctlDisconnect}); r.typ != ctlDisconnect {
		t.Fatalf("DISCONNECT: type %d", r.typ)
	}
	if r := fc.call(t, ctlMsg{clientID: fc.slot, typ: ctlGetPort}); r.typ != ctlError {
		t.Fatalf("after DISCONNECT: type %d", r.typ)
	}
}

// The C tools, under libumad2sim, against the simulator.
func TestCTools(t *testing.T) {
	testbed.Require(t)
	f, _, base := serve(t, true)
	ib := &testbed.IBSim{SockName: base}
	_, _, l1, _, _ := f.PortState("hca1", 1)
	out, errOut, code := testbed.RunC(t, ib, "hca2", "smpquery", "nodeinfo", fmt.Sprint(l1))
	if code != 0 || field(out, "NodeType") != "Channel Adapter" || field(out, "LocalPort") != "1" || field(out, "PortGuid") != "0x0000000000100001" {
		t.Fatalf("smpquery nodeinfo: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = testbed.RunC(t, ib, "hca2", "smpquery", "-D", "portinfo", "0,1,3", "1")
	if code != 0 || field(out, "LinkState") != "Active" || field(out, "LinkWidthActive") != "4X" {
		t.Fatalf("smpquery -D portinfo: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = testbed.RunC(t, ib, "hca2", "perfquery", fmt.Sprint(l1), "1")
	if code != 0 || field(out, "PortSelect") != "1" || field(out, "PortXmitPkts") == "" {
		t.Fatalf("perfquery: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = testbed.RunC(t, ib, "hca1", "ibnetdiscover")
	if code != 0 || strings.Count(out, "\nSwitch") != 2 || strings.Count(out, "\nCa") != 3 {
		t.Fatalf("ibnetdiscover: exit %d\n%s\n%s", code, out, errOut)
	}
	// Its output loads back as the same fabric.
	back, err := topo.Parse(strings.NewReader(out), "ibnetdiscover")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s, c, _ := back.Counts(); s != 2 || c != 3 {
		t.Fatalf("reloaded: %d switches %d CAs", s, c)
	}
	// An unreachable LID fails at once instead of hanging.
	start := time.Now()
	_, _, code = testbed.RunC(t, ib, "hca2", "smpquery", "nodeinfo", "999")
	if code == 0 || time.Since(start) > 20*time.Second {
		t.Fatalf("smpquery to LID 999: exit %d after %v", code, time.Since(start))
	}
}

// field reads "Name:....value" from infiniband-diags' dotted output.
func field(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+":") {
			return strings.TrimLeft(l[len(name)+1:], ".")
		}
	}
	return ""
}

// Real OpenSM, through libumad2sim, brings the fabric up with no help from
// the built-in SM, and answers SA queries as the issm client.
func TestOpenSM(t *testing.T) {
	testbed.Require(t)
	f, _, base := serve(t, false)
	ib := &testbed.IBSim{SockName: base}
	testbed.StartOpenSM(t, ib, "hca1")
	seen := map[uint16]string{}
	for _, n := range []string{"hca1", "hca2", "hca3"} {
		st, _, l, _, err := f.PortState(n, 1)
		if err != nil || st != 4 || l == 0 || seen[l] != "" {
			t.Fatalf("%s: state %v LID %d (%v; seen %v)", n, st, l, err, seen)
		}
		seen[l] = n
	}
	_, _, l2, _, _ := f.PortState("hca2", 1)
	out, errOut, code := testbed.RunC(t, ib, "hca3", "smpquery", "nodedesc", fmt.Sprint(l2))
	if code != 0 || !strings.Contains(out, "hca2") {
		t.Fatalf("smpquery nodedesc after OpenSM: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = testbed.RunC(t, ib, "hca3", "saquery", "-s")
	if code != 0 || !strings.Contains(out, "PortInfoRecord") {
		t.Fatalf("saquery -s: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = testbed.RunC(t, ib, "hca3", "sminfo")
	if code != 0 || !strings.Contains(out, "SMINFO_MASTER") {
		t.Fatalf("sminfo: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Inet mode: UDP control port, client slots on the ports after it.
func TestInet(t *testing.T) {
	testbed.Require(t)
	top, err := topo.Parse(strings.NewReader(fabric), "fabric")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(top)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{}); err != nil {
		t.Fatal(err)
	}
	s, err := Listen(f, Config{Inet: true, Addr: "127.0.0.1:0", MaxClients: 4})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		s.Close()
		<-done
	}()
	ib := &testbed.IBSim{Server: "127.0.0.1", Port: s.Addr().(*net.UDPAddr).Port}
	out, errOut, code := testbed.RunC(t, ib, "sw2", "smpquery", "-D", "nodeinfo", "0")
	if code != 0 || field(out, "NodeType") != "Switch" {
		t.Fatalf("smpquery over UDP: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestControlIgnoresLoss: the control protocol is the simulator's, not
// the simulated wire's: with every MAD lost, a client still connects and
// reads its port; refusals say why.
func TestControlIgnoresLoss(t *testing.T) {
	f, _, base := serve(t, true)
	if err := f.SetLatency(sim.Latency{Loss: 100, SMA: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	fc, r := dialFake(t, base, 4343, "hca2", true)
	if r.typ != ctlConnect {
		t.Fatalf("CONNECT refused: %q", r.data)
	}
	for _, typ := range []uint32{ctlGetPort, ctlGetVendor, ctlGetGID, ctlGetGUID, ctlGetNodeInfo, ctlGetPortInfo, ctlGetPKeys} {
		for range 20 {
			start := time.Now()
			rep := fc.call(t, ctlMsg{clientID: fc.slot, typ: typ, length: 64})
			if rep.typ != typ {
				t.Fatalf("control request %d with loss=100: refused: %q", typ, rep.data)
			}
			if d := time.Since(start); d > 40*time.Millisecond {
				t.Errorf("control request %d took %v: the latency model delayed it", typ, d)
			}
		}
	}
	rep := fc.call(t, ctlMsg{clientID: 999, typ: ctlGetPortInfo, length: 64})
	if rep.typ != ctlError || !strings.HasPrefix(string(rep.data[:]), "refused: no client in slot 999") {
		t.Errorf("GET_PORTINFO for slot 999: type %d, data %q", rep.typ, rep.data)
	}
	rep = fc.call(t, ctlMsg{clientID: fc.slot, typ: 77})
	if rep.typ != ctlError || !strings.HasPrefix(string(rep.data[:]), "refused: unknown control request type 77") {
		t.Errorf("request type 77: type %d, data %q", rep.typ, rep.data)
	}
	_, rep = dialFake(t, base, 4344, "nosuchnode", false)
	if rep.typ != ctlError || !strings.HasPrefix(string(rep.data[:]), "refused: no node") {
		t.Errorf("CONNECT to an unknown node: type %d, data %q", rep.typ, rep.data)
	}
}

// TestMaxClientsLimit: a slot table beyond MaxClients, or negative, is
// refused with what it would cost.
func TestMaxClientsLimit(t *testing.T) {
	top, err := topo.Parse(strings.NewReader(fabric), "fabric")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{MaxClients + 1, 10000000000, -1} {
		s, err := Listen(f, Config{SockName: fmt.Sprintf("rkfsmax%d", os.Getpid()), MaxClients: n})
		if err == nil {
			s.Close()
			t.Errorf("MaxClients %d accepted", n)
			continue
		}
		if n > 0 && (!errors.Is(err, ErrTooManySlots) || !strings.Contains(err.Error(), "limit is 1000")) {
			t.Errorf("MaxClients %d: %v", n, err)
		}
	}
}
