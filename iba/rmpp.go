package iba

// RMPPHeader is the RMPP Header Fields (IBA 13.6.2.1).
type RMPPHeader struct {
	MADHeader   `iba:"off=0"`
	RMPPVersion uint8  `iba:"off=192,bits=8"`
	RMPPType    uint8  `iba:"off=200,bits=8"`
	RRespTime   uint8  `iba:"off=208,bits=5"`
	RMPPFlags   uint8  `iba:"off=213,bits=3"`
	RMPPStatus  uint8  `iba:"off=216,bits=8"`
	Data1       uint32 `iba:"off=224,bits=32"`
	Data2       uint32 `iba:"off=256,bits=32"`
}

// RMPPShortHeader is the RMPP Header Fields (IBA 13.6.2.1).
type RMPPShortHeader struct {
	MADHeader   `iba:"off=0"`
	RMPPVersion uint8 `iba:"off=192,bits=8"`
	RMPPType    uint8 `iba:"off=200,bits=8"`
	RRespTime   uint8 `iba:"off=208,bits=5"`
	RMPPFlags   uint8 `iba:"off=213,bits=3"`
	RMPPStatus  uint8 `iba:"off=216,bits=8"`
}

// RMPPData is the RMPP Data Packet (IBA 13.6.2.3).
type RMPPData struct {
	RMPPShortHeader `iba:"off=0"`
	SegmentNumber   uint32    `iba:"off=224,bits=32"`
	PayLoadLength   uint32    `iba:"off=256,bits=32"`
	Data            [220]byte `iba:"off=288,data"`
}

// RMPPAck is the RMPP Data Packet (IBA 13.6.2.3).
type RMPPAck struct {
	RMPPShortHeader `iba:"off=0"`
	SegmentNumber   uint32    `iba:"off=224,bits=32"`
	NewWindowLast   uint32    `iba:"off=256,bits=32"`
	_               [220]byte `iba:"off=288,data"`
}

// RMPPAbort is the RMPP Data Packet (IBA 13.6.2.3).
type RMPPAbort struct {
	RMPPShortHeader `iba:"off=0"`
	_               uint32    `iba:"off=224,bits=32"`
	_               uint32    `iba:"off=256,bits=32"`
	ErrorData       [220]byte `iba:"off=288,data"`
}

// RMPPStop is the RMPP Data Packet (IBA 13.6.2.3).
type RMPPStop struct {
	RMPPShortHeader `iba:"off=0"`
	_               uint32    `iba:"off=224,bits=32"`
	_               uint32    `iba:"off=256,bits=32"`
	ErrorData       [220]byte `iba:"off=288,data"`
}
