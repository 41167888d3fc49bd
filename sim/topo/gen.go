package topo

import (
	"fmt"
	"math/rand/v2"

	"github.com/rdmakit/rdmakit/iba"
)

// GUID bases of generated fabrics: fixed, so a generator given the same
// parameters always produces the same GUIDs.
const (
	genSwitchGUID = 0x0008f10500000000
	genCAGUID     = 0x0002c90300000000
	genRouterGUID = 0x0002c90400000000
)

// LinkSpec is the width and speed every generated link gets.
type LinkSpec struct {
	// Lanes is 1, 2, 4, 8 or 12; 0 means 4.
	Lanes int
	// Speed is SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR; "" means
	// SDR.
	Speed string
}

func (l LinkSpec) masks() (w, s, e, x, m uint8, err error) {
	switch l.Lanes {
	case 0, 4:
		w = Width4x
	case 1:
		w = Width1x
	case 2:
		w = Width2x
	case 8:
		w = Width8x
	case 12:
		w = Width12x
	default:
		return 0, 0, 0, 0, 0, fmt.Errorf("link width %dx: want 1, 2, 4, 8 or 12", l.Lanes)
	}
	name := l.Speed
	if name == "" {
		name = "SDR"
	}
	sp, ok := speedMasks[name]
	if !ok {
		return 0, 0, 0, 0, 0, fmt.Errorf("link speed %q: want SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR", l.Speed)
	}
	e = sp.ext
	if e == keepExt {
		e = 0
	}
	return w, sp.speed, e, sp.ext2, sp.mlnx, nil
}

// builder hands out deterministic GUIDs and applies one LinkSpec.
type builder struct {
	t             *Topology
	sw, ca, rt    uint64
	w, s, e, x, m uint8
	hcaPorts      int
}

func newBuilder(l LinkSpec, hcaPorts int) (*builder, error) {
	w, s, e, x, m, err := l.masks()
	if err != nil {
		return nil, err
	}
	if hcaPorts == 0 {
		hcaPorts = 1
	}
	if hcaPorts < 1 || hcaPorts > 8 {
		return nil, fmt.Errorf("%d ports per HCA: want 1 to 8", hcaPorts)
	}
	return &builder{t: &Topology{}, sw: genSwitchGUID, ca: genCAGUID, rt: genRouterGUID, w: w, s: s, e: e, x: x, m: m, hcaPorts: hcaPorts}, nil
}

func (b *builder) node(typ iba.NodeType, id string, ports int) int {
	var g uint64
	switch typ {
	case iba.NodeTypeSwitch:
		g = b.sw
		b.sw++
	case iba.NodeTypeCA:
		g = b.ca
		b.ca += uint64(ports) + 1
	default:
		g = b.rt
		b.rt += uint64(ports) + 1
	}
	i := b.t.AddNode(typ, id, id, ports, iba.GUID(g))
	for p := 0; p <= ports; p++ {
		x := b.t.Port(i, p)
		x.Width, x.Speed, x.SpeedExt, x.SpeedExt2, x.MlnxSpeed = b.w, b.s, b.e, b.x, b.m
	}
	return i
}

func (b *builder) link(a, pa, c, pc int) error { return b.t.Connect(a, pa, c, pc) }

// hosts cables end nodes to the host slots: slot i is (switch, port). With
// several ports per HCA, port q of every HCA takes the q-th share of the
// slots, so each port lands on a different part of the fabric (rails). The
// last `routers` end nodes are two-port routers with port 1 cabled.
func (b *builder) hosts(slots [][2]int, routers int) error {
	hp := b.hcaPorts
	if routers < 0 || routers > len(slots) {
		return fmt.Errorf("%d routers: want 0 to %d", routers, len(slots))
	}
	nHCA := (len(slots) - routers) / hp
	for h := 0; h < nHCA; h++ {
		n := b.node(iba.NodeTypeCA, fmt.Sprintf("hca%d", h+1), hp)
		b.t.Nodes[n].Desc = fmt.Sprintf("hca%d HCA-1", h+1)
		for q := 1; q <= hp; q++ {
			s := slots[(q-1)*nHCA+h]
			if err := b.link(s[0], s[1], n, q); err != nil {
				return err
			}
		}
	}
	for r := 0; r < routers; r++ {
		n := b.node(iba.NodeTypeRouter, fmt.Sprintf("router%d", r+1), 2)
		s := slots[len(slots)-routers+r]
		if err := b.link(s[0], s[1], n, 1); err != nil {
			return err
		}
	}
	return nil
}

// FatTreeConfig describes a k-ary n-tree (Petrini and Vanneschi): n levels
// of k^(n-1) switches with 2k ports, k down and k up, and k^n host slots.
type FatTreeConfig struct {
	K, N int
	// HCAPorts is the number of ports per HCA (default 1); each port of an
	// HCA is cabled to a different leaf, as in a multi-rail fabric.
	HCAPorts int
	// Routers replaces that many host slots by routers.
	Routers int
	Link    LinkSpec
}

// FatTree generates a k-ary n-tree. Switch (level l, index s) is "ft-l<l>-<s>"
// with level 0 the leaves; its up port k+1+j goes to the switch one level up
// whose index is s with base-k digit l replaced by j.
func FatTree(c FatTreeConfig) (*Topology, error) {
	if c.K < 1 || c.K > 127 || c.N < 1 {
		return nil, fmt.Errorf("fat tree k=%d n=%d: want k in 1..127 and n >= 1", c.K, c.N)
	}
	k, n := int64(c.K), int64(c.N)
	per64 := satPow(k, n-1)
	switches := satMul(n, per64)
	if err := checkGenerated(fmt.Sprintf("fat tree k=%d n=%d", c.K, c.N), switches, satMul(switches, 2*k+1), satMul(per64, k), int64(c.Routers), int64(c.HCAPorts)); err != nil {
		return nil, err
	}
	per := int(per64)
	b, err := newBuilder(c.Link, c.HCAPorts)
	if err != nil {
		return nil, err
	}
	sw := make([][]int, c.N)
	for l := 0; l < c.N; l++ {
		sw[l] = make([]int, per)
		for s := 0; s < per; s++ {
			sw[l][s] = b.node(iba.NodeTypeSwitch, fmt.Sprintf("ft-l%d-%d", l, s), 2*c.K)
		}
	}
	pow := 1
	for l := 0; l+1 < c.N; l++ {
		for s := 0; s < per; s++ {
			digit := (s / pow) % c.K
			for j := 0; j < c.K; j++ {
				up := s - digit*pow + j*pow
				if err := b.link(sw[l][s], c.K+1+j, sw[l+1][up], digit+1); err != nil {
					return nil, err
				}
			}
		}
		pow *= c.K
	}
	slots := make([][2]int, 0, per*c.K)
	for s := 0; s < per; s++ {
		for m := 0; m < c.K; m++ {
			slots = append(slots, [2]int{sw[0][s], m + 1})
		}
	}
	if err := b.hosts(slots, c.Routers); err != nil {
		return nil, err
	}
	return b.t, nil
}

// LeafSpineConfig describes a two-level fabric: leaves with HostsPerLeaf
// host ports and Uplinks ports up, and spines that take Leaves*Uplinks/
// Spines links each. The oversubscription is HostsPerLeaf:Uplinks. When
// Uplinks is a multiple of Spines every leaf reaches every spine (a folded
// Clos); otherwise the uplinks are spread over the spines by a seeded,
// balanced random assignment (and the fabric is checked to be connected).
type LeafSpineConfig struct {
	Leaves, Spines, HostsPerLeaf, Uplinks int
	HCAPorts, Routers                     int
	Seed                                  uint64
	Link                                  LinkSpec
}

// LeafSpine generates a two-level leaf/spine fabric.
func LeafSpine(c LeafSpineConfig) (*Topology, error) {
	if c.Leaves < 1 || c.Spines < 1 || c.HostsPerLeaf < 0 || c.Uplinks < 1 {
		return nil, fmt.Errorf("leaf/spine %+v: want at least one leaf, spine and uplink", c)
	}
	if c.HostsPerLeaf > 254 || c.Uplinks > 254 || c.HostsPerLeaf+c.Uplinks > 254 {
		return nil, fmt.Errorf("leaf/spine: a leaf would have %d ports (at most 254)", int64(c.HostsPerLeaf)+int64(c.Uplinks))
	}
	nl, ns := int64(c.Leaves), int64(c.Spines)
	swPorts := satAdd(satMul(nl, int64(c.HostsPerLeaf+c.Uplinks+1)), satAdd(satMul(nl, int64(c.Uplinks)), ns))
	if err := checkGenerated(fmt.Sprintf("leaf/spine leaves=%d spines=%d hosts=%d uplinks=%d", c.Leaves, c.Spines, c.HostsPerLeaf, c.Uplinks),
		satAdd(nl, ns), swPorts, satMul(nl, int64(c.HostsPerLeaf)), int64(c.Routers), int64(c.HCAPorts)); err != nil {
		return nil, err
	}
	total := c.Leaves * c.Uplinks
	if total%c.Spines != 0 {
		return nil, fmt.Errorf("leaf/spine: %d uplinks do not spread evenly over %d spines", total, c.Spines)
	}
	spinePorts := total / c.Spines
	if spinePorts > 254 {
		return nil, fmt.Errorf("leaf/spine: a spine would have %d ports (at most 254)", spinePorts)
	}
	b, err := newBuilder(c.Link, c.HCAPorts)
	if err != nil {
		return nil, err
	}
	leaves := make([]int, c.Leaves)
	spines := make([]int, c.Spines)
	for i := range leaves {
		leaves[i] = b.node(iba.NodeTypeSwitch, fmt.Sprintf("leaf%d", i+1), c.HostsPerLeaf+c.Uplinks)
	}
	for i := range spines {
		spines[i] = b.node(iba.NodeTypeSwitch, fmt.Sprintf("spine%d", i+1), spinePorts)
	}
	next := make([]int, c.Spines) // next free port per spine
	for i := range next {
		next[i] = 1
	}
	if c.Uplinks%c.Spines == 0 {
		for l := range leaves {
			for u := 0; u < c.Uplinks; u++ {
				s := u % c.Spines
				if err := b.link(leaves[l], c.HostsPerLeaf+1+u, spines[s], next[s]); err != nil {
					return nil, err
				}
				next[s]++
			}
		}
	} else {
		slots := make([]int32, 0, total)
		for s := range spines {
			for k := 0; k < spinePorts; k++ {
				slots = append(slots, int32(s))
			}
		}
		r := rand.New(rand.NewPCG(c.Seed, 0x5eed))
		r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		for l := range leaves {
			for u := 0; u < c.Uplinks; u++ {
				s := slots[l*c.Uplinks+u]
				if err := b.link(leaves[l], c.HostsPerLeaf+1+u, spines[s], next[s]); err != nil {
					return nil, err
				}
				next[s]++
			}
		}
		if !connected(b.t) {
			return nil, fmt.Errorf("leaf/spine: seed %d gives a disconnected fabric; try another seed or more uplinks", c.Seed)
		}
	}
	slots := make([][2]int, 0, c.Leaves*c.HostsPerLeaf)
	for l := range leaves {
		for h := 0; h < c.HostsPerLeaf; h++ {
			slots = append(slots, [2]int{leaves[l], h + 1})
		}
	}
	if err := b.hosts(slots, c.Routers); err != nil {
		return nil, err
	}
	return b.t, nil
}

// DragonflyConfig describes a canonical dragonfly (Kim et al.): groups of
// A routers (switches) fully connected inside the group, P hosts per
// switch, H global links per switch, and A*H+1 groups so that every pair of
// groups has exactly one global link.
type DragonflyConfig struct {
	A, P, H           int
	HCAPorts, Routers int
	Link              LinkSpec
}

// Dragonfly generates a dragonfly. Switch r of group g is "df-g<g>-r<r>";
// its ports are P host ports, then A-1 local ports, then H global ports.
func Dragonfly(c DragonflyConfig) (*Topology, error) {
	if c.A < 1 || c.P < 0 || c.H < 1 {
		return nil, fmt.Errorf("dragonfly %+v: want A >= 1, P >= 0, H >= 1", c)
	}
	if c.P > 254 || c.A > 255 || c.H > 254 || c.P+c.A-1+c.H > 254 {
		return nil, fmt.Errorf("dragonfly: a switch would have %d ports (at most 254)", int64(c.P)+int64(c.A)-1+int64(c.H))
	}
	ports := c.P + c.A - 1 + c.H
	groups := c.A*c.H + 1
	switches := int64(groups) * int64(c.A)
	if err := checkGenerated(fmt.Sprintf("dragonfly a=%d p=%d h=%d", c.A, c.P, c.H), switches, switches*int64(ports+1), switches*int64(c.P), int64(c.Routers), int64(c.HCAPorts)); err != nil {
		return nil, err
	}
	b, err := newBuilder(c.Link, c.HCAPorts)
	if err != nil {
		return nil, err
	}
	sw := make([][]int, groups)
	for g := range sw {
		sw[g] = make([]int, c.A)
		for r := range sw[g] {
			sw[g][r] = b.node(iba.NodeTypeSwitch, fmt.Sprintf("df-g%d-r%d", g, r), ports)
		}
	}
	// Local port of router r towards router q (q != r).
	local := func(r, q int) int {
		if q < r {
			return c.P + 1 + q
		}
		return c.P + q
	}
	for g := range sw {
		for r := 0; r < c.A; r++ {
			for q := r + 1; q < c.A; q++ {
				if err := b.link(sw[g][r], local(r, q), sw[g][q], local(q, r)); err != nil {
					return nil, err
				}
			}
		}
	}
	global := c.P + c.A
	for g := 0; g < groups; g++ {
		for x := 0; x < c.A*c.H; x++ {
			t := x
			if x >= g {
				t = x + 1
			}
			if t < g {
				continue // cabled from group t already
			}
			y := g // index of the link back, in group t
			if g >= t {
				y = g - 1
			}
			if err := b.link(sw[g][x/c.H], global+x%c.H, sw[t][y/c.H], global+y%c.H); err != nil {
				return nil, err
			}
		}
	}
	var slots [][2]int
	for g := range sw {
		for r := range sw[g] {
			for h := 0; h < c.P; h++ {
				slots = append(slots, [2]int{sw[g][r], h + 1})
			}
		}
	}
	if err := b.hosts(slots, c.Routers); err != nil {
		return nil, err
	}
	return b.t, nil
}

// RandomConfig describes an irregular fabric: Switches switches of Radix
// ports joined by a random spanning tree plus ExtraLinks random links, and
// Hosts HCAs on the ports left free, spread round robin.
type RandomConfig struct {
	Switches, Radix, Hosts, ExtraLinks int
	HCAPorts, Routers                  int
	Seed                               uint64
	Link                               LinkSpec
}

// Random generates an irregular fabric; the same Seed gives the same fabric.
func Random(c RandomConfig) (*Topology, error) {
	if c.Switches < 1 || c.Radix < 2 || c.Radix > 254 || c.Hosts < 0 || c.ExtraLinks < 0 {
		return nil, fmt.Errorf("random fabric %+v: want switches >= 1, radix 2..254, hosts and extra links >= 0", c)
	}
	hp := int64(max(c.HCAPorts, 1))
	if err := checkGenerated(fmt.Sprintf("random fabric switches=%d radix=%d hosts=%d", c.Switches, c.Radix, c.Hosts),
		int64(c.Switches), satMul(int64(c.Switches), int64(c.Radix)+1), satAdd(satMul(int64(c.Hosts), hp), int64(max(c.Routers, 0))), int64(max(c.Routers, 0)), hp); err != nil {
		return nil, err
	}
	if c.ExtraLinks > c.Switches*c.Radix {
		return nil, fmt.Errorf("random fabric: %d extra links do not fit %d switches of %d ports", c.ExtraLinks, c.Switches, c.Radix)
	}
	b, err := newBuilder(c.Link, c.HCAPorts)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x1ab))
	sw := make([]int, c.Switches)
	used := make([]int, c.Switches)
	for i := range sw {
		sw[i] = b.node(iba.NodeTypeSwitch, fmt.Sprintf("sw%d", i+1), c.Radix)
	}
	hostPorts := c.Hosts*max(c.HCAPorts, 1) + c.Routers
	if 2*(c.Switches-1+c.ExtraLinks)+hostPorts > c.Switches*c.Radix {
		return nil, fmt.Errorf("random fabric: %d switches of %d ports cannot hold %d links and %d host ports", c.Switches, c.Radix, c.Switches-1+c.ExtraLinks, hostPorts)
	}
	join := func(a, z int) error {
		used[a]++
		used[z]++
		return b.link(sw[a], used[a], sw[z], used[z])
	}
	for i := 1; i < c.Switches; i++ {
		// attach to a random earlier switch with a free port
		for tries := 0; ; tries++ {
			j := r.IntN(i)
			if used[j] < c.Radix-1 || (tries > 4*i && used[j] < c.Radix) {
				if err := join(i, j); err != nil {
					return nil, err
				}
				break
			}
			if tries > 64*i+64 {
				return nil, fmt.Errorf("random fabric: radix %d too small to join %d switches", c.Radix, c.Switches)
			}
		}
	}
	budget := c.Switches*c.Radix - hostPorts
	for k := 0; k < c.ExtraLinks; k++ {
		placed := false
		for tries := 0; tries < 1000 && !placed; tries++ {
			a, z := r.IntN(c.Switches), r.IntN(c.Switches)
			if a == z || used[a] >= c.Radix || used[z] >= c.Radix {
				continue
			}
			if sum(used)+2 > budget {
				break
			}
			if err := join(a, z); err != nil {
				return nil, err
			}
			placed = true
		}
		if !placed {
			return nil, fmt.Errorf("random fabric: no room for extra link %d", k+1)
		}
	}
	var slots [][2]int
	for len(slots) < hostPorts {
		progress := false
		for i := range sw {
			if used[i] < c.Radix && len(slots) < hostPorts {
				used[i]++
				slots = append(slots, [2]int{sw[i], used[i]})
				progress = true
			}
		}
		if !progress {
			return nil, fmt.Errorf("random fabric: no free ports for %d host ports", hostPorts)
		}
	}
	if err := b.hosts(slots, c.Routers); err != nil {
		return nil, err
	}
	return b.t, nil
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// connected reports whether every node can reach every other.
func connected(t *Topology) bool {
	if len(t.Nodes) == 0 {
		return true
	}
	seen := make([]bool, len(t.Nodes))
	stack := []int32{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nd := &t.Nodes[n]
		for p := 1; p <= int(nd.NumPorts); p++ {
			x := &t.Ports[int(nd.PortBase)+p]
			if x.Peer >= 0 && !seen[x.Peer] {
				seen[x.Peer] = true
				count++
				stack = append(stack, x.Peer)
			}
		}
	}
	return count == len(t.Nodes)
}
