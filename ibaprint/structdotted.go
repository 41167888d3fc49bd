package ibaprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// dottedColumn is where python-rdma's struct_dotted starts values.
const dottedColumn = 33

// StructDotted prints a structure as python-rdma's struct_dotted does with
// its defaults (the format of its ibtool query and saquery --int-names):
// one component per line, the name (first letter upper-cased; nested
// components after their structure's name and a dot) padded with dots to
// column 33, reserved components left out, short arrays inline as [0:v,
// 1:v, ...], arrays of wider elements one line per element. Values are
// spelled as iba's Ref.Text spells them, which is what iba.Ref.SetText
// (ibtool query -f) takes back.
func StructDotted(w io.Writer, s *iba.Struct, b []byte) error {
	if len(b) < s.Size {
		return fmt.Errorf("%s: %d bytes, want %d", s.Name, len(b), s.Size)
	}
	var sb strings.Builder
	if err := dotted(&sb, s, b, "", 0); err != nil {
		return err
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func dotted(w *strings.Builder, s *iba.Struct, b []byte, prefix string, base int) error {
	line := func(name, val string) {
		w.WriteString(name)
		w.WriteString(strings.Repeat(".", max(0, dottedColumn-len(name))))
		w.WriteString(val)
		w.WriteByte('\n')
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Reserved {
			continue
		}
		if f.Embedded && f.Struct != nil {
			if err := dotted(w, f.Struct, b, prefix, base+f.Off); err != nil {
				return err
			}
			continue
		}
		cname := prefix + strings.ToUpper(f.Name[:1]) + f.Name[1:]
		ref := iba.Ref{Path: prefix + f.Name, Off: base + f.Off, Field: f, Index: -1}
		switch {
		case f.Kind == iba.KindStruct && !f.Array:
			if err := dotted(w, f.Struct, b, prefix+f.Name+".", base+f.Off); err != nil {
				return err
			}
		case f.Kind == iba.KindStruct:
			for k := 0; k < f.Count; k++ {
				if err := dotted(w, f.Struct, b, fmt.Sprintf("%s%s[%d].", prefix, f.Name, k), base+f.Off+k*f.Bits); err != nil {
					return err
				}
			}
		case f.Array && f.Kind != iba.KindString && !(f.Bits == 8 && f.Kind == iba.KindBytes):
			vals := make([]string, f.Count)
			for k := range vals {
				el := ref
				el.Index, el.Off = k, ref.Off+k*f.Bits
				v, err := el.Text(b)
				if err != nil {
					return err
				}
				vals[k] = v
			}
			if f.Bits > 16 {
				for k, v := range vals {
					line(fmt.Sprintf("%s[%d]", cname, k), v)
				}
				continue
			}
			for k, v := range vals {
				vals[k] = fmt.Sprintf("%d:%s", k, v)
			}
			line(cname, "["+strings.Join(vals, ", ")+"]")
		default:
			v, err := ref.Text(b)
			if err != nil {
				return err
			}
			if f.Kind == iba.KindString {
				v = strconv.Quote(v)
			}
			line(cname, v)
		}
	}
	return nil
}
