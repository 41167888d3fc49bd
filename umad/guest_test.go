//go:build vmguest

package umad

// These tests run as root inside the floor-4 VM (internal/vmtest): rdma_rxe
// gives rxe0 on dummy0 (10.0.0.1), a RoCE port, and ib_umad gives umad0.
// RoCE has no LIDs and no QP0, so GMPs to ourselves carry a GRH to our own
// IPv4-mapped GID, and rxe loops them back through its UDP path.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

const (
	vendorClass = 0x09 // vendor specific, range 1 (IBA 13.4.4): no OUI, nobody else serves it
	unusedClass = 0x0b
	methodGet   = 0x01
	methodSend  = 0x03
	methodResp  = 0x80
)

func livePort(t *testing.T) *device.Port {
	t.Helper()
	devs, err := device.FS{}.List()
	if err != nil {
		t.Fatal(err)
	}
	p, err := device.SelectEndPort(devs, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openLive(t *testing.T, p *device.Port) *Transport {
	t.Helper()
	tr, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tr
}

// selfAddr addresses our own QP1: by LID on InfiniBand, by GRH on
// Ethernet. On RoCE it uses the link-local (IPv6) GID: measured on rxe
// (kernel 6.1), a Get sent to the IPv4-mapped GID reaches the server, but
// its GetResp is never matched to the request and the kernel reports a
// timeout; the kernel's own unmatched-method reply fails too
// ("ib_create_ah_from_wc error -2").
func selfAddr(t *testing.T, p *device.Port) mad.Addr {
	t.Helper()
	a := mad.Addr{QPN: mad.QP1, QKey: mad.QP1QKey, LID: p.LID}
	if p.LinkLayer == device.LinkLayerInfiniBand {
		return a
	}
	for _, g := range p.GIDs {
		if g.GID.Prefix() == 0xfe80000000000000 {
			a.GRH = &mad.GRH{SGIDIndex: uint8(g.Index), HopLimit: 64, GID: g.GID}
			return a
		}
	}
	t.Fatalf("%s has no link-local GID: %v", p, p.GIDs)
	return a
}

// ipv4Addr addresses our own QP1 through the port's IPv4-mapped GID.
func ipv4Addr(t *testing.T, p *device.Port) mad.Addr {
	t.Helper()
	for _, g := range p.GIDs {
		if bytes.HasPrefix(g.GID[:], []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}) {
			return mad.Addr{QPN: mad.QP1, QKey: mad.QP1QKey, GRH: &mad.GRH{SGIDIndex: uint8(g.Index), HopLimit: 64, GID: g.GID}}
		}
	}
	t.Fatalf("%s has no IPv4 GID: %v", p, p.GIDs)
	return mad.Addr{}
}

// newMAD builds a 256-byte MAD with the common header of IBA 13.4.3.
func newMAD(class, method uint8, tid uint64, attr uint16) []byte {
	m := make([]byte, mad.Size)
	m[0], m[1], m[2], m[3] = 1, class, 1, method
	binary.BigEndian.PutUint64(m[8:], tid)
	binary.BigEndian.PutUint16(m[16:], attr)
	for i := 24; i < len(m); i++ {
		m[i] = byte(i)
	}
	return m
}

func tidOf(m []byte) uint64    { return binary.BigEndian.Uint64(m[8:]) }
func statusOf(m []byte) uint16 { return binary.BigEndian.Uint16(m[4:]) }

func TestGuestVendorGetLoop(t *testing.T) {
	p := livePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, client := openLive(t, p), openLive(t, p)
	srv, err := server.Register(mad.AgentSpec{Class: vendorClass, ClassVersion: 1, Methods: []uint8{methodGet}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := client.Register(mad.AgentSpec{Class: vendorClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := newMAD(vendorClass, methodGet, 0x12345678, 0xff01)
	start := time.Now()
	if err := client.Send(ctx, &mad.Packet{Agent: cli, Addr: selfAddr(t, p), MAD: req, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}

	in, err := server.Recv(ctx)
	if err != nil {
		t.Fatalf("server Recv: %v", err)
	}
	if in.Agent != srv || in.Err != nil || len(in.MAD) != mad.Size || in.MAD[3] != methodGet ||
		uint32(tidOf(in.MAD)) != 0x12345678 || !bytes.Equal(in.MAD[24:], req[24:]) {
		t.Fatalf("server got agent %d err %v MAD % x", in.Agent, in.Err, in.MAD[:24])
	}
	// The kernel routes the reply by the upper TID bits it set on the way out.
	if tidOf(in.MAD)>>32 == 0 {
		t.Logf("request TID %#x: kernel left the upper bits 0", tidOf(in.MAD))
	}
	if p.LinkLayer == device.LinkLayerEthernet {
		want := selfAddr(t, p).GRH.GID
		if in.Addr.GRH == nil || in.Addr.GRH.GID != want || in.Addr.QPN != mad.QP1 {
			t.Errorf("server: request from %+v (GRH %+v), want QP1 with a GRH from %v", in.Addr, in.Addr.GRH, want)
		}
	}

	reply := append([]byte(nil), in.MAD...)
	reply[3] = methodGet | methodResp
	reply[64] = 0x42
	if err := server.Send(ctx, &mad.Packet{Agent: srv, Addr: in.Addr, MAD: reply}); err != nil {
		t.Fatalf("server Send reply: %v", err)
	}
	out, err := client.Recv(ctx)
	if err != nil {
		t.Fatalf("client Recv: %v", err)
	}
	if out.Agent != cli || out.Err != nil || out.MAD[3] != methodGet|methodResp || tidOf(out.MAD) != tidOf(in.MAD) ||
		out.MAD[64] != 0x42 || statusOf(out.MAD) != 0 {
		t.Fatalf("client got agent %d err %v MAD % x", out.Agent, out.Err, out.MAD[:24])
	}
	t.Logf("Get and GetResp through %s in %v, TID %#x", server.Path(), time.Since(start), tidOf(out.MAD))
}

// TestGuestUnservedGet: the kernel's MAD layer answers a Get for a class
// nobody registered with "unsupported method/attribute" (status 0x0c).
func TestGuestUnservedGet(t *testing.T) {
	p := livePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := openLive(t, p)
	cli, err := tr.Register(mad.AgentSpec{Class: unusedClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := newMAD(unusedClass, methodGet, 0xabcdef01, 0x0010)
	if err := tr.Send(ctx, &mad.Packet{Agent: cli, Addr: selfAddr(t, p), MAD: req, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	out, err := tr.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err != nil || out.MAD[3] != methodGet|methodResp || uint32(tidOf(out.MAD)) != 0xabcdef01 || statusOf(out.MAD)&0x1c != 0x0c {
		t.Errorf("got err %v MAD % x; want GetResp with status 0x0c", out.Err, out.MAD[:24])
	}
}

// TestGuestTimeout: a request nobody answers comes back from the kernel
// with status ETIMEDOUT after its timeout.
func TestGuestTimeout(t *testing.T) {
	p := livePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := openLive(t, p)
	cli, err := tr.Register(mad.AgentSpec{Class: unusedClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := newMAD(unusedClass, methodSend, 0x0badcafe, 0x0010)
	start := time.Now()
	if err := tr.Send(ctx, &mad.Packet{Agent: cli, Addr: selfAddr(t, p), MAD: req, Timeout: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	out, err := tr.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var se *StatusError
	if !errors.As(out.Err, &se) || !errors.Is(out.Err, syscall.ETIMEDOUT) || !errors.Is(out.Err, mad.ErrTimeout) || out.Agent != cli {
		t.Fatalf("got agent %d err %v, want a timeout of agent %d", out.Agent, out.Err, cli)
	}
	if len(out.MAD) < 24 || uint32(tidOf(out.MAD)) != 0x0badcafe {
		t.Errorf("timed-out packet carries % x, want the request's header", out.MAD)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("timeout reported after %v, want about 300 ms", d)
	}
}

func TestGuestPortAndErrors(t *testing.T) {
	p := livePort(t)
	tr := openLive(t, p)
	lp, err := tr.LocalPort(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if lp.Name != p.String() || lp.PortGUID != p.PortGUID || lp.NodeGUID != p.Device.NodeGUID ||
		lp.GIDPrefix != 0xfe80000000000000 || lp.PortNum != p.Num {
		t.Errorf("LocalPort = %+v for %s", lp, p)
	}
	if p.LinkLayer == device.LinkLayerEthernet {
		_, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1})
		if err == nil || !strings.Contains(err.Error(), "carries no SMPs") {
			t.Errorf("Register DR SMP on RoCE = %v, want an error saying RoCE carries no SMPs", err)
		}
	}
	// Two servers for the same class and method: the kernel refuses the second.
	other := openLive(t, p)
	spec := mad.AgentSpec{Class: vendorClass, ClassVersion: 1, Methods: []uint8{methodGet}}
	if _, err := tr.Register(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Register(spec); err == nil {
		t.Error("second server for the same methods was registered")
	} else {
		t.Logf("second server: %v", err)
	}
	// Sending to a GID nobody owns fails in the kernel's address resolution
	// or times out; either way the transport reports it and stays usable.
	cli, err := tr.Register(mad.AgentSpec{Class: unusedClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.LinkLayer == device.LinkLayerEthernet {
		a := selfAddr(t, p)
		gid, _ := iba.ParseGID("::ffff:10.9.9.9")
		a.GRH.GID = gid
		err := tr.Send(context.Background(), &mad.Packet{Agent: cli, Addr: a, MAD: newMAD(unusedClass, methodGet, 7, 1)})
		t.Logf("send to an unreachable GID: %v", err)
	}
	if err := tr.Send(context.Background(), &mad.Packet{Agent: 99, Addr: selfAddr(t, p), MAD: newMAD(unusedClass, methodGet, 8, 1)}); err == nil {
		t.Error("Send with an unregistered agent: no error")
	}
}

// TestGuestIPv4GIDRequest records what happens to a Get sent to the
// IPv4-mapped GID (see selfAddr): the server must receive it; whether the
// reply is matched is logged, not required.
func TestGuestIPv4GIDRequest(t *testing.T) {
	p := livePort(t)
	if p.LinkLayer != device.LinkLayerEthernet {
		t.Skip("not a RoCE port")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server, client := openLive(t, p), openLive(t, p)
	srv, err := server.Register(mad.AgentSpec{Class: vendorClass, ClassVersion: 1, Methods: []uint8{methodGet}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := client.Register(mad.AgentSpec{Class: vendorClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	addr := ipv4Addr(t, p)
	if err := client.Send(ctx, &mad.Packet{Agent: cli, Addr: addr, MAD: newMAD(vendorClass, methodGet, 0x4444, 1), Timeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	in, err := server.Recv(ctx)
	if err != nil || in.Agent != srv || uint32(tidOf(in.MAD)) != 0x4444 {
		t.Fatalf("server Recv = %+v, %v", in, err)
	}
	t.Logf("request from %+v GRH %+v", in.Addr, *in.Addr.GRH)
	reply := append([]byte(nil), in.MAD...)
	reply[3] = methodGet | methodResp
	if err := server.Send(ctx, &mad.Packet{Agent: srv, Addr: in.Addr, MAD: reply}); err != nil {
		t.Fatal(err)
	}
	out, err := client.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("client: method %#x err %v", out.MAD[3], out.Err)
}
