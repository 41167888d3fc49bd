package diags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/sa"
)

func init() {
	register(command{name: "set_guid", make: newSetGUID})
}

// SetGUIDResult is the alias GUID asked for and the GUIDInfoRecord the SA
// answered with.
type SetGUIDResult struct {
	LID    uint16          `json:"lid"`
	Slot   int             `json:"slot"`
	GUID   string          `json:"guid"`
	Record json.RawMessage `json:"record"`
}

func newSetGUID(e *Env) *cobra.Command {
	var a addrFlags
	c := &cobra.Command{
		Use:   "set_guid [flags] <target> <slot> <guid>",
		Short: "set an alias GUID on a port through the SA (python-rdma set_guid)",
		Long: `set_guid asks the SA to program an alias GUID into a slot of an end
port's GUIDInfo table: a SubnAdmSet of the GUIDInfoRecord of the port's LID,
block slot/8, with the slot's GUID as the only GUID component. It prints the
record the SA answers with, which shows what the SA set.

Example:
  set_guid 5 1 0x0002c90300001499   # alias GUID in slot 1 of LID 5`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSetGUID(e, args, &a)
		},
	}
	c.Flags().BoolVarP(&a.direct, "Direct", "D", false, "the target is a directed route")
	c.Flags().BoolVarP(&a.lid, "Lid", "L", false, "the target is a LID")
	c.Flags().BoolVarP(&a.guid, "Guid", "G", false, "the target is a port GUID")
	return c
}

func runSetGUID(e *Env, args []string, a *addrFlags) error {
	slot64 := cStrtoul(args[1])
	if strings.TrimSpace(args[1]) == "" || slot64 > 255 {
		return usagef("slot %q: want a GUID table index from 0 to 255", args[1])
	}
	slot := int(slot64)
	guid, err := iba.ParseGUID(args[2])
	if err != nil {
		return usagef("%v", err)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	t, err := s.gmpTarget(args[0], a)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", args[0], err)
	}
	lid := t.Route().Addr.LID
	rec := &iba.GUIDInfoRecord{LID: lid, BlockNum: uint8(slot / 8)}
	rec.GUIDInfo.GUIDBlock[slot%8] = guid
	d := rec.Desc()
	// LID, blockNum and the one GUID: a GUID component not asked for
	// (GID 0 above all, the port's own GUID, which the SA refuses to set)
	// must stay out of the mask.
	var mask uint64
	for _, name := range []string{"LID", "blockNum"} {
		b, err := sa.MaskBits(d, name)
		if err != nil {
			return err
		}
		mask |= b
	}
	block, err := sa.MaskBits(d, "GUIDInfo.GUIDBlock")
	if err != nil {
		return err
	}
	mask |= (block & -block) << (slot % 8)
	c := sa.New(s.mc)
	st, err := c.Target(e.Ctx)
	if err != nil {
		return err
	}
	if err := s.mc.SubnAdmSet(e.Ctx, st, rec, mask); err != nil {
		return fmt.Errorf("setting alias GUID %s in slot %d of LID %d: %w", guid, slot, lid, err)
	}
	b := make([]byte, d.Size)
	if err := rec.MarshalTo(b); err != nil {
		return err
	}
	if e.JSON {
		var j bytes.Buffer
		if err := ibaprint.JSON(&j, d, b); err != nil {
			return err
		}
		return e.writeJSON("set_guid", &SetGUIDResult{LID: lid, Slot: slot, GUID: fmt.Sprintf("0x%016x", uint64(guid)), Record: bytes.TrimSpace(j.Bytes())})
	}
	return ibaprint.Dump(e.Stdout, d, b, ibaprint.DumpOptions{})
}
