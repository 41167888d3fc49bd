package mad

import (
	"encoding/binary"

	"github.com/rdmakit/rdmakit/iba"
)

// Offsets in the common MAD header (IBA 13.4.3) and the RMPP header
// (13.6.2.1), in bytes.
const (
	offBaseVersion  = 0
	offClass        = 1
	offClassVersion = 2
	offMethod       = 3
	offStatus       = 4
	offHopPointer   = 6
	offHopCount     = 7
	offTID          = 8
	offAttrID       = 16
	offAttrMod      = 20
	offRMPPVersion  = 24
	offRMPPType     = 25
	offRMPPFlags    = 26
	offRMPPStatus   = 27
	offRMPPData1    = 28
	offRMPPData2    = 32

	// HeaderSize is the common MAD header; RMPPHeaderSize adds the RMPP
	// header of the classes that use RMPP.
	HeaderSize     = 24
	RMPPHeaderSize = 36
	// RMPPSegmentPayload is what one RMPP segment carries after the RMPP
	// header, the class header after it included (IBA 13.6.2.3).
	RMPPSegmentPayload = Size - RMPPHeaderSize

	// Offsets of the SA header (IBA 15.2.1.1) and of the directed route
	// SMP fields (14.2.1.2).
	offSMKey        = 36
	offCCKey        = 24
	offAttrOffset   = 44
	offCompMask     = 48
	offMKey         = 24
	offDrSLID       = 32
	offDrDLID       = 34
	offInitialPath  = 128
	offReturnPath   = 192
	offVendorOUI    = 37
	saDataOffset    = 56
	smpDataOffset   = 64
	vendorOUIOffset = 40
)

// classInfo is what the client needs to know of a management class to
// build its MADs.
type classInfo struct {
	version uint8
	// dataOff is where the attribute data starts: after the class header.
	dataOff int
	// rmpp is set for the classes that may use RMPP (IBA 13.6.1: SA and
	// the vendor classes with OUI).
	rmpp bool
}

// classOf gives the class's format from the iba registry, falling back to
// the IBA's layouts for classes iba has no format for yet (BM 16.2.1.1,
// CongestionCtl A10.4.1: both put their data at byte 64).
func classOf(c iba.Class) classInfo {
	ci := classInfo{version: 1, dataOff: HeaderSize}
	switch {
	case c == iba.ClassSubnMgt || c == iba.ClassSubnMgtDirected:
		return classInfo{version: 1, dataOff: smpDataOffset}
	case c == iba.ClassSubnAdm:
		ci = classInfo{version: 2, dataOff: saDataOffset}
	case c == iba.ClassPerfMgt || c == iba.ClassDevMgt:
		ci.dataOff = 64
	case c == iba.ClassBM:
		ci.dataOff = 64
	case c == iba.ClassCongestionCtl:
		ci = classInfo{version: 2, dataOff: 64}
	case c == iba.ClassComMgt:
		ci.version = 2
	case c.IsVendorOUI():
		ci.dataOff = vendorOUIOffset
	}
	if f, ok := iba.FormatOf(c); ok {
		if f.Format != nil && uint8(c) == f.Format.Class {
			ci.version = f.Format.Version
		}
		for _, fl := range f.Fields {
			if fl.Hint == iba.HintData {
				ci.dataOff = fl.Off / 8
			}
		}
	}
	ci.rmpp = c == iba.ClassSubnAdm || c.IsVendorOUI()
	return ci
}

// header reads the common header fields the client dispatches on.
type header struct {
	class   uint8
	version uint8
	method  uint8
	status  uint16
	tid     uint64
	attrID  uint16
	attrMod uint32
}

func readHeader(b []byte) (header, bool) {
	if len(b) < HeaderSize {
		return header{}, false
	}
	return header{
		class:   b[offClass],
		version: b[offClassVersion],
		method:  b[offMethod],
		status:  binary.BigEndian.Uint16(b[offStatus:]),
		tid:     binary.BigEndian.Uint64(b[offTID:]),
		attrID:  binary.BigEndian.Uint16(b[offAttrID:]),
		attrMod: binary.BigEndian.Uint32(b[offAttrMod:]),
	}, true
}

// status returns the Status field without the SMP direction bit.
func (h header) statusBits() uint16 {
	if h.class == uint8(iba.ClassSubnMgtDirected) {
		return h.status &^ 0x8000
	}
	return h.status
}

// rmppInfo is the RMPP header of a MAD of an RMPP class.
type rmppInfo struct {
	active bool
	typ    uint8
	flags  uint8
	status uint8
	data1  uint32
	data2  uint32
}

func readRMPP(b []byte) rmppInfo {
	if len(b) < RMPPHeaderSize || b[offRMPPVersion] == 0 {
		return rmppInfo{}
	}
	// A header flagged Active with no RMPP packet type (OpenSM's table
	// replies through ibsim, where no kernel segments them) is not an RMPP
	// packet: the MAD is a whole, unsegmented reply.
	typ := b[offRMPPType]
	return rmppInfo{
		active: b[offRMPPFlags]&RMPPFlagActive != 0 && typ >= RMPPTypeData && typ <= RMPPTypeAbort,
		typ:    typ,
		flags:  b[offRMPPFlags] & 7,
		status: b[offRMPPStatus],
		data1:  binary.BigEndian.Uint32(b[offRMPPData1:]),
		data2:  binary.BigEndian.Uint32(b[offRMPPData2:]),
	}
}

// setRMPP writes an RMPP header (IBA 13.6.2.1) with RRespTime 0x1f, "no
// time value".
func setRMPP(b []byte, typ, flags, status uint8, d1, d2 uint32) {
	b[offRMPPVersion] = 1
	b[offRMPPType] = typ
	b[offRMPPFlags] = 0x1f<<3 | flags&7
	b[offRMPPStatus] = status
	binary.BigEndian.PutUint32(b[offRMPPData1:], d1)
	binary.BigEndian.PutUint32(b[offRMPPData2:], d2)
}

// DataOffset is where a class's attribute data starts in its MADs: after
// the class header (64 for SMPs, 56 for SA, 24 for vendor classes without
// OUI, ...).
func DataOffset(c iba.Class) int { return classOf(c).dataOff }

// ClassVersion is the class version this package sends for a class.
func ClassVersion(c iba.Class) uint8 { return classOf(c).version }

// UsesRMPP reports whether a class may carry RMPP transfers (IBA 13.6.1).
func UsesRMPP(c iba.Class) bool { return classOf(c).rmpp }
