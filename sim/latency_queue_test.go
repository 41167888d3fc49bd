package sim

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// The delivery queue runs entries by due time, those due together in the
// order given, an earlier one as soon as it is due though a later one is
// waited for; with nothing queued its goroutine sleeps without a
// deadline.
func TestDeliveryQueueOrder(t *testing.T) {
	q := &deliveryQueue{}
	t.Cleanup(q.close)
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	add := func(d time.Duration, v int) {
		wg.Add(1)
		q.add(d, func() {
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
			wg.Done()
		})
	}
	add(30*time.Millisecond, 4)
	for i := 1; i <= 3; i++ {
		add(10*time.Millisecond, i) // due together, in this order
	}
	add(0, 0) // earlier than all: the waiting goroutine is woken for it
	wg.Wait()
	want := []int{0, 1, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("ran %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		idle := q.idle
		q.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue's goroutine did not go idle")
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkDeliveryLatency measures how late the queue runs an entry
// with nothing else queued, as one MAD in flight is: ns/op is the mean
// time from add to run, late-us its mean lateness, p90-late-us the 90th
// percentile's. The latency model is faithful when the lateness is a
// small part of the delay (22 us is the bench's SMA round trip).
func BenchmarkDeliveryLatency(b *testing.B) {
	for _, d := range []time.Duration{0, 5 * time.Microsecond, 22 * time.Microsecond, 200 * time.Microsecond, 2 * time.Millisecond} {
		b.Run(d.String(), func(b *testing.B) {
			q := &deliveryQueue{}
			b.Cleanup(q.close)
			done := make(chan time.Time, 1)
			late := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				q.add(d, func() { done <- time.Now() })
				at := <-done
				late = append(late, at.Sub(start)-d)
				// The next MAD goes out after the reply was handled.
			}
			b.StopTimer()
			slices.Sort(late)
			var sum time.Duration
			for _, l := range late {
				sum += l
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(len(late)), "late-us")
			b.ReportMetric(float64(late[len(late)*9/10].Nanoseconds())/1000, "p90-late-us")
		})
	}
}

// Many entries at random delays come out sorted.
func TestDeliveryQueueHeap(t *testing.T) {
	q := &deliveryQueue{}
	for i := 0; i < 1000; i++ {
		q.push(dueMAD{due: int64((i * 7919) % 1000), seq: uint64(i)})
	}
	last := dueMAD{due: -1}
	for len(q.heap) > 0 {
		x := q.pop()
		if x.before(last) {
			t.Fatalf("%+v after %+v", x, last)
		}
		last = x
	}
}
