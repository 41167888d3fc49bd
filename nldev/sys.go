package nldev

import "context"

// SysInfo holds the system-wide RDMA settings (RDMA_NLDEV_CMD_SYS_GET).
type SysInfo struct {
	NetNSMode      uint8 // 1 shared, 0 exclusive
	CopyOnFork     uint8
	PrivilegedQKey uint8 // Linux 6.7+
	MonitorMode    uint8 // Linux 6.10+: the kernel sends monitor events
	Fields
}

// UnmarshalBinary decodes the attributes of a SYS_GET reply.
func (s *SysInfo) UnmarshalBinary(b []byte) error { return unmarshalBinary(s, b) }

func (s *SysInfo) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		s.Set(a.Type)
		switch a.Type {
		case AttrSysNetNSMode:
			s.NetNSMode = uint8(a.Uint)
		case AttrSysCopyOnFork:
			s.CopyOnFork = uint8(a.Uint)
		case AttrSysPrivilegedQKeyMode:
			s.PrivilegedQKey = uint8(a.Uint)
		case AttrSysMonitorMode:
			s.MonitorMode = uint8(a.Uint)
		default:
			s.keep(a)
		}
	}
	return nil
}

// MarshalBinary encodes s in the kernel's layout.
func (s *SysInfo) MarshalBinary() ([]byte, error) {
	e := encoder{f: &s.Fields}
	e.u8(AttrSysNetNSMode, s.NetNSMode)
	e.u8(AttrSysCopyOnFork, s.CopyOnFork)
	e.u8(AttrSysPrivilegedQKeyMode, s.PrivilegedQKey)
	e.u8(AttrSysMonitorMode, s.MonitorMode)
	return MarshalAttributes(e.done())
}

// SysService reads and sets the system-wide settings.
type SysService struct{ c *Conn }

// Get returns the system settings.
func (s *SysService) Get(ctx context.Context) (*SysInfo, error) {
	m, err := s.c.one(ctx, CmdSysGet)
	if err != nil {
		return nil, err
	}
	var si SysInfo
	if err := si.unmarshal(m); err != nil {
		return nil, errDecode(CmdSysGet, err)
	}
	return &si, nil
}

// SetNetNSMode chooses whether RDMA devices are shared by all network
// namespaces (true) or belong to one (false).
func (s *SysService) SetNetNSMode(ctx context.Context, shared bool) error {
	_, err := s.c.execute(ctx, CmdSysSet, ack, U8(AttrSysNetNSMode, b2u8(shared)))
	return err
}

// SetPrivilegedQKey lets unprivileged processes use privileged Q_Keys
// (Linux 6.7+; older kernels ignore the attribute).
func (s *SysService) SetPrivilegedQKey(ctx context.Context, on bool) error {
	_, err := s.c.execute(ctx, CmdSysSet, ack, U8(AttrSysPrivilegedQKeyMode, b2u8(on)))
	return err
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
