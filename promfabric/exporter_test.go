package promfabric

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/subnet"
)

// openSim opens an in-process simulated fabric, closed with the test.
func openSim(t testing.TB, spec string, opts ...fabric.Option) *fabric.Fabric {
	t.Helper()
	f, err := fabric.Open(context.Background(), spec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		f.Sim.Close()
	})
	return f
}

// newExporter makes an exporter on f with its topology discovered.
func newExporter(t testing.TB, f *fabric.Fabric, o Options) *Exporter {
	t.Helper()
	o.Fabric = f
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// metrics is a scrape's series, parsed: by family name, then by label
// text.
type metrics map[string]map[string]float64

func parse(t testing.TB, text []byte) metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fromFamilies(mfs)
}

func fromFamilies(mfs map[string]*dto.MetricFamily) metrics {
	m := metrics{}
	for name, mf := range mfs {
		m[name] = map[string]float64{}
		for _, x := range mf.Metric {
			var v float64
			switch {
			case x.Counter != nil:
				v = x.Counter.GetValue()
			case x.Gauge != nil:
				v = x.Gauge.GetValue()
			case x.Untyped != nil:
				v = x.Untyped.GetValue()
			}
			m[name][labelKey(x.Label)] = v
		}
	}
	return m
}

func labelKey(ls []*dto.LabelPair) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// labelsOf splits a labelKey.
func labelsOf(key string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(key, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func portKey(g iba.GUID, port int) string {
	return "guid=" + g.String() + ",port=" + strconv.Itoa(port)
}
func nodeKey(g iba.GUID) string { return "guid=" + g.String() }

// scrapeText serves one scrape through Handler.
func scrapeText(t testing.TB, e *Exporter, header string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if header != "" {
		req.Header.Set(ScrapeTimeoutHeader, header)
	}
	e.Handler(nil).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	return rec.Body.Bytes()
}

// simID is the topology name of a discovered node.
func simID(t testing.TB, f *fabric.Fabric, n *subnet.Node) string {
	t.Helper()
	for _, tn := range f.Sim.Topology().Nodes {
		if tn.Description() == n.Description() {
			return tn.ID
		}
	}
	t.Fatalf("no simulated node for %s", n.Description())
	return ""
}

// The exported counters are the PMA's: error counters as injected and as
// a direct read gives them, data in octets (4 per counted word) with the
// injected traffic in them, and every port of every node present.
func TestValuesEqualPMA(t *testing.T) {
	const ports80 = 80 // in a 4-ary 2-tree
	f := openSim(t, "sim:fattree:k=4,n=2")
	e := newExporter(t, f, Options{})
	ctx := context.Background()
	inject := map[string]sim.PortErrors{
		"hca3":    {SymbolErrors: 7, RcvErrors: 70000, LinkDowned: 300, XmitWait: 1 << 40},
		"ft-l0-2": {XmitDiscards: 5, VL15Dropped: 2, LocalLinkIntegrityErrors: 3, ExcessiveBufferOverrun: 1},
		"ft-l1-1": {RcvRemotePhysErrors: 11, RcvSwitchRelayErrors: 12, XmitConstraintErrors: 13, RcvConstraintErrors: 14, LinkErrorRecovery: 15},
	}
	for n, pe := range inject {
		if err := f.Sim.InjectErrors(n, 1, pe); err != nil {
			t.Fatal(err)
		}
	}
	// Traffic from hca3 to hca9: 10^9 octets in 10^6 packets.
	dst := e.topo.subnet.NodesByName("hca9 HCA-1")
	if len(dst) != 1 {
		t.Fatal("no hca9")
	}
	if err := f.Sim.Traffic("hca3", 1, dst[0].Port(1).BaseLID, 1_000_000, 1_000_000_000); err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, ""))
	// Read every port again, directly, and compare.
	res, err := perf.Sweep(ctx, f, perf.SweepOptions{Subnet: e.topo.subnet, Data: true})
	if err != nil {
		t.Fatal(err)
	}
	ports := 0
	for _, n := range res.Nodes {
		for _, pr := range n.Ports {
			if pr == nil {
				continue
			}
			if !pr.OK {
				t.Fatalf("%s port %d not read", n.Node.Description(), pr.Port)
			}
			ports++
			key := portKey(n.GUID, pr.Port)
			for k := perf.Counter(0); k < perf.NumCounters; k++ {
				name := counterFamilies[k].fullName()
				v, ok := got[name][key]
				want, has := pr.Get(k)
				if ok != has {
					t.Errorf("%s %s: exported %v, the PMA has it %v", name, key, ok, has)
					continue
				}
				if !has {
					continue
				}
				want = perf.Octets(k, want)
				if k.IsError() {
					if v != float64(want) {
						t.Errorf("%s %s = %v, the PMA says %d", name, key, v, want)
					}
					continue
				}
				// Data and packet counters: the direct reads themselves
				// moved them since the scrape, by a MAD (or two, with the
				// reply) a port read at most; the local port carries them
				// all.
				slack := float64(2 * 2 * ports80)
				if k.IsData() {
					slack *= 256 + 40
				}
				if v > float64(want) || v < float64(want)-slack {
					t.Errorf("%s %s = %v, the PMA says %d", name, key, v, want)
				}
			}
		}
	}
	if ports != ports80 {
		t.Errorf("%d ports read", ports)
	}
	hca3 := e.topo.subnet.NodesByName("hca3 HCA-1")[0]
	k3 := portKey(hca3.GUID, 1)
	checks := map[string]float64{
		"ibfabric_port_symbol_errors_total":            7,
		"ibfabric_port_receive_errors_total":           65535, // PortCounters' 16 bits, saturated
		"ibfabric_port_link_downed_total":              255,
		"ibfabric_port_counters_saturated":             3, // and PortXmitWait
		"ibfabric_port_transmit_wait_total":            float64(uint32(1<<32 - 1)),
		"ibfabric_port_unicast_transmit_packets_total": 1_000_000,
	}
	for name, want := range checks {
		if got[name][k3] != want {
			t.Errorf("%s %s = %v, want %v", name, k3, got[name][k3], want)
		}
	}
	if v := got["ibfabric_port_transmit_data_bytes_total"][k3]; v < 1e9 || v > 1e9+1e6 {
		t.Errorf("hca3 transmitted %v bytes, want 10^9 and its MADs", v)
	}
	if v := got["ibfabric_node_up"][nodeKey(hca3.GUID)]; v != 1 {
		t.Errorf("hca3 up %v", v)
	}
}

// The port state, widths, speeds and info series follow the PortInfo the
// discovery read, both ends of each link name each other, and the node
// name map names nodes.
func TestLinkSeries(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	e := newExporter(t, f, Options{})
	got := parse(t, scrapeText(t, e, ""))
	links := 0
	for _, n := range e.topo.subnet.Nodes() {
		for num, p := range n.Ports {
			if p == nil || num == 0 {
				continue
			}
			key := portKey(n.GUID, num)
			pi := p.PortInfo()
			if got["ibfabric_port_state_id"][key] != float64(pi.PortState) || got["ibfabric_port_physical_state_id"][key] != float64(pi.PortPhysicalState) {
				t.Errorf("%s: state %v/%v, PortInfo %v/%v", key, got["ibfabric_port_state_id"][key], got["ibfabric_port_physical_state_id"][key], pi.PortState, pi.PortPhysicalState)
			}
			lanes, speed := p.Rate()
			if got["ibfabric_port_link_width_active_lanes"][key] != float64(lanes) ||
				got["ibfabric_port_rate_bytes_per_second"][key] != float64(lanes)*speed.DataGbps()*1e9/8 {
				t.Errorf("%s: %v lanes, rate %v; PortInfo %d lanes of %v", key, got["ibfabric_port_link_width_active_lanes"][key], got["ibfabric_port_rate_bytes_per_second"][key], lanes, speed)
			}
			if got["ibfabric_port_link_width_supported_lanes"][key] < float64(lanes) || got["ibfabric_port_link_speed_supported_bytes_per_second"][key] < speed.DataGbps()*1e9/8 {
				t.Errorf("%s: supports less than it runs at", key)
			}
			r := p.Remote
			if r == nil {
				continue
			}
			links++
			found := false
			for lk := range got["ibfabric_port_info"] {
				l := labelsOf(lk)
				if l["guid"] == n.GUID.String() && l["port"] == strconv.Itoa(num) && l["remote_guid"] == r.Node.GUID.String() &&
					l["remote_port"] == strconv.Itoa(r.Num) && l["remote_name"] == r.Node.Description() &&
					l["name"] == n.Description() && l["port_guid"] == p.GUID.String() {
					found = true
				}
			}
			if !found {
				t.Errorf("no port_info of %s naming %v port %d", key, r.Node.GUID, r.Num)
			}
		}
	}
	if links != 64 {
		t.Errorf("%d link ends", links)
	}
	if got["ibfabric_topology_links"][""] != 32 {
		t.Errorf("topology_links %v", got["ibfabric_topology_links"][""])
	}
}

// The Collector side serves the same series as Handler, and a pedantic
// registry accepts them.
func TestCollectorMatchesHandler(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	e := newExporter(t, f, Options{})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		byName[mf.GetName()] = mf
	}
	fromReg := fromFamilies(byName)
	fromText := parse(t, scrapeText(t, e, ""))
	for name, series := range fromText {
		if len(series) != len(fromReg[name]) {
			t.Errorf("%s: %d series from Handler, %d from the registry", name, len(series), len(fromReg[name]))
		}
		for k := range series {
			if _, ok := fromReg[name][k]; !ok {
				t.Errorf("%s{%s}: not collected", name, k)
			}
		}
	}
	for name := range fromReg {
		if _, ok := fromText[name]; !ok {
			t.Errorf("%s: collected, not in Handler's output", name)
		}
	}
}

// A dead switch is up 0 with every series of its ports but the counters,
// the rest is read, and the exporter asks for an early refresh. Back
// alive, it is up 1 again.
func TestDeadNode(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	e := newExporter(t, f, Options{})
	parse(t, scrapeText(t, e, "")) // every node answers once
	var sw *subnet.Node
	for _, n := range e.topo.subnet.NodesOfType(iba.NodeTypeSwitch) {
		if n.Description() == "ft-l1-0" {
			sw = n
		}
	}
	if err := f.Sim.SetNodeDead(simID(t, f, sw), true); err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, ""))
	if v, ok := got["ibfabric_node_up"][nodeKey(sw.GUID)]; !ok || v != 0 {
		t.Errorf("dead switch: up %v (present %v)", v, ok)
	}
	// The nodes whose route crosses the dead switch do not answer either;
	// each costs a timeout or a few (4 reads at a time), not one per port.
	down := got["ibfabric_scrape_nodes_unreachable"][""]
	if down < 1 || down != 24-sum(got["ibfabric_node_up"]) {
		t.Errorf("unreachable %v, up %v", down, sum(got["ibfabric_node_up"]))
	}
	if to := got["ibfabric_scrape_mads_timed_out"][""]; to < down || to > 4*down || got["ibfabric_scrape_mads_failed"][""] < 16 {
		t.Errorf("timed out %v, failed %v for %v nodes down", to, got["ibfabric_scrape_mads_failed"][""], down)
	}
	for num := 1; num <= sw.NumPorts; num++ {
		key := portKey(sw.GUID, num)
		if _, ok := got["ibfabric_port_state_id"][key]; !ok {
			t.Errorf("dead switch port %d has no state", num)
		}
		if _, ok := got["ibfabric_port_symbol_errors_total"][key]; ok {
			t.Errorf("dead switch port %d has counters", num)
		}
	}
	if !e.want {
		t.Error("no early refresh asked for")
	}
	if err := f.Sim.SetNodeDead(simID(t, f, sw), false); err != nil {
		t.Fatal(err)
	}
	got = parse(t, scrapeText(t, e, ""))
	if got["ibfabric_node_up"][nodeKey(sw.GUID)] != 1 || sum(got["ibfabric_node_up"]) != 24 {
		t.Errorf("back alive: up %v, %v up", got["ibfabric_node_up"][nodeKey(sw.GUID)], sum(got["ibfabric_node_up"]))
	}
}

func sum(m map[string]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}

// A pulled cable: the scrape sees LinkDownedCounter move and asks for a
// refresh; after it both switch ports' states are Down and the CA behind
// is up 0, still exported. Plugged back, the refresh finds it again.
func TestLinkFlap(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	e := newExporter(t, f, Options{})
	ctx := context.Background()
	parse(t, scrapeText(t, e, ""))
	hca5 := e.topo.subnet.NodesByName("hca5 HCA-1")[0]
	leaf := hca5.Port(1).Remote
	if err := f.Sim.SetLink("hca5", 1, false); err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, ""))
	if !e.want {
		t.Error("a LinkDownedCounter that moved asked for no refresh")
	}
	if got["ibfabric_port_link_downed_total"][portKey(leaf.Node.GUID, leaf.Num)] != 1 || got["ibfabric_node_up"][nodeKey(hca5.GUID)] != 0 {
		t.Errorf("leaf port link downed %v, hca5 up %v", got["ibfabric_port_link_downed_total"][portKey(leaf.Node.GUID, leaf.Num)], got["ibfabric_node_up"][nodeKey(hca5.GUID)])
	}
	if err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got = parse(t, scrapeText(t, e, ""))
	if got["ibfabric_port_state_id"][portKey(leaf.Node.GUID, leaf.Num)] != float64(iba.PortStateDown) {
		t.Errorf("leaf port state %v after the refresh", got["ibfabric_port_state_id"][portKey(leaf.Node.GUID, leaf.Num)])
	}
	if v, ok := got["ibfabric_node_up"][nodeKey(hca5.GUID)]; !ok || v != 0 || got["ibfabric_topology_nodes"]["type=lost"] != 1 {
		t.Errorf("lost hca5: up %v (present %v), %v lost", v, ok, got["ibfabric_topology_nodes"]["type=lost"])
	}
	if _, ok := got["ibfabric_node_info"]; !ok || !hasPrefix(got["ibfabric_port_info"], "description=hca5 HCA-1,guid="+hca5.GUID.String()) {
		t.Error("lost hca5 has no info series")
	}
	if err := f.Sim.SetLink("hca5", 1, true); err != nil {
		t.Fatal(err)
	}
	// The SM sweeps on the trap and brings the link to Active.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := e.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		got = parse(t, scrapeText(t, e, ""))
		if got["ibfabric_node_up"][nodeKey(hca5.GUID)] == 1 && got["ibfabric_port_state_id"][portKey(leaf.Node.GUID, leaf.Num)] == float64(iba.PortStateActive) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hca5 not back: up %v, leaf port state %v", got["ibfabric_node_up"][nodeKey(hca5.GUID)], got["ibfabric_port_state_id"][portKey(leaf.Node.GUID, leaf.Num)])
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got["ibfabric_topology_nodes"]["type=lost"] != 0 {
		t.Errorf("%v lost after the cable came back", got["ibfabric_topology_nodes"]["type=lost"])
	}
}

func hasPrefix(m map[string]float64, p string) bool {
	for k := range m {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// With half the MADs dropped at a switch, the scrape ends within its
// bound, reports what it read and what it did not, and every node keeps
// its up series.
func TestDroppedMADs(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(30*time.Millisecond), fabric.WithRetries(2))
	e := newExporter(t, f, Options{ScrapeTimeout: 2 * time.Second})
	for p := 1; p <= 8; p++ {
		if err := f.Sim.SetDropRate("ft-l1-0", p, 50); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	got := parse(t, scrapeText(t, e, ""))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the scrape took %v past a 2 s bound", d)
	}
	if len(got["ibfabric_node_up"]) != 24 {
		t.Errorf("%d up series", len(got["ibfabric_node_up"]))
	}
	if got["ibfabric_scrape_mads_sent"][""] <= got["ibfabric_scrape_reads"][""] {
		t.Errorf("%v MADs for %v reads: no retries with half the MADs dropped", got["ibfabric_scrape_mads_sent"][""], got["ibfabric_scrape_reads"][""])
	}
}

// A scrape never runs past its bound: with every node dead, it returns
// soon after the bound (the Prometheus header's, shorter than the
// option's), every node up 0.
func TestScrapeBound(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(time.Second), fabric.WithRetries(5))
	e := newExporter(t, f, Options{ScrapeTimeout: time.Minute})
	for _, n := range e.topo.subnet.Nodes() {
		if err := f.Sim.SetNodeDead(simID(t, f, n), true); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	got := parse(t, scrapeText(t, e, "0.5"))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the scrape took %v with a 0.5 s scrape timeout", d)
	}
	if len(got["ibfabric_node_up"]) != 24 || sum(got["ibfabric_node_up"]) != 0 {
		t.Errorf("%d up series, %v up", len(got["ibfabric_node_up"]), sum(got["ibfabric_node_up"]))
	}
	if b := got["ibfabric_scrape_timeout_seconds"][""]; b <= 0 || b > 0.5 {
		t.Errorf("bound %v", b)
	}
}

// Concurrent scrapes share one reading of the fabric.
func TestConcurrentScrapesShare(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	e := newExporter(t, f, Options{})
	if err := f.Sim.SetLatency(sim.Latency{Agent: 2 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	for range 3 {
		go func() { done <- scrapeText(t, e, "") }()
	}
	for range 3 {
		<-done
	}
	got := parse(t, scrapeText(t, e, ""))
	if s := got["ibfabric_scrapes_total"][""]; s < 2 || s > 4 {
		t.Errorf("%v scrapes for 4 requests, 3 of them at once", s)
	}
}

// Options are checked, and a scrape with no topology yet says so without
// a fabric series.
func TestOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no fabric accepted")
	}
	f := openSim(t, "sim:fattree:k=2,n=2")
	if _, err := New(Options{Fabric: f, ScrapeTimeout: -1}); err == nil {
		t.Error("negative timeout accepted")
	}
	e, err := New(Options{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, ""))
	if len(got["ibfabric_node_up"]) != 0 || got["ibfabric_topology_nodes"]["type=switch"] != 0 || got["ibfabric_fabric_up"][""] != 1 {
		t.Errorf("before any discovery: %v", got["ibfabric_node_up"])
	}
}

// The exporter opens the fabric with Open, takes it for lost when the
// local node stops answering, and opens it again.
func TestReopen(t *testing.T) {
	base := openSim(t, "sim:fattree:k=2,n=2", fabric.WithTimeout(30*time.Millisecond), fabric.WithRetries(0))
	opens := 0
	open := func(ctx context.Context) (*fabric.Fabric, error) {
		opens++
		id, port := "hca1", 1
		tr, err := base.Sim.Attach(id, port)
		if err != nil {
			return nil, err
		}
		return fabric.New(ctx, tr, fabric.WithTimeout(30*time.Millisecond), fabric.WithRetries(0))
	}
	e, err := New(Options{Open: open, MinRefreshInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error)
	go func() { runDone <- e.Run(ctx) }()
	defer func() {
		cancel()
		<-runDone
	}()
	allUp := func() bool {
		got := parse(t, scrapeText(t, e, ""))
		return got["ibfabric_fabric_up"][""] == 1 && len(got["ibfabric_node_up"]) > 0 && sum(got["ibfabric_node_up"]) == float64(len(got["ibfabric_node_up"]))
	}
	waitFor(t, allUp)
	if err := base.Sim.SetNodeDead("hca1", true); err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, ""))
	if got["ibfabric_fabric_up"][""] != 0 || sum(got["ibfabric_node_up"]) != 0 {
		t.Errorf("local node dead: fabric up %v, %v nodes up", got["ibfabric_fabric_up"][""], sum(got["ibfabric_node_up"]))
	}
	if err := base.Sim.SetNodeDead("hca1", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, allUp)
	got = parse(t, scrapeText(t, e, ""))
	if got["ibfabric_fabric_opens_total"]["result=success"] < 2 || opens < 2 {
		t.Errorf("%d opens, %v counted", opens, got["ibfabric_fabric_opens_total"]["result=success"])
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Label values are escaped as the text format wants them.
func TestEscaping(t *testing.T) {
	s := makeSeries([]string{"a", "b"}, []string{"x\"y\\z\nw", "\xff"})
	if want := `{a="x\"y\\z\nw",b="` + "\uFFFD" + `"}`; s.text != want {
		t.Errorf("%s, want %s", s.text, want)
	}
}

// A bound too short for the fabric leaves nodes unread (up 0), but that
// is no fault of theirs: no early refresh, the fabric not taken for lost.
func TestShortBoundIsNotAFault(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	opens := 0
	e, err := New(Options{Fabric: f, Open: func(context.Context) (*fabric.Fabric, error) { opens++; return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	parse(t, scrapeText(t, e, ""))
	if err := f.Sim.SetLatency(sim.Latency{Agent: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	got := parse(t, scrapeText(t, e, "0.1"))
	if sum(got["ibfabric_node_up"]) != 0 || len(got["ibfabric_node_up"]) != 24 {
		t.Fatalf("%v of %d nodes read within 90 ms at 200 ms a read", sum(got["ibfabric_node_up"]), len(got["ibfabric_node_up"]))
	}
	if e.want || e.lost || got["ibfabric_fabric_up"][""] != 1 {
		t.Errorf("a short bound asked for a refresh (%v) or lost the fabric (%v)", e.want, e.lost)
	}
}
