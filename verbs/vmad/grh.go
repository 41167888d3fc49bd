package vmad

import (
	"encoding/binary"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// parseGRH reads the 40 bytes a UD receive puts before the payload (IBA
// 11.4.1.2): an IBA GRH (IBA 8.3.1, also RoCE v1 and RoCE v2 over IPv6),
// or for RoCE v2 over IPv4 an IPv4 header in its last 20 bytes, which
// libibverbs tells apart the same way. It returns the source as a
// mad.GRH (SGIDIndex unset) and the destination GID; short input gives
// ok false.
func parseGRH(b []byte) (g mad.GRH, dgid iba.GID, ok bool) {
	if len(b) < 40 {
		return g, dgid, false
	}
	if b[0]>>4 != 6 && b[20]>>4 == 4 {
		g.TrafficClass = b[21]
		g.HopLimit = b[28]
		g.GID[10], g.GID[11] = 0xff, 0xff
		copy(g.GID[12:], b[32:36])
		dgid[10], dgid[11] = 0xff, 0xff
		copy(dgid[12:], b[36:40])
		return g, dgid, true
	}
	vtf := binary.BigEndian.Uint32(b[0:4])
	g.TrafficClass = uint8(vtf >> 20)
	g.FlowLabel = vtf & 0xfffff
	g.HopLimit = b[7]
	copy(g.GID[:], b[8:24])
	copy(dgid[:], b[24:40])
	return g, dgid, true
}
