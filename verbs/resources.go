//go:build linux && cgo

package verbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
)

// PD is a protection domain (IBA 10.2.3).
type PD struct {
	ctx  *Context
	pd   *C.struct_ibv_pd
	node *node
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed {
		return nil, &Error{Op: "allocating a PD", Err: ErrClosed}
	}
	p, err := C.ibv_alloc_pd(c.c)
	if p == nil {
		return nil, nullErr("allocating a PD on "+c.name, err)
	}
	pd := &PD{ctx: c, pd: p}
	pd.node = c.addNode(func() error {
		if rc := C.ibv_dealloc_pd(p); rc != 0 {
			return errOf("deallocating a PD", rc, nil)
		}
		return nil
	}, c.node)
	return pd, nil
}

// Close closes everything made from the PD, then the PD.
func (pd *PD) Close() error { return closeNode(pd.node) }

// Access flags of MRs and QPs (IBA 10.6.3.1, 11.2.5: remote access rights).
type Access int

const (
	AccessLocalWrite   Access = C.IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite  Access = C.IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead   Access = C.IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic Access = C.IBV_ACCESS_REMOTE_ATOMIC
	AccessMWBind       Access = C.IBV_ACCESS_MW_BIND
)

// MR is a registered memory region (IBA 10.6) over memory this package
// mapped outside the Go heap.
type MR struct {
	pd   *PD
	mr   *C.struct_ibv_mr
	buf  []byte
	node *node
	// Access is what the region was registered with.
	Access Access
}

// AllocMR maps size bytes of zeroed, page-aligned memory and registers it
// with the given access rights (ibv_reg_mr). Close deregisters and unmaps.
func (pd *PD) AllocMR(size int, access Access) (*MR, error) {
	if size <= 0 {
		return nil, &Error{Op: fmt.Sprintf("allocating an MR of %d bytes", size), Err: syscall.EINVAL}
	}
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("mapping %d bytes for an MR", size), Err: err}
	}
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed {
		_ = unix.Munmap(buf)
		return nil, &Error{Op: "registering an MR", Err: ErrClosed}
	}
	m, cerr := C.go_reg_mr(pd.pd, unsafe.Pointer(&buf[0]), C.size_t(size), C.int(access))
	if m == nil {
		_ = unix.Munmap(buf)
		return nil, nullErr(fmt.Sprintf("registering an MR of %d bytes", size), cerr)
	}
	mr := &MR{pd: pd, mr: m, buf: buf, Access: access}
	mr.node = c.addNode(func() error {
		var errs []error
		if rc := C.ibv_dereg_mr(m); rc != 0 {
			errs = append(errs, errOf("deregistering an MR", rc, nil))
		}
		if err := unix.Munmap(buf); err != nil {
			errs = append(errs, &Error{Op: "unmapping an MR", Err: err})
		}
		mr.buf = nil
		return errors.Join(errs...)
	}, pd.node)
	return mr, nil
}

// Buf is the region's memory; it is invalid after Close.
func (m *MR) Buf() []byte { return m.buf }

// Addr is the region's virtual address, as a peer names it in RDMA.
func (m *MR) Addr() uint64 { return uint64(uintptr(unsafe.Pointer(m.mr.addr))) }

// Len is the region's length.
func (m *MR) Len() int { return int(m.mr.length) }

// LKey and RKey are the region's keys (IBA 10.6.3.4).
func (m *MR) LKey() uint32 { return uint32(m.mr.lkey) }
func (m *MR) RKey() uint32 { return uint32(m.mr.rkey) }

// SGE is the scatter/gather element for n bytes at offset off.
func (m *MR) SGE(off, n int) SGE {
	return SGE{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}
}

// Close deregisters the region and unmaps its memory.
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
	ch   *C.struct_ibv_comp_channel
	node *node
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed {
		return nil, &Error{Op: "creating a completion channel", Err: ErrClosed}
	}
	ch, err := C.ibv_create_comp_channel(c.c)
	if ch == nil {
		return nil, nullErr("creating a completion channel on "+c.name, err)
	}
	if rc := C.go_set_nonblock(ch.fd); rc != 0 {
		C.ibv_destroy_comp_channel(ch)
		return nil, errOf("making a completion channel non-blocking", rc, nil)
	}
	cc := &CompChannel{ctx: c, ch: ch}
	cc.node = c.addNode(func() error {
		if rc := C.ibv_destroy_comp_channel(ch); rc != 0 {
			return errOf("destroying a completion channel", rc, nil)
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
		var cq *C.struct_ibv_cq
		rc := C.go_get_cq_event(cc.ch, &cq)
		var got *CQ
		if rc == 0 {
			got, _ = cc.ctx.objects[unsafe.Pointer(cq)].(*CQ)
		}
		release()
		switch {
		case rc == 0 && got != nil:
			return got, nil
		case rc == 0:
			continue // a CQ closed since
		case rc != C.EAGAIN:
			return nil, errOf("reading a completion event", rc, nil)
		}
		if err := waitFD(ctx, fd); err != nil {
			return nil, fmt.Errorf("waiting for a completion event: %w", err)
		}
	}
}

// CQ is a completion queue (IBA 11.2.8).
type CQ struct {
	ctx     *Context
	cq      *C.struct_ibv_cq
	channel *CompChannel
	node    *node
}

// CreateCQ creates a CQ of at least cqe entries; with a channel, its
// completion events go there.
func (c *Context) CreateCQ(cqe int, channel *CompChannel) (*CQ, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node.closed || (channel != nil && channel.node.closed) {
		return nil, &Error{Op: "creating a CQ", Err: ErrClosed}
	}
	var ch *C.struct_ibv_comp_channel
	var chNode *node
	if channel != nil {
		ch, chNode = channel.ch, channel.node
	}
	q, err := C.ibv_create_cq(c.c, C.int(cqe), nil, ch, 0)
	if q == nil {
		return nil, nullErr(fmt.Sprintf("creating a CQ of %d entries on %s", cqe, c.name), err)
	}
	cq := &CQ{ctx: c, cq: q, channel: channel}
	c.register(unsafe.Pointer(q), cq)
	cq.node = c.addNode(func() error {
		c.unregister(unsafe.Pointer(q))
		if rc := C.ibv_destroy_cq(q); rc != 0 {
			return errOf("destroying a CQ", rc, nil)
		}
		return nil
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
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	if rc := C.go_req_notify_cq(cq.cq, s); rc != 0 {
		return errOf("arming a CQ", rc, nil)
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
	if rc := C.ibv_resize_cq(cq.cq, C.int(cqe)); rc != 0 {
		return errOf(fmt.Sprintf("resizing a CQ to %d", cqe), rc, nil)
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
	var buf [64]C.struct_go_wc
	n := C.go_poll_cq(cq.cq, C.int(min(len(wcs), len(buf))), &buf[0])
	if n < 0 {
		return 0, errOf("polling a CQ", n, nil)
	}
	for i := 0; i < int(n); i++ {
		g := &buf[i]
		wcs[i] = WC{
			ID: uint64(g.wr_id), Status: WCStatus(g.status), Opcode: WCOpcode(g.opcode), VendorErr: uint32(g.vendor_err),
			ByteLen: uint32(g.byte_len), Imm: uint32(g.imm), QPNum: uint32(g.qp_num), SrcQP: uint32(g.src_qp),
			Flags: WCFlags(g.wc_flags), PKeyIndex: uint16(g.pkey_index), SLID: uint16(g.slid), SL: uint8(g.sl),
			DLIDPathBits: uint8(g.dlid_path_bits),
		}
	}
	return int(n), nil
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
	WCSuccess      WCStatus = C.IBV_WC_SUCCESS
	WCLocLenErr    WCStatus = C.IBV_WC_LOC_LEN_ERR
	WCLocProtErr   WCStatus = C.IBV_WC_LOC_PROT_ERR
	WCWRFlushErr   WCStatus = C.IBV_WC_WR_FLUSH_ERR
	WCRemAccessErr WCStatus = C.IBV_WC_REM_ACCESS_ERR
	WCRetryExcErr  WCStatus = C.IBV_WC_RETRY_EXC_ERR
	WCRNRRetryErr  WCStatus = C.IBV_WC_RNR_RETRY_EXC_ERR
	WCRemInvReqErr WCStatus = C.IBV_WC_REM_INV_REQ_ERR
)

func (s WCStatus) String() string { return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(s))) }

// WCOpcode is what completed (ibv_wc_opcode).
type WCOpcode int

const (
	WCSend            WCOpcode = C.IBV_WC_SEND
	WCRDMAWrite       WCOpcode = C.IBV_WC_RDMA_WRITE
	WCRDMARead        WCOpcode = C.IBV_WC_RDMA_READ
	WCCompSwap        WCOpcode = C.IBV_WC_COMP_SWAP
	WCFetchAdd        WCOpcode = C.IBV_WC_FETCH_ADD
	WCRecv            WCOpcode = C.IBV_WC_RECV
	WCRecvRDMAWithImm WCOpcode = C.IBV_WC_RECV_RDMA_WITH_IMM
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
	WCWithGRH WCFlags = C.IBV_WC_GRH
	WCWithImm WCFlags = C.IBV_WC_WITH_IMM
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
	StaticRate  uint8
	PortNum     uint8
	GRH         *GlobalRoute
}

// GlobalRoute is the GRH part of an address vector.
type GlobalRoute struct {
	DGID         iba.GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
}

func (a *AHAttr) toC(out *C.struct_ibv_ah_attr) {
	*out = C.struct_ibv_ah_attr{}
	out.dlid = C.uint16_t(a.DLID)
	out.sl = C.uint8_t(a.SL)
	out.src_path_bits = C.uint8_t(a.SrcPathBits)
	out.static_rate = C.uint8_t(a.StaticRate)
	out.port_num = C.uint8_t(a.PortNum)
	if g := a.GRH; g != nil {
		out.is_global = 1
		*(*[16]byte)(unsafe.Pointer(&out.grh.dgid)) = g.DGID
		out.grh.flow_label = C.uint32_t(g.FlowLabel)
		out.grh.sgid_index = C.uint8_t(g.SGIDIndex)
		out.grh.hop_limit = C.uint8_t(g.HopLimit)
		out.grh.traffic_class = C.uint8_t(g.TrafficClass)
	}
}

func ahFromC(in *C.struct_ibv_ah_attr) AHAttr {
	a := AHAttr{DLID: uint16(in.dlid), SL: uint8(in.sl), SrcPathBits: uint8(in.src_path_bits),
		StaticRate: uint8(in.static_rate), PortNum: uint8(in.port_num)}
	if in.is_global != 0 {
		a.GRH = &GlobalRoute{DGID: *(*[16]byte)(unsafe.Pointer(&in.grh.dgid)), FlowLabel: uint32(in.grh.flow_label),
			SGIDIndex: uint8(in.grh.sgid_index), HopLimit: uint8(in.grh.hop_limit), TrafficClass: uint8(in.grh.traffic_class)}
	}
	return a
}

// AH is an address handle (IBA 10.2.2) for UD sends.
type AH struct {
	pd   *PD
	ah   *C.struct_ibv_ah
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
	var ca C.struct_ibv_ah_attr
	attr.toC(&ca)
	h, err := C.ibv_create_ah(pd.pd, &ca)
	if h == nil {
		return nil, nullErr(fmt.Sprintf("creating an AH to LID %d GRH %v", attr.DLID, attr.GRH), err)
	}
	ah := &AH{pd: pd, ah: h, Attr: attr}
	ah.node = c.addNode(func() error {
		if rc := C.ibv_destroy_ah(h); rc != 0 {
			return errOf("destroying an AH", rc, nil)
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
	srq  *C.struct_ibv_srq
	node *node
}

// CreateSRQ creates a shared receive queue.
func (pd *PD) CreateSRQ(attr SRQAttr) (*SRQ, error) {
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed {
		return nil, &Error{Op: "creating an SRQ", Err: ErrClosed}
	}
	var init C.struct_ibv_srq_init_attr
	init.attr.max_wr = C.uint32_t(attr.MaxWR)
	init.attr.max_sge = C.uint32_t(attr.MaxSGE)
	init.attr.srq_limit = C.uint32_t(attr.Limit)
	s, err := C.ibv_create_srq(pd.pd, &init)
	if s == nil {
		return nil, nullErr(fmt.Sprintf("creating an SRQ of %d WRs", attr.MaxWR), err)
	}
	srq := &SRQ{pd: pd, srq: s}
	c.register(unsafe.Pointer(s), srq)
	srq.node = c.addNode(func() error {
		c.unregister(unsafe.Pointer(s))
		if rc := C.ibv_destroy_srq(s); rc != 0 {
			return errOf("destroying an SRQ", rc, nil)
		}
		return nil
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
	var a C.struct_ibv_srq_attr
	if rc := C.ibv_query_srq(s.srq, &a); rc != 0 {
		return SRQAttr{}, errOf("querying an SRQ", rc, nil)
	}
	return SRQAttr{MaxWR: int(a.max_wr), MaxSGE: int(a.max_sge), Limit: int(a.srq_limit)}, nil
}

// SetLimit arms the SRQ limit event at limit WRs (IBA 11.2.3.3 Modify SRQ).
func (s *SRQ) SetLimit(limit int) error {
	release, err := s.node.use("modifying an SRQ")
	if err != nil {
		return err
	}
	defer release()
	var a C.struct_ibv_srq_attr
	a.srq_limit = C.uint32_t(limit)
	if rc := C.ibv_modify_srq(s.srq, &a, C.IBV_SRQ_LIMIT); rc != 0 {
		return errOf(fmt.Sprintf("setting an SRQ's limit to %d", limit), rc, nil)
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
	return postRecv(nil, s.srq, wrs)
}
