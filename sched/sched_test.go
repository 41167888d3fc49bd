package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/sched"
)

var errBusy = errors.New("busy")

func isBusy(err error) bool { return errors.Is(err, errBusy) }

// gauge measures the peak of a concurrent count.
type gauge struct{ cur, peak atomic.Int64 }

func (g *gauge) enter() {
	v := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if v <= p || g.peak.CompareAndSwap(p, v) {
			return
		}
	}
}
func (g *gauge) leave() { g.cur.Add(-1) }

// checkNoLeak fails the test if goroutines started during it outlive it.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				n := runtime.Stack(buf, true)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:n])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestLimitsNeverExceeded runs jobs in goroutines, and then goroutine and
// async jobs mixed, which share the same limits.
func TestLimitsNeverExceeded(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		t.Run(fmt.Sprint("mixed=", mixed), func(t *testing.T) {
			checkNoLeak(t)
			const maxInFlight, perTarget, keys, jobs = 16, 3, 12, 3000
			s := sched.New(context.Background(), sched.Options{MaxInFlight: maxInFlight, PerTarget: perTarget})
			var global gauge
			perKey := make([]gauge, keys)
			var ran atomic.Int64
			for i := 0; i < jobs; i++ {
				k := i % keys
				enter := func() {
					global.enter()
					perKey[k].enter()
				}
				leave := func() {
					perKey[k].leave()
					global.leave()
					ran.Add(1)
				}
				if mixed && i%3 != 0 {
					s.SubmitAsync(fmt.Sprint(k), "async", func(_ context.Context, done func(error)) {
						enter()
						later(func(error) {
							leave()
							done(nil)
						}, nil)
					})
					continue
				}
				s.Submit(fmt.Sprint(k), "job", func(ctx context.Context) error {
					enter()
					time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
					leave()
					return nil
				})
			}
			// 12 keys x 3 per key can fill 16 slots: the limit must be reached.
			checkLimits(t, s, &global, perKey, maxInFlight, perTarget, ran.Load, jobs)
		})
	}
}

// checkLimits waits for s and checks that jobs jobs ran (ran did), that
// the peak of global reached maxInFlight and did not pass it, and that no
// key's passed perTarget.
func checkLimits(t *testing.T, s *sched.Scheduler, global *gauge, perKey []gauge, maxInFlight, perTarget int, ran func() int64, jobs int) {
	t.Helper()
	failed, err := s.Wait()
	if err != nil || len(failed) != 0 {
		t.Fatalf("Wait: %v, %v", failed, err)
	}
	if n := ran(); n != int64(jobs) {
		t.Fatalf("%d jobs ran, want %d", n, jobs)
	}
	if p := global.peak.Load(); p != int64(maxInFlight) {
		t.Errorf("global peak %d, want the limit %d reached and not passed", p, maxInFlight)
	}
	for k := range perKey {
		if p := perKey[k].peak.Load(); p > int64(perTarget) {
			t.Errorf("key %d peak %d > per-target limit %d", k, p, perTarget)
		}
	}
	if st := s.Stats(); st.PeakInFlight > maxInFlight || st.Done != jobs || st.Submitted != jobs {
		t.Errorf("stats %+v", st)
	}
}

func TestPerTargetLimitOneKey(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 50, PerTarget: 2})
	var g gauge
	for i := 0; i < 200; i++ {
		s.Submit("switch", "PortInfo", func(ctx context.Context) error {
			g.enter()
			defer g.leave()
			time.Sleep(50 * time.Microsecond)
			return nil
		})
	}
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if p := g.peak.Load(); p != 2 {
		t.Errorf("one key: peak %d, want 2", p)
	}
}

// treeSize counts the nodes of a tree of the given fanout and depth.
func treeSize(fanout, depth int) int64 {
	size := int64(0)
	for d, n := 0, int64(1); d <= depth; d, n = d+1, n*int64(fanout) {
		size += n
	}
	return size
}

// TestBFSSubmitFromJobs is the shape of a discovery: each job submits the
// work its "reply" reveals, and Wait sees the whole tree through; with
// async jobs, the completion submits, from the goroutine that completes
// it.
func TestBFSSubmitFromJobs(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprint("async=", async), func(t *testing.T) {
			checkNoLeak(t)
			const fanout, depth = 4, 6
			s := sched.New(context.Background(), sched.Options{MaxInFlight: 8, PerTarget: 2})
			var count atomic.Int64
			var submit func(path string, d int) bool
			// reveal is a job's work: count it, submit its children.
			reveal := func(path string, d int) error {
				count.Add(1)
				for i := 1; d < depth && i <= fanout; i++ {
					if !submit(fmt.Sprintf("%s,%d", path, i), d+1) {
						return errors.New("submit refused")
					}
				}
				return nil
			}
			submit = func(path string, d int) bool {
				if async {
					return s.SubmitAsync(path, "NodeInfo "+path, func(_ context.Context, done func(error)) {
						later(func(error) { done(reveal(path, d)) }, nil)
					})
				}
				return s.Submit(path, "NodeInfo "+path, func(context.Context) error { return reveal(path, d) })
			}
			submit("0", 0)
			failed, err := s.Wait()
			if err != nil || len(failed) != 0 {
				t.Fatalf("Wait: %v, %v", failed, err)
			}
			if want := treeSize(fanout, depth); count.Load() != want {
				t.Errorf("%d jobs ran, want %d", count.Load(), want)
			}
			if s.Submit("x", "late", func(context.Context) error { return nil }) || s.SubmitAsync("x", "late", func(_ context.Context, done func(error)) { done(nil) }) {
				t.Error("Submit after Wait accepted work")
			}
		})
	}
}

// TestSubmissionOrder: with one slot, jobs run exactly in the order they
// were submitted, which keeps a BFS breadth first.
func TestSubmissionOrder(t *testing.T) {
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 1})
	var mu sync.Mutex
	var order []int
	for i := 0; i < 50; i++ {
		s.Submit(fmt.Sprint(i%5), "j", func(context.Context) error {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			return nil
		})
	}
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v", order)
		}
	}
}

func TestErrorsCollected(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 4})
	errBad := errors.New("bad status")
	var ok atomic.Int64
	for i := 0; i < 100; i++ {
		s.Submit(fmt.Sprint(i), fmt.Sprint("job ", i), func(context.Context) error {
			if i%10 == 3 {
				return fmt.Errorf("node %d: %w", i, errBad)
			}
			ok.Add(1)
			return nil
		})
	}
	failed, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 10 || ok.Load() != 90 {
		t.Fatalf("%d failures, %d successes", len(failed), ok.Load())
	}
	for _, f := range failed {
		if !errors.Is(f, errBad) || f.Attempts != 1 || f.Key == "" {
			t.Errorf("failure %+v", f)
		}
	}
	if st := s.Stats(); st.Failed != 10 || st.Done != 100 {
		t.Errorf("stats %+v", st)
	}
}

func TestBusyRetriedWithBackoff(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{
		Busy: isBusy, Retries: 3, BusyBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond,
	})
	var tries atomic.Int64
	var times []time.Time
	var mu sync.Mutex
	s.Submit("sw", "recovers", func(context.Context) error {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if tries.Add(1) < 3 {
			return errBusy
		}
		return nil
	})
	var always atomic.Int64
	s.Submit("sw2", "always busy", func(context.Context) error {
		always.Add(1)
		return fmt.Errorf("SMA: %w", errBusy)
	})
	errOther := errors.New("timeout")
	var other atomic.Int64
	s.Submit("sw3", "not busy", func(context.Context) error {
		other.Add(1)
		return errOther
	})
	failed, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if tries.Load() != 3 {
		t.Errorf("recovering job ran %d times, want 3", tries.Load())
	}
	if d := times[2].Sub(times[1]); d < 2*time.Millisecond {
		t.Errorf("second backoff %v, want at least 2ms (doubled)", d)
	}
	if always.Load() != 4 || other.Load() != 1 {
		t.Errorf("always-busy ran %d times (want 1+3), other %d (want 1)", always.Load(), other.Load())
	}
	if len(failed) != 2 {
		t.Fatalf("failures %v", failed)
	}
	for _, f := range failed {
		switch f.Name {
		case "always busy":
			if f.Attempts != 4 || !errors.Is(f, errBusy) {
				t.Errorf("%+v", f)
			}
		case "not busy":
			if f.Attempts != 1 || !errors.Is(f, errOther) {
				t.Errorf("%+v", f)
			}
		default:
			t.Errorf("unexpected failure %v", f)
		}
	}
	if st := s.Stats(); st.Retries != 5 {
		t.Errorf("retries %d, want 2+3", st.Retries)
	}
}

func TestCancellationStopsPromptly(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := sched.New(ctx, sched.Options{MaxInFlight: 8, Busy: isBusy, BusyBackoff: time.Hour, MaxBackoff: time.Hour})
	var started atomic.Int64
	// One job waits for a retry an hour away; it must not hold Wait up.
	s.Submit("b", "busy", func(context.Context) error { return errBusy })
	for i := 0; i < 10000; i++ {
		s.Submit(fmt.Sprint(i%100), "slow", func(ctx context.Context) error {
			started.Add(1)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Minute):
				return nil
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	cancel()
	failed, err := s.Wait()
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Errorf("Wait took %v after cancel", d)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait error %v, want context.Canceled", err)
	}
	if len(failed) != 0 {
		t.Errorf("cancelled jobs reported as failures: %d", len(failed))
	}
	if n := started.Load(); n > 8 {
		t.Errorf("%d slow jobs started with 8 slots", n)
	}
	st := s.Stats()
	if st.Canceled != 10001 || st.Done != st.Submitted {
		t.Errorf("stats %+v", st)
	}
	if s.Submit("x", "late", func(context.Context) error { return nil }) {
		t.Error("Submit after cancel accepted work")
	}
}

func TestProgress(t *testing.T) {
	var mu sync.Mutex
	var seen [][2]int
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 8, Progress: func(done, total int) {
		mu.Lock()
		seen = append(seen, [2]int{done, total})
		mu.Unlock()
	}})
	for i := 0; i < 300; i++ {
		s.Submit(fmt.Sprint(i%7), "j", func(context.Context) error { return nil })
	}
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	last := 0
	for _, p := range seen {
		if p[0] <= last || p[0] > p[1] {
			t.Fatalf("progress not increasing or beyond total: %v", seen)
		}
		last = p[0]
	}
	if last != 300 || seen[len(seen)-1][1] != 300 {
		t.Errorf("last progress %v, want 300 of 300", seen[len(seen)-1])
	}
}

func TestPanicReachesWait(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{})
	s.Submit("k", "boom", func(context.Context) error { panic("decoder bug") })
	defer func() {
		if v := recover(); v == nil {
			t.Error("Wait did not re-raise the job's panic")
		}
	}()
	s.Wait()
}

func TestWaitWithNothing(t *testing.T) {
	s := sched.New(context.Background(), sched.Options{})
	failed, err := s.Wait()
	if failed != nil || err != nil {
		t.Errorf("empty Wait: %v %v", failed, err)
	}
}

func BenchmarkOverhead(b *testing.B) {
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 64})
	for i := 0; i < b.N; i++ {
		s.Submit(fmt.Sprint(i%1000), "j", func(context.Context) error { return nil })
	}
	s.Wait()
}

// TestSubmissionOrderManyTargets: with one slot and thousands of jobs on
// random keys, queued before any can start, jobs still run exactly in
// submission order (the ready heap always yields the oldest head).
func TestSubmissionOrderManyTargets(t *testing.T) {
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 1})
	release := make(chan struct{})
	s.Submit("hold", "hold", func(context.Context) error { <-release; return nil })
	var order []int
	const jobs = 5000
	for i := range jobs {
		s.Submit(fmt.Sprint(rand.IntN(300)), "j", func(context.Context) error {
			order = append(order, i)
			return nil
		})
	}
	close(release)
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(order) != jobs {
		t.Fatalf("%d of %d jobs ran", len(order), jobs)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("job %d ran as number %d", v, i)
		}
	}
}
