// Package perf reads, judges and clears the performance counters of
// InfiniBand ports through their Performance Management agents (IBA
// chapter 16.1): PortCounters, PortCountersExtended and the error details,
// for one port, for all ports of a node (PortSelect 0xFF where the PMA has
// AllPortSelect, summed as the PMA would where it has not), and for every
// port of a fabric.
//
// Counters holds one port's reading by IBA counter name: 64-bit where the
// PMA has PortCountersExtended, else the narrow PortCounters width, with
// saturation (a narrow counter stops at all ones) told apart; data counters
// count 4-octet units, and Octets converts them. Diff and Rate give what a
// counter did between two readings, telling clears and wraps apart.
// Thresholds reads the threshold files of infiniband-diags' ibqueryerrors
// and python-rdma's ibcheck commands; Clear and ResetCounters send the
// PerformanceSets that clear counters.
//
// Sweep is the fabric-wide engine behind ibtool's ibqueryerrors, the
// exporter and the health check: it discovers the subnet (or takes one
// loaded from a cache) and reads every port's counters through package
// sched — many nodes at once, a few reads per node, each node's reads
// starting as soon as the discovery is done with it — streaming each
// node's result as it is complete, reporting what did not answer, bounded
// by its context.
//
// In docs/design.md's layers perf sits above subnet and sa and below the
// programs. See ExampleSweep.
package perf
