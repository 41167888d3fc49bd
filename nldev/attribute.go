package nldev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Attribute is one decoded NLDEV attribute. The value is held in the field
// that matches the attribute's declared Kind; Data always keeps the raw
// payload, so an attribute this package does not understand (a newer kernel,
// a driver quirk) is preserved rather than lost.
type Attribute struct {
	Type   Attr
	Kind   Kind
	Uint   uint64      // KindU8, KindU16, KindU32, KindU64
	Int    int64       // KindS32, KindS64
	Str    string      // KindString (without the terminating NUL)
	Nested []Attribute // KindNested
	Data   []byte      // the payload as received
	// FlagNested records NLA_F_NESTED in the header: the kernel opens
	// some tables with nla_nest_start (STAT_HWCOUNTERS, an SRQ's QP
	// ranges) and most with nla_nest_start_noflag; kept so that a
	// message re-encodes to the kernel's bytes.
	FlagNested bool
}

// Netlink attribute header flags that are not part of the type
// (include/uapi/linux/netlink.h).
const (
	nlaFNested       = 0x8000
	nlaFNetByteorder = 0x4000
	nlaTypeMask      = ^uint16(nlaFNested | nlaFNetByteorder)
	nlaHdrLen        = 4
)

// ErrMalformed is wrapped by every error about bytes that do not form valid
// NLDEV attributes.
var ErrMalformed = errors.New("malformed NLDEV attributes")

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// maxDepth bounds nesting: the kernel nests at most three levels
// (table, entry, driver table); anything deeper is hostile input.
const maxDepth = 8

// UnmarshalAttributes decodes an NLDEV attribute stream. PAD attributes are
// skipped; nesting follows the declared Kind, not NLA_F_NESTED, because the
// kernel opens its tables with nla_nest_start_noflag.
func UnmarshalAttributes(b []byte) ([]Attribute, error) {
	return unmarshalAttributes(b, 0)
}

func unmarshalAttributes(b []byte, depth int) ([]Attribute, error) {
	if depth > maxDepth {
		return nil, malformed("nesting deeper than %d", maxDepth)
	}
	var out []Attribute
	for len(b) > 0 {
		if len(b) < nlaHdrLen {
			return nil, malformed("%d trailing bytes are shorter than an attribute header", len(b))
		}
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		rawType := binary.NativeEndian.Uint16(b[2:4])
		typ := Attr(rawType & nlaTypeMask)
		if l < nlaHdrLen || l > len(b) {
			return nil, malformed("attribute %v: length %d outside 4..%d", typ, l, len(b))
		}
		data := b[nlaHdrLen:l]
		adv := align4(l)
		if adv > len(b) {
			adv = len(b)
		}
		b = b[adv:]
		if typ == AttrPad {
			continue
		}
		a, err := decodeAttribute(typ, data, depth)
		if err != nil {
			return nil, err
		}
		a.FlagNested = rawType&nlaFNested != 0
		out = append(out, a)
	}
	return out, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

func decodeAttribute(typ Attr, data []byte, depth int) (Attribute, error) {
	a := Attribute{Type: typ, Kind: typ.Kind(), Data: data}
	want := map[Kind]int{KindU8: 1, KindU16: 2, KindU32: 4, KindU64: 8, KindS32: 4, KindS64: 8}[a.Kind]
	if want != 0 && len(data) != want {
		return a, malformed("%v: %v payload of %d bytes", typ, a.Kind, len(data))
	}
	switch a.Kind {
	case KindU8:
		a.Uint = uint64(data[0])
	case KindU16:
		a.Uint = uint64(binary.NativeEndian.Uint16(data))
	case KindU32:
		a.Uint = uint64(binary.NativeEndian.Uint32(data))
	case KindU64:
		a.Uint = binary.NativeEndian.Uint64(data)
	case KindS32:
		a.Int = int64(int32(binary.NativeEndian.Uint32(data)))
	case KindS64:
		a.Int = int64(binary.NativeEndian.Uint64(data))
	case KindString:
		s := string(data)
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		a.Str = s
	case KindNested:
		n, err := unmarshalAttributes(data, depth+1)
		if err != nil {
			return a, fmt.Errorf("in %v: %w", typ, err)
		}
		a.Nested = n
	}
	return a, nil
}

// MarshalAttributes encodes attributes in the kernel's layout: values from
// the field of their Kind (Data for KindBinary, KindSockaddr and unknown
// kinds), NLA_F_NESTED where FlagNested says so (nldev.c opens most tables
// without it), and no
// PAD attributes: nla_put_64bit adds one only on architectures without
// efficient unaligned access (nla_need_padding_for_64bit), so on x86-64 and
// arm64 the kernel's own replies have none, as the recordings in
// testdata/replay show. The decoder skips PADs wherever they appear.
func MarshalAttributes(attrs []Attribute) ([]byte, error) {
	return appendAttributes(nil, attrs)
}

func appendAttributes(b []byte, attrs []Attribute) ([]byte, error) {
	for _, a := range attrs {
		var payload []byte
		switch a.Kind {
		case KindU8:
			payload = []byte{uint8(a.Uint)}
		case KindU16:
			payload = binary.NativeEndian.AppendUint16(nil, uint16(a.Uint))
		case KindU32:
			payload = binary.NativeEndian.AppendUint32(nil, uint32(a.Uint))
		case KindU64:
			payload = binary.NativeEndian.AppendUint64(nil, a.Uint)
		case KindS32:
			payload = binary.NativeEndian.AppendUint32(nil, uint32(int32(a.Int)))
		case KindS64:
			payload = binary.NativeEndian.AppendUint64(nil, uint64(a.Int))
		case KindString:
			payload = append([]byte(a.Str), 0)
		case KindNested:
			var err error
			payload, err = appendAttributes(nil, a.Nested)
			if err != nil {
				return nil, err
			}
		default:
			payload = a.Data
		}
		l := nlaHdrLen + len(payload)
		if l > 0xffff {
			return nil, fmt.Errorf("attribute %v: %d bytes do not fit a netlink attribute", a.Type, l)
		}
		typ := uint16(a.Type)
		if a.FlagNested {
			typ |= nlaFNested
		}
		b = binary.NativeEndian.AppendUint16(b, uint16(l))
		b = binary.NativeEndian.AppendUint16(b, typ)
		b = append(b, payload...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b, nil
}

// Constructors used to build requests and test messages.

// U32 is a KindU32 attribute.
func U32(t Attr, v uint32) Attribute { return Attribute{Type: t, Kind: KindU32, Uint: uint64(v)} }

// U8 is a KindU8 attribute.
func U8(t Attr, v uint8) Attribute { return Attribute{Type: t, Kind: KindU8, Uint: uint64(v)} }

// U64 is a KindU64 attribute.
func U64(t Attr, v uint64) Attribute { return Attribute{Type: t, Kind: KindU64, Uint: v} }

// String is a KindString attribute.
func String(t Attr, s string) Attribute { return Attribute{Type: t, Kind: KindString, Str: s} }

// Nest is a KindNested attribute.
func Nest(t Attr, children ...Attribute) Attribute {
	return Attribute{Type: t, Kind: KindNested, Nested: children}
}

// Binary is an attribute carried as raw bytes (KindBinary, KindSockaddr).
func Binary(t Attr, b []byte) Attribute {
	k := t.Kind()
	if k != KindSockaddr {
		k = KindBinary
	}
	return Attribute{Type: t, Kind: k, Data: b}
}
