package diags

import (
	"errors"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
)

// ibclearcounters and ibclearerrors: python-rdma's fabric-wide counter
// resets, on the ibcheck engine (ibcheck.go). They are the family's only
// writers, and their summary says what they cleared.

func init() {
	registerCheck(checkSpec{"ibclearcounters", "clear every PortCounters counter on every port", "", false, []check{checkClearAll},
		"every PortCounters counter (CounterSelect 0xffff, and PortXmitWait where the PMA counts it)"})
	registerCheck(checkSpec{"ibclearerrors", "clear the PortCounters error counters on every port", "", false, []check{checkClearErrs},
		"the error counters, SymbolErrorCounter to VL15Dropped (CounterSelect 0x0fff)"})
}

var (
	checkClearAll  = check{kindClear, func(c *checkCtx) error { return c.clear(clearAll) }}
	checkClearErrs = check{kindClear, func(c *checkCtx) error { return c.clear(clearErrors) }}
)

// CounterSelect masks of the resets (IBA 16.1.3.5): every PortCounters
// counter, or only the error counters (SymbolErrorCounter to
// VL15Dropped).
const (
	clearAll    = 0xffff
	clearErrors = 0x0fff
)

// clear is do_clear_counters and do_clear_error_counters: a PerformanceSet
// of PortCounters with CounterSelect sel, through perfquery's reset (which
// also handles AllPortSelect emulation as perfquery -R does: one Set per
// port). Clearing everything also clears PortXmitWait where the PMA counts
// it (CounterSelect2).
func (c *checkCtx) clear(sel uint32) error {
	t, err := c.gmp()
	if err != nil {
		return err
	}
	caps, err := perf.ReadCapabilities(c.r.e.Ctx, c.r.s.mc, t)
	if err != nil {
		return err
	}
	mask := sel
	if sel == clearAll && caps.XmitWait() {
		mask |= 1 << 16
	}
	ports := []int{c.portIdx}
	if c.portIdx == perf.AllPorts && !caps.AllPortSelect() {
		if c.ni.NodeType == iba.NodeTypeCA {
			return errors.New("Can't iterate over all ports on a CA.")
		}
		ports = ports[:0]
		for p := 1; p <= int(c.ni.NumPorts); p++ {
			ports = append(ports, p)
		}
	}
	for _, p := range ports {
		if _, err := perf.ResetCounters(c.r.e.Ctx, c.r.s.mc, t, p, &iba.PortCounters{}, mask); err != nil {
			return err
		}
	}
	c.run.Reset = &perf.Reset{Port: c.portIdx, Attribute: "PortCounters", CounterSelect: uint64(mask)}
	return nil
}
