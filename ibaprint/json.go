package ibaprint

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// JSON writes the structure s held in b as one JSON object (the schema is in
// the package documentation), indented by two spaces and ending in a
// newline.
func JSON(w io.Writer, s *iba.Struct, b []byte) error {
	if s == nil {
		return fmt.Errorf("json: no structure")
	}
	if len(b) < s.Size {
		return &iba.DecodeError{Struct: s.Name, Offset: len(b), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(b), s.Size)}
	}
	if !dataLast(s) {
		b = b[:s.Size]
	}
	j := &jsonWriter{}
	if s.Format != nil || hasData(s) {
		j.d.readHeader(s, b)
	}
	j.object(s, b, 0, 0, true)
	j.sb.WriteByte('\n')
	_, err := io.WriteString(w, j.sb.String())
	return err
}

type jsonWriter struct {
	sb strings.Builder
	d  dumper // only its MAD header fields
}

func (j *jsonWriter) indent(n int) {
	j.sb.WriteByte('\n')
	j.sb.WriteString(strings.Repeat("  ", n))
}

// object writes the components of s found at bit offset base of b.
func (j *jsonWriter) object(s *iba.Struct, b []byte, base, depth int, top bool) {
	j.sb.WriteByte('{')
	first := true
	mems := flatten(s, 0, nil)
	for k, m := range mems {
		f := m.f
		if f.Reserved {
			continue
		}
		if !first {
			j.sb.WriteByte(',')
		}
		first = false
		j.indent(depth + 1)
		j.sb.WriteString(strconv.Quote(f.Name))
		j.sb.WriteString(": ")
		off := base + m.off
		switch {
		case f.Hint == iba.HintData && top && k == len(mems)-1:
			j.data(b[off/8:], depth+1)
		case f.Hint == iba.HintData && top:
			j.data(b[off/8:(off+f.Bits*f.Count)/8], depth+1)
		default:
			j.component(f, b, off, depth+1)
		}
	}
	if !first {
		j.indent(depth)
	}
	j.sb.WriteByte('}')
}

// component writes one component: an object, an array or a value.
func (j *jsonWriter) component(f *iba.Field, b []byte, off, depth int) {
	switch {
	case f.Kind == iba.KindStruct && f.Struct != nil && !f.Array:
		j.object(f.Struct, b, off, depth, false)
	case isText(f):
		j.sb.WriteString(quoteJSON(cleanText(bytesAt(b, off, f.Bits*f.Count))))
	case f.Kind == iba.KindBytes || f.Hint == iba.HintData:
		j.sb.WriteString(strconv.Quote(hex.EncodeToString(bytesAt(b, off, f.Bits*f.Count))))
	case f.Array:
		j.sb.WriteByte('[')
		for i := 0; i < f.Count; i++ {
			if i > 0 {
				j.sb.WriteString(", ")
			}
			eo := off + i*f.Bits
			if f.Kind == iba.KindStruct && f.Struct != nil {
				j.indent(depth + 1)
				j.object(f.Struct, b, eo, depth+1, false)
				continue
			}
			j.sb.WriteString(jsonValue(f, b, eo))
		}
		if f.Kind == iba.KindStruct && f.Count > 0 {
			j.indent(depth)
		}
		j.sb.WriteByte(']')
	default:
		j.sb.WriteString(jsonValue(f, b, off))
	}
}

// data writes a format's data area: the attribute the header names, an
// array of records for an SA table reply, or hex when the attribute is
// unknown or does not fit.
func (j *jsonWriter) data(region []byte, depth int) {
	d := &j.d
	attr, ok := iba.LookupAttr(d.class, d.attrID)
	if !d.mad || !ok {
		j.sb.WriteString(strconv.Quote(hex.EncodeToString(region)))
		return
	}
	if d.table() {
		step := int(d.attrOffset) * 8
		if !d.hasAttrOff || step < attr.Size {
			step = (attr.Size + 7) / 8 * 8
		}
		j.sb.WriteByte('[')
		n := 0
		for o := 0; o+attr.Size <= len(region) && lastNonZero(region[o:]) >= 0; o += step {
			if n > 0 {
				j.sb.WriteByte(',')
			}
			j.indent(depth + 1)
			j.object(attr, region[o:o+attr.Size], 0, depth+1, false)
			n++
		}
		if n > 0 {
			j.indent(depth)
		}
		j.sb.WriteByte(']')
		return
	}
	if attr.Size > len(region) {
		j.sb.WriteString(strconv.Quote(hex.EncodeToString(region)))
		return
	}
	j.object(attr, region[:attr.Size], 0, depth, false)
}

// jsonValue spells one scalar: GUIDs as "0x0002c90300001491", GIDs and GID
// prefixes as IPv6 text, everything else as a JSON number (64-bit counters
// included, exactly).
func jsonValue(f *iba.Field, b []byte, off int) string {
	switch {
	case f.Kind == iba.KindGID || f.Bits == 128:
		var g iba.GID
		copy(g[:], bytesAt(b, off, 128))
		return strconv.Quote(g.String())
	case f.Bits > 64:
		return strconv.Quote(hex.EncodeToString(bytesAt(b, off, f.Bits)))
	case isGUID(f):
		return strconv.Quote(iba.GUID(getBits(b, off, 64)).String())
	case f.Hint == iba.HintGIDPrefix:
		return strconv.Quote(iba.MakeGID(getBits(b, off, f.Bits), 0).String())
	}
	return strconv.FormatUint(getBits(b, off, f.Bits), 10)
}

// quoteJSON quotes text for JSON (strconv.Quote escapes are Go's, not
// JSON's).
func quoteJSON(s string) string {
	v, err := json.Marshal(s)
	if err != nil {
		return `""`
	}
	return string(v)
}
