//go:build !vmguest

package vmtest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
)

// TestRun boots each guest with this package's guest tests (guest_test.go),
// which check the contract of doc.go from inside.
func TestRun(t *testing.T) {
	for _, k := range Kernels {
		t.Run(k, func(t *testing.T) {
			floor.Need(t, KernelAvailable(k), "kernel test VM "+k+" (scripts/floors/30-vm.sh)")
			notes := filepath.Join(t.TempDir(), "notes.txt")
			if err := os.WriteFile(notes, []byte("extra file\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			const probe = "two words=with equals"
			RunWith(t, Options{
				Pkg:           "./internal/vmtest",
				Kernel:        k,
				Args:          []string{"-test.v", "-test.run=^TestGuest(RXE|SIW|Harness|CgoVerbs|Kernel)$", "-vmtest.probe=" + probe},
				Env:           map[string]string{"VMTEST_PROBE": probe},
				ExtraBinaries: map[string]string{"vmhello": "./internal/vmtest/testdata/vmhello", "vmverbs": "./internal/vmtest/testdata/vmverbs"},
				ExtraFiles:    map[string]string{"notes.txt": notes},
				CGO:           true,
			})
		})
	}
}

// TestRunUnknownKernel: a guest that does not exist is an error, not a
// boot of another one.
func TestRunUnknownKernel(t *testing.T) {
	if KernelAvailable("5.10") {
		t.Fatal("a 5.10 guest is reported available")
	}
	if _, err := assets("5.10"); err == nil || !strings.Contains(err.Error(), "no guest with kernel") {
		t.Fatalf("assets(5.10) = %v", err)
	}
}

// TestRunReportsGuestFailure checks that a guest test failing on purpose
// fails the host test, with the guest's message in its log.
func TestRunReportsGuestFailure(t *testing.T) {
	floor.Need(t, Available(), "kernel test VM (scripts/floors/30-vm.sh)")
	r := &recorder{TB: t}
	r.run(func() { Run(r, "./internal/vmtest", "-test.v", "-test.run=^TestGuestFailOnPurpose$", "-vmtest.fail") })
	if !r.failed {
		t.Fatalf("Run did not fail for a failing guest test; log:\n%s", r.text())
	}
	for _, want := range []string{"failing on purpose (-vmtest.fail)", "exit status 1"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("log lacks %q:\n%s", want, r.text())
		}
	}
}

// TestRunKillsHungVM gives the VM less time than a boot takes and checks
// that Run fails and that qemu is gone afterwards.
func TestRunKillsHungVM(t *testing.T) {
	floor.Need(t, Available(), "kernel test VM (scripts/floors/30-vm.sh)")
	r := &recorder{TB: t}
	start := time.Now()
	r.run(func() {
		RunWith(r, Options{Pkg: "./internal/vmtest", Args: []string{"-test.run=^TestGuestRXE$"}, Timeout: 2 * time.Second})
	})
	if !r.failed || !strings.Contains(r.text(), "did not finish within 2s") {
		t.Fatalf("Run did not report the timeout; log:\n%s", r.text())
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("Run took %v to give up on a 2s VM", took)
	}
	m := regexp.MustCompile(`qemu \(pid ([0-9]+)\) was killed`).FindStringSubmatch(r.text())
	if m == nil {
		t.Fatalf("no qemu pid in %q", r.text())
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("qemu pid %d still exists after Run (kill(0): %v)", pid, err)
	}
}

// TestBootReportsSetupFailure asks the harness for a command that is not
// there and checks that the harness's own failure comes back as such.
func TestBootReportsSetupFailure(t *testing.T) {
	floor.Need(t, Available(), "kernel test VM (scripts/floors/30-vm.sh)")
	a, err := assets(Kernel61)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	res, err := boot(t.Context(), t, invocation{
		assets:  a,
		shared:  t.TempDir(),
		argv:    []string{"no-such-binary"},
		timeout: DefaultTimeout,
	}, func(l string) { lines = append(lines, l) })
	if err != nil {
		t.Fatalf("boot: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if res.Status != setupFailedStatus || !strings.Contains(res.SetupError, "no-such-binary") {
		t.Errorf("result %+v, want status %d and a setup error naming the binary\n%s", res, setupFailedStatus, strings.Join(lines, "\n"))
	}
}

// recorder is a testing.TB that records failures instead of failing the
// test it wraps; everything else (TempDir, Cleanup, Name) goes to that test.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	failed  bool
	skipped bool
	lines   []string
}

func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (r *recorder) add(fail bool, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || fail
	r.lines = append(r.lines, strings.TrimRight(s, "\n"))
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

func (r *recorder) Helper()                         {}
func (r *recorder) Log(a ...any)                    { r.add(false, fmt.Sprintln(a...)) }
func (r *recorder) Logf(f string, a ...any)         { r.add(false, fmt.Sprintf(f, a...)) }
func (r *recorder) Error(a ...any)                  { r.add(true, fmt.Sprintln(a...)) }
func (r *recorder) Errorf(f string, a ...any)       { r.add(true, fmt.Sprintf(f, a...)) }
func (r *recorder) Fail()                           { r.add(true, "Fail") }
func (r *recorder) Failed() bool                    { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recorder) FailNow()                        { r.Fail(); runtime.Goexit() }
func (r *recorder) Fatal(a ...any)                  { r.Error(a...); runtime.Goexit() }
func (r *recorder) Fatalf(f string, a ...any)       { r.Errorf(f, a...); runtime.Goexit() }
func (r *recorder) Skip(a ...any)                   { r.skipped = true; r.Log(a...); runtime.Goexit() }
func (r *recorder) Skipf(f string, a ...any)        { r.skipped = true; r.Logf(f, a...); runtime.Goexit() }
func (r *recorder) SkipNow()                        { r.skipped = true; runtime.Goexit() }
func (r *recorder) Skipped() bool                   { return r.skipped }
func (r *recorder) Setenv(k, v string)              { r.TB.Setenv(k, v) }
func (r *recorder) Deadline() (d time.Time, _ bool) { return d, false }

func TestKernelCmdline(t *testing.T) {
	line, err := kernelCmdline([]string{"guest.test", "-test.run=^TestX$", "-x=a b"}, map[string]string{"B": "2 3", "A": "1"}, "internal/vmtest")
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			params[k] = v
		}
	}
	decode := func(k string) string {
		b, err := base64.StdEncoding.DecodeString(params[k])
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return string(b)
	}
	if got, want := decode("vmtest.argv"), "guest.test\n-test.run=^TestX$\n-x=a b\n"; got != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
	if got, want := decode("vmtest.env"), "A=1\nB=2 3\n"; got != want {
		t.Errorf("env = %q, want %q", got, want)
	}
	if got := params["vmtest.cwd"]; got != "internal/vmtest" {
		t.Errorf("cwd = %q", got)
	}
	if params["console"] != "ttyS0" {
		t.Errorf("no serial console in %q", line)
	}

	bad := []struct {
		name string
		argv []string
		env  map[string]string
		cwd  string
	}{
		{"no command", nil, nil, ""},
		{"empty argument", []string{"x", ""}, nil, ""},
		{"newline in argument", []string{"x", "a\nb"}, nil, ""},
		{"equals in env name", []string{"x"}, map[string]string{"A=B": "1"}, ""},
		{"newline in env value", []string{"x"}, map[string]string{"A": "1\n2"}, ""},
		{"space in cwd", []string{"x"}, nil, "a b"},
		{"too long", []string{"x", strings.Repeat("y", maxCmdline)}, nil, ""},
	}
	for _, c := range bad {
		if _, err := kernelCmdline(c.argv, c.env, c.cwd); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPkgDir(t *testing.T) {
	root, err := floor.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modulePath(root)
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"./internal/vmtest":      "internal/vmtest",
		"./internal/vmtest/":     "internal/vmtest",
		".":                      ".",
		mod:                      ".",
		mod + "/internal/vmtest": "internal/vmtest",
	}
	for in, want := range good {
		if got, err := pkgDir(root, in); err != nil || got != want {
			t.Errorf("pkgDir(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"../x", "./a/../../x", "example.com/other", "./a b"} {
		if got, err := pkgDir(root, in); err == nil {
			t.Errorf("pkgDir(%q) = %q, want an error", in, got)
		}
	}
}

func TestGuestArgs(t *testing.T) {
	got := guestArgs([]string{"-test.v"}, 4*time.Minute)
	if want := []string{"-test.v", "-test.timeout=3m0s"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("guestArgs = %q, want %q", got, want)
	}
	own := []string{"-test.timeout=10s"}
	if got := guestArgs(own, time.Minute); len(got) != 1 {
		t.Errorf("guestArgs overrode the caller's timeout: %q", got)
	}
}

func TestVerdict(t *testing.T) {
	werr := errors.New("exit status 3")
	cases := []struct {
		name string
		res  Result
		ok   bool
	}{
		{"pass", Result{Status: 0, QEMUExit: 1}, true},
		{"guest failure", Result{Status: 1, QEMUExit: 3}, true},
		{"killed by signal", Result{Status: 137, QEMUExit: 19}, true},
		{"qemu error looks like status 0", Result{Status: -1, QEMUExit: 1}, false},
		{"powered off without status", Result{Status: -1, QEMUExit: 0}, false},
		{"disagreement", Result{Status: 0, QEMUExit: 3}, false},
	}
	for _, c := range cases {
		if err := verdict(c.res, werr, "qemu: oops"); (err == nil) != c.ok {
			t.Errorf("%s: verdict = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestBuildRejectsBadOptions(t *testing.T) {
	root, err := floor.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"no package":       {},
		"outside module":   {Pkg: "../elsewhere"},
		"extra with slash": {Pkg: "./internal/vmtest", ExtraFiles: map[string]string{"a/b": "x"}},
	} {
		if name == "extra with slash" && testing.Short() {
			continue // it compiles the guest test binary first
		}
		if _, err := build(t.Context(), root, t.TempDir(), o); err == nil {
			t.Errorf("%s: build accepted %+v", name, o)
		}
	}
}

// fakeQEMU writes a shell script that stands in for qemu: it prints lines
// and then runs tail (a sleep, or an exit).
func fakeQEMU(t *testing.T, lines []string, tail string) vmAssets {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "echo '%s'\n", l)
	}
	b.WriteString(tail + "\n")
	path := filepath.Join(t.TempDir(), "qemu")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return vmAssets{qemu: path}
}

// TestBootHang checks the boot watchdog without the VM: a "qemu" that
// prints kernel messages and never starts the command is killed after the
// boot timeout, and the error carries the last boot lines, not the first.
func TestBootHang(t *testing.T) {
	var kernel []string
	for i := range bootLogLines + 5 {
		kernel = append(kernel, fmt.Sprintf("[ %d.0] kernel line %d", i, i))
	}
	a := fakeQEMU(t, append(kernel, "vmtest: setting up"), "exec sleep 60")
	var logged []string
	start := time.Now()
	res, err := boot(t.Context(), t, invocation{
		assets: a, shared: t.TempDir(), argv: []string{"x"},
		timeout: 30 * time.Second, bootTimeout: time.Second,
	}, func(l string) { logged = append(logged, l) })
	var hung *BootHangError
	if !errors.As(err, &hung) {
		t.Fatalf("boot returned %v, want a BootHangError", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("boot took %v to give up after a 1s boot timeout", took)
	}
	if res.Started {
		t.Error("Started is true for a guest that never ran its command")
	}
	if len(hung.Console) != bootLogLines || hung.Console[0] != kernel[5] || hung.Console[bootLogLines-1] != kernel[len(kernel)-1] {
		t.Errorf("console kept %d lines from %q, want the last %d kernel lines", len(hung.Console), hung.Console[0], bootLogLines)
	}
	// The harness's own lines are logged; the kernel's are not.
	if len(logged) != 1 || logged[0] != "vmtest: setting up" {
		t.Errorf("logged %q, want only the harness line", logged)
	}
	if err := syscall.Kill(hung.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("fake qemu pid %d still exists (kill(0): %v)", hung.PID, err)
	}
}

// TestBootStartedNoHang checks that the boot timeout no longer applies once
// the command has started, and that everything from then on is logged.
func TestBootStartedNoHang(t *testing.T) {
	a := fakeQEMU(t, []string{"[ 0.1] kernel", "vmtest: run /mnt/vmtest/x in /tmp at 0.5s", "[ 9.0] a kernel error", "output"},
		"sleep 2; echo 'vmtest: exit 0'; exit 1")
	var logged []string
	res, err := boot(t.Context(), t, invocation{
		assets: a, shared: t.TempDir(), argv: []string{"x"},
		timeout: 30 * time.Second, bootTimeout: time.Second,
	}, func(l string) { logged = append(logged, l) })
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	if !res.Started || res.Status != 0 || len(res.BootConsole) != 1 {
		t.Errorf("result %+v, want started, status 0, one boot line", res)
	}
	if want := []string{"vmtest: run /mnt/vmtest/x in /tmp at 0.5s", "[ 9.0] a kernel error", "output", "vmtest: exit 0"}; strings.Join(logged, "|") != strings.Join(want, "|") {
		t.Errorf("logged %q, want %q", logged, want)
	}
}

// stubBoots puts a stand-in for qemu first in PATH whose first hangs boots
// hang and whose later boots run the command, and shortens the boot
// timeout; it returns the file that counts the boots.
func stubBoots(t *testing.T, hangs int) string {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "boots")
	script := fmt.Sprintf(`#!/bin/sh
echo x >>%[1]s
if [ "$(wc -l <%[1]s)" -le %[2]d ]; then
	echo "[ 0.5] boot $(wc -l <%[1]s), stuck here"
	exec sleep 60
fi
echo '[ 0.5] a boot that goes on'
echo 'vmtest: run /mnt/vmtest/guest.test in /tmp at 0.6s'
echo 'vmtest: exit 0'
exit 1
`, count, hangs)
	if err := os.WriteFile(filepath.Join(dir, qemuBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	old := bootTimeout
	bootTimeout = 2 * time.Second
	t.Cleanup(func() { bootTimeout = old })
	return count
}

func boots(t *testing.T, count string) int {
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestRunRetriesHungBoot runs RunWith against a stand-in for qemu whose
// first boot hangs and whose second runs the command: the test passes, and
// its log says why it booted twice and shows the first boot's console.
func TestRunRetriesHungBoot(t *testing.T) {
	floor.Need(t, Available(), "kernel test VM (scripts/floors/30-vm.sh)")
	count := stubBoots(t, 1)
	r := &recorder{TB: t}
	r.run(func() { Run(r, "./internal/vmtest", "-test.run=^TestGuestRXE$") })
	if r.failed {
		t.Fatalf("Run failed although the second boot ran the command; log:\n%s", r.text())
	}
	for _, want := range []string{"did not start its command within 2s", "booting it once more", "boot 1, stuck here"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("log lacks %q:\n%s", want, r.text())
		}
	}
	if strings.Contains(r.text(), "a boot that goes on") {
		t.Errorf("the console of a boot that went on was logged:\n%s", r.text())
	}
	if n := boots(t, count); n != 2 {
		t.Errorf("qemu started %d times, want 2", n)
	}
}

// TestRunFailsTwiceHungBoot: a second hung boot fails the test, with the
// second boot's console, and there is no third.
func TestRunFailsTwiceHungBoot(t *testing.T) {
	floor.Need(t, Available(), "kernel test VM (scripts/floors/30-vm.sh)")
	count := stubBoots(t, 2)
	r := &recorder{TB: t}
	r.run(func() { Run(r, "./internal/vmtest", "-test.run=^TestGuestRXE$") })
	if !r.failed {
		t.Fatalf("Run passed with two hung boots; log:\n%s", r.text())
	}
	for _, want := range []string{"twice", "boot 2, stuck here"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("log lacks %q:\n%s", want, r.text())
		}
	}
	if n := boots(t, count); n != 2 {
		t.Errorf("qemu started %d times, want 2", n)
	}
}

// TestBootPanicked: a kernel panic before the guest's command started is a
// failed boot, booted once more; after the command started, or without a
// panic, it is the test's result.
func TestBootPanicked(t *testing.T) {
	panicked := []string{"[    1.541657] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI", "[    1.551158] Kernel panic - not syncing: Fatal exception in interrupt"}
	for _, tc := range []struct {
		res  Result
		want bool
	}{
		{Result{BootConsole: panicked}, true},
		{Result{BootConsole: panicked, Started: true}, false},
		{Result{BootConsole: []string{"[    0.9] VFS: Disk quotas dquot_6.6.0"}}, false},
		{Result{}, false},
	} {
		if got := bootPanicked(tc.res); got != tc.want {
			t.Errorf("bootPanicked(started %v, %d lines) = %v, want %v", tc.res.Started, len(tc.res.BootConsole), got, tc.want)
		}
	}
}
