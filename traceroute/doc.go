// Package traceroute follows the route between two ports of a subnet
// through the switches' forwarding tables, as infiniband-diags' ibtracert
// does (and python-rdma's ibtracert): from the source port, one
// directed-route SMP hop at a time, it reads the LinearForwardingTable
// entry (IBA 14.2.5.10) of the destination LID on each switch, or, for a
// multicast LID, searches the ports the MulticastForwardingTables (IBA
// 14.2.5.12) forward the group to. It needs no discovery and reads only
// the nodes on the route, so it answers on a fabric of any size in a few
// SMPs per hop.
//
// A Tracer sends the SMPs through any mad.SubnGetter (a *fabric.Fabric, a
// *mad.Client). Unicast and Multicast return a Route: its hops in order
// (the source, each port entered with the port the node before forwarded
// on, the destination), and the warnings the walk met, named for the step
// of ibtracert.c that met them. A failed trace returns what it traced
// before the failure, with an *Error wrapping ErrNoRoute. The walk, its
// checks (port states, table bounds, directed routes of at most 62 hops)
// and its messages are the C tool's, so ibtool ibtracert prints what
// ibtracert prints from a Route.
//
// DirectedRoute walks the same tables to find the directed route to a
// LID (infiniband-diags' build_dr_path_to_lid) without a single
// LID-routed SMP, for fabrics that do not route those (iblinkinfo -S/-G
// starts its scan there).
//
// To check every route of a fabric at once from the tables alone, read
// the tables into a subnet.Subnet (Subnet.ReadTables) and use
// health.Routing. See ExampleTracer_Unicast and
// ExampleTracer_DirectedRoute.
//
// In docs/design.md's layers traceroute sits beside subnet, above mad.
package traceroute
