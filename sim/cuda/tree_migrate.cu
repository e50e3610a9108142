/* tree_migrate.cu - the GPU tree's body order kept between steps by
 * migration (simulation.reorder: migrate; issue 17). CPU twin:
 * sim/tree_migrate.c (the same steps in the same order; tests hold the two
 * to the same permutation and both to a full sort).
 *
 * Branches. The bodies are kept grouped by branch: branch b is the key range
 * [spl[b], spl[b+1]) of the 63-bit Morton keys over a frozen cube, so a
 * branch is a run of octree cells along the Morton curve. The splitters are
 * exact quantiles of the keys, taken at a rebuild from the keys it has just
 * sorted (about branch_bodies = 1024 bodies a branch, at most 4096
 * branches), not the cells of one fixed level:
 * a galaxy puts 10^4 times more bodies in a central cell than in a tail
 * cell, and the per-branch sort below runs one block per branch, so equal
 * counts are what keeps it balanced.
 *
 * One step (all on the device, no host round trip; every kernel reads the
 * mode from struct tree_mig_ctl):
 *   box     the frozen cube: kept while the bounding box stays inside it and
 *           fills at least half of it; else refitted (box + 1/8 of its
 *           extent each side) and the step rebuilds. Its box replaces the
 *           tight one in ctl, so keys and moments use it.
 *   keys    every body's key over the cube (tree_build.cu's kernel).
 *   detect  a body stays when its key is still in its branch's range; a
 *           mover finds its new branch (binary search over the splitters),
 *           counts itself into that branch (atomicAdd) and appends
 *           (position, branch) to the migration buffer, its slot from
 *           atomicAdd on the buffer's count (one per warp).
 *   plan    too many movers for the buffer (max_move, a quarter of the
 *           bodies): rebuild. A rebuild first takes provisional splitters:
 *           every (n/nbr)-th key of the current order, sorted in one
 *           block. They only split the rebuild's sort into branches (its
 *           result, full key order, does not depend on them); the current
 *           order is not key-sorted (random on the first step; the last
 *           step's order, out of place exactly where bodies crossed), so
 *           these are not quantiles.
 *   count   (rebuild only) every body is a mover: its branch, counted.
 *   scan    exclusive prefix sum of the stay flags (CUB): a stayer's rank.
 *   offsets new branch sizes (stayers + arrivals), their prefix sum; the
 *           largest branch (not a rebuild, and over twice the mean or over
 *           twice what the last rebuild left: the next step rebuilds).
 *   compact stayers go to off[b] + (their rank among the branch's
 *           stayers): each branch closes the gaps its leavers left, in the
 *           stayers' old order.
 *   insert  movers go after their new branch's stayers, slot from
 *           atomicAdd on that branch's fill count.
 *   sort    each branch sorted by full key (the octree build bisects key
 *           ranges, so it needs full key order, not only branch order):
 *           one block per branch in shared memory (cub::BlockRadixSort,
 *           stable, only the bits below the branch's common prefix); a
 *           branch of more than 4096 bodies by CUB's segmented radix sort,
 *           which the other branches give empty segments.
 *   quantile (rebuild only) the keys are now sorted: the splitters become
 *           every (n/nbr)-th of them, the branch offsets their lower
 *           bounds, the positions relabelled. Every branch then holds at
 *           most ceil(n/nbr) bodies (more only where keys coincide), so the
 *           steps after a rebuild migrate. (Splitters sampled from the
 *           unsorted order instead left branches of 2..7 times the mean at
 *           1M bodies, and the rebalance rebuilt every step.)
 *   gather  as the full sort's (tree_build.cu).
 * Order produced: by (key, and among equal keys stayers in their old order
 * before movers); movers of equal keys land in atomic order. The full sort
 * (stable radix sort of the positions) gives by (key, old position): the
 * same permutation whenever no two bodies of a branch share a key with a
 * mover, and then the same tree and bit-identical forces (FROZEN mode runs
 * that full sort over the same cube).
 *
 * Costs per body (bytes): detect 8 + 4 read, 8 + 4 written (and 8 for a
 * mover); scan 4 + 4 (x2); compact 8 + 4 + 4 read, 12 written; sort 12 read
 * + 12 written (+ 4 branch label); plus the gather (72 + 72). Against the
 * radix sort's ~8 passes x 24. */
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "tree_internal.cuh"

#define MIG_THREADS 256
#define MIG_PLAN_THREADS 1024
#define MIG_SORT_THREADS 256
#define MIG_SORT_ITEMS (TREE_MIG_BLOCK_CAP / MIG_SORT_THREADS) /* 16 */
#define MIG_OFF_ITEMS (TREE_MIG_MAX_BR / MIG_PLAN_THREADS)    /* 4 */

static size_t mig_round(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

int tree_mig_branches(size_t n, int branch_bodies)
{
	size_t bb = branch_bodies > 0 ? (size_t)branch_bodies : 1024;
	size_t k = n / bb;
	if (k < 1)
		k = 1;
	if (k > TREE_MIG_MAX_BR)
		k = TREE_MIG_MAX_BR;
	return (int)k;
}

static size_t mig_cap_of(size_t n)
{
	return n / 4 + 1;
}

static size_t mig_scan_bytes(size_t n)
{
	size_t bytes = 0;
	cub::DeviceScan::ExclusiveSum(NULL, bytes, (const int *)NULL, (int *)NULL, (int)n);
	return bytes;
}

static size_t mig_seg_bytes(size_t n, int nbr)
{
	size_t bytes = 0;
	cub::DeviceSegmentedRadixSort::SortPairs(NULL, bytes, (const unsigned long long *)NULL,
						 (unsigned long long *)NULL, (const uint32_t *)NULL,
						 (uint32_t *)NULL, (int)n, nbr, (const int *)NULL,
						 (const int *)NULL, 0, 63);
	return bytes;
}

size_t tree_mig_bytes(size_t n, int nbr)
{
	size_t nn = n ? n : 1, b = (size_t)nbr;
	size_t scan = mig_scan_bytes(nn), seg = mig_seg_bytes(nn, nbr);
	return mig_round(sizeof(struct tree_mig_ctl)) + mig_round((b + 1) * 8) +
	       2 * mig_round((b + 1) * 4) + 6 * mig_round(b * 4) + 3 * mig_round(nn * 4) +
	       mig_round(mig_cap_of(nn) * 8) + mig_round(nn * 8) + mig_round(nn * 4) +
	       mig_round(scan > seg ? scan : seg);
}

#define MIG_ALLOC(ptr, count)                                                                 \
	do {                                                                                  \
		size_t b_ = mig_round((size_t)(count) * sizeof(*(ptr)));                      \
		CUDA_CHECK(cudaMalloc((void **)&(ptr), b_));                                  \
		t->bytes += b_;                                                               \
	} while (0)

/* On failure the caller frees the tree (gpu_tree_free calls tree_mig_free). */
int tree_mig_alloc(struct gpu_tree *t, size_t n)
{
	size_t nn = n ? n : 1;
	int nbr = t->mig_nbr;
	t->mig_cap = (int)mig_cap_of(nn);
	MIG_ALLOC(t->mig, 1);
	MIG_ALLOC(t->mig_spl, nbr + 1);
	MIG_ALLOC(t->mig_off[0], nbr + 1);
	MIG_ALLOC(t->mig_off[1], nbr + 1);
	MIG_ALLOC(t->mig_arr, nbr);
	MIG_ALLOC(t->mig_stay, nbr);
	MIG_ALLOC(t->mig_base, nbr);
	MIG_ALLOC(t->mig_fill, nbr);
	MIG_ALLOC(t->mig_seg_b, nbr);
	MIG_ALLOC(t->mig_seg_e, nbr);
	MIG_ALLOC(t->mig_br, nn);
	MIG_ALLOC(t->mig_flag, nn);
	MIG_ALLOC(t->mig_rank, nn);
	MIG_ALLOC(t->mig_buf, t->mig_cap);
	MIG_ALLOC(t->mig_key, nn);
	MIG_ALLOC(t->mig_val, nn);
	size_t scan = mig_scan_bytes(nn), seg = mig_seg_bytes(nn, nbr);
	t->mig_tmp_bytes = scan > seg ? scan : seg;
	CUDA_CHECK(cudaMalloc(&t->mig_tmp, mig_round(t->mig_tmp_bytes)));
	t->bytes += mig_round(t->mig_tmp_bytes);
	CUDA_CHECK(cudaMemset(t->mig, 0, sizeof(struct tree_mig_ctl)));
	t->mig_primed = 0;
	t->mig_par = 0;
	return 0;
}

void tree_mig_free(struct gpu_tree *t)
{
	void *bufs[] = {t->mig,       t->mig_spl,   t->mig_off[0], t->mig_off[1], t->mig_arr,
			t->mig_stay,  t->mig_base,  t->mig_fill,   t->mig_seg_b,  t->mig_seg_e,
			t->mig_br,    t->mig_flag,  t->mig_rank,   t->mig_buf,    t->mig_key,
			t->mig_val,   t->mig_tmp};
	for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
		if (bufs[k])
			cudaFree(bufs[k]);
}

/* ---- box ------------------------------------------------------------------ */

/* One thread. host_valid: the bodies handed in are in the order the last
 * compute left (else the step rebuilds; the cube is kept if it fits). */
__global__ void mig_box_kernel(struct tree_ctl *c, struct tree_mig_ctl *m, int host_valid)
{
	if (threadIdx.x != 0)
		return;
	float lo[3], hi[3], ext = 0.0f;
	for (int a = 0; a < 3; a++) {
		lo[a] = tree_u2f(c->bmin[a]);
		hi[a] = tree_u2f(c->bmax[a]);
		ext = fmaxf(ext, hi[a] - lo[a]);
	}
	int refit = !m->have_box;
	if (!refit) {
		float side = 0.0f;
		for (int a = 0; a < 3; a++) {
			float flo = tree_u2f(m->lo[a]), fhi = tree_u2f(m->hi[a]);
			side = fmaxf(side, fhi - flo);
			if (!(lo[a] >= flo) || !(hi[a] <= fhi))
				refit = 1;
		}
		if (ext < 0.5f * side)
			refit = 1;
	}
	if (refit) {
		/* a cube of side 1.25 ext, the box 1/8 ext inside each lower face */
		float margin = 0.125f * ext, side = ext + 2.0f * margin;
		for (int a = 0; a < 3; a++) {
			float flo = ext > 0.0f ? lo[a] - margin : lo[a];
			float fhi = ext > 0.0f ? flo + side : hi[a];
			if (fhi < hi[a]) /* rounding: never cut the box */
				fhi = hi[a];
			m->lo[a] = tree_f2u(flo);
			m->hi[a] = tree_f2u(fhi);
		}
		m->have_box = 1;
	}
	for (int a = 0; a < 3; a++) {
		c->bmin[a] = m->lo[a];
		c->bmax[a] = m->hi[a];
	}
	m->refit = refit;
	m->rebuild = refit || !host_valid || m->rebalance;
	m->rebalance = 0;
	m->moved = 0;
	m->max_branch = 0;
}

int tree_stage_mig_box(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s)
{
	int host_valid = t->mig_primed && t->mig_pos == b->pos && t->mig_n == b->n;
	mig_box_kernel<<<1, 32, 0, s>>>(t->ctl, t->mig, host_valid);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* ---- detect, plan, count ---------------------------------------------------- */

/* Largest b in [0, nbr) with spl[b] <= k (spl[0] = 0). */
__device__ __forceinline__ int mig_branch_of(const unsigned long long *__restrict__ spl, int nbr,
					     unsigned long long k)
{
	int lo = 0, hi = nbr;
	while (hi - lo > 1) {
		int mid = (lo + hi) >> 1;
		if (spl[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

__device__ __forceinline__ unsigned int mig_lanemask_lt(void)
{
	unsigned int m;
	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
	return m;
}

/* Grid-stride with the loop bound uniform per block, so whole warps enter
 * the ballots. */
__global__ void mig_detect_kernel(const unsigned long long *__restrict__ keys, size_t n,
				  const unsigned long long *__restrict__ spl, int nbr,
				  const uint32_t *__restrict__ br, int *flag, int *arr, int2 *buf,
				  int cap, struct tree_mig_ctl *m)
{
	if (m->rebuild)
		return;
	const int lane = threadIdx.x & 31;
	for (size_t i0 = (size_t)blockIdx.x * blockDim.x; i0 < n; i0 += (size_t)gridDim.x * blockDim.x) {
		size_t i = i0 + threadIdx.x;
		bool in = i < n, move = false;
		int nb = 0;
		if (in) {
			unsigned long long k = keys[i];
			uint32_t ob = br[i];
			move = !(spl[ob] <= k && k < spl[ob + 1]);
			flag[i] = move ? 0 : 1;
			if (move) {
				nb = mig_branch_of(spl, nbr, k);
				atomicAdd(&arr[nb], 1);
			}
		}
		unsigned int mask = __ballot_sync(0xffffffffu, move);
		if (mask) {
			int leader = __ffs(mask) - 1, base = 0;
			if (lane == leader)
				base = atomicAdd(&m->moved, __popc(mask));
			base = __shfl_sync(0xffffffffu, base, leader);
			if (move) {
				int slot = base + __popc(mask & mig_lanemask_lt());
				if (slot < cap)
					buf[slot] = make_int2((int)i, nb);
			}
		}
	}
}

/* One block of MIG_PLAN_THREADS. A rebuild's splitters: every (n/nbr)-th
 * key of the current order, bitonic-sorted in shared memory. */
__global__ void mig_plan_kernel(const unsigned long long *__restrict__ keys, size_t n,
				unsigned long long *spl, int nbr, int cap, int *arr,
				struct tree_mig_ctl *m)
{
	__shared__ unsigned long long s[TREE_MIG_MAX_BR];
	__shared__ int s_rebuild;
	if (threadIdx.x == 0) {
		if (!m->rebuild && m->moved > cap)
			m->rebuild = 1;
		s_rebuild = m->rebuild;
	}
	__syncthreads();
	if (!s_rebuild)
		return;
	/* detect may have counted movers before the buffer ran over */
	for (int j = threadIdx.x; j < nbr; j += blockDim.x)
		arr[j] = 0;
	int p = 1;
	while (p < nbr)
		p <<= 1;
	for (int j = threadIdx.x; j < p; j += blockDim.x)
		s[j] = j < nbr ? keys[(size_t)j * n / (size_t)nbr] : ~0ull;
	__syncthreads();
	for (int k = 2; k <= p; k <<= 1) {
		for (int j = k >> 1; j > 0; j >>= 1) {
			for (int i = threadIdx.x; i < p; i += blockDim.x) {
				int ixj = i ^ j;
				if (ixj > i) {
					unsigned long long a = s[i], b = s[ixj];
					bool up = (i & k) == 0;
					if ((a > b) == up) {
						s[i] = b;
						s[ixj] = a;
					}
				}
			}
			__syncthreads();
		}
	}
	for (int j = threadIdx.x; j <= nbr; j += blockDim.x)
		spl[j] = j == 0 ? 0ull : j == nbr ? ~0ull : s[j];
}

/* Rebuild only: every body moves; its branch goes into br (the old branch
 * is not needed), counted once per group of equal branches in a warp. */
__global__ void mig_count_kernel(const unsigned long long *__restrict__ keys, size_t n,
				 const unsigned long long *__restrict__ spl, int nbr, uint32_t *br,
				 int *flag, int *arr, const struct tree_mig_ctl *m)
{
	if (!m->rebuild)
		return;
	const int lane = threadIdx.x & 31;
	for (size_t i0 = (size_t)blockIdx.x * blockDim.x; i0 < n; i0 += (size_t)gridDim.x * blockDim.x) {
		size_t i = i0 + threadIdx.x;
		bool in = i < n;
		int nb = -1;
		if (in) {
			nb = mig_branch_of(spl, nbr, keys[i]);
			br[i] = (uint32_t)nb;
			flag[i] = 0;
		}
		unsigned int peers = __match_any_sync(0xffffffffu, nb);
		if (in && lane == __ffs(peers) - 1)
			atomicAdd(&arr[nb], __popc(peers));
	}
}

/* ---- offsets ------------------------------------------------------------------
 * One block of MIG_PLAN_THREADS, MIG_OFF_ITEMS branches a thread. srank(p):
 * stayers before position p of the old order. */
struct mig_max {
	__device__ __forceinline__ int operator()(int a, int b) const
	{
		return a > b ? a : b;
	}
};

__device__ __forceinline__ int mig_srank(const int *rank, const int *flag, int n, int p)
{
	return p < n ? rank[p] : rank[n - 1] + flag[n - 1];
}

__global__ void mig_offsets_kernel(int n, int nbr, const int *__restrict__ off_old, int *off_new,
				   const int *__restrict__ rank, const int *__restrict__ flag,
				   const int *__restrict__ arr, int *stay, int *base, int *fill,
				   int *seg_b, int *seg_e, struct tree_mig_ctl *m)
{
	typedef cub::BlockScan<int, MIG_PLAN_THREADS> scan_t;
	typedef cub::BlockReduce<int, MIG_PLAN_THREADS> reduce_t;
	__shared__ union {
		typename scan_t::TempStorage scan;
		typename reduce_t::TempStorage reduce;
	} tmp;
	const int rebuild = m->rebuild;
	int cnt[MIG_OFF_ITEMS], st[MIG_OFF_ITEMS], sr[MIG_OFF_ITEMS], off[MIG_OFF_ITEMS];
	int most = 0;
	for (int k = 0; k < MIG_OFF_ITEMS; k++) {
		int b = threadIdx.x * MIG_OFF_ITEMS + k;
		cnt[k] = st[k] = sr[k] = 0;
		if (b < nbr) {
			if (!rebuild) {
				sr[k] = mig_srank(rank, flag, n, off_old[b]);
				st[k] = mig_srank(rank, flag, n, off_old[b + 1]) - sr[k];
			}
			cnt[k] = st[k] + arr[b];
			most = max(most, cnt[k]);
		}
	}
	int total;
	scan_t(tmp.scan).ExclusiveSum(cnt, off, total);
	__syncthreads();
	int largest = reduce_t(tmp.reduce).Reduce(most, mig_max());
	for (int k = 0; k < MIG_OFF_ITEMS; k++) {
		int b = threadIdx.x * MIG_OFF_ITEMS + k;
		if (b < nbr) {
			off_new[b] = off[k];
			stay[b] = st[k];
			base[b] = off[k] - sr[k];
			fill[b] = 0;
			seg_b[b] = off[k];
			seg_e[b] = cnt[k] > TREE_MIG_BLOCK_CAP ? off[k] + cnt[k] : off[k];
		}
	}
	if (threadIdx.x == 0) {
		off_new[nbr] = total; /* == n */
		m->max_branch = largest; /* a rebuild's: replaced by mig_quantile_kernel */
		int mean = (n + nbr - 1) / nbr;
		if (mean < m->built_max)
			mean = m->built_max;
		if (!rebuild && nbr > 1 && largest > 2 * mean)
			m->rebalance = 1;
	}
}

/* ---- compact, insert ---------------------------------------------------------- */

__global__ void mig_compact_kernel(const unsigned long long *__restrict__ keys, size_t n,
				   const uint32_t *__restrict__ br, const int *__restrict__ flag,
				   const int *__restrict__ rank, const int *__restrict__ base,
				   unsigned long long *key_out, uint32_t *val_out,
				   const struct tree_mig_ctl *m)
{
	if (m->rebuild)
		return;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		if (!flag[i])
			continue;
		int dst = base[br[i]] + rank[i];
		key_out[dst] = keys[i];
		val_out[dst] = (uint32_t)i;
	}
}

/* Movers (from the buffer; in a rebuild every position, branch from br)
 * after their branch's stayers, slot from atomicAdd on its fill count,
 * one atomic per group of equal branches in a warp. */
__global__ void mig_insert_kernel(const unsigned long long *__restrict__ keys, size_t n,
				  const int2 *__restrict__ buf, const uint32_t *__restrict__ br,
				  const int *__restrict__ off_new, const int *__restrict__ stay,
				  int *fill, unsigned long long *key_out, uint32_t *val_out,
				  const struct tree_mig_ctl *m)
{
	const int rebuild = m->rebuild;
	const size_t count = rebuild ? n : (size_t)m->moved; /* moved <= cap unless rebuild */
	const int lane = threadIdx.x & 31;
	for (size_t k0 = (size_t)blockIdx.x * blockDim.x; k0 < count;
	     k0 += (size_t)gridDim.x * blockDim.x) {
		size_t k = k0 + threadIdx.x;
		bool in = k < count;
		int i = 0, nb = -1;
		if (in) {
			if (rebuild) {
				i = (int)k;
				nb = (int)br[k];
			} else {
				int2 e = buf[k];
				i = e.x;
				nb = e.y;
			}
		}
		unsigned int peers = __match_any_sync(0xffffffffu, nb);
		int leader = __ffs(peers) - 1, slot = 0;
		if (in && lane == leader)
			slot = atomicAdd(&fill[nb], __popc(peers));
		slot = __shfl_sync(0xffffffffu, slot, leader);
		if (in) {
			int dst = off_new[nb] + stay[nb] + slot + __popc(peers & mig_lanemask_lt());
			key_out[dst] = keys[i];
			val_out[dst] = (uint32_t)i;
		}
	}
}

/* ---- sort within branches ------------------------------------------------------
 * One block per branch: label its positions, and sort it when it fits
 * (TREE_MIG_BLOCK_CAP): stable radix sort over the bits below the branch's
 * common key prefix, padding keys ~0 (above every key, so they stay last). */
__global__ void mig_branch_sort_kernel(const unsigned long long *__restrict__ key_in,
				       const uint32_t *__restrict__ val_in,
				       const unsigned long long *__restrict__ spl,
				       const int *__restrict__ off_new, unsigned long long *key_out,
				       uint32_t *val_out, uint32_t *br)
{
	typedef cub::BlockRadixSort<unsigned long long, MIG_SORT_THREADS, MIG_SORT_ITEMS, uint32_t>
		sort_t;
	typedef cub::BlockExchange<unsigned long long, MIG_SORT_THREADS, MIG_SORT_ITEMS> xk_t;
	typedef cub::BlockExchange<uint32_t, MIG_SORT_THREADS, MIG_SORT_ITEMS> xv_t;
	__shared__ union {
		typename sort_t::TempStorage sort;
		typename xk_t::TempStorage xk;
		typename xv_t::TempStorage xv;
	} tmp;
	const int b = blockIdx.x;
	const int o = off_new[b], cnt = off_new[b + 1] - o;
	for (int j = threadIdx.x; j < cnt; j += blockDim.x)
		br[o + j] = (uint32_t)b;
	if (cnt > TREE_MIG_BLOCK_CAP || cnt == 0)
		return;
	unsigned long long k[MIG_SORT_ITEMS];
	uint32_t v[MIG_SORT_ITEMS];
	/* striped load: item j of thread t is element j * threads + t */
#pragma unroll
	for (int j = 0; j < MIG_SORT_ITEMS; j++) {
		int e = j * MIG_SORT_THREADS + threadIdx.x;
		k[j] = e < cnt ? key_in[o + e] : ~0ull;
		v[j] = e < cnt ? val_in[o + e] : 0u;
	}
	/* every key of branch b lies in [spl[b], spl[b+1] - 1]: bits above the
	 * highest one where those differ are equal */
	unsigned long long diff = spl[b] ^ (spl[b + 1] - 1);
	int end_bit = diff ? 64 - __clzll((long long)diff) : 1;
	if (end_bit > 63)
		end_bit = 63;
	/* stability needs the input in order: striped -> blocked first */
	xk_t(tmp.xk).StripedToBlocked(k);
	__syncthreads();
	xv_t(tmp.xv).StripedToBlocked(v);
	__syncthreads();
	sort_t(tmp.sort).SortBlockedToStriped(k, v, 0, end_bit);
#pragma unroll
	for (int j = 0; j < MIG_SORT_ITEMS; j++) {
		int e = j * MIG_SORT_THREADS + threadIdx.x;
		if (e < cnt) {
			key_out[o + e] = k[j];
			val_out[o + e] = v[j];
		}
	}
}

/* ---- quantile (rebuild only) ----------------------------------------------------
 * One block of MIG_PLAN_THREADS over the sorted keys: splitter b is key
 * b n / nbr, branch b starts at its lower bound (so branch b holds exactly
 * the keys [spl[b], spl[b+1])), the largest branch is recorded. */
__device__ __forceinline__ int mig_lower_bound(const unsigned long long *__restrict__ keys, int n,
					       unsigned long long v)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) >> 1;
		if (keys[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

__global__ void mig_quantile_kernel(const unsigned long long *__restrict__ keys, int n,
				    unsigned long long *spl, int nbr, int *off,
				    struct tree_mig_ctl *m)
{
	typedef cub::BlockReduce<int, MIG_PLAN_THREADS> reduce_t;
	__shared__ typename reduce_t::TempStorage tmp;
	if (!m->rebuild)
		return;
	for (int b = threadIdx.x; b <= nbr; b += blockDim.x) {
		if (b == 0) {
			spl[0] = 0ull;
			off[0] = 0;
		} else if (b == nbr) {
			spl[nbr] = ~0ull;
			off[nbr] = n;
		} else {
			unsigned long long v = keys[(size_t)b * (size_t)n / (size_t)nbr];
			spl[b] = v;
			off[b] = mig_lower_bound(keys, n, v);
		}
	}
	__syncthreads(); /* off[] (global) visible to the block */
	int most = 0;
	for (int b = threadIdx.x; b < nbr; b += blockDim.x)
		most = max(most, off[b + 1] - off[b]);
	int largest = reduce_t(tmp).Reduce(most, mig_max());
	if (threadIdx.x == 0) {
		m->max_branch = largest;
		m->built_max = largest;
	}
}

/* Rebuild only: one block per branch labels its positions. */
__global__ void mig_label_kernel(const int *__restrict__ off, uint32_t *br,
				 const struct tree_mig_ctl *m)
{
	if (!m->rebuild)
		return;
	const int b = blockIdx.x, o = off[b], e = off[b + 1];
	for (int p = o + threadIdx.x; p < e; p += blockDim.x)
		br[p] = (uint32_t)b;
}

static int mig_grid(const struct gpu_tree *t, size_t n)
{
	size_t want = (n + MIG_THREADS - 1) / MIG_THREADS;
	size_t cap = (size_t)t->sm_count * 16;
	return (int)(want < 1 ? 1 : want < cap ? want : cap);
}

int tree_stage_migrate(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s)
{
	int rc;
	const size_t n = b->n;
	const int nbr = t->mig_nbr, grid = mig_grid(t, n);
	int *off_old = t->mig_off[t->mig_par], *off_new = t->mig_off[t->mig_par ^ 1];
	if ((rc = tree_stage_keys(t, b, t->keys_alt, s)))
		return rc;
	CUDA_CHECK(cudaMemsetAsync(t->mig_arr, 0, (size_t)nbr * sizeof(int), s));
	mig_detect_kernel<<<grid, MIG_THREADS, 0, s>>>(t->keys_alt, n, t->mig_spl, nbr, t->mig_br,
						       t->mig_flag, t->mig_arr, t->mig_buf,
						       t->mig_cap, t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_plan_kernel<<<1, MIG_PLAN_THREADS, 0, s>>>(t->keys_alt, n, t->mig_spl, nbr, t->mig_cap,
						       t->mig_arr, t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_count_kernel<<<grid, MIG_THREADS, 0, s>>>(t->keys_alt, n, t->mig_spl, nbr, t->mig_br,
						      t->mig_flag, t->mig_arr, t->mig);
	CUDA_CHECK(cudaGetLastError());
	size_t bytes = t->mig_tmp_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(t->mig_tmp, bytes, t->mig_flag, t->mig_rank, (int)n,
						 s));
	mig_offsets_kernel<<<1, MIG_PLAN_THREADS, 0, s>>>(
		(int)n, nbr, off_old, off_new, t->mig_rank, t->mig_flag, t->mig_arr, t->mig_stay,
		t->mig_base, t->mig_fill, t->mig_seg_b, t->mig_seg_e, t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_compact_kernel<<<grid, MIG_THREADS, 0, s>>>(t->keys_alt, n, t->mig_br, t->mig_flag,
							t->mig_rank, t->mig_base, t->mig_key,
							t->mig_val, t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_insert_kernel<<<grid, MIG_THREADS, 0, s>>>(t->keys_alt, n, t->mig_buf, t->mig_br,
						       off_new, t->mig_stay, t->mig_fill,
						       t->mig_key, t->mig_val, t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_branch_sort_kernel<<<nbr, MIG_SORT_THREADS, 0, s>>>(t->mig_key, t->mig_val, t->mig_spl,
								off_new, t->keys, t->perm,
								t->mig_br);
	CUDA_CHECK(cudaGetLastError());
	/* branches too big for a block (empty segments elsewhere) */
	bytes = t->mig_tmp_bytes;
	CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
		t->mig_tmp, bytes, t->mig_key, t->keys, t->mig_val, t->perm, (int)n, nbr,
		t->mig_seg_b, t->mig_seg_e, 0, 63, s));
	/* a rebuild: splitters and offsets from the sorted keys, positions
	 * relabelled (both kernels return at once on a migrating step) */
	mig_quantile_kernel<<<1, MIG_PLAN_THREADS, 0, s>>>(t->keys, (int)n, t->mig_spl, nbr, off_new,
							   t->mig);
	CUDA_CHECK(cudaGetLastError());
	mig_label_kernel<<<nbr, MIG_SORT_THREADS, 0, s>>>(off_new, t->mig_br, t->mig);
	CUDA_CHECK(cudaGetLastError());
	t->mig_par ^= 1;
	t->mig_pos = b->pos;
	t->mig_n = n;
	t->mig_primed = 1;
	return tree_stage_gather(t, b, s);
}
