package subnet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/rdmakit/rdmakit/iba"
)

// Our own cache file: every attribute as the raw SMP data, in fixed-size
// records that load with one read and no parsing beyond copies, so a
// 100,000-node subnet loads in well under a second. Version 2; all
// integers little endian. The CRC covers the whole file, header included
// (with its own four bytes taken as zero), so no byte changes unnoticed;
// version 1, whose CRC left the header out, is refused.
//
//	header, 64 bytes:
//	  0 [8]  magic "RDMKSUBN"
//	  8 u32  version (2)
//	 12 u32  flags (0; a reader rejects bits it does not know)
//	 16 u32  node count N
//	 20 u32  port count P
//	 24 u32  unreachable count U
//	 28 u32  start node index, 0xFFFFFFFF for none
//	 32 u32  start port number
//	 36 u32  max hops discovered
//	 40 u64  MADs used
//	 48 u32  bytes of the table section
//	 52 u32  bytes of the unreachable section
//	 56 u32  CRC-32C (Castagnoli) of the whole file, these 4 bytes as 0
//	 60 u32  reserved, 0
//	N node records, 288 bytes each, in discovery order:
//	  0 u64  node GUID
//	  8 u8   node type      9 u8 port count   10 u16 switch port 0 LID
//	 12 u8   its LMC       13 u8 flags: 1 description, 2 SwitchInfo,
//	                             4 enhanced port 0
//	 14 u8   DR path length 15 u8 reserved
//	 16 [64] NodeInfo      80 [64] NodeDescription   144 [64] SwitchInfo
//	208 [64] DR path hops (the first length bytes)
//	272 u32  index of its first port record (its ports run to the next
//	         node's first)
//	276 u32  LFT entries   280 u32 MFT positions   284 u32 MFT entries
//	         per position (all three in the table section, node order)
//	P port records, 176 bytes each, grouped by node, ascending number:
//	  0 u64  port GUID      8 u32 node index      12 u8 port number
//	 13 u8   external port number                 14 u16 base LID
//	 16 u8   LMC           17 u8 flags: 1 PortInfo, 2 MlnxExtPortInfo
//	 18 u16  reserved      20 u32 remote port index, 0xFFFFFFFF for none
//	 24 u64  PortInfo order (libibnetdisc cache order)
//	 32 [64] PortInfo      96 [64] MlnxExtPortInfo   160 [16] reserved
//	table section: per node with tables, LFT bytes then MFT masks (u16
//	  per entry, position by position)
//	unreachable section, U entries: u8 path length, the hops, u32 via port
//	  index (0xFFFFFFFF none), u16 reason length, the reason text
const (
	cacheMagic     = "RDMKSUBN"
	cacheVersion   = 2
	cacheCRCOff    = 56
	cacheHeaderLen = 64
	cacheNodeLen   = 288
	cachePortLen   = 176
	noIndex        = 0xFFFFFFFF
)

const (
	nodeFlagDesc = 1 << iota
	nodeFlagSwitchInfo
	nodeFlagEnhanced
)

const (
	portFlagInfo = 1 << iota
	portFlagExt
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteCache writes the subnet in our cache format (see cache.go).
func (s *Subnet) WriteCache(w io.Writer) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	le := binary.LittleEndian
	portIdx := map[*Port]uint32{}
	var ports []*Port
	for _, n := range s.nodes {
		if err := checkNode(n.GUID, n.Type, n.NumPorts); err != nil {
			return err
		}
		if len(n.Path) > MaxHops {
			return invalid("node %v: path of %d hops", n.GUID, len(n.Path))
		}
		for _, p := range n.Ports {
			if p != nil {
				portIdx[p] = uint32(len(ports))
				ports = append(ports, p)
			}
		}
	}
	var tables []byte
	for _, n := range s.nodes {
		tables = append(tables, n.LFT...)
		for _, m := range n.MFT {
			for _, v := range m {
				tables = le.AppendUint16(tables, v)
			}
		}
	}
	var unreach []byte
	for _, u := range s.unreach {
		if len(u.Path) > 255 {
			return invalid("unreachable path of %d hops", len(u.Path))
		}
		unreach = append(unreach, uint8(len(u.Path)))
		unreach = append(unreach, u.Path...)
		via := uint32(noIndex)
		if i, ok := portIdx[u.Via]; ok && u.Via != nil {
			via = i
		}
		unreach = le.AppendUint32(unreach, via)
		reason := ""
		if u.Reason != nil {
			reason = u.Reason.Error()
		}
		if len(reason) > 0xffff {
			reason = reason[:0xffff]
		}
		unreach = le.AppendUint16(unreach, uint16(len(reason)))
		unreach = append(unreach, reason...)
	}

	var hdr [cacheHeaderLen]byte
	copy(hdr[:], cacheMagic)
	le.PutUint32(hdr[8:], cacheVersion)
	le.PutUint32(hdr[16:], uint32(len(s.nodes)))
	le.PutUint32(hdr[20:], uint32(len(ports)))
	le.PutUint32(hdr[24:], uint32(len(s.unreach)))
	le.PutUint32(hdr[28:], noIndex)
	if s.from != nil {
		le.PutUint32(hdr[28:], uint32(s.from.index))
	}
	le.PutUint32(hdr[32:], uint32(s.fromPort))
	le.PutUint32(hdr[36:], uint32(s.MaxHopsDiscovered))
	le.PutUint64(hdr[40:], uint64(s.MADs))
	le.PutUint32(hdr[48:], uint32(len(tables)))
	le.PutUint32(hdr[52:], uint32(len(unreach)))

	// The CRC needs the body first: build it in memory, in one buffer.
	body := make([]byte, 0, len(s.nodes)*cacheNodeLen+len(ports)*cachePortLen+len(tables)+len(unreach))
	first := uint32(0)
	for _, n := range s.nodes {
		var r [cacheNodeLen]byte
		le.PutUint64(r[0:], uint64(n.GUID))
		r[8], r[9] = uint8(n.Type), uint8(n.NumPorts)
		le.PutUint16(r[10:], n.SMALID)
		r[12] = n.SMALMC
		if n.HasDesc {
			r[13] |= nodeFlagDesc
		}
		if n.HasSwitchInfo {
			r[13] |= nodeFlagSwitchInfo
		}
		if n.EnhancedSP0 {
			r[13] |= nodeFlagEnhanced
		}
		r[14] = uint8(len(n.Path))
		copy(r[16:], n.Info[:])
		copy(r[80:], n.Desc[:])
		copy(r[144:], n.SwitchInfo[:])
		copy(r[208:272], n.Path)
		le.PutUint32(r[272:], first)
		for _, p := range n.Ports {
			if p != nil {
				first++
			}
		}
		le.PutUint32(r[276:], uint32(len(n.LFT)))
		le.PutUint32(r[280:], uint32(len(n.MFT)))
		per := 0
		for _, m := range n.MFT {
			per = max(per, len(m))
		}
		for _, m := range n.MFT {
			if len(m) != per {
				return invalid("node %v: MFT positions of different lengths", n.GUID)
			}
		}
		le.PutUint32(r[284:], uint32(per))
		body = append(body, r[:]...)
	}
	for _, p := range ports {
		var r [cachePortLen]byte
		le.PutUint64(r[0:], uint64(p.GUID))
		le.PutUint32(r[8:], uint32(p.Node.index))
		r[12], r[13] = uint8(p.Num), uint8(p.ExtNum)
		le.PutUint16(r[14:], p.BaseLID)
		r[16] = p.LMC
		if p.HasInfo {
			r[17] |= portFlagInfo
		}
		if p.HasExtInfo {
			r[17] |= portFlagExt
		}
		remote := uint32(noIndex)
		if i, ok := portIdx[p.Remote]; ok && p.Remote != nil {
			remote = i
		}
		le.PutUint32(r[20:], remote)
		le.PutUint64(r[24:], p.seq)
		copy(r[32:], p.Info[:])
		copy(r[96:], p.ExtInfo[:])
		body = append(body, r[:]...)
	}
	body = append(body, tables...)
	body = append(body, unreach...)
	le.PutUint32(hdr[cacheCRCOff:], cacheCRC(hdr[:], body))

	bw := bufio.NewWriter(w)
	bw.Write(hdr[:])
	bw.Write(body)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing subnet cache: %w", err)
	}
	return nil
}

// cacheReason is an unreachable path's reason as read back from a cache.
type cacheReason string

func (r cacheReason) Error() string { return string(r) }

// cacheCRC is the CRC-32C of a cache file made of hdr and body, with the
// CRC field of hdr taken as zero.
func cacheCRC(hdr, body []byte) uint32 {
	var zero [4]byte
	c := crc32.Update(0, castagnoli, hdr[:cacheCRCOff])
	c = crc32.Update(c, castagnoli, zero[:])
	c = crc32.Update(c, castagnoli, hdr[cacheCRCOff+4:cacheHeaderLen])
	return crc32.Update(c, castagnoli, body)
}

// ReadCache loads a subnet written by WriteCache. It reads the header
// first and refuses a stream with the wrong magic number, or whose header
// declares more than MaxFileSize, before reading on; then the node
// records, each checked as it arrives; then the rest the header declares,
// and it fails if anything follows. What it holds in memory is at most
// what the stream held.
func ReadCache(r io.Reader) (*Subnet, error) {
	var hdr [cacheHeaderLen]byte
	n, err := io.ReadFull(r, hdr[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("reading subnet cache: %w", err)
	}
	want, err := parseCacheHeader(hdr[:n])
	if err != nil {
		return nil, err
	}
	data := append(make([]byte, 0, min(want, 1<<20)), hdr[:]...)
	// The node records, a batch at a time, so that a stream that is not a
	// cache after its header stops at its first record.
	nNodes := int64(binary.LittleEndian.Uint32(hdr[16:]))
	for done := int64(0); done < nNodes; {
		batch := min(nNodes-done, 4096)
		chunk := make([]byte, batch*cacheNodeLen)
		got, err := io.ReadFull(r, chunk)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return nil, fmt.Errorf("reading subnet cache: %w", err)
		}
		chunk = chunk[:got]
		data = append(data, chunk...)
		if int64(len(chunk)) < batch*cacheNodeLen {
			return ParseCache(data) // truncated: ParseCache says where
		}
		for i := range batch {
			off := int(i * cacheNodeLen)
			rec := chunk[off : off+cacheNodeLen]
			if err := checkNode(iba.GUID(binary.LittleEndian.Uint64(rec)), iba.NodeType(rec[8]), int(rec[9])); err != nil {
				return nil, &CacheError{Format: "rdmakit cache", Offset: int64(cacheHeaderLen) + (done+i)*cacheNodeLen + 8, Msg: err.Error()}
			}
		}
		done += batch
	}
	rest, err := readBounded(r, want-int64(len(data)), "rdmakit cache")
	if errors.Is(err, ErrTooLarge) {
		return nil, &CacheError{Format: "rdmakit cache", Offset: want, Msg: "data after the end its header declares"}
	}
	if err != nil {
		return nil, err
	}
	return ParseCache(append(data, rest...))
}

// parseCacheHeader checks what of the header can be checked alone and
// returns the file size it declares.
func parseCacheHeader(data []byte) (int64, error) {
	bad := func(off int, format string, a ...any) error {
		return &CacheError{Format: "rdmakit cache", Offset: int64(off), Msg: fmt.Sprintf(format, a...)}
	}
	le := binary.LittleEndian
	if len(data) >= 8 && string(data[:8]) != cacheMagic || len(data) < 8 && !bytes.HasPrefix([]byte(cacheMagic), data) {
		return 0, bad(0, "magic %q, want %q: not an rdmakit subnet cache", data[:min(8, len(data))], cacheMagic)
	}
	if len(data) < cacheHeaderLen {
		return 0, bad(len(data), "truncated header: %d of %d bytes", len(data), cacheHeaderLen)
	}
	if v := le.Uint32(data[8:]); v != cacheVersion {
		if v == 1 {
			return 0, bad(8, "version 1, whose checksum does not cover the header, is no longer read: write the cache again")
		}
		return 0, bad(8, "version %d, this reader knows %d", v, cacheVersion)
	}
	if f := le.Uint32(data[12:]); f != 0 {
		return 0, bad(12, "unknown flags %#x", f)
	}
	nNodes, nPorts := int64(le.Uint32(data[16:])), int64(le.Uint32(data[20:]))
	tablesLen, unreachLen := int64(le.Uint32(data[48:])), int64(le.Uint32(data[52:]))
	want := int64(cacheHeaderLen) + nNodes*cacheNodeLen + nPorts*cachePortLen + tablesLen + unreachLen
	if want > MaxFileSize {
		return 0, &SizeError{What: "rdmakit cache", Size: want, Limit: MaxFileSize}
	}
	return want, nil
}

// ParseCache is ReadCache on bytes in memory. The bytes are not kept.
func ParseCache(data []byte) (*Subnet, error) {
	bad := func(off int, format string, a ...any) error {
		return &CacheError{Format: "rdmakit cache", Offset: int64(off), Msg: fmt.Sprintf(format, a...)}
	}
	le := binary.LittleEndian
	want, err := parseCacheHeader(data)
	if err != nil {
		return nil, err
	}
	nNodes, nPorts, nUnreach := int64(le.Uint32(data[16:])), int64(le.Uint32(data[20:])), int64(le.Uint32(data[24:]))
	fromIdx, fromPort := le.Uint32(data[28:]), le.Uint32(data[32:])
	tablesLen, unreachLen := int64(le.Uint32(data[48:])), int64(le.Uint32(data[52:]))
	if int64(len(data)) != want {
		return nil, bad(16, "header describes %d bytes (%d nodes, %d ports, %d+%d section bytes), file has %d", want, nNodes, nPorts, tablesLen, unreachLen, len(data))
	}
	if c := cacheCRC(data[:cacheHeaderLen], data[cacheHeaderLen:]); c != le.Uint32(data[cacheCRCOff:]) {
		return nil, bad(cacheCRCOff, "CRC-32C %#08x, contents give %#08x", le.Uint32(data[cacheCRCOff:]), c)
	}
	if fromIdx != noIndex && int64(fromIdx) >= nNodes {
		return nil, bad(28, "start node %d of %d", fromIdx, nNodes)
	}

	s := New()
	s.MaxHopsDiscovered = int(le.Uint32(data[36:]))
	s.MADs = int(le.Uint64(data[40:]))
	s.nodes = make([]*Node, nNodes)
	s.byNodeGUID = make(map[iba.GUID]*Node, nNodes)
	s.byPortGUID = make(map[iba.GUID]*Port, nNodes)
	s.byName = make(map[string][]*Node, nNodes)
	s.byLID = make(map[uint16]*Port, min(nNodes, maxUnicastLID))
	slab := make([]Node, nNodes)
	// One allocation each for every node's paths and port tables.
	var pathBytes, portSlots int
	for i := range slab {
		r := data[cacheHeaderLen+i*cacheNodeLen:]
		pathBytes += int(min(r[14], MaxHops))
		portSlots += int(r[9]) + 1
	}
	paths := make([]byte, pathBytes)
	slots := make([]*Port, portSlots)
	pslab := make([]Port, nPorts)
	nodeOff := cacheHeaderLen
	portOff := nodeOff + int(nNodes)*cacheNodeLen
	tableOff := portOff + int(nPorts)*cachePortLen
	tpos := tableOff
	for i := range slab {
		off := nodeOff + i*cacheNodeLen
		r := data[off : off+cacheNodeLen]
		n := &slab[i]
		n.index = i
		n.GUID = iba.GUID(le.Uint64(r))
		n.Type = iba.NodeType(r[8])
		n.NumPorts = int(r[9])
		n.SMALID = le.Uint16(r[10:])
		n.SMALMC = r[12]
		n.HasDesc = r[13]&nodeFlagDesc != 0
		n.HasSwitchInfo = r[13]&nodeFlagSwitchInfo != 0
		n.EnhancedSP0 = r[13]&nodeFlagEnhanced != 0
		if err := checkNode(n.GUID, n.Type, n.NumPorts); err != nil {
			return nil, bad(off+8, "%v", err)
		}
		if r[14] > MaxHops {
			return nil, bad(off+14, "DR path of %d hops", r[14])
		}
		copy(n.Info[:], r[16:80])
		copy(n.Desc[:], r[80:144])
		copy(n.SwitchInfo[:], r[144:208])
		pl := int(r[14])
		n.Path = DRPath(paths[:pl:pl])
		copy(n.Path, r[208:208+pl])
		paths = paths[pl:]
		n.Ports = slots[: n.NumPorts+1 : n.NumPorts+1]
		slots = slots[n.NumPorts+1:]
		if s.byNodeGUID[n.GUID] != nil {
			return nil, bad(off, "node %v appears twice", n.GUID)
		}
		s.nodes[i] = n
		s.byNodeGUID[n.GUID] = n
		lft, positions, per := int64(le.Uint32(r[276:])), int64(le.Uint32(r[280:])), int64(le.Uint32(r[284:]))
		need := lft + 2*positions*per
		if positions > 16 || need > int64(tableOff+int(tablesLen)-tpos) {
			return nil, bad(off+276, "node %v: switch tables (%d LFT entries, %dx%d MFT entries) overrun the table section", n.GUID, lft, positions, per)
		}
		if lft > 0 {
			n.LFT = append([]uint8(nil), data[tpos:tpos+int(lft)]...)
			tpos += int(lft)
		}
		for range positions {
			m := make([]uint16, per)
			for j := range m {
				m[j] = le.Uint16(data[tpos:])
				tpos += 2
			}
			n.MFT = append(n.MFT, m)
		}
	}
	if tpos != tableOff+int(tablesLen) {
		return nil, bad(tpos, "%d table bytes that no node claims", tableOff+int(tablesLen)-tpos)
	}
	remotes := make([]uint32, nPorts)
	for i := range pslab {
		off := portOff + i*cachePortLen
		r := data[off : off+cachePortLen]
		p := &pslab[i]
		ni := le.Uint32(r[8:])
		if int64(ni) >= nNodes {
			return nil, bad(off+8, "port record %d: node %d of %d", i, ni, nNodes)
		}
		n := s.nodes[ni]
		p.Node = n
		p.GUID = iba.GUID(le.Uint64(r))
		p.Num = int(r[12])
		p.ExtNum = int(r[13])
		p.BaseLID = le.Uint16(r[14:])
		p.LMC = r[16]
		p.HasInfo = r[17]&portFlagInfo != 0
		p.HasExtInfo = r[17]&portFlagExt != 0
		remotes[i] = le.Uint32(r[20:])
		p.seq = le.Uint64(r[24:])
		copy(p.Info[:], r[32:96])
		copy(p.ExtInfo[:], r[96:160])
		if p.Num > n.NumPorts || n.Ports[p.Num] != nil {
			return nil, bad(off+12, "port record %d: port %d of node %v is out of range or repeated", i, p.Num, n.GUID)
		}
		if first := le.Uint32(data[nodeOff+int(ni)*cacheNodeLen+272:]); uint32(i) < first {
			return nil, bad(off+8, "port record %d comes before its node's first port %d", i, first)
		}
		n.Ports[p.Num] = p
		if p.seq > s.portSeq {
			s.portSeq = p.seq
		}
	}
	for i, ri := range remotes {
		if ri == noIndex {
			continue
		}
		if int64(ri) >= nPorts || int(ri) == i {
			return nil, bad(portOff+i*cachePortLen+20, "port record %d: remote %d of %d", i, ri, nPorts)
		}
		pslab[i].Remote = &pslab[ri]
	}
	for _, n := range s.nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			s.indexPortGUIDLocked(p)
			if p.HasInfo && (n.Type != iba.NodeTypeSwitch || p.Num == 0) {
				s.indexLIDsLocked(p)
			}
		}
		if n.HasDesc {
			name := n.Description()
			s.byName[name] = append(s.byName[name], n)
		}
	}
	upos := tableOff + int(tablesLen)
	end := upos + int(unreachLen)
	for k := int64(0); k < nUnreach; k++ {
		if upos >= end {
			return nil, bad(upos, "unreachable entry %d missing", k)
		}
		pl := int(data[upos])
		if end-upos < 1+pl+4+2 {
			return nil, bad(upos, "unreachable entry %d truncated", k)
		}
		u := Unreachable{Path: append(DRPath{}, data[upos+1:upos+1+pl]...)}
		upos += 1 + pl
		if via := le.Uint32(data[upos:]); via != noIndex {
			if int64(via) >= nPorts {
				return nil, bad(upos, "unreachable entry %d: port %d of %d", k, via, nPorts)
			}
			u.Via = &pslab[via]
		}
		rl := int(le.Uint16(data[upos+4:]))
		upos += 6
		if end-upos < rl {
			return nil, bad(upos, "unreachable entry %d: reason truncated", k)
		}
		if rl > 0 {
			u.Reason = cacheReason(data[upos : upos+rl])
		}
		upos += rl
		s.unreach = append(s.unreach, u)
	}
	if upos != end {
		return nil, bad(upos, "%d bytes after the last unreachable entry", end-upos)
	}
	if fromIdx != noIndex {
		s.from, s.fromPort = s.nodes[fromIdx], int(fromPort)
	}
	return s, nil
}
