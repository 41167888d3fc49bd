package iba

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// GUID is an EUI-64 globally unique identifier (IBA 4.1.1): node, port and
// system image GUIDs.
type GUID uint64

// String gives the infiniband-diags spelling, 0x followed by 16 hex digits.
func (g GUID) String() string {
	var b [18]byte
	return string(g.AppendHex(b[:0]))
}

// AppendHex appends the infiniband-diags spelling without allocating.
func (g GUID) AppendHex(b []byte) []byte {
	const hexdig = "0123456789abcdef"
	b = append(b, '0', 'x')
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexdig[(g>>uint(i))&0xf])
	}
	return b
}

// Colon gives python-rdma's spelling, four groups of four hex digits.
func (g GUID) Colon() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", uint16(g>>48), uint16(g>>32), uint16(g>>16), uint16(g))
}

// ParseGUID accepts 0x-prefixed hex (0x0002c90300001491), 16 bare hex
// digits, and python-rdma's colon form (0002:c903:0000:1491, where each group
// may be shorter and is zero filled).
func ParseGUID(s string) (GUID, error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.Contains(t, ":"):
		parts := strings.Split(t, ":")
		if len(parts) != 4 {
			return 0, fmt.Errorf("GUID %q: want 4 colon-separated groups", s)
		}
		var g uint64
		for _, p := range parts {
			if p == "" || len(p) > 4 {
				return 0, fmt.Errorf("GUID %q: group %q is not 1 to 4 hex digits", s, p)
			}
			v, err := strconv.ParseUint(p, 16, 16)
			if err != nil {
				return 0, fmt.Errorf("GUID %q: group %q is not hex", s, p)
			}
			g = g<<16 | v
		}
		return GUID(g), nil
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		v, err := strconv.ParseUint(t[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("GUID %q: not a 64-bit hex number", s)
		}
		return GUID(v), nil
	case len(t) == 16:
		v, err := strconv.ParseUint(t, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("GUID %q: not 16 hex digits", s)
		}
		return GUID(v), nil
	}
	return 0, fmt.Errorf("GUID %q: not 0x-hex, 16 hex digits or the a:b:c:d form", s)
}

// GID is a 128-bit global identifier (IBA 4.1.1), printed as an IPv6 address.
type GID [16]byte

// MakeGID joins a subnet prefix and an interface ID (a port GUID).
func MakeGID(prefix uint64, guid GUID) GID {
	var g GID
	binary.BigEndian.PutUint64(g[:8], prefix)
	binary.BigEndian.PutUint64(g[8:], uint64(guid))
	return g
}

// Prefix is the subnet prefix, the upper 64 bits.
func (g GID) Prefix() uint64 { return binary.BigEndian.Uint64(g[:8]) }

// GUID is the interface ID, the lower 64 bits.
func (g GID) GUID() GUID { return GUID(binary.BigEndian.Uint64(g[8:])) }

// String prints the GID in IPv6 form (fe80::2:c903:0:1491).
func (g GID) String() string { return netip.AddrFrom16(g).String() }

// ParseGID accepts any IPv6 spelling of a GID.
func ParseGID(s string) (GID, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is6() || a.Zone() != "" {
		return GID{}, fmt.Errorf("GID %q: not an IPv6 address", s)
	}
	return GID(a.As16()), nil
}
