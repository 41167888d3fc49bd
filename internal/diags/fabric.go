package diags

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
	"github.com/rdmakit/rdmakit/umad"
)

// FabricEnv names the environment variable that selects the fabric when
// --fabric is not given.
const FabricEnv = "RDMAKIT_FABRIC"

// SysfsEnv lets tests point the device layer at a fixture tree instead of
// /sys.
const SysfsEnv = "RDMAKIT_SYSFS"

// fabricSpec is the --fabric value in effect.
func (e *Env) fabricSpec() string {
	if e.Fabric != "" {
		return e.Fabric
	}
	if v := os.Getenv(FabricEnv); v != "" {
		return v
	}
	return "umad"
}

// openTransport opens the fabric the flags select (DESIGN.md, "Choosing the
// fabric: one flag, three worlds").
func (e *Env) openTransport() (mad.Transport, error) {
	spec := e.fabricSpec()
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "umad":
		if arg != "" {
			return nil, usagef("--fabric umad takes no argument (select the port with -C and -P)")
		}
		root := os.Getenv(SysfsEnv)
		if root == "" {
			root = "/sys"
		}
		devs, err := device.List(root)
		if err != nil && !errors.Is(err, device.ErrNoDevices) {
			return nil, fmt.Errorf("listing RDMA devices: %w", err)
		}
		port, err := device.SelectEndPort(devs, e.CA, e.Port)
		if errors.Is(err, device.ErrNoDevices) {
			return nil, fmt.Errorf("%w on this machine: to try ibtool without hardware, use a simulated fabric, "+
				"for example --fabric ibsim (a running ibsim or fabricsim) or --fabric sim:FILE", err)
		}
		if err != nil {
			return nil, fmt.Errorf("selecting the local port: %w", err)
		}
		return umad.Open(port)
	case "ibsim":
		cfg := ibsim.ConfigFromEnv()
		if arg != "" {
			cfg.Node = arg
		}
		if e.CA != "" || e.Port != "" {
			return nil, usagef("-C and -P select a local device; with --fabric ibsim name the node as ibsim:NODE")
		}
		return ibsim.Dial(e.Ctx, cfg)
	case "sim":
		return e.openSim(arg)
	}
	return nil, usagef("--fabric %q: want umad, ibsim[:NODE] or sim:FILE|GENERATOR", spec)
}

// openSim builds the in-process fabric of a sim:FILE or sim:GENERATOR URI,
// brings it up with the built-in SM and attaches to an end port: the node
// -C names (by its topology id or description) and its port -P, by default
// the first CA's first port, where the SM runs too.
func (e *Env) openSim(spec string) (mad.Transport, error) {
	if spec == "" {
		return nil, usagef("--fabric sim: needs a topology file or a generator, for example sim:fattree:k=4,n=2")
	}
	t, err := topo.Load(spec)
	if err != nil {
		return nil, err
	}
	f, err := sim.New(t)
	if err != nil {
		return nil, fmt.Errorf("building the simulated fabric %s: %w", spec, err)
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
	if _, err := f.RunSM(e.Ctx, sim.SMConfig{Node: node, Port: port}); err != nil {
		return nil, fmt.Errorf("bringing up the simulated fabric %s: %w", spec, err)
	}
	if e.CA != "" {
		id, p, ok := f.FindNode(e.CA)
		if !ok {
			return nil, fmt.Errorf("--Ca %q: no such node in the simulated fabric %s", e.CA, spec)
		}
		node, port = id, p
	}
	if e.Port != "" {
		n, err := strconv.Atoi(e.Port)
		if err != nil || n < 0 || n > 255 {
			return nil, usagef("--Port %q: with --fabric sim give a port number", e.Port)
		}
		port = n
	}
	return f.Attach(node, port)
}
