package nldev

import "context"

// SRQ is a shared receive queue (fill_res_srq_entry in the kernel's nldev.c).
type SRQ struct {
	SRQN uint32
	Type uint8 // IB_SRQT_*
	PDN  uint32
	CQN  uint32
	QPs  []QPRange // the QPs attached, as the kernel groups them
	Entry
}

// QPRange is one element of an SRQ's QP table: a single QP number
// (RDMA_NLDEV_ATTR_RES_LQPN, Min == Max, Range false) or a run of them
// (RDMA_NLDEV_ATTR_MIN_RANGE .. MAX_RANGE).
type QPRange struct {
	Min, Max uint32
	Range    bool
}

func (s *SRQ) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		s.Set(a.Type)
		if s.common(a) {
			continue
		}
		switch a.Type {
		case AttrResSRQN:
			s.SRQN = uint32(a.Uint)
		case AttrResType:
			s.Type = uint8(a.Uint)
		case AttrResPDN:
			s.PDN = uint32(a.Uint)
		case AttrResCQN:
			s.CQN = uint32(a.Uint)
		case AttrResQP:
			for _, ent := range a.Nested {
				var r QPRange
				var haveMin, haveMax, haveQPN bool
				for _, f := range ent.Nested {
					switch f.Type {
					case AttrResLQPN:
						r.Min, r.Max, haveQPN = uint32(f.Uint), uint32(f.Uint), true
					case AttrMinRange:
						r.Min, haveMin = uint32(f.Uint), true
					case AttrMaxRange:
						r.Max, haveMax = uint32(f.Uint), true
					}
				}
				switch {
				case haveQPN:
				case haveMin && haveMax:
					r.Range = true
				default:
					return malformed("SRQ QP entry with neither an LQPN nor a range")
				}
				s.QPs = append(s.QPs, r)
			}
		default:
			s.keep(a)
		}
	}
	return need("SRQ", &s.Fields, AttrResSRQN)
}

// UnmarshalBinary decodes the attributes of one SRQ entry.
func (s *SRQ) UnmarshalBinary(b []byte) error { return unmarshalBinary(s, b) }

// MarshalBinary encodes s as the attributes of one SRQ entry.
func (s *SRQ) MarshalBinary() ([]byte, error) {
	e := encoder{f: &s.Fields}
	e.u32(AttrResSRQN, s.SRQN)
	e.u8(AttrResType, s.Type)
	e.u32(AttrResPDN, s.PDN)
	e.u32(AttrResCQN, s.CQN)
	if s.QPs != nil || s.Has(AttrResQP) {
		var ents []Attribute
		for _, r := range s.QPs {
			if r.Range {
				ents = append(ents, Nest(AttrResQPEntry, U32(AttrMinRange, r.Min), U32(AttrMaxRange, r.Max)))
			} else {
				ents = append(ents, Nest(AttrResQPEntry, U32(AttrResLQPN, r.Min)))
			}
		}
		e.add(Nest(AttrResQP, ents...))
	}
	s.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// SRQs dumps the shared receive queues of q.Dev.
func (s *ResService) SRQs(ctx context.Context, q Query) ([]SRQ, error) {
	return dumpEntries[SRQ](ctx, s.c, rawCmd(q.Raw, CmdResSRQGet, CmdResSRQGetRaw), AttrResSRQ, AttrResSRQEntry, q.attrs())
}

// SRQ returns one shared receive queue by number.
func (s *ResService) SRQ(ctx context.Context, q Query, srqn uint32) (*SRQ, error) {
	return getEntry[SRQ](ctx, s.c, rawCmd(q.Raw, CmdResSRQGet, CmdResSRQGetRaw), append(q.attrs(), U32(AttrResSRQN, srqn)))
}
