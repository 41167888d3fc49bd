package health

import (
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// graph is the switch fabric in flat arrays, for the routing and credit
// loop analyses: switches by index, each port's far end, the owner of
// every LID, and a channel number for every directed link.
type graph struct {
	s     *subnet.Subnet
	sw    []*subnet.Node
	swIdx map[*subnet.Node]int32
	// peer[s][p] is switch s port p's far end.
	peer [][]hop
	// owner[lid] is the end port holding lid, -1 for none.
	owner []int32
	ends  []*subnet.Port
	// endSwitch[e] is the switch end port e hangs off (or is, for a
	// switch's port 0), -1 for none; endIn its port there (0 for a
	// switch).
	endSwitch []int32
	endIn     []uint8
	// caCount[s] counts the CA and router ports cabled to switch s.
	caCount []int32
	// chanOf[s][p] numbers the channel out of switch s port p; caChan[e]
	// the channel out of end port e into its switch (-1 for none).
	chanOf  [][]int32
	caChan  []int32
	nChan   int32
	chanEnd []chanInfo
	maxPort int
}

// hop is where a switch port leads.
type hop struct {
	kind uint8 // hopNone, hopSwitch, hopEnd
	to   int32 // switch index or end port index
	port uint8 // port number at the far switch
}

const (
	hopNone = iota
	hopSwitch
	hopEnd
)

// chanInfo says where a channel starts and ends.
type chanInfo struct {
	from *subnet.Port
	// to is the switch it enters (-1 for an end port) and in the port.
	to int32
	in uint8
}

func newGraph(s *subnet.Subnet) *graph {
	g := &graph{s: s, swIdx: map[*subnet.Node]int32{}, owner: make([]int32, 0xc000)}
	for i := range g.owner {
		g.owner[i] = -1
	}
	for _, n := range s.NodesOfType(iba.NodeTypeSwitch) {
		g.swIdx[n] = int32(len(g.sw))
		g.sw = append(g.sw, n)
		g.maxPort = max(g.maxPort, n.NumPorts)
	}
	endIdx := map[*subnet.Port]int32{}
	for _, p := range endPorts(s) {
		endIdx[p] = int32(len(g.ends))
		g.ends = append(g.ends, p)
	}
	g.endSwitch = make([]int32, len(g.ends))
	g.endIn = make([]uint8, len(g.ends))
	g.caChan = make([]int32, len(g.ends))
	g.caCount = make([]int32, len(g.sw))
	for e, p := range g.ends {
		g.endSwitch[e], g.caChan[e] = -1, -1
		first, last := p.LIDs()
		for l := uint32(first); first != 0 && l <= uint32(last) && l < 0xc000; l++ {
			if g.owner[l] < 0 {
				g.owner[l] = int32(e)
			}
		}
		switch {
		case p.Node.Type == iba.NodeTypeSwitch:
			g.endSwitch[e] = g.swIdx[p.Node]
		case p.Remote != nil && p.Remote.Node.Type == iba.NodeTypeSwitch:
			sw := g.swIdx[p.Remote.Node]
			g.endSwitch[e], g.endIn[e] = sw, uint8(p.Remote.Num)
			g.caCount[sw]++
			g.caChan[e] = g.nChan
			g.chanEnd = append(g.chanEnd, chanInfo{from: p, to: sw, in: uint8(p.Remote.Num)})
			g.nChan++
		}
	}
	g.peer = make([][]hop, len(g.sw))
	g.chanOf = make([][]int32, len(g.sw))
	for i, n := range g.sw {
		g.peer[i] = make([]hop, n.NumPorts+1)
		g.chanOf[i] = make([]int32, n.NumPorts+1)
		for pn := 1; pn <= n.NumPorts; pn++ {
			g.chanOf[i][pn] = -1
			p := n.Port(pn)
			if p == nil || p.Remote == nil {
				continue
			}
			r := p.Remote
			ci := chanInfo{from: p, to: -1}
			if r.Node.Type == iba.NodeTypeSwitch {
				g.peer[i][pn] = hop{kind: hopSwitch, to: g.swIdx[r.Node], port: uint8(r.Num)}
				ci.to, ci.in = g.swIdx[r.Node], uint8(r.Num)
			} else if e, ok := endIdx[r]; ok {
				g.peer[i][pn] = hop{kind: hopEnd, to: e}
			} else {
				continue
			}
			g.chanOf[i][pn] = g.nChan
			g.chanEnd = append(g.chanEnd, ci)
			g.nChan++
		}
	}
	return g
}

// lft is switch s's out port for lid, and false when the switch has no
// entry (not read, or 255).
func (g *graph) lft(s int32, lid uint16) (uint8, bool) {
	return g.sw[s].LFTPort(lid)
}
