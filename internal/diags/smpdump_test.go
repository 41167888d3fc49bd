package diags

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/ibpath"
)

// TestSMPDumpLive compares smpdump with the C smpdump on the ibsim floor:
// several attributes by LID and by directed route, -s, and the answers to
// requests that fail.
func TestSMPDumpLive(t *testing.T) { eachRelease(t, testSMPDumpLive) }

func testSMPDumpLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sw, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["H-3"])
	var cases [][]string
	for _, attr := range []string{"0x11", "0x10", "0x15", "16", "0x12", "0x14", "0x16", "0x17", "0x19"} {
		cases = append(cases, []string{sw, attr}, []string{"-D", l.dr["S-leaf-1"], attr}, []string{ca, attr})
	}
	cases = append(cases,
		[]string{sw, "0x15", "3"}, []string{"-D", "0,1", "0x15", "0x80000002"}, []string{"-D", "0", "0x15", "1"},
		[]string{"-s", "-D", "0,1", "0x10"}, []string{"-s", ca, "16"}, []string{"-L", sw, "0x11"},
		[]string{"-t", "200", "-D", "0,1,9", "0x11"}, []string{"-t", "200", "200", "0x11"},
		[]string{"-t", "200", sw, "0x99"}, []string{"-D", "0,1", "0x18", "9999"},
	)
	l.compareAll(t, "smpdump", cases)
	t.Run("decode", func(t *testing.T) {
		out, errOut, code := l.ours(t, "smpdump", "-p", "-D", "0,1", "0x11")
		if code != 0 || !strings.HasPrefix(out, "SMPFormat") || !strings.Contains(out, "nodeType=Switch(2)") {
			t.Errorf("exit %d:\n%s%s", code, out, errOut)
		}
		_, errOut, code = l.ours(t, "smpdump", "-p", "-t", "100", "-D", "0,1,9", "0x11")
		if code != 255 || !noAnswer(errOut) {
			t.Errorf("decode of a timeout: exit %d, %q", code, errOut)
		}
		out, _, _ = l.ours(t, "smpdump", "--json", "-D", "0,1", "0x10")
		golden(t, "json", out)
	})
}

func TestSMPDumpXDump(t *testing.T) {
	var b strings.Builder
	xdump(&b, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0xab, 0xcd})
	if want := "0102 0304 0506 0708 090a 0b0c 0d0e 0f10\nabcd\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	for in, want := range map[string][]byte{"0,1,2": {0, 1, 2}, "0,": {0}, "x,3": {0, 3}, "0,300": {0, 44}} {
		if got, ok := cDRPath(in); !ok || string(got) != string(want) {
			t.Errorf("cDRPath(%q) = %v, want %v", in, got, want)
		}
	}
	if _, ok := cDRPath(""); ok {
		t.Error("an empty DR path parsed")
	}
}

// FuzzDRList: the DR path readers of smpquery -D (libibmad's str2drpath)
// and smpdump -D (its own str2DRPath) never panic; the first takes port
// numbers and commas only, one hop a number, each cut to a byte.
func FuzzDRList(f *testing.F) {
	for _, s := range []string{"0", "0,1", "0,1,", ",", "0,,1", "0,300", "0,-1", "a,b", "0,1,2,3,4,5,6,7,8,9", "99999999999999999999999", " 1", "1 ,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hops, ok := parseDRList(s)
		if ok != drList.MatchString(s) {
			t.Fatalf("%q: ok %v, the pattern says %v", s, ok, !ok)
		}
		if ok {
			words := strings.Split(strings.TrimSuffix(s, ","), ",")
			if len(hops) != len(words) {
				t.Fatalf("%q: %d hops for %d numbers", s, len(hops), len(words))
			}
			for i, w := range words {
				if n, err := strconv.ParseUint(w, 10, 8); err == nil && hops[i] != byte(n) {
					t.Fatalf("%q: hop %d is %d, want %d", s, i, hops[i], n)
				}
			}
			if p := ibpath.NewDR(hops...); portidString(p) == "" {
				t.Fatalf("%q: no name", s)
			}
		}
		dh, ok := cDRPath(s)
		if ok != (len(dh) > 0) || len(dh) > strings.Count(s, ",")+1 {
			t.Fatalf("%q: smpdump reads %v (%v)", s, dh, ok)
		}
	})
}
