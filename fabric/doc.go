// Package fabric is rdmakit's front door: it opens a fabric from one string
// and hands back what every program needs to talk to it — a MAD client
// (package mad) with the timeout, retries and tracing asked for, the local
// end port, and a resolver that turns targets (LIDs, directed routes, GIDs,
// GUIDs, python-rdma path specs; package ibpath) into MAD destinations.
//
// The string is the one ibtool takes as --fabric and from RDMAKIT_FABRIC
// (docs/design.md, "Choosing the fabric"):
//
//	umad            the kernel's /dev/infiniband/umadN of the selected end port
//	umad:ENDPORT    the same, on the end port ENDPORT names
//	ibsim[:NODE]    a running ibsim or fabricsim server, by ibsim's protocol
//	sim:FILE|GEN    an in-process simulated fabric (package sim), brought up
//	                by the built-in subnet manager
//	ENDPORT         python-rdma's end port syntax, on umad: a device
//	                (mlx5_0), device/port (mlx5_0/1), a port GID
//	                (fe80::2:c903:0:1491) or a port GUID (0x0002c90300001491)
//
// Open is the whole story for most programs; OpenTransport gives the bare
// transport to programs that serve MADs themselves, and New puts the client,
// local port and resolver on a transport the caller opened (a test's
// in-memory fabric, a verbs UD QP).
//
// See ExampleOpen for a complete program on the in-process simulator.
package fabric
