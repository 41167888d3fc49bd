package iba

// HdrLRH is the Local Route Header (IBA 7.7).
type HdrLRH struct {
	VL     uint8  `iba:"off=0,bits=4"`
	LVer   uint8  `iba:"off=4,bits=4"`
	SL     uint8  `iba:"off=8,bits=4"`
	_      uint8  `iba:"off=12,bits=2"`
	LNH    uint8  `iba:"off=14,bits=2"`
	DLID   uint16 `iba:"off=16,bits=16"`
	_      uint8  `iba:"off=32,bits=5"`
	PktLen uint16 `iba:"off=37,bits=11"`
	SLID   uint16 `iba:"off=48,bits=16"`
}

// HdrRWH is the Raw Header (IBA 5.3).
type HdrRWH struct {
	_         uint16 `iba:"off=0,bits=16"`
	EtherType uint16 `iba:"off=16,bits=16"`
}

// HdrGRH is the Global Route Header (IBA 8.3).
type HdrGRH struct {
	IPVer     uint8  `iba:"off=0,bits=4"`
	TClass    uint8  `iba:"off=4,bits=8"`
	FlowLabel uint32 `iba:"off=12,bits=20"`
	PayLen    uint16 `iba:"off=32,bits=16"`
	NxtHdr    uint8  `iba:"off=48,bits=8"`
	HopLmt    uint8  `iba:"off=56,bits=8"`
	SGID      GID    `iba:"off=64,bits=128"`
	DGID      GID    `iba:"off=192,bits=128"`
}

// HdrBTH is the Base Transport Header (IBA 9.2).
type HdrBTH struct {
	Service  uint8  `iba:"off=0,bits=3"`
	Function uint8  `iba:"off=3,bits=5"`
	SE       uint8  `iba:"off=8,bits=1"`
	MigReq   uint8  `iba:"off=9,bits=1"`
	PadCnt   uint8  `iba:"off=10,bits=2"`
	TVer     uint8  `iba:"off=12,bits=4"`
	PKey     uint16 `iba:"off=16,bits=16,hex"`
	_        uint8  `iba:"off=32,bits=8"`
	DestQP   uint32 `iba:"off=40,bits=24"`
	AckReq   uint8  `iba:"off=64,bits=1"`
	_        uint8  `iba:"off=65,bits=7"`
	PSN      uint32 `iba:"off=72,bits=24"`
}

// HdrRDETH is the Reliable Datagram Extended Transport Header (IBA 9.3.1).
type HdrRDETH struct {
	_   uint8  `iba:"off=0,bits=8"`
	EEC uint32 `iba:"off=8,bits=24"`
}

// HdrDETH is the Datagram Extended Transport Header (IBA 9.3.2).
type HdrDETH struct {
	QKey  uint32 `iba:"off=0,bits=32,hex"`
	_     uint8  `iba:"off=32,bits=8"`
	SrcQP uint32 `iba:"off=40,bits=24"`
}

// HdrRETH is the RDMA Extended Transport Header (IBA 9.3.3).
type HdrRETH struct {
	VA     uint64 `iba:"off=0,bits=64"`
	RKey   uint32 `iba:"off=64,bits=32"`
	DMALen uint32 `iba:"off=96,bits=32"`
}

// HdrAtomicETH is the Atomic Extended Transport Header (IBA 9.3.4).
type HdrAtomicETH struct {
	VA       uint64 `iba:"off=0,bits=64"`
	RKey     uint32 `iba:"off=64,bits=32"`
	SwapData uint64 `iba:"off=96,bits=64"`
	CmpData  uint64 `iba:"off=160,bits=64"`
}

// HdrAETH is the ACK Extended Transport Header (IBA 9.3.5).
type HdrAETH struct {
	Syndrome uint8  `iba:"off=0,bits=8"`
	MSN      uint32 `iba:"off=8,bits=24"`
}

// HdrAtomicAckETH is the Atomic Acknowledge Extended Transport Header (IBA 9.5.3).
type HdrAtomicAckETH struct {
	OrigRData uint64 `iba:"off=0,bits=64"`
}

// HdrImmDt is the Immediate Extended Transport Header (IBA 9.3.6).
type HdrImmDt struct {
	ImmediateData uint32 `iba:"off=0,bits=32"`
}

// HdrIETH is the Invalidate Extended Transport Header (IBA 9.3.7).
type HdrIETH struct {
	RKey uint32 `iba:"off=0,bits=32"`
}

// HdrFlowControl is the Flow Control Packet (IBA 7.9.4).
type HdrFlowControl struct {
	Op    uint8  `iba:"off=0,bits=4"`
	FCTBS uint16 `iba:"off=4,bits=12"`
	VL    uint8  `iba:"off=16,bits=4"`
	FCCL  uint16 `iba:"off=20,bits=12"`
}
