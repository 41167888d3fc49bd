package nldev

import (
	"context"
	"encoding/binary"
	"net/netip"

	"golang.org/x/sys/unix"
)

// CMID is an RDMA connection manager identifier (fill_res_cm_id_entry in
// the kernel's nldev.c).
type CMID struct {
	Port    uint32
	LQPN    uint32
	Type    uint8  // QP type, IB_QPT_*
	State   uint8  // RDMA_CM_* state
	PS      uint32 // port space, RDMA_PS_*
	SrcAddr []byte // struct __kernel_sockaddr_storage as sent
	DstAddr []byte
	CMIDN   uint32
	Entry
}

// Src decodes SrcAddr; ok is false for a family other than AF_INET/AF_INET6.
func (c *CMID) Src() (netip.AddrPort, bool) { return sockaddr(c.SrcAddr) }

// Dst decodes DstAddr.
func (c *CMID) Dst() (netip.AddrPort, bool) { return sockaddr(c.DstAddr) }

// sockaddr reads a sockaddr_in or sockaddr_in6: family in host order,
// port and address in network order.
func sockaddr(b []byte) (netip.AddrPort, bool) {
	if len(b) < 2 {
		return netip.AddrPort{}, false
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) < 8 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), true
	case unix.AF_INET6:
		if len(b) < 24 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:4])), true
	}
	return netip.AddrPort{}, false
}

// SockaddrStorage encodes ap as the kernel's 128-byte sockaddr_storage.
func SockaddrStorage(ap netip.AddrPort) []byte {
	b := make([]byte, 128)
	binary.BigEndian.PutUint16(b[2:4], ap.Port())
	if ap.Addr().Is4() {
		binary.NativeEndian.PutUint16(b, unix.AF_INET)
		a := ap.Addr().As4()
		copy(b[4:8], a[:])
	} else {
		binary.NativeEndian.PutUint16(b, unix.AF_INET6)
		a := ap.Addr().As16()
		copy(b[8:24], a[:])
	}
	return b
}

func (c *CMID) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		c.Set(a.Type)
		if c.common(a) {
			continue
		}
		switch a.Type {
		case AttrPortIndex:
			c.Port = uint32(a.Uint)
		case AttrResLQPN:
			c.LQPN = uint32(a.Uint)
		case AttrResType:
			c.Type = uint8(a.Uint)
		case AttrResState:
			c.State = uint8(a.Uint)
		case AttrResPS:
			c.PS = uint32(a.Uint)
		case AttrResSrcAddr:
			c.SrcAddr = a.Data
		case AttrResDstAddr:
			c.DstAddr = a.Data
		case AttrResCMIDN:
			c.CMIDN = uint32(a.Uint)
		default:
			c.keep(a)
		}
	}
	return need("CM ID", &c.Fields, AttrResState, AttrResPS)
}

// UnmarshalBinary decodes the attributes of one CM ID entry.
func (c *CMID) UnmarshalBinary(b []byte) error { return unmarshalBinary(c, b) }

// MarshalBinary encodes c as the attributes of one CM ID entry.
func (c *CMID) MarshalBinary() ([]byte, error) {
	e := encoder{f: &c.Fields}
	e.u32(AttrPortIndex, c.Port)
	e.u32(AttrResLQPN, c.LQPN)
	e.u8(AttrResType, c.Type)
	e.u8(AttrResState, c.State)
	e.u32(AttrResPS, c.PS)
	e.bytes(AttrResSrcAddr, c.SrcAddr)
	e.bytes(AttrResDstAddr, c.DstAddr)
	e.u32(AttrResCMIDN, c.CMIDN)
	c.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// CMIDs dumps the CM IDs of q.Dev.
func (s *ResService) CMIDs(ctx context.Context, q Query) ([]CMID, error) {
	return dumpEntries[CMID](ctx, s.c, CmdResCMIDGet, AttrResCMID, AttrResCMIDEntry, q.attrs())
}

// CMID returns one CM ID by number.
func (s *ResService) CMID(ctx context.Context, q Query, id uint32) (*CMID, error) {
	return getEntry[CMID](ctx, s.c, CmdResCMIDGet, append(q.attrs(), U32(AttrResCMIDN, id)))
}
