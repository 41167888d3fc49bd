package verbs

import (
	"testing"
	"unsafe"
)

// TestVerbsABI checks the Go declarations of abi.go against the layout of
// rdma-core's structures: the offsets and sizes below are what the C
// compiler gives <infiniband/verbs.h> on LP64 Linux (amd64, arm64). They
// are facts about the library's ABI, fixed since rdma-core's first
// release; the guest tests check them against the real library too
// (TestGuestVerbsABI compares every attribute with ibv_devinfo).
func TestVerbsABI(t *testing.T) {
	fields := []struct {
		name          string
		cOff, cSize   uintptr
		goOff, goSize uintptr
	}{
		{"ibv_context.device", 0, 8, unsafe.Offsetof(cContext{}.device), unsafe.Sizeof(cContext{}.device)},
		{"ibv_context.ops", 8, 256, unsafe.Offsetof(cContext{}.ops), unsafe.Sizeof(cContext{}.ops)},
		{"ibv_context.async_fd", 268, 4, unsafe.Offsetof(cContext{}.asyncFD), unsafe.Sizeof(cContext{}.asyncFD)},
		{"ibv_context.cmd_fd", 264, 4, unsafe.Offsetof(cContext{}.cmdFD), unsafe.Sizeof(cContext{}.cmdFD)},
		{"ibv_context.num_comp_vectors", 272, 4, unsafe.Offsetof(cContext{}.numCompVectors), unsafe.Sizeof(cContext{}.numCompVectors)},
		{"ibv_context_ops.poll_cq", 88, 8, unsafe.Offsetof(cContextOps{}.pollCQ), unsafe.Sizeof(cContextOps{}.pollCQ)},
		{"ibv_context_ops.req_notify_cq", 96, 8, unsafe.Offsetof(cContextOps{}.reqNotifyCQ), unsafe.Sizeof(cContextOps{}.reqNotifyCQ)},
		{"ibv_context_ops.post_srq_recv", 160, 8, unsafe.Offsetof(cContextOps{}.postSRQRecv), unsafe.Sizeof(cContextOps{}.postSRQRecv)},
		{"ibv_context_ops.post_send", 200, 8, unsafe.Offsetof(cContextOps{}.postSend), unsafe.Sizeof(cContextOps{}.postSend)},
		{"ibv_context_ops.post_recv", 208, 8, unsafe.Offsetof(cContextOps{}.postRecv), unsafe.Sizeof(cContextOps{}.postRecv)},
		{"ibv_device.node_type", 16, 4, unsafe.Offsetof(cDevice{}.nodeType), unsafe.Sizeof(cDevice{}.nodeType)},
		{"ibv_device.transport_type", 20, 4, unsafe.Offsetof(cDevice{}.transportType), unsafe.Sizeof(cDevice{}.transportType)},
		{"ibv_qp.context", 0, 8, unsafe.Offsetof(cQP{}.context), unsafe.Sizeof(cQP{}.context)},
		{"ibv_qp.qp_num", 52, 4, unsafe.Offsetof(cQP{}.qpNum), unsafe.Sizeof(cQP{}.qpNum)},
		{"ibv_qp.state", 56, 4, unsafe.Offsetof(cQP{}.state), unsafe.Sizeof(cQP{}.state)},
		{"ibv_qp.qp_type", 60, 4, unsafe.Offsetof(cQP{}.qpType), unsafe.Sizeof(cQP{}.qpType)},
		{"ibv_cq.context", 0, 8, unsafe.Offsetof(cCQ{}.context), unsafe.Sizeof(cCQ{}.context)},
		{"ibv_cq.channel", 8, 8, unsafe.Offsetof(cCQ{}.channel), unsafe.Sizeof(cCQ{}.channel)},
		{"ibv_cq.cqe", 28, 4, unsafe.Offsetof(cCQ{}.cqe), unsafe.Sizeof(cCQ{}.cqe)},
		{"ibv_comp_channel.context", 0, 8, unsafe.Offsetof(cCompChannel{}.context), unsafe.Sizeof(cCompChannel{}.context)},
		{"ibv_comp_channel.fd", 8, 4, unsafe.Offsetof(cCompChannel{}.fd), unsafe.Sizeof(cCompChannel{}.fd)},
		{"ibv_mr.context", 0, 8, unsafe.Offsetof(cMR{}.context), unsafe.Sizeof(cMR{}.context)},
		{"ibv_mr.pd", 8, 8, unsafe.Offsetof(cMR{}.pd), unsafe.Sizeof(cMR{}.pd)},
		{"ibv_mr.addr", 16, 8, unsafe.Offsetof(cMR{}.addr), unsafe.Sizeof(cMR{}.addr)},
		{"ibv_mr.length", 24, 8, unsafe.Offsetof(cMR{}.length), unsafe.Sizeof(cMR{}.length)},
		{"ibv_mr.handle", 32, 4, unsafe.Offsetof(cMR{}.handle), unsafe.Sizeof(cMR{}.handle)},
		{"ibv_mr.lkey", 36, 4, unsafe.Offsetof(cMR{}.lkey), unsafe.Sizeof(cMR{}.lkey)},
		{"ibv_mr.rkey", 40, 4, unsafe.Offsetof(cMR{}.rkey), unsafe.Sizeof(cMR{}.rkey)},
		{"ibv_wc.wr_id", 0, 8, unsafe.Offsetof(cWC{}.wrID), unsafe.Sizeof(cWC{}.wrID)},
		{"ibv_wc.status", 8, 4, unsafe.Offsetof(cWC{}.status), unsafe.Sizeof(cWC{}.status)},
		{"ibv_wc.opcode", 12, 4, unsafe.Offsetof(cWC{}.opcode), unsafe.Sizeof(cWC{}.opcode)},
		{"ibv_wc.vendor_err", 16, 4, unsafe.Offsetof(cWC{}.vendorErr), unsafe.Sizeof(cWC{}.vendorErr)},
		{"ibv_wc.byte_len", 20, 4, unsafe.Offsetof(cWC{}.byteLen), unsafe.Sizeof(cWC{}.byteLen)},
		{"ibv_wc.imm_data", 24, 4, unsafe.Offsetof(cWC{}.imm), unsafe.Sizeof(cWC{}.imm)},
		{"ibv_wc.qp_num", 28, 4, unsafe.Offsetof(cWC{}.qpNum), unsafe.Sizeof(cWC{}.qpNum)},
		{"ibv_wc.src_qp", 32, 4, unsafe.Offsetof(cWC{}.srcQP), unsafe.Sizeof(cWC{}.srcQP)},
		{"ibv_wc.wc_flags", 36, 4, unsafe.Offsetof(cWC{}.wcFlags), unsafe.Sizeof(cWC{}.wcFlags)},
		{"ibv_wc.pkey_index", 40, 2, unsafe.Offsetof(cWC{}.pkeyIndex), unsafe.Sizeof(cWC{}.pkeyIndex)},
		{"ibv_wc.slid", 42, 2, unsafe.Offsetof(cWC{}.slid), unsafe.Sizeof(cWC{}.slid)},
		{"ibv_wc.sl", 44, 1, unsafe.Offsetof(cWC{}.sl), unsafe.Sizeof(cWC{}.sl)},
		{"ibv_wc.dlid_path_bits", 45, 1, unsafe.Offsetof(cWC{}.dlidPathBits), unsafe.Sizeof(cWC{}.dlidPathBits)},
		{"ibv_sge.addr", 0, 8, unsafe.Offsetof(cSGE{}.addr), unsafe.Sizeof(cSGE{}.addr)},
		{"ibv_sge.length", 8, 4, unsafe.Offsetof(cSGE{}.length), unsafe.Sizeof(cSGE{}.length)},
		{"ibv_sge.lkey", 12, 4, unsafe.Offsetof(cSGE{}.lkey), unsafe.Sizeof(cSGE{}.lkey)},
		{"ibv_send_wr.wr_id", 0, 8, unsafe.Offsetof(cSendWR{}.wrID), unsafe.Sizeof(cSendWR{}.wrID)},
		{"ibv_send_wr.next", 8, 8, unsafe.Offsetof(cSendWR{}.next), unsafe.Sizeof(cSendWR{}.next)},
		{"ibv_send_wr.sg_list", 16, 8, unsafe.Offsetof(cSendWR{}.sgList), unsafe.Sizeof(cSendWR{}.sgList)},
		{"ibv_send_wr.num_sge", 24, 4, unsafe.Offsetof(cSendWR{}.numSGE), unsafe.Sizeof(cSendWR{}.numSGE)},
		{"ibv_send_wr.opcode", 28, 4, unsafe.Offsetof(cSendWR{}.opcode), unsafe.Sizeof(cSendWR{}.opcode)},
		{"ibv_send_wr.send_flags", 32, 4, unsafe.Offsetof(cSendWR{}.sendFlags), unsafe.Sizeof(cSendWR{}.sendFlags)},
		{"ibv_send_wr.imm_data", 36, 4, unsafe.Offsetof(cSendWR{}.imm), unsafe.Sizeof(cSendWR{}.imm)},
		{"ibv_send_wr.wr.rdma.remote_addr", 40, 8, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cRDMA{}.remoteAddr), unsafe.Sizeof(cRDMA{}.remoteAddr)},
		{"ibv_send_wr.wr.rdma.rkey", 48, 4, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cRDMA{}.rkey), unsafe.Sizeof(cRDMA{}.rkey)},
		{"ibv_send_wr.wr.atomic.remote_addr", 40, 8, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cAtomic{}.remoteAddr), unsafe.Sizeof(cAtomic{}.remoteAddr)},
		{"ibv_send_wr.wr.atomic.compare_add", 48, 8, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cAtomic{}.compareAdd), unsafe.Sizeof(cAtomic{}.compareAdd)},
		{"ibv_send_wr.wr.atomic.swap", 56, 8, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cAtomic{}.swap), unsafe.Sizeof(cAtomic{}.swap)},
		{"ibv_send_wr.wr.atomic.rkey", 64, 4, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cAtomic{}.rkey), unsafe.Sizeof(cAtomic{}.rkey)},
		{"ibv_send_wr.wr.ud.ah", 40, 8, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cUD{}.ah), unsafe.Sizeof(cUD{}.ah)},
		{"ibv_send_wr.wr.ud.remote_qpn", 48, 4, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cUD{}.remoteQPN), unsafe.Sizeof(cUD{}.remoteQPN)},
		{"ibv_send_wr.wr.ud.remote_qkey", 52, 4, unsafe.Offsetof(cSendWR{}.wr) + unsafe.Offsetof(cUD{}.remoteQKey), unsafe.Sizeof(cUD{}.remoteQKey)},
		{"ibv_recv_wr.wr_id", 0, 8, unsafe.Offsetof(cRecvWR{}.wrID), unsafe.Sizeof(cRecvWR{}.wrID)},
		{"ibv_recv_wr.next", 8, 8, unsafe.Offsetof(cRecvWR{}.next), unsafe.Sizeof(cRecvWR{}.next)},
		{"ibv_recv_wr.sg_list", 16, 8, unsafe.Offsetof(cRecvWR{}.sgList), unsafe.Sizeof(cRecvWR{}.sgList)},
		{"ibv_recv_wr.num_sge", 24, 4, unsafe.Offsetof(cRecvWR{}.numSGE), unsafe.Sizeof(cRecvWR{}.numSGE)},
		{"ibv_global_route.dgid", 0, 16, unsafe.Offsetof(cGlobalRoute{}.dgid), unsafe.Sizeof(cGlobalRoute{}.dgid)},
		{"ibv_global_route.flow_label", 16, 4, unsafe.Offsetof(cGlobalRoute{}.flowLabel), unsafe.Sizeof(cGlobalRoute{}.flowLabel)},
		{"ibv_global_route.sgid_index", 20, 1, unsafe.Offsetof(cGlobalRoute{}.sgidIndex), unsafe.Sizeof(cGlobalRoute{}.sgidIndex)},
		{"ibv_global_route.hop_limit", 21, 1, unsafe.Offsetof(cGlobalRoute{}.hopLimit), unsafe.Sizeof(cGlobalRoute{}.hopLimit)},
		{"ibv_global_route.traffic_class", 22, 1, unsafe.Offsetof(cGlobalRoute{}.trafficClass), unsafe.Sizeof(cGlobalRoute{}.trafficClass)},
		{"ibv_ah_attr.grh", 0, 24, unsafe.Offsetof(cAHAttr{}.grh), unsafe.Sizeof(cAHAttr{}.grh)},
		{"ibv_ah_attr.dlid", 24, 2, unsafe.Offsetof(cAHAttr{}.dlid), unsafe.Sizeof(cAHAttr{}.dlid)},
		{"ibv_ah_attr.sl", 26, 1, unsafe.Offsetof(cAHAttr{}.sl), unsafe.Sizeof(cAHAttr{}.sl)},
		{"ibv_ah_attr.src_path_bits", 27, 1, unsafe.Offsetof(cAHAttr{}.srcPathBits), unsafe.Sizeof(cAHAttr{}.srcPathBits)},
		{"ibv_ah_attr.static_rate", 28, 1, unsafe.Offsetof(cAHAttr{}.staticRate), unsafe.Sizeof(cAHAttr{}.staticRate)},
		{"ibv_ah_attr.is_global", 29, 1, unsafe.Offsetof(cAHAttr{}.isGlobal), unsafe.Sizeof(cAHAttr{}.isGlobal)},
		{"ibv_ah_attr.port_num", 30, 1, unsafe.Offsetof(cAHAttr{}.portNum), unsafe.Sizeof(cAHAttr{}.portNum)},
		{"ibv_qp_cap.max_send_wr", 0, 4, unsafe.Offsetof(cQPCap{}.maxSendWR), unsafe.Sizeof(cQPCap{}.maxSendWR)},
		{"ibv_qp_cap.max_recv_wr", 4, 4, unsafe.Offsetof(cQPCap{}.maxRecvWR), unsafe.Sizeof(cQPCap{}.maxRecvWR)},
		{"ibv_qp_cap.max_send_sge", 8, 4, unsafe.Offsetof(cQPCap{}.maxSendSGE), unsafe.Sizeof(cQPCap{}.maxSendSGE)},
		{"ibv_qp_cap.max_recv_sge", 12, 4, unsafe.Offsetof(cQPCap{}.maxRecvSGE), unsafe.Sizeof(cQPCap{}.maxRecvSGE)},
		{"ibv_qp_cap.max_inline_data", 16, 4, unsafe.Offsetof(cQPCap{}.maxInlineData), unsafe.Sizeof(cQPCap{}.maxInlineData)},
		{"ibv_qp_init_attr.qp_context", 0, 8, unsafe.Offsetof(cQPInitAttr{}.qpContext), unsafe.Sizeof(cQPInitAttr{}.qpContext)},
		{"ibv_qp_init_attr.send_cq", 8, 8, unsafe.Offsetof(cQPInitAttr{}.sendCQ), unsafe.Sizeof(cQPInitAttr{}.sendCQ)},
		{"ibv_qp_init_attr.recv_cq", 16, 8, unsafe.Offsetof(cQPInitAttr{}.recvCQ), unsafe.Sizeof(cQPInitAttr{}.recvCQ)},
		{"ibv_qp_init_attr.srq", 24, 8, unsafe.Offsetof(cQPInitAttr{}.srq), unsafe.Sizeof(cQPInitAttr{}.srq)},
		{"ibv_qp_init_attr.cap", 32, 20, unsafe.Offsetof(cQPInitAttr{}.cap), unsafe.Sizeof(cQPInitAttr{}.cap)},
		{"ibv_qp_init_attr.qp_type", 52, 4, unsafe.Offsetof(cQPInitAttr{}.qpType), unsafe.Sizeof(cQPInitAttr{}.qpType)},
		{"ibv_qp_init_attr.sq_sig_all", 56, 4, unsafe.Offsetof(cQPInitAttr{}.sqSigAll), unsafe.Sizeof(cQPInitAttr{}.sqSigAll)},
		{"ibv_qp_attr.qp_state", 0, 4, unsafe.Offsetof(cQPAttr{}.qpState), unsafe.Sizeof(cQPAttr{}.qpState)},
		{"ibv_qp_attr.cur_qp_state", 4, 4, unsafe.Offsetof(cQPAttr{}.curQPState), unsafe.Sizeof(cQPAttr{}.curQPState)},
		{"ibv_qp_attr.path_mtu", 8, 4, unsafe.Offsetof(cQPAttr{}.pathMTU), unsafe.Sizeof(cQPAttr{}.pathMTU)},
		{"ibv_qp_attr.path_mig_state", 12, 4, unsafe.Offsetof(cQPAttr{}.pathMigState), unsafe.Sizeof(cQPAttr{}.pathMigState)},
		{"ibv_qp_attr.qkey", 16, 4, unsafe.Offsetof(cQPAttr{}.qkey), unsafe.Sizeof(cQPAttr{}.qkey)},
		{"ibv_qp_attr.rq_psn", 20, 4, unsafe.Offsetof(cQPAttr{}.rqPSN), unsafe.Sizeof(cQPAttr{}.rqPSN)},
		{"ibv_qp_attr.sq_psn", 24, 4, unsafe.Offsetof(cQPAttr{}.sqPSN), unsafe.Sizeof(cQPAttr{}.sqPSN)},
		{"ibv_qp_attr.dest_qp_num", 28, 4, unsafe.Offsetof(cQPAttr{}.destQPNum), unsafe.Sizeof(cQPAttr{}.destQPNum)},
		{"ibv_qp_attr.qp_access_flags", 32, 4, unsafe.Offsetof(cQPAttr{}.qpAccessFlags), unsafe.Sizeof(cQPAttr{}.qpAccessFlags)},
		{"ibv_qp_attr.cap", 36, 20, unsafe.Offsetof(cQPAttr{}.cap), unsafe.Sizeof(cQPAttr{}.cap)},
		{"ibv_qp_attr.ah_attr", 56, 32, unsafe.Offsetof(cQPAttr{}.ahAttr), unsafe.Sizeof(cQPAttr{}.ahAttr)},
		{"ibv_qp_attr.alt_ah_attr", 88, 32, unsafe.Offsetof(cQPAttr{}.altAHAttr), unsafe.Sizeof(cQPAttr{}.altAHAttr)},
		{"ibv_qp_attr.pkey_index", 120, 2, unsafe.Offsetof(cQPAttr{}.pkeyIndex), unsafe.Sizeof(cQPAttr{}.pkeyIndex)},
		{"ibv_qp_attr.alt_pkey_index", 122, 2, unsafe.Offsetof(cQPAttr{}.altPKeyIndex), unsafe.Sizeof(cQPAttr{}.altPKeyIndex)},
		{"ibv_qp_attr.en_sqd_async_notify", 124, 1, unsafe.Offsetof(cQPAttr{}.enSQDAsyncNotify), unsafe.Sizeof(cQPAttr{}.enSQDAsyncNotify)},
		{"ibv_qp_attr.sq_draining", 125, 1, unsafe.Offsetof(cQPAttr{}.sqDraining), unsafe.Sizeof(cQPAttr{}.sqDraining)},
		{"ibv_qp_attr.max_rd_atomic", 126, 1, unsafe.Offsetof(cQPAttr{}.maxRDAtomic), unsafe.Sizeof(cQPAttr{}.maxRDAtomic)},
		{"ibv_qp_attr.max_dest_rd_atomic", 127, 1, unsafe.Offsetof(cQPAttr{}.maxDestRDAtomic), unsafe.Sizeof(cQPAttr{}.maxDestRDAtomic)},
		{"ibv_qp_attr.min_rnr_timer", 128, 1, unsafe.Offsetof(cQPAttr{}.minRNRTimer), unsafe.Sizeof(cQPAttr{}.minRNRTimer)},
		{"ibv_qp_attr.port_num", 129, 1, unsafe.Offsetof(cQPAttr{}.portNum), unsafe.Sizeof(cQPAttr{}.portNum)},
		{"ibv_qp_attr.timeout", 130, 1, unsafe.Offsetof(cQPAttr{}.timeout), unsafe.Sizeof(cQPAttr{}.timeout)},
		{"ibv_qp_attr.retry_cnt", 131, 1, unsafe.Offsetof(cQPAttr{}.retryCnt), unsafe.Sizeof(cQPAttr{}.retryCnt)},
		{"ibv_qp_attr.rnr_retry", 132, 1, unsafe.Offsetof(cQPAttr{}.rnrRetry), unsafe.Sizeof(cQPAttr{}.rnrRetry)},
		{"ibv_qp_attr.alt_port_num", 133, 1, unsafe.Offsetof(cQPAttr{}.altPortNum), unsafe.Sizeof(cQPAttr{}.altPortNum)},
		{"ibv_qp_attr.alt_timeout", 134, 1, unsafe.Offsetof(cQPAttr{}.altTimeout), unsafe.Sizeof(cQPAttr{}.altTimeout)},
		{"ibv_qp_attr.rate_limit", 136, 4, unsafe.Offsetof(cQPAttr{}.rateLimit), unsafe.Sizeof(cQPAttr{}.rateLimit)},
		{"ibv_port_attr.state", 0, 4, unsafe.Offsetof(cPortAttr{}.state), unsafe.Sizeof(cPortAttr{}.state)},
		{"ibv_port_attr.max_mtu", 4, 4, unsafe.Offsetof(cPortAttr{}.maxMTU), unsafe.Sizeof(cPortAttr{}.maxMTU)},
		{"ibv_port_attr.active_mtu", 8, 4, unsafe.Offsetof(cPortAttr{}.activeMTU), unsafe.Sizeof(cPortAttr{}.activeMTU)},
		{"ibv_port_attr.gid_tbl_len", 12, 4, unsafe.Offsetof(cPortAttr{}.gidTblLen), unsafe.Sizeof(cPortAttr{}.gidTblLen)},
		{"ibv_port_attr.port_cap_flags", 16, 4, unsafe.Offsetof(cPortAttr{}.portCapFlags), unsafe.Sizeof(cPortAttr{}.portCapFlags)},
		{"ibv_port_attr.max_msg_sz", 20, 4, unsafe.Offsetof(cPortAttr{}.maxMsgSz), unsafe.Sizeof(cPortAttr{}.maxMsgSz)},
		{"ibv_port_attr.bad_pkey_cntr", 24, 4, unsafe.Offsetof(cPortAttr{}.badPKeyCntr), unsafe.Sizeof(cPortAttr{}.badPKeyCntr)},
		{"ibv_port_attr.qkey_viol_cntr", 28, 4, unsafe.Offsetof(cPortAttr{}.qkeyViolCntr), unsafe.Sizeof(cPortAttr{}.qkeyViolCntr)},
		{"ibv_port_attr.pkey_tbl_len", 32, 2, unsafe.Offsetof(cPortAttr{}.pkeyTblLen), unsafe.Sizeof(cPortAttr{}.pkeyTblLen)},
		{"ibv_port_attr.lid", 34, 2, unsafe.Offsetof(cPortAttr{}.lid), unsafe.Sizeof(cPortAttr{}.lid)},
		{"ibv_port_attr.sm_lid", 36, 2, unsafe.Offsetof(cPortAttr{}.smLID), unsafe.Sizeof(cPortAttr{}.smLID)},
		{"ibv_port_attr.lmc", 38, 1, unsafe.Offsetof(cPortAttr{}.lmc), unsafe.Sizeof(cPortAttr{}.lmc)},
		{"ibv_port_attr.max_vl_num", 39, 1, unsafe.Offsetof(cPortAttr{}.maxVLNum), unsafe.Sizeof(cPortAttr{}.maxVLNum)},
		{"ibv_port_attr.sm_sl", 40, 1, unsafe.Offsetof(cPortAttr{}.smSL), unsafe.Sizeof(cPortAttr{}.smSL)},
		{"ibv_port_attr.subnet_timeout", 41, 1, unsafe.Offsetof(cPortAttr{}.subnetTimeout), unsafe.Sizeof(cPortAttr{}.subnetTimeout)},
		{"ibv_port_attr.init_type_reply", 42, 1, unsafe.Offsetof(cPortAttr{}.initTypeReply), unsafe.Sizeof(cPortAttr{}.initTypeReply)},
		{"ibv_port_attr.active_width", 43, 1, unsafe.Offsetof(cPortAttr{}.activeWidth), unsafe.Sizeof(cPortAttr{}.activeWidth)},
		{"ibv_port_attr.active_speed", 44, 1, unsafe.Offsetof(cPortAttr{}.activeSpeed), unsafe.Sizeof(cPortAttr{}.activeSpeed)},
		{"ibv_port_attr.phys_state", 45, 1, unsafe.Offsetof(cPortAttr{}.physState), unsafe.Sizeof(cPortAttr{}.physState)},
		{"ibv_port_attr.link_layer", 46, 1, unsafe.Offsetof(cPortAttr{}.linkLayer), unsafe.Sizeof(cPortAttr{}.linkLayer)},
		{"ibv_port_attr.flags", 47, 1, unsafe.Offsetof(cPortAttr{}.flags), unsafe.Sizeof(cPortAttr{}.flags)},
		{"ibv_device_attr.fw_ver", 0, 64, unsafe.Offsetof(cDeviceAttr{}.fwVer), unsafe.Sizeof(cDeviceAttr{}.fwVer)},
		{"ibv_device_attr.node_guid", 64, 8, unsafe.Offsetof(cDeviceAttr{}.nodeGUID), unsafe.Sizeof(cDeviceAttr{}.nodeGUID)},
		{"ibv_device_attr.sys_image_guid", 72, 8, unsafe.Offsetof(cDeviceAttr{}.sysImageGUID), unsafe.Sizeof(cDeviceAttr{}.sysImageGUID)},
		{"ibv_device_attr.max_mr_size", 80, 8, unsafe.Offsetof(cDeviceAttr{}.maxMRSize), unsafe.Sizeof(cDeviceAttr{}.maxMRSize)},
		{"ibv_device_attr.page_size_cap", 88, 8, unsafe.Offsetof(cDeviceAttr{}.pageSizeCap), unsafe.Sizeof(cDeviceAttr{}.pageSizeCap)},
		{"ibv_device_attr.vendor_id", 96, 4, unsafe.Offsetof(cDeviceAttr{}.vendorID), unsafe.Sizeof(cDeviceAttr{}.vendorID)},
		{"ibv_device_attr.vendor_part_id", 100, 4, unsafe.Offsetof(cDeviceAttr{}.vendorPartID), unsafe.Sizeof(cDeviceAttr{}.vendorPartID)},
		{"ibv_device_attr.hw_ver", 104, 4, unsafe.Offsetof(cDeviceAttr{}.hwVer), unsafe.Sizeof(cDeviceAttr{}.hwVer)},
		{"ibv_device_attr.max_qp", 108, 4, unsafe.Offsetof(cDeviceAttr{}.maxQP), unsafe.Sizeof(cDeviceAttr{}.maxQP)},
		{"ibv_device_attr.max_qp_wr", 112, 4, unsafe.Offsetof(cDeviceAttr{}.maxQPWR), unsafe.Sizeof(cDeviceAttr{}.maxQPWR)},
		{"ibv_device_attr.device_cap_flags", 116, 4, unsafe.Offsetof(cDeviceAttr{}.deviceCapFlags), unsafe.Sizeof(cDeviceAttr{}.deviceCapFlags)},
		{"ibv_device_attr.max_sge", 120, 4, unsafe.Offsetof(cDeviceAttr{}.maxSGE), unsafe.Sizeof(cDeviceAttr{}.maxSGE)},
		{"ibv_device_attr.max_cq", 128, 4, unsafe.Offsetof(cDeviceAttr{}.maxCQ), unsafe.Sizeof(cDeviceAttr{}.maxCQ)},
		{"ibv_device_attr.max_cqe", 132, 4, unsafe.Offsetof(cDeviceAttr{}.maxCQE), unsafe.Sizeof(cDeviceAttr{}.maxCQE)},
		{"ibv_device_attr.max_mr", 136, 4, unsafe.Offsetof(cDeviceAttr{}.maxMR), unsafe.Sizeof(cDeviceAttr{}.maxMR)},
		{"ibv_device_attr.max_pd", 140, 4, unsafe.Offsetof(cDeviceAttr{}.maxPD), unsafe.Sizeof(cDeviceAttr{}.maxPD)},
		{"ibv_device_attr.max_qp_rd_atom", 144, 4, unsafe.Offsetof(cDeviceAttr{}.maxQPRDAtom), unsafe.Sizeof(cDeviceAttr{}.maxQPRDAtom)},
		{"ibv_device_attr.max_qp_init_rd_atom", 156, 4, unsafe.Offsetof(cDeviceAttr{}.maxQPInitRDAtom), unsafe.Sizeof(cDeviceAttr{}.maxQPInitRDAtom)},
		{"ibv_device_attr.atomic_cap", 164, 4, unsafe.Offsetof(cDeviceAttr{}.atomicCap), unsafe.Sizeof(cDeviceAttr{}.atomicCap)},
		{"ibv_device_attr.max_ah", 200, 4, unsafe.Offsetof(cDeviceAttr{}.maxAH), unsafe.Sizeof(cDeviceAttr{}.maxAH)},
		{"ibv_device_attr.max_srq", 212, 4, unsafe.Offsetof(cDeviceAttr{}.maxSRQ), unsafe.Sizeof(cDeviceAttr{}.maxSRQ)},
		{"ibv_device_attr.max_srq_wr", 216, 4, unsafe.Offsetof(cDeviceAttr{}.maxSRQWR), unsafe.Sizeof(cDeviceAttr{}.maxSRQWR)},
		{"ibv_device_attr.max_srq_sge", 220, 4, unsafe.Offsetof(cDeviceAttr{}.maxSRQSGE), unsafe.Sizeof(cDeviceAttr{}.maxSRQSGE)},
		{"ibv_device_attr.max_pkeys", 224, 2, unsafe.Offsetof(cDeviceAttr{}.maxPKeys), unsafe.Sizeof(cDeviceAttr{}.maxPKeys)},
		{"ibv_device_attr.local_ca_ack_delay", 226, 1, unsafe.Offsetof(cDeviceAttr{}.localCAAckDelay), unsafe.Sizeof(cDeviceAttr{}.localCAAckDelay)},
		{"ibv_device_attr.phys_port_cnt", 227, 1, unsafe.Offsetof(cDeviceAttr{}.physPortCnt), unsafe.Sizeof(cDeviceAttr{}.physPortCnt)},
		{"ibv_async_event.element", 0, 8, unsafe.Offsetof(cAsyncEvent{}.element), unsafe.Sizeof(cAsyncEvent{}.element)},
		{"ibv_async_event.event_type", 8, 4, unsafe.Offsetof(cAsyncEvent{}.eventType), unsafe.Sizeof(cAsyncEvent{}.eventType)},
		{"ibv_srq_attr.max_wr", 0, 4, unsafe.Offsetof(cSRQAttr{}.maxWR), unsafe.Sizeof(cSRQAttr{}.maxWR)},
		{"ibv_srq_attr.max_sge", 4, 4, unsafe.Offsetof(cSRQAttr{}.maxSGE), unsafe.Sizeof(cSRQAttr{}.maxSGE)},
		{"ibv_srq_attr.srq_limit", 8, 4, unsafe.Offsetof(cSRQAttr{}.srqLimit), unsafe.Sizeof(cSRQAttr{}.srqLimit)},
		{"ibv_srq_init_attr.srq_context", 0, 8, unsafe.Offsetof(cSRQInitAttr{}.srqContext), unsafe.Sizeof(cSRQInitAttr{}.srqContext)},
		{"ibv_srq_init_attr.attr", 8, 12, unsafe.Offsetof(cSRQInitAttr{}.attr), unsafe.Sizeof(cSRQInitAttr{}.attr)},
		{"ibv_gid_entry.gid", 0, 16, unsafe.Offsetof(cGIDEntry{}.gid), unsafe.Sizeof(cGIDEntry{}.gid)},
		{"ibv_gid_entry.gid_index", 16, 4, unsafe.Offsetof(cGIDEntry{}.gidIndex), unsafe.Sizeof(cGIDEntry{}.gidIndex)},
		{"ibv_gid_entry.port_num", 20, 4, unsafe.Offsetof(cGIDEntry{}.portNum), unsafe.Sizeof(cGIDEntry{}.portNum)},
		{"ibv_gid_entry.gid_type", 24, 4, unsafe.Offsetof(cGIDEntry{}.gidType), unsafe.Sizeof(cGIDEntry{}.gidType)},
		{"ibv_gid_entry.ndev_ifindex", 28, 4, unsafe.Offsetof(cGIDEntry{}.ndevIfindex), unsafe.Sizeof(cGIDEntry{}.ndevIfindex)},
	}
	for _, f := range fields {
		if f.goOff != f.cOff || f.goSize != f.cSize {
			t.Errorf("%s: Go offset %d size %d, C offset %d size %d", f.name, f.goOff, f.goSize, f.cOff, f.cSize)
		}
	}
	sizes := []struct {
		name   string
		cSize  uintptr
		goSize uintptr
	}{
		{"ibv_wc", 48, unsafe.Sizeof(cWC{})},
		{"ibv_sge", 16, unsafe.Sizeof(cSGE{})},
		{"ibv_send_wr", 128, unsafe.Sizeof(cSendWR{})},
		{"ibv_recv_wr", 32, unsafe.Sizeof(cRecvWR{})},
		{"ibv_global_route", 24, unsafe.Sizeof(cGlobalRoute{})},
		{"ibv_ah_attr", 32, unsafe.Sizeof(cAHAttr{})},
		{"ibv_qp_cap", 20, unsafe.Sizeof(cQPCap{})},
		{"ibv_qp_init_attr", 64, unsafe.Sizeof(cQPInitAttr{})},
		{"ibv_qp_attr", 144, unsafe.Sizeof(cQPAttr{})},
		{"ibv_device_attr", 232, unsafe.Sizeof(cDeviceAttr{})},
		{"ibv_async_event", 16, unsafe.Sizeof(cAsyncEvent{})},
		{"ibv_srq_attr", 12, unsafe.Sizeof(cSRQAttr{})},
		{"ibv_srq_init_attr", 24, unsafe.Sizeof(cSRQInitAttr{})},
		{"ibv_gid_entry", 32, unsafe.Sizeof(cGIDEntry{})},
		{"ibv_mr", 48, unsafe.Sizeof(cMR{})},
		{"ibv_context_ops", 256, unsafe.Sizeof(cContextOps{})},
	}
	for _, s := range sizes {
		if s.goSize != s.cSize {
			t.Errorf("sizeof(struct %s) = %d, the Go declaration has %d", s.name, s.cSize, s.goSize)
		}
	}
	// ibv_query_port@@IBVERBS_1.1 writes sizeof(struct _compat_ibv_port_attr)
	// bytes: state through flags.
	if n := unsafe.Offsetof(cPortAttr{}.flags) + 1; n != portAttrCompatSize {
		t.Errorf("the compat port attributes end at %d, want %d", n, portAttrCompatSize)
	}
	// struct ibv_port_attr has grown to 56 bytes (port_cap_flags2,
	// active_speed_ex); the Go one has room for all of it.
	if n := unsafe.Sizeof(cPortAttr{}); n < 56 {
		t.Errorf("cPortAttr is %d bytes, less than struct ibv_port_attr's 56", n)
	}
	// The provider's work request and completion arrays are read with C's
	// stride; the union wr is 8-byte aligned.
	if a := unsafe.Alignof(cSendWR{}); a != 8 {
		t.Errorf("cSendWR alignment %d", a)
	}
}
