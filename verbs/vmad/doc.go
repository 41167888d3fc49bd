// Package vmad is a mad.Transport over a verbs UD QP: it sends GMPs to QP1
// of any port with the GSI Q_Key (0x80010000) and its QP's P_Key, and
// receives the replies on the same QP, so the management classes other
// than subnet management (SA, PerfMgt, vendor classes, ...) work without
// access to /dev/infiniband/umadN. It is python-rdma's VMAD (rdma/vmad.py)
// for mad.Client.
//
// IBA 13.5.1 lets a GMP come from any QP: a reply goes back to the
// requester's source QP (13.5.2), here the UD QP. SMPs need QP0 and are
// refused. The transport does no RMPP itself (KernelRMPP reports false),
// so mad.Client runs RMPP in user space (IBA 13.6): SA tables and
// vendor-OUI transfers longer than one MAD work, unlike python-rdma's VMAD.
//
// In the layers of docs/design.md it sits beside umad, ibsim and sim under
// mad. It builds everywhere, without cgo or RDMA headers: package verbs
// loads libibverbs when Open is called, and Open fails with an error
// matching verbs.ErrNotAvailable where libibverbs is not installed.
package vmad
