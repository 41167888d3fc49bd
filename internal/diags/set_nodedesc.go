package diags

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/fabric"
)

func init() {
	register(command{name: "set_nodedesc", aliases: []string{"set_nodedesc.sh"}, make: newSetNodeDesc})
}

// nodeDescMax is the size of NodeDescription (IBA 14.2.5.2), what the
// kernel keeps of a write to node_desc.
const nodeDescMax = 64

// SetNodeDescResult lists the devices' node descriptions, before and after
// a change.
type SetNodeDescResult struct {
	Devices []NodeDescChange `json:"devices"`
}

// NodeDescChange is one device's description; New is set when it was
// written.
type NodeDescChange struct {
	Device string  `json:"device"`
	Old    string  `json:"old"`
	New    *string `json:"new,omitempty"`
}

func newSetNodeDesc(e *Env) *cobra.Command {
	var view bool
	c := &cobra.Command{
		Use:   "set_nodedesc [flags] [NAME]",
		Short: "set or show the node description of the local RDMA devices (python-rdma set_nodedesc)",
		Long: `set_nodedesc writes NAME (UTF-8, at most 64 bytes) to the node_desc file
of every local RDMA device, or only of the one -C or -P selects, and says
what it changed; the SMA then answers NodeDescription with it. Without NAME,
or with --view, it shows the descriptions. (python-rdma's -v for viewing is
ibtool's verbosity flag here; without NAME it shows them anyway.)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSetNodeDesc(e, view, args)
		},
	}
	c.Flags().BoolVar(&view, "view", false, "show every node description, change nothing")
	return c
}

func runSetNodeDesc(e *Env, view bool, args []string) error {
	if e.Fabric != "" && e.Fabric != "umad" {
		return usagef("set_nodedesc writes this machine's sysfs; --fabric %s does not apply", e.Fabric)
	}
	devs, err := device.List(fabric.SysfsRoot())
	if err != nil {
		return fmt.Errorf("listing RDMA devices: %w", err)
	}
	if len(devs) == 0 {
		return fmt.Errorf("%w on this machine", device.ErrNoDevices)
	}
	var only *device.Device
	switch {
	case e.CA != "":
		if only, err = device.FindDevice(devs, e.CA); err != nil {
			return err
		}
	case e.Port != "":
		p, err := device.FindEndPort(devs, e.Port)
		if err != nil {
			return err
		}
		only = p.Device
	}
	var name string
	set := !view && len(args) > 0
	if set {
		name = args[0]
		if !utf8.ValidString(name) {
			return usagef("the node description must be UTF-8")
		}
		if len(name) > nodeDescMax {
			return usagef("the node description is %d bytes; NodeDescription holds %d", len(name), nodeDescMax)
		}
	}
	res := &SetNodeDescResult{Devices: []NodeDescChange{}}
	var text strings.Builder
	for _, d := range devs {
		if only != nil && d.Name != only.Name {
			continue
		}
		ch := NodeDescChange{Device: d.Name, Old: d.NodeDesc}
		if set {
			path := filepath.Join(d.Dir, "node_desc")
			if err := os.WriteFile(path, []byte(name), 0); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("%s has no node description to set (%s)", d.Name, path)
				}
				return fmt.Errorf("setting the node description of %s: %w", d.Name, err)
			}
			n := name
			ch.New = &n
			fmt.Fprintf(&text, "%s: %s -> %s\n", d.Name, quoteDesc(d.NodeDesc), quoteDesc(name))
		} else {
			fmt.Fprintf(&text, "%s: %s\n", d.Name, escapeDesc(d.NodeDesc))
		}
		res.Devices = append(res.Devices, ch)
	}
	if e.JSON {
		return e.writeJSON("set_nodedesc", res)
	}
	_, err = fmt.Fprint(e.Stdout, text.String())
	return err
}

// escapeDesc shows a description as python-rdma's dstr does, escaped like
// a string literal without its quotes; printable Unicode stays as it is.
func escapeDesc(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func quoteDesc(s string) string { return strconv.Quote(s) }
