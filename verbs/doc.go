// Package verbs binds libibverbs, the RDMA verbs of IBA chapter 11:
// devices, protection domains, memory regions, completion queues and
// channels, queue pairs (RC, UC, UD) with every state transition, address
// handles (from an address vector, from an ibpath.IBPath, or for the reply
// to a received datagram), shared receive queues, the data path (post send
// and receive, poll) and asynchronous events.
//
// # How libibverbs is loaded
//
// The package needs no RDMA headers and no C compiler, and builds with
// cgo on or off: it loads rdma-core's libibverbs.so.1 at run time, with
// github.com/ebitengine/purego's dlopen, the first time Available, Devices
// or Open is called (EnvLibrary names another file). The data path needs
// the device's user-space driver, which only libibverbs loads, so the
// library is the one way in. The verbs libibverbs exports are called by
// their symbols; those verbs.h defines inline (post send and receive,
// post to an SRQ, poll, arm a CQ) are called as the inlines do, through
// the device context's ops table; ibv_query_port is called by its
// exported, fixed-layout symbol rather than verbs.h's inline. The
// structures are declared in Go with rdma-core's layout (abi.go, checked
// by a table of facts and, in the VM, against ibv_devinfo).
//
// Where libibverbs.so.1 cannot be loaded every call fails with an error
// matching ErrNotAvailable (a *LoadError) that says what to install:
// libibverbs1 and ibverbs-providers on Debian and Ubuntu, libibverbs on
// RHEL. On platforms other than linux/amd64 and linux/arm64 the package
// builds but does not load the library, and says so the same way; so does
// a build with the tag rdmakit_noverbs, which leaves the loader out for a
// program that must be linked statically.
//
// A program built without cgo that imports this package is linked
// dynamically against the C library (libc.so.6, libdl.so.2,
// libpthread.so.0: purego imports dlopen from it), never against
// libibverbs; with cgo it is linked against libc.so.6 only.
//
// # Memory
//
// libibverbs never holds Go memory the garbage collector could free or
// move. Work request lists, scatter/gather lists and polled completions
// are laid out in memory this package maps outside the Go heap (one
// mapping per QP, SRQ and CQ, reused). Attribute structures (QP, AH, SRQ
// attributes, device and port queries) are Go values without Go pointers
// that libibverbs reads or fills during the call only, as cgo's rules
// allow. Memory for MRs is either mapped by PD.AllocMR, outside the Go
// heap, or the caller's, registered by PD.RegisterMR, which keeps it
// pinned until the MR is closed.
//
// # Ownership and errors
//
// Resources own what is made from them, as python-rdma's ibverbs did:
// closing a Context closes its PDs, CQs and channels, closing a PD closes
// its MRs, AHs, SRQs and QPs, and closing a CQ closes the QPs that use it.
// Errors are *Error values that unwrap to the syscall.Errno libibverbs
// reported (errors.Is(err, syscall.EINVAL)); a failed completion is a
// *WCError.
//
// In the layers of docs/design.md verbs is at the bottom beside device and
// nldev. Package verbs/vmad puts a mad.Transport on a UD QP of this
// package, and ibtool's rc_pingpong, ud_pingpong and rdma_bw use it. See
// ExampleAHAttrFromPath and ExampleWCPath for paths and address handles
// without a device, ExamplePD_RegisterMR for memory.
package verbs
