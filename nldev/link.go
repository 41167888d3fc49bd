package nldev

import (
	"context"

	"github.com/rdmakit/rdmakit/iba"
)

// Port is one port of an RDMA device as RDMA_NLDEV_CMD_PORT_GET describes
// it (fill_port_info in the kernel's nldev.c).
type Port struct {
	DevIndex     uint32
	DevName      string
	Port         uint32
	CapFlags     uint64 // IB_PORT_* capability mask bits (PortInfo:CapabilityMask, IBA 14.2.5.6)
	SubnetPrefix iba.GUID
	LID          uint32
	SMLID        uint32
	LMC          uint8
	State        uint8 // IB_PORT_* (PortInfo:PortState)
	PhysState    uint8 // PortInfo:PortPhysicalState
	NdevIndex    uint32
	NdevName     string
	Fields
}

// UnmarshalBinary decodes the attributes of a port message.
func (p *Port) UnmarshalBinary(b []byte) error { return unmarshalBinary(p, b) }

func (p *Port) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		p.Set(a.Type)
		switch a.Type {
		case AttrDevIndex:
			p.DevIndex = uint32(a.Uint)
		case AttrDevName:
			p.DevName = a.Str
		case AttrPortIndex:
			p.Port = uint32(a.Uint)
		case AttrCapFlags:
			p.CapFlags = a.Uint
		case AttrSubnetPrefix:
			p.SubnetPrefix = iba.GUID(a.Uint)
		case AttrLID:
			p.LID = uint32(a.Uint)
		case AttrSMLID:
			p.SMLID = uint32(a.Uint)
		case AttrLMC:
			p.LMC = uint8(a.Uint)
		case AttrPortState:
			p.State = uint8(a.Uint)
		case AttrPortPhysState:
			p.PhysState = uint8(a.Uint)
		case AttrNdevIndex:
			p.NdevIndex = uint32(a.Uint)
		case AttrNdevName:
			p.NdevName = a.Str
		default:
			p.keep(a)
		}
	}
	return need("port", &p.Fields, AttrDevIndex, AttrDevName, AttrPortIndex)
}

// MarshalBinary encodes p in the kernel's layout.
func (p *Port) MarshalBinary() ([]byte, error) {
	e := encoder{f: &p.Fields}
	e.u32(AttrDevIndex, p.DevIndex)
	e.str(AttrDevName, p.DevName)
	e.u32(AttrPortIndex, p.Port)
	e.u64(AttrCapFlags, p.CapFlags)
	e.u64(AttrSubnetPrefix, uint64(p.SubnetPrefix))
	e.u32(AttrLID, p.LID)
	e.u32(AttrSMLID, p.SMLID)
	e.u8(AttrLMC, p.LMC)
	e.u8(AttrPortState, p.State)
	e.u8(AttrPortPhysState, p.PhysState)
	e.u32(AttrNdevIndex, p.NdevIndex)
	e.str(AttrNdevName, p.NdevName)
	return MarshalAttributes(e.done())
}

// LinkService shows ports and adds or removes software RDMA links (rxe, siw).
type LinkService struct{ c *Conn }

// List returns every port of every device. The kernel's PORT_GET dump
// requires a device index (nldev_port_get_dumpit returns EINVAL without
// one), so this lists the devices first and dumps the ports of each, as
// rdma(8) does.
func (s *LinkService) List(ctx context.Context) ([]Port, error) {
	devs, err := s.c.Dev.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Port
	for _, d := range devs {
		ps, err := s.ListDevice(ctx, d.Index)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// ListDevice returns the ports of one device.
func (s *LinkService) ListDevice(ctx context.Context, dev uint32) ([]Port, error) {
	return s.list(ctx, U32(AttrDevIndex, dev))
}

func (s *LinkService) list(ctx context.Context, attrs ...Attribute) ([]Port, error) {
	msgs, err := s.c.execute(ctx, CmdPortGet, dump, attrs...)
	if err != nil {
		return nil, err
	}
	out := make([]Port, len(msgs))
	for i, m := range msgs {
		if err := out[i].unmarshal(m); err != nil {
			return nil, errDecode(CmdPortGet, err)
		}
	}
	return out, nil
}

// Get returns one port.
func (s *LinkService) Get(ctx context.Context, dev, port uint32) (*Port, error) {
	m, err := s.c.one(ctx, CmdPortGet, U32(AttrDevIndex, dev), U32(AttrPortIndex, port))
	if err != nil {
		return nil, err
	}
	var p Port
	if err := p.unmarshal(m); err != nil {
		return nil, errDecode(CmdPortGet, err)
	}
	return &p, nil
}

// Add creates a software RDMA device named name of type typ ("rxe", "siw")
// on top of the network device netdev.
func (s *LinkService) Add(ctx context.Context, name, typ, netdev string) error {
	_, err := s.c.execute(ctx, CmdNewlink, ack, String(AttrDevName, name), String(AttrLinkType, typ), String(AttrNdevName, netdev))
	return err
}

// Delete removes a software RDMA device made by Add.
func (s *LinkService) Delete(ctx context.Context, dev uint32) error {
	_, err := s.c.execute(ctx, CmdDellink, ack, U32(AttrDevIndex, dev))
	return err
}
