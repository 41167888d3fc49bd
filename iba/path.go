package iba

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoSuchField is matched (errors.Is) by a PathError whose path names no
// component.
var ErrNoSuchField = errors.New("no such field")

// PathError reports a dotted path that does not resolve, or a value that
// cannot be read from or written to the component it names.
type PathError struct {
	// Struct is the structure the path was resolved against.
	Struct string
	// Path is the dotted path as given.
	Path string
	// Reason says what is wrong, in words for a person.
	Reason string
	// Err is a sentinel (ErrNoSuchField) or the underlying parse error.
	Err error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Reason }

func (e *PathError) Unwrap() error { return e.Err }

// Ref locates one component of a structure, or one element of an array
// component, inside the bytes of the whole structure. Get and set go through
// the bit offset alone, so a Ref works on raw bytes with no decoding and no
// reflection: it is the basis of `ibtool query -f name=value` and of the
// printers' label tables.
type Ref struct {
	// Path is the canonical dotted path: the IBA names as declared, an
	// element as name[i].
	Path string
	// Off is the bit offset of the component (of the element when Index >=
	// 0) from the start of the outermost structure, MSB first as the IBA
	// numbers bits.
	Off int
	// Field describes the component; for an element, the whole array.
	Field *Field
	// Index is the element of an array component, or -1.
	Index int
}

// Bits is the width of what the Ref names: one element, a scalar, or a whole
// array or structure.
func (r Ref) Bits() int {
	if r.Index >= 0 || r.Field.Count <= 1 {
		return r.Field.Bits
	}
	return r.Field.Bits * r.Field.Count
}

// Scalar reports whether the Ref names a single value (a scalar component or
// one element of an array), as opposed to a whole array or a structure.
func (r Ref) Scalar() bool {
	if r.Field.Kind == KindStruct {
		return false
	}
	return r.Index >= 0 || !r.Field.Array
}

// Lookup resolves a dotted path against the structure, case-insensitively:
// the components of embedded headers read as the structure's own
// (attributeID in SMPFormat), nested structures by their component name
// (nodeInfo.systemImageGUID in NodeRecord), and array elements as name[3]
// or python-rdma's name_3.
func (s *Struct) Lookup(path string) (Ref, error) {
	if s == nil {
		return Ref{}, &PathError{Path: path, Reason: "no structure to look in", Err: ErrNoSuchField}
	}
	if strings.TrimSpace(path) == "" {
		return Ref{}, &PathError{Struct: s.Name, Path: path, Reason: "empty path; fields are " + fieldList(s), Err: ErrNoSuchField}
	}
	segs := strings.Split(path, ".")
	cur := s
	where := s.Name
	base := 0
	var canon []string
	var ref Ref
	for i, seg := range segs {
		if cur == nil {
			return Ref{}, &PathError{Struct: s.Name, Path: path,
				Reason: fmt.Sprintf("%s is not a structure, it has no component %q", strings.Join(canon, "."), seg), Err: ErrNoSuchField}
		}
		name, idx, err := splitIndex(seg)
		if err != nil {
			return Ref{}, &PathError{Struct: s.Name, Path: path, Reason: err.Error(), Err: ErrNoSuchField}
		}
		f, off, ok := findField(cur, name)
		if !ok && idx < 0 {
			// python-rdma names an element name_3; a real component of that
			// name (reserved_144) was tried first.
			if n, k, ok2 := splitUnderscore(name); ok2 {
				if f2, off2, ok3 := findField(cur, n); ok3 && f2.Array {
					f, off, ok, idx = f2, off2, true, k
				}
			}
		}
		if !ok {
			return Ref{}, &PathError{Struct: s.Name, Path: path,
				Reason: fmt.Sprintf("no such field in %s; fields are %s", where, fieldList(cur)), Err: ErrNoSuchField}
		}
		off += base
		c := f.Name
		ref = Ref{Field: f, Off: off, Index: -1}
		if idx >= 0 {
			if !f.Array {
				return Ref{}, &PathError{Struct: s.Name, Path: path,
					Reason: fmt.Sprintf("%s is not an array", f.Name), Err: ErrNoSuchField}
			}
			if idx >= f.Count {
				return Ref{}, &PathError{Struct: s.Name, Path: path,
					Reason: fmt.Sprintf("index %d out of range: %s has %d elements", idx, f.Name, f.Count), Err: ErrNoSuchField}
			}
			ref.Index = idx
			ref.Off = off + idx*f.Bits
			c += "[" + strconv.Itoa(idx) + "]"
		}
		canon = append(canon, c)
		if i == len(segs)-1 {
			break
		}
		// Descend: a nested structure, or one element of an array of them.
		cur = nil
		if f.Kind == KindStruct && (!f.Array || ref.Index >= 0) {
			cur = f.Struct
			base = ref.Off
			where = s.Name + "." + strings.Join(canon, ".")
			if f.Struct != nil {
				where += " (" + f.Struct.Name + ")"
			}
		}
	}
	ref.Path = strings.Join(canon, ".")
	return ref, nil
}

// findField finds a component by name, looking through embedded headers;
// off is its bit offset within s.
func findField(s *Struct, name string) (*Field, int, bool) {
	for i := range s.Fields {
		f := &s.Fields[i]
		if strings.EqualFold(f.Name, name) {
			return f, f.Off, true
		}
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Embedded && f.Struct != nil {
			if g, off, ok := findField(f.Struct, name); ok {
				return g, f.Off + off, true
			}
		}
	}
	return nil, 0, false
}

// splitIndex splits "name[3]" into its name and index; -1 when there is none.
func splitIndex(seg string) (string, int, error) {
	seg = strings.TrimSpace(seg)
	i := strings.IndexByte(seg, '[')
	if i < 0 {
		if seg == "" {
			return "", -1, errors.New("empty path component")
		}
		return seg, -1, nil
	}
	if !strings.HasSuffix(seg, "]") || i == 0 {
		return "", -1, fmt.Errorf("%q: want name or name[index]", seg)
	}
	n, err := strconv.Atoi(seg[i+1 : len(seg)-1])
	if err != nil || n < 0 {
		return "", -1, fmt.Errorf("%q: index is not a non-negative integer", seg)
	}
	return seg[:i], n, nil
}

func splitUnderscore(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 || i == len(name)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return name[:i], n, true
}

// fieldList names the components a path may use at one level: embedded
// headers' components flattened, reserved ones left out.
func fieldList(s *Struct) string {
	var names []string
	var walk func(*Struct)
	walk = func(s *Struct) {
		for _, f := range s.Fields {
			switch {
			case f.Embedded && f.Struct != nil:
				walk(f.Struct)
			case !f.Reserved:
				names = append(names, f.Name)
			}
		}
	}
	walk(s)
	return strings.Join(names, ", ")
}

// MaskBits gives the SA component mask bits (IBA 15.2.1.1, ComponentMask)
// that select the component at path: several for a component spanning more
// than one bit (PathRecord serviceID), every bit below it for a nested
// structure, and the array's bit for an element of an array that has one bit
// for all elements. It is nil when the path does not resolve or the
// structure is not an SA record.
func (s *Struct) MaskBits(path string) []int {
	if s == nil || len(s.CompMask) == 0 {
		return nil
	}
	r, err := s.Lookup(path)
	if err != nil {
		return nil
	}
	// CompMask spells an element name_i; try the most specific spelling
	// first, then the enclosing components.
	segs := strings.Split(r.Path, ".")
	var cands []string
	last := segs[len(segs)-1]
	if i := strings.IndexByte(last, '['); i >= 0 {
		el := append(append([]string{}, segs[:len(segs)-1]...), last[:i]+"_"+strings.TrimSuffix(last[i+1:], "]"))
		cands = append(cands, strings.Join(el, "."))
	}
	for n := len(segs); n > 0; n-- {
		p := append([]string{}, segs[:n]...)
		for j, sg := range p {
			if i := strings.IndexByte(sg, '['); i >= 0 {
				p[j] = sg[:i]
			}
		}
		cands = append(cands, strings.Join(p, "."))
	}
	full := len(cands) - len(segs) // the whole path, without an index
	for k, c := range cands {
		var bits []int
		for i, m := range s.CompMask {
			if strings.EqualFold(m, c) || (k == full && hasFoldPrefix(m, c+".")) {
				bits = append(bits, i)
			}
		}
		if len(bits) > 0 {
			return bits
		}
	}
	return nil
}

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
