package diags

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
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
// sysstat class (ibsysstat.c: IB_PING_ATTR, IB_HOSTINFO_ATTR,
// IB_CPUINFO_ATTR).
var sysstatOps = map[string]uint16{"ping": 0x10, "host": 0x11, "cpu": 0x12}

type ibsysstatFlags struct {
	addr   addrFlags
	oui    string
	server bool
}

func newIBSysStat(e *Env) *cobra.Command {
	var f ibsysstatFlags
	c := &cobra.Command{
		Use:   "ibsysstat [flags] <dest lid|guid> [ping|host|cpu]",
		Short: "ask a port's host for its name or CPUs, or answer (infiniband-diags ibsysstat)",
		Long: `ibsysstat queries the OpenIB sysstat vendor class (0x33, OUI 0x001405) of a
port: ping (the default), host (its host name) or cpu (its processors), as
infiniband-diags' ibsysstat does. With -S it answers those queries until
Ctrl-C. (On ibsim a server attaches as its node's SM client.)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBSysStat(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.oui, "oui", "o", "", "use specified OUI number")
	fl.BoolVarP(&f.server, "Server", "S", false, "start in server mode")
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
		return usagef("want <dest lid|guid> [ping|host|cpu]")
	}
	op := "ping"
	if len(args) > 1 {
		op = args[1]
		if _, ok := sysstatOps[op]; !ok {
			return usagef("op %q: want ping, host or cpu", op)
		}
	}
	if f.server {
		s, err := e.openVendor(oui, true)
		if err != nil {
			return err
		}
		defer s.Close()
		host := hostAndDomain()
		cpus := cpuInfo(e.Stderr)
		err = vendorServe(e.Ctx, s.mc, iba.ClassOpenIBSysStat, oui, func(req *mad.ServerRequest) []byte {
			return sysstatReply(req.AttrID, req.Data(), host, cpus)
		})
		if err != nil {
			return iberror(err, "can't serve class %d", int(iba.ClassOpenIBSysStat))
		}
		return nil
	}
	s, err := e.openVendor(oui, false)
	if err != nil {
		return err
	}
	defer s.Close()
	target, err := s.gmpTarget(args[0], &f.addr)
	if err != nil {
		return iberror(unwrapUsage(err), "can't resolve destination port %s", args[0])
	}
	res := &IBSysStatResult{Target: fmt.Sprintf("Lid %d", target.Route().Addr.LID), Op: op}
	// One try, as the C tool's umad_send with no retries.
	rt := target.Route()
	rt.Tries = 1
	rep, err := s.mc.Do(e.Ctx, mad.Request{Target: rt, Class: iba.ClassOpenIBSysStat, Method: iba.MethodGet,
		AttrID: sysstatOps[op], OUI: oui, Data: make([]byte, 216)})
	if err != nil {
		return sysstatFailed(res.Target, err)
	}
	if op != "ping" {
		res.Text = cString(rep.Data())
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

// sysstatCPU is one processor of /proc/cpuinfo as the C server keeps it;
// a field it did not find prints as "(null)", glibc's word for it.
type sysstatCPU struct{ model, mhz string }

// cpuInfo reads /proc/cpuinfo as build_cpuinfo does.
func cpuInfo(stderr io.Writer) []sysstatCPU {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		fmt.Fprintf(stderr, "ibwarn: [%d] build_cpuinfo: couldn't open /proc/cpuinfo\n", os.Getpid())
		return nil
	}
	defer f.Close()
	return parseCPUInfo(f)
}

func parseCPUInfo(r io.Reader) []sysstatCPU {
	var cpus []sysstatCPU
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "processor\t") {
			if len(cpus) == 256 {
				break
			}
			cpus = append(cpus, sysstatCPU{"(null)", "(null)"})
			continue
		}
		i := strings.IndexByte(line, ':')
		if len(cpus) == 0 || i < 0 {
			continue
		}
		switch {
		case strings.HasPrefix(line, "model name\t"):
			cpus[len(cpus)-1].model = line[i+1:]
		case strings.HasPrefix(line, "cpu MHz\t"):
			cpus[len(cpus)-1].mhz = line[i+1:]
		}
	}
	return cpus
}

// sysstatReply is mk_reply: the data of the answer to attribute attr,
// within one MAD (216 bytes; a longer CPU list is cut, NUL-terminated).
func sysstatReply(attr uint16, req []byte, host string, cpus []sysstatCPU) []byte {
	data := make([]byte, 216)
	var text string
	switch attr {
	case sysstatOps["ping"]:
		copy(data, req)
		return data
	case sysstatOps["host"]:
		text = host
	case sysstatOps["cpu"]:
		var b strings.Builder
		for i, c := range cpus {
			fmt.Fprintf(&b, "cpu %d: model %s MHZ %s\n", i, c.model, c.mhz)
		}
		text = b.String()
	}
	copy(data[:len(data)-1], text)
	return data
}
