package iba

// Performance management (IBA 16.1): the PerfMgt MAD format, its attributes
// and the congestion-control counters that annex A10 adds to the class.
//
// Labels are the names perfquery prints (libibmad fields.c). For an array
// the label is the stem: the dotted printer appends the element index, as
// perfquery prints XmtDataSL0 to XmtDataSL15.

// PerfMgt ClassPortInfo.CapabilityMask bits (IBA 16.1.2, table 176 and its
// IBA 1.3 additions). Bits 0 to 7 are the generic GS bits of IBA 13.4.8.1.
const (
	// PMCapAllPortSelect: PortSelect 0xFF reads and resets all ports at
	// once.
	PMCapAllPortSelect uint16 = 1 << 8
	// PMCapExtendedWidth: PortCountersExtended is supported, with the
	// unicast and multicast counters.
	PMCapExtendedWidth uint16 = 1 << 9
	// PMCapExtendedWidthNoIETF: PortCountersExtended is supported without
	// the unicast and multicast (IETF MIB) counters.
	PMCapExtendedWidthNoIETF uint16 = 1 << 10
	// PMCapSamplesOnly: PortSamplesControl.SamplesOnlyOptionMask is valid.
	PMCapSamplesOnly uint16 = 1 << 11
	// PMCapPortCountersXmitWait: PortCounters.PortXmitWait is supported.
	PMCapPortCountersXmitWait uint16 = 1 << 12
	// PMCapInhibitLimitedPKeyMulticastConstraintErrors: multicast packets
	// with a limited-member P_Key are not counted as constraint errors.
	PMCapInhibitLimitedPKeyMulticastConstraintErrors uint16 = 1 << 13
	// PMCapRSFECCounters: PortExtendedSpeedsCounters has the RS-FEC
	// layout (PortExtendedSpeedsCountersRSFEC) when RS-FEC is active.
	PMCapRSFECCounters uint16 = 1 << 14
	// PMCapQP1Dropped: PortCounters.QP1Dropped is supported.
	PMCapQP1Dropped uint16 = 1 << 15
)

// PerfMgt ClassPortInfo.CapabilityMask2 bits (IBA 16.1.2, added by IBA 1.3).
const (
	// PMCap2PMKey: the PMA checks a PM_Key.
	PMCap2PMKey uint32 = 1 << 0
	// PMCap2AdditionalPortCountersExtended: PortCountersExtended carries
	// the 64-bit error counters from SymbolErrorCounter to QP1Dropped.
	PMCap2AdditionalPortCountersExtended uint32 = 1 << 1
)

// PMFormat is the Performance Management MAD format (IBA 16.1.1): the
// common MAD header, 40 reserved bytes and 192 bytes of attribute data.
//
//iba:format class=0x04 version=1
type PMFormat struct {
	MADHeader `iba:"off=0"`
	_         [40]byte  `iba:"off=192"`
	Data      [192]byte `iba:"off=512,data"`
}

// PortSamplesControl is the Port Performance Data Sampling Control
// (IBA 16.1.3.2): it starts a sample of up to fifteen counters chosen by
// CounterSelect. The three mask components pack 3-bit CounterMasks, 1 to 9
// and 10 to 14, as the IBA table and perfquery -c show them.
//
//iba:attr id=0x10 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortSamplesCtl
type PortSamplesControl struct {
	OpCode                uint8      `iba:"off=0,bits=8,hex,label=OpCode"`
	PortSelect            uint8      `iba:"off=8,bits=8,label=PortSelect"`
	Tick                  uint8      `iba:"off=16,bits=8,hex,label=Tick"`
	_                     uint8      `iba:"off=24,bits=5"`
	CounterWidth          uint8      `iba:"off=29,bits=3,label=CounterWidth"`
	_                     uint8      `iba:"off=32,bits=2"`
	CounterMask0          uint8      `iba:"off=34,bits=3,hex,label=CounterMask0"`
	CounterMasks1to9      uint32     `iba:"off=37,bits=27,hex,label=CounterMasks1to9"`
	_                     uint8      `iba:"off=64,bits=1"`
	CounterMasks10to14    uint16     `iba:"off=65,bits=15,hex,label=CounterMasks10to14"`
	SampleMechanisms      uint8      `iba:"off=80,bits=8,label=SampleMechanisms"`
	_                     uint8      `iba:"off=88,bits=6"`
	SampleStatus          uint8      `iba:"off=94,bits=2,label=SampleStatus"`
	OptionMask            uint64     `iba:"off=96,bits=64,hex,label=OptionMask"`
	VendorMask            uint64     `iba:"off=160,bits=64,hex,label=VendorMask"`
	SampleStart           uint32     `iba:"off=224,bits=32,label=SampleStart"`
	SampleInterval        uint32     `iba:"off=256,bits=32,label=SampleInterval"`
	Tag                   uint16     `iba:"off=288,bits=16,hex,label=Tag"`
	CounterSelect         [15]uint16 `iba:"off=304,bits=16,hex,label=CounterSelect"`
	_                     uint32     `iba:"off=544,bits=32"`
	SamplesOnlyOptionMask uint64     `iba:"off=576,bits=64,hex,label=SamplesOnlyOptionMask"`
	_                     [112]byte  `iba:"off=640"`
}

// PortSamplesResult is the Port Performance Data Sampling Results
// (IBA 16.1.3.4): the fifteen 32-bit counters of the last sample.
//
//iba:attr id=0x11 methods=PerformanceGet
//iba:alias PMPortSamplesRes
type PortSamplesResult struct {
	Tag          uint16     `iba:"off=0,bits=16,hex,label=Tag"`
	_            uint16     `iba:"off=16,bits=14"`
	SampleStatus uint8      `iba:"off=30,bits=2,hex,label=SampleStatus"`
	Counter      [15]uint32 `iba:"off=32,bits=32,label=Counter"`
}

// PortCounters is the Port Basic Performance and Error Counters
// (IBA 16.1.3.5), what perfquery prints by default. The data counters
// count octets divided by four. QP1Dropped replaced a reserved field in
// IBA 1.3 (ClassPortInfo bit PMCapQP1Dropped).
//
//iba:attr id=0x12 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortCounters
type PortCounters struct {
	_                            uint8  `iba:"off=0,bits=8"`
	PortSelect                   uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect                uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	SymbolErrorCounter           uint16 `iba:"off=32,bits=16,label=SymbolErrorCounter"`
	LinkErrorRecoveryCounter     uint8  `iba:"off=48,bits=8,label=LinkErrorRecoveryCounter"`
	LinkDownedCounter            uint8  `iba:"off=56,bits=8,label=LinkDownedCounter"`
	PortRcvErrors                uint16 `iba:"off=64,bits=16,label=PortRcvErrors"`
	PortRcvRemotePhysicalErrors  uint16 `iba:"off=80,bits=16,label=PortRcvRemotePhysicalErrors"`
	PortRcvSwitchRelayErrors     uint16 `iba:"off=96,bits=16,label=PortRcvSwitchRelayErrors"`
	PortXmitDiscards             uint16 `iba:"off=112,bits=16,label=PortXmitDiscards"`
	PortXmitConstraintErrors     uint8  `iba:"off=128,bits=8,label=PortXmitConstraintErrors"`
	PortRcvConstraintErrors      uint8  `iba:"off=136,bits=8,label=PortRcvConstraintErrors"`
	CounterSelect2               uint8  `iba:"off=144,bits=8,hex,label=CounterSelect2"`
	LocalLinkIntegrityErrors     uint8  `iba:"off=152,bits=4,label=LocalLinkIntegrityErrors"`
	ExcessiveBufferOverrunErrors uint8  `iba:"off=156,bits=4,label=ExcessiveBufferOverrunErrors"`
	QP1Dropped                   uint16 `iba:"off=160,bits=16,label=QP1Dropped"`
	VL15Dropped                  uint16 `iba:"off=176,bits=16,label=VL15Dropped"`
	PortXmitData                 uint32 `iba:"off=192,bits=32,label=PortXmitData"`
	PortRcvData                  uint32 `iba:"off=224,bits=32,label=PortRcvData"`
	PortXmitPkts                 uint32 `iba:"off=256,bits=32,label=PortXmitPkts"`
	PortRcvPkts                  uint32 `iba:"off=288,bits=32,label=PortRcvPkts"`
	PortXmitWait                 uint32 `iba:"off=320,bits=32,label=PortXmitWait"`
}

// PortRcvErrorDetails is the Port Detailed Error Counters (IBA 16.1.4.1),
// perfquery -E.
//
//iba:attr id=0x15 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortRcvErrorDetails
type PortRcvErrorDetails struct {
	_                         uint8  `iba:"off=0,bits=8"`
	PortSelect                uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect             uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortLocalPhysicalErrors   uint16 `iba:"off=32,bits=16,label=PortLocalPhysicalErrors"`
	PortMalformedPacketErrors uint16 `iba:"off=48,bits=16,label=PortMalformedPktErrors"`
	PortBufferOverrunErrors   uint16 `iba:"off=64,bits=16,label=PortBufferOverrunErrors"`
	PortDLIDMappingErrors     uint16 `iba:"off=80,bits=16,label=PortDLIDMappingErrors"`
	PortVLMappingErrors       uint16 `iba:"off=96,bits=16,label=PortVLMappingErrors"`
	PortLoopingErrors         uint16 `iba:"off=112,bits=16,label=PortLoopingErrors"`
}

// PortXmitDiscardDetails is the Port Transmit Discard Counters
// (IBA 16.1.4.2), perfquery -D.
//
//iba:attr id=0x16 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortXmitDiscardDetails
type PortXmitDiscardDetails struct {
	_                              uint8  `iba:"off=0,bits=8"`
	PortSelect                     uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect                  uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortInactiveDiscards           uint16 `iba:"off=32,bits=16,label=PortInactiveDiscards"`
	PortNeighborMTUDiscards        uint16 `iba:"off=48,bits=16,label=PortNeighborMTUDiscards"`
	PortSwLifetimeLimitDiscards    uint16 `iba:"off=64,bits=16,label=PortSwLifetimeLimitDiscards"`
	PortSwHOQLifetimeLimitDiscards uint16 `iba:"off=80,bits=16,label=PortSwHOQLifetimeLimitDiscards"`
}

// PortOpRcvCounters is the Port Receive Counters per Op Code
// (IBA 16.1.4.3), perfquery --oprcvcounters; OpCode selects the packet
// opcode counted.
//
//iba:attr id=0x17 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortOpRcvCounters
type PortOpRcvCounters struct {
	OpCode        uint8  `iba:"off=0,bits=8,hex"`
	PortSelect    uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortOpRcvPkts uint32 `iba:"off=32,bits=32,label=PortOpRcvPkts"`
	PortOpRcvData uint32 `iba:"off=64,bits=32,label=PortOpRcvData"`
}

// PortFlowCtlCounters is the Port Flow Control Counters (IBA 16.1.4.4),
// perfquery --flowctlcounters.
//
//iba:attr id=0x18 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortFlowCtlCounters
type PortFlowCtlCounters struct {
	_                uint8  `iba:"off=0,bits=8"`
	PortSelect       uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect    uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortXmitFlowPkts uint32 `iba:"off=32,bits=32,label=PortXmitFlowPkts"`
	PortRcvFlowPkts  uint32 `iba:"off=64,bits=32,label=PortRcvFlowPkts"`
}

// PortVLOpPackets is the Port Packets Received per Op Code per VL
// (IBA 16.1.4.5), perfquery --vloppackets.
//
//iba:attr id=0x19 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLOpPackets
type PortVLOpPackets struct {
	OpCode          uint8      `iba:"off=0,bits=8,hex"`
	PortSelect      uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect   uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortVLOpPackets [16]uint16 `iba:"off=32,bits=16,label=PortVLOpPackets"`
}

// PortVLOpData is the Port Kilobytes Received per Op Code per VL
// (IBA 16.1.4.6), perfquery --vlopdata.
//
//iba:attr id=0x1A methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLOpData
type PortVLOpData struct {
	OpCode        uint8      `iba:"off=0,bits=8,hex"`
	PortSelect    uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortVLOpData  [16]uint32 `iba:"off=32,bits=32,label=PortVLOpData"`
}

// PortVLXmitFlowCtlUpdateErrors is the Port Flow Control Update Errors
// per VL (IBA 16.1.4.7), perfquery --vlxmitflowctlerrors: 2-bit counters.
//
//iba:attr id=0x1B methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLXmitFlowCtlUpdateErrors
type PortVLXmitFlowCtlUpdateErrors struct {
	_                             uint8     `iba:"off=0,bits=8"`
	PortSelect                    uint8     `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect                 uint16    `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortVLXmitFlowCtlUpdateErrors [16]uint8 `iba:"off=32,bits=2,label=PortVLXmitFlowCtlUpdateErrors"`
}

// PortVLXmitWaitCounters is the Port Ticks Waiting to Transmit Counters
// per VL (IBA 16.1.4.8), perfquery --vlxmitcounters.
//
//iba:attr id=0x1C methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLXmitWaitCounters
type PortVLXmitWaitCounters struct {
	_              uint8      `iba:"off=0,bits=8"`
	PortSelect     uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect  uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortVLXmitWait [16]uint16 `iba:"off=32,bits=16,label=PortVLXmitWait"`
}

// SwPortVLCongestion is the Switch Port Congestion per VL (IBA 16.1.4.9),
// perfquery --swportvlcong.
//
//iba:attr id=0x30 methods=PerformanceGet,PerformanceSet
//iba:alias PMSwPortVLCongestion
type SwPortVLCongestion struct {
	_                  uint8      `iba:"off=0,bits=8"`
	PortSelect         uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect      uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	SwPortVLCongestion [16]uint16 `iba:"off=32,bits=16,label=SWPortVLCongestion"`
}

// PortSamplesResultExtended is the Extended Port Samples Result
// (IBA 16.1.4.10): the sample of PortSamplesControl in 64-bit counters.
//
//iba:attr id=0x1E methods=PerformanceGet
//iba:alias PMPortSamplesResExt
type PortSamplesResultExtended struct {
	Tag           uint16     `iba:"off=0,bits=16,hex,label=Tag"`
	_             uint16     `iba:"off=16,bits=14"`
	SampleStatus  uint8      `iba:"off=30,bits=2,hex,label=SampleStatus"`
	ExtendedWidth uint8      `iba:"off=32,bits=2"`
	_             uint32     `iba:"off=34,bits=30"`
	Counter       [15]uint64 `iba:"off=64,bits=64,label=Counter"`
}

// PortCountersExtended is the Extended Port Counters (IBA 16.1.4.11),
// perfquery -x. The data counters count octets divided by four. The
// counters from SymbolErrorCounter on were added by IBA 1.3 and are valid
// only when ClassPortInfo.CapabilityMask2 has
// PMCap2AdditionalPortCountersExtended; CounterSelect2 selects which of
// them a Set clears.
//
//iba:attr id=0x1D methods=PerformanceGet,PerformanceSet
//iba:alias PMPortCountersExt
type PortCountersExtended struct {
	_                            uint8  `iba:"off=0,bits=8"`
	PortSelect                   uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect                uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	CounterSelect2               uint32 `iba:"off=32,bits=32,hex,label=CounterSelect2"`
	PortXmitData                 uint64 `iba:"off=64,bits=64,label=PortXmitData"`
	PortRcvData                  uint64 `iba:"off=128,bits=64,label=PortRcvData"`
	PortXmitPkts                 uint64 `iba:"off=192,bits=64,label=PortXmitPkts"`
	PortRcvPkts                  uint64 `iba:"off=256,bits=64,label=PortRcvPkts"`
	PortUnicastXmitPkts          uint64 `iba:"off=320,bits=64,label=PortUnicastXmitPkts"`
	PortUnicastRcvPkts           uint64 `iba:"off=384,bits=64,label=PortUnicastRcvPkts"`
	PortMulticastXmitPkts        uint64 `iba:"off=448,bits=64,label=PortMulticastXmitPkts"`
	PortMulticastRcvPkts         uint64 `iba:"off=512,bits=64,label=PortMulticastRcvPkts"`
	SymbolErrorCounter           uint64 `iba:"off=576,bits=64,label=SymbolErrorCounter"`
	LinkErrorRecoveryCounter     uint64 `iba:"off=640,bits=64,label=LinkErrorRecoveryCounter"`
	LinkDownedCounter            uint64 `iba:"off=704,bits=64,label=LinkDownedCounter"`
	PortRcvErrors                uint64 `iba:"off=768,bits=64,label=PortRcvErrors"`
	PortRcvRemotePhysicalErrors  uint64 `iba:"off=832,bits=64,label=PortRcvRemotePhysicalErrors"`
	PortRcvSwitchRelayErrors     uint64 `iba:"off=896,bits=64,label=PortRcvSwitchRelayErrors"`
	PortXmitDiscards             uint64 `iba:"off=960,bits=64,label=PortXmitDiscards"`
	PortXmitConstraintErrors     uint64 `iba:"off=1024,bits=64,label=PortXmitConstraintErrors"`
	PortRcvConstraintErrors      uint64 `iba:"off=1088,bits=64,label=PortRcvConstraintErrors"`
	LocalLinkIntegrityErrors     uint64 `iba:"off=1152,bits=64,label=LocalLinkIntegrityErrors"`
	ExcessiveBufferOverrunErrors uint64 `iba:"off=1216,bits=64,label=ExcessiveBufferOverrunErrors"`
	VL15Dropped                  uint64 `iba:"off=1280,bits=64,label=VL15Dropped"`
	PortXmitWait                 uint64 `iba:"off=1344,bits=64,label=PortXmitWait"`
	QP1Dropped                   uint64 `iba:"off=1408,bits=64,label=QP1Dropped"`
}

// PortExtendedSpeedsCounters is the Port Extended Speeds Counters
// (IBA 16.1.4), perfquery -T: the physical-layer counters of FDR and
// faster links, per lane. When the port runs RS-FEC
// and the PMA sets PMCapRSFECCounters, the same attribute carries the
// PortExtendedSpeedsCountersRSFEC layout instead.
//
//iba:attr id=0x1F methods=PerformanceGet,PerformanceSet
type PortExtendedSpeedsCounters struct {
	_                            uint8      `iba:"off=0,bits=8"`
	PortSelect                   uint8      `iba:"off=8,bits=8,label=PortSelect"`
	_                            uint64     `iba:"off=16,bits=48"`
	CounterSelect                uint64     `iba:"off=64,bits=64,hex,label=CounterSelect"`
	SyncHeaderErrorCounter       uint16     `iba:"off=128,bits=16,label=SyncHeaderErrorCounter"`
	UnknownBlockCounter          uint16     `iba:"off=144,bits=16,label=UnknownBlockCounter"`
	ErrorDetectionCounterLane    [12]uint16 `iba:"off=160,bits=16,label=ErrorDetectionCounterLane"`
	FECCorrectableBlockCtrLane   [12]uint32 `iba:"off=352,bits=32,label=FECCorrectableBlockCtrLane"`
	FECUncorrectableBlockCtrLane [12]uint32 `iba:"off=736,bits=32,label=FECUncorrectableBlockCtrLane"`
}

// PortExtendedSpeedsCountersRSFEC is PortExtendedSpeedsCounters as a port
// with RS-FEC active reports it (IBA 16.1.4): per-lane corrected symbols
// and port-wide block and symbol counters. It is a
// layout of attribute 0x1F, not an attribute of its own: query
// PortExtendedSpeedsCounters and decode the reply with this type when
// ClassPortInfo has PMCapRSFECCounters and PortInfoExtended reports RS-FEC.
//
//iba:attr id=0x1F variant=PortExtendedSpeedsCounters
type PortExtendedSpeedsCountersRSFEC struct {
	_                            uint8      `iba:"off=0,bits=8"`
	PortSelect                   uint8      `iba:"off=8,bits=8,label=PortSelect"`
	_                            uint64     `iba:"off=16,bits=48"`
	CounterSelect                uint64     `iba:"off=64,bits=64,hex,label=CounterSelect"`
	SyncHeaderErrorCounter       uint16     `iba:"off=128,bits=16,label=SyncHeaderErrorCounter"`
	UnknownBlockCounter          uint16     `iba:"off=144,bits=16,label=UnknownBlockCounter"`
	_                            [24]byte   `iba:"off=160"`
	FECCorrectableSymbolCtrLane  [12]uint32 `iba:"off=352,bits=32,label=FECCorrectableSymbolCtrLane"`
	_                            [48]byte   `iba:"off=736"`
	PortFECCorrectableBlockCtr   uint32     `iba:"off=1120,bits=32,label=PortFECCorrectableBlockCtr"`
	PortFECUncorrectableBlockCtr uint32     `iba:"off=1152,bits=32,label=PortFECUncorrectableBlockCtr"`
	PortFECCorrectedSymbolCtr    uint32     `iba:"off=1184,bits=32,label=PortFECCorrectedSymbolCtr"`
}

// PortXmitDataSL is the Transmit Data per SL counters (IBA A13.6.5),
// perfquery -X.
//
//iba:attr id=0x36 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortXmitDataSL
type PortXmitDataSL struct {
	_              uint8      `iba:"off=0,bits=8"`
	PortSelect     uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect  uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortXmitDataSL [16]uint32 `iba:"off=32,bits=32,label=XmtDataSL"`
}

// PortRcvDataSL is the Receive Data per SL counters (IBA A13.6.5),
// perfquery -S.
//
//iba:attr id=0x37 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortRcvDataSL
type PortRcvDataSL struct {
	_             uint8      `iba:"off=0,bits=8"`
	PortSelect    uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortRcvDataSL [16]uint32 `iba:"off=32,bits=32,label=RcvDataSL"`
}

// PortRcvConCtrl is the Port Receive Congestion Control counters
// (IBA A10), a PerfMgt addition of the congestion-control annex, perfquery
// --rcvcc: packets received with FECN and with BECN set.
//
//iba:attr id=0x31 methods=PerformanceGet,PerformanceSet
type PortRcvConCtrl struct {
	_              uint8  `iba:"off=0,bits=8"`
	PortSelect     uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect  uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortPktRcvFECN uint32 `iba:"off=32,bits=32,label=PortPktRcvFECN"`
	PortPktRcvBECN uint32 `iba:"off=64,bits=32,label=PortPktRcvBECN"`
}

// PortSLRcvFECN is the Port Receive FECN per SL counters (IBA A10),
// perfquery --slrcvfecn.
//
//iba:attr id=0x32 methods=PerformanceGet,PerformanceSet
type PortSLRcvFECN struct {
	_             uint8      `iba:"off=0,bits=8"`
	PortSelect    uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortSLRcvFECN [16]uint32 `iba:"off=32,bits=32,label=PortSLRcvFECN"`
}

// PortSLRcvBECN is the Port Receive BECN per SL counters (IBA A10),
// perfquery --slrcvbecn.
//
//iba:attr id=0x33 methods=PerformanceGet,PerformanceSet
type PortSLRcvBECN struct {
	_             uint8      `iba:"off=0,bits=8"`
	PortSelect    uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortSLRcvBECN [16]uint32 `iba:"off=32,bits=32,label=PortSLRcvBECN"`
}

// PortXmitConCtrl is the Port Transmit Congestion Control counter
// (IBA A10), perfquery --xmitcc: time the port spent congested.
//
//iba:attr id=0x34 methods=PerformanceGet,PerformanceSet
type PortXmitConCtrl struct {
	_                uint8  `iba:"off=0,bits=8"`
	PortSelect       uint8  `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect    uint16 `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortXmitTimeCong uint32 `iba:"off=32,bits=32,label=PortXmitTimeCong"`
}

// PortVLXmitTimeCong is the Port Transmit Time in Congestion per VL
// counters (IBA A10), perfquery --vlxmittimecc, for data VLs 0 to 14.
//
//iba:attr id=0x35 methods=PerformanceGet,PerformanceSet
type PortVLXmitTimeCong struct {
	_                  uint8      `iba:"off=0,bits=8"`
	PortSelect         uint8      `iba:"off=8,bits=8,label=PortSelect"`
	CounterSelect      uint16     `iba:"off=16,bits=16,hex,label=CounterSelect"`
	PortVLXmitTimeCong [15]uint32 `iba:"off=32,bits=32,label=PortVLXmitTimeCong"`
}
