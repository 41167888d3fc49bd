package diags

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

func init() {
	register(command{name: "ibaddr", make: newIBAddr})
}

// IBAddrResult is the address of a port: its GID and LID range.
type IBAddrResult struct {
	Target   string `json:"target"`
	Port     int    `json:"port"`
	GID      string `json:"gid"`
	LIDStart uint16 `json:"lidStart"`
	LIDEnd   uint16 `json:"lidEnd"`
	LMC      uint8  `json:"lmc"`
}

type ibaddrFlags struct {
	direct, guid     bool
	gid, lid, lidDec bool
	lidArg           bool // python-rdma's --Lid
}

func newIBAddr(e *Env) *cobra.Command {
	var f ibaddrFlags
	c := &cobra.Command{
		Use:   "ibaddr [flags] [<lid|dr_path|guid>] [port]",
		Short: "show the GID and LID range of a port (infiniband-diags ibaddr)",
		Long: `ibaddr reads NodeInfo and PortInfo of a port and prints its GID and LID
range, the local port's without a target.

Examples:
  ibaddr                 # local port's address
  ibaddr 32              # show lid range and gid of lid 32
  ibaddr -G 0x8f1040023  # same but using guid address
  ibaddr -l 32           # show lid range only
  ibaddr -L 32           # show decimal lid range only
  ibaddr -g 32           # show gid address only`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBAddr(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.gid, "gid_show", "g", false, "show gid address only")
	fl.BoolVarP(&f.lid, "lid_show", "l", false, "show lid range only")
	fl.BoolVarP(&f.lidDec, "Lid_show", "L", false, "show lid range (in decimal) only")
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVar(&f.lidArg, "Lid", false, "use LID address argument (python-rdma; -L is the C tool's --Lid_show)")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

// selfTarget is resolve_self: the local port by its LID (by directed route
// 0 while it has none).
func selfTarget(s *session) ibpath.Path {
	if s.local.LID == 0 {
		return ibpath.NewDR(0)
	}
	return ibpath.NewLID(s.local.LID)
}

func runIBAddr(e *Env, f *ibaddrFlags, args []string) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	var target ibpath.Path
	port := 0
	if len(args) > 1 {
		port = int(uint32(cStrtoul(args[1])))
	}
	if len(args) > 0 {
		if target, err = resolveSMPDest(s, args[0], &addrFlags{direct: f.direct, guid: f.guid, lid: f.lidArg}); err != nil {
			return err
		}
	} else {
		target = selfTarget(s)
		port = int(s.local.PortNum)
	}
	var ni iba.NodeInfo
	var pi iba.PortInfo
	if err := s.SubnGet(e.Ctx, target, &ni, 0); err != nil {
		return iberror(err, "can't resolve requested address")
	}
	if err := s.SubnGet(e.Ctx, target, &pi, uint32(port)); err != nil {
		return iberror(err, "can't resolve requested address")
	}
	var gid iba.GID
	binary.BigEndian.PutUint64(gid[:8], pi.GIDPrefix)
	binary.BigEndian.PutUint64(gid[8:], uint64(ni.PortGUID))
	res := &IBAddrResult{Target: portidString(target), Port: port, GID: gid.String(),
		LIDStart: pi.LID, LIDEnd: pi.LID + uint16(1)<<pi.LMC - 1, LMC: pi.LMC}
	if e.JSON {
		return e.writeJSON("ibaddr", res)
	}
	showGID, showLID := f.gid, f.lid || f.lidDec
	if !showGID && !showLID {
		showGID, showLID = true, true
	}
	var b strings.Builder
	if showGID {
		fmt.Fprintf(&b, "GID %s ", res.GID)
	}
	// libibmad's LID arithmetic is in int: the end of the range is not cut
	// to 16 bits.
	end := int(pi.LID) + 1<<pi.LMC - 1
	switch {
	case f.lidDec:
		fmt.Fprintf(&b, "LID start %d end %d", pi.LID, end)
	case showLID:
		fmt.Fprintf(&b, "LID start 0x%x end 0x%x", pi.LID, end)
	}
	b.WriteString("\n")
	_, err = fmt.Fprint(e.Stdout, b.String())
	return err
}
