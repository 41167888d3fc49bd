package mad

import (
	"context"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// Size is the length of a MAD on the wire (IBA 13.4.1); RMPP transfers are
// made of several such MADs, and a transport with kernel RMPP may hand over a
// reassembled, longer one.
const Size = 256

// GRH is the part of a Global Route Header (IBA 8.3) a management agent sees.
type GRH struct {
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
	// GID is the remote GID: the destination for a send, the source for a
	// receive.
	GID iba.GID
}

// Addr is the addressing of one MAD: the LRH, BTH and DETH fields that a
// management agent sets on a send and learns on a receive (IBA 13.5.4; the
// kernel's struct ib_mad_addr). For a send it names the destination, for a
// receive the source.
type Addr struct {
	LID       uint16 // DLID of a send, SLID of a receive; 0xffff (permissive) for DR SMPs
	SL        uint8
	PathBits  uint8 // the low bits of our own LID, with LMC > 0
	QPN       uint32
	QKey      uint32
	PKeyIndex uint16
	GRH       *GRH
}

// Well-known queue pairs and the GSI Q_Key (IBA 13.4.6.1, 13.5.3.1).
const (
	QP0     = 0
	QP1     = 1
	QP1QKey = 0x80010000
)

// AgentSpec asks a transport to deliver MADs of one management class: replies
// to the requests this agent sends (a client agent), and when Methods is
// non-empty, also unsolicited requests with those methods (a server agent).
type AgentSpec struct {
	Class        uint8
	ClassVersion uint8
	// RMPPVersion is 1 to have a transport with kernel RMPP reassemble and
	// segment for this agent; 0 for no RMPP.
	RMPPVersion uint8
	Methods     []uint8
	// OUI selects vendor-OUI classes (0x30-0x4f), 0 otherwise.
	OUI uint32
}

// Packet is one MAD with its addressing.
type Packet struct {
	// Agent is the agent that sends it or receives it, as Register returned.
	Agent int
	Addr  Addr
	MAD   []byte
	// Timeout is how long the sender waits for a reply to a request. A
	// transport that tracks requests (the kernel's umad) needs it to deliver
	// the reply at all; 0 marks a MAD that expects no reply.
	Timeout time.Duration
	// Err, on a received packet, reports that the transport gave up on a
	// request it sent earlier (kernel umad reports a timed-out send this
	// way); MAD then holds the request.
	Err error
}

// LocalPort describes the end port a transport is attached to.
type LocalPort struct {
	// Name identifies the port for messages: "mlx5_0/1", "ibsim:Hca1/1", ...
	Name      string
	NodeGUID  iba.GUID
	PortGUID  iba.GUID
	PortNum   uint8
	GIDPrefix uint64
	LID       uint16
	LMC       uint8
	SMLID     uint16
	SMSL      uint8
}

// Transport moves raw MADs with their addressing and nothing else: it does
// not match replies to requests, retry or decode. Implementations: package
// umad (the kernel), package ibsim (ibsim's wire protocol) and package sim
// (an in-process fabric).
//
// Send and Recv may be called from different goroutines; a Client runs one
// goroutine in Recv and any number in Send.
type Transport interface {
	// Register opens an agent and returns its number for Packet.Agent.
	Register(spec AgentSpec) (int, error)
	// Send hands one MAD to the fabric. It keeps neither p nor p.MAD
	// once it returns: a client sends the same Packet for every try, and
	// may send the next while an earlier Send is still returning.
	Send(ctx context.Context, p *Packet) error
	// Recv waits for the next MAD for any registered agent. It returns
	// ctx.Err() when ctx ends and ErrClosed after Close.
	Recv(ctx context.Context) (*Packet, error)
	// LocalPort reads the current attributes of the attached end port.
	LocalPort(ctx context.Context) (LocalPort, error)
	// KernelRMPP reports whether the transport segments and reassembles RMPP
	// transfers itself (umad does, ibsim and sim do not).
	KernelRMPP() bool
	Close() error
}

// Recycler is a Transport that reuses the memory of the packets Recv
// returns: a client hands back through Recycle each one that it, and
// whoever it gave the packet to, are done with. Recycling saves a sweep an
// allocation per MAD; a client need not hand back every packet.
type Recycler interface {
	Recycle(p *Packet)
}
