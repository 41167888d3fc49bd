package iba

// DMFormat is the Device Management MAD Format (IBA 16.3.1).
//
//iba:format class=0x06 version=1
type DMFormat struct {
	MADHeader `iba:"off=0"`
	_         [40]byte  `iba:"off=192"`
	Data      [192]byte `iba:"off=512,data"`
}

// ServiceEntry is the Service Entry (IBA 16.3.3).
//
//iba:alias DMServiceEntry
type ServiceEntry struct {
	ServiceName [40]uint8 `iba:"off=0,bits=8,str"`
	ServiceID   uint64    `iba:"off=320,bits=64,hex"`
}

// IOUnitInfo is the List of all I/O Controllers in a I/O Unit (IBA 16.3.3.3).
//
//iba:attr id=0x10 methods=DevMgtGet
//iba:alias DMIOUnitInfo
type IOUnitInfo struct {
	ChangeID       uint16    `iba:"off=0,bits=16"`
	MaxControllers uint8     `iba:"off=16,bits=8"`
	_              uint8     `iba:"off=24,bits=6"`
	DiagDeviceID   uint8     `iba:"off=30,bits=1"`
	OptionROM      uint8     `iba:"off=31,bits=1"`
	ControllerList [128]byte `iba:"off=32"`
}

// IOControllerProfile is the I/O Controller Profile Information (IBA 16.3.3.4).
//
//iba:attr id=0x11 methods=DevMgtGet
//iba:alias DMIOControllerProfile
type IOControllerProfile struct {
	GUID                     GUID      `iba:"off=0,bits=64"`
	VendorID                 uint32    `iba:"off=64,bits=24,hex"`
	_                        uint8     `iba:"off=88,bits=8"`
	DeviceID                 uint32    `iba:"off=96,bits=32,hex"`
	DeviceVersion            uint16    `iba:"off=128,bits=16"`
	_                        uint16    `iba:"off=144,bits=16"`
	SubsystemVendorID        uint32    `iba:"off=160,bits=24"`
	_                        uint8     `iba:"off=184,bits=8"`
	SubsystemID              uint32    `iba:"off=192,bits=32"`
	IOClass                  uint16    `iba:"off=224,bits=16"`
	IOSubclass               uint16    `iba:"off=240,bits=16"`
	Protocol                 uint16    `iba:"off=256,bits=16"`
	ProtocolVersion          uint16    `iba:"off=272,bits=16"`
	_                        uint16    `iba:"off=288,bits=16"`
	_                        uint16    `iba:"off=304,bits=16"`
	SendMessageDepth         uint16    `iba:"off=320,bits=16"`
	_                        uint8     `iba:"off=336,bits=8"`
	RDMAReadDepth            uint8     `iba:"off=344,bits=8"`
	SendMessageSize          uint32    `iba:"off=352,bits=32"`
	RDMATransferSize         uint32    `iba:"off=384,bits=32"`
	ControllerOperationsMask uint8     `iba:"off=416,bits=8"`
	_                        uint8     `iba:"off=424,bits=8"`
	ServiceEntries           uint8     `iba:"off=432,bits=8"`
	_                        uint8     `iba:"off=440,bits=8"`
	_                        uint64    `iba:"off=448,bits=64"`
	IDString                 [64]uint8 `iba:"off=512,bits=8,str"`
}

// ServiceEntries is the List of Supported Services and Their Associated Service IDs (IBA 16.3.3.5).
//
//iba:attr id=0x12 methods=DevMgtGet
//iba:alias DMServiceEntries
type ServiceEntries struct {
	ServiceEntry [4]ServiceEntry `iba:"off=0"`
}

// DiagnosticTimeout is the Get the Maximum Time for Completion of a Diagnostic Test (IBA 16.3.3.6).
//
//iba:attr id=0x20 methods=DevMgtGet
//iba:alias DMDiagnosticTimeout
type DiagnosticTimeout struct {
	MaxDiagTime uint32 `iba:"off=0,bits=32"`
}

// PrepareToTest is the Prepare Device for Test (IBA 16.3.3.7).
//
//iba:attr id=0x21 methods=DevMgtGet,DevMgtSet
//iba:alias DMPrepareToTest
type PrepareToTest struct {
}

// TestDeviceOnce is the Test Device Once (IBA 16.3.3.8).
//
//iba:attr id=0x22 methods=DevMgtSet
//iba:alias DMTestDeviceOnce
type TestDeviceOnce struct {
}

// TestDeviceLoop is the Test Device Continuously (IBA 16.3.3.9).
//
//iba:attr id=0x23 methods=DevMgtSet
//iba:alias DMTestDeviceLoop
type TestDeviceLoop struct {
}

// DiagCode is the Vendor-Specific Device Diagnostic Information (IBA 16.3.3.10).
//
//iba:attr id=0x24 methods=DevMgtGet
//iba:alias DMDiagCode
type DiagCode struct {
	DiagCode uint16 `iba:"off=0,bits=16,hex"`
	_        uint16 `iba:"off=16,bits=16"`
}
