// Package ibpath reads and resolves the targets of ibtool commands: LIDs,
// directed routes, GIDs (also scoped to an end port), port and node GUIDs,
// and python-rdma's path specs (IBPath(DLID=5, SL=2, retries=3)), which it
// parses without evaluating anything. A path's String is a spec that parses
// back. Paths implement mad.Target, so package mad's client sends to them
// directly.
//
// A Resolver completes a path for its use: GMP targets get an SA
// PathRecord (the SL, P_Key and LIDs the SM chose), directed routes become
// LIDs when a GMP needs one, node GUIDs become LIDs. It sits above mad and
// sa in docs/design.md's layers.
//
// ExampleResolver_GMP resolves a GID to a path through a PathRecord.
package ibpath
