// Package sched runs MAD work in parallel with bounds: a global limit on
// calls in flight and a limit per target (a key the caller chooses: a node
// GUID, a DR path prefix, a LID), retries with exponential backoff for
// calls the target answered BUSY, cancellation through a context, per-call
// errors collected rather than fatal, and a progress callback.
//
// It sits between mad and subnet/perf in DESIGN.md's layers. It knows
// nothing of MADs: a job is a func(context.Context) error, typically one
// mad.Client RPC and the bookkeeping of its reply, and a Classifier says
// which errors mean "busy, try again later" (for mad, errors.Is(err,
// mad.ErrBusy)), so sched does not depend on mad. Timeouts and their
// retries stay in mad.Client, which owns the per-MAD timer; sched only
// decides when a call may start.
//
// A breadth-first discovery submits the start node's work, and each job
// submits the work its reply reveals (Submit is safe from inside running
// jobs); Wait returns once no job is running, queued or waiting to be
// retried. Jobs start in submission order as far as the limits allow, so a
// BFS stays breadth first.
//
// # Choosing the limits
//
// MaxInFlight bounds the SMPs on the wire from this port. libibnetdisc
// keeps 2 (DEFAULT_MAX_SMP_ON_WIRE), python-rdma 4 and OpenSM 4
// (max_wire_smps); those numbers come from fabrics of the 2000s. What
// actually limits a modern fabric is the kernel: ib_mad queues 128 sends
// per QP by default (module parameter send_queue_size) and parks the rest
// in an overflow list, so values up to about 100 are useful and beyond
// 128 buy nothing. Discovery's critical path is depth x round trip, so
// once MaxInFlight exceeds the width of the BFS front, more does not help;
// DefaultMaxInFlight is 64.
//
// PerTarget protects one node's management processor: a switch SMA
// serves MADs one at a time, and an SMA flooded beyond its queue drops or
// answers BUSY (IBA 13.4.7). Discovery asks a switch for NodeDescription,
// SwitchInfo and PortInfo of every port at once; DefaultPerTarget is 4,
// OpenSM's whole-subnet figure, which keeps a 36-port switch busy without
// overrunning it. Raise MaxInFlight for latency-bound fabrics (many
// targets, each slow); raise PerTarget only for targets known to queue
// deeply (CA firmware, the SA).
//
// BUSY retries start at DefaultBusyBackoff (10 ms, a few SMA service
// times) and double up to DefaultMaxBackoff (1 s), at most DefaultRetries
// times; a job waiting to be retried gives up its slots.
//
// These defaults are provisional until the discovery benchmark (fabricsim
// with latency) measures them; the benchmark note will say what changed.
package sched
