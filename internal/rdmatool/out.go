package rdmatool

import (
	"fmt"
	"io"
	"strconv"
)

// Output targets, as iproute2's json_print names them: a value printed with
// anyOut goes to the text or to the JSON document, whichever is active;
// fpOut only to text; jsonOut only to JSON.
type target uint8

const (
	fpOut target = 1 << iota
	jsonOut
	anyOut = fpOut | jsonOut
)

// printer reproduces the observable behaviour of iproute2's json_print and
// json_writer (lib/json_print.c, lib/json_writer.c) and of rdma's newline
// helpers as of iproute2 6.15: the same separators, the same
// pretty-printing and escapes, the same "JSON context only while a document
// is open" rule. Byte-identical output depends on it.
type printer struct {
	w       io.Writer
	json    bool        // -j
	pretty  bool        // -p: pretty JSON; it changes nothing in text
	oneline bool        // -o
	jw      *jsonWriter // non-nil while a JSON document is open
}

func (p *printer) text(s string) { io.WriteString(p.w, s) }

// sl is iproute2's _SL_, the line separator of text output: a backslash
// with -o (--oneline), so that a record's continuation lines stay on its
// line, as ip -o prints them.
func (p *printer) sl() string {
	if p.oneline {
		return "\\"
	}
	return "\n"
}

// fp prints s in text mode only.
func (p *printer) fp(s string) {
	if p.jw == nil {
		p.text(s)
	}
}

// newDoc opens a JSON document (an array), if -j; iproute2's new_json_obj.
func (p *printer) newDoc() {
	if p.json {
		p.jw = &jsonWriter{w: p.w, pretty: p.pretty}
		p.jw.startArray()
	}
}

// endDoc closes it; iproute2's delete_json_obj.
func (p *printer) endDoc() {
	if p.jw != nil {
		p.jw.endArray()
		p.jw.destroy()
		p.jw = nil
	}
}

func (p *printer) openObject() {
	if p.jw != nil {
		p.jw.startObject()
	}
}

func (p *printer) closeObject() {
	if p.jw != nil {
		p.jw.endObject()
	}
}

// newline ends a record: iproute2's close_json_object() and newline(),
// which prints a line break in JSON output too, so that each record of a
// JSON array ends its line and the next one's comma starts the following.
func (p *printer) newline() {
	p.closeObject()
	p.text("\n")
}

// newlineIndent starts a continuation line of a record, in text only
// (iproute2's newline_indent).
func (p *printer) newlineIndent() { p.fp(p.sl() + "    ") }

// printNL ends a line of text output: iproute2's print_nl, nothing in JSON.
func (p *printer) printNL() { p.fp(p.sl()) }

// openArray and closeArray: in text, str is printed as the array's
// delimiter; in JSON, str names the array.
func (p *printer) openArray(t target, str string) {
	switch {
	case p.jw != nil && t&jsonOut != 0:
		if str != "" {
			p.jw.name(str)
		}
		p.jw.startArray()
	case p.jw == nil && t&fpOut != 0:
		p.text(str)
	}
}

func (p *printer) closeArray(t target, str string) {
	switch {
	case p.jw != nil && t&jsonOut != 0:
		p.jw.endArray()
	case p.jw == nil && t&fpOut != 0:
		p.text(str)
	}
}

// str prints a string value: txt in text mode (already formatted), the
// value under key in JSON (a bare array element when key is "").
func (p *printer) str(t target, key, txt, val string) {
	switch {
	case p.jw != nil && t&jsonOut != 0:
		if key != "" {
			p.jw.name(key)
		}
		p.jw.str(val)
	case p.jw == nil && t&fpOut != 0:
		p.text(txt)
	}
}

// num prints an unsigned number; JSON gets it bare.
func (p *printer) num(t target, key, txt string, val uint64) {
	p.raw(t, key, txt, strconv.FormatUint(val, 10))
}

// inum prints a signed number.
func (p *printer) inum(t target, key, txt string, val int64) {
	p.raw(t, key, txt, strconv.FormatInt(val, 10))
}

// onOff prints a boolean: "on"/"off" through txtFmt in text, true/false in JSON.
func (p *printer) onOff(t target, key, txtFmt string, v bool) {
	s, j := "off", "false"
	if v {
		s, j = "on", "true"
	}
	p.raw(t, key, fmt.Sprintf(txtFmt, s), j)
}

func (p *printer) raw(t target, key, txt, jsonVal string) {
	switch {
	case p.jw != nil && t&jsonOut != 0:
		if key != "" {
			p.jw.name(key)
		}
		p.jw.value(jsonVal)
	case p.jw == nil && t&fpOut != 0:
		p.text(txt)
	}
}

// jsonWriter has json_writer's state machine: depth, a pending separator,
// and pretty-printing that puts each member on its own indented line.
type jsonWriter struct {
	w      io.Writer
	depth  int
	pretty bool
	sep    byte
}

func (j *jsonWriter) put(s string) { io.WriteString(j.w, s) }

func (j *jsonWriter) indent() {
	for range j.depth {
		j.put("    ")
	}
}

func (j *jsonWriter) eol() {
	if !j.pretty {
		return
	}
	j.put("\n")
	j.indent()
}

func (j *jsonWriter) eor() {
	if j.sep != 0 {
		j.put(string(j.sep))
	}
	j.sep = ','
}

func (j *jsonWriter) begin(c string) {
	j.eor()
	j.put(c)
	j.depth++
	j.sep = 0
}

func (j *jsonWriter) end(c string) {
	if j.depth > 0 {
		j.depth--
	}
	if j.sep != 0 {
		j.eol()
	}
	j.put(c)
	j.sep = ','
}

func (j *jsonWriter) startObject() { j.begin("{") }
func (j *jsonWriter) endObject()   { j.end("}") }

func (j *jsonWriter) startArray() {
	j.begin("[")
	if j.pretty {
		j.put(" ")
	}
}

func (j *jsonWriter) endArray() {
	if j.pretty && j.sep != 0 {
		j.put(" ")
	}
	j.sep = 0
	j.end("]")
}

func (j *jsonWriter) name(n string) {
	j.eor()
	j.eol()
	j.sep = 0
	j.quote(n)
	j.put(":")
	if j.pretty {
		j.put(" ")
	}
}

func (j *jsonWriter) value(v string) {
	j.eor()
	j.put(v)
}

func (j *jsonWriter) str(v string) {
	j.eor()
	j.quote(v)
}

func (j *jsonWriter) destroy() { j.put("\n") }

// quote escapes exactly what jsonw_puts escapes; other bytes pass through.
func (j *jsonWriter) quote(s string) {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\f':
			b = append(b, `\f`...)
		case '\b':
			b = append(b, `\b`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	b = append(b, '"')
	j.w.Write(b)
}
