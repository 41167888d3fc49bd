// Package ibsim is a mad.Transport that speaks the client protocol of the
// ibsim InfiniBand fabric simulator (linux-rdma/ibsim; the wire format is in
// ibsim's include/ibsim.h), in pure Go: what libumad2sim does for C
// programs under LD_PRELOAD, this package does for ours. In docs/design.md's
// layers it sits beside package umad under mad.Client; `--fabric
// ibsim[:NODE]` selects it. It also reaches any server of the same
// protocol, such as fabricsim's.
//
// The protocol, as the transport uses it:
//
//   - Two datagram sockets per client: a control socket exchanging 80-byte
//     struct sim_ctl messages (host byte order), and a data socket carrying
//     288-byte struct sim_request packets, each one 256-byte MAD with its
//     LIDs, QPs and a status. In unix mode (the default) both are abstract
//     unix sockets named "<base>:ctl<id>" and "<base>:in<id>", the server's
//     "<base>:ctl" and "<base>:out<slot>", where <base> is IBSIM_SOCKNAME
//     ("sim" by default); every name includes a trailing NUL. In inet mode
//     (IBSIM_SERVER_NAME, IBSIM_SERVER_PORT) they are UDP sockets, the
//     server's slot i on port+1+i.
//   - The data socket is bound before CONNECT: ibsim connects its out<slot>
//     socket to it while handling CONNECT and exits if it cannot.
//   - CONNECT names the node to attach to (SIM_HOST) and whether the client
//     is the node's SM client (SIM_SET_ISSM); the reply carries the slot.
//     DISCONNECT frees it: Close always sends it, since a client that
//     vanishes keeps its slot and ibsim has only 10.
//   - The simulator answers SMA and PMA attributes itself, forwards other
//     requests to the SM client of the destination port, and routes
//     replies back by TID[63:48], which it overwrites with the sender's
//     slot. Only TID[31:0] survives, so clients match replies on those bits;
//     the transport passes MADs through unchanged.
//   - A request that cannot be delivered (no route, no one to answer, an
//     injected drop) comes back at once with status 110; Recv returns it
//     with Err set to a *DroppedError. A malformed MAD gets no answer at
//     all, so callers still need their own timeouts.
//   - There is no RMPP: a MAD is at most 256 bytes, and KernelRMPP is false.
//
// A MAD costs the transport little beside the system calls: Send writes
// its datagram at once on the non-blocking socket and waits under
// SendTimeout and its context only when the simulator's queue is full; the
// reader takes every queued datagram in one recvmmsg(2) (package
// internal/mmsg) into the Packets it hands to Recv, a batch at a time;
// a Packet handed back through Recycle (mad.Recycler) holds a later one.
//
// The tests run against the real ibsim 0.10 of Debian bookworm (package
// internal/testbed), next to the C tools on the same fabric.
package ibsim
