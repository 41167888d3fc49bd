package sa

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// ComponentMask computes the SA component mask of a query record (IBA
// 15.2.1.1): a bit for every component that is not zero in rec, and the
// bits of the named components whatever their value (a port number or a
// block number of 0 is a real query value). Names are dotted paths as
// iba.Struct.Lookup takes them (nodeInfo.nodeGUID, portNum), case
// insensitive; a structure's name selects every component inside it.
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
	for i, path := range d.CompMask[:min(len(d.CompMask), 64)] {
		r, err := d.Lookup(path)
		if err != nil {
			return 0, fmt.Errorf("%s: component mask bit %d: %w", d.Name, i, err)
		}
		if !zeroBits(b, r.Off, r.Bits()) {
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
	if _, err := d.Lookup(name); err != nil {
		return 0, err
	}
	var bits uint64
	for _, i := range d.MaskBits(name) {
		if i < 64 {
			bits |= 1 << i
		}
	}
	if bits == 0 {
		return 0, fmt.Errorf("%s: %q is not an SA query component", d.Name, name)
	}
	return bits, nil
}

func zeroBits(b []byte, off, width int) bool {
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
