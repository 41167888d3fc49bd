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
// in an overflow list, so values beyond 128 buy nothing. PerTarget
// protects one node's management processor: a switch SMA serves MADs one
// at a time, and an SMA flooded beyond its queue drops them (IBA 13.4.7),
// which costs a whole timeout each.
//
// The defaults were measured with scripts/bench/ibnetdiscover.sh (its
// sweep row): discovery of a 10,270-node leaf-spine through fabricsim
// (5 us per hop, 20 us per SMA, 16 requests queued per SMA) on 2 cores,
// best of 2 per pair. Below 64 in flight the walk waits on the wire
// (-o 8: 5.5 s, 16: 4.2 s, 32: 3.3 s); from 64 with 4 per node on it is
// bound by the CPU of the ibsim protocol (64/4: 3.0 s, 128/4: 2.9 s,
// 128/8: 2.5 s, 256/4: 2.5 s, within the noise of a shared machine), the
// same as with the latency off. One per node is always slower (64/1:
// 4.0 s): a switch's PortInfo replies then come one round trip apart. So
// DefaultMaxInFlight is 64 and DefaultPerTarget 4, the smallest values on
// the plateau: 64 SMPs hide a round trip of up to about 2.5 ms at the
// 25,000 SMPs per second one core sustains, 4 per node keep a 36-port
// switch busy without filling a 16-deep SMA queue, and both leave head
// room below the kernel's 128 and the VL15 buffers of real switches.
// Raise MaxInFlight for fabrics with slower SMAs (many targets, each
// slow); raise PerTarget only for targets known to queue deeply (CA
// firmware, the SA).
//
// BUSY retries start at DefaultBusyBackoff (10 ms, a few SMA service
// times) and double up to DefaultMaxBackoff (1 s), at most DefaultRetries
// times; a job waiting to be retried gives up its slots.
package sched
