package nldev

import (
	"context"
	"encoding/binary"
)

// SummaryEntry is one line of a resource summary: how many objects of a
// kind a device holds (fill_res_info_entry in the kernel's nldev.c).
type SummaryEntry struct {
	Name string // "pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"
	Curr uint64
	Max  uint64 // RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_MAX, newer kernels only
	Fields
}

// Summary is a device's resource summary (RDMA_NLDEV_CMD_RES_GET).
type Summary struct {
	DevIndex uint32
	DevName  string
	Entries  []SummaryEntry
	Fields
}

// UnmarshalBinary decodes the attributes of a resource summary message.
func (s *Summary) UnmarshalBinary(b []byte) error { return unmarshalBinary(s, b) }

func (s *Summary) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		s.Set(a.Type)
		switch a.Type {
		case AttrDevIndex:
			s.DevIndex = uint32(a.Uint)
		case AttrDevName:
			s.DevName = a.Str
		case AttrResSummary:
			for _, ent := range a.Nested {
				if ent.Type != AttrResSummaryEntry {
					continue
				}
				var e SummaryEntry
				for _, f := range ent.Nested {
					e.Set(f.Type)
					switch f.Type {
					case AttrResSummaryEntryName:
						e.Name = f.Str
					case AttrResSummaryEntryCurr:
						e.Curr = f.Uint
					case attrResSummaryEntryMax:
						if len(f.Data) == 8 {
							e.Max = binary.NativeEndian.Uint64(f.Data)
						}
					default:
						e.keep(f)
					}
				}
				if err := need("summary entry", &e.Fields, AttrResSummaryEntryName, AttrResSummaryEntryCurr); err != nil {
					return err
				}
				s.Entries = append(s.Entries, e)
			}
		default:
			s.keep(a)
		}
	}
	return need("resource summary", &s.Fields, AttrDevIndex, AttrDevName, AttrResSummary)
}

// attrResSummaryEntryMax is RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_MAX (u64),
// added to the kernel after the header this package is generated from
// (rdma-core's kernel-headers copy has it as 118).
const attrResSummaryEntryMax Attr = 118

// MarshalBinary encodes s in the kernel's layout.
func (s *Summary) MarshalBinary() ([]byte, error) {
	e := encoder{f: &s.Fields}
	e.u32(AttrDevIndex, s.DevIndex)
	e.str(AttrDevName, s.DevName)
	var ents []Attribute
	for i := range s.Entries {
		se := encoder{f: &s.Entries[i].Fields}
		se.str(AttrResSummaryEntryName, s.Entries[i].Name)
		se.add(U64(AttrResSummaryEntryCurr, s.Entries[i].Curr))
		if s.Entries[i].Max != 0 {
			se.add(Attribute{Type: attrResSummaryEntryMax, Data: binary.NativeEndian.AppendUint64(nil, s.Entries[i].Max)})
		}
		ents = append(ents, Nest(AttrResSummaryEntry, se.done()...))
	}
	e.add(Nest(AttrResSummary, ents...))
	return MarshalAttributes(e.done())
}

// ResService reads the resources processes and the kernel hold.
type ResService struct{ c *Conn }

// Summary returns the resource summary of every device.
func (s *ResService) Summary(ctx context.Context) ([]Summary, error) {
	msgs, err := s.c.execute(ctx, CmdResGet, dump)
	if err != nil {
		return nil, err
	}
	return decodeAll[Summary](CmdResGet, msgs)
}

// SummaryOf returns the resource summary of one device.
func (s *ResService) SummaryOf(ctx context.Context, dev uint32) (*Summary, error) {
	m, err := s.c.one(ctx, CmdResGet, U32(AttrDevIndex, dev))
	if err != nil {
		return nil, err
	}
	var sum Summary
	if err := sum.unmarshal(m); err != nil {
		return nil, errDecode(CmdResGet, err)
	}
	return &sum, nil
}

func decodeAll[T any, P interface {
	*T
	unmarshaler
}](cmd Command, msgs [][]Attribute) ([]T, error) {
	out := make([]T, len(msgs))
	for i, m := range msgs {
		if err := P(&out[i]).unmarshal(m); err != nil {
			return nil, errDecode(cmd, err)
		}
	}
	return out, nil
}

// Query selects the objects of a resource dump.
type Query struct {
	Dev  uint32 // device index; the kernel dumps one device per request
	Port uint32 // port index, 0 for any (QPs and CM IDs only)
	// DriverDetails asks for driver-specific attributes
	// (RDMA_NLDEV_ATTR_DRIVER_DETAILS, Linux 6.8+; older kernels always send them).
	DriverDetails bool
	// Raw asks for the vendor's raw object dump (the *_GET_RAW commands,
	// CAP_NET_ADMIN), returned in Entry.Raw.
	Raw bool
}

func (q Query) attrs() []Attribute {
	a := []Attribute{U32(AttrDevIndex, q.Dev)}
	if q.Port != 0 {
		a = append(a, U32(AttrPortIndex, q.Port))
	}
	if q.DriverDetails {
		a = append(a, U8(AttrDriverDetails, 1))
	}
	return a
}

// Entry holds what every resource entry may carry besides its own fields.
type Entry struct {
	DevIndex uint32 // the device, from the enclosing message
	DevName  string
	PID      uint32 // the owning process; absent for kernel objects
	KernName string // the owning kernel module, for kernel objects
	Driver   []DriverAttr
	Raw      []byte // RDMA_NLDEV_ATTR_RES_RAW from a *_GET_RAW command
	Fields
}

// common decodes an attribute every entry type may carry.
func (e *Entry) common(a Attribute) bool {
	switch a.Type {
	case AttrDevIndex:
		e.DevIndex = uint32(a.Uint)
	case AttrDevName:
		e.DevName = a.Str
	case AttrResPID:
		e.PID = uint32(a.Uint)
	case AttrResKernName:
		e.KernName = a.Str
	case AttrDriver:
		e.Driver = decodeDriver(a.Nested)
	case AttrResRaw:
		e.Raw = a.Data
	default:
		return false
	}
	return true
}

func (e *Entry) encodeCommon(enc *encoder) {
	enc.u32(AttrResPID, e.PID)
	enc.str(AttrResKernName, e.KernName)
	if len(e.Driver) > 0 || e.Has(AttrDriver) {
		enc.add(Nest(AttrDriver, encodeDriver(e.Driver)...))
	}
	enc.bytes(AttrResRaw, e.Raw)
}

func (e *Entry) entry() *Entry { return e }

// DriverAttr is one driver-specific attribute: a name, an optional print
// hint and a value (RDMA_NLDEV_ATTR_DRIVER_* in the header).
type DriverAttr struct {
	Name      string
	PrintType PrintType
	Value     Attribute // Kind says which of Str, Int, Uint holds it
}

func decodeDriver(attrs []Attribute) []DriverAttr {
	var out []DriverAttr
	var cur *DriverAttr
	for _, a := range attrs {
		switch {
		case cur == nil:
			if a.Type != AttrDriverString {
				// A table must start with a name; iproute2 stops here too.
				return out
			}
			cur = &DriverAttr{Name: a.Str}
		case a.Type == AttrDriverPrintType:
			cur.PrintType = PrintType(a.Uint)
		default:
			cur.Value = a
			out = append(out, *cur)
			cur = nil
		}
	}
	return out
}

func encodeDriver(d []DriverAttr) []Attribute {
	var out []Attribute
	for _, x := range d {
		out = append(out, String(AttrDriverString, x.Name))
		if x.PrintType != PrintTypeUnspec {
			out = append(out, U8(AttrDriverPrintType, uint8(x.PrintType)))
		}
		out = append(out, x.Value)
	}
	return out
}

// resEntry is implemented by every resource entry type.
type resEntry interface {
	unmarshaler
	entry() *Entry
}

// dumpEntries runs a resource dump and decodes the entries of table.
func dumpEntries[T any, P interface {
	*T
	resEntry
}](ctx context.Context, c *Conn, cmd Command, table, entryAttr Attr, extra []Attribute) ([]T, error) {
	msgs, err := c.execute(ctx, cmd, dump, extra...)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, m := range msgs {
		var devIndex uint32
		var devName string
		var tbl *Attribute
		for i := range m {
			switch m[i].Type {
			case AttrDevIndex:
				devIndex = uint32(m[i].Uint)
			case AttrDevName:
				devName = m[i].Str
			case table:
				tbl = &m[i]
			}
		}
		if tbl == nil {
			return nil, errDecode(cmd, malformed("dump message without %v", table))
		}
		for _, ent := range tbl.Nested {
			if ent.Type != entryAttr {
				continue
			}
			var t T
			p := P(&t)
			if err := p.unmarshal(ent.Nested); err != nil {
				return nil, errDecode(cmd, err)
			}
			p.entry().DevIndex, p.entry().DevName = devIndex, devName
			out = append(out, t)
		}
	}
	return out, nil
}

// getEntry runs a per-object doit; the reply is one flat entry.
func getEntry[T any, P interface {
	*T
	resEntry
}](ctx context.Context, c *Conn, cmd Command, attrs []Attribute) (*T, error) {
	m, err := c.one(ctx, cmd, attrs...)
	if err != nil {
		return nil, err
	}
	var t T
	if err := P(&t).unmarshal(m); err != nil {
		return nil, errDecode(cmd, err)
	}
	return &t, nil
}

func rawCmd(raw bool, plain, rawc Command) Command {
	if raw {
		return rawc
	}
	return plain
}
