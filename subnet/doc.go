// Package subnet is the topology database of an InfiniBand subnet: nodes,
// their ports, the links between ports, LIDs (with LMC ranges) and switch
// forwarding tables, indexed by node GUID, port GUID, LID and node
// description. It sits above sched and mad in docs/design.md's layers: a
// discovery engine sends the SMPs (through sched and mad.Client) and fills a
// Subnet incrementally with what comes back; ibtool commands then read it.
//
// Filling follows what libibnetdisc records for each reply, so that a Subnet
// built by our discovery prints and caches exactly as the C tools do:
//
//	AddNode(NodeInfo, path)        a NodeInfo reply (IBA 14.2.5.3) at a DR path
//	SetNodeDescription(node, data) NodeDescription (IBA 14.2.5.2)
//	SetSwitchInfo(node, data)      SwitchInfo (IBA 14.2.5.4)
//	SetPortInfo(node, n, data)     PortInfo of port n (IBA 14.2.5.6)
//	SetMlnxExtPortInfo(node, n, d) Mellanox attribute 0xFF90 (FDR10)
//	Link(a, b)                     two ports found at either end of a link
//	MarkUnreachable(path, ...)     a path that gave no answer, with the reason
//	SetLFTBlock / SetMFTBlock      forwarding tables (IBA 14.2.5.10, .12)
//
// ReadSwitch and ReadTables read what a switch holds besides its
// description (infiniband-diags' ibroute and dump_fts, python-rdma's
// Switch.get_switch_fdb): SwitchInfo and the blocks of its linear and
// multicast forwarding tables, many switches and blocks at a time through
// package sched, recorded with SetLFTBlock and SetMFTBlock and read back
// with LFTPort and MFTPorts. See ExampleSubnet_ReadTables.
//
// RoutesAvoiding gives directed routes to every node over the known links
// but those left out (python-rdma's DRCacher), to reach ports around links
// that are about to be disabled.
//
// Partial data is normal: a node may lack its description, a port its
// PortInfo, a link its far end. Attribute data is kept as the raw 64 bytes
// of the SMP data field (the libibnetdisc cache stores exactly those) and
// decoded on demand with package iba.
//
// Order. Nodes are kept in the order they were added (the discovery order:
// breadth first from the start node). infiniband-diags prints the reverse:
// libibnetdisc prepends each new node to its lists, so ibnetdiscover shows
// switches, then CAs, then routers, each newest first, and its cache file
// holds the nodes newest first. WriteTopology and WriteIBNDCache reproduce
// that; ReadIBNDCache restores the discovery order from it.
//
// Files. The package reads and writes three formats:
//
//   - the ibnetdiscover topology text (WriteTopology and the -l, -p
//     variants; ReadTopology, which also reads ibsim's topology files);
//   - the libibnetdisc cache, format version 1, byte for byte
//     (ReadIBNDCache, WriteIBNDCache), so `ibnetdiscover --cache` files
//     load here and ours load in `ibnetdiscover --load-cache`;
//   - our own versioned binary cache (ReadCache, WriteCache; format in
//     cache.go), which loads a 100,000-node subnet in a fraction of a second.
//
// ReadFile and Read take any of the three, told apart by their first
// bytes. Every reader checks a cache's magic number before reading on,
// stops at MaxFileSize, and is strict: an unknown topology line, a number
// that overflows its field, binary data where text belongs, a record that
// breaks the rule the writers follow (checkNode) are errors that say
// where, never a partial or empty subnet.
//
// Diff compares two subnets the way subnet_diff needs: end ports, nodes,
// links and their rates, and LIDs.
//
// ExampleDiscover discovers a simulated subnet and writes its topology.
package subnet
