//go:build vmguest

package verbs_test

// More tests for the floor-4 VM (see guest_test.go): the structure layouts
// against rdma-core's own ibv_devinfo, QP attributes read back, memory
// registered over the caller's buffers, and the reply path of a datagram.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/verbs"
)

// devinfo runs `ibv_devinfo -v -d rxe0` and returns its device and port 1
// attributes by name. A value "NAME (N)" is given as N, as the numbers
// are what the structures hold.
func devinfo(t *testing.T) (devAttr, portAttr map[string]string) {
	t.Helper()
	out, err := exec.Command("ibv_devinfo", "-v", "-d", dev, "-i", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("ibv_devinfo: %v\n%s", err, out)
	}
	devAttr, portAttr = map[string]string{}, map[string]string{}
	m := devAttr
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if k == "port" {
			m = portAttr
			continue
		}
		if i := strings.LastIndexByte(v, '('); i >= 0 && strings.HasSuffix(v, ")") {
			v = v[i+1 : len(v)-1]
		}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return devAttr, portAttr
}

// TestGuestVerbsABI compares every device and port attribute this package
// reads with what rdma-core's ibv_devinfo, compiled against the real
// verbs.h, prints for the same device: a wrong offset shows as a field
// that differs.
func TestGuestVerbsABI(t *testing.T) {
	noLeaks(t)
	c := open(t)
	da, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	pa, err := c.QueryPort(port)
	if err != nil {
		t.Fatal(err)
	}
	wantDev := map[string]string{
		"fw_ver": da.FWVersion, "node_guid": da.NodeGUID.Colon(), "sys_image_guid": da.SysImageGUID.Colon(),
		"vendor_id": fmt.Sprintf("0x%04x", da.VendorID), "vendor_part_id": fmt.Sprint(da.VendorPartID),
		"hw_ver": fmt.Sprintf("0x%X", da.HWVersion), "phys_port_cnt": fmt.Sprint(da.PhysPortCount),
		"max_mr_size": fmt.Sprintf("0x%x", da.MaxMRSize), "page_size_cap": fmt.Sprintf("0x%x", da.PageSizeCap),
		"max_qp": fmt.Sprint(da.MaxQP), "max_qp_wr": fmt.Sprint(da.MaxQPWR),
		"device_cap_flags": fmt.Sprintf("0x%08x", da.DeviceCapFlags), "max_sge": fmt.Sprint(da.MaxSGE),
		"max_cq": fmt.Sprint(da.MaxCQ), "max_cqe": fmt.Sprint(da.MaxCQE), "max_mr": fmt.Sprint(da.MaxMR),
		"max_pd": fmt.Sprint(da.MaxPD), "max_qp_rd_atom": fmt.Sprint(da.MaxQPRDAtom),
		"max_qp_init_rd_atom": fmt.Sprint(da.MaxQPInitRDAtom), "atomic_cap": fmt.Sprint(da.AtomicCap),
		"max_ah": fmt.Sprint(da.MaxAH), "max_srq": fmt.Sprint(da.MaxSRQ), "max_srq_wr": fmt.Sprint(da.MaxSRQWR),
		"max_srq_sge": fmt.Sprint(da.MaxSRQSGE), "max_pkeys": fmt.Sprint(da.MaxPKeys),
		"local_ca_ack_delay": fmt.Sprint(da.LocalCAAckDelay),
	}
	wantPort := map[string]string{
		"state": fmt.Sprint(int(pa.State)), "max_mtu": fmt.Sprint(int(pa.MaxMTU)), "active_mtu": fmt.Sprint(int(pa.ActiveMTU)),
		"sm_lid": fmt.Sprint(pa.SMLID), "port_lid": fmt.Sprint(pa.LID), "port_lmc": fmt.Sprintf("0x%02x", pa.LMC),
		"max_msg_sz": fmt.Sprintf("0x%x", pa.MaxMsgSize), "port_cap_flags": fmt.Sprintf("0x%08x", pa.PortCapFlags),
		"max_vl_num": fmt.Sprint(pa.MaxVLNum), "bad_pkey_cntr": fmt.Sprintf("0x%x", pa.BadPKeyCntr),
		"qkey_viol_cntr": fmt.Sprintf("0x%x", pa.QKeyViolCntr), "sm_sl": fmt.Sprint(pa.SMSL),
		"pkey_tbl_len": fmt.Sprint(pa.PKeyTableLen), "gid_tbl_len": fmt.Sprint(pa.GIDTableLen),
		"subnet_timeout": fmt.Sprint(pa.SubnetTimeout), "init_type_reply": fmt.Sprint(pa.InitTypeReply),
		"active_width": fmt.Sprint(pa.ActiveWidth), "active_speed": fmt.Sprint(pa.ActiveSpeed),
		"phys_state": fmt.Sprint(pa.PhysState),
	}
	gotDev, gotPort := devinfo(t)
	for _, c := range []struct {
		what      string
		want, got map[string]string
	}{{"device", wantDev, gotDev}, {"port 1", wantPort, gotPort}} {
		for k, v := range c.want {
			if g, ok := c.got[k]; !ok {
				t.Errorf("ibv_devinfo prints no %s %s", c.what, k)
			} else if g != v {
				t.Errorf("%s %s: ours %s, ibv_devinfo %s", c.what, k, v, g)
			}
		}
	}
	if ll := map[int]string{verbs.LinkLayerEthernet: "Ethernet", verbs.LinkLayerInfiniBand: "InfiniBand"}[pa.LinkLayer]; ll != gotPort["link_layer"] {
		t.Errorf("link layer %d, ibv_devinfo %s", pa.LinkLayer, gotPort["link_layer"])
	}
	t.Logf("%d device and %d port attributes agree with ibv_devinfo", len(wantDev), len(wantPort))
}

// TestGuestVerbsQPAttr reads back what RTR and RTS set on an RC QP: every
// field of struct ibv_qp_attr and struct ibv_ah_attr the kernel keeps.
func TestGuestVerbsQPAttr(t *testing.T) {
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
	qp, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 5, MaxRecvWR: 6, MaxSendSGE: 2, MaxRecvSGE: 3, MaxInlineData: 32}})
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := c.QueryGID(port, gidIPv4)
	access := verbs.AccessRemoteWrite | verbs.AccessRemoteRead
	if err := qp.Init(verbs.InitAttr{Port: port, Access: access}); err != nil {
		t.Fatal(err)
	}
	av := verbs.AHAttr{PortNum: port, SL: 3, GRH: &verbs.GlobalRoute{DGID: gid, SGIDIndex: gidIPv4, HopLimit: 17, TrafficClass: 0x28, FlowLabel: 0x54321}}
	if err := qp.RTR(verbs.RTRAttr{AH: av, PathMTU: verbs.MTU2048, DestQPN: 0x1234, RQPSN: 0xabcdef, MaxDestRDAtomic: 4, MinRNRTimer: 9}); err != nil {
		t.Fatal(err)
	}
	if err := qp.RTS(verbs.RTSAttr{SQPSN: 0x123456, Timeout: 17, RetryCount: 5, RNRRetry: 6, MaxRDAtomic: 2}); err != nil {
		t.Fatal(err)
	}
	a, err := qp.Query()
	if err != nil {
		t.Fatal(err)
	}
	want := verbs.QPAttr{State: verbs.QPStateRTS, CurState: verbs.QPStateRTS, PathMTU: verbs.MTU2048, DestQPN: 0x1234,
		RQPSN: 0xabcdef, SQPSN: 0x123456, AccessFlags: access, MaxDestRDAtomic: 4, MinRNRTimer: 9, Timeout: 17,
		RetryCount: 5, RNRRetry: 6, MaxRDAtomic: 2, Port: port}
	got := a
	got.Cap, got.AH, got.AltAH, got.PKeyIndex, got.PathMigState, got.QKey = verbs.QPCap{}, verbs.AHAttr{}, verbs.AHAttr{}, 0, 0, 0
	got.CurState = a.State // ibv_query_qp reports the current state in both
	if got != want {
		t.Errorf("Query after RTS:\n got %+v\nwant %+v", got, want)
	}
	// On RoCE the kernel takes the hop limit from the IP route and keeps
	// no SL (rxe); the rest of the address vector comes back as set.
	if a.AH.GRH != nil {
		a.AH.GRH.HopLimit = av.GRH.HopLimit
	}
	if a.AH.PortNum != port || a.AH.GRH == nil || *a.AH.GRH != *av.GRH {
		t.Errorf("address vector read back %+v (GRH %+v), set %+v (GRH %+v)", a.AH, a.AH.GRH, av, av.GRH)
	}
	if a.Cap.MaxSendWR < 5 || a.Cap.MaxRecvWR < 6 || a.Cap.MaxSendSGE < 2 || a.Cap.MaxRecvSGE < 3 || qp.Cap.MaxInlineData < 32 {
		t.Errorf("capacities %+v, granted %+v", a.Cap, qp.Cap)
	}
}

// TestGuestVerbsRegisterMR: memory the caller owns, Go heap and a mapping
// of its own, registered with RegisterMR, carries an RC send and an RDMA
// write while the garbage collector runs; Close gives it back.
func TestGuestVerbsRegisterMR(t *testing.T) {
	noLeaks(t)
	p := newPair(t, verbs.QPTypeRC, false)
	heap := make([]byte, 3000) // not page aligned, on the Go heap
	mapped, err := unix.Mmap(-1, 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mapped)
	access := verbs.AccessLocalWrite | verbs.AccessRemoteWrite
	src, err := p.pd.RegisterMR(heap, access)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := p.pd.RegisterMR(mapped[100:4100], access)
	if err != nil {
		t.Fatal(err)
	}
	if src.Len() != 3000 || src.Addr() == 0 || dst.Len() != 4000 || dst.Addr() != uint64(uintptr(unsafe.Pointer(&mapped[100]))) {
		t.Errorf("MRs %#x+%d, %#x+%d", src.Addr(), src.Len(), dst.Addr(), dst.Len())
	}
	copy(heap[10:], "from the Go heap")
	runtime.GC()
	p.recv(t, 1, 1, dst.SGE(0, 64))
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 2, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{src.SGE(10, 16)}}); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 2)
	if got := string(mapped[100:116]); got != "from the Go heap" {
		t.Errorf("received %q", got)
	}
	// An RDMA write into the Go heap buffer, the peer naming it by address.
	copy(mapped[1100:], "written into Go memory")
	runtime.GC()
	if err := p.qp[1].PostSend(verbs.SendWR{ID: 3, Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled,
		SGEs: []verbs.SGE{dst.SGE(1000, 22)}, RemoteAddr: src.Addr() + 2000, RKey: src.RKey()}); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 1)
	if got := string(heap[2000:2022]); got != "written into Go memory" {
		t.Errorf("RDMA write gave %q", got)
	}
	// A write past the end of the region is refused by the adapter.
	if err := p.qp[1].PostSend(verbs.SendWR{ID: 4, Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled,
		SGEs: []verbs.SGE{dst.SGE(0, 64)}, RemoteAddr: src.Addr() + 2990, RKey: src.RKey()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wc := make([]verbs.WC, 1)
	if _, err := p.cq.Wait(ctx, wc); err != nil {
		t.Fatal(err)
	}
	if wc[0].Status == verbs.WCSuccess {
		t.Error("an RDMA write past the end of a registered buffer succeeded")
	}
	if err := src.Close(); err != nil || src.Buf() != nil {
		t.Errorf("Close: %v, Buf %v", err, src.Buf() != nil)
	}
	if _, err := p.pd.RegisterMR(nil, access); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("RegisterMR(nil) = %v, want EINVAL", err)
	}
}

// TestGuestVerbsReplyPath: a datagram's completion gives the path it came
// by (WCPath) and, reversed, the path of the reply; the address handle
// made from that path and the one libibverbs makes from the completion
// (CreateAHFromWC) agree, and a reply sent with each arrives.
func TestGuestVerbsReplyPath(t *testing.T) {
	noLeaks(t)
	p := newPair(t, verbs.QPTypeUD, false)
	pa, err := p.c.QueryPort(port)
	if err != nil {
		t.Fatal(err)
	}
	if i, err := p.c.FindGID(port, p.gid); err != nil || i != gidIPv4 {
		t.Errorf("FindGID(%v) = %d, %v; want %d", p.gid, i, err, gidIPv4)
	}
	if _, err := p.c.FindGID(port, iba.MakeGID(0xfe80<<48, 0x1234)); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("FindGID of a GID not there: %v, want ENOENT", err)
	}
	// qp[0] sends a datagram to qp[1].
	p.recv(t, 1, 1, p.mr[1].SGE(0, 40+64))
	copy(p.mr[0].Buf()[40:], "request")
	if err := p.qp[0].PostSend(verbs.SendWR{ID: 2, Opcode: verbs.OpSend, Flags: verbs.SendSignaled, SGEs: []verbs.SGE{p.mr[0].SGE(40, 7)},
		AH: p.ah[0], RemoteQPN: p.qp[1].QPN(), RemoteQKey: 0x11111111}); err != nil {
		t.Fatal(err)
	}
	wc := byID(p.wait(t, 2), 1)
	grh := p.mr[1].Buf()[:40]
	g, err := verbs.ParseGRH(grh)
	if err != nil || !g.IPv4 || g.SGID != p.gid || g.DGID != p.gid {
		t.Errorf("GRH %+v, %v; want RoCE v2 over IPv4 from and to %v", g, err, p.gid)
	}
	in, err := verbs.WCPath(&wc, grh, pa.LID)
	if err != nil {
		t.Fatal(err)
	}
	if in.SQPN != p.qp[0].QPN() || in.DQPN != p.qp[1].QPN() || !in.HasGRH || in.SGID != p.gid || in.DGID != p.gid {
		t.Errorf("WCPath = %s", in)
	}
	reply := in.Reverse(true)
	if reply.DQPN != p.qp[0].QPN() || reply.SQPN != p.qp[1].QPN() || reply.HopLimit != 0xff || !reply.Complete() && pa.LID != 0 {
		t.Errorf("reply path %s", reply)
	}
	t.Logf("request came by %s; the reply goes by %s", in, reply)
	fromPath, err := p.c.AHAttrFromPath(port, reply)
	if err != nil {
		t.Fatal(err)
	}
	fromWC, err := p.c.InitAHFromWC(port, &wc, grh)
	if err != nil {
		t.Fatal(err)
	}
	// libibverbs keeps the request's hop limit; a reply path has 0xFF.
	if fromWC.GRH == nil || fromPath.GRH == nil {
		t.Fatalf("address vectors without a GRH: from the path %+v, from the completion %+v", fromPath, fromWC)
	}
	hop := fromWC.GRH.HopLimit
	fromWC.GRH.HopLimit = 0xff
	gp, gw := *fromPath.GRH, *fromWC.GRH
	fromPath.GRH, fromWC.GRH = nil, nil
	if fromPath != fromWC || gp != gw {
		t.Errorf("address vector from the path %+v %+v, from the completion %+v %+v", fromPath, gp, fromWC, gw)
	}
	if hop != g.HopLimit {
		t.Errorf("libibverbs' hop limit %d, the GRH's %d", hop, g.HopLimit)
	}
	ahPath, err := p.pd.CreateAHFromPath(port, reply)
	if err != nil {
		t.Fatal(err)
	}
	ahWC, err := p.pd.CreateAHFromWC(port, &wc, grh)
	if err != nil {
		t.Fatal(err)
	}
	for i, ah := range []*verbs.AH{ahPath, ahWC} {
		id := uint64(10 + 2*i)
		p.recv(t, 0, id, p.mr[0].SGE(0, 40+64))
		copy(p.mr[1].Buf()[40:], "reply")
		if err := p.qp[1].PostSend(verbs.SendWR{ID: id + 1, Opcode: verbs.OpSend, Flags: verbs.SendSignaled,
			SGEs: []verbs.SGE{p.mr[1].SGE(40, 5)}, AH: ah, RemoteQPN: reply.DQPN, RemoteQKey: 0x11111111}); err != nil {
			t.Fatal(err)
		}
		r := byID(p.wait(t, 2), id)
		if r.SrcQP != p.qp[1].QPN() || string(p.mr[0].Buf()[40:45]) != "reply" {
			t.Errorf("reply %d: %+v, %q", i, r, p.mr[0].Buf()[40:45])
		}
	}
	// A completion with a GRH but a short buffer is refused, not read past.
	if _, err := p.c.InitAHFromWC(port, &wc, grh[:20]); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("InitAHFromWC with 20 bytes of GRH: %v", err)
	}
}

// TestGuestVerbsErrno: a verb that returns NULL leaves its reason in errno,
// which this package reads on the calling thread (purego keeps none).
func TestGuestVerbsErrno(t *testing.T) {
	noLeaks(t)
	c := open(t)
	da, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateCQ(da.MaxCQE+1, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("CreateCQ(max_cqe+1) = %v, want EINVAL", err)
	}
	cq, err := c.CreateCQ(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: da.MaxQPWR + 1, MaxSendSGE: 1}})
	var ve *verbs.Error
	if !errors.Is(err, syscall.EINVAL) || !errors.As(err, &ve) {
		t.Errorf("CreateQP(max_qp_wr+1) = %v, want an *Error with EINVAL", err)
	}
	// Many at once, from many goroutines: each gets its own errno.
	errs := make(chan error, 16)
	for i := 0; i < cap(errs); i++ {
		go func() {
			_, err := c.CreateCQ(da.MaxCQE+1+i, nil)
			errs <- err
		}()
	}
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; !errors.Is(err, syscall.EINVAL) {
			t.Errorf("concurrent CreateCQ: %v, want EINVAL", err)
		}
	}
}
