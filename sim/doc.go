// Package sim is an in-process InfiniBand fabric: switches, channel
// adapters and routers cabled as a topo.Topology describes, each with a
// subnet management agent (SMA, IBA 14.2) and a performance management
// agent (PMA, IBA 16.1), directed-route and LID-routed forwarding of
// management packets, and an optional built-in subnet manager that sweeps
// the fabric with directed-route SMPs, assigns LIDs, programs minimum-hop
// routes and brings every link to Active.
//
// It sits in docs/design.md's transport layer: (*Fabric).Attach returns a
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
// aligned to 2^LMC; a port keeps its LID across sweeps, as with OpenSM's
// guid2lid), computes minimum-hop routes over the switch graph (one BFS
// per destination switch on flat arrays, then per switch one pass over its
// neighbors' distance rows; ties spread round robin from the least loaded
// port), writes every LinearForwardingTable block and
// SwitchInfo:LinearFDBTop, and arms and activates every linked port, with
// as many SMPs in flight as there are CPUs. A subnet has 49,151 unicast
// LIDs (IBA 4.1.3): end ports beyond that stay in Init and RunSM says so
// (ErrLIDsExhausted). The SM stays MASTER, answers SMInfo, and sweeps
// again when a trap 128 (a link changed state) reaches it; Close stops it.
//
// # The subnet administrator
//
// Unless SMConfig.NoSA, the SM serves the SA (IBA 15) at QP1 of its port,
// as a mad.Client server on an attachment there, so it is reached at the
// SM LID of every port's PortInfo, in process and through ibsimserver.
// NodeRecord, PortInfoRecord, SLtoVL, SwitchInfo, LFT, MFT, VLArb,
// GUIDInfo and P_Key table records are read through the SMA code itself
// for the end ports the last sweep found, so they agree with SMP reads;
// LinkRecord and PathRecord follow the cabling and the forwarding tables
// as programmed; ServiceRecord (Set, Get, Delete, leases), MCMemberRecord
// (join creates MGIDs and MLIDs and programs the MFTs of the group's
// spanning tree; leave removes them), InformInfo (subscriptions, and
// SubnAdmReport of the traps the SM receives) and SMInfoRecord are the
// SA's own. Get and GetTable match records on the component mask through
// iba's component table (PortInfoRecord's CapabilityMask as a bit subset,
// as OpenSM does); GetTable replies longer than a MAD go out as RMPP
// transfers. Status codes are the SA's: ERR_NO_RECORDS, ERR_TOO_MANY_RECORDS,
// ERR_REQ_INVALID, ERR_REQ_INVALID_GID, ERR_REQ_INSUFFICIENT_COMPONENTS.
//
// # Other agents, latency and faults
//
// Every node's agent also answers congestion control (class 0x21: Info,
// KeyInfo with CC_Key checks, Log, switch and CA settings, the control
// table, TimeStamp) and the OpenIB vendor classes of ibping (0x32) and
// ibsysstat (0x33), unless a server agent for the class is registered at
// the port.
//
// SetLatency turns on the latency model (per-hop and per-agent delays, a
// serial management processor per node with a bounded request queue, a
// loss rate); delays are timers, and with the model off a MAD is answered
// in the sender's goroutine as before. SetNodeDead stops a node answering
// and forwarding, SetLink pulls and plugs cables (trap 128 to the SM),
// SetDropRate and InjectErrors act per port. PortUnicast{Xmit,Rcv}Pkts
// count the Traffic model's packets only: management packets are not
// counted there, as in ibsim, so perfquery -x prints the same on both.
//
// Topologies come from package topo: files in ibsim's dialect or
// generators (topo.Load takes either, as a `sim:` fabric URI names them).
package sim
