/* sim_ranks.cu - the force stage of one simulation over MPI ranks, each
 * rank with a GPU (gpu.h, struct gpu_ranks; gpu_internal.h, gpu_rk_*).
 *
 * Per force evaluation, on every rank (the state is the whole state, the
 * same on every rank):
 *   1. this rank's stretch [cut[rank], cut[rank + 1]) of the slots: the
 *      tree is built over every body and walked for the stretch's groups
 *      only (gpu_tree_set_slots); the direct solver gathers the forces of
 *      the stretch's slots from every body (the active-list kernel);
 *   2. the swap, so every slot's acc (x, y, z, phi: 16 bytes) is the one
 *      its owner computed:
 *      nccl: one ncclAllGather of the stretches, each padded to the
 *            largest, on the simulation stream (rk_swap_nccl);
 *      host: the stretch to pinned memory, the allgather callback (dist/,
 *            MPI), the other stretches back up;
 *   3. the balance callback with the force and swap times; it may move
 *      the cuts for the next evaluation (dist/sim.c: by measured time).
 *
 * NCCL is opened with dlopen("libnccl.so.2") at run time, so that no build
 * needs it and a machine without it swaps through the host. The handful
 * of entry points and types used are declared here as nccl.h documents
 * them (NCCL 2.x ABI: ncclResult_t an int with ncclSuccess 0, the unique
 * id 128 bytes, ncclFloat32 = 7). NVLink multicast stays off
 * (NCCL_NVLS_ENABLE=0 unless the environment says otherwise): the
 * all-gather does not need it, and the lent machines forbid it. */
extern "C" {
#include "../../scene/log.h"
}
#include "gpu_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- NCCL at run time ---- */
typedef struct {
	char internal[128];
} rk_nccl_id;
typedef void *rk_nccl_comm;
enum { RK_NCCL_SUCCESS = 0, RK_NCCL_FLOAT32 = 7 };

struct rk_nccl {
	void *lib;
	int (*get_unique_id)(rk_nccl_id *);
	int (*comm_init_rank)(rk_nccl_comm *, int, rk_nccl_id, int);
	int (*comm_destroy)(rk_nccl_comm);
	int (*all_gather)(const void *, void *, size_t, int, rk_nccl_comm, cudaStream_t);
	int (*group_start)(void);
	int (*group_end)(void);
	const char *(*error_string)(int);
	rk_nccl_comm comm;
};

struct gpu_rk {
	struct gpu_ranks r;
	size_t n;
	size_t *cut;            /* P + 1 */
	size_t *bytes, *off;    /* P each: the host swap's blocks */
	float4 *h_acc;          /* pinned, n: the host swap */
	int *d_list, *d_count;  /* direct: the stretch's slots */
	float4 *d_send, *d_gather; /* nccl: the own stretch padded to cap, and P of them */
	size_t cap;             /* slots each of d_send and d_gather's blocks hold */
	size_t list_lo, list_hi; /* the stretch d_list holds */
	cudaEvent_t ev[3];      /* force start, force end, swap end */
	struct rk_nccl nc;
	int use_nccl;
};

static double rk_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

#define RK_SYM(field, name)                                                        \
	do {                                                                       \
		*(void **)&nc->field = dlsym(nc->lib, name);                       \
		if (!nc->field)                                                    \
			goto no;                                                   \
	} while (0)

/* 1 if libnccl.so.2 loaded with every entry point used, else 0 (why: the
 * reason). */
static int rk_nccl_load(struct rk_nccl *nc, char *why, size_t whylen)
{
	nc->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!nc->lib) {
		snprintf(why, whylen, "libnccl.so.2 does not load (%s)", dlerror());
		return 0;
	}
	RK_SYM(get_unique_id, "ncclGetUniqueId");
	RK_SYM(comm_init_rank, "ncclCommInitRank");
	RK_SYM(comm_destroy, "ncclCommDestroy");
	RK_SYM(all_gather, "ncclAllGather");
	RK_SYM(group_start, "ncclGroupStart");
	RK_SYM(group_end, "ncclGroupEnd");
	RK_SYM(error_string, "ncclGetErrorString");
	return 1;
no:
	snprintf(why, whylen, "libnccl.so.2 lacks an entry point");
	dlclose(nc->lib);
	memset(nc, 0, sizeof *nc);
	return 0;
}

/* The communicator, on every rank or none: each rank says whether NCCL
 * loaded (allgather), and only if all did does rank 0 make the id
 * (bcast) and every rank join. 0, or NB_ERUNTIME (logged). */
static int rk_nccl_open(struct gpu_rk *rk)
{
	const int P = rk->r.P;
	char why[256] = "";
	unsigned char *ok = (unsigned char *)calloc((size_t)P, 1);
	size_t *bo = (size_t *)malloc(2 * (size_t)P * sizeof *bo);
	int rc = 0, all = 1, e = RK_NCCL_SUCCESS;
	rk_nccl_id id;
	memset(&id, 0, sizeof id);
	if (!ok || !bo) {
		log_error("out of memory opening NCCL");
		rc = NB_ERUNTIME;
		goto end;
	}
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	ok[rk->r.rank] = (unsigned char)rk_nccl_load(&rk->nc, why, sizeof why);
	for (int q = 0; q < P; q++)
		bo[q] = 1, bo[P + q] = (size_t)q;
	if ((rc = rk->r.allgather(rk->r.ctx, ok, bo, bo + P)))
		goto end;
	for (int q = 0; q < P; q++)
		all &= ok[q];
	if (!all) {
		if (rk->r.rank == 0)
			log_info("MPI ranks: NCCL does not load on every rank (rank 0: %s); the "
				 "accelerations go through host memory",
				 ok[0] ? "it does" : why);
		if (rk->nc.lib)
			dlclose(rk->nc.lib);
		memset(&rk->nc, 0, sizeof rk->nc);
		goto end;
	}
	e = rk->r.rank == 0 ? rk->nc.get_unique_id(&id) : RK_NCCL_SUCCESS;
	if (e != RK_NCCL_SUCCESS) {
		log_error("ncclGetUniqueId: %s", rk->nc.error_string(e));
		rc = NB_ERUNTIME;
		goto end;
	}
	if ((rc = rk->r.bcast(rk->r.ctx, &id, sizeof id)))
		goto end;
	e = rk->nc.comm_init_rank(&rk->nc.comm, P, id, rk->r.rank);
	if (e != RK_NCCL_SUCCESS) {
		log_error("ncclCommInitRank (rank %d of %d): %s (ranks sharing one GPU cannot use "
			  "NCCL: set NB_DIST_NCCL=0)",
			  rk->r.rank, P, rk->nc.error_string(e));
		rc = NB_ERUNTIME;
		goto end;
	}
	rk->use_nccl = 1;
end:
	free(ok);
	free(bo);
	return rc;
}

int gpu_rk_open(const struct gpu_ranks *r, size_t n, struct gpu_rk **out)
{
	*out = NULL;
	if (r->P < 1 || r->rank < 0 || r->rank >= r->P || !r->allgather || !r->bcast || !r->balance) {
		log_error("gpu_rk_open: bad ranks (P %d, rank %d) (internal)", r->P, r->rank);
		return NB_ERUNTIME;
	}
	if (n > (size_t)UINT_MAX - 1) {
		log_error("%zu bodies: more than the GPU ranks index", n);
		return NB_EINPUT;
	}
	struct gpu_rk *rk = (struct gpu_rk *)calloc(1, sizeof *rk);
	if (!rk) {
		log_error("out of memory for the GPU ranks");
		return NB_ERUNTIME;
	}
	int rc = 0;
	const int P = r->P;
	rk->r = *r;
	rk->n = n;
	rk->cut = (size_t *)malloc((size_t)(P + 1) * sizeof *rk->cut);
	rk->bytes = (size_t *)malloc(2 * (size_t)P * sizeof *rk->bytes);
	if (!rk->cut || !rk->bytes) {
		log_error("out of memory for the GPU ranks");
		rc = NB_ERUNTIME;
		goto fail;
	}
	rk->off = rk->bytes + P;
	for (int q = 0; q <= P; q++) /* equal stretches until the first balance */
		rk->cut[q] = (size_t)((unsigned long long)n * (unsigned)q / (unsigned)P);
	rk->list_lo = rk->list_hi = (size_t)-1;
	for (int k = 0; k < 3; k++)
		CUDA_GOTO(cudaEventCreate(&rk->ev[k]), rc, fail);
	if (r->nccl && (rc = rk_nccl_open(rk)))
		goto fail;
	if (!rk->use_nccl)
		CUDA_GOTO(cudaMallocHost((void **)&rk->h_acc, (n ? n : 1) * sizeof(float4)), rc, fail);
	*out = rk;
	return 0;
fail:
	gpu_rk_close(&rk);
	return rc;
}

void gpu_rk_close(struct gpu_rk **pr)
{
	struct gpu_rk *rk = pr ? *pr : NULL;
	if (!rk)
		return;
	if (rk->nc.comm)
		rk->nc.comm_destroy(rk->nc.comm);
	if (rk->nc.lib)
		dlclose(rk->nc.lib);
	for (int k = 0; k < 3; k++)
		if (rk->ev[k])
			cudaEventDestroy(rk->ev[k]);
	cudaFreeHost(rk->h_acc);
	cudaFree(rk->d_list);
	cudaFree(rk->d_count);
	cudaFree(rk->d_send);
	cudaFree(rk->d_gather);
	free(rk->cut);
	free(rk->bytes);
	free(rk);
	*pr = NULL;
}

const char *gpu_rk_exchange(const struct gpu_rk *rk)
{
	return !rk ? "" : rk->use_nccl ? "nccl" : "host";
}

__global__ void rk_iota(int *list, int lo, int count)
{
	const int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k < count)
		list[k] = lo + k;
}

/* Direct: d_list = the slots [lo, hi), *d_count = hi - lo. */
static int rk_direct_list(struct gpu_rk *rk, size_t lo, size_t hi, cudaStream_t s)
{
	if (rk->list_lo == lo && rk->list_hi == hi)
		return 0;
	if (!rk->d_list) {
		CUDA_CHECK(cudaMalloc((void **)&rk->d_list, (rk->n ? rk->n : 1) * sizeof(int)));
		CUDA_CHECK(cudaMalloc((void **)&rk->d_count, sizeof(int)));
	}
	const int count = (int)(hi - lo);
	if (count > 0) {
		rk_iota<<<(unsigned)((count + 255) / 256), 256, 0, s>>>(rk->d_list, (int)lo, count);
		CUDA_CHECK(cudaGetLastError());
	}
	CUDA_CHECK(cudaMemcpyAsync(rk->d_count, &count, sizeof count, cudaMemcpyHostToDevice, s));
	CUDA_CHECK(cudaStreamSynchronize(s)); /* count lives on this stack */
	rk->list_lo = lo;
	rk->list_hi = hi;
	return 0;
}

/* The swap through NCCL: ncclAllGather wants the same count from every
 * rank, so each rank's stretch goes into a block of the largest stretch's
 * size (d_send), the blocks are gathered (d_gather: P blocks), and the
 * other ranks' stretches are copied from their blocks into acc. The
 * copies are device to device (~1 GB at 64M bodies: well under a
 * millisecond); grouped ncclBroadcasts from each owner moved the same
 * bytes 5x slower (docs/BENCHMARKS.md). Buffers grow with 25 % slack. */
static int rk_swap_nccl(struct gpu_rk *rk, float4 *acc, cudaStream_t s)
{
	const int P = rk->r.P, me = rk->r.rank;
	size_t maxc = 0;
	for (int q = 0; q < P; q++)
		if (rk->cut[q + 1] - rk->cut[q] > maxc)
			maxc = rk->cut[q + 1] - rk->cut[q];
	if (maxc == 0)
		return 0;
	if (maxc > rk->cap) {
		cudaFree(rk->d_send);
		cudaFree(rk->d_gather);
		rk->d_send = rk->d_gather = NULL;
		rk->cap = 0;
		size_t cap = maxc + maxc / 4;
		if (cap > rk->n)
			cap = rk->n;
		CUDA_CHECK(cudaMalloc((void **)&rk->d_send, cap * sizeof(float4)));
		CUDA_CHECK(cudaMalloc((void **)&rk->d_gather, (size_t)P * cap * sizeof(float4)));
		rk->cap = cap;
	}
	const size_t lo = rk->cut[me], own = rk->cut[me + 1] - lo;
	if (own > 0)
		CUDA_CHECK(cudaMemcpyAsync(rk->d_send, acc + lo, own * sizeof(float4),
					   cudaMemcpyDeviceToDevice, s));
	/* rank q's block lands at q * maxc of d_gather */
	int e = rk->nc.all_gather(rk->d_send, rk->d_gather, 4 * maxc, RK_NCCL_FLOAT32, rk->nc.comm, s);
	if (e != RK_NCCL_SUCCESS) {
		log_error("NCCL all-gather of the accelerations (rank %d): %s", me,
			  rk->nc.error_string(e));
		return NB_ERUNTIME;
	}
	for (int q = 0; q < P; q++) {
		const size_t c = rk->cut[q + 1] - rk->cut[q];
		if (q != me && c > 0)
			CUDA_CHECK(cudaMemcpyAsync(acc + rk->cut[q], rk->d_gather + (size_t)q * maxc,
						   c * sizeof(float4), cudaMemcpyDeviceToDevice, s));
	}
	return 0;
}

/* The swap through host memory: own stretch down, allgather, the rest up. */
static int rk_swap_host(struct gpu_rk *rk, float4 *acc, cudaStream_t s)
{
	const size_t lo = rk->cut[rk->r.rank], hi = rk->cut[rk->r.rank + 1], n = rk->n;
	if (hi > lo)
		CUDA_CHECK(cudaMemcpyAsync(rk->h_acc + lo, acc + lo, (hi - lo) * sizeof(float4),
					   cudaMemcpyDeviceToHost, s));
	CUDA_CHECK(cudaStreamSynchronize(s));
	for (int q = 0; q < rk->r.P; q++) {
		rk->bytes[q] = (rk->cut[q + 1] - rk->cut[q]) * sizeof(float4);
		rk->off[q] = rk->cut[q] * sizeof(float4);
	}
	int rc = rk->r.allgather(rk->r.ctx, rk->h_acc, rk->bytes, rk->off);
	if (rc)
		return rc;
	if (lo > 0)
		CUDA_CHECK(cudaMemcpyAsync(acc, rk->h_acc, lo * sizeof(float4), cudaMemcpyHostToDevice, s));
	if (n > hi)
		CUDA_CHECK(cudaMemcpyAsync(acc + hi, rk->h_acc + hi, (n - hi) * sizeof(float4),
					   cudaMemcpyHostToDevice, s));
	return 0;
}

int gpu_rk_force(struct gpu_rk *rk, struct gpu_bodies *b, struct gpu_tree *tree, float eps,
		 int need_pot, cudaStream_t s)
{
	int rc;
	const size_t lo = rk->cut[rk->r.rank], hi = rk->cut[rk->r.rank + 1];
	if (b->n != rk->n) {
		log_error("GPU ranks: %zu bodies, made for %zu (internal)", b->n, rk->n);
		return NB_ERUNTIME;
	}
	if (!tree && (rc = rk_direct_list(rk, lo, hi, s)))
		return rc;
	CUDA_CHECK(cudaEventRecord(rk->ev[0], s));
	if (tree) {
		gpu_tree_set_slots(tree, lo, hi);
		rc = gpu_tree_compute(tree, b, need_pot, s);
	} else {
		rc = gpu_direct_compute_active(b, eps, rk->d_list, rk->d_count, need_pot, s);
	}
	if (rc)
		return rc;
	CUDA_CHECK(cudaEventRecord(rk->ev[1], s));
	CUDA_CHECK(cudaEventSynchronize(rk->ev[1]));
	struct gpu_ranks_step st;
	memset(&st, 0, sizeof st);
	float ms = 0.f;
	CUDA_CHECK(cudaEventElapsedTime(&ms, rk->ev[0], rk->ev[1]));
	st.force_ms = ms;
	const double t0 = rk_now_ms();
	if (rk->r.P == 1) /* one rank (NB_DIST_ONE): nothing to swap */
		rc = 0;
	else
		rc = rk->use_nccl ? rk_swap_nccl(rk, b->acc, s) : rk_swap_host(rk, b->acc, s);
	if (rc)
		return rc;
	CUDA_CHECK(cudaEventRecord(rk->ev[2], s));
	CUDA_CHECK(cudaEventSynchronize(rk->ev[2]));
	st.exchange_ms = rk_now_ms() - t0;
	/* bytes as the swap moves them: the own stretch out to each other
	 * rank, every other stretch in */
	const uint64_t own = (uint64_t)(hi - lo) * sizeof(float4);
	st.sent = own * (uint64_t)(rk->r.P - 1);
	st.received = (uint64_t)(rk->n - (hi - lo)) * sizeof(float4);
	rk->r.balance(rk->r.ctx, &st, rk->cut);
	return 0;
}
