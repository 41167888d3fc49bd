package nldev

import "context"

// CQ is a completion queue (fill_res_cq_entry in the kernel's nldev.c).
type CQ struct {
	CQE     uint32 // capacity
	Users   uint64
	PollCtx uint8 // IB_POLL_*, kernel CQs only
	DIM     uint8 // adaptive moderation, kernel CQs only
	CQN     uint32
	CTXN    uint32
	Entry
}

func (c *CQ) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		c.Set(a.Type)
		if c.common(a) {
			continue
		}
		switch a.Type {
		case AttrResCQE:
			c.CQE = uint32(a.Uint)
		case AttrResUseCnt:
			c.Users = a.Uint
		case AttrResPollCtx:
			c.PollCtx = uint8(a.Uint)
		case AttrDevDIM:
			c.DIM = uint8(a.Uint)
		case AttrResCQN:
			c.CQN = uint32(a.Uint)
		case AttrResCTXN:
			c.CTXN = uint32(a.Uint)
		default:
			c.keep(a)
		}
	}
	if c.Has(AttrResRaw) {
		return nil
	}
	return need("CQ", &c.Fields, AttrResCQE, AttrResUseCnt)
}

// UnmarshalBinary decodes the attributes of one CQ entry.
func (c *CQ) UnmarshalBinary(b []byte) error { return unmarshalBinary(c, b) }

// MarshalBinary encodes c as the attributes of one CQ entry.
func (c *CQ) MarshalBinary() ([]byte, error) {
	e := encoder{f: &c.Fields}
	e.u32(AttrResCQE, c.CQE)
	e.u64(AttrResUseCnt, c.Users)
	e.u8(AttrResPollCtx, c.PollCtx)
	e.u8(AttrDevDIM, c.DIM)
	e.u32(AttrResCQN, c.CQN)
	e.u32(AttrResCTXN, c.CTXN)
	c.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// CQs dumps the completion queues of q.Dev.
func (s *ResService) CQs(ctx context.Context, q Query) ([]CQ, error) {
	return dumpEntries[CQ](ctx, s.c, rawCmd(q.Raw, CmdResCQGet, CmdResCQGetRaw), AttrResCQ, AttrResCQEntry, q.attrs())
}

// CQ returns one completion queue by number.
func (s *ResService) CQ(ctx context.Context, q Query, cqn uint32) (*CQ, error) {
	return getEntry[CQ](ctx, s.c, rawCmd(q.Raw, CmdResCQGet, CmdResCQGetRaw), append(q.attrs(), U32(AttrResCQN, cqn)))
}
