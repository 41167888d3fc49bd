package ibpath

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Path is a parsed target: an *IBPath (LID, GID or GUID addressed) or a
// *DRPath (directed route). Its String is a path spec that Parse reads back.
type Path interface {
	mad.Target
	// Port is the local end port the path leaves from ("mlx5_0/1"), empty
	// for the default one.
	Port() string
	isPath()
}

// IBPath describes a path as the headers of a packet sent on it (LRH, GRH,
// BTH, DETH; IBA 7.7, 8.3, 9.2, 9.3), plus MAD parameters: python-rdma's
// IBPath, with the same attribute names in its spec.
type IBPath struct {
	// EndPort names the local end port (end_port='mlx5_0/1').
	EndPort string
	DLID    uint16
	SLID    uint16
	SL      uint8
	PKey    uint16 // pkey; 0xffff unless set
	// PKeyIndex is the index of PKey in the local port's table (pkey_index).
	PKeyIndex    uint16
	HasGRH       bool // has_grh
	SGID, DGID   iba.GID
	HopLimit     uint8  // hop_limit
	TrafficClass uint8  // traffic_class
	FlowLabel    uint32 // flow_label
	DQPN, SQPN   uint32 // dqpn, sqpn
	QKey         uint32 // qkey
	MTU, Rate    uint8
	// RespTime and PacketLifeTime (resp_time, packet_life_time) give the
	// MAD timeout as python-rdma computes it (IBA C13-13.1.1): 4.096 µs ×
	// (2^(PacketLifeTime+1) + 2^RespTime).
	RespTime       uint8
	PacketLifeTime uint8
	// Retries is how many times a MAD is sent again after the first
	// (python-rdma's retries).
	Retries int
	// TimeoutMS sets the wait per try directly, in milliseconds (timeout;
	// an rdmakit extension).
	TimeoutMS int
	MKey      uint64
	SMKey     uint64
	// NodeGUID names the target by its node GUID (nodeGUID; -G): resolving
	// finds the node's LID with an SA NodeRecord.
	NodeGUID iba.GUID

	set keySet
}

// DRPath is a directed route (IBA 14.2.2): python-rdma's IBDRPath.
type DRPath struct {
	IBPath
	// DrPath is the initial path, starting with 0 (drPath=0:1:4:).
	DrPath []byte
	// DrSLID and DrDLID are 0xffff unless the route starts or ends LID
	// routed (drSLID, drDLID).
	DrSLID, DrDLID uint16
}

func (*IBPath) isPath() {}

// Port returns EndPort.
func (p *IBPath) Port() string { return p.EndPort }

// Has reports whether the spec key was given (DLID, DGID, retries, ...).
func (p *IBPath) Has(key string) bool {
	for i := range keys {
		if keys[i].name == key {
			return p.set.has(i)
		}
	}
	return false
}

// Set sets a spec key from its text as Parse does (Set("SL", "2")).
func (p *IBPath) Set(key, value string) error {
	for i, k := range keys {
		if k.name == key && !k.dr {
			if err := k.parse(p, nil, value); err != nil {
				return fmt.Errorf("path attribute %s=%q: %w", key, value, err)
			}
			p.set.add(i)
			return nil
		}
	}
	return fmt.Errorf("path attribute %q is not known", key)
}

// Mark records that a field assigned directly counts as set: String prints
// it and resolution treats it as given.
func (p *IBPath) Mark(key string) {
	for i, k := range keys {
		if k.name == key {
			p.set.add(i)
		}
	}
}

// NewLID is the path to a unicast LID.
func NewLID(lid uint16) *IBPath {
	p := &IBPath{DLID: lid, PKey: 0xffff}
	p.Mark("DLID")
	return p
}

// NewGID is the path to a port GID.
func NewGID(gid iba.GID) *IBPath {
	p := &IBPath{DGID: gid, PKey: 0xffff}
	p.Mark("DGID")
	return p
}

// NewDR is the directed route through the ports given (0 first).
func NewDR(hops ...byte) *DRPath {
	p := &DRPath{IBPath: IBPath{DLID: mad.LIDPermissive, SLID: mad.LIDPermissive, PKey: 0xffff}, DrPath: hops, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}
	p.Mark("drPath")
	return p
}

// Route gives the addressing and timing for mad.Client.
func (p *IBPath) Route() mad.Route {
	r := mad.Route{
		Addr: mad.Addr{LID: p.DLID, SL: p.SL, QPN: p.DQPN, QKey: p.QKey, PKeyIndex: p.PKeyIndex, PathBits: uint8(p.SLID & 0x7f)},
		MKey: p.MKey, SMKey: p.SMKey, Name: p.String(),
	}
	if p.HasGRH {
		r.Addr.GRH = &mad.GRH{GID: p.DGID, HopLimit: p.HopLimit, TrafficClass: p.TrafficClass, FlowLabel: p.FlowLabel}
	}
	r.Timeout = p.timeout()
	if p.Has("retries") {
		r.Tries = p.Retries + 1
	}
	return r
}

// timeout is MADTimeout when the path gives timeout, resp_time or
// packet_life_time, or 0 for the client's default.
func (p *IBPath) timeout() time.Duration {
	if !p.Has("timeout") && !p.Has("resp_time") && !p.Has("packet_life_time") {
		return 0
	}
	return p.MADTimeout()
}

// Route gives the directed route for mad.Client.
func (p *DRPath) Route() mad.Route {
	r := p.IBPath.Route()
	r.Addr.GRH = nil
	r.Addr.LID = mad.LIDPermissive
	if p.DrSLID != mad.LIDPermissive {
		r.Addr.LID = p.DLID
	}
	r.DR = &mad.DirectedRoute{Path: slices.Clone(p.DrPath), DrSLID: p.DrSLID, DrDLID: p.DrDLID}
	r.Name = p.String()
	return r
}

// String prints the spec: IBPath(DLID=5, SL=2) with the keys given, in
// python-rdma's repr order (sorted by name).
func (p *IBPath) String() string { return spec("IBPath", p, nil) }

// String prints the spec: IBDRPath(drPath=0:1:4:).
func (p *DRPath) String() string { return spec("IBDRPath", &p.IBPath, p) }

// Hops returns the DR path as the comma list infiniband-diags takes
// ("0,1,4").
func (p *DRPath) Hops() string {
	s := make([]string, len(p.DrPath))
	for i, h := range p.DrPath {
		s[i] = strconv.Itoa(int(h))
	}
	if len(s) == 1 {
		return s[0] + ","
	}
	return strings.Join(s, ",")
}

func spec(class string, p *IBPath, dr *DRPath) string {
	var parts []string
	if p.EndPort != "" {
		parts = append(parts, "end_port="+quote(p.EndPort))
	}
	for i, k := range sortedKeys {
		if k.name == "end_port" || (k.dr && dr == nil) || !p.set.has(keyIndex[i]) {
			continue
		}
		parts = append(parts, k.name+"="+k.format(p, dr))
	}
	return class + "(" + strings.Join(parts, ", ") + ")"
}

// quote prints a string value in single quotes as python's repr does.
func quote(s string) string { return "'" + s + "'" }

// keySet records which spec keys were given.
type keySet uint64

func (s *keySet) add(i int)     { *s |= 1 << i }
func (s keySet) has(i int) bool { return s&(1<<i) != 0 }

// key is one spec attribute: how to parse and print it.
type key struct {
	name   string
	dr     bool // only in IBDRPath
	parse  func(p *IBPath, dr *DRPath, v string) error
	format func(p *IBPath, dr *DRPath) string
}

func uintKey(name string, bits int, hex bool, field func(p *IBPath) any) key {
	return key{
		name: name,
		parse: func(p *IBPath, _ *DRPath, v string) error {
			n, err := parseUint(v, bits)
			if err != nil {
				return err
			}
			switch f := field(p).(type) {
			case *uint8:
				*f = uint8(n)
			case *uint16:
				*f = uint16(n)
			case *uint32:
				*f = uint32(n)
			case *uint64:
				*f = n
			case *iba.GUID:
				*f = iba.GUID(n)
			}
			return nil
		},
		format: func(p *IBPath, _ *DRPath) string {
			var n uint64
			switch f := field(p).(type) {
			case *uint8:
				n = uint64(*f)
			case *uint16:
				n = uint64(*f)
			case *uint32:
				n = uint64(*f)
			case *uint64:
				n = *f
			case *iba.GUID:
				n = uint64(*f)
			}
			if hex {
				return "0x" + strconv.FormatUint(n, 16)
			}
			return strconv.FormatUint(n, 10)
		},
	}
}

// lidKey prints multicast and permissive LIDs in hex as python-rdma does.
func lidKey(name string, field func(p *IBPath, dr *DRPath) *uint16, dr bool) key {
	return key{
		name: name, dr: dr,
		parse: func(p *IBPath, d *DRPath, v string) error {
			n, err := parseUint(v, 16)
			if err != nil {
				return err
			}
			*field(p, d) = uint16(n)
			return nil
		},
		format: func(p *IBPath, d *DRPath) string {
			n := *field(p, d)
			if n >= 0xc000 {
				return "0x" + strconv.FormatUint(uint64(n), 16)
			}
			return strconv.Itoa(int(n))
		},
	}
}

func intKey(name string, field func(p *IBPath) *int) key {
	return key{
		name: name,
		parse: func(p *IBPath, _ *DRPath, v string) error {
			n, err := parseUint(v, 31)
			if err != nil {
				return err
			}
			*field(p) = int(n)
			return nil
		},
		format: func(p *IBPath, _ *DRPath) string { return strconv.Itoa(*field(p)) },
	}
}

func gidKey(name string, field func(p *IBPath) *iba.GID) key {
	return key{
		name: name,
		parse: func(p *IBPath, _ *DRPath, v string) error {
			// python-rdma prints GID('fe80::1'); accept that and bare.
			if strings.HasPrefix(v, "GID(") && strings.HasSuffix(v, ")") {
				v = unquote(v[4 : len(v)-1])
			}
			g, err := iba.ParseGID(v)
			if err != nil {
				return err
			}
			*field(p) = g
			return nil
		},
		format: func(p *IBPath, _ *DRPath) string { return field(p).String() },
	}
}

// keys lists every attribute a spec may set. The order is fixed: keySet
// bits index it.
var keys = []key{
	{name: "end_port",
		parse:  func(p *IBPath, _ *DRPath, v string) error { p.EndPort = unquote(v); return checkEndPort(p.EndPort) },
		format: func(p *IBPath, _ *DRPath) string { return quote(p.EndPort) }},
	lidKey("DLID", func(p *IBPath, _ *DRPath) *uint16 { return &p.DLID }, false),
	lidKey("SLID", func(p *IBPath, _ *DRPath) *uint16 { return &p.SLID }, false),
	uintKey("SL", 4, false, func(p *IBPath) any { return &p.SL }),
	uintKey("pkey", 16, true, func(p *IBPath) any { return &p.PKey }),
	uintKey("pkey_index", 16, false, func(p *IBPath) any { return &p.PKeyIndex }),
	{name: "has_grh",
		parse: func(p *IBPath, _ *DRPath, v string) error {
			switch v {
			case "True", "true", "1":
				p.HasGRH = true
			case "False", "false", "0":
				p.HasGRH = false
			default:
				return fmt.Errorf("not True or False")
			}
			return nil
		},
		format: func(p *IBPath, _ *DRPath) string {
			if p.HasGRH {
				return "True"
			}
			return "False"
		}},
	gidKey("SGID", func(p *IBPath) *iba.GID { return &p.SGID }),
	gidKey("DGID", func(p *IBPath) *iba.GID { return &p.DGID }),
	uintKey("hop_limit", 8, false, func(p *IBPath) any { return &p.HopLimit }),
	uintKey("traffic_class", 8, false, func(p *IBPath) any { return &p.TrafficClass }),
	uintKey("flow_label", 20, false, func(p *IBPath) any { return &p.FlowLabel }),
	uintKey("dqpn", 24, false, func(p *IBPath) any { return &p.DQPN }),
	uintKey("sqpn", 24, false, func(p *IBPath) any { return &p.SQPN }),
	uintKey("qkey", 32, true, func(p *IBPath) any { return &p.QKey }),
	uintKey("MTU", 4, false, func(p *IBPath) any { return &p.MTU }),
	uintKey("rate", 6, false, func(p *IBPath) any { return &p.Rate }),
	uintKey("resp_time", 5, false, func(p *IBPath) any { return &p.RespTime }),
	uintKey("packet_life_time", 6, false, func(p *IBPath) any { return &p.PacketLifeTime }),
	intKey("retries", func(p *IBPath) *int { return &p.Retries }),
	intKey("timeout", func(p *IBPath) *int { return &p.TimeoutMS }),
	uintKey("MKey", 64, true, func(p *IBPath) any { return &p.MKey }),
	uintKey("SMKey", 64, true, func(p *IBPath) any { return &p.SMKey }),
	uintKey("nodeGUID", 64, true, func(p *IBPath) any { return &p.NodeGUID }),
	lidKey("drSLID", func(_ *IBPath, d *DRPath) *uint16 { return &d.DrSLID }, true),
	lidKey("drDLID", func(_ *IBPath, d *DRPath) *uint16 { return &d.DrDLID }, true),
	{name: "drPath", dr: true,
		parse: func(_ *IBPath, d *DRPath, v string) error {
			// python-rdma spells it 0:1:4: (colons, since commas split
			// the spec).
			hops, err := parseHops(v, ":")
			if err != nil {
				return err
			}
			d.DrPath = hops
			return nil
		},
		format: func(_ *IBPath, d *DRPath) string {
			var b strings.Builder
			for _, h := range d.DrPath {
				b.WriteString(strconv.Itoa(int(h)))
				b.WriteByte(':')
			}
			return b.String()
		}},
}

// sortedKeys is keys in python's repr order; keyIndex maps back.
var sortedKeys, keyIndex = func() ([]key, []int) {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a].name, keys[b].name) })
	s := make([]key, len(keys))
	for i, j := range idx {
		s[i] = keys[j]
	}
	return s, idx
}()

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// checkEndPort accepts device names and device/port, the characters the
// kernel allows in a device name.
func checkEndPort(s string) error {
	if s == "" || s == "None" {
		return nil
	}
	for _, r := range s {
		if !(r == '/' || r == '_' || r == '-' || r == '.' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("end port %q: character %q", s, r)
		}
	}
	return nil
}

// parseUint reads decimal or 0x hex of at most bits bits.
func parseUint(v string, bits int) (uint64, error) {
	var n uint64
	var err error
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		n, err = strconv.ParseUint(v[2:], 16, 64)
	} else {
		n, err = strconv.ParseUint(v, 10, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	if bits < 64 && n >= 1<<bits {
		return 0, fmt.Errorf("%s does not fit %d bits", v, bits)
	}
	return n, nil
}

// parseHops reads a DR path: port numbers separated by sep, starting with
// 0, with an optional trailing separator ("0," is the local port).
func parseHops(v, sep string) ([]byte, error) {
	parts := strings.Split(v, sep)
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("DR path %q is empty", v)
	}
	if len(parts) > mad.MaxHops+1 {
		return nil, fmt.Errorf("DR path %q has %d hops, at most %d", v, len(parts)-1, mad.MaxHops)
	}
	hops := make([]byte, len(parts))
	for i, s := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 8)
		if err != nil || n >= 255 {
			return nil, fmt.Errorf("DR path %q: %q is not a port number (0-254)", v, s)
		}
		hops[i] = byte(n)
	}
	if hops[0] != 0 {
		return nil, fmt.Errorf("DR path %q must start with 0", v)
	}
	return hops, nil
}
