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

func (r *rd) cmdMonitor() error {
	return r.exec([]command{
		{"", (*rd).monitorShow},
		{"help", func(r *rd) error {
			// iproute2 names the program "rdma" here whatever its name.
			fmt.Fprintf(r.out.w, "Usage: rdma monitor [ -j ]\n")
			return nil
		}},
	}, "mon command")
}

// monitorShow prints device events (RDMA_NL_GROUP_NOTIFY, Linux 6.10+) as
// they come, one line each, as iproute2 6.13+ prints them, until
// interrupted. With -j the events are the elements of one JSON array,
// which iproute2 leaves open when it is killed; rdmatool closes it when
// interrupted (SIGINT, SIGTERM), so the output is a whole document.
func (r *rd) monitorShow() error {
	si, err := r.conn.Sys.Get(r.ctx)
	if err != nil {
		fmt.Fprintf(r.stderr, "Failed to check if RDMA monitoring is supported\n")
		return err
	}
	if si.MonitorMode == 0 {
		return r.errorf("RDMA monitoring is not supported by the kernel\n")
	}
	o := r.out
	flush := func() {
		if f, ok := o.w.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
	events := r.conn.Monitor.Events(r.ctx)
	o.newDoc()
	defer o.endDoc()
	for ev, err := range events {
		if err != nil {
			if r.ctx.Err() != nil {
				return nil // interrupted: the normal end
			}
			return err
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
		o.newline()
		flush()
	}
	return nil
}
