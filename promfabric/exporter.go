package promfabric

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/subnet"
)

// Defaults of Options.
const (
	DefaultScrapeTimeout      = 10 * time.Second
	DefaultRefreshInterval    = 5 * time.Minute
	DefaultMinRefreshInterval = 15 * time.Second
	DefaultRefreshTimeout     = 2 * time.Minute
	DefaultForgetAfter        = time.Hour
)

// Options say which fabric the exporter reads and how.
type Options struct {
	// Fabric is an open fabric to read; the caller closes it. Open, when
	// set instead, opens the fabric (Run calls it at start and again
	// after the fabric was lost), and the exporter closes what it opened.
	Fabric *fabric.Fabric
	Open   func(ctx context.Context) (*fabric.Fabric, error)

	// Names gives nodes their node-name-map names; nil: descriptions.
	Names *namemap.Map
	// Want says which nodes are exported; nil: every node.
	Want func(n *subnet.Node) bool

	// ScrapeTimeout bounds a scrape's counter reads (a Prometheus
	// scrape's own timeout bounds them further, see Handler).
	ScrapeTimeout time.Duration
	// RefreshInterval is how often Run discovers the topology again;
	// MinRefreshInterval the least time between two discoveries, also
	// those a scrape asks for early; RefreshTimeout bounds one.
	RefreshInterval, MinRefreshInterval, RefreshTimeout time.Duration
	// ForgetAfter is how long a node the discoveries no longer reach
	// stays exported (node_up 0).
	ForgetAfter time.Duration
	// Discover sets how the topology is discovered (directed route by
	// default).
	Discover subnet.DiscoverOptions
	// MaxInFlight and PerNode bound a scrape's reads outstanding at once
	// and per node (perf.SweepOptions; 0: its defaults).
	MaxInFlight, PerNode int

	// Logger is told of discoveries, lost fabrics and reopenings; nil:
	// nothing is logged.
	Logger *slog.Logger
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Exporter reads a fabric's counters for Prometheus. It is a
// prometheus.Collector; Handler serves it over HTTP. Its methods are safe
// for concurrent use: scrapes that come while one runs wait for it and
// share its reading.
type Exporter struct {
	o   Options
	log *slog.Logger

	mu          sync.Mutex
	fab         *fabric.Fabric
	owned       bool // fab came from Open
	lost        bool // the local node stopped answering: open again
	stale       bool // the topology is from before the fabric was opened again
	topo        *topology
	caps        map[iba.GUID]perf.Capabilities
	lastRefresh time.Time
	want        bool // an early refresh was asked for
	stats       totals

	refresh chan struct{} // an early refresh is wanted

	scrapeMu sync.Mutex
	flight   *flight
}

// totals are the exporter's counters since it started.
type totals struct {
	scrapes, madsSent, madsTimedOut uint64
	refreshOK, refreshErr           uint64
	opensOK, opensErr               uint64
}

// flight is a scrape under way, which later callers wait for.
type flight struct {
	done chan struct{}
	sc   *scrape
}

// scrape is one reading of the fabric: the topology it read and what each
// of its nodes and ports gave.
type scrape struct {
	topo *topology
	up   []bool // by topology node
	// nodeErrors are the failed reads of each node the scrape read.
	nodeErrors []int32
	// By port of the topology's flat: the counters read (bit k for
	// perf.Counter k; 0 where the port was not read), their values
	// (data in octets), and how many stand saturated.
	has       []uint32
	cols      [perf.NumCounters][]uint64
	saturated []uint8
	start     time.Time
	took      time.Duration
	bound     time.Duration
	read      bool // the fabric was read (else every node is up 0)

	reads, sent, failed, timeouts, unreachable int

	totals    totals
	fabricUp  bool
	refreshed time.Time
}

// ErrNoFabric is the error of a scrape or refresh while no fabric is open.
var ErrNoFabric = errors.New("promfabric: no fabric open")

// New makes an exporter. With Options.Fabric it can scrape and refresh at
// once; with Options.Open the fabric is opened by Run.
func New(o Options) (*Exporter, error) {
	if o.Fabric == nil && o.Open == nil {
		return nil, errors.New("promfabric: Options need a Fabric or an Open function")
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
		n   string
	}{
		{&o.ScrapeTimeout, DefaultScrapeTimeout, "scrape timeout"},
		{&o.RefreshInterval, DefaultRefreshInterval, "refresh interval"},
		{&o.MinRefreshInterval, DefaultMinRefreshInterval, "least refresh interval"},
		{&o.RefreshTimeout, DefaultRefreshTimeout, "refresh timeout"},
		{&o.ForgetAfter, DefaultForgetAfter, "forget-after time"},
	} {
		if *d.v < 0 {
			return nil, fmt.Errorf("promfabric: a negative %s (%v)", d.n, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if o.MaxInFlight < 0 || o.PerNode < 0 {
		return nil, errors.New("promfabric: MaxInFlight and PerNode must not be negative")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Exporter{o: o, log: log, fab: o.Fabric, caps: map[iba.GUID]perf.Capabilities{}, refresh: make(chan struct{}, 1)}, nil
}

// Run keeps the topology fresh until ctx ends: it opens the fabric (with
// Options.Open), discovers the subnet, and discovers it again every
// RefreshInterval, early when a scrape asks for it, and after opening the
// fabric again when it was lost. It returns ctx's error, having closed the
// fabric it opened.
func (e *Exporter) Run(ctx context.Context) error {
	defer e.closeOwned()
	backoff := time.Second
	for {
		if e.needOpen() {
			if err := e.open(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				e.log.Warn("opening the fabric", "err", err, "retry", backoff)
				if !sleep(ctx, backoff) {
					return ctx.Err()
				}
				backoff = min(2*backoff, 30*time.Second)
				continue
			}
			backoff = time.Second
		}
		wait := e.untilRefresh()
		if wait <= 0 {
			if err := e.Refresh(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("discovering the topology", "err", err)
			}
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		case <-e.refresh:
			t.Stop()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// untilRefresh is the time to the next discovery: RefreshInterval after
// the last, or MinRefreshInterval after it when one is wanted early (no
// topology yet, a fabric opened again, a scrape's request).
func (e *Exporter) untilRefresh() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fab == nil || e.lost {
		return time.Hour // until the fabric is open again
	}
	since := e.o.Now().Sub(e.lastRefresh)
	if e.topo == nil || e.stale || e.want {
		if e.lastRefresh.IsZero() {
			return 0
		}
		return max(0, e.o.MinRefreshInterval-since)
	}
	return max(0, e.o.RefreshInterval-since)
}

// needOpen says whether Run has to open the fabric (again).
func (e *Exporter) needOpen() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.o.Open != nil && (e.fab == nil || e.lost)
}

// open opens the fabric with Options.Open, closing the lost one first.
func (e *Exporter) open(ctx context.Context) error {
	e.mu.Lock()
	old, owned := e.fab, e.owned
	e.fab, e.owned = nil, false
	e.mu.Unlock()
	if old != nil && owned {
		e.log.Info("the fabric is lost (its local node does not answer): opening it again")
		old.Close()
	}
	f, err := e.o.Open(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.stats.opensErr++
		return err
	}
	e.stats.opensOK++
	e.fab, e.owned, e.lost = f, true, false
	// What the old fabric's LIDs named may be other nodes now.
	e.stale = e.topo != nil
	e.log.Info("fabric open", "uri", f.URI, "lid", f.Local.LID)
	return nil
}

func (e *Exporter) closeOwned() {
	e.mu.Lock()
	f, owned := e.fab, e.owned
	e.fab, e.owned = nil, false
	e.mu.Unlock()
	if f != nil && owned {
		f.Close()
	}
}

// Refresh discovers the topology now and caches it; on failure the old
// topology stays.
func (e *Exporter) Refresh(ctx context.Context) error {
	e.mu.Lock()
	f := e.fab
	e.lastRefresh, e.want = e.o.Now(), false
	e.mu.Unlock()
	if f == nil {
		return ErrNoFabric
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.RefreshTimeout)
	defer cancel()
	dopt := e.o.Discover
	if dopt.LocalLID == 0 {
		dopt.LocalLID = f.Local.LID
	}
	start := e.o.Now()
	var s *subnet.Subnet
	var rep *subnet.DiscoverReport
	var err error
	if dopt.Method == subnet.BySA {
		s, rep, err = subnet.DiscoverSA(ctx, f.SA(), f.Local, dopt)
	} else {
		s, rep, err = subnet.Discover(ctx, f.MAD, dopt)
	}
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("discovery cut short: %w", ctx.Err())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if rep != nil {
		e.stats.madsSent += uint64(rep.Sent)
	}
	if err != nil {
		e.stats.refreshErr++
		if e.o.Open != nil && f == e.fab {
			e.lost = true
		}
		return fmt.Errorf("discovering the topology: %w", err)
	}
	e.stats.refreshOK++
	now := e.o.Now()
	t := buildTopology(s, e.o.Names, e.o.Want, e.topo, now, e.o.ForgetAfter)
	t.took = now.Sub(start)
	if rep != nil {
		t.unreachable = len(rep.Unreachable())
	}
	if f == e.fab {
		e.stale = false
	}
	e.topo = t
	e.log.Info("topology discovered", "nodes", t.read, "lost", len(t.nodes)-t.read, "ports", t.ports,
		"unreachable", t.unreachable, "took", t.took.Round(time.Millisecond))
	return nil
}

// requestRefresh asks Run for an early discovery.
func (e *Exporter) requestRefresh(why string) {
	e.mu.Lock()
	e.want = true
	e.mu.Unlock()
	select {
	case e.refresh <- struct{}{}:
		e.log.Info("asking for an early topology refresh", "why", why)
	default:
	}
}

// knownCaps gives the cached capabilities of a node's PMA.
func (e *Exporter) knownCaps(n *subnet.Node) (perf.Capabilities, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.caps[n.GUID]
	return c, ok
}

// scrape reads the counters, or waits for the scrape under way and takes
// its reading. bound is the time the reads may take.
func (e *Exporter) scrape(ctx context.Context, bound time.Duration) *scrape {
	e.scrapeMu.Lock()
	if fl := e.flight; fl != nil {
		e.scrapeMu.Unlock()
		select {
		case <-fl.done:
			return fl.sc
		case <-ctx.Done():
			return e.emptyScrape()
		}
	}
	fl := &flight{done: make(chan struct{})}
	e.flight = fl
	e.scrapeMu.Unlock()
	// The reading is shared: one caller that goes away does not cut it
	// short for the others; bound ends it.
	fl.sc = e.read(context.WithoutCancel(ctx), bound)
	e.scrapeMu.Lock()
	e.flight = nil
	e.scrapeMu.Unlock()
	close(fl.done)
	return fl.sc
}

// emptyScrape is a scrape that read nothing.
func (e *Exporter) emptyScrape() *scrape {
	e.mu.Lock()
	defer e.mu.Unlock()
	sc := &scrape{topo: e.topo, start: e.o.Now(), totals: e.stats, fabricUp: e.fab != nil && !e.lost}
	if sc.topo != nil {
		sc.up = make([]bool, len(sc.topo.nodes))
		sc.unreachable = len(sc.topo.nodes)
		sc.refreshed = sc.topo.taken
	}
	return sc
}

// read is one scrape: every port's counters through perf.Sweep over the
// cached topology, within bound.
func (e *Exporter) read(ctx context.Context, bound time.Duration) *scrape {
	e.mu.Lock()
	f, t, stale, lost := e.fab, e.topo, e.stale, e.lost
	e.mu.Unlock()
	if t == nil || f == nil || stale || lost {
		return e.emptyScrape()
	}
	sc := newScrape(t, e.o.Now(), bound)
	j := &judgement{local: f.Local.NodeGUID, taken: make([]bool, len(t.nodes))}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	res, err := perf.Sweep(ctx, f, perf.SweepOptions{
		Subnet:       t.subnet,
		Select:       func(*subnet.Subnet) []*subnet.Node { return t.readNodes() },
		Data:         true,
		Capabilities: e.knownCaps,
		GiveUpSilent: true,
		MaxInFlight:  e.o.MaxInFlight,
		PerNode:      e.o.PerNode,
		// Each node's readings go into the scrape's columns as they
		// come, and are dropped: the sweep of a large fabric then never
		// holds every port's reading at once.
		OnNode: func(r *perf.NodeResult) {
			if i, ok := t.byPtr[r.Node]; ok {
				e.take(sc, j, i, r)
				r.Ports = nil
			}
		},
	})
	sc.took = e.o.Now().Sub(sc.start)
	if err == nil {
		for i, r := range res.Nodes {
			if !j.taken[i] {
				e.take(sc, j, i, r)
			}
		}
		sc.reads, sc.sent, sc.failed, sc.timeouts = res.Reads, res.Sent, res.Failures, res.Timeouts
	}
	e.finish(f, sc, j)
	return sc
}

// newScrape makes the scrape of topology t, its columns empty.
func newScrape(t *topology, start time.Time, bound time.Duration) *scrape {
	n := len(t.flat)
	sc := &scrape{topo: t, start: start, bound: bound, read: true, refreshed: t.taken,
		up: make([]bool, len(t.nodes)), nodeErrors: make([]int32, t.read), has: make([]uint32, n), saturated: make([]uint8, n)}
	for k := range sc.cols {
		sc.cols[k] = make([]uint64, n)
	}
	return sc
}

// judgement is what a scrape's results say beyond their values.
type judgement struct {
	local     iba.GUID
	taken     []bool // by node: its result is in
	why       string // an early refresh is wanted, why
	localDown bool   // the local node did not answer
}

// silent says whether a node's reads failed for a reason of the node's
// (no reply, an error), not only because the scrape's time ran out.
func silent(r *perf.NodeResult) bool {
	if r == nil {
		return false
	}
	for _, pe := range r.Errors {
		if !errors.Is(pe.Err, context.DeadlineExceeded) && !errors.Is(pe.Err, context.Canceled) {
			return true
		}
	}
	return false
}

// readNodes are the topology's nodes the sweep reads.
func (t *topology) readNodes() []*subnet.Node {
	ns := make([]*subnet.Node, t.read)
	for i, nv := range t.nodes[:t.read] {
		ns[i] = nv.node
	}
	return ns
}

// take takes in the result of node i: whether it answered and what its
// ports read (into the scrape's columns), its PMA's capabilities, and
// whether the topology wants refreshing early (a node that stopped
// answering, a link that went down or came up) or the fabric is lost (the
// local node did not answer).
func (e *Exporter) take(sc *scrape, j *judgement, i int, r *perf.NodeResult) {
	t := sc.topo
	nv := t.nodes[i]
	j.taken[i] = true
	e.mu.Lock()
	defer e.mu.Unlock()
	up := false
	if r != nil {
		sc.nodeErrors[i] = int32(len(r.Errors))
		for _, pr := range r.Ports {
			if pr != nil && pr.OK {
				up = true
				break
			}
		}
	}
	sc.up[i] = up
	if !up {
		// A node whose reads ran out of time did not fail: the bound
		// was too short for the fabric.
		if nv.guid == j.local && silent(r) {
			j.localDown = true
		}
		if nv.up && silent(r) && j.why == "" {
			j.why = fmt.Sprintf("node %v stopped answering", nv.guid)
		}
	}
	nv.up = up
	if !up {
		return
	}
	cpiFailed := false
	for _, pe := range r.Errors {
		if pe.Attribute == "ClassPortInfo" {
			cpiFailed = true
		}
	}
	if !cpiFailed {
		e.caps[nv.guid] = r.Caps
	}
	for _, pv := range nv.ports {
		pr := portResult(r, int(pv.num))
		if pr == nil {
			continue
		}
		x := pv.idx
		var has uint32
		var sat uint8
		for k := perf.Counter(0); k < perf.NumCounters; k++ {
			if v, ok := pr.Get(k); ok {
				has |= 1 << k
				sc.cols[k][x] = perf.Octets(k, v)
				if pr.Saturated(k) {
					sat++
				}
			}
		}
		sc.has[x], sc.saturated[x] = has, sat
		downed, _ := pr.Get(perf.LinkDownedCounter)
		pkts := pr.Values[perf.PortXmitPkts] + pr.Values[perf.PortRcvPkts]
		if pv.read && j.why == "" {
			switch {
			case downed > pv.linkDowned:
				j.why = fmt.Sprintf("LinkDownedCounter of %v port %d moved", nv.guid, pv.num)
			case pv.state && pv.portState == uint8(iba.PortStateDown) && pkts > pv.packets:
				j.why = fmt.Sprintf("packets on %v port %d, which the topology has down", nv.guid, pv.num)
			}
		}
		pv.read, pv.linkDowned, pv.packets = true, downed, pkts
	}
}

// finish closes a scrape: the nodes no result came for are up 0, the
// totals are counted, and the judgement acted on.
func (e *Exporter) finish(f *fabric.Fabric, sc *scrape, j *judgement) {
	e.mu.Lock()
	for i, nv := range sc.topo.nodes {
		if !j.taken[i] {
			nv.up = false
		}
		if !sc.up[i] {
			sc.unreachable++
		}
	}
	e.stats.scrapes++
	e.stats.madsSent += uint64(sc.sent)
	e.stats.madsTimedOut += uint64(sc.timeouts)
	if j.localDown && e.o.Open != nil && f == e.fab {
		e.lost = true
		j.why = "the local node did not answer"
	}
	sc.totals = e.stats
	sc.fabricUp = e.fab != nil && !e.lost
	e.mu.Unlock()
	if j.why != "" {
		e.requestRefresh(j.why)
	}
}
