package iba

// VendFormat is the Vendor Specific Management MAD Format (IBA 16.5.1).
//
//iba:format class=0x9 version=1
type VendFormat struct {
	MADHeader `iba:"off=0"`
	Data      [232]byte `iba:"off=192,data"`
}

// VendOUIFormat is the Vendor Specific Management MAD Format with OUI (IBA 16.5.1).
//
//iba:format class=0x30 version=1
type VendOUIFormat struct {
	RMPPHeader `iba:"off=0"`
	_          uint8     `iba:"off=288,bits=8"`
	OUI        uint32    `iba:"off=296,bits=24"`
	Data       [216]byte `iba:"off=320,data"`
}
