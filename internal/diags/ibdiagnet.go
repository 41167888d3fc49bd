package diags

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/health"
)

func init() {
	register(command{name: "ibdiagnet", make: newIBDiagnet})
}

// ibdiagnetDefaultDir is where ibdiagnet 1.x writes its files (-o).
const ibdiagnetDefaultDir = "/tmp"

type ibdiagnetFlags struct {
	hf        healthFlags
	df        discoverFlags
	checks    []string
	count     int
	outDir    string
	noFiles   bool
	vlr       bool
	sls       []uint
	listCheck bool
}

// IBDiagnetResult is ibdiagnet's --json document.
type IBDiagnetResult struct {
	*health.Report
	Files []string `json:"files"`
}

func newIBDiagnet(e *Env) *cobra.Command {
	f := &ibdiagnetFlags{}
	c := &cobra.Command{
		Use:   "ibdiagnet",
		Short: "check the whole fabric's health and write ibdiagnet's report files (ibutils ibdiagnet)",
		Long: `ibdiagnet discovers the fabric and checks it as ibutils' ibdiagnet does:
duplicate GUIDs and LIDs, zero LIDs and system GUIDs, links not active,
narrower or slower than their ends enable (or than --lw, --ls), ends that
disagree, lossy links (-c SMPs across each), exactly one master SM, P_Key
tables across links, counters that rise between two samples --interval
apart (ibdiagnet's thresholds, or --threshold-file; --pm-limit for
values), every switch's forwarding of every LID, loops, the hop-count
histogram, credit loops (--vlr follows the SL-to-VL tables) and multicast
groups whose tables miss members. --checks and --skip choose the checks
(--list names them).

It prints the fabric's counts, the checks run, the findings worst first
and the hop-count histogram, and writes ibdiagnet.lst, .fdbs, .mcfdbs,
.sm, .pm, .pkey and .db_csv into -o (default /tmp, as ibdiagnet 1.x).
Exit status: 0 when nothing worse than info is found, 8 when the worst
finding is a warning, 9 when it is an error, 1 when the check could not
run, 2 for a bad command line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runIBDiagnet(e, f) },
	}
	fl := c.Flags()
	fl.StringSliceVar(&f.checks, "checks", nil, "checks to run, comma separated, or all (default: every default check)")
	fl.BoolVar(&f.listCheck, "list", false, "list the checks with their severities and exit")
	fl.IntVarP(&f.count, "count", "c", health.DefaultLossyCount, "SMPs sent across each link by the lossy-links check (ibdiagnet -c)")
	fl.StringVarP(&f.outDir, "out-dir", "o", ibdiagnetDefaultDir, "directory the report files go to")
	fl.BoolVar(&f.noFiles, "no-files", false, "write no report files")
	fl.BoolVar(&f.vlr, "vlr", false, "read the SL-to-VL tables and follow them in the credit loop check (ibdiagnet -vlr)")
	fl.UintSliceVar(&f.sls, "sl", nil, "SLs the credit loop check follows (default 0)")
	fl.StringVar(&f.df.loadCache, "load-cache", "", "check the subnet of this cache or topology file instead of discovering it; tables and counters are still read, along its directed routes: it must have been made from this port")
	fl.StringVar(&f.df.method, "discovery", "DR", "how to discover: DR (directed route SMPs), LID or SA")
	f.df.cmd = c
	f.hf.register(c)
	return c
}

func runIBDiagnet(e *Env, f *ibdiagnetFlags) error {
	if f.listCheck {
		return listChecks(e)
	}
	o, err := f.hf.options()
	if err != nil {
		return err
	}
	if f.count <= 0 {
		return usagef("-c must be positive")
	}
	o.Checks, o.LossyCount, o.VLRouting = f.checks, f.count, f.vlr
	for _, sl := range f.sls {
		if sl > 15 {
			return usagef("--sl %d: SLs are 0 to 15", sl)
		}
		o.SLs = append(o.SLs, uint8(sl))
	}
	if _, err := health.Select(o.Checks, o.Skip); err != nil {
		return usagef("%v", err)
	}
	m, err := e.discoveryMethod(&f.df)
	if err != nil {
		return err
	}
	o.Discover.Method = m
	if f.df.loadCache != "" {
		s, err := loadSubnetFile(f.df.loadCache)
		if err != nil {
			return err
		}
		o.Subnet = s
	}
	sess, err := e.open()
	if err != nil {
		return err
	}
	defer sess.Close()
	r, err := health.Run(e.Ctx, sess.f, o)
	if err != nil {
		return err
	}
	res := &IBDiagnetResult{Report: r, Files: []string{}}
	if !f.noFiles {
		files, err := health.WriteFiles(f.outDir, "ibdiagnet", r.Data)
		res.Files = append(res.Files, files...)
		if err != nil {
			return err
		}
	}
	if e.JSON {
		if err := e.writeJSON("ibdiagnet", res); err != nil {
			return err
		}
		return healthExit(r)
	}
	w := e.Stdout
	s := r.Summary
	fmt.Fprintf(w, "Fabric: %d nodes (%d switches, %d CAs, %d routers), %d ports, %d links; %d master SM, %d standby\n",
		s.Nodes, s.Switches, s.CAs, s.Routers, s.Ports, s.Links, s.Masters, s.Standbys)
	printChecks(w, r)
	printFindings(w, r)
	if r.Routing != nil {
		fmt.Fprintf(w, "Routing: %d LIDs on %d switches, %d CA-to-CA routes, longest %d hops; by hops: %s\n",
			r.Routing.LIDs, r.Routing.Switches, r.Routing.Pairs, r.Routing.MaxHops, histogramText(r.Routing.Histogram))
	}
	if len(res.Files) > 0 {
		names := make([]string, len(res.Files))
		for i, p := range res.Files {
			names[i] = filepath.Base(p)
		}
		fmt.Fprintf(w, "Report files in %s: %s\n", f.outDir, strings.Join(names, " "))
	}
	fmt.Fprintf(w, "Done in %.2fs\n", r.Elapsed.Seconds())
	return healthExit(r)
}

// listChecks prints every check, its severity and whether it runs by
// default.
func listChecks(e *Env) error {
	type checkJSON struct {
		Name     string          `json:"name"`
		Severity health.Severity `json:"severity"`
		Default  bool            `json:"default"`
		Doc      string          `json:"doc"`
	}
	var l []checkJSON
	for _, c := range health.Checks() {
		l = append(l, checkJSON{c.Name, c.Severity, c.Default, strings.Join(strings.Fields(c.Doc), " ")})
	}
	if e.JSON {
		return e.writeJSON("ibdiagnet", l)
	}
	for _, c := range l {
		def := ""
		if !c.Default {
			def = " (not by default)"
		}
		fmt.Fprintf(e.Stdout, "%-22s %-8s%s\n", c.Name, c.Severity, def)
	}
	return nil
}
