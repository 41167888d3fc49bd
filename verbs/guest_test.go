//go:build vmguest

package verbs_test

// These tests run as root inside the floor-4 VM (internal/vmtest): rxe0 is
// soft-RoCE on dummy0, GID index 1 is ::ffff:10.0.0.1. Every test checks
// with `rdma -j res show` that it left no PD, CQ, QP or MR behind.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/verbs"
)

const (
	dev     = "rxe0"
	port    = 1
	gidIPv4 = 1
)

// resCounts reads the per-device resource counts of `rdma -j res show`.
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
	for _, d := range devs {
		if d["ifname"] != dev {
			continue
		}
		m := map[string]int{}
		for _, k := range []string{"pd", "cq", "qp", "mr"} {
			if v, ok := d[k].(float64); ok {
				m[k] = int(v)
			}
		}
		return m
	}
	t.Fatalf("rdma -j res show has no %s: %s", dev, out)
	return nil
}

// noLeaks records the resource counts now and checks them when the test ends.
func noLeaks(t *testing.T) {
	t.Helper()
	before := resCounts(t)
	t.Cleanup(func() {
		after := resCounts(t)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("rdma res: %s count %d after the test, %d before: leaked", k, after[k], v)
			}
		}
	})
}

func open(t *testing.T) *verbs.Context {
	t.Helper()
	c, err := verbs.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func TestGuestVerbsDevices(t *testing.T) {
	noLeaks(t)
	devs, err := verbs.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range devs {
		found = found || d.Name == dev
	}
	if !found {
		t.Fatalf("Devices = %+v, no %s", devs, dev)
	}
	c := open(t)
	da, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if da.PhysPortCount != 1 || da.MaxQP == 0 || da.NodeGUID == 0 {
		t.Errorf("QueryDevice = %+v", da)
	}
	if g, _ := exec.Command("cat", "/sys/class/infiniband/rxe0/node_guid").Output(); strings.TrimSpace(string(g)) != da.NodeGUID.Colon() {
		t.Errorf("node GUID %v, sysfs says %s", da.NodeGUID, g)
	}
	pa, err := c.QueryPort(port)
	if err != nil {
		t.Fatal(err)
	}
	if pa.State != verbs.PortActive || pa.LinkLayer != verbs.LinkLayerEthernet || pa.ActiveMTU.Bytes() < 1024 {
		t.Errorf("QueryPort = %+v (%v)", pa, pa.State)
	}
	gid, err := c.QueryGID(port, gidIPv4)
	if err != nil {
		t.Fatal(err)
	}
	if gid.String() != "::ffff:10.0.0.1" {
		t.Errorf("GID %d = %v", gidIPv4, gid)
	}
	pk, err := c.QueryPKey(port, 0)
	if err != nil || pk != 0xffff {
		t.Errorf("P_Key 0 = %#x, %v", pk, err)
	}
	if _, err := c.QueryPort(7); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("QueryPort(7) = %v, want EINVAL", err)
	}
	if _, err := verbs.Open("nosuchdev"); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("Open(nosuchdev) = %v, want ENODEV", err)
	}
}

// pair is two connected QPs of one type on one device, with their CQ and a
// registered buffer each.
type pair struct {
	c      *verbs.Context
	pd     *verbs.PD
	ch     *verbs.CompChannel
	cq     *verbs.CQ
	qp     [2]*verbs.QP
	mr     [2]*verbs.MR
	srq    *verbs.SRQ
	ah     [2]*verbs.AH
	gid    iba.GID
	useSRQ bool
}

const bufSize = 8192

func newPair(t *testing.T, typ verbs.QPType, useSRQ bool) *pair {
	t.Helper()
	p := &pair{c: open(t), useSRQ: useSRQ}
	var err error
	if p.gid, err = p.c.QueryGID(port, gidIPv4); err != nil {
		t.Fatal(err)
	}
	if p.pd, err = p.c.AllocPD(); err != nil {
		t.Fatal(err)
	}
	if p.ch, err = p.c.CreateCompChannel(); err != nil {
		t.Fatal(err)
	}
	if p.cq, err = p.c.CreateCQ(64, p.ch); err != nil {
		t.Fatal(err)
	}
	access := verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
	if useSRQ {
		if p.srq, err = p.pd.CreateSRQ(verbs.SRQAttr{MaxWR: 32, MaxSGE: 2}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range p.qp {
		if p.mr[i], err = p.pd.AllocMR(bufSize, access); err != nil {
			t.Fatal(err)
		}
		p.qp[i], err = p.pd.CreateQP(verbs.QPInitAttr{Type: typ, SendCQ: p.cq, RecvCQ: p.cq, SRQ: p.srq,
			Cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 2, MaxRecvSGE: 2, MaxInlineData: 64}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rqAccess := access
	if typ == verbs.QPTypeUC {
		rqAccess = verbs.AccessRemoteWrite
	}
	for i, qp := range p.qp {
		if err := qp.Init(verbs.InitAttr{Port: port, QKey: 0x11111111, Access: rqAccess}); err != nil {
			t.Fatal(err)
		}
		av := verbs.AHAttr{PortNum: port, GRH: &verbs.GlobalRoute{DGID: p.gid, SGIDIndex: gidIPv4, HopLimit: 64}}
		if err := qp.RTR(verbs.RTRAttr{AH: av, PathMTU: verbs.MTU1024, DestQPN: p.qp[1-i].QPN(), RQPSN: 100,
			MaxDestRDAtomic: 4, MinRNRTimer: 12}); err != nil {
			t.Fatal(err)
		}
		if err := qp.RTS(verbs.RTSAttr{SQPSN: 100, Timeout: 14, RetryCount: 7, RNRRetry: 7, MaxRDAtomic: 4}); err != nil {
			t.Fatal(err)
		}
		if typ == verbs.QPTypeUD {
			if p.ah[i], err = p.pd.CreateAH(av); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

// wait collects n completions.
func (p *pair) wait(t *testing.T, n int) []verbs.WC {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []verbs.WC
	wcs := make([]verbs.WC, 16)
	for len(got) < n {
		k, err := p.cq.Wait(ctx, wcs)
		if err != nil {
			t.Fatalf("after %d of %d completions: %v", len(got), n, err)
		}
		for _, wc := range wcs[:k] {
			if err := wc.Err(); err != nil {
				t.Fatalf("completion: %v", err)
			}
			got = append(got, wc)
		}
	}
	return got
}

func (p *pair) recv(t *testing.T, i int, id uint64, sges ...verbs.SGE) {
	t.Helper()
	var err error
	if p.useSRQ {
		err = p.srq.PostRecv(verbs.RecvWR{ID: id, SGEs: sges})
	} else {
		err = p.qp[i].PostRecv(verbs.RecvWR{ID: id, SGEs: sges})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func byID(wcs []verbs.WC, id uint64) verbs.WC {
	for _, w := range wcs {
		if w.ID == id {
			return w
		}
	}
	return verbs.WC{}
}

// TestGuestVerbsRC drives one RC connection through every operation.
func TestGuestVerbsRC(t *testing.T) {
	for _, useSRQ := range []bool{false, true} {
		name := "RQ"
		if useSRQ {
			name = "SRQ"
		}
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			p := newPair(t, verbs.QPTypeRC, useSRQ)
			a, b := p.mr[0].Buf(), p.mr[1].Buf()

			// Send with a two-element gather list into a two-element scatter list.
			copy(a[0:], "hello, ")
			copy(a[100:], "verbs")
			p.recv(t, 1, 1, p.mr[1].SGE(1000, 4), p.mr[1].SGE(2000, 100))
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 2, Opcode: verbs.OpSend, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(0, 7), p.mr[0].SGE(100, 5)}}); err != nil {
				t.Fatal(err)
			}
			wcs := p.wait(t, 2)
			if r := byID(wcs, 1); r.Opcode != verbs.WCRecv || r.ByteLen != 12 || string(b[1000:1004])+string(b[2000:2008]) != "hello, verbs" {
				t.Errorf("receive %+v, data %q %q", r, b[1000:1004], b[2000:2008])
			}
			if s := byID(wcs, 2); s.Opcode != verbs.WCSend {
				t.Errorf("send completion %+v", s)
			}

			// Inline send with immediate data.
			copy(a[200:], "inline!")
			p.recv(t, 1, 3, p.mr[1].SGE(3000, 64))
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 4, Opcode: verbs.OpSendWithImm, Flags: verbs.SendSignaled | verbs.SendInline,
				SGEs: []verbs.SGE{p.mr[0].SGE(200, 7)}, Imm: 0xcafef00d}); err != nil {
				t.Fatal(err)
			}
			wcs = p.wait(t, 2)
			if r := byID(wcs, 3); r.Flags&verbs.WCWithImm == 0 || r.Imm != 0xcafef00d || string(b[3000:3007]) != "inline!" {
				t.Errorf("inline+imm receive %+v, data %q", r, b[3000:3007])
			}

			// RDMA write, then write with immediate (consumes a receive).
			copy(a[300:], "written remotely")
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 5, Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(300, 16)}, RemoteAddr: p.mr[1].Addr() + 4000, RKey: p.mr[1].RKey()}); err != nil {
				t.Fatal(err)
			}
			if w := p.wait(t, 1); w[0].Opcode != verbs.WCRDMAWrite || string(b[4000:4016]) != "written remotely" {
				t.Errorf("RDMA write %+v, remote %q", w[0], b[4000:4016])
			}
			p.recv(t, 1, 6)
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 7, Opcode: verbs.OpRDMAWriteImm, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(300, 7)}, RemoteAddr: p.mr[1].Addr() + 4100, RKey: p.mr[1].RKey(), Imm: 77}); err != nil {
				t.Fatal(err)
			}
			wcs = p.wait(t, 2)
			if r := byID(wcs, 6); r.Opcode != verbs.WCRecvRDMAWithImm || r.Imm != 77 || string(b[4100:4107]) != "written" {
				t.Errorf("write with imm: %+v, remote %q", r, b[4100:4107])
			}

			// RDMA read.
			copy(b[5000:], "read me back")
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 8, Opcode: verbs.OpRDMARead, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(5000, 12)}, RemoteAddr: p.mr[1].Addr() + 5000, RKey: p.mr[1].RKey()}); err != nil {
				t.Fatal(err)
			}
			if w := p.wait(t, 1); w[0].Opcode != verbs.WCRDMARead || string(a[5000:5012]) != "read me back" {
				t.Errorf("RDMA read %+v, local %q", w[0], a[5000:5012])
			}

			// Atomics on an aligned 8-byte word.
			binary.LittleEndian.PutUint64(b[6000:], 40)
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 9, Opcode: verbs.OpAtomicFetchAdd, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(6000, 8)}, RemoteAddr: p.mr[1].Addr() + 6000, RKey: p.mr[1].RKey(), CompareAdd: 2}); err != nil {
				t.Fatal(err)
			}
			if w := p.wait(t, 1); w[0].Opcode != verbs.WCFetchAdd || binary.LittleEndian.Uint64(a[6000:]) != 40 || binary.LittleEndian.Uint64(b[6000:]) != 42 {
				t.Errorf("fetch-add %+v: got %d, remote now %d", w[0], binary.LittleEndian.Uint64(a[6000:]), binary.LittleEndian.Uint64(b[6000:]))
			}
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 10, Opcode: verbs.OpAtomicCmpSwap, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(6008, 8)}, RemoteAddr: p.mr[1].Addr() + 6000, RKey: p.mr[1].RKey(), CompareAdd: 42, Swap: 7}); err != nil {
				t.Fatal(err)
			}
			if w := p.wait(t, 1); w[0].Opcode != verbs.WCCompSwap || binary.LittleEndian.Uint64(a[6008:]) != 42 || binary.LittleEndian.Uint64(b[6000:]) != 7 {
				t.Errorf("compare-swap %+v: got %d, remote now %d", w[0], binary.LittleEndian.Uint64(a[6008:]), binary.LittleEndian.Uint64(b[6000:]))
			}

			// A write with a wrong R_Key fails remotely and moves the QP to ERR.
			if err := p.qp[0].PostSend(verbs.SendWR{ID: 11, Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled,
				SGEs: []verbs.SGE{p.mr[0].SGE(0, 8)}, RemoteAddr: p.mr[1].Addr(), RKey: p.mr[1].RKey() + 0x100}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			wc := make([]verbs.WC, 1)
			if _, err := p.cq.Wait(ctx, wc); err != nil {
				t.Fatal(err)
			}
			var we *verbs.WCError
			if err := wc[0].Err(); !errors.As(err, &we) || we.WC.Status != verbs.WCRemAccessErr {
				t.Errorf("bad R_Key write completed %+v (%v), want %v", wc[0], err, verbs.WCRemAccessErr)
			}
			if s, err := p.qp[0].State(); err != nil || s != verbs.QPStateErr {
				t.Errorf("QP state after the error: %v, %v; want ERR", s, err)
			}
		})
	}
}

// TestGuestVerbsUC sends and RDMA-writes on an unreliable connection.
func TestGuestVerbsUC(t *testing.T) {
	noLeaks(t)
	p := newPair(t, verbs.QPTypeUC, false)
	copy(p.mr[0].Buf(), "uc data")
	p.recv(t, 1, 1, p.mr[1].SGE(0, 64))
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 2, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(0, 7)}},
		verbs.SendWR{ID: 3, Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(0, 7)},
			RemoteAddr: p.mr[1].Addr() + 512, RKey: p.mr[1].RKey()}); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 3)
	if b := p.mr[1].Buf(); string(b[:7]) != "uc data" || string(b[512:519]) != "uc data" {
		t.Errorf("UC receive %q, write %q", b[:7], b[512:519])
	}
}

// TestGuestVerbsUD sends datagrams through an AH; the receiver sees the
// GRH in the first 40 bytes and the sender's QPN.
func TestGuestVerbsUD(t *testing.T) {
	noLeaks(t)
	p := newPair(t, verbs.QPTypeUD, false)
	copy(p.mr[0].Buf()[40:], "datagram")
	p.recv(t, 1, 1, p.mr[1].SGE(0, 40+64))
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 2, Opcode: verbs.OpSendWithImm, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(40, 8)},
		AH: p.ah[0], RemoteQPN: p.qp[1].QPN(), RemoteQKey: 0x11111111, Imm: 5}); err != nil {
		t.Fatal(err)
	}
	r := byID(p.wait(t, 2), 1)
	if r.SrcQP != p.qp[0].QPN() || r.Flags&verbs.WCWithGRH == 0 || r.ByteLen != 48 || r.Imm != 5 || string(p.mr[1].Buf()[40:48]) != "datagram" {
		t.Errorf("UD receive %+v, data %q", r, p.mr[1].Buf()[40:48])
	}
	// A datagram with the wrong Q_Key is dropped: nothing arrives.
	p.recv(t, 1, 3, p.mr[1].SGE(0, 40+64))
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 4, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(40, 8)},
		AH: p.ah[0], RemoteQPN: p.qp[1].QPN(), RemoteQKey: 0x2222}); err != nil {
		t.Fatal(err)
	}
	if w := p.wait(t, 1); w[0].ID != 4 {
		t.Errorf("got %+v, want only the send's completion", w[0])
	}
	time.Sleep(100 * time.Millisecond)
	if n, _ := p.cq.Poll(make([]verbs.WC, 1)); n != 0 {
		t.Error("a datagram with the wrong Q_Key was received")
	}
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 5, Opcode: verbs.OpSend, SGEs: []verbs.SGE{p.mr[0].SGE(40, 8)}}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("UD send without an AH: %v, want EINVAL", err)
	}
	// Multicast: join and leave a group (IBA 11.3.1); leaving twice fails.
	mgid, _ := iba.ParseGID("ff0e::1234")
	if err := p.qp[1].AttachMulticast(mgid, 0); err != nil {
		t.Fatalf("attach: %v", err)
	}
	if err := p.qp[1].DetachMulticast(mgid, 0); err != nil {
		t.Errorf("detach: %v", err)
	}
	if err := p.qp[1].DetachMulticast(mgid, 0); err == nil {
		t.Error("second detach: no error")
	} else {
		t.Logf("second detach: %v", err)
	}
	// The CQ can grow.
	if err := p.cq.Resize(256); err != nil || p.cq.CQE() < 256 {
		t.Errorf("Resize(256): %v, CQE %d", err, p.cq.CQE())
	}
}

// TestGuestVerbsStates walks QPs of each type through the states of IBA
// 10.3.1 and checks each with Query.
func TestGuestVerbsStates(t *testing.T) {
	noLeaks(t)
	c := open(t)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(8, nil)
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := c.QueryGID(port, gidIPv4)
	for _, typ := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD} {
		t.Run(typ.String(), func(t *testing.T) {
			qp, err := pd.CreateQP(verbs.QPInitAttr{Type: typ, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer qp.Close()
			expect := func(want verbs.QPState) {
				t.Helper()
				if a, err := qp.Query(); err != nil || a.State != want {
					t.Fatalf("state %v (%v), want %v", a.State, err, want)
				}
			}
			expect(verbs.QPStateReset)
			// RESET to RTR skips INIT: the kernel refuses.
			if err := qp.RTR(verbs.RTRAttr{PathMTU: verbs.MTU1024}); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("RESET -> RTR: %v, want EINVAL", err)
			}
			if err := qp.Init(verbs.InitAttr{Port: port, PKeyIndex: 0, QKey: 0x1234, Access: verbs.AccessRemoteWrite}); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateInit)
			// INIT to INIT changes attributes.
			m := verbs.AttrState | verbs.AttrPKeyIndex
			if typ == verbs.QPTypeUD {
				m |= verbs.AttrQKey
			}
			if err := qp.Modify(verbs.QPAttr{State: verbs.QPStateInit, QKey: 0x5678}, m); err != nil {
				t.Fatal(err)
			}
			a, _ := qp.Query()
			if typ == verbs.QPTypeUD && a.QKey != 0x5678 {
				t.Errorf("Q_Key after INIT -> INIT = %#x", a.QKey)
			}
			av := verbs.AHAttr{PortNum: port, GRH: &verbs.GlobalRoute{DGID: gid, SGIDIndex: gidIPv4, HopLimit: 64}}
			if err := qp.RTR(verbs.RTRAttr{AH: av, PathMTU: verbs.MTU1024, DestQPN: 0x42, RQPSN: 7, MaxDestRDAtomic: 1, MinRNRTimer: 12}); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateRTR)
			if a, _ := qp.Query(); typ != verbs.QPTypeUD && (a.DestQPN != 0x42 || a.RQPSN != 7 || a.PathMTU != verbs.MTU1024) {
				t.Errorf("after RTR: dest QPN %#x RQ PSN %d MTU %v", a.DestQPN, a.RQPSN, a.PathMTU)
			}
			if err := qp.RTS(verbs.RTSAttr{SQPSN: 9, Timeout: 14, RetryCount: 7, RNRRetry: 7, MaxRDAtomic: 1}); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateRTS)
			if a, _ := qp.Query(); a.SQPSN != 9 {
				t.Errorf("SQ PSN %d, want 9", a.SQPSN)
			}
			// RTS to RTS with an attribute change.
			if typ == verbs.QPTypeRC {
				if err := qp.Modify(verbs.QPAttr{State: verbs.QPStateRTS, MinRNRTimer: 5}, verbs.AttrState|verbs.AttrMinRNRTimer); err != nil {
					t.Error(err)
				}
			}
			// RTS to SQD and back. The way back is only allowed once the
			// send queue has drained (IBA 10.3.1, the SQD state's Drained
			// substate); rxe drains on its own thread, usually at once.
			if err := qp.SetState(verbs.QPStateSQD); err != nil {
				t.Fatal(err)
			}
			if s, _ := qp.State(); s != verbs.QPStateSQD && s != verbs.QPStateRTS {
				t.Errorf("after SQD: %v", s)
			}
			for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
				a, err := qp.Query()
				if err != nil {
					t.Fatal(err)
				}
				if !a.SQDraining {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the send queue is still draining after 1 s")
				}
			}
			if err := qp.SetState(verbs.QPStateRTS); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateRTS)
			if err := qp.SetState(verbs.QPStateErr); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateErr)
			if err := qp.SetState(verbs.QPStateReset); err != nil {
				t.Fatal(err)
			}
			expect(verbs.QPStateReset)
		})
	}
}

// TestGuestVerbsOwnership: closing a parent closes what was made from it.
func TestGuestVerbsOwnership(t *testing.T) {
	noLeaks(t)
	c, err := verbs.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	pd, _ := c.AllocPD()
	cq, _ := c.CreateCQ(8, nil)
	mr, err := pd.AllocMR(4096, verbs.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	srq, err := pd.CreateSRQ(verbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: verbs.QPCap{MaxSendWR: 1, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	qp2, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Closing the CQ closes both QPs that use it, not the PD or the MR.
	if err := cq.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := qp.Query(); !errors.Is(err, verbs.ErrClosed) {
		t.Errorf("QP after its CQ closed: %v, want ErrClosed", err)
	}
	if _, err := qp2.Query(); !errors.Is(err, verbs.ErrClosed) {
		t.Errorf("UD QP after its CQ closed: %v", err)
	}
	if _, err := srq.Query(); err != nil {
		t.Errorf("SRQ after the CQ closed: %v", err)
	}
	if err := qp.Close(); err != nil {
		t.Errorf("second Close of a QP: %v", err)
	}
	// Closing the PD closes the MR and the SRQ.
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := srq.Query(); !errors.Is(err, verbs.ErrClosed) {
		t.Errorf("SRQ after its PD closed: %v", err)
	}
	if mr.Buf() != nil {
		t.Error("MR memory still mapped after its PD closed")
	}
	// Closing the context closes everything else.
	pd2, _ := c.AllocPD()
	if _, err := pd2.AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessRemoteRead); err != nil {
		t.Fatal(err)
	}
	cq2, _ := c.CreateCQ(8, nil)
	if _, err := pd2.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq2, RecvCQ: cq2, Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		t.Fatal(err)
	}
	if n := resCounts(t); n["qp"] == 0 || n["mr"] == 0 {
		t.Errorf("rdma res while open: %v", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AllocPD(); !errors.Is(err, verbs.ErrClosed) {
		t.Errorf("AllocPD on a closed context: %v", err)
	}
	if _, err := pd2.AllocMR(0, verbs.AccessLocalWrite); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("AllocMR(0): %v, want EINVAL", err)
	}
}

// TestGuestVerbsAsyncSRQLimit: the SRQ limit event arrives when the SRQ
// runs below its armed limit.
func TestGuestVerbsAsyncSRQLimit(t *testing.T) {
	noLeaks(t)
	p := newPair(t, verbs.QPTypeRC, true)
	for i := 0; i < 4; i++ {
		p.recv(t, 1, uint64(100+i), p.mr[1].SGE(i*64, 64))
	}
	if err := p.srq.SetLimit(3); err != nil {
		t.Fatal(err)
	}
	if a, err := p.srq.Query(); err != nil || a.Limit != 3 {
		t.Errorf("SRQ limit %d, %v", a.Limit, err)
	}
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 1, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(0, 8)}},
		verbs.SendWR{ID: 2, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(0, 8)}}); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := p.c.AsyncEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != verbs.EventSRQLimitReached || ev.SRQ != p.srq {
		t.Errorf("async event %v, want SRQ limit reached on our SRQ", ev)
	}
	t.Logf("async event: %v", ev)
	// Nothing else is pending: the wait ends with the context.
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if ev, err := p.c.AsyncEvent(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second AsyncEvent = %v, %v; want a deadline", ev, err)
	}
}
