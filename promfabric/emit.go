package promfabric

import (
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
)

// noLabels is the series of a family without labels.
var noLabels = &series{}

// numStateFamilies is the length of stateFamilies.
const numStateFamilies = 9

// stateFamilies are the families of the link as the topology has it, and
// how each port's value is made.
var stateFamilies = [numStateFamilies]struct {
	f     *family
	value func(*portView) float64
}{
	{famState, func(p *portView) float64 { return float64(p.portState) }},
	{famPhysState, func(p *portView) float64 { return float64(p.physState) }},
	{famWidthActive, func(p *portView) float64 { return float64(p.widthActive) }},
	{famWidthEnabled, func(p *portView) float64 { return float64(p.widthEnabled) }},
	{famWidthSupported, func(p *portView) float64 { return float64(p.widthSupported) }},
	{famSpeedActive, func(p *portView) float64 { return laneBytes(p.speedActive) }},
	{famSpeedEnabled, func(p *portView) float64 { return laneBytes(p.speedEnabled) }},
	{famSpeedSupported, func(p *portView) float64 { return laneBytes(p.speedSupported) }},
	{famRate, func(p *portView) float64 { return float64(p.widthActive) * laneBytes(p.speedActive) }},
}

// emit gives a scrape's series to s, family by family, in the order of
// families.
func emit(s sink, sc *scrape) {
	t := sc.topo
	// The port counters, where the node answered and the port was read.
	for k := perf.Counter(0); k < perf.NumCounters; k++ {
		s.begin(counterFamilies[k])
		if t == nil || sc.cols[k] == nil {
			continue
		}
		bit, col := uint32(1)<<k, sc.cols[k]
		for i := range t.flat {
			if sc.has[i]&bit != 0 {
				s.value(&t.flat[i], col[i])
			}
		}
	}
	s.begin(famSaturated)
	if t != nil && sc.has != nil {
		for i := range t.flat {
			if sc.has[i] != 0 {
				s.value(&t.flat[i], uint64(sc.saturated[i]))
			}
		}
	}
	// The link as the topology has it, for every port of a node that the
	// last discovery reached, whether the node answered this scrape or not.
	for _, g := range stateFamilies {
		s.begin(g.f)
		if t == nil {
			continue
		}
		for i := range t.flat {
			if p := &t.flat[i]; p.state {
				s.float(p, g.value(p))
			}
		}
	}
	s.begin(famPortInfo)
	if t != nil {
		for i := range t.flat {
			if p := &t.flat[i]; p.num > 0 {
				s.value((*portInfo)(p), 1)
			}
		}
	}
	s.begin(famNodeInfo)
	if t != nil {
		for _, nv := range t.nodes {
			s.value((*nodeInfo)(nv), 1)
		}
	}
	s.begin(famUp)
	if t != nil {
		for i, nv := range t.nodes {
			s.value(nv, b2u(sc.up[i]))
		}
	}
	s.begin(famNodeErrors)
	if t != nil && sc.read {
		for i, nv := range t.nodes[:t.read] {
			s.value(nv, uint64(sc.nodeErrors[i]))
		}
	}

	s.begin(famScrapeDuration)
	s.float(noLabels, sc.took.Seconds())
	s.begin(famScrapeTimeout)
	s.float(noLabels, sc.bound.Seconds())
	s.begin(famScrapeReads)
	s.value(noLabels, uint64(sc.reads))
	s.begin(famScrapeSent)
	s.value(noLabels, uint64(sc.sent))
	s.begin(famScrapeFailed)
	s.value(noLabels, uint64(sc.failed))
	s.begin(famScrapeTimedOut)
	s.value(noLabels, uint64(sc.timeouts))
	s.begin(famScrapeUnreachable)
	s.value(noLabels, uint64(sc.unreachable))
	s.begin(famScrapes)
	s.value(noLabels, sc.totals.scrapes)
	s.begin(famMADsSent)
	s.value(noLabels, sc.totals.madsSent)
	s.begin(famMADsTimedOut)
	s.value(noLabels, sc.totals.madsTimedOut)

	s.begin(famTopoNodes)
	for _, typ := range []string{"switch", "ca", "router", "lost"} {
		n := 0
		if t != nil {
			n = t.types[typ]
		}
		s.value(typeSeries[typ], uint64(n))
	}
	var ports, links, unreachable int
	var taken time.Time
	var took time.Duration
	if t != nil {
		ports, links, unreachable, taken, took = t.ports, t.links, t.unreachable, t.taken, t.took
	}
	s.begin(famTopoPorts)
	s.value(noLabels, uint64(ports))
	s.begin(famTopoLinks)
	s.value(noLabels, uint64(links))
	s.begin(famTopoUnreachable)
	s.value(noLabels, uint64(unreachable))
	s.begin(famTopoTime)
	if !taken.IsZero() {
		s.float(noLabels, float64(taken.UnixNano())/1e9)
	}
	s.begin(famTopoDuration)
	if t != nil {
		s.float(noLabels, took.Seconds())
	}
	s.begin(famTopoRefreshes)
	s.value(&resultSeries[0], sc.totals.refreshOK)
	s.value(&resultSeries[1], sc.totals.refreshErr)
	s.begin(famFabricOpens)
	s.value(&resultSeries[0], sc.totals.opensOK)
	s.value(&resultSeries[1], sc.totals.opensErr)
	s.begin(famFabricUp)
	s.value(noLabels, b2u(sc.fabricUp))
}

var typeSeries = map[string]*series{
	"switch": newSeries([]string{"type"}, []string{"switch"}),
	"ca":     newSeries([]string{"type"}, []string{"ca"}),
	"router": newSeries([]string{"type"}, []string{"router"}),
	"lost":   newSeries([]string{"type"}, []string{"lost"}),
}

var resultSeries = [2]series{
	makeSeries([]string{"result"}, []string{"success"}),
	makeSeries([]string{"result"}, []string{"error"}),
}

// portResult is the reading of port num, nil unless complete.
func portResult(r *perf.NodeResult, num int) *perf.PortResult {
	if num >= len(r.Ports) {
		return nil
	}
	if pr := r.Ports[num]; pr != nil && pr.OK {
		return pr
	}
	return nil
}

// laneBytes is the data rate of one lane at a speed, in bytes per second.
func laneBytes(s iba.Speed) float64 { return s.DataGbps() * 1e9 / 8 }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func newSeries(names, values []string) *series {
	s := makeSeries(names, values)
	return &s
}
