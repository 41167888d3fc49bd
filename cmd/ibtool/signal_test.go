package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

const sigFabric = `
Switch 4 "S1"
[1] "H1"[1]
[2] "H2"[1]

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]
`

// buildIBTool builds this command into the test's temporary directory.
func buildIBTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ibtool")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// attached counts the clients ibsim lists.
func attached(t *testing.T, sim *testbed.IBSim) int {
	t.Helper()
	out, err := sim.Console("Attached")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(out, "Client ")
}

// TestSignalsFreeIBSimSlot kills `ibtool --fabric ibsim:H1 ibping -S` (an
// SM client of ibsim 0.10, which has 10 slots and frees one only on
// DISCONNECT) with SIGTERM, SIGHUP or SIGINT, 20 times: each exits
// 128+signal and leaves no client behind, and the simulator takes an SM
// client on that node afterwards.
func TestSignalsFreeIBSimSlot(t *testing.T) {
	testbed.Require(t)
	bin := buildIBTool(t)
	sim := testbed.StartIBSim(t, sigFabric)
	env := sim.ClientEnv()
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT}
	for i := range 20 {
		sig := sigs[i%len(sigs)]
		cmd := exec.Command(bin, "--fabric", "ibsim:H1", "ibping", "-S")
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for deadline := time.Now().Add(15 * time.Second); attached(t, sim) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: ibping -S never attached: %s", i+1, stderr.String())
			}
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("kill %d (%v): %v, want exit %d; stderr: %s", i+1, sig, err, 128+int(sig), stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("kill %d (%v): ibtool still running after 10 s", i+1, sig)
		}
		if n := attached(t, sim); n != 0 {
			t.Fatalf("kill %d (%v): ibsim still lists %d clients", i+1, sig, n)
		}
	}
	// ibsim is still usable: an SM client on H1 and a query from H2.
	cmd := exec.Command(bin, "--fabric", "ibsim:H1", "ibping", "-S")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL); _ = cmd.Wait() })
	q := exec.Command(bin, "--fabric", "ibsim:H2", "smpquery", "-D", "nodeinfo", "0")
	q.Env = env
	if out, err := q.CombinedOutput(); err != nil || !strings.Contains(string(out), "NodeType:") {
		t.Errorf("smpquery after the kills: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(15 * time.Second); attached(t, sim) != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the last ibping -S did not attach alone")
		}
	}
	if !sim.Running() {
		t.Error("ibsim exited")
	}
}
