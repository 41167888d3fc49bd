package diags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

// The congestion control class (IBA annex A10) as ibccquery and ibccconfig
// reach it: the attributes and the layout of the class's MADs, the op
// tables, the run that sends CongestionGet and CongestionSet to one node,
// and the result both print as JSON.

// Congestion control attribute IDs (IBA annex A10.4.3, table 514) and the
// layout of the class's MADs: the attribute data starts at byte 64, except
// CongestionLog's, which starts at byte 32 (CCFormat.LogData).
const (
	ccAttrClassPortInfo      = 0x0001
	ccAttrCongestionInfo     = 0x0011
	ccAttrCongestionKeyInfo  = 0x0012
	ccAttrCongestionLog      = 0x0013
	ccAttrSwitchCongSetting  = 0x0014
	ccAttrSwitchPortSetting  = 0x0015
	ccAttrCACongSetting      = 0x0016
	ccAttrCongControlTable   = 0x0017
	ccAttrTimeStamp          = 0x0018
	ccDataOff, ccLogDataOff  = 64, 32
	ccDataSize, ccLogDataSiz = mad.Size - ccDataOff, mad.Size - ccLogDataOff
	// ccPortsPerBlockQuery is how many SwitchPortCongestionSetting
	// elements ibccquery reads from one block: 48 of 4 bytes, the whole
	// data area, where the IBA (A10.4.3.7) and OpenSM put 32 in a block.
	// ibccquery's numbering is kept so that its output stays the same.
	ccPortsPerBlockQuery = 48
	// ccPortsPerBlock is the IBA's block of 32 ports, which ibccconfig
	// writes.
	ccPortsPerBlock = 32
)

// ccOp is one row of ibccquery's op table (ibccquery.c match_tbl).
type ccOp struct {
	name, alias string
	takesPort   bool
	run         func(q *ccRun, args []string) error
}

func findCCOp(ops []ccOp, name string) (ccOp, bool) {
	for _, o := range ops {
		if strings.EqualFold(o.name, name) || strings.EqualFold(o.alias, name) {
			return o, true
		}
	}
	return ccOp{}, false
}

// CCResult is what ibccquery read or ibccconfig wrote: the op, the target
// as infiniband-diags names it, and each attribute sent or received,
// decoded by IBA names.
type CCResult struct {
	Op         string        `json:"op"`
	Target     string        `json:"target"`
	Attributes []CCAttribute `json:"attributes"`
}

// CCAttribute is one CongestionCtl attribute: for ibccquery what a
// CongestionGet returned, for ibccconfig what a CongestionSet wrote. Port
// numbers a SwitchPortCongestionSetting element as ibccquery prints it.
type CCAttribute struct {
	Attribute string          `json:"attribute"`
	Method    string          `json:"method"`
	Modifier  uint32          `json:"modifier"`
	Port      *int            `json:"port,omitempty"`
	Data      json.RawMessage `json:"data"`
}

type ccFlags struct {
	addr  addrFlags
	cckey string
}

func (f *ccFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVarP(&f.cckey, "cckey", "c", "", "CC key")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
}

// key is the CC_Key to send. mad.Client has no place for the CC_Key of the
// CongestionCtl header (bytes 24-31, IBA A10.4.1) yet, so only the default
// key 0 can be sent: a request with another key is refused rather than
// sent with the wrong one.
func (f *ccFlags) key() error {
	if f.cckey == "" {
		return nil
	}
	if cStrtoul(f.cckey) != 0 {
		return usagef("--cckey %s: only CC_Key 0 can be sent (mad.Request carries no CC_Key yet)", f.cckey)
	}
	return nil
}

func ccOpsUsage(ops []ccOp, configure bool, extra map[string]string) string {
	var b strings.Builder
	for _, o := range ops {
		p := ""
		if o.takesPort {
			p = " [<portnum>]"
			if configure {
				p = " <portnum>"
			}
		}
		if x := extra[o.name]; x != "" {
			p += " " + x
		}
		fmt.Fprintf(&b, "  %s (%s) <lid|guid>%s\n", o.name, o.alias, p)
	}
	return b.String()
}

// ccRun is one ibccquery or ibccconfig run.
type ccRun struct {
	e      *Env
	s      *session
	target mad.Target  // CongestionCtl MADs
	smp    ibpath.Path // NodeInfo of SwitchPortCongestionSetting
	dest   string      // portid2str
	op     string      // as typed
	res    *CCResult
	out    bytes.Buffer
}

func runCC(e *Env, f *ccFlags, tool string, ops []ccOp, args []string, open func() (*session, error)) error {
	if len(args) < 2 {
		return usagef("want <op> <lid|guid> [op params]")
	}
	op, ok := findCCOp(ops, args[0])
	if !ok {
		return iberror(nil, "operation '%s' not supported", args[0])
	}
	if err := f.key(); err != nil {
		return err
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	t, err := s.gmpTarget(args[1], &f.addr)
	if err != nil {
		return iberror(unwrapUsage(err), "can't resolve destination %s", args[1])
	}
	lid := t.Route().Addr.LID
	q := &ccRun{e: e, s: s, target: t, smp: ibpath.NewLID(lid), dest: fmt.Sprintf("Lid %d", lid), op: args[0],
		res: &CCResult{Op: op.name, Target: fmt.Sprintf("Lid %d", lid)}}
	err = op.run(q, args[2:])
	if err != nil {
		// The C tools print what they printed before IBEXIT.
		if !e.JSON {
			_, _ = e.Stdout.Write(q.out.Bytes())
		}
		return err
	}
	if e.JSON {
		return e.writeJSON(tool, q.res)
	}
	_, err = e.Stdout.Write(q.out.Bytes())
	return err
}

// fail is ibccquery's IBEXIT("operation %s: %s").
func (q *ccRun) fail(err error, msg string) error {
	return iberror(err, "operation %s: %s", q.op, msg)
}

// get is libibmad's cc_query_status_via: a CongestionGet whose reply data is
// taken from byte 32 for CongestionLog and from byte 64 otherwise.
func (q *ccRun) get(attr uint16, mod uint32) ([]byte, error) {
	return q.do(iba.MethodGet, attr, mod, nil)
}

func (q *ccRun) do(m iba.Method, attr uint16, mod uint32, data []byte) ([]byte, error) {
	rep, err := q.s.mc.Do(q.e.Ctx, mad.Request{Target: q.target, Class: iba.ClassCongestionCtl, Method: m, AttrID: attr, AttrMod: mod, Data: data})
	if err != nil {
		return nil, err
	}
	off, size := ccDataOff, ccDataSize
	if attr == ccAttrCongestionLog {
		off, size = ccLogDataOff, ccLogDataSiz
	}
	out := make([]byte, size)
	if len(rep.MAD) > off {
		copy(out, rep.MAD[off:])
	}
	return out, nil
}

// record adds an attribute to the JSON result, decoded as structure name.
func (q *ccRun) record(name, method string, mod uint32, port *int, b []byte) error {
	s, ok := iba.StructByName(name)
	if !ok {
		return fmt.Errorf("no structure %s in package iba", name)
	}
	if len(b) > s.Size {
		b = b[:s.Size]
	}
	q.res.Attributes = append(q.res.Attributes, CCAttribute{Attribute: name, Method: method, Modifier: mod, Port: port, Data: jsonOf(s, b)})
	return nil
}

// switchNumPorts reads NodeInfo by SMP and refuses anything but a switch.
func (q *ccRun) switchNumPorts(what string) (int, error) {
	var ni iba.NodeInfo
	if err := q.s.SubnGet(q.e.Ctx, q.smp, &ni, 0); err != nil {
		return 0, q.fail(err, "node info "+what+" failed")
	}
	if ni.NodeType != iba.NodeTypeSwitch {
		return 0, q.fail(nil, "destination not a switch")
	}
	return int(ni.NumPorts), nil
}
