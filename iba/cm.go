package iba

// CMFormat is the Request for Communication (IBA 16.7.1).
//
//iba:format class=0x07 version=2
type CMFormat struct {
	MADHeader `iba:"off=0"`
	Data      [232]byte `iba:"off=192,data"`
}

// CMPath is the Path Information (IBA 12.6).
type CMPath struct {
	SLID            uint16 `iba:"off=0,bits=16"`
	DLID            uint16 `iba:"off=16,bits=16"`
	SGID            GID    `iba:"off=32,bits=128"`
	DGID            GID    `iba:"off=160,bits=128"`
	FlowLabel       uint32 `iba:"off=288,bits=20"`
	_               uint8  `iba:"off=308,bits=4"`
	_               uint8  `iba:"off=312,bits=2"`
	PD              uint8  `iba:"off=314,bits=6"`
	TClass          uint8  `iba:"off=320,bits=8,hex"`
	HopLimit        uint8  `iba:"off=328,bits=8"`
	SL              uint8  `iba:"off=336,bits=4"`
	SubnetLocal     uint8  `iba:"off=340,bits=1"`
	_               uint8  `iba:"off=341,bits=3"`
	LocalACKTimeout uint8  `iba:"off=344,bits=5"`
	_               uint8  `iba:"off=349,bits=3"`
}

// CMREQ is the Request for Communication (IBA 12.6.5).
//
//iba:attr id=0x10 methods=CommMgtSend
type CMREQ struct {
	LCID                  uint32   `iba:"off=0,bits=32"`
	_                     uint32   `iba:"off=32,bits=32"`
	ServiceID             uint64   `iba:"off=64,bits=64,hex"`
	LGUID                 GUID     `iba:"off=128,bits=64"`
	LocalCMQKey           uint32   `iba:"off=192,bits=32,hex"`
	LocalQKey             uint32   `iba:"off=224,bits=32,hex"`
	LocalQPN              uint32   `iba:"off=256,bits=24"`
	ResponderResources    uint8    `iba:"off=280,bits=8"`
	LocalEECN             uint32   `iba:"off=288,bits=24"`
	InitiatorDepth        uint8    `iba:"off=312,bits=8"`
	RemoteEECN            uint32   `iba:"off=320,bits=24"`
	RemoteResponseTimeout uint8    `iba:"off=344,bits=5"`
	TransportService      uint8    `iba:"off=349,bits=2"`
	FlowControl           uint8    `iba:"off=351,bits=1"`
	StartingPSN           uint32   `iba:"off=352,bits=24"`
	LocalResponseTimeout  uint8    `iba:"off=376,bits=5"`
	RetryCount            uint8    `iba:"off=381,bits=3"`
	PKey                  uint16   `iba:"off=384,bits=16,hex"`
	PathPacketMTU         uint8    `iba:"off=400,bits=4"`
	RDCExists             uint8    `iba:"off=404,bits=1"`
	RNRRetryCount         uint8    `iba:"off=405,bits=3"`
	MaxCMRetries          uint8    `iba:"off=408,bits=4"`
	_                     uint8    `iba:"off=412,bits=4"`
	PrimaryPath           CMPath   `iba:"off=416"`
	AlternatePath         CMPath   `iba:"off=768"`
	PrivateData           [92]byte `iba:"off=1120"`
}

// CMMRA is the Message Receipt Acknowledgement (IBA 12.6.6).
//
//iba:attr id=0x11 methods=CommMgtSend
type CMMRA struct {
	LCID           uint32    `iba:"off=0,bits=32"`
	RCID           uint32    `iba:"off=32,bits=32"`
	MessageMRAed   uint8     `iba:"off=64,bits=2"`
	_              uint8     `iba:"off=66,bits=6"`
	ServiceTimeout uint8     `iba:"off=72,bits=5"`
	_              uint8     `iba:"off=77,bits=3"`
	_              uint16    `iba:"off=80,bits=16"`
	PrivateData    [220]byte `iba:"off=96"`
}

// CMREJ is the Reject (IBA 12.6.7).
//
//iba:attr id=0x12 methods=CommMgtSend
type CMREJ struct {
	LCID             uint32    `iba:"off=0,bits=32"`
	RCID             uint32    `iba:"off=32,bits=32"`
	MessageRejected  uint8     `iba:"off=64,bits=2"`
	_                uint8     `iba:"off=66,bits=6"`
	RejectInfoLength uint8     `iba:"off=72,bits=7"`
	_                uint8     `iba:"off=79,bits=1"`
	Reason           uint16    `iba:"off=80,bits=16"`
	ARI              [72]byte  `iba:"off=96"`
	PrivateData      [148]byte `iba:"off=672"`
}

// CMREP is the Reply To Request For Communication (IBA 12.6.8).
//
//iba:attr id=0x13 methods=CommMgtSend
type CMREP struct {
	LCID               uint32    `iba:"off=0,bits=32"`
	RCID               uint32    `iba:"off=32,bits=32"`
	LocalQKey          uint32    `iba:"off=64,bits=32,hex"`
	LocalQPN           uint32    `iba:"off=96,bits=24"`
	_                  uint8     `iba:"off=120,bits=8"`
	LocalEEContext     uint32    `iba:"off=128,bits=24"`
	_                  uint8     `iba:"off=152,bits=8"`
	StartingPSN        uint32    `iba:"off=160,bits=24"`
	_                  uint8     `iba:"off=184,bits=8"`
	ResponderResources uint8     `iba:"off=192,bits=8"`
	InitiatorDepth     uint8     `iba:"off=200,bits=8"`
	TargetACKDelay     uint8     `iba:"off=208,bits=5"`
	FailoverAccepted   uint8     `iba:"off=213,bits=2"`
	FlowControl        uint8     `iba:"off=215,bits=1"`
	RNRRetryCount      uint8     `iba:"off=216,bits=3"`
	_                  uint8     `iba:"off=219,bits=5"`
	LGUID              GUID      `iba:"off=224,bits=64"`
	PrivateData        [196]byte `iba:"off=288"`
}

// CMRTU is the Ready To Use (IBA 12.6.9).
//
//iba:attr id=0x14 methods=CommMgtSend
type CMRTU struct {
	LCID        uint32    `iba:"off=0,bits=32"`
	RCID        uint32    `iba:"off=32,bits=32"`
	PrivateData [224]byte `iba:"off=64"`
}

// CMDREQ is the Request For Communication Release (Disconnection Request) (IBA 12.6.10).
//
//iba:attr id=0x15 methods=CommMgtSend
type CMDREQ struct {
	LCID        uint32    `iba:"off=0,bits=32"`
	RCID        uint32    `iba:"off=32,bits=32"`
	RemoteQPN   uint32    `iba:"off=64,bits=24"`
	_           uint8     `iba:"off=88,bits=8"`
	PrivateData [220]byte `iba:"off=96"`
}

// CMDREP is the Reply To Request For Communication Release (IBA 12.6.11).
//
//iba:attr id=0x16 methods=CommMgtSend
type CMDREP struct {
	LCID        uint32    `iba:"off=0,bits=32"`
	RCID        uint32    `iba:"off=32,bits=32"`
	PrivateData [224]byte `iba:"off=64"`
}

// CMLAP is the Load Alternate Path (IBA 12.8.1).
//
//iba:attr id=0x19 methods=CommMgtSend
type CMLAP struct {
	LCID               uint32    `iba:"off=0,bits=32"`
	RCID               uint32    `iba:"off=32,bits=32"`
	QKey               uint32    `iba:"off=64,bits=32,hex"`
	RQPN               uint32    `iba:"off=96,bits=24"`
	RCMTimeout         uint8     `iba:"off=120,bits=5"`
	_                  uint8     `iba:"off=125,bits=3"`
	_                  uint32    `iba:"off=128,bits=32"`
	AltSLID            uint16    `iba:"off=160,bits=16"`
	AltDLID            uint16    `iba:"off=176,bits=16"`
	AltSGID            GID       `iba:"off=192,bits=128"`
	AltDGID            GID       `iba:"off=320,bits=128"`
	AltFlowLabel       uint32    `iba:"off=448,bits=20"`
	_                  uint8     `iba:"off=468,bits=4"`
	AltTClass          uint8     `iba:"off=472,bits=8,hex"`
	AltHopLimit        uint8     `iba:"off=480,bits=8"`
	_                  uint8     `iba:"off=488,bits=2"`
	AltIPD             uint8     `iba:"off=490,bits=6"`
	AltSL              uint8     `iba:"off=496,bits=4"`
	AltSubnetLocal     uint8     `iba:"off=500,bits=1"`
	_                  uint8     `iba:"off=501,bits=3"`
	AltLocalACKTimeout uint8     `iba:"off=504,bits=5"`
	_                  uint8     `iba:"off=509,bits=3"`
	PrivateData        [168]byte `iba:"off=512"`
}

// CMAPR is the Alternate Path Response (IBA 12.8.2).
//
//iba:attr id=0x1A methods=CommMgtSend
type CMAPR struct {
	LCID                 uint32    `iba:"off=0,bits=32"`
	RCID                 uint32    `iba:"off=32,bits=32"`
	AdditionalInfoLength uint8     `iba:"off=64,bits=8"`
	APstatus             uint8     `iba:"off=72,bits=8"`
	_                    uint16    `iba:"off=80,bits=16"`
	AdditionalInfo       [72]byte  `iba:"off=96"`
	PrivateData          [148]byte `iba:"off=672"`
}

// CMSIDR_REQ is the Service ID Resolution Request (IBA 12.11.1).
//
//iba:attr id=0x17 methods=CommMgtSend
type CMSIDR_REQ struct {
	RequestID   uint32    `iba:"off=0,bits=32"`
	_           uint32    `iba:"off=32,bits=32"`
	ServiceID   uint64    `iba:"off=64,bits=64,hex"`
	PrivateData [216]byte `iba:"off=128"`
}

// CMSIDR_REP is the Service ID Resolution Response (IBA 12.11.2).
//
//iba:attr id=0x18 methods=CommMgtSend
type CMSIDR_REP struct {
	RequestID     uint32        `iba:"off=0,bits=32"`
	QPN           uint32        `iba:"off=32,bits=24"`
	Status        uint8         `iba:"off=56,bits=8"`
	ServiceID     uint64        `iba:"off=64,bits=64,hex"`
	QKey          uint32        `iba:"off=128,bits=32,hex"`
	ClassPortinfo ClassPortInfo `iba:"off=160"`
	PrivateData   [140]byte     `iba:"off=736"`
}
