package nldev

import "context"

// QP is a queue pair (fill_res_qp_entry in the kernel's nldev.c).
type QP struct {
	Port         uint32 // 0 when the QP is not bound to a port yet
	LQPN         uint32
	RQPN         uint32 // RC and UC only (IBA 11.2.5.3)
	RQPSN        uint32
	SQPSN        uint32
	PathMigState uint8
	Type         uint8 // IB_QPT_*
	State        uint8 // IB_QPS_*
	PDN          uint32
	Subtype      string // driver QPs
	Entry
}

func (q *QP) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		q.Set(a.Type)
		if q.common(a) {
			continue
		}
		switch a.Type {
		case AttrPortIndex:
			q.Port = uint32(a.Uint)
		case AttrResLQPN:
			q.LQPN = uint32(a.Uint)
		case AttrResRQPN:
			q.RQPN = uint32(a.Uint)
		case AttrResRQPSN:
			q.RQPSN = uint32(a.Uint)
		case AttrResSQPSN:
			q.SQPSN = uint32(a.Uint)
		case AttrResPathMigState:
			q.PathMigState = uint8(a.Uint)
		case AttrResType:
			q.Type = uint8(a.Uint)
		case AttrResState:
			q.State = uint8(a.Uint)
		case AttrResPDN:
			q.PDN = uint32(a.Uint)
		case AttrResSubtype:
			q.Subtype = a.Str
		default:
			q.keep(a)
		}
	}
	if q.Has(AttrResRaw) {
		return nil // a raw entry carries the vendor blob instead of the fields
	}
	return need("QP", &q.Fields, AttrResLQPN)
}

// UnmarshalBinary decodes the attributes of one QP entry.
func (q *QP) UnmarshalBinary(b []byte) error { return unmarshalBinary(q, b) }

// MarshalBinary encodes q as the attributes of one QP entry.
func (q *QP) MarshalBinary() ([]byte, error) {
	e := encoder{f: &q.Fields}
	e.u32(AttrPortIndex, q.Port)
	e.u32(AttrResLQPN, q.LQPN)
	e.u32(AttrResRQPN, q.RQPN)
	e.u32(AttrResRQPSN, q.RQPSN)
	e.u32(AttrResSQPSN, q.SQPSN)
	e.u8(AttrResPathMigState, q.PathMigState)
	e.u8(AttrResType, q.Type)
	e.u8(AttrResState, q.State)
	e.u32(AttrResPDN, q.PDN)
	e.str(AttrResSubtype, q.Subtype)
	q.encodeCommon(&e)
	return MarshalAttributes(e.done())
}

// QPs dumps the queue pairs of q.Dev (and q.Port, if set).
func (s *ResService) QPs(ctx context.Context, q Query) ([]QP, error) {
	return dumpEntries[QP](ctx, s.c, rawCmd(q.Raw, CmdResQPGet, CmdResQPGetRaw), AttrResQP, AttrResQPEntry, q.attrs())
}

// QP returns one queue pair by number.
func (s *ResService) QP(ctx context.Context, q Query, lqpn uint32) (*QP, error) {
	return getEntry[QP](ctx, s.c, rawCmd(q.Raw, CmdResQPGet, CmdResQPGetRaw), append(q.attrs(), U32(AttrResLQPN, lqpn)))
}
