package diags

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A directed-route NodeInfo reply captured from ibsim (see iba/vectors_test.go).
const nodeInfoHex = "../../iba/testdata/nodeinfo-getresp.hex"

func TestDecodeMAD(t *testing.T) {
	in := readFile(t, nodeInfoHex)
	for _, tc := range []struct {
		name  string
		stdin string
		argv  []string
	}{
		{"stdin", in, []string{"ibtool", "decode_mad"}},
		{"args", "", append([]string{"ibtool", "decode_mad"}, strings.Fields(in)...)},
		{"multicall", in, []string{"/usr/local/bin/decode_mad"}},
		{"offset", "deadbeef " + in, []string{"ibtool", "decode_mad", "-o", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := run(t, tc.stdin, tc.argv...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, "dump", out)
		})
	}
}

func TestDecodeMADJSON(t *testing.T) {
	out, errs, code := run(t, readFile(t, nodeInfoHex), "ibtool", "decode_mad", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Version int    `json:"version"`
		Command string `json:"command"`
		Result  struct {
			MAD struct {
				Name   string `json:"name"`
				Fields struct {
					MgmtClass int `json:"mgmtClass"`
					Data      struct {
						NodeType int    `json:"nodeType"`
						NodeGUID string `json:"nodeGUID"`
					} `json:"data"`
				} `json:"fields"`
			} `json:"mad"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Version != JSONVersion || doc.Command != "decode_mad" || doc.Result.MAD.Name != "SMPFormatDirected" ||
		doc.Result.MAD.Fields.MgmtClass != 0x81 || doc.Result.MAD.Fields.Data.NodeType != 2 ||
		doc.Result.MAD.Fields.Data.NodeGUID != "0x0000000000200001" {
		t.Errorf("unexpected document: %+v", doc)
	}
	golden(t, "json", out)
}

func TestDecodeMADBadInput(t *testing.T) {
	full := readFile(t, nodeInfoHex)
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		msg         string
	}{
		{"empty", "", nil, 2, "no hex input"},
		{"odd", "abc", nil, 2, "odd number of hex digits"},
		{"nothex", "zz", nil, 2, "line 1, column 1: 'z' is not a hex digit"},
		{"where", "0x01 0x01\n0x01 0x8g", nil, 2, "line 2, column 9: 'g' is not a hex digit"},
		{"midword0x", "010x01", nil, 2, "line 1, column 4: 'x' is not a hex digit"},
		{"nul", "01\x0001", nil, 2, "line 1, column 3: '\\x00' is not a hex digit"},
		{"notutf8", "01\xff01", nil, 2, "line 1, column 3: byte 0xff is not text"},
		// Quoted input is python-rdma's form (a string literal): too short a
		// MAD then, as any short input.
		{"quoted", "  '\\x01\\x01'", nil, 1, "a MAD header needs 24"},
		{"dquoted", "\"0101\"", nil, 1, "a MAD header needs 24"},
		{"huge", strings.Repeat("00", 1<<20), nil, 1, "standard input: more than 1048576 bytes"},
		{"short", "0101018100", nil, 1, "at byte 5"},
		{"unknownclass", "01ee01" + strings.Repeat("00", 253), nil, 1, "unknown management class 0xee"},
		{"offsetpast", full, []string{"-o", "9999"}, 2, "outside"},
		{"badflag", full, []string{"--nosuch"}, 2, "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := run(t, tc.stdin, append([]string{"ibtool", "decode_mad"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.msg)
			}
			if out != "" {
				t.Errorf("printed %q on failure", out)
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	_, errs, code := run(t, "", "ibtool", "nosuchcommand")
	if code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// FuzzDecodeMAD: no input makes decode_mad panic or exit with a status
// other than 0, 1 (a MAD that does not decode) or 2 (input that is not
// hex); whatever is hex decodes to the bytes given.
func FuzzDecodeMAD(f *testing.F) {
	f.Add("0101018100")
	f.Add(strings.Repeat("00", 256))
	f.Add("01810181" + strings.Repeat("ff", 252))
	f.Add("0103029200000000" + strings.Repeat("11", 248))
	f.Add("0x01, 0x01: 0X01\n0181")
	f.Add("'\\x01'")
	f.Add("01\xff\x00")
	f.Fuzz(func(t *testing.T, in string) {
		_, _, code := run(t, in, "ibtool", "decode_mad")
		if code == 0 {
			return
		}
		if code != 1 && code != 2 {
			t.Fatalf("exit %d", code)
		}
	})
}

// FuzzParseHex: parseHex never panics, and what it accepts is the hex
// digits of the input in order, two to a byte, but for the 0 of each 0x
// prefix (the only place an x may be).
func FuzzParseHex(f *testing.F) {
	for _, s := range []string{"0101", "0x01 0x02", "0X0a,0b:0c", "01\n 02", "zz", "0x", "abc", "'01'", "0\u00a0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseHex(s)
		if err != nil {
			return
		}
		var digits []byte
		for i := 0; i < len(s); i++ {
			if isDigit(s[i], 16) {
				digits = append(digits, s[i]|0x20)
			}
		}
		prefixes := strings.Count(strings.ToLower(s), "x")
		got := hex.EncodeToString(b)
		if len(b) == 0 || len(digits)-len(got) != prefixes {
			t.Fatalf("%q: %d digits, %d prefixes, decoded to %s", s, len(digits), prefixes, got)
		}
		// got is digits with one 0 left out per prefix.
		j := 0
		for i := 0; i < len(digits) && j < len(got); i++ {
			if digits[i] == got[j] {
				j++
			}
		}
		if j != len(got) {
			t.Fatalf("%q decoded to %s, not its digits in order", s, got)
		}
	})
}

// TestDecodeMADPythonInput: python-rdma's quoted input (a Python string
// literal with escapes) and --umad (the kernel's ib_user_mad header
// first) decode to the same MAD as the hex.
func TestDecodeMADPythonInput(t *testing.T) {
	in := readFile(t, nodeInfoHex)
	raw, err := parseHex(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := run(t, in, "ibtool", "decode_mad")
	var q strings.Builder
	q.WriteByte('"')
	for i, c := range raw {
		switch {
		case i%3 == 0:
			fmt.Fprintf(&q, "\\x%02x", c)
		case c >= 0x20 && c < 0x7f && c != '\\' && c != '"':
			q.WriteByte(c)
		default:
			fmt.Fprintf(&q, "\\%o", c)
		}
	}
	q.WriteString("\"\n")
	if got, errOut, code := run(t, q.String(), "ibtool", "decode_mad"); code != 0 || got != want {
		t.Errorf("quoted: exit %d %s\n%s", code, errOut, got)
	}
	hdr := make([]byte, 64)
	hdr[0] = 7                              // agent (host order)
	binary.BigEndian.PutUint16(hdr[28:], 5) // LID
	hdr[30] = 2                             // SL
	got, errOut, code := run(t, fmt.Sprintf("%x", append(hdr, raw...)), "ibtool", "decode_mad", "--umad")
	if code != 0 || !strings.HasPrefix(got, "ib_user_mad: agent 7 status 0 timeout_ms 0 retries 0 length 0 qpn 0x0 qkey 0x0 lid 5 sl 2 ") || !strings.HasSuffix(got, want) {
		t.Errorf("--umad: exit %d %s\n%s", code, errOut, got)
	}
	for in, msg := range map[string]string{`"\x0"`: "two hex digits", `"abc`: "does not end", `"\"`: "lone backslash", `""`: "no input"} {
		if _, errOut, code := run(t, in, "ibtool", "decode_mad"); code != 2 || !strings.Contains(errOut, msg) {
			t.Errorf("%q: exit %d %q, want %q", in, code, errOut, msg)
		}
	}
}
