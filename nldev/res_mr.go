package nldev

import "context"

// MR is a memory region (fill_res_mr_entry in the kernel's nldev.c). The
// keys and IOVA are sent only to CAP_NET_ADMIN callers.
type MR struct {
	RKey       uint32
	LKey       uint32
	IOVA       uint64
	MRLen      uint64
	PDN        uint32
	MRN        uint32
	HWCounters []HWCounter // from a statistic MR query (StatService.MRs)
	Entry
}

func (m *MR) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		m.Set(a.Type)
		if m.common(a) {
			continue
		}
		switch a.Type {
		case AttrResRKey:
			m.RKey = uint32(a.Uint)
		case AttrResLKey:
			m.LKey = uint32(a.Uint)
		case AttrResIOVA:
			m.IOVA = a.Uint
		case AttrResMRLen:
			m.MRLen = a.Uint
		case AttrResPDN:
			m.PDN = uint32(a.Uint)
		case AttrResMRN:
			m.MRN = uint32(a.Uint)
		case AttrStatHWCounters:
			hw, err := decodeHWCounters(a.Nested)
			if err != nil {
				return err
			}
			m.HWCounters = hw
		default:
			m.keep(a)
		}
	}
	return nil
}

// UnmarshalBinary decodes the attributes of one MR entry.
func (m *MR) UnmarshalBinary(b []byte) error { return unmarshalBinary(m, b) }

// MarshalBinary encodes m as the attributes of one MR entry.
func (m *MR) MarshalBinary() ([]byte, error) {
	e := encoder{f: &m.Fields}
	e.u32(AttrResRKey, m.RKey)
	e.u32(AttrResLKey, m.LKey)
	e.u64(AttrResIOVA, m.IOVA)
	e.u64(AttrResMRLen, m.MRLen)
	e.u32(AttrResPDN, m.PDN)
	e.u32(AttrResMRN, m.MRN)
	if m.HWCounters != nil {
		e.add(encodeHWCounters(m.HWCounters))
	}
	m.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// MRs dumps the memory regions of q.Dev.
func (s *ResService) MRs(ctx context.Context, q Query) ([]MR, error) {
	return dumpEntries[MR](ctx, s.c, rawCmd(q.Raw, CmdResMRGet, CmdResMRGetRaw), AttrResMR, AttrResMREntry, q.attrs())
}

// MR returns one memory region by number.
func (s *ResService) MR(ctx context.Context, q Query, mrn uint32) (*MR, error) {
	return getEntry[MR](ctx, s.c, rawCmd(q.Raw, CmdResMRGet, CmdResMRGetRaw), append(q.attrs(), U32(AttrResMRN, mrn)))
}
