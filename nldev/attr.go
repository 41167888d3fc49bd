package nldev

import "fmt"

// Command is an NLDEV operation (enum rdma_nldev_command).
type Command uint16

func (c Command) String() string {
	if s, ok := commandNames[c]; ok {
		return s
	}
	return fmt.Sprintf("RDMA_NLDEV_CMD_%d", uint16(c))
}

// MessageType is the netlink message type of c: RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op).
func (c Command) MessageType() uint16 { return ClientNLDEV<<10 + uint16(c) }

// Attr is an NLDEV attribute type (enum rdma_nldev_attr).
type Attr uint16

func (a Attr) String() string {
	if int(a) < len(attrNames) && attrNames[a] != "" {
		return attrNames[a]
	}
	return fmt.Sprintf("RDMA_NLDEV_ATTR_%d", uint16(a))
}

// Kind is the wire type of an attribute, as the header comment declares it.
type Kind uint8

// Attribute kinds.
const (
	KindUnknown Kind = iota // newer than the header: kept raw
	KindU8
	KindU16
	KindU32
	KindU64
	KindS32
	KindS64
	KindString
	KindNested
	KindBinary
	KindSockaddr
)

// Kind returns the declared wire type of a.
func (a Attr) Kind() Kind {
	if int(a) < len(attrKinds) {
		return attrKinds[a]
	}
	return KindUnknown
}

func (k Kind) String() string {
	return [...]string{"unknown", "u8", "u16", "u32", "u64", "s32", "s64", "string", "nested", "binary", "sockaddr"}[k]
}

// attrSet records which attributes a message carried: iproute2 prints many
// fields only when present, so presence is part of the decoded value.
type attrSet [4]uint64

func (s *attrSet) add(a Attr) {
	if int(a) < 256 {
		s[a/64] |= 1 << (a % 64)
	}
}

func (s attrSet) has(a Attr) bool { return int(a) < 256 && s[a/64]&(1<<(a%64)) != 0 }

// PrintType is how a driver attribute asks to be printed.
type PrintType uint8

// CounterMode is a statistic counter binding mode.
type CounterMode uint32

// CounterMask selects the criteria of automatic QP counter binding.
type CounterMask uint32

// DeviceType is a device type that NEWDEV can create.
type DeviceType uint8

// NameAssignType tells who named a device.
type NameAssignType uint8

// EventType is a monitor notification type.
type EventType uint8
