package fabric

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
	"github.com/rdmakit/rdmakit/umad"
)

// EnvVar names the environment variable that selects the fabric when the
// caller gives none (ibtool's --fabric).
const EnvVar = "RDMAKIT_FABRIC"

// SysfsEnv names the environment variable that points the device layer at
// another sysfs tree than /sys (test fixtures).
const SysfsEnv = "RDMAKIT_SYSFS"

// ErrBadURI matches the errors of a fabric string that cannot be opened as
// written (an unknown scheme, an argument where none is allowed): a usage
// error, not a fault of the fabric.
var ErrBadURI = errors.New("invalid fabric")

// URIError is a fabric string, or an option, that cannot be used as given.
type URIError struct {
	URI    string
	Reason string
}

func (e *URIError) Error() string { return fmt.Sprintf("fabric %q: %s", e.URI, e.Reason) }

// Is matches ErrBadURI.
func (e *URIError) Is(target error) bool { return target == ErrBadURI }

// Default is the fabric string in effect when the caller gives none: the
// value of RDMAKIT_FABRIC, else "umad".
func Default() string {
	if v := os.Getenv(EnvVar); v != "" {
		return v
	}
	return "umad"
}

// SysfsRoot is the sysfs tree the device layer reads: RDMAKIT_SYSFS when
// set, else /sys.
func SysfsRoot() string {
	if v := os.Getenv(SysfsEnv); v != "" {
		return v
	}
	return "/sys"
}

type options struct {
	timeout  time.Duration
	retries  int
	trace    func(mad.TraceEvent)
	sysfs    string
	ca, port string
	viaSA    bool
	serve    bool
	madOpts  []mad.Option
	mkey     uint64
	smkey    uint64
	pkeyIdx  uint16
	saPath   mad.Target
}

// An Option sets how Open opens the fabric and how its MAD client behaves.
type Option func(*options)

// The limits of WithTimeout and WithRetries: Open and New refuse a longer
// wait or more retries (a flag in the wrong unit, an overflow) with a
// *URIError.
const (
	MaxTimeout = mad.MaxTimeout
	MaxRetries = 100
)

// WithTimeout sets the time one MAD try waits for its reply (mad.WithTimeout;
// the default is mad's, 1 s, or what a path's packet lifetime gives); 0
// keeps the default, more than MaxTimeout is refused.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithRetries sets how many times a MAD is sent again after its first try
// times out (the C tools' --retries; the default gives 3 tries in all).
// Negative keeps the default; more than MaxRetries is refused.
func WithRetries(n int) Option { return func(o *options) { o.retries = n } }

// WithTrace calls f for every MAD sent and received (ibtool -d).
func WithTrace(f func(mad.TraceEvent)) Option { return func(o *options) { o.trace = f } }

// WithSysfs reads RDMA devices from another sysfs tree than SysfsRoot's.
func WithSysfs(root string) Option { return func(o *options) { o.sysfs = root } }

// WithEndPort selects the local end port as ibtool's -C and -P do
// (device.SelectEndPort): ca is a device name or node GUID, port a port
// number or any end port string. With sim: fabrics ca names the node to
// attach to (its topology name or description) and port its port number.
// ibsim fabrics name their node in the string (ibsim:NODE) instead.
func WithEndPort(ca, port string) Option { return func(o *options) { o.ca, o.port = ca, port } }

// WithSA makes Fabric.SubnGet answer from the SA's records where the SA
// keeps the attribute (python-rdma's --sa, package sa's SMP adapter), and
// the resolver turn directed routes into LIDs from the SA's LinkRecords.
func WithSA() Option { return func(o *options) { o.viaSA = true } }

// WithServe says the program will answer unsolicited requests (ibping -S):
// on an ibsim fabric the transport attaches as its node's SM client, the
// only client ibsim hands such requests to.
func WithServe() Option { return func(o *options) { o.serve = true } }

// WithMKey puts M_Key k into every SMP whose route carries none
// (mad.WithMKey): on a subnet whose ports are M_Key protected (IBA
// 14.2.4) Sets, and at protection levels 2 and 3 Gets, are answered only
// with the key. infiniband-diags' -y/--m_key and ibdiag.conf's m_key.
func WithMKey(k uint64) Option { return func(o *options) { o.mkey = k } }

// WithSMKey puts SM_Key k into every SA request whose route carries none
// (mad.WithSMKey; IBA 15.2.1.1). saquery's --smkey and ibdiag.conf's
// sa_key.
func WithSMKey(k uint64) Option { return func(o *options) { o.smkey = k } }

// WithPKeyIndex sends every GMP (SA queries, PMA, vendor and congestion
// MADs) whose route names no P_Key index with index i of the local port's
// P_Key table (mad.WithPKeyIndex; IBA 10.9.2): infiniband-diags' -Y/
// --pkey-idx, for a fabric whose management runs in a partition other than
// the default one. SMPs keep index 0.
func WithPKeyIndex(i uint16) Option { return func(o *options) { o.pkeyIdx = i } }

// WithSAPath sends SA queries, of Fabric.SA, the resolver and WithSA,
// along t instead of to the SM LID and SL the local port reports
// (infiniband-diags' -s/--sm_port, python-rdma's --sa-path).
func WithSAPath(t mad.Target) Option { return func(o *options) { o.saPath = t } }

// WithMADOptions passes further options to the MAD client.
func WithMADOptions(opts ...mad.Option) Option {
	return func(o *options) { o.madOpts = append(o.madOpts, opts...) }
}

func collect(opts []Option) (*options, error) {
	o := &options{retries: -1}
	for _, f := range opts {
		f(o)
	}
	if o.timeout < 0 {
		return nil, &URIError{Reason: "the MAD timeout must not be negative"}
	}
	if o.timeout > MaxTimeout {
		return nil, &URIError{Reason: fmt.Sprintf("a MAD timeout of %v is more than %v", o.timeout, MaxTimeout)}
	}
	if o.retries > MaxRetries {
		return nil, &URIError{Reason: fmt.Sprintf("%d retries is more than %d", o.retries, MaxRetries)}
	}
	if o.sysfs == "" {
		o.sysfs = SysfsRoot()
	}
	return o, nil
}

// A Fabric is an open fabric: the MAD client on the local end port, that
// port, and a resolver for targets. Close it when done.
type Fabric struct {
	// URI is the fabric string it was opened from ("" for New).
	URI string
	// MAD is the client every RPC goes through; safe for concurrent use.
	MAD *mad.Client
	// Local is the end port the MADs leave from.
	Local mad.LocalPort
	// Resolver turns targets into SMP and GMP destinations (through the
	// SA where a target needs it).
	Resolver *ibpath.Resolver
	// Sim is the simulated fabric behind a sim: URI, nil for the others:
	// a program can inject faults or traffic into it.
	Sim *sim.Fabric

	smp    mad.SubnGetter
	saPath mad.Target
}

// Open opens the fabric the string names (see the package doc; "" means
// Default()) and reads its local end port.
func Open(ctx context.Context, uri string, opts ...Option) (*Fabric, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, withURI(err, uri)
	}
	if uri == "" {
		uri = Default()
	}
	t, sf, err := openTransport(ctx, uri, o)
	if err != nil {
		return nil, err
	}
	f, err := newFabric(ctx, t, o)
	if err != nil {
		return nil, err
	}
	f.URI, f.Sim = uri, sf
	return f, nil
}

// New puts a MAD client, the local port and a resolver on a transport the
// caller opened; the Fabric then owns the transport.
func New(ctx context.Context, t mad.Transport, opts ...Option) (*Fabric, error) {
	o, err := collect(opts)
	if err != nil {
		t.Close()
		return nil, err
	}
	return newFabric(ctx, t, o)
}

func newFabric(ctx context.Context, t mad.Transport, o *options) (*Fabric, error) {
	mopts := append([]mad.Option{}, o.madOpts...)
	if o.timeout > 0 {
		mopts = append(mopts, mad.WithTimeout(o.timeout))
	}
	if o.retries >= 0 {
		mopts = append(mopts, mad.WithRetries(o.retries+1))
	}
	if o.trace != nil {
		mopts = append(mopts, mad.WithTrace(o.trace))
	}
	if o.mkey != 0 {
		mopts = append(mopts, mad.WithMKey(o.mkey))
	}
	if o.smkey != 0 {
		mopts = append(mopts, mad.WithSMKey(o.smkey))
	}
	if o.pkeyIdx != 0 {
		mopts = append(mopts, mad.WithPKeyIndex(o.pkeyIdx))
	}
	mc := mad.NewClient(t, mopts...)
	lp, err := mc.LocalPort(ctx)
	if err != nil {
		mc.Close()
		return nil, fmt.Errorf("reading the local port: %w", err)
	}
	f := &Fabric{MAD: mc, Local: lp, saPath: o.saPath}
	f.Resolver = &ibpath.Resolver{MAD: mc, SA: f.SA()}
	if o.viaSA {
		f.smp = sa.NewSMP(f.SA())
		// A directed route goes to a LID through the SA's records too:
		// --sa sends no SMP at all.
		f.Resolver.DRViaSA = true
	}
	return f, nil
}

// Close stops the MAD client and closes the transport (detaching from an
// ibsim server, releasing the umad device).
func (f *Fabric) Close() error { return f.MAD.Close() }

// SA is an SA client on the fabric's MAD client: along WithSAPath's path,
// else to the SM LID and SL of the local port. opts come after, and may
// change that.
func (f *Fabric) SA(opts ...sa.Option) *sa.Client {
	if f.saPath != nil {
		opts = append([]sa.Option{sa.WithTarget(f.saPath)}, opts...)
	}
	return sa.New(f.MAD, opts...)
}

// ViaSA reports whether SubnGet answers from SA records (WithSA).
func (f *Fabric) ViaSA() bool { return f.smp != nil }

// SubnGet reads an SMP attribute: by SMP, or from the SA's records with
// WithSA for the attributes the SA keeps. SubnSet always goes out as an
// SMP on MAD.
func (f *Fabric) SubnGet(ctx context.Context, t mad.Target, attr iba.Attribute, mod uint32) error {
	if f.smp != nil {
		return f.smp.SubnGet(ctx, t, attr, mod)
	}
	return f.MAD.SubnGet(ctx, t, attr, mod)
}

var _ mad.SubnGetter = (*Fabric)(nil)

// OpenTransport opens the transport the string names without a MAD client
// on it, for programs that serve MADs (ibping -S) or bring their own
// client. A sim: fabric's simulator is returned too (nil otherwise).
func OpenTransport(ctx context.Context, uri string, opts ...Option) (mad.Transport, *sim.Fabric, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, nil, withURI(err, uri)
	}
	if uri == "" {
		uri = Default()
	}
	return openTransport(ctx, uri, o)
}

func withURI(err error, uri string) error {
	var ue *URIError
	if errors.As(err, &ue) && ue.URI == "" {
		ue.URI = uri
	}
	return err
}

func openTransport(ctx context.Context, uri string, o *options) (mad.Transport, *sim.Fabric, error) {
	kind, arg, hasArg := strings.Cut(uri, ":")
	switch kind {
	case "umad":
		if hasArg {
			if o.ca != "" || o.port != "" {
				return nil, nil, &URIError{URI: uri, Reason: "names its end port; -C and -P cannot select another"}
			}
			return openUmad(uri, "", arg, o)
		}
		return openUmad(uri, o.ca, o.port, o)
	case "ibsim":
		if o.ca != "" || o.port != "" {
			return nil, nil, &URIError{URI: uri, Reason: "-C and -P select a local device; with ibsim name the node as ibsim:NODE"}
		}
		cfg := ibsim.ConfigFromEnv()
		if arg != "" {
			cfg.Node = arg
		}
		cfg.ISSM = o.serve
		t, err := ibsim.Dial(ctx, cfg)
		return t, nil, err
	case "sim":
		return openSim(ctx, uri, arg, o)
	}
	// python-rdma's end port syntax: a device, device/port, GID or GUID.
	if o.ca != "" || o.port != "" {
		return nil, nil, &URIError{URI: uri, Reason: "names its end port; -C and -P cannot select another"}
	}
	return openUmad(uri, "", uri, o)
}

// openUmad opens the kernel's umad devices of the end port ca and port
// select.
func openUmad(uri, ca, port string, o *options) (mad.Transport, *sim.Fabric, error) {
	devs, err := device.List(o.sysfs)
	if err != nil && !errors.Is(err, device.ErrNoDevices) {
		return nil, nil, fmt.Errorf("listing RDMA devices: %w", err)
	}
	p, err := device.SelectEndPort(devs, ca, port)
	isUmad := uri == "umad" || strings.HasPrefix(uri, "umad:")
	if errors.Is(err, device.ErrNoDevices) {
		if !isUmad {
			return nil, nil, &URIError{URI: uri, Reason: "want umad, umad:ENDPORT, ibsim[:NODE], sim:FILE|GENERATOR, " +
				"or an end port of a local RDMA device (this machine has none)"}
		}
		return nil, nil, &NoDeviceError{URI: uri}
	}
	if err != nil {
		if errors.Is(err, device.ErrInvalidSpec) && !isUmad {
			return nil, nil, &URIError{URI: uri, Reason: "want umad, umad:ENDPORT, ibsim[:NODE], sim:FILE|GENERATOR, or an end port (device, device/port, port GID, port GUID)"}
		}
		return nil, nil, fmt.Errorf("selecting the local port: %w", err)
	}
	// A planarized HCA's SMPs go through another device than its GMPs:
	// both are opened, as infiniband-diags 56 opens them.
	t, err := umad.OpenEndPort(p)
	return t, nil, err
}

// ErrNoDevice matches NoDeviceError.
var ErrNoDevice = device.ErrNoDevices

// NoDeviceError is a umad fabric on a machine without RDMA devices. Its
// message suggests the simulator; rdmakit never falls back to it silently.
type NoDeviceError struct{ URI string }

func (e *NoDeviceError) Error() string {
	return fmt.Sprintf("%v on this machine (fabric %q): to try without hardware, use a simulated fabric, "+
		"for example --fabric sim:fattree:k=4,n=2 (in-process) or --fabric ibsim (a running ibsim or fabricsim)", device.ErrNoDevices, e.URI)
}

// Is matches device.ErrNoDevices.
func (e *NoDeviceError) Is(target error) bool { return target == device.ErrNoDevices }

// openSim builds the in-process fabric of a sim:FILE or sim:GENERATOR
// string, brings it up with the built-in SM and attaches to an end port:
// the node WithEndPort's ca names (its topology name or description) and
// its port, by default the first CA's first port, where the SM runs too.
func openSim(ctx context.Context, uri, spec string, o *options) (mad.Transport, *sim.Fabric, error) {
	if spec == "" {
		return nil, nil, &URIError{URI: uri, Reason: "needs a topology file or a generator, for example sim:fattree:k=4,n=2"}
	}
	t, err := topo.Load(spec)
	if err != nil {
		return nil, nil, err
	}
	f, err := sim.New(t)
	if err != nil {
		return nil, nil, fmt.Errorf("building the simulated fabric %s: %w", spec, err)
	}
	node, port := "", 0
	for _, n := range t.Nodes {
		if n.Type == iba.NodeTypeCA {
			node, port = n.ID, 1
			break
		}
	}
	if node == "" {
		node, port = f.DefaultNode()
	}
	if _, err := f.RunSM(ctx, sim.SMConfig{Node: node, Port: port}); err != nil {
		return nil, nil, fmt.Errorf("bringing up the simulated fabric %s: %w", spec, err)
	}
	if o.ca != "" {
		id, p, ok := f.FindNode(o.ca)
		if !ok {
			return nil, nil, &URIError{URI: uri, Reason: fmt.Sprintf("no node %q in the simulated fabric", o.ca)}
		}
		node, port = id, p
	}
	if o.port != "" {
		n, err := strconv.Atoi(o.port)
		if err != nil || n < 0 || n > 254 {
			return nil, nil, &URIError{URI: uri, Reason: fmt.Sprintf("port %q: with a sim: fabric give a port number", o.port)}
		}
		port = n
	}
	tr, err := f.Attach(node, port)
	if err != nil {
		return nil, nil, err
	}
	return tr, f, nil
}
