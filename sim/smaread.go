package sim

import (
	"encoding/binary"
)

// smaDo runs a Get or Set of an SMP attribute on node n's SMA as if an SMP
// had arrived on inPort with the right M_Key: the SA reads the subnet's
// objects through the very code that answers SMPs, so its records agree
// with SMP reads. data is the 64-byte attribute (input for a Set, output
// for both). It returns the MAD status.
func (f *Fabric) smaDo(n int32, inPort uint8, method uint8, attr uint16, mod uint32, data []byte) uint16 {
	m := msgPool.Get().(*msg)
	defer msgPool.Put(m)
	b := m.buf[:]
	clear(b[:offSMPData])
	b[0], b[offClass], b[2], b[offMethod] = 1, classSMP, 1, method
	binary.BigEndian.PutUint16(b[offAttrID:], attr)
	binary.BigEndian.PutUint32(b[offAttrMod:], mod)
	nd := &f.nodes[n]
	to := f.smaPort(nd, inPort)
	nd.mu.RLock()
	binary.BigEndian.PutUint64(b[offMKey:], f.ports[to].mkey)
	nd.mu.RUnlock()
	copy(b[offSMPData:offSMPData+64], data)
	clear(b[offSMPData+len(data) : offSMPData+64])
	if f.sma(to, inPort, m) != served {
		return statusInvalidField
	}
	copy(data, b[offSMPData:offSMPData+64])
	return binary.BigEndian.Uint16(b[offStatus:])
}
