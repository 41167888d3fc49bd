package iba

import (
	"strconv"
	"strings"
)

// NodeType is NodeInfo:NodeType (IBA 14.2.5.3).
//
//iba:enum
type NodeType uint8

const (
	NodeTypeCA     NodeType = 1 // Channel Adapter
	NodeTypeSwitch NodeType = 2 // Switch
	NodeTypeRouter NodeType = 3 // Router
)

// PortState is PortInfo:PortState (IBA 14.2.5.6, table 155).
//
//iba:enum
type PortState uint8

const (
	PortStateNoChange PortState = 0 // NoChange
	PortStateDown     PortState = 1 // Down
	PortStateInit     PortState = 2 // Initialize
	PortStateArmed    PortState = 3 // Armed
	PortStateActive   PortState = 4 // Active
	PortStateActDefer PortState = 5 // ActDefer
)

// PhysPortState is PortInfo:PortPhysicalState (IBA 14.2.5.6).
//
//iba:enum
type PhysPortState uint8

const (
	PhysPortStateNoChange         PhysPortState = 0 // NoChange
	PhysPortStateSleep            PhysPortState = 1 // Sleep
	PhysPortStatePolling          PhysPortState = 2 // Polling
	PhysPortStateDisabled         PhysPortState = 3 // Disabled
	PhysPortStatePortConfTraining PhysPortState = 4 // PortConfigurationTraining
	PhysPortStateLinkUp           PhysPortState = 5 // LinkUp
	PhysPortStateLinkErrRecovery  PhysPortState = 6 // LinkErrorRecovery
	PhysPortStatePhyTest          PhysPortState = 7 // PhyTest
)

// MTU is an MTU code of PortInfo:NeighborMTU, MTUCap and PathRecord:MTU
// (IBA 14.2.5.6, 15.2.5.16).
//
//iba:enum
type MTU uint8

const (
	MTU256  MTU = 1 // 256
	MTU512  MTU = 2 // 512
	MTU1024 MTU = 3 // 1024
	MTU2048 MTU = 4 // 2048
	MTU4096 MTU = 5 // 4096
)

// Bytes gives the MTU in bytes, 0 for an invalid code.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

// SMState is SMInfo:SMState (IBA 14.2.5.13).
//
//iba:enum
type SMState uint8

const (
	SMStateNotActive   SMState = 0 // NOTACTIVE
	SMStateDiscovering SMState = 1 // DISCOVERING
	SMStateStandby     SMState = 2 // STANDBY
	SMStateMaster      SMState = 3 // MASTER
)

// Link width bits of PortInfo:LinkWidthSupported/Enabled/Active (IBA
// 14.2.5.6; 2x added in IBA 1.3 and 8x in 1.4).
const (
	LinkWidth1X  = 0x01
	LinkWidth4X  = 0x02
	LinkWidth8X  = 0x04
	LinkWidth12X = 0x08
	LinkWidth2X  = 0x10
)

// LinkWidthLanes gives the lane count of a LinkWidthActive value, 0 if it is
// not exactly one width.
func LinkWidthLanes(active uint8) int {
	switch active {
	case LinkWidth1X:
		return 1
	case LinkWidth2X:
		return 2
	case LinkWidth4X:
		return 4
	case LinkWidth8X:
		return 8
	case LinkWidth12X:
		return 12
	}
	return 0
}

// WidestLanes gives the lane count of the widest width in a
// LinkWidthSupported or LinkWidthEnabled mask, 0 when it has none.
func WidestLanes(mask uint8) int {
	n := 0
	for _, w := range []uint8{LinkWidth1X, LinkWidth2X, LinkWidth4X, LinkWidth8X, LinkWidth12X} {
		if mask&w != 0 {
			n = LinkWidthLanes(w)
		}
	}
	return n
}

// Link speed bits of PortInfo:LinkSpeedActive/Supported/Enabled (IBA
// 14.2.5.6): the classic speeds.
const (
	LinkSpeedSDR = 0x1 // 2.5 Gb/s per lane
	LinkSpeedDDR = 0x2 // 5.0 Gb/s
	LinkSpeedQDR = 0x4 // 10.0 Gb/s
)

// Extended link speed bits of PortInfo:LinkSpeedExtActive/Supported/Enabled
// (IBA 14.2.5.6, 1.3 and later), and LinkSpeedExt2 for XDR.
const (
	LinkSpeedExtFDR = 0x1 // 14.0625 Gb/s per lane
	LinkSpeedExtEDR = 0x2 // 25.78125 Gb/s
	LinkSpeedExtHDR = 0x4 // 53.125 Gb/s
	LinkSpeedExtNDR = 0x8 // 106.25 Gb/s

	LinkSpeedExt2XDR = 0x1 // 212.5 Gb/s, PortInfo:LinkSpeedExtActive2
)

// LinkSpeedExtXDR is XDR's bit in ExtSpeeds' masks, where the second
// group of extended speeds (LinkSpeedExt*2) sits above the first.
const LinkSpeedExtXDR = LinkSpeedExt2XDR << 5

// ExtSpeeds gives pi's extended speeds with both groups in one mask each,
// LinkSpeedExt* in bits 0 to 4 and LinkSpeedExt*2 from bit 5 (XDR is
// LinkSpeedExtXDR), as infiniband-diags 56 reads them (libibnetdisc's
// ibnd_get_agg_linkspeedext and its kin). capInfo is the PortInfo whose
// capability masks speak for the port: a switch's port 0, else the port
// itself. Without IsExtendedSpeedsSupported there all three are 0; the
// second group counts only with IsExtendedSpeeds2Supported in
// CapabilityMask2 (IBA 14.2.5.6). The active speed is the second group's
// when it has one, else the first's; an enabled first group of 30
// ("extended speeds disabled") counts as 0.
func (pi *PortInfo) ExtSpeeds(capInfo *PortInfo) (active, supported, enabled uint8) {
	if capInfo == nil || capInfo.CapabilityMask&PortCapIsExtendedSpeedsSupported == 0 {
		return 0, 0, 0
	}
	active, supported, enabled = pi.LinkSpeedExtActive, pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled
	if enabled == 30 {
		enabled = 0
	}
	if capInfo.CapabilityMask&PortCapIsCapabilityMask2Supported != 0 &&
		capInfo.CapabilityMask2&PortCap2IsExtendedSpeeds2Supported != 0 {
		if a2 := pi.LinkSpeedExtActive2 << 5; a2 != 0 {
			active = a2
		}
		supported |= pi.LinkSpeedExtSupported2 << 5
		enabled |= pi.LinkSpeedExtEnabled2 << 5
	}
	return active, supported, enabled
}

// Speed is a per-lane signalling generation.
//
//iba:enum
type Speed uint8

const (
	SpeedSDR   Speed = 1 // SDR
	SpeedDDR   Speed = 2 // DDR
	SpeedQDR   Speed = 3 // QDR
	SpeedFDR10 Speed = 4 // FDR10
	SpeedFDR   Speed = 5 // FDR
	SpeedEDR   Speed = 6 // EDR
	SpeedHDR   Speed = 7 // HDR
	SpeedNDR   Speed = 8 // NDR
	SpeedXDR   Speed = 9 // XDR
)

// LaneGbps is the data rate of one lane in Gb/s as infiniband-diags prints
// it (the signalling rate: 2.5 for SDR, 14.0625 for FDR, ...).
func (s Speed) LaneGbps() float64 {
	switch s {
	case SpeedSDR:
		return 2.5
	case SpeedDDR:
		return 5
	case SpeedQDR:
		return 10
	case SpeedFDR10:
		return 10.3125
	case SpeedFDR:
		return 14.0625
	case SpeedEDR:
		return 25.78125
	case SpeedHDR:
		return 53.125
	case SpeedNDR:
		return 106.25
	case SpeedXDR:
		return 212.5
	}
	return 0
}

// DataGbps is the nominal data rate of one lane that the static rate codes
// use (IBA 15.2.5.16): 14 for FDR, 25 for EDR, 50 for HDR.
func (s Speed) DataGbps() float64 {
	switch s {
	case SpeedFDR10:
		return 10
	case SpeedFDR:
		return 14
	case SpeedEDR:
		return 25
	case SpeedHDR:
		return 50
	case SpeedNDR:
		return 100
	case SpeedXDR:
		return 200
	}
	return s.LaneGbps()
}

// RateFor gives the static rate code of a link of the given lanes at a
// speed (4x EDR, 100 Gb/s, is Rate100Gbps); false when the IBA defines no
// code for it (12x XDR).
func RateFor(lanes int, s Speed) (Rate, bool) {
	want := float64(lanes) * s.DataGbps()
	for r := Rate2_5Gbps; r <= Rate1200Gbps; r++ {
		if want > 0 && r.Gbps() == want {
			return r, true
		}
	}
	return 0, false
}

// ActiveSpeed works out the speed a port runs at from PortInfo: the
// extended speeds take precedence over the classic ones when set (IBA
// 14.2.5.6, LinkSpeedExtActive "0: no extended speed active"). FDR10 is a
// Mellanox extension reported in the Mellanox extended port info, so
// mlnxSpeedActive (its LinkSpeedActive, bit 0 = FDR10) may be given as 0.
func ActiveSpeed(pi *PortInfo, mlnxSpeedActive uint8) Speed {
	if pi.LinkSpeedExtActive2&LinkSpeedExt2XDR != 0 {
		return SpeedXDR
	}
	switch pi.LinkSpeedExtActive {
	case LinkSpeedExtFDR:
		return SpeedFDR
	case LinkSpeedExtEDR:
		return SpeedEDR
	case LinkSpeedExtHDR:
		return SpeedHDR
	case LinkSpeedExtNDR:
		return SpeedNDR
	}
	if mlnxSpeedActive&0x1 != 0 {
		return SpeedFDR10
	}
	switch pi.LinkSpeedActive {
	case LinkSpeedSDR:
		return SpeedSDR
	case LinkSpeedDDR:
		return SpeedDDR
	case LinkSpeedQDR:
		return SpeedQDR
	}
	return 0
}

// FastestSpeed gives the fastest speed of a port's LinkSpeedSupported or
// LinkSpeedEnabled mask together with the LinkSpeedExt and LinkSpeedExt2
// masks of the same kind (IBA 14.2.5.6), 0 when they have none. The
// extended masks count only where the port has extended speeds
// (PortInfo:CapabilityMask IsExtendedSpeedsSupported; ext2 where
// CapabilityMask2 IsExtendedSpeeds2Supported): pass 0 otherwise.
// LinkSpeedExtEnabled 30 (extended speeds disabled) and the "set to
// supported" values 31 and 15 give no speed of their own; mlnx is the
// Mellanox extended port info's mask of the same kind (bit 0: FDR10).
func FastestSpeed(classic, ext, ext2, mlnx uint8) Speed {
	switch {
	case ext2&LinkSpeedExt2XDR != 0 && ext2 != 0x7:
		return SpeedXDR
	case ext >= 0x1e:
	case ext&LinkSpeedExtNDR != 0:
		return SpeedNDR
	case ext&LinkSpeedExtHDR != 0:
		return SpeedHDR
	case ext&LinkSpeedExtEDR != 0:
		return SpeedEDR
	case ext&LinkSpeedExtFDR != 0:
		return SpeedFDR
	}
	switch {
	case mlnx&0x1 != 0:
		return SpeedFDR10
	case classic == 0xf:
	case classic&LinkSpeedQDR != 0:
		return SpeedQDR
	case classic&LinkSpeedDDR != 0:
		return SpeedDDR
	case classic&LinkSpeedSDR != 0:
		return SpeedSDR
	}
	return 0
}

// Rate is a static rate code of PathRecord:Rate, MCMemberRecord:Rate and
// the verbs (IBA 15.2.5.16, table 205 and its later extensions).
//
//iba:enum
type Rate uint8

const (
	Rate2_5Gbps  Rate = 2  // 2.5 Gb/sec
	Rate10Gbps   Rate = 3  // 10 Gb/sec
	Rate30Gbps   Rate = 4  // 30 Gb/sec
	Rate5Gbps    Rate = 5  // 5 Gb/sec
	Rate20Gbps   Rate = 6  // 20 Gb/sec
	Rate40Gbps   Rate = 7  // 40 Gb/sec
	Rate60Gbps   Rate = 8  // 60 Gb/sec
	Rate80Gbps   Rate = 9  // 80 Gb/sec
	Rate120Gbps  Rate = 10 // 120 Gb/sec
	Rate14Gbps   Rate = 11 // 14 Gb/sec
	Rate56Gbps   Rate = 12 // 56 Gb/sec
	Rate112Gbps  Rate = 13 // 112 Gb/sec
	Rate168Gbps  Rate = 14 // 168 Gb/sec
	Rate25Gbps   Rate = 15 // 25 Gb/sec
	Rate100Gbps  Rate = 16 // 100 Gb/sec
	Rate200Gbps  Rate = 17 // 200 Gb/sec
	Rate300Gbps  Rate = 18 // 300 Gb/sec
	Rate28Gbps   Rate = 19 // 28 Gb/sec
	Rate50Gbps   Rate = 20 // 50 Gb/sec
	Rate400Gbps  Rate = 21 // 400 Gb/sec
	Rate600Gbps  Rate = 22 // 600 Gb/sec
	Rate800Gbps  Rate = 23 // 800 Gb/sec
	Rate1200Gbps Rate = 24 // 1200 Gb/sec
)

// Gbps gives the rate in Gb/s (0 for an unknown code): each code is the
// data rate of a width and speed, for example 3 is 4x SDR or 1x QDR, 10 Gb/s.
func (r Rate) Gbps() float64 {
	s := r.String()
	if strings.HasPrefix(s, "unknown") {
		return 0
	}
	v, _ := strconv.ParseFloat(strings.TrimSuffix(s, " Gb/sec"), 64)
	return v
}

// PortInfo:CapabilityMask bits (IBA 14.2.5.6, table 153).
const (
	PortCapIsSM                            = 1 << 1
	PortCapIsNoticeSupported               = 1 << 2
	PortCapIsTrapSupported                 = 1 << 3
	PortCapIsOptionalIPDSupported          = 1 << 4
	PortCapIsAutomaticMigrationSupported   = 1 << 5
	PortCapIsSLMappingSupported            = 1 << 6
	PortCapIsMKeyNVRAM                     = 1 << 7
	PortCapIsPKeyNVRAM                     = 1 << 8
	PortCapIsLEDInfoSupported              = 1 << 9
	PortCapIsSMDisabled                    = 1 << 10
	PortCapIsSystemImageGUIDSupported      = 1 << 11
	PortCapIsPKeySwitchExternalPortTrap    = 1 << 12
	PortCapIsExtendedSpeedsSupported       = 1 << 14
	PortCapIsCapabilityMask2Supported      = 1 << 15
	PortCapIsCommunicationManagement       = 1 << 16
	PortCapIsSNMPTunnelingSupported        = 1 << 17
	PortCapIsReinitSupported               = 1 << 18
	PortCapIsDeviceManagementSupported     = 1 << 19
	PortCapIsVendorClassSupported          = 1 << 20
	PortCapIsDRNoticeSupported             = 1 << 21
	PortCapIsCapabilityMaskNoticeSupported = 1 << 22
	PortCapIsBootManagementSupported       = 1 << 23
	PortCapIsLinkRoundTripLatencySupported = 1 << 24
	PortCapIsClientReregistrationSupported = 1 << 25
	PortCapIsOtherLocalChangesNotice       = 1 << 26
	PortCapIsLinkSpeedWidthPairsTable      = 1 << 27
	PortCapIsVendorSpecificMADsTable       = 1 << 28
	PortCapIsMcastPKeyTrapSuppression      = 1 << 29
	PortCapIsMulticastFDBTopSupported      = 1 << 30
	PortCapIsHierarchyInfoSupported        = 1 << 31
)

// PortInfo:CapabilityMask2 bits (IBA 14.2.5.6, table 154).
const (
	PortCap2IsSetNodeDescriptionSupported   = 1 << 0
	PortCap2IsPortInfoExtendedSupported     = 1 << 1
	PortCap2IsVirtualizationSupported       = 1 << 2
	PortCap2IsSwitchPortStateTableSupported = 1 << 3
	PortCap2IsLinkWidth2xSupported          = 1 << 4
	PortCap2IsLinkSpeedHDRSupported         = 1 << 5
	PortCap2IsMKeyProtectBitsExtSupported   = 1 << 6
	PortCap2IsEnhancedTrap128Supported      = 1 << 7
	PortCap2IsPartitionTopSupported         = 1 << 8
	PortCap2IsEnhancedQoSArbiterSupported   = 1 << 9
	PortCap2IsLinkSpeedNDRSupported         = 1 << 10
	PortCap2IsExtendedSpeeds2Supported      = 1 << 11
	PortCap2IsLinkSpeedXDRSupported         = 1 << 12
)
