package subnet

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
)

// fakeFabric is a fabric described the way SMPs would answer, filled into
// a Subnet breadth first through the same calls a discovery engine makes.
type fakeFabric struct {
	nodes map[iba.GUID]*fakeNode
}

type fakeNode struct {
	guid  iba.GUID
	typ   iba.NodeType
	desc  string
	ports []fakePort // index = port number; switches have port 0
	lid   uint16
	lmc   uint8
	dead  bool
}

type fakePort struct {
	peer    *fakeNode
	peerNum int
	width   uint8 // LinkWidthActive
	speed   uint8 // LinkSpeedActive
	ext     uint8 // LinkSpeedExtActive
	lid     uint16
}

func (f *fakeFabric) add(n *fakeNode) *fakeNode {
	if f.nodes == nil {
		f.nodes = map[iba.GUID]*fakeNode{}
	}
	f.nodes[n.guid] = n
	return n
}

func connect(a *fakeNode, ap int, b *fakeNode, bp int, width, speed, ext uint8) {
	a.ports[ap] = fakePort{peer: b, peerNum: bp, width: width, speed: speed, ext: ext}
	b.ports[bp] = fakePort{peer: a, peerNum: ap, width: width, speed: speed, ext: ext}
}

func (n *fakeNode) portGUID(num int) iba.GUID {
	if n.typ == iba.NodeTypeSwitch {
		return n.guid
	}
	return n.guid + iba.GUID(num)
}

func (n *fakeNode) nodeInfo(local int) []byte {
	ni := iba.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.typ, NumPorts: uint8(len(n.ports) - 1),
		SystemImageGUID: n.guid, NodeGUID: n.guid, PortGUID: n.portGUID(local), PartitionCap: 64,
		DeviceID: 0x1003, VendorID: 0x2c9, LocalPortNum: uint8(local)}
	b := make([]byte, AttrSize)
	_ = ni.MarshalTo(b)
	return b
}

func (n *fakeNode) portInfo(num int) []byte {
	p := n.ports[num]
	pi := iba.PortInfo{LocalPortNum: uint8(num), LinkWidthActive: p.width, LinkSpeedActive: p.speed,
		LinkSpeedExtActive: p.ext, CapabilityMask: capHasExtSpeeds, VLCap: 4, PortState: iba.PortStateDown,
		PortPhysicalState: iba.PhysPortStatePolling}
	if p.peer != nil {
		pi.PortState, pi.PortPhysicalState = iba.PortStateActive, iba.PhysPortStateLinkUp
	}
	if n.typ == iba.NodeTypeSwitch {
		if num == 0 {
			pi.LID, pi.LMC = n.lid, n.lmc
		}
	} else {
		pi.LID, pi.LMC = p.lid, n.lmc
	}
	b := make([]byte, AttrSize)
	_ = pi.MarshalTo(b)
	return b
}

var errNoAnswer = errors.New("SMP timed out")

// discover fills a Subnet from the fake fabric breadth first from port
// fromPort of node from, as libibnetdisc does (without its timing): the
// calls are the discovery engine's.
func (f *fakeFabric) discover(tb testing.TB, from *fakeNode, fromPort int) *Subnet {
	tb.Helper()
	s := New()
	type visit struct {
		n     *fakeNode
		entry int
		path  DRPath
		via   *Port
	}
	queue := []visit{{n: from, entry: fromPort, path: DRPath{}}}
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v.n.dead {
			s.MarkUnreachable(v.path, v.via, errNoAnswer)
			continue
		}
		entry := v.entry // NodeInfo:LocalPortNum is the port the SMP came in by
		node, port, isNew, err := s.AddNode(v.n.nodeInfo(entry), v.path)
		must(err)
		if v.via != nil {
			must(s.Link(v.via, port))
		}
		if len(v.path) > s.MaxHopsDiscovered {
			s.MaxHopsDiscovered = len(v.path)
		}
		if !isNew {
			if node.Type != iba.NodeTypeSwitch {
				_, err := s.SetPortInfo(node, entry, v.n.portInfo(entry))
				must(err)
			}
			continue
		}
		desc := make([]byte, AttrSize)
		copy(desc, v.n.desc)
		must(s.SetNodeDescription(node, desc))
		if node.Type != iba.NodeTypeSwitch {
			_, err := s.SetPortInfo(node, entry, v.n.portInfo(entry))
			must(err)
			if v.via == nil { // the start CA: go out through its port
				p := node.Ports[entry]
				fp := v.n.ports[entry]
				if fp.peer != nil {
					queue = append(queue, visit{n: fp.peer, entry: fp.peerNum, path: v.path.Extend(uint8(entry)), via: p})
				}
			}
			continue
		}
		si := iba.SwitchInfo{LinearFDBCap: 49152, LinearFDBTop: 100}
		sib := make([]byte, AttrSize)
		_ = si.MarshalTo(sib)
		must(s.SetSwitchInfo(node, sib))
		for num := 0; num < len(v.n.ports); num++ {
			p, err := s.SetPortInfo(node, num, v.n.portInfo(num))
			must(err)
			fp := v.n.ports[num]
			if num == 0 || num == entry || fp.peer == nil || len(v.path) >= MaxHops {
				continue
			}
			queue = append(queue, visit{n: fp.peer, entry: fp.peerNum, path: v.path.Extend(uint8(num)), via: p})
		}
	}
	return s
}

// fatTree makes a two-level fat tree: every leaf has hosts CAs and one
// uplink to each spine; leaf-spine links are 4xEDR, host links 4xQDR.
// LIDs are assigned in order, CAs with LMC lmc.
func fatTree(leaves, spines, hosts int, lmc uint8) (*fakeFabric, *fakeNode) {
	f := &fakeFabric{}
	lid := uint16(1)
	next := func(span uint8) uint16 {
		l := lid
		lid += uint16(1) << span
		return l
	}
	var spineNodes []*fakeNode
	for s := 0; s < spines; s++ {
		spineNodes = append(spineNodes, f.add(&fakeNode{guid: iba.GUID(0x2c90300b00000 + s + 1), typ: iba.NodeTypeSwitch,
			desc: fmt.Sprintf("spine-%d", s+1), ports: make([]fakePort, leaves+1), lid: next(0)}))
	}
	var first *fakeNode
	for l := 0; l < leaves; l++ {
		leaf := f.add(&fakeNode{guid: iba.GUID(0x2c90300a00000 + l + 1), typ: iba.NodeTypeSwitch,
			desc: fmt.Sprintf("leaf-%d", l+1), ports: make([]fakePort, hosts+spines+1), lid: next(0)})
		for s, sp := range spineNodes {
			connect(leaf, hosts+s+1, sp, l+1, 2, 4, 2)
		}
		for h := 0; h < hosts; h++ {
			ca := f.add(&fakeNode{guid: iba.GUID(0x2c90300c00000 + (l*hosts+h+1)<<4), typ: iba.NodeTypeCA,
				desc: fmt.Sprintf("host-%d", l*hosts+h+1), ports: make([]fakePort, 2), lmc: lmc})
			connect(ca, 1, leaf, h+1, 2, 4, 0)
			ca.ports[1].lid = next(lmc)
			if first == nil {
				first = ca
			}
		}
	}
	return f, first
}

// treeFabric makes a three-level tree big enough for the cache benchmark:
// a root switch, aggs aggregation switches under it, leaves under each of
// those and hosts CAs under each leaf. LIDs wrap around the unicast range
// (a fabric this size is beyond one subnet's LIDs; the index keeps the
// first owner).
func treeFabric(aggs, leaves, hosts int) (*fakeFabric, *fakeNode) {
	f := &fakeFabric{}
	n := 0
	lid := func() uint16 { n++; return uint16((n-1)%maxUnicastLID + 1) }
	root := f.add(&fakeNode{guid: 0x2c90300d00000, typ: iba.NodeTypeSwitch, desc: "root", ports: make([]fakePort, aggs+1), lid: lid()})
	var first *fakeNode
	for a := 0; a < aggs; a++ {
		agg := f.add(&fakeNode{guid: iba.GUID(0x2c90300e00000 + a + 1), typ: iba.NodeTypeSwitch, desc: fmt.Sprintf("agg-%d", a+1), ports: make([]fakePort, leaves+2), lid: lid()})
		connect(root, a+1, agg, leaves+1, 8, 4, 4)
		for l := 0; l < leaves; l++ {
			li := a*leaves + l
			leaf := f.add(&fakeNode{guid: iba.GUID(0x2c90300a00000 + li + 1), typ: iba.NodeTypeSwitch, desc: fmt.Sprintf("leaf-%d", li+1), ports: make([]fakePort, hosts+2), lid: lid()})
			connect(agg, l+1, leaf, hosts+1, 2, 4, 2)
			for h := 0; h < hosts; h++ {
				hi := li*hosts + h
				ca := f.add(&fakeNode{guid: iba.GUID(0x2c90400000000 + (hi+1)<<4), typ: iba.NodeTypeCA, desc: fmt.Sprintf("host-%d", hi+1), ports: make([]fakePort, 2)})
				connect(ca, 1, leaf, h+1, 2, 4, 0)
				ca.ports[1].lid = lid()
				if first == nil {
					first = ca
				}
			}
		}
	}
	return f, first
}
