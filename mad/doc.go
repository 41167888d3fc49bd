// Package mad sends and receives InfiniBand management datagrams (IBA 13.4).
//
// A Transport moves raw MADs (implementations: umad for the kernel, ibsim for
// ibsim's wire protocol, sim for the in-process fabric). A Client, built on a
// Transport, performs the RPCs named in the IBA (SubnGet, SubnAdmGetTable,
// PerformanceGet, ...), matches replies, retries, reassembles RMPP and
// reports typed errors. Layers above (sa, subnet, perf, internal/diags) use
// only the Client.
//
// Do waits for its RPC; Start is called back instead, holding no goroutine
// while the MAD is out (sweeps with hundreds in flight use it through
// sched.SubmitAsync), and reuses the memory of an RPC that succeeded once
// its callback returns.
//
// ExampleClient_Do sends any RPC by its IBA name with fields set by name;
// Example_errorLevels shows an error at the three levels of ibtool -v;
// ExampleClient_CongestionGet reads and writes congestion control
// attributes (ibccquery, ibccconfig).
package mad
