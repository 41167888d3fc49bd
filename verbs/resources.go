package verbs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
)

// PD is a protection domain (IBA 10.2.3).
type PD struct {
	ctx  *Context
	pd   uintptr // struct ibv_pd *
	node *node
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed {
		return nil, &Error{Op: "allocating a PD", Err: ErrClosed}
	}
	p, errno := call(lib.allocPD, c.handle())
	if p == 0 {
		return nil, nullErr("allocating a PD on "+c.name, errno)
	}
	pd := &PD{ctx: c, pd: p}
	pd.node = c.addNode(func() error {
		if rc, errno := call(lib.deallocPD, p); rc != 0 {
			return errnoErr("deallocating a PD", cint(rc), errno)
		}
		return nil
	}, c.node)
	return pd, nil
}

// Close closes everything made from the PD, then the PD.
func (pd *PD) Close() error { return closeNode(pd.node) }

// Access flags of MRs and QPs (IBA 10.6.3.1, 11.2.5: remote access rights;
// ibv_access_flags).
type Access int

const (
	AccessLocalWrite   Access = 1 << 0
	AccessRemoteWrite  Access = 1 << 1
	AccessRemoteRead   Access = 1 << 2
	AccessRemoteAtomic Access = 1 << 3
	AccessMWBind       Access = 1 << 4
)

// MR is a registered memory region (IBA 10.6): memory this package mapped
// (PD.AllocMR) or the caller's (PD.RegisterMR).
type MR struct {
	pd   *PD
	mr   *cMR
	buf  []byte
	node *node
	// Access is what the region was registered with.
	Access Access
}

// AllocMR maps size bytes of zeroed, page-aligned memory outside the Go
// heap and registers it with the given access rights (ibv_reg_mr). Close
// deregisters and unmaps.
func (pd *PD) AllocMR(size int, access Access) (*MR, error) {
	if size <= 0 {
		return nil, &Error{Op: fmt.Sprintf("allocating an MR of %d bytes", size), Err: syscall.EINVAL}
	}
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("mapping %d bytes for an MR", size), Err: err}
	}
	mr, err := pd.register(buf, access, func(*MR) error { return unix.Munmap(buf) }, nil)
	if err != nil {
		_ = unix.Munmap(buf)
		return nil, err
	}
	return mr, nil
}

// pinnedMRs holds the pinners of caller buffers while they are
// registered, so that a pinner is never garbage while it pins: an MR
// whose Context is dropped without Close keeps its memory, as the adapter
// still may write it.
var pinnedMRs = struct {
	sync.Mutex
	m map[*MR]*runtime.Pinner
}{m: map[*MR]*runtime.Pinner{}}

// RegisterMR registers memory the caller owns (ibv_reg_mr, IBA 10.6.3.1
// Register Memory Region): a slice of any origin, Go heap or a mapping of
// the caller's. The rules:
//
//   - The region is buf, exactly: its address and length are what a peer
//     names in RDMA and what SGEs of this MR may cover.
//   - From RegisterMR until Close (of the MR, its PD or its Context) the MR
//     keeps buf alive and, when it is Go memory, pinned (runtime.Pinner), so
//     the garbage collector neither frees nor moves it while the adapter
//     may read or write it. Dropping the MR without Close leaks the pin,
//     never the memory's safety.
//   - The adapter reads and writes buf behind Go's back: do not touch the
//     bytes a posted work request uses until its completion is polled.
//   - After Close the memory is the caller's again; the MR's Buf is nil.
func (pd *PD) RegisterMR(buf []byte, access Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, &Error{Op: "registering an MR over an empty buffer", Err: syscall.EINVAL}
	}
	p := new(runtime.Pinner)
	p.Pin(&buf[0])
	mr, err := pd.register(buf, access, func(mr *MR) error {
		pinnedMRs.Lock()
		delete(pinnedMRs.m, mr)
		pinnedMRs.Unlock()
		p.Unpin()
		return nil
	}, func(mr *MR) {
		pinnedMRs.Lock()
		pinnedMRs.m[mr] = p
		pinnedMRs.Unlock()
	})
	if err != nil {
		p.Unpin()
		return nil, err
	}
	return mr, nil
}

// register registers buf. registered runs, when not nil, once the MR
// exists, under the context lock; release runs after deregistration.
func (pd *PD) register(buf []byte, access Access, release func(*MR) error, registered func(*MR)) (*MR, error) {
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed {
		return nil, &Error{Op: "registering an MR", Err: ErrClosed}
	}
	m, errno := call(lib.regMR, pd.pd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(access))
	if m == 0 {
		return nil, nullErr(fmt.Sprintf("registering an MR of %d bytes", len(buf)), errno)
	}
	mr := &MR{pd: pd, mr: at[cMR](m), buf: buf, Access: access}
	mr.node = c.addNode(func() error {
		mr.buf = nil
		if rc, errno := call(lib.deregMR, m); rc != 0 {
			// Still registered: the adapter may write the memory, so it
			// stays mapped and pinned.
			return errnoErr("deregistering an MR", cint(rc), errno)
		}
		if err := release(mr); err != nil {
			return &Error{Op: "releasing an MR's memory", Err: err}
		}
		return nil
	}, pd.node)
	if registered != nil {
		registered(mr)
	}
	return mr, nil
}

// Buf is the region's memory; it is nil after Close.
func (m *MR) Buf() []byte { return m.buf }

// Addr is the region's virtual address, as a peer names it in RDMA.
func (m *MR) Addr() uint64 { return uint64(m.mr.addr) }

// Len is the region's length.
func (m *MR) Len() int { return int(m.mr.length) }

// LKey and RKey are the region's keys (IBA 10.6.3.4).
func (m *MR) LKey() uint32 { return m.mr.lkey }
func (m *MR) RKey() uint32 { return m.mr.rkey }

// SGE is the scatter/gather element for n bytes at offset off.
func (m *MR) SGE(off, n int) SGE {
	return SGE{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}
}

// Close deregisters the region and unmaps its memory (AllocMR) or gives
// it back to the caller (RegisterMR).
func (m *MR) Close() error { return closeNode(m.node) }

// SGE is a scatter/gather element (IBA 11.4.1.1).
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// CompChannel is a completion channel: a file descriptor on which the CQs
// that use it announce completions (ibv_comp_channel, IBA 11.2.8.1
// completion event handler).
type CompChannel struct {
	ctx  *Context
	ch   *cCompChannel
	node *node
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed {
		return nil, &Error{Op: "creating a completion channel", Err: ErrClosed}
	}
	h, errno := call(lib.createCompChannel, c.handle())
	if h == 0 {
		return nil, nullErr("creating a completion channel on "+c.name, errno)
	}
	ch := at[cCompChannel](h)
	if err := unix.SetNonblock(int(ch.fd), true); err != nil {
		call(lib.destroyCompChannel, h)
		return nil, &Error{Op: "making a completion channel non-blocking", Err: err}
	}
	cc := &CompChannel{ctx: c, ch: ch}
	cc.node = c.addNode(func() error {
		if rc, errno := call(lib.destroyCompChannel, h); rc != 0 {
			return errnoErr("destroying a completion channel", cint(rc), errno)
		}
		return nil
	}, c.node)
	return cc, nil
}

// Close closes the CQs that use the channel, then the channel.
func (cc *CompChannel) Close() error { return closeNode(cc.node) }

// Wait waits for the next completion event on the channel and returns the
// CQ it names; the CQ must be re-armed (CQ.ReqNotify) for the next one.
func (cc *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	for {
		release, err := cc.node.use("waiting for a completion event")
		if err != nil {
			return nil, err
		}
		fd := int(cc.ch.fd)
		var cq, cqCtx uintptr
		rc, errno := call(lib.getCQEvent, addr(cc.ch), uintptr(unsafe.Pointer(&cq)), uintptr(unsafe.Pointer(&cqCtx)))
		var got *CQ
		if rc == 0 {
			call(lib.ackCQEvents, cq, 1)
			got, _ = cc.ctx.objects[cq].(*CQ)
		}
		release()
		switch {
		case rc == 0 && got != nil:
			return got, nil
		case rc == 0:
			continue // a CQ closed since
		case errno != syscall.EAGAIN:
			return nil, errnoErr("reading a completion event", cint(rc), errno)
		}
		if err := waitFD(ctx, fd); err != nil {
			return nil, fmt.Errorf("waiting for a completion event: %w", err)
		}
	}
}

// maxPoll is the most completions one Poll takes.
const maxPoll = 64

// CQ is a completion queue (IBA 11.2.8).
type CQ struct {
	ctx     *Context
	cq      *cCQ
	channel *CompChannel
	node    *node

	pollMu sync.Mutex
	wcs    arena // maxPoll struct ibv_wc for ibv_poll_cq
}

// CreateCQ creates a CQ of at least cqe entries; with a channel, its
// completion events go there.
func (c *Context) CreateCQ(cqe int, channel *CompChannel) (*CQ, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed || (channel != nil && channel.node.closed) {
		return nil, &Error{Op: "creating a CQ", Err: ErrClosed}
	}
	var ch uintptr
	var chNode *node
	if channel != nil {
		ch, chNode = addr(channel.ch), channel.node
	}
	cq := &CQ{ctx: c, channel: channel}
	if err := cq.wcs.ensure(maxPoll * int(unsafe.Sizeof(cWC{}))); err != nil {
		return nil, &Error{Op: "mapping a CQ's completion buffer", Err: err}
	}
	q, errno := call(lib.createCQ, c.handle(), uintptr(cqe), 0, ch, 0)
	if q == 0 {
		_ = cq.wcs.free()
		return nil, nullErr(fmt.Sprintf("creating a CQ of %d entries on %s", cqe, c.name), errno)
	}
	cq.cq = at[cCQ](q)
	c.register(q, cq)
	cq.node = c.addNode(func() error {
		c.unregister(q)
		var errs []error
		if rc, errno := call(lib.destroyCQ, q); rc != 0 {
			errs = append(errs, errnoErr("destroying a CQ", cint(rc), errno))
		}
		if err := cq.wcs.free(); err != nil {
			errs = append(errs, &Error{Op: "unmapping a CQ's completion buffer", Err: err})
		}
		return errors.Join(errs...)
	}, c.node, chNode)
	return cq, nil
}

// Close closes the QPs that use the CQ, then the CQ.
func (cq *CQ) Close() error { return closeNode(cq.node) }

// CQE is the number of entries the CQ holds.
func (cq *CQ) CQE() int { return int(cq.cq.cqe) }

// ReqNotify arms the CQ: the next completion (the next solicited one with
// solicitedOnly) raises an event on its channel (IBA 11.4.2.2).
func (cq *CQ) ReqNotify(solicitedOnly bool) error {
	release, err := cq.node.use("arming a CQ")
	if err != nil {
		return err
	}
	defer release()
	var s uintptr
	if solicitedOnly {
		s = 1
	}
	// ibv_req_notify_cq, as verbs.h inlines it: cq->context->ops.req_notify_cq.
	if rc := cint(fastcall(cq.ctx.reqNotifyCQ, addr(cq.cq), s)); rc != 0 {
		return errnoErr("arming a CQ", rc, 0)
	}
	return nil
}

// Resize changes the CQ's size (IBA 11.2.8.3).
func (cq *CQ) Resize(cqe int) error {
	release, err := cq.node.use("resizing a CQ")
	if err != nil {
		return err
	}
	defer release()
	if rc, errno := call(lib.resizeCQ, addr(cq.cq), uintptr(cqe)); rc != 0 {
		return errnoErr(fmt.Sprintf("resizing a CQ to %d", cqe), cint(rc), errno)
	}
	return nil
}

// Poll takes up to len(wcs) completions (at most 64 a call) and returns how
// many it wrote. A failed completion is returned like any other; WC.Err
// turns it into a *WCError.
func (cq *CQ) Poll(wcs []WC) (int, error) {
	if len(wcs) == 0 {
		return 0, nil
	}
	release, err := cq.node.use("polling a CQ")
	if err != nil {
		return 0, err
	}
	defer release()
	cq.pollMu.Lock()
	defer cq.pollMu.Unlock()
	want := min(len(wcs), maxPoll)
	// ibv_poll_cq, as verbs.h inlines it: cq->context->ops.poll_cq.
	n := cint(fastcall(cq.ctx.pollCQ, addr(cq.cq), uintptr(want), cq.wcs.at(0)))
	if n < 0 {
		return 0, errnoErr("polling a CQ", n, 0)
	}
	got := unsafe.Slice((*cWC)(unsafe.Pointer(&cq.wcs.b[0])), n)
	for i := range got {
		wcs[i] = wcFromC(&got[i])
	}
	return n, nil
}

func wcFromC(g *cWC) WC {
	return WC{
		ID: g.wrID, Status: WCStatus(g.status), Opcode: WCOpcode(g.opcode), VendorErr: g.vendorErr,
		ByteLen: g.byteLen, Imm: binary.BigEndian.Uint32(g.imm[:]), QPNum: g.qpNum, SrcQP: g.srcQP,
		Flags: WCFlags(g.wcFlags), PKeyIndex: g.pkeyIndex, SLID: g.slid, SL: g.sl, DLIDPathBits: g.dlidPathBits,
	}
}

func (w *WC) toC(g *cWC) {
	*g = cWC{wrID: w.ID, status: uint32(w.Status), opcode: uint32(w.Opcode), vendorErr: w.VendorErr,
		byteLen: w.ByteLen, qpNum: w.QPNum, srcQP: w.SrcQP, wcFlags: uint32(w.Flags), pkeyIndex: w.PKeyIndex,
		slid: w.SLID, sl: w.SL, dlidPathBits: w.DLIDPathBits}
	binary.BigEndian.PutUint32(g.imm[:], w.Imm)
}

// Wait polls the CQ until it has completions or ctx ends: with a channel it
// arms the CQ and sleeps on the channel, without one it spins.
func (cq *CQ) Wait(ctx context.Context, wcs []WC) (int, error) {
	for {
		n, err := cq.Poll(wcs)
		if n > 0 || err != nil {
			return n, err
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("waiting for completions: %w", err)
		}
		if cq.channel == nil {
			continue
		}
		if err := cq.ReqNotify(false); err != nil {
			return 0, err
		}
		// A completion that came before arming raises no event: poll again.
		if n, err := cq.Poll(wcs); n > 0 || err != nil {
			return n, err
		}
		if _, err := cq.channel.Wait(ctx); err != nil {
			return 0, err
		}
	}
}

// WCStatus is a completion's status (IBA 11.6.2, ibv_wc_status).
type WCStatus int

const (
	WCSuccess      WCStatus = 0
	WCLocLenErr    WCStatus = 1
	WCLocQPOpErr   WCStatus = 2
	WCLocProtErr   WCStatus = 4
	WCWRFlushErr   WCStatus = 5
	WCMWBindErr    WCStatus = 6
	WCBadRespErr   WCStatus = 7
	WCLocAccessErr WCStatus = 8
	WCRemInvReqErr WCStatus = 9
	WCRemAccessErr WCStatus = 10
	WCRemOpErr     WCStatus = 11
	WCRetryExcErr  WCStatus = 12
	WCRNRRetryErr  WCStatus = 13
	WCFatalErr     WCStatus = 19
	WCGeneralErr   WCStatus = 21
)

// wcStatusNames are ibv_wc_status_str's names, by status.
var wcStatusNames = [...]string{
	"success", "local length error", "local QP operation error", "local EE context operation error",
	"local protection error", "Work Request Flushed Error", "memory management operation error",
	"bad response error", "local access error", "remote invalid request error", "remote access error",
	"remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
	"local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
	"invalid EE context state", "fatal error", "response timeout error", "general error", "TM error",
	"TM software rendezvous",
}

// String names the status as ibv_wc_status_str does.
func (s WCStatus) String() string {
	if s >= 0 && int(s) < len(wcStatusNames) {
		return wcStatusNames[s]
	}
	return "unknown"
}

// WCOpcode is what completed (ibv_wc_opcode).
type WCOpcode int

const (
	WCSend            WCOpcode = 0
	WCRDMAWrite       WCOpcode = 1
	WCRDMARead        WCOpcode = 2
	WCCompSwap        WCOpcode = 3
	WCFetchAdd        WCOpcode = 4
	WCRecv            WCOpcode = 1 << 7
	WCRecvRDMAWithImm WCOpcode = WCRecv + 1
)

func (o WCOpcode) String() string {
	switch o {
	case WCSend:
		return "SEND"
	case WCRDMAWrite:
		return "RDMA_WRITE"
	case WCRDMARead:
		return "RDMA_READ"
	case WCCompSwap:
		return "COMP_SWAP"
	case WCFetchAdd:
		return "FETCH_ADD"
	case WCRecv:
		return "RECV"
	case WCRecvRDMAWithImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return fmt.Sprintf("opcode %d", int(o))
}

// WCFlags say what a completion carries.
type WCFlags int

const (
	WCWithGRH WCFlags = 1 << 0
	WCWithImm WCFlags = 1 << 1
)

// WC is a work completion (IBA 11.4.2.1).
type WC struct {
	ID        uint64
	Status    WCStatus
	Opcode    WCOpcode
	VendorErr uint32
	ByteLen   uint32
	// Imm is the immediate data, in host order, when Flags has WCWithImm.
	Imm          uint32
	QPNum        uint32
	SrcQP        uint32
	Flags        WCFlags
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
}

// Err is nil for a successful completion, else a *WCError.
func (w *WC) Err() error {
	if w.Status == WCSuccess {
		return nil
	}
	return &WCError{WC: *w}
}

// WCError is a completion with an error status.
type WCError struct{ WC WC }

func (e *WCError) Error() string {
	return fmt.Sprintf("verbs: work request %#x on QP %#x completed with %s (status %d, vendor error %#x)",
		e.WC.ID, e.WC.QPNum, e.WC.Status, int(e.WC.Status), e.WC.VendorErr)
}

// AHAttr is an address vector (IBA 11.2.2.1): the LRH and, when GRH is
// set, the GRH of packets to one destination.
type AHAttr struct {
	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	// StaticRate is the injection rate limit, in the IBA's rate codes
	// (PathRecord:Rate, iba.Rate; 0 for the port's rate), which are
	// libibverbs' enum ibv_rate.
	StaticRate uint8
	PortNum    uint8
	GRH        *GlobalRoute
}

// GlobalRoute is the GRH part of an address vector.
type GlobalRoute struct {
	DGID         iba.GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
}

func (a *AHAttr) toC(out *cAHAttr) {
	*out = cAHAttr{dlid: a.DLID, sl: a.SL, srcPathBits: a.SrcPathBits, staticRate: a.StaticRate, portNum: a.PortNum}
	if g := a.GRH; g != nil {
		out.isGlobal = 1
		out.grh = cGlobalRoute{dgid: g.DGID, flowLabel: g.FlowLabel, sgidIndex: g.SGIDIndex, hopLimit: g.HopLimit, trafficClass: g.TrafficClass}
	}
}

func ahFromC(in *cAHAttr) AHAttr {
	a := AHAttr{DLID: in.dlid, SL: in.sl, SrcPathBits: in.srcPathBits, StaticRate: in.staticRate, PortNum: in.portNum}
	if in.isGlobal != 0 {
		g := &in.grh
		a.GRH = &GlobalRoute{DGID: g.dgid, FlowLabel: g.flowLabel, SGIDIndex: g.sgidIndex, HopLimit: g.hopLimit, TrafficClass: g.trafficClass}
	}
	return a
}

// AH is an address handle (IBA 10.2.2) for UD sends.
type AH struct {
	pd   *PD
	ah   uintptr // struct ibv_ah *
	node *node
	Attr AHAttr
}

// CreateAH creates an address handle.
func (pd *PD) CreateAH(attr AHAttr) (*AH, error) {
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed {
		return nil, &Error{Op: "creating an AH", Err: ErrClosed}
	}
	var ca cAHAttr
	attr.toC(&ca)
	h, errno := call(lib.createAH, pd.pd, uintptr(unsafe.Pointer(&ca)))
	if h == 0 {
		return nil, nullErr(fmt.Sprintf("creating an AH to LID %d GRH %v", attr.DLID, attr.GRH), errno)
	}
	ah := &AH{pd: pd, ah: h, Attr: attr}
	ah.node = c.addNode(func() error {
		if rc, errno := call(lib.destroyAH, h); rc != 0 {
			return errnoErr("destroying an AH", cint(rc), errno)
		}
		return nil
	}, pd.node)
	return ah, nil
}

// Close destroys the address handle.
func (ah *AH) Close() error { return closeNode(ah.node) }

// SRQAttr are a shared receive queue's limits (IBA 11.2.3).
type SRQAttr struct {
	MaxWR  int
	MaxSGE int
	// Limit, when not 0, arms the SRQ limit event: an async
	// EventSRQLimitReached when fewer WRs remain.
	Limit int
}

// SRQ is a shared receive queue (IBA 10.2.9).
type SRQ struct {
	pd   *PD
	srq  uintptr // struct ibv_srq *
	node *node

	postMu sync.Mutex
	wrs    arena // receive WR lists for ibv_post_srq_recv
}

// CreateSRQ creates a shared receive queue.
func (pd *PD) CreateSRQ(attr SRQAttr) (*SRQ, error) {
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed {
		return nil, &Error{Op: "creating an SRQ", Err: ErrClosed}
	}
	init := cSRQInitAttr{attr: cSRQAttr{maxWR: uint32(attr.MaxWR), maxSGE: uint32(attr.MaxSGE), srqLimit: uint32(attr.Limit)}}
	s, errno := call(lib.createSRQ, pd.pd, uintptr(unsafe.Pointer(&init)))
	if s == 0 {
		return nil, nullErr(fmt.Sprintf("creating an SRQ of %d WRs", attr.MaxWR), errno)
	}
	srq := &SRQ{pd: pd, srq: s}
	c.register(s, srq)
	srq.node = c.addNode(func() error {
		c.unregister(s)
		var errs []error
		if rc, errno := call(lib.destroySRQ, s); rc != 0 {
			errs = append(errs, errnoErr("destroying an SRQ", cint(rc), errno))
		}
		if err := srq.wrs.free(); err != nil {
			errs = append(errs, &Error{Op: "unmapping an SRQ's work request buffer", Err: err})
		}
		return errors.Join(errs...)
	}, pd.node)
	return srq, nil
}

// Close closes the QPs that use the SRQ, then the SRQ.
func (s *SRQ) Close() error { return closeNode(s.node) }

// Query reads the SRQ's attributes.
func (s *SRQ) Query() (SRQAttr, error) {
	release, err := s.node.use("querying an SRQ")
	if err != nil {
		return SRQAttr{}, err
	}
	defer release()
	var a cSRQAttr
	if rc, errno := call(lib.querySRQ, s.srq, uintptr(unsafe.Pointer(&a))); rc != 0 {
		return SRQAttr{}, errnoErr("querying an SRQ", cint(rc), errno)
	}
	return SRQAttr{MaxWR: int(a.maxWR), MaxSGE: int(a.maxSGE), Limit: int(a.srqLimit)}, nil
}

// srqLimitMask is IBV_SRQ_LIMIT of enum ibv_srq_attr_mask.
const srqLimitMask = 1 << 1

// SetLimit arms the SRQ limit event at limit WRs (IBA 11.2.3.3 Modify SRQ).
func (s *SRQ) SetLimit(limit int) error {
	release, err := s.node.use("modifying an SRQ")
	if err != nil {
		return err
	}
	defer release()
	a := cSRQAttr{srqLimit: uint32(limit)}
	if rc, errno := call(lib.modifySRQ, s.srq, uintptr(unsafe.Pointer(&a)), srqLimitMask); rc != 0 {
		return errnoErr(fmt.Sprintf("setting an SRQ's limit to %d", limit), cint(rc), errno)
	}
	return nil
}

// PostRecv posts receive work requests to the SRQ.
func (s *SRQ) PostRecv(wrs ...RecvWR) error {
	release, err := s.node.use("posting to an SRQ")
	if err != nil {
		return err
	}
	defer release()
	s.postMu.Lock()
	defer s.postMu.Unlock()
	// ibv_post_srq_recv, as verbs.h inlines it: srq->context->ops.post_srq_recv.
	return postRecv(s.pd.ctx.postSRQRecv, s.srq, &s.wrs, wrs)
}
