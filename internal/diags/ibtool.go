package diags

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/spf13/cobra"
)

// JSONVersion is the version of every --json document. It changes only when
// a document changes incompatibly; new keys may appear in any version.
const JSONVersion = 1

// Env is what a command runs with: the global flags and the streams.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Global flags, shared by every command (docs/design.md: "Choosing the
	// fabric").
	Fabric  string
	CA      string
	Port    string
	Timeout int // milliseconds; 0: the library default (1000)
	Retries int // -1: the library default (3 tries)
	Debug   int
	Verbose int
	JSON    bool
	// SA answers SubnGet of the attributes the SA keeps records of from
	// those records, and discovers by SA (python-rdma's --sa).
	SA bool
}

// A command is one ibtool subcommand; each file registers its own.
type command struct {
	name    string
	aliases []string // multi-call names that also run it (perfquery.pl, ...)
	make    func(e *Env) *cobra.Command
}

var registry []command

func register(c command) { registry = append(registry, c) }

// UsageError marks a command line that cannot be run; ibtool prints usage
// hints for it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Main runs ibtool with argv (argv[0] included) and returns the exit status.
// Run through a link named after a command (perfquery, smpquery, ...), it
// runs that command.
func Main(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr, Retries: -1}
	root := newRoot(e)
	args := argv[1:]
	if len(argv) > 0 {
		if name := filepath.Base(argv[0]); name != "ibtool" {
			if c, ok := lookup(name); ok {
				args = append([]string{c.name}, args...)
			}
		}
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	name := "ibtool"
	if cmd != nil && cmd != root {
		name = cmd.Name()
	}
	var ue *UsageError
	if errors.As(err, &ue) || isFlagError(err) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if cmd != nil {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return 2
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, ibaprint.Error(err, e.Verbose))
	// A command that copies a C tool's exit status (IBEXIT's 255) says so.
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// isFlagError recognises cobra's and pflag's complaints about the command
// line, which carry no type of their own.
func isFlagError(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires exactly"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func lookup(name string) (command, bool) {
	for _, c := range registry {
		if c.name == name {
			return c, true
		}
		for _, a := range c.aliases {
			if a == name {
				return c, true
			}
		}
	}
	return command{}, false
}

func newRoot(e *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "ibtool COMMAND [flags] [args]",
		Short:         "InfiniBand diagnostics: infiniband-diags and python-rdma's ibtool in one program",
		SilenceErrors: true,
		SilenceUsage:  true,
		Long: `ibtool runs every infiniband-diags command and python-rdma's additions.
Run through a link named after a command (perfquery, smpquery, ...) it runs
that command. Every command takes --json and the fabric flags below.

The fabric (--fabric or RDMAKIT_FABRIC):
  umad            the kernel's /dev/infiniband/umadN of the selected port (default)
  ibsim[:NODE]    a running ibsim or fabricsim server (IBSIM_SOCKNAME, SIM_HOST)
  sim:FILE|GEN    an in-process simulated fabric`,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&e.Fabric, "fabric", "", "fabric to use: umad, ibsim[:NODE] or sim:FILE|GENERATOR (default $RDMAKIT_FABRIC or umad)")
	pf.StringVarP(&e.CA, "Ca", "C", "", "local device: name, node GUID")
	pf.StringVarP(&e.Port, "Port", "P", "", "local port: number, DEV/PORT, port GID or port GUID")
	pf.IntVarP(&e.Timeout, "timeout", "t", 0, "timeout of one MAD try in milliseconds (default 1000)")
	pf.IntVar(&e.Retries, "retries", -1, "tries per MAD beyond the first (default 2)")
	pf.CountVarP(&e.Debug, "debug", "d", "trace MADs: -d one line per RPC, -dd full decodes")
	pf.CountVarP(&e.Verbose, "verbose", "v", "more detail: -v error chains, -vv packet dumps")
	pf.BoolVar(&e.JSON, "json", false, "print a versioned JSON document instead of text")
	pf.BoolVar(&e.SA, "sa", false, "read NodeInfo, PortInfo, SwitchInfo, tables ... from SA records instead of SMPs, discover by SA (python-rdma --sa); Sets stay SMPs")
	sort.Slice(registry, func(i, j int) bool { return registry[i].name < registry[j].name })
	for _, c := range registry {
		cc := c.make(e)
		cc.Aliases = append(cc.Aliases, c.aliases...)
		root.AddCommand(cc)
	}
	root.CompletionOptions.HiddenDefaultCmd = true
	return root
}

// writeJSON prints v as the command's JSON document, indented, with the
// schema version first.
func (e *Env) writeJSON(command string, v any) error {
	doc := struct {
		Version int    `json:"version"`
		Command string `json:"command"`
		Result  any    `json:"result"`
	}{JSONVersion, command, v}
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
