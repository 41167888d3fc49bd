package diags

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// DiagsVersion is the infiniband-diags release whose output ibtool's is
// (56.1; docs/ibtool.md lists what 44 prints otherwise), which -V reports
// in the C tools' format.
const DiagsVersion = "56.1"

// versionAware makes -V/--version print the version and stop, before the
// command checks its arguments, as the C tools' -V does.
func (e *Env) versionAware(c *cobra.Command) {
	args, run := c.Args, c.RunE
	c.Args = func(cmd *cobra.Command, a []string) error {
		switch {
		case e.Version:
			return nil
		case args != nil:
			return args(cmd, a)
		case !cmd.HasParent() && len(a) > 0:
			// What cobra says for a root without Args.
			return fmt.Errorf("unknown command %q for %q", a[0], cmd.CommandPath())
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, a []string) error {
		if e.Version {
			e.printVersion(cmd)
			return nil
		}
		if run == nil {
			return cmd.Help()
		}
		return run(cmd, a)
	}
	c.Run = nil
}

// printVersion prints, on stderr as the C tools do, their line
// ("perfquery BUILD VERSION: 56.1") and then ibtool's own.
func (e *Env) printVersion(cmd *cobra.Command) {
	if cmd.HasParent() {
		fmt.Fprintf(e.Stderr, "%s BUILD VERSION: %s\n", cmd.Name(), DiagsVersion)
	}
	fmt.Fprintf(e.Stderr, "ibtool (rdmakit) %s, output of infiniband-diags %s\n", Version(), DiagsVersion)
}

// Version is rdmakit's version as the Go toolchain recorded it: the module
// version ("(devel)" for a build from a checkout) and the VCS revision.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown) " + runtime.Version()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " " + runtime.Version()
}
