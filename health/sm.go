package health

import (
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

var _ = register(&Check{
	Name: "sm", Severity: Error, Default: true,
	Needs: NeedSM,
	Doc: `Exactly one master SM (IBA 14.4: the SMs of a subnet elect one
master; the others stand by). SMInfo (IBA 14.2.5.13) is read from every
port whose PortInfo:CapabilityMask has IsSM and from the port the local
port names as its master (PortInfo:MasterSMLID), at the start of the run
and at its end: no master, or more than one, is an error, as in
ibdiagnet's "SM.none" and "SM.multiple.master" checks; an SM whose
SMInfo cannot be read is one too. The SMs, their states, priorities and
activity counts (ActCount, which a live master moves as it works) go to
the .sm report; a master whose ActCount did not move is not a fault by
itself (OpenSM moves it once per sweep, ten seconds apart by default).
One finding per fault.`,
	run: func(d *Data) []Finding {
		var out []Finding
		var masters []*SMRecord
		for _, sm := range d.SMs {
			if sm.Err != nil {
				out = append(out, Finding{Port: RefOf(sm.Port), Message: fmt.Sprintf("the port says it has an SM, and SMInfo cannot be read: %v", sm.Err)})
				continue
			}
			if sm.Last.SMState == iba.SMStateMaster || sm.First.SMState == iba.SMStateMaster {
				masters = append(masters, sm)
			}
		}
		switch {
		case len(masters) == 0 && len(d.SMs) > 0:
			out = append(out, Finding{Message: fmt.Sprintf("no master SM among the %d SMs found", len(d.SMs))})
		case len(masters) == 0:
			out = append(out, Finding{Message: "no SM found"})
		case len(masters) > 1:
			fd := Finding{Port: RefOf(masters[0].Port), Peer: RefOf(masters[1].Port)}
			var names []string
			for _, m := range masters {
				fd.Ports = append(fd.Ports, RefOf(m.Port))
				names = append(names, fmt.Sprintf("%q port %d (GUID %v, priority %d)", m.Port.Node.Description(), m.Port.Num, m.Last.GUID, m.Last.Priority))
			}
			fd.Message = fmt.Sprintf("%d master SMs: %s", len(masters), strings.Join(names, ", "))
			out = append(out, fd)
		}
		return out
	},
})
