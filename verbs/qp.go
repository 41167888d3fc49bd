package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/rdmakit/rdmakit/iba"
)

// QPType is a transport service (IBA 9.8.1).
type QPType int

const (
	QPTypeRC QPType = 2
	QPTypeUC QPType = 3
	QPTypeUD QPType = 4
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
	QPStateReset QPState = 0
	QPStateInit  QPState = 1
	QPStateRTR   QPState = 2
	QPStateRTS   QPState = 3
	QPStateSQD   QPState = 4
	QPStateSQE   QPState = 5
	QPStateErr   QPState = 6
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
	qp   *cQP
	node *node
	Type QPType
	// Cap is what the provider granted.
	Cap QPCap

	sendMu, recvMu sync.Mutex
	sendWRs        arena // send WR lists for ibv_post_send
	recvWRs        arena // receive WR lists for ibv_post_recv
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
	init := cQPInitAttr{sendCQ: addr(attr.SendCQ.cq), recvCQ: addr(attr.RecvCQ.cq), qpType: uint32(attr.Type),
		cap: cQPCap{maxSendWR: uint32(attr.Cap.MaxSendWR), maxRecvWR: uint32(attr.Cap.MaxRecvWR),
			maxSendSGE: uint32(attr.Cap.MaxSendSGE), maxRecvSGE: uint32(attr.Cap.MaxRecvSGE), maxInlineData: uint32(attr.Cap.MaxInlineData)}}
	var srqNode *node
	if attr.SRQ != nil {
		init.srq = attr.SRQ.srq
		srqNode = attr.SRQ.node
	}
	if attr.SigAll {
		init.sqSigAll = 1
	}
	q, errno := call(lib.createQP, pd.pd, uintptr(unsafe.Pointer(&init)))
	if q == 0 {
		return nil, nullErr(fmt.Sprintf("creating a %v QP", attr.Type), errno)
	}
	qp := &QP{pd: pd, qp: at[cQP](q), Type: attr.Type, Cap: QPCap{
		MaxSendWR: int(init.cap.maxSendWR), MaxRecvWR: int(init.cap.maxRecvWR),
		MaxSendSGE: int(init.cap.maxSendSGE), MaxRecvSGE: int(init.cap.maxRecvSGE),
		MaxInlineData: int(init.cap.maxInlineData),
	}}
	c.register(q, qp)
	qp.node = c.addNode(func() error {
		c.unregister(q)
		qpn := qp.QPN()
		var errs []error
		if rc, errno := call(lib.destroyQP, q); rc != 0 {
			errs = append(errs, errnoErr(fmt.Sprintf("destroying QP %#x", qpn), cint(rc), errno))
		}
		for _, a := range []*arena{&qp.sendWRs, &qp.recvWRs} {
			if err := a.free(); err != nil {
				errs = append(errs, &Error{Op: "unmapping a QP's work request buffer", Err: err})
			}
		}
		return errors.Join(errs...)
	}, pd.node, attr.SendCQ.node, attr.RecvCQ.node, srqNode)
	return qp, nil
}

// Close destroys the QP.
func (qp *QP) Close() error { return closeNode(qp.node) }

// QPN is the QP's number.
func (qp *QP) QPN() uint32 { return qp.qp.qpNum }

// AttrMask names the QPAttr fields a Modify sets (ibv_qp_attr_mask).
type AttrMask int

const (
	AttrState            AttrMask = 1 << 0
	AttrCurState         AttrMask = 1 << 1
	AttrEnSQDAsyncNotify AttrMask = 1 << 2
	AttrAccessFlags      AttrMask = 1 << 3
	AttrPKeyIndex        AttrMask = 1 << 4
	AttrPort             AttrMask = 1 << 5
	AttrQKey             AttrMask = 1 << 6
	AttrAV               AttrMask = 1 << 7
	AttrPathMTU          AttrMask = 1 << 8
	AttrTimeout          AttrMask = 1 << 9
	AttrRetryCnt         AttrMask = 1 << 10
	AttrRNRRetry         AttrMask = 1 << 11
	AttrRQPSN            AttrMask = 1 << 12
	AttrMaxQPRDAtomic    AttrMask = 1 << 13
	AttrAltPath          AttrMask = 1 << 14
	AttrMinRNRTimer      AttrMask = 1 << 15
	AttrSQPSN            AttrMask = 1 << 16
	AttrMaxDestRDAtomic  AttrMask = 1 << 17
	AttrPathMigState     AttrMask = 1 << 18
	AttrCap              AttrMask = 1 << 19
	AttrDestQPN          AttrMask = 1 << 20
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

func (a *QPAttr) toC(out *cQPAttr) {
	*out = cQPAttr{
		qpState: uint32(a.State), curQPState: uint32(a.CurState), pathMTU: uint32(a.PathMTU),
		pathMigState: uint32(a.PathMigState), qkey: a.QKey, rqPSN: a.RQPSN, sqPSN: a.SQPSN, destQPNum: a.DestQPN,
		qpAccessFlags: uint32(a.AccessFlags),
		cap: cQPCap{maxSendWR: uint32(a.Cap.MaxSendWR), maxRecvWR: uint32(a.Cap.MaxRecvWR), maxSendSGE: uint32(a.Cap.MaxSendSGE),
			maxRecvSGE: uint32(a.Cap.MaxRecvSGE), maxInlineData: uint32(a.Cap.MaxInlineData)},
		pkeyIndex: a.PKeyIndex, altPKeyIndex: a.AltPKeyIndex, maxRDAtomic: a.MaxRDAtomic, maxDestRDAtomic: a.MaxDestRDAtomic,
		minRNRTimer: a.MinRNRTimer, portNum: a.Port, timeout: a.Timeout, retryCnt: a.RetryCount, rnrRetry: a.RNRRetry,
		altPortNum: a.AltPort, altTimeout: a.AltTimeout,
	}
	a.AH.toC(&out.ahAttr)
	a.AltAH.toC(&out.altAHAttr)
	if a.EnSQDAsyncNotify {
		out.enSQDAsyncNotify = 1
	}
}

func qpAttrFromC(in *cQPAttr) QPAttr {
	return QPAttr{
		State: QPState(in.qpState), CurState: QPState(in.curQPState), PathMTU: MTU(in.pathMTU),
		PathMigState: int(in.pathMigState), QKey: in.qkey, RQPSN: in.rqPSN, SQPSN: in.sqPSN,
		DestQPN: in.destQPNum, AccessFlags: Access(in.qpAccessFlags),
		Cap: QPCap{MaxSendWR: int(in.cap.maxSendWR), MaxRecvWR: int(in.cap.maxRecvWR), MaxSendSGE: int(in.cap.maxSendSGE),
			MaxRecvSGE: int(in.cap.maxRecvSGE), MaxInlineData: int(in.cap.maxInlineData)},
		AH: ahFromC(&in.ahAttr), AltAH: ahFromC(&in.altAHAttr), PKeyIndex: in.pkeyIndex,
		AltPKeyIndex: in.altPKeyIndex, EnSQDAsyncNotify: in.enSQDAsyncNotify != 0, SQDraining: in.sqDraining != 0,
		MaxRDAtomic: in.maxRDAtomic, MaxDestRDAtomic: in.maxDestRDAtomic, MinRNRTimer: in.minRNRTimer,
		Port: in.portNum, Timeout: in.timeout, RetryCount: in.retryCnt, RNRRetry: in.rnrRetry,
		AltPort: in.altPortNum, AltTimeout: in.altTimeout,
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
	var a cQPAttr
	attr.toC(&a)
	if rc, errno := call(lib.modifyQP, addr(qp.qp), uintptr(unsafe.Pointer(&a)), uintptr(mask)); rc != 0 {
		what := fmt.Sprintf("modifying %v QP %#x", qp.Type, qp.QPN())
		if mask&AttrState != 0 {
			what = fmt.Sprintf("moving %v QP %#x to %v", qp.Type, qp.QPN(), attr.State)
		}
		return errnoErr(what, cint(rc), errno)
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
	var a cQPAttr
	var init cQPInitAttr
	mask := uintptr(AttrState | AttrCurState | AttrPKeyIndex | AttrPort | AttrQKey | AttrAV | AttrPathMTU | AttrTimeout |
		AttrRetryCnt | AttrRNRRetry | AttrRQPSN | AttrMaxQPRDAtomic | AttrMinRNRTimer | AttrSQPSN | AttrMaxDestRDAtomic |
		AttrCap | AttrDestQPN | AttrAccessFlags)
	if rc, errno := call(lib.queryQP, addr(qp.qp), uintptr(unsafe.Pointer(&a)), mask, uintptr(unsafe.Pointer(&init))); rc != 0 {
		return QPAttr{}, errnoErr(fmt.Sprintf("querying QP %#x", qp.QPN()), cint(rc), errno)
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
	g := gid
	if rc, errno := call(lib.attachMcast, addr(qp.qp), uintptr(unsafe.Pointer(&g)), uintptr(lid)); rc != 0 {
		return errnoErr("attaching a multicast group", cint(rc), errno)
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
	g := gid
	if rc, errno := call(lib.detachMcast, addr(qp.qp), uintptr(unsafe.Pointer(&g)), uintptr(lid)); rc != 0 {
		return errnoErr("detaching a multicast group", cint(rc), errno)
	}
	return nil
}

// Opcode is a send work request's operation (IBA 11.4.1.1).
type Opcode int

const (
	OpRDMAWrite      Opcode = 0
	OpRDMAWriteImm   Opcode = 1
	OpSend           Opcode = 2
	OpSendWithImm    Opcode = 3
	OpRDMARead       Opcode = 4
	OpAtomicCmpSwap  Opcode = 5
	OpAtomicFetchAdd Opcode = 6
)

// SendFlags modify a send work request.
type SendFlags int

const (
	SendFence     SendFlags = 1 << 0
	SendSignaled  SendFlags = 1 << 1
	SendSolicited SendFlags = 1 << 2
	// SendInline copies the data into the WR: the SGEs' memory need not be
	// registered and may be reused once PostSend returns.
	SendInline SendFlags = 1 << 3
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
	for i, w := range wrs {
		if w.AH != nil {
			if w.AH.node.closed {
				return &Error{Op: "posting a UD send with a closed AH", Err: ErrClosed}
			}
		} else if qp.Type == QPTypeUD {
			return &PostError{Index: i, Err: &Error{Op: "posting a UD send without an AH", Err: syscall.EINVAL}}
		}
	}
	qp.sendMu.Lock()
	defer qp.sendMu.Unlock()
	a := &qp.sendWRs
	cw, badOff, err := layoutWRs[cSendWR](a, len(wrs), func(i int) (uint64, []SGE) { return wrs[i].ID, wrs[i].SGEs },
		"a QP's send work request buffer")
	if err != nil {
		return err
	}
	wrSize := int(unsafe.Sizeof(cSendWR{}))
	bad := arenaSlice[uintptr](a, badOff, 1)
	for i, w := range wrs {
		g := &cw[i]
		g.opcode = uint32(w.Opcode)
		g.sendFlags = uint32(w.Flags)
		binary.BigEndian.PutUint32(g.imm[:], w.Imm)
		switch w.Opcode {
		case OpRDMAWrite, OpRDMAWriteImm, OpRDMARead:
			*g.rdma() = cRDMA{remoteAddr: w.RemoteAddr, rkey: w.RKey}
		case OpAtomicCmpSwap, OpAtomicFetchAdd:
			*g.atomic() = cAtomic{remoteAddr: w.RemoteAddr, compareAdd: w.CompareAdd, swap: w.Swap, rkey: w.RKey}
		default:
			if w.AH != nil {
				*g.ud() = cUD{ah: w.AH.ah, remoteQPN: w.RemoteQPN, remoteQKey: w.RemoteQKey}
			}
		}
	}
	// ibv_post_send, as verbs.h inlines it: qp->context->ops.post_send.
	if rc := cint(fastcall(qp.pd.ctx.postSend, addr(qp.qp), a.at(0), a.at(badOff))); rc != 0 {
		return &PostError{Index: badIndex(bad[0], a.at(0), wrSize, len(wrs)),
			Err: errnoErr(fmt.Sprintf("posting %d sends to QP %#x", len(wrs), qp.QPN()), rc, 0).(*Error)}
	}
	return nil
}

// badIndex turns the provider's bad_wr pointer into an index of the list.
func badIndex(bad, base uintptr, size, n int) int {
	if bad < base || (bad-base)%uintptr(size) != 0 || int((bad-base)/uintptr(size)) >= n {
		return -1
	}
	return int((bad - base) / uintptr(size))
}

// PostRecv posts receive work requests.
func (qp *QP) PostRecv(wrs ...RecvWR) error {
	release, err := qp.node.use("posting receives")
	if err != nil {
		return err
	}
	defer release()
	qp.recvMu.Lock()
	defer qp.recvMu.Unlock()
	// ibv_post_recv, as verbs.h inlines it: qp->context->ops.post_recv.
	return postRecv(qp.pd.ctx.postRecv, addr(qp.qp), &qp.recvWRs, wrs)
}

// postRecv lays wrs out in a and posts them with fn, a provider's
// post_recv or post_srq_recv, to the QP or SRQ h. The caller holds a.
func postRecv(fn, h uintptr, a *arena, wrs []RecvWR) error {
	if len(wrs) == 0 {
		return nil
	}
	_, badOff, err := layoutWRs[cRecvWR](a, len(wrs), func(i int) (uint64, []SGE) { return wrs[i].ID, wrs[i].SGEs },
		"a receive work request buffer")
	if err != nil {
		return err
	}
	bad := arenaSlice[uintptr](a, badOff, 1)
	if rc := cint(fastcall(fn, h, a.at(0), a.at(badOff))); rc != 0 {
		return &PostError{Index: badIndex(bad[0], a.at(0), int(unsafe.Sizeof(cRecvWR{})), len(wrs)),
			Err: errnoErr(fmt.Sprintf("posting %d receives", len(wrs)), rc, 0).(*Error)}
	}
	return nil
}

// wrLink is what a work request list shares, send or receive: its ID, the
// next request and its scatter/gather list.
type wrLink interface {
	link(id uint64, next, sgList uintptr, numSGE int32)
}

func (g *cSendWR) link(id uint64, next, sgList uintptr, numSGE int32) {
	g.wrID, g.next, g.sgList, g.numSGE = id, next, sgList, numSGE
}

func (g *cRecvWR) link(id uint64, next, sgList uintptr, numSGE int32) {
	g.wrID, g.next, g.sgList, g.numSGE = id, next, sgList, numSGE
}

// layoutWRs lays n work requests of type W out in a, as libibverbs takes
// them: the requests linked in order, then every request's SGEs, then the
// slot for the provider's bad_wr pointer, whose offset it returns with the
// requests. wr gives request i's ID and SGEs. The caller holds a.
func layoutWRs[W any, P interface {
	*W
	wrLink
}](a *arena, n int, wr func(i int) (uint64, []SGE), what string) ([]W, int, error) {
	total := 0
	for i := range n {
		_, sges := wr(i)
		total += len(sges)
	}
	var w W
	wrSize, sgeSize := int(unsafe.Sizeof(w)), int(unsafe.Sizeof(cSGE{}))
	sgeOff := n * wrSize
	badOff := sgeOff + total*sgeSize
	if err := a.ensure(badOff + 8); err != nil {
		return nil, 0, &Error{Op: "mapping " + what, Err: err}
	}
	cw := arenaSlice[W](a, 0, n)
	cs := arenaSlice[cSGE](a, sgeOff, total)
	k := 0
	for i := range n {
		id, sges := wr(i)
		var next, sgList uintptr
		if i+1 < n {
			next = a.at((i + 1) * wrSize)
		}
		if len(sges) > 0 {
			sgList = a.at(sgeOff + k*sgeSize)
		}
		P(&cw[i]).link(id, next, sgList, int32(len(sges)))
		for _, s := range sges {
			cs[k] = cSGE{addr: s.Addr, length: s.Length, lkey: s.LKey}
			k++
		}
	}
	return cw, badOff, nil
}
