// Package mmsg moves several datagrams per system call on a datagram
// socket: recvmmsg(2) and sendmmsg(2) on Linux, one read or write per
// datagram elsewhere. A peer with many MADs in flight then costs one
// system call per batch instead of one per MAD, which on the simulator's
// wire protocol is most of what a MAD costs.
//
// In docs/design.md's layers it is plumbing below the ibsim wire protocol: the
// server side (sim/ibsimserver) and the client transport (ibsim) both
// read and write their data sockets through it.
package mmsg
