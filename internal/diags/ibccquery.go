package diags

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
)

func init() {
	register(command{name: "ibccquery", make: func(e *Env) *cobra.Command { return newIBCCQueryWith(e, e.open) }})
}

var ccQueryOps = []ccOp{
	{"ClassPortInfo", "CP", false, (*ccRun).classPortInfo},
	{"CongestionInfo", "CI", false, simpleCC(ccAttrCongestionInfo, "CongestionInfo", "congestion info")},
	{"CongestionKeyInfo", "CK", false, simpleCC(ccAttrCongestionKeyInfo, "CongestionKeyInfo", "congestion key info")},
	{"CongestionLog", "CL", false, (*ccRun).congestionLog},
	{"SwitchCongestionSetting", "SS", false, simpleCC(ccAttrSwitchCongSetting, "SwitchCongestionSetting", "switch congestion setting")},
	{"SwitchPortCongestionSetting", "SP", true, (*ccRun).switchPortSetting},
	{"CACongestionSetting", "CS", false, (*ccRun).caSetting},
	{"CongestionControlTable", "CT", false, (*ccRun).controlTable},
	{"Timestamp", "TI", false, simpleCC(ccAttrTimeStamp, "TimeStamp", "timestamp")},
}

func newIBCCQueryWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &ccFlags{}
	c := &cobra.Command{
		Use:   "ibccquery [flags] <op> <lid|guid> [op params]",
		Short: "query congestion control attributes (infiniband-diags ibccquery)",
		Long: `ibccquery reads a congestion control (class 0x21, IBA annex A10) attribute
of a node and prints it as infiniband-diags' ibccquery does.

Supported ops (and aliases, case insensitive):
` + ccOpsUsage(ccQueryOps, false, nil) + `
Examples:
  ibccquery CongestionInfo 3                 # Congestion Info by lid
  ibccquery SwitchPortCongestionSetting 3    # all Switch Port Congestion Settings
  ibccquery SwitchPortCongestionSetting 3 1  # Switch Port Congestion Setting of port 1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCC(e, f, "ibccquery", ccQueryOps, args, open)
		},
	}
	f.register(c)
	return c
}

// simpleCC is an op that reads one attribute and dumps it whole.
func simpleCC(attr uint16, name, what string) func(q *ccRun, args []string) error {
	return func(q *ccRun, _ []string) error {
		b, err := q.get(attr, 0)
		if err != nil {
			return q.fail(err, what+" query failed")
		}
		if err := q.record(name, "CongestionGet", 0, nil, b); err != nil {
			return err
		}
		label := name
		if name == "TimeStamp" {
			label = "Timestamp"
		}
		fmt.Fprintf(&q.out, "# %s: %s\n", label, q.dest)
		return ccDump(&q.out, name, b)
	}
}

func (q *ccRun) classPortInfo(_ []string) error {
	b, err := q.get(ccAttrClassPortInfo, 0)
	if err != nil {
		return q.fail(err, "class port info query failed")
	}
	if err := q.record("ClassPortInfo", "CongestionGet", 0, nil, b); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# ClassPortInfo: %s\n", q.dest)
	return ccClassPortInfo.Render(&q.out, b)
}

// congestionLog prints the log's common part, then the switch or CA part
// and every event that is not all zeros, as ibccquery does.
func (q *ccRun) congestionLog(_ []string) error {
	b, err := q.get(ccAttrCongestionLog, 0)
	if err != nil {
		return q.fail(err, "congestion log query failed")
	}
	typ := b[0]
	if typ != 1 && typ != 2 {
		return q.fail(nil, "unrecognized log type")
	}
	name, event, first, size, n := "CongestionLogSwitch", "CongestionLogEventSW", 40, 12, 15
	if typ == 2 {
		name, event, first, size, n = "CongestionLogCA", "CongestionLogEventCA", 12, 16, 13
	}
	if err := q.record(name, "CongestionGet", 0, nil, b); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# CongestionLog: %s\n", q.dest)
	if err := ccDump(&q.out, "CongestionLog", b); err != nil {
		return err
	}
	if err := ccDump(&q.out, name, b, "logType", "congestionFlags"); err != nil {
		return err
	}
	q.out.WriteString("\n")
	for i := 0; i < n; i++ {
		ev := b[first+i*size : first+(i+1)*size]
		if allZero(ev) {
			continue
		}
		if err := ccDump(&q.out, event, ev); err != nil {
			return err
		}
		q.out.WriteString("\n")
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (q *ccRun) switchPortSetting(args []string) error {
	portnum := 0
	if len(args) > 0 {
		portnum = int(int64(cStrtoul(args[0])))
	}
	numPorts, err := q.switchNumPorts("query")
	if err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# SwitchPortCongestionSetting: %s\n", q.dest)
	const elem = 4
	if portnum != 0 {
		if portnum > numPorts || portnum < 0 {
			return q.fail(nil, "invalid port number specified")
		}
		blk := uint32(portnum / ccPortsPerBlockQuery)
		b, err := q.get(ccAttrSwitchPortSetting, blk)
		if err != nil {
			return q.fail(err, "switch port congestion setting query failed")
		}
		e := b[(portnum%ccPortsPerBlockQuery)*elem:][:elem]
		if err := q.record("SwitchPortCongestionSettingElement", "CongestionGet", blk, &portnum, e); err != nil {
			return err
		}
		return ccDump(&q.out, "SwitchPortCongestionSettingElement", e)
	}
	count := 0
	for blk := 0; blk < numPorts/ccPortsPerBlockQuery+1; blk++ {
		b, err := q.get(ccAttrSwitchPortSetting, uint32(blk))
		if err != nil {
			return q.fail(err, "switch port congestion setting query failed")
		}
		for j := 0; j < ccPortsPerBlockQuery && count <= numPorts; j++ {
			port := blk*ccPortsPerBlockQuery + j
			e := b[j*elem:][:elem]
			if err := q.record("SwitchPortCongestionSettingElement", "CongestionGet", uint32(blk), &port, e); err != nil {
				return err
			}
			fmt.Fprintf(&q.out, "Port:............................%d\n", port)
			if err := ccDump(&q.out, "SwitchPortCongestionSettingElement", e); err != nil {
				return err
			}
			q.out.WriteString("\n")
			count++
		}
	}
	return nil
}

func (q *ccRun) caSetting(_ []string) error {
	b, err := q.get(ccAttrCACongSetting, 0)
	if err != nil {
		return q.fail(err, "ca congestion setting query failed")
	}
	if err := q.record("CACongestionSetting", "CongestionGet", 0, nil, b); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# CACongestionSetting: %s\n", q.dest)
	if err := ccDump(&q.out, "CACongestionSetting", b); err != nil {
		return err
	}
	q.out.WriteString("\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&q.out, "SL:..............................%d\n", i)
		if err := ccDump(&q.out, "CACongestionEntry", b[4+i*8:]); err != nil {
			return err
		}
		q.out.WriteString("\n")
	}
	return nil
}

func (q *ccRun) controlTable(_ []string) error {
	b, err := q.get(ccAttrCongControlTable, 0)
	if err != nil {
		return q.fail(err, "congestion control table query failed")
	}
	limit := int(b[0])<<8 | int(b[1])
	if err := q.record("CongestionControlTable", "CongestionGet", 0, nil, b); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# CongestionControlTable: %s\n", q.dest)
	if err := ccDump(&q.out, "CongestionControlTable", b); err != nil {
		return err
	}
	q.out.WriteString("\n")
	if limit == 0 {
		return nil
	}
	count := 0
	for blk := 0; blk < limit/64+1; blk++ {
		if blk > 0 {
			if b, err = q.get(ccAttrCongControlTable, uint32(blk)); err != nil {
				return q.fail(err, "congestion control table query failed")
			}
			if err := q.record("CongestionControlTable", "CongestionGet", uint32(blk), nil, b); err != nil {
				return err
			}
		}
		for j := 0; j < 64 && count <= limit; j++ {
			fmt.Fprintf(&q.out, "Entry:...........................%d\n", blk*64+j)
			if err := ccDump(&q.out, "CongestionControlTableEntry", b[4+j*2:]); err != nil {
				return err
			}
			q.out.WriteString("\n")
			count++
		}
	}
	return nil
}

// The libibmad dumps of the congestion control attributes
// (mad_dump_cc_*): one "Label:....value" line per component, column 33,
// the labels and the hex or decimal spelling taken from the iba metadata
// (which carries libibmad's field names as labels), byte arrays as bare
// hex.
var (
	ccTablesMu sync.Mutex
	ccTables   = map[string]*ibaprint.Table{}
)

// ccDump renders the labelled components of structure name from b, less
// those named in skip (a variant's common part printed already).
func ccDump(w io.Writer, name string, b []byte, skip ...string) error {
	key := name + "/" + strings.Join(skip, ",")
	ccTablesMu.Lock()
	t, ok := ccTables[key]
	if !ok {
		s, found := iba.StructByName(name)
		if !found {
			ccTablesMu.Unlock()
			return fmt.Errorf("no structure %s in package iba", name)
		}
		t = &ibaprint.Table{Struct: name, Colon: true, Width: 33}
	fields:
		for _, f := range s.Fields {
			if f.Reserved || f.Label == "" || f.Kind == iba.KindStruct {
				continue
			}
			for _, k := range skip {
				if k == f.Name {
					continue fields
				}
			}
			t.Rows = append(t.Rows, ibaprint.Row{Label: f.Label, Path: f.Name, Format: madDumpFormat(f)})
		}
		ccTables[key] = t
	}
	ccTablesMu.Unlock()
	return t.Render(w, b)
}

// madDumpFormat picks libibmad's formatter for a component: mad_dump_array
// for byte strings, mad_dump_hex (zero padded to the bytes the component
// spans) or mad_dump_uint.
func madDumpFormat(f iba.Field) ibaprint.Formatter {
	switch {
	case f.Kind == iba.KindBytes || f.Kind == iba.KindGID || f.Bits > 64:
		return madArray
	case f.Hint == iba.HintHex:
		return madHex
	}
	return madUint
}

func madUint(b []byte, off, bits int) string { return fmt.Sprintf("%d", readBits(b, off, bits)) }

func madHex(b []byte, off, bits int) string {
	return fmt.Sprintf("0x%0*x", 2*((bits+7)/8), readBits(b, off, bits))
}

func madArray(b []byte, off, bits int) string {
	return hex.EncodeToString(b[off/8 : (off+bits+7)/8])
}

// readBits reads up to 64 bits at bit offset off, most significant first.
func readBits(b []byte, off, width int) uint64 {
	var v uint64
	for i := 0; i < width && i < 64; i++ {
		bit := off + i
		v = v<<1 | uint64(b[bit/8]>>(7-bit%8)&1)
	}
	return v
}

// ccClassPortInfo is mad_dump_classportinfo: libibmad's labels and
// spellings, which differ from the iba hints for a few components (the
// flow labels and traffic classes in hex).
var ccClassPortInfo = &ibaprint.Table{Struct: "ClassPortInfo", Colon: true, Width: 33, Rows: []ibaprint.Row{
	{Label: "BaseVersion", Path: "baseVersion", Format: madUint},
	{Label: "ClassVersion", Path: "classVersion", Format: madUint},
	{Label: "CapabilityMask", Path: "capabilityMask", Format: madHex},
	{Label: "CapabilityMask2", Path: "capabilityMask2", Format: madHex},
	{Label: "RespTimeVal", Path: "respTimeValue", Format: madUint},
	{Label: "RedirectGID", Path: "redirectGID", Format: madArray},
	{Label: "RedirectTC", Path: "redirectTC", Format: madHex},
	{Label: "RedirectSL", Path: "redirectSL", Format: madUint},
	{Label: "RedirectFL", Path: "redirectFL", Format: madHex},
	{Label: "RedirectLID", Path: "redirectLID", Format: madUint},
	{Label: "RedirectPKey", Path: "redirectPKey", Format: madHex},
	{Label: "RedirectQP", Path: "redirectQP", Format: madHex},
	{Label: "RedirectQKey", Path: "redirectQKey", Format: madHex},
	{Label: "TrapGID", Path: "trapGID", Format: madArray},
	{Label: "TrapTC", Path: "trapTC", Format: madHex},
	{Label: "TrapSL", Path: "trapSL", Format: madUint},
	{Label: "TrapFL", Path: "trapFL", Format: madHex},
	{Label: "TrapLID", Path: "trapLID", Format: madUint},
	{Label: "TrapPKey", Path: "trapPKey", Format: madHex},
	{Label: "TrapHL", Path: "trapHL", Format: madUint},
	{Label: "TrapQP", Path: "trapQP", Format: madHex},
	{Label: "TrapQKey", Path: "trapQKey", Format: madHex},
}}
