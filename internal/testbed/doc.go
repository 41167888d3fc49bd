// Package testbed brings up floor 3 of the tests (docs/design.md, "Tests:
// four floors") for any test in the module: the real ibsim fabric
// simulator, OpenSM as subnet manager and SA, and the infiniband-diags C
// tools, from Debian packages. Two releases of them can run side by side
// (Release): Debian 12's, the machine's own, which
// scripts/floors/10-ibsim.sh installs (Bookworm: diags 44, ibsim 0.10), and
// Debian 13's, in the root scripts/floors/20-trixie.sh builds (Trixie:
// diags 56, ibsim 0.12); Releases lists both for a comparison that runs
// against each, and EachRelease runs one as a subtest per release.
// Release.RunC runs a release's C tool against any simulator. Where the two
// releases print differently, 56 is the reference: Release.Normalise turns
// 44's output into 56's for the differences docs/ibtool.md lists, and
// Release.Broken names the command lines 56.1 gets wrong.
//
// Topologies come from generators (FatTree) or are built node by node
// (Fabric) and are written in the ibnetdiscover format that ibsim reads,
// with deterministic names and GUIDs, so a test knows what every reply must
// contain.
//
// StartIBSim runs a simulator private to the test (its own
// IBSIM_SOCKNAME; Release.StartIBSim chooses the release); StartOpenSM
// brings its subnet up; RunC runs a C tool of the simulator's release
// against it under libumad2sim, so that our commands (through package
// ibsim's transport) and the C ones can be compared on one fabric. Every
// process runs in a temporary working directory (libumad2sim writes a fake
// sysfs there), has a timeout, and is killed by its PID when the test ends.
// Require skips a test locally, and fails it in CI, when a peer is missing.
//
// A typical test:
//
//	f, err := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}.Build()
//	topo, err := f.Topology()
//	sim := testbed.StartIBSim(t, topo)
//	testbed.StartOpenSM(t, sim, "H-1")
//	out, _, code := testbed.RunC(t, sim, "H-2", "ibnetdiscover")
//	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-2"})
package testbed
