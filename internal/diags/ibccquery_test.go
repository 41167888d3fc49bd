package diags

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// TestIBCCQueryLive compares ibccquery with the C tool on ibsim. ibsim has
// no congestion control agent: it answers class 0x21 with its SMA
// handlers of the same attribute ID (NodeInfo for CongestionInfo, PortInfo
// for SwitchPortCongestionSetting, ...), so the data is bogus but not
// zero, which checks every renderer byte for byte against libibmad's, and
// the attributes it refuses check the error paths.
func TestIBCCQueryLive(t *testing.T) { eachRelease(t, testIBCCQueryLive) }

func testIBCCQueryLive(t *testing.T, p peers) {
	l := startLive(t, p)
	lid := func(n string) string { return strconv.Itoa(l.lid[n]) }
	var cases [][]string
	for _, n := range []string{"H-3", "S-leaf-1"} {
		for _, op := range []string{"CP", "CongestionInfo", "ck", "CL", "SS", "SP", "CS", "CT", "TI"} {
			cases = append(cases, []string{op, lid(n)})
		}
	}
	cases = append(cases,
		[]string{"SP", lid("S-leaf-1"), "2"},
		[]string{"SP", lid("S-leaf-1"), "99"},
		[]string{"nosuchop", lid("H-3")},
		[]string{"-G", "CI", "0x0002c90300a00001"},
	)
	l.compareAll(t, "ibccquery", cases)
}

// TestIBCCConfigLive compares ibccconfig's argument checks and replies with
// the C tool on ibsim: every parameter error the C tool names, and Sets
// that ibsim answers (its SMA takes the CC attribute IDs for SMP ones).
func TestIBCCConfigLive(t *testing.T) { eachRelease(t, testIBCCConfigLive) }

func testIBCCConfigLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sw := strconv.Itoa(l.lid["S-leaf-1"])
	ca := strconv.Itoa(l.lid["H-3"])
	l.compareAll(t, "ibccconfig", [][]string{
		{"CK", ca, "1", "2", "3"},
		{"CK", ca, "1", "2", "3", "4"},
		{"CK", ca, "1", "0", "70000", "0"},
		{"CK", ca, "zz", "0", "1", "0"},
		{"SS", sw, "1", "0xg", "0", "1", "2", "3", "0:1", "4"},
		{"SS", sw, "1", strings.Repeat("f", 65), "0", "1", "2", "3", "0:1", "4"},
		{"SS", sw, "1", "0x1f", "0", "1", "2", "3", "01", "4"},
		{"SP", ca, "1", "1", "0", "1", "2", "3"},
		{"SP", sw, "99", "1", "0", "1", "2", "3"},
		{"CS", ca, "1", "3"},
		{"CT", ca, "1"},
		{"CT", ca, "5", "0", "0:1", "0:2"},
		{"CT", ca, "1", "0", "0:1", "x"},
		{"bogus", ca},
	})
}

// fakeCCA is a congestion control agent (IBA annex A10) on an in-memory
// fabric: a switch of 40 ports that keeps what it is set, with a
// switch congestion log, so that ibccquery's reads of every layout and
// ibccconfig's writes can be checked against values chosen by hand.
type fakeCCA struct {
	mu    sync.Mutex
	attrs map[[2]uint32][]byte // (attribute, modifier) -> data
	sets  []string
	ca    bool
}

func newFakeCCA(ca bool) *fakeCCA {
	f := &fakeCCA{attrs: map[[2]uint32][]byte{}, ca: ca}
	put := func(id uint16, mod uint32, a iba.Attribute) {
		b := make([]byte, ccDataSize)
		_ = a.MarshalTo(b)
		f.attrs[[2]uint32{uint32(id), mod}] = b
	}
	put(ccAttrClassPortInfo, 0, &iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x0100, RespTimeValue: 18, RedirectFL: 0x12345, TrapLID: 7})
	put(ccAttrCongestionInfo, 0, &iba.CongestionInfo{CongestionInfo: 0x8000, ControlTableCap: 2})
	put(ccAttrCongestionKeyInfo, 0, &iba.CongestionKeyInfo{CCKey: 0, CCKeyProtectBit: 1, CCKeyLeasePeriod: 60, CCKeyViolations: 3})
	put(ccAttrSwitchCongSetting, 0, &iba.SwitchCongestionSetting{ControlMap: 0x1f, Threshold: 0xf, PacketSize: 8, CSReturnDelay: 0x4001, MarkingRate: 1})
	put(ccAttrTimeStamp, 0, &iba.TimeStamp{TimeStamp: 123456})
	spcs := &iba.SwitchPortCongestionSetting{}
	spcs.Block[1] = iba.SwitchPortCongestionSettingElement{Valid: 1, Threshold: 0xa, PacketSize: 4, CongParmMarkingRate: 9}
	put(ccAttrSwitchPortSetting, 0, spcs)
	put(ccAttrSwitchPortSetting, 1, &iba.SwitchPortCongestionSetting{})
	cas := &iba.CACongestionSetting{PortControl: 1, ControlMap: 3}
	cas.EntryList[0] = iba.CACongestionEntry{CCTITimer: 150, CCTIIncrease: 1}
	cas.EntryList[1] = iba.CACongestionEntry{CCTITimer: 150, CCTIIncrease: 1, TriggerThreshold: 2, CCTIMin: 1}
	put(ccAttrCACongSetting, 0, cas)
	cct := &iba.CongestionControlTable{CCTILimit: 65}
	for i := range cct.EntryList {
		cct.EntryList[i] = iba.CongestionControlTableEntry{CCTShift: uint8(i % 4), CCTMultiplier: uint16(i)}
	}
	put(ccAttrCongControlTable, 0, cct)
	put(ccAttrCongControlTable, 1, &iba.CongestionControlTable{CCTILimit: 65, EntryList: [64]iba.CongestionControlTableEntry{{CCTShift: 1, CCTMultiplier: 1000}, {CCTShift: 2, CCTMultiplier: 2000}}})
	var lg iba.CongestionLogSwitch
	lg.LogType, lg.CongestionFlags, lg.LogEventsCounter, lg.CurrentTimeStamp = 1, 1, 2, 5000
	lg.PortMap[31] = 0x06
	lg.EntryList[0] = iba.CongestionLogEventSW{SLID: 3, DLID: 9, SL: 2, Timestamp: 4000}
	lg.EntryList[3] = iba.CongestionLogEventSW{SLID: 4, DLID: 10, Timestamp: 4500}
	if ca {
		var lc iba.CongestionLogCA
		lc.LogType, lc.ThresholdEventCounter, lc.ThresholdCongestionEventMap, lc.CurrentTimeStamp = 2, 1, 0x0004, 777
		lc.EntryList[0] = iba.CongestionLogEventCA{LocalQPCNEntry: 0x48, SLCNEntry: 2, ServiceTypeCNEntry: 1, RemoteQPNumberCNEntry: 0x49, LocalLIDCN: 5, RemoteLIDCNEntry: 6, TimestampCNEntry: 700}
		b := make([]byte, ccLogDataSiz)
		_ = lc.MarshalTo(b)
		f.attrs[[2]uint32{ccAttrCongestionLog, 0}] = b
	} else {
		b := make([]byte, ccLogDataSiz)
		_ = lg.MarshalTo(b)
		f.attrs[[2]uint32{ccAttrCongestionLog, 0}] = b
	}
	return f
}

func (f *fakeCCA) respond(req *mad.Packet) []*mad.Packet {
	h, _ := madtest.ParseHeader(req.MAD)
	reply := func(off int, b []byte) []*mad.Packet {
		r := madtest.Reply(req, 0, nil)
		copy(r.MAD[off:], b)
		return []*mad.Packet{r}
	}
	switch h.Class {
	case iba.ClassSubnMgt:
		if h.AttrID == iba.AttrIDNodeInfo {
			ni := iba.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: iba.NodeTypeSwitch, NumPorts: 40, NodeGUID: 0x0002c90300a00001}
			if f.ca {
				ni.NodeType, ni.NumPorts = iba.NodeTypeCA, 1
			}
			b := make([]byte, 64)
			_ = ni.MarshalTo(b)
			return reply(64, b)
		}
	case iba.ClassCongestionCtl:
		f.mu.Lock()
		defer f.mu.Unlock()
		key := [2]uint32{uint32(h.AttrID), h.AttrMod}
		off := ccDataOff
		if h.AttrID == ccAttrCongestionLog {
			off = ccLogDataOff
		}
		if h.Method == iba.MethodSet {
			f.sets = append(f.sets, strconv.Itoa(int(h.AttrID))+"/"+strconv.Itoa(int(h.AttrMod)))
			f.attrs[key] = append([]byte(nil), req.MAD[off:]...)
		}
		if b, ok := f.attrs[key]; ok {
			return reply(off, b)
		}
	}
	return []*mad.Packet{madtest.Reply(req, 0x0c, nil)}
}

// runFake runs one command built by mk on an in-memory agent.
func runFake(t *testing.T, respond func(*mad.Packet) []*mad.Packet, mk func(*Env, func() (*session, error)) interface {
	SetArgs([]string)
	Execute() error
}, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e := &Env{Ctx: ctx, Stdout: &out, Stderr: &errb, Retries: -1}
	if len(args) > 0 && args[0] == "--json" {
		e.JSON = true
		args = args[1:]
	}
	open := func() (*session, error) {
		mc := mad.NewClient(madtest.New(respond), mad.WithTimeout(200*time.Millisecond), mad.WithRetries(1))
		lp, err := mc.LocalPort(ctx)
		if err != nil {
			return nil, err
		}
		return testSession(e, mc, lp), nil
	}
	c := mk(e, open)
	c.SetArgs(args)
	err := c.Execute()
	var ec interface{ ExitCode() int }
	var ue *UsageError
	switch {
	case err == nil:
	case errors.As(err, &ec):
		code = ec.ExitCode()
		errb.WriteString(err.Error())
	case errors.As(err, &ue):
		code = 2
		errb.WriteString(err.Error())
	default:
		code = 1
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func ccQueryMaker(e *Env, open func() (*session, error)) interface {
	SetArgs([]string)
	Execute() error
} {
	c := newIBCCQueryWith(e, open)
	c.SilenceErrors, c.SilenceUsage = true, true
	return c
}

func ccConfigMaker(e *Env, open func() (*session, error)) interface {
	SetArgs([]string)
	Execute() error
} {
	c := newIBCCConfigWith(e, open)
	c.SilenceErrors, c.SilenceUsage = true, true
	return c
}

// TestIBCCQueryFakeAgent checks every ibccquery layout against a fake
// agent with meaningful values (ibsim's answers are not); the golden
// files were checked by hand against ibccquery.c and libibmad's fields.c.
func TestIBCCQueryFakeAgent(t *testing.T) {
	for _, tc := range []struct {
		name string
		ca   bool
		args []string
		code int
	}{
		{"classportinfo", false, []string{"CP", "5"}, 0},
		{"congestioninfo", false, []string{"CI", "5"}, 0},
		{"keyinfo", false, []string{"CK", "5"}, 0},
		{"log-switch", false, []string{"CL", "5"}, 0},
		{"log-ca", true, []string{"CL", "5"}, 0},
		{"switchsetting", false, []string{"SS", "5"}, 0},
		{"switchport-all", false, []string{"SP", "5"}, 0},
		{"switchport-1", false, []string{"SP", "5", "1"}, 0},
		{"switchport-ca", true, []string{"SP", "5"}, 255},
		{"casetting", false, []string{"CS", "5"}, 0},
		{"cct", false, []string{"CT", "5"}, 0},
		{"timestamp", false, []string{"TI", "5"}, 0},
		{"json", false, []string{"--json", "SP", "5", "1"}, 0},
		{"cckey", false, []string{"-c", "7", "CI", "5"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runFake(t, newFakeCCA(tc.ca).respond, ccQueryMaker, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			golden(t, tc.name, out+errOut)
		})
	}
}

// TestIBCCConfigFakeAgent checks that each ibccconfig op writes what it
// is given where the IBA puts it, by reading it back with ibccquery.
func TestIBCCConfigFakeAgent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   []string
		query []string
		sets  string
	}{
		{"keyinfo", []string{"CK", "5", "0x1122334455667788", "1", "300", "0"}, []string{"CK", "5"}, "18/0"},
		{"switchsetting", []string{"SS", "5", "2", "0x1F", "0x1FFFFFFFFF", "0x0", "0xF", "8", "1:3", "1"}, []string{"SS", "5"}, "20/0"},
		{"switchport", []string{"SP", "5", "33", "1", "1", "7", "2", "100"}, []string{"SP", "5", "1"}, "21/1"},
		{"casetting", []string{"CS", "5", "1", "0x5", "150", "1", "3", "0"}, []string{"CS", "5"}, "22/0"},
		{"cct", []string{"CT", "5", "66", "1", "1:10", "2:20", "3:30"}, []string{"CT", "5"}, "23/1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cca := newFakeCCA(false)
			out, errOut, code := runFake(t, cca.respond, ccConfigMaker, tc.set...)
			if code != 0 || out != "" {
				t.Fatalf("ibccconfig %v: exit %d, stdout %q, stderr %s", tc.set, code, out, errOut)
			}
			if got := strings.Join(cca.sets, ","); got != tc.sets {
				t.Errorf("Sets sent: %s, want %s", got, tc.sets)
			}
			if tc.name == "switchport" {
				// Port 33 is element 1 of the IBA's second block of 32;
				// the rest of the block is what was read before.
				var blk iba.SwitchPortCongestionSetting
				_ = blk.Unmarshal(cca.attrs[[2]uint32{ccAttrSwitchPortSetting, 1}])
				want := iba.SwitchPortCongestionSettingElement{Valid: 1, ControlType: 1, Threshold: 7, PacketSize: 2, CongParmMarkingRate: 100}
				if blk.Block[1] != want || blk.Block[0] != (iba.SwitchPortCongestionSettingElement{}) {
					t.Errorf("block 1 after the Set: %+v", blk.Block[:2])
				}
			}
			out, errOut, code = runFake(t, cca.respond, ccQueryMaker, tc.query...)
			if code != 0 {
				t.Fatalf("ibccquery %v: exit %d: %s", tc.query, code, errOut)
			}
			golden(t, tc.name, out)
		})
	}
}

// FuzzIBCCConfigArgs runs ibccconfig with the fuzzer's words as its
// arguments on an in-process fabric: no op or parameter (integers in C's
// notations, 256-bit masks, shift:multiplier pairs, too few or too many)
// makes it panic, hang or end with a status it does not document.
func FuzzIBCCConfigArgs(f *testing.F) {
	for _, s := range []string{
		"CACongestionSetting 5 0 0x3 150 1 0 0", "CS 5 0 0x3 150 1 0 0 0x4 1 1 1 1",
		"SwitchCongestionSetting 1 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1", "SS 1 0 0 0 0 0 0 0",
		"SwitchPortCongestionSetting 1 1 1 0 1 1 1", "SP 1 99 1 0 1 1 1",
		"CongestionKeyInfo 1 0x1 1 0 0", "CK 1 -1 1 0 0", "CongestionControlTable 5 63 0 0:0 0:1", "CCT 5 0 0 1:1 x:1 1:",
		"SS 1 0x" + strings.Repeat("f", 65) + " 0 0 0 0 0 0", "SS 1 0xfg 0 0 0 0 0 0", "CS 5 0 0x3 99999999999999999999 1 0 0",
		"CS", "CS 5", "bogus 1", "-c 0x1 CS 5 0 0x3 150 1 0 0", "-c x CK 1 0 0 0 0", "CCT 5 4294967296 0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzCommand(t, append([]string{"ibccconfig"}, fuzzWords(s, 14)...)...)
	})
}
