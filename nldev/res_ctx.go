package nldev

import "context"

// Ctx is a user verbs context, one per open of a uverbs device
// (fill_res_ctx_entry in the kernel's nldev.c).
type Ctx struct {
	CTXN uint32
	Entry
}

func (c *Ctx) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		c.Set(a.Type)
		if c.common(a) {
			continue
		}
		if a.Type == AttrResCTXN {
			c.CTXN = uint32(a.Uint)
			continue
		}
		c.keep(a)
	}
	return need("context", &c.Fields, AttrResCTXN)
}

// UnmarshalBinary decodes the attributes of one context entry.
func (c *Ctx) UnmarshalBinary(b []byte) error { return unmarshalBinary(c, b) }

// MarshalBinary encodes c as the attributes of one context entry.
func (c *Ctx) MarshalBinary() ([]byte, error) {
	e := encoder{f: &c.Fields}
	e.u32(AttrResCTXN, c.CTXN)
	c.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// Ctxs dumps the verbs contexts of q.Dev.
func (s *ResService) Ctxs(ctx context.Context, q Query) ([]Ctx, error) {
	return dumpEntries[Ctx](ctx, s.c, CmdResCtxGet, AttrResCtx, AttrResCtxEntry, q.attrs())
}

// Ctx returns one verbs context by number.
func (s *ResService) Ctx(ctx context.Context, q Query, ctxn uint32) (*Ctx, error) {
	return getEntry[Ctx](ctx, s.c, CmdResCtxGet, append(q.attrs(), U32(AttrResCTXN, ctxn)))
}
