package promfabric

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
)

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting open files: %v", err)
	}
	return len(ents)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// 1,000 scrapes over HTTP, a tenth of them with a node dead, leave no
// goroutine, file descriptor or heap behind.
func TestNoGrowthOver1000Scrapes(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(5*time.Millisecond), fabric.WithRetries(0))
	e := newExporter(t, f, Options{})
	srv := httptest.NewServer(e.Handler(nil))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	const n = 1000
	for range 50 {
		get()
	}
	g0, fd0, h0 := runtime.NumGoroutine(), openFDs(t), heapInUse()
	for i := range n {
		switch i {
		case n - n/10:
			if err := f.Sim.SetNodeDead("hca7", true); err != nil {
				t.Fatal(err)
			}
		case n - 1:
			if err := f.Sim.SetNodeDead("hca7", false); err != nil {
				t.Fatal(err)
			}
		}
		get()
	}
	if s := e.stats.scrapes; s < n {
		t.Fatalf("%d scrapes", s)
	}
	// Goroutines that end a moment after their work (timers, the HTTP
	// connection's) get that moment.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > g0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	g1, fd1, h1 := runtime.NumGoroutine(), openFDs(t), heapInUse()
	t.Logf("goroutines %d -> %d, fds %d -> %d, heap in use %d KiB -> %d KiB", g0, g1, fd0, fd1, h0>>10, h1>>10)
	if g1 > g0 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines grew from %d to %d:\n%s", g0, g1, buf[:runtime.Stack(buf, true)])
	}
	if fd1 > fd0 {
		t.Errorf("file descriptors grew from %d to %d", fd0, fd1)
	}
	// The heap holds the topology and one scrape's results; a leak of a
	// few hundred bytes a scrape would show as hundreds of KiB.
	if h1 > h0+1<<20 {
		t.Errorf("heap in use grew from %d KiB to %d KiB", h0>>10, h1>>10)
	}
}
