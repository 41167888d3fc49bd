package nldev

import (
	"context"
	"iter"
	"time"

	"github.com/mdlayher/netlink"
)

// Event is a device notification (RDMA_NLDEV_CMD_MONITOR, Linux 6.10+).
type Event struct {
	Type      EventType
	DevIndex  uint32
	DevName   string
	Port      uint32
	NdevIndex uint32
	NdevName  string
	Fields
}

// UnmarshalBinary decodes the attributes of a monitor event.
func (ev *Event) UnmarshalBinary(b []byte) error { return unmarshalBinary(ev, b) }

func (ev *Event) unmarshal(attrs []Attribute) error {
	for _, a := range attrs {
		ev.Set(a.Type)
		switch a.Type {
		case AttrEventType:
			ev.Type = EventType(a.Uint)
		case AttrDevIndex:
			ev.DevIndex = uint32(a.Uint)
		case AttrDevName:
			ev.DevName = a.Str
		case AttrPortIndex:
			ev.Port = uint32(a.Uint)
		case AttrNdevIndex:
			ev.NdevIndex = uint32(a.Uint)
		case AttrNdevName:
			ev.NdevName = a.Str
		default:
			ev.keep(a)
		}
	}
	return need("event", &ev.Fields, AttrEventType)
}

// MarshalBinary encodes ev in the kernel's layout.
func (ev *Event) MarshalBinary() ([]byte, error) {
	e := encoder{f: &ev.Fields}
	e.u8(AttrEventType, uint8(ev.Type))
	e.u32(AttrDevIndex, ev.DevIndex)
	e.str(AttrDevName, ev.DevName)
	e.u32(AttrPortIndex, ev.Port)
	e.u32(AttrNdevIndex, ev.NdevIndex)
	e.str(AttrNdevName, ev.NdevName)
	return MarshalAttributes(e.done())
}

// MonitorService receives device events. Give it a Conn of its own: once
// subscribed, the socket also carries events, which would interleave with
// the replies of other requests.
type MonitorService struct{ c *Conn }

// Events joins the RDMA_NL_GROUP_NOTIFY multicast group and yields events
// until ctx is done (then it yields ctx's error) or receiving fails. Kernels
// before 6.10 have no such group; joining then fails with an error that
// matches ErrNotSupported or the kernel's errno.
func (s *MonitorService) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := s.c.nl.JoinGroup(GroupNotify); err != nil {
			yield(Event{}, opError("join RDMA_NL_GROUP_NOTIFY", err))
			return
		}
		defer func() { _ = s.c.nl.LeaveGroup(GroupNotify) }()
		stop := context.AfterFunc(ctx, func() { _ = s.c.nl.SetReadDeadline(time.Now()) })
		defer stop()
		for {
			msgs, err := s.c.nl.Receive()
			if ctx.Err() != nil {
				yield(Event{}, &OpError{Op: CmdMonitor.String(), Err: ctx.Err()})
				return
			}
			if err != nil {
				yield(Event{}, opError(CmdMonitor.String(), err))
				return
			}
			for _, m := range msgs {
				if m.Header.Type != netlink.HeaderType(CmdMonitor.MessageType()) {
					continue
				}
				var ev Event
				if err := ev.UnmarshalBinary(m.Data); err != nil {
					if !yield(Event{}, errDecode(CmdMonitor, err)) {
						return
					}
					continue
				}
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
}
