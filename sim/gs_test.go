package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

func TestVendorPingSysStat(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{NoSA: true})
	ctx := ctxT(t)
	c := client(t, f, "hca1", 1)
	_, _, l, _, _ := f.PortState("hca3", 1)
	var ping iba.OpenIBPing
	if err := c.VendGet(ctx, lid(l), 0x32, iba.OUIOpenIB, &ping, 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimRight(string(ping.HostName[:]), "\x00"); got != "hca3" {
		t.Fatalf("ibping host %q", got)
	}
	sp := iba.OpenIBSysStatPing{Cookie: 0xfeed}
	if err := c.VendGet(ctx, lid(l), 0x33, iba.OUIOpenIB, &sp, 0); err != nil || sp.Cookie != 0xfeed {
		t.Fatalf("sysstat ping %+v %v", sp, err)
	}
	var hi iba.OpenIBSysStatHostInfo
	if err := c.VendGet(ctx, lid(l), 0x33, iba.OUIOpenIB, &hi, 0); err != nil || !strings.HasPrefix(string(hi.HostName[:]), "hca3\x00") {
		t.Fatalf("sysstat host %q %v", hi.HostName[:8], err)
	}
	var ci iba.OpenIBSysStatCPUInfo
	if err := c.VendGet(ctx, lid(l), 0x33, iba.OUIOpenIB, &ci, 0); err != nil || !strings.HasPrefix(string(ci.CPUInfo[:]), "cpu 0:") {
		t.Fatalf("sysstat cpu %q %v", ci.CPUInfo[:8], err)
	}
	// Another OUI is not the OpenIB class.
	if err := c.VendGet(ctx, lid(l), 0x32, 0x123456, &ping, 0); !errors.Is(err, mad.ErrMethodAttrUnsupported) {
		t.Fatalf("ping with another OUI: %v", err)
	}
}

func TestCongestionControl(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{NoSA: true})
	ctx := ctxT(t)
	c := client(t, f, "hca1", 1)
	_, _, lca, _, _ := f.PortState("hca2", 1)
	sw, _ := f.peerOf("hca2", 1)
	_, _, lsw, _, _ := f.PortState(sw, 0)
	var info iba.CongestionInfo
	if err := c.CongestionGet(ctx, lid(lsw), &info, 0); err != nil || info.ControlTableCap != ccTableBlocks || info.CongestionInfo != 1 {
		t.Fatalf("CongestionInfo %+v %v", info, err)
	}
	ss := iba.SwitchCongestionSetting{ControlMap: 1, Threshold: 7, MarkingRate: 100}
	ss.VictimMask[0] = 0x80
	if err := c.CongestionSet(ctx, lid(lsw), &ss, 0); err != nil {
		t.Fatal(err)
	}
	var got iba.SwitchCongestionSetting
	if err := c.CongestionGet(ctx, lid(lsw), &got, 0); err != nil || got != ss {
		t.Fatalf("SwitchCongestionSetting %+v %v", got, err)
	}
	cs := iba.CACongestionSetting{PortControl: 1, ControlMap: 1 << 3}
	cs.EntryList[3].CCTIIncrease = 9
	cs.EntryList[4].CCTIIncrease = 9 // not in the map: not set
	if err := c.CongestionSet(ctx, lid(lca), &cs, 0); err != nil {
		t.Fatal(err)
	}
	var cg iba.CACongestionSetting
	if err := c.CongestionGet(ctx, lid(lca), &cg, 0); err != nil || cg.EntryList[3].CCTIIncrease != 9 || cg.EntryList[4].CCTIIncrease != 0 {
		t.Fatalf("CACongestionSetting %+v %v", cg, err)
	}
	ct := iba.CongestionControlTable{CCTILimit: 70}
	ct.EntryList[5].CCTMultiplier = 77
	if err := c.CongestionSet(ctx, lid(lca), &ct, 1); err != nil {
		t.Fatal(err)
	}
	var cr iba.CongestionControlTable
	if err := c.CongestionGet(ctx, lid(lca), &cr, 1); err != nil || cr.CCTILimit != 70 || cr.EntryList[5].CCTMultiplier != 77 {
		t.Fatalf("CongestionControlTable %+v %v", cr, err)
	}
	if err := c.CongestionGet(ctx, lid(lca), &cr, 9); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("block 9: %v", err)
	}
	var ts1, ts2 iba.TimeStamp
	if err := c.CongestionGet(ctx, lid(lca), &ts1, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.CongestionGet(ctx, lid(lca), &ts2, 0); err != nil || ts2.TimeStamp < ts1.TimeStamp {
		t.Fatalf("TimeStamp %v %v %v", ts1, ts2, err)
	}
	// A CC_Key protects Sets: a wrong key gets no answer.
	if err := c.CongestionSet(ctx, lid(lca), &iba.CongestionKeyInfo{CCKey: 42}, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.CongestionSet(ctx, quick(lid(lca)), &cs, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("Set with the wrong CC_Key: %v", err)
	}
	// A CA has no switch settings.
	if err := c.CongestionGet(ctx, lid(lca), &got, 0); !errors.Is(err, mad.ErrMethodAttrUnsupported) {
		t.Fatalf("switch setting of a CA: %v", err)
	}
}
