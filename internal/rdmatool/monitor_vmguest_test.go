//go:build vmguest

package rdmatool

// The live comparison of rdmatool monitor with rdma monitor (iproute2
// 6.13+, Linux 6.10+), inside the 6.12 VM.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// monitorProc is one running monitor.
type monitorProc struct {
	name   string
	cmd    *exec.Cmd
	out    lockedBuffer
	errb   lockedBuffer
	exited chan struct{}
}

func startMonitor(t *testing.T, name, prog string, args ...string) *monitorProc {
	t.Helper()
	m := &monitorProc{name: name, exited: make(chan struct{})}
	m.cmd = exec.Command(prog, args...)
	m.cmd.Stdout, m.cmd.Stderr = &m.out, &m.errb
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		_ = m.cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-m.exited:
		default:
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	})
	return m
}

// subscribed reports whether the process has an RDMA netlink socket
// (protocol 20) that has joined a multicast group: /proc/net/netlink lists
// each socket's groups and inode, /proc/PID/fd the process's sockets.
func subscribed(pid int) bool {
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return false
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	f, err := os.Open("/proc/net/netlink")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
		fs := strings.Fields(sc.Text())
		if len(fs) >= 10 && fs[1] == "20" && strings.Trim(fs[3], "0") != "" && inodes[fs[9]] {
			return true
		}
	}
	return false
}

func mustRun(t *testing.T, prog string, args ...string) {
	t.Helper()
	if out, err := exec.Command(prog, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

// liveMonitor runs rdma monitor and rdmatool monitor, in text and in JSON,
// while rxe and siw links come and go, a device and a netdev are renamed,
// and compares what each pair printed. It returns the number of
// comparisons.
func liveMonitor(t *testing.T) int {
	ours := filepath.Join(os.Getenv("VMTEST_DIR"), "rdmatool")
	mons := []*monitorProc{
		startMonitor(t, "rdma monitor", "rdma", "monitor"),
		startMonitor(t, "rdmatool monitor", ours, "monitor"),
		startMonitor(t, "rdma -j monitor", "rdma", "-j", "monitor"),
		startMonitor(t, "rdmatool -j monitor", ours, "-j", "monitor"),
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, m := range mons {
		for !subscribed(m.cmd.Process.Pid) {
			select {
			case <-m.exited:
				t.Fatalf("%s exited before subscribing: %s", m.name, m.errb.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not join the RDMA notification group in 20 s", m.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The events: an rxe link on a netdev of its own and a siw link on lo
	// come; the rxe device and its netdev are renamed; both go.
	ip := "/usr/bin/ip" // iproute2's, not busybox's applet
	mustRun(t, ip, "link", "add", "mondum0", "type", "dummy")
	t.Cleanup(func() {
		_ = exec.Command("rdma", "link", "delete", "rxemon2").Run()
		_ = exec.Command("rdma", "link", "delete", "rxemon").Run()
		_ = exec.Command("rdma", "link", "delete", "siwmon").Run()
		_ = exec.Command(ip, "link", "delete", "mondum1").Run()
		_ = exec.Command(ip, "link", "delete", "mondum0").Run()
	})
	mustRun(t, ip, "link", "set", "mondum0", "up")
	mustRun(t, "rdma", "link", "add", "rxemon", "type", "rxe", "netdev", "mondum0")
	mustRun(t, ours, "link", "add", "siwmon", "type", "siw", "netdev", "lo")
	mustRun(t, "rdma", "dev", "set", "rxemon", "name", "rxemon2")
	mustRun(t, ip, "link", "set", "mondum0", "down")
	mustRun(t, ip, "link", "set", "mondum0", "name", "mondum1")
	mustRun(t, ours, "link", "delete", "rxemon2")
	mustRun(t, "rdma", "link", "delete", "siwmon")
	mustRun(t, ip, "link", "delete", "mondum1")

	// Wait until the four have printed the same number of events, at
	// least a REGISTER and an UNREGISTER for each link, and nothing more
	// comes for a moment.
	lines := func(m *monitorProc) int { return strings.Count(m.out.String(), "\n") }
	settled, last := time.Now(), -1
	for time.Since(settled) < 500*time.Millisecond {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			break
		}
		n := lines(mons[0])
		same := n >= 4
		for _, m := range mons[1:] {
			same = same && lines(m) == n
		}
		if !same || n != last {
			settled, last = time.Now(), n
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, m := range mons {
		_ = m.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, m := range mons {
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end on SIGINT", m.name)
		}
	}

	text, ourText := mons[0].out.String(), mons[1].out.String()
	t.Logf("rdma monitor printed:\n%s", text)
	for _, want := range []string{"[REGISTER]\tdev ", " rxemon", " siwmon", "[UNREGISTER]\tdev "} {
		if !strings.Contains(text, want) {
			t.Errorf("rdma monitor shows no %q: the events did not come", want)
		}
	}
	if ourText != text {
		t.Errorf("rdmatool monitor differs:\n--- rdma\n%s--- rdmatool\n%s--- stderr: %s", text, ourText, mons[1].errb.String())
	}
	// rdma's JSON array stays open when it is killed; rdmatool closes it.
	js, ourJS := mons[2].out.String(), mons[3].out.String()
	if !strings.HasPrefix(js, `[{"event_type":"[REGISTER]"`) {
		t.Errorf("rdma -j monitor printed %q", js)
	}
	if ourJS != js+"]\n" {
		t.Errorf("rdmatool -j monitor differs (beyond closing the array):\n--- rdma\n%s--- rdmatool\n%s--- stderr: %s", js, ourJS, mons[3].errb.String())
	}
	return 2
}
