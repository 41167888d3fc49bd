package health

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// Severity is how bad a finding is. The order is Info < Warning < Error.
type Severity uint8

// The severities. ibdiagnet prints them as -I-, -W- and -E-.
const (
	// Info is worth knowing and needs no action.
	Info Severity = iota
	// Warning is a degraded or suspicious state: the fabric works, not as
	// well as it could (a slow link, counters rising).
	Warning
	// Error is a fault: something cannot work as configured (a duplicate
	// LID, a route that loops, two master SMs).
	Error
)

var severityNames = [...]string{"info", "warning", "error"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("Severity(%d)", uint8(s))
}

// Tag is ibdiagnet's spelling: -I-, -W-, -E-.
func (s Severity) Tag() string {
	switch s {
	case Warning:
		return "-W-"
	case Error:
		return "-E-"
	}
	return "-I-"
}

// MarshalText gives the name ("warning").
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseSeverity reads info, warning or error (any case, or I, W, E).
func ParseSeverity(name string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "info", "i":
		return Info, nil
	case "warning", "warn", "w":
		return Warning, nil
	case "error", "e":
		return Error, nil
	}
	return 0, fmt.Errorf("severity %q: want info, warning or error", name)
}

// PortRef names a port in a finding: its node, the port number, its GUID
// and LID. A switch's ports carry the switch's port 0 GUID and LID.
type PortRef struct {
	NodeGUID iba.GUID     `json:"node_guid"`
	NodeType iba.NodeType `json:"-"`
	Desc     string       `json:"description"`
	Port     int          `json:"port"`
	PortGUID iba.GUID     `json:"port_guid"`
	LID      uint16       `json:"lid"`
}

// RefOf describes port p of the database.
func RefOf(p *subnet.Port) *PortRef {
	if p == nil {
		return nil
	}
	r := &PortRef{NodeGUID: p.Node.GUID, NodeType: p.Node.Type, Desc: p.Node.Description(), Port: p.Num, PortGUID: p.GUID, LID: p.BaseLID}
	if p.Node.Type == iba.NodeTypeSwitch {
		r.LID = p.Node.SMALID
	}
	return r
}

// NodeRef describes a node by its end port (a switch's port 0), or by the
// node alone when none is known.
func NodeRef(n *subnet.Node) *PortRef {
	if p := n.EndPort(); p != nil {
		return RefOf(p)
	}
	return &PortRef{NodeGUID: n.GUID, NodeType: n.Type, Desc: n.Description()}
}

// String is "<desc> (0x...) port N lid L".
func (r *PortRef) String() string {
	if r == nil {
		return "-"
	}
	s := fmt.Sprintf("%q (%v) port %d", r.Desc, r.NodeGUID, r.Port)
	if r.LID != 0 {
		s += fmt.Sprintf(" lid %d", r.LID)
	}
	return s
}

// Finding is one thing a check found.
type Finding struct {
	// Check names the check that found it and Severity how bad it is.
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// Port is where it is (nil for the fabric as a whole); Peer the other
	// end of the link, for a finding about a link.
	Port *PortRef `json:"port,omitempty"`
	Peer *PortRef `json:"peer,omitempty"`
	// LID and GUID are the identifier the finding is about, when it is
	// about one (a duplicated LID or GUID, an unrouted LID).
	LID  uint16   `json:"lid,omitempty"`
	GUID iba.GUID `json:"guid,omitempty"`
	// Message says what is wrong, in a sentence.
	Message string `json:"message"`
	// Ports lists every port involved, when there are more than the two
	// above (the holders of a duplicated GUID, a loop's switches).
	Ports []*PortRef `json:"ports,omitempty"`
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s %s: %s", f.Severity.Tag(), f.Check, f.Message)
	return s
}

// Counts are findings by severity.
type Counts [3]int

// MarshalJSON writes {"info":n,"warning":n,"error":n}.
func (c Counts) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int{"info": c[Info], "warning": c[Warning], "error": c[Error]})
}

// Worst is the highest severity with a finding, and false with none.
func (c Counts) Worst() (Severity, bool) {
	for s := Error; ; s-- {
		if c[s] > 0 {
			return s, true
		}
		if s == Info {
			return Info, false
		}
	}
}

// Sort orders findings worst first, then by check, port and message, so
// that reports are stable.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		ag, bg := refKey(a.Port), refKey(b.Port)
		if ag != bg {
			return ag < bg
		}
		return a.Message < b.Message
	})
}

func refKey(r *PortRef) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%016x/%03d", uint64(r.NodeGUID), r.Port)
}
