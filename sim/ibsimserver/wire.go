package ibsimserver

import (
	"bytes"
	"encoding/binary"
)

// struct sim_ctl (ibsim.h): 80 bytes, host order (little-endian).
const (
	ctlSize  = 80
	ctlMagic = 0xDEADBEEF
	ctlData  = 16

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

	// struct sim_client_info: id, qp, issm, nodeid[32].
	infoNodeID  = 12
	nodeIDLen   = 32
	reqSize     = 288 // struct sim_request
	reqMAD      = 32
	statusTimed = 110 // ETIMEDOUT: the MAD went nowhere
)

type ctlMsg struct {
	clientID, typ, length uint32
	data                  [64]byte
}

func parseCtl(b []byte) (ctlMsg, bool) {
	var m ctlMsg
	if len(b) != ctlSize || binary.LittleEndian.Uint32(b) != ctlMagic {
		return m, false
	}
	m.clientID = binary.LittleEndian.Uint32(b[4:])
	m.typ = binary.LittleEndian.Uint32(b[8:])
	m.length = binary.LittleEndian.Uint32(b[12:])
	copy(m.data[:], b[ctlData:])
	return m, true
}

func (m *ctlMsg) marshal(b []byte) []byte {
	b = b[:ctlSize]
	binary.LittleEndian.PutUint32(b, ctlMagic)
	binary.LittleEndian.PutUint32(b[4:], m.clientID)
	binary.LittleEndian.PutUint32(b[8:], m.typ)
	binary.LittleEndian.PutUint32(b[12:], m.length)
	copy(b[ctlData:], m.data[:])
	return b
}

// nodeID reads the NUL-terminated node id of a CONNECT.
func nodeID(data []byte) string {
	s := data[infoNodeID : infoNodeID+nodeIDLen]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

// request is the header of a struct sim_request; LIDs are big-endian in
// the first two bytes of their 4-byte slots, QPs and the status big-endian.
type request struct {
	dlid, slid uint16
	dqp, sqp   uint32
	status     uint32
}

func parseRequest(b []byte) request {
	return request{
		dlid: binary.BigEndian.Uint16(b[0:]), slid: binary.BigEndian.Uint16(b[4:]),
		dqp: binary.BigEndian.Uint32(b[8:]), sqp: binary.BigEndian.Uint32(b[12:]),
		status: binary.BigEndian.Uint32(b[16:]),
	}
}

func (r request) marshal(b []byte) {
	clear(b[:reqMAD])
	binary.BigEndian.PutUint16(b[0:], r.dlid)
	binary.BigEndian.PutUint16(b[4:], r.slid)
	binary.BigEndian.PutUint32(b[8:], r.dqp)
	binary.BigEndian.PutUint32(b[12:], r.sqp)
	binary.BigEndian.PutUint32(b[16:], r.status)
	binary.BigEndian.PutUint64(b[24:], 256)
}

// reasonPrefix starts the text of a refusal's reason.
const reasonPrefix = "refused: "

// putReason writes a refusal's reason into a reply's data, cut to fit with
// its NUL.
func putReason(data *[64]byte, reason string) {
	t := reasonPrefix + reason
	if len(t) > len(data)-1 {
		t = t[:len(data)-1]
	}
	clear(data[:])
	copy(data[:], t)
}
