package verbs

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// GRH is the global route header of a received datagram: the first 40
// bytes of a UD receive buffer when its completion has WCWithGRH (IBA
// 11.4.1.2). They hold an IBA GRH (IBA 8.3.1; RoCE v1 and RoCE v2 over
// IPv6 carry the same 40 bytes), or for RoCE v2 over IPv4 an IPv4 header
// in the last 20, whose addresses become IPv4-mapped GIDs.
type GRH struct {
	// SGID is the sender's GID, DGID the one the datagram was sent to.
	SGID, DGID   iba.GID
	TrafficClass uint8  // IPv4: the TOS byte
	FlowLabel    uint32 // 0 over IPv4
	HopLimit     uint8  // IPv4: the TTL
	// NextHeader is the GRH's NxtHdr: 0x1B for an IBA transport header
	// (InfiniBand and RoCE v1), 17 (UDP) for RoCE v2; 0 over IPv4.
	NextHeader uint8
	// IPv4 reports that the 40 bytes held a RoCE v2 IPv4 header.
	IPv4 bool
}

// ParseGRH reads the 40 bytes a UD receive puts before the payload. An
// IPv4 header is told from a GRH as libibverbs tells it: the first nibble
// is not 6 and the one at byte 20 is 4, or it is 6 but bytes 20 to 39 are
// an IPv4 header with a correct checksum.
func ParseGRH(b []byte) (GRH, error) {
	var g GRH
	if len(b) < grhSize {
		return g, fmt.Errorf("verbs: a GRH is %d bytes, got %d", grhSize, len(b))
	}
	if ipv4Header(b) {
		v4 := b[20:40]
		g.IPv4 = true
		g.TrafficClass, g.HopLimit = v4[1], v4[8]
		g.SGID[10], g.SGID[11] = 0xff, 0xff
		copy(g.SGID[12:], v4[12:16])
		g.DGID[10], g.DGID[11] = 0xff, 0xff
		copy(g.DGID[12:], v4[16:20])
		return g, nil
	}
	vtf := binary.BigEndian.Uint32(b[0:4])
	g.TrafficClass = uint8(vtf >> 20)
	g.FlowLabel = vtf & 0xfffff
	g.NextHeader = b[6]
	g.HopLimit = b[7]
	copy(g.SGID[:], b[8:24])
	copy(g.DGID[:], b[24:40])
	return g, nil
}

// ipv4Header reports whether the 40 bytes of a receive hold an IPv4 header
// in their second half (RoCE v2 over IPv4).
func ipv4Header(b []byte) bool {
	v4 := b[20:40]
	if b[0]>>4 != 6 {
		return v4[0]>>4 == 4
	}
	if v4[0] != 0x45 { // version 4, 5 words: the only header RoCE v2 sends
		return false
	}
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(v4[i:]))
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// AHAttrFromPath gives the address vector of packets sent along p from
// port (python-rdma's AH from an IBPath): DLID, SL, the source path bits
// (the SLID's low lmc bits, IBA 7.11.1), the rate as the path gives it
// (PathRecord rate codes are libibverbs' static rates) and, when the path
// has a GRH, its DGID, hop limit, traffic class and flow label leaving from
// GID sgidIndex. Context.AHAttrFromPath looks the index and LMC up.
func AHAttrFromPath(p *ibpath.IBPath, port, sgidIndex, lmc uint8) AHAttr {
	a := AHAttr{DLID: p.DLID, SL: p.SL, StaticRate: p.Rate, PortNum: port}
	if lmc > 0 && lmc <= 7 {
		a.SrcPathBits = uint8(p.SLID & (1<<lmc - 1))
	}
	if p.HasGRH {
		a.GRH = &GlobalRoute{DGID: p.DGID, FlowLabel: p.FlowLabel, SGIDIndex: sgidIndex, HopLimit: p.HopLimit, TrafficClass: p.TrafficClass}
	}
	return a
}

// AHAttrFromPath gives the address vector of packets sent along p from
// port of this device: AHAttrFromPath with the port's LMC and, for a path
// with a GRH, the index of its SGID in the port's GID table (FindGID); an
// SGID that is not there is an error (ENOENT), as is a path whose SGID
// is unset (EINVAL).
func (c *Context) AHAttrFromPath(port int, p *ibpath.IBPath) (AHAttr, error) {
	pa, err := c.QueryPort(port)
	if err != nil {
		return AHAttr{}, err
	}
	var idx int
	if p.HasGRH {
		if p.SGID == (iba.GID{}) {
			return AHAttr{}, &Error{Op: fmt.Sprintf("an address handle for %v: the path has a GRH but no SGID", p), Err: syscall.EINVAL}
		}
		if idx, err = c.FindGID(port, p.SGID); err != nil {
			return AHAttr{}, err
		}
	}
	return AHAttrFromPath(p, uint8(port), uint8(idx), pa.LMC), nil
}

// CreateAHFromPath creates an address handle for datagrams sent along p
// from port (python-rdma's PD.ah(path)): Context.AHAttrFromPath, then
// CreateAH. A reply's path is WCPath(...).Reverse(true).
func (pd *PD) CreateAHFromPath(port int, p *ibpath.IBPath) (*AH, error) {
	a, err := pd.ctx.AHAttrFromPath(port, p)
	if err != nil {
		return nil, err
	}
	return pd.CreateAH(a)
}

// FindGID gives the index of gid in port's GID table; ENOENT when it is
// not there. On RoCE, where the kernel lists each address once per RoCE
// version, it is the RoCE v2 entry when there is one (libibverbs tells the
// types from rdma-core 32 on; before, the first entry).
func (c *Context) FindGID(port int, gid iba.GID) (int, error) {
	release, err := c.node.use("looking up a GID")
	if err != nil {
		return 0, err
	}
	defer release()
	what := fmt.Sprintf("finding GID %v in %s/%d", gid, c.name, port)
	if port < 0 || port > 255 {
		return 0, &Error{Op: what, Err: syscall.EINVAL}
	}
	var a cPortAttr
	if rc, errno := call(lib.queryPort, c.handle(), uintptr(port), uintptr(unsafe.Pointer(&a))); rc != 0 {
		return 0, errnoErr(what, cint(rc), errno)
	}
	found := -1
	for i := 0; i < int(a.gidTblLen); i++ {
		if lib.queryGIDEx != 0 {
			var e cGIDEntry
			rc, _ := call(lib.queryGIDEx, c.handle(), uintptr(port), uintptr(i), uintptr(unsafe.Pointer(&e)), 0, unsafe.Sizeof(e))
			if rc != 0 || e.gid != gid { // an empty entry gives ENODATA
				continue
			}
			if e.gidType == gidTypeRoCEv2 {
				return i, nil
			}
			if found < 0 {
				found = i
			}
			continue
		}
		g, err := c.queryGID(port, i)
		if err == nil && g == gid {
			return i, nil
		}
	}
	if found >= 0 {
		return found, nil
	}
	return 0, &Error{Op: what, Err: syscall.ENOENT}
}

// InitAHFromWC gives the address vector of a reply to the datagram a
// completion reports (ibv_init_ah_from_wc, IBA 13.5.4 for GMPs): to its
// sender's LID, SL and QP's port, leaving from port with the path bits it
// came to; with a GRH (grh, the first 40 bytes of the receive buffer) back
// to its SGID from the local GID it was sent to, on RoCE of the same RoCE
// version. grh is ignored when the completion has none.
func (c *Context) InitAHFromWC(port int, wc *WC, grh []byte) (AHAttr, error) {
	release, err := c.node.use("making a reply's address vector")
	if err != nil {
		return AHAttr{}, err
	}
	defer release()
	what := fmt.Sprintf("making the address vector of a reply to LID %d QP %#x", wc.SLID, wc.SrcQP)
	if port < 0 || port > 255 {
		return AHAttr{}, &Error{Op: what, Err: syscall.EINVAL}
	}
	var cw cWC
	wc.toC(&cw)
	var g [grhSize]byte
	if wc.Flags&WCWithGRH != 0 {
		if len(grh) < grhSize {
			return AHAttr{}, &Error{Op: what + fmt.Sprintf(": the GRH is %d bytes, want %d", len(grh), grhSize), Err: syscall.EINVAL}
		}
		copy(g[:], grh)
	}
	var a cAHAttr
	if rc, errno := call(lib.initAHFromWC, c.handle(), uintptr(port), uintptr(unsafe.Pointer(&cw)), uintptr(unsafe.Pointer(&g)),
		uintptr(unsafe.Pointer(&a))); rc != 0 {
		return AHAttr{}, errnoErr(what, cint(rc), errno)
	}
	return ahFromC(&a), nil
}

// CreateAHFromWC creates the address handle of a reply to the datagram a
// completion reports (ibv_create_ah_from_wc): InitAHFromWC, then CreateAH.
func (pd *PD) CreateAHFromWC(port int, wc *WC, grh []byte) (*AH, error) {
	a, err := pd.ctx.InitAHFromWC(port, wc, grh)
	if err != nil {
		return nil, err
	}
	return pd.CreateAH(a)
}

// WCPath is the path a received datagram came by, as its headers were on
// the wire (python-rdma's WCPath): SLID, SL and the sender's QP (SQPN)
// from the completion, DLID the receiving port's base LID lid with the
// completion's path bits, DQPN the receiving QP, and, when the completion
// has a GRH, the SGID, DGID, hop limit, traffic class and flow label of
// grh (the first 40 bytes of the receive buffer; ParseGRH). Reverse(true)
// turns it into the path of the reply, for CreateAHFromPath. The P_Key and
// Q_Key are not in a completion; the path leaves them unset.
func WCPath(wc *WC, grh []byte, lid uint16) (*ibpath.IBPath, error) {
	p := &ibpath.IBPath{SLID: wc.SLID, SL: wc.SL, DLID: lid | uint16(wc.DLIDPathBits), SQPN: wc.SrcQP, DQPN: wc.QPNum, PKey: 0xffff}
	for _, k := range []string{"SLID", "SL", "DLID", "sqpn", "dqpn"} {
		p.Mark(k)
	}
	if wc.Flags&WCWithGRH != 0 {
		g, err := ParseGRH(grh)
		if err != nil {
			return nil, fmt.Errorf("verbs: the path of a datagram from LID %d QP %#x: %w", wc.SLID, wc.SrcQP, err)
		}
		p.HasGRH, p.SGID, p.DGID = true, g.SGID, g.DGID
		p.HopLimit, p.TrafficClass, p.FlowLabel = g.HopLimit, g.TrafficClass, g.FlowLabel
		for _, k := range []string{"has_grh", "SGID", "DGID", "hop_limit", "traffic_class", "flow_label"} {
			p.Mark(k)
		}
	}
	return p, nil
}
