package ibaprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// DumpOptions adjusts Dump.
type DumpOptions struct {
	// Offset is added to every printed byte offset, for a structure that
	// sits inside a larger buffer.
	Offset int
	// NoHeader leaves out the first line (the MAD description or the
	// structure name).
	NoHeader bool
}

// Dump writes the packet dump of the structure s held in b (see the package
// documentation for the layout). A MAD format's data component is decoded as
// the attribute its class and attribute ID name. b must hold s; it may be
// longer, and for a format whose data component comes last (SAFormat, the
// vendor formats) the extra bytes are a longer data area, as after RMPP
// reassembly.
func Dump(w io.Writer, s *iba.Struct, b []byte, opts DumpOptions) error {
	if s == nil {
		return fmt.Errorf("dump: no structure")
	}
	if len(b) < s.Size {
		return &iba.DecodeError{Struct: s.Name, Offset: len(b), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(b), s.Size)}
	}
	d := &dumper{}
	if !dataLast(s) {
		b = b[:s.Size]
	}
	if s.Format != nil || hasData(s) {
		d.readHeader(s, b)
	}
	if !opts.NoHeader {
		d.sb.WriteString(d.describe(s))
		d.sb.WriteByte('\n')
	}
	d.dumpStruct(s, b, opts.Offset, "", true)
	_, err := io.WriteString(w, d.sb.String())
	return err
}

// DumpMAD writes the packet dump of a whole MAD: the format is found from
// the management class in byte 1 (the directed-route SMP format for class
// 0x81), the data area decoded by the attribute ID in bytes 16-17, an SA
// table reply decoded record after record. A MAD of an unknown class is
// dumped as its common header and raw words, with a line saying why. A
// buffer too short for its format, or longer than a format that cannot grow,
// is an *iba.DecodeError naming the offset.
func DumpMAD(w io.Writer, mad []byte) error {
	hdr, _ := iba.StructByName("MADHeader")
	if hdr == nil {
		return fmt.Errorf("dump: no MADHeader declaration")
	}
	if len(mad) < hdr.Size {
		return &iba.DecodeError{Struct: "MAD", Offset: len(mad), Reason: fmt.Sprintf("a MAD starts with a %d-byte common header; the buffer has %d bytes", hdr.Size, len(mad))}
	}
	class := iba.Class(mad[1])
	s, ok := formatFor(class)
	if !ok {
		d := &dumper{}
		fmt.Fprintf(&d.sb, "MAD class 0x%02x (%s): no format is declared for this class; its common header and raw words follow\n", uint8(class), className(class))
		d.dumpStruct(hdr, mad[:hdr.Size], 0, "", false)
		d.rawWords(mad[hdr.Size:], hdr.Size, true)
		_, err := io.WriteString(w, d.sb.String())
		return err
	}
	if len(mad) < s.Size {
		return &iba.DecodeError{Struct: s.Name, Offset: len(mad), Reason: fmt.Sprintf("a %s MAD is %d bytes; the buffer ends after %d", className(class), s.Size, len(mad))}
	}
	if len(mad) > s.Size && !dataLast(s) {
		return &iba.DecodeError{Struct: s.Name, Offset: s.Size, Reason: fmt.Sprintf("a %s MAD is %d bytes; the buffer has %d", className(class), s.Size, len(mad))}
	}
	return Dump(w, s, mad, DumpOptions{})
}

// formatFor finds the MAD format of a class; the directed-route SMP format
// is not registered by class, being the same class's other routing.
func formatFor(c iba.Class) (*iba.Struct, bool) {
	if c == iba.ClassSubnMgtDirected {
		if s, ok := iba.StructByName("SMPFormatDirected"); ok {
			return s, true
		}
	}
	return iba.FormatOf(c)
}

func className(c iba.Class) string {
	s := c.String()
	if strings.HasPrefix(s, "unknown") {
		return "unknown"
	}
	return s
}

type dumper struct {
	sb strings.Builder
	// From the MAD header, when the structure is a format.
	mad        bool
	class      iba.Class
	classVer   uint8
	baseVer    uint8
	method     uint8
	attrID     uint16
	attrOffset uint64
	hasAttrOff bool
}

func (d *dumper) readHeader(s *iba.Struct, b []byte) {
	get := func(p string) (uint64, bool) {
		r, err := s.Lookup(p)
		if err != nil {
			return 0, false
		}
		v, err := r.Read(b)
		return v, err == nil
	}
	c, ok1 := get("mgmtClass")
	a, ok2 := get("attributeID")
	m, _ := get("method")
	bv, _ := get("baseVersion")
	cv, _ := get("classVersion")
	d.mad = ok1 && ok2
	d.class, d.attrID, d.method = iba.Class(c), uint16(a), uint8(m)
	d.baseVer, d.classVer = uint8(bv), uint8(cv)
	d.attrOffset, d.hasAttrOff = get("attributeOffset")
}

// describe is the first line: for a MAD, the format, the method, the class
// with its version and the attribute, each name followed by its number
// ("SMPFormat GetResp(0x81) SubnMgt(1.1) NodeInfo(0x11)"); otherwise the
// structure's name.
func (d *dumper) describe(s *iba.Struct) string {
	if !d.mad {
		return s.Name
	}
	attr := "?"
	if a, ok := iba.LookupAttr(d.class, d.attrID); ok {
		attr = a.Name
	}
	line := fmt.Sprintf("%s %s(0x%02x) %s(%d.%d) %s(0x%x)", s.Name, methodName(d.method), d.method,
		className(d.class), uint8(d.class), d.classVer, attr, d.attrID)
	if d.baseVer != 1 {
		line += fmt.Sprintf(" [base version %d, not 1]", d.baseVer)
	}
	if s.Format != nil && s.Format.Version != d.classVer && (s.Format.Class == uint8(d.class) || iba.Class(s.Format.Class).IsVendor()) {
		line += fmt.Sprintf(" [class version %d; %s is version %d]", d.classVer, s.Name, s.Format.Version)
	}
	return line
}

func methodName(m uint8) string {
	s := iba.Method(m).String()
	if strings.HasPrefix(s, "unknown") {
		return "?"
	}
	return s
}

// member is a component at its bit offset in the structure being dumped,
// embedded headers flattened.
type member struct {
	f   *iba.Field
	off int
}

func flatten(s *iba.Struct, base int, out []member) []member {
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Embedded && f.Struct != nil {
			out = flatten(f.Struct, base+f.Off, out)
			continue
		}
		out = append(out, member{f, base + f.Off})
	}
	return out
}

func hasData(s *iba.Struct) bool {
	for _, m := range flatten(s, 0, nil) {
		if m.f.Hint == iba.HintData {
			return true
		}
	}
	return false
}

// dataLast reports whether the structure ends with its data area, which
// RMPP reassembly may make longer.
func dataLast(s *iba.Struct) bool {
	ms := flatten(s, 0, nil)
	return len(ms) > 0 && ms[len(ms)-1].f.Hint == iba.HintData
}

func lastNonZero(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// word writes one line: the offset, the word in hex, the members that
// start in it. A short final word shows the bytes there are.
func (d *dumper) word(b []byte, cur, base int, parts []string) {
	fmt.Fprintf(&d.sb, "%3d ", base+cur)
	for i := cur; i < cur+4; i++ {
		if i < len(b) {
			fmt.Fprintf(&d.sb, "%02X", b[i])
		}
	}
	if len(parts) > 0 {
		d.sb.WriteByte(' ')
		d.sb.WriteString(strings.Join(parts, ","))
	}
	d.sb.WriteByte('\n')
}

// rawWords prints b a word per line, leaving out all-zero words at the end
// (but always the first) when trim is set.
func (d *dumper) rawWords(b []byte, base int, trim bool) {
	end := len(b)
	if trim {
		end = max((lastNonZero(b)+4)/4*4, 4)
	}
	for cur := 0; cur < end && cur < len(b); cur += 4 {
		d.word(b, cur, base, nil)
	}
}

// dumpStruct is python-rdma's struct_dump: a line per 32-bit word with the
// members that start in it; nested structures, decoded data and aligned
// arrays get lines of their own.
func (d *dumper) dumpStruct(s *iba.Struct, b []byte, base int, prefix string, top bool) {
	mems := flatten(s, 0, nil)
	size := len(b)
	nz := lastNonZero(b)
	idx, cur, off := 0, 0, 0
	var parts []string
	for cur < size {
		if idx >= len(mems) && cur > nz {
			break
		}
		start := cur
		for idx < len(mems) && mems[idx].off < cur*8+32 {
			m := mems[idx]
			idx++
			f := m.f
			bits := f.Bits * max(f.Count, 1)
			if f.Hint == iba.HintData && idx == len(mems) {
				bits = size*8 - m.off // the data area runs to the end
			}
			end := m.off + bits
			off = max(off, end)
			aligned := m.off%32 == 0 && bits%32 == 0 && len(parts) == 0
			name := prefix + f.Name
			switch {
			case aligned && f.Hint == iba.HintData && top && d.mad:
				d.data(b[m.off/8:end/8], base+m.off/8, name)
				cur = end / 8
			case aligned && f.Kind == iba.KindStruct && f.Struct != nil && !f.Array:
				fmt.Fprintf(&d.sb, "   + %s %s\n", name, f.Struct.Name)
				d.dumpStruct(f.Struct, b[m.off/8:end/8], base+m.off/8, name+".", false)
				fmt.Fprintf(&d.sb, "   - %s\n", name)
				cur = end / 8
			case aligned && f.Kind == iba.KindStruct && f.Struct != nil:
				eb := f.Bits / 8
				for i := 0; i < f.Count; i++ {
					o := m.off/8 + i*eb
					en := fmt.Sprintf("%s[%d]", name, i)
					fmt.Fprintf(&d.sb, "   + %s %s\n", en, f.Struct.Name)
					d.dumpStruct(f.Struct, b[o:o+eb], base+o, en+".", false)
				}
				fmt.Fprintf(&d.sb, "   - %s\n", name)
				cur = end / 8
			case aligned && f.Array && f.Count > 1 && f.Kind != iba.KindBytes && !isText(f):
				d.arrayDump(f, b, m.off, base)
				cur = end / 8
			case aligned && (f.Kind == iba.KindBytes || f.Hint == iba.HintData || isText(f)):
				if isText(f) {
					parts = append(parts, f.Name+"="+dumpValue(f, b, m.off, -1))
				} else {
					parts = append(parts, fmt.Sprintf("%s=<%d bytes>", f.Name, bits/8))
				}
				// Zeros at the end of a blob say nothing: leave their words out.
				blobEnd := m.off/8 + max((lastNonZero(b[m.off/8:end/8])+4)/4*4, 4)
				for cur < blobEnd {
					d.word(b, cur, base, parts)
					parts = nil
					cur += 4
				}
				cur = end / 8
			default:
				parts = append(parts, f.Name+"="+dumpValue(f, b, m.off, -1))
			}
		}
		printed := false
		for off > cur*8 && cur < size {
			d.word(b, cur, base, parts)
			parts = nil
			cur += 4
			printed = true
		}
		if !printed && cur == start {
			// Bytes no member covers: show them anyway.
			d.word(b, cur, base, parts)
			parts = nil
			cur += 4
		}
	}
}

// arrayDump prints an aligned array beside its words: each element on the
// line of the word it starts in.
func (d *dumper) arrayDump(f *iba.Field, b []byte, off, base int) {
	bits := f.Bits * f.Count
	i := 0
	for cur := off / 8; cur < (off+bits)/8; cur += 4 {
		var els []string
		for i < f.Count && off+i*f.Bits < cur*8+32 {
			v := dumpValue(f, b, off+i*f.Bits, i)
			switch {
			case i == 0 && f.Count == 1:
				els = append(els, fmt.Sprintf("%s=[0:%s]", f.Name, v))
			case i == 0:
				els = append(els, fmt.Sprintf("%s=[0:%s", f.Name, v))
			case i == f.Count-1:
				els = append(els, fmt.Sprintf("%d:%s]", i, v))
			default:
				els = append(els, fmt.Sprintf("%d:%s", i, v))
			}
			i++
		}
		var parts []string
		if len(els) > 0 {
			parts = []string{strings.Join(els, ", ")}
		}
		d.word(b, cur, base, parts)
	}
}

// data decodes a format's data area by the attribute the MAD header names:
// one attribute, or for an SA table reply the records one after another.
func (d *dumper) data(region []byte, base int, name string) {
	attr, ok := iba.LookupAttr(d.class, d.attrID)
	if !ok {
		fmt.Fprintf(&d.sb, "   + %s: attribute 0x%04x is not declared for class %s; raw words\n", name, d.attrID, className(d.class))
		d.rawWords(region, base, true)
		fmt.Fprintf(&d.sb, "   - %s\n", name)
		return
	}
	if d.table() {
		d.records(attr, region, base, name)
		return
	}
	if attr.Size > len(region) {
		fmt.Fprintf(&d.sb, "   + %s %s: %d bytes, the data area holds %d; raw words\n", name, attr.Name, attr.Size, len(region))
		d.rawWords(region, base, true)
		fmt.Fprintf(&d.sb, "   - %s\n", name)
		return
	}
	fmt.Fprintf(&d.sb, "   + %s %s\n", name, attr.Name)
	d.dumpStruct(attr, region[:attr.Size], base, name+".", false)
	fmt.Fprintf(&d.sb, "   - %s\n", name)
	if rest := region[attr.Size:]; lastNonZero(rest) >= 0 {
		// Bytes after the attribute that are not zero are worth seeing.
		d.rawWords(rest, base+attr.Size, true)
	}
}

// table reports whether the MAD is an SA reply carrying several records.
func (d *dumper) table() bool {
	if d.class != iba.ClassSubnAdm {
		return false
	}
	switch iba.Method(d.method) {
	case iba.MethodGetTableResp, iba.MethodGetMultiResp, iba.MethodGetTraceTable | iba.MethodResponseBit:
		return true
	}
	return false
}

// records decodes an SA table: AttributeOffset gives the record spacing in
// 8-byte words (IBA 15.2.1.1); records stop at the first all-zero tail, and
// a record cut short (the rest is in later RMPP segments) is shown raw.
func (d *dumper) records(attr *iba.Struct, region []byte, base int, name string) {
	step := int(d.attrOffset) * 8
	if !d.hasAttrOff || step < attr.Size {
		step = (attr.Size + 7) / 8 * 8
	}
	for i, o := 0, 0; o < len(region); i, o = i+1, o+step {
		rest := region[o:]
		if lastNonZero(rest) < 0 {
			break
		}
		en := name + "[" + strconv.Itoa(i) + "]"
		if len(rest) < attr.Size {
			fmt.Fprintf(&d.sb, "   + %s %s: %d of its %d bytes here, the rest follows in the next RMPP segment; raw words\n", en, attr.Name, len(rest), attr.Size)
			d.rawWords(rest, base+o, false)
			fmt.Fprintf(&d.sb, "   - %s\n", en)
			break
		}
		fmt.Fprintf(&d.sb, "   + %s %s\n", en, attr.Name)
		d.dumpStruct(attr, rest[:attr.Size], base+o, en+".", false)
		fmt.Fprintf(&d.sb, "   - %s\n", en)
	}
}

// dumpValue spells one value for the dump: integers in decimal, hex-hinted
// ones as 0x with the width's digits, enumerations as Name(value), GUIDs as
// python-rdma does (0002:c903:0000:1491), GIDs in IPv6 form, text quoted.
func dumpValue(f *iba.Field, b []byte, off, idx int) string {
	bits := f.Bits
	if idx < 0 && f.Array && f.Count > 1 {
		bits = f.Bits * f.Count
	}
	switch {
	case isText(f) && idx < 0:
		return strconv.Quote(cleanText(bytesAt(b, off, bits)))
	case f.Kind == iba.KindBytes && idx < 0:
		return fmt.Sprintf("<%d bytes>", bits/8)
	case f.Kind == iba.KindGID || bits == 128:
		var g iba.GID
		copy(g[:], bytesAt(b, off, 128))
		return g.String()
	case bits > 64:
		return fmt.Sprintf("0x%X", bytesAt(b, off, bits))
	}
	v := getBits(b, off, bits)
	switch {
	case isGUID(f):
		return iba.GUID(v).Colon()
	case f.Enum != nil:
		if t := f.Enum(v); !strings.HasPrefix(t, "unknown(") {
			return t + "(" + strconv.FormatUint(v, 10) + ")"
		}
	case f.Hint == iba.HintHex:
		return fmt.Sprintf("0x%0*x", (bits+3)/4, v)
	case f.Hint == iba.HintGIDPrefix:
		return iba.MakeGID(v, 0).String() + "/64"
	}
	return strconv.FormatUint(v, 10)
}

// cleanText is the text up to the first NUL.
func cleanText(v []byte) string {
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

// isGUID reports whether a component holds a GUID: declared so, or a 64-bit
// integer the IBA names a GUID (NodeInfo:NodeGUID is one whichever way the
// declaration spells its type).
func isGUID(f *iba.Field) bool {
	return f.Kind == iba.KindGUID || (f.Bits == 64 && f.Kind == iba.KindUint && strings.HasSuffix(strings.ToUpper(f.Name), "GUID"))
}

// isText reports whether a component holds text: declared so, or an array
// of bytes the IBA names a string or a name (NodeDescription:NodeString,
// ServiceRecord:ServiceName), whichever way the declaration spells its type.
func isText(f *iba.Field) bool {
	if f.Kind == iba.KindString {
		return true
	}
	return f.Array && f.Bits == 8 && f.Kind == iba.KindUint &&
		(strings.HasSuffix(f.Name, "String") || strings.HasSuffix(f.Name, "Name"))
}
