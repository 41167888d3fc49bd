package diags

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

func init() {
	register(command{name: "sminfo", make: newSMInfo})
}

// SMInfoResult is the SMInfo attribute (IBA 14.2.5.13) an SM answered,
// and, for a set, what was asked.
type SMInfoResult struct {
	Target        string `json:"target"`
	LID           uint16 `json:"lid"`
	GUID          string `json:"guid"`
	ActivityCount uint32 `json:"activityCount"`
	Priority      uint8  `json:"priority"`
	State         uint8  `json:"state"`
	StateName     string `json:"stateName"`
	// Modifier is the SMInfo control (1 handover, 2 acknowledge, 3
	// disable, 4 standby, 5 discover) of a SubnSet; 0 for a query.
	Modifier uint32 `json:"modifier,omitempty"`
	// Set is what the SubnSet carried.
	Set *SMInfoSet `json:"set,omitempty"`
}

// SMInfoSet is the SMInfo a set sends: the fields -s, -p and -a give.
type SMInfoSet struct {
	ActivityCount uint32 `json:"activityCount"`
	Priority      uint8  `json:"priority"`
	State         uint8  `json:"state"`
}

var smInfoStates = []string{"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"}

type sminfoFlags struct {
	direct, lid, guid bool
	state, prio, act  string
	smkey             string
}

func newSMInfo(e *Env) *cobra.Command {
	var f sminfoFlags
	c := &cobra.Command{
		Use:   "sminfo [flags] [<sm_lid|sm_dr_path>] [modifier]",
		Short: "query or control a subnet manager's SMInfo (infiniband-diags sminfo)",
		Long: `sminfo reads the SMInfo attribute of the subnet manager (the local port's
master SM when no target is given) and prints it. A non-zero modifier makes
it a SubnSet(SMInfo) with that control (1 handover, 2 acknowledge,
3 disable, 4 standby, 5 discover) carrying the state (-s, default 2), the
priority (-p) and the activity count (-a); the SM's answer is printed.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSMInfo(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.state, "state", "s", "2", "set SM state <0-3>")
	fl.StringVarP(&f.prio, "priority", "p", "0", "set SM priority <0-15>")
	fl.StringVarP(&f.act, "activity", "a", "0", "set activity count")
	fl.StringVar(&f.smkey, "sminfo_smkey", "", "SMInfo.SM_Key of the SubnGet or SubnSet (python-rdma; IBA 14.2.5.13)")
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVarP(&f.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

func runSMInfo(e *Env, f *sminfoFlags, args []string) error {
	var mod uint32
	if len(args) > 1 {
		// atoi: junk after the digits is ignored, a word reads as 0.
		mod = uint32(atoi(args[1]))
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	var target ibpath.Path
	if len(args) > 0 {
		if target, err = resolveSMPDest(s, args[0], &addrFlags{direct: f.direct, lid: f.lid, guid: f.guid}); err != nil {
			return err
		}
	} else {
		// resolve_sm_portid: the SM LID and SL the local port knows.
		p := ibpath.NewLID(s.local.SMLID)
		p.SL = s.local.SMSL
		target = p
	}
	set := &SMInfoSet{ActivityCount: uint32(cStrtoul(f.act)), Priority: uint8(cStrtoul(f.prio)) & 0xf, State: uint8(cStrtoul(f.state)) & 0xf}
	info := iba.SMInfo{ActCount: set.ActivityCount, Priority: set.Priority, SMState: iba.SMState(set.State)}
	if f.smkey != "" {
		k, err := strconv.ParseUint(f.smkey, 0, 64)
		if err != nil {
			return usagef("--sminfo_smkey %q: not a 64-bit number", f.smkey)
		}
		info.SMKey = k
	}
	res := &SMInfoResult{Target: portidString(target), Modifier: mod}
	if mod != 0 {
		res.Set = set
		err = s.mc.SubnSet(e.Ctx, target, &info, mod)
	} else {
		err = s.SubnGet(e.Ctx, target, &info, 0)
	}
	if err != nil {
		return iberror(err, "query")
	}
	if ip, ok := target.(*ibpath.IBPath); ok {
		res.LID = ip.DLID
	}
	res.GUID = fmt.Sprintf("0x%x", uint64(info.GUID))
	res.ActivityCount, res.Priority, res.State = info.ActCount, info.Priority, uint8(info.SMState)
	res.StateName = "???"
	if int(res.State) < len(smInfoStates) {
		res.StateName = smInfoStates[res.State]
	}
	if e.JSON {
		return e.writeJSON("sminfo", res)
	}
	_, err = fmt.Fprintf(e.Stdout, "sminfo: sm lid %d sm guid %s, activity count %d priority %d state %d %s\n",
		res.LID, res.GUID, res.ActivityCount, res.Priority, res.State, res.StateName)
	return err
}
