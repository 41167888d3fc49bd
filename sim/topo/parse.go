package topo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/textfile"
)

// ParseError is a malformed topology file: the file, the line and what is
// wrong with it.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// maxInclude bounds include nesting, as ibsim does.
const maxInclude = 9

// maxLine bounds one line of a topology file.
const maxLine = 1 << 20

// ParseFile reads a topology file; include directives name files relative
// to the including file's directory.
func ParseFile(path string) (*Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading topology: %w", err)
	}
	defer f.Close()
	p := newParser()
	p.allowInclude = true
	if err := p.parse(f, path, 0); err != nil {
		return nil, err
	}
	if err := p.connect(); err != nil {
		return nil, err
	}
	return p.t, nil
}

// Parse reads a topology in the dialect ibsim reads (ibnetdiscover output
// plus ibsim's directives); name labels errors. An include directive is an
// error here, since there is no directory to resolve it in; use ParseFile.
//
// Compared with ibsim: a CA port line's local "(portguid)" sets that port's
// GUID (ibsim ignores it and always uses node GUID + port); routers get a
// GUID base of their own; aliases ("@name") and console commands ("do ...")
// are refused with an error; values ibsim only warns about (a width of 3x,
// an unknown speed, more port lines than ports) are errors.
func Parse(r io.Reader, name string) (*Topology, error) {
	p := newParser()
	if err := p.parse(r, name, 0); err != nil {
		return nil, err
	}
	if err := p.connect(); err != nil {
		return nil, err
	}
	return p.t, nil
}

type pendingLink struct {
	node       int32
	port       uint8
	remotePort uint8
	remoteID   string
	file       string
	line       int
}

type parser struct {
	t            *Topology
	allowInclude bool
	base, next   [4]uint64 // GUID bases by node type, as ibsim keeps them
	spent        [4]bool   // next passed 0xffffffffffffffff: no GUID left
	prefix       string
	vendID       uint32
	devID        uint16
	sysImage     uint64
	width        uint8
	speed        uint8
	speedExt     uint8
	ids          map[string]int32
	guids        map[uint64]int32
	links        []pendingLink
	seen         []bool // per port: listed in the file already
	// the node whose port lines follow, -1 outside a record
	cur       int32
	curListed int
}

func newParser() *parser {
	p := &parser{
		t:     &Topology{},
		ids:   map[string]int32{},
		guids: map[uint64]int32{},
		width: DefaultWidth, speed: DefaultSpeed, speedExt: DefaultSpeedExt,
		cur: -1,
	}
	p.base = [4]uint64{0, DefaultCAGUIDBase, DefaultSwitchGUIDBase, DefaultRouterGUIDBase}
	p.next = p.base
	return p
}

// maxFileSize bounds what the parser reads of one file; the topology it
// builds is bounded by MaxNodes and MaxPorts.
const maxFileSize = 1 << 30

// errFileSize is a file longer than maxFileSize.
var errFileSize = fmt.Errorf("more than %d bytes: not a topology file", maxFileSize)

// textLines is textfile.ScanText that also stops a file longer than
// maxFileSize.
func textLines(limit *int64) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := textfile.ScanText(data, atEOF)
		if err == nil {
			if *limit -= int64(adv); *limit < 0 {
				return 0, nil, errFileSize
			}
		}
		return adv, tok, err
	}
}

func (p *parser) parse(r io.Reader, file string, depth int) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	left := int64(maxFileSize)
	sc.Split(textLines(&left))
	line := 0
	fail := func(format string, a ...any) error {
		return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(s, "#") {
			continue
		}
		if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "@") {
			if p.cur < 0 {
				return fail("port line outside a node record")
			}
			if strings.HasPrefix(s, "@") {
				return fail("port aliases (@name) are not supported")
			}
			if msg := p.portLine(s, file, line); msg != "" {
				return fail("%s", msg)
			}
			continue
		}
		p.cur = -1
		var msg string
		switch {
		case strings.TrimSpace(s) == "":
		case strings.HasPrefix(s, "Switch"):
			msg = p.header(s[len("Switch"):], iba.NodeTypeSwitch, line)
		case strings.HasPrefix(s, "Hca"):
			msg = p.header(s[len("Hca"):], iba.NodeTypeCA, line)
		case strings.HasPrefix(s, "Ca"):
			msg = p.header(s[len("Ca"):], iba.NodeTypeCA, line)
		case strings.HasPrefix(s, "Rt"):
			msg = p.header(s[len("Rt"):], iba.NodeTypeRouter, line)
		case strings.HasPrefix(s, "switchguid"):
			msg = p.guidBase(s, iba.NodeTypeSwitch)
		case strings.HasPrefix(s, "hcaguids"), strings.HasPrefix(s, "caguid"):
			msg = p.guidBase(s, iba.NodeTypeCA)
		case strings.HasPrefix(s, "rtguid"):
			msg = p.guidBase(s, iba.NodeTypeRouter)
		case strings.HasPrefix(s, "vendid"):
			var v uint64
			v, msg = assignment(s, 24)
			p.vendID = uint32(v)
		case strings.HasPrefix(s, "devid"):
			var v uint64
			v, msg = assignment(s, 16)
			p.devID = uint16(v)
		case strings.HasPrefix(s, "sysimgguid"):
			p.sysImage, msg = assignment(s, 64)
		case strings.HasPrefix(s, "width"):
			var v uint64
			if v, msg = assignment(s, 8); msg == "" {
				if v < 1 || v > 31 {
					msg = fmt.Sprintf("bad enabled width %d (1 to 31)", v)
				}
				p.width = uint8(v)
			}
		case strings.HasPrefix(s, "speed"):
			var v uint64
			if v, msg = assignment(s, 8); msg == "" {
				if v < 1 || v > 7 {
					msg = fmt.Sprintf("bad enabled speed %d (1 to 7)", v)
				}
				p.speed = uint8(v)
			}
		case strings.HasPrefix(s, "extspeed"):
			var v uint64
			if v, msg = assignment(s, 8); msg == "" {
				if v > 15 {
					msg = fmt.Sprintf("bad enabled extended speed %d (0 to 15)", v)
				}
				p.speedExt = uint8(v)
			}
		case strings.HasPrefix(s, "module"):
			i := strings.IndexByte(s, '=')
			if i < 0 {
				msg = "module: missing '='"
				break
			}
			id, _, ok := quoted(s[i+1:])
			switch {
			case !ok:
				msg = "module: missing quoted prefix"
			case len(id) > 20:
				msg = fmt.Sprintf("module prefix %q is longer than 20 characters", id)
			default:
				p.prefix = id
			}
		case strings.HasPrefix(s, "include"):
			var err error
			if msg, err = p.include(s, file, depth); err != nil {
				return err // located in the included file already
			}
		case strings.HasPrefix(s, "pdebug"):
		case strings.HasPrefix(s, "do"):
			msg = "console commands (do ...) are not supported in topology files"
		case strings.HasPrefix(s, "Chassis"), strings.HasPrefix(s, "Non-Chassis"):
			// ibnetdiscover -g grouping headers
		default:
			msg = fmt.Sprintf("unknown line %q", clip(s))
		}
		if msg != "" {
			return fail("%s", msg)
		}
	}
	if err := sc.Err(); err != nil {
		msg := err.Error()
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			msg = fmt.Sprintf("line longer than %d bytes: not a topology file", maxLine)
		case errors.Is(err, textfile.ErrBinary):
			msg += ": not a topology file"
		}
		return &ParseError{File: file, Line: line + 1, Msg: msg}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (p *parser) include(s, file string, depth int) (string, error) {
	if !p.allowInclude {
		return "include needs a file to resolve it against (use ParseFile)", nil
	}
	if depth+1 >= maxInclude {
		return fmt.Sprintf("includes nested deeper than %d", maxInclude), nil
	}
	name, _, ok := quoted(s[len("include"):])
	if !ok || name == "" {
		return "include: missing quoted file name", nil
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(file), name)
	}
	f, err := os.Open(name)
	if err != nil {
		return fmt.Sprintf("include: %v", err), nil
	}
	defer f.Close()
	return "", p.parse(f, name, depth+1)
}

// assignment parses "key=value" with C's strtoull base-0 rules (0x hex,
// leading 0 octal, else decimal), reading the longest valid prefix as ibsim
// does, so "switchguid=0x200000(200000)" gives 0x200000.
func assignment(s string, bits int) (uint64, string) {
	i := strings.IndexByte(s, '=')
	if i < 0 {
		return 0, fmt.Sprintf("%s: missing '='", firstWord(s))
	}
	v, n := strtoull(s[i+1:])
	if n == 0 {
		return 0, fmt.Sprintf("%s: %q is not a number of at most 64 bits", firstWord(s), clip(s[i+1:]))
	}
	if bits < 64 && v>>bits != 0 {
		return 0, fmt.Sprintf("%s: %#x does not fit %d bits", firstWord(s), v, bits)
	}
	return v, ""
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, "=+ \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// strtoull reads an unsigned number in C base-0 notation at the start of s
// (after blanks) and returns it with the count of bytes consumed, 0 if none.
// A number that does not fit 64 bits is none: where C's strtoull gives
// ULLONG_MAX and ibsim carries on with it, the parsers here refuse it.
func strtoull(s string) (uint64, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	base := uint64(10)
	start := i
	if strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X") {
		if i+2 < len(s) && hexVal(s[i+2]) < 16 {
			base, i = 16, i+2
			start = i
		}
	} else if i < len(s) && s[i] == '0' {
		base = 8
	}
	var v uint64
	over := false
	for i < len(s) {
		d := hexVal(s[i])
		if d >= base {
			break
		}
		if v > (math.MaxUint64-d)/base {
			over = true
		}
		v = v*base + d
		i++
	}
	if i == start || over {
		return 0, 0
	}
	return v, i
}

func hexVal(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// quoted finds the first "..." in s and returns its contents and the rest.
func quoted(s string) (string, string, bool) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", s, false
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return "", s, false
	}
	return s[i+1 : i+1+j], s[i+1+j+1:], true
}

func (p *parser) guidBase(s string, typ iba.NodeType) string {
	i := strings.IndexAny(s, "=+")
	if i < 0 {
		return fmt.Sprintf("%s: missing '=' or '+'", firstWord(s))
	}
	v, n := strtoull(s[i+1:])
	if n == 0 {
		return fmt.Sprintf("%s: %q is not a number of at most 64 bits", firstWord(s), clip(s[i+1:]))
	}
	if s[i] == '=' {
		p.base[typ] = v
		v = 0
	}
	if p.base[typ] > math.MaxUint64-v {
		return fmt.Sprintf("%s: base %#x + %#x passes 0xffffffffffffffff", firstWord(s), p.base[typ], v)
	}
	p.next[typ] = p.base[typ] + v
	p.spent[typ] = false
	return ""
}

func (p *parser) nodeID(base string) (string, string) {
	if strings.ContainsAny(base, "#@") {
		return "", fmt.Sprintf("node id %q: '#' and '@' are reserved", base)
	}
	if p.prefix != "" {
		return p.prefix + "#" + base, ""
	}
	return base, ""
}

// header parses the rest of a "Switch", "Hca", "Ca" or "Rt" line.
func (p *parser) header(rest string, typ iba.NodeType, line int) string {
	kind := map[iba.NodeType]string{iba.NodeTypeSwitch: "Switch", iba.NodeTypeCA: "Ca", iba.NodeTypeRouter: "Rt"}[typ]
	r := strings.TrimLeft(rest, " \t")
	if len(r) == len(rest) && rest != "" {
		return fmt.Sprintf("unknown record type %q", clip(kind+rest))
	}
	nports, n := strtoull(r)
	if n == 0 {
		if r != "" && r[0] >= '0' && r[0] <= '9' {
			return fmt.Sprintf("%s header: port count %s (1 to 254)", kind, firstWord(r))
		}
		return kind + " header: missing port count"
	}
	if nports < 1 || nports > 254 {
		return fmt.Sprintf("%s header: %d ports (1 to 254)", kind, nports)
	}
	r = r[n:]
	if !strings.HasPrefix(strings.TrimLeft(r, " \t"), "\"") {
		return kind + " header: missing quoted node id after the port count"
	}
	base, r, ok := quoted(r)
	if !ok {
		return kind + " header: unterminated node id"
	}
	if base == "" {
		return kind + " header: empty node id"
	}
	id, msg := p.nodeID(base)
	if msg != "" {
		return msg
	}
	if _, dup := p.ids[id]; dup {
		return fmt.Sprintf("node id %q already exists", id)
	}
	desc, r := nodeDesc(r)
	guid := p.next[typ]
	// A switch takes one GUID, a CA or router one and one per port.
	step := uint64(1)
	if typ != iba.NodeTypeSwitch {
		step = nports + 1
	}
	if p.spent[typ] || guid > math.MaxUint64-(step-1) {
		return fmt.Sprintf("%s %q: no GUID left (the GUIDs would pass 0xffffffffffffffff; set %sguid= before it)", kind, id, strings.ToLower(kind))
	}
	if len(p.t.Nodes) >= MaxNodes || len(p.t.Ports)+int(nports)+1 > MaxPorts {
		return (&SizeError{What: "topology", Nodes: int64(len(p.t.Nodes) + 1), Ports: int64(len(p.t.Ports)) + int64(nports) + 1,
			Bytes: EstimateMemory(int64(len(p.t.Nodes)+1), 0, int64(len(p.t.Ports))+int64(nports)+1)}).Error()
	}
	if j, dup := p.guids[guid]; dup {
		return fmt.Sprintf("%s %q: GUID %#x is already node %q's (set %sguid= before it)", kind, id, guid, p.t.Nodes[j].ID, strings.ToLower(map[iba.NodeType]string{iba.NodeTypeSwitch: "switch", iba.NodeTypeCA: "ca", iba.NodeTypeRouter: "rt"}[typ]))
	}
	idx := p.t.AddNode(typ, id, desc, int(nports), iba.GUID(guid))
	nd := &p.t.Nodes[idx]
	nd.Line = line
	nd.VendorID, nd.DeviceID = p.vendID, p.devID
	if p.sysImage != 0 {
		nd.SysImageGUID = iba.GUID(p.sysImage)
	}
	p.next[typ] = guid + step
	p.spent[typ] = p.next[typ] < guid // wrapped to 0 exactly: none left
	if typ == iba.NodeTypeSwitch {
		if strings.Contains(r, "enhanced port 0") {
			nd.EnhancedPort0 = true
		}
		if v, ok := afterWord(r, "lid "); ok {
			if v > 0xffff {
				return fmt.Sprintf("%s %q: bad LID %d", kind, id, v)
			}
			nd.LID = uint16(v)
		}
		if v, ok := afterWord(r, "lmc "); ok {
			if v > 7 {
				return fmt.Sprintf("%s %q: bad LMC %d (0 to 7)", kind, id, v)
			}
			nd.LMC = uint8(v)
		}
	}
	for q := int(nd.PortBase); q <= int(nd.PortBase)+int(nports); q++ {
		pt := &p.t.Ports[q]
		pt.Width, pt.Speed, pt.SpeedExt = p.width, p.speed, p.speedExt
	}
	p.seen = append(p.seen, make([]bool, nports+1)...)
	p.ids[id] = int32(idx)
	p.guids[guid] = int32(idx)
	p.vendID, p.sysImage = 0, 0
	p.cur, p.curListed = int32(idx), 0
	return ""
}

// nodeDesc reads the "# "desc"" or "# desc lid ..." comment of a header.
func nodeDesc(r string) (string, string) {
	i := strings.IndexByte(r, '#')
	if i < 0 {
		return "", r
	}
	s := strings.TrimLeft(r[i+1:], " \t")
	if strings.HasPrefix(s, "\"") {
		if j := strings.IndexByte(s[1:], '"'); j >= 0 {
			return s[1 : 1+j], s[2+j:]
		}
		return s[1:], ""
	}
	for _, stop := range []string{" enhanced port ", " base port ", " lid ", " lmc "} {
		if j := strings.Index(s, stop); j >= 0 {
			return s[:j], s[j:]
		}
	}
	return s, ""
}

func afterWord(s, w string) (uint64, bool) {
	i := strings.Index(s, w)
	if i < 0 {
		return 0, false
	}
	rest := strings.TrimLeft(s[i+len(w):], " \t")
	v, n := strtoull(rest)
	if n == 0 && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		return math.MaxUint64, true // digits past 64 bits: out of every range
	}
	return v, n > 0
}

// portLine parses "[p](guid) "remote"[rp](rguid) opts # comment" of the
// current node and returns what is wrong with it, "" if nothing.
func (p *parser) portLine(s, file string, line int) string {
	nd := &p.t.Nodes[p.cur]
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "port line: missing ']'"
	}
	pn, n := strtoull(s[1:end])
	if n == 0 || n != len(s[1:end]) {
		return fmt.Sprintf("port line: %q is not a port number", s[1:end])
	}
	if pn == 0 {
		return "port 0 cannot be cabled"
	}
	if pn > uint64(nd.NumPorts) {
		return fmt.Sprintf("port %d: node %q has %d ports", pn, nd.ID, nd.NumPorts)
	}
	if p.curListed >= int(nd.NumPorts) {
		return fmt.Sprintf("more port lines than the %d ports of %q", nd.NumPorts, nd.ID)
	}
	seenAt := int(nd.PortBase) + int(pn)
	if p.seen[seenAt] {
		return fmt.Sprintf("port %d of %q listed twice", pn, nd.ID)
	}
	p.seen[seenAt] = true
	p.curListed++
	port := &p.t.Ports[seenAt]
	rest := s[end+1:]
	rest, _ = skipBracketed(rest)
	if strings.HasPrefix(rest, "(") {
		j := strings.IndexByte(rest, ')')
		if j < 0 {
			return "port line: unterminated (port GUID)"
		}
		g, err := strconv.ParseUint(strings.TrimPrefix(rest[1:j], "0x"), 16, 64)
		if err != nil {
			return fmt.Sprintf("port line: bad port GUID %q", rest[1:j])
		}
		if nd.Type != iba.NodeTypeSwitch {
			port.GUID = iba.GUID(g)
		}
		rest = rest[j+1:]
	}
	if !strings.HasPrefix(strings.TrimLeft(rest, " \t"), "\"") {
		return "port line: missing quoted remote node id"
	}
	rid, rest, ok := quoted(rest)
	if !ok || rid == "" {
		return "port line: bad remote node id"
	}
	if strings.ContainsRune(rid, '@') {
		return "port aliases (@name) are not supported"
	}
	if p.prefix != "" && !strings.ContainsRune(rid, '#') {
		rid = p.prefix + "#" + rid
	}
	rp := uint64(1)
	if strings.HasPrefix(rest, "[") {
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return "port line: missing ']' after the remote port"
		}
		var n int
		rp, n = strtoull(rest[1:j])
		if n == 0 || n != j-1 || rp == 0 || rp > 254 {
			return fmt.Sprintf("port line: bad remote port %q", rest[1:j])
		}
		rest = rest[j+1:]
	}
	if msg := p.portOptions(port, rest); msg != "" {
		return msg
	}
	if msg := p.connection(port, nd.Type, rest); msg != "" {
		return msg
	}
	p.links = append(p.links, pendingLink{node: p.cur, port: uint8(pn), remotePort: uint8(rp), remoteID: rid, file: file, line: line})
	return ""
}

func skipBracketed(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t")
	if strings.HasPrefix(t, "[ext") {
		if j := strings.IndexByte(t, ']'); j >= 0 {
			return t[j+1:], true
		}
	}
	return s, false
}

// portOptions applies "w=", "s=" and "e=" tokens outside quotes.
func (p *parser) portOptions(port *Port, rest string) string {
	inQuote := false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '"' {
			inQuote = !inQuote
			continue
		}
		if inQuote || c != '=' || i == 0 {
			continue
		}
		key := rest[i-1]
		if i >= 2 && rest[i-2] != ' ' && rest[i-2] != '\t' {
			continue
		}
		v, n := strtoull(rest[i+1:])
		if n == 0 {
			return fmt.Sprintf("port option %c=: %q is not a number", key, clip(rest[i+1:]))
		}
		switch key {
		case 'w':
			if v < 1 || v > 31 {
				return fmt.Sprintf("bad enabled width w=%d (1 to 31)", v)
			}
			port.Width = uint8(v)
		case 's':
			if v > 7 {
				return fmt.Sprintf("bad enabled speed s=%d (0 to 7)", v)
			}
			if v == 0 {
				v = iba.LinkSpeedQDR
			}
			port.Speed = uint8(v)
		case 'e':
			if v > 15 {
				return fmt.Sprintf("bad enabled extended speed e=%d (0 to 15)", v)
			}
			port.SpeedExt = uint8(v)
		case 'x':
			// Ours: ibsim has no second group of extended speeds.
			if v > 1 {
				return fmt.Sprintf("bad enabled extended speed 2 x=%d (0 or 1, XDR)", v)
			}
			port.SpeedExt2 = uint8(v)
		}
	}
	return ""
}

// connection applies the "# ... lid N WxS" annotation: the port's own LID
// and LMC on CA lines ("# lid 2 lmc 0 ..."), and the enabled width and
// speed that the active link width and speed imply, as ibsim reads them.
func (p *parser) connection(port *Port, typ iba.NodeType, rest string) string {
	h := strings.IndexByte(rest, '#')
	if h < 0 {
		return ""
	}
	c := rest[h+1:]
	if typ != iba.NodeTypeSwitch {
		own := c
		if q := strings.IndexByte(own, '"'); q >= 0 {
			own = own[:q]
		}
		if v, ok := afterWord(own, "lid "); ok {
			if v > 0xffff {
				return fmt.Sprintf("bad LID %d", v)
			}
			port.LID = uint16(v)
		}
		if v, ok := afterWord(own, "lmc "); ok {
			if v > 7 {
				return fmt.Sprintf("bad LMC %d (0 to 7)", v)
			}
			port.LMC = uint8(v)
		}
	}
	// The connection is the first "lid" after the last quote.
	tail := c
	if q := strings.LastIndexByte(tail, '"'); q >= 0 {
		tail = tail[q+1:]
	}
	i := strings.Index(tail, "lid ")
	if i < 0 {
		return ""
	}
	f := strings.Fields(tail[i+4:])
	if len(f) < 2 {
		return ""
	}
	x := strings.IndexByte(f[1], 'x')
	if x < 0 {
		return ""
	}
	lanes, err := strconv.Atoi(f[1][:x])
	if err != nil {
		return ""
	}
	switch lanes {
	case 1:
		port.Width = Width1x
	case 2:
		port.Width = Width2x
	case 4:
		port.Width = Width4x
	case 8:
		port.Width = Width8x
	case 12:
		port.Width = Width12x
	default:
		return fmt.Sprintf("bad link width %dx (1x, 2x, 4x, 8x or 12x)", lanes)
	}
	sp, ok := speedMasks[f[1][x+1:]]
	if !ok {
		return fmt.Sprintf("bad link speed %q (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR)", f[1][x+1:])
	}
	port.Speed = sp.speed
	if sp.ext != keepExt {
		port.SpeedExt, port.SpeedExt2 = sp.ext, sp.ext2
	}
	if sp.mlnx != 0 {
		port.MlnxSpeed = sp.mlnx
	}
	return ""
}

const keepExt = 0xff

// speedMasks gives the enabled masks ibsim sets for a speed annotation;
// the classic speeds leave the extended masks as the directives set them.
// XDR, which ibsim (0.12) does not know, enables every speed of the first
// group and XDR of the second (LinkSpeedExtEnabled2).
var speedMasks = map[string]struct{ speed, ext, ext2, mlnx uint8 }{
	"SDR":   {1, keepExt, 0, 0},
	"DDR":   {3, keepExt, 0, 0},
	"QDR":   {7, keepExt, 0, 0},
	"FDR10": {7, keepExt, 0, 1},
	"FDR":   {7, 1, 0, 1},
	"EDR":   {7, 3, 0, 1},
	"HDR":   {7, 7, 0, 1},
	"NDR":   {7, 15, 0, 1},
	"XDR":   {7, 15, 1, 1},
}

// connect resolves the links once every node is known: both ends must name
// each other.
func (p *parser) connect() error {
	for _, l := range p.links {
		fail := func(format string, a ...any) error {
			return &ParseError{File: l.file, Line: l.line, Msg: fmt.Sprintf(format, a...)}
		}
		nd := &p.t.Nodes[l.node]
		r, ok := p.ids[l.remoteID]
		if !ok {
			return fail("port %d of %q: remote node %q is not in the topology", l.port, nd.ID, l.remoteID)
		}
		rn := &p.t.Nodes[r]
		if l.remotePort > rn.NumPorts {
			return fail("port %d of %q: remote node %q has no port %d (it has %d)", l.port, nd.ID, rn.ID, l.remotePort, rn.NumPorts)
		}
		me := p.t.Port(int(l.node), int(l.port))
		if me.Peer >= 0 {
			continue // linked from the other end already
		}
		if !p.seen[int(rn.PortBase)+int(l.remotePort)] {
			return fail("port %d of %q links to %q[%d], which does not list a link back", l.port, nd.ID, rn.ID, l.remotePort)
		}
		back := p.backLink(r, l.remotePort)
		if back == nil || back.remoteID != nd.ID || back.remotePort != l.port {
			return fail("port %d of %q links to %q[%d], but that port links elsewhere", l.port, nd.ID, rn.ID, l.remotePort)
		}
		if err := p.t.Connect(int(l.node), int(l.port), int(r), int(l.remotePort)); err != nil {
			return fail("%v", err)
		}
	}
	p.links = nil
	return nil
}

func (p *parser) backLink(node int32, port uint8) *pendingLink {
	// Links are appended in file order and a node's port lines are
	// contiguous, so search the node's run.
	lo, hi := 0, len(p.links)
	for lo < hi {
		m := (lo + hi) / 2
		if p.links[m].node < node {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i := lo; i < len(p.links) && p.links[i].node == node; i++ {
		if p.links[i].port == port {
			return &p.links[i]
		}
	}
	return nil
}
