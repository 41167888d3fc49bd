//go:build linux && cgo

package verbs

/*
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"
)

// EventType is an affiliated or unaffiliated asynchronous event (IBA
// 11.6.3, ibv_event_type).
type EventType int

const (
	EventCQErr            EventType = C.IBV_EVENT_CQ_ERR
	EventQPFatal          EventType = C.IBV_EVENT_QP_FATAL
	EventQPReqErr         EventType = C.IBV_EVENT_QP_REQ_ERR
	EventQPAccessErr      EventType = C.IBV_EVENT_QP_ACCESS_ERR
	EventCommEst          EventType = C.IBV_EVENT_COMM_EST
	EventSQDrained        EventType = C.IBV_EVENT_SQ_DRAINED
	EventPathMig          EventType = C.IBV_EVENT_PATH_MIG
	EventPathMigErr       EventType = C.IBV_EVENT_PATH_MIG_ERR
	EventDeviceFatal      EventType = C.IBV_EVENT_DEVICE_FATAL
	EventPortActive       EventType = C.IBV_EVENT_PORT_ACTIVE
	EventPortErr          EventType = C.IBV_EVENT_PORT_ERR
	EventLIDChange        EventType = C.IBV_EVENT_LID_CHANGE
	EventPKeyChange       EventType = C.IBV_EVENT_PKEY_CHANGE
	EventSMChange         EventType = C.IBV_EVENT_SM_CHANGE
	EventSRQErr           EventType = C.IBV_EVENT_SRQ_ERR
	EventSRQLimitReached  EventType = C.IBV_EVENT_SRQ_LIMIT_REACHED
	EventQPLastWQEReached EventType = C.IBV_EVENT_QP_LAST_WQE_REACHED
	EventClientReregister EventType = C.IBV_EVENT_CLIENT_REREGISTER
	EventGIDChange        EventType = C.IBV_EVENT_GID_CHANGE
)

func (t EventType) String() string {
	return C.GoString(C.ibv_event_type_str(C.enum_ibv_event_type(t)))
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

// AsyncEvent waits for the device's next asynchronous event (IBA 11.6.3)
// until ctx ends.
func (c *Context) AsyncEvent(ctx context.Context) (AsyncEvent, error) {
	for {
		release, err := c.node.use("reading an async event")
		if err != nil {
			return AsyncEvent{}, err
		}
		fd := int(c.c.async_fd)
		var g C.struct_go_async
		rc := C.go_get_async_event(c.c, &g)
		var ev AsyncEvent
		if rc == 0 {
			ev = AsyncEvent{Type: EventType(g._type), Port: int(g.port)}
			switch o := c.objects[unsafe.Pointer(g.elem)].(type) {
			case *QP:
				ev.QP = o
			case *CQ:
				ev.CQ = o
			case *SRQ:
				ev.SRQ = o
			}
		}
		release()
		if rc == 0 {
			return ev, nil
		}
		if rc != C.EAGAIN {
			return AsyncEvent{}, errOf("reading an async event", rc, nil)
		}
		if err := waitFD(ctx, fd); err != nil {
			return AsyncEvent{}, fmt.Errorf("waiting for an async event of %s: %w", c.name, err)
		}
	}
}
