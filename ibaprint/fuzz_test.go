package ibaprint

import (
	"bytes"
	"io"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
)

// FuzzDumpMAD: no input makes the dump or the JSON of a MAD panic; any
// error is an *iba.DecodeError or a plain error, never a half-written line.
// The seeds are in testdata/fuzz/FuzzDumpMAD and below.
func FuzzDumpMAD(f *testing.F) {
	f.Add(newMAD(0x01, 1, 0x81, 0x11, 0, 64, nodeInfoSwitch(f)))
	f.Add(newMAD(0x81, 1, 0x81, 0x15, 1, 64, portInfoActive(f)))
	f.Add(saMAD(0x92, 0x11, 108, nodeRecord(f, "5", "x", "0x1"), nodeRecord(f, "6", "y", "0x2")))
	f.Add(saMAD(0x81, 0x35, 64, pathRecord(f)))
	f.Add(newMAD(0x04, 1, 0x81, 0x1d, 0, 64, portCountersExt(f)))
	f.Add([]byte{1, 3, 2})
	f.Fuzz(func(t *testing.T, mad []byte) {
		var b bytes.Buffer
		err := DumpMAD(&b, mad)
		if err != nil && b.Len() != 0 {
			t.Fatalf("printed and failed: %v", err)
		}
		if len(mad) > 1 {
			if s, ok := formatFor(iba.Class(mad[1])); ok {
				_ = JSON(io.Discard, s, mad)
				_ = Dump(io.Discard, s, mad, DumpOptions{})
			}
		}
	})
}

// FuzzDotted: every dotted renderer takes any bytes without panicking.
func FuzzDotted(f *testing.F) {
	f.Add(portInfoActive(f))
	f.Add(portInfoOdd(f))
	f.Add(nodeInfoSwitch(f))
	f.Add(portCounters(f))
	f.Add(make([]byte, 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := io.Discard
		for _, r := range []func() error{
			func() error { return SMPNodeInfo(w, b) },
			func() error { return SMPPortInfo(w, b) },
			func() error { return SMPSwitchInfo(w, b) },
			func() error { return SMPNodeDesc(w, b) },
			func() error { return PortCounters(w, b, 0) },
			func() error { return PortCountersExtended(w, b, 0xffff, 0) },
			func() error { return SANodeRecord(w, b) },
			func() error { return SAPathRecord(w, b) },
			func() error { return SAPortInfoRecord(w, b) },
			func() error { return SASwitchInfoRecord(w, b, true) },
			func() error { return PKeys(w, [][]byte{b}, int(len(b))%40) },
			func() error { return GUIDInfo(w, [][]byte{b}, int(len(b))%10) },
			func() error { return VLArb(w, "Low", [][]byte{b, b}, int(len(b))%70) },
			func() error { return SL2VL(w, []SL2VLEntry{{1, 2, b}}) },
		} {
			_ = r()
		}
		for _, name := range PerfQueryNames() {
			_ = PerfQuery(w, name, b)
		}
		for _, st := range []string{"NodeInfo", "PortInfo", "NodeRecord", "PathRecord"} {
			s, _ := iba.StructByName(st)
			_ = JSON(w, s, b)
		}
	})
}
