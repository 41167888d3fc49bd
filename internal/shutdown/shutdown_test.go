package shutdown

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestRun: each signal cancels the context and gives 128 + its number;
// without a signal main's status stands.
func TestRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		code := Run(func(ctx context.Context) int {
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Error(err)
			}
			select {
			case <-ctx.Done():
				return 0
			case <-time.After(10 * time.Second):
				t.Errorf("%v: the context was not cancelled", sig)
				return 1
			}
		})
		if code != 128+int(sig) {
			t.Errorf("%v: exit %d, want %d", sig, code, 128+int(sig))
		}
	}
	if code := Run(func(context.Context) int { return 3 }); code != 3 {
		t.Errorf("no signal: exit %d, want 3", code)
	}
}

// TestRunSecondSignal: a main that ignores its context is left behind on
// a second signal.
func TestRunSecondSignal(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	code := Run(func(ctx context.Context) int {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-ctx.Done()
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		<-release // stuck, as a read of stdin would be
		return 0
	})
	if code != 128+int(syscall.SIGTERM) || time.Since(start) > Grace {
		t.Errorf("exit %d after %v, want %d at once", code, time.Since(start), 128+int(syscall.SIGTERM))
	}
}
