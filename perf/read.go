package perf

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// AllPorts is PortSelect 0xFF: every port of the node at once, where the
// PMA has AllPortSelect (IBA 16.1.3.5).
const AllPorts = 0xff

// Get reads a PerfMgt attribute of one port: attr's PortSelect (the second
// byte of every per-port PerfMgt attribute) is set to port and the reply
// decoded into attr.
func Get(ctx context.Context, mc *mad.Client, t mad.Target, port int, attr iba.Attribute) error {
	if err := selectPort(attr, port); err != nil {
		return err
	}
	if err := mc.PerformanceGet(ctx, t, attr, 0); err != nil {
		return fmt.Errorf("reading %s of port %d: %w", attr.Desc().Name, port, err)
	}
	return nil
}

// Start is Get without waiting: done is called once with the outcome, on
// the MAD client's reader (mad.Client.StartPerformanceGet), so it must not
// wait for another MAD.
func Start(ctx context.Context, mc *mad.Client, t mad.Target, port int, attr iba.Attribute, done func(error)) {
	if err := selectPort(attr, port); err != nil {
		done(err)
		return
	}
	mc.StartPerformanceGet(ctx, t, attr, 0, done)
}

// selectPort makes attr a request for port: zero but for PortSelect.
func selectPort(attr iba.Attribute, port int) error {
	if port < 0 || port > AllPorts {
		return fmt.Errorf("port %d: PortSelect is 0 to 255", port)
	}
	var buf [256]byte
	b := buf[:attr.Desc().Size]
	b[1] = byte(port)
	return attr.Unmarshal(b)
}

// ReadCapabilities reads the PMA's ClassPortInfo capability masks.
func ReadCapabilities(ctx context.Context, mc *mad.Client, t mad.Target) (Capabilities, error) {
	var cpi iba.ClassPortInfo
	if err := mc.PerformanceGet(ctx, t, &cpi, 0); err != nil {
		return Capabilities{}, fmt.Errorf("reading the PMA's ClassPortInfo: %w", err)
	}
	return Capabilities{CapMask: cpi.CapabilityMask, CapMask2: cpi.CapabilityMask2}, nil
}

// Reading is one port's counters as read, with the attributes they came
// from.
type Reading struct {
	Counters
	PortCounters         *iba.PortCounters
	PortCountersExtended *iba.PortCountersExtended // nil where not read
}

// Read reads one port's counters (port AllPorts for all, where the PMA has
// AllPortSelect): PortCounters, and PortCountersExtended where the PMA has
// it, so that data counters are 64 bits wherever they can be and the error
// counters too where the PMA has the additional extended counters.
func Read(ctx context.Context, mc *mad.Client, t mad.Target, port int, caps Capabilities) (*Reading, error) {
	r := &Reading{PortCounters: &iba.PortCounters{}}
	if err := Get(ctx, mc, t, port, r.PortCounters); err != nil {
		return nil, err
	}
	r.Counters = FromPortCounters(r.PortCounters, caps)
	if caps.Extended() {
		r.PortCountersExtended = &iba.PortCountersExtended{}
		if err := Get(ctx, mc, t, port, r.PortCountersExtended); err != nil {
			return nil, err
		}
		r.AddExtended(r.PortCountersExtended, caps)
	}
	r.Time = time.Now()
	return r, nil
}

// ReadAll reads the counters of every port in ports as one: by PortSelect
// 0xFF where the PMA has AllPortSelect, else port by port, summed as the
// PMA would sum them (Counters.Add: each counter saturates at its width).
// The per-port readings are returned too when it read port by port.
func ReadAll(ctx context.Context, mc *mad.Client, t mad.Target, ports []int, caps Capabilities) (*Reading, []*Reading, error) {
	if caps.AllPortSelect() {
		r, err := Read(ctx, mc, t, AllPorts, caps)
		return r, nil, err
	}
	sum := &Reading{PortCounters: &iba.PortCounters{PortSelect: AllPorts}}
	sum.Port = AllPorts
	var each []*Reading
	for _, p := range ports {
		r, err := Read(ctx, mc, t, p, caps)
		if err != nil {
			return nil, each, err
		}
		each = append(each, r)
		sum.Add(&r.Counters)
		AddPortCounters(sum.PortCounters, r.PortCounters)
	}
	return sum, each, nil
}

// AddPortCounters adds pc to sum as perfquery emulates AllPortSelect: each
// counter saturates at its width (IBA 16.1.3.5), PortSelect becomes 0xFF
// and the CounterSelects are the last port's.
func AddPortCounters(sum, pc *iba.PortCounters) {
	sum.PortSelect = AllPorts
	sum.CounterSelect = pc.CounterSelect
	sum.CounterSelect2 = pc.CounterSelect2
	sum.SymbolErrorCounter = uint16(satAdd(uint64(sum.SymbolErrorCounter), uint64(pc.SymbolErrorCounter), 16))
	sum.LinkErrorRecoveryCounter = uint8(satAdd(uint64(sum.LinkErrorRecoveryCounter), uint64(pc.LinkErrorRecoveryCounter), 8))
	sum.LinkDownedCounter = uint8(satAdd(uint64(sum.LinkDownedCounter), uint64(pc.LinkDownedCounter), 8))
	sum.PortRcvErrors = uint16(satAdd(uint64(sum.PortRcvErrors), uint64(pc.PortRcvErrors), 16))
	sum.PortRcvRemotePhysicalErrors = uint16(satAdd(uint64(sum.PortRcvRemotePhysicalErrors), uint64(pc.PortRcvRemotePhysicalErrors), 16))
	sum.PortRcvSwitchRelayErrors = uint16(satAdd(uint64(sum.PortRcvSwitchRelayErrors), uint64(pc.PortRcvSwitchRelayErrors), 16))
	sum.PortXmitDiscards = uint16(satAdd(uint64(sum.PortXmitDiscards), uint64(pc.PortXmitDiscards), 16))
	sum.PortXmitConstraintErrors = uint8(satAdd(uint64(sum.PortXmitConstraintErrors), uint64(pc.PortXmitConstraintErrors), 8))
	sum.PortRcvConstraintErrors = uint8(satAdd(uint64(sum.PortRcvConstraintErrors), uint64(pc.PortRcvConstraintErrors), 8))
	sum.LocalLinkIntegrityErrors = uint8(satAdd(uint64(sum.LocalLinkIntegrityErrors), uint64(pc.LocalLinkIntegrityErrors), 4))
	sum.ExcessiveBufferOverrunErrors = uint8(satAdd(uint64(sum.ExcessiveBufferOverrunErrors), uint64(pc.ExcessiveBufferOverrunErrors), 4))
	sum.QP1Dropped = uint16(satAdd(uint64(sum.QP1Dropped), uint64(pc.QP1Dropped), 16))
	sum.VL15Dropped = uint16(satAdd(uint64(sum.VL15Dropped), uint64(pc.VL15Dropped), 16))
	sum.PortXmitData = uint32(satAdd(uint64(sum.PortXmitData), uint64(pc.PortXmitData), 32))
	sum.PortRcvData = uint32(satAdd(uint64(sum.PortRcvData), uint64(pc.PortRcvData), 32))
	sum.PortXmitPkts = uint32(satAdd(uint64(sum.PortXmitPkts), uint64(pc.PortXmitPkts), 32))
	sum.PortRcvPkts = uint32(satAdd(uint64(sum.PortRcvPkts), uint64(pc.PortRcvPkts), 32))
	sum.PortXmitWait = uint32(satAdd(uint64(sum.PortXmitWait), uint64(pc.PortXmitWait), 32))
}

// AddPortCountersExtended adds pc to sum as perfquery -x emulates
// AllPortSelect: each counter saturates at 64 bits; the unicast and
// multicast counters only where the PMA has them, the error counters only
// where it has the additional extended counters.
func AddPortCountersExtended(sum, pc *iba.PortCountersExtended, caps Capabilities) {
	add := func(a *uint64, v uint64) { *a = satAdd(*a, v, 64) }
	sum.PortSelect = AllPorts
	sum.CounterSelect = pc.CounterSelect
	add(&sum.PortXmitData, pc.PortXmitData)
	add(&sum.PortRcvData, pc.PortRcvData)
	add(&sum.PortXmitPkts, pc.PortXmitPkts)
	add(&sum.PortRcvPkts, pc.PortRcvPkts)
	if caps.ExtendedUnicast() {
		add(&sum.PortUnicastXmitPkts, pc.PortUnicastXmitPkts)
		add(&sum.PortUnicastRcvPkts, pc.PortUnicastRcvPkts)
		add(&sum.PortMulticastXmitPkts, pc.PortMulticastXmitPkts)
		add(&sum.PortMulticastRcvPkts, pc.PortMulticastRcvPkts)
	}
	if caps.CapMask2&iba.PMCap2AdditionalPortCountersExtended != 0 {
		sum.CounterSelect2 = pc.CounterSelect2
		add(&sum.SymbolErrorCounter, pc.SymbolErrorCounter)
		add(&sum.LinkErrorRecoveryCounter, pc.LinkErrorRecoveryCounter)
		add(&sum.LinkDownedCounter, pc.LinkDownedCounter)
		add(&sum.PortRcvErrors, pc.PortRcvErrors)
		add(&sum.PortRcvRemotePhysicalErrors, pc.PortRcvRemotePhysicalErrors)
		add(&sum.PortRcvSwitchRelayErrors, pc.PortRcvSwitchRelayErrors)
		add(&sum.PortXmitDiscards, pc.PortXmitDiscards)
		add(&sum.PortXmitConstraintErrors, pc.PortXmitConstraintErrors)
		add(&sum.PortRcvConstraintErrors, pc.PortRcvConstraintErrors)
		add(&sum.LocalLinkIntegrityErrors, pc.LocalLinkIntegrityErrors)
		add(&sum.ExcessiveBufferOverrunErrors, pc.ExcessiveBufferOverrunErrors)
		add(&sum.VL15Dropped, pc.VL15Dropped)
		add(&sum.PortXmitWait, pc.PortXmitWait)
		add(&sum.QP1Dropped, pc.QP1Dropped)
	}
}

// A Reset is one PerformanceSet that cleared counters: the port, the
// attribute and the CounterSelect bits sent (CounterSelect2 from bit 16).
type Reset struct {
	Port          int    `json:"port"`
	Attribute     string `json:"attribute"`
	CounterSelect uint64 `json:"counterSelect"`
}

// ResetCounters clears counters of one port (AllPorts: of every port, where
// the PMA has AllPortSelect) with a PerformanceSet of attr, as libibmad's
// performance_reset_via does: CounterSelect is mask's low 16 bits and the
// bits above go to CounterSelect2 (PortCountersExtended's 32-bit one, or
// the byte at offset 18 that is PortCounters' CounterSelect2 for every
// other attribute). A zero mask selects every counter.
func ResetCounters(ctx context.Context, mc *mad.Client, t mad.Target, port int, attr iba.Attribute, mask uint32) (Reset, error) {
	r, err := resetCounters(ctx, mc, t, port, attr, mask)
	if err != nil {
		return r, fmt.Errorf("resetting %s of port %d: %w", r.Attribute, port, err)
	}
	return r, nil
}

// resetCounters is ResetCounters with the MAD client's error as it is.
func resetCounters(ctx context.Context, mc *mad.Client, t mad.Target, port int, attr iba.Attribute, mask uint32) (Reset, error) {
	if mask == 0 {
		mask = math.MaxUint32
	}
	d := attr.Desc()
	var buf [256]byte
	b := buf[:d.Size]
	b[1] = byte(port)
	binary.BigEndian.PutUint16(b[2:], uint16(mask))
	if _, ext := attr.(*iba.PortCountersExtended); ext {
		binary.BigEndian.PutUint32(b[4:], mask>>16)
	} else if len(b) > 18 {
		b[18] = byte(mask >> 16)
	}
	return set(ctx, mc, t, port, uint64(mask), attr, b)
}

// Set sends attr, encoded as b, as a PerformanceSet to port: the raw form
// of ResetCounters for attributes whose CounterSelect lies elsewhere
// (PortExtendedSpeedsCounters' 64-bit one). sel is what the Reset records.
func Set(ctx context.Context, mc *mad.Client, t mad.Target, port int, sel uint64, attr iba.Attribute, b []byte) (Reset, error) {
	r, err := set(ctx, mc, t, port, sel, attr, b)
	if err != nil {
		return r, fmt.Errorf("resetting %s of port %d: %w", r.Attribute, port, err)
	}
	return r, nil
}

func set(ctx context.Context, mc *mad.Client, t mad.Target, port int, sel uint64, attr iba.Attribute, b []byte) (Reset, error) {
	r := Reset{Port: port, Attribute: attr.Desc().Name, CounterSelect: sel}
	if err := attr.Unmarshal(b); err != nil {
		return r, err
	}
	return r, mc.PerformanceSet(ctx, t, attr, 0)
}

// ClearSelect says which counters Clear clears.
type ClearSelect struct {
	// Errors: the error counters (and PortXmitWait where counted).
	Errors bool
	// Data: the data and packet counters.
	Data bool
	// Details: with Errors, also PortXmitDiscardDetails and
	// PortRcvErrorDetails.
	Details bool
}

// Any says whether anything is selected.
func (s ClearSelect) Any() bool { return s.Errors || s.Data }

// Clear clears the selected counters of one port (AllPorts: all, where the
// PMA has AllPortSelect) as ibqueryerrors -k and -K do: in PortCounters
// and, where the PMA has it, PortCountersExtended (IBA 16.1.3.5 and
// 16.1.4.11 CounterSelect bits). It returns the resets that succeeded and
// the failures (*PortError); a failure to clear the details is not
// reported, as in ibqueryerrors.
func Clear(ctx context.Context, mc *mad.Client, t mad.Target, port int, caps Capabilities, sel ClearSelect) ([]Reset, []*PortError) {
	var done []Reset
	var errs []*PortError
	mask := uint32(0)
	if sel.Errors {
		mask |= 0xfff
		if caps.XmitWait() {
			mask |= 0x10000
		}
	}
	if sel.Data {
		mask |= 0xf000
	}
	if mask != 0 {
		if r, err := resetCounters(ctx, mc, t, port, &iba.PortCounters{}, mask); err != nil {
			errs = append(errs, &PortError{Port: port, Attribute: "PortCounters", Op: OpReset, Err: err})
		} else {
			done = append(done, r)
		}
	}
	if sel.Errors && sel.Details {
		if r, err := resetCounters(ctx, mc, t, port, &iba.PortXmitDiscardDetails{}, 0xf); err == nil {
			done = append(done, r)
		}
		if r, err := resetCounters(ctx, mc, t, port, &iba.PortRcvErrorDetails{}, 0x3f); err == nil {
			done = append(done, r)
		}
	}
	if caps.Extended() {
		mask = 0
		if sel.Data {
			mask = 0x0f
			if caps.ExtendedUnicast() {
				mask = 0xff
			}
		}
		if sel.Errors && caps.CapMask2&iba.PMCap2AdditionalPortCountersExtended != 0 {
			mask |= 0xfff0000
			if caps.XmitWait() {
				mask |= 1 << 28
			}
		}
		if mask != 0 {
			if r, err := resetCounters(ctx, mc, t, port, &iba.PortCountersExtended{}, mask); err != nil {
				errs = append(errs, &PortError{Port: port, Attribute: "PortCountersExtended", Op: OpReset, Err: err})
			} else {
				done = append(done, r)
			}
		}
	}
	return done, errs
}

// Operations a PortError names.
const (
	OpRead  = "read"
	OpReset = "reset"
)

// PortError is a read or reset of one port's PerfMgt attribute that failed.
type PortError struct {
	Node      iba.GUID // the node, where known
	LID       uint16   // the LID the PMA was addressed at, where known
	Port      int      // AllPorts for PortSelect 0xFF
	Attribute string   // "ClassPortInfo", "PortCounters", ...
	Op        string   // OpRead or OpReset
	Err       error
}

func (e *PortError) Error() string {
	return fmt.Sprintf("%s %s of LID %d port %d: %v", e.Op, e.Attribute, e.LID, e.Port, e.Err)
}

func (e *PortError) Unwrap() error { return e.Err }
