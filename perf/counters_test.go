package perf

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

func TestFromPortCounters(t *testing.T) {
	pc := &iba.PortCounters{PortSelect: 3, SymbolErrorCounter: 0xffff, LinkDownedCounter: 2, PortXmitWait: 77,
		QP1Dropped: 5, PortXmitData: 1000, LocalLinkIntegrityErrors: 0xf}
	c := FromPortCounters(pc, Capabilities{})
	if c.Port != 3 || c.Values[SymbolErrorCounter] != 0xffff || !c.Saturated(SymbolErrorCounter) || c.Saturated(LinkDownedCounter) {
		t.Errorf("counters %+v", c)
	}
	if c.Has(PortXmitWait) || c.Has(QP1Dropped) {
		t.Error("PortXmitWait and QP1Dropped read from a PMA that does not count them")
	}
	if !c.Saturated(LocalLinkIntegrityErrors) || c.Bits(LocalLinkIntegrityErrors) != 4 {
		t.Errorf("a 4-bit counter at 15: saturated %v, %d bits", c.Saturated(LocalLinkIntegrityErrors), c.Bits(LocalLinkIntegrityErrors))
	}
	if c.Bytes(PortXmitData) != 4000 || c.Bytes(LinkDownedCounter) != 2 {
		t.Errorf("bytes %d, %d", c.Bytes(PortXmitData), c.Bytes(LinkDownedCounter))
	}
	caps := Capabilities{CapMask: iba.PMCapPortCountersXmitWait | iba.PMCapQP1Dropped | iba.PMCapExtendedWidth,
		CapMask2: iba.PMCap2AdditionalPortCountersExtended}
	c = FromPortCounters(pc, caps)
	if v, ok := c.Get(PortXmitWait); !ok || v != 77 {
		t.Errorf("PortXmitWait %d %v", v, ok)
	}
	pce := &iba.PortCountersExtended{PortSelect: 3, PortXmitData: 1 << 40, SymbolErrorCounter: 1 << 20, PortUnicastXmitPkts: 9}
	c.AddExtended(pce, caps)
	if c.Values[PortXmitData] != 1<<40 || !c.Is64(PortXmitData) || c.Values[SymbolErrorCounter] != 1<<20 || c.Saturated(SymbolErrorCounter) || c.Values[PortUnicastXmitPkts] != 9 {
		t.Errorf("after PortCountersExtended %+v", c)
	}
	// Without the additional counters the error counters stay the
	// narrow ones.
	c = FromPortCounters(pc, Capabilities{CapMask: iba.PMCapExtendedWidthNoIETF})
	c.AddExtended(pce, Capabilities{CapMask: iba.PMCapExtendedWidthNoIETF})
	if c.Is64(SymbolErrorCounter) || c.Has(PortUnicastXmitPkts) || !c.Is64(PortXmitData) {
		t.Errorf("NoIETF: %+v", c)
	}
}

func TestSaturatingAdd(t *testing.T) {
	for _, tc := range []struct {
		a, v uint64
		bits int
		want uint64
	}{
		{0xe, 1, 4, 0xf}, {0xe, 2, 4, 0xf}, {0xfe, 1, 8, 0xff}, {0xff, 5, 8, 0xff},
		{0xfffffff0, 0x20, 32, 0xffffffff}, {1 << 63, 1 << 63, 64, 1<<64 - 1}, {3, 4, 16, 7},
	} {
		if got := satAdd(tc.a, tc.v, tc.bits); got != tc.want {
			t.Errorf("satAdd(%#x, %#x, %d) = %#x, want %#x", tc.a, tc.v, tc.bits, got, tc.want)
		}
	}
	var a, b Counters
	a.Set(LinkDownedCounter, 200, false)
	b.Set(LinkDownedCounter, 100, false)
	b.Set(PortXmitData, 5, true)
	a.Add(&b)
	if a.Values[LinkDownedCounter] != 255 || a.Values[PortXmitData] != 5 || a.Port != AllPorts {
		t.Errorf("sum %+v", a)
	}
	var sum iba.PortCounters
	AddPortCounters(&sum, &iba.PortCounters{LocalLinkIntegrityErrors: 9, PortXmitData: 0xfffffff0})
	AddPortCounters(&sum, &iba.PortCounters{LocalLinkIntegrityErrors: 9, PortXmitData: 0x20})
	if sum.LocalLinkIntegrityErrors != 0xf || sum.PortXmitData != 0xffffffff || sum.PortSelect != AllPorts {
		t.Errorf("PortCounters sum %+v", sum)
	}
}

func TestDiff(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mk := func(v uint64, wide bool, at time.Time) *Counters {
		c := &Counters{Time: at}
		c.Set(PortRcvErrors, v, wide)
		c.Set(PortXmitData, v, wide)
		return c
	}
	for _, tc := range []struct {
		name      string
		prev, cur *Counters
		want      Delta
	}{
		{"counts", mk(10, false, t0), mk(25, false, t0), Delta{Value: 15}},
		{"cleared", mk(10, false, t0), mk(3, false, t0), Delta{Value: 3, Reset: true}},
		{"saturated", mk(10, false, t0), mk(0xffff, false, t0), Delta{Value: 0xffff - 10, Saturated: true}},
		{"wrapped", mk(math.MaxUint64-4, true, t0), mk(5, true, t0), Delta{Value: 10, Wrapped: true}},
		{"64-bit cleared", mk(1000, true, t0), mk(5, true, t0), Delta{Value: 5, Reset: true}},
	} {
		got, ok := Diff(tc.prev, tc.cur, PortRcvErrors)
		if !ok || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := Diff(&Counters{}, mk(1, false, t0), PortRcvErrors); ok {
		t.Error("a delta from a reading without the counter")
	}
	r, d, ok := Rate(mk(100, true, t0), mk(600, true, t0.Add(2*time.Second)), PortXmitData)
	if !ok || d.Value != 500 || r != 1000 {
		t.Errorf("rate %v (%+v, %v), want 1000 octets/s", r, d, ok)
	}
	if _, _, ok := Rate(mk(1, true, t0), mk(2, true, t0), PortXmitData); ok {
		t.Error("a rate over no time")
	}
}

func TestParseCounter(t *testing.T) {
	for _, in := range []string{"PortRcvErrors", "portRcvErrors", "RcvErrors", "PORTRCVERRORS"} {
		if c, ok := ParseCounter(in); !ok || c != PortRcvErrors {
			t.Errorf("%q: %v %v", in, c, ok)
		}
	}
	if _, ok := ParseCounter("PortSelect"); ok {
		t.Error("PortSelect is a counter")
	}
	for c := Counter(0); c < NumCounters; c++ {
		if got, ok := ParseCounter(c.String()); !ok || got != c {
			t.Errorf("%v does not parse back", c)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	th, err := ParseThresholds(strings.NewReader("# ibqueryerrors\n\nSymbolErrorCounter=0x10\n  portRcvErrors = 010\nXmtWait=7\nPortXmitData=1000\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	want := map[Counter]uint64{SymbolErrorCounter: 16, PortRcvErrors: 8, PortXmitWait: 7, PortXmitData: 1000}
	if got := th.Counters(); len(got) != 4 || got[0] != SymbolErrorCounter || got[3] != PortXmitData {
		t.Errorf("order %v", got)
	}
	for k, v := range want {
		if l, ok := th.Get(k); !ok || l != v {
			t.Errorf("%v: %d %v, want %d", k, l, ok, v)
		}
	}
	c := &Counters{}
	c.Set(SymbolErrorCounter, 17, false)
	c.Set(PortRcvErrors, 8, false)
	c.Set(LinkDownedCounter, 1, false)
	if ex := th.Exceeded(c); len(ex) != 2 || ex[0] != SymbolErrorCounter || ex[1] != LinkDownedCounter {
		t.Errorf("exceeded %v", ex)
	}
	for _, tc := range []struct{ in, msg string }{
		{"SymbolErrorCounter=1\nBogus=1\n", "line 2"},
		{"VL15Dropped\n", "want NAME=VALUE"},
		{"VL15Dropped=ten\n", "not a number"},
		{"VL15Dropped=0x10000000000000000\n", "not a number"},
		{strings.Repeat("#", 70<<10) + "\n", "a line longer than 65536 bytes"},
	} {
		_, err := ParseThresholds(strings.NewReader(tc.in), "t")
		if !errors.Is(err, ErrThresholds) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%.30q: error %v, want %q", tc.in, err, tc.msg)
		}
	}
	big := strings.NewReader(strings.Repeat("# padding\n", MaxThresholdFile/10+2))
	if _, err := ParseThresholds(big, "big"); !errors.Is(err, ErrThresholds) {
		t.Errorf("a file over the bound: %v", err)
	}
}

func FuzzParseThresholds(f *testing.F) {
	f.Add("SymbolErrorCounter=0x10\n# c\n\nRcvErrors = 5\n")
	f.Add("x=\n=1\n")
	f.Fuzz(func(t *testing.T, in string) {
		th, err := ParseThresholds(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrThresholds) {
				t.Fatalf("error %v is not a ThresholdError", err)
			}
			return
		}
		for _, k := range th.Counters() {
			if k >= NumCounters {
				t.Fatalf("counter %d", k)
			}
		}
	})
}
