package iba

// MADHeader is the MAD Base Header (IBA 13.4.3).
type MADHeader struct {
	BaseVersion       uint8  `iba:"off=0,bits=8"`
	MgmtClass         uint8  `iba:"off=8,bits=8"`
	ClassVersion      uint8  `iba:"off=16,bits=8"`
	Method            uint8  `iba:"off=24,bits=8"`
	Status            uint16 `iba:"off=32,bits=16"`
	ClassSpecific     uint16 `iba:"off=48,bits=16"`
	TransactionID     uint64 `iba:"off=64,bits=64,hex"`
	AttributeID       uint16 `iba:"off=128,bits=16"`
	_                 uint16 `iba:"off=144,bits=16"`
	AttributeModifier uint32 `iba:"off=160,bits=32"`
}

// MADHeaderDirected is the MAD Base Header Directed (IBA 13.4.3).
type MADHeaderDirected struct {
	BaseVersion       uint8  `iba:"off=0,bits=8"`
	MgmtClass         uint8  `iba:"off=8,bits=8"`
	ClassVersion      uint8  `iba:"off=16,bits=8"`
	Method            uint8  `iba:"off=24,bits=8"`
	D                 uint8  `iba:"off=32,bits=1,name=D"`
	Status            uint16 `iba:"off=33,bits=15"`
	HopPointer        uint8  `iba:"off=48,bits=8"`
	HopCount          uint8  `iba:"off=56,bits=8"`
	TransactionID     uint64 `iba:"off=64,bits=64,hex"`
	AttributeID       uint16 `iba:"off=128,bits=16"`
	_                 uint16 `iba:"off=144,bits=16"`
	AttributeModifier uint32 `iba:"off=160,bits=32"`
}

// ClassPortInfo is the Class Port Info (IBA 13.4.8.1).
//
//iba:attr id=0x01 methods=CommMgtGet,CommMgtSet,PerformanceGet,BMGet,BMSet,DevMgtGet,DevMgtSet,SNMPGet,SubnAdmGet,CongestionGet
//iba:alias MADClassPortInfo
type ClassPortInfo struct {
	BaseVersion     uint8  `iba:"off=0,bits=8"`
	ClassVersion    uint8  `iba:"off=8,bits=8"`
	CapabilityMask  uint16 `iba:"off=16,bits=16,hex"`
	CapabilityMask2 uint32 `iba:"off=32,bits=27,hex"`
	RespTimeValue   uint8  `iba:"off=59,bits=5"`
	RedirectGID     GID    `iba:"off=64,bits=128"`
	RedirectTC      uint8  `iba:"off=192,bits=8,hex"`
	RedirectSL      uint8  `iba:"off=200,bits=4"`
	RedirectFL      uint32 `iba:"off=204,bits=20"`
	RedirectLID     uint16 `iba:"off=224,bits=16"`
	RedirectPKey    uint16 `iba:"off=240,bits=16,hex"`
	_               uint8  `iba:"off=256,bits=8"`
	RedirectQP      uint32 `iba:"off=264,bits=24,hex"`
	RedirectQKey    uint32 `iba:"off=288,bits=32,hex"`
	TrapGID         GID    `iba:"off=320,bits=128"`
	TrapTC          uint8  `iba:"off=448,bits=8"`
	TrapSL          uint8  `iba:"off=456,bits=4"`
	TrapFL          uint32 `iba:"off=460,bits=20"`
	TrapLID         uint16 `iba:"off=480,bits=16"`
	TrapPKey        uint16 `iba:"off=496,bits=16,hex"`
	TrapHL          uint8  `iba:"off=512,bits=8"`
	TrapQP          uint32 `iba:"off=520,bits=24,hex"`
	TrapQKey        uint32 `iba:"off=544,bits=32,hex"`
}

// InformInfo is the InformInfo (IBA 13.4.8.3).
//
//iba:attr id=0x03 methods=SubnAdmSet
//iba:alias MADInformInfo
type InformInfo struct {
	GID           GID    `iba:"off=0,bits=128"`
	LIDRangeBegin uint16 `iba:"off=128,bits=16"`
	LIDRangeEnd   uint16 `iba:"off=144,bits=16"`
	_             uint16 `iba:"off=160,bits=16"`
	IsGeneric     uint8  `iba:"off=176,bits=8"`
	Subscribe     uint8  `iba:"off=184,bits=8"`
	Type          uint16 `iba:"off=192,bits=16"`
	TrapNumber    uint16 `iba:"off=208,bits=16"`
	QPN           uint32 `iba:"off=224,bits=24"`
	_             uint8  `iba:"off=248,bits=3"`
	RespTimeValue uint8  `iba:"off=251,bits=5"`
	_             uint8  `iba:"off=256,bits=8"`
	ProducerType  uint32 `iba:"off=264,bits=24"`
}
