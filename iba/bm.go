package iba

// Baseboard management (IBA 16.2): the BM class 0x05, through which a
// baseboard management agent relays commands to the chassis's IBML
// (IB management link) devices, described in IBA volume 2. The layouts of the
// command parameters are per command and differ between request and
// response, so they stay an opaque BMParameters blob here. Facts: the
// attribute IDs are libibmad's mad.h; the BKeyInfo and BMMessage layouts
// are those of the IBA tables as the BSD-licensed ib_bm.h of Intel's OPA
// fabric tools declares them.

// BMFormat is the Baseboard Management MAD format (IBA 16.2): the common
// MAD header, the B_Key that every BM request carries, 32 reserved bytes
// and 192 bytes of BM data.
//
//iba:format class=0x05 version=1
type BMFormat struct {
	MADHeader `iba:"off=0"`
	BKey      uint64    `iba:"off=192,bits=64,hex"`
	_         [32]byte  `iba:"off=256"`
	Data      [192]byte `iba:"off=512,data"`
}

// BKeyInfo is the B_Key Info attribute (IBA 16.2): the B_Key, its
// protection and lease, and the count of requests that failed the check
// (0xffff when the agent does not count).
//
//iba:attr id=0x10 methods=BMGet,BMSet
type BKeyInfo struct {
	BKey            uint64 `iba:"off=0,bits=64,hex"`
	BKeyProtectBit  uint8  `iba:"off=64,bits=1"`
	_               uint16 `iba:"off=65,bits=15"`
	BKeyLeasePeriod uint16 `iba:"off=80,bits=16"`
	BKeyViolations  uint16 `iba:"off=96,bits=16"`
}

// BMMessage is the BM data of every BM command (IBA 16.2): a sequence
// number that the requester increments, the IBML device that sent the
// message, and ParamCount bytes of command parameters (IBA volume 2,
// 13.6.1.1). The attribute modifier says whether the message is a request
// (0) or a response (1). The commands embed it; their parameters stay
// opaque, being specific to each command and direction.
type BMMessage struct {
	Sequence     uint16    `iba:"off=0,bits=16"`
	SourceDevice uint8     `iba:"off=16,bits=8,hex"`
	ParamCount   uint8     `iba:"off=24,bits=8"`
	BMParameters [40]byte  `iba:"off=32"`
	_            [148]byte `iba:"off=352"`
}

// WriteVPD is the Write VPD command (IBA 16.2): writes bytes of an IBML
// device's vital product data. Parameters are opaque (see BMMessage).
//
//iba:attr id=0x20 methods=BMSend
type WriteVPD struct {
	BMMessage `iba:"off=0"`
}

// ReadVPD is the Read VPD command (IBA 16.2): reads bytes of an IBML
// device's vital product data. Parameters are opaque (see BMMessage).
//
//iba:attr id=0x21 methods=BMSend
type ReadVPD struct {
	BMMessage `iba:"off=0"`
}

// ResetIBML is the Reset IBML command (IBA 16.2): resets a device on the
// module's IB management link. Parameters are opaque (see BMMessage).
//
//iba:attr id=0x22 methods=BMSend
type ResetIBML struct {
	BMMessage `iba:"off=0"`
}

// SetModulePMControl is the Set Module Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x23 methods=BMSend
type SetModulePMControl struct {
	BMMessage `iba:"off=0"`
}

// GetModulePMControl is the Get Module Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x24 methods=BMSend
type GetModulePMControl struct {
	BMMessage `iba:"off=0"`
}

// SetUnitPMControl is the Set Unit Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x25 methods=BMSend
type SetUnitPMControl struct {
	BMMessage `iba:"off=0"`
}

// GetUnitPMControl is the Get Unit Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x26 methods=BMSend
type GetUnitPMControl struct {
	BMMessage `iba:"off=0"`
}

// SetIOCPMControl is the Set IOC Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x27 methods=BMSend
type SetIOCPMControl struct {
	BMMessage `iba:"off=0"`
}

// GetIOCPMControl is the Get IOC Power Management Control command
// (IBA 16.2). Parameters are opaque (see BMMessage).
//
//iba:attr id=0x28 methods=BMSend
type GetIOCPMControl struct {
	BMMessage `iba:"off=0"`
}

// SetModuleState is the Set Module State command (IBA 16.2).
// Parameters are opaque (see BMMessage).
//
//iba:attr id=0x29 methods=BMSend
type SetModuleState struct {
	BMMessage `iba:"off=0"`
}

// SetModuleAttention is the Set Module Attention command (IBA 16.2).
// Parameters are opaque (see BMMessage).
//
//iba:attr id=0x2A methods=BMSend
type SetModuleAttention struct {
	BMMessage `iba:"off=0"`
}

// GetModuleStatus is the Get Module Status command (IBA 16.2).
// Parameters are opaque (see BMMessage).
//
//iba:attr id=0x2B methods=BMSend
type GetModuleStatus struct {
	BMMessage `iba:"off=0"`
}

// IB2IBML is the IB-to-IBML command (IBA 16.2): passes a raw IBML
// message to a device on the module's management bus. Parameters are
// opaque (see BMMessage).
//
//iba:attr id=0x2C methods=BMSend
type IB2IBML struct {
	BMMessage `iba:"off=0"`
}

// IB2CME is the IB-to-CME command (IBA 16.2): passes a message to the
// chassis management entity. Parameters are opaque (see BMMessage).
//
//iba:attr id=0x2D methods=BMSend
type IB2CME struct {
	BMMessage `iba:"off=0"`
}

// IB2MME is the IB-to-MME command (IBA 16.2): passes a message to the
// module management entity. Parameters are opaque (see BMMessage).
//
//iba:attr id=0x2E methods=BMSend
type IB2MME struct {
	BMMessage `iba:"off=0"`
}

// IB2OEM is the IB-to-OEM command (IBA 16.2): a vendor-defined command,
// the first three parameter bytes being the vendor's OUI. Parameters are
// opaque (see BMMessage).
//
//iba:attr id=0x2F methods=BMSend
type IB2OEM struct {
	BMMessage `iba:"off=0"`
}
