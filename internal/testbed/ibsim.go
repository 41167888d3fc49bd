package testbed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Timeouts for bringing peers up. Generous: CI machines have 2 cores and
// run several test binaries at once.
const (
	IBSimStartTimeout  = 15 * time.Second
	ConsoleTimeout     = 10 * time.Second
	OpenSMStartTimeout = 60 * time.Second
)

// IBSim is a running ibsim simulator, private to one test.
type IBSim struct {
	// SockName is the IBSIM_SOCKNAME base of its abstract unix sockets;
	// empty in inet mode.
	SockName string
	// Server and Port are its UDP control address in inet mode (ibsim -r);
	// empty and 0 in unix mode.
	Server string
	Port   int
	// Dir holds the topology file; TopologyFile is its path.
	Dir          string
	TopologyFile string
	// Cmd is the ibsim process.
	Cmd *exec.Cmd
	// Release is whose ibsim it is, and whose OpenSM and C tools
	// StartOpenSM and RunC run against it; nil means Bookworm, the
	// machine's own (also for a simulator a test did not start, such as
	// fabricsim's server).
	Release *Release

	stdin  io.WriteCloser
	out    *notifyBuffer // stdout: console output
	errLog *notifyBuffer // stderr: ibsim's warnings
	exited chan struct{}

	consoleMu sync.Mutex
	consumed  int // console output up to here has been returned
}

// IBSimOptions changes how StartIBSimWith runs ibsim.
type IBSimOptions struct {
	// Inet runs ibsim in remote mode (-r -l <port>) on a free UDP port of
	// 127.0.0.1, instead of on abstract unix sockets.
	Inet bool
	// Verbose adds -v: ibsim logs every forward and reply on stderr.
	Verbose bool
	// Release chooses whose ibsim runs; nil means Bookworm.
	Release *Release
}

var simSeq atomic.Int64

// StartIBSim writes topo to a file in a temporary directory, starts
// `ibsim -s` on it with a private IBSIM_SOCKNAME and waits until it accepts
// clients. ibsim keeps its console (stdin is a pipe held open), so the test
// can inject faults with Console. The process is killed by its PID when the
// test ends; when the test failed, ibsim's output is logged.
func StartIBSim(t testing.TB, topo string) *IBSim {
	t.Helper()
	return StartIBSimWith(t, topo, IBSimOptions{})
}

// StartIBSimWith is StartIBSim with options.
func StartIBSimWith(t testing.TB, topo string, opt IBSimOptions) *IBSim {
	t.Helper()
	rel := release(opt.Release)
	rel.Require(t)
	bin, err := rel.LookPath("ibsim")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fabric.net")
	if err := os.WriteFile(file, []byte(topo), 0o644); err != nil {
		t.Fatalf("writing ibsim topology: %v", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s := &IBSim{Dir: dir, TopologyFile: file, Release: opt.Release}
		args := []string{"-s"}
		if opt.Verbose {
			args = append(args, "-v")
		}
		if opt.Inet {
			port, err := freeUDPRange(1 + ibsimMaxClients)
			if err != nil {
				t.Fatalf("finding UDP ports for ibsim: %v", err)
			}
			s.Server, s.Port = "127.0.0.1", port
			args = append(args, "-r", "-l", strconv.Itoa(port))
		} else {
			s.SockName = fmt.Sprintf("rk%d-%d", os.Getpid(), simSeq.Add(1))
		}
		args = append(args, file)
		err := s.start(t, bin, args)
		if err == nil {
			return s
		}
		lastErr = err
		if !opt.Inet {
			break // only a port race is worth another try
		}
	}
	t.Fatalf("starting ibsim: %v", lastErr)
	return nil
}

// ibsimMaxClients is IBSIM_MAX_CLIENTS: in inet mode ibsim binds the
// control port and one data port per client slot after it.
const ibsimMaxClients = 10

func (s *IBSim) start(t testing.TB, bin string, args []string) error {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.Dir
	cmd.Env = s.envOver(os.Environ())
	// If the test binary dies, so does ibsim.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	s.out, s.errLog = newNotifyBuffer(), newNotifyBuffer()
	cmd.Stdout, cmd.Stderr = s.out, s.errLog
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	s.Cmd, s.stdin = cmd, stdin
	s.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		// Kill by PID first: with stdin at EOF ibsim's console would spin.
		_ = cmd.Process.Kill()
		<-s.exited
		_ = stdin.Close()
		if t.Failed() {
			t.Logf("ibsim %s: stdout:\n%s\nstderr:\n%s", s.name(), tail(s.out.String(), 4000), tail(s.errLog.String(), 4000))
		}
	})
	if err := s.waitReady(); err != nil {
		_ = cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("ibsim %s: %w\nstdout:\n%s\nstderr:\n%s", s.name(), err, tail(s.out.String(), 2000), tail(s.errLog.String(), 2000))
	}
	return nil
}

func (s *IBSim) name() string {
	if s.SockName != "" {
		return "IBSIM_SOCKNAME=" + s.SockName
	}
	return net.JoinHostPort(s.Server, strconv.Itoa(s.Port))
}

// waitReady waits for the first console prompt, which ibsim prints after
// it has read the topology, and then for its control socket: ibsim binds
// its sockets right after the prompt and serves clients once they exist.
func (s *IBSim) waitReady() error {
	deadline := time.Now().Add(IBSimStartTimeout)
	for {
		ch := s.out.changed()
		if strings.HasSuffix(s.out.String(), "sim> ") {
			break
		}
		select {
		case <-s.exited:
			return errors.New("exited while starting")
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return errors.New("no console prompt within " + IBSimStartTimeout.String())
		}
	}
	s.consumed = len(s.out.String())
	for {
		if s.listening() {
			return nil
		}
		select {
		case <-s.exited:
			return errors.New("exited while starting")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("control socket not bound within " + IBSimStartTimeout.String())
		}
	}
}

// listening reports whether ibsim's control socket exists. A unix datagram
// connect succeeds only when the name is bound, and sends nothing; in inet
// mode /proc/net/udp lists the bound port.
func (s *IBSim) listening() bool {
	if s.SockName != "" {
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: "@" + s.SockName + ":ctl\x00", Net: "unixgram"})
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		want := fmt.Sprintf(":%04X ", s.Port+ibsimMaxClients) // the last port ibsim binds
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 1 && strings.HasSuffix(fields[1]+" ", want) {
				return true
			}
		}
	}
	return false
}

// Env returns the environment variables that point an ibsim client (our
// transport's ConfigFromEnv, or libumad2sim) at this simulator.
func (s *IBSim) Env() []string {
	if s.SockName != "" {
		return []string{"IBSIM_SOCKNAME=" + s.SockName}
	}
	return []string{"IBSIM_SERVER_NAME=" + s.Server, "IBSIM_SERVER_PORT=" + strconv.Itoa(s.Port)}
}

// clientVars are the variables that choose a simulator and a node for an
// ibsim client; envOver drops inherited ones so that a test never reaches a
// simulator it did not start.
var clientVars = []string{"IBSIM_SOCKNAME", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT", "SIM_HOST", "SIM_SET_ISSM", "LD_PRELOAD", PreloadEnv}

func (s *IBSim) envOver(base []string) []string {
	env := make([]string, 0, len(base)+3)
	for _, kv := range base {
		keep := true
		for _, v := range clientVars {
			if strings.HasPrefix(kv, v+"=") {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env, s.Env()...)
}

// ClientEnv is this process's environment with the variables that choose
// a simulator replaced by this one's: for a client process a test starts.
func (s *IBSim) ClientEnv() []string { return s.envOver(os.Environ()) }

// PID is the ibsim process ID.
func (s *IBSim) PID() int { return s.Cmd.Process.Pid }

// Running reports whether ibsim has not exited.
func (s *IBSim) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Stderr returns what ibsim has logged so far (its warnings, and with
// Verbose each packet).
func (s *IBSim) Stderr() string { return s.errLog.String() }

// Console runs one command on ibsim's console and returns its output, up
// to the next prompt. The commands are in ibsim's sim_cmd.c: Dump, Route,
// Link, Unlink, ReLink, Clear, Guid, Error, PerformanceSet, Baselid,
// Attached, X, Verbose. Do not send Quit or Wait.
func (s *IBSim) Console(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\n\r") || len(cmd) > 126 {
		return "", fmt.Errorf("ibsim console: %q is not one line of at most 126 bytes", cmd)
	}
	s.consoleMu.Lock()
	defer s.consoleMu.Unlock()
	if !s.Running() {
		return "", errors.New("ibsim console: ibsim has exited")
	}
	if _, err := io.WriteString(s.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("ibsim console: writing %q: %w", cmd, err)
	}
	timeout := time.After(ConsoleTimeout)
	for {
		ch := s.out.changed()
		all := s.out.String()
		if len(all) > s.consumed && strings.HasSuffix(all, "sim> ") {
			reply := all[s.consumed : len(all)-len("sim> ")]
			s.consumed = len(all)
			return reply, nil
		}
		select {
		case <-ch:
		case <-s.exited:
			return "", fmt.Errorf("ibsim console: ibsim exited during %q", cmd)
		case <-timeout:
			return "", fmt.Errorf("ibsim console: no prompt %v after %q", ConsoleTimeout, cmd)
		}
	}
}

// SetErrorRate makes ibsim drop percent per cent of the MADs that reach
// port port of node (every port when port < 0), with the console command
// Error. When attr is non-zero only MADs for that attribute ID are dropped
// (0x10 NodeDescription, 0x11 NodeInfo, 0x15 PortInfo, ...). ibsim drops a
// request by bouncing it to its sender with status 110, so the sender
// learns at once; with attr 0 the check runs at every hop, so the rate seen
// end to end is higher than percent. Percent 0 stops it.
func (s *IBSim) SetErrorRate(node string, port, percent int, attr uint16) error {
	if err := checkName(node); err != nil {
		return err
	}
	if percent < 0 || percent > 100 {
		return fmt.Errorf("error rate %d%%: want 0 to 100", percent)
	}
	target := fmt.Sprintf("%q", node)
	if port >= 0 {
		target += fmt.Sprintf("[%d]", port)
	}
	return s.consoleQuiet(fmt.Sprintf("Error %s %d %d", target, percent, attr))
}

// Unlink takes the link on port port of node down (console Unlink); ReLink
// brings it back. ibsim sends trap 128 to the SM for each switch end.
func (s *IBSim) Unlink(node string, port int) error {
	if err := checkName(node); err != nil {
		return err
	}
	return s.consoleQuiet(fmt.Sprintf("Unlink %q[%d]", node, port))
}

// ReLink restores a link that Unlink took down.
func (s *IBSim) ReLink(node string, port int) error {
	if err := checkName(node); err != nil {
		return err
	}
	return s.consoleQuiet(fmt.Sprintf("ReLink %q[%d]", node, port))
}

// consoleQuiet runs a command that prints nothing on success; ibsim's
// messages for bad arguments start with '#' or name the problem.
func (s *IBSim) consoleQuiet(cmd string) error {
	out, err := s.Console(cmd)
	if err != nil {
		return err
	}
	if msg := strings.TrimSpace(out); msg != "" {
		return fmt.Errorf("ibsim console %q: %s", cmd, msg)
	}
	return nil
}

// freeUDPRange finds n consecutive free UDP ports on 127.0.0.1. Another
// process may take one before ibsim binds it; StartIBSimWith retries then.
func freeUDPRange(n int) (int, error) {
	for try := 0; try < 50; try++ {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return 0, err
		}
		base := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		if base+n > 65535 {
			continue
		}
		ok := true
		var held []*net.UDPConn
		for p := base; p < base+n; p++ {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: p})
			if err != nil {
				ok = false
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free range of UDP ports")
}

// notifyBuffer collects a process's output and wakes waiters on every
// write.
type notifyBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func newNotifyBuffer() *notifyBuffer { return &notifyBuffer{ch: make(chan struct{})} }

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.ch)
	b.ch = make(chan struct{})
	return len(p), nil
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// changed returns a channel closed by the next write.
func (b *notifyBuffer) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
