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

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibdiagconf"
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

	// infiniband-diags' common options (siteconfig.go, keys.go,
	// version.go): -z, -y, --smkey, -Y, -s, -e, -V, and python-rdma's
	// --sa-path.
	Config  string // -z/--config: the site configuration file
	MKey    uint64 // -y/--m_key, else ibdiag.conf's m_key
	SMKey   uint64 // --smkey, else ibdiag.conf's sa_key
	PKeyIdx uint16 // -Y/--pkey-idx: the P_Key index of GMPs
	SMPort  string // -s/--sm_port: the SM's LID for SA queries
	SAPath  string // --sa-path: the path spec of SA queries
	Errors  bool   // -e/--errors: print MADs that fail
	Version bool   // -V/--version
	// MlxEPI is ibdiag.conf's MLX_EPI: discovery reads Mellanox
	// devices' MlnxExtPortInfo (true unless the file says false).
	MlxEPI bool

	mkeyArg, smkeyArg string // -y and --smkey as typed
	pkeyIdxArg        string // -Y as typed
}

// A command is one ibtool subcommand; each file registers its own.
type command struct {
	name    string
	aliases []string // multi-call names that also run it (perfquery.pl, ...)
	make    func(e *Env) *cobra.Command
	// dashWords are long options the command's script spelled with one
	// dash (-nocolor), each with the flag it stands for: pflag would read
	// them as a cluster of letters.
	dashWords map[string]string
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
	e := &Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr, Retries: -1, MlxEPI: true}
	root := newRoot(e)
	args := argv[1:]
	if len(argv) > 0 {
		if name := filepath.Base(argv[0]); name != "ibtool" {
			if c, ok := lookup(name); ok {
				args = append([]string{c.name}, args...)
			}
		}
	}
	root.SetArgs(scriptSpellings(root, args))
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
	for _, h := range []string{mkeyHint(err), pkeyHint(err, e.PKeyIdx)} {
		if h != "" {
			fmt.Fprintf(stderr, "%s: %s\n", name, h)
		}
	}
	// No RDMA device is the same failure for every command: the status
	// of the C tools, which all stop there with IBEXIT.
	if errors.Is(err, fabric.ErrNoDevice) {
		return NoDeviceStatus
	}
	// A command that copies a C tool's exit status (IBEXIT's 255) says so.
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// scriptSpellings rewrites the single-dash long options of the command
// args run (command.dashWords), up to a "--".
func scriptSpellings(root *cobra.Command, args []string) []string {
	c, _, err := root.Find(args)
	if err != nil || c == root {
		return args
	}
	rc, ok := lookup(c.Name())
	if !ok || len(rc.dashWords) == 0 {
		return args
	}
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "--" {
			break
		}
		if w, ok := rc.dashWords[a]; ok {
			out[i] = w
		}
	}
	return out
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

// Root is ibtool's command tree, every command registered, for programs
// that document it (internal/cmd/genman writes its man pages). Its
// commands are not meant to be run.
func Root() *cobra.Command {
	e := &Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Retries: -1, MlxEPI: true}
	root := newRoot(e)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
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
	pf.IntVar(&e.Retries, "retries", -1, "tries per MAD beyond the first")
	// -1 is the library's default, which is 2.
	pf.Lookup("retries").DefValue = "2"
	pf.CountVarP(&e.Debug, "debug", "d", "trace MADs: -d one line per RPC, -dd full decodes")
	pf.CountVarP(&e.Verbose, "verbose", "v", "more detail: -v error chains, -vv packet dumps")
	pf.BoolVar(&e.JSON, "json", false, "print a versioned JSON document instead of text")
	pf.BoolVar(&e.SA, "sa", false, "read NodeInfo, PortInfo, SwitchInfo, tables ... from SA records instead of SMPs, discover by SA (python-rdma --sa); Sets stay SMPs")
	pf.StringVarP(&e.Config, "config", "z", "", "use config file, default: "+ibdiagconf.DefaultPath)
	pf.StringVarP(&e.mkeyArg, "m_key", "y", "", "M_Key to use in request (not a number: ask for it on the terminal; default ibdiag.conf's m_key)")
	pf.StringVar(&e.smkeyArg, "smkey", "", "SM_Key of SA queries (not a number: ask for it on the terminal; default ibdiag.conf's sa_key, else 0, untrusted)")
	pf.StringVarP(&e.pkeyIdxArg, "pkey-idx", "Y", "0", "P_Key table index for outgoing SA/GMP MADs (0 to 65535; SMPs always use index 0)")
	pf.StringVar(&e.SAPath, "sa-path", "", "send SA queries along this path (a LID or a python-rdma path spec) instead of to the local port's SM LID")
	pf.StringVarP(&e.SMPort, "sm_port", "s", "", "SM port lid: send SA queries to this LID")
	pf.BoolVarP(&e.Errors, "errors", "e", false, "show send and receive errors (one line per MAD that fails, on stderr)")
	pf.BoolVarP(&e.Version, "version", "V", false, "show version")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return e.setup(cmd) }
	sort.Slice(registry, func(i, j int) bool { return registry[i].name < registry[j].name })
	for _, c := range registry {
		cc := c.make(e)
		cc.Aliases = append(cc.Aliases, c.aliases...)
		e.commonShorthands(cc)
		e.versionAware(cc)
		root.AddCommand(cc)
	}
	e.versionAware(root)
	// ibtool completion bash|zsh|fish|powershell: cobra's own.
	return root
}

// commonShorthands makes room for a command's own -s and -e: the global
// -s (--sm_port) and -e (--errors) are infiniband-diags' common options,
// whose letters mean other things in some commands (ibstat -s, smpdump -s,
// check_lft_balance -e, ...), where, as in the C tools, the command's own
// wins. There the long forms stay, as flags of the command that shadow the
// global ones (pflag would refuse a second -s).
func (e *Env) commonShorthands(c *cobra.Command) {
	fl := c.Flags()
	if fl.Lookup("sm_port") == nil && fl.ShorthandLookup("s") != nil {
		fl.StringVar(&e.SMPort, "sm_port", "", "SM port lid: send SA queries to this LID")
	}
	if fl.Lookup("errors") == nil && fl.ShorthandLookup("e") != nil {
		fl.BoolVar(&e.Errors, "errors", false, "show send and receive errors (one line per MAD that fails, on stderr)")
	}
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
