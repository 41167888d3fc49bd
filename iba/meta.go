package iba

import (
	"fmt"
	"strings"
	"sync"
)

// Kind says how a component's bits are to be read.
type Kind uint8

const (
	KindUint   Kind = iota // an unsigned integer, possibly an enumeration
	KindGUID               // a 64-bit GUID
	KindGID                // a 128-bit GID
	KindBytes              // an opaque run of bytes
	KindString             // bytes holding NUL-terminated text (NodeDescription)
	KindStruct             // a nested structure
)

// Hint says how a component is best displayed.
type Hint uint8

const (
	HintDec       Hint = iota // decimal
	HintHex                   // hexadecimal, zero padded to the width
	HintData                  // a payload decoded by the attribute ID (MAD formats)
	HintGIDPrefix             // a GID prefix, printed as fe80::/64
)

// Field describes one component of a structure, as the IBA lists it.
type Field struct {
	// Name is the IBA name as printed, accepted in dotted paths and used as
	// the JSON key (nodeInfo.systemImageGUID, LID); reserved components
	// are named reserved_<bit offset>.
	Name   string
	GoName string
	// Label, when set, is the name infiniband-diags prints.
	Label string
	// Off is the bit offset in the enclosing structure; Bits the width of
	// one element; Count the number of elements (1 for a scalar).
	Off, Bits, Count int
	Kind             Kind
	Hint             Hint
	Reserved         bool
	Array            bool
	// Embedded marks a header whose components read as the enclosing
	// structure's own (the MAD header inside a format).
	Embedded bool
	Struct   *Struct
	// Enum names the value, for enumerated components.
	Enum func(uint64) string
}

// FormatID identifies a MAD format by its management class and class version.
type FormatID struct {
	Class   uint8
	Version uint8
}

// Struct is the field table of one structure.
type Struct struct {
	Name    string
	Aliases []string
	// Section is where the IBA specifies it.
	Section string
	// Size in bytes.
	Size int
	// New returns a zero value of the Go type.
	New    func() Attribute
	Fields []Field
	// Format is set on MAD formats (SMPFormat, SAFormat, ...).
	Format *FormatID
	// HasAttrID marks attributes; AttrID is their attribute ID and Methods
	// the RPCs (IBA names such as SubnGet) that may carry them.
	HasAttrID bool
	AttrID    uint16
	Methods   []string
	// BoundFormat ties a vendor attribute to its vendor format.
	BoundFormat *Struct
	// VariantOf marks another layout of an attribute (the switch and CA
	// forms of CongestionLog): the registry lists the primary, and the
	// variant may be used wherever the primary is.
	VariantOf *Struct
	// DataOff, when not 0, is the bit offset of the attribute in the MAD
	// when it does not sit in the format's data area (CongestionLog starts
	// in the congestion control log area).
	DataOff int
	// CompMask lists the SA component mask bits in order: CompMask[i] is the
	// dotted path of the component that bit i selects.
	CompMask []string
}

// Attribute is implemented by every generated structure.
type Attribute interface {
	Desc() *Struct
	MarshalTo(b []byte) error
	Unmarshal(b []byte) error
}

// Structs returns every declared structure, sorted by name.
func Structs() []*Struct { return structs[:] }

// StructByName finds a structure by its name or an alias, case-insensitively
// (NodeInfo, SMPNodeInfo, nodeinfo).
func StructByName(name string) (*Struct, bool) {
	for _, s := range structs {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
		for _, a := range s.Aliases {
			if strings.EqualFold(a, name) {
				return s, true
			}
		}
	}
	return nil, false
}

// Allows reports whether the RPC (an IBA name such as SubnGet) may carry this
// attribute.
func (s *Struct) Allows(rpc string) bool {
	if s.VariantOf != nil {
		return s.VariantOf.Allows(rpc)
	}
	for _, m := range s.Methods {
		if m == rpc {
			return true
		}
	}
	return false
}

// Bits is the size in bits.
func (s *Struct) Bits() int { return s.Size * 8 }

// DecodeError reports a buffer that does not hold a structure: too short,
// too long for a fixed-size MAD, or with a component whose value is invalid.
type DecodeError struct {
	Struct string
	// Offset is the byte offset of the problem: where the buffer ended, or
	// where the offending component starts.
	Offset int
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decoding %s: at byte %d: %s", e.Struct, e.Offset, e.Reason)
}

func shortError(s *Struct, have int) error {
	return &DecodeError{Struct: s.Name, Offset: have, Reason: fmt.Sprintf("buffer has %d bytes, need %d", have, s.Size)}
}

// getBits reads width bits at bit offset off of b, most significant bit
// first as the IBA numbers them; width is at most 64.
func getBits(b []byte, off, width int) uint64 {
	var v uint64
	for i := 0; i < width; {
		bi := (off + i) / 8
		bo := (off + i) % 8
		n := min(8-bo, width-i)
		v = v<<n | uint64(b[bi]>>(8-bo-n))&(1<<n-1)
		i += n
	}
	return v
}

// putBits writes the low width bits of v at bit offset off of b, leaving the
// other bits of b alone.
func putBits(b []byte, off, width int, v uint64) {
	for i := 0; i < width; {
		bi := (off + i) / 8
		bo := (off + i) % 8
		n := min(8-bo, width-i)
		sh := 8 - bo - n
		m := byte(1<<n-1) << sh
		part := byte(v>>(width-i-n)) & (1<<n - 1)
		b[bi] = b[bi]&^m | part<<sh
		i += n
	}
}

// attrKey is a class and an attribute ID in one word (a map hashes it
// faster than a struct: the client looks one up for every MAD it sends).
type attrKey uint32

func makeAttrKey(c Class, id uint16) attrKey { return attrKey(c)<<16 | attrKey(id) }

type registry struct {
	attrs   map[attrKey]*Struct
	formats map[Class]*Struct
}

var reg = sync.OnceValue(func() *registry {
	r := &registry{attrs: map[attrKey]*Struct{}, formats: map[Class]*Struct{}}
	for _, s := range structs {
		if s.Format != nil {
			r.formats[Class(s.Format.Class)] = s
		}
		if !s.HasAttrID {
			continue
		}
		for _, m := range s.Methods {
			rpc, ok := LookupRPC(m)
			if !ok {
				continue
			}
			classes := rpc.Classes
			if classes == nil && s.BoundFormat != nil && s.BoundFormat.Format != nil {
				classes = []Class{Class(s.BoundFormat.Format.Class)}
			}
			for _, c := range classes {
				r.attrs[makeAttrKey(c, s.AttrID)] = s
			}
		}
	}
	return r
})

// LookupAttr finds the structure of attribute id in management class c.
func LookupAttr(c Class, id uint16) (*Struct, bool) {
	s, ok := reg().attrs[makeAttrKey(c, id)]
	return s, ok
}

// FormatOf finds the MAD format of a management class: SMPFormat for
// SubnMgt, SAFormat for SubnAdm, VendOUIFormat for every class in the
// vendor-OUI range, and so on.
func FormatOf(c Class) (*Struct, bool) {
	r := reg()
	if s, ok := r.formats[c]; ok {
		return s, true
	}
	switch {
	case c.IsVendorOUI():
		s, ok := r.formats[ClassVendorOUI]
		return s, ok
	case c.IsVendor():
		s, ok := r.formats[ClassVendor]
		return s, ok
	}
	return nil, false
}
