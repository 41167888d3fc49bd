package verbs

import (
	"context"
	"fmt"
	"syscall"
	"unsafe"
)

// EventType is an affiliated or unaffiliated asynchronous event (IBA
// 11.6.3, ibv_event_type).
type EventType int

const (
	EventCQErr            EventType = 0
	EventQPFatal          EventType = 1
	EventQPReqErr         EventType = 2
	EventQPAccessErr      EventType = 3
	EventCommEst          EventType = 4
	EventSQDrained        EventType = 5
	EventPathMig          EventType = 6
	EventPathMigErr       EventType = 7
	EventDeviceFatal      EventType = 8
	EventPortActive       EventType = 9
	EventPortErr          EventType = 10
	EventLIDChange        EventType = 11
	EventPKeyChange       EventType = 12
	EventSMChange         EventType = 13
	EventSRQErr           EventType = 14
	EventSRQLimitReached  EventType = 15
	EventQPLastWQEReached EventType = 16
	EventClientReregister EventType = 17
	EventGIDChange        EventType = 18
	EventWQFatal          EventType = 19
)

// eventNames are ibv_event_type_str's names, by event type.
var eventNames = [...]string{
	"CQ error", "local work queue catastrophic error", "invalid request local work queue error",
	"local access violation work queue error", "communication established", "send queue drained",
	"path migrated", "path migration request error", "local catastrophic error", "port active",
	"port error", "LID change", "P_Key change", "SM change", "SRQ catastrophic error",
	"SRQ limit reached", "last WQE reached", "client reregistration", "GID table change", "WQ fatal",
	"Device link speed change",
}

// String names the event as ibv_event_type_str does.
func (t EventType) String() string {
	if t >= 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "unknown"
}

// AsyncEvent is one asynchronous event. The resource it concerns is set
// when it still exists; Port is set for port events.
type AsyncEvent struct {
	Type EventType
	QP   *QP
	CQ   *CQ
	SRQ  *SRQ
	Port int
}

func (e AsyncEvent) String() string {
	switch {
	case e.QP != nil:
		return fmt.Sprintf("%v on QP %#x", e.Type, e.QP.QPN())
	case e.CQ != nil:
		return fmt.Sprintf("%v on a CQ", e.Type)
	case e.SRQ != nil:
		return fmt.Sprintf("%v on an SRQ", e.Type)
	case e.Port != 0:
		return fmt.Sprintf("%v on port %d", e.Type, e.Port)
	}
	return e.Type.String()
}

// portEvent reports whether the event's element is a port number rather
// than a CQ, QP, SRQ or WQ pointer.
func portEvent(t EventType) bool {
	switch t {
	case EventCQErr, EventQPFatal, EventQPReqErr, EventQPAccessErr, EventCommEst, EventSQDrained,
		EventPathMig, EventPathMigErr, EventQPLastWQEReached, EventSRQErr, EventSRQLimitReached, EventWQFatal:
		return false
	}
	return true
}

// AsyncEvent waits for the device's next asynchronous event (IBA 11.6.3)
// until ctx ends.
func (c *Context) AsyncEvent(ctx context.Context) (AsyncEvent, error) {
	for {
		release, err := c.node.use("reading an async event")
		if err != nil {
			return AsyncEvent{}, err
		}
		fd := int(c.c.asyncFD)
		var g cAsyncEvent
		rc, errno := call(lib.getAsyncEvent, c.handle(), uintptr(unsafe.Pointer(&g)))
		var ev AsyncEvent
		if rc == 0 {
			ev.Type = EventType(g.eventType)
			if portEvent(ev.Type) {
				ev.Port = int(int32(uint32(g.element))) // the union's int port_num
			} else {
				switch o := c.objects[g.element].(type) {
				case *QP:
					ev.QP = o
				case *CQ:
					ev.CQ = o
				case *SRQ:
					ev.SRQ = o
				}
			}
			call(lib.ackAsyncEvent, uintptr(unsafe.Pointer(&g)))
		}
		release()
		if rc == 0 {
			return ev, nil
		}
		if errno != syscall.EAGAIN {
			return AsyncEvent{}, errnoErr("reading an async event", cint(rc), errno)
		}
		if err := waitFD(ctx, fd); err != nil {
			return AsyncEvent{}, fmt.Errorf("waiting for an async event of %s: %w", c.name, err)
		}
	}
}
