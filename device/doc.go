// Package device finds the RDMA devices and end ports of this machine by
// reading sysfs, the way python-rdma's rdma.devices and libibumad do, and
// picks the end port a command works on (the -C and -P options).
//
// It sits at the bottom of the layers in docs/design.md, beside iba: package umad
// opens the character devices it names (umadN, issmN; uverbsN for verbs), and
// the commands use it for ibstat, ibv_devices, ibstatus and for choosing the
// local port. Local port attributes (LID, SM LID, LMC, GIDs, P_Keys) come
// from sysfs rather than from SMPs sent to ourselves, so they stay readable
// when an SM enforces an M_Key.
//
// Where things are read, all below FS.SysRoot (default /sys):
//
//	class/infiniband/<dev>/               node_type, node_guid, sys_image_guid, fw_ver, hw_rev, board_id, hca_type, node_desc
//	class/infiniband/<dev>/ports/<n>/     state, phys_state, rate, lid, sm_lid, lid_mask_count, sm_sl, cap_mask,
//	                                      link_layer, gids/<i>, gid_attrs/{types,ndevs}/<i>, pkeys/<i>,
//	                                      counters/*, hw_counters/*
//	class/infiniband_mad/abi_version      the umad ABI (5)
//	class/infiniband_mad/{umad,issm}<k>/  ibdev, port, dev
//	class/infiniband_verbs/uverbs<k>/     ibdev, dev
//
// Character devices are named, as libibumad names them, <FS.DevRoot>/infiniband/<name>
// (default /dev/infiniband/umad0).
//
// Kernels with multi-plane ("planarized") HCAs expose one port GUID through
// several RDMA devices: plane devices whose ports set IsSMDisabled in their
// CapabilityMask and carry GMPs, and one device without that bit that carries
// SMPs. Port.GSIUmad and Port.SMIUmad name the umad devices for the two kinds
// of MAD, paired by port GUID exactly as libibumad's umad_get_smi_gsi_pairs
// does; on ordinary HCAs both are the port's own umad device.
//
// Example lists the devices of a sysfs tree and finds an end port.
package device
