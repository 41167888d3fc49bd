package diags

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// ibprintca, ibprintswitch and ibprintrt: python-rdma's commands that show
// one node's ibnetdiscover stanza by node GUID (infiniband-diags' old
// ibprint*.pl scripts cut it out of ibnetdiscover's output), or with -l
// list every node of the type as ibnetdiscover -H, -S or -R does.

func init() {
	for _, p := range []struct {
		name, what string
		typ        iba.NodeType
	}{
		{"ibprintca", "CA", iba.NodeTypeCA},
		{"ibprintswitch", "switch", iba.NodeTypeSwitch},
		{"ibprintrt", "router", iba.NodeTypeRouter},
	} {
		register(command{name: p.name, aliases: []string{p.name + ".pl"}, make: func(e *Env) *cobra.Command {
			return newIBPrintWith(e, p.name, p.what, p.typ, e.open)
		}})
	}
}

// NodeStanza is one node as ibprint* shows it.
type NodeStanza struct {
	GUID        string           `json:"nodeGUID"`
	Type        string           `json:"nodeType"`
	Description string           `json:"description"`
	NumPorts    int              `json:"numPorts"`
	Ports       []NodeStanzaPort `json:"ports"`
	// Text is the ibnetdiscover stanza.
	Text string `json:"text"`
}

// NodeStanzaPort is a port of the node and what it is linked to.
type NodeStanzaPort struct {
	Port       int    `json:"port"`
	GUID       string `json:"portGUID"`
	LID        uint16 `json:"lid"`
	RemoteGUID string `json:"remoteNodeGUID,omitempty"`
	RemotePort int    `json:"remotePort,omitempty"`
	RemoteDesc string `json:"remoteDescription,omitempty"`
}

func newIBPrintWith(e *Env, name, what string, typ iba.NodeType, open func() (*session, error)) *cobra.Command {
	var list, byGUID bool
	var disc discoverFlags
	c := &cobra.Command{
		Use:   name + " [flags] [-l | NODE]",
		Short: "show one " + what + "'s ibnetdiscover stanza (python-rdma " + name + ", infiniband-diags " + name + ".pl)",
		Long: name + ` discovers the subnet (or reads --cache) and prints the ibnetdiscover
stanza of the ` + what + ` NODE names; -l lists every ` + what + ` instead.
NODE is a node GUID (0x-hex, bare hex or python-rdma's 0002:c903:0000:1491;
with -G nothing else), a port GUID, LID, GID, directed route or path spec,
or the node's name in the node name map or its description (the diags
script's normal input). -R is accepted: the subnet is discovered afresh
unless --cache names a file.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (list && len(args) != 0) || (!list && len(args) != 1) {
				return usagef("want -l or one NODE")
			}
			names, err := loadNames("")
			if err != nil {
				return err
			}
			s, err := open()
			if err != nil {
				return err
			}
			defer s.Close()
			sn, rep, err := e.discoverWith(s, disc, false)
			if err != nil {
				return err
			}
			for _, fl := range rep.Failures {
				fmt.Fprintf(e.Stderr, "%s: warning: %v\n", name, fl)
			}
			lost := rep.Incomplete(sn)
			if list {
				return incomplete(printNodeList(e, name, sn, typ), lost)
			}
			p, err := findInSubnet(sn, rep, args[0], &addrFlags{guid: byGUID}, names)
			if err != nil {
				return incomplete(err, lost)
			}
			n := p.Node
			if n.Type != typ {
				return fmt.Errorf("node %v is a %s, not a %s", n.GUID, pyNodeType(n.Type), pyNodeType(typ))
			}
			st, err := nodeStanza(sn, n)
			if err != nil {
				return err
			}
			if e.JSON {
				return incomplete(e.writeJSON(name, st), lost)
			}
			_, err = fmt.Fprint(e.Stdout, st.Text)
			return incomplete(err, lost)
		},
	}
	c.Flags().BoolVarP(&list, "list", "l", false, "list every "+what)
	c.Flags().BoolVarP(&byGUID, "Guid", "G", false, "NODE is a GUID (the diags script's -G)")
	c.Flags().BoolP("recalculate", "R", false, "discover the subnet afresh (the diags script's -R; done unless --cache names a file)")
	disc.register(c, false)
	return c
}

func printNodeList(e *Env, name string, sn *subnet.Subnet, typ iba.NodeType) error {
	if !e.JSON {
		return sn.WriteNodeList(e.Stdout, subnet.TopologyOptions{}, typ)
	}
	return e.writeJSON(name, nodeLinesJSON(sn, typ))
}

// nodeStanza cuts the node's stanza out of the topology ibnetdiscover
// prints (stanzas are separated by blank lines and carry the node GUID on
// their caguid=, switchguid= or rtguid= line).
func nodeStanza(sn *subnet.Subnet, n *subnet.Node) (*NodeStanza, error) {
	var b bytes.Buffer
	if err := sn.WriteTopology(&b, subnet.TopologyOptions{}); err != nil {
		return nil, err
	}
	key := map[iba.NodeType]string{iba.NodeTypeCA: "caguid=", iba.NodeTypeSwitch: "switchguid=", iba.NodeTypeRouter: "rtguid="}[n.Type] + fmt.Sprintf("0x%x", uint64(n.GUID))
	st := &NodeStanza{GUID: n.GUID.String(), Type: pyNodeType(n.Type), Description: n.Description(), NumPorts: n.NumPorts}
	for _, para := range strings.Split(b.String(), "\n\n") {
		for _, l := range strings.Split(para, "\n") {
			if l == key || strings.HasPrefix(l, key+"(") {
				st.Text = strings.TrimLeft(para, "\n") + "\n"
			}
		}
	}
	if st.Text == "" {
		return nil, fmt.Errorf("node %v has no stanza in the topology", n.GUID)
	}
	for _, p := range n.Ports {
		if p == nil || (p.Num == 0 && n.Type != iba.NodeTypeSwitch) {
			continue
		}
		sp := NodeStanzaPort{Port: p.Num, GUID: p.GUID.String(), LID: p.BaseLID}
		if r := p.Remote; r != nil {
			sp.RemoteGUID, sp.RemotePort, sp.RemoteDesc = r.Node.GUID.String(), r.Num, r.Node.Description()
		}
		st.Ports = append(st.Ports, sp)
	}
	return st, nil
}
