package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// RunCTimeout bounds one C tool run by RunC. Under ibsim every MAD is
// answered or bounced at once, so a tool that takes this long hangs.
const RunCTimeout = 60 * time.Second

// RunC runs a libibumad program (ibnetdiscover, smpquery, perfquery,
// saquery, ...) of sim's Release as a client of sim attached to node
// simHost (the simulator's default node when empty), under libumad2sim, in
// a private temporary working directory, and returns what it printed and
// its exit code. A run that does not finish within RunCTimeout is killed and fails
// the test.
func RunC(t testing.TB, sim *IBSim, simHost string, argv ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	return release(sim.Release).RunC(t, sim, simHost, argv...)
}

// RunC runs a libibumad program of this release as a client of sim, as
// RunC does, whichever release's ibsim (or fabricsim) sim is: infiniband-diags
// 56 can run against Debian 12's ibsim, which tells a change of the diags
// from a change of the simulator.
func (r *Release) RunC(t testing.TB, sim *IBSim, simHost string, argv ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	r.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunCTimeout)
	defer cancel()
	stdout, stderr, exitCode, err := r.RunCContext(ctx, sim, simHost, argv...)
	if err != nil {
		t.Fatalf("RunC %q: %v\nstdout:\n%s\nstderr:\n%s", argv, err, tail(stdout, 2000), tail(stderr, 2000))
	}
	return stdout, stderr, exitCode
}

// RunCContext is RunC without a testing.TB: err reports a program that
// could not start or that ctx stopped (it is killed by PID then);
// exitCode is the program's own status otherwise.
func RunCContext(ctx context.Context, sim *IBSim, simHost string, argv ...string) (stdout, stderr string, exitCode int, err error) {
	return release(sim.Release).RunCContext(ctx, sim, simHost, argv...)
}

// RunCContext is Release.RunC without a testing.TB, as RunCContext is.
func (r *Release) RunCContext(ctx context.Context, sim *IBSim, simHost string, argv ...string) (stdout, stderr string, exitCode int, err error) {
	if len(argv) == 0 {
		return "", "", -1, errors.New("no program given")
	}
	if simHost != "" {
		if err := checkName(simHost); err != nil {
			return "", "", -1, err
		}
	}
	bin, err := r.LookPath(argv[0])
	if err != nil {
		return "", "", -1, err
	}
	env, err := r.clientEnv(sim.envOver(os.Environ()))
	if err != nil {
		return "", "", -1, err
	}
	// umad2sim builds its fake sysfs in ./sys-<pid>.
	dir, err := os.MkdirTemp("", "rdmakit-runc-")
	if err != nil {
		return "", "", -1, err
	}
	defer os.RemoveAll(dir)

	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if simHost != "" {
		cmd.Env = append(cmd.Env, "SIM_HOST="+simHost)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	stdout, stderr = o.String(), e.String()
	if ctx.Err() != nil {
		return stdout, stderr, -1, fmt.Errorf("%s: %w", argv[0], ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout, stderr, 0, nil
	case errors.As(err, &exit):
		return stdout, stderr, exit.ExitCode(), nil
	}
	return stdout, stderr, -1, fmt.Errorf("%s: %w", argv[0], err)
}
