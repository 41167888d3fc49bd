package ibaprint

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestSMPPortInfoExtended checks mad_dump_portinfo_ext's reading of the HDR
// and NDR FEC fields: libibmad declares them without BITSOFFS, so each reads
// the other 16 bits of its 32-bit word, and NDRFECModeEnabled a reserved
// word. ibsim has no PortInfoExtended, so this is checked on bytes whose
// every 16-bit field is distinct, against what libibmad's _get_field reads
// at those offsets (p[3^idx] byte order within each word).
func TestSMPPortInfoExtended(t *testing.T) {
	b := make([]byte, 64)
	for i := 0; i < 24; i += 2 {
		b[i], b[i+1] = byte(0x10+i), byte(0x11+i)
	}
	var out bytes.Buffer
	if err := SMPPortInfoExtended(&out, b); err != nil {
		t.Fatal(err)
	}
	want := `CapMask:.........................0x10111213
FECModeActive:...................5141
FDRFECModeSupported:.............0x1617
FDRFECModeEnabled:...............0x1819
EDRFECModeSupported:.............0x1a1b
EDRFECModeEnabled:...............0x1c1d
HDRFECModeSupported:.............0x1c1d
HDRFECModeEnabled:...............0x2223
NDRFECModeSupported:.............0x2021
NDRFECModeEnabled:...............0x2627
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := SMPPortInfoExtended(io.Discard, b[:10]); err == nil {
		t.Error("10 bytes rendered without an error")
	}
}

func TestSMPMlnxExtPortInfo(t *testing.T) {
	b := make([]byte, 64)
	b[3], b[7], b[11], b[15] = 0x01, 0x03, 0x01, 0x01
	var out bytes.Buffer
	if err := SMPMlnxExtPortInfo(&out, b); err != nil {
		t.Fatal(err)
	}
	golden(t, "mlnxextportinfo", out.String())
	if !strings.Contains(out.String(), "LinkSpeedSupported:..............0x03\n") {
		t.Errorf("unexpected:\n%s", out.String())
	}
}

// FuzzSMPQueryMore: the renderers of this file and perfquery_more.go take
// any bytes without panicking, and print nothing when they fail.
func FuzzSMPQueryMore(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add(make([]byte, 192))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range []func(io.Writer) error{
			func(w io.Writer) error { return SMPPortInfoExtended(w, b) },
			func(w io.Writer) error { return SMPMlnxExtPortInfo(w, b) },
			func(w io.Writer) error { return PortExtendedSpeedsCounters(w, b, false) },
			func(w io.Writer) error { return PortExtendedSpeedsCounters(w, b, true) },
			func(w io.Writer) error { return PortSamplesControl(w, b) },
			func(w io.Writer) error { return PerfQuery(w, "PortVLXmitTimeCong", b) },
			func(w io.Writer) error { return PerfQuery(w, "PortRcvConCtrl", b) },
		} {
			var out bytes.Buffer
			if err := r(&out); err != nil && out.Len() != 0 {
				t.Fatalf("printed and failed: %v", err)
			}
		}
	})
}
