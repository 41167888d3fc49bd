package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
)

// start runs the program in-process until the test ends; it returns the
// address it serves on.
func start(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	var mu sync.Mutex
	go func() {
		done <- run(ctx, append([]string{"--web.listen-address", "127.0.0.1:0"}, args...), io.Discard, lockedWriter{&mu, &stderr}, func(a string) { addrs <- a })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				mu.Lock()
				t.Errorf("exit %d: %s", code, stderr.String())
				mu.Unlock()
			}
		case <-time.After(20 * time.Second):
			t.Error("the exporter did not stop")
		}
	})
	select {
	case a := <-addrs:
		return a
	case code := <-done:
		t.Fatalf("exit %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the exporter did not start")
	}
	return ""
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(b)
}

// scrapeNodes scrapes the exporter at addr until its metrics have the
// nodes of a first discovery (node_up), at most 20 s.
func scrapeNodes(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := get(t, "http://"+addr+"/metrics")
		if strings.Contains(m, "ibfabric_node_up{") {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node_up after 20 s:\n%s", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The program serves the landing page and metrics that promtool accepts,
// on an in-process simulator, and stops with exit 0 when told to.
func TestServeSim(t *testing.T) {
	addr := start(t, "--fabric", "sim:fattree:k=2,n=2")
	if page := get(t, "http://"+addr+"/"); !strings.Contains(page, `href="/metrics"`) {
		t.Errorf("landing page: %s", page)
	}
	m := scrapeNodes(t, addr)
	for _, want := range []string{"ibfabric_exporter_build_info{", "go_goroutines ", "process_resident_memory_bytes ", "ibfabric_port_receive_data_bytes_total{"} {
		if !strings.Contains(m, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}
	promtool, err := exec.LookPath("promtool")
	floor.Need(t, err == nil, "promtool (Debian package prometheus; scripts/floors/40-prometheus.sh)")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(m)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--version"}, 0, "ibfabric_exporter "},
		{[]string{"--help"}, 0, ""},
		{[]string{"--frob"}, 2, ""},
		{[]string{"extra"}, 2, ""},
		{[]string{"--fabric", "nonsense:x"}, 2, ""},
		{[]string{"--log.level", "loud"}, 2, ""},
		{[]string{"--node-name-map", "/nonexistent/map"}, 1, ""},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "--scrape-timeout", "-1s"}, 2, ""},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "--mad.pkey-index", "65536"}, 2, ""},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "--mad.m-key", "-1"}, 2, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr, nil)
		if code != c.code || !strings.Contains(stdout.String(), c.out) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, stdout.String(), stderr.String())
		}
	}
}

// build builds a command of the module, statically (CGO_ENABLED=0).
func build(t *testing.T, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// proc is a process the test started, killed by its PID when the test
// ends.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startProc(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop ends the process: SIGTERM, then SIGKILL after 10 s.
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not stop on SIGTERM", p.cmd.Path)
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) waitOutput(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", p.cmd.Path, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s: no %v in %v: %s", p.cmd.Path, re, d, p.stderr.String())
	return nil
}

// control sends a fabricsim console command through its control socket.
func control(t *testing.T, sock, line string) {
	t.Helper()
	c, err := net.DialTimeout("unix", "@"+sock+":console", 5*time.Second)
	if err != nil {
		t.Errorf("control socket: %v", err)
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(c, line)
	ans, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(ans, "ok") {
		t.Errorf("%q: %q %v", line, ans, err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// query asks Prometheus's HTTP API for an instant vector's values.
func query(t *testing.T, prom, q string) []float64 {
	t.Helper()
	vs, err := tryQuery(prom, q)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func tryQuery(prom, q string) ([]float64, error) {
	resp, err := http.Get("http://" + prom + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("query %s: %v %s %s", q, err, r.Status, r.Error)
	}
	var vs []float64
	for _, x := range r.Data.Result {
		s, _ := x.Value[1].(string)
		v, _ := strconv.ParseFloat(s, 64)
		vs = append(vs, v)
	}
	return vs, nil
}

// eventually polls a PromQL query until ok accepts its values.
func eventually(t *testing.T, prom, q string, d time.Duration, ok func([]float64) bool) []float64 {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		vs, err := tryQuery(prom, q)
		if err == nil && ok(vs) {
			return vs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v (%v) after %v", q, vs, err, d)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

var pid = os.Getpid()

// Debian's Prometheus scrapes the exporter (a static binary) in front of
// fabricsim: a counter's rate and an injected error show up through its
// HTTP API; fabricsim dies and comes back, and the exporter stays up,
// reports it and recovers.
func TestPrometheusEndToEnd(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	floor.Need(t, err == nil, "prometheus (Debian package prometheus; scripts/floors/40-prometheus.sh)")
	dir := t.TempDir()
	fsBin, exBin := filepath.Join(dir, "fabricsim"), filepath.Join(dir, "ibfabric_exporter")
	build(t, "github.com/rdmakit/rdmakit/cmd/fabricsim", fsBin)
	build(t, "github.com/rdmakit/rdmakit/cmd/ibfabric_exporter", exBin)
	ef, err := elf.Open(exBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the exporter is not a static binary (it has an ELF interpreter)")
		}
	}
	ef.Close()

	sock := fmt.Sprintf("rkexp%d", pid)
	env := []string{"IBSIM_SOCKNAME=" + sock}
	serving := regexp.MustCompile(`fabricsim: serving`)
	sim := startProc(t, env, fsBin, "serve", "fattree:k=2,n=2")
	sim.waitOutput(t, serving, 60*time.Second)

	ex := startProc(t, env, exBin, "--fabric", "ibsim:hca1", "--web.listen-address", "127.0.0.1:0",
		"--topology.min-refresh-interval", "1s", "--mad.timeout", "200ms")
	addr := ex.waitOutput(t, regexp.MustCompile(`msg=serving address=(127\.0\.0\.1:[0-9]+)`), 30*time.Second)[1]

	prom := freePort(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ibfabric
    static_configs:
      - targets: [%q]
`, addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, nil, promBin, "--config.file", cfg, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", prom, "--log.level", "warn")
	eventually(t, prom, `up{job="ibfabric"}`, 60*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] == 1 })
	eventually(t, prom, `sum(ibfabric_node_up)`, 30*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] == 8 })

	// Traffic from hca3 to hca4, 10 MB every 100 ms, and symbol errors
	// on hca4's port.
	var stop atomic.Bool
	trafficDone := make(chan struct{})
	go func() {
		defer close(trafficDone)
		for !stop.Load() {
			control(t, sock, "traffic hca3 1 hca4 10000000")
			time.Sleep(100 * time.Millisecond)
		}
	}()
	control(t, sock, "errors hca4 1 symbol=5 rcv=3")
	named := func(metric, node string) string {
		return metric + ` * on(guid, port) group_left(name) ibfabric_port_info{name=~"` + node + `( .*)?"}`
	}
	rate := eventually(t, prom, named("rate(ibfabric_port_transmit_data_bytes_total[5s])", "hca3"), 30*time.Second,
		func(vs []float64) bool { return len(vs) == 1 && vs[0] > 1e6 }) // its MADs alone: a few kB/s
	t.Logf("hca3 transmits %.0f bytes/s", rate[0])
	eventually(t, prom, named("ibfabric_port_symbol_errors_total", "hca4"), 30*time.Second,
		func(vs []float64) bool { return len(vs) == 1 && vs[0] == 5 })
	eventually(t, prom, named("ibfabric_port_receive_errors_total", "hca4"), 30*time.Second,
		func(vs []float64) bool { return len(vs) == 1 && vs[0] >= 3 })
	// Every query of the Grafana dashboard is one Prometheus runs.
	for _, e := range dashboardExprs(t) {
		if _, err := tryQuery(prom, e); err != nil {
			t.Errorf("dashboard: %v", err)
		}
	}
	stop.Store(true)
	<-trafficDone

	// The simulator dies: the exporter stays up (Prometheus's up 1) and
	// says so; it comes back, and so do the nodes.
	sim.stop(t)
	eventually(t, prom, `ibfabric_fabric_up`, 30*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] == 0 })
	eventually(t, prom, `sum(ibfabric_node_up)`, 30*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] == 0 })
	if vs := query(t, prom, `up{job="ibfabric"}`); len(vs) != 1 || vs[0] != 1 {
		t.Errorf("the exporter's up: %v", vs)
	}
	sim = startProc(t, env, fsBin, "serve", "fattree:k=2,n=2")
	sim.waitOutput(t, serving, 60*time.Second)
	eventually(t, prom, `sum(ibfabric_node_up)`, 60*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] == 8 })
	eventually(t, prom, `ibfabric_fabric_opens_total{result="success"}`, 10*time.Second, func(vs []float64) bool { return len(vs) == 1 && vs[0] >= 2 })

	// SIGTERM: a graceful stop with exit 0.
	if err := syscall.Kill(ex.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ex.done:
		if code := ex.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit %d after SIGTERM: %s", code, ex.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Error("the exporter did not stop on SIGTERM")
	}
}

// dashboardExprs are the PromQL expressions of the Grafana dashboard's
// panels.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/exporter/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q: a target without an expression", p.Title)
			}
			exprs = append(exprs, strings.ReplaceAll(tg.Expr, "$__rate_interval", "1m"))
		}
	}
	if d.Title == "" || len(exprs) < 10 {
		t.Fatalf("dashboard %q with %d expressions", d.Title, len(exprs))
	}
	return exprs
}

// The documents in docs/exporter load: the dashboard is JSON whose queries
// name only metrics the exporter serves, the scrape configuration passes
// promtool, and the systemd unit's command line parses.
func TestDocs(t *testing.T) {
	addr := start(t, "--fabric", "sim:fattree:k=2,n=2")
	served := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !served["ibfabric_node_up"] {
		for _, line := range strings.Split(get(t, "http://"+addr+"/metrics"), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
				served[f[2]] = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no topology after 20 s")
		}
	}
	metric := regexp.MustCompile(`\b(ibfabric_[a-z0-9_]+|go_[a-z0-9_]+|process_[a-z0-9_]+)`)
	used := 0
	for _, e := range dashboardExprs(t) {
		for _, m := range metric.FindAllString(e, -1) {
			used++
			if !served[m] {
				t.Errorf("the dashboard queries %s, which the exporter does not serve", m)
			}
		}
	}
	if used == 0 {
		t.Error("the dashboard names no metric")
	}
	unit, err := os.ReadFile("../../docs/exporter/ibfabric_exporter.service")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(unit), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			f := strings.Fields(rest)
			if filepath.Base(f[0]) != "ibfabric_exporter" {
				t.Errorf("ExecStart runs %s", f[0])
			}
			for _, a := range f[1:] {
				if !strings.HasPrefix(a, "$") {
					args = append(args, a)
				}
			}
		}
	}
	if len(args) == 0 {
		t.Fatal("no ExecStart in the unit")
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), append(args, "--version"), &out, &errOut, nil); code != 0 {
		t.Errorf("the unit's flags %v: exit %d: %s", args, code, errOut.String())
	}
	promtool, err := exec.LookPath("promtool")
	floor.Need(t, err == nil, "promtool (Debian package prometheus; scripts/floors/40-prometheus.sh)")
	if b, err := exec.Command(promtool, "check", "config", "../../docs/exporter/prometheus.yml").CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, b)
	}
}

// TestPKeyIndexReachesTheReads starts the exporter with --mad.pkey-index 1
// on a simulated fabric whose P_Key tables hold only the default P_Key at
// index 0: the discovery's SMPs are answered (QP0 checks no P_Key), the
// counter reads, sent with the invalid P_Key at index 1, are dropped by
// every PMA (IBA 10.9.3), so every node is exported with node_up 0.
func TestPKeyIndexReachesTheReads(t *testing.T) {
	addr := start(t, "--fabric", "sim:fattree:k=2,n=2", "--mad.pkey-index", "1", "--mad.timeout", "20ms", "--mad.retries", "0")
	m := scrapeNodes(t, addr)
	nodes := 0
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, "ibfabric_node_up{") {
			nodes++
			if !strings.HasSuffix(line, " 0") {
				t.Errorf("a node answered a read sent with P_Key index 1: %s", line)
			}
		}
	}
	if nodes == 0 || strings.Contains(m, "ibfabric_port_receive_data_bytes_total{") {
		t.Errorf("%d nodes exported, data counters present: %v", nodes, strings.Contains(m, "ibfabric_port_receive_data_bytes_total{"))
	}
}
