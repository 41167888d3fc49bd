package subnet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rdmakit/rdmakit/iba"
)

// The libibnetdisc cache file, version 1 (rdma-core
// libibnetdisc/ibnetdisc_cache.c), which `ibnetdiscover --cache` writes and
// `--load-cache`, `--diff` and ibcacheedit read. Every integer is little
// endian; attribute data is the raw 64-byte SMP data, big endian inside.
//
//	header, 28 bytes:
//	  0  u32  magic 0x8FE7832B
//	  4  u32  version 1
//	  8  u32  node count
//	 12  u32  port count
//	 16  u64  GUID of the node discovery started from
//	 24  u32  max hops discovered
//	node record, 207 + 9k bytes, newest node first:
//	  0  u16  switch port 0 LID      2  u8  its LMC     3  u8  enhanced port 0
//	  4  [64] SwitchInfo (zero for CAs)
//	 68  u64  node GUID             76  u8  node type  77  u8  port count
//	 78  [64] NodeInfo             142  [64] NodeDescription
//	206  u8   k, then k keys of {u64 port GUID, u8 port number}, port 0 up
//	port record, 95 bytes, in libibnetdisc's port hash order:
//	  0  u64  port GUID (a switch's ports all carry its port 0 GUID)
//	  8  u8   port number    9  u8  external port number
//	 10  u16  base LID      12  u8  LMC
//	 13  [64] PortInfo
//	 77  u64  GUID of the owning node
//	 85  u8   1 if a remote port follows, 86 u64 its GUID, 94 u8 its number
//
// MlnxExtPortInfo is not cached, so FDR10 links read back as QDR, as they
// do in the C tools.
const (
	ibndMagic      = 0x8FE7832B
	ibndVersion    = 1
	ibndHeaderLen  = 28
	ibndNodeLen    = 15 + 3*AttrSize
	ibndPortKeyLen = 9
	ibndPortLen    = 31 + AttrSize
	ibndHashSize   = 137 // HTSZ in ibnetdisc.h
)

// ErrCorrupt is matched by every *CacheError.
var ErrCorrupt = errors.New("corrupt cache file")

// CacheError is a cache file that cannot be loaded: what is wrong and the
// byte offset where it was found.
type CacheError struct {
	Format string // "libibnetdisc cache" or "rdmakit cache"
	Offset int64
	Msg    string
}

func (e *CacheError) Error() string {
	return fmt.Sprintf("%s: offset %d: %s", e.Format, e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CacheError) Is(target error) bool { return target == ErrCorrupt }

// ibndHash is libibnetdisc's HASHGUID, reduced to a bucket.
func ibndHash(g iba.GUID) int {
	h := uint32(uint32(g)*101) ^ uint32(uint32(g>>32)*103)
	return int(h % ibndHashSize)
}

type portKey struct {
	guid iba.GUID
	num  uint8
}

// ReadIBNDCache loads a libibnetdisc cache. Like the C loader it accepts a
// port key that no port record answers and a remote port it cannot find
// (they are left out); unlike it, trailing bytes and port records that
// disagree with their node are errors, so that whatever loads writes back
// identically.
//
// It reads record by record: a stream with the wrong magic number or
// version fails after its header, one that turns to garbage fails at the
// first record that is not one, and it stops at MaxFileSize.
func ReadIBNDCache(r io.Reader) (*Subnet, error) {
	return parseIBND(&ibndCursor{r: &countingReader{r: r, limit: MaxFileSize, what: "libibnetdisc cache"}})
}

// ReadIBNDCacheData reads the bytes of a libibnetdisc cache with the
// checks and bounds of ReadIBNDCache (it parses them as they arrive), for
// a program that works on the file itself (ibcacheedit).
func ReadIBNDCacheData(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := ReadIBNDCache(io.TeeReader(r, &buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseIBNDCache is ReadIBNDCache on bytes in memory.
func ParseIBNDCache(data []byte) (*Subnet, error) {
	return parseIBND(&ibndCursor{data: data})
}

// checkIBNDHeader checks the magic number and version, the parts of a
// header that can be checked alone, and that the counts it declares could
// fit MaxFileSize.
func checkIBNDHeader(data []byte) error {
	bad := func(off int, format string, a ...any) error {
		return &CacheError{Format: "libibnetdisc cache", Offset: int64(off), Msg: fmt.Sprintf(format, a...)}
	}
	le := binary.LittleEndian
	if len(data) >= 4 {
		if m := le.Uint32(data); m != ibndMagic {
			return bad(0, "magic %#08x, want %#08x: not a libibnetdisc cache", m, ibndMagic)
		}
	}
	if len(data) < ibndHeaderLen {
		return bad(len(data), "truncated header: %d of %d bytes", len(data), ibndHeaderLen)
	}
	if v := le.Uint32(data[4:]); v != ibndVersion {
		return bad(4, "version %d, only %d is known", v, ibndVersion)
	}
	least := ibndHeaderLen + int64(le.Uint32(data[8:]))*ibndNodeLen + int64(le.Uint32(data[12:]))*ibndPortLen
	if least > MaxFileSize {
		return &SizeError{What: "libibnetdisc cache", Size: least, Limit: MaxFileSize}
	}
	return nil
}

// ibndCursor hands out a libibnetdisc cache's records in order, from bytes
// in memory (without copying) or from a stream.
type ibndCursor struct {
	data []byte    // the whole file, or
	r    io.Reader // the stream
	buf  []byte
	off  int
	err  error // what stopped the stream, other than its end
}

// take returns the next n bytes, valid until the next take; nil and the
// count there were when the file ends first.
func (c *ibndCursor) take(n int) ([]byte, int) {
	if c.r == nil {
		if left := len(c.data) - c.off; left < n {
			return nil, left
		}
		b := c.data[c.off : c.off+n]
		c.off += n
		return b, n
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n, max(n, 4096))
	}
	b := c.buf[:n]
	got, err := io.ReadFull(c.r, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		c.err = err
	}
	if got < n {
		return nil, got
	}
	c.off += n
	return b, n
}

// rest counts what follows the last record.
func (c *ibndCursor) rest() int64 {
	if c.r == nil {
		return int64(len(c.data) - c.off)
	}
	n, err := io.Copy(io.Discard, c.r)
	if err != nil {
		c.err = err
	}
	return n
}

func parseIBND(c *ibndCursor) (*Subnet, error) {
	bad := func(off int, format string, a ...any) error {
		return &CacheError{Format: "libibnetdisc cache", Offset: int64(off), Msg: fmt.Sprintf(format, a...)}
	}
	// A truncated record of a stream that failed is the failure's.
	short := func(err error) error {
		if c.err != nil {
			return fmt.Errorf("reading libibnetdisc cache at offset %d: %w", c.off, c.err)
		}
		return err
	}
	le := binary.LittleEndian
	hdr, got := c.take(ibndHeaderLen)
	if hdr == nil {
		// What there is of the header: a stream's is in buf, and data
		// may be nil.
		var part []byte
		if c.r == nil {
			part = c.data[:got]
		} else {
			part = c.buf[:got]
		}
		if err := checkIBNDHeader(part); err != nil {
			return nil, short(err)
		}
	}
	if err := checkIBNDHeader(hdr); err != nil {
		return nil, err
	}
	nodeCount := int64(le.Uint32(hdr[8:]))
	portCount := int64(le.Uint32(hdr[12:]))
	fromGUID := iba.GUID(le.Uint64(hdr[16:]))
	maxHops := le.Uint32(hdr[24:])
	if c.r == nil && nodeCount*ibndNodeLen+portCount*ibndPortLen > int64(len(c.data)-ibndHeaderLen) {
		return nil, bad(8, "%d nodes and %d ports do not fit in the %d bytes that follow the header", nodeCount, portCount, len(c.data)-ibndHeaderLen)
	}

	type nodeRec struct {
		n    *Node
		keys []portKey
		off  int
	}
	type portRec struct {
		p         *Port
		nodeGUID  iba.GUID
		hasRemote bool
		remote    portKey
		off       int
		stored    bool
	}
	// A stream's counts are not checked against its length: room for
	// the first records only, grown as they come.
	nodes := make([]nodeRec, 0, min(nodeCount, 1<<16))
	byGUID := make(map[iba.GUID]int, min(nodeCount, 1<<16))
	for i := int64(0); i < nodeCount; i++ {
		off := c.off
		b, got := c.take(ibndNodeLen)
		if b == nil {
			return nil, short(bad(off, "node record %d truncated: %d of %d bytes", i, got, ibndNodeLen))
		}
		n := &Node{
			SMALID:        le.Uint16(b),
			SMALMC:        b[2],
			EnhancedSP0:   b[3] != 0,
			GUID:          iba.GUID(le.Uint64(b[68:])),
			Type:          iba.NodeType(b[76]),
			NumPorts:      int(b[77]),
			HasDesc:       true,
			HasSwitchInfo: iba.NodeType(b[76]) == iba.NodeTypeSwitch,
		}
		if err := checkNode(n.GUID, n.Type, n.NumPorts); err != nil {
			return nil, bad(off+76, "%v", err)
		}
		copy(n.SwitchInfo[:], b[4:68])
		copy(n.Info[:], b[78:142])
		copy(n.Desc[:], b[142:206])
		k := int(b[206])
		if k > n.NumPorts+1 {
			return nil, bad(off+206, "node %v: %d port keys for ports 0 to %d", n.GUID, k, n.NumPorts)
		}
		kb, got := c.take(k * ibndPortKeyLen)
		if kb == nil {
			return nil, short(bad(off+ibndNodeLen, "port keys of node %v truncated: %d keys need %d bytes, %d left", n.GUID, k, k*ibndPortKeyLen, got))
		}
		keys := make([]portKey, k)
		for j := range keys {
			x := kb[j*ibndPortKeyLen:]
			keys[j] = portKey{iba.GUID(le.Uint64(x)), x[8]}
		}
		if _, dup := byGUID[n.GUID]; dup {
			return nil, bad(off+68, "node %v appears twice", n.GUID)
		}
		byGUID[n.GUID] = len(nodes)
		nodes = append(nodes, nodeRec{n: n, keys: keys, off: off})
	}
	ports := make([]portRec, 0, min(portCount, 1<<18))
	byKey := make(map[portKey]int, min(portCount, 1<<18))
	for i := int64(0); i < portCount; i++ {
		off := c.off
		b, got := c.take(ibndPortLen)
		if b == nil {
			return nil, short(bad(off, "port record %d truncated: %d of %d bytes", i, got, ibndPortLen))
		}
		p := &Port{
			GUID:    iba.GUID(le.Uint64(b)),
			Num:     int(b[8]),
			ExtNum:  int(b[9]),
			BaseLID: le.Uint16(b[10:]),
			LMC:     b[12],
			HasInfo: true,
			seq:     uint64(portCount - i),
		}
		copy(p.Info[:], b[13:77])
		pr := portRec{p: p, nodeGUID: iba.GUID(le.Uint64(b[77:])), hasRemote: b[85] != 0,
			remote: portKey{iba.GUID(le.Uint64(b[86:])), b[94]}, off: off}
		k := portKey{p.GUID, uint8(p.Num)}
		if _, dup := byKey[k]; dup {
			return nil, bad(off, "port %v:%d appears twice", p.GUID, p.Num)
		}
		byKey[k] = len(ports)
		ports = append(ports, pr)
	}
	end := c.off
	if extra := c.rest(); extra != 0 || c.err != nil {
		return nil, short(bad(end, "%d bytes after the last of %d port records", extra, portCount))
	}
	if _, ok := byGUID[fromGUID]; !ok {
		return nil, bad(16, "start node %v is not among the %d nodes", fromGUID, nodeCount)
	}

	s := New()
	s.MaxHopsDiscovered = int(maxHops)
	// The file is newest first; discovery order is the reverse.
	for i := len(nodes) - 1; i >= 0; i-- {
		nr := &nodes[i]
		n := nr.n
		n.index = len(s.nodes)
		n.Ports = make([]*Port, n.NumPorts+1)
		s.nodes = append(s.nodes, n)
		s.byNodeGUID[n.GUID] = n
		for _, k := range nr.keys {
			pi, ok := byKey[k]
			if !ok || int(k.num) > n.NumPorts {
				continue // the C loader skips these too: an incomplete cache
			}
			pr := &ports[pi]
			if pr.stored {
				return nil, bad(nr.off, "node %v claims port %v:%d, already claimed", n.GUID, k.guid, k.num)
			}
			if pr.nodeGUID != n.GUID {
				return nil, bad(pr.off+77, "port %v:%d belongs to node %v but node %v claims it", k.guid, k.num, pr.nodeGUID, n.GUID)
			}
			pr.stored = true
			pr.p.Node = n
			n.Ports[k.num] = pr.p
		}
	}
	for i := range ports {
		pr := &ports[i]
		if !pr.stored {
			continue
		}
		if pr.hasRemote {
			if ri, ok := byKey[pr.remote]; ok && ports[ri].stored {
				r := &ports[ri]
				// Set one side only, as the C loader does, so that
				// whatever the file says is written back as it was.
				pr.p.Remote = r.p
			}
		}
		s.portSeq = max(s.portSeq, pr.p.seq)
	}
	for _, n := range s.nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			s.indexPortGUIDLocked(p)
			if n.Type != iba.NodeTypeSwitch || p.Num == 0 {
				s.indexLIDsLocked(p)
			}
		}
		name := n.Description()
		s.byName[name] = append(s.byName[name], n)
	}
	from := s.byNodeGUID[fromGUID]
	s.from, s.fromPort = from, int(from.NodeInfo().LocalPortNum)
	s.rebuildPathsLocked()
	return s, nil
}

// rebuildPathsLocked gives every node without a path a shortest directed
// route from the start node over the known links (a cache keeps none).
func (s *Subnet) rebuildPathsLocked() {
	if s.from == nil {
		return
	}
	seen := map[*Node]bool{s.from: true}
	queue := []*Node{s.from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		// Directed routes cannot pass through a CA (IBA 14.2.2): only the
		// start node and switches forward.
		if n != s.from && n.Type != iba.NodeTypeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || len(n.Path) >= MaxHops {
				continue
			}
			m := p.Remote.Node
			if seen[m] {
				continue
			}
			seen[m] = true
			if m.Path == nil {
				m.Path = n.Path.Extend(uint8(p.Num))
			}
			queue = append(queue, m)
		}
	}
	if s.from.Path == nil {
		s.from.Path = DRPath{}
	}
}

// WriteIBNDCache writes the subnet as a libibnetdisc cache file, version 1,
// byte for byte as ibnetdiscover --cache would write the same fabric:
// nodes newest first, every port with PortInfo in libibnetdisc's hash
// order.
func (s *Subnet) WriteIBNDCache(w io.Writer) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.from == nil {
		return invalid("no start node: nothing to cache")
	}
	var ports []*Port
	for _, n := range s.nodes {
		if err := checkNode(n.GUID, n.Type, n.NumPorts); err != nil {
			return err
		}
		for _, p := range n.Ports {
			if p != nil && p.HasInfo {
				ports = append(ports, p)
			}
		}
	}
	// libibnetdisc walks its 137 hash buckets in order, each chain newest
	// first.
	slices.SortFunc(ports, func(a, b *Port) int {
		if ha, hb := ibndHash(a.GUID), ibndHash(b.GUID); ha != hb {
			return ha - hb
		}
		switch {
		case a.seq > b.seq:
			return -1
		case a.seq < b.seq:
			return 1
		}
		return 0
	})
	le := binary.LittleEndian
	bw := bufio.NewWriterSize(w, 64<<10)
	var hdr [ibndHeaderLen]byte
	le.PutUint32(hdr[0:], ibndMagic)
	le.PutUint32(hdr[4:], ibndVersion)
	le.PutUint32(hdr[8:], uint32(len(s.nodes)))
	le.PutUint32(hdr[12:], uint32(len(ports)))
	le.PutUint64(hdr[16:], uint64(s.from.GUID))
	le.PutUint32(hdr[24:], uint32(s.MaxHopsDiscovered))
	bw.Write(hdr[:])
	var rec [ibndNodeLen + (MaxPorts+1)*ibndPortKeyLen]byte
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		b := rec[:]
		le.PutUint16(b, n.SMALID)
		b[2] = n.SMALMC
		b[3] = 0
		if n.EnhancedSP0 {
			b[3] = 1
		}
		copy(b[4:68], n.SwitchInfo[:])
		le.PutUint64(b[68:], uint64(n.GUID))
		b[76] = uint8(n.Type)
		b[77] = uint8(n.NumPorts)
		copy(b[78:142], n.Info[:])
		copy(b[142:206], n.Desc[:])
		k := 0
		for _, p := range n.Ports {
			if p != nil && p.HasInfo {
				kb := b[ibndNodeLen+k*ibndPortKeyLen:]
				le.PutUint64(kb, uint64(p.GUID))
				kb[8] = uint8(p.Num)
				k++
			}
		}
		b[206] = uint8(k)
		bw.Write(b[:ibndNodeLen+k*ibndPortKeyLen])
	}
	var pb [ibndPortLen]byte
	for _, p := range ports {
		le.PutUint64(pb[0:], uint64(p.GUID))
		pb[8] = uint8(p.Num)
		pb[9] = uint8(p.ExtNum)
		le.PutUint16(pb[10:], p.BaseLID)
		pb[12] = p.LMC
		copy(pb[13:77], p.Info[:])
		le.PutUint64(pb[77:], uint64(p.Node.GUID))
		clear(pb[85:])
		if r := p.Remote; r != nil && r.HasInfo {
			pb[85] = 1
			le.PutUint64(pb[86:], uint64(r.GUID))
			pb[94] = uint8(r.Num)
		}
		bw.Write(pb[:])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing libibnetdisc cache: %w", err)
	}
	return nil
}
