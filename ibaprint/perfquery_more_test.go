package ibaprint

import (
	"bytes"
	"strings"
	"testing"
)

// counting fills b with 32-bit words 1, 2, 3, ... so that every field
// shows which word it came from.
func counting(n int) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		b[i+3] = byte(i/4 + 1)
	}
	return b
}

// TestPerfQueryMore renders the perfquery forms that ibsim does not answer
// (so that the live comparison only sees their failure): golden files hold
// the output, labels and widths taken from libibmad's fields.c.
func TestPerfQueryMore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
		lines  int
	}{
		{"extspeeds", func(w *bytes.Buffer) error { return PortExtendedSpeedsCounters(w, counting(192), false) }, 4 + 36},
		{"extspeeds-rsfec", func(w *bytes.Buffer) error { return PortExtendedSpeedsCounters(w, counting(192), true) }, 4 + 12 + 3},
		{"samplesctl", func(w *bytes.Buffer) error { return PortSamplesControl(w, counting(192)) }, 14 + 15 + 1},
		{"rcvcc", func(w *bytes.Buffer) error { return PerfQuery(w, "PortRcvConCtrl", counting(192)) }, 4},
		{"slrcvfecn", func(w *bytes.Buffer) error { return PerfQuery(w, "PortSLRcvFECN", counting(192)) }, 18},
		{"slrcvbecn", func(w *bytes.Buffer) error { return PerfQuery(w, "PortSLRcvBECN", counting(192)) }, 18},
		{"xmitcc", func(w *bytes.Buffer) error { return PerfQuery(w, "PortXmitConCtrl", counting(192)) }, 3},
		{"vlxmittimecc", func(w *bytes.Buffer) error { return PerfQuery(w, "PortVLXmitTimeCong", counting(192)) }, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(b.String(), "\n"); n != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tc.lines, b.String())
			}
			golden(t, tc.name, b.String())
		})
	}
}
