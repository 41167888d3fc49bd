package iba

// Device management (IBA 16.3): the DevMgt class 0x06 through which an I/O
// unit describes its I/O controllers and the services they offer (the SRP
// targets srp_daemon finds), and runs diagnostics.

// DMFormat is the Device Management MAD format (IBA 16.3.1): the common
// MAD header, 40 reserved bytes and 192 bytes of attribute data.
//
//iba:format class=0x06 version=1
type DMFormat struct {
	MADHeader `iba:"off=0"`
	_         [40]byte  `iba:"off=192"`
	Data      [192]byte `iba:"off=512,data"`
}

// IOUnitInfo is the list of the I/O controllers of an I/O unit
// (IBA 16.3.3.3). ControllerList has one 4-bit entry per controller slot,
// slot 1 first: 0 no controller, 1 controller present, 0xF no such slot.
// ChangeID changes whenever the list does.
//
//iba:attr id=0x10 methods=DevMgtGet
//iba:alias DMIOUnitInfo
type IOUnitInfo struct {
	ChangeID       uint16     `iba:"off=0,bits=16"`
	MaxControllers uint8      `iba:"off=16,bits=8"`
	_              uint8      `iba:"off=24,bits=6"`
	DiagDeviceID   uint8      `iba:"off=30,bits=1"`
	OptionROM      uint8      `iba:"off=31,bits=1"`
	ControllerList [256]uint8 `iba:"off=32,bits=4,hex"`
}

// IOControllerProfile is the profile of one I/O controller
// (IBA 16.3.3.4), the attribute modifier being its slot: identity, the
// I/O class and protocol it speaks (an SRP target has IOClass 0x0100),
// its queue limits and the number of ServiceEntries.
//
//iba:attr id=0x11 methods=DevMgtGet
//iba:alias DMIOControllerProfile
type IOControllerProfile struct {
	GUID                     GUID     `iba:"off=0,bits=64"`
	VendorID                 uint32   `iba:"off=64,bits=24,hex"`
	_                        uint8    `iba:"off=88,bits=8"`
	DeviceID                 uint32   `iba:"off=96,bits=32,hex"`
	DeviceVersion            uint16   `iba:"off=128,bits=16,hex"`
	_                        uint16   `iba:"off=144,bits=16"`
	SubsystemVendorID        uint32   `iba:"off=160,bits=24,hex"`
	_                        uint8    `iba:"off=184,bits=8"`
	SubsystemID              uint32   `iba:"off=192,bits=32,hex"`
	IOClass                  uint16   `iba:"off=224,bits=16,hex"`
	IOSubclass               uint16   `iba:"off=240,bits=16,hex"`
	Protocol                 uint16   `iba:"off=256,bits=16,hex"`
	ProtocolVersion          uint16   `iba:"off=272,bits=16,hex"`
	_                        uint32   `iba:"off=288,bits=32"`
	SendMessageDepth         uint16   `iba:"off=320,bits=16"`
	_                        uint8    `iba:"off=336,bits=8"`
	RDMAReadDepth            uint8    `iba:"off=344,bits=8"`
	SendMessageSize          uint32   `iba:"off=352,bits=32"`
	RDMATransferSize         uint32   `iba:"off=384,bits=32"`
	ControllerOperationsMask uint8    `iba:"off=416,bits=8,hex"`
	_                        uint8    `iba:"off=424,bits=8"`
	ServiceEntries           uint8    `iba:"off=432,bits=8"`
	_                        [9]byte  `iba:"off=440"`
	IDString                 [64]byte `iba:"off=512,str"`
}

// ServiceEntry is one service of an I/O controller (IBA 16.3.3.5): its
// name and service ID.
//
//iba:alias DMServiceEntry
type ServiceEntry struct {
	ServiceName [40]byte `iba:"off=0,str"`
	ServiceID   uint64   `iba:"off=320,bits=64,hex"`
}

// ServiceEntries is up to four services of an I/O controller
// (IBA 16.3.3.5). The attribute modifier selects the controller (bits 31
// to 16) and the first and last entry (bits 7 to 0 and 15 to 8).
//
//iba:attr id=0x12 methods=DevMgtGet
//iba:alias DMServiceEntries
type ServiceEntries struct {
	ServiceEntry [4]ServiceEntry `iba:"off=0"`
}

// DiagnosticTimeout is the longest time a diagnostic test of the device
// takes, in milliseconds (IBA 16.3.3.6).
//
//iba:attr id=0x20 methods=DevMgtGet
//iba:alias DMDiagnosticTimeout
type DiagnosticTimeout struct {
	MaxDiagTime uint32 `iba:"off=0,bits=32"`
}

// PrepareToTest prepares the device for a diagnostic test (IBA 16.3.3.7).
// The attribute has no data: all 192 bytes are reserved.
//
//iba:attr id=0x21 methods=DevMgtGet,DevMgtSet
//iba:alias DMPrepareToTest
type PrepareToTest struct {
	_ [192]byte `iba:"off=0"`
}

// TestDeviceOnce runs the device's diagnostic test once (IBA 16.3.3.8).
// The attribute has no data: all 192 bytes are reserved.
//
//iba:attr id=0x22 methods=DevMgtSet
//iba:alias DMTestDeviceOnce
type TestDeviceOnce struct {
	_ [192]byte `iba:"off=0"`
}

// TestDeviceLoop runs the device's diagnostic test continuously
// (IBA 16.3.3.9). The attribute has no data: all 192 bytes are reserved.
//
//iba:attr id=0x23 methods=DevMgtSet
//iba:alias DMTestDeviceLoop
type TestDeviceLoop struct {
	_ [192]byte `iba:"off=0"`
}

// DiagCode is the device's vendor-specific diagnostic status
// (IBA 16.3.3.10).
//
//iba:attr id=0x24 methods=DevMgtGet
//iba:alias DMDiagCode
type DiagCode struct {
	DiagCode uint16 `iba:"off=0,bits=16,hex"`
	_        uint16 `iba:"off=16,bits=16"`
}
