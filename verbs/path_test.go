package verbs

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

func mustGID(s string) iba.GID {
	g, err := iba.ParseGID(s)
	if err != nil {
		panic(err)
	}
	return g
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// An IBA GRH (IPv6 header layout): version 6, traffic class 0x12, flow
// label 0x34567, next header 0x1b, hop limit 64, fe80::1 -> fe80::2.
var grhIBA = mustHex("61234567" + "0100" + "1b" + "40" +
	"fe800000000000000000000000000001" + "fe800000000000000000000000000002")

// RoCE v2 over IPv4: 20 unused bytes, then the IPv4 header with TOS 0x08,
// TTL 64, UDP, a correct checksum, 10.0.0.1 -> 10.0.0.2.
var grhIPv4 = mustHex("0000000000000000000000000000000000000000" +
	"4508002c00004000401126b7" + "0a000001" + "0a000002")

func TestParseGRH(t *testing.T) {
	g, err := ParseGRH(grhIBA)
	if err != nil || g.SGID != mustGID("fe80::1") || g.DGID != mustGID("fe80::2") || g.TrafficClass != 0x12 ||
		g.FlowLabel != 0x34567 || g.HopLimit != 64 || g.NextHeader != 0x1b || g.IPv4 {
		t.Errorf("IBA GRH: %+v, %v", g, err)
	}
	g, err = ParseGRH(grhIPv4)
	if err != nil || g.SGID != mustGID("::ffff:10.0.0.1") || g.DGID != mustGID("::ffff:10.0.0.2") || g.TrafficClass != 0x08 ||
		g.HopLimit != 64 || g.FlowLabel != 0 || !g.IPv4 {
		t.Errorf("RoCE v2 IPv4: %+v, %v", g, err)
	}
	// Version 6 in the first nibble and an IPv4-looking second half with a
	// bad checksum: an IPv6 header, as libibverbs decides.
	b := append([]byte(nil), grhIPv4...)
	b[0] = 0x60
	b[30] ^= 1
	if g, err := ParseGRH(b); err != nil || g.IPv4 {
		t.Errorf("version 6, bad IPv4 checksum: %+v, %v", g, err)
	}
	// With the checksum right, the IPv4 header wins.
	b[30] ^= 1
	if g, err := ParseGRH(b); err != nil || !g.IPv4 {
		t.Errorf("version 6, good IPv4 checksum: %+v, %v", g, err)
	}
	if _, err := ParseGRH(grhIBA[:39]); err == nil || !strings.Contains(err.Error(), "39") {
		t.Errorf("39 bytes: %v", err)
	}
}

func FuzzVerbsParseGRH(f *testing.F) {
	f.Add(make([]byte, 40))
	f.Add(grhIBA)
	f.Add(grhIPv4)
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGRH(b)
		if (err == nil) != (len(b) >= 40) {
			t.Fatalf("error %v for %d bytes", err, len(b))
		}
		if g.FlowLabel > 0xfffff || g.IPv4 && (g.FlowLabel != 0 || g.NextHeader != 0) {
			t.Fatalf("GRH %+v", g)
		}
	})
}

func TestAHAttrFromPath(t *testing.T) {
	p := ibpath.FromPathRecord(&iba.PathRecord{SGID: mustGID("fe80::1"), DGID: mustGID("fec0::2"), SLID: 0x13, DLID: 0x40,
		HopLimit: 3, TClass: 0x10, FlowLabel: 7, SL: 4, Rate: iba.Rate40Gbps})
	a := AHAttrFromPath(p, 2, 5, 2)
	if a.DLID != 0x40 || a.SL != 4 || a.SrcPathBits != 3 || a.StaticRate != uint8(iba.Rate40Gbps) || a.PortNum != 2 || a.GRH == nil ||
		*a.GRH != (GlobalRoute{DGID: mustGID("fec0::2"), FlowLabel: 7, SGIDIndex: 5, HopLimit: 3, TrafficClass: 0x10}) {
		t.Errorf("AHAttrFromPath = %+v GRH %+v", a, a.GRH)
	}
	if a := AHAttrFromPath(p, 1, 0, 0); a.SrcPathBits != 0 {
		t.Errorf("LMC 0: path bits %d", a.SrcPathBits)
	}
	p.HasGRH = false
	if a := AHAttrFromPath(p, 1, 0, 7); a.GRH != nil || a.SrcPathBits != 0x13 {
		t.Errorf("no GRH, LMC 7: %+v", a)
	}
}

func TestWCPath(t *testing.T) {
	wc := &WC{SLID: 7, SL: 2, DLIDPathBits: 1, SrcQP: 0x99, QPNum: 0x42, Flags: WCWithGRH}
	p, err := WCPath(wc, grhIBA, 0x20)
	if err != nil {
		t.Fatal(err)
	}
	if p.SLID != 7 || p.DLID != 0x21 || p.SL != 2 || p.SQPN != 0x99 || p.DQPN != 0x42 || !p.HasGRH ||
		p.SGID != mustGID("fe80::1") || p.DGID != mustGID("fe80::2") || p.HopLimit != 64 || p.TrafficClass != 0x12 || p.FlowLabel != 0x34567 {
		t.Errorf("WCPath = %+v", p)
	}
	r := p.Reverse(true)
	if r.DLID != 7 || r.SLID != 0x21 || r.DQPN != 0x99 || r.SQPN != 0x42 || r.DGID != mustGID("fe80::1") || r.HopLimit != 0xff || !r.Complete() {
		t.Errorf("reply path %s", r)
	}
	if _, err := WCPath(wc, grhIBA[:10], 0x20); err == nil {
		t.Error("a GRH of 10 bytes: no error")
	}
	wc.Flags = 0
	if p, err := WCPath(wc, nil, 0x20); err != nil || p.HasGRH || p.Has("SGID") {
		t.Errorf("no GRH: %s, %v", p, err)
	}
}
