package iba

import "testing"

// TestPerfSizes checks the sizes the IBA tables give (bytes of attribute
// data, the rest of the 192-byte PerfMgt data area being reserved).
func TestPerfSizes(t *testing.T) {
	for _, c := range []struct {
		a    Attribute
		size int
		id   uint16
	}{
		{new(PortSamplesControl), 192, 0x10},
		{new(PortSamplesResult), 64, 0x11},
		{new(PortCounters), 44, 0x12},
		{new(PortRcvErrorDetails), 16, 0x15},
		{new(PortXmitDiscardDetails), 12, 0x16},
		{new(PortVLXmitFlowCtlUpdateErrors), 8, 0x1B},
		{new(PortCountersExtended), 184, 0x1D},
		{new(PortSamplesResultExtended), 128, 0x1E},
		{new(PortExtendedSpeedsCounters), 140, 0x1F},
		{new(PortExtendedSpeedsCountersRSFEC), 152, 0x1F},
		{new(PortXmitDataSL), 68, 0x36},
		{new(PortVLXmitTimeCong), 64, 0x35},
	} {
		s := c.a.Desc()
		if s.Size != c.size || !s.HasAttrID || s.AttrID != c.id {
			t.Errorf("%s: %d bytes, attribute %#x; want %d bytes, %#x", s.Name, s.Size, s.AttrID, c.size, c.id)
		}
	}
}

// TestPerfRegistry checks that every PerfMgt attribute is found by its ID
// and that the RS-FEC layout does not shadow PortExtendedSpeedsCounters.
func TestPerfRegistry(t *testing.T) {
	for _, s := range allowing("PerformanceGet") {
		if s.Name != "ClassPortInfo" && s.VariantOf == nil {
			expectAttr(t, ClassPerfMgt, s.AttrID, s.Name)
			if !s.Allows("PerformanceGet") {
				t.Errorf("%s does not allow PerformanceGet", s.Name)
			}
		}
	}
	expectAttr(t, ClassPerfMgt, 0x1F, "PortExtendedSpeedsCounters")
	if f, ok := FormatOf(ClassPerfMgt); !ok || f.Name != "PMFormat" {
		t.Errorf("FormatOf(PerfMgt) = %v", f)
	}
}

// TestPerfLabels checks the labels and hints against what perfquery
// prints (libibmad fields.c): every counter it shows has its label, and
// CounterSelect is hex.
func TestPerfLabels(t *testing.T) {
	for _, s := range allowing("PerformanceGet") {
		if s.Name == "ClassPortInfo" {
			continue
		}
		for _, f := range s.Fields {
			if !f.Reserved && f.Label == "" && f.Name != "opCode" && f.Name != "extendedWidth" {
				t.Errorf("%s.%s has no infiniband-diags label", s.Name, f.Name)
			}
		}
	}
	for _, c := range []struct {
		s     Attribute
		name  string
		label string
		hex   bool
	}{
		{new(PortCounters), "counterSelect", "CounterSelect", true},
		{new(PortCounters), "VL15Dropped", "VL15Dropped", false},
		{new(PortRcvErrorDetails), "portMalformedPacketErrors", "PortMalformedPktErrors", false},
		{new(PortXmitDataSL), "portXmitDataSL", "XmtDataSL", false},
		{new(PortRcvDataSL), "portRcvDataSL", "RcvDataSL", false},
		{new(SwPortVLCongestion), "swPortVLCongestion", "SWPortVLCongestion", false},
		{new(PortExtendedSpeedsCounters), "counterSelect", "CounterSelect", true},
		{new(PortSamplesControl), "counterMasks1to9", "CounterMasks1to9", true},
	} {
		f := fieldNamed(t, c.s.Desc(), c.name)
		if f.Label != c.label || (f.Hint == HintHex) != c.hex {
			t.Errorf("%s.%s: label %q hex %v, want %q %v", c.s.Desc().Name, c.name, f.Label, f.Hint == HintHex, c.label, c.hex)
		}
	}
}

// TestPortCountersLayout decodes a PortCounters assembled by hand from the
// IBA 16.1.3.5 table, one distinct value per component.
func TestPortCountersLayout(t *testing.T) {
	b := hexBytes(t,
		"00 | 05 | 1f ff",   // reserved, PortSelect, CounterSelect
		"01 02 | 03 | 04",   // SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter
		"00 05 | 00 06",     // PortRcvErrors, PortRcvRemotePhysicalErrors
		"00 07 | 00 08",     // PortRcvSwitchRelayErrors, PortXmitDiscards
		"09 | 0a | 0b | cd", // Xmit/RcvConstraintErrors, CounterSelect2, LocalLinkIntegrity|ExcessiveBufferOverrun
		"00 0e | 00 0f",     // QP1Dropped, VL15Dropped
		"11 22 33 44",       // PortXmitData
		"55 66 77 88",       // PortRcvData
		"00 00 01 00",       // PortXmitPkts
		"00 01 00 00",       // PortRcvPkts
		"de ad be ef",       // PortXmitWait
	)
	var pc PortCounters
	if err := pc.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortSelect", pc.PortSelect, 5)
	expect(t, "CounterSelect", pc.CounterSelect, 0x1fff)
	expect(t, "SymbolErrorCounter", pc.SymbolErrorCounter, 0x0102)
	expect(t, "LinkErrorRecoveryCounter", pc.LinkErrorRecoveryCounter, 3)
	expect(t, "LinkDownedCounter", pc.LinkDownedCounter, 4)
	expect(t, "PortRcvErrors", pc.PortRcvErrors, 5)
	expect(t, "PortRcvRemotePhysicalErrors", pc.PortRcvRemotePhysicalErrors, 6)
	expect(t, "PortRcvSwitchRelayErrors", pc.PortRcvSwitchRelayErrors, 7)
	expect(t, "PortXmitDiscards", pc.PortXmitDiscards, 8)
	expect(t, "PortXmitConstraintErrors", pc.PortXmitConstraintErrors, 9)
	expect(t, "PortRcvConstraintErrors", pc.PortRcvConstraintErrors, 10)
	expect(t, "CounterSelect2", pc.CounterSelect2, 0x0b)
	expect(t, "LocalLinkIntegrityErrors", pc.LocalLinkIntegrityErrors, 0xc)
	expect(t, "ExcessiveBufferOverrunErrors", pc.ExcessiveBufferOverrunErrors, 0xd)
	expect(t, "QP1Dropped", pc.QP1Dropped, 14)
	expect(t, "VL15Dropped", pc.VL15Dropped, 15)
	expect(t, "PortXmitData", pc.PortXmitData, 0x11223344)
	expect(t, "PortRcvData", pc.PortRcvData, 0x55667788)
	expect(t, "PortXmitPkts", pc.PortXmitPkts, 256)
	expect(t, "PortRcvPkts", pc.PortRcvPkts, 65536)
	expect(t, "PortXmitWait", pc.PortXmitWait, 0xdeadbeef)
	out := make([]byte, len(b))
	if err := pc.MarshalTo(out); err != nil {
		t.Fatal(err)
	}
	expect(t, "re-encoded", string(out), string(b))
}

// TestPortCountersExtendedLayout decodes a PortCountersExtended assembled
// by hand from IBA 16.1.4.11 with the IBA 1.3 error counters.
func TestPortCountersExtendedLayout(t *testing.T) {
	b := hexBytes(t,
		"00 | ff | 00 ff",         // reserved, PortSelect (all ports), CounterSelect
		"00 00 0f ff",             // CounterSelect2
		"00 00 00 01 00 00 00 00", // PortXmitData
		"00 00 00 02 00 00 00 00", // PortRcvData
		"00 00 00 00 00 00 00 03", // PortXmitPkts
		"00 00 00 00 00 00 00 04", // PortRcvPkts
		"00 00 00 00 00 00 00 05", // PortUnicastXmitPkts
		"00 00 00 00 00 00 00 06", // PortUnicastRcvPkts
		"00 00 00 00 00 00 00 07", // PortMulticastXmitPkts
		"00 00 00 00 00 00 00 08", // PortMulticastRcvPkts
		"00 00 00 00 00 00 00 09", // SymbolErrorCounter
		"00 00 00 00 00 00 00 0a", // LinkErrorRecoveryCounter
		"00 00 00 00 00 00 00 0b", // LinkDownedCounter
		"00 00 00 00 00 00 00 0c", // PortRcvErrors
		"00 00 00 00 00 00 00 0d", // PortRcvRemotePhysicalErrors
		"00 00 00 00 00 00 00 0e", // PortRcvSwitchRelayErrors
		"00 00 00 00 00 00 00 0f", // PortXmitDiscards
		"00 00 00 00 00 00 00 10", // PortXmitConstraintErrors
		"00 00 00 00 00 00 00 11", // PortRcvConstraintErrors
		"00 00 00 00 00 00 00 12", // LocalLinkIntegrityErrors
		"00 00 00 00 00 00 00 13", // ExcessiveBufferOverrunErrors
		"00 00 00 00 00 00 00 14", // VL15Dropped
		"80 00 00 00 00 00 00 15", // PortXmitWait
		"ff ff ff ff ff ff ff ff", // QP1Dropped
	)
	var pc PortCountersExtended
	if err := pc.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortSelect", pc.PortSelect, 0xff)
	expect(t, "CounterSelect", pc.CounterSelect, 0x00ff)
	expect(t, "CounterSelect2", pc.CounterSelect2, 0x0fff)
	expect(t, "PortXmitData", pc.PortXmitData, 1<<32)
	expect(t, "PortRcvData", pc.PortRcvData, 2<<32)
	expect(t, "PortXmitPkts", pc.PortXmitPkts, 3)
	expect(t, "PortRcvPkts", pc.PortRcvPkts, 4)
	expect(t, "PortUnicastXmitPkts", pc.PortUnicastXmitPkts, 5)
	expect(t, "PortUnicastRcvPkts", pc.PortUnicastRcvPkts, 6)
	expect(t, "PortMulticastXmitPkts", pc.PortMulticastXmitPkts, 7)
	expect(t, "PortMulticastRcvPkts", pc.PortMulticastRcvPkts, 8)
	expect(t, "SymbolErrorCounter", pc.SymbolErrorCounter, 9)
	expect(t, "LinkErrorRecoveryCounter", pc.LinkErrorRecoveryCounter, 10)
	expect(t, "LinkDownedCounter", pc.LinkDownedCounter, 11)
	expect(t, "PortRcvErrors", pc.PortRcvErrors, 12)
	expect(t, "PortRcvRemotePhysicalErrors", pc.PortRcvRemotePhysicalErrors, 13)
	expect(t, "PortRcvSwitchRelayErrors", pc.PortRcvSwitchRelayErrors, 14)
	expect(t, "PortXmitDiscards", pc.PortXmitDiscards, 15)
	expect(t, "PortXmitConstraintErrors", pc.PortXmitConstraintErrors, 16)
	expect(t, "PortRcvConstraintErrors", pc.PortRcvConstraintErrors, 17)
	expect(t, "LocalLinkIntegrityErrors", pc.LocalLinkIntegrityErrors, 18)
	expect(t, "ExcessiveBufferOverrunErrors", pc.ExcessiveBufferOverrunErrors, 19)
	expect(t, "VL15Dropped", pc.VL15Dropped, 20)
	expect(t, "PortXmitWait", pc.PortXmitWait, 1<<63|0x15)
	expect(t, "QP1Dropped", pc.QP1Dropped, ^uint64(0))
}

// TestPortExtendedSpeedsCountersLayouts decodes one reply with both
// layouts of attribute 0x1F (fields.c IB_PESC_* and IB_PESC_RSFEC_*): they
// share the header and the per-lane block at byte 44, and the RS-FEC
// layout's port-wide counters sit past the 140 bytes of the other.
func TestPortExtendedSpeedsCountersLayouts(t *testing.T) {
	b := make([]byte, 152)
	copy(b, hexBytes(t,
		"00 | 03 | 00 00 00 00 00 00", // reserved, PortSelect, reserved
		"00 00 00 00 00 00 ff ff",     // CounterSelect
		"00 21 | 00 22",               // SyncHeaderErrorCounter, UnknownBlockCounter
		"00 31 00 32 00 33 00 34 00 35 00 36 00 37 00 38 00 39 00 3a 00 3b 00 3c", // ErrorDetectionCounterLane0-11
		"00 00 01 00", // FECCorrectableBlockCtrLane0 / FECCorrectableSymbolCtrLane0
	))
	copy(b[92:], hexBytes(t, "00 00 02 00"))  // FECUncorrectableBlockCtrLane0
	copy(b[136:], hexBytes(t, "00 00 02 0b")) // FECUncorrectableBlockCtrLane11
	copy(b[140:], hexBytes(t, "00 00 00 41 | 00 00 00 42 | 00 00 00 43"))
	var p PortExtendedSpeedsCounters
	if err := p.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortSelect", p.PortSelect, 3)
	expect(t, "CounterSelect", p.CounterSelect, 0xffff)
	expect(t, "SyncHeaderErrorCounter", p.SyncHeaderErrorCounter, 0x21)
	expect(t, "UnknownBlockCounter", p.UnknownBlockCounter, 0x22)
	expect(t, "ErrorDetectionCounterLane[0]", p.ErrorDetectionCounterLane[0], 0x31)
	expect(t, "ErrorDetectionCounterLane[11]", p.ErrorDetectionCounterLane[11], 0x3c)
	expect(t, "FECCorrectableBlockCtrLane[0]", p.FECCorrectableBlockCtrLane[0], 0x100)
	expect(t, "FECUncorrectableBlockCtrLane[0]", p.FECUncorrectableBlockCtrLane[0], 0x200)
	expect(t, "FECUncorrectableBlockCtrLane[11]", p.FECUncorrectableBlockCtrLane[11], 0x20b)
	var r PortExtendedSpeedsCountersRSFEC
	if err := r.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "RSFEC PortSelect", r.PortSelect, 3)
	expect(t, "RSFEC UnknownBlockCounter", r.UnknownBlockCounter, 0x22)
	expect(t, "FECCorrectableSymbolCtrLane[0]", r.FECCorrectableSymbolCtrLane[0], 0x100)
	expect(t, "PortFECCorrectableBlockCtr", r.PortFECCorrectableBlockCtr, 0x41)
	expect(t, "PortFECUncorrectableBlockCtr", r.PortFECUncorrectableBlockCtr, 0x42)
	expect(t, "PortFECCorrectedSymbolCtr", r.PortFECCorrectedSymbolCtr, 0x43)
}

// TestPortSamplesControlMasks checks the packed counter masks: CounterMask0
// then nine more 3-bit masks fill the rest of the second word, masks 10 to
// 14 follow one reserved bit.
func TestPortSamplesControlMasks(t *testing.T) {
	b := make([]byte, 192)
	copy(b, hexBytes(t, "01 02 03 | 05", "3f ff ff ff", "7f ff | 01 | 02"))
	var p PortSamplesControl
	if err := p.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "OpCode", p.OpCode, 1)
	expect(t, "Tick", p.Tick, 3)
	expect(t, "CounterWidth", p.CounterWidth, 5)
	expect(t, "CounterMask0", p.CounterMask0, 7)
	expect(t, "CounterMasks1to9", p.CounterMasks1to9, 1<<27-1)
	expect(t, "CounterMasks10to14", p.CounterMasks10to14, 1<<15-1)
	expect(t, "SampleMechanisms", p.SampleMechanisms, 1)
	expect(t, "SampleStatus", p.SampleStatus, 2)
}

// TestPortVLXmitFlowCtlUpdateErrorsPacking checks the 2-bit counters, VL 0
// in the top bits of byte 4.
func TestPortVLXmitFlowCtlUpdateErrorsPacking(t *testing.T) {
	var p PortVLXmitFlowCtlUpdateErrors
	if err := p.Unmarshal(hexBytes(t, "00 01 00 00", "c0 00 00 1b")); err != nil {
		t.Fatal(err)
	}
	expect(t, "VL0", p.PortVLXmitFlowCtlUpdateErrors[0], 3)
	expect(t, "VL1", p.PortVLXmitFlowCtlUpdateErrors[1], 0)
	expect(t, "VL13", p.PortVLXmitFlowCtlUpdateErrors[13], 1)
	expect(t, "VL14", p.PortVLXmitFlowCtlUpdateErrors[14], 2)
	expect(t, "VL15", p.PortVLXmitFlowCtlUpdateErrors[15], 3)
}
