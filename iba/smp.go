package iba

// LIDPortBlock is the LID/Port Block Element (IBA 14.2.5.11).
//
//iba:alias SMPLIDPortBlock
type LIDPortBlock struct {
	LID   uint16 `iba:"off=0,bits=16"`
	Valid uint8  `iba:"off=16,bits=1"`
	LMC   uint8  `iba:"off=17,bits=3"`
	_     uint8  `iba:"off=20,bits=4"`
	Port  uint8  `iba:"off=24,bits=8"`
}

// SMPFormat is the SMP Format - LID Routed (IBA 14.2.1.1).
//
//iba:format class=0x01 version=1
type SMPFormat struct {
	MADHeader `iba:"off=0"`
	MKey      uint64    `iba:"off=192,bits=64,hex"`
	_         [32]byte  `iba:"off=256"`
	Data      [64]byte  `iba:"off=512,data"`
	_         [128]byte `iba:"off=1024"`
}

// SMPFormatDirected is the SMP Format - Direct Routed (IBA 14.2.1.2).
//
//iba:format class=0x81 version=1
type SMPFormatDirected struct {
	MADHeaderDirected `iba:"off=0"`
	MKey              uint64    `iba:"off=192,bits=64,hex"`
	DrSLID            uint16    `iba:"off=256,bits=16"`
	DrDLID            uint16    `iba:"off=272,bits=16"`
	_                 [28]byte  `iba:"off=288"`
	Data              [64]byte  `iba:"off=512,data"`
	InitialPath       [64]uint8 `iba:"off=1024,bits=8"`
	ReturnPath        [64]uint8 `iba:"off=1536,bits=8"`
}

// NoticeTrap64 is the Notice DataDetails For Trap 64, 65, 66, and 67 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap64 NoticeTrap65 NoticeTrap66 NoticeTrap67
type NoticeTrap64 struct {
	_       uint16   `iba:"off=0,bits=16"`
	_       uint32   `iba:"off=16,bits=32"`
	GidAddr GID      `iba:"off=48,bits=128"`
	Padding [32]byte `iba:"off=176"`
}

// NoticeTrap128 is the Notice DataDetails For Trap 128 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap128
type NoticeTrap128 struct {
	LidAddr uint16   `iba:"off=0,bits=16"`
	Padding [52]byte `iba:"off=16"`
}

// NoticeTrap129 is the Notice DataDetails For Trap 129, 130 and 131 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap129 NoticeTrap130 NoticeTrap131
type NoticeTrap129 struct {
	_       uint16   `iba:"off=0,bits=16"`
	LidAddr uint16   `iba:"off=16,bits=16"`
	PortNum uint8    `iba:"off=32,bits=8"`
	_       uint8    `iba:"off=40,bits=8"`
	_       [48]byte `iba:"off=48"`
}

// NoticeTrap144 is the Notice DataDetails For Trap 144 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap144
type NoticeTrap144 struct {
	_                      uint16   `iba:"off=0,bits=16"`
	LidAddr                uint16   `iba:"off=16,bits=16"`
	_                      uint8    `iba:"off=32,bits=8"`
	_                      uint8    `iba:"off=40,bits=7"`
	OtherLocalChanges      uint8    `iba:"off=47,bits=1"`
	CapabilityMask         uint32   `iba:"off=48,bits=32,hex"`
	_                      uint8    `iba:"off=80,bits=8"`
	_                      uint8    `iba:"off=88,bits=4"`
	SmPriorityChange       uint8    `iba:"off=92,bits=1"`
	LinkSpeedEnabledChange uint8    `iba:"off=93,bits=1"`
	LinkWidthEnabledChange uint8    `iba:"off=94,bits=1"`
	NodeDescriptionChange  uint8    `iba:"off=95,bits=1"`
	_                      uint16   `iba:"off=96,bits=16"`
	_                      [40]byte `iba:"off=112"`
}

// NoticeTrap145 is the Notice DataDetails For Trap 145 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap145
type NoticeTrap145 struct {
	_               uint16   `iba:"off=0,bits=16"`
	LidAddr         uint16   `iba:"off=16,bits=16"`
	_               uint16   `iba:"off=32,bits=16"`
	SystemImageGUID GUID     `iba:"off=48,bits=64"`
	_               [40]byte `iba:"off=112"`
}

// NoticeTrap256 is the Notice DataDetails For Trap 256 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap256
type NoticeTrap256 struct {
	_                  uint16    `iba:"off=0,bits=16"`
	LidAddr            uint16    `iba:"off=16,bits=16"`
	DrSLID             uint16    `iba:"off=32,bits=16"`
	Method             uint8     `iba:"off=48,bits=8"`
	_                  uint8     `iba:"off=56,bits=8"`
	AttributeID        uint16    `iba:"off=64,bits=16"`
	AttributeModifier  uint32    `iba:"off=80,bits=32"`
	MKey               uint64    `iba:"off=112,bits=64"`
	_                  uint8     `iba:"off=176,bits=8"`
	DrNotice           uint8     `iba:"off=184,bits=1"`
	DrPathTruncated    uint8     `iba:"off=185,bits=1"`
	DrHopCount         uint8     `iba:"off=186,bits=6"`
	DrNoticeReturnPath [30]uint8 `iba:"off=192,bits=8"`
}

// NoticeTrap257 is the Notice DataDetails For Trap 257 and 258 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap257 NoticeTrap258
type NoticeTrap257 struct {
	_        uint16 `iba:"off=0,bits=16"`
	LidAddr1 uint16 `iba:"off=16,bits=16"`
	LidAddr2 uint16 `iba:"off=32,bits=16"`
	Key      uint32 `iba:"off=48,bits=32"`
	SL       uint8  `iba:"off=80,bits=4"`
	_        uint8  `iba:"off=84,bits=4"`
	Qp1      uint32 `iba:"off=88,bits=24"`
	_        uint8  `iba:"off=112,bits=8"`
	Qp2      uint32 `iba:"off=120,bits=24"`
	GidAddr1 GID    `iba:"off=144,bits=128"`
	GidAddr2 GID    `iba:"off=272,bits=128"`
	Padding  uint32 `iba:"off=400,bits=32"`
}

// NoticeTrap259 is the Notice DataDetails For Trap 259 (IBA 14.2.5.1).
//
//iba:alias MADNoticeTrap259
type NoticeTrap259 struct {
	DataValid uint16 `iba:"off=0,bits=16"`
	LidAddr1  uint16 `iba:"off=16,bits=16"`
	LidAddr2  uint16 `iba:"off=32,bits=16"`
	PKey      uint16 `iba:"off=48,bits=16,hex"`
	SL        uint8  `iba:"off=64,bits=4"`
	_         uint8  `iba:"off=68,bits=4"`
	Qp1       uint32 `iba:"off=72,bits=24"`
	_         uint8  `iba:"off=96,bits=8"`
	Qp2       uint32 `iba:"off=104,bits=24"`
	GidAddr1  GID    `iba:"off=128,bits=128"`
	GidAddr2  GID    `iba:"off=256,bits=128"`
	SwLidAddr uint16 `iba:"off=384,bits=16"`
	PortNum   uint8  `iba:"off=400,bits=8"`
	Padding   uint32 `iba:"off=408,bits=24"`
}

// NodeDescription is the Node Description String (IBA 14.2.5.2).
//
//iba:attr id=0x10 methods=SubnGet
//iba:alias SMPNodeDescription
type NodeDescription struct {
	NodeString [64]uint8 `iba:"off=0,bits=8,str"`
}

// NodeInfo is the Generic Node Data (IBA 14.2.5.3).
//
//iba:attr id=0x11 methods=SubnGet
//iba:alias SMPNodeInfo
type NodeInfo struct {
	BaseVersion     uint8    `iba:"off=0,bits=8"`
	ClassVersion    uint8    `iba:"off=8,bits=8"`
	NodeType        NodeType `iba:"off=16,bits=8"`
	NumPorts        uint8    `iba:"off=24,bits=8"`
	SystemImageGUID GUID     `iba:"off=32,bits=64"`
	NodeGUID        GUID     `iba:"off=96,bits=64"`
	PortGUID        GUID     `iba:"off=160,bits=64"`
	PartitionCap    uint16   `iba:"off=224,bits=16"`
	DeviceID        uint16   `iba:"off=240,bits=16,hex"`
	Revision        uint32   `iba:"off=256,bits=32,hex"`
	LocalPortNum    uint8    `iba:"off=288,bits=8"`
	VendorID        uint32   `iba:"off=296,bits=24,hex"`
}

// SwitchInfo is the Switch Information (IBA 14.2.5.4).
//
//iba:attr id=0x12 methods=SubnGet,SubnSet
//iba:alias SMPSwitchInfo
type SwitchInfo struct {
	LinearFDBCap                      uint16 `iba:"off=0,bits=16"`
	RandomFDBCap                      uint16 `iba:"off=16,bits=16"`
	MulticastFDBCap                   uint16 `iba:"off=32,bits=16"`
	LinearFDBTop                      uint16 `iba:"off=48,bits=16"`
	DefaultPort                       uint8  `iba:"off=64,bits=8"`
	DefaultMulticastPrimaryPort       uint8  `iba:"off=72,bits=8"`
	DefaultMulticastNotPrimaryPort    uint8  `iba:"off=80,bits=8"`
	LifeTimeValue                     uint8  `iba:"off=88,bits=5"`
	PortStateChange                   uint8  `iba:"off=93,bits=1"`
	OptimizedSLtoVLMappingProgramming uint8  `iba:"off=94,bits=2"`
	LIDsPerPort                       uint16 `iba:"off=96,bits=16"`
	PartitionEnforcementCap           uint16 `iba:"off=112,bits=16"`
	InboundEnforcementCap             uint8  `iba:"off=128,bits=1"`
	OutboundEnforcementCap            uint8  `iba:"off=129,bits=1"`
	FilterRawInboundCap               uint8  `iba:"off=130,bits=1"`
	FilterRawOutboundCap              uint8  `iba:"off=131,bits=1"`
	EnhancedPort0                     uint8  `iba:"off=132,bits=1"`
	_                                 uint8  `iba:"off=133,bits=3"`
	_                                 uint8  `iba:"off=136,bits=8"`
	MulticastFDBTop                   uint16 `iba:"off=144,bits=16"`
}

// GUIDInfo is the Assigned GUIDs (IBA 14.2.5.5).
//
//iba:attr id=0x14 methods=SubnGet,SubnSet
//iba:alias SMPGUIDInfo
type GUIDInfo struct {
	GUIDBlock [8]GUID `iba:"off=0,bits=64"`
}

// PortInfo is the Port Information (IBA 14.2.5.6).
//
//iba:attr id=0x15 methods=SubnGet,SubnSet
//iba:alias SMPPortInfo
type PortInfo struct {
	MKey                                uint64        `iba:"off=0,bits=64,hex"`
	GIDPrefix                           uint64        `iba:"off=64,bits=64,gidprefix"`
	LID                                 uint16        `iba:"off=128,bits=16"`
	MasterSMLID                         uint16        `iba:"off=144,bits=16"`
	CapabilityMask                      uint32        `iba:"off=160,bits=32,hex"`
	DiagCode                            uint16        `iba:"off=192,bits=16,hex"`
	MKeyLeasePeriod                     uint16        `iba:"off=208,bits=16"`
	LocalPortNum                        uint8         `iba:"off=224,bits=8"`
	LinkWidthEnabled                    uint8         `iba:"off=232,bits=8"`
	LinkWidthSupported                  uint8         `iba:"off=240,bits=8"`
	LinkWidthActive                     uint8         `iba:"off=248,bits=8"`
	LinkSpeedSupported                  uint8         `iba:"off=256,bits=4"`
	PortState                           PortState     `iba:"off=260,bits=4"`
	PortPhysicalState                   PhysPortState `iba:"off=264,bits=4"`
	LinkDownDefaultState                uint8         `iba:"off=268,bits=4"`
	MKeyProtectBits                     uint8         `iba:"off=272,bits=2"`
	_                                   uint8         `iba:"off=274,bits=3"`
	LMC                                 uint8         `iba:"off=277,bits=3"`
	LinkSpeedActive                     uint8         `iba:"off=280,bits=4"`
	LinkSpeedEnabled                    uint8         `iba:"off=284,bits=4"`
	NeighborMTU                         MTU           `iba:"off=288,bits=4"`
	MasterSMSL                          uint8         `iba:"off=292,bits=4"`
	VLCap                               uint8         `iba:"off=296,bits=4"`
	InitType                            uint8         `iba:"off=300,bits=4,hex"`
	VLHighLimit                         uint8         `iba:"off=304,bits=8"`
	VLArbitrationHighCap                uint8         `iba:"off=312,bits=8"`
	VLArbitrationLowCap                 uint8         `iba:"off=320,bits=8"`
	InitTypeReply                       uint8         `iba:"off=328,bits=4,hex"`
	MTUCap                              MTU           `iba:"off=332,bits=4"`
	VLStallCount                        uint8         `iba:"off=336,bits=3"`
	HOQLife                             uint8         `iba:"off=339,bits=5"`
	OperationalVLs                      uint8         `iba:"off=344,bits=4"`
	PartitionEnforcementInbound         uint8         `iba:"off=348,bits=1"`
	PartitionEnforcementOutbound        uint8         `iba:"off=349,bits=1"`
	FilterRawInbound                    uint8         `iba:"off=350,bits=1"`
	FilterRawOutbound                   uint8         `iba:"off=351,bits=1"`
	MKeyViolations                      uint16        `iba:"off=352,bits=16"`
	PKeyViolations                      uint16        `iba:"off=368,bits=16"`
	QKeyViolations                      uint16        `iba:"off=384,bits=16"`
	GUIDCap                             uint8         `iba:"off=400,bits=8"`
	ClientReregister                    uint8         `iba:"off=408,bits=1"`
	MulticastPKeyTrapSuppressionEnabled uint8         `iba:"off=409,bits=2"`
	SubnetTimeOut                       uint8         `iba:"off=411,bits=5"`
	_                                   uint8         `iba:"off=416,bits=3"`
	RespTimeValue                       uint8         `iba:"off=419,bits=5"`
	LocalPhyErrors                      uint8         `iba:"off=424,bits=4"`
	OverrunErrors                       uint8         `iba:"off=428,bits=4"`
	MaxCreditHint                       uint16        `iba:"off=432,bits=16"`
	_                                   uint8         `iba:"off=448,bits=1"`
	LinkSpeedExtActive2                 uint8         `iba:"off=449,bits=2"`
	LinkSpeedExtSupported2              uint8         `iba:"off=451,bits=2"`
	LinkSpeedExtEnabled2                uint8         `iba:"off=453,bits=3"`
	LinkRoundTripLatency                uint32        `iba:"off=456,bits=24"`
	CapabilityMask2                     uint16        `iba:"off=480,bits=16,hex"`
	LinkSpeedExtActive                  uint8         `iba:"off=496,bits=4"`
	LinkSpeedExtSupported               uint8         `iba:"off=500,bits=4"`
	_                                   uint8         `iba:"off=504,bits=3"`
	LinkSpeedExtEnabled                 uint8         `iba:"off=507,bits=5"`
}

// PKeyTable is the Partition Table (IBA 14.2.5.7).
//
//iba:attr id=0x16 methods=SubnGet,SubnSet
//iba:alias SMPPKeyTable
type PKeyTable struct {
	PKeyBlock [32]uint16 `iba:"off=0,bits=16,hex"`
}

// SLtoVLMappingTable is the Service Level to Virtual Lane mapping Information (IBA 14.2.5.8).
//
//iba:attr id=0x17 methods=SubnGet,SubnSet
//iba:alias SMPSLToVLMappingTable
type SLtoVLMappingTable struct {
	SLtoVL [16]uint8 `iba:"off=0,bits=4"`
}

// VLArbitrationTable is the List of Weights (IBA 14.2.5.9).
//
//iba:attr id=0x18 methods=SubnGet,SubnSet
//iba:alias SMPVLArbitrationTable
type VLArbitrationTable struct {
	VLWeightBlock [32]uint16 `iba:"off=0,bits=16"`
}

// LinearForwardingTable is the Linear Forwarding Table Information (IBA 14.2.5.10).
//
//iba:attr id=0x19 methods=SubnGet,SubnSet
//iba:alias SMPLinearForwardingTable
type LinearForwardingTable struct {
	PortBlock [64]uint8 `iba:"off=0,bits=8"`
}

// RandomForwardingTable is the Random Forwarding Table Information (IBA 14.2.5.11).
//
//iba:attr id=0x1A methods=SubnGet,SubnSet
//iba:alias SMPRandomForwardingTable
type RandomForwardingTable struct {
	LIDPortBlock [16]LIDPortBlock `iba:"off=0"`
}

// MulticastForwardingTable is the Multicast Forwarding Table Information (IBA 14.2.5.12).
//
//iba:attr id=0x1B methods=SubnGet,SubnSet
//iba:alias SMPMulticastForwardingTable
type MulticastForwardingTable struct {
	PortMaskBlock [32]uint16 `iba:"off=0,bits=16"`
}

// SMInfo is the Subnet Management Information (IBA 14.2.5.13).
//
//iba:attr id=0x20 methods=SubnGet,SubnSet
//iba:alias SMPSMInfo
type SMInfo struct {
	GUID     GUID    `iba:"off=0,bits=64"`
	SMKey    uint64  `iba:"off=64,bits=64,hex"`
	ActCount uint32  `iba:"off=128,bits=32"`
	Priority uint8   `iba:"off=160,bits=4"`
	SMState  SMState `iba:"off=164,bits=4"`
	_        uint32  `iba:"off=168,bits=24"`
}

// VendorDiag is the Vendor Specific Diagnostic (IBA 14.2.5.14).
//
//iba:attr id=0x30 methods=SubnGet
//iba:alias SMPVendorDiag
type VendorDiag struct {
	NextIndex uint16   `iba:"off=0,bits=16"`
	_         uint16   `iba:"off=16,bits=16"`
	DiagData  [60]byte `iba:"off=32"`
}

// LedInfo is the Turn on/off LED (IBA 14.2.5.15).
//
//iba:attr id=0x31 methods=SubnGet,SubnSet
//iba:alias SMPLedInfo
type LedInfo struct {
	LedMask uint8  `iba:"off=0,bits=1"`
	_       uint32 `iba:"off=1,bits=31"`
}

// Notice is the Notice attribute: a trap or notice with its generic or
// vendor header, 54 bytes of trap-specific DataDetails (decoded by the
// NoticeTrapN structures) and the issuer's GID (IBA 13.4.8.2). An SMP carries
// its first 64 bytes (IBA 14.2.5.1); SA Reports and InformInfo carry it whole.
//
//iba:attr id=0x02 methods=SubnTrap,SubnTrapRepress,SubnAdmReport
//iba:alias SMPNoticeTrap MADNotice
type Notice struct {
	IsGeneric          uint8    `iba:"off=0,bits=1"`
	Type               uint8    `iba:"off=1,bits=7,name=noticeType"`
	ProducerTypeVendor uint32   `iba:"off=8,bits=24,name=nodeType"`
	TrapNumber         uint16   `iba:"off=32,bits=16"`
	IssuerLID          uint16   `iba:"off=48,bits=16"`
	NoticeToggle       uint8    `iba:"off=64,bits=1"`
	NoticeCount        uint16   `iba:"off=65,bits=15"`
	DataDetails        [54]byte `iba:"off=80"`
	IssuerGID          GID      `iba:"off=512"`
}

// PortInfoExtended is the PortInfoExtended attribute: the FEC modes of the
// port per speed generation (IBA 1.3.1 14.2.5.21; HDR and NDR FEC fields as
// infiniband-diags reads them).
//
//iba:attr id=0x33 methods=SubnGet,SubnSet
//iba:alias SMPPortInfoExtended
type PortInfoExtended struct {
	CapabilityMask      uint32   `iba:"off=0,bits=32,hex,label=CapMask"`
	FECModeActive       uint16   `iba:"off=32,bits=16,label=FECModeActive"`
	FDRFECModeSupported uint16   `iba:"off=48,bits=16,hex,label=FDRFECModeSupported"`
	FDRFECModeEnabled   uint16   `iba:"off=64,bits=16,hex,label=FDRFECModeEnabled"`
	EDRFECModeSupported uint16   `iba:"off=80,bits=16,hex,label=EDRFECModeSupported"`
	EDRFECModeEnabled   uint16   `iba:"off=96,bits=16,hex,label=EDRFECModeEnabled"`
	HDRFECModeSupported uint16   `iba:"off=112,bits=16,hex,label=HDRFECModeSupported"`
	HDRFECModeEnabled   uint16   `iba:"off=128,bits=16,hex,label=HDRFECModeEnabled"`
	NDRFECModeSupported uint16   `iba:"off=144,bits=16,hex,label=NDRFECModeSupported"`
	NDRFECModeEnabled   uint16   `iba:"off=160,bits=16,hex,label=NDRFECModeEnabled"`
	_                   [42]byte `iba:"off=176"`
}

// MlnxExtPortInfo is Mellanox's vendor-specific SMP attribute 0xFF90 that
// reports FDR10 support: bit 0 of its LinkSpeed fields is FDR10. iblinkinfo
// and ibnetdiscover read it to tell FDR10 links from QDR ones (layout as
// infiniband-diags reads it).
//
//iba:attr id=0xFF90 methods=SubnGet,SubnSet
//iba:alias SMPMlnxExtPortInfo MlnxExtendedPortInfo
type MlnxExtPortInfo struct {
	_                  uint32   `iba:"off=0,bits=24"`
	StateChangeEnable  uint8    `iba:"off=24,bits=8,hex,label=StateChangeEnable"`
	_                  uint32   `iba:"off=32,bits=24"`
	LinkSpeedSupported uint8    `iba:"off=56,bits=8,hex,label=LinkSpeedSupported"`
	_                  uint32   `iba:"off=64,bits=24"`
	LinkSpeedEnabled   uint8    `iba:"off=88,bits=8,hex,label=LinkSpeedEnabled"`
	_                  uint32   `iba:"off=96,bits=24"`
	LinkSpeedActive    uint8    `iba:"off=120,bits=8,hex,label=LinkSpeedActive"`
	_                  [48]byte `iba:"off=128"`
}
