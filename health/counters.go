package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/subnet"
)

var _ = register(&Check{
	Name: "counters", Severity: Warning, Default: true,
	Needs: NeedCounters,
	Doc: `Error counters (IBA 16.1.3.5, 16.1.4.11) read twice, Options.Interval
apart, as ibdiagnet does around its run: a counter that rose by at least
its threshold (Options.Thresholds; by default ibdiagnet 1.x's table:
SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter and
PortRcvErrors 1, PortXmitDiscards, PortXmitConstraintErrors,
PortRcvConstraintErrors, LocalLinkIntegrityErrors,
ExcessiveBufferOverrunErrors and VL15Dropped 10), that went backwards
(cleared during the run), or that stands at its largest value (a
PortCounters counter stops there: overflow), and, with Options.Limits
(ibdiagnet -P), a counter whose value is at least its limit. Ports whose
counters could not be read are reported too. One finding per port.`,
	run: func(d *Data) []Finding {
		if d.Before == nil || d.After == nil {
			return nil
		}
		th := d.opts.thresholds()
		var out []Finding
		for _, n := range d.Subnet.Nodes() {
			b, a := d.Before[n], d.After[n]
			if b == nil || a == nil {
				continue
			}
			for pn := 0; pn < len(a.Ports) && pn < len(b.Ports); pn++ {
				pa, pb := a.Ports[pn], b.Ports[pn]
				if pa == nil || pb == nil || !pa.OK || !pb.OK {
					continue
				}
				if msgs := judgeCounters(&pb.Counters, &pa.Counters, th, d.opts.Limits, d.Interval); len(msgs) > 0 {
					out = append(out, Finding{Port: counterPort(n, pn), Peer: RefOf(remoteOf(n, pn)), Message: strings.Join(msgs, "; ")})
				}
			}
			// One finding per port whose reads failed, the first error.
			failed := map[int]bool{}
			for _, e := range append(append([]*perf.PortError(nil), b.Errors...), a.Errors...) {
				if failed[e.Port] {
					continue
				}
				failed[e.Port] = true
				out = append(out, Finding{Port: counterPort(n, e.Port), Message: fmt.Sprintf("counters cannot be read: %v", e)})
			}
		}
		return out
	},
})

func counterPort(n *subnet.Node, pn int) *PortRef {
	if p := n.Port(pn); p != nil {
		return RefOf(p)
	}
	r := NodeRef(n)
	r.Port = pn
	return r
}

func remoteOf(n *subnet.Node, pn int) *subnet.Port {
	if p := n.Port(pn); p != nil {
		return p.Remote
	}
	return nil
}

// judgeCounters compares two readings of a port as ibdiagnet's
// ComparePMCounters does and says what is wrong, one phrase per counter.
func judgeCounters(before, after *perf.Counters, th, limits *perf.Thresholds, dt interface{ Seconds() float64 }) []string {
	var msgs []string
	seen := map[perf.Counter]bool{}
	for _, k := range th.Counters() {
		seen[k] = true
		d, ok := perf.Diff(before, after, k)
		if !ok {
			continue
		}
		t := th.Limit(k)
		v, _ := after.Get(k)
		switch {
		case d.Reset:
			msgs = append(msgs, fmt.Sprintf("%s went back to %d (cleared during the check)", k, v))
		case t > 0 && d.Value >= t:
			msgs = append(msgs, fmt.Sprintf("%s rose by %d in %.1fs (to %d; threshold %d)", k, d.Value, dt.Seconds(), v, t))
		case after.Saturated(k) || before.Saturated(k):
			msgs = append(msgs, fmt.Sprintf("%s is at its largest value %d (overflow)", k, v))
		}
	}
	if limits != nil {
		ks := limits.Counters()
		sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
		for _, k := range ks {
			v, ok := after.Get(k)
			if ok && v >= limits.Limit(k) && limits.Limit(k) > 0 {
				msgs = append(msgs, fmt.Sprintf("%s is %d, at least its limit %d", k, v, limits.Limit(k)))
			}
		}
	}
	return msgs
}
