package testbed

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OpenSM is a running OpenSM attached to an ibsim simulator through
// libumad2sim. It stays up, so it is also the fabric's SA.
type OpenSM struct {
	// Node is the simulator node it is attached to (SIM_HOST).
	Node string
	// Dir is its working directory, cache and temporary directory;
	// LogFile is its log.
	Dir     string
	LogFile string
	Cmd     *exec.Cmd

	exited chan struct{}
}

// StartOpenSM starts OpenSM (of sim's Release) on node hostNode of sim and waits until it has
// brought the subnet up ("SUBNET UP" in its log): LIDs are assigned,
// forwarding tables programmed, ports Active. It runs with -d2 so that
// every log message is flushed at once. The process is stopped (SIGTERM,
// then SIGKILL by PID) when the test ends.
func StartOpenSM(t testing.TB, sim *IBSim, hostNode string) *OpenSM {
	t.Helper()
	rel := release(sim.Release)
	rel.Require(t)
	if err := checkName(hostNode); err != nil {
		t.Fatalf("StartOpenSM: %v", err)
	}
	bin, err := rel.LookPath("opensm")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sm := &OpenSM{Node: hostNode, Dir: dir, LogFile: filepath.Join(dir, "opensm.log")}
	for _, d := range []string{"cache", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-d2", "-f", sm.LogFile)
	// umad2sim builds its fake sysfs in ./sys-<pid>: the working directory
	// must be writable and private.
	cmd.Dir = dir
	env, err := rel.clientEnv(sim.envOver(os.Environ()))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(env,
		"SIM_HOST="+hostNode,
		"OSM_CACHE_DIR="+filepath.Join(dir, "cache"),
		"OSM_TMP_DIR="+filepath.Join(dir, "tmp"),
	)
	out := newNotifyBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting opensm: %v", err)
	}
	sm.Cmd = cmd
	sm.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(sm.exited)
	}()
	t.Cleanup(func() {
		// SIGTERM lets umad2sim send DISCONNECT and free the simulator's
		// client slot; SIGKILL if it does not go.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-sm.exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-sm.exited
		}
		if t.Failed() {
			t.Logf("opensm on %q: output:\n%s\nlog:\n%s", hostNode, tail(out.String(), 2000), tail(sm.Log(), 4000))
		}
	})
	if err := sm.waitUp(); err != nil {
		t.Fatalf("opensm on %q (%s): %v\noutput:\n%s\nlog:\n%s", hostNode, sim.name(), err, tail(out.String(), 2000), tail(sm.Log(), 4000))
	}
	return sm
}

func (sm *OpenSM) waitUp() error {
	deadline := time.After(OpenSMStartTimeout)
	for {
		if strings.Contains(sm.Log(), "SUBNET UP") {
			return nil
		}
		select {
		case <-sm.exited:
			if strings.Contains(sm.Log(), "SUBNET UP") {
				return errors.New("exited after bringing the subnet up")
			}
			return errors.New("exited before the subnet came up")
		case <-deadline:
			return fmt.Errorf("no SUBNET UP within %v", OpenSMStartTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Log returns OpenSM's log so far.
func (sm *OpenSM) Log() string {
	b, _ := os.ReadFile(sm.LogFile)
	return string(b)
}

// PID is the OpenSM process ID.
func (sm *OpenSM) PID() int { return sm.Cmd.Process.Pid }

// Running reports whether OpenSM has not exited.
func (sm *OpenSM) Running() bool {
	select {
	case <-sm.exited:
		return false
	default:
		return true
	}
}
