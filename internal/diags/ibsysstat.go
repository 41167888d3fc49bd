package diags

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/openib"
)

func init() {
	register(command{name: "ibsysstat", make: newIBSysStat})
}

// IBSysStatResult is an ibsysstat query: the op and what the server
// answered.
type IBSysStatResult struct {
	Target string `json:"target"`
	Op     string `json:"op"`
	// Text is the host name (host) or the CPU lines (cpu); empty for ping.
	Text string `json:"text,omitempty"`
}

// sysstatOps are ibsysstat's ops and their attributes of the OpenIB
// sysstat class.
var sysstatOps = map[string]uint16{"ping": openib.AttrSysStatPing, "host": openib.AttrHostInfo, "cpu": openib.AttrCPUInfo,
	"cpi": openib.AttrClassPortInfo} // cpi: python-rdma's

type ibsysstatFlags struct {
	addr   addrFlags
	oui    string
	server bool
}

func newIBSysStat(e *Env) *cobra.Command {
	var f ibsysstatFlags
	c := &cobra.Command{
		Use:   "ibsysstat [flags] <dest lid|guid> [ping|host|cpu|cpi]",
		Short: "ask a port's host for its name or CPUs, or answer (infiniband-diags ibsysstat)",
		Long: `ibsysstat queries the OpenIB sysstat vendor class (0x33, OUI 0x001405) of a
port: ping (the default), host (its host name) or cpu (its processors), as
infiniband-diags' ibsysstat does, or python-rdma's cpi (the class's
ClassPortInfo, which ibtool's server answers and the C one does not). With -S it answers those queries until
Ctrl-C. (On ibsim a server attaches as its node's SM client.)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBSysStat(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.oui, "oui", "o", "", "use specified OUI number")
	fl.BoolVarP(&f.server, "Server", "S", false, "start in server mode")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument: a directed route, to the LID of the port it reaches (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

// sysstatFailed is ibsysstat's IBEXIT after a failed query.
func sysstatFailed(target string, err error) error {
	msg := err.Error()
	if errors.Is(err, mad.ErrTimeout) {
		msg = "Connection timed out" // strerror(ETIMEDOUT), the C tool's words
	}
	return &diagError{msg: fmt.Sprintf("ibsystat to %s: %s", target, msg), err: nil}
}

func runIBSysStat(e *Env, f *ibsysstatFlags, args []string) error {
	oui := ouiArg(f.oui)
	if !f.server && len(args) == 0 {
		return usagef("want <dest lid|guid> [ping|host|cpu|cpi]")
	}
	op := "ping"
	if len(args) > 1 {
		op = args[1]
		if _, ok := sysstatOps[op]; !ok {
			return usagef("op %q: want ping, host, cpu or cpi", op)
		}
	}
	if f.server {
		s, err := e.openVendor(true)
		if err != nil {
			return err
		}
		defer s.Close()
		cpus, err := openib.LocalCPUs()
		if err != nil {
			// The C server's words when it cannot open the file; it
			// serves on with what it has.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				fmt.Fprintf(e.Stderr, "ibwarn: [%d] build_cpuinfo: couldn't open /proc/cpuinfo\n", os.Getpid())
			} else {
				fmt.Fprintf(e.Stderr, "ibwarn: [%d] build_cpuinfo: %v\n", os.Getpid(), err)
			}
		}
		err = openib.ServeSysStat(e.Ctx, s.mc, oui, openib.SysInfo{Host: openib.HostName(), CPUs: cpus})
		if err != nil {
			return iberror(err, "can't serve class %d", int(iba.ClassOpenIBSysStat))
		}
		return nil
	}
	s, err := e.openVendor(false)
	if err != nil {
		return err
	}
	defer s.Close()
	target, err := resolveGMPDest(s, args[0], &f.addr)
	if err != nil {
		return err
	}
	res := &IBSysStatResult{Target: fmt.Sprintf("Lid %d", target.Route().Addr.LID), Op: op}
	// One try, as the C tool's umad_send with no retries.
	rt := target.Route()
	rt.Tries = 1
	if op == "cpi" {
		cpi, err := openib.SysStatClassPortInfo(e.Ctx, s.mc, rt, oui)
		if err != nil {
			return sysstatFailed(res.Target, err)
		}
		b, err := marshal(&cpi)
		if err != nil {
			return err
		}
		var text strings.Builder
		if err := ibaprint.StructDotted(&text, cpi.Desc(), b); err != nil {
			return err
		}
		res.Text = strings.TrimSuffix(text.String(), "\n")
		if e.JSON {
			return e.writeJSON("ibsysstat", res)
		}
		_, err = fmt.Fprintln(e.Stdout, res.Text)
		return err
	}
	text, err := openib.SysStat(e.Ctx, s.mc, rt, oui, sysstatOps[op])
	if err != nil {
		return sysstatFailed(res.Target, err)
	}
	if op != "ping" {
		res.Text = text
	}
	if e.JSON {
		return e.writeJSON("ibsysstat", res)
	}
	if op == "ping" {
		_, err = fmt.Fprintln(e.Stdout, "sysstat ping succeeded")
	} else {
		_, err = fmt.Fprintln(e.Stdout, res.Text)
	}
	return err
}
