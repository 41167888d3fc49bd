package diags

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/fabric"
)

func init() {
	register(command{name: "ibstatus", make: newIBStatus})
}

// IBStatusResult is what ibstatus read: one entry per port shown, each the
// sysfs text it prints ("unknown" for a file that cannot be read).
type IBStatusResult struct {
	Ports []IBStatusPort `json:"ports"`
}

// IBStatusPort is one port as the ibstatus script shows it.
type IBStatusPort struct {
	Device     string `json:"device"`
	Port       string `json:"port"`
	DefaultGID string `json:"defaultGID"`
	BaseLID    string `json:"baseLID"`
	SMLID      string `json:"smLID"`
	State      string `json:"state"`
	PhysState  string `json:"physState"`
	Rate       string `json:"rate"`
	LinkLayer  string `json:"linkLayer"`
}

func newIBStatus(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "ibstatus [flags] [devname[:portnum]]...",
		Short: "show the status of local RDMA ports from sysfs (infiniband-diags ibstatus)",
		Long: `ibstatus prints each port's GID, LIDs, states, rate and link layer as
the ibstatus script of infiniband-diags reads them from sysfs. On a fabric
other than umad it describes the attached port from SMPs, as libumad2sim's
fake sysfs would.

Examples:
  ibstatus mthca1    # shows status of all ports of 'mthca1'
  ibstatus mthca0:2  # shows status port number 2 of 'mthca0'
  ibstatus           # shows status of all ports of all devices`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBStatus(e, args)
		},
	}
}

// statusError is the script's "Fatal error: " line, printed on stdout,
// and its exit 255. Ports shown before it stay shown.
type statusError struct{ msg string }

func (s *statusError) Error() string { return s.msg }
func (s *statusError) ExitCode() int { return 255 }

func runIBStatus(e *Env, args []string) error {
	cas, err := e.localCAs()
	if err != nil {
		return err
	}
	byName := map[string]*caView{}
	for _, c := range cas {
		byName[c.name] = c
	}
	res := &IBStatusResult{Ports: []IBStatusPort{}}
	var text strings.Builder
	finish := func(fail error) error {
		if e.JSON {
			if fail != nil {
				return fail
			}
			return e.writeJSON("ibstatus", res)
		}
		if fail != nil {
			fmt.Fprintf(&text, "Fatal error:  %s\n", fail)
		}
		if _, err := io.WriteString(e.Stdout, text.String()); err != nil {
			return err
		}
		if fail != nil {
			// The message is on stdout already, as the script prints it.
			return &silentExit{code: 255, err: fail}
		}
		return nil
	}
	show := func(c *caView, dev string, ports []string) {
		if ports == nil {
			ports = []string{"*"} // an empty directory: the glob stays as typed
		}
		for _, p := range ports {
			st := c.status(dev, p)
			res.Ports = append(res.Ports, st)
			writeIBStatusPort(&text, &st)
		}
	}
	if len(args) == 0 {
		if len(cas) == 0 {
			if st, err := os.Stat(e.sysClassDir()); err != nil || !st.IsDir() {
				return finish(&statusError{"No devices"})
			}
			args = []string{"*"} // an empty directory: the glob stays as typed
		}
		for _, c := range cas {
			if !c.hasPortsDir() {
				return finish(&statusError{fmt.Sprintf("device '%s': sys files not found (%s)", c.name, path.Join(e.sysClassDir(), c.name, "ports"))})
			}
			show(c, c.name, c.ports)
		}
		if len(cas) > 0 {
			return finish(nil)
		}
	}
	for _, a := range args {
		dev := a
		if i := strings.IndexByte(a, ':'); i >= 0 {
			dev = a[:i]
		}
		port := a[strings.LastIndexByte(a, ':')+1:]
		c, ok := byName[dev]
		if !ok || !c.hasPortsDir() {
			dir := path.Join(e.sysClassDir(), dev, "ports")
			return finish(&statusError{fmt.Sprintf("device '%s': sys files not found (%s)", dev, dir)})
		}
		if port == dev {
			show(c, dev, c.ports)
		} else {
			show(c, dev, strings.Fields(port))
		}
	}
	return finish(nil)
}

// sysClassDir is the directory the script names in its messages.
func (e *Env) sysClassDir() string {
	if !e.isUmad() {
		return "/sys/class/infiniband"
	}
	return path.Join(fabric.SysfsRoot(), "class", "infiniband")
}

func (c *caView) hasPortsDir() bool {
	if c.dir == "" {
		return true
	}
	st, err := os.Stat(filepath.Join(c.dir, "ports"))
	return err == nil && st.IsDir()
}

// status reads one port as the script does: each file with cat, the words
// it prints joined by single blanks (the shell's word splitting), and
// "unknown" (for link_layer "IB") when the file cannot be read.
func (c *caView) status(dev, port string) IBStatusPort {
	get := func(file, missing string) string {
		s, ok := c.read("ports/" + port + "/" + file)
		if !ok {
			return missing
		}
		return strings.Join(strings.Fields(s), " ")
	}
	return IBStatusPort{
		Device:     dev,
		Port:       port,
		DefaultGID: get("gids/0", "unknown"),
		BaseLID:    get("lid", "unknown"),
		SMLID:      get("sm_lid", "unknown"),
		State:      get("state", "unknown"),
		PhysState:  get("phys_state", "unknown"),
		Rate:       get("rate", "unknown"),
		LinkLayer:  get("link_layer", "IB"),
	}
}

func writeIBStatusPort(w io.Writer, p *IBStatusPort) {
	// echo "<label>" `cat file`: a blank between the label and the value
	// only when cat printed a word.
	line := func(label, v string) {
		if v == "" {
			fmt.Fprintf(w, "%s\n", label)
			return
		}
		fmt.Fprintf(w, "%s %s\n", label, v)
	}
	fmt.Fprintf(w, "Infiniband device '%s' port %s status:\n", p.Device, p.Port)
	line("\tdefault gid:\t", p.DefaultGID)
	line("\tbase lid:\t", p.BaseLID)
	line("\tsm lid:\t\t", p.SMLID)
	line("\tstate:\t\t", p.State)
	line("\tphys state:\t", p.PhysState)
	line("\trate:\t\t", p.Rate)
	line("\tlink_layer:\t", p.LinkLayer)
	fmt.Fprintln(w)
}

// silentExit fails a command whose message is already on stdout: Main
// prints only the status line's summary on stderr.
type silentExit struct {
	code int
	err  error
}

func (s *silentExit) Error() string { return s.err.Error() }
func (s *silentExit) Unwrap() error { return s.err }
func (s *silentExit) ExitCode() int { return s.code }
