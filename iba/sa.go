package iba

// SAHeader is the SA Header (IBA 15.2.1.1).
type SAHeader struct {
	RMPPHeader      `iba:"off=0"`
	SMKey           uint64 `iba:"off=288,bits=64,hex"`
	AttributeOffset uint16 `iba:"off=352,bits=16"`
	_               uint16 `iba:"off=368,bits=16"`
	ComponentMask   uint64 `iba:"off=384,bits=64"`
}

// SAFormat is the SA Format (IBA 15.2.1.1).
//
//iba:format class=0x03 version=2
type SAFormat struct {
	SAHeader `iba:"off=0"`
	Data     [200]byte `iba:"off=448,data"`
}

// NodeRecord is the Container for NodeInfo (IBA 15.2.5.2).
//
//iba:attr id=0x11 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SANodeRecord
type NodeRecord struct {
	LID             uint16          `iba:"off=0,bits=16"`
	_               uint16          `iba:"off=16,bits=16"`
	NodeInfo        NodeInfo        `iba:"off=32"`
	NodeDescription NodeDescription `iba:"off=352"`
}

// PortInfoRecord is the Container for PortInfo (IBA 15.2.5.3).
//
//iba:attr id=0x12 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAPortInfoRecord
type PortInfoRecord struct {
	EndportLID uint16   `iba:"off=0,bits=16"`
	PortNum    uint8    `iba:"off=16,bits=8"`
	_          uint8    `iba:"off=24,bits=8"`
	PortInfo   PortInfo `iba:"off=32"`
}

// SLtoVLMappingTableRecord is the Container for SLtoVLMappingTable entry (IBA 15.2.5.4).
//
//iba:attr id=0x13 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SASLToVLMappingTableRecord
type SLtoVLMappingTableRecord struct {
	LID                uint16             `iba:"off=0,bits=16"`
	InputPortNum       uint8              `iba:"off=16,bits=8"`
	OutputPortNum      uint8              `iba:"off=24,bits=8"`
	_                  uint32             `iba:"off=32,bits=32"`
	SLToVLMappingTable SLtoVLMappingTable `iba:"off=64"`
}

// SwitchInfoRecord is the Container for SwitchInfo (IBA 15.2.5.5).
//
//iba:attr id=0x14 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SASwitchInfoRecord
type SwitchInfoRecord struct {
	LID        uint16     `iba:"off=0,bits=16"`
	_          uint16     `iba:"off=16,bits=16"`
	SwitchInfo SwitchInfo `iba:"off=32"`
}

// LinearForwardingTableRecord is the Container for LinearForwardingTable entry (IBA 15.2.5.6).
//
//iba:attr id=0x15 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SALinearForwardingTableRecord
type LinearForwardingTableRecord struct {
	LID                   uint16                `iba:"off=0,bits=16"`
	BlockNum              uint16                `iba:"off=16,bits=16"`
	_                     uint32                `iba:"off=32,bits=32"`
	LinearForwardingTable LinearForwardingTable `iba:"off=64"`
}

// RandomForwardingTableRecord is the Container for RandomForwardingTable entry (IBA 15.2.5.7).
//
//iba:attr id=0x16 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SARandomForwardingTableRecord
type RandomForwardingTableRecord struct {
	LID                   uint16                `iba:"off=0,bits=16"`
	BlockNum              uint16                `iba:"off=16,bits=16"`
	_                     uint32                `iba:"off=32,bits=32"`
	RandomForwardingTable RandomForwardingTable `iba:"off=64"`
}

// MulticastForwardingTableRecord is the Container for MulticastForwardingTable entry (IBA 15.2.5.8):
// Position in the top 4 bits of the second 16-bit word and a 9-bit BlockNum
// at its bottom, with component mask bits LID 0, Position 1, BlockNum 3 as
// OpenSM and libibmad number them.
//
//iba:attr id=0x17 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAMulticastForwardingTableRecord
type MulticastForwardingTableRecord struct {
	LID                      uint16                   `iba:"off=0,bits=16"`
	Position                 uint8                    `iba:"off=16,bits=4"`
	_                        uint8                    `iba:"off=20,bits=3"`
	BlockNum                 uint16                   `iba:"off=23,bits=9"`
	_                        uint32                   `iba:"off=32,bits=32"`
	MulticastForwardingTable MulticastForwardingTable `iba:"off=64"`
}

// VLArbitrationTableRecord is the Container for VLArbitrationTable entry (IBA 15.2.5.9).
//
//iba:attr id=0x36 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAVLArbitrationTableRecord
type VLArbitrationTableRecord struct {
	LID                uint16             `iba:"off=0,bits=16"`
	OutputPortNum      uint8              `iba:"off=16,bits=8"`
	BlockNum           uint8              `iba:"off=24,bits=8"`
	_                  uint32             `iba:"off=32,bits=32"`
	VLArbitrationTable VLArbitrationTable `iba:"off=64"`
}

// SMInfoRecord is the Container for SMInfo (IBA 15.2.5.10).
//
//iba:attr id=0x18 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SASMInfoRecord
type SMInfoRecord struct {
	LID    uint16 `iba:"off=0,bits=16"`
	_      uint16 `iba:"off=16,bits=16"`
	SMInfo SMInfo `iba:"off=32"`
}

// InformInfoRecord is the Container for InformInfo (IBA 15.2.5.12).
//
//iba:attr id=0xF3 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAInformInfoRecord
type InformInfoRecord struct {
	SubscriberGID GID        `iba:"off=0,bits=128"`
	Enumeration   uint16     `iba:"off=128,bits=16"`
	_             uint16     `iba:"off=144,bits=16"`
	_             uint32     `iba:"off=160,bits=32,nocm"`
	InformInfo    InformInfo `iba:"off=192"`
	_             [20]byte   `iba:"off=480"`
}

// LinkRecord is the Inter-node linkage information (IBA 15.2.5.13).
//
//iba:attr id=0x20 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SALinkRecord
type LinkRecord struct {
	FromLID  uint16 `iba:"off=0,bits=16"`
	FromPort uint8  `iba:"off=16,bits=8"`
	ToPort   uint8  `iba:"off=24,bits=8"`
	ToLID    uint16 `iba:"off=32,bits=16"`
	_        uint16 `iba:"off=48,bits=16"`
}

// GUIDInfoRecord is the Container for port GUIDInfo (IBA 15.2.5.18).
//
//iba:attr id=0x30 methods=SubnAdmGet,SubnAdmGetTable,SubnAdmSet,SubnAdmDelete
//iba:alias SAGUIDInfoRecord
type GUIDInfoRecord struct {
	LID      uint16   `iba:"off=0,bits=16"`
	BlockNum uint8    `iba:"off=16,bits=8"`
	_        uint8    `iba:"off=24,bits=8"`
	_        uint32   `iba:"off=32,bits=32"`
	GUIDInfo GUIDInfo `iba:"off=64"`
}

// ServiceRecord is the Information on advertised services (IBA 15.2.5.14).
//
//iba:attr id=0x31 methods=SubnAdmGet,SubnAdmSet,SubnAdmGetTable,SubnAdmDelete
//iba:alias SAServiceRecord
type ServiceRecord struct {
	ServiceID     uint64    `iba:"off=0,bits=64,hex"`
	ServiceGID    GID       `iba:"off=64,bits=128"`
	ServicePKey   uint16    `iba:"off=192,bits=16,hex"`
	_             uint16    `iba:"off=208,bits=16"`
	ServiceLease  uint32    `iba:"off=224,bits=32"`
	ServiceKey    GID       `iba:"off=256,bits=128"`
	ServiceName   [64]uint8 `iba:"off=384,bits=8,str"`
	ServiceData8  [16]uint8 `iba:"off=896,bits=8,cmeach"`
	ServiceData16 [8]uint16 `iba:"off=1024,bits=16,cmeach"`
	ServiceData32 [4]uint32 `iba:"off=1152,bits=32,cmeach"`
	ServiceData64 [2]uint64 `iba:"off=1280,bits=64,cmeach"`
}

// PKeyTableRecord is the Container for P_Key Table (IBA 15.2.5.11).
//
//iba:attr id=0x33 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAPKeyTableRecord
type PKeyTableRecord struct {
	LID       uint16    `iba:"off=0,bits=16"`
	BlockNum  uint16    `iba:"off=16,bits=16"`
	PortNum   uint8     `iba:"off=32,bits=8"`
	_         uint32    `iba:"off=40,bits=24"`
	PKeyTable PKeyTable `iba:"off=64"`
}

// PathRecord is the Information on paths through the subnet (IBA 15.2.5.16).
//
//iba:attr id=0x35 methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAPathRecord
type PathRecord struct {
	ServiceID                uint64 `iba:"off=0,bits=64,hex,cmbits=2"`
	DGID                     GID    `iba:"off=64,bits=128"`
	SGID                     GID    `iba:"off=192,bits=128"`
	DLID                     uint16 `iba:"off=320,bits=16"`
	SLID                     uint16 `iba:"off=336,bits=16"`
	RawTraffic               uint8  `iba:"off=352,bits=1"`
	_                        uint8  `iba:"off=353,bits=3"`
	FlowLabel                uint32 `iba:"off=356,bits=20"`
	HopLimit                 uint8  `iba:"off=376,bits=8"`
	TClass                   uint8  `iba:"off=384,bits=8,hex"`
	Reversible               uint8  `iba:"off=392,bits=1"`
	NumbPath                 uint8  `iba:"off=393,bits=7"`
	PKey                     uint16 `iba:"off=400,bits=16,hex"`
	QOSClass                 uint16 `iba:"off=416,bits=12,hex"`
	SL                       uint8  `iba:"off=428,bits=4"`
	MTUSelector              uint8  `iba:"off=432,bits=2"`
	MTU                      MTU    `iba:"off=434,bits=6"`
	RateSelector             uint8  `iba:"off=440,bits=2"`
	Rate                     Rate   `iba:"off=442,bits=6"`
	PacketLifeTimeSelector   uint8  `iba:"off=448,bits=2"`
	PacketLifeTime           uint8  `iba:"off=450,bits=6"`
	Preference               uint8  `iba:"off=456,bits=8"`
	ReversePathPKeyMemberBit uint8  `iba:"off=464,bits=2"`
	_                        uint16 `iba:"off=466,bits=14"`
	_                        uint32 `iba:"off=480,bits=32"`
}

// MCMemberRecord is the Multicast member attribute (IBA 15.2.5.17).
//
//iba:attr id=0x38 methods=SubnAdmGet,SubnAdmSet,SubnAdmGetTable,SubnAdmDelete
//iba:alias SAMCMemberRecord
type MCMemberRecord struct {
	MGID                   GID    `iba:"off=0,bits=128"`
	PortGID                GID    `iba:"off=128,bits=128"`
	QKey                   uint32 `iba:"off=256,bits=32,hex"`
	MLID                   uint16 `iba:"off=288,bits=16,hex"`
	MTUSelector            uint8  `iba:"off=304,bits=2"`
	MTU                    MTU    `iba:"off=306,bits=6"`
	TClass                 uint8  `iba:"off=312,bits=8,hex"`
	PKey                   uint16 `iba:"off=320,bits=16,hex"`
	RateSelector           uint8  `iba:"off=336,bits=2"`
	Rate                   Rate   `iba:"off=338,bits=6"`
	PacketLifeTimeSelector uint8  `iba:"off=344,bits=2"`
	PacketLifeTime         uint8  `iba:"off=346,bits=6"`
	SL                     uint8  `iba:"off=352,bits=4"`
	FlowLabel              uint32 `iba:"off=356,bits=20"`
	HopLimit               uint8  `iba:"off=376,bits=8"`
	Scope                  uint8  `iba:"off=384,bits=4"`
	JoinState              uint8  `iba:"off=388,bits=4"`
	ProxyJoin              uint8  `iba:"off=392,bits=1"`
	_                      uint32 `iba:"off=393,bits=23"`
}

// TraceRecord is the Path trace information (IBA 15.2.5.19).
//
//iba:attr id=0x39 methods=SubnAdmGetTraceTable
//iba:alias SATraceRecord
type TraceRecord struct {
	GIDPrefix    uint64 `iba:"off=0,bits=64,gidprefix"`
	IDGeneration uint16 `iba:"off=64,bits=16"`
	_            uint8  `iba:"off=80,bits=8"`
	NodeType     uint8  `iba:"off=88,bits=8"`
	NodeID       uint64 `iba:"off=96,bits=64"`
	ChassisID    uint64 `iba:"off=160,bits=64"`
	EntryPortID  uint64 `iba:"off=224,bits=64"`
	ExitPortID   uint64 `iba:"off=288,bits=64"`
	EntryPort    uint8  `iba:"off=352,bits=8"`
	ExitPort     uint8  `iba:"off=360,bits=8"`
	_            uint16 `iba:"off=368,bits=16"`
}

// MultiPathRecord is the Request for multiple paths (IBA 15.2.5.20).
//
//iba:attr id=0x3A methods=SubnAdmGetMulti
//iba:alias SAMultiPathRecord
type MultiPathRecord struct {
	RawTraffic             uint8  `iba:"off=0,bits=1"`
	_                      uint8  `iba:"off=1,bits=3"`
	FlowLabel              uint32 `iba:"off=4,bits=20"`
	HopLimit               uint8  `iba:"off=24,bits=8"`
	TClass                 uint8  `iba:"off=32,bits=8,hex"`
	Reversible             uint8  `iba:"off=40,bits=1"`
	NumbPath               uint8  `iba:"off=41,bits=7"`
	PKey                   uint16 `iba:"off=48,bits=16,hex"`
	_                      uint16 `iba:"off=64,bits=12"`
	SL                     uint8  `iba:"off=76,bits=4"`
	MTUSelector            uint8  `iba:"off=80,bits=2"`
	MTU                    MTU    `iba:"off=82,bits=6"`
	RateSelector           uint8  `iba:"off=88,bits=2"`
	Rate                   Rate   `iba:"off=90,bits=6"`
	PacketLifeTimeSelector uint8  `iba:"off=96,bits=2"`
	PacketLifeTime         uint8  `iba:"off=98,bits=6"`
	_                      uint8  `iba:"off=104,bits=8"`
	IndependenceSelector   uint8  `iba:"off=112,bits=2"`
	_                      uint8  `iba:"off=114,bits=6"`
	SGIDCount              uint8  `iba:"off=120,bits=8"`
	DGIDCount              uint8  `iba:"off=128,bits=8"`
	_                      uint32 `iba:"off=136,bits=24"`
	_                      uint32 `iba:"off=160,bits=32"`
	SDGID                  GID    `iba:"off=192,bits=128"`
}

// ServiceAssociationRecord is the ServiceRecord ServiceName/ServiceKey association (IBA 15.2.5.15).
//
//iba:attr id=0x3B methods=SubnAdmGet,SubnAdmGetTable
//iba:alias SAServiceAssociationRecord
type ServiceAssociationRecord struct {
	ServiceKey  GID       `iba:"off=0,bits=128"`
	ServiceName [64]uint8 `iba:"off=128,bits=8,str"`
}
