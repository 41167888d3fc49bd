package iba

import "testing"

// The decode budget of issue 2: at most 25 ns and no allocation each.
func benchUnmarshal(b *testing.B, v Attribute) {
	buf := make([]byte, v.Desc().Size)
	for i := range buf {
		buf[i] = byte(i*7 + 3)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if err := v.Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalNodeInfo(b *testing.B)   { benchUnmarshal(b, new(NodeInfo)) }
func BenchmarkUnmarshalPortInfo(b *testing.B)   { benchUnmarshal(b, new(PortInfo)) }
func BenchmarkUnmarshalNodeRecord(b *testing.B) { benchUnmarshal(b, new(NodeRecord)) }
func BenchmarkUnmarshalPortCountersExtended(b *testing.B) {
	benchUnmarshal(b, new(PortCountersExtended))
}

func BenchmarkMarshalPortInfo(b *testing.B) {
	var pi PortInfo
	buf := make([]byte, 64)
	_ = pi.Unmarshal(buf)
	b.ReportAllocs()
	for b.Loop() {
		if err := pi.MarshalTo(buf); err != nil {
			b.Fatal(err)
		}
	}
}
