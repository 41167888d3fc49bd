package diags

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/fabric"
)

func init() {
	register(command{name: "ibv_devices", make: newIBVDevices})
}

// IBVDevicesResult lists the verbs devices of this machine.
type IBVDevicesResult struct {
	Devices []IBVDevice `json:"devices"`
}

// IBVDevice is one verbs device and its node GUID.
type IBVDevice struct {
	Name     string `json:"name"`
	NodeGUID string `json:"nodeGUID"`
	// Uverbs is the verbs character device (uverbs0).
	Uverbs string `json:"uverbs"`
}

func newIBVDevices(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "ibv_devices",
		Short: "list the RDMA devices usable through verbs (libibverbs ibv_devices)",
		Long: `ibv_devices lists the RDMA devices of this machine that the kernel's
ib_uverbs exposes, with their node GUIDs, as libibverbs' ibv_devices prints
them. It reads sysfs (RDMAKIT_SYSFS for a fixture tree) and loads no
provider library: libibverbs lists only the devices a provider claims, this
lists every device with a uverbs character device. The fabric flags do not
apply.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBVDevices(e)
		},
	}
}

func runIBVDevices(e *Env) error {
	if e.Fabric != "" && e.Fabric != "umad" {
		return usagef("ibv_devices lists this machine's verbs devices; --fabric %s does not apply", e.Fabric)
	}
	root := fabric.SysfsRoot()
	// libibverbs gives up (ENOSYS) without the uverbs ABI file: ib_uverbs
	// is not loaded.
	if _, err := os.Stat(filepath.Join(root, "class", "infiniband_verbs", "abi_version")); err != nil {
		return &diagExit{code: 1, msg: "Failed to get IB devices list: Function not implemented",
			err: fmt.Errorf("ib_uverbs is not loaded (%s/class/infiniband_verbs/abi_version: %w)", root, err)}
	}
	devs, err := device.List(root)
	if err != nil {
		return fmt.Errorf("listing RDMA devices: %w", err)
	}
	res := &IBVDevicesResult{Devices: []IBVDevice{}}
	for _, d := range devs {
		if d.Uverbs == nil {
			continue
		}
		res.Devices = append(res.Devices, IBVDevice{Name: d.Name, NodeGUID: fmt.Sprintf("%016x", uint64(d.NodeGUID)), Uverbs: d.Uverbs.Name})
	}
	if e.JSON {
		return e.writeJSON("ibv_devices", res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    %-16s\t   node GUID\n", "device")
	fmt.Fprintf(&b, "    %-16s\t----------------\n", "------")
	for _, d := range res.Devices {
		fmt.Fprintf(&b, "    %-16s\t%s\n", d.Name, d.NodeGUID)
	}
	_, err = fmt.Fprint(e.Stdout, b.String())
	return err
}

// diagExit is a failure a C tool reports with its own message and exit
// status (perror and return 1, ...); -v adds the cause.
type diagExit struct {
	code int
	msg  string
	err  error
}

// Error is the C tool's message alone; -v shows the cause below it.
func (d *diagExit) Error() string { return d.msg }
func (d *diagExit) Unwrap() error { return d.err }
func (d *diagExit) ExitCode() int { return d.code }
