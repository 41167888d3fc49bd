package topo

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// Write prints t in the topology format ibnetdiscover prints and ibsim
// reads: per node the GUID, vendor and device directives, the header and one
// line per cabled port, switches first, then CAs, then routers. Parse reads
// it back to the same topology, and ibsim loads it. Enabled widths and
// speeds go into the "lid N 4xSDR" annotation when it expresses them
// exactly, and into w=, s= and e= options otherwise.
func Write(w io.Writer, t *Topology) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	s, c, r := t.Counts()
	fmt.Fprintf(bw, "#\n# Topology file: %d switches, %d channel adapters, %d routers\n#\n", s, c, r)
	for _, typ := range []iba.NodeType{iba.NodeTypeSwitch, iba.NodeTypeCA, iba.NodeTypeRouter} {
		for i := range t.Nodes {
			if t.Nodes[i].Type == typ {
				if err := writeNode(bw, t, i); err != nil {
					return err
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing topology: %w", err)
	}
	return nil
}

func writeNode(w *bufio.Writer, t *Topology, i int) error {
	n := &t.Nodes[i]
	if strings.ContainsAny(n.ID, "\"#@\n") || strings.ContainsAny(n.Desc, "\"\n") {
		return fmt.Errorf("writing topology: node %q: ids cannot hold '\"', '#', '@' or newlines, descriptions no '\"' or newline", n.ID)
	}
	fmt.Fprintf(w, "\nvendid=%#x\ndevid=%#x\n", n.VendorID, n.DeviceID)
	if n.SysImageGUID != 0 && n.SysImageGUID != n.NodeGUID {
		fmt.Fprintf(w, "sysimgguid=%#x\n", uint64(n.SysImageGUID))
	}
	switch n.Type {
	case iba.NodeTypeSwitch:
		fmt.Fprintf(w, "switchguid=%#x(%x)\n", uint64(n.NodeGUID), uint64(n.NodeGUID))
		p0 := "base"
		if n.EnhancedPort0 {
			p0 = "enhanced"
		}
		fmt.Fprintf(w, "Switch\t%d \"%s\"\t\t# \"%s\" %s port 0 lid %d lmc %d\n", n.NumPorts, n.ID, n.Description(), p0, n.LID, n.LMC)
	case iba.NodeTypeCA:
		fmt.Fprintf(w, "caguid=%#x\nCa\t%d \"%s\"\t\t# \"%s\"\n", uint64(n.NodeGUID), n.NumPorts, n.ID, n.Description())
	default:
		fmt.Fprintf(w, "rtguid=%#x\nRt\t%d \"%s\"\t\t# \"%s\"\n", uint64(n.NodeGUID), n.NumPorts, n.ID, n.Description())
	}
	for p := 1; p <= int(n.NumPorts); p++ {
		x := t.Port(i, p)
		if x.Peer < 0 {
			continue
		}
		peer := &t.Nodes[x.Peer]
		y := t.Port(int(x.Peer), int(x.PeerPort))
		fmt.Fprintf(w, "[%d]", p)
		if n.Type != iba.NodeTypeSwitch {
			fmt.Fprintf(w, "(%x) ", uint64(x.GUID))
		}
		fmt.Fprintf(w, "\t\"%s\"[%d]", peer.ID, x.PeerPort)
		if peer.Type != iba.NodeTypeSwitch {
			fmt.Fprintf(w, "(%x) ", uint64(y.GUID))
		}
		ann, exact := annotation(x)
		if !exact {
			fmt.Fprintf(w, " w=%d s=%d e=%d", x.Width, x.Speed, x.SpeedExt)
			if x.SpeedExt2 != 0 {
				fmt.Fprintf(w, " x=%d", x.SpeedExt2)
			}
		}
		w.WriteString("\t\t# ")
		if n.Type != iba.NodeTypeSwitch {
			fmt.Fprintf(w, "lid %d lmc %d ", x.LID, x.LMC)
		}
		fmt.Fprintf(w, "\"%s\"", peer.Description())
		if exact {
			fmt.Fprintf(w, " lid %d %s", peerLID(t, int(x.Peer), y), ann)
		}
		w.WriteByte('\n')
	}
	return nil
}

func peerLID(t *Topology, n int, y *Port) uint16 {
	if t.Nodes[n].Type == iba.NodeTypeSwitch {
		return t.Nodes[n].LID
	}
	return y.LID
}

// annotation gives the "4xSDR" that Parse turns into exactly x's enabled
// masks, and false when there is none (then options carry them).
func annotation(x *Port) (string, bool) {
	var lanes int
	switch x.Width {
	case Width1x:
		lanes = 1
	case Width2x:
		lanes = 2
	case Width4x:
		lanes = 4
	case Width8x:
		lanes = 8
	case Width12x:
		lanes = 12
	default:
		return "", false
	}
	for _, name := range []string{"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"} {
		m := speedMasks[name]
		ext := m.ext
		if ext == keepExt {
			ext = DefaultSpeedExt
		}
		if m.speed == x.Speed && ext == x.SpeedExt && m.ext2 == x.SpeedExt2 && m.mlnx == x.MlnxSpeed {
			return fmt.Sprintf("%dx%s", lanes, name), true
		}
	}
	return "", false
}
