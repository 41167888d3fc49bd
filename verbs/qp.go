//go:build linux && cgo

package verbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/rdmakit/rdmakit/iba"
)

// QPType is a transport service (IBA 9.8.1).
type QPType int

const (
	QPTypeRC QPType = C.IBV_QPT_RC
	QPTypeUC QPType = C.IBV_QPT_UC
	QPTypeUD QPType = C.IBV_QPT_UD
)

func (t QPType) String() string {
	switch t {
	case QPTypeRC:
		return "RC"
	case QPTypeUC:
		return "UC"
	case QPTypeUD:
		return "UD"
	}
	return fmt.Sprintf("QP type %d", int(t))
}

// QPState is a QP state (IBA 10.3.1).
type QPState int

const (
	QPStateReset QPState = C.IBV_QPS_RESET
	QPStateInit  QPState = C.IBV_QPS_INIT
	QPStateRTR   QPState = C.IBV_QPS_RTR
	QPStateRTS   QPState = C.IBV_QPS_RTS
	QPStateSQD   QPState = C.IBV_QPS_SQD
	QPStateSQE   QPState = C.IBV_QPS_SQE
	QPStateErr   QPState = C.IBV_QPS_ERR
)

func (s QPState) String() string {
	switch s {
	case QPStateReset:
		return "RESET"
	case QPStateInit:
		return "INIT"
	case QPStateRTR:
		return "RTR"
	case QPStateRTS:
		return "RTS"
	case QPStateSQD:
		return "SQD"
	case QPStateSQE:
		return "SQE"
	case QPStateErr:
		return "ERR"
	}
	return fmt.Sprintf("QP state %d", int(s))
}

// MTU is a path MTU code (IBA 14.2.5.6 NeighborMTU); the verbs use the
// IBA's codes, 1 = 256 bytes ... 5 = 4096.
type MTU = iba.MTU

// The MTU codes, as libibverbs names them (IBV_MTU_256 ...).
const (
	MTU256  = iba.MTU256
	MTU512  = iba.MTU512
	MTU1024 = iba.MTU1024
	MTU2048 = iba.MTU2048
	MTU4096 = iba.MTU4096
)

// MTUOf gives the code of an MTU in bytes.
func MTUOf(bytes int) (MTU, error) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == bytes {
			return m, nil
		}
	}
	return 0, fmt.Errorf("MTU %d: not one of 256, 512, 1024, 2048, 4096", bytes)
}

// QPCap are a QP's work queue sizes (IBA 11.2.4.1).
type QPCap struct {
	MaxSendWR     int
	MaxRecvWR     int
	MaxSendSGE    int
	MaxRecvSGE    int
	MaxInlineData int
}

// QPInitAttr describes a QP to create (IBA 11.2.4.1 Create Queue Pair).
type QPInitAttr struct {
	Type   QPType
	SendCQ *CQ
	RecvCQ *CQ
	SRQ    *SRQ
	Cap    QPCap
	// SigAll makes every send signaled; otherwise only those with
	// SendSignaled complete on the CQ.
	SigAll bool
}

// QP is a queue pair.
type QP struct {
	pd   *PD
	qp   *C.struct_ibv_qp
	node *node
	Type QPType
	// Cap is what the provider granted.
	Cap QPCap
}

// CreateQP creates a queue pair in the RESET state.
func (pd *PD) CreateQP(attr QPInitAttr) (*QP, error) {
	if attr.SendCQ == nil || attr.RecvCQ == nil {
		return nil, &Error{Op: "creating a QP without a send and a receive CQ", Err: syscall.EINVAL}
	}
	c := pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if pd.node.closed || attr.SendCQ.node.closed || attr.RecvCQ.node.closed || (attr.SRQ != nil && attr.SRQ.node.closed) {
		return nil, &Error{Op: "creating a QP", Err: ErrClosed}
	}
	var init C.struct_ibv_qp_init_attr
	init.send_cq = attr.SendCQ.cq
	init.recv_cq = attr.RecvCQ.cq
	var srqNode *node
	if attr.SRQ != nil {
		init.srq = attr.SRQ.srq
		srqNode = attr.SRQ.node
	}
	init.qp_type = C.enum_ibv_qp_type(attr.Type)
	init.cap.max_send_wr = C.uint32_t(attr.Cap.MaxSendWR)
	init.cap.max_recv_wr = C.uint32_t(attr.Cap.MaxRecvWR)
	init.cap.max_send_sge = C.uint32_t(attr.Cap.MaxSendSGE)
	init.cap.max_recv_sge = C.uint32_t(attr.Cap.MaxRecvSGE)
	init.cap.max_inline_data = C.uint32_t(attr.Cap.MaxInlineData)
	if attr.SigAll {
		init.sq_sig_all = 1
	}
	q, err := C.ibv_create_qp(pd.pd, &init)
	if q == nil {
		return nil, nullErr(fmt.Sprintf("creating a %v QP", attr.Type), err)
	}
	qp := &QP{pd: pd, qp: q, Type: attr.Type, Cap: QPCap{
		MaxSendWR: int(init.cap.max_send_wr), MaxRecvWR: int(init.cap.max_recv_wr),
		MaxSendSGE: int(init.cap.max_send_sge), MaxRecvSGE: int(init.cap.max_recv_sge),
		MaxInlineData: int(init.cap.max_inline_data),
	}}
	c.register(unsafe.Pointer(q), qp)
	qp.node = c.addNode(func() error {
		c.unregister(unsafe.Pointer(q))
		if rc := C.ibv_destroy_qp(q); rc != 0 {
			return errOf(fmt.Sprintf("destroying QP %#x", uint32(q.qp_num)), rc, nil)
		}
		return nil
	}, pd.node, attr.SendCQ.node, attr.RecvCQ.node, srqNode)
	return qp, nil
}

// Close destroys the QP.
func (qp *QP) Close() error { return closeNode(qp.node) }

// QPN is the QP's number.
func (qp *QP) QPN() uint32 { return uint32(qp.qp.qp_num) }

// AttrMask names the QPAttr fields a Modify sets (ibv_qp_attr_mask).
type AttrMask int

const (
	AttrState            AttrMask = C.IBV_QP_STATE
	AttrCurState         AttrMask = C.IBV_QP_CUR_STATE
	AttrEnSQDAsyncNotify AttrMask = C.IBV_QP_EN_SQD_ASYNC_NOTIFY
	AttrAccessFlags      AttrMask = C.IBV_QP_ACCESS_FLAGS
	AttrPKeyIndex        AttrMask = C.IBV_QP_PKEY_INDEX
	AttrPort             AttrMask = C.IBV_QP_PORT
	AttrQKey             AttrMask = C.IBV_QP_QKEY
	AttrAV               AttrMask = C.IBV_QP_AV
	AttrPathMTU          AttrMask = C.IBV_QP_PATH_MTU
	AttrTimeout          AttrMask = C.IBV_QP_TIMEOUT
	AttrRetryCnt         AttrMask = C.IBV_QP_RETRY_CNT
	AttrRNRRetry         AttrMask = C.IBV_QP_RNR_RETRY
	AttrRQPSN            AttrMask = C.IBV_QP_RQ_PSN
	AttrMaxQPRDAtomic    AttrMask = C.IBV_QP_MAX_QP_RD_ATOMIC
	AttrAltPath          AttrMask = C.IBV_QP_ALT_PATH
	AttrMinRNRTimer      AttrMask = C.IBV_QP_MIN_RNR_TIMER
	AttrSQPSN            AttrMask = C.IBV_QP_SQ_PSN
	AttrMaxDestRDAtomic  AttrMask = C.IBV_QP_MAX_DEST_RD_ATOMIC
	AttrPathMigState     AttrMask = C.IBV_QP_PATH_MIG_STATE
	AttrCap              AttrMask = C.IBV_QP_CAP
	AttrDestQPN          AttrMask = C.IBV_QP_DEST_QPN
)

// QPAttr are the attributes of Modify Queue Pair (IBA 11.2.5.2), by their
// IBA names. Which ones a transition needs is in IBA table 93 (QP state
// transition properties); Init, RTR and RTS below pick them per QP type.
type QPAttr struct {
	State            QPState
	CurState         QPState
	PathMTU          MTU
	PathMigState     int
	QKey             uint32
	RQPSN            uint32 // receive PSN, 24 bits
	SQPSN            uint32 // send PSN, 24 bits
	DestQPN          uint32
	AccessFlags      Access
	Cap              QPCap
	AH               AHAttr // primary path address vector
	AltAH            AHAttr
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	EnSQDAsyncNotify bool
	SQDraining       bool
	MaxRDAtomic      uint8 // initiator depth
	MaxDestRDAtomic  uint8 // responder resources
	MinRNRTimer      uint8
	Port             uint8
	Timeout          uint8 // local ACK timeout: 4.096 us * 2^Timeout
	RetryCount       uint8
	RNRRetry         uint8
	AltPort          uint8
	AltTimeout       uint8
}

func (a *QPAttr) toC(out *C.struct_ibv_qp_attr) {
	out.qp_state = C.enum_ibv_qp_state(a.State)
	out.cur_qp_state = C.enum_ibv_qp_state(a.CurState)
	out.path_mtu = C.enum_ibv_mtu(a.PathMTU)
	out.path_mig_state = C.enum_ibv_mig_state(a.PathMigState)
	out.qkey = C.uint32_t(a.QKey)
	out.rq_psn = C.uint32_t(a.RQPSN)
	out.sq_psn = C.uint32_t(a.SQPSN)
	out.dest_qp_num = C.uint32_t(a.DestQPN)
	out.qp_access_flags = C.uint(a.AccessFlags)
	out.cap.max_send_wr = C.uint32_t(a.Cap.MaxSendWR)
	out.cap.max_recv_wr = C.uint32_t(a.Cap.MaxRecvWR)
	out.cap.max_send_sge = C.uint32_t(a.Cap.MaxSendSGE)
	out.cap.max_recv_sge = C.uint32_t(a.Cap.MaxRecvSGE)
	out.cap.max_inline_data = C.uint32_t(a.Cap.MaxInlineData)
	a.AH.toC(&out.ah_attr)
	a.AltAH.toC(&out.alt_ah_attr)
	out.pkey_index = C.uint16_t(a.PKeyIndex)
	out.alt_pkey_index = C.uint16_t(a.AltPKeyIndex)
	if a.EnSQDAsyncNotify {
		out.en_sqd_async_notify = 1
	}
	out.max_rd_atomic = C.uint8_t(a.MaxRDAtomic)
	out.max_dest_rd_atomic = C.uint8_t(a.MaxDestRDAtomic)
	out.min_rnr_timer = C.uint8_t(a.MinRNRTimer)
	out.port_num = C.uint8_t(a.Port)
	out.timeout = C.uint8_t(a.Timeout)
	out.retry_cnt = C.uint8_t(a.RetryCount)
	out.rnr_retry = C.uint8_t(a.RNRRetry)
	out.alt_port_num = C.uint8_t(a.AltPort)
	out.alt_timeout = C.uint8_t(a.AltTimeout)
}

func qpAttrFromC(in *C.struct_ibv_qp_attr) QPAttr {
	return QPAttr{
		State: QPState(in.qp_state), CurState: QPState(in.cur_qp_state), PathMTU: MTU(in.path_mtu),
		PathMigState: int(in.path_mig_state), QKey: uint32(in.qkey), RQPSN: uint32(in.rq_psn), SQPSN: uint32(in.sq_psn),
		DestQPN: uint32(in.dest_qp_num), AccessFlags: Access(in.qp_access_flags),
		Cap: QPCap{MaxSendWR: int(in.cap.max_send_wr), MaxRecvWR: int(in.cap.max_recv_wr), MaxSendSGE: int(in.cap.max_send_sge),
			MaxRecvSGE: int(in.cap.max_recv_sge), MaxInlineData: int(in.cap.max_inline_data)},
		AH: ahFromC(&in.ah_attr), AltAH: ahFromC(&in.alt_ah_attr), PKeyIndex: uint16(in.pkey_index),
		AltPKeyIndex: uint16(in.alt_pkey_index), EnSQDAsyncNotify: in.en_sqd_async_notify != 0, SQDraining: in.sq_draining != 0,
		MaxRDAtomic: uint8(in.max_rd_atomic), MaxDestRDAtomic: uint8(in.max_dest_rd_atomic), MinRNRTimer: uint8(in.min_rnr_timer),
		Port: uint8(in.port_num), Timeout: uint8(in.timeout), RetryCount: uint8(in.retry_cnt), RNRRetry: uint8(in.rnr_retry),
		AltPort: uint8(in.alt_port_num), AltTimeout: uint8(in.alt_timeout),
	}
}

// Modify changes the QP's attributes named in mask; with AttrState it is a
// state transition (IBA 11.2.5.2).
func (qp *QP) Modify(attr QPAttr, mask AttrMask) error {
	release, err := qp.node.use("modifying a QP")
	if err != nil {
		return err
	}
	defer release()
	var a C.struct_ibv_qp_attr
	attr.toC(&a)
	if rc := C.ibv_modify_qp(qp.qp, &a, C.int(mask)); rc != 0 {
		what := fmt.Sprintf("modifying %v QP %#x", qp.Type, qp.QPN())
		if mask&AttrState != 0 {
			what = fmt.Sprintf("moving %v QP %#x to %v", qp.Type, qp.QPN(), attr.State)
		}
		return errOf(what, rc, nil)
	}
	return nil
}

// Query reads the QP's attributes and its creation attributes' capacities.
func (qp *QP) Query() (QPAttr, error) {
	release, err := qp.node.use("querying a QP")
	if err != nil {
		return QPAttr{}, err
	}
	defer release()
	var a C.struct_ibv_qp_attr
	var init C.struct_ibv_qp_init_attr
	mask := C.int(AttrState | AttrCurState | AttrPKeyIndex | AttrPort | AttrQKey | AttrAV | AttrPathMTU | AttrTimeout |
		AttrRetryCnt | AttrRNRRetry | AttrRQPSN | AttrMaxQPRDAtomic | AttrMinRNRTimer | AttrSQPSN | AttrMaxDestRDAtomic |
		AttrCap | AttrDestQPN | AttrAccessFlags)
	if rc := C.ibv_query_qp(qp.qp, &a, mask, &init); rc != 0 {
		return QPAttr{}, errOf(fmt.Sprintf("querying QP %#x", qp.QPN()), rc, nil)
	}
	return qpAttrFromC(&a), nil
}

// State reads the QP's current state.
func (qp *QP) State() (QPState, error) {
	a, err := qp.Query()
	return a.State, err
}

// InitAttr are the RESET to INIT attributes: the port and P_Key index, the
// Q_Key of UD QPs, the remote access rights of RC and UC QPs.
type InitAttr struct {
	Port      uint8
	PKeyIndex uint16
	QKey      uint32
	Access    Access
}

// Init moves the QP from RESET to INIT.
func (qp *QP) Init(a InitAttr) error {
	attr := QPAttr{State: QPStateInit, Port: a.Port, PKeyIndex: a.PKeyIndex, QKey: a.QKey, AccessFlags: a.Access}
	mask := AttrState | AttrPort | AttrPKeyIndex
	if qp.Type == QPTypeUD {
		mask |= AttrQKey
	} else {
		mask |= AttrAccessFlags
	}
	return qp.Modify(attr, mask)
}

// RTRAttr are the INIT to RTR attributes of a connected QP: the path to
// the remote QP and the receive side's PSN and limits. A UD QP needs none.
type RTRAttr struct {
	AH              AHAttr
	PathMTU         MTU
	DestQPN         uint32
	RQPSN           uint32
	MaxDestRDAtomic uint8 // RC only
	MinRNRTimer     uint8 // RC only
}

// RTR moves the QP from INIT to RTR (ready to receive).
func (qp *QP) RTR(a RTRAttr) error {
	attr := QPAttr{State: QPStateRTR, AH: a.AH, PathMTU: a.PathMTU, DestQPN: a.DestQPN, RQPSN: a.RQPSN,
		MaxDestRDAtomic: a.MaxDestRDAtomic, MinRNRTimer: a.MinRNRTimer}
	mask := AttrState
	switch qp.Type {
	case QPTypeRC:
		mask |= AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN | AttrMaxDestRDAtomic | AttrMinRNRTimer
	case QPTypeUC:
		mask |= AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN
	}
	return qp.Modify(attr, mask)
}

// RTSAttr are the RTR to RTS attributes: the send PSN and, for RC, the
// ACK timeout, retry counts and initiator depth.
type RTSAttr struct {
	SQPSN       uint32
	Timeout     uint8 // RC only
	RetryCount  uint8 // RC only
	RNRRetry    uint8 // RC only
	MaxRDAtomic uint8 // RC only
}

// RTS moves the QP from RTR to RTS (ready to send).
func (qp *QP) RTS(a RTSAttr) error {
	attr := QPAttr{State: QPStateRTS, SQPSN: a.SQPSN, Timeout: a.Timeout, RetryCount: a.RetryCount,
		RNRRetry: a.RNRRetry, MaxRDAtomic: a.MaxRDAtomic}
	mask := AttrState | AttrSQPSN
	if qp.Type == QPTypeRC {
		mask |= AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxQPRDAtomic
	}
	return qp.Modify(attr, mask)
}

// SetState moves the QP to a state that needs no attributes: SQD (drain
// the send queue), RTS again from SQD or SQE, ERR, or RESET.
func (qp *QP) SetState(s QPState) error { return qp.Modify(QPAttr{State: s}, AttrState) }

// AttachMulticast joins the UD QP to a multicast group (IBA 11.3.1).
func (qp *QP) AttachMulticast(gid [16]byte, lid uint16) error {
	release, err := qp.node.use("attaching a multicast group")
	if err != nil {
		return err
	}
	defer release()
	var g C.union_ibv_gid
	*(*[16]byte)(unsafe.Pointer(&g)) = gid
	if rc := C.ibv_attach_mcast(qp.qp, &g, C.uint16_t(lid)); rc != 0 {
		return errOf("attaching a multicast group", rc, nil)
	}
	return nil
}

// DetachMulticast leaves a multicast group.
func (qp *QP) DetachMulticast(gid [16]byte, lid uint16) error {
	release, err := qp.node.use("detaching a multicast group")
	if err != nil {
		return err
	}
	defer release()
	var g C.union_ibv_gid
	*(*[16]byte)(unsafe.Pointer(&g)) = gid
	if rc := C.ibv_detach_mcast(qp.qp, &g, C.uint16_t(lid)); rc != 0 {
		return errOf("detaching a multicast group", rc, nil)
	}
	return nil
}

// Opcode is a send work request's operation (IBA 11.4.1.1).
type Opcode int

const (
	OpSend           Opcode = C.IBV_WR_SEND
	OpSendWithImm    Opcode = C.IBV_WR_SEND_WITH_IMM
	OpRDMAWrite      Opcode = C.IBV_WR_RDMA_WRITE
	OpRDMAWriteImm   Opcode = C.IBV_WR_RDMA_WRITE_WITH_IMM
	OpRDMARead       Opcode = C.IBV_WR_RDMA_READ
	OpAtomicCmpSwap  Opcode = C.IBV_WR_ATOMIC_CMP_AND_SWP
	OpAtomicFetchAdd Opcode = C.IBV_WR_ATOMIC_FETCH_AND_ADD
)

// SendFlags modify a send work request.
type SendFlags int

const (
	SendFence     SendFlags = C.IBV_SEND_FENCE
	SendSignaled  SendFlags = C.IBV_SEND_SIGNALED
	SendSolicited SendFlags = C.IBV_SEND_SOLICITED
	// SendInline copies the data into the WR: the SGEs' memory need not be
	// registered and may be reused once PostSend returns.
	SendInline SendFlags = C.IBV_SEND_INLINE
)

// SendWR is a send work request.
type SendWR struct {
	ID     uint64
	Opcode Opcode
	Flags  SendFlags
	SGEs   []SGE
	// Imm is the immediate data of the ...WithImm opcodes, host order.
	Imm uint32
	// RemoteAddr and RKey name the remote memory of RDMA and atomics.
	RemoteAddr uint64
	RKey       uint32
	// CompareAdd and Swap are the atomic operands.
	CompareAdd uint64
	Swap       uint64
	// AH, RemoteQPN and RemoteQKey address a UD send.
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
}

// RecvWR is a receive work request.
type RecvWR struct {
	ID   uint64
	SGEs []SGE
}

// PostError reports which work request of a list the provider refused.
type PostError struct {
	Index int // into the list; -1 when unknown
	Err   *Error
}

func (e *PostError) Error() string {
	return fmt.Sprintf("%v (work request %d of the list)", e.Err, e.Index)
}

func (e *PostError) Unwrap() error { return e.Err }

// PostSend posts send work requests, in order.
func (qp *QP) PostSend(wrs ...SendWR) error {
	if len(wrs) == 0 {
		return nil
	}
	release, err := qp.node.use("posting sends")
	if err != nil {
		return err
	}
	defer release()
	total := 0
	for _, w := range wrs {
		total += len(w.SGEs)
	}
	gs := make([]C.struct_go_send, len(wrs))
	sges := make([]C.struct_ibv_sge, max(total, 1))
	k := 0
	for i, w := range wrs {
		g := &gs[i]
		g.wr_id = C.uint64_t(w.ID)
		g.opcode = C.uint32_t(w.Opcode)
		g.flags = C.uint32_t(w.Flags)
		g.first_sge = C.uint32_t(k)
		g.num_sge = C.uint32_t(len(w.SGEs))
		g.imm = C.uint32_t(w.Imm)
		g.rkey = C.uint32_t(w.RKey)
		g.remote_addr = C.uint64_t(w.RemoteAddr)
		g.compare_add = C.uint64_t(w.CompareAdd)
		g.swap = C.uint64_t(w.Swap)
		if w.AH != nil {
			if w.AH.node.closed {
				return &Error{Op: "posting a UD send with a closed AH", Err: ErrClosed}
			}
			g.ah = w.AH.ah
			g.remote_qpn = C.uint32_t(w.RemoteQPN)
			g.remote_qkey = C.uint32_t(w.RemoteQKey)
		} else if qp.Type == QPTypeUD {
			return &PostError{Index: i, Err: &Error{Op: "posting a UD send without an AH", Err: syscall.EINVAL}}
		}
		for _, s := range w.SGEs {
			sges[k] = C.struct_ibv_sge{addr: C.uint64_t(s.Addr), length: C.uint32_t(s.Length), lkey: C.uint32_t(s.LKey)}
			k++
		}
	}
	var bad C.int
	if rc := C.go_post_send(qp.qp, &gs[0], C.int(len(gs)), &sges[0], &bad); rc != 0 {
		return &PostError{Index: int(bad), Err: errOf(fmt.Sprintf("posting %d sends to QP %#x", len(wrs), qp.QPN()), rc, nil).(*Error)}
	}
	return nil
}

// PostRecv posts receive work requests.
func (qp *QP) PostRecv(wrs ...RecvWR) error {
	release, err := qp.node.use("posting receives")
	if err != nil {
		return err
	}
	defer release()
	return postRecv(qp.qp, nil, wrs)
}

func postRecv(qp *C.struct_ibv_qp, srq *C.struct_ibv_srq, wrs []RecvWR) error {
	if len(wrs) == 0 {
		return nil
	}
	total := 0
	for _, w := range wrs {
		total += len(w.SGEs)
	}
	gs := make([]C.struct_go_recv, len(wrs))
	sges := make([]C.struct_ibv_sge, max(total, 1))
	k := 0
	for i, w := range wrs {
		gs[i] = C.struct_go_recv{wr_id: C.uint64_t(w.ID), first_sge: C.uint32_t(k), num_sge: C.uint32_t(len(w.SGEs))}
		for _, s := range w.SGEs {
			sges[k] = C.struct_ibv_sge{addr: C.uint64_t(s.Addr), length: C.uint32_t(s.Length), lkey: C.uint32_t(s.LKey)}
			k++
		}
	}
	var bad C.int
	if rc := C.go_post_recv(qp, srq, &gs[0], C.int(len(gs)), &sges[0], &bad); rc != 0 {
		return &PostError{Index: int(bad), Err: errOf(fmt.Sprintf("posting %d receives", len(wrs)), rc, nil).(*Error)}
	}
	return nil
}
