// Package sim is an in-process InfiniBand fabric: switches, channel
// adapters and routers cabled as a topo.Topology describes, each with a
// subnet management agent (SMA, IBA 14.2) and a performance management
// agent (PMA, IBA 16.1), directed-route and LID-routed forwarding of
// management packets, and an optional built-in subnet manager that sweeps
// the fabric with directed-route SMPs, assigns LIDs, programs minimum-hop
// routes and brings every link to Active.
//
// It sits in DESIGN.md's transport layer: (*Fabric).Attach returns a
// mad.Transport for any end port (a CA port, or a switch's port 0), so a
// mad.Client and everything above it runs against the simulator exactly as
// over the kernel's umad.
//
// # Model
//
// Nodes and ports live in flat slices indexed as in the topology (node i's
// port p is ports[nodes[i].base+p]), so a fabric of 100,000 nodes costs a
// few hundred bytes per port and no per-node maps. Each node has one
// read-write lock that guards its ports' PortInfo state and its switch
// tables; the forwarding path takes a node's read lock for the instant it
// reads a port state or an LFT entry and never holds two locks, so
// concurrent senders only meet on the nodes they both cross. Port counters
// are atomics. There is no global lock on the forwarding path: the table of
// attached agents is an immutable snapshot swapped atomically when agents
// come and go.
//
// A MAD sent on an attachment is processed synchronously in the sender's
// goroutine: routed hop by hop (IBA 14.2.2 rules for directed routes,
// linear forwarding tables for LIDs), answered by the SMA or PMA at its
// destination (or handed to a server agent registered there), and the reply
// is routed back and queued for the receiving agent. Every link a packet
// crosses moves the PortXmit/PortRcv counters of both ends, as ibsim does.
//
// What the SMA and PMA answer, and how, follows the IBA and, for defaults
// and values (PortInfo templates, capability masks, table sizes), what
// ibsim reports, so the C tools print the same against both (package
// ibsimserver's tests check that line by line after an OpenSM sweep). Where
// the two differ the choice is ibsim's and says so: a PortInfo Set applies
// the components ibsim applies (plus the M_Key ones), "set to supported"
// enable values change nothing, and an SMP LID routed to a switch reports
// port 0 as the port it came in on. Unlike ibsim, directed routes may begin
// and end with LID-routed parts (DrSLID, DrDLID), M_Keys are checked
// (IBA 14.2.4), P_Keys are checked for GMPs (IBA 10.9.3), SMPs cross ports
// in Init and Armed while other packets need Active (IBA 7.2), and a
// request nobody handles gets the GetResp with status 0x0C that the Linux
// MAD layer sends.
//
// # The subnet manager
//
// RunSM sweeps breadth first with directed-route SMPs from its port
// through the SMAs, assigns LIDs (switches first, CA and router ports
// aligned to 2^LMC), computes minimum-hop routes over the switch graph
// (one BFS per switch, ties spread over the least loaded ports), writes
// every LinearForwardingTable block and SwitchInfo:LinearFDBTop, and arms
// and activates every linked port, with as many SMPs in flight as there
// are CPUs. A subnet has 49,151 unicast LIDs (IBA 4.1.3): end ports beyond
// that stay in Init and RunSM says so (ErrLIDsExhausted).
//
// Topologies come from package topo: files in ibsim's dialect or
// generators (topo.Load takes either, as a `sim:` fabric URI names them).
package sim
