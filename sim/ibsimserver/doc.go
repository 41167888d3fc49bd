// Package ibsimserver serves a sim.Fabric over ibsim's client protocol, so
// that OpenSM and every libibumad program (infiniband-diags, through
// LD_PRELOAD=libumad2sim.so) run against the simulator as against ibsim,
// and so that package ibsim's transport reaches it too.
//
// The protocol (a control channel of 80-byte messages and one data channel
// of 288-byte MAD datagrams per client, over abstract unix datagram sockets
// named after IBSIM_SOCKNAME, or over UDP) is ibsim's, byte for byte; the
// reference notes describe it. Behaviour follows ibsim where clients rely on
// it (status 110 bounces of MADs the fabric drops, TID bits 63-48 naming
// the client, requests for a node going to its "issm" client) and departs
// from it where ibsim hurts: a client that is not listening yet gets an
// error instead of killing the server, more than ten clients may connect,
// and any CA port can be attached to. Like ibsim, it gives a client that
// does no RMPP of its own (libumad2sim) only the first segment of an RMPP
// transfer; package ibsim's clients, which acknowledge segments, get whole
// tables.
//
// Each client has a reader, which hands every request to the fabric (which
// answers it at once, or later with the latency model on), and a writer;
// on Linux both move every datagram queued in one recvmmsg(2) or
// sendmmsg(2) call, so a client with many MADs in flight costs two system
// calls per batch rather than per MAD.
//
// In docs/design.md's layers this is the second way into package sim, beside the
// in-process transport; cmd/fabricsim serves with it.
package ibsimserver
