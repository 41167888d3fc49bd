package perf

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// Counter names one counter of a port's PortCounters (IBA 16.1.3.5) or
// PortCountersExtended (IBA 16.1.4.11), by its IBA name. The error
// counters come first, in the order infiniband-diags' ibqueryerrors checks
// them, then the data and packet counters.
type Counter uint8

// The counters, by their IBA names.
const (
	SymbolErrorCounter Counter = iota
	LinkErrorRecoveryCounter
	LinkDownedCounter
	PortRcvErrors
	PortRcvRemotePhysicalErrors
	PortRcvSwitchRelayErrors
	PortXmitDiscards
	PortXmitConstraintErrors
	PortRcvConstraintErrors
	LocalLinkIntegrityErrors
	ExcessiveBufferOverrunErrors
	VL15Dropped
	PortXmitWait
	QP1Dropped
	PortXmitData
	PortRcvData
	PortXmitPkts
	PortRcvPkts
	PortUnicastXmitPkts
	PortUnicastRcvPkts
	PortMulticastXmitPkts
	PortMulticastRcvPkts

	// NumCounters is the number of counters; Counter values run below it.
	NumCounters
)

var counterInfo = [NumCounters]struct {
	name  string
	short string // perfquery's name (libibmad), "" where the same
	bits  uint8  // width in PortCounters; 0: only in PortCountersExtended
}{
	{"SymbolErrorCounter", "SymbolErrors", 16},
	{"LinkErrorRecoveryCounter", "LinkRecovers", 8},
	{"LinkDownedCounter", "LinkDowned", 8},
	{"PortRcvErrors", "RcvErrors", 16},
	{"PortRcvRemotePhysicalErrors", "RcvRemotePhysErrors", 16},
	{"PortRcvSwitchRelayErrors", "RcvSwRelayErrors", 16},
	{"PortXmitDiscards", "XmtDiscards", 16},
	{"PortXmitConstraintErrors", "XmtConstraintErrors", 8},
	{"PortRcvConstraintErrors", "RcvConstraintErrors", 8},
	{"LocalLinkIntegrityErrors", "LinkIntegrityErrors", 4},
	{"ExcessiveBufferOverrunErrors", "ExcBufOverrunErrors", 4},
	{"VL15Dropped", "", 16},
	{"PortXmitWait", "XmtWait", 32},
	{"QP1Dropped", "", 16},
	{"PortXmitData", "XmtData", 32},
	{"PortRcvData", "RcvData", 32},
	{"PortXmitPkts", "XmtPkts", 32},
	{"PortRcvPkts", "RcvPkts", 32},
	{"PortUnicastXmitPkts", "UnicastXmitPkts", 0},
	{"PortUnicastRcvPkts", "UnicastRcvPkts", 0},
	{"PortMulticastXmitPkts", "MulticastXmitPkts", 0},
	{"PortMulticastRcvPkts", "MulticastRcvPkts", 0},
}

// String is the counter's IBA name ("SymbolErrorCounter").
func (c Counter) String() string {
	if c < NumCounters {
		return counterInfo[c].name
	}
	return fmt.Sprintf("Counter(%d)", uint8(c))
}

// Bits is the counter's width in PortCounters (4 to 32), 0 for the
// counters only PortCountersExtended has. PortCountersExtended's are 64.
func (c Counter) Bits() int { return int(counterInfo[c].bits) }

// IsError says whether the counter counts errors (or, for PortXmitWait,
// congestion): the counters health checks and thresholds look at.
func (c Counter) IsError() bool { return c <= QP1Dropped }

// IsData says whether the counter counts data in units of 4 octets
// (IBA 16.1.3.5: PortXmitData and PortRcvData are "divided by 4").
func (c Counter) IsData() bool { return c == PortXmitData || c == PortRcvData }

// ErrorCounters are the error counters in ibqueryerrors' order (QP1Dropped,
// which it does not check, last).
var ErrorCounters = []Counter{SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter,
	PortRcvErrors, PortRcvRemotePhysicalErrors, PortRcvSwitchRelayErrors, PortXmitDiscards,
	PortXmitConstraintErrors, PortRcvConstraintErrors, LocalLinkIntegrityErrors,
	ExcessiveBufferOverrunErrors, VL15Dropped, PortXmitWait, QP1Dropped}

// ShortName is perfquery's name of the counter ("RcvErrors"), its IBA name
// where perfquery uses that.
func (c Counter) ShortName() string {
	if c < NumCounters && counterInfo[c].short != "" {
		return counterInfo[c].short
	}
	return c.String()
}

// ParseCounter finds a counter by name: its IBA name, python-rdma's field
// name or perfquery's short name, in any case ("PortRcvErrors",
// "portRcvErrors", "RcvErrors").
func ParseCounter(name string) (Counter, bool) {
	for c := Counter(0); c < NumCounters; c++ {
		if strings.EqualFold(counterInfo[c].name, name) || counterInfo[c].short != "" && strings.EqualFold(counterInfo[c].short, name) {
			return c, true
		}
	}
	return 0, false
}

// Capabilities are a PMA's ClassPortInfo capability masks (IBA 16.1.2,
// table 226; CapabilityMask2 as its 27 bits).
type Capabilities struct {
	CapMask  uint16
	CapMask2 uint32
}

// AllPortSelect: PortSelect 0xFF reads and resets every port at once.
func (c Capabilities) AllPortSelect() bool { return c.CapMask&iba.PMCapAllPortSelect != 0 }

// Extended: the PMA has PortCountersExtended (64-bit data counters).
func (c Capabilities) Extended() bool {
	return c.CapMask&(iba.PMCapExtendedWidth|iba.PMCapExtendedWidthNoIETF) != 0
}

// ExtendedUnicast: PortCountersExtended has the unicast and multicast
// packet counters (ExtendedWidth, not ExtendedWidthNoIETF).
func (c Capabilities) ExtendedUnicast() bool { return c.CapMask&iba.PMCapExtendedWidth != 0 }

// ExtendedErrors: PortCountersExtended has 64-bit error counters
// (CapabilityMask2 AdditionalPortCountersExtended).
func (c Capabilities) ExtendedErrors() bool {
	return c.Extended() && c.CapMask2&iba.PMCap2AdditionalPortCountersExtended != 0
}

// XmitWait: PortCounters counts PortXmitWait.
func (c Capabilities) XmitWait() bool { return c.CapMask&iba.PMCapPortCountersXmitWait != 0 }

// QP1Dropped: PortCounters counts QP1Dropped.
func (c Capabilities) QP1Dropped() bool { return c.CapMask&iba.PMCapQP1Dropped != 0 }

// Counters are one port's counters as read: each value, whether it was
// read, and whether it came from a 64-bit PortCountersExtended counter or
// a narrow PortCounters one (which stops at all ones instead of wrapping,
// IBA 16.1.3.5).
type Counters struct {
	// Port is the port read, 255 for all ports (PortSelect 0xFF).
	Port int
	// Time is when the reply came.
	Time time.Time
	// Values are by Counter; valid where Has says so.
	Values [NumCounters]uint64
	has    uint32
	wide   uint32
}

// Has says whether the counter was read.
func (c *Counters) Has(k Counter) bool { return c.has&(1<<k) != 0 }

// Get is the counter's value and whether it was read.
func (c *Counters) Get(k Counter) (uint64, bool) { return c.Values[k], c.Has(k) }

// Is64 says whether the counter was read from 64-bit PortCountersExtended.
func (c *Counters) Is64(k Counter) bool { return c.wide&(1<<k) != 0 }

// Bits is the width of the counter as read: 64 from PortCountersExtended,
// else its PortCounters width.
func (c *Counters) Bits(k Counter) int {
	if c.Is64(k) {
		return 64
	}
	return k.Bits()
}

// Saturated says whether a counter read at a PortCounters width stands at
// all ones: it stopped counting there (IBA 16.1.3.5), and what it would
// count now is unknown. 64-bit counters never saturate in practice.
func (c *Counters) Saturated(k Counter) bool {
	if !c.Has(k) || c.Is64(k) {
		return false
	}
	return c.Values[k] == maxOf(k.Bits())
}

// Bytes is a data counter in octets (4 per counted unit), saturating at
// the largest uint64; other counters are returned as they are.
func (c *Counters) Bytes(k Counter) uint64 { return Octets(k, c.Values[k]) }

// Octets converts a value of counter k to octets: data counters count
// 4-octet units; others are returned as they are.
func Octets(k Counter, v uint64) uint64 {
	if !k.IsData() {
		return v
	}
	if v > math.MaxUint64/4 {
		return math.MaxUint64
	}
	return v * 4
}

// Set records a counter's value (width 64 when wide).
func (c *Counters) Set(k Counter, v uint64, wide bool) {
	c.Values[k] = v
	c.has |= 1 << k
	if wide {
		c.wide |= 1 << k
	} else {
		c.wide &^= 1 << k
	}
}

func maxOf(bits int) uint64 {
	if bits >= 64 {
		return math.MaxUint64
	}
	return 1<<bits - 1
}

// FromPortCounters are the counters of a PortCounters reply. PortXmitWait
// and QP1Dropped are read only where the PMA's capabilities say it counts
// them (else the field is reserved, and infiniband-diags shows 0).
func FromPortCounters(pc *iba.PortCounters, caps Capabilities) Counters {
	c := Counters{Port: int(pc.PortSelect)}
	c.Set(SymbolErrorCounter, uint64(pc.SymbolErrorCounter), false)
	c.Set(LinkErrorRecoveryCounter, uint64(pc.LinkErrorRecoveryCounter), false)
	c.Set(LinkDownedCounter, uint64(pc.LinkDownedCounter), false)
	c.Set(PortRcvErrors, uint64(pc.PortRcvErrors), false)
	c.Set(PortRcvRemotePhysicalErrors, uint64(pc.PortRcvRemotePhysicalErrors), false)
	c.Set(PortRcvSwitchRelayErrors, uint64(pc.PortRcvSwitchRelayErrors), false)
	c.Set(PortXmitDiscards, uint64(pc.PortXmitDiscards), false)
	c.Set(PortXmitConstraintErrors, uint64(pc.PortXmitConstraintErrors), false)
	c.Set(PortRcvConstraintErrors, uint64(pc.PortRcvConstraintErrors), false)
	c.Set(LocalLinkIntegrityErrors, uint64(pc.LocalLinkIntegrityErrors), false)
	c.Set(ExcessiveBufferOverrunErrors, uint64(pc.ExcessiveBufferOverrunErrors), false)
	c.Set(VL15Dropped, uint64(pc.VL15Dropped), false)
	if caps.XmitWait() {
		c.Set(PortXmitWait, uint64(pc.PortXmitWait), false)
	}
	if caps.QP1Dropped() {
		c.Set(QP1Dropped, uint64(pc.QP1Dropped), false)
	}
	c.Set(PortXmitData, uint64(pc.PortXmitData), false)
	c.Set(PortRcvData, uint64(pc.PortRcvData), false)
	c.Set(PortXmitPkts, uint64(pc.PortXmitPkts), false)
	c.Set(PortRcvPkts, uint64(pc.PortRcvPkts), false)
	return c
}

// AddExtended takes in a PortCountersExtended reply of the same port: its
// 64-bit data and packet counters replace the 32-bit ones, the unicast and
// multicast counters are added where the PMA has them, and its 64-bit error
// counters replace the narrow ones where the PMA has those
// (Capabilities.ExtendedErrors).
func (c *Counters) AddExtended(pce *iba.PortCountersExtended, caps Capabilities) {
	c.Port = int(pce.PortSelect)
	c.Set(PortXmitData, pce.PortXmitData, true)
	c.Set(PortRcvData, pce.PortRcvData, true)
	c.Set(PortXmitPkts, pce.PortXmitPkts, true)
	c.Set(PortRcvPkts, pce.PortRcvPkts, true)
	if caps.ExtendedUnicast() {
		c.Set(PortUnicastXmitPkts, pce.PortUnicastXmitPkts, true)
		c.Set(PortUnicastRcvPkts, pce.PortUnicastRcvPkts, true)
		c.Set(PortMulticastXmitPkts, pce.PortMulticastXmitPkts, true)
		c.Set(PortMulticastRcvPkts, pce.PortMulticastRcvPkts, true)
	}
	if !caps.ExtendedErrors() {
		return
	}
	c.Set(SymbolErrorCounter, pce.SymbolErrorCounter, true)
	c.Set(LinkErrorRecoveryCounter, pce.LinkErrorRecoveryCounter, true)
	c.Set(LinkDownedCounter, pce.LinkDownedCounter, true)
	c.Set(PortRcvErrors, pce.PortRcvErrors, true)
	c.Set(PortRcvRemotePhysicalErrors, pce.PortRcvRemotePhysicalErrors, true)
	c.Set(PortRcvSwitchRelayErrors, pce.PortRcvSwitchRelayErrors, true)
	c.Set(PortXmitDiscards, pce.PortXmitDiscards, true)
	c.Set(PortXmitConstraintErrors, pce.PortXmitConstraintErrors, true)
	c.Set(PortRcvConstraintErrors, pce.PortRcvConstraintErrors, true)
	c.Set(LocalLinkIntegrityErrors, pce.LocalLinkIntegrityErrors, true)
	c.Set(ExcessiveBufferOverrunErrors, pce.ExcessiveBufferOverrunErrors, true)
	c.Set(VL15Dropped, pce.VL15Dropped, true)
	c.Set(PortXmitWait, pce.PortXmitWait, true)
	c.Set(QP1Dropped, pce.QP1Dropped, true)
}

// Add adds o's counters to c's as the PMA adds ports for PortSelect 0xFF
// (IBA 16.1.3.5), which is also how perfquery emulates it: each counter
// saturates at its width instead of wrapping. A counter read in one and
// not the other keeps the one read.
func (c *Counters) Add(o *Counters) {
	c.Port = 0xff
	for k := Counter(0); k < NumCounters; k++ {
		if !o.Has(k) {
			continue
		}
		if !c.Has(k) {
			c.Set(k, o.Values[k], o.Is64(k))
			continue
		}
		bits := min(c.Bits(k), o.Bits(k))
		c.Set(k, satAdd(c.Values[k], o.Values[k], bits), bits == 64)
	}
	if o.Time.After(c.Time) {
		c.Time = o.Time
	}
}

// satAdd adds v to a counter of the given width without wrapping.
func satAdd(a, v uint64, bits int) uint64 {
	limit := maxOf(bits)
	if a+v < a || a+v > limit {
		return limit
	}
	return a + v
}
