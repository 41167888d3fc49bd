package nldev

import (
	"context"

	"github.com/rdmakit/rdmakit/iba"
)

// Device is an RDMA device as RDMA_NLDEV_CMD_GET describes it
// (fill_dev_info in the kernel's nldev.c).
type Device struct {
	Index        uint32
	Name         string
	NumPorts     uint32 // RDMA_NLDEV_ATTR_PORT_INDEX in a device message is the port count
	CapFlags     uint64 // IB_DEVICE_* capability bits
	FWVersion    string
	NodeGUID     iba.GUID // host order of the big-endian GUID: the IBA value itself
	SysImageGUID iba.GUID
	NodeType     uint8 // RDMA_NODE_* (1 CA, 2 switch, 3 router, 4 RNIC, ...)
	Protocol     string
	DIM          uint8 // adaptive interrupt moderation: 0 off, 1 on
	Type         DeviceType
	ParentName   string
	NameAssign   NameAssignType
	Fields
}

// UnmarshalBinary decodes the attributes of a device message.
func (d *Device) UnmarshalBinary(b []byte) error { return unmarshalBinary(d, b) }

func (d *Device) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		d.Set(a.Type)
		switch a.Type {
		case AttrDevIndex:
			d.Index = uint32(a.Uint)
		case AttrDevName:
			d.Name = a.Str
		case AttrPortIndex:
			d.NumPorts = uint32(a.Uint)
		case AttrCapFlags:
			d.CapFlags = a.Uint
		case AttrFWVersion:
			d.FWVersion = a.Str
		case AttrNodeGUID:
			d.NodeGUID = iba.GUID(a.Uint)
		case AttrSysImageGUID:
			d.SysImageGUID = iba.GUID(a.Uint)
		case AttrDevNodeType:
			d.NodeType = uint8(a.Uint)
		case AttrDevProtocol:
			d.Protocol = a.Str
		case AttrDevDIM:
			d.DIM = uint8(a.Uint)
		case AttrDevType:
			d.Type = DeviceType(a.Uint)
		case AttrParentName:
			d.ParentName = a.Str
		case AttrNameAssignType:
			d.NameAssign = NameAssignType(a.Uint)
		default:
			d.keep(a)
		}
	}
	return need("device", &d.Fields, AttrDevIndex, AttrDevName)
}

// MarshalBinary encodes d in the kernel's layout.
func (d *Device) MarshalBinary() ([]byte, error) { return MarshalAttributes(d.attributes()) }

func (d *Device) attributes() []Attribute {
	e := encoder{f: &d.Fields}
	e.u32(AttrDevIndex, d.Index)
	e.str(AttrDevName, d.Name)
	e.u32(AttrPortIndex, d.NumPorts)
	e.u64(AttrCapFlags, d.CapFlags)
	e.str(AttrFWVersion, d.FWVersion)
	e.u64(AttrNodeGUID, uint64(d.NodeGUID))
	e.u64(AttrSysImageGUID, uint64(d.SysImageGUID))
	e.u8(AttrDevNodeType, d.NodeType)
	e.str(AttrDevProtocol, d.Protocol)
	e.u8(AttrDevDIM, d.DIM)
	e.u8(AttrDevType, uint8(d.Type))
	e.str(AttrParentName, d.ParentName)
	e.u8(AttrNameAssignType, uint8(d.NameAssign))
	return e.done()
}

// DevService lists and configures RDMA devices.
type DevService struct{ c *Conn }

// List returns every RDMA device in the caller's network namespace.
func (s *DevService) List(ctx context.Context) ([]Device, error) {
	msgs, err := s.c.execute(ctx, CmdGet, dump)
	if err != nil {
		return nil, err
	}
	out := make([]Device, len(msgs))
	for i, m := range msgs {
		if err := out[i].unmarshal(m); err != nil {
			return nil, errDecode(CmdGet, err)
		}
	}
	return out, nil
}

// Get returns the device with the given index.
func (s *DevService) Get(ctx context.Context, index uint32) (*Device, error) {
	m, err := s.c.one(ctx, CmdGet, U32(AttrDevIndex, index))
	if err != nil {
		return nil, err
	}
	var d Device
	if err := d.unmarshal(m); err != nil {
		return nil, errDecode(CmdGet, err)
	}
	return &d, nil
}

// SetName renames a device.
func (s *DevService) SetName(ctx context.Context, index uint32, name string) error {
	_, err := s.c.execute(ctx, CmdSet, ack, U32(AttrDevIndex, index), String(AttrDevName, name))
	return err
}

// SetNetNS moves a device into the network namespace open as fd (the
// system must be in exclusive netns mode).
func (s *DevService) SetNetNS(ctx context.Context, index uint32, fd uint32) error {
	_, err := s.c.execute(ctx, CmdSet, ack, U32(AttrDevIndex, index), U32(AttrNetNSFD, fd))
	return err
}

// SetAdaptiveModeration turns adaptive interrupt moderation (DIM) on or off.
func (s *DevService) SetAdaptiveModeration(ctx context.Context, index uint32, on bool) error {
	var v uint8
	if on {
		v = 1
	}
	_, err := s.c.execute(ctx, CmdSet, ack, U32(AttrDevIndex, index), U8(AttrDevDIM, v))
	return err
}

// Add creates a sub-device of parent (RDMA_NLDEV_CMD_NEWDEV; today only
// DeviceTypeSMI, Linux 6.15 and later).
func (s *DevService) Add(ctx context.Context, parent uint32, name string, typ DeviceType) error {
	_, err := s.c.execute(ctx, CmdNewdev, ack, U32(AttrDevIndex, parent), String(AttrDevName, name), U8(AttrDevType, uint8(typ)))
	return err
}

// Delete removes a sub-device made by Add.
func (s *DevService) Delete(ctx context.Context, index uint32) error {
	_, err := s.c.execute(ctx, CmdDeldev, ack, U32(AttrDevIndex, index))
	return err
}
