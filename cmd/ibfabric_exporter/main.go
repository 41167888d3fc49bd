// Command ibfabric_exporter is a Prometheus exporter for a whole
// InfiniBand fabric: run on one node of the fabric (or against a
// simulator), it serves the counters, link states and topology of every
// switch and channel adapter port on /metrics. It is flags around package
// promfabric, which docs/exporter.md describes with its metrics.
//
//	ibfabric_exporter --fabric sim:leafspine:leaves=4,spines=2,hosts=4,uplinks=2
//	ibfabric_exporter --fabric ibsim:hca1 --web.listen-address :10470
//
// It stops on SIGTERM or SIGINT, finishing the requests under way, and
// exits 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/promfabric"
	"github.com/rdmakit/rdmakit/subnet"
)

// DefaultListen is the default listen address. Prometheus' list of
// default exporter ports has no free number left in its range
// (9100-9999); this one lies outside it and outside the registered
// services near it, and apart from infiniband_exporter's 9315 and
// infiniband-exporter's 9683, so the exporters can run side by side.
const DefaultListen = ":10470"

func main() {
	if os.Getenv("GOGC") == "" {
		// A daemon that holds the topology (about 3 KB a node) and makes
		// a few hundred bytes of garbage a port each scrape: collect at
		// half the live heap's growth rather than all of it, for a lower
		// peak (on a 46,600-node fabric about 100 MB less) at a little
		// more CPU.
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(code)
}

// run is the program; ready, when set, is told the address it listens on.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	fs := pflag.NewFlagSet("ibfabric_exporter", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("web.listen-address", DefaultListen, "address to serve /metrics and the landing page on")
	path := fs.String("web.telemetry-path", "/metrics", "path of the metrics")
	uri := fs.String("fabric", fabric.Default(), "fabric: umad, umad:ENDPORT, ibsim[:NODE], sim:FILE|GENERATOR (environment "+fabric.EnvVar+")")
	ca := fs.StringP("Ca", "C", "", "local device (umad) or node (sim:) to use")
	port := fs.StringP("Port", "P", "", "local port to use")
	nameMap := fs.String("node-name-map", "", "node name map file: names for node GUIDs")
	scrapeTimeout := fs.Duration("scrape-timeout", promfabric.DefaultScrapeTimeout, "bound of a scrape's counter reads (a shorter Prometheus scrape timeout bounds them further)")
	refresh := fs.Duration("topology.refresh-interval", promfabric.DefaultRefreshInterval, "how often the topology is discovered again")
	minRefresh := fs.Duration("topology.min-refresh-interval", promfabric.DefaultMinRefreshInterval, "least time between two discoveries (also the early ones a scrape asks for)")
	refreshTimeout := fs.Duration("topology.refresh-timeout", promfabric.DefaultRefreshTimeout, "bound of one discovery")
	forget := fs.Duration("topology.forget-after", promfabric.DefaultForgetAfter, "how long a node the discoveries no longer reach stays exported, node_up 0")
	madTimeout := fs.Duration("mad.timeout", 500*time.Millisecond, "how long one MAD try waits for its reply")
	retries := fs.Int("mad.retries", 1, "how many times an unanswered MAD is sent again")
	mkey := fs.Uint64("mad.m-key", 0, "M_Key of the discovery's SMPs (a fabric M_Key protected at level 2 or 3 answers Gets only with it)")
	pkeyIndex := fs.Uint16("mad.pkey-index", 0, "index in the local port's P_Key table of the counter reads (where the PMAs answer only in a partition other than the default)")
	inFlight := fs.Int("max-in-flight", 0, "reads outstanding at once (default 256)")
	perNode := fs.Int("per-node", 0, "reads outstanding at once to one node (default 4)")
	cas := fs.Bool("collect.cas", true, "export channel adapters and routers too (false: switches only)")
	logLevel := fs.String("log.level", "info", "log level: debug, info, warn, error")
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ibfabric_exporter [flags]\n\nA Prometheus exporter for a whole InfiniBand fabric.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ibfabric_exporter: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *version {
		v, r := promfabric.Version()
		fmt.Fprintf(stdout, "ibfabric_exporter %s (revision %s, %s)\n", v, r, runtime.Version())
		return 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "ibfabric_exporter: --log.level %q: %v\n", *logLevel, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var names *namemap.Map
	if *nameMap != "" {
		var err error
		if names, err = namemap.Load(*nameMap); err != nil {
			fmt.Fprintf(stderr, "ibfabric_exporter: --node-name-map: %v\n", err)
			return 1
		}
	}
	opts := []fabric.Option{fabric.WithTimeout(*madTimeout), fabric.WithRetries(*retries),
		fabric.WithMKey(*mkey), fabric.WithPKeyIndex(*pkeyIndex)}
	if *ca != "" || *port != "" {
		opts = append(opts, fabric.WithEndPort(*ca, *port))
	}
	o := promfabric.Options{
		Names: names, ScrapeTimeout: *scrapeTimeout,
		RefreshInterval: *refresh, MinRefreshInterval: *minRefresh, RefreshTimeout: *refreshTimeout, ForgetAfter: *forget,
		MaxInFlight: *inFlight, PerNode: *perNode, Logger: log,
	}
	if !*cas {
		o.Want = func(n *subnet.Node) bool { return n.Type == iba.NodeTypeSwitch }
	}
	if strings.HasPrefix(*uri, "sim:") {
		// An in-process simulator cannot be lost, and opening it again
		// would make a new one: open it once, here.
		f, err := fabric.Open(ctx, *uri, opts...)
		if err != nil {
			fmt.Fprintf(stderr, "ibfabric_exporter: %v\n", err)
			return 1
		}
		defer f.Close()
		if f.Sim != nil {
			defer f.Sim.Close()
		}
		o.Fabric = f
	} else {
		// A fabric string that cannot work, or a machine without RDMA
		// devices, is an error now; a server that is not up yet is not:
		// Run keeps opening the fabric until it answers.
		first, err := fabric.Open(ctx, *uri, opts...)
		switch {
		case errors.Is(err, fabric.ErrBadURI):
			fmt.Fprintf(stderr, "ibfabric_exporter: %v\n", err)
			return 2
		case errors.Is(err, fabric.ErrNoDevice):
			fmt.Fprintf(stderr, "ibfabric_exporter: %v\n", err)
			return 1
		case err != nil:
			log.Warn("opening the fabric; trying again in the background", "fabric", *uri, "err", err)
		}
		o.Open = func(ctx context.Context) (*fabric.Fabric, error) {
			if first != nil {
				f := first
				first = nil
				return f, nil
			}
			return fabric.Open(ctx, *uri, opts...)
		}
	}
	e, err := promfabric.New(o)
	if err != nil {
		fmt.Fprintf(stderr, "ibfabric_exporter: %v\n", err)
		return 2
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(promfabric.NewBuildInfo(), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	mux := http.NewServeMux()
	mux.Handle(*path, e.Handler(reg))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		v, rev := promfabric.Version()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = landing.Execute(w, struct{ Path, Fabric, Version, Revision string }{*path, *uri, v, rev})
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "ibfabric_exporter: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- e.Run(ctx) }()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(ln) }()
	log.Info("serving", "address", ln.Addr().String(), "path", *path, "fabric", *uri)
	if ready != nil {
		ready(ln.Addr().String())
	}
	code := 0
	select {
	case <-ctx.Done():
	case err := <-srvDone:
		log.Error("serving", "err", err)
		code = 1
	}
	log.Info("shutting down")
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutting down the server", "err", err)
	}
	cancel()
	<-runDone
	return code
}

var landing = template.Must(template.New("landing").Parse(`<!DOCTYPE html>
<html><head><title>ibfabric_exporter</title></head>
<body>
<h1>ibfabric_exporter</h1>
<p>A Prometheus exporter for a whole InfiniBand fabric: {{.Fabric}}</p>
<p><a href="{{.Path}}">Metrics</a></p>
<p>Version {{.Version}}, revision {{.Revision}}.</p>
</body></html>
`))
