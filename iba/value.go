package iba

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// fits reports whether b holds the bits the Ref names.
func (r Ref) fits(b []byte) bool {
	return r.Off >= 0 && (r.Off+r.Bits()+7)/8 <= len(b)
}

func (r Ref) errorf(format string, a ...any) error {
	return &PathError{Path: r.Path, Reason: fmt.Sprintf(format, a...)}
}

func (r Ref) short(b []byte) error {
	return r.errorf("buffer of %d bytes ends before the component (bits %d to %d)", len(b), r.Off, r.Off+r.Bits()-1)
}

// Uint reads an integer component of at most 64 bits (a GUID too). It gives
// 0 when b is too short or the component is wider; Read says why.
func (r Ref) Uint(b []byte) uint64 {
	v, _ := r.Read(b)
	return v
}

// Read is Uint with the reason when there is no integer to read.
func (r Ref) Read(b []byte) (uint64, error) {
	if !r.Scalar() || r.Bits() > 64 {
		return 0, r.errorf("is a %d-bit %s, not an integer", r.Bits(), kindWord(r))
	}
	if !r.fits(b) {
		return 0, r.short(b)
	}
	return getBits(b, r.Off, r.Bits()), nil
}

// SetUint writes an integer component, refusing a value that does not fit
// its width.
func (r Ref) SetUint(b []byte, v uint64) error {
	w := r.Bits()
	if !r.Scalar() || w > 64 {
		return r.errorf("is a %d-bit %s, not an integer", w, kindWord(r))
	}
	if w < 64 && v>>w != 0 {
		return r.errorf("value %d does not fit in %d bits (0 to %d)", v, w, uint64(1)<<w-1)
	}
	if !r.fits(b) {
		return r.short(b)
	}
	putBits(b, r.Off, w, v)
	return nil
}

// GUID reads a 64-bit component as a GUID; 0 when b is too short.
func (r Ref) GUID(b []byte) GUID {
	if r.Bits() != 64 || !r.Scalar() {
		return 0
	}
	return GUID(r.Uint(b))
}

// SetGUID writes a 64-bit component.
func (r Ref) SetGUID(b []byte, g GUID) error {
	if r.Bits() != 64 {
		return r.errorf("is %d bits wide, a GUID needs 64", r.Bits())
	}
	return r.SetUint(b, uint64(g))
}

// GID reads a 128-bit component; the zero GID when b is too short or the
// component is not 128 bits wide.
func (r Ref) GID(b []byte) GID {
	var g GID
	if r.Bits() != 128 || !r.Scalar() || !r.fits(b) {
		return g
	}
	if r.Off%8 == 0 {
		copy(g[:], b[r.Off/8:])
		return g
	}
	binary.BigEndian.PutUint64(g[:8], getBits(b, r.Off, 64))
	binary.BigEndian.PutUint64(g[8:], getBits(b, r.Off+64, 64))
	return g
}

// SetGID writes a 128-bit component.
func (r Ref) SetGID(b []byte, g GID) error {
	if r.Bits() != 128 || !r.Scalar() {
		return r.errorf("is %d bits wide, a GID needs 128", r.Bits())
	}
	if !r.fits(b) {
		return r.short(b)
	}
	putBits(b, r.Off, 64, binary.BigEndian.Uint64(g[:8]))
	putBits(b, r.Off+64, 64, binary.BigEndian.Uint64(g[8:]))
	return nil
}

// Bytes gives the bytes of a byte-aligned component (a blob, a string, a
// whole array or a nested structure) as a sub-slice of b, nil when b is too
// short or the component does not start and end on a byte boundary.
func (r Ref) Bytes(b []byte) []byte {
	if r.Off%8 != 0 || r.Bits()%8 != 0 || !r.fits(b) {
		return nil
	}
	return b[r.Off/8 : (r.Off+r.Bits())/8]
}

// SetBytes copies v into a byte-aligned component, zero filling the rest;
// v may not be longer than the component.
func (r Ref) SetBytes(b []byte, v []byte) error {
	if r.Off%8 != 0 || r.Bits()%8 != 0 {
		return r.errorf("is not byte aligned")
	}
	if !r.fits(b) {
		return r.short(b)
	}
	dst := b[r.Off/8 : (r.Off+r.Bits())/8]
	if len(v) > len(dst) {
		return r.errorf("%d bytes do not fit in %d", len(v), len(dst))
	}
	n := copy(dst, v)
	clear(dst[n:])
	return nil
}

// String reads a text component (NodeDescription, ServiceName): the bytes up
// to the first NUL.
func (r Ref) String(b []byte) string {
	v := r.Bytes(b)
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

// SetString writes a text component, zero padded; text longer than the
// component is refused rather than cut.
func (r Ref) SetString(b []byte, s string) error {
	if r.Off%8 != 0 || r.Bits()%8 != 0 {
		return r.errorf("is not byte aligned")
	}
	if n := r.Bits() / 8; len(s) > n {
		return r.errorf("%q is %d bytes, the field holds %d", s, len(s), n)
	}
	return r.SetBytes(b, []byte(s))
}

// isText reports whether the component holds text: a string component, or
// an array of bytes declared as one.
func (r Ref) isText() bool {
	return r.Field.Kind == KindString && r.Index < 0
}

// isBlob reports whether the Ref names a run of bytes read as a whole.
func (r Ref) isBlob() bool {
	return r.Index < 0 && r.Field.Array && r.Field.Bits == 8 && r.Field.Kind != KindStruct
}

func kindWord(r Ref) string {
	switch {
	case r.Field.Kind == KindStruct && (r.Index >= 0 || !r.Field.Array):
		return "structure"
	case r.Field.Array && r.Index < 0:
		return fmt.Sprintf("array of %d", r.Field.Count)
	case r.Field.Kind == KindGID:
		return "GID"
	case r.Field.Kind == KindGUID:
		return "GUID"
	case r.Field.Kind == KindString:
		return "string"
	case r.Field.Kind == KindBytes:
		return "byte blob"
	}
	return "integer"
}

// Text reads the component and spells it as SetText accepts it: an integer
// in decimal (hexadecimal for hex-hinted ones), an enumeration by name, a
// GUID as 0x0002c90300001491, a GID in IPv6 form, text as is, a blob in hex.
func (r Ref) Text(b []byte) (string, error) {
	if !r.fits(b) {
		return "", r.short(b)
	}
	switch {
	case r.isText():
		return r.String(b), nil
	case r.isBlob():
		return hex.EncodeToString(r.Bytes(b)), nil
	case !r.Scalar():
		return "", r.errorf("is a %s; name a component or element of it", kindWord(r))
	case r.Field.Kind == KindGID || r.Bits() == 128:
		return r.GID(b).String(), nil
	case r.Field.Kind == KindGUID:
		return r.GUID(b).String(), nil
	case r.Bits() > 64:
		return "", r.errorf("is a %d-bit %s", r.Bits(), kindWord(r))
	}
	v := r.Uint(b)
	if r.Field.Enum != nil {
		if s := r.Field.Enum(v); !strings.HasPrefix(s, "unknown(") {
			return s, nil
		}
	}
	switch r.Field.Hint {
	case HintHex:
		return fmt.Sprintf("0x%0*x", (r.Bits()+3)/4, v), nil
	case HintGIDPrefix:
		return MakeGID(v, 0).String() + "/64", nil
	}
	return strconv.FormatUint(v, 10), nil
}

// SetText parses text by the component's kind and writes it:
//   - integers in decimal or 0x hexadecimal, enumerations also by their
//     name (Active, 2048, Switch), 64-bit ones also in GUID spelling, a GID
//     prefix also as an IPv6 prefix (fe80::/64);
//   - GUIDs as 0x0002c90300001491, 0002c90300001491 or 0002:c903:0000:1491;
//   - GIDs in any IPv6 spelling;
//   - text zero padded, refused when too long;
//   - byte blobs as hex digits (optional 0x), zero padded.
//
// Errors name the path and say what was expected.
func (r Ref) SetText(b []byte, text string) error {
	t := strings.TrimSpace(text)
	switch {
	case r.isText():
		return r.SetString(b, text)
	case r.isBlob():
		h := strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
		if len(h)%2 == 1 {
			h = "0" + h
		}
		v, err := hex.DecodeString(h)
		if err != nil {
			return &PathError{Path: r.Path, Reason: fmt.Sprintf("%q is not hex bytes", text), Err: err}
		}
		return r.SetBytes(b, v)
	case !r.Scalar():
		return r.errorf("is a %s; give %s[i] or a component of it", kindWord(r), r.Path)
	case r.Field.Kind == KindGID || r.Bits() == 128:
		g, err := ParseGID(t)
		if err != nil {
			return &PathError{Path: r.Path, Reason: err.Error(), Err: err}
		}
		return r.SetGID(b, g)
	case r.Field.Kind == KindGUID:
		g, err := ParseGUID(t)
		if err != nil {
			return &PathError{Path: r.Path, Reason: err.Error(), Err: err}
		}
		return r.SetGUID(b, g)
	case r.Bits() > 64:
		return r.errorf("is a %d-bit %s and cannot be set from text", r.Bits(), kindWord(r))
	}
	v, err := r.parseUint(t)
	if err != nil {
		return err
	}
	return r.SetUint(b, v)
}

func (r Ref) parseUint(t string) (uint64, error) {
	var v uint64
	var err error
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		v, err = strconv.ParseUint(t[2:], 16, 64)
	} else {
		v, err = strconv.ParseUint(t, 10, 64)
	}
	if err == nil {
		return v, nil
	}
	w := r.Bits()
	if r.Field.Enum != nil && w <= 16 {
		for i := uint64(0); i < 1<<w; i++ {
			if s := r.Field.Enum(i); strings.EqualFold(s, t) && !strings.HasPrefix(s, "unknown(") {
				return i, nil
			}
		}
	}
	if r.Field.Hint == HintGIDPrefix {
		p := strings.TrimSuffix(t, "/64")
		if a, err2 := netip.ParseAddr(p); err2 == nil && a.Is6() {
			return GID(a.As16()).Prefix(), nil
		}
	}
	if w == 64 && strings.Contains(t, ":") {
		if g, err2 := ParseGUID(t); err2 == nil {
			return uint64(g), nil
		}
	}
	want := "a decimal or 0x-hex integer"
	if r.Field.Enum != nil {
		want += " or a name such as " + strconv.Quote(r.Field.Enum(firstNamed(r.Field.Enum, w)))
	}
	return 0, &PathError{Path: r.Path, Reason: fmt.Sprintf("%q is not %s", t, want), Err: err}
}

func firstNamed(enum func(uint64) string, w int) uint64 {
	for i := uint64(0); i < 1<<min(w, 16); i++ {
		if !strings.HasPrefix(enum(i), "unknown(") {
			return i
		}
	}
	return 0
}
