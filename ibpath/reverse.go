package ibpath

import (
	"math"
	"math/bits"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// python-rdma's defaults for the timeouts of a path that does not give its
// own: the response time of C13-13.1.1 and a port's usual subnet timeout.
const (
	defaultRespTime       = 20
	defaultPacketLifeTime = 18
)

// FromPathRecord returns the path a PathRecord describes (IBA 15.2.5.16),
// from its SGID to its DGID: the LIDs, the GIDs, SL, P_Key, MTU, rate and
// packet lifetime it gives, and a GRH with its hop limit, traffic class
// and flow label when the hop limit takes packets past the subnet (more
// than 1, as Resolver.GMP decides). Every field set is marked, so String
// shows them and Route's MAD timeout comes from the record's packet
// lifetime, as in python-rdma's resolved paths. What a record does not
// say is the caller's to add: the destination QP and Q_Key of a datagram
// (DQPN, QKey, then Mark("dqpn"), Mark("qkey")), the P_Key index, the end
// port.
func FromPathRecord(pr *iba.PathRecord) *IBPath {
	p := &IBPath{}
	p.applyPathRecord(pr)
	for _, k := range []string{"DGID", "SGID", "DLID", "SLID", "SL", "pkey", "MTU", "rate", "packet_life_time"} {
		p.Mark(k)
	}
	if p.HasGRH {
		for _, k := range []string{"has_grh", "hop_limit", "traffic_class", "flow_label"} {
			p.Mark(k)
		}
	}
	return p
}

// applyPathRecord sets the fields a PathRecord gives, marking none.
func (p *IBPath) applyPathRecord(pr *iba.PathRecord) {
	p.DGID, p.SGID, p.DLID, p.SLID = pr.DGID, pr.SGID, pr.DLID, pr.SLID
	p.FlowLabel, p.HopLimit, p.TrafficClass = pr.FlowLabel, pr.HopLimit, pr.TClass
	p.PKey, p.SL, p.MTU, p.Rate = pr.PKey, pr.SL, uint8(pr.MTU), uint8(pr.Rate)
	p.HasGRH = pr.HopLimit > 1 // a hop limit past the subnet needs a GRH (python-rdma: != 0)
	p.PacketLifeTime = pr.PacketLifeTime
}

// Reverse returns the path of the packets that go back (IBA 13.5.4, the
// response to a request): SLID and DLID, SGID and DGID, and the source and
// destination QPs swapped; p is unchanged. With forReply the GRH's hop
// limit is 0xFF, as a response's is; without it the path is only turned
// round (python-rdma's reverse(for_reply)). The SL, P_Key, MTU, rate,
// traffic class, flow label, Q_Key and timeouts are the same both ways.
// Reverse is for LID and GID routed paths; a directed route turns round
// by its own rules (IBA 14.2.2).
func (p *IBPath) Reverse(forReply bool) *IBPath {
	q := *p
	q.DLID, q.SLID = p.SLID, p.DLID
	q.DQPN, q.SQPN = p.SQPN, p.DQPN
	q.DGID, q.SGID = p.SGID, p.DGID
	q.set.swap(keyIndexOf("DLID"), keyIndexOf("SLID"))
	q.set.swap(keyIndexOf("dqpn"), keyIndexOf("sqpn"))
	q.set.swap(keyIndexOf("DGID"), keyIndexOf("SGID"))
	if q.HasGRH && forReply {
		q.HopLimit = 0xff
		q.Mark("hop_limit")
	}
	return &q
}

// Complete reports whether the path holds everything a datagram on it
// needs (python-rdma's complete): unicast SLID and DLID, both GIDs when it
// has a GRH, and the destination QP.
func (p *IBPath) Complete() bool {
	unicast := func(lid uint16) bool { return lid != 0 && lid < 0xc000 } // IBA 4.1.3: 0xC000 and up are multicast
	switch {
	case !unicast(p.DLID) || !unicast(p.SLID):
		return false
	case p.HasGRH && (p.SGID == iba.GID{} || p.DGID == iba.GID{}):
		return false
	}
	return p.Has("dqpn")
}

// packetLifeTime is the path's, or the default when it has none.
func (p *IBPath) packetLifeTime() int {
	if p.Has("packet_life_time") || p.PacketLifeTime != 0 {
		return int(p.PacketLifeTime)
	}
	return defaultPacketLifeTime
}

// MADTimeout is how long a MAD on the path waits for its reply: TimeoutMS
// when given, else 4.096 µs × (2^(PacketLifeTime+1) + 2^RespTime), the
// round trip plus the responder's time (IBA C13-13.1.1), with python-rdma's
// defaults (RespTime 20, PacketLifeTime 18) for what the path does not
// give. Route leaves the timeout to the client's default unless the path
// gives one of the three.
func (p *IBPath) MADTimeout() time.Duration {
	if p.Has("timeout") {
		return time.Duration(p.TimeoutMS) * time.Millisecond
	}
	rt := defaultRespTime
	if p.Has("resp_time") {
		rt = int(p.RespTime)
	}
	plt := defaultPacketLifeTime
	if p.Has("packet_life_time") {
		plt = int(p.PacketLifeTime)
	}
	us := 4.096 * (math.Exp2(float64(plt+1)) + math.Exp2(float64(rt)))
	return time.Duration(us * float64(time.Microsecond))
}

// ACKTimeout gives the Local ACK Timeout of an RC QP sending on the path
// (QPAttr.Timeout in package verbs): the smallest t with 4.096 µs × 2^t at
// least twice the packet lifetime plus the responder's ACK delay,
// 4.096 µs × (2^(PacketLifeTime+1) + 2^ackDelay) (python-rdma's
// qp_timeout and to_timer). ackDelay is the responder's LocalCAAckDelay
// (verbs.DeviceAttr). The packet lifetime is the path's, or 18 when it has
// none; the result is at most 31, the field's largest value.
func (p *IBPath) ACKTimeout(ackDelay uint8) uint8 {
	plt := p.packetLifeTime()
	if plt+1 >= 31 || ackDelay >= 31 {
		return 31
	}
	v := uint64(1)<<(plt+1) + uint64(1)<<ackDelay
	return uint8(min(bits.Len64(v-1), 31)) // ceil(log2(v))
}

// keyIndexOf is the keySet bit of a spec key.
func keyIndexOf(name string) int {
	for i, k := range keys {
		if k.name == name {
			return i
		}
	}
	panic("ibpath: no spec key " + name)
}

// swap exchanges whether keys i and j were given.
func (s *keySet) swap(i, j int) {
	a, b := s.has(i), s.has(j)
	*s &^= 1<<i | 1<<j
	if a {
		s.add(j)
	}
	if b {
		s.add(i)
	}
}
