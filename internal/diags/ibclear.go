package diags

import (
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
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
	pr, err := c.perfRun()
	if err != nil {
		return err
	}
	capMask, err := c.capMask(pr)
	if err != nil {
		return err
	}
	mask := sel
	if sel == clearAll && capMask&iba.PMCapPortCountersXmitWait != 0 {
		mask |= 1 << 16
	}
	ports := []int{c.portIdx}
	if c.portIdx == allPorts && capMask&iba.PMCapAllPortSelect == 0 {
		if c.ni.NodeType == iba.NodeTypeCA {
			return errors.New("Can't iterate over all ports on a CA.")
		}
		ports = ports[:0]
		for p := 1; p <= int(c.ni.NumPorts); p++ {
			ports = append(ports, p)
		}
	}
	for _, p := range ports {
		if err := pr.reset(p, mask, "PortCounters", &iba.PortCounters{}); err != nil {
			return fmt.Errorf("resetting PortCounters of port %d: %w", p, err)
		}
	}
	c.run.Reset = &PerfReset{Port: c.portIdx, Attribute: "PortCounters", CounterSelect: uint64(mask)}
	return nil
}
