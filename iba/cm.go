package iba

// Communication management (IBA chapter 12): the ComMgt class 0x07 whose
// messages set up, change and tear down connections and resolve service
// IDs. Offsets follow the message tables (IBA tables 106 to 120) as the Linux
// kernel declares them (include/rdma/ibta_vol1_c12.h); names are the IBA
// component names. The type names are python-rdma's, with the IBA
// attribute names as aliases.

// CMFormat is the Communication Management MAD format (IBA 12.6): the
// common MAD header and 232 bytes of message.
//
//iba:format class=0x07 version=2
type CMFormat struct {
	MADHeader `iba:"off=0"`
	Data      [232]byte `iba:"off=192,data"`
}

// CMREQ is the Request for Communication, REQ (IBA 12.6.5):
// the active side's QP, the service it asks for and the primary and
// alternate paths. Bytes 24 to 27 (the Local CM Q_Key of IBA 1.0) are
// reserved.
//
//iba:attr id=0x10 methods=CommMgtSend
//iba:alias ConnectRequest
type CMREQ struct {
	LocalCommunicationID     uint32   `iba:"off=0,bits=32,hex"`
	_                        uint32   `iba:"off=32,bits=32"`
	ServiceID                uint64   `iba:"off=64,bits=64,hex"`
	LocalCAGUID              GUID     `iba:"off=128,bits=64"`
	_                        uint32   `iba:"off=192,bits=32"`
	LocalQKey                uint32   `iba:"off=224,bits=32,hex"`
	LocalQPN                 uint32   `iba:"off=256,bits=24,hex"`
	ResponderResources       uint8    `iba:"off=280,bits=8"`
	LocalEECN                uint32   `iba:"off=288,bits=24,hex"`
	InitiatorDepth           uint8    `iba:"off=312,bits=8"`
	RemoteEECN               uint32   `iba:"off=320,bits=24,hex"`
	RemoteCMResponseTimeout  uint8    `iba:"off=344,bits=5"`
	TransportServiceType     uint8    `iba:"off=349,bits=2"`
	EndToEndFlowControl      uint8    `iba:"off=351,bits=1"`
	StartingPSN              uint32   `iba:"off=352,bits=24,hex"`
	LocalCMResponseTimeout   uint8    `iba:"off=376,bits=5"`
	RetryCount               uint8    `iba:"off=381,bits=3"`
	PartitionKey             uint16   `iba:"off=384,bits=16,hex"`
	PathPacketPayloadMTU     uint8    `iba:"off=400,bits=4"`
	RDCExists                uint8    `iba:"off=404,bits=1"`
	RNRRetryCount            uint8    `iba:"off=405,bits=3"`
	MaxCMRetries             uint8    `iba:"off=408,bits=4"`
	SRQ                      uint8    `iba:"off=412,bits=1"`
	ExtendedTransportType    uint8    `iba:"off=413,bits=3"`
	PrimaryLocalPortLID      uint16   `iba:"off=416,bits=16"`
	PrimaryRemotePortLID     uint16   `iba:"off=432,bits=16"`
	PrimaryLocalPortGID      GID      `iba:"off=448,bits=128"`
	PrimaryRemotePortGID     GID      `iba:"off=576,bits=128"`
	PrimaryFlowLabel         uint32   `iba:"off=704,bits=20,hex"`
	_                        uint8    `iba:"off=724,bits=6"`
	PrimaryPacketRate        uint8    `iba:"off=730,bits=6"`
	PrimaryTrafficClass      uint8    `iba:"off=736,bits=8,hex"`
	PrimaryHopLimit          uint8    `iba:"off=744,bits=8"`
	PrimarySL                uint8    `iba:"off=752,bits=4"`
	PrimarySubnetLocal       uint8    `iba:"off=756,bits=1"`
	_                        uint8    `iba:"off=757,bits=3"`
	PrimaryLocalACKTimeout   uint8    `iba:"off=760,bits=5"`
	_                        uint8    `iba:"off=765,bits=3"`
	AlternateLocalPortLID    uint16   `iba:"off=768,bits=16"`
	AlternateRemotePortLID   uint16   `iba:"off=784,bits=16"`
	AlternateLocalPortGID    GID      `iba:"off=800,bits=128"`
	AlternateRemotePortGID   GID      `iba:"off=928,bits=128"`
	AlternateFlowLabel       uint32   `iba:"off=1056,bits=20,hex"`
	_                        uint8    `iba:"off=1076,bits=6"`
	AlternatePacketRate      uint8    `iba:"off=1082,bits=6"`
	AlternateTrafficClass    uint8    `iba:"off=1088,bits=8,hex"`
	AlternateHopLimit        uint8    `iba:"off=1096,bits=8"`
	AlternateSL              uint8    `iba:"off=1104,bits=4"`
	AlternateSubnetLocal     uint8    `iba:"off=1108,bits=1"`
	_                        uint8    `iba:"off=1109,bits=3"`
	AlternateLocalACKTimeout uint8    `iba:"off=1112,bits=5"`
	SAPSupported             uint8    `iba:"off=1117,bits=1"`
	_                        uint8    `iba:"off=1118,bits=2"`
	PrivateData              [92]byte `iba:"off=1120"`
}

// CMMRA is the Message Receipt Acknowledgement, MRA (IBA 12.6.6): asks the
// peer to wait ServiceTimeout longer for the reply to the message that
// MessageMRAed names (0 REQ, 1 REP, 2 LAP).
//
//iba:attr id=0x11 methods=CommMgtSend
//iba:alias MsgRcptAck
type CMMRA struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	MessageMRAed          uint8     `iba:"off=64,bits=2"`
	_                     uint8     `iba:"off=66,bits=6"`
	ServiceTimeout        uint8     `iba:"off=72,bits=5"`
	_                     uint8     `iba:"off=77,bits=3"`
	PrivateData           [222]byte `iba:"off=80"`
}

// CMREJ is the Reject, REJ (IBA 12.6.7): MessageRejected names
// the message refused (0 REQ, 1 REP, 2 other), Reason says why and ARI
// carries RejectedInfoLength bytes of detail.
//
//iba:attr id=0x12 methods=CommMgtSend
//iba:alias ConnectReject
type CMREJ struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	MessageRejected       uint8     `iba:"off=64,bits=2"`
	_                     uint8     `iba:"off=66,bits=6"`
	RejectedInfoLength    uint8     `iba:"off=72,bits=7"`
	_                     uint8     `iba:"off=79,bits=1"`
	Reason                uint16    `iba:"off=80,bits=16"`
	ARI                   [72]byte  `iba:"off=96"`
	PrivateData           [148]byte `iba:"off=672"`
}

// CMREP is the Reply to Request for Communication, REP (IBA 12.6.8): the
// passive side's QP and the connection parameters it accepts.
//
//iba:attr id=0x13 methods=CommMgtSend
//iba:alias ConnectReply
type CMREP struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	LocalQKey             uint32    `iba:"off=64,bits=32,hex"`
	LocalQPN              uint32    `iba:"off=96,bits=24,hex"`
	_                     uint8     `iba:"off=120,bits=8"`
	LocalEEContextNumber  uint32    `iba:"off=128,bits=24,hex"`
	_                     uint8     `iba:"off=152,bits=8"`
	StartingPSN           uint32    `iba:"off=160,bits=24,hex"`
	_                     uint8     `iba:"off=184,bits=8"`
	ResponderResources    uint8     `iba:"off=192,bits=8"`
	InitiatorDepth        uint8     `iba:"off=200,bits=8"`
	TargetACKDelay        uint8     `iba:"off=208,bits=5"`
	FailoverAccepted      uint8     `iba:"off=213,bits=2"`
	EndToEndFlowControl   uint8     `iba:"off=215,bits=1"`
	RNRRetryCount         uint8     `iba:"off=216,bits=3"`
	SRQ                   uint8     `iba:"off=219,bits=1"`
	_                     uint8     `iba:"off=220,bits=4"`
	LocalCAGUID           GUID      `iba:"off=224,bits=64"`
	PrivateData           [196]byte `iba:"off=288"`
}

// CMRTU is the Ready to Use, RTU (IBA 12.6.9).
//
//iba:attr id=0x14 methods=CommMgtSend
//iba:alias ReadyToUse
type CMRTU struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	PrivateData           [224]byte `iba:"off=64"`
}

// CMDREQ is the Request for Communication Release, DREQ (IBA 12.6.10).
//
//iba:attr id=0x15 methods=CommMgtSend
//iba:alias DisconnectRequest
type CMDREQ struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	RemoteQPN             uint32    `iba:"off=64,bits=24,hex"`
	_                     uint8     `iba:"off=88,bits=8"`
	PrivateData           [220]byte `iba:"off=96"`
}

// CMDREP is the Reply to Request for Communication Release, DREP
// (IBA 12.6.11).
//
//iba:attr id=0x16 methods=CommMgtSend
//iba:alias DisconnectReply
type CMDREP struct {
	LocalCommunicationID  uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID uint32    `iba:"off=32,bits=32,hex"`
	PrivateData           [224]byte `iba:"off=64"`
}

// CMLAP is the Load Alternate Path, LAP (IBA 12.8.1): a new
// alternate path for an established connection. Bytes 8 to 11 (the Local
// CM Q_Key of IBA 1.0) are reserved.
//
//iba:attr id=0x19 methods=CommMgtSend
//iba:alias LoadAlternatePath
type CMLAP struct {
	LocalCommunicationID     uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID    uint32    `iba:"off=32,bits=32,hex"`
	_                        uint32    `iba:"off=64,bits=32"`
	RemoteQPN                uint32    `iba:"off=96,bits=24,hex"`
	RemoteCMResponseTimeout  uint8     `iba:"off=120,bits=5"`
	_                        uint8     `iba:"off=125,bits=3"`
	_                        uint32    `iba:"off=128,bits=32"`
	AlternateLocalPortLID    uint16    `iba:"off=160,bits=16"`
	AlternateRemotePortLID   uint16    `iba:"off=176,bits=16"`
	AlternateLocalPortGID    GID       `iba:"off=192,bits=128"`
	AlternateRemotePortGID   GID       `iba:"off=320,bits=128"`
	AlternateFlowLabel       uint32    `iba:"off=448,bits=20,hex"`
	_                        uint8     `iba:"off=468,bits=4"`
	AlternateTrafficClass    uint8     `iba:"off=472,bits=8,hex"`
	AlternateHopLimit        uint8     `iba:"off=480,bits=8"`
	_                        uint8     `iba:"off=488,bits=2"`
	AlternatePacketRate      uint8     `iba:"off=490,bits=6"`
	AlternateSL              uint8     `iba:"off=496,bits=4"`
	AlternateSubnetLocal     uint8     `iba:"off=500,bits=1"`
	_                        uint8     `iba:"off=501,bits=3"`
	AlternateLocalACKTimeout uint8     `iba:"off=504,bits=5"`
	_                        uint8     `iba:"off=509,bits=3"`
	PrivateData              [168]byte `iba:"off=512"`
}

// CMAPR is the Alternate Path Response, APR (IBA 12.8.2):
// APStatus says whether the LAP's path was loaded.
//
//iba:attr id=0x1A methods=CommMgtSend
//iba:alias AlternatePathResponse
type CMAPR struct {
	LocalCommunicationID        uint32    `iba:"off=0,bits=32,hex"`
	RemoteCommunicationID       uint32    `iba:"off=32,bits=32,hex"`
	AdditionalInformationLength uint8     `iba:"off=64,bits=8"`
	APStatus                    uint8     `iba:"off=72,bits=8"`
	_                           uint16    `iba:"off=80,bits=16"`
	AdditionalInformation       [72]byte  `iba:"off=96"`
	PrivateData                 [148]byte `iba:"off=672"`
}

// CMSIDRReq is the Service ID Resolution Request, SIDR_REQ (IBA 12.11.1):
// asks which UD QP serves ServiceID.
//
//iba:attr id=0x17 methods=CommMgtSend
//iba:alias CMSIDR_REQ ServiceIDResReq
type CMSIDRReq struct {
	RequestID    uint32    `iba:"off=0,bits=32,hex"`
	PartitionKey uint16    `iba:"off=32,bits=16,hex"`
	_            uint16    `iba:"off=48,bits=16"`
	ServiceID    uint64    `iba:"off=64,bits=64,hex"`
	PrivateData  [216]byte `iba:"off=128"`
}

// CMSIDRRep is the Service ID Resolution Response, SIDR_REP (IBA 12.11.2):
// the QP and Q_Key that serve the requested ServiceID, or a Status saying
// why not.
//
//iba:attr id=0x18 methods=CommMgtSend
//iba:alias CMSIDR_REP ServiceIDResReqResp
type CMSIDRRep struct {
	RequestID                   uint32    `iba:"off=0,bits=32,hex"`
	Status                      uint8     `iba:"off=32,bits=8"`
	AdditionalInformationLength uint8     `iba:"off=40,bits=8"`
	_                           uint16    `iba:"off=48,bits=16"`
	QPN                         uint32    `iba:"off=64,bits=24,hex"`
	_                           uint8     `iba:"off=88,bits=8"`
	ServiceID                   uint64    `iba:"off=96,bits=64,hex"`
	QKey                        uint32    `iba:"off=160,bits=32,hex"`
	AdditionalInformation       [72]byte  `iba:"off=192"`
	PrivateData                 [136]byte `iba:"off=768"`
}
