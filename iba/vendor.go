package iba

// Vendor-specific management (IBA 16.5) and the vendor classes that
// infiniband-diags uses: OpenIB's ping (ibping) and sysstat (ibsysstat)
// classes with the OpenIB OUI, and Mellanox's class 0x0A (vendstat).
// Layouts are those of infiniband-diags' ibping.c, ibsysstat.c and
// vendstat.c and of python-rdma's vendor descriptions.

// OUIOpenIB is the OUI of the OpenIB vendor classes (OpenIBPingFormat,
// OpenIBSysStatFormat), libibmad's IB_OPENIB_OUI.
const OUIOpenIB uint32 = 0x001405

// VendFormat is the Vendor Specific MAD format of the vendor classes
// 0x09 to 0x0F (IBA 16.5.1): the common MAD header and 232 bytes of
// vendor data.
//
//iba:format class=0x09 version=1
type VendFormat struct {
	MADHeader `iba:"off=0"`
	Data      [232]byte `iba:"off=192,data"`
}

// VendOUIFormat is the Vendor Specific MAD format with OUI of the vendor
// classes 0x30 to 0x4F (IBA 16.5.1): an RMPP header, the OUI that
// qualifies the class, and 216 bytes of vendor data.
//
//iba:format class=0x30 version=1
type VendOUIFormat struct {
	RMPPHeader `iba:"off=0"`
	_          uint8     `iba:"off=288,bits=8"`
	OUI        uint32    `iba:"off=296,bits=24,hex"`
	Data       [216]byte `iba:"off=320,data"`
}

// MlxFormat is the Mellanox vendor class 0x0A, laid out as VendFormat
// (IBA 16.5.1): vendstat's general info, config space access and counter
// groups.
//
//iba:format class=0x0a version=1
type MlxFormat struct {
	MADHeader `iba:"off=0"`
	Data      [232]byte `iba:"off=192,data"`
}

// OpenIBPingFormat is the OpenIB ping class 0x32 (ibping), laid out as
// VendOUIFormat (IBA 16.5.1) with OUI OUIOpenIB.
//
//iba:format class=0x32 version=1
type OpenIBPingFormat struct {
	RMPPHeader `iba:"off=0"`
	_          uint8     `iba:"off=288,bits=8"`
	OUI        uint32    `iba:"off=296,bits=24,hex"`
	Data       [216]byte `iba:"off=320,data"`
}

// OpenIBSysStatFormat is the OpenIB sysstat class 0x33 (ibsysstat), laid
// out as VendOUIFormat (IBA 16.5.1) with OUI OUIOpenIB.
//
//iba:format class=0x33 version=1
type OpenIBSysStatFormat struct {
	RMPPHeader `iba:"off=0"`
	_          uint8     `iba:"off=288,bits=8"`
	OUI        uint32    `iba:"off=296,bits=24,hex"`
	Data       [216]byte `iba:"off=320,data"`
}

// OpenIBPing is the ibping reply (attribute 0 of the OpenIB ping class,
// IBA 16.5.1 format): the responder's "host.domain" name, NUL terminated.
// The request carries no data.
//
//iba:attr id=0x00 methods=VendGet format=OpenIBPingFormat
type OpenIBPing struct {
	HostName [216]byte `iba:"off=0,str"`
}

// OpenIBSysStatPing is the sysstat ping (IBA 16.5.1 format): the responder
// returns the request's data unchanged, so a requester can match replies
// by Cookie.
//
//iba:attr id=0x10 methods=VendGet format=OpenIBSysStatFormat
//iba:alias OFASysStatPing
type OpenIBSysStatPing struct {
	Cookie uint64 `iba:"off=0,bits=64,hex"`
}

// OpenIBSysStatHostInfo is the sysstat host information (IBA 16.5.1
// format): the responder's "host.domain" name, NUL terminated.
//
//iba:attr id=0x11 methods=VendGet format=OpenIBSysStatFormat
//iba:alias OFASysStatHostInfo
type OpenIBSysStatHostInfo struct {
	HostName [216]byte `iba:"off=0,str"`
}

// OpenIBSysStatCPUInfo is the sysstat CPU information (IBA 16.5.1 format):
// one "cpu N: model M MHZ F" line per processor, NUL terminated.
// (python-rdma declared it as attribute 0x112; ibsysstat uses 0x12.)
//
//iba:attr id=0x12 methods=VendGet format=OpenIBSysStatFormat
//iba:alias OFASysStatCPUInfo
type OpenIBSysStatCPUInfo struct {
	CPUInfo [216]byte `iba:"off=0,str"`
}

// MlxGeneralInfo is the Mellanox General Info attribute of InfiniScale
// III class devices (IBA 16.5.1 format), vendstat -N: hardware, firmware
// and software versions. Devices that vendstat lists as having extended
// firmware information answer with the MlxGeneralInfoExt layout instead.
// The firmware date and hour are BCD.
//
//iba:attr id=0x17 methods=VendGet format=MlxFormat
type MlxGeneralInfo struct {
	_                uint64   `iba:"off=0,bits=64"`
	HWRevision       uint16   `iba:"off=64,bits=16,hex,label=hw_dev_rev"`
	DeviceID         uint16   `iba:"off=80,bits=16,hex,label=hw_dev_id"`
	_                [24]byte `iba:"off=96"`
	Uptime           uint32   `iba:"off=288,bits=32,hex,label=hw_uptime"`
	_                uint8    `iba:"off=320,bits=8"`
	FWMajor          uint8    `iba:"off=328,bits=8"`
	FWMinor          uint8    `iba:"off=336,bits=8"`
	FWSubMinor       uint8    `iba:"off=344,bits=8"`
	FWBuildID        uint32   `iba:"off=352,bits=32,hex,label=fw_build_id"`
	FWMonth          uint8    `iba:"off=384,bits=8,hex"`
	FWDay            uint8    `iba:"off=392,bits=8,hex"`
	FWYear           uint16   `iba:"off=400,bits=16,hex"`
	_                uint16   `iba:"off=416,bits=16"`
	FWHour           uint16   `iba:"off=432,bits=16,hex"`
	FWPSID           [16]byte `iba:"off=448,str,label=fw_psid"`
	FWINIFileVersion uint32   `iba:"off=576,bits=32,label=fw_ini_ver"`
	_                uint8    `iba:"off=608,bits=8"`
	SWMajor          uint8    `iba:"off=616,bits=8"`
	SWMinor          uint8    `iba:"off=624,bits=8"`
	SWSubMinor       uint8    `iba:"off=632,bits=8"`
	_                [28]byte `iba:"off=640"`
}

// MlxGeneralInfoExt is MlxGeneralInfo as SwitchX, Switch-IB, Quantum and
// ConnectX class devices answer it (IBA 16.5.1 format): the firmware
// version in 32-bit extended fields, which vendstat prints instead of
// FWMajor.FWMinor.FWSubMinor. It is a layout of attribute 0x17: query
// MlxGeneralInfo and decode the reply with this type.
//
//iba:attr id=0x17 variant=MlxGeneralInfo
type MlxGeneralInfoExt struct {
	_                uint64   `iba:"off=0,bits=64"`
	HWRevision       uint16   `iba:"off=64,bits=16,hex,label=hw_dev_rev"`
	DeviceID         uint16   `iba:"off=80,bits=16,hex,label=hw_dev_id"`
	_                [24]byte `iba:"off=96"`
	Uptime           uint32   `iba:"off=288,bits=32,hex,label=hw_uptime"`
	_                uint8    `iba:"off=320,bits=8"`
	FWMajor          uint8    `iba:"off=328,bits=8"`
	FWMinor          uint8    `iba:"off=336,bits=8"`
	FWSubMinor       uint8    `iba:"off=344,bits=8"`
	FWBuildID        uint32   `iba:"off=352,bits=32,hex,label=fw_build_id"`
	FWMonth          uint8    `iba:"off=384,bits=8,hex"`
	FWDay            uint8    `iba:"off=392,bits=8,hex"`
	FWYear           uint16   `iba:"off=400,bits=16,hex"`
	_                uint16   `iba:"off=416,bits=16"`
	FWHour           uint16   `iba:"off=432,bits=16,hex"`
	FWPSID           [16]byte `iba:"off=448,str,label=fw_psid"`
	FWINIFileVersion uint32   `iba:"off=576,bits=32,label=fw_ini_ver"`
	FWExtMajor       uint32   `iba:"off=608,bits=32"`
	FWExtMinor       uint32   `iba:"off=640,bits=32"`
	FWExtSubMinor    uint32   `iba:"off=672,bits=32"`
	_                [16]byte `iba:"off=704"`
	_                uint8    `iba:"off=832,bits=8"`
	SWMajor          uint8    `iba:"off=840,bits=8"`
	SWMinor          uint8    `iba:"off=848,bits=8"`
	SWSubMinor       uint8    `iba:"off=856,bits=8"`
	_                [28]byte `iba:"off=864"`
}

// MlxConfigSpaceAccess reads or writes up to 18 registers of a Mellanox
// device's configuration space (IBA 16.5.1 format), vendstat -R, -W and
// -w. The attribute modifier is 2<<22 | records<<16; a Set writes Data
// under Mask, a Get returns Data for each Address.
//
//iba:attr id=0x50 methods=VendGet,VendSet format=MlxFormat
type MlxConfigSpaceAccess struct {
	_       uint64                   `iba:"off=0,bits=64"`
	Records [18]MlxConfigSpaceRecord `iba:"off=64"`
}

// MlxConfigSpaceRecord is one register of MlxConfigSpaceAccess.
type MlxConfigSpaceRecord struct {
	Address uint32 `iba:"off=0,bits=32,hex"`
	Data    uint32 `iba:"off=32,bits=32,hex"`
	Mask    uint32 `iba:"off=64,bits=32,hex"`
}

// MlxCounterGroupInfo lists the counter groups of an InfiniScale IV port
// (IBA 16.5.1 format), vendstat -i; the attribute modifier is the port.
//
//iba:attr id=0x90 methods=VendGet format=MlxFormat
type MlxCounterGroupInfo struct {
	_                  uint64    `iba:"off=0,bits=64"`
	_                  uint32    `iba:"off=64,bits=24"`
	NumOfCounterGroups uint8     `iba:"off=88,bits=8"`
	GroupMasks         [2]uint32 `iba:"off=96,bits=32,hex"`
}

// MlxConfigCounterGroup selects what the counter groups of an InfiniScale
// IV port count (IBA 16.5.1 format), vendstat -c; the attribute modifier
// is the port.
//
//iba:attr id=0x91 methods=VendGet,VendSet format=MlxFormat
type MlxConfigCounterGroup struct {
	_            uint64                   `iba:"off=0,bits=64"`
	_            uint32                   `iba:"off=64,bits=32"`
	GroupSelects [2]MlxCounterGroupSelect `iba:"off=96"`
}

// MlxCounterGroupSelect is one group selection of MlxConfigCounterGroup.
type MlxCounterGroupSelect struct {
	_           uint32 `iba:"off=0,bits=24"`
	GroupSelect uint8  `iba:"off=24,bits=8"`
}
