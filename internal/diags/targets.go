package diags

import (
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

// Targets of the commands that work on a discovered subnet (ibprint*,
// ibfindnodesusing, iblinkinfo, set_port_state): what session.parseTarget
// reads for the commands that send MADs to one port, looked up in the
// subnet instead of asked of the fabric.

// findInSubnet gives the port a target names in a discovered subnet: a
// node or port GUID (0x-hex, bare hex, python-rdma's 0002:c903:0000:1491;
// the only form with -G), a LID, directed route, GID or path spec
// (subnet.Find), else a node's name from the node name map or its
// description. rep, when not nil, explains a directed route discovery
// could not follow.
func findInSubnet(sn *subnet.Subnet, rep *subnet.DiscoverReport, arg string, a *addrFlags, names *namemap.Map) (*subnet.Port, error) {
	m, err := a.mode()
	if err != nil {
		return nil, err
	}
	if m == ibpath.PortGUID || m == ibpath.Any {
		if g, gerr := iba.ParseGUID(arg); gerr == nil {
			if n := sn.Node(g); n != nil {
				return n.EndPort(), nil
			}
			if p := sn.PortByGUID(g); p != nil {
				return p, nil
			}
			if m == ibpath.PortGUID {
				return nil, fmt.Errorf("no node or port has GUID %v in the subnet", g)
			}
		} else if m == ibpath.PortGUID {
			return nil, usagef("-G %s: %v", arg, gerr)
		}
	}
	p, perr := ibpath.Parse(arg, ibpath.Options{Mode: m})
	if perr == nil {
		port, err := sn.Find(p)
		if err != nil {
			return nil, notFoundWhy(rep, p, fmt.Errorf("could not find %s in the subnet", arg))
		}
		return port, nil
	}
	if m != ibpath.Any || !maybeName(arg) {
		return nil, usagef("%v", perr)
	}
	nodes := sn.NodesNamed(arg, names)
	switch len(nodes) {
	case 0:
		return nil, fmt.Errorf("could not find %q in the subnet: not a GUID, LID, GID, DR path or path spec, nor a node's name or description", arg)
	case 1:
		if ep := nodes[0].EndPort(); ep != nil {
			return ep, nil
		}
		return nil, fmt.Errorf("node %q has no port with PortInfo in the subnet", arg)
	}
	l := make([]string, len(nodes))
	for i, n := range nodes {
		l[i] = n.GUID.String()
	}
	return nil, fmt.Errorf("%d nodes are named %q (%s); give one's GUID", len(nodes), arg, strings.Join(l, ", "))
}

// notFoundWhy adds to err, for a directed route discovery did not follow
// to its end, the failure that stopped it: an SMP with no answer there is
// what an M_Key protected port does (mkeyHint).
func notFoundWhy(rep *subnet.DiscoverReport, p ibpath.Path, err error) error {
	dr, ok := p.(*ibpath.DRPath)
	if !ok || rep == nil || len(dr.DrPath) == 0 {
		return err
	}
	path := subnet.DRPath(dr.DrPath[1:])
	for _, f := range rep.Failures {
		if len(f.Path) <= len(path) && f.Path.String() == path[:len(f.Path)].String() {
			return fmt.Errorf("%w: discovery got no answer on the way: %w", err, f)
		}
	}
	return err
}
