package topo

import (
	"errors"
	"fmt"
	"math"

	"github.com/rdmakit/rdmakit/internal/units"
)

// The size limits of a topology, which the generators check before they
// build anything, the parser as it reads, and Validate (so sim.New) last.
// They admit more than one subnet can address (49,151 unicast LIDs, IBA
// 4.1.3) and the largest fabrics the project benchmarks (a 100,000-node
// leaf/spine of some 390,000 ports), and keep a simulator under about
// 1.5 GiB; beyond them a fabric is a typing mistake (fattree:k=2,n=21 is
// 22 million switches) and would end in the runtime's out-of-memory abort.
const (
	// MaxNodes bounds the nodes of a topology.
	MaxNodes = 1 << 17
	// MaxPorts bounds its ports, counting every switch's port 0.
	MaxPorts = 1 << 20
)

// ErrTooLarge is matched (errors.Is) by every *SizeError.
var ErrTooLarge = errors.New("topology too large")

// SizeError is a topology beyond MaxNodes or MaxPorts, with what it would
// have been and an estimate of the memory a simulator of it would need.
type SizeError struct {
	What     string // "fat tree k=2 n=21", a file name, ...
	Nodes    int64  // nodes it would have (at least, when it stopped early)
	Switches int64
	Ports    int64 // ports, port 0 of switches included
	// Bytes estimates the memory of a simulator of it (EstimateMemory).
	Bytes int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s: %s nodes (%s switches) and %s ports would need about %s; the limit is %s nodes and %s ports (topo.MaxNodes, topo.MaxPorts)",
		e.What, count(e.Nodes), count(e.Switches), count(e.Ports), units.IEC(e.Bytes), count(MaxNodes), count(MaxPorts))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// Per-object costs of a simulated fabric once its SM has run, measured on
// generated fabrics (sim.New and RunSM, heap in use): each port's state
// and counters, each node's, and a byte per LID of a switch's forwarding
// table.
const (
	bytesPerPort = 640
	bytesPerNode = 1024
)

// EstimateMemory is roughly the memory a simulator of a fabric of that many
// nodes, switches and ports (switch port 0 included) needs once its SM has
// run: state and counters per port and node, and the switches' forwarding
// tables, a byte per LID (about one LID per node, at most 49,152).
func EstimateMemory(nodes, switches, ports int64) int64 {
	lids := min(nodes, 0xC000)
	return satAdd(satAdd(satMul(ports, bytesPerPort), satMul(nodes, bytesPerNode)), satMul(switches, lids))
}

// checkSize refuses a fabric of that many nodes, switches and ports when
// it passes MaxNodes or MaxPorts.
func checkSize(what string, nodes, switches, ports int64) error {
	if nodes <= MaxNodes && ports <= MaxPorts && nodes >= 0 && ports >= 0 {
		return nil
	}
	return &SizeError{What: what, Nodes: nodes, Switches: switches, Ports: ports, Bytes: EstimateMemory(nodes, switches, ports)}
}

// checkGenerated refuses a generated fabric that would pass the limits,
// from its shape alone: switches with switchPorts ports in all (port 0
// included), and end nodes on slots host ports, routers of them routers
// (of 2 ports) and the rest HCAs of hcaPorts ports.
func checkGenerated(what string, switches, switchPorts, slots, routers, hcaPorts int64) error {
	hcaPorts = max(hcaPorts, 1)
	hcas := max(slots-routers, 0) / hcaPorts
	nodes := satAdd(satAdd(switches, hcas), max(routers, 0))
	ports := satAdd(satAdd(switchPorts, satMul(hcas, hcaPorts+1)), satMul(max(routers, 0), 3))
	return checkSize(what, nodes, switches, ports)
}

// satMul and satAdd are non-negative arithmetic that stops at MaxInt64, for
// sizes that may be absurd.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// satPow is a^n, stopping at MaxInt64.
func satPow(a, n int64) int64 {
	switch {
	case n <= 0:
		return 1
	case a <= 1:
		return max(a, 0)
	}
	r := int64(1)
	for range n {
		if r = satMul(r, a); r == math.MaxInt64 {
			break
		}
	}
	return r
}

// count prints a count with thousands separators, "more than 9e18" when
// it saturated.
func count(n int64) string {
	if n == math.MaxInt64 {
		return "more than 9e18"
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
