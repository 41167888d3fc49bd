package umad

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// HeaderSize is the size of struct ib_user_mad_hdr in the P_Key index layout
// (rdma/ib_user_mad.h, ABI 5 after IB_USER_MAD_ENABLE_PKEY); every read and
// write on a umad file starts with it.
const HeaderSize = 64

// minSendMAD is IB_MGMT_RMPP_HDR: the kernel refuses shorter writes (the MAD
// header and the RMPP header are read before anything else).
const minSendMAD = 36

// Header is struct ib_user_mad_hdr. The agent ID, status, timeout,
// retries, length and P_Key index are in host byte order; the address
// fields are big-endian, as the kernel copies them into the work request.
type Header struct {
	AgentID uint32
	// Status is 0, or on a read ETIMEDOUT for a request that got no
	// reply (the MAD is then the request's header).
	Status uint32
	// TimeoutMS is how long the kernel waits for a reply to a request;
	// 0 sends without tracking.
	TimeoutMS uint32
	Retries   uint32
	// Length on a read is HeaderSize plus the whole MAD, also when the
	// read failed with ENOSPC because the buffer was short.
	Length       uint32
	QPN          uint32
	QKey         uint32
	LID          uint16
	SL           uint8
	PathBits     uint8
	GRHPresent   bool
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	GID          iba.GID
	FlowLabel    uint32
	PKeyIndex    uint16
}

// MarshalTo writes h into the first HeaderSize bytes of b, which must be
// that long.
func (h *Header) MarshalTo(b []byte) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("umad header: buffer of %d bytes, need %d", len(b), HeaderSize)
	}
	ne, be := binary.NativeEndian, binary.BigEndian
	ne.PutUint32(b[0:], h.AgentID)
	ne.PutUint32(b[4:], h.Status)
	ne.PutUint32(b[8:], h.TimeoutMS)
	ne.PutUint32(b[12:], h.Retries)
	ne.PutUint32(b[16:], h.Length)
	be.PutUint32(b[20:], h.QPN)
	be.PutUint32(b[24:], h.QKey)
	be.PutUint16(b[28:], h.LID)
	b[30] = h.SL
	b[31] = h.PathBits
	b[32] = 0
	if h.GRHPresent {
		b[32] = 1
	}
	b[33] = h.GIDIndex
	b[34] = h.HopLimit
	b[35] = h.TrafficClass
	copy(b[36:52], h.GID[:])
	be.PutUint32(b[52:], h.FlowLabel)
	ne.PutUint16(b[56:], h.PKeyIndex)
	clear(b[58:64])
	return nil
}

// UnmarshalHeader decodes the first HeaderSize bytes of b.
func UnmarshalHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("umad header: %d bytes, need %d", len(b), HeaderSize)
	}
	ne, be := binary.NativeEndian, binary.BigEndian
	h := Header{
		AgentID:      ne.Uint32(b[0:]),
		Status:       ne.Uint32(b[4:]),
		TimeoutMS:    ne.Uint32(b[8:]),
		Retries:      ne.Uint32(b[12:]),
		Length:       ne.Uint32(b[16:]),
		QPN:          be.Uint32(b[20:]),
		QKey:         be.Uint32(b[24:]),
		LID:          be.Uint16(b[28:]),
		SL:           b[30],
		PathBits:     b[31],
		GRHPresent:   b[32] != 0,
		GIDIndex:     b[33],
		HopLimit:     b[34],
		TrafficClass: b[35],
		FlowLabel:    be.Uint32(b[52:]),
		PKeyIndex:    ne.Uint16(b[56:]),
	}
	copy(h.GID[:], b[36:52])
	return h, nil
}

// timeoutMS converts a reply timeout to the kernel's milliseconds, rounding
// up so that a short non-zero timeout still tracks the request.
func timeoutMS(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 0xffffffff {
		return 0xffffffff
	}
	return uint32(ms)
}

// sendHeader builds the header for p; user-space retries are the mad
// Client's, so the kernel's are 0.
func sendHeader(p *mad.Packet) Header {
	a := p.Addr
	h := Header{
		AgentID:   uint32(p.Agent),
		TimeoutMS: timeoutMS(p.Timeout),
		Length:    uint32(HeaderSize + len(p.MAD)),
		QPN:       a.QPN,
		QKey:      a.QKey,
		LID:       a.LID,
		SL:        a.SL,
		PathBits:  a.PathBits,
		PKeyIndex: a.PKeyIndex,
	}
	// QP1 only accepts the well-known GSI Q_Key (IBA 13.5.3.1); callers
	// that leave it out mean that one.
	if h.QPN == mad.QP1 && h.QKey == 0 {
		h.QKey = mad.QP1QKey
	}
	if g := a.GRH; g != nil {
		h.GRHPresent = true
		h.GIDIndex = g.SGIDIndex
		h.HopLimit = g.HopLimit
		h.TrafficClass = g.TrafficClass
		h.GID = g.GID
		h.FlowLabel = g.FlowLabel & 0xfffff
	}
	return h
}

// addr is the source address of a received MAD. For a GRH, the kernel puts
// the GID index to reply from in GIDIndex (ib_init_ah_attr_from_wc), so the
// Addr can be used as is to send the reply.
func (h *Header) addr() mad.Addr {
	a := mad.Addr{
		LID:       h.LID,
		SL:        h.SL,
		PathBits:  h.PathBits,
		QPN:       h.QPN & 0xffffff,
		QKey:      h.QKey,
		PKeyIndex: h.PKeyIndex,
	}
	if h.GRHPresent {
		a.GRH = &mad.GRH{
			SGIDIndex:    h.GIDIndex,
			HopLimit:     h.HopLimit,
			TrafficClass: h.TrafficClass,
			FlowLabel:    h.FlowLabel & 0xfffff,
			GID:          h.GID,
		}
	}
	return a
}
