package nldev

import "context"

// PD is a protection domain (fill_res_pd_entry in the kernel's nldev.c).
type PD struct {
	LocalDMALKey     uint32 // CAP_NET_ADMIN only
	UnsafeGlobalRKey uint32 // present only when the PD has one
	Users            uint64
	PDN              uint32
	CTXN             uint32
	Entry
}

func (p *PD) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		p.Set(a.Type)
		if p.common(a) {
			continue
		}
		switch a.Type {
		case AttrResLocalDMALKey:
			p.LocalDMALKey = uint32(a.Uint)
		case AttrResUnsafeGlobalRKey:
			p.UnsafeGlobalRKey = uint32(a.Uint)
		case AttrResUseCnt:
			p.Users = a.Uint
		case AttrResPDN:
			p.PDN = uint32(a.Uint)
		case AttrResCTXN:
			p.CTXN = uint32(a.Uint)
		default:
			p.keep(a)
		}
	}
	return need("PD", &p.Fields, AttrResUseCnt)
}

// UnmarshalBinary decodes the attributes of one PD entry.
func (p *PD) UnmarshalBinary(b []byte) error { return unmarshalBinary(p, b) }

// MarshalBinary encodes p as the attributes of one PD entry.
func (p *PD) MarshalBinary() ([]byte, error) {
	e := encoder{f: &p.Fields}
	e.u32(AttrResLocalDMALKey, p.LocalDMALKey)
	e.u32(AttrResUnsafeGlobalRKey, p.UnsafeGlobalRKey)
	e.u64(AttrResUseCnt, p.Users)
	e.u32(AttrResPDN, p.PDN)
	e.u32(AttrResCTXN, p.CTXN)
	p.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// PDs dumps the protection domains of q.Dev.
func (s *ResService) PDs(ctx context.Context, q Query) ([]PD, error) {
	return dumpEntries[PD](ctx, s.c, CmdResPDGet, AttrResPD, AttrResPDEntry, q.attrs())
}

// PD returns one protection domain by number.
func (s *ResService) PD(ctx context.Context, q Query, pdn uint32) (*PD, error) {
	return getEntry[PD](ctx, s.c, CmdResPDGet, append(q.attrs(), U32(AttrResPDN, pdn)))
}
