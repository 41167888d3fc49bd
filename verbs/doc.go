// Package verbs binds libibverbs, the RDMA verbs of IBA chapter 11, through
// cgo: devices, protection domains, memory regions, completion queues and
// channels, queue pairs (RC, UC, UD) with every state transition, address
// handles, shared receive queues, the data path (post send and receive,
// poll) and asynchronous events.
//
// It is the only cgo package of rdmakit (docs/design.md, "Layers"): the data
// path needs the vendor's user-space driver, which only libibverbs loads.
// Everything lives behind the build constraint `linux && cgo`; without cgo
// the package holds nothing but this comment, so the rest of the module
// and the static ibtool build without it. Package verbs/vmad puts a
// mad.Transport on a UD QP of this package, and ibtool's rc_pingpong,
// ud_pingpong and rdma_bw commands use it when ibtool is built with cgo.
//
// Resources own what is made from them, as python-rdma's ibverbs did:
// closing a Context closes its PDs, CQs and channels, closing a PD closes
// its MRs, AHs, SRQs and QPs, and closing a CQ closes the QPs that use it.
// Errors are *Error values that unwrap to the syscall.Errno libibverbs
// reported (errors.Is(err, syscall.EINVAL)); a failed completion is a
// *WCError. Memory for MRs comes from PD.AllocMR, outside the Go heap, so
// the adapter never holds a Go pointer.
package verbs
