package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/sched"
)

// later calls done after a random few hundred microseconds on a timer's
// goroutine, as mad.Client.Start does with a reply.
func later(done func(error), err error) {
	time.AfterFunc(time.Duration(rand.IntN(300))*time.Microsecond, func() { done(err) })
}

// Jobs that end within their fn (a request refused before it is sent)
// start the next ones in a loop, not deeper and deeper in one stack, and
// keep submission order.
func TestAsyncDoneWithinFn(t *testing.T) {
	checkNoLeak(t)
	const jobs = 20000
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 1})
	// The first job holds the slot until all are queued: its done then
	// starts them all.
	release := make(chan func(error), 1)
	s.SubmitAsync("hold", "hold", func(_ context.Context, done func(error)) { release <- done })
	var order []int
	maxDepth := 0
	for i := range jobs {
		s.SubmitAsync(fmt.Sprint(i%5), "refused", func(ctx context.Context, done func(error)) {
			order = append(order, i)
			maxDepth = max(maxDepth, runtime.Callers(0, make([]uintptr, 512)))
			done(fmt.Errorf("job %d refused", i))
		})
	}
	(<-release)(nil)
	failed, err := s.Wait()
	if err != nil || len(failed) != jobs {
		t.Fatalf("Wait: %d failures, %v", len(failed), err)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("job %d ran as number %d", v, i)
		}
	}
	if maxDepth > 64 {
		t.Errorf("stack %d frames deep: jobs that end at once recurse", maxDepth)
	}
}

func TestAsyncBusyRetried(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{Busy: isBusy, Retries: 3, BusyBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	var tries, always atomic.Int64
	s.SubmitAsync("sw", "recovers", func(_ context.Context, done func(error)) {
		if tries.Add(1) < 3 {
			later(done, errBusy)
			return
		}
		later(done, nil)
	})
	s.SubmitAsync("sw2", "always busy", func(_ context.Context, done func(error)) {
		always.Add(1)
		done(fmt.Errorf("SMA: %w", errBusy))
	})
	failed, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if tries.Load() != 3 || always.Load() != 4 {
		t.Errorf("recovering job ran %d times (want 3), always-busy %d (want 4)", tries.Load(), always.Load())
	}
	if len(failed) != 1 || failed[0].Name != "always busy" || failed[0].Attempts != 4 || !errors.Is(failed[0], errBusy) {
		t.Errorf("failures %v", failed)
	}
}

func TestAsyncCancellation(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := sched.New(ctx, sched.Options{MaxInFlight: 8})
	var started atomic.Int64
	for i := range 5000 {
		s.SubmitAsync(fmt.Sprint(i%100), "slow", func(ctx context.Context, done func(error)) {
			started.Add(1)
			context.AfterFunc(ctx, func() { done(ctx.Err()) })
		})
	}
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	cancel()
	failed, err := s.Wait()
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Errorf("Wait took %v after cancel", d)
	}
	if !errors.Is(err, context.Canceled) || len(failed) != 0 {
		t.Errorf("Wait: %d failures, %v; want none and context.Canceled", len(failed), err)
	}
	if n := started.Load(); n > 8 {
		t.Errorf("%d slow jobs started with 8 slots", n)
	}
	if st := s.Stats(); st.Canceled != 5000 || st.Done != st.Submitted {
		t.Errorf("stats %+v", st)
	}
	if s.SubmitAsync("x", "late", func(_ context.Context, done func(error)) { done(nil) }) {
		t.Error("SubmitAsync after cancel accepted work")
	}
}

func TestAsyncPanicReachesWait(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{})
	s.SubmitAsync("k", "boom", func(context.Context, func(error)) { panic("decoder bug") })
	defer func() {
		v := recover()
		if s, _ := v.(string); !strings.Contains(s, "decoder bug") {
			t.Errorf("Wait re-raised %v, want the job's panic", v)
		}
	}()
	s.Wait()
}

func TestAsyncDoneTwicePanics(t *testing.T) {
	s := sched.New(context.Background(), sched.Options{})
	var once sync.Once
	seconds := make(chan any, 1)
	s.SubmitAsync("k", "twice", func(_ context.Context, done func(error)) {
		done(nil)
		once.Do(func() {
			defer func() { seconds <- recover() }()
			done(nil)
		})
	})
	if _, err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	// Wait returns at the first done; the second comes after it.
	second := <-seconds
	if msg, _ := second.(string); !strings.Contains(msg, "called done twice") {
		t.Errorf("second done: %v, want a panic naming the mistake", second)
	}
	if st := s.Stats(); st.Done != 1 {
		t.Errorf("stats %+v: the second done was counted", st)
	}
}

func BenchmarkAsyncOverhead(b *testing.B) {
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 64})
	for i := 0; i < b.N; i++ {
		s.SubmitAsync(fmt.Sprint(i%1000), "j", func(_ context.Context, done func(error)) { done(nil) })
	}
	s.Wait()
}

// SubmitAsync never starts fn on its caller's goroutine: a caller may
// submit while it holds a lock that fn takes.
func TestAsyncSubmitUnderCallersLock(t *testing.T) {
	checkNoLeak(t)
	s := sched.New(context.Background(), sched.Options{MaxInFlight: 4})
	var mu sync.Mutex
	var ran int
	mu.Lock()
	for i := range 100 {
		s.SubmitAsync(fmt.Sprint(i), "locks", func(_ context.Context, done func(error)) {
			mu.Lock()
			ran++
			mu.Unlock()
			done(nil)
		})
	}
	mu.Unlock()
	ch := make(chan struct{})
	go func() { s.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: a job started under its submitter's lock")
	}
	if ran != 100 {
		t.Errorf("%d of 100 ran", ran)
	}
}
