//go:build vmguest

package vmad_test

// These tests run as root inside the floor-4 VM: rxe0 is soft-RoCE, its
// QP1 belongs to the kernel's MAD layer, and package umad registers agents
// there. A GMP from our UD QP to QP1 reaches the umad agent of its class,
// and the reply comes back to the UD QP.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/umad"
	"github.com/rdmakit/rdmakit/verbs/vmad"
)

const (
	vendorClass = 0x09 // vendor range 1: no RMPP, no OUI (IBA 13.4.4)
)

func resCounts(t *testing.T) map[string]int {
	t.Helper()
	out, err := exec.Command("rdma", "-j", "res", "show").Output()
	if err != nil {
		t.Fatalf("rdma -j res show: %v", err)
	}
	var devs []map[string]any
	if err := json.Unmarshal(out, &devs); err != nil {
		t.Fatalf("rdma -j res show: %v in %s", err, out)
	}
	m := map[string]int{}
	for _, d := range devs {
		if d["ifname"] == "rxe0" {
			for _, k := range []string{"pd", "cq", "qp", "mr"} {
				if v, ok := d[k].(float64); ok {
					m[k] = int(v)
				}
			}
		}
	}
	return m
}

func noLeaks(t *testing.T) {
	t.Helper()
	before := resCounts(t)
	t.Cleanup(func() {
		if after := resCounts(t); len(after) != len(before) || after["qp"] != before["qp"] || after["cq"] != before["cq"] ||
			after["mr"] != before["mr"] || after["pd"] != before["pd"] {
			t.Errorf("rdma res after the test %v, before %v: leaked", after, before)
		}
	})
}

func livePort(t *testing.T) *device.Port {
	t.Helper()
	devs, err := device.FS{}.List()
	if err != nil {
		t.Fatal(err)
	}
	p, err := device.SelectEndPort(devs, "rxe0", "1")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// qp1 addresses the port's own QP1 by its link-local GID (see umad's
// guest tests: on rxe the IPv4-mapped GID does not route replies).
func qp1(t *testing.T, p *device.Port) mad.Route {
	t.Helper()
	for _, g := range p.GIDs {
		if g.GID.Prefix() == 0xfe80000000000000 {
			return mad.Route{Addr: mad.Addr{QPN: mad.QP1, QKey: mad.QP1QKey,
				GRH: &mad.GRH{SGIDIndex: uint8(g.Index), HopLimit: 64, GID: g.GID}}, Timeout: 2 * time.Second, Tries: 2}
		}
	}
	t.Fatalf("%s has no link-local GID", p)
	return mad.Route{}
}

func openVMAD(t *testing.T) (*vmad.Transport, *mad.Client) {
	t.Helper()
	tr, err := vmad.Open("rxe0", 1, vmad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mad.NewClient(tr)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("closing the client: %v", err)
		}
	})
	return tr, c
}

func openUmad(t *testing.T, p *device.Port, spec mad.AgentSpec) (*umad.Transport, int) {
	t.Helper()
	tr, err := umad.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	agent, err := tr.Register(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tr, agent
}

// serveOnce answers the next request on the umad server with reply(req).
// An RMPP reply needs a timeout: the kernel waits that long for each ACK.
func serveOnce(ctx context.Context, srv *umad.Transport, agent int, timeout time.Duration, reply func(req *mad.Packet) []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		in, err := srv.Recv(ctx)
		if err != nil {
			done <- err
			return
		}
		if in.Agent != agent {
			done <- errors.New("request for another agent")
			return
		}
		a := in.Addr
		if a.QKey == 0 {
			a.QKey = mad.QP1QKey
		}
		done <- srv.Send(ctx, &mad.Packet{Agent: agent, Addr: a, MAD: reply(in), Timeout: timeout})
	}()
	return done
}

func TestGuestVMADVendorGet(t *testing.T) {
	noLeaks(t)
	p := livePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, agent := openUmad(t, p, mad.AgentSpec{Class: vendorClass, ClassVersion: 1, Methods: []uint8{uint8(iba.MethodGet)}})
	tr, c := openVMAD(t)

	var from mad.Addr
	done := serveOnce(ctx, srv, agent, 0, func(req *mad.Packet) []byte {
		from = req.Addr
		rep := bytes.Clone(req.MAD)
		rep[3] = uint8(iba.MethodGetResp)
		copy(rep[mad.HeaderSize:], "reply from QP1's agent")
		return rep
	})
	start := time.Now()
	rep, err := c.Do(ctx, mad.Request{Target: qp1(t, p), Class: vendorClass, Method: iba.MethodGet, AttrID: 0xff01,
		AttrMod: 7, Data: []byte("request from a UD QP"), Unchecked: true})
	if err != nil {
		t.Fatalf("VendGet over vmad: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("umad server: %v", err)
	}
	if from.QPN != tr.QPN() || from.GRH == nil {
		t.Errorf("the umad agent saw the request from QP %#x GRH %v, want our UD QP %#x with a GRH", from.QPN, from.GRH, tr.QPN())
	}
	if !bytes.HasPrefix(rep.Data(), []byte("reply from QP1's agent")) || rep.Addr.QPN != mad.QP1 || rep.Status != 0 {
		t.Errorf("reply from QP %d status %#x data %q", rep.Addr.QPN, rep.Status, rep.Data()[:24])
	}
	t.Logf("Get to QP1 and GetResp back to UD QP %#x in %v (reply GRH %+v)", tr.QPN(), time.Since(start), *rep.Addr.GRH)

	lp, err := tr.LocalPort(ctx)
	if err != nil || lp.PortGUID != p.PortGUID || lp.NodeGUID != p.Device.NodeGUID || lp.PortNum != 1 {
		t.Errorf("LocalPort = %+v, %v", lp, err)
	}
	// A class nobody serves: the kernel's MAD layer answers for QP1.
	_, err = c.Do(ctx, mad.Request{Target: qp1(t, p), Class: 0x0b, Method: iba.MethodGet, AttrID: 1, Unchecked: true})
	var se *mad.StatusError
	if !errors.As(err, &se) {
		t.Errorf("Get of an unserved class: %v, want a status error from the kernel", err)
	} else {
		t.Logf("unserved class: %v", err)
	}
}

// TestGuestVMADRMPP: an SA GetTableResp of several segments, sent by the
// kernel's RMPP for a umad agent, is reassembled by mad.Client's own RMPP
// over the UD QP, which acknowledges each window back to QP1. (The SA
// class: rxe has no SM, so a umad agent may serve it.)
func TestGuestVMADRMPP(t *testing.T) {
	noLeaks(t)
	p := livePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, agent := openUmad(t, p, mad.AgentSpec{Class: uint8(iba.ClassSubnAdm), ClassVersion: 2, RMPPVersion: 1,
		Methods: []uint8{uint8(iba.MethodGetTable)}})
	_, c := openVMAD(t)

	const hdr = 56 // SA header (IBA 15.2.1.1)
	payload := make([]byte, 3000)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	done := serveOnce(ctx, srv, agent, 2*time.Second, func(req *mad.Packet) []byte {
		rep := make([]byte, hdr+len(payload))
		copy(rep, req.MAD[:hdr])
		rep[3] = uint8(iba.MethodGetTableResp)
		rep[24], rep[25], rep[26] = 1, 1, 0x01 // RMPP version 1, DATA, Active: the kernel segments it
		clear(rep[28:36])
		binary.BigEndian.PutUint16(rep[44:], 8) // AttributeOffset: 64-byte records
		copy(rep[hdr:], payload)
		return rep
	})
	rep, err := c.Do(ctx, mad.Request{Target: qp1(t, p), Class: iba.ClassSubnAdm, Method: iba.MethodGetTable,
		AttrID: 0xff10, Unchecked: true})
	if err != nil {
		t.Fatalf("SubnAdmGetTable over vmad: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("umad server: %v", err)
	}
	if got := rep.Data(); len(got) < len(payload) || !bytes.Equal(got[:len(payload)], payload) {
		t.Errorf("reassembled %d bytes of data, want the %d sent", len(got), len(payload))
	}
	t.Logf("RMPP reply of %d data bytes reassembled over the UD QP", len(rep.Data()))
}

// TestGuestVMADErrors: what a UD QP cannot do is refused plainly.
func TestGuestVMADErrors(t *testing.T) {
	noLeaks(t)
	tr, err := vmad.Open("rxe0", 1, vmad.Options{Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1}); err == nil {
		t.Error("registered a DR SMP agent on a UD QP")
	}
	if _, err := tr.Register(mad.AgentSpec{Class: 0x03, ClassVersion: 2, RMPPVersion: 1}); err == nil {
		t.Error("registered a kernel-RMPP agent")
	}
	a, err := tr.Register(mad.AgentSpec{Class: vendorClass, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tr.Send(ctx, &mad.Packet{Agent: a, Addr: mad.Addr{QPN: 0}, MAD: make([]byte, 256)}); err == nil {
		t.Error("sent to QP0")
	}
	if err := tr.Send(ctx, &mad.Packet{Agent: a, Addr: mad.Addr{QPN: 1}, MAD: make([]byte, 300)}); err == nil {
		t.Error("sent a 300-byte MAD")
	}
	if err := tr.Send(ctx, &mad.Packet{Agent: 5, Addr: mad.Addr{QPN: 1}, MAD: make([]byte, 256)}); err == nil {
		t.Error("sent for an unregistered agent")
	}
	if _, err := vmad.Open("nosuch0", 1, vmad.Options{}); err == nil {
		t.Error("opened a device that does not exist")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := tr.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Recv with nothing coming: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Recv(ctx); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := tr.Send(ctx, &mad.Packet{Agent: a, Addr: mad.Addr{QPN: 1}, MAD: make([]byte, 256)}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
}
