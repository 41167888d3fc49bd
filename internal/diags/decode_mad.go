package diags

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/umad"
)

func init() {
	register(command{name: "decode_mad", make: newDecodeMAD})
}

// DecodeMADResult is what decode_mad found in its input.
type DecodeMADResult struct {
	// UMAD is the kernel's ib_user_mad header before the MAD, with --umad.
	UMAD *umad.Header `json:"umad,omitempty"`
	// Headers are the packet headers decoded before the MAD with -l.
	Headers []DecodedStruct `json:"headers,omitempty"`
	// MAD holds the format's components, the data area decoded as the
	// attribute its class and attribute ID name.
	MAD  DecodedStruct `json:"mad"`
	raw  []byte
	hdrs []rawStruct
}

type rawStruct struct {
	s *iba.Struct
	b []byte
}

// DecodedStruct is one structure with its components by IBA name.
type DecodedStruct struct {
	Name   string          `json:"name"`
	Fields json.RawMessage `json:"fields"`
}

func newDecodeMAD(e *Env) *cobra.Command {
	var offset int
	var lrh, umadHdr bool
	c := &cobra.Command{
		Use:   "decode_mad [HEX...]",
		Short: "decode a raw MAD given in hex (arguments or standard input)",
		Long: `decode_mad decodes a raw 256-byte MAD given in hex, as arguments or on
standard input; white space and a leading 0x are ignored. The MAD is printed
one 32-bit word a line with the components that start in it, and the
attribute in its data area decoded by its class and attribute ID.

As python-rdma's: input in quotes is a Python string literal with escapes
("\x01\x01..."), and --umad says the bytes start with the kernel's
ib_user_mad header (what /dev/infiniband/umadN reads), which is printed
first.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var text string
			if len(args) > 0 {
				text = strings.Join(args, " ")
			} else {
				b, err := io.ReadAll(io.LimitReader(e.Stdin, maxDecodeInput+1))
				if err != nil {
					return fmt.Errorf("reading standard input: %w", err)
				}
				if len(b) > maxDecodeInput {
					return fmt.Errorf("standard input: more than %d bytes: decode_mad reads one MAD in hex", maxDecodeInput)
				}
				text = string(b)
			}
			var raw []byte
			var err error
			if t := strings.TrimSpace(text); t != "" && (t[0] == '"' || t[0] == '\'') {
				raw, err = pyUnquote(t)
			} else {
				raw, err = parseHex(text)
			}
			if err != nil {
				return usagef("%v", err)
			}
			if offset < 0 || offset > len(raw) {
				return usagef("--offset %d is outside the %d bytes given", offset, len(raw))
			}
			raw = raw[offset:]
			var uh *umad.Header
			if umadHdr {
				h, err := umad.UnmarshalHeader(raw)
				if err != nil {
					return err
				}
				uh, raw = &h, raw[umad.HeaderSize:]
			}
			res, err := decodeMAD(raw, lrh)
			if err != nil {
				return err
			}
			res.UMAD = uh
			if e.JSON {
				return e.writeJSON("decode_mad", res)
			}
			return renderDecodeMAD(e.Stdout, res)
		},
	}
	c.Flags().IntVarP(&offset, "offset", "o", 0, "skip this many bytes of the input first")
	c.Flags().BoolVarP(&lrh, "lrh", "l", false, "the input starts with the LRH (and GRH when LNH says so), BTH and DETH")
	c.Flags().BoolVar(&umadHdr, "umad", false, "the input starts with the kernel's ib_user_mad header (python-rdma)")
	return c
}

// maxDecodeInput bounds what decode_mad reads from standard input. A MAD
// with every header before it (LRH, GRH, BTH, DETH: 324 bytes) is under
// 2 KiB even as "0x01, " per byte; a megabyte leaves room for any dump
// and --offset, and stops a stream such as /dev/zero at once.
const maxDecodeInput = 1 << 20

// parseHex reads hex digits, ignoring white space, a 0x at the start of a
// word and the colons and commas of common dump formats. An error says
// what is wrong and, for a character that is not a digit, where (line and
// column of the input).
func parseHex(s string) ([]byte, error) {
	if t := strings.TrimLeftFunc(s, unicode.IsSpace); t != "" && (t[0] == '"' || t[0] == '\'') {
		return nil, fmt.Errorf("the input starts with a quote: python-rdma's quoted string form is not read here; give the bytes as hex digits")
	}
	sep := func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ':' }
	var digits []byte
	line, col, wordStart := 1, 0, true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		col++
		switch {
		case r == '\n':
			line, col, wordStart = line+1, 0, true
		case sep(r):
			wordStart = true
		case wordStart && r == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			i++ // the prefix, "0x" or "0X"
			col++
			wordStart = false
		case r < utf8.RuneSelf && isDigit(byte(r), 16):
			digits = append(digits, byte(r))
			wordStart = false
		case r == utf8.RuneError && size == 1:
			return nil, fmt.Errorf("line %d, column %d: byte %#02x is not text, let alone a hex digit", line, col, s[i])
		default:
			return nil, fmt.Errorf("line %d, column %d: %q is not a hex digit", line, col, r)
		}
		i += size
	}
	if len(digits) == 0 {
		return nil, fmt.Errorf("no hex input")
	}
	if len(digits)%2 != 0 {
		return nil, fmt.Errorf("odd number of hex digits (%d): a byte is two digits", len(digits))
	}
	out := make([]byte, len(digits)/2)
	if _, err := hex.Decode(out, digits); err != nil {
		return nil, fmt.Errorf("not hex: %v", err)
	}
	return out, nil
}

// pyUnquote reads a Python string literal, as python-rdma's decode_mad
// takes quoted input (its string_escape codec): the text between the
// quotes, with \\xHH, octal \\NNN, \\n, \\r, \\t, \\a, \\b, \\f, \\v,
// \\0, quotes and backslashes escaped; any other byte stands for itself.
func pyUnquote(t string) ([]byte, error) {
	if t == "" {
		return nil, fmt.Errorf("no input")
	}
	if len(t) < 2 || t[len(t)-1] != t[0] {
		return nil, fmt.Errorf("quoted input does not end with its quote %c", t[0])
	}
	s := t[1 : len(t)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("quoted input ends with a lone backslash")
		}
		i++
		switch c = s[i]; c {
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf("\\x at byte %d needs two hex digits", i)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("\\x%s at byte %d: not two hex digits", s[i+1:i+3], i)
			}
			out = append(out, byte(v))
			i += 2
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'a':
			out = append(out, 7)
		case 'b':
			out = append(out, 8)
		case 'f':
			out = append(out, 12)
		case 'v':
			out = append(out, 11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			out = append(out, byte(v))
			i = j - 1
		case '\\', '\'', '"':
			out = append(out, c)
		default:
			// Python keeps an unknown escape as written.
			out = append(out, '\\', c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no input between the quotes")
	}
	return out, nil
}

// decodeMAD splits off the packet headers when asked and decodes the MAD.
func decodeMAD(raw []byte, lrh bool) (*DecodeMADResult, error) {
	res := &DecodeMADResult{}
	if lrh {
		var err error
		raw, err = decodeHeaders(raw, res)
		if err != nil {
			return nil, err
		}
	}
	if len(raw) < 24 {
		return nil, &iba.DecodeError{Struct: "MADHeader", Offset: len(raw), Reason: fmt.Sprintf("buffer has %d bytes, a MAD header needs 24", len(raw))}
	}
	if len(raw) < 256 {
		return nil, &iba.DecodeError{Struct: "MAD", Offset: len(raw), Reason: fmt.Sprintf("a MAD is 256 bytes, got %d", len(raw))}
	}
	res.raw = raw
	class := iba.Class(raw[1])
	f, ok := iba.FormatOf(class)
	if !ok {
		return nil, &iba.DecodeError{Struct: "MAD", Offset: 1, Reason: fmt.Sprintf("unknown management class %#02x", raw[1])}
	}
	js, err := structJSON(f, raw)
	if err != nil {
		return nil, err
	}
	res.MAD = DecodedStruct{Name: f.Name, Fields: js}
	return res, nil
}

func structJSON(s *iba.Struct, b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := ibaprint.JSON(&buf, s, b); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes())), nil
}

// decodeHeaders decodes LRH, the GRH when the LRH's LNH says one follows,
// BTH and, for the UD transport, DETH (IBA 7.7, 8.3, 9.2, 9.3.2).
func decodeHeaders(raw []byte, res *DecodeMADResult) ([]byte, error) {
	take := func(name string) error {
		s, ok := iba.StructByName(name)
		if !ok {
			return fmt.Errorf("no declaration of %s", name)
		}
		if len(raw) < s.Size {
			return &iba.DecodeError{Struct: name, Offset: len(raw), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(raw), s.Size)}
		}
		js, err := structJSON(s, raw[:s.Size])
		if err != nil {
			return err
		}
		res.Headers = append(res.Headers, DecodedStruct{Name: name, Fields: js})
		res.hdrs = append(res.hdrs, rawStruct{s, raw[:s.Size]})
		raw = raw[s.Size:]
		return nil
	}
	if len(raw) < 8 {
		return nil, &iba.DecodeError{Struct: "HdrLRH", Offset: len(raw), Reason: "buffer shorter than an LRH"}
	}
	lnh := raw[1] & 0x3
	if err := take("HdrLRH"); err != nil {
		return nil, err
	}
	if lnh == 0x3 {
		if err := take("HdrGRH"); err != nil {
			return nil, err
		}
	}
	if err := take("HdrBTH"); err != nil {
		return nil, err
	}
	if err := take("HdrDETH"); err != nil {
		return nil, err
	}
	return raw, nil
}

func renderDecodeMAD(w io.Writer, res *DecodeMADResult) error {
	if h := res.UMAD; h != nil {
		fmt.Fprintf(w, "ib_user_mad: agent %d status %d timeout_ms %d retries %d length %d qpn %#x qkey %#x lid %d sl %d path_bits %d grh %v gid_index %d hop_limit %d traffic_class %d gid %v flow_label %#x pkey_index %d\n",
			h.AgentID, h.Status, h.TimeoutMS, h.Retries, h.Length, h.QPN, h.QKey, h.LID, h.SL, h.PathBits, h.GRHPresent, h.GIDIndex, h.HopLimit, h.TrafficClass, h.GID, h.FlowLabel, h.PKeyIndex)
	}
	off := 0
	for _, h := range res.hdrs {
		if err := ibaprint.Dump(w, h.s, h.b, ibaprint.DumpOptions{Offset: off}); err != nil {
			return err
		}
		off += h.s.Size
	}
	return ibaprint.DumpMAD(w, res.raw)
}
