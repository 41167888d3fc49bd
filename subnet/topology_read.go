package subnet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/textfile"
)

// ErrSyntax is matched by every *TopologyError.
var ErrSyntax = errors.New("topology file syntax error")

// TopologyError is a topology file line that cannot be read.
type TopologyError struct {
	Line int
	Text string
	Msg  string
}

func (e *TopologyError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("topology line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("topology line %d: %s: %q", e.Line, e.Msg, e.Text)
}

// Is makes errors.Is(err, ErrSyntax) true.
func (e *TopologyError) Is(target error) bool { return target == ErrSyntax }

// maxTopologyLine bounds one line; ibsim's own limit is 255 bytes, real
// ibnetdiscover lines with 64-byte descriptions stay well under 512.
const maxTopologyLine = 4096

type topoNode struct {
	id             string
	typ            iba.NodeType
	nports         int
	guid, portGUID iba.GUID
	sysGUID        iba.GUID
	vendor, device uint32
	desc           string
	lid            uint16
	lmc            uint8
	enhanced       bool
	ports          map[int]*topoPort
	portOrder      []int
	line           int
}

type topoPort struct {
	num, ext          int
	guid              iba.GUID
	remoteID          string
	remoteNum         int
	remoteExt         int
	remoteGUID        iba.GUID
	lid               uint16
	lmc               uint8
	width, speed      uint8 // PortInfo encodings; 0 unknown
	espeed            uint8 // LinkSpeedExtActive
	ext2, fdr10       bool
	ispeedRaw, vlcap  uint8
	haveRaw, haveFull bool
	line              int
}

// ReadTopology reads a topology file: ibnetdiscover's output (also with
// -g, -f or -m) or an ibsim network file. GUIDs follow ibsim's rules:
// switchguid=/caguid=/rtguid= set (=) or offset (+) the GUID of the next
// node of that kind, which counts up from 0x200000 (switches) or 0x100000
// (CAs, by ports+1) otherwise; a CA port's GUID is the one in parentheses
// on its line, or node GUID + port number. Link rates come from the
// "lid N <width><speed>" at the end of each port line's comment, LIDs
// from "lid N lmc M". ibsim's include, module= and do directives are not
// supported; its width=, speed=, extspeed= and pdebug directives set
// enabled rates and debugging, which a topology database does not hold,
// and are read and ignored.
//
// The reader is strict: a line it does not know, a number that does not
// fit its field, a GUID counter that would pass 0xffffffffffffffff, a line
// longer than 4096 bytes, binary data (a NUL byte) and a file of more than
// MaxFileSize bytes are errors, with the line number.
//
// Nodes are taken to have been discovered in the reverse of the file's
// order, so that WriteTopology prints them in the order read. The start
// node is the one named by "# Initiated from node", else the last CA.
func ReadTopology(r io.Reader) (*Subnet, error) {
	sc := bufio.NewScanner(&countingReader{r: r, limit: MaxFileSize, what: "topology file"})
	sc.Buffer(make([]byte, 0, 512), maxTopologyLine)
	sc.Split(textfile.ScanText)
	var (
		nodes    []*topoNode
		cur      *topoNode
		lineNo   int
		fromGUID iba.GUID
		fromPort iba.GUID
		maxHops  int
		mads     int
		// ibsim's GUID counters, by NodeType, and the per-node settings.
		guids    = map[iba.NodeType]uint64{iba.NodeTypeCA: 0x100000, iba.NodeTypeSwitch: 0x200000}
		absGUIDs = map[iba.NodeType]uint64{iba.NodeTypeCA: 0x100000, iba.NodeTypeSwitch: 0x200000}
		// spent marks a counter that passed 0xffffffffffffffff: the next
		// node of that kind has no GUID.
		spent                 = map[iba.NodeType]bool{}
		vendor, device        uint32
		sysGUID               uint64
		switchPortGUID        iba.GUID
		sawVendid, sawSysGUID bool
	)
	bad := func(text, format string, a ...any) error {
		return &TopologyError{Line: lineNo, Text: text, Msg: fmt.Sprintf(format, a...)}
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "":
			cur = nil
			continue
		case strings.HasPrefix(line, "#"):
			if v, ok := strings.CutPrefix(line, "# Initiated from node "); ok {
				g, p, ok := strings.Cut(v, " port ")
				a, err1 := strconv.ParseUint(strings.TrimSpace(g), 16, 64)
				b, err2 := strconv.ParseUint(strings.TrimSpace(p), 16, 64)
				if !ok || err1 != nil || err2 != nil {
					return nil, bad(line, "want \"# Initiated from node GUID port GUID\" with 64-bit hexadecimal GUIDs")
				}
				fromGUID, fromPort = iba.GUID(a), iba.GUID(b)
			} else if v, ok := strings.CutPrefix(line, "# Reported max hops discovered: "); ok {
				var err error
				if maxHops, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || maxHops < 0 || maxHops > MaxHops {
					return nil, bad(line, "max hops: want 0 to %d", MaxHops)
				}
			} else if v, ok := strings.CutPrefix(line, "# Total MADs used: "); ok {
				var err error
				if mads, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || mads < 0 {
					return nil, bad(line, "MADs used: not a count")
				}
			}
			continue
		case line[0] == '[':
			if cur == nil {
				return nil, bad(line, "port line outside a node record")
			}
			p, err := parsePortLine(line, cur)
			if err != nil {
				return nil, bad(line, "%v", err)
			}
			if _, dup := cur.ports[p.num]; dup {
				return nil, bad(line, "port %d of %q listed twice", p.num, cur.id)
			}
			p.line = lineNo
			cur.ports[p.num] = p
			cur.portOrder = append(cur.portOrder, p.num)
			continue
		case line[0] == '@':
			continue // an ibsim alias
		}
		cur = nil
		for _, d := range []string{"include", "module", "do "} {
			if strings.HasPrefix(line, d) {
				return nil, bad(line, "ibsim directive %s is not supported", strings.TrimSpace(d))
			}
		}
		key, val, isAssign := strings.Cut(line, "=")
		if !isAssign {
			key, val, isAssign = strings.Cut(line, "+")
			if isAssign {
				val = "+" + val
			}
		}
		var typ iba.NodeType
		switch {
		case strings.HasPrefix(line, "Switch"):
			typ = iba.NodeTypeSwitch
		case strings.HasPrefix(line, "Hca"), strings.HasPrefix(line, "Ca"):
			typ = iba.NodeTypeCA
		case strings.HasPrefix(line, "Rt"):
			typ = iba.NodeTypeRouter
		}
		if typ != 0 {
			n, err := parseNodeHeader(line, typ)
			if err != nil {
				return nil, bad(line, "%v", err)
			}
			n.line = lineNo
			g := guids[typ]
			// A switch takes one GUID; a CA or router its node GUID and
			// one per port after it.
			step := uint64(1)
			if typ != iba.NodeTypeSwitch {
				step = uint64(n.nports) + 1
			}
			if spent[typ] || g > math.MaxUint64-(step-1) {
				return nil, bad(line, "no GUID left: the GUIDs of this node would pass 0xffffffffffffffff")
			}
			n.guid = iba.GUID(g)
			guids[typ] = g + step
			spent[typ] = g+step < g // wrapped to 0 exactly: nothing left
			if typ == iba.NodeTypeSwitch {
				n.portGUID = n.guid
				if switchPortGUID != 0 {
					n.portGUID = switchPortGUID
				}
			}
			n.vendor, n.device = vendor, device
			switch {
			case sawSysGUID:
				n.sysGUID = iba.GUID(sysGUID)
			case !sawVendid:
				n.sysGUID = n.guid // ibsim's default
			}
			vendor, device, sysGUID, switchPortGUID, sawVendid, sawSysGUID = 0, 0, 0, 0, false, false
			nodes = append(nodes, n)
			cur = n
			continue
		}
		if !isAssign {
			// ibnetdiscover -g's grouping lines; anything else is not a
			// topology file's.
			if strings.HasPrefix(line, "Chassis ") || line == "Non-Chassis Nodes" || strings.HasPrefix(line, "Hostname: ") {
				continue
			}
			return nil, bad(clipLine(line), "unknown line: not a node, port, GUID or ibsim directive")
		}
		key = strings.TrimSpace(key)
		num := func() (uint64, error) {
			v := strings.TrimSpace(val)
			v = strings.TrimPrefix(v, "+")
			end := 0
			for end < len(v) && strings.IndexByte("0123456789abcdefABCDEFxX", v[end]) >= 0 {
				end++
			}
			return strconv.ParseUint(v[:end], 0, 64)
		}
		switch key {
		case "switchguid", "caguid", "hcaguids", "rtguid":
			t := map[string]iba.NodeType{"switchguid": iba.NodeTypeSwitch, "caguid": iba.NodeTypeCA, "hcaguids": iba.NodeTypeCA, "rtguid": iba.NodeTypeRouter}[key]
			g, err := num()
			if err != nil {
				return nil, bad(line, "GUID: %v", err)
			}
			if strings.HasPrefix(strings.TrimSpace(val), "+") {
				if absGUIDs[t] > math.MaxUint64-g {
					return nil, bad(line, "GUID base %#x + %#x passes 0xffffffffffffffff", absGUIDs[t], g)
				}
				guids[t] = absGUIDs[t] + g
			} else {
				absGUIDs[t], guids[t] = g, g
			}
			spent[t] = false
			if t == iba.NodeTypeSwitch {
				if i := strings.IndexByte(val, '('); i >= 0 {
					if j := strings.IndexByte(val[i:], ')'); j > 0 {
						pg, err := strconv.ParseUint(val[i+1:i+j], 16, 64)
						if err != nil {
							return nil, bad(line, "switch port GUID: %v", err)
						}
						switchPortGUID = iba.GUID(pg)
					}
				}
			}
		case "vendid", "devid", "sysimgguid":
			v, err := num()
			if err != nil {
				return nil, bad(line, "%s: %v", key, err)
			}
			switch key {
			case "vendid":
				if v > 0xffffff {
					return nil, bad(line, "vendid %#x does not fit 24 bits", v)
				}
				vendor, sawVendid = uint32(v), true
			case "devid":
				if v > 0xffff {
					return nil, bad(line, "devid %#x does not fit 16 bits", v)
				}
				device = uint32(v)
			default:
				sysGUID, sawSysGUID = v, true
			}
		case "width", "speed", "extspeed", "pdebug":
			// ibsim's directives for enabled rates and debugging.
		default:
			return nil, bad(clipLine(line), "unknown assignment %q", key)
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, textfile.ErrBinary):
		return nil, &TopologyError{Line: lineNo + 1, Msg: "binary data (a NUL byte): not a topology file"}
	case errors.Is(err, bufio.ErrTooLong):
		return nil, &TopologyError{Line: lineNo + 1, Msg: fmt.Sprintf("line longer than %d bytes: not a topology file", maxTopologyLine)}
	case err != nil:
		return nil, fmt.Errorf("reading topology after line %d: %w", lineNo, err)
	}
	return buildTopology(nodes, fromGUID, fromPort, maxHops, mads)
}

// clipLine shortens a line quoted in an error.
func clipLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseNodeHeader reads `Switch 5 "id" # "desc" base port 0 lid 2 lmc 0`
// or `Ca 2 "id" # "desc"`.
func parseNodeHeader(line string, typ iba.NodeType) (*topoNode, error) {
	q := strings.IndexByte(line, '"')
	if q < 0 {
		return nil, errors.New("no quoted node id")
	}
	fields := strings.Fields(line[:q])
	if len(fields) < 2 {
		return nil, errors.New("no port count")
	}
	nports, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil || nports < 1 || nports > 254 {
		return nil, fmt.Errorf("port count %q is not 1..254", fields[len(fields)-1])
	}
	e := strings.IndexByte(line[q+1:], '"')
	if e < 0 {
		return nil, errors.New("unterminated node id")
	}
	n := &topoNode{id: line[q+1 : q+1+e], typ: typ, nports: nports, ports: map[int]*topoPort{}}
	n.desc = n.id
	rest := line[q+2+e:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		c := strings.TrimLeft(rest[h+1:], " \t")
		if strings.HasPrefix(c, "\"") {
			if end := strings.IndexByte(c[1:], '"'); end >= 0 {
				n.desc = c[1 : 1+end]
				c = c[2+end:]
			}
		}
		if typ == iba.NodeTypeSwitch {
			n.enhanced = strings.Contains(c, "enhanced port 0")
			var err error
			if n.lid, n.lmc, err = lidLMC(c); err != nil {
				return nil, err
			}
		}
	}
	if len(n.desc) > AttrSize {
		return nil, fmt.Errorf("description longer than %d bytes", AttrSize)
	}
	return n, nil
}

// lidLMC reads the "lid N" and "lmc M" of a comment, each 0 when absent.
func lidLMC(c string) (lid uint16, lmc uint8, err error) {
	if i := strings.Index(c, "lid "); i >= 0 {
		v, err := strconv.ParseUint(firstWord(c[i+4:]), 0, 16)
		if err != nil {
			return 0, 0, fmt.Errorf("LID %q: want 0 to 65535", firstWord(c[i+4:]))
		}
		lid = uint16(v)
	}
	if i := strings.Index(c, "lmc "); i >= 0 {
		v, err := strconv.ParseUint(firstWord(c[i+4:]), 0, 3)
		if err != nil {
			return 0, 0, fmt.Errorf("LMC %q: want 0 to 7", firstWord(c[i+4:]))
		}
		lmc = uint8(v)
	}
	return lid, lmc, nil
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// bracketInt reads "[n]" at the start of s.
func bracketInt(s string) (v int, rest string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, s, false
	}
	e := strings.IndexByte(s, ']')
	if e < 0 {
		return 0, s, false
	}
	in := strings.TrimPrefix(s[1:e], "ext ")
	v, err := strconv.Atoi(in)
	if err != nil {
		return 0, s, false
	}
	return v, s[e+1:], true
}

// parenHex reads "(hex GUID)" at the start of s (after blanks); ok is
// false when there is none, err set when there is one that is not a
// 64-bit hexadecimal number.
func parenHex(s string) (g iba.GUID, rest string, ok bool, err error) {
	t := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(t, "(") {
		return 0, s, false, nil
	}
	e := strings.IndexByte(t, ')')
	if e < 0 {
		return 0, s, false, errors.New("unterminated (GUID)")
	}
	v, err := strconv.ParseUint(t[1:e], 16, 64)
	if err != nil {
		return 0, s, false, fmt.Errorf("GUID (%s): want 64-bit hexadecimal", t[1:e])
	}
	return iba.GUID(v), t[e+1:], true, nil
}

// parsePortLine reads a port line of either kind:
//
//	[1][ext 1]	"H-0002c9..."[1](2c9...) 		# "desc" lid 1 4xQDR
//	[1](2c9...) 	"S-0002c9..."[2]		# lid 6 lmc 0 "desc" lid 2 4xQDR
func parsePortLine(line string, n *topoNode) (*topoPort, error) {
	p := &topoPort{remoteNum: 1}
	var ok bool
	rest := line
	if p.num, rest, ok = bracketInt(rest); !ok {
		return nil, errors.New("no [port]")
	}
	if p.num < 1 || p.num > n.nports {
		return nil, fmt.Errorf("port %d out of 1..%d", p.num, n.nports)
	}
	if strings.HasPrefix(rest, "[ext ") {
		p.ext, rest, _ = bracketInt(rest)
	}
	if g, r, ok, err := parenHex(rest); err != nil {
		return nil, err
	} else if ok {
		p.guid, rest = g, r
	}
	q := strings.IndexByte(rest, '"')
	if q < 0 {
		return nil, errors.New("no quoted peer id")
	}
	e := strings.IndexByte(rest[q+1:], '"')
	if e < 0 {
		return nil, errors.New("unterminated peer id")
	}
	p.remoteID = rest[q+1 : q+1+e]
	rest = rest[q+2+e:]
	if v, r, ok := bracketInt(rest); ok {
		p.remoteNum, rest = v, r
	}
	if p.remoteNum < 1 || p.remoteNum > 254 {
		return nil, fmt.Errorf("peer port %d out of range", p.remoteNum)
	}
	if strings.HasPrefix(rest, "[ext ") {
		p.remoteExt, rest, _ = bracketInt(rest)
	}
	if g, r, ok, err := parenHex(rest); err != nil {
		return nil, err
	} else if ok {
		p.remoteGUID, rest = g, r
	}
	h := strings.IndexByte(rest, '#')
	if h < 0 {
		return p, nil // no comment: rate and LID unknown
	}
	c := rest[h+1:]
	if n.typ != iba.NodeTypeSwitch {
		// "# lid 6 lmc 0 "desc" ..." gives this port's own LID range,
		// before the peer's description.
		own := c
		if q := strings.IndexByte(own, '"'); q >= 0 {
			own = own[:q]
		}
		var err error
		if p.lid, p.lmc, err = lidLMC(own); err != nil {
			return nil, err
		}
	}
	// The rate is in the last "lid N <w><speed>" after the last quote,
	// which is where ibsim looks for it too.
	tail := c
	if i := strings.LastIndexByte(c, '"'); i >= 0 {
		tail = c[i+1:]
	}
	i := strings.Index(tail, "lid ")
	if i < 0 {
		return p, nil
	}
	f := strings.Fields(tail[i+4:])
	if len(f) >= 2 {
		var ext bool
		p.width, p.speed, ext, p.ext2, p.fdr10 = parseRate(f[1])
		if ext {
			p.espeed = extSpeedCode(f[1])
		}
	}
	for _, kv := range f[min(2, len(f)):] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if k != "s" && k != "w" && k != "v" {
			continue
		}
		x, err := strconv.ParseUint(v, 10, 8)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want 0 to 255", k, v)
		}
		switch k {
		case "s":
			p.ispeedRaw, p.haveRaw = uint8(x), true
		case "w":
			if p.width == 0 {
				p.width = uint8(x)
			}
		case "v":
			p.vlcap, p.haveFull = uint8(x), true
		}
	}
	return p, nil
}

// parseRate reads "4xQDR" into PortInfo encodings: LinkWidthActive, the
// legacy LinkSpeedActive, and whether the extended (or XDR) speed or the
// Mellanox FDR10 bit carries the speed.
func parseRate(s string) (width, speed uint8, ext, ext2, fdr10 bool) {
	x := strings.IndexByte(s, 'x')
	if x < 0 {
		return
	}
	switch s[:x] {
	case "1":
		width = 1
	case "4":
		width = 2
	case "8":
		width = 4
	case "12":
		width = 8
	case "2":
		width = 16
	}
	switch s[x+1:] {
	case "SDR":
		speed = 1
	case "DDR":
		speed = 2
	case "QDR":
		speed = 4
	case "FDR10":
		speed, fdr10 = 4, true
	case "FDR", "EDR", "HDR", "NDR":
		speed, ext = 4, true
	case "XDR":
		speed, ext2 = 4, true
	}
	return
}

func extSpeedCode(s string) uint8 {
	switch {
	case strings.HasSuffix(s, "FDR"):
		return 1
	case strings.HasSuffix(s, "EDR"):
		return 2
	case strings.HasSuffix(s, "HDR"):
		return 4
	case strings.HasSuffix(s, "NDR"):
		return 8
	}
	return 0
}

// buildTopology turns parsed records into a Subnet: nodes in the reverse
// of file order, each port with the PortInfo its line implies.
func buildTopology(recs []*topoNode, fromGUID, fromPortGUID iba.GUID, maxHops, mads int) (*Subnet, error) {
	byID := make(map[string]*topoNode, len(recs))
	for _, r := range recs {
		if byID[r.id] != nil {
			return nil, &TopologyError{Line: r.line, Text: r.id, Msg: "node id defined twice"}
		}
		byID[r.id] = r
	}
	s := New()
	s.MaxHopsDiscovered, s.MADs = maxHops, mads
	built := make(map[*topoNode]*Node, len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if s.byNodeGUID[r.guid] != nil {
			return nil, &TopologyError{Line: r.line, Text: r.id, Msg: fmt.Sprintf("GUID %v already used", r.guid)}
		}
		n := s.newNodeLocked(r.guid, r.typ, r.nports)
		built[r] = n
		// A CA's NodeInfo names the port it was reached by: the start
		// port, else its lowest listed port.
		portGUID, local := r.portGUID, 0
		if r.typ != iba.NodeTypeSwitch {
			local = 1
			if len(r.portOrder) > 0 {
				local = r.portOrder[0]
				for _, num := range r.portOrder {
					local = min(local, num)
				}
			}
			portGUID = caPortGUID(r, local)
			if r.guid == fromGUID {
				for _, num := range r.portOrder {
					if caPortGUID(r, num) == fromPortGUID {
						local, portGUID = num, fromPortGUID
					}
				}
			}
		}
		ni := iba.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: r.typ, NumPorts: uint8(r.nports),
			SystemImageGUID: r.sysGUID, NodeGUID: r.guid, PortGUID: portGUID, PartitionCap: 0,
			DeviceID: uint16(r.device), LocalPortNum: uint8(local), VendorID: r.vendor}
		_ = ni.MarshalTo(n.Info[:])
		copy(n.Desc[:], r.desc)
		n.HasDesc = true
		s.byName[n.Description()] = append(s.byName[n.Description()], n)
		if r.typ == iba.NodeTypeSwitch {
			si := iba.SwitchInfo{}
			if r.enhanced {
				si.EnhancedPort0 = 1
			}
			_ = si.MarshalTo(n.SwitchInfo[:])
			n.HasSwitchInfo, n.EnhancedSP0 = true, r.enhanced
			n.SMALID, n.SMALMC = r.lid, r.lmc
			pi := iba.PortInfo{LID: r.lid, LMC: r.lmc, CapabilityMask: capHasExtSpeeds | capHasCapMask2, CapabilityMask2: cap2ExtSpeeds2,
				PortState: iba.PortStateActive, PortPhysicalState: iba.PhysPortStateLinkUp, LinkWidthActive: 2, LinkSpeedActive: 1}
			s.addTopoPortLocked(n, 0, r.portGUID, pi, false)
		}
		for _, num := range r.portOrder {
			tp := r.ports[num]
			pi := iba.PortInfo{LocalPortNum: uint8(num), LinkWidthActive: tp.width, LinkSpeedActive: tp.speed,
				PortState: iba.PortStateActive, PortPhysicalState: iba.PhysPortStateLinkUp, VLCap: tp.vlcap}
			if tp.haveRaw {
				pi.LinkSpeedActive = tp.ispeedRaw
			}
			guid := r.portGUID
			if r.typ != iba.NodeTypeSwitch {
				guid = caPortGUID(r, num)
				pi.LID, pi.LMC = tp.lid, tp.lmc
				pi.CapabilityMask = capHasExtSpeeds | capHasCapMask2
				pi.CapabilityMask2 = cap2ExtSpeeds2
			} else {
				pi.LID, pi.LMC = r.lid, r.lmc
			}
			pi.LinkSpeedExtActive = tp.espeed
			if tp.ext2 {
				pi.LinkSpeedExtActive2 = 1
			}
			p := s.addTopoPortLocked(n, num, guid, pi, tp.fdr10)
			p.ExtNum = tp.ext
		}
	}
	// Links, from either end's line.
	for _, r := range recs {
		n := built[r]
		for _, num := range r.portOrder {
			tp := r.ports[num]
			rr := byID[tp.remoteID]
			if rr == nil {
				return nil, &TopologyError{Line: tp.line, Text: tp.remoteID, Msg: "peer node is not defined in the file"}
			}
			m := built[rr]
			if tp.remoteNum > m.NumPorts {
				return nil, &TopologyError{Line: tp.line, Text: tp.remoteID, Msg: fmt.Sprintf("peer port %d of %d", tp.remoteNum, m.NumPorts)}
			}
			a, b := n.Ports[num], m.Ports[tp.remoteNum]
			if b == nil {
				// The peer's record does not list this link: make the
				// port from what this line says about it.
				g := tp.remoteGUID
				if rr.typ == iba.NodeTypeSwitch {
					g = rr.portGUID
				} else if g == 0 {
					g = caPortGUID(rr, tp.remoteNum)
				}
				b = &Port{Node: m, Num: tp.remoteNum, GUID: g}
				m.Ports[tp.remoteNum] = b
				s.indexPortGUIDLocked(b)
			}
			if (b.Remote != nil && b.Remote != a) || (a.Remote != nil && a.Remote != b) {
				return nil, &TopologyError{Line: tp.line, Text: tp.remoteID, Msg: fmt.Sprintf("link to peer port %d contradicts another line", tp.remoteNum)}
			}
			a.Remote, b.Remote = b, a
			b.ExtNum = max(b.ExtNum, tp.remoteExt)
		}
	}
	if len(s.nodes) == 0 {
		return s, nil
	}
	from := s.byNodeGUID[fromGUID]
	if from == nil {
		for i := 0; i < len(s.nodes) && from == nil; i++ {
			if s.nodes[i].Type != iba.NodeTypeSwitch {
				from = s.nodes[i]
			}
		}
		if from == nil {
			from = s.nodes[0]
		}
	}
	s.from, s.fromPort = from, int(from.NodeInfo().LocalPortNum)
	s.rebuildPathsLocked()
	return s, nil
}

// caPortGUID is the GUID of port num of a CA record: from its line, else
// ibsim's node GUID + port.
func caPortGUID(r *topoNode, num int) iba.GUID {
	if p := r.ports[num]; p != nil && p.guid != 0 {
		return p.guid
	}
	return r.guid + iba.GUID(num)
}

func (s *Subnet) addTopoPortLocked(n *Node, num int, guid iba.GUID, pi iba.PortInfo, fdr10 bool) *Port {
	p := &Port{Node: n, Num: num, GUID: guid, BaseLID: pi.LID, LMC: pi.LMC, HasInfo: true}
	_ = pi.MarshalTo(p.Info[:])
	if fdr10 {
		x := iba.MlnxExtPortInfo{LinkSpeedActive: mlnxSpeedFDR10}
		_ = x.MarshalTo(p.ExtInfo[:])
		p.HasExtInfo = true
	}
	s.portSeq++
	p.seq = s.portSeq
	n.Ports[num] = p
	s.indexPortGUIDLocked(p)
	if n.Type != iba.NodeTypeSwitch || num == 0 {
		s.indexLIDsLocked(p)
	}
	return p
}
