package nldev

import "context"

// HWCounter is one hardware counter (RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY).
type HWCounter struct {
	Name    string
	Value   uint64
	Index   uint32 // in STAT_GET_STATUS replies
	Enabled uint8  // optional counters only (RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC)
	Fields
}

// Optional reports whether the counter is an optional (dynamic) one.
func (h *HWCounter) Optional() bool { return h.Has(AttrStatHWCounterDynamic) }

func decodeHWCounters(attrs []Attribute) ([]HWCounter, error) {
	out := []HWCounter{}
	for _, ent := range attrs {
		if ent.Type != AttrStatHWCounterEntry {
			continue
		}
		var h HWCounter
		for _, f := range ent.Nested {
			h.Set(f.Type)
			switch f.Type {
			case AttrStatHWCounterEntryName:
				h.Name = f.Str
			case AttrStatHWCounterEntryValue:
				h.Value = f.Uint
			case AttrStatHWCounterIndex:
				h.Index = uint32(f.Uint)
			case AttrStatHWCounterDynamic:
				h.Enabled = uint8(f.Uint)
			default:
				h.keep(f)
			}
		}
		if err := need("hardware counter", &h.Fields, AttrStatHWCounterEntryName); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func encodeHWCounters(hw []HWCounter) Attribute {
	var ents []Attribute
	for i := range hw {
		e := encoder{f: &hw[i].Fields}
		e.str(AttrStatHWCounterEntryName, hw[i].Name)
		e.u64(AttrStatHWCounterEntryValue, hw[i].Value)
		e.u32(AttrStatHWCounterIndex, hw[i].Index)
		e.u8(AttrStatHWCounterDynamic, hw[i].Enabled)
		ents = append(ents, Nest(AttrStatHWCounterEntry, e.done()...))
	}
	return Nest(AttrStatHWCounters, ents...)
}

// PortStats is the reply of STAT_GET or STAT_GET_STATUS for one port: its
// counters, or its QP counter mode.
type PortStats struct {
	DevIndex   uint32
	DevName    string
	Port       uint32
	HWCounters []HWCounter
	Mode       CounterMode
	AutoMask   CounterMask
	OpCounters uint8 // RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED
	Fields
}

// UnmarshalBinary decodes the attributes of a port statistics message.
func (p *PortStats) UnmarshalBinary(b []byte) error { return unmarshalBinary(p, b) }

func (p *PortStats) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		p.Set(a.Type)
		switch a.Type {
		case AttrDevIndex:
			p.DevIndex = uint32(a.Uint)
		case AttrDevName:
			p.DevName = a.Str
		case AttrPortIndex:
			p.Port = uint32(a.Uint)
		case AttrStatHWCounters:
			hw, err := decodeHWCounters(a.Nested)
			if err != nil {
				return err
			}
			p.HWCounters = hw
		case AttrStatMode:
			p.Mode = CounterMode(a.Uint)
		case AttrStatAutoModeMask:
			p.AutoMask = CounterMask(a.Uint)
		case AttrStatOpCounterEnabled:
			p.OpCounters = uint8(a.Uint)
		default:
			p.keep(a)
		}
	}
	return need("port statistics", &p.Fields, AttrDevIndex, AttrDevName)
}

// MarshalBinary encodes p in the kernel's layout.
func (p *PortStats) MarshalBinary() ([]byte, error) {
	e := encoder{f: &p.Fields}
	e.u32(AttrDevIndex, p.DevIndex)
	e.str(AttrDevName, p.DevName)
	e.u32(AttrPortIndex, p.Port)
	e.u32(AttrStatMode, uint32(p.Mode))
	e.u32(AttrStatAutoModeMask, uint32(p.AutoMask))
	e.u8(AttrStatOpCounterEnabled, p.OpCounters)
	if p.HWCounters != nil || p.Has(AttrStatHWCounters) {
		e.add(encodeHWCounters(p.HWCounters))
	}
	return MarshalAttributes(e.done())
}

// Counter is a QP counter: a set of hardware counters shared by the QPs
// bound to it (RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY).
type Counter struct {
	Port       uint32
	ID         uint32
	Type       uint8 // QP type, in auto mode by type
	HWCounters []HWCounter
	QPs        []uint32
	Entry
}

func (c *Counter) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		c.Set(a.Type)
		if c.common(a) {
			continue
		}
		switch a.Type {
		case AttrPortIndex:
			c.Port = uint32(a.Uint)
		case AttrStatCounterID:
			c.ID = uint32(a.Uint)
		case AttrResType:
			c.Type = uint8(a.Uint)
		case AttrStatHWCounters:
			hw, err := decodeHWCounters(a.Nested)
			if err != nil {
				return err
			}
			c.HWCounters = hw
		case AttrResQP:
			for _, ent := range a.Nested {
				var found bool
				for _, f := range ent.Nested {
					if f.Type == AttrResLQPN {
						c.QPs = append(c.QPs, uint32(f.Uint))
						found = true
					}
				}
				if !found {
					return malformed("counter QP entry without %v", AttrResLQPN)
				}
			}
		default:
			c.keep(a)
		}
	}
	return need("counter", &c.Fields, AttrStatCounterID, AttrStatHWCounters, AttrResQP)
}

// UnmarshalBinary decodes the attributes of one counter entry.
func (c *Counter) UnmarshalBinary(b []byte) error { return unmarshalBinary(c, b) }

// MarshalBinary encodes c as the attributes of one counter entry.
func (c *Counter) MarshalBinary() ([]byte, error) {
	e := encoder{f: &c.Fields}
	e.u32(AttrPortIndex, c.Port)
	e.u32(AttrStatCounterID, c.ID)
	e.u8(AttrResType, c.Type)
	e.add(encodeHWCounters(c.HWCounters))
	var qps []Attribute
	for _, q := range c.QPs {
		qps = append(qps, Nest(AttrResQPEntry, U32(AttrResLQPN, q)))
	}
	e.add(Nest(AttrResQP, qps...))
	c.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// StatService reads counters and configures QP counter binding.
type StatService struct{ c *Conn }

// resQP is the STAT_RES value that selects QP counters: the attribute
// number of RDMA_NLDEV_ATTR_RES_QP, as the kernel expects.
var (
	resQP = U32(AttrStatRes, uint32(AttrResQP))
	resMR = U32(AttrStatRes, uint32(AttrResMR))
)

func (s *StatService) port(ctx context.Context, cmd Command, dev, port uint32, extra ...Attribute) (*PortStats, error) {
	m, err := s.c.one(ctx, cmd, append([]Attribute{U32(AttrDevIndex, dev), U32(AttrPortIndex, port)}, extra...)...)
	if err != nil {
		return nil, err
	}
	var p PortStats
	if err := p.unmarshal(m); err != nil {
		return nil, errDecode(cmd, err)
	}
	return &p, nil
}

// Port returns the hardware counters of one port.
func (s *StatService) Port(ctx context.Context, dev, port uint32) (*PortStats, error) {
	return s.port(ctx, CmdStatGet, dev, port)
}

// Mode returns the QP counter mode of a port (Mode, AutoMask, OpCounters).
func (s *StatService) Mode(ctx context.Context, dev, port uint32) (*PortStats, error) {
	// A STAT_MODE in the request makes the kernel answer with the mode only.
	return s.port(ctx, CmdStatGet, dev, port, U32(AttrStatMode, uint32(CounterModeManual)), resQP)
}

// Status lists a port's counters with their indices and, for optional
// counters, whether each is enabled (STAT_GET_STATUS).
func (s *StatService) Status(ctx context.Context, dev, port uint32) (*PortStats, error) {
	return s.port(ctx, CmdStatGetStatus, dev, port)
}

// SetAuto turns automatic QP counter binding on with the given criteria
// (mask 0 turns it off). optionalCounters, when not nil, also asks for the
// optional counters in the automatically created counters (Linux 6.15+).
func (s *StatService) SetAuto(ctx context.Context, dev, port uint32, mask CounterMask, optionalCounters *bool) error {
	attrs := []Attribute{U32(AttrDevIndex, dev), U32(AttrPortIndex, port), resQP,
		U32(AttrStatMode, uint32(CounterModeAuto)), U32(AttrStatAutoModeMask, uint32(mask))}
	if optionalCounters != nil {
		attrs = append(attrs, U8(AttrStatOpCounterEnabled, b2u8(*optionalCounters)))
	}
	_, err := s.c.execute(ctx, CmdStatSet, ack, attrs...)
	return err
}

// Counters dumps the QP counters of a port.
func (s *StatService) Counters(ctx context.Context, dev, port uint32) ([]Counter, error) {
	return dumpEntries[Counter](ctx, s.c, CmdStatGet, AttrStatCounter, AttrStatCounterEntry,
		[]Attribute{U32(AttrDevIndex, dev), U32(AttrPortIndex, port), resQP})
}

// Counter returns one QP counter by ID.
func (s *StatService) Counter(ctx context.Context, dev, port, id uint32) ([]Counter, error) {
	return dumpEntries[Counter](ctx, s.c, CmdStatGet, AttrStatCounter, AttrStatCounterEntry,
		[]Attribute{U32(AttrDevIndex, dev), U32(AttrPortIndex, port), resQP, U32(AttrStatCounterID, id)})
}

// Bind binds QP lqpn to counter cntn, or to a new counter when cntn is 0.
func (s *StatService) Bind(ctx context.Context, dev, port, lqpn, cntn uint32) error {
	attrs := []Attribute{U32(AttrStatMode, uint32(CounterModeManual)), resQP,
		U32(AttrDevIndex, dev), U32(AttrPortIndex, port), U32(AttrResLQPN, lqpn)}
	if cntn != 0 {
		attrs = append(attrs, U32(AttrStatCounterID, cntn))
	}
	_, err := s.c.execute(ctx, CmdStatSet, ack, attrs...)
	return err
}

// Unbind unbinds QP lqpn from counter cntn.
func (s *StatService) Unbind(ctx context.Context, dev, port, cntn, lqpn uint32) error {
	_, err := s.c.execute(ctx, CmdStatDel, ack, U32(AttrStatMode, uint32(CounterModeManual)), resQP,
		U32(AttrDevIndex, dev), U32(AttrPortIndex, port), U32(AttrStatCounterID, cntn), U32(AttrResLQPN, lqpn))
	return err
}

// SetOptional enables exactly the optional counters with the given
// indices (from Status) on a port; no indices disables them all.
func (s *StatService) SetOptional(ctx context.Context, dev, port uint32, indices []uint32) error {
	var hw []Attribute
	for _, i := range indices {
		hw = append(hw, U32(AttrStatHWCounterIndex, i))
	}
	_, err := s.c.execute(ctx, CmdStatSet, ack, U32(AttrDevIndex, dev), U32(AttrPortIndex, port), Nest(AttrStatHWCounters, hw...))
	return err
}

// MRs dumps the per-MR counters of q.Dev (drivers that keep them: mlx5).
func (s *StatService) MRs(ctx context.Context, q Query) ([]MR, error) {
	return dumpEntries[MR](ctx, s.c, CmdStatGet, AttrResMR, AttrResMREntry, append(q.attrs(), resMR))
}

// MR returns the counters of one MR.
func (s *StatService) MR(ctx context.Context, q Query, mrn uint32) (*MR, error) {
	return getEntry[MR](ctx, s.c, CmdStatGet, append(q.attrs(), U32(AttrResMRN, mrn), resMR))
}
