package subnet

import "github.com/rdmakit/rdmakit/iba"

// Vendor IDs that change how libibnetdisc derives a chassis GUID from the
// system image GUID (chassis.h).
const (
	vendorVoltaire  = 0x08f1
	vendorTopspin   = 0x05ad
	vendorInfiniCon = 0x066a
	vendorXsigo     = 0x1397
)

// chassis is a group of nodes that share a chassis GUID.
type chassis struct {
	num   int // 0: a single node, not shown as a chassis
	guid  iba.GUID
	count int
	nodes []*Node // oldest first, as libibnetdisc's chassis node list
}

// chassisGUID is libibnetdisc's get_chassisguid: the system image GUID,
// with the slot byte masked for Topspin/InfiniCon and Xsigo switches, and
// an Xsigo CA taking its leaf-1 peer's chassis.
func chassisGUID(n *Node) iba.GUID {
	ni := n.NodeInfo()
	sys := uint64(ni.SystemImageGUID)
	switch {
	case ni.VendorID == vendorTopspin || ni.VendorID == vendorInfiniCon:
		return iba.GUID(sys & 0xffffffff00ffffff)
	case ni.VendorID == vendorXsigo || isXsigoGUID(iba.GUID(sys)):
		if !isXsigoHCA(iba.GUID(sys)) && !isXsigoTCA(iba.GUID(sys)) {
			if sys&0xffffffff00000000 == 0x0013970100000000 {
				return iba.GUID(sys & 0xffffffff00ffffff)
			}
			return iba.GUID(sys)
		}
		p := n.Port(1)
		if p == nil {
			return 0
		}
		if p.Remote == nil {
			return iba.GUID(sys)
		}
		rs := uint64(p.Remote.Node.NodeInfo().SystemImageGUID)
		if rs&0xffffffffff000000 == 0x0013970102000000 {
			return iba.GUID(rs & 0xffffffff00ffffff)
		}
		return iba.GUID(sys)
	}
	return iba.GUID(sys)
}

// groupLocked groups nodes into chassis as libibnetdisc's group_nodes does
// for everything but Voltaire and Mellanox IS4 chassis (whose line and
// spine boards it recognises by device ID and internal wiring, which is not
// modelled): nodes with a non-zero system image GUID are grouped by
// chassis GUID, and a group of two or more is a numbered chassis. The walk
// is newest first, like libibnetdisc's node list.
func (s *Subnet) groupLocked() ([]*chassis, map[*Node]*chassis) {
	var list []*chassis
	byGUID := map[iba.GUID]*chassis{}
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		ni := n.NodeInfo()
		if ni.VendorID == vendorVoltaire || ni.SystemImageGUID == 0 {
			continue
		}
		g := chassisGUID(n)
		if c := byGUID[g]; c != nil {
			c.count++
			continue
		}
		c := &chassis{guid: g, count: 1}
		byGUID[g] = c
		list = append(list, c)
	}
	of := map[*Node]*chassis{}
	num := 0
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		ni := n.NodeInfo()
		if ni.VendorID == vendorVoltaire || ni.SystemImageGUID == 0 {
			continue
		}
		c := byGUID[chassisGUID(n)]
		if c == nil || c.count < 2 {
			continue
		}
		if c.num == 0 {
			num++
			c.num = num
		}
		if of[n] == nil {
			of[n] = c
			c.nodes = append([]*Node{n}, c.nodes...)
		}
	}
	return list, of
}
