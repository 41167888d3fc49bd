package diags

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibcacheedit", make: newIBCacheEdit})
}

// The libibnetdisc cache, format version 1 (libibnetdisc/ibnetdisc_cache.c),
// little endian: a header, node records each followed by the (GUID, port)
// keys of its ports, then port records. subnet reads and writes the whole
// format; ibcacheedit edits GUIDs in place, which is exactly what the C
// tool's load, edit and re-cache produce for a cache libibnetdisc wrote
// (same node order, same port hash order, which follows the old GUIDs).
const (
	ceMagic       = 0x8FE7832B
	ceVersion     = 1
	ceHeaderLen   = 28
	ceNodeLen     = 15 + 3*subnet.AttrSize
	cePortKeyLen  = 9
	cePortLen     = 31 + subnet.AttrSize
	ceNodeGUIDOff = 68
	ceNodeTypeOff = 76
	ceNodeInfoOff = 78
	ceNodeKeysOff = 206
	cePortNodeOff = 77
	cePortRemOff  = 85
	ceSysImageOff = ceNodeInfoOff + 4 // NodeInfo:SystemImageGUID (IBA 14.2.5.3)
)

type ceNode struct {
	off   int
	guid  uint64
	typ   iba.NodeType
	sys   uint64
	ports []*cePort // by the node record's keys
}

type cePort struct {
	off    int
	guid   uint64
	num    uint8
	node   *ceNode
	remote *cePort
}

type ceCache struct {
	data  []byte
	from  *ceNode
	nodes []*ceNode
	ports []*cePort
}

// parseCECache reads a libibnetdisc cache and links its records as
// libibnetdisc's loader does: node keys and remote references name ports by
// GUID and port number.
func parseCECache(data []byte) (*ceCache, error) {
	le := binary.LittleEndian
	if len(data) < ceHeaderLen || le.Uint32(data) != ceMagic {
		return nil, fmt.Errorf("not a libibnetdisc cache")
	}
	if v := le.Uint32(data[4:]); v != ceVersion {
		return nil, fmt.Errorf("libibnetdisc cache version %d, want %d", v, ceVersion)
	}
	c := &ceCache{data: append([]byte(nil), data...)}
	nn, np := int(le.Uint32(data[8:])), int(le.Uint32(data[12:]))
	fromGUID := le.Uint64(data[16:])
	off := ceHeaderLen
	type key struct {
		guid uint64
		num  uint8
	}
	nodeKeys := make([][]key, 0, min(nn, 1<<16))
	for i := 0; i < nn; i++ {
		if off+ceNodeLen > len(data) {
			return nil, fmt.Errorf("node record %d: truncated at byte %d", i, off)
		}
		n := &ceNode{off: off, guid: le.Uint64(data[off+ceNodeGUIDOff:]), typ: iba.NodeType(data[off+ceNodeTypeOff]), sys: binary.BigEndian.Uint64(data[off+ceSysImageOff:])}
		k := int(data[off+ceNodeKeysOff])
		off += ceNodeLen
		if off+k*cePortKeyLen > len(data) {
			return nil, fmt.Errorf("node record %d: truncated port keys at byte %d", i, off)
		}
		keys := make([]key, k)
		for j := range keys {
			keys[j] = key{le.Uint64(data[off:]), data[off+8]}
			off += cePortKeyLen
		}
		nodeKeys = append(nodeKeys, keys)
		c.nodes = append(c.nodes, n)
		if c.from == nil && n.guid == fromGUID {
			c.from = n
		}
	}
	byKey := map[key]*cePort{}
	for i := 0; i < np; i++ {
		if off+cePortLen > len(data) {
			return nil, fmt.Errorf("port record %d: truncated at byte %d", i, off)
		}
		p := &cePort{off: off, guid: le.Uint64(data[off:]), num: data[off+8]}
		byKey[key{p.guid, p.num}] = p // the last wins, as libibnetdisc's lookup
		c.ports = append(c.ports, p)
		off += cePortLen
	}
	if off != len(data) {
		return nil, fmt.Errorf("%d bytes after the last port record", len(data)-off)
	}
	for i, n := range c.nodes {
		for _, k := range nodeKeys[i] {
			if p := byKey[k]; p != nil {
				p.node = n
				n.ports = append(n.ports, p)
			}
		}
	}
	for _, p := range c.ports {
		b := data[p.off:]
		if b[cePortRemOff] != 0 {
			p.remote = byKey[key{le.Uint64(b[cePortRemOff+1:]), b[cePortRemOff+9]}]
		}
	}
	return c, nil
}

// bytes writes the edited GUIDs back into their records.
func (c *ceCache) bytes() []byte {
	le := binary.LittleEndian
	b := c.data
	if c.from != nil {
		le.PutUint64(b[16:], c.from.guid)
	}
	for _, n := range c.nodes {
		le.PutUint64(b[n.off+ceNodeGUIDOff:], n.guid)
		binary.BigEndian.PutUint64(b[n.off+ceSysImageOff:], n.sys) // NodeInfo is in wire order
		koff := n.off + ceNodeLen
		for range int(b[n.off+ceNodeKeysOff]) {
			num := b[koff+8]
			for _, p := range n.ports {
				if p.num == num {
					le.PutUint64(b[koff:], p.guid)
				}
			}
			koff += cePortKeyLen
		}
	}
	for _, p := range c.ports {
		le.PutUint64(b[p.off:], p.guid)
		if p.node != nil {
			le.PutUint64(b[p.off+cePortNodeOff:], p.node.guid)
		}
		if p.remote != nil {
			le.PutUint64(b[p.off+cePortRemOff+1:], p.remote.guid)
		}
	}
	return b
}

// CacheEditResult is ibcacheedit's --json document: what was changed.
type CacheEditResult struct {
	From    string      `json:"from"`
	To      string      `json:"to"`
	Changes []CacheEdit `json:"changes"`
}

// CacheEdit is one GUID changed.
type CacheEdit struct {
	What   string `json:"what"` // switchguid, caguid, sysimgguid, portguid
	Node   string `json:"node_guid"`
	Port   int    `json:"port,omitempty"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// ceEdit is one BEFOREGUID:AFTERGUID option (with NODEGUID: for
// --portguid).
type ceEdit struct {
	set                 bool
	node, before, after uint64
}

// parseCEEdit reads the argument as the C tool does: fields split at ':',
// each read by strtoull(..., 0).
func parseCEEdit(arg string, withNode bool) (ceEdit, error) {
	parts := strings.SplitN(arg, ":", 3)
	want := 2
	if withNode {
		want = 3
	}
	if len(parts) < want || parts[len(parts)-1] == "" || (withNode && parts[1] == "") {
		return ceEdit{}, usagef("invalid input '%s'", arg)
	}
	if !withNode {
		parts = []string{parts[0], strings.Join(parts[1:], ":")}
	}
	e := ceEdit{set: true}
	if withNode {
		e.node, e.before, e.after = cStrtoul(parts[0]), cStrtoul(parts[1]), cStrtoul(parts[2])
	} else {
		e.before, e.after = cStrtoul(parts[0]), cStrtoul(parts[1])
	}
	return e, nil
}

func newIBCacheEdit(e *Env) *cobra.Command {
	var sw, ca, sys, port string
	c := &cobra.Command{
		Use:   "ibcacheedit [flags] <orig.cache> <new.cache>",
		Short: "edit GUIDs in an ibnetdiscover cache (infiniband-diags ibcacheedit)",
		Long: `ibcacheedit copies a libibnetdisc cache file (ibnetdiscover --cache),
changing switch, CA, system image or port GUIDs, as infiniband-diags'
ibcacheedit does: a switch's port GUIDs follow its node GUID, and every
reference to an edited port (links, the start node) follows it. The new
file is what the C tool writes, byte for byte.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var edits [4]ceEdit
			var err error
			for i, a := range []struct {
				v        string
				withNode bool
			}{{sw, false}, {ca, false}, {sys, false}, {port, true}} {
				if a.v == "" {
					continue
				}
				if edits[i], err = parseCEEdit(a.v, a.withNode); err != nil {
					return err
				}
			}
			if len(args) < 1 {
				return iberror(nil, "original cache file not specified")
			}
			if len(args) < 2 {
				return iberror(nil, "new cache file not specified")
			}
			return runIBCacheEdit(e, args[0], args[1], edits)
		},
	}
	fl := c.Flags()
	fl.StringVar(&sw, "switchguid", "", "`BEFOREGUID:AFTERGUID` of a switch to edit")
	fl.StringVar(&ca, "caguid", "", "`BEFOREGUID:AFTERGUID` of a CA to edit")
	fl.StringVar(&sys, "sysimgguid", "", "`BEFOREGUID:AFTERGUID` system image GUID to edit")
	fl.StringVar(&port, "portguid", "", "`NODEGUID:BEFOREGUID:AFTERGUID` port GUID to edit")
	return c
}

// readIBNDCacheFile reads a libibnetdisc cache with the checks and bounds
// of subnet.ReadIBNDCache: a regular file beyond subnet.MaxFileSize is
// refused before it is read, a stream stops at its first byte that is not
// a cache's (wrong magic number, garbage) or at the limit.
func readIBNDCacheFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > subnet.MaxFileSize {
		return nil, fmt.Errorf("%s: %w", path, &subnet.SizeError{What: "libibnetdisc cache", Size: st.Size(), Limit: subnet.MaxFileSize})
	}
	data, err := subnet.ReadIBNDCacheData(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

func runIBCacheEdit(e *Env, from, to string, edits [4]ceEdit) error {
	data, err := readIBNDCacheFile(from)
	if err != nil {
		return iberror(err, "loading original cached fabric failed")
	}
	c, err := parseCECache(data)
	if err != nil {
		return iberror(err, "loading original cached fabric failed")
	}
	res := &CacheEditResult{From: from, To: to, Changes: []CacheEdit{}}
	note := func(what string, n *ceNode, port int, before, after uint64) {
		res.Changes = append(res.Changes, CacheEdit{What: what, Node: iba.GUID(n.guid).String(), Port: port,
			Before: iba.GUID(before).String(), After: iba.GUID(after).String()})
	}
	// replaceNodeGUID is replace_node_guid: a switch's ports carry its
	// GUID (IBA 14.2.5.3), so they change with it.
	replaceNodeGUID := func(n *ceNode, before, after uint64, what string) {
		n.guid = after
		note(what, n, 0, before, after)
		if n.typ == iba.NodeTypeSwitch {
			for _, p := range n.ports {
				p.guid = after
			}
		}
	}
	if ed := edits[0]; ed.set {
		found := 0
		for _, n := range c.nodes {
			if n.typ == iba.NodeTypeSwitch && n.guid == ed.before {
				replaceNodeGUID(n, ed.before, ed.after, "switchguid")
				found++
			}
		}
		if found == 0 {
			return iberror(nil, "switchguid = %x not found", ed.before)
		}
	}
	if ed := edits[1]; ed.set {
		found := 0
		for _, n := range c.nodes {
			if n.typ == iba.NodeTypeCA && n.guid == ed.before {
				replaceNodeGUID(n, ed.before, ed.after, "caguid")
				found++
			}
		}
		if found == 0 {
			return iberror(nil, "caguid = %x not found", ed.before)
		}
	}
	if ed := edits[2]; ed.set {
		found := 0
		for _, n := range c.nodes {
			if n.sys == ed.before {
				n.sys = ed.after
				note("sysimgguid", n, 0, ed.before, ed.after)
				found++
			}
		}
		if found == 0 {
			return iberror(nil, "sysimgguid = %x not found", ed.before)
		}
	}
	if ed := edits[3]; ed.set {
		searched, found := 0, 0
		for _, n := range c.nodes {
			if n.guid != ed.node {
				continue
			}
			searched++
			if n.typ == iba.NodeTypeSwitch {
				if n.guid == ed.before {
					replaceNodeGUID(n, ed.before, ed.after, "portguid")
					found++
				}
				continue
			}
			// The lowest-numbered port 1..N with that GUID.
			var hit *cePort
			for _, p := range n.ports {
				if p.num >= 1 && p.guid == ed.before && (hit == nil || p.num < hit.num) {
					hit = p
				}
			}
			if hit != nil {
				hit.guid = ed.after
				note("portguid", n, int(hit.num), ed.before, ed.after)
				found++
			}
		}
		if searched == 0 {
			return iberror(nil, "nodeguid = %x not found", ed.node)
		}
		if found == 0 {
			return iberror(nil, "portguid = %x not found", ed.before)
		}
	}
	if err := os.WriteFile(to, c.bytes(), 0o644); err != nil {
		return iberror(err, "caching new cache data failed")
	}
	if e.JSON {
		return e.writeJSON("ibcacheedit", res)
	}
	return nil
}
