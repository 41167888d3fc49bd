package diags

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

func init() {
	register(command{name: "smpdump", make: newSMPDump})
}

// SMPDumpResult is one SubnGet of any attribute and its raw answer.
type SMPDumpResult struct {
	Target   string `json:"target"`
	AttrID   uint16 `json:"attrID"`
	Modifier uint32 `json:"modifier"`
	// Status is the reply's Status field, direction bit included, as the
	// C smpdump prints it.
	Status uint16 `json:"status"`
	// Data is the 64-byte SMP data field in hex.
	Data string `json:"data"`
	// TimedOut reports that no reply came; Data is then the request's.
	TimedOut bool `json:"timedOut,omitempty"`

	mad []byte
}

type smpdumpFlags struct {
	str, direct, lid, guid, decode bool
}

func newSMPDump(e *Env) *cobra.Command {
	var f smpdumpFlags
	c := &cobra.Command{
		Use:   "smpdump [flags] <dlid|dr_path> <attr> [mod]",
		Short: "send a SubnGet of any attribute and dump the reply (infiniband-diags smpdump)",
		Long: `smpdump sends one SubnGet of the attribute ID given, LID routed or by
directed route (-D), and prints the 64 bytes of SMP data of the reply in
hex, or as text with -s, then the SMP status when it is not zero. -p
decodes the whole reply instead, as python-rdma's smpdump --decode does.

As the C tool does, a request that gets no reply prints the request's
data (zeros) and succeeds; ibtool also says on stderr that it timed out.

Examples:
  smpdump -D 0,1,2,3,5 16   # NODE DESC
  smpdump -D 0,1,2 0x15 2   # PORT INFO, port 2
  smpdump 3 0x15 2          # PORT INFO, lid 3 port 2
  smpdump 0xa0 0x11         # NODE INFO, lid 0xa0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSMPDump(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.str, "string", "s", false, "print the data as a string")
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVarP(&f.lid, "Lid", "L", false, "use LID address argument (the default)")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument: a port GUID, sent to its LID (python-rdma)")
	fl.BoolVarP(&f.decode, "decode", "p", false, "pretty print the entire reply (python-rdma)")
	return c
}

// cDRPath is smpdump's str2DRPath: comma separated numbers, each read with
// atoi and cut to a byte; text that is no number reads as 0.
func cDRPath(s string) ([]byte, bool) {
	var hops []byte
	for s != "" {
		h, rest, more := strings.Cut(s, ",")
		hops = append(hops, byte(atoi(h)))
		if !more {
			break
		}
		s = rest
	}
	return hops, len(hops) > 0
}

// cNumber matches what strtoul reads whole: decimal, or hex after 0x.
var cNumber = regexp.MustCompile(`^(0[xX][0-9a-fA-F]+|[0-9]+)$`)

// smpdumpLID reads smpdump's LID argument. The C tool reads it with
// strtoul and keeps 16 bits, so that a GUID or a directed route given
// without -D reaches another node (or LID 0) and the dump looks like an
// answer; ibtool refuses them instead.
func smpdumpLID(arg string) (uint16, error) {
	if !cNumber.MatchString(arg) {
		if drList.MatchString(arg) {
			return 0, usagef("%q is not a LID: a directed route needs -D", arg)
		}
		return 0, usagef("%q is not a LID", arg)
	}
	// The regexp leaves base 0 hex, octal and decimal, as strtoul reads.
	if n, err := strconv.ParseUint(arg, 0, 64); err != nil || n > 0xffff {
		return 0, usagef("%s is wider than a LID (16 bits); the C smpdump would cut it to %#x and ask another node: for a port GUID give -G", arg, uint16(cStrtoul(arg)))
	}
	return uint16(cStrtoul(arg)), nil
}

func runSMPDump(e *Env, f *smpdumpFlags, args []string) error {
	if len(args) < 2 {
		return usagef("want <dlid|dr_path> <attr> [mod]")
	}
	if f.guid && (f.direct || f.lid) {
		return usagef("-G excludes -D and -L")
	}
	var target ibpath.Path
	switch {
	case f.direct && !f.lid:
		hops, ok := cDRPath(args[0])
		if !ok {
			return iberror(nil, "bad path str '%s'", args[0])
		}
		target = ibpath.NewDR(hops...)
	case !f.guid:
		lid, err := smpdumpLID(args[0])
		if err != nil {
			return err
		}
		target = ibpath.NewLID(lid)
	}
	attr := uint16(cStrtoul(args[1]))
	var mod uint32
	if len(args) > 2 {
		mod = uint32(cStrtoul(args[2]))
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	if f.guid {
		if target, err = resolveSMPDest(s, args[0], &addrFlags{guid: true}); err != nil {
			return err
		}
	}
	rt := target.Route()
	rt.Name = portidString(target)
	if e.Retries < 0 {
		rt.Tries = 1 // the C tool sends once
	}
	res := &SMPDumpResult{Target: rt.Name, AttrID: attr, Modifier: mod, Data: strings.Repeat("00", 64)}
	rep, err := s.mc.Do(e.Ctx, mad.Request{Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: attr, AttrMod: mod, Unchecked: true})
	var se *mad.StatusError
	switch {
	case err == nil:
		res.mad = rep.MAD
	case errors.As(err, &se):
		res.mad = se.Reply
	case errors.Is(err, mad.ErrTimeout):
		res.TimedOut = true
		if f.decode {
			return iberror(err, "smpdump")
		}
		fmt.Fprintf(e.Stderr, "smpdump: no reply from %s: %v\n", rt.Name, err)
		if h := mkeyHint(err); h != "" {
			fmt.Fprintf(e.Stderr, "smpdump: %s\n", h)
		}
	default:
		return iberror(err, "smpdump")
	}
	if len(res.mad) >= 128 {
		res.Status = binary.BigEndian.Uint16(res.mad[4:6])
		res.Data = hex.EncodeToString(res.mad[64:128])
	}
	if e.JSON {
		return e.writeJSON("smpdump", res)
	}
	if f.decode {
		return ibaprint.DumpMAD(e.Stdout, res.mad)
	}
	data, _ := hex.DecodeString(res.Data)
	var b strings.Builder
	if f.str {
		if i := strings.IndexByte(string(data), 0); i >= 0 {
			data = data[:i]
		}
		b.Write(data)
		b.WriteString("\n")
	} else {
		xdump(&b, data)
	}
	if res.Status != 0 {
		fmt.Fprintf(&b, "SMP status: 0x%x\n", res.Status)
	}
	_, err = io.WriteString(e.Stdout, b.String())
	return err
}

// xdump is libibmad's xdump: 16-bit words in hex, eight to a line.
func xdump(w io.Writer, b []byte) {
	var sb strings.Builder
	for i := 0; i < len(b); i += 2 {
		if i+1 < len(b) {
			fmt.Fprintf(&sb, "%02x%02x", b[i], b[i+1])
		} else {
			fmt.Fprintf(&sb, "%02x", b[i])
			break
		}
		if (i+2)%16 == 0 {
			sb.WriteString("\n")
		} else if i+2 < len(b) {
			sb.WriteString(" ")
		}
	}
	if len(b)%16 != 0 {
		sb.WriteString("\n")
	}
	io.WriteString(w, sb.String())
}
