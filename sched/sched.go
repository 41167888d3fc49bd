package sched

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the zero values of Options; doc.go says why.
const (
	DefaultMaxInFlight = 256
	DefaultPerTarget   = 4
	DefaultRetries     = 4
	DefaultBusyBackoff = 10 * time.Millisecond
	DefaultMaxBackoff  = time.Second
)

// Async jobs are started by one goroutine (drain), and by another for
// each drainBacklog waiting beyond it, up to maxDrainers or GOMAXPROCS:
// a start is mostly the send, a system call, and one goroutine cannot
// keep hundreds of MADs in flight on a loaded machine.
const (
	drainBacklog = 16
	maxDrainers  = 4
)

// Func is one unit of work, normally one RPC and what is done with its
// reply. It must return soon after ctx is done.
type Func func(ctx context.Context) error

// AsyncFunc is one unit of work that starts and returns at once, holding
// no goroutine while it waits (mad.Client.Start): it calls done exactly
// once when the work is over, from any goroutine, also from within the
// AsyncFunc itself. It must call done soon after ctx is done.
type AsyncFunc func(ctx context.Context, done func(error))

// Options configures a Scheduler. A field left zero takes its Default
// value; so does a negative one, except Retries, where negative means
// never.
type Options struct {
	// MaxInFlight bounds the jobs running at once (ibnetdiscover's
	// --outstanding_smps); DefaultMaxInFlight when zero or negative.
	MaxInFlight int
	// PerTarget bounds the jobs running at once on one key;
	// DefaultPerTarget when zero or negative.
	PerTarget int
	// Busy says whether an error means the target is busy and the call
	// should be repeated later (for mad: errors.Is(err, mad.ErrBusy)).
	// Nil: nothing is retried.
	Busy func(error) bool
	// Retries is how often a busy call is repeated: DefaultRetries when
	// zero, never when negative.
	Retries int
	// BusyBackoff is the first wait before a repeat; each further one
	// doubles it up to MaxBackoff. Zero or negative: DefaultBusyBackoff
	// and DefaultMaxBackoff.
	BusyBackoff time.Duration
	MaxBackoff  time.Duration
	// Progress, if set, is called after every job that finished (not one
	// that is to be retried) with the jobs finished and submitted so far.
	// Calls are serialised and done never decreases; it must not block
	// for long, and it may call Submit.
	Progress func(done, total int)
}

// CallError is the failure of one job: its key and name as submitted, how
// many times it ran, and its last error.
type CallError struct {
	Key, Name string
	Attempts  int
	Err       error
}

func (e *CallError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("%s (%s): %v (after %d attempts)", e.Name, e.Key, e.Err, e.Attempts)
	}
	return fmt.Sprintf("%s (%s): %v", e.Name, e.Key, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Stats counts what a Scheduler did.
type Stats struct {
	Submitted int // jobs submitted
	Done      int // jobs finished, successfully or not
	Failed    int // finished with an error (a CallError)
	Canceled  int // dropped or failed because the context ended
	Retries   int // repeats after BUSY
	// PeakInFlight is the most jobs that ran at once.
	PeakInFlight int
}

// Scheduler runs submitted jobs within its limits until Wait returns. It
// is used once: submit, then Wait (jobs may submit more meanwhile).
type Scheduler struct {
	ctx    context.Context
	cancel context.CancelFunc
	opt    Options

	mu          sync.Mutex
	idle        *sync.Cond // signalled when pending drops to 0
	targets     map[string]*target
	ready       readyHeap // targets with queued jobs and a free slot
	seq         uint64
	running     int
	pending     int // queued + running + waiting for a retry
	timers      map[*job]*time.Timer
	failures    []*CallError
	stats       Stats
	stopped     bool // the context ended: queued work is dropped
	panicked    any
	stopCtx     func() bool
	starts      []start // async jobs taken, to be started outside mu
	startHead   int     // starts[:startHead] are started
	draining    int     // goroutines starting them (drain)
	maxDrainers int     // at most this many

	progressMu sync.Mutex
	reported   int
}

type job struct {
	key, name string
	fn        Func
	async     AsyncFunc
	seq       uint64
	attempts  int
}

type start struct {
	t *target
	j *job
}

type target struct {
	key     string
	queue   []*job // ordered by seq
	head    uint64 // queue[0].seq, kept here for the heap's comparisons
	running int
	index   int // in ready; -1 when not there
}

// readyHeap is a min-heap of targets by the sequence number of their
// first queued job, written out rather than through container/heap: a
// discovery's scheduler holds thousands of targets and does a few heap
// operations per job, and the interface calls cost more than the
// comparisons.
type readyHeap []*target

func (h *readyHeap) push(t *target) {
	t.index = len(*h)
	*h = append(*h, t)
	h.up(t.index)
}

// remove takes out the target at i.
func (h *readyHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	if i != n {
		h.swap(i, n)
	}
	t := old[n]
	old[n] = nil
	*h = old[:n]
	t.index = -1
	if i != n {
		h.fix(i)
	}
}

// fix restores the order after the target at i changed its head.
func (h *readyHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h readyHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h readyHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].head <= h[i].head {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves the target at i down to its place and reports whether it
// moved.
func (h readyHeap) down(i int) bool {
	start, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].head < h[l].head {
			c = r
		}
		if h[i].head <= h[c].head {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}

// New returns a Scheduler whose jobs run under ctx: when ctx ends, queued
// jobs are dropped, running ones see their context done, and Wait returns
// once they have.
func New(ctx context.Context, o Options) *Scheduler {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.PerTarget <= 0 {
		o.PerTarget = DefaultPerTarget
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.BusyBackoff <= 0 {
		o.BusyBackoff = DefaultBusyBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	cctx, cancel := context.WithCancel(ctx)
	s := &Scheduler{
		ctx:     cctx,
		cancel:  cancel,
		opt:     o,
		targets: map[string]*target{},
		timers:  map[*job]*time.Timer{},
	}
	s.maxDrainers = min(runtime.GOMAXPROCS(0), maxDrainers)
	s.idle = sync.NewCond(&s.mu)
	s.stopCtx = context.AfterFunc(cctx, s.stop)
	return s
}

// Submit queues fn to run on key (the per-target limit applies per key);
// name identifies it in errors. It is safe from any goroutine, including
// running jobs. It returns false, and drops fn, once the context has
// ended.
func (s *Scheduler) Submit(key, name string, fn Func) bool {
	return s.submit(&job{key: key, name: name, fn: fn})
}

// SubmitAsync is Submit for a job that holds no goroutine while it waits:
// the scheduler starts fn on a goroutine of its own (see drain), never on
// the caller's, so that the caller may hold locks that fn takes, and
// accounts for the job when fn calls done.
func (s *Scheduler) SubmitAsync(key, name string, fn AsyncFunc) bool {
	return s.submit(&job{key: key, name: name, async: fn})
}

func (s *Scheduler) submit(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		s.stats.Submitted++
		s.stats.Canceled++
		return false
	}
	s.seq++
	j.seq = s.seq
	s.stats.Submitted++
	s.pending++
	s.enqueueLocked(j)
	s.dispatchLocked()
	return true
}

func (s *Scheduler) enqueueLocked(j *job) {
	t := s.targets[j.key]
	if t == nil {
		t = &target{key: j.key, index: -1}
		s.targets[j.key] = t
	}
	// A retried job keeps its place: insert by sequence number.
	i := sort.Search(len(t.queue), func(i int) bool { return t.queue[i].seq > j.seq })
	t.queue = append(t.queue, nil)
	copy(t.queue[i+1:], t.queue[i:])
	t.queue[i] = j
	s.fixLocked(t)
}

// fixLocked puts t into, moves it within, or takes it out of the ready
// heap after its queue or running count changed.
func (s *Scheduler) fixLocked(t *target) {
	eligible := len(t.queue) > 0 && t.running < s.opt.PerTarget
	if len(t.queue) > 0 {
		t.head = t.queue[0].seq
	}
	switch {
	case eligible && t.index < 0:
		s.ready.push(t)
	case eligible:
		s.ready.fix(t.index)
	case t.index >= 0:
		s.ready.remove(t.index)
	}
	if len(t.queue) == 0 && t.running == 0 {
		delete(s.targets, t.key)
	}
}

// dispatchLocked starts what the limits allow: a goroutine for each job,
// and for async jobs a goroutine that starts them all (drain), unless one
// is at it.
func (s *Scheduler) dispatchLocked() {
	for {
		t, j := s.takeLocked()
		if j == nil {
			break
		}
		if j.async != nil {
			s.starts = append(s.starts, start{t, j})
			continue
		}
		go s.run(t, j)
	}
	if n := len(s.starts) - s.startHead; n > 0 && (s.draining == 0 || n >= drainBacklog && s.draining < s.maxDrainers) {
		s.draining++
		go s.drain()
	}
}

// nextLocked is takeLocked for a goroutine that has just finished a job:
// async jobs go to starts (the dispatchLocked that follows has them
// started), and the next job, if any, is returned for the goroutine to
// run.
func (s *Scheduler) nextLocked() (*target, *job) {
	for {
		t, j := s.takeLocked()
		if j == nil || j.async == nil {
			return t, j
		}
		s.starts = append(s.starts, start{t, j})
	}
}

// drain starts the async jobs taken so far, on a goroutine of the
// scheduler's: not on the goroutine that submitted them, which may hold
// locks that they take, nor on the one whose done freed their slots (the
// MAD client's reader, for mad.Client.Start), which then goes back to
// the replies while this one sends. A drain runs until there are none
// (more run side by side when many wait: drainBacklog): an async job that
// ends at once, within its fn, adds the next to starts instead of
// starting it deeper in the stack. The caller has counted the drain in
// draining.
func (s *Scheduler) drain() {
	s.mu.Lock()
	for s.startHead < len(s.starts) {
		st := s.starts[s.startHead]
		s.starts[s.startHead] = start{}
		if s.startHead++; s.startHead == len(s.starts) {
			s.starts, s.startHead = s.starts[:0], 0
		}
		s.mu.Unlock()
		s.startOne(st.t, st.j)
		s.mu.Lock()
	}
	s.draining--
	s.mu.Unlock()
}

// startOne starts an async job; its done accounts for it as runOne does
// for a job that returned. A panic in fn is Wait's, as for any job.
func (s *Scheduler) startOne(t *target, j *job) {
	var called atomic.Bool
	done := func(err error) {
		if called.Swap(true) {
			panic(fmt.Sprintf("sched: job %s (%s) called done twice", j.name, j.key))
		}
		if nt, nj := s.account(t, j, err); nj != nil {
			go s.run(nt, nj)
		}
	}
	if err := s.call(j, done); err != nil && !called.Load() {
		done(err)
	}
}

// takeLocked starts the next job in order if the limits allow one more:
// the caller runs it.
func (s *Scheduler) takeLocked() (*target, *job) {
	if s.running >= s.opt.MaxInFlight || len(s.ready) == 0 {
		return nil, nil
	}
	if s.stopped || s.ctx.Err() != nil {
		// stop is about to drop the queue (it runs after the context
		// ended, on its own goroutine): start nothing more meanwhile.
		return nil, nil
	}
	t := s.ready[0]
	j := t.queue[0]
	t.queue[0] = nil
	t.queue = t.queue[1:]
	t.running++
	s.running++
	s.stats.PeakInFlight = max(s.stats.PeakInFlight, s.running)
	s.fixLocked(t)
	j.attempts++
	return t, j
}

// run runs j and then, while there is more ready work than running
// goroutines, the next job too: a worker that stays alive keeps its grown
// stack and costs no goroutine start per job, which on a sweep of a large
// fabric is a good part of the CPU spent per MAD.
func (s *Scheduler) run(t *target, j *job) {
	for j != nil {
		t, j = s.runOne(t, j)
	}
}

// runOne runs one job and accounts for it; it returns the next job this
// goroutine should run, if any.
func (s *Scheduler) runOne(t *target, j *job) (*target, *job) {
	return s.account(t, j, s.call(j, nil))
}

// account records the end of a job that returned err: a repeat when it
// was busy, else its result and progress. It returns a job for the
// calling goroutine to run next, if one may start; async ones it leaves
// in starts.
func (s *Scheduler) account(t *target, j *job, err error) (*target, *job) {
	s.mu.Lock()
	t.running--
	s.running--
	if err != nil && !s.stopped && s.opt.Busy != nil && s.opt.Busy(err) && j.attempts <= s.opt.Retries {
		s.stats.Retries++
		s.retryLocked(j)
		s.fixLocked(t)
		nt, nj := s.nextLocked()
		s.dispatchLocked()
		s.mu.Unlock()
		return nt, nj
	}
	s.finishLocked(j, err)
	s.fixLocked(t)
	nt, nj := s.nextLocked()
	s.dispatchLocked()
	done, total := s.stats.Done, s.stats.Submitted
	s.mu.Unlock()
	if s.opt.Progress != nil {
		// Finishing jobs race to here: report only news, in order.
		s.progressMu.Lock()
		if done > s.reported {
			s.reported = done
			s.opt.Progress(done, max(total, done))
		}
		s.progressMu.Unlock()
	}
	// Only now may Wait return: no callback runs after it.
	s.mu.Lock()
	s.pending--
	if s.pending == 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
	return nt, nj
}

// call runs the job (an async one with done), turning a panic into one
// re-raised by Wait so that it is not lost in a goroutine.
func (s *Scheduler) call(j *job, done func(error)) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.mu.Lock()
			if s.panicked == nil {
				s.panicked = fmt.Sprintf("sched: job %s (%s) panicked: %v\n%s", j.name, j.key, v, debug.Stack())
			}
			s.mu.Unlock()
			s.cancel()
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	if j.async != nil {
		j.async(s.ctx, done)
		return nil
	}
	return j.fn(s.ctx)
}

// finishLocked accounts for a finished job; the caller drops it from
// pending.
func (s *Scheduler) finishLocked(j *job, err error) {
	s.stats.Done++
	switch {
	case err == nil:
	case s.stopped || s.ctx.Err() != nil:
		s.stats.Canceled++
	default:
		s.stats.Failed++
		s.failures = append(s.failures, &CallError{Key: j.key, Name: j.name, Attempts: j.attempts, Err: err})
	}
}

func (s *Scheduler) retryLocked(j *job) {
	d := s.opt.BusyBackoff
	for i := 1; i < j.attempts && d < s.opt.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.opt.MaxBackoff)
	s.timers[j] = time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.timers[j]; !ok {
			return // stop already accounted for it
		}
		delete(s.timers, j)
		s.enqueueLocked(j)
		s.dispatchLocked()
	})
}

// stop runs when the context ends: queued and waiting jobs are dropped.
func (s *Scheduler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for j, tm := range s.timers {
		tm.Stop()
		delete(s.timers, j)
		s.pending--
		s.stats.Canceled++
		s.stats.Done++
	}
	for _, t := range s.targets {
		n := len(t.queue)
		s.pending -= n
		s.stats.Canceled += n
		s.stats.Done += n
		t.queue = nil
		if t.index >= 0 {
			s.ready.remove(t.index)
		}
		if t.running == 0 {
			delete(s.targets, t.key)
		}
	}
	if s.pending == 0 {
		s.idle.Broadcast()
	}
}

// Wait blocks until no job is queued, running or waiting for a retry, or
// the context ended and the running jobs returned. It returns the failed
// jobs in the order they finished, and the context's error if it ended the
// run early. A job that panicked makes Wait panic with its value and
// stack. After Wait, Submit accepts no more work.
func (s *Scheduler) Wait() ([]*CallError, error) {
	s.mu.Lock()
	for s.pending > 0 {
		s.idle.Wait()
	}
	s.stopped = true
	p := s.panicked
	failures := s.failures
	s.mu.Unlock()
	s.stopCtx()
	err := s.ctx.Err()
	s.cancel()
	if p != nil {
		panic(p)
	}
	return failures, err
}

// Stats reports what has happened so far.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}
