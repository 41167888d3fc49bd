// Package rdmadev joins the two kernel views of the RDMA devices of this
// machine: sysfs, read by package device (the view libibumad, ibstat and
// the MAD tools use), and RDMA netlink, read by package nldev (the view
// rdma(8) uses). Join pairs them by device name and port number; Check lists
// every attribute where they disagree (names, node and system image GUIDs,
// node type, firmware version, port count, port state, physical state, LID,
// SM LID, LMC, subnet prefix, capability mask, link layer and netdev).
//
// It is its own package, above both, because device and nldev are siblings
// in docs/design.md's layers: neither should import the other, and a program that
// only needs one view should not pull in the other.
//
// The two views are read one after the other, not atomically: a port that
// changes state in between shows as a mismatch; call Join again to tell a
// transition from a disagreement.
package rdmadev
