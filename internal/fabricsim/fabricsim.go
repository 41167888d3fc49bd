package fabricsim

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/ibsimserver"
	"github.com/rdmakit/rdmakit/sim/topo"
)

const usageText = `usage:
  fabricsim serve [flags] TOPOLOGY   serve a fabric over ibsim's protocol
  fabricsim gen GENERATOR            write a generated topology file
  fabricsim ctl [flags] COMMAND...   send a command to a running server
TOPOLOGY is a topology file (ibnetdiscover/ibsim format) or a generator;
GENERATOR is fattree:k=4,n=2 | leafspine:leaves=4,spines=2,hosts=8,uplinks=4 |
dragonfly:a=4,p=2,h=2 | random:switches=16,radix=12,hosts=40 (see topo.Generate).
"fabricsim serve -h" lists the serve flags; "fabricsim ctl help" the commands.
`

// Main runs the fabricsim command with its arguments (args[0] is the
// program name) and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	var err error
	switch args[1] {
	case "serve":
		err = serve(ctx, args[2:], stdin, stdout, stderr)
	case "gen":
		err = gen(args[2:], stdout)
	case "ctl":
		err = ctl(ctx, args[2:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return 0
	default:
		err = usage("unknown command %q", args[1])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "fabricsim: %v\n%s", err, usageText)
		return 2
	}
	fmt.Fprintf(stderr, "fabricsim: %v\n", err)
	return 1
}

// parseInterleaved parses flags that may come before or after the
// positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func gen(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usage("gen takes one GENERATOR")
	}
	t, err := topo.Generate(args[0])
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	if err := topo.Write(w, t); err != nil {
		return err
	}
	return w.Flush()
}

// ServeConfig is what `fabricsim serve` runs.
type ServeConfig struct {
	Topology   string
	NoSM       bool
	SMNode     string
	LMC        int
	SockName   string
	Inet       bool
	Listen     string
	Latency    string
	Faults     string
	Control    string // control socket: a path, @name (abstract), or "-" for none
	LFTCap     int
	MaxClients int
}

// controlAddr is the control socket's default address, beside the ibsim
// sockets of the same base name.
func controlAddr(sock string) string {
	if sock == "" {
		sock = "sim"
	}
	return "@" + sock + ":console"
}

func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c ServeConfig
	fs := flag.NewFlagSet("fabricsim serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.NoSM, "no-sm", false, "no built-in SM or SA: an external OpenSM configures the fabric")
	fs.StringVar(&c.SMNode, "sm", "", "node the built-in SM runs on (default: the first CA)")
	fs.IntVar(&c.LMC, "lmc", 0, "LID mask control the built-in SM gives CA ports")
	fs.StringVar(&c.SockName, "sockname", os.Getenv("IBSIM_SOCKNAME"), "base of the socket names (IBSIM_SOCKNAME; \"sim\")")
	fs.BoolVar(&c.Inet, "inet", false, "serve over UDP (ibsim -r) instead of unix sockets")
	fs.StringVar(&c.Listen, "listen", "", "UDP address in --inet mode (default :7070)")
	fs.StringVar(&c.Latency, "latency", "", "latency model: hop=1us,sma=20us,agent=10us,queue=64,loss=0.1")
	fs.StringVar(&c.Faults, "faults", "", "file of console commands to run before serving")
	fs.StringVar(&c.Control, "control", "", "control socket (path or @abstract; default @SOCKNAME:console; - for none)")
	fs.IntVar(&c.LFTCap, "lftcap", 0, "switches' LinearFDBCap (default 49152; ibsim 0.10 has 30720)")
	fs.IntVar(&c.MaxClients, "max-clients", 0, "client slots (default 64)")
	console := fs.Bool("console", false, "read console commands from stdin")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if len(pos) != 1 {
		return usage("serve takes one TOPOLOGY")
	}
	c.Topology = pos[0]
	var con io.Reader
	if *console {
		con = stdin
	}
	return Serve(ctx, c, con, stdout, stderr)
}

// Serve builds the fabric, brings it up (unless NoSM), applies the
// latency model and faults file, and serves it over ibsim's protocol and
// the control socket until ctx ends. Console commands are read from con
// when it is not nil, their answers written to stdout.
func Serve(ctx context.Context, c ServeConfig, con io.Reader, stdout, stderr io.Writer) error {
	scfg := ibsimserver.Config{SockName: c.SockName, Inet: c.Inet, Addr: c.Listen, MaxClients: c.MaxClients}
	if err := scfg.Validate(); err != nil {
		return usage("--max-clients: %v", err)
	}
	if c.LMC < 0 || c.LMC > 7 {
		return usage("--lmc %d (0 to 7)", c.LMC)
	}
	var lat sim.Latency
	if c.Latency != "" {
		var err error
		if lat, err = ParseLatency(sim.Latency{}, c.Latency); err != nil {
			return fmt.Errorf("--latency: %w", err)
		}
	}
	t, err := topo.Load(c.Topology)
	if err != nil {
		return err
	}
	f, err := sim.NewWithOptions(t, sim.Options{LinearFDBCap: c.LFTCap})
	if err != nil {
		return err
	}
	defer f.Close()
	cons := &Console{F: f}
	if !c.NoSM {
		cfg := sim.SMConfig{Node: c.SMNode, LMC: uint8(c.LMC)}
		if cfg.Node == "" {
			for _, n := range t.Nodes {
				if n.Type == iba.NodeTypeCA {
					cfg.Node, cfg.Port = n.ID, 1
					break
				}
			}
		} else if _, p, ok := f.FindNode(cfg.Node); ok {
			cfg.Port = p
		}
		res, err := f.RunSM(ctx, cfg)
		if err != nil && res == nil {
			return fmt.Errorf("bringing the fabric up: %w", err)
		}
		if err != nil {
			fmt.Fprintf(stderr, "fabricsim: %v\n", err)
		}
		fmt.Fprintf(stderr, "fabricsim: SM on %s: %d switches, %d CAs, %d routers, max LID %d, %d SMPs in %v\n",
			cfg.Node, res.Switches, res.CAs, res.Routers, res.MaxLID, res.SMPs, res.Total.Round(time.Millisecond))
		cons.SM = &cfg
	}
	if c.Latency != "" {
		if err := f.SetLatency(lat); err != nil {
			return fmt.Errorf("--latency: %w", err)
		}
	}
	if c.Faults != "" {
		fh, err := os.Open(c.Faults)
		if err != nil {
			return fmt.Errorf("--faults: %w", err)
		}
		err = cons.Run(ctx, fh, c.Faults)
		fh.Close()
		if err != nil {
			return err
		}
	}
	srv, err := ibsimserver.Listen(f, scfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctlAddr := c.Control
	if ctlAddr == "" {
		ctlAddr = controlAddr(c.SockName)
	}
	if ctlAddr != "-" {
		ln, err := net.Listen("unix", ctlAddr)
		if err != nil {
			srv.Close()
			return fmt.Errorf("control socket %s: %w", ctlAddr, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveControl(ctx, ln, cons)
		}()
	}
	if con != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(con)
			for sc.Scan() && ctx.Err() == nil {
				fmt.Fprintln(stdout, answer(cons.Exec(ctx, sc.Text())))
			}
			if err := sc.Err(); err != nil {
				fmt.Fprintf(stderr, "fabricsim: console: %v; no more console commands\n", err)
			}
		}()
	}
	fmt.Fprintf(stderr, "fabricsim: serving %d nodes of %s on %v, control %s\n", f.NodeCount(), c.Topology, srv.Addr(), ctlAddr)
	err = srv.Serve(ctx)
	cancel()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func answer(s string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if s == "" {
		return "ok"
	}
	return "ok " + s
}

// serveControl answers the control socket: one command per line, one
// answer line each ("ok ..." or "error: ..."), until ctx ends.
func serveControl(ctx context.Context, ln net.Listener, cons *Console) {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer wg.Wait()
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		conns[conn] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				mu.Lock()
				delete(conns, conn)
				mu.Unlock()
				conn.Close()
			}()
			sc := bufio.NewScanner(conn)
			for sc.Scan() {
				if _, err := fmt.Fprintln(conn, answer(cons.Exec(ctx, sc.Text()))); err != nil {
					return
				}
			}
			if err := sc.Err(); err != nil {
				// A line longer than the scanner's 64 KiB: say so
				// before hanging up.
				fmt.Fprintln(conn, answer("", fmt.Errorf("control socket: %w", err)))
			}
		}()
	}
}

// ctl sends one command to a running server's control socket.
func ctl(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fabricsim ctl", flag.ContinueOnError)
	fs.SetOutput(stdout)
	sock := fs.String("sockname", os.Getenv("IBSIM_SOCKNAME"), "the server's socket base name (IBSIM_SOCKNAME)")
	addr := fs.String("control", "", "control socket (default @SOCKNAME:console)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() == 0 {
		return usage("ctl takes a COMMAND")
	}
	if *addr == "" {
		*addr = controlAddr(*sock)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", *addr)
	if err != nil {
		return fmt.Errorf("control socket %s: %w", *addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := fmt.Fprintln(conn, strings.Join(fs.Args(), " ")); err != nil {
		return fmt.Errorf("control socket %s: %w", *addr, err)
	}
	sc := bufio.NewScanner(conn) // answers are one line, at most 64 KiB
	if !sc.Scan() {
		err := sc.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("control socket %s: reading the answer: %w", *addr, err)
	}
	line := strings.TrimSpace(sc.Text())
	if rest, bad := strings.CutPrefix(line, "error: "); bad {
		return errors.New(rest)
	}
	if rest := strings.TrimPrefix(strings.TrimPrefix(line, "ok"), " "); rest != "" {
		fmt.Fprintln(stdout, rest)
	}
	return nil
}
