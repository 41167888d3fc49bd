// Package topo describes the cabling of an InfiniBand fabric: nodes
// (switches, channel adapters, routers), their ports and GUIDs, the links
// between ports with their enabled widths and speeds, and the LIDs a file
// may carry as annotations. It is the input of package sim.
//
// A Topology comes from a file in the dialect ibsim reads, which is the
// output of ibnetdiscover plus ibsim's directives (Parse, ParseFile), or from
// a generator (FatTree, LeafSpine, Dragonfly, Random). Write produces the
// same dialect, so a generated fabric can be loaded by ibsim as well as by
// package sim, and read back by Parse.
//
// Storage is flat for large fabrics: Nodes and Ports are slices, and node
// i's port p is Ports[Nodes[i].PortBase+p]; every node has a slot for port
// 0, which only switches use (their management port).
//
// In docs/design.md's layers, topo sits beside iba under package sim; it does no
// I/O beyond reading and writing topology files.
package topo
