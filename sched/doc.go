// Package sched runs MAD work in parallel with bounds: a global limit on
// calls in flight and a limit per target (a key the caller chooses: a node
// GUID, a DR path prefix, a LID), retries with exponential backoff for
// calls the target answered BUSY, cancellation through a context, per-call
// errors collected rather than fatal, and a progress callback.
//
// It sits between mad and subnet/perf in docs/design.md's layers. It knows
// nothing of MADs: a job is a func(context.Context) error, typically one
// mad.Client RPC and the bookkeeping of its reply, and a Classifier says
// which errors mean "busy, try again later" (for mad, errors.Is(err,
// mad.ErrBusy)), so sched does not depend on mad. Timeouts and their
// retries stay in mad.Client, which owns the per-MAD timer; sched only
// decides when a call may start.
//
// A job may also be asynchronous (SubmitAsync): it starts its RPC with
// mad.Client.Start and returns, and calls done from the RPC's callback.
// It then holds no goroutine while its MAD is out, and a reply costs no
// switch to a waiting goroutine: the client's reader runs the callback
// and the scheduler's accounting, while a goroutine or two of the
// scheduler start the jobs that the freed slots allow. On a sweep of a
// large fabric, with hundreds of MADs in flight, that is a good part of
// the CPU spent per MAD.
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
// (max_wire_smps); those numbers come from fabrics of the 2000s. The
// kernel does not limit what waits for a reply: ib_mad queues 128 sends
// per QP (module parameter send_queue_size), but a send leaves that queue
// when it is on the wire, long before its reply comes. PerTarget protects
// one node's management processor: a switch SMA serves MADs one at a
// time, and an SMA flooded beyond its queue drops them (IBA 13.4.7),
// which costs a whole timeout each.
//
// The defaults were measured on a 10,270-node leaf-spine served by
// fabricsim with latency (1 us per hop, 20 us per SMA and agent) over the
// ibsim protocol on 2 cores, with ibqueryerrors (discovery and the
// counter sweep; the latency row of scripts/bench.sh, best of 3): 64 in
// flight 2.3 s, 128 1.7-2.0 s, 256 1.6-1.8 s, 512 1.7-1.8 s, 1024
// 1.5-1.8 s. The simulator's replies come at the granularity of its
// timers (about 1 ms when it is idle), so the wire must hold a
// millisecond's worth of MADs: from 256 on the run is bound by the CPU of
// both ends instead, and more only fills queues. One per node is always
// slower than four (a switch's PortInfo replies then come one round trip
// apart). So DefaultMaxInFlight is 256 and DefaultPerTarget 4: 4 per node
// keep a 36-port switch busy without filling a 16-deep SMA queue, and a
// real fabric with round trips of tens of microseconds reaches its
// plateau long before 256. Raise PerTarget only for targets known to
// queue deeply (CA firmware, the SA).
//
// BUSY retries start at DefaultBusyBackoff (10 ms, a few SMA service
// times) and double up to DefaultMaxBackoff (1 s), at most DefaultRetries
// times; a job waiting to be retried gives up its slots.
//
// ExampleScheduler is a parallel directed-route discovery written with it.
package sched
