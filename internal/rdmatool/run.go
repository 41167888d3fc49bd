// Package rdmatool is the command behind cmd/rdmatool: iproute2's rdma(8)
// grammar (objects dev, link, resource, system, statistic, monitor; any
// prefix of a keyword; DEV, DEV/ and DEV/PORT), its options and its text and
// JSON output, over package nldev. Output matches iproute2 6.15's rdma byte
// for byte except for the bugs fixed on purpose, listed in docs/rdmatool.md
// with what iproute2 6.1 prints differently.
package rdmatool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmakit/rdmakit/nldev"
	"golang.org/x/sys/unix"
)

// Version is printed by -V; it names the iproute2 release whose output
// rdmatool reproduces.
const Version = "iproute2-6.15.0"

// Run executes one rdmatool command line (without the program name) and
// returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, stdout, stderr, func() (*nldev.Conn, error) { return nldev.Dial(nil) })
}

// errReported is returned once the failure has been described on stderr.
var errReported = errors.New("reported")

type options struct {
	details, driverDetails bool
	json, pretty, raw      bool
	oneline, force         bool
	batch                  string
	haveBatch              bool
}

// rd is the state of one invocation, as iproute2's struct rd.
type rd struct {
	ctx    context.Context
	name   string // program name for usage texts
	opt    options
	args   []string
	out    *printer
	stderr io.Writer
	conn   *nldev.Conn
	devs   []nldev.Device // from the start-up dump: names, indices, port counts

	filters []filter
	devIdx  uint32
	portIdx uint32
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, dial func() (*nldev.Conn, error)) int {
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	r := &rd{ctx: ctx, name: "rdma", stderr: stderr}
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "rdmatool" {
		r.name = "rdmatool"
	}
	rest, code, done := r.parseOptions(args, bw)
	if done {
		return code
	}
	r.out = &printer{w: bw, json: r.opt.json, pretty: r.opt.pretty, oneline: r.opt.oneline}
	r.stderr = stderr

	conn, err := dial()
	if err != nil {
		if errors.Is(err, nldev.ErrNotSupported) {
			fmt.Fprintf(stderr, "%s: this kernel has no RDMA netlink (%v): load an RDMA driver such as rdma_rxe or ib_core\n", r.name, err)
		} else {
			fmt.Fprintf(stderr, "%s: cannot open the RDMA netlink socket: %v\n", r.name, err)
		}
		return 1
	}
	defer conn.Close()
	r.conn = conn
	if err := r.init(); err != nil {
		r.report(err)
		return 1
	}
	if r.opt.haveBatch {
		err = r.batch(r.opt.batch, bw)
	} else {
		err = r.cmd(rest)
	}
	if err != nil {
		r.report(err)
		return 1
	}
	return 0
}

// report prints err unless it has been described already.
func (r *rd) report(err error) {
	if errors.Is(err, errReported) {
		return
	}
	fmt.Fprintf(r.stderr, "error: %v\n", describe(err))
}

// describe turns a kernel error into what happened, in words: the errno as
// strerror(3) spells it (what rdma(8) prints), the kernel's extended-ack
// text, and for a refusal what it takes to be allowed.
func describe(err error) string {
	var oe *nldev.OpError
	if !errors.As(err, &oe) {
		return err.Error()
	}
	s := strerror(oe.Err)
	if oe.Message != "" {
		s += ": " + oe.Message
	}
	switch {
	case errors.Is(oe.Err, unix.EPERM) || errors.Is(oe.Err, unix.EACCES):
		// The kernel checks CAP_NET_ADMIN for every NLDEV command that
		// changes something (RDMA_NL_ADMIN_PERM in nldev.c).
		s += " (" + oe.Op + " needs CAP_NET_ADMIN: run as root)"
	case errors.Is(oe.Err, context.DeadlineExceeded):
		s += " (the kernel did not answer " + oe.Op + ")"
	}
	return s
}

// strerror spells an errno as the C library does ("Operation not
// permitted"); Go's texts are the same words in lower case.
func strerror(err error) string {
	s := err.Error()
	var errno unix.Errno
	if errors.As(err, &errno) && s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

func (r *rd) errorf(format string, a ...any) error {
	fmt.Fprintf(r.stderr, format, a...)
	return errReported
}

// parseOptions handles getopt_long(":Vhdrpjfob:") with the long forms;
// options end at the first non-option word, as iproute2 does (POSIXLY
// ordering is not needed: OBJECT always follows the options).
func (r *rd) parseOptions(args []string, stdout io.Writer) (rest []string, code int, done bool) {
	long := map[string]byte{"version": 'V', "help": 'h', "json": 'j', "pretty": 'p', "details": 'd',
		"raw": 'r', "force": 'f', "batch": 'b', "oneline": 'o'}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		var flags []byte
		var inlineArg string
		hasInline := false
		if strings.HasPrefix(a, "--") {
			n, v, eq := strings.Cut(a[2:], "=")
			c, ok := matchLong(long, n)
			if !ok {
				fmt.Fprintf(r.stderr, "Unknown option.\n")
				r.help(stdout)
				return nil, 1, true
			}
			flags = []byte{c}
			inlineArg, hasInline = v, eq
		} else {
			flags = []byte(a[1:])
		}
		for k := 0; k < len(flags); k++ {
			switch flags[k] {
			case 'V':
				fmt.Fprintf(stdout, "%s utility, %s\n", r.name, Version)
				return nil, 0, true
			case 'h':
				r.help(stdout)
				return nil, 0, true
			case 'p':
				r.opt.pretty = true
			case 'd':
				if r.opt.details {
					r.opt.driverDetails = true
				}
				r.opt.details = true
			case 'r':
				r.opt.raw = true
			case 'j':
				r.opt.json = true
			case 'f':
				r.opt.force = true
			case 'o':
				r.opt.oneline = true
			case 'b':
				switch {
				case hasInline:
					r.opt.batch = inlineArg
				case k+1 < len(flags):
					r.opt.batch = string(flags[k+1:])
				case i+1 < len(args):
					i++
					r.opt.batch = args[i]
				default:
					fmt.Fprintf(r.stderr, "-b option requires an argument\n")
					return nil, 1, true
				}
				r.opt.haveBatch = true
				k = len(flags)
			default:
				fmt.Fprintf(r.stderr, "Unknown option.\n")
				r.help(stdout)
				return nil, 1, true
			}
		}
	}
	return args[i:], 0, false
}

// matchLong accepts any unambiguous prefix of a long option, as getopt_long.
func matchLong(long map[string]byte, n string) (byte, bool) {
	if c, ok := long[n]; ok {
		return c, true
	}
	var found byte
	count := 0
	for k, c := range long {
		if n != "" && strings.HasPrefix(k, n) {
			found = c
			count++
		}
	}
	return found, count == 1
}

func (r *rd) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [ OPTIONS ] OBJECT { COMMAND | help }\n"+
		"       %s [ -f[orce] ] -b[atch] filename\n"+
		"where  OBJECT := { dev | link | resource | monitor | system | statistic | help }\n"+
		"       OPTIONS := { -V[ersion] | -d[etails] | -j[son] | -p[retty] | -r[aw]}\n", r.name, r.name)
}

// init reads the device list once, as iproute2's rd_init: commands resolve
// names and port counts from it.
func (r *rd) init() error {
	devs, err := r.conn.Dev.List(r.ctx)
	if err != nil {
		return err
	}
	for _, d := range devs {
		if !d.Has(nldev.AttrPortIndex) {
			return r.errorf("This tool doesn't support switches yet\n")
		}
	}
	r.devs = devs
	return nil
}

// batch runs the commands of a file ("-" for standard input), one per line,
// as iproute2's do_batch: # comments, backslash continuation, quotes.
func (r *rd) batch(name string, out *bufio.Writer) error {
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return r.errorf("Cannot open file \"%s\" for reading: %s\n", name, errnoText(err))
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	var failed bool
	for sc.Scan() {
		lineNo++
		line := stripComment(sc.Text())
		for strings.HasSuffix(line, "\\") && sc.Scan() {
			lineNo++
			line = line[:len(line)-1] + stripComment(sc.Text())
		}
		words, err := splitArgs(line)
		if err != nil {
			return r.errorf("%v\n", err)
		}
		if len(words) == 0 {
			continue
		}
		r.filters = nil // each command has its own filters
		if err := r.cmd(words); err != nil {
			r.report(err)
			out.Flush()
			fmt.Fprintf(r.stderr, "Command failed %s:%d\n", name, lineNo)
			failed = true
			if !r.opt.force {
				break
			}
		}
		out.Flush()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if failed {
		return errReported
	}
	return nil
}

func stripComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

// splitArgs splits on blanks; a word may be quoted with ' or ".
func splitArgs(line string) ([]string, error) {
	var out []string
	i := 0
	for i < len(line) {
		for i < len(line) && strings.IndexByte(" \t\r\n", line[i]) >= 0 {
			i++
		}
		if i >= len(line) {
			break
		}
		if q := line[i]; q == '\'' || q == '"' {
			j := strings.IndexByte(line[i+1:], q)
			if j < 0 {
				return nil, errors.New("Unterminated quoted string")
			}
			out = append(out, line[i+1:i+1+j])
			i += j + 2
			continue
		}
		j := i
		for j < len(line) && strings.IndexByte(" \t\r\n", line[j]) < 0 {
			j++
		}
		out = append(out, line[i:j])
		i = j
	}
	return out, nil
}

func errnoText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
