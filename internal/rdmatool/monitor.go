package rdmatool

import (
	"fmt"

	"github.com/rdmakit/rdmakit/nldev"
)

var eventNames = map[nldev.EventType]string{
	nldev.EventRegister: "[REGISTER]", nldev.EventUnregister: "[UNREGISTER]",
	nldev.EventNetdevAttach: "[NETDEV_ATTACH]", nldev.EventNetdevDetach: "[NETDEV_DETACH]",
	nldev.EventRename: "[RENAME]", nldev.EventNetdevRename: "[NETDEV_RENAME]",
}

// cmdMonitor prints device events until interrupted, in the format of
// newer iproute2 releases (6.1 has no monitor object).
func (r *rd) cmdMonitor() error {
	if !r.noArg() && !r.argIs("help") {
		return r.errorf("Unknown parameter '%s'.\n", r.arg())
	}
	if r.argIs("help") {
		fmt.Fprintf(r.out.w, "Usage: %s monitor [help]\n", r.name)
		return nil
	}
	si, err := r.conn.Sys.Get(r.ctx)
	if err != nil {
		return err
	}
	if si.MonitorMode == 0 {
		return r.errorf("This kernel does not support RDMA monitoring (Linux 6.10 or later is needed)\n")
	}
	o := r.out
	flusher, _ := o.w.(interface{ Flush() error })
	for ev, err := range r.conn.Monitor.Events(r.ctx) {
		if err != nil {
			if r.ctx.Err() != nil {
				return nil // interrupted: the normal end
			}
			return err
		}
		if o.json {
			o.jw = &jsonWriter{w: o.w, pretty: o.pretty}
		}
		o.openObject()
		name, ok := eventNames[ev.Type]
		if !ok {
			name = fmt.Sprintf("[UNKNOWN 0x%02x]", uint8(ev.Type))
		}
		o.str(anyOut, "event_type", name+"\t", name)
		if ev.Has(nldev.AttrDevIndex) {
			o.num(anyOut, "rdma_index", fmt.Sprintf("dev %d", ev.DevIndex), uint64(ev.DevIndex))
		}
		if ev.Has(nldev.AttrDevName) {
			o.str(anyOut, "rdma_dev", " "+ev.DevName, ev.DevName)
		}
		if ev.Has(nldev.AttrPortIndex) {
			o.num(anyOut, "port", fmt.Sprintf(" port %d", ev.Port), uint64(ev.Port))
		}
		if ev.Has(nldev.AttrNdevIndex) {
			o.num(anyOut, "netdev_idx", fmt.Sprintf(" netdev %d", ev.NdevIndex), uint64(ev.NdevIndex))
		}
		if ev.Has(nldev.AttrNdevName) {
			o.str(anyOut, "netdev_name", " "+ev.NdevName, ev.NdevName)
		}
		o.closeObject()
		if o.jw != nil {
			o.jw.destroy()
			o.jw = nil
		} else {
			o.text("\n")
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return nil
}
