package verbs

import "unsafe"

// The structures of rdma-core's <infiniband/verbs.h> that this package
// reads or hands to libibverbs, declared as Go structs with the layout the
// C compiler gives them on a 64-bit Linux (LP64: amd64, arm64). Only the
// fields used are named; the rest is padding (`_`). abi_test.go checks every
// offset and size against a table of facts taken from verbs.h, and the
// guest tests in the VM check them against the real library.
//
// These are libibverbs' ABI, stable since rdma-core's first release: the
// library keeps old layouts behind versioned symbols when one changes
// (ibv_query_port below), so a program built against one rdma-core runs
// with any later one.

// cDevice is the head of struct ibv_device.
type cDevice struct {
	_             [2]uintptr // _ops
	nodeType      int32
	transportType int32
}

// cContextOps is struct ibv_context_ops: 32 function pointers, of which
// the data path verbs that verbs.h inlines are called from here.
type cContextOps struct {
	_           [11]uintptr
	pollCQ      uintptr // int (*)(struct ibv_cq *, int, struct ibv_wc *)
	reqNotifyCQ uintptr // int (*)(struct ibv_cq *, int)
	_           [7]uintptr
	postSRQRecv uintptr // int (*)(struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **)
	_           [4]uintptr
	postSend    uintptr // int (*)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)
	postRecv    uintptr // int (*)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **)
	_           [5]uintptr
}

// cContext is the head of struct ibv_context (a pthread mutex, whose size
// differs between architectures, follows).
type cContext struct {
	device         uintptr
	ops            cContextOps
	cmdFD          int32
	asyncFD        int32
	numCompVectors int32
}

// cQP is the head of struct ibv_qp.
type cQP struct {
	context uintptr
	_       [5]uintptr // qp_context, pd, send_cq, recv_cq, srq
	_       uint32     // handle
	qpNum   uint32
	state   uint32
	qpType  uint32
}

// cCQ is the head of struct ibv_cq.
type cCQ struct {
	context uintptr
	channel uintptr
	_       uintptr // cq_context
	_       uint32  // handle
	cqe     int32
}

// cCompChannel is struct ibv_comp_channel.
type cCompChannel struct {
	context uintptr
	fd      int32
	_       int32 // refcnt
}

// cMR is struct ibv_mr.
type cMR struct {
	context uintptr
	pd      uintptr
	addr    uintptr
	length  uint64 // size_t
	handle  uint32
	lkey    uint32
	rkey    uint32
	_       uint32
}

// cWC is struct ibv_wc (IBA 11.4.2.1 Poll for Completion).
type cWC struct {
	wrID         uint64
	status       uint32
	opcode       uint32
	vendorErr    uint32
	byteLen      uint32
	imm          [4]byte // __be32 imm_data
	qpNum        uint32
	srcQP        uint32
	wcFlags      uint32
	pkeyIndex    uint16
	slid         uint16
	sl           uint8
	dlidPathBits uint8
	_            [2]byte
}

// cSGE is struct ibv_sge.
type cSGE struct {
	addr   uint64
	length uint32
	lkey   uint32
}

// cSendWR is struct ibv_send_wr (IBA 11.4.1.1 Post Send Request). Its
// union wr holds one of cRDMA, cAtomic and cUD, by opcode.
type cSendWR struct {
	wrID      uint64
	next      uintptr
	sgList    uintptr
	numSGE    int32
	opcode    uint32
	sendFlags uint32
	imm       [4]byte   // __be32 imm_data
	wr        [4]uint64 // union wr
	_         [56]byte  // qp_type.xrc and the bind_mw/tso union
}

// cRDMA is wr.rdma of struct ibv_send_wr.
type cRDMA struct {
	remoteAddr uint64
	rkey       uint32
	_          uint32
}

// cAtomic is wr.atomic of struct ibv_send_wr.
type cAtomic struct {
	remoteAddr uint64
	compareAdd uint64
	swap       uint64
	rkey       uint32
	_          uint32
}

// cUD is wr.ud of struct ibv_send_wr.
type cUD struct {
	ah         uintptr
	remoteQPN  uint32
	remoteQKey uint32
}

func (w *cSendWR) rdma() *cRDMA     { return (*cRDMA)(unsafe.Pointer(&w.wr)) }
func (w *cSendWR) atomic() *cAtomic { return (*cAtomic)(unsafe.Pointer(&w.wr)) }
func (w *cSendWR) ud() *cUD         { return (*cUD)(unsafe.Pointer(&w.wr)) }

// cRecvWR is struct ibv_recv_wr (IBA 11.4.1.2 Post Receive Request).
type cRecvWR struct {
	wrID   uint64
	next   uintptr
	sgList uintptr
	numSGE int32
	_      int32
}

// cGlobalRoute is struct ibv_global_route.
type cGlobalRoute struct {
	dgid         [16]byte
	flowLabel    uint32
	sgidIndex    uint8
	hopLimit     uint8
	trafficClass uint8
	_            uint8
}

// cAHAttr is struct ibv_ah_attr (IBA 11.2.2.1 address vector). In C it is
// 8-byte aligned (union ibv_gid holds two __be64); cQPAttr pads for that.
type cAHAttr struct {
	grh         cGlobalRoute
	dlid        uint16
	sl          uint8
	srcPathBits uint8
	staticRate  uint8
	isGlobal    uint8
	portNum     uint8
	_           uint8
}

// cQPCap is struct ibv_qp_cap.
type cQPCap struct {
	maxSendWR     uint32
	maxRecvWR     uint32
	maxSendSGE    uint32
	maxRecvSGE    uint32
	maxInlineData uint32
}

// cQPInitAttr is struct ibv_qp_init_attr.
type cQPInitAttr struct {
	qpContext uintptr
	sendCQ    uintptr
	recvCQ    uintptr
	srq       uintptr
	cap       cQPCap
	qpType    uint32
	sqSigAll  int32
	_         uint32
}

// cQPAttr is struct ibv_qp_attr (IBA 11.2.5.2 Modify Queue Pair).
type cQPAttr struct {
	qpState          uint32
	curQPState       uint32
	pathMTU          uint32
	pathMigState     uint32
	qkey             uint32
	rqPSN            uint32
	sqPSN            uint32
	destQPNum        uint32
	qpAccessFlags    uint32
	cap              cQPCap
	ahAttr           cAHAttr
	altAHAttr        cAHAttr
	pkeyIndex        uint16
	altPKeyIndex     uint16
	enSQDAsyncNotify uint8
	sqDraining       uint8
	maxRDAtomic      uint8
	maxDestRDAtomic  uint8
	minRNRTimer      uint8
	portNum          uint8
	timeout          uint8
	retryCnt         uint8
	rnrRetry         uint8
	altPortNum       uint8
	altTimeout       uint8
	_                uint8
	rateLimit        uint32
	_                uint32 // the C struct's 8-byte alignment
}

// cPortAttr is struct _compat_ibv_port_attr, the prefix of struct
// ibv_port_attr that the exported ibv_query_port fills (IBA 14.2.5.6
// PortInfo). verbs.h makes ibv_query_port an inline that calls the
// context's query_port extension with sizeof(struct ibv_port_attr), a size
// that grew between rdma-core releases; the exported symbol
// (ibv_query_port@@IBVERBS_1.1) takes this fixed prefix instead and copies
// exactly this much. The room after it is spare, never written.
type cPortAttr struct {
	state         uint32
	maxMTU        uint32
	activeMTU     uint32
	gidTblLen     int32
	portCapFlags  uint32
	maxMsgSz      uint32
	badPKeyCntr   uint32
	qkeyViolCntr  uint32
	pkeyTblLen    uint16
	lid           uint16
	smLID         uint16
	lmc           uint8
	maxVLNum      uint8
	smSL          uint8
	subnetTimeout uint8
	initTypeReply uint8
	activeWidth   uint8
	activeSpeed   uint8
	physState     uint8
	linkLayer     uint8
	flags         uint8
	_             [16]byte
}

// portAttrCompatSize is sizeof(struct _compat_ibv_port_attr).
const portAttrCompatSize = 48

// cDeviceAttr is struct ibv_device_attr (IBA 11.2.1.2 Query HCA).
type cDeviceAttr struct {
	fwVer           [64]byte
	nodeGUID        [8]byte // __be64
	sysImageGUID    [8]byte // __be64
	maxMRSize       uint64
	pageSizeCap     uint64
	vendorID        uint32
	vendorPartID    uint32
	hwVer           uint32
	maxQP           int32
	maxQPWR         int32
	deviceCapFlags  uint32
	maxSGE          int32
	_               int32 // max_sge_rd
	maxCQ           int32
	maxCQE          int32
	maxMR           int32
	maxPD           int32
	maxQPRDAtom     int32
	_               [2]int32 // max_ee_rd_atom, max_res_rd_atom
	maxQPInitRDAtom int32
	_               int32 // max_ee_init_rd_atom
	atomicCap       uint32
	_               [8]int32 // max_ee ... max_total_mcast_qp_attach
	maxAH           int32
	_               [2]int32 // max_fmr, max_map_per_fmr
	maxSRQ          int32
	maxSRQWR        int32
	maxSRQSGE       int32
	maxPKeys        uint16
	localCAAckDelay uint8
	physPortCnt     uint8
}

// cAsyncEvent is struct ibv_async_event: the element union (a CQ, QP, SRQ
// or WQ pointer, or the port number) and the event type.
type cAsyncEvent struct {
	element   uintptr
	eventType uint32
	_         uint32
}

// cSRQAttr is struct ibv_srq_attr.
type cSRQAttr struct {
	maxWR    uint32
	maxSGE   uint32
	srqLimit uint32
}

// cSRQInitAttr is struct ibv_srq_init_attr.
type cSRQInitAttr struct {
	srqContext uintptr
	attr       cSRQAttr
	_          uint32
}

// cGIDEntry is struct ibv_gid_entry (_ibv_query_gid_ex, rdma-core 32 and
// later).
type cGIDEntry struct {
	gid         [16]byte
	gidIndex    uint32
	portNum     uint32
	gidType     uint32
	ndevIfindex uint32
}

// The GID types of struct ibv_gid_entry (enum ibv_gid_type).
const (
	gidTypeIB     = 0
	gidTypeRoCEv1 = 1
	gidTypeRoCEv2 = 2
)

// grhSize is sizeof(struct ibv_grh): the room a UD receive keeps before the
// payload (IBA 11.4.1.2).
const grhSize = 40

// The transport types of struct ibv_device (enum ibv_transport_type).
const (
	transportIB          = 0
	transportIWARP       = 1
	transportUSNIC       = 2
	transportUSNICUDP    = 3
	transportUnspecified = 4
)
