package sa

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// ComponentMask computes the SA component mask of a query record (IBA
// 15.2.1.1): a bit for every component that is not zero in rec, and the
// bits of the named components whatever their value (a port number or a
// block number of 0 is a real query value). Names are the components'
// dotted paths as the iba metadata spells them (nodeInfo.nodeGUID, portNum)
// or their Go names (NodeInfo.NodeGUID, PortNum), case-insensitively; a
// structure's name selects every component inside it.
func ComponentMask(rec iba.Attribute, components ...string) (uint64, error) {
	d := rec.Desc()
	if len(d.CompMask) == 0 {
		return 0, fmt.Errorf("%s has no component mask", d.Name)
	}
	b := make([]byte, d.Size)
	if err := rec.MarshalTo(b); err != nil {
		return 0, fmt.Errorf("encoding %s: %w", d.Name, err)
	}
	var mask uint64
	for i, path := range d.CompMask {
		if i >= 64 {
			break
		}
		off, width, ok := locate(d, path)
		if !ok {
			return 0, fmt.Errorf("%s: component mask bit %d names %q, which is not a component", d.Name, i, path)
		}
		if !zeroBits(b, off, width) {
			mask |= 1 << i
		}
	}
	for _, name := range components {
		bits, err := MaskBits(d, name)
		if err != nil {
			return 0, err
		}
		mask |= bits
	}
	return mask, nil
}

// MaskBits gives the component mask bits that select a component (or
// every component inside a named structure) of record d.
func MaskBits(d *iba.Struct, name string) (uint64, error) {
	goOff, goWidth, goOK := locate(d, name)
	var bits uint64
	for i, path := range d.CompMask {
		if i >= 64 {
			break
		}
		if strings.EqualFold(path, name) || strings.HasPrefix(strings.ToLower(path), strings.ToLower(name)+".") {
			bits |= 1 << i
			continue
		}
		// Go names and other spellings: compare where the bits are.
		if goOK {
			if off, width, ok := locate(d, path); ok && off >= goOff && off+width <= goOff+goWidth {
				bits |= 1 << i
			}
		}
	}
	if bits == 0 {
		return 0, fmt.Errorf("%s has no component %q", d.Name, name)
	}
	return bits, nil
}

// locate finds the bit offset and width of a dotted path in d. A segment
// matches a field's IBA or Go name; an embedded header's fields read as
// the enclosing structure's; name_N and name[N] select element N of an
// array.
func locate(d *iba.Struct, path string) (off, width int, ok bool) {
	s := d
	base := 0
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		f, idx, found := field(s, seg)
		if !found {
			return 0, 0, false
		}
		base += f.foff
		last := i == len(segs)-1
		switch {
		case idx >= 0:
			base += idx * f.f.Bits
			if last {
				return base, f.f.Bits, true
			}
			if f.f.Struct == nil {
				return 0, 0, false
			}
			s = f.f.Struct
		case last:
			return base, f.f.Bits * max(1, f.f.Count), true
		case f.f.Struct != nil:
			s = f.f.Struct
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

type foundField struct {
	f    *iba.Field
	foff int // offset of the field, embedded headers included
}

func field(s *iba.Struct, seg string) (foundField, int, bool) {
	if f, ok := lookup(s, seg, 0); ok {
		return f, -1, true
	}
	// name_N or name[N]: an array element.
	name, idxText := "", ""
	if open := strings.IndexByte(seg, '['); open > 0 && strings.HasSuffix(seg, "]") {
		name, idxText = seg[:open], seg[open+1:len(seg)-1]
	} else if us := strings.LastIndexByte(seg, '_'); us > 0 {
		name, idxText = seg[:us], seg[us+1:]
	}
	n, err := strconv.Atoi(idxText)
	if name == "" || err != nil || n < 0 {
		return foundField{}, 0, false
	}
	f, ok := lookup(s, name, 0)
	if !ok || n >= f.f.Count {
		return foundField{}, 0, false
	}
	return f, n, true
}

func lookup(s *iba.Struct, name string, depth int) (foundField, bool) {
	if depth > 8 {
		return foundField{}, false
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if strings.EqualFold(f.Name, name) || (f.GoName != "_" && strings.EqualFold(f.GoName, name)) {
			return foundField{f: f, foff: f.Off}, true
		}
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Embedded && f.Struct != nil {
			if ff, ok := lookup(f.Struct, name, depth+1); ok {
				ff.foff += f.Off
				return ff, true
			}
		}
	}
	return foundField{}, false
}

func zeroBits(b []byte, off, width int) bool {
	if off < 0 || width <= 0 || (off+width+7)/8 > len(b) {
		return true
	}
	for i := off; i < off+width; {
		if i%8 == 0 && off+width-i >= 8 {
			if b[i/8] != 0 {
				return false
			}
			i += 8
			continue
		}
		if b[i/8]&(0x80>>(i%8)) != 0 {
			return false
		}
		i++
	}
	return true
}
