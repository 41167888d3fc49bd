package ibaprint

import "io"

// The perfquery renderers that perfquery.go lacks: -T (PortExtendedSpeeds
// Counters, also in its RS-FEC layout), -c (PortSamplesControl) and the
// congestion-control annex counters (--rcvcc, --slrcvfecn, --slrcvbecn,
// --xmitcc, --vlxmittimecc), as libibmad's mad_dump_* of rdma-core 44 print
// them below perfquery's "# ..." header.

func init() {
	// Registered with the other per-attribute forms so that PerfQuery and
	// PerfQueryNames cover every perfquery option.
	perfQueries["PortRcvConCtrl"] = perfTable("PortRcvConCtrl",
		Row{"PortPktRcvFECN", "portPktRcvFECN", diagUint, 0},
		Row{"PortPktRcvBECN", "portPktRcvBECN", diagUint, 0},
	)
	perfQueries["PortSLRcvFECN"] = perfTable("PortSLRcvFECN", arrayRows("PortSLRcvFECN", "portSLRcvFECN", 16)...)
	perfQueries["PortSLRcvBECN"] = perfTable("PortSLRcvBECN", arrayRows("PortSLRcvBECN", "portSLRcvBECN", 16)...)
	perfQueries["PortXmitConCtrl"] = perfTable("PortXmitConCtrl",
		Row{"PortXmitTimeCong", "portXmitTimeCong", diagUint, 0},
	)
	perfQueries["PortVLXmitTimeCong"] = perfTable("PortVLXmitTimeCong", arrayRows("PortVLXmitTimeCong", "portVLXmitTimeCong", 15)...)
}

// perfExtSpeeds is mad_dump_port_ext_speeds_counters: IB_PESC_PORT_SELECT_F
// to IB_PESC_LAST_F, the 64-bit CounterSelect included.
var perfExtSpeeds = libibmad("PortExtendedSpeedsCounters", append(append(append(
	[]Row{
		{"PortSelect", "portSelect", diagUint, 0},
		{"CounterSelect", "counterSelect", diagHex, 0},
		{"SyncHeaderErrorCounter", "syncHeaderErrorCounter", diagUint, 0},
		{"UnknownBlockCounter", "unknownBlockCounter", diagUint, 0},
	},
	arrayRows("ErrorDetectionCounterLane", "errorDetectionCounterLane", 12)...),
	arrayRows("FECCorrectableBlockCtrLane", "FECCorrectableBlockCtrLane", 12)...),
	arrayRows("FECUncorrectableBlockCtrLane", "FECUncorrectableBlockCtrLane", 12)...)...,
)

// perfExtSpeedsRSFEC is mad_dump_port_ext_speeds_counters_rsfec_active.
var perfExtSpeedsRSFEC = libibmad("PortExtendedSpeedsCountersRSFEC", append(append(
	[]Row{
		{"PortSelect", "portSelect", diagUint, 0},
		{"CounterSelect", "counterSelect", diagHex, 0},
		{"SyncHeaderErrorCounter", "syncHeaderErrorCounter", diagUint, 0},
		{"UnknownBlockCounter", "unknownBlockCounter", diagUint, 0},
	},
	arrayRows("FECCorrectableSymbolCtrLane", "FECCorrectableSymbolCtrLane", 12)...),
	Row{"PortFECCorrectableBlockCtr", "portFECCorrectableBlockCtr", diagUint, 0},
	Row{"PortFECUncorrectableBlockCtr", "portFECUncorrectableBlockCtr", diagUint, 0},
	Row{"PortFECCorrectedSymbolCtr", "portFECCorrectedSymbolCtr", diagUint, 0},
)...,
)

// PortExtendedSpeedsCounters prints PortExtendedSpeedsCounters (IBA
// 16.1.4, attribute 0x1F) as `perfquery -T` does; rsfec selects the layout
// a port with RS-FEC active reports (perfquery's "with RS-FEC Active" form).
func PortExtendedSpeedsCounters(w io.Writer, b []byte, rsfec bool) error {
	if rsfec {
		return perfExtSpeedsRSFEC.Render(w, b)
	}
	return perfExtSpeeds.Render(w, b)
}

// perfSamplesControl is mad_dump_portsamples_control: IB_PSC_OPCODE_F to
// IB_PSC_LAST_F.
var perfSamplesControl = libibmad("PortSamplesControl", append(append(
	[]Row{
		{"OpCode", "opCode", diagHex, 0},
		{"PortSelect", "portSelect", diagUint, 0},
		{"Tick", "tick", diagHex, 0},
		{"CounterWidth", "counterWidth", diagUint, 0},
		{"CounterMask0", "counterMask0", diagHex, 0},
		{"CounterMasks1to9", "counterMasks1to9", diagHex, 0},
		{"CounterMasks10to14", "counterMasks10to14", diagHex, 0},
		{"SampleMechanisms", "sampleMechanisms", diagUint, 0},
		{"SampleStatus", "sampleStatus", diagUint, 0},
		{"OptionMask", "optionMask", diagHex, 0},
		{"VendorMask", "vendorMask", diagHex, 0},
		{"SampleStart", "sampleStart", diagUint, 0},
		{"SampleInterval", "sampleInterval", diagUint, 0},
		{"Tag", "tag", diagHex, 0},
	},
	hexArrayRows("CounterSelect", "counterSelect", 15)...),
	Row{"SamplesOnlyOptionMask", "samplesOnlyOptionMask", diagHex, 0},
)...,
)

func hexArrayRows(label, path string, n int) []Row {
	rows := arrayRows(label, path, n)
	for i := range rows {
		rows[i].Format = diagHex
	}
	return rows
}

// PortSamplesControl prints PortSamplesControl (IBA 16.1.3.2) as
// `perfquery -c` does below its "# PortSamplesControl: ..." line.
func PortSamplesControl(w io.Writer, b []byte) error { return perfSamplesControl.Render(w, b) }
