package diags

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/health"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibdiagpath", make: newIBDiagPath})
}

type ibdiagpathFlags struct {
	hf     healthFlags
	direct bool
}

func newIBDiagPath(e *Env) *cobra.Command {
	f := &ibdiagpathFlags{}
	c := &cobra.Command{
		Use:   "ibdiagpath [-D] TARGET",
		Short: "check one route's hops, links and counters (ibutils ibdiagpath)",
		Long: `ibdiagpath follows one route from the local port — to a LID through the
switches' forwarding tables, or with -D along a directed route such as
0,1,3 — and checks every hop as ibutils' ibdiagpath does: the ports the
route enters and leaves by, their states, widths and speeds (against
--lw and --ls when given), and their counters read twice --interval
apart. A route that stops short (no forwarding entry, no cable, a loop)
is an error. Exit status as ibdiagnet's: 0, 8 for warnings, 9 for
errors, 1 when the check could not run, 2 for a bad command line.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runIBDiagPath(e, f, args[0]) },
	}
	c.Flags().BoolVarP(&f.direct, "Direct", "D", false, "TARGET is a directed route (0,1,3)")
	f.hf.register(c)
	return c
}

func runIBDiagPath(e *Env, f *ibdiagpathFlags, arg string) error {
	o, err := f.hf.options()
	if err != nil {
		return err
	}
	var to health.PathTarget
	if f.direct {
		p, err := subnet.ParseDRPath(arg)
		if err != nil {
			return usagef("-D %s: %v", arg, err)
		}
		to.DR = p
	} else {
		lid, err := strconv.ParseUint(arg, 0, 16)
		if err != nil || lid == 0 || lid > 0xbfff {
			return usagef("%q is not a unicast LID (1 to 0xbfff); -D takes a directed route", arg)
		}
		to.LID = uint16(lid)
	}
	sess, err := e.open()
	if err != nil {
		return err
	}
	defer sess.Close()
	r, err := health.Path(e.Ctx, sess.f, to, o)
	if err != nil {
		return err
	}
	if e.JSON {
		if err := e.writeJSON("ibdiagpath", r); err != nil {
			return err
		}
		return healthExit(r.Report)
	}
	w := e.Stdout
	fmt.Fprintf(w, "Route to %s:\n", r.Target)
	for i, h := range r.Hops {
		in := "-"
		if h.In != nil {
			in = strconv.Itoa(h.In.Port)
		}
		out, link := "-", ""
		if h.Out != nil {
			out, link = strconv.Itoa(h.Out.Port), "  link "+h.Link
		}
		ref := health.NodeRef(h.Node)
		fmt.Fprintf(w, "  %2d %q (%v) lid %d in %s out %s%s\n", i, ref.Desc, ref.NodeGUID, ref.LID, in, out, link)
	}
	if r.Reached {
		fmt.Fprintf(w, "Reached %s in %d hops\n", r.Target, len(r.Hops)-1)
	}
	printChecks(w, r.Report)
	printFindings(w, r.Report)
	return healthExit(r.Report)
}
