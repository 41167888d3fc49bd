package sim

import (
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// TestPMASampling runs a sample at sw2 port 1 (towards hca2), which the
// test's own MADs never cross, so the sampled counts are the traffic
// model's alone.
func TestPMASampling(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	sw2 := gsi(lidOf(t, f, "sw2", 0))
	hca2 := lidOf(t, f, "hca2", 1)
	traffic := func(pkts, bytes uint64) {
		t.Helper()
		if err := f.Traffic("hca1", 1, hca2, pkts, bytes); err != nil {
			t.Fatal(err)
		}
	}
	result := func() (iba.PortSamplesResult, iba.PortSamplesResultExtended) {
		t.Helper()
		var r iba.PortSamplesResult
		var x iba.PortSamplesResultExtended
		if err := c.PerformanceGet(ctx, sw2, &r, 0); err != nil {
			t.Fatal(err)
		}
		if err := c.PerformanceGet(ctx, sw2, &x, 0); err != nil {
			t.Fatal(err)
		}
		return r, x
	}

	// Nothing sampled yet: status done, no counts.
	if r, _ := result(); r.SampleStatus != sampleDone || r.Counter[0] != 0 {
		t.Fatalf("before any sample: %+v", r)
	}
	ctl := iba.PortSamplesControl{PortSelect: 1, SampleStart: 1, SampleInterval: 2, Tag: 0xBEEF}
	ctl.CounterSelect[0], ctl.CounterSelect[1], ctl.CounterSelect[2] = selXmitPkts, selXmitData, selRcvPkts
	if err := c.PerformanceSet(ctx, sw2, &ctl, 0); err != nil {
		t.Fatal(err)
	}
	if ctl.SampleStatus != sampleStarted || ctl.Tag != 0xBEEF || ctl.CounterWidth != 4 || ctl.CounterMask0 != 1 {
		t.Fatalf("started sample: %+v", ctl)
	}
	traffic(100, 100*4096) // the start tick: not sampled
	got := iba.PortSamplesControl{}
	if err := c.PerformanceGet(ctx, sw2, &got, 0); err != nil || got.SampleStatus != sampleRunning || got.PortSelect != 1 {
		t.Fatalf("running sample: %+v (%v)", got, err)
	}
	if r, _ := result(); r.SampleStatus != sampleRunning || r.Tag != 0xBEEF || r.Counter[0] != 0 {
		t.Fatalf("result while running: %+v", r)
	}
	// A Set while a sample runs changes nothing.
	again := iba.PortSamplesControl{PortSelect: 3, SampleInterval: 9, Tag: 0x1111}
	if err := c.PerformanceSet(ctx, sw2, &again, 0); err != nil || again.Tag != 0xBEEF || again.SampleStatus != sampleRunning {
		t.Fatalf("Set while running: %+v (%v)", again, err)
	}
	traffic(10, 4000)
	traffic(5, 400) // the second interval tick ends the sample with it
	traffic(1000, 1000)
	r, x := result()
	if r.SampleStatus != sampleDone || r.Tag != 0xBEEF || r.Counter[0] != 15 || r.Counter[1] != 1100 || r.Counter[2] != 0 {
		t.Fatalf("sample result: %+v", r)
	}
	if x.SampleStatus != sampleDone || x.Tag != 0xBEEF || x.ExtendedWidth != 1 || x.Counter[0] != 15 || x.Counter[1] != 1100 {
		t.Fatalf("extended sample result: %+v", x)
	}

	// On an idle fabric AdvanceSamples is the clock.
	ctl = iba.PortSamplesControl{PortSelect: 1, SampleInterval: 5, Tag: 2}
	ctl.CounterSelect[0] = selXmitPkts
	if err := c.PerformanceSet(ctx, sw2, &ctl, 0); err != nil || ctl.SampleStatus != sampleRunning {
		t.Fatalf("sample with no start delay: %+v (%v)", ctl, err)
	}
	f.AdvanceSamples(4)
	if r, _ := result(); r.SampleStatus != sampleRunning {
		t.Fatalf("after 4 of 5 ticks: %+v", r)
	}
	f.AdvanceSamples(1)
	if r, _ := result(); r.SampleStatus != sampleDone || r.Tag != 2 || r.Counter[0] != 0 {
		t.Fatalf("after 5 idle ticks: %+v", r)
	}
	// A zero interval is done at once.
	ctl = iba.PortSamplesControl{PortSelect: 1, Tag: 3}
	if err := c.PerformanceSet(ctx, sw2, &ctl, 0); err != nil || ctl.SampleStatus != sampleDone {
		t.Fatalf("zero-length sample: %+v (%v)", ctl, err)
	}
	// Bad CounterSelect and PortSelect values are refused; results are
	// read-only.
	bad := iba.PortSamplesControl{PortSelect: 1, SampleInterval: 1}
	bad.CounterSelect[4] = 0x0777
	if err := c.PerformanceSet(ctx, sw2, &bad, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("CounterSelect 0x777: %v", err)
	}
	if err := c.PerformanceSet(ctx, sw2, &iba.PortSamplesControl{PortSelect: 9}, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("PortSelect 9: %v", err)
	}
	if err := c.PerformanceSet(ctx, sw2, &iba.PortSamplesResult{}, 0); err == nil {
		t.Fatal("Set PortSamplesResult succeeded")
	}
}

// TestPMAErrorDetails injects each detail counter and reads it back, with
// its total in PortCounters, then clears them selectively.
func TestPMAErrorDetails(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	sw1 := gsi(lidOf(t, f, "sw1", 0))
	var vlWait, vlFC [16]uint64
	vlWait[2], vlFC[5] = 40, 7
	if err := f.InjectErrors("sw1", 2, PortErrors{
		LocalPhysicalErrors: 1, MalformedPacketErrors: 2, BufferOverrunErrors: 3, DLIDMappingErrors: 4,
		VLMappingErrors: 5, LoopingErrors: 6, InactiveDiscards: 7, NeighborMTUDiscards: 8,
		SwLifetimeLimitDiscards: 9, SwHOQLifetimeLimitDiscards: 10, XmitWaitVL: vlWait, FlowCtlUpdateErrorsVL: vlFC,
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.InjectErrors("sw1", 3, PortErrors{MalformedPacketErrors: 100}); err != nil {
		t.Fatal(err)
	}
	rcv := iba.PortRcvErrorDetails{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &rcv, 0); err != nil {
		t.Fatal(err)
	}
	if rcv.PortLocalPhysicalErrors != 1 || rcv.PortMalformedPacketErrors != 2 || rcv.PortBufferOverrunErrors != 3 ||
		rcv.PortDLIDMappingErrors != 4 || rcv.PortVLMappingErrors != 5 || rcv.PortLoopingErrors != 6 {
		t.Fatalf("PortRcvErrorDetails %+v", rcv)
	}
	disc := iba.PortXmitDiscardDetails{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &disc, 0); err != nil || disc.PortInactiveDiscards != 7 ||
		disc.PortNeighborMTUDiscards != 8 || disc.PortSwLifetimeLimitDiscards != 9 || disc.PortSwHOQLifetimeLimitDiscards != 10 {
		t.Fatalf("PortXmitDiscardDetails %+v (%v)", disc, err)
	}
	wait := iba.PortVLXmitWaitCounters{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &wait, 0); err != nil || wait.PortVLXmitWait[2] != 40 || wait.PortVLXmitWait[0] != 0 {
		t.Fatalf("PortVLXmitWaitCounters %+v (%v)", wait, err)
	}
	fc := iba.PortVLXmitFlowCtlUpdateErrors{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &fc, 0); err != nil || fc.PortVLXmitFlowCtlUpdateErrors[5] != 3 || fc.PortVLXmitFlowCtlUpdateErrors[4] != 0 {
		t.Fatalf("PortVLXmitFlowCtlUpdateErrors (2-bit, saturated) %+v (%v)", fc, err)
	}
	// The details count in the PortCounters totals too.
	pc := iba.PortCounters{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &pc, 0); err != nil || pc.PortRcvErrors != 21 || pc.PortXmitDiscards != 34 || pc.PortXmitWait != 40 {
		t.Fatalf("PortCounters totals %+v (%v)", pc, err)
	}
	all := iba.PortRcvErrorDetails{PortSelect: 0xFF}
	if err := c.PerformanceGet(ctx, sw1, &all, 0); err != nil || all.PortMalformedPacketErrors != 102 || all.PortLoopingErrors != 6 {
		t.Fatalf("AllPortSelect PortRcvErrorDetails %+v (%v)", all, err)
	}

	// Set clears what CounterSelect names, and only that.
	clr := iba.PortRcvErrorDetails{PortSelect: 0xFF, CounterSelect: 1 << 1}
	if err := c.PerformanceSet(ctx, sw1, &clr, 0); err != nil || clr.PortMalformedPacketErrors != 0 || clr.PortLocalPhysicalErrors != 1 {
		t.Fatalf("after clearing malformed packets: %+v (%v)", clr, err)
	}
	dclr := iba.PortXmitDiscardDetails{PortSelect: 2, CounterSelect: 1<<0 | 1<<3}
	if err := c.PerformanceSet(ctx, sw1, &dclr, 0); err != nil || dclr.PortInactiveDiscards != 0 ||
		dclr.PortNeighborMTUDiscards != 8 || dclr.PortSwHOQLifetimeLimitDiscards != 0 {
		t.Fatalf("after clearing discards: %+v (%v)", dclr, err)
	}
	wclr := iba.PortVLXmitWaitCounters{PortSelect: 2, CounterSelect: 1 << 2}
	if err := c.PerformanceSet(ctx, sw1, &wclr, 0); err != nil || wclr.PortVLXmitWait[2] != 0 {
		t.Fatalf("after clearing VL 2 XmitWait: %+v (%v)", wclr, err)
	}
	// The totals are counters of their own: clearing details leaves them.
	pc = iba.PortCounters{PortSelect: 2}
	if err := c.PerformanceGet(ctx, sw1, &pc, 0); err != nil || pc.PortRcvErrors != 21 {
		t.Fatalf("PortCounters after clearing details %+v (%v)", pc, err)
	}
	// A CA has no AllPortSelect, and no port 5.
	if err := c.PerformanceGet(ctx, gsi(lidOf(t, f, "hca2", 1)), &iba.PortRcvErrorDetails{PortSelect: 0xFF}, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("AllPortSelect at a CA: %v", err)
	}
	if err := c.PerformanceGet(ctx, sw1, &iba.PortXmitDataSL{PortSelect: 5}, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("port 5 of a 4-port switch: %v", err)
	}
}

// TestPMATrafficDetails checks the per-SL, per-VL, opcode and flow control
// counters the traffic model moves, and the discards it counts.
func TestPMATrafficDetails(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	h2 := gsi(lidOf(t, f, "hca2", 1))
	h1 := gsi(lidOf(t, f, "hca1", 1))
	lid2 := lidOf(t, f, "hca2", 1)

	// The opcode counters count what the last Set named.
	op := iba.PortOpRcvCounters{OpCode: OpRCSendOnly, PortSelect: 1, CounterSelect: 3}
	if err := c.PerformanceSet(ctx, h2, &op, 0); err != nil || op.OpCode != OpRCSendOnly {
		t.Fatalf("PortOpRcvCounters Set %+v (%v)", op, err)
	}
	vop := iba.PortVLOpPackets{OpCode: OpRCSendOnly, PortSelect: 1}
	if err := c.PerformanceSet(ctx, h2, &vop, 0); err != nil {
		t.Fatal(err)
	}
	vod := iba.PortVLOpData{OpCode: 0x0A, PortSelect: 1} // RC RDMA WRITE Only
	if err := c.PerformanceSet(ctx, h2, &vod, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.TrafficFlow("hca1", 1, lid2, Flow{SL: 3, OpCode: OpRCSendOnly}, 50, 50*1024); err != nil {
		t.Fatal(err)
	}
	if err := f.TrafficFlow("hca1", 1, lid2, Flow{SL: 3, OpCode: 0x0A}, 2, 8192); err != nil {
		t.Fatal(err)
	}
	if err := f.TrafficFlow("hca1", 1, lid2, Flow{SL: 16}, 1, 4); err == nil {
		t.Fatal("SL 16 accepted")
	}
	op = iba.PortOpRcvCounters{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h2, &op, 0); err != nil || op.OpCode != OpRCSendOnly || op.PortOpRcvPkts != 50 || op.PortOpRcvData != 50*256 {
		t.Fatalf("PortOpRcvCounters %+v (%v)", op, err)
	}
	vop = iba.PortVLOpPackets{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h2, &vop, 0); err != nil || vop.PortVLOpPackets[3] != 50 || vop.PortVLOpPackets[0] != 0 {
		t.Fatalf("PortVLOpPackets (SL 3 is VL 3 by default) %+v (%v)", vop, err)
	}
	vod = iba.PortVLOpData{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h2, &vod, 0); err != nil || vod.OpCode != 0x0A || vod.PortVLOpData[3] != 2048 {
		t.Fatalf("PortVLOpData %+v (%v)", vod, err)
	}
	rsl := iba.PortRcvDataSL{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h2, &rsl, 0); err != nil || rsl.PortRcvDataSL[3] != 50*256+2048 || rsl.PortRcvDataSL[0] != 0 {
		t.Fatalf("PortRcvDataSL %+v (%v)", rsl, err)
	}
	xsl := iba.PortXmitDataSL{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h1, &xsl, 0); err != nil || xsl.PortXmitDataSL[3] != 50*256+2048 {
		t.Fatalf("PortXmitDataSL %+v (%v)", xsl, err)
	}
	flow := iba.PortFlowCtlCounters{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h2, &flow, 0); err != nil || flow.PortXmitFlowPkts != 52 || flow.PortRcvFlowPkts != 0 {
		t.Fatalf("PortFlowCtlCounters at the receiver %+v (%v)", flow, err)
	}
	flow = iba.PortFlowCtlCounters{PortSelect: 1}
	if err := c.PerformanceGet(ctx, h1, &flow, 0); err != nil || flow.PortRcvFlowPkts != 52 {
		t.Fatalf("PortFlowCtlCounters at the sender %+v (%v)", flow, err)
	}
	// Set clears per SL.
	rsl = iba.PortRcvDataSL{PortSelect: 1, CounterSelect: 1 << 3}
	if err := c.PerformanceSet(ctx, h2, &rsl, 0); err != nil || rsl.PortRcvDataSL[3] != 0 {
		t.Fatalf("PortRcvDataSL after clearing SL 3 %+v (%v)", rsl, err)
	}

	// A LID no LFT has is a DLID mapping error where the packets came in.
	if err := f.Traffic("hca1", 1, 999, 4, 64); err == nil {
		t.Fatal("traffic to LID 999 succeeded")
	}
	sw1 := gsi(lidOf(t, f, "sw1", 0))
	rcv := iba.PortRcvErrorDetails{PortSelect: 1}
	if err := c.PerformanceGet(ctx, sw1, &rcv, 0); err != nil || rcv.PortDLIDMappingErrors != 4 {
		t.Fatalf("DLID mapping errors at sw1/1 %+v (%v)", rcv, err)
	}
	// A cable pulled is an inactive discard at the output port.
	if err := f.SetLink("sw2", 1, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Traffic("hca1", 1, lid2, 3, 64); err == nil {
		t.Fatal("traffic over a pulled cable succeeded")
	}
	disc := iba.PortXmitDiscardDetails{PortSelect: 1}
	if err := c.PerformanceGet(ctx, gsi(lidOf(t, f, "sw2", 0)), &disc, 0); err != nil || disc.PortInactiveDiscards != 3 {
		t.Fatalf("inactive discards at sw2/1 %+v (%v)", disc, err)
	}
}
