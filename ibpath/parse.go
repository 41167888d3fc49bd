package ibpath

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Mode restricts what a target may be, as the diags' addressing flags do.
type Mode uint8

const (
	// Any accepts every form (python-rdma's from_string).
	Any Mode = iota
	// DirectRoute (-D) wants a DR path; "0" alone means the local port.
	DirectRoute
	// LIDOnly (-L) wants a LID.
	LIDOnly
	// PortGUID (-G in infiniband-diags) reads a hex port GUID.
	PortGUID
	// NodeGUID (-G where python-rdma and rdmakit take a node) reads a hex
	// node GUID; resolving finds its LID through an SA NodeRecord.
	NodeGUID
)

// Options changes how Parse reads a target.
type Options struct {
	Mode Mode
	// EndPort is the local end port of targets that do not name one.
	EndPort string
}

// ErrSyntax is matched by every error Parse returns.
var ErrSyntax = errors.New("invalid target")

type syntaxError struct {
	target string
	msg    string
}

func (e *syntaxError) Error() string        { return fmt.Sprintf("target %q: %s", e.target, e.msg) }
func (e *syntaxError) Is(target error) bool { return target == ErrSyntax }

func bad(s, format string, a ...any) error {
	return &syntaxError{target: s, msg: fmt.Sprintf(format, a...)}
}

// maxSpec bounds the input; no target is longer.
const maxSpec = 4096

// Parse reads a target as python-rdma's ibtool and infiniband-diags take
// them (python-rdma doc/ibtool.rst, "Addressing"):
//
//	12, 0xc                       LID (unicast only)
//	0,1,4  0,                     DR path
//	fe80::2:c903:0:1491           port GID
//	fe80::2:c903:0:1491%mlx4_0/1  port GID through a given end port
//	0002:c903:0000:1491           port GUID (groups zero filled)
//	0x0002c90300001491            port GUID (16 hex digits)
//	IBPath(DLID=5, SL=2, retries=3), IBDRPath(drPath=0:1:)  path spec
//
// The spec is parsed, never evaluated.
func Parse(s string, o Options) (Path, error) {
	if len(s) > maxSpec {
		return nil, bad(s[:32]+"...", "longer than %d bytes", maxSpec)
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, bad(s, "empty")
	}
	var p Path
	var err error
	switch o.Mode {
	case DirectRoute:
		if t == "0" {
			t = "0,"
		}
		if strings.Contains(t, "(") {
			p, err = parseSpec(t)
		} else {
			p, err = parseDR(t)
		}
		if err == nil {
			if _, ok := p.(*DRPath); !ok {
				err = bad(s, "not a directed route")
			}
		}
	case LIDOnly:
		p, err = parseLID(t)
	case PortGUID, NodeGUID:
		var g iba.GUID
		g, err = iba.ParseGUID(t)
		if err != nil {
			return nil, bad(s, "%v", err)
		}
		ip := &IBPath{PKey: 0xffff}
		if o.Mode == NodeGUID {
			ip.NodeGUID = g
			ip.Mark("nodeGUID")
		} else {
			ip.DGID = iba.MakeGID(defaultPrefix, g)
			ip.Mark("DGID")
		}
		p = ip
	default:
		p, err = parseAny(t)
	}
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, bad(s, "%v", err)
	}
	if o.EndPort != "" {
		ip := ibPathOf(p)
		if ip.EndPort == "" {
			ip.EndPort = o.EndPort
		}
	}
	return p, nil
}

func ibPathOf(p Path) *IBPath {
	switch v := p.(type) {
	case *DRPath:
		return &v.IBPath
	case *IBPath:
		return v
	}
	return nil
}

// defaultPrefix is the default GID prefix (IBA 4.1.1).
const defaultPrefix = 0xfe80 << 48

func parseAny(t string) (Path, error) {
	switch {
	case strings.Contains(t, "("):
		return parseSpec(t)
	case strings.Contains(t, ","):
		return parseDR(t)
	case strings.Contains(t, "%"):
		gid, port, _ := strings.Cut(t, "%")
		g, err := iba.ParseGID(gid)
		if err != nil {
			return nil, err
		}
		if port == "" {
			return nil, bad(t, "no end port after %%")
		}
		if err := checkEndPort(port); err != nil {
			return nil, err
		}
		p := NewGID(g)
		p.EndPort = port
		return p, nil
	}
	if a, err := netip.ParseAddr(t); err == nil && a.Is6() && a.Zone() == "" && !a.Is4In6() {
		return NewGID(iba.GID(a.As16())), nil
	}
	if strings.Contains(t, ":") || len(t) == 16 || (len(t) == 18 && (strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"))) {
		g, err := iba.ParseGUID(t)
		if err != nil {
			return nil, err
		}
		return NewGID(iba.MakeGID(defaultPrefix, g)), nil
	}
	return parseLID(t)
}

func parseLID(t string) (*IBPath, error) {
	if wide, err := parseUint(t, 64); err == nil && wide > 0xffff {
		// What the C diags' strtoul would cut to 16 bits and send to
		// another node.
		return nil, bad(t, "%#x is wider than a LID (16 bits): a GUID? give it as one (-G, or 0x and 16 hex digits)", wide)
	}
	n, err := parseUint(t, 16)
	if err != nil {
		return nil, bad(t, "not a LID, GID, GUID, DR path or path spec")
	}
	if n == 0 || n >= 0xc000 {
		return nil, bad(t, "%d is not a unicast LID (1-0xbfff)", n)
	}
	return NewLID(uint16(n)), nil
}

func parseDR(t string) (*DRPath, error) {
	hops, err := parseHops(t, ",")
	if err != nil {
		return nil, err
	}
	return NewDR(hops...), nil
}

// parseSpec reads Class(key=value, ...), python-rdma's path repr.
func parseSpec(t string) (Path, error) {
	open := strings.IndexByte(t, '(')
	if !strings.HasSuffix(t, ")") {
		return nil, bad(t, "a path spec ends with )")
	}
	class := strings.TrimSpace(t[:open])
	body := strings.TrimSpace(t[open+1 : len(t)-1])
	var ip *IBPath
	var dr *DRPath
	switch class {
	case "IBPath":
		ip = &IBPath{PKey: 0xffff}
	case "IBDRPath":
		dr = NewDR(0)
		ip = &dr.IBPath
	default:
		return nil, bad(t, "unknown path type %q (IBPath or IBDRPath)", class)
	}
	if body != "" {
		for _, kv := range strings.Split(body, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, bad(t, "%q is not key=value", strings.TrimSpace(kv))
			}
			i := -1
			for j := range keys {
				if keys[j].name == k && (dr != nil || !keys[j].dr) {
					i = j
				}
			}
			if i < 0 {
				return nil, bad(t, "path attribute %q is not known", k)
			}
			if ip.set.has(i) && k != "drPath" {
				return nil, bad(t, "path attribute %q given twice", k)
			}
			if err := keys[i].parse(ip, dr, v); err != nil {
				return nil, bad(t, "%s=%s: %v", k, v, err)
			}
			if k == "end_port" && (ip.EndPort == "None" || ip.EndPort == "") {
				ip.EndPort = ""
				continue
			}
			ip.set.add(i)
		}
	}
	if dr != nil {
		if err := (&mad.DirectedRoute{Path: dr.DrPath}).Validate(); err != nil {
			return nil, bad(t, "%v", err)
		}
		return dr, nil
	}
	return ip, nil
}
