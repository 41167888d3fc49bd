package iba

// SNMP tunneling (IBA 16.4): the SNMP class 0x08 that carries SNMP PDUs,
// segmented, between an SNMP agent and managers on the fabric.

// SNMPFormat is the SNMP Tunneling MAD format (IBA 16.4.1): the common MAD
// header, 32 reserved bytes, the segmentation fields and 192 bytes of PDU
// data.
//
//iba:format class=0x08 version=1
type SNMPFormat struct {
	MADHeader     `iba:"off=0"`
	_             [32]byte  `iba:"off=192"`
	RAddress      uint32    `iba:"off=448,bits=32,hex"`
	PayloadLength uint8     `iba:"off=480,bits=8"`
	SegmentNumber uint8     `iba:"off=488,bits=8"`
	SourceLID     uint16    `iba:"off=496,bits=16"`
	Data          [192]byte `iba:"off=512,data"`
}

// CommunityInfo is the Community Name Data Store (IBA 16.4.3.2): the SNMP
// community name, NUL padded.
//
//iba:attr id=0x10 methods=SNMPSend
//iba:alias SNMPCommunityInfo
type CommunityInfo struct {
	CommunityName [64]byte `iba:"off=0,str"`
}

// PDUInfo is one segment of an SNMP PDU (IBA 16.4.3.3).
//
//iba:attr id=0x11 methods=SNMPSend
//iba:alias SNMPPDUInfo
type PDUInfo struct {
	PDUData [192]byte `iba:"off=0"`
}
