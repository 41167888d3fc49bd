package vmad

import (
	"encoding/hex"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
)

func TestVMADParseGRH(t *testing.T) {
	// An IBA GRH / IPv6 header: version 6, traffic class 0x12, flow label
	// 0x34567, hop limit 64, fe80::1 -> fe80::2.
	ib, _ := hex.DecodeString("61234567" + "0100" + "1b" + "40" +
		"fe800000000000000000000000000001" + "fe800000000000000000000000000002")
	g, dgid, ok := parseGRH(ib)
	src, _ := iba.ParseGID("fe80::1")
	dst, _ := iba.ParseGID("fe80::2")
	if !ok || g.GID != src || dgid != dst || g.TrafficClass != 0x12 || g.FlowLabel != 0x34567 || g.HopLimit != 64 {
		t.Errorf("IBA GRH: %+v dgid %v ok %v", g, dgid, ok)
	}
	// RoCE v2 over IPv4: 20 unused bytes, then the IPv4 header with TOS
	// 0x08, TTL 63, 10.0.0.1 -> 10.0.0.2.
	v4, _ := hex.DecodeString("0000000000000000000000000000000000000000" +
		"4508002c0000400040110000" + "0a000001" + "0a000002")
	g, dgid, ok = parseGRH(v4)
	src, _ = iba.ParseGID("::ffff:10.0.0.1")
	dst, _ = iba.ParseGID("::ffff:10.0.0.2")
	if !ok || g.GID != src || dgid != dst || g.TrafficClass != 0x08 || g.HopLimit != 0x40 {
		t.Errorf("RoCE v2 IPv4: %+v dgid %v ok %v", g, dgid, ok)
	}
	if _, _, ok := parseGRH(ib[:39]); ok {
		t.Error("39 bytes parsed as a GRH")
	}
}

func FuzzVMADParseGRH(f *testing.F) {
	f.Add(make([]byte, 40))
	f.Add([]byte("`\x00\x00\x00\x00\x00\x1b@\xfe\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xfe\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, _, ok := parseGRH(b)
		if ok != (len(b) >= 40) {
			t.Fatalf("ok %v for %d bytes", ok, len(b))
		}
		if g.FlowLabel > 0xfffff {
			t.Fatalf("flow label %#x", g.FlowLabel)
		}
	})
}
