package ibsim

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The control channel carries struct sim_ctl (ibsim's include/ibsim.h): 80
// bytes in host byte order, which for every machine ibsim runs on in
// practice is little-endian.
const (
	ctlSize    = 80
	ctlMaxData = 64
	ctlMagic   = 0xdeadbeef
)

// Control message types (enum SIM_CTL_TYPES). A reply keeps the request's
// type, or carries ctlError when the simulator refused it.
const (
	ctlError       = 0
	ctlConnect     = 1
	ctlDisconnect  = 2
	ctlGetPort     = 3
	ctlGetVendor   = 4
	ctlGetGID      = 5
	ctlGetGUID     = 6
	ctlGetNodeInfo = 7
	ctlGetPortInfo = 8
	ctlSetISSM     = 9
	ctlGetPKeys    = 10
)

// ctlMsg is one struct sim_ctl.
type ctlMsg struct {
	clientID uint32
	typ      uint32
	length   uint32
	data     [ctlMaxData]byte
}

func (m *ctlMsg) marshal() []byte {
	b := make([]byte, ctlSize)
	binary.LittleEndian.PutUint32(b[0:], ctlMagic)
	binary.LittleEndian.PutUint32(b[4:], m.clientID)
	binary.LittleEndian.PutUint32(b[8:], m.typ)
	binary.LittleEndian.PutUint32(b[12:], m.length)
	copy(b[16:], m.data[:])
	return b
}

var errBadCtl = errors.New("malformed control reply")

// unmarshalCtl decodes a control reply. ibsim sends exactly 80 bytes with
// its magic; anything else did not come from it.
func unmarshalCtl(b []byte) (ctlMsg, error) {
	var m ctlMsg
	if len(b) != ctlSize {
		return m, fmt.Errorf("%w: %d bytes, want %d", errBadCtl, len(b), ctlSize)
	}
	if magic := binary.LittleEndian.Uint32(b); magic != ctlMagic {
		return m, fmt.Errorf("%w: magic %#x", errBadCtl, magic)
	}
	m.clientID = binary.LittleEndian.Uint32(b[4:])
	m.typ = binary.LittleEndian.Uint32(b[8:])
	m.length = binary.LittleEndian.Uint32(b[12:])
	copy(m.data[:], b[16:])
	return m, nil
}

// clientInfo is struct sim_client_info, the CONNECT payload (44 bytes).
// In a request id is the client's pid in unix mode (it names the client's
// sockets) or the UDP port of its data socket in inet mode; in the reply it
// is the slot the simulator assigned, and nodeID the node's id.
type clientInfo struct {
	id     uint32
	qp     uint32
	issm   uint32
	nodeID string // at most maxNodeID bytes
}

const (
	clientInfoSize = 44
	maxNodeID      = 31 // nodeid[32] with its NUL
)

func (c clientInfo) put(d *[ctlMaxData]byte) {
	binary.LittleEndian.PutUint32(d[0:], c.id)
	binary.LittleEndian.PutUint32(d[4:], c.qp)
	binary.LittleEndian.PutUint32(d[8:], c.issm)
	copy(d[12:12+maxNodeID], c.nodeID)
}

func getClientInfo(d *[ctlMaxData]byte) clientInfo {
	c := clientInfo{
		id:   binary.LittleEndian.Uint32(d[0:]),
		qp:   binary.LittleEndian.Uint32(d[4:]),
		issm: binary.LittleEndian.Uint32(d[8:]),
	}
	name := d[12 : 12+32]
	for i, ch := range name {
		if ch == 0 {
			name = name[:i]
			break
		}
	}
	c.nodeID = string(name)
	return c
}

// The data channel carries struct sim_request: 288 bytes. The LIDs, QPs
// and status are in network byte order; dlid and slid are a 16-bit LID in
// the first two bytes of a 4-byte slot (the C field holds htons(lid)).
const (
	requestSize = 288
	madSize     = 256
	madOffset   = 32
)

// statusDropped is the status ibsim gives a request it bounces back to its
// sender: no route, no one to handle it, or a drop injected with the
// console's Error command. It is Linux's ETIMEDOUT.
const statusDropped = 110

// simRequest is one struct sim_request.
type simRequest struct {
	dlid, slid uint16
	dqp, sqp   uint32
	status     uint32
	length     uint64
	mad        []byte // up to 256 bytes
}

func (r *simRequest) marshal(b []byte) {
	clear(b[:requestSize])
	binary.BigEndian.PutUint16(b[0:], r.dlid)
	binary.BigEndian.PutUint16(b[4:], r.slid)
	binary.BigEndian.PutUint32(b[8:], r.dqp)
	binary.BigEndian.PutUint32(b[12:], r.sqp)
	binary.BigEndian.PutUint32(b[16:], r.status)
	// bytes 20-23: the C struct's padding before the u64.
	binary.BigEndian.PutUint64(b[24:], r.length)
	copy(b[madOffset:], r.mad)
}

var errBadRequest = errors.New("malformed data packet")

// unmarshalRequest decodes a datagram from the simulator. The MAD is cut
// to the length field when that is shorter than 256 (ibsim always says
// 256, libumad2sim-based peers may say less). It is not copied: r.mad is
// part of b, capped so that appending to it cannot overwrite the rest.
func unmarshalRequest(b []byte) (simRequest, error) {
	var r simRequest
	if len(b) != requestSize {
		return r, fmt.Errorf("%w: %d bytes, want %d", errBadRequest, len(b), requestSize)
	}
	r.dlid = binary.BigEndian.Uint16(b[0:])
	r.slid = binary.BigEndian.Uint16(b[4:])
	r.dqp = binary.BigEndian.Uint32(b[8:])
	r.sqp = binary.BigEndian.Uint32(b[12:])
	r.status = binary.BigEndian.Uint32(b[16:])
	r.length = binary.BigEndian.Uint64(b[24:])
	n := madSize
	if r.length > 0 && r.length < madSize {
		n = int(r.length)
	}
	r.mad = b[madOffset : madOffset+n : madOffset+n]
	return r, nil
}

// The common MAD header fields the transport looks at (IBA 13.4.3).
const (
	madClassOffset  = 1
	madMethodOffset = 3
	madTIDOffset    = 8
	madAttrOffset   = 16
	madOUIOffset    = 37 // vendor classes 0x30-0x4f (IBA 13.4.3.2)
	madHeaderSize   = 24
)

const (
	classSubnLID = 0x01
	classSubnDR  = 0x81
	methodResp   = 0x80 // the R bit of the method byte
)

// isSMPClass reports whether class travels on QP0 (IBA 13.5.1).
func isSMPClass(class uint8) bool { return class == classSubnLID || class == classSubnDR }

// isVendorOUIClass reports whether class carries an OUI (IBA 13.4.3.2).
func isVendorOUIClass(class uint8) bool { return class >= 0x30 && class <= 0x4f }

// madOUI returns the OUI of a vendor-OUI class MAD.
func madOUI(m []byte) uint32 {
	if len(m) < madOUIOffset+3 {
		return 0
	}
	return uint32(m[madOUIOffset])<<16 | uint32(m[madOUIOffset+1])<<8 | uint32(m[madOUIOffset+2])
}

// refusedPrefix starts the reason a server may put in a refusal's data
// (fabricsim's does; ibsim leaves the request's data there).
const refusedPrefix = "refused: "

// refusal describes a refused control request: the server's reason when
// it gave one, else that it gave none.
func refusal(m *ctlMsg) string {
	d := m.data[:]
	if len(d) < len(refusedPrefix) || string(d[:len(refusedPrefix)]) != refusedPrefix {
		return "refused (the simulator gives no reason)"
	}
	d = d[len(refusedPrefix):]
	for i, c := range d {
		if c == 0 {
			d = d[:i]
			break
		}
	}
	for _, c := range d {
		if c < 0x20 || c > 0x7e {
			return "refused (the simulator gives no reason)"
		}
	}
	return "refused: " + string(d)
}
