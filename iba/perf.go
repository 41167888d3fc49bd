package iba

// PMFormat is the Performance Management MAD Format (IBA 16.1.1).
//
//iba:format class=0x04 version=1
type PMFormat struct {
	MADHeader `iba:"off=0"`
	_         [40]byte  `iba:"off=192"`
	Data      [192]byte `iba:"off=512,data"`
}

// PortSamplesControl is the Port Performance Data Sampling Control (IBA 16.1.3.2).
//
//iba:attr id=0x10 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortSamplesCtl
type PortSamplesControl struct {
	OpCode                uint8     `iba:"off=0,bits=8"`
	PortSelect            uint8     `iba:"off=8,bits=8"`
	Tick                  uint8     `iba:"off=16,bits=8"`
	_                     uint8     `iba:"off=24,bits=5"`
	CounterWidth          uint8     `iba:"off=29,bits=3"`
	_                     uint8     `iba:"off=32,bits=2"`
	CounterMask0          uint8     `iba:"off=34,bits=3"`
	CounterMask1          uint8     `iba:"off=37,bits=3"`
	CounterMask2          uint8     `iba:"off=40,bits=3"`
	CounterMask3          uint8     `iba:"off=43,bits=3"`
	CounterMask4          uint8     `iba:"off=46,bits=3"`
	CounterMask5          uint8     `iba:"off=49,bits=3"`
	CounterMask6          uint8     `iba:"off=52,bits=3"`
	CounterMask7          uint8     `iba:"off=55,bits=3"`
	CounterMask8          uint8     `iba:"off=58,bits=3"`
	CounterMask9          uint8     `iba:"off=61,bits=3"`
	_                     uint8     `iba:"off=64,bits=1"`
	CounterMask10         uint8     `iba:"off=65,bits=3"`
	CounterMask11         uint8     `iba:"off=68,bits=3"`
	CounterMask12         uint8     `iba:"off=71,bits=3"`
	CounterMask13         uint8     `iba:"off=74,bits=3"`
	CounterMask14         uint8     `iba:"off=77,bits=3"`
	SampleMechanisms      uint8     `iba:"off=80,bits=8"`
	_                     uint8     `iba:"off=88,bits=6"`
	SampleStatus          uint8     `iba:"off=94,bits=2"`
	OptionMask            uint64    `iba:"off=96,bits=64"`
	VendorMask            uint64    `iba:"off=160,bits=64"`
	SampleStart           uint32    `iba:"off=224,bits=32"`
	SampleInterval        uint32    `iba:"off=256,bits=32"`
	Tag                   uint16    `iba:"off=288,bits=16"`
	CounterSelect0        uint16    `iba:"off=304,bits=16,hex"`
	CounterSelect1        uint16    `iba:"off=320,bits=16,hex"`
	CounterSelect2        uint16    `iba:"off=336,bits=16,hex"`
	CounterSelect3        uint16    `iba:"off=352,bits=16,hex"`
	CounterSelect4        uint16    `iba:"off=368,bits=16,hex"`
	CounterSelect5        uint16    `iba:"off=384,bits=16,hex"`
	CounterSelect6        uint16    `iba:"off=400,bits=16,hex"`
	CounterSelect7        uint16    `iba:"off=416,bits=16,hex"`
	CounterSelect8        uint16    `iba:"off=432,bits=16,hex"`
	CounterSelect9        uint16    `iba:"off=448,bits=16,hex"`
	CounterSelect10       uint16    `iba:"off=464,bits=16,hex"`
	CounterSelect11       uint16    `iba:"off=480,bits=16,hex"`
	CounterSelect12       uint16    `iba:"off=496,bits=16,hex"`
	CounterSelect13       uint16    `iba:"off=512,bits=16,hex"`
	CounterSelect14       uint16    `iba:"off=528,bits=16,hex"`
	_                     uint32    `iba:"off=544,bits=32"`
	SamplesOnlyOptionMask uint64    `iba:"off=576,bits=64"`
	_                     [112]byte `iba:"off=640"`
}

// PortSamplesResult is the Port Performance Data Sampling Results (IBA 16.1.3.4).
//
//iba:attr id=0x11 methods=PerformanceGet
//iba:alias PMPortSamplesRes
type PortSamplesResult struct {
	Tag          uint16     `iba:"off=0,bits=16"`
	_            uint16     `iba:"off=16,bits=14"`
	SampleStatus uint8      `iba:"off=30,bits=2"`
	Counter      [15]uint32 `iba:"off=32,bits=32"`
}

// PortCounters is the Port Basic Performance and Error Counters (IBA 16.1.3.5).
//
//iba:attr id=0x12 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortCounters
type PortCounters struct {
	_                            uint8  `iba:"off=0,bits=8"`
	PortSelect                   uint8  `iba:"off=8,bits=8"`
	CounterSelect                uint16 `iba:"off=16,bits=16,hex"`
	SymbolErrorCounter           uint16 `iba:"off=32,bits=16"`
	LinkErrorRecoveryCounter     uint8  `iba:"off=48,bits=8"`
	LinkDownedCounter            uint8  `iba:"off=56,bits=8"`
	PortRcvErrors                uint16 `iba:"off=64,bits=16"`
	PortRcvRemotePhysicalErrors  uint16 `iba:"off=80,bits=16"`
	PortRcvSwitchRelayErrors     uint16 `iba:"off=96,bits=16"`
	PortXmitDiscards             uint16 `iba:"off=112,bits=16"`
	PortXmitConstraintErrors     uint8  `iba:"off=128,bits=8"`
	PortRcvConstraintErrors      uint8  `iba:"off=136,bits=8"`
	CounterSelect2               uint8  `iba:"off=144,bits=8,hex"`
	LocalLinkIntegrityErrors     uint8  `iba:"off=152,bits=4"`
	ExcessiveBufferOverrunErrors uint8  `iba:"off=156,bits=4"`
	_                            uint16 `iba:"off=160,bits=16"`
	VL15Dropped                  uint16 `iba:"off=176,bits=16"`
	PortXmitData                 uint32 `iba:"off=192,bits=32"`
	PortRcvData                  uint32 `iba:"off=224,bits=32"`
	PortXmitPkts                 uint32 `iba:"off=256,bits=32"`
	PortRcvPkts                  uint32 `iba:"off=288,bits=32"`
	PortXmitWait                 uint32 `iba:"off=320,bits=32"`
}

// PortRcvErrorDetails is the Port Detailed Error Counters (IBA 16.1.4.1).
//
//iba:attr id=0x15 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortRcvErrorDetails
type PortRcvErrorDetails struct {
	_                         uint8  `iba:"off=0,bits=8"`
	PortSelect                uint8  `iba:"off=8,bits=8"`
	CounterSelect             uint16 `iba:"off=16,bits=16,hex"`
	PortLocalPhysicalErrors   uint16 `iba:"off=32,bits=16"`
	PortMalformedPacketErrors uint16 `iba:"off=48,bits=16"`
	PortBufferOverrunErrors   uint16 `iba:"off=64,bits=16"`
	PortDLIDMappingErrors     uint16 `iba:"off=80,bits=16"`
	PortVLMappingErrors       uint16 `iba:"off=96,bits=16"`
	PortLoopingErrors         uint16 `iba:"off=112,bits=16"`
}

// PortXmitDiscardDetails is the Port Transmit Discard Counters (IBA 16.1.4.2).
//
//iba:attr id=0x16 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortXmitDiscardDetails
type PortXmitDiscardDetails struct {
	_                           uint8  `iba:"off=0,bits=8"`
	PortSelect                  uint8  `iba:"off=8,bits=8"`
	CounterSelect               uint16 `iba:"off=16,bits=16,hex"`
	PortInactiveDiscards        uint16 `iba:"off=32,bits=16"`
	PortNeighborMTUDiscards     uint16 `iba:"off=48,bits=16"`
	PortSwLifetimeLimitDiscards uint16 `iba:"off=64,bits=16"`
	PortSwHOQLimitDiscards      uint16 `iba:"off=80,bits=16"`
}

// PortOpRcvCounters is the Port Receive Counters per Op Code (IBA 16.1.4.3).
//
//iba:attr id=0x17 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortOpRcvCounters
type PortOpRcvCounters struct {
	OpCode        uint8  `iba:"off=0,bits=8"`
	PortSelect    uint8  `iba:"off=8,bits=8"`
	CounterSelect uint16 `iba:"off=16,bits=16,hex"`
	PortOpRcvPkts uint32 `iba:"off=32,bits=32"`
	PortOpRcvData uint32 `iba:"off=64,bits=32"`
}

// PortFlowCtlCounters is the Port Flow Control Counters (IBA 16.1.4.4).
//
//iba:attr id=0x18 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortFlowCtlCounters
type PortFlowCtlCounters struct {
	_                uint8  `iba:"off=0,bits=8"`
	PortSelect       uint8  `iba:"off=8,bits=8"`
	CounterSelect    uint16 `iba:"off=16,bits=16,hex"`
	PortXmitFlowPkts uint32 `iba:"off=32,bits=32"`
	PortRcvFlowPkts  uint32 `iba:"off=64,bits=32"`
}

// PortVLOpPackets is the Port Packets Received per Op Code per VL (IBA 16.1.4.5).
//
//iba:attr id=0x19 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLOpPackets
type PortVLOpPackets struct {
	OpCode          uint8      `iba:"off=0,bits=8"`
	PortSelect      uint8      `iba:"off=8,bits=8"`
	CounterSelect   uint16     `iba:"off=16,bits=16,hex"`
	PortVLOpPackets [16]uint16 `iba:"off=32,bits=16"`
}

// PortVLOpData is the Port Kilobytes Received per Op Code per VL (IBA 16.1.4.6).
//
//iba:attr id=0x1A methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLOpData
type PortVLOpData struct {
	OpCode        uint8      `iba:"off=0,bits=8"`
	PortSelect    uint8      `iba:"off=8,bits=8"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex"`
	PortVLOpData  [16]uint32 `iba:"off=32,bits=32"`
}

// PortVLXmitFlowCtlUpdateErrors is the Port Flow Control update errors per VL (IBA 16.1.4.7).
//
//iba:attr id=0x1B methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLXmitFlowCtlUpdateErrors
type PortVLXmitFlowCtlUpdateErrors struct {
	_                             uint8     `iba:"off=0,bits=8"`
	PortSelect                    uint8     `iba:"off=8,bits=8"`
	CounterSelect                 uint16    `iba:"off=16,bits=16,hex"`
	PortVLXmitFlowCtlUpdateErrors [16]uint8 `iba:"off=32,bits=2"`
}

// PortVLXmitWaitCounters is the Port Ticks Waiting to Transmit Counters per VL (IBA 16.1.4.8).
//
//iba:attr id=0x1C methods=PerformanceGet,PerformanceSet
//iba:alias PMPortVLXmitWaitCounters
type PortVLXmitWaitCounters struct {
	_              uint8      `iba:"off=0,bits=8"`
	PortSelect     uint8      `iba:"off=8,bits=8"`
	CounterSelect  uint16     `iba:"off=16,bits=16,hex"`
	PortVLXmitWait [16]uint16 `iba:"off=32,bits=16"`
}

// SwPortVLCongestion is the Switch Port Congestion per VL (IBA 16.1.4.9).
//
//iba:attr id=0x30 methods=PerformanceGet,PerformanceSet
//iba:alias PMSwPortVLCongestion
type SwPortVLCongestion struct {
	_                  uint8      `iba:"off=0,bits=8"`
	PortSelect         uint8      `iba:"off=8,bits=8"`
	CounterSelect      uint16     `iba:"off=16,bits=16,hex"`
	SwPortVLCongestion [16]uint16 `iba:"off=32,bits=16"`
}

// PortSamplesResultExtended is the Extended Port Samples Result (IBA 16.1.4.10).
//
//iba:attr id=0x1E methods=PerformanceGet,PerformanceSet
//iba:alias PMPortSamplesResExt
type PortSamplesResultExtended struct {
	Tag           uint16     `iba:"off=0,bits=16"`
	_             uint16     `iba:"off=16,bits=14"`
	SampleStatus  uint8      `iba:"off=30,bits=2"`
	ExtendedWidth uint8      `iba:"off=32,bits=2"`
	_             uint32     `iba:"off=34,bits=30"`
	Counter       [15]uint64 `iba:"off=64,bits=64"`
}

// PortCountersExtended is the Extended Port Counters (IBA 16.1.4.11).
//
//iba:attr id=0x1D methods=PerformanceGet,PerformanceSet
//iba:alias PMPortCountersExt
type PortCountersExtended struct {
	_                     uint8  `iba:"off=0,bits=8"`
	PortSelect            uint8  `iba:"off=8,bits=8"`
	CounterSelect         uint16 `iba:"off=16,bits=16,hex"`
	_                     uint32 `iba:"off=32,bits=32"`
	PortXmitData          uint64 `iba:"off=64,bits=64"`
	PortRcvData           uint64 `iba:"off=128,bits=64"`
	PortXmitPkts          uint64 `iba:"off=192,bits=64"`
	PortRcvPkts           uint64 `iba:"off=256,bits=64"`
	PortUnicastXmitPkts   uint64 `iba:"off=320,bits=64"`
	PortUnicastRcvPkts    uint64 `iba:"off=384,bits=64"`
	PortMulticastXmitPkts uint64 `iba:"off=448,bits=64"`
	PortMulticastRcvPkts  uint64 `iba:"off=512,bits=64"`
}

// PortXmitDataSL is the Transmit SL Port Counters (IBA A13.6.5).
//
//iba:attr id=0x36 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortXmitDataSL
type PortXmitDataSL struct {
	_              uint8      `iba:"off=0,bits=8"`
	PortSelect     uint8      `iba:"off=8,bits=8"`
	CounterSelect  uint16     `iba:"off=16,bits=16,hex"`
	PortXmitDataSL [16]uint32 `iba:"off=32,bits=32"`
}

// PortRcvDataSL is the Receive SL Port Counters (IBA A13.6.5).
//
//iba:attr id=0x37 methods=PerformanceGet,PerformanceSet
//iba:alias PMPortRcvDataSL
type PortRcvDataSL struct {
	_             uint8      `iba:"off=0,bits=8"`
	PortSelect    uint8      `iba:"off=8,bits=8"`
	CounterSelect uint16     `iba:"off=16,bits=16,hex"`
	PortRcvDataSL [16]uint32 `iba:"off=32,bits=32"`
}
