// Package umad is the mad.Transport of the kernel's user MAD interface,
// /dev/infiniband/umadN (rdma/ib_user_mad.h, ABI version 5), in pure Go on
// golang.org/x/sys/unix.
//
// It is one of the transport implementations under package mad in
// docs/design.md's layers: it registers kernel MAD agents (QP0 for subnet
// management, QP1 for everything else), writes and reads MADs with their
// struct ib_user_mad header in the P_Key index layout, and leaves matching,
// retries and decoding to mad.Client. The kernel does RMPP for agents that
// ask for it, so KernelRMPP is true and reassembled replies can be longer
// than 256 bytes. The kernel also rewrites the upper 32 bits of a request's
// TID to route the reply back to the sending agent; callers match on the
// lower 32 bits.
//
// Which file to open comes from package device: Open takes a device.Port
// and uses its umad device and its sysfs for LocalPort. OpenEndPort opens
// an end port as infiniband-diags 56 does: on a planarized HCA, whose SMPs
// go through another device than its GMPs (device.Port.SMIPort and
// GSIPort), both devices behind one mad.Transport. Reads wait in Go's
// runtime poller, so a Recv ends at once when its context ends or the
// Transport is closed, without a helper goroutine.
package umad
