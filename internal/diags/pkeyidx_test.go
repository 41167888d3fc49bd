package diags

import (
	"strings"
	"testing"
)

// TestPKeyIdx checks -Y/--pkey-idx (rdma-core's common option after
// 56.1): GMPs go out with the chosen P_Key index and SMPs with index 0.
// On a simulated fabric with default P_Key tables index 1 holds no valid
// P_Key, so a PMA query sent with it gets no reply and says why, while an
// SMP is answered. (fabric.TestWithPKeyIndex shows a partitioned fabric
// that answers only with the index.) Values are checked as the C tools
// check them: strtol's forms, 0 to 65535, nothing after the digits.
func TestPKeyIdx(t *testing.T) {
	t.Setenv("RDMAKIT_FABRIC", "sim:fattree:k=2,n=1")
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout, or in stderr when code != 0
	}{
		{[]string{"-Y", "0", "perfquery", "3"}, 0, "PortXmitData"},
		{[]string{"--pkey-idx=0x0", "perfquery", "3"}, 0, "PortXmitData"},
		{[]string{"-Y", "1", "-t", "20", "perfquery", "3"}, 255, "P_Key at index 1 of the local port's P_Key table (-Y/--pkey-idx)"},
		{[]string{"-Y", "1", "-t", "20", "smpquery", "nodeinfo", "3"}, 0, "NodeType:........................Channel Adapter"},
		{[]string{"-Y", "-1", "perfquery", "3"}, 255, `Invalid P_Key index "-1".  Requires an integer in the range [0, 65535].`},
		{[]string{"-Y", "65536", "perfquery", "3"}, 255, `Invalid P_Key index "65536"`},
		{[]string{"-Y", "1x", "perfquery", "3"}, 255, `Invalid P_Key index "1x"`},
		{[]string{"-Y", "", "perfquery", "3"}, 255, `Invalid P_Key index ""`},
	} {
		out, errOut, code := run(t, "", append([]string{"ibtool"}, tc.args...)...)
		where := out
		if tc.code != 0 {
			where = errOut
		}
		if code != tc.code || !strings.Contains(where, tc.out) {
			t.Errorf("ibtool %s: exit %d, want %d with %q\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, tc.out, out, errOut)
		}
	}
}

func TestCStrtolExact(t *testing.T) {
	for _, tc := range []struct {
		s  string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"17", 17, true}, {"0x1f", 31, true}, {"0X1F", 31, true}, {"017", 15, true},
		{" 5", 5, true}, {"+5", 5, true}, {"-5", -5, true},
		{"", 0, false}, {"x", 0, false}, {"0x", 0, false}, {"5 ", 0, false}, {"1_0", 0, false},
		{"08", 0, false}, {"0+1", 0, false}, {"99999999999999999999", 0, false},
	} {
		n, ok := cStrtolExact(tc.s)
		if n != tc.n || ok != tc.ok {
			t.Errorf("cStrtolExact(%q) = %d, %v; want %d, %v", tc.s, n, ok, tc.n, tc.ok)
		}
	}
}

// FuzzCStrtolExact: what cStrtolExact takes, cStrtoul reads as the same
// number, and it never takes text strtol would stop early in.
func FuzzCStrtolExact(f *testing.F) {
	for _, s := range []string{"0", "17", "0x1f", "017", " -5", "+0X10", "", "0x", "1x", "08", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := cStrtolExact(s)
		if !ok {
			return
		}
		if int64(cStrtoul(s)) != n {
			t.Errorf("cStrtolExact(%q) = %d, cStrtoul reads %d", s, n, int64(cStrtoul(s)))
		}
		if last := s[len(s)-1]; !isDigit(last, 16) {
			t.Errorf("cStrtolExact(%q) took text that ends in %q, after the digits", s, last)
		}
	})
}
