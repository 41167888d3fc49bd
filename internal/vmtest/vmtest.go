package vmtest

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
)

// The kernel series of the prepared guests (Options.Kernel).
const (
	// Kernel61 is Debian 12's kernel 6.1 with its iproute2 6.1 and
	// rdma-core 44 tools: the default.
	Kernel61 = "6.1"
	// Kernel612 is Debian 13's kernel 6.12 with its iproute2 6.15 and
	// rdma-core 56 tools (RDMA netlink monitoring, Linux 6.10+).
	Kernel612 = "6.12"
)

// Kernels lists every guest, oldest first.
var Kernels = []string{Kernel61, Kernel612}

// Paths of the prepared VMs, relative to the module root;
// scripts/floors/30-vm.sh writes them, "ready" last. Boots of every guest
// share one lock.
const (
	readyFile     = "ready"
	kernelFile    = "kernel/vmlinux"
	initramfsFile = "initramfs.cpio"
	runLockFile   = ".cache/vm/run.lock"
	qemuBinary    = "qemu-system-x86_64"
)

// cacheDir is where 30-vm.sh prepares the guest of a kernel series.
func cacheDir(kernel string) (string, error) {
	switch kernel {
	case "", Kernel61:
		return ".cache/vm", nil
	case Kernel612:
		return ".cache/vm-6.12", nil
	}
	return "", fmt.Errorf("no guest with kernel %q (there are %s)", kernel, strings.Join(Kernels, ", "))
}

// DefaultTimeout bounds one VM run (boot, test, power-off) when Options.Timeout
// is zero. TCG boots take several seconds on an idle machine and several
// times that on a loaded one.
const DefaultTimeout = 4 * time.Minute

// BootTimeout bounds the boot alone: from starting qemu to the harness's
// "vmtest: run" line. A boot takes about 6 s on an idle machine and 20 s on a
// loaded one; a guest that has not started its command after BootTimeout is
// hung in the kernel or in /init. RunWith then boots it once more, logging
// the first boot's console, because such a hang says nothing of the code
// under test; a second hang fails the test.
const BootTimeout = 2 * time.Minute

// bootTimeout is BootTimeout, shortened by the tests of the retry.
var bootTimeout = BootTimeout

// bootLogLines is how many console lines of the boot (before the command
// starts) are kept to explain a failed boot.
const bootLogLines = 80

// maxCmdline is the x86 kernel's COMMAND_LINE_SIZE including the final NUL.
const maxCmdline = 2048

// setupFailedStatus is what scripts/vm/init reports when it could not bring
// up the guest (a module, rxe0, the 9p share).
const setupFailedStatus = 125

// Options describe one VM run.
type Options struct {
	// Pkg is the package whose tests run in the guest: a path relative to
	// the module root ("./nldev") or a full import path inside the module.
	Pkg string
	// Kernel chooses the guest: Kernel61 (the default when empty) or
	// Kernel612. The guest's tests find it in $VMTEST_KERNEL.
	Kernel string
	// Args are passed to the guest test binary ("-test.run=TestX", "-test.v").
	// None may be empty or contain a newline.
	Args []string
	// Env holds extra environment variables for the guest test binary.
	Env map[string]string
	// ExtraBinaries are built with `go build` and put beside the test binary
	// in $VMTEST_DIR: file name -> package (relative path or import path).
	ExtraBinaries map[string]string
	// ExtraFiles are copied beside the test binary: file name -> host path.
	ExtraFiles map[string]string
	// CGO builds with cgo (dynamically linked against the guest's glibc
	// and whatever C libraries the package links); the default is
	// CGO_ENABLED=0, a static binary, or one linked against glibc alone
	// when the package loads libibverbs at run time (package verbs).
	CGO bool
	// Timeout bounds the VM run, build excluded; zero means DefaultTimeout.
	// It is cut to fit the test's own deadline.
	Timeout time.Duration
}

// Result is the outcome of one VM run as seen from the host.
type Result struct {
	// Status is the guest command's exit status; -1 when the guest never
	// reported one.
	Status int
	// SetupError is the harness's reason when it could not prepare the guest.
	SetupError string
	// QEMUExit is qemu's own exit code (2*status+1 through isa-debug-exit).
	QEMUExit int
	// Elapsed is the wall-clock time from starting qemu to its exit.
	Elapsed time.Duration
	// Started reports whether the guest's command started (the harness's
	// "vmtest: run" line).
	Started bool
	// BootConsole holds the last console lines printed before the command
	// started (the kernel's boot messages); they are not logged on success.
	BootConsole []string
}

// BootHangError reports a guest that did not start its command within
// BootTimeout.
type BootHangError struct {
	Timeout time.Duration
	PID     int
	// Console is the tail of what the guest printed during the boot.
	Console []string
}

func (e *BootHangError) Error() string {
	return fmt.Sprintf("the VM did not start its command within %v of booting; qemu (pid %d) was killed", e.Timeout, e.PID)
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "    (nothing)"
	}
	return "    " + strings.Join(lines, "\n    ")
}

// bootPanicked says whether a guest's kernel panicked before its command
// started: a failed boot, not a test result. qemu's multi-threaded TCG
// (no KVM) now and then trips the kernel's live code patching at boot
// ("Oops: int3" in a static key's site), and a second boot goes through.
func bootPanicked(res Result) bool {
	if res.Started {
		return false
	}
	for _, l := range res.BootConsole {
		if strings.Contains(l, "Kernel panic - not syncing") {
			return true
		}
	}
	return false
}

// bootNote is the boot console of a guest that failed before its command
// started, for the failure message.
func bootNote(res Result) string {
	if res.Started {
		return ""
	}
	return "; the boot console:\n" + indent(res.BootConsole)
}

// Available reports whether the default guest (Kernel61) is prepared and
// qemu is installed.
func Available() bool { return KernelAvailable(Kernel61) }

// KernelAvailable reports whether the guest of a kernel series is prepared
// and qemu is installed.
func KernelAvailable(kernel string) bool {
	_, err := assets(kernel)
	return err == nil
}

// Run runs the tests of pkg inside the VM with args and fails t if they fail.
// When the VM is not prepared it skips t (locally) or fails it (in CI) via
// floor.Need.
func Run(t testing.TB, pkg string, args ...string) {
	t.Helper()
	RunWith(t, Options{Pkg: pkg, Args: args})
}

// RunWith is Run with options.
func RunWith(t testing.TB, o Options) {
	t.Helper()
	a, err := assets(o.Kernel)
	if err != nil {
		floor.Need(t, false, fmt.Sprintf("kernel test VM %s (%v)", a.kernelSeries, err))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if d, ok := deadline(t); ok {
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	dir := t.TempDir()
	testBin, err := build(ctx, a.root, dir, o)
	if err != nil {
		t.Fatalf("vmtest: %v", err)
	}
	unlock, err := lockRun(ctx, filepath.Join(a.root, runLockFile))
	if err != nil {
		t.Fatalf("vmtest: %v", err)
	}
	defer unlock()

	cwd, err := pkgDir(a.root, o.Pkg)
	if err != nil {
		t.Fatalf("vmtest: %v", err)
	}
	// The guest's tests decide as the host's do whether a missing peer
	// skips or fails (internal/floor): pass CI on.
	env := map[string]string{"VMTEST_KERNEL": a.kernelSeries}
	for k, v := range o.Env {
		env[k] = v
	}
	if floor.InCI() {
		env["CI"] = "true"
	}
	var res Result
	for attempt := 1; ; attempt++ {
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		if d, ok := ctx.Deadline(); ok {
			// Leave the test a little time to report after killing qemu.
			if left := time.Until(d) - 5*time.Second; left < timeout {
				timeout = left
			}
		}
		if timeout <= 0 {
			t.Fatalf("vmtest: no time left before the test deadline to boot the VM")
		}
		inv := invocation{
			assets:      a,
			shared:      dir,
			argv:        append([]string{testBin}, guestArgs(o.Args, timeout)...),
			env:         env,
			cwd:         cwd,
			timeout:     timeout,
			bootTimeout: bootTimeout,
		}
		res, err = boot(ctx, t, inv, func(line string) {
			t.Helper()
			t.Log(line)
		})
		var hung *BootHangError
		if attempt == 1 && errors.As(err, &hung) {
			t.Logf("vmtest: %v; booting it once more. The first boot's console:\n%s", err, indent(hung.Console))
			continue
		}
		if attempt == 1 && err != nil && bootPanicked(res) {
			t.Logf("vmtest: the guest kernel panicked while booting, before its command started; booting it once more. The first boot's console:\n%s", indent(res.BootConsole))
			continue
		}
		if err != nil {
			if errors.As(err, &hung) {
				t.Fatalf("vmtest: %s in the VM: %v, twice; the console:\n%s", o.Pkg, err, indent(hung.Console))
			}
			t.Fatalf("vmtest: %s in the VM: %v%s", o.Pkg, err, bootNote(res))
		}
		break
	}
	switch {
	case res.SetupError != "" || res.Status == setupFailedStatus:
		t.Errorf("vmtest: the VM's harness failed to set up the guest: %s%s", res.SetupError, bootNote(res))
	case res.Status != 0:
		t.Errorf("vmtest: %s failed in the %s VM: exit status %d (after %v)", o.Pkg, a.kernelSeries, res.Status, res.Elapsed.Round(time.Millisecond))
	default:
		t.Logf("vmtest: %s passed in the %s VM in %v", o.Pkg, a.kernelSeries, res.Elapsed.Round(time.Millisecond))
	}
}

// vmAssets are the absolute paths of a prepared VM.
type vmAssets struct {
	kernelSeries                  string
	root, qemu, kernel, initramfs string
}

func assets(kernel string) (vmAssets, error) {
	a := vmAssets{kernelSeries: kernel}
	if a.kernelSeries == "" {
		a.kernelSeries = Kernel61
	}
	dir, err := cacheDir(kernel)
	if err != nil {
		return a, err
	}
	if a.root, err = floor.ModuleRoot(); err != nil {
		return a, err
	}
	dir = filepath.Join(a.root, dir)
	a.kernel = filepath.Join(dir, kernelFile)
	a.initramfs = filepath.Join(dir, initramfsFile)
	for _, f := range []string{filepath.Join(dir, readyFile), a.kernel, a.initramfs} {
		if _, err := os.Stat(f); err != nil {
			return a, fmt.Errorf("not prepared: %w", err)
		}
	}
	if a.qemu, err = exec.LookPath(qemuBinary); err != nil {
		return a, fmt.Errorf("looking for qemu: %w", err)
	}
	return a, nil
}

func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading go.mod: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", errors.New("reading go.mod: no module line")
}

// pkgDir turns a package given as "./x/y" or "<module>/x/y" into the slash
// path of its directory relative to the module root.
func pkgDir(root, pkg string) (string, error) {
	rel := pkg
	if !strings.HasPrefix(pkg, "./") && pkg != "." {
		mod, err := modulePath(root)
		if err != nil {
			return "", err
		}
		switch {
		case pkg == mod:
			rel = "."
		case strings.HasPrefix(pkg, mod+"/"):
			rel = strings.TrimPrefix(pkg, mod+"/")
		default:
			return "", fmt.Errorf("package %q is not a ./relative path or inside module %s", pkg, mod)
		}
	}
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsAny(rel, " \t\n") {
		return "", fmt.Errorf("package %q: directory %q is outside the module or has white space", pkg, rel)
	}
	return rel, nil
}

// build compiles the guest test binary and the extra binaries into dir and
// copies the extra files there; it returns the test binary's file name.
func build(ctx context.Context, root, dir string, o Options) (string, error) {
	if o.Pkg == "" {
		return "", errors.New("Options.Pkg is empty")
	}
	if _, err := pkgDir(root, o.Pkg); err != nil {
		return "", err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("looking for the go command: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cgo := "CGO_ENABLED=0"
	if o.CGO {
		cgo = "CGO_ENABLED=1"
	}
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), cgo, "GOOS=linux", "GOARCH=amd64")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	const testBin = "guest.test"
	if err := run("test", "-c", "-tags", "vmguest", "-o", filepath.Join(dir, testBin), o.Pkg); err != nil {
		return "", err
	}
	for _, name := range sortedKeys(o.ExtraBinaries) {
		if err := checkName(name); err != nil {
			return "", err
		}
		if err := run("build", "-buildvcs=false", "-o", filepath.Join(dir, name), o.ExtraBinaries[name]); err != nil {
			return "", err
		}
	}
	for _, name := range sortedKeys(o.ExtraFiles) {
		if err := checkName(name); err != nil {
			return "", err
		}
		if err := copyFile(o.ExtraFiles[name], filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	return testBin, nil
}

func checkName(name string) error {
	if name == "" || name == "guest.test" || strings.ContainsAny(name, "/\n") || name == "." || name == ".." {
		return fmt.Errorf("extra file name %q is not a plain file name (or is reserved)", name)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying extra file: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return fmt.Errorf("copying extra file: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return fmt.Errorf("copying extra file: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// guestArgs gives the guest test binary its own -test.timeout below the VM's,
// so a hung guest test panics with its goroutines' stacks before qemu is killed.
func guestArgs(args []string, vmTimeout time.Duration) []string {
	for _, a := range args {
		if strings.HasPrefix(a, "-test.timeout") || strings.HasPrefix(a, "--test.timeout") {
			return args
		}
	}
	guest := vmTimeout - vmTimeout/4
	return append(append([]string(nil), args...), "-test.timeout="+guest.Round(time.Second).String())
}

func deadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// lockRun takes the lock that serialises VM boots across test processes.
// flock is released by the kernel if the process dies.
func lockRun(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("making the VM lock's directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the VM lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another test's VM to finish (%s): %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// invocation is one boot of the VM.
type invocation struct {
	assets  vmAssets
	shared  string            // host directory shared as /mnt/vmtest
	argv    []string          // argv[0] is a file name in shared
	env     map[string]string // exported for the command
	cwd     string            // relative to the module root, "" for /tmp
	timeout time.Duration     // the whole run
	// bootTimeout bounds the time to the "vmtest: run" line; zero or not
	// below timeout means none of its own.
	bootTimeout time.Duration
}

// kernelCmdline encodes the command for scripts/vm/init: base64 keeps
// arguments with spaces intact and the line free of characters the kernel's
// parser would split on.
func kernelCmdline(argv []string, env map[string]string, cwd string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("no command")
	}
	for _, a := range argv {
		if a == "" || strings.Contains(a, "\n") {
			return "", fmt.Errorf("argument %q is empty or has a newline", a)
		}
	}
	var envLines []string
	for _, k := range sortedKeys(env) {
		if k == "" || strings.ContainsAny(k, "=\n") || strings.Contains(env[k], "\n") {
			return "", fmt.Errorf("environment variable %q has an empty name, a '=' in its name or a newline", k)
		}
		envLines = append(envLines, k+"="+env[k])
	}
	parts := []string{
		// loglevel=6: the boot's messages reach the console, where boot
		// keeps them to explain a hung or failed boot; /init turns the
		// console back to errors and worse (as "quiet") before the command runs.
		"console=ttyS0", "loglevel=6", "panic=-1", "mitigations=off",
		"vmtest.argv=" + base64.StdEncoding.EncodeToString([]byte(strings.Join(argv, "\n")+"\n")),
	}
	if len(envLines) > 0 {
		parts = append(parts, "vmtest.env="+base64.StdEncoding.EncodeToString([]byte(strings.Join(envLines, "\n")+"\n")))
	}
	if cwd != "" {
		if strings.ContainsAny(cwd, " \t\n") {
			return "", fmt.Errorf("working directory %q has white space", cwd)
		}
		parts = append(parts, "vmtest.cwd="+cwd)
	}
	line := strings.Join(parts, " ")
	if len(line) >= maxCmdline {
		return "", fmt.Errorf("kernel command line of %d bytes exceeds the kernel's %d: shorten the arguments or environment", len(line), maxCmdline-1)
	}
	return line, nil
}

func qemuArgs(inv invocation, cmdline string) []string {
	accel, cpu := "tcg", "max"
	if a := os.Getenv("RDMAKIT_VM_ACCEL"); a != "" {
		accel, cpu = a, "host"
	}
	return []string{
		"-nodefaults", "-no-user-config", "-no-reboot",
		"-accel", accel, "-cpu", cpu, "-smp", "2", "-m", "1024",
		"-display", "none", "-monitor", "none", "-serial", "stdio",
		"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
		"-virtfs", "local,path=" + inv.shared + ",mount_tag=vmtest,security_model=none,readonly=on",
		"-virtfs", "local,path=" + inv.assets.root + ",mount_tag=vmsrc,security_model=none,readonly=on,multidevs=remap",
		"-kernel", inv.assets.kernel,
		"-initrd", inv.assets.initramfs,
		"-append", cmdline,
	}
}

var (
	exitLine  = regexp.MustCompile(`^vmtest: exit ([0-9]+)$`)
	runLine   = regexp.MustCompile(`^vmtest: run `)
	setupLine = regexp.MustCompile(`^vmtest: setup failed: (.*)$`)
)

// boot runs one VM and passes each console line to logLine. It returns an
// error only when the VM could not run or did not finish; a guest that ran
// and failed is reported in the Result.
func boot(ctx context.Context, t testing.TB, inv invocation, logLine func(string)) (Result, error) {
	t.Helper()
	res := Result{Status: -1}
	cmdline, err := kernelCmdline(inv.argv, inv.env, inv.cwd)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, inv.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, inv.assets.qemu, qemuArgs(inv, cmdline)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, fmt.Errorf("starting qemu: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting qemu: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			// The test ended (Fatal, panic) before qemu: kill it by PID.
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})

	var started, hung atomic.Bool
	if inv.bootTimeout > 0 && inv.bootTimeout < inv.timeout {
		watchdog := time.AfterFunc(inv.bootTimeout, func() {
			if !started.Load() {
				hung.Store(true)
				cancel()
			}
		})
		defer watchdog.Stop()
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if m := exitLine.FindStringSubmatch(line); m != nil {
			res.Status, _ = strconv.Atoi(m[1])
		}
		if m := setupLine.FindStringSubmatch(line); m != nil {
			res.SetupError = m[1]
		}
		if !started.Load() {
			if runLine.MatchString(line) {
				started.Store(true)
			} else if !strings.HasPrefix(line, "vmtest: ") {
				// A kernel message of the boot: kept, not logged.
				if len(res.BootConsole) == bootLogLines {
					res.BootConsole = append(res.BootConsole[:0], res.BootConsole[1:]...)
				}
				res.BootConsole = append(res.BootConsole, line)
				continue
			}
		}
		logLine(line)
	}
	// A console line longer than the scanner's buffer ends the scan early;
	// drain the rest so qemu never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	close(exited)
	res.Elapsed = time.Since(start)
	if cmd.ProcessState != nil {
		res.QEMUExit = cmd.ProcessState.ExitCode()
	}
	res.Started = started.Load()
	if hung.Load() {
		return res, &BootHangError{Timeout: inv.bootTimeout, PID: pid, Console: res.BootConsole}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("the VM did not finish within %v; qemu (pid %d) was killed: %w", inv.timeout, pid, ctx.Err())
	}
	return res, verdict(res, werr, stderr.String())
}

// verdict checks that qemu's exit code agrees with the status the guest
// printed. isa-debug-exit makes qemu exit with 2*status+1, so qemu's own
// error exit (1) looks like status 0; the printed "vmtest: exit" line tells
// them apart.
func verdict(res Result, werr error, stderr string) error {
	if res.Status < 0 {
		if res.QEMUExit == 0 {
			return fmt.Errorf("the guest stopped without reporting a status (kernel panic or /init died?)%s", stderrNote(stderr))
		}
		return fmt.Errorf("qemu failed (%v) before the guest reported a status%s", werr, stderrNote(stderr))
	}
	if want := ((res.Status&127)<<1 | 1) & 0xff; res.QEMUExit != want {
		return fmt.Errorf("the guest printed exit status %d but qemu exited with %d, not %d%s", res.Status, res.QEMUExit, want, stderrNote(stderr))
	}
	return nil
}

func stderrNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "; qemu said: " + s
}
