package health

import (
	"fmt"
	"sort"
	"strings"
)

// Need says what data a check needs collected from the fabric.
type Need uint32

// The data Collect can gather. The subnet itself (the discovery, or the
// Subnet given in Options) is always there.
const (
	// NeedCounters: every port's counters, sampled twice Options.Interval
	// apart.
	NeedCounters Need = 1 << iota
	// NeedSM: SMInfo of every port that says it has an SM, read at the
	// start and the end of the run.
	NeedSM
	// NeedPKeys: the P_Key tables of CA and router ports and of switch
	// ports that enforce partitions.
	NeedPKeys
	// NeedLFT: every switch's linear forwarding table.
	NeedLFT
	// NeedMFT: every switch's multicast forwarding table.
	NeedMFT
	// NeedSL2VL: every switch's and CA's SL-to-VL tables (only with
	// Options.VLRouting; otherwise every SL is taken to use VL 0).
	NeedSL2VL
	// NeedGroups: the multicast groups and their members, from the SA.
	NeedGroups
	// NeedLossy: Options.LossyCount NodeInfo SMPs along every link.
	NeedLossy
)

// Check is one named check. Its findings all have its Severity.
type Check struct {
	// Name is how it is selected (Options.Checks, ibtool --checks).
	Name string
	// Severity of every finding of the check.
	Severity Severity
	// Doc says what the check looks at and which IBA section or
	// ibdiagnet behaviour it follows.
	Doc string
	// Needs is the data it reads from Data.
	Needs Need
	// Default: run when Options.Checks is empty.
	Default bool

	run func(d *Data) []Finding
}

// Run runs the check over collected data and returns its findings, each
// tagged with the check's name and severity, in a stable order.
func (c *Check) Run(d *Data) []Finding {
	fs := c.run(d)
	for i := range fs {
		fs[i].Check, fs[i].Severity = c.Name, c.Severity
	}
	Sort(fs)
	return fs
}

var registry []*Check

func register(c *Check) *Check {
	registry = append(registry, c)
	return c
}

// Checks lists every check in the order Run runs them.
func Checks() []*Check {
	out := append([]*Check(nil), registry...)
	sort.SliceStable(out, func(i, j int) bool { return order(out[i]) < order(out[j]) })
	return out
}

// order keeps ibdiagnet's stages: discovery, identifiers, links, SMs,
// partitions, counters, routing.
func order(c *Check) int {
	for i, n := range checkOrder {
		if n == c.Name {
			return i
		}
	}
	return len(checkOrder)
}

var checkOrder = []string{
	"discovery", "duplicate-node-guids", "duplicate-port-guids", "duplicate-lids", "zero-lids",
	"zero-system-guids", "port-state", "link-ends", "link-width", "link-speed", "lossy-links",
	"sm", "pkeys", "counters", "routing", "credit-loops", "multicast", "path",
}

// Lookup finds a check by name.
func Lookup(name string) (*Check, bool) {
	for _, c := range registry {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Select gives the checks to run: the named ones (all of them for "all"),
// or the default ones when names is empty, less the skipped ones (skip
// may hold "all"). An unknown name is an error that lists the known ones.
func Select(names, skip []string) ([]*Check, error) {
	want := map[string]bool{}
	all := len(names) == 0
	for _, n := range names {
		if n == "all" {
			all = true
			continue
		}
		if _, ok := Lookup(n); !ok {
			return nil, unknownCheck(n)
		}
		want[n] = true
	}
	skipped := map[string]bool{}
	for _, n := range skip {
		if n == "all" {
			return nil, nil
		}
		if _, ok := Lookup(n); !ok {
			return nil, unknownCheck(n)
		}
		skipped[n] = true
	}
	var out []*Check
	for _, c := range Checks() {
		run := want[c.Name] || (all && (len(names) > 0 || c.Default))
		if run && !skipped[c.Name] {
			out = append(out, c)
		}
	}
	return out, nil
}

func unknownCheck(n string) error {
	var names []string
	for _, c := range Checks() {
		names = append(names, c.Name)
	}
	return fmt.Errorf("%w: %q (known: %s, all)", ErrUnknownCheck, n, strings.Join(names, ", "))
}
