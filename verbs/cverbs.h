// Helpers for package verbs: libibverbs' static inline functions and
// macros wrapped as plain functions, and the work requests, completions
// and unions that cgo cannot reach, flattened into plain structs.
#ifndef RDMAKIT_CVERBS_H
#define RDMAKIT_CVERBS_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

// go_send is one send work request, flat (IBA 11.4.1.1 Post Send Request).
struct go_send {
	uint64_t wr_id;
	uint32_t opcode;
	uint32_t flags;
	uint32_t first_sge;
	uint32_t num_sge;
	uint32_t imm; // host order
	uint32_t rkey;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	struct ibv_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
};

// go_recv is one receive work request, flat.
struct go_recv {
	uint64_t wr_id;
	uint32_t first_sge;
	uint32_t num_sge;
};

// go_wc is one work completion, flat (IBA 11.4.2.1 Poll for Completion).
struct go_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm; // host order
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

static inline int go_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a) {
	return ibv_query_port(c, port, a);
}

static inline struct ibv_mr *go_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access) {
	return ibv_reg_mr(pd, addr, len, access);
}

static inline int go_req_notify_cq(struct ibv_cq *cq, int solicited) {
	return ibv_req_notify_cq(cq, solicited);
}

static inline int go_set_nonblock(int fd) {
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return errno;
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	return 0;
}

static inline int go_post_send(struct ibv_qp *qp, struct go_send *ws, int n, struct ibv_sge *sges, int *bad) {
	struct ibv_send_wr *wr = calloc(n, sizeof *wr), *badwr = NULL;
	if (!wr)
		return ENOMEM;
	for (int i = 0; i < n; i++) {
		struct go_send *g = &ws[i];
		wr[i].wr_id = g->wr_id;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = g->num_sge ? &sges[g->first_sge] : NULL;
		wr[i].num_sge = g->num_sge;
		wr[i].opcode = g->opcode;
		wr[i].send_flags = g->flags;
		wr[i].imm_data = htobe32(g->imm);
		switch (g->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
			wr[i].wr.rdma.remote_addr = g->remote_addr;
			wr[i].wr.rdma.rkey = g->rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			wr[i].wr.atomic.remote_addr = g->remote_addr;
			wr[i].wr.atomic.rkey = g->rkey;
			wr[i].wr.atomic.compare_add = g->compare_add;
			wr[i].wr.atomic.swap = g->swap;
			break;
		default:
			if (g->ah) {
				wr[i].wr.ud.ah = g->ah;
				wr[i].wr.ud.remote_qpn = g->remote_qpn;
				wr[i].wr.ud.remote_qkey = g->remote_qkey;
			}
		}
	}
	int rc = ibv_post_send(qp, wr, &badwr);
	*bad = badwr ? (int)(badwr - wr) : -1;
	free(wr);
	return rc;
}

// go_post_recv posts to a QP, or to an SRQ when qp is NULL.
static inline int go_post_recv(struct ibv_qp *qp, struct ibv_srq *srq, struct go_recv *ws, int n, struct ibv_sge *sges, int *bad) {
	struct ibv_recv_wr *wr = calloc(n, sizeof *wr), *badwr = NULL;
	if (!wr)
		return ENOMEM;
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = ws[i].wr_id;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = ws[i].num_sge ? &sges[ws[i].first_sge] : NULL;
		wr[i].num_sge = ws[i].num_sge;
	}
	int rc = qp ? ibv_post_recv(qp, wr, &badwr) : ibv_post_srq_recv(srq, wr, &badwr);
	*bad = badwr ? (int)(badwr - wr) : -1;
	free(wr);
	return rc;
}

// go_poll_cq polls up to n completions into out; it returns the count or
// a negative value on error.
static inline int go_poll_cq(struct ibv_cq *cq, int n, struct go_wc *out) {
	struct ibv_wc wc[64];
	if (n > 64)
		n = 64;
	int got = ibv_poll_cq(cq, n, wc);
	for (int i = 0; i < got; i++) {
		struct go_wc *g = &out[i];
		g->wr_id = wc[i].wr_id;
		g->status = wc[i].status;
		g->opcode = wc[i].opcode;
		g->vendor_err = wc[i].vendor_err;
		g->byte_len = wc[i].byte_len;
		g->imm = be32toh(wc[i].imm_data);
		g->qp_num = wc[i].qp_num;
		g->src_qp = wc[i].src_qp;
		g->wc_flags = wc[i].wc_flags;
		g->pkey_index = wc[i].pkey_index;
		g->slid = wc[i].slid;
		g->sl = wc[i].sl;
		g->dlid_path_bits = wc[i].dlid_path_bits;
	}
	return got;
}

// go_get_cq_event takes one completion event from a (non-blocking)
// channel and acknowledges it; *cqp names the CQ.
static inline int go_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cqp) {
	void *ctx;
	if (ibv_get_cq_event(ch, cqp, &ctx))
		return errno ? errno : EAGAIN;
	ibv_ack_cq_events(*cqp, 1);
	return 0;
}

// go_async is an async event, flat.
struct go_async {
	uint32_t type;
	uint32_t port;
	void *elem;
};

static inline int go_get_async_event(struct ibv_context *c, struct go_async *out) {
	struct ibv_async_event ev;
	if (ibv_get_async_event(c, &ev))
		return errno ? errno : EAGAIN;
	out->type = ev.event_type;
	out->port = 0;
	out->elem = NULL;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		out->elem = ev.element.cq;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out->elem = ev.element.qp;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		out->elem = ev.element.srq;
		break;
	case IBV_EVENT_WQ_FATAL:
		out->elem = ev.element.wq;
		break;
	default:
		out->port = ev.element.port_num;
	}
	ibv_ack_async_event(&ev);
	return 0;
}

#endif
