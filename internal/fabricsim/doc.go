// Package fabricsim is the fabricsim command (cmd/fabricsim is a thin
// main over Main): `serve` builds a sim.Fabric from a topology file or a
// generator, brings it up with the built-in SM and SA unless --no-sm (then
// an external OpenSM configures it, as with ibsim), and serves it with
// package ibsimserver in unix or inet mode (IBSIM_SOCKNAME honoured);
// `gen` writes generated topologies in the ibnetdiscover format; `ctl`
// sends a command to a running server.
//
// Faults and latency change while the fabric runs through the Console's
// commands (link down/up, node dead/alive, drop rates, latency, error
// counters, sweep), read from a faults file at start, from stdin with
// --console, or from the control socket (a unix stream socket, by default
// the abstract @SOCKNAME:console, one command per line, one answer line).
//
// In docs/design.md's layers it sits with the other commands above package sim.
package fabricsim
