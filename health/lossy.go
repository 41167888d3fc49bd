package health

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

// probeLinks sends Options.LossyCount NodeInfo SMPs across every link
// reachable by directed route (out of a switch, or out of the local
// port) through r, one try each, counting those that get no answer; the
// function it returns, called once r is done, tells each link whether
// the loss may lie before it.
func (d *Data) probeLinks(r *reader) func() {
	o := d.opts
	count := o.lossyCount()
	timeout := o.LossyTimeout
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	from, fromPort := d.Subnet.From()
	mc := r.mc
	var mu sync.Mutex
	byFar := map[*subnet.Node]*LinkLoss{}
	for _, l := range Links(d.Subnet) {
		for _, dir := range [][2]*subnet.Port{l, {l[1], l[0]}} {
			a, b := dir[0], dir[1]
			local := a.Node == from && a.Num == fromPort && len(a.Node.Path) == 0
			if (a.Node.Type != iba.NodeTypeSwitch && !local) || len(a.Node.Path) >= subnet.MaxHops {
				continue
			}
			path := a.Node.Path.Extend(uint8(a.Num))
			// Along the tree of the discovery: the far node's own path.
			if string(path) != string(b.Node.Path) {
				continue
			}
			ll := &LinkLoss{From: a, To: b, Sent: count}
			d.Lossy = append(d.Lossy, ll)
			byFar[b.Node] = ll
			rt := r.drRoute(path)
			rt.Timeout, rt.Tries = timeout, 1
			for i := 0; i < count; i++ {
				r.s.SubmitAsync(nodeKey(b.Node), "NodeInfo", func(ctx context.Context, fin func(error)) {
					mc.Start(ctx, mad.Request{Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: iba.AttrIDNodeInfo}, func(_ *mad.Reply, err error) {
						if err != nil && ctx.Err() == nil {
							mu.Lock()
							ll.Lost++
							mu.Unlock()
						}
						fin(nil)
					})
				})
			}
		}
	}
	return func() {
		for _, ll := range d.Lossy {
			if up := byFar[ll.From.Node]; up != nil && up.Lost > 0 {
				ll.ParentLost = true
			}
		}
	}
}

var _ = register(&Check{
	Name: "lossy-links", Severity: Error, Default: true,
	Needs: NeedLossy,
	Doc: `Links that lose packets: Options.LossyCount (ibdiagnet -c, default 10)
NodeInfo SMPs are sent by directed route across every link of the
discovery's tree, one try each, and a link is bad when SMPs to the node
behind it get no answer while those to the node before it all do —
ibdiagnet's bad links detection (DetectBadLinks), which sends each
directed route MAD -c times. One finding per bad link.`,
	run: func(d *Data) []Finding {
		var out []Finding
		for _, ll := range d.Lossy {
			if ll.Lost == 0 || ll.ParentLost {
				continue
			}
			out = append(out, Finding{Port: RefOf(ll.From), Peer: RefOf(ll.To),
				Message: fmt.Sprintf("%d of %d SMPs across the link got no answer", ll.Lost, ll.Sent)})
		}
		return out
	},
})
