package sim

import (
	"sync"
	"testing"
	"time"
)

// The delivery queue runs entries by due time, those due together in the
// order given, and its goroutine ends when it is empty.
func TestDeliveryQueueOrder(t *testing.T) {
	q := &deliveryQueue{kick: make(chan struct{}, 1)}
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
		running := q.running
		q.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue's goroutine did not end")
		}
		time.Sleep(time.Millisecond)
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
