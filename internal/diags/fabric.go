package diags

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
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
		return nil, fmt.Errorf("--fabric %s: the in-process simulator (fabricsim) is not part of this build yet; "+
			"run a fabric in ibsim and use --fabric ibsim", spec)
	}
	return nil, usagef("--fabric %q: want umad, ibsim[:NODE] or sim:FILE|GENERATOR", spec)
}
