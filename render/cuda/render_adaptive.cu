/* render_adaptive.cu - adaptive smoothing lengths on the GPU: h = distance
 * to the k-th nearest other DRAWN body (render/adaptive.h's meaning; its
 * CPU twin render/adaptive_tree.c, the same tree in double, is the test
 * oracle).
 *
 * Drawn. A body is drawn when its position is finite and, in colour mode,
 * its component's colour is not [0, 0, 0] (density mode: all finite
 * bodies); the same rule as render_adaptive_drawn. Bodies not drawn get
 * the "bad" key, so they sort after every drawn body; m = the number of
 * drawn bodies is counted on the device, and the search only ever looks
 * at sorted positions [0, m). They get h = fallback.
 *
 * Order. The bounding box of the drawn bodies is cut into 2^21 cells per
 * axis; each body's key is the 63-bit Morton code of its cell, and one CUB
 * radix sort puts the bodies in key order (positions gathered as float4).
 * The order only decides which bodies are grouped together: correctness
 * never depends on it.
 *
 * Tree. Leaves are the runs of 32 consecutive sorted bodies; a node of
 * level l >= 1 has the (up to) 8 consecutive nodes 8j..8j+7 of level l-1
 * as children. Every node stores the tight axis-aligned box of the drawn
 * bodies under it (min and max of their float coordinates; a node with
 * none is empty). Built bottom-up in one pass per level: no binary
 * searches, no pointers, ~1.2 bytes per body.
 *
 * Search. One warp per leaf: lane t owns the leaf's body t (consecutive in
 * Morton order, so the 32 are close together). The warp walks the tree
 * once for all 32, depth-first from a stack in shared memory (cells
 * identical for every lane). At a node lanes 0-7 each measure one child's
 * box against the box of the warp's own leaf; a child is pushed when that
 * box-to-box distance is below the largest current k-th distance among
 * the lanes (so whenever some lane could want it), nearest first, and
 * when popped every lane tests it against its own k-th distance (the
 * bounds have shrunk since). At a leaf each lane loads one body into
 * shared memory, each is then read by all lanes in turn (a broadcast) and
 * every lane tests it against its own k-th distance, 8 at a time (one
 * compare of their minimum for most), keeping its k + 1 smallest squared
 * distances in a max-heap (local memory): its own body is one of them, at
 * exactly 0, so no candidate is tested for being the body itself, and
 * the (k + 1)-th smallest is the k-th nearest other body.
 *
 * Exactness. Candidate and box distances are formed the same way, in
 * float, with rounded operations: per axis a difference or box gap by
 * __fsub_rn, then fma(x, x, fma(y, y, z * z)), each step correctly rounded
 * and so monotone in |x|, |y|, |z|. The box gap max(lo - p, p - hi, 0) is
 * at most |q - p| for any body q in the box (and the gap between two
 * boxes at most that from any p in one), so a box's squared distance is
 * <= that of every body in it, bit for bit. A box is skipped only when
 * its distance is >= the lane's current k-th, so nothing skipped could
 * have entered the heap: the result is exactly the k-th smallest float
 * squared distance over all drawn bodies, i.e. a float brute-force
 * search. Against the CPU's double search it differs only by float
 * rounding of the coordinates and distances (~2e-7 relative; the contract
 * allows 1e-5).
 *
 * Start. Before the walk the warp scans the leaves around its own in key
 * order (at least k + 1 bodies), so every lane has a k-th distance to
 * prune with; the walk skips those leaves (in a CPU emulation, galaxies
 * 1M, k = 32: 59 leaves walked and ~90 heap insertions per lane, against
 * 200 and ~790 without).
 *
 * History (H100, galaxies 1080p bench, k = 32, 1M / 10M bodies): a 3x3x3
 * cell scan (175 / 1083 ms); one thread per body down the implicit octree
 * (29 / 286 ms, latency-bound); one warp per leaf (5.0 / 44 ms,
 * issue-bound); candidates 8 at a time, fma distances, the body its own
 * neighbour (3.55 / 32.8 ms); children against the group's box (3.28 /
 * 28.9 ms). Per-lane tests of 8-body boxes inside each leaf halved the
 * candidates in a CPU emulation but gained nothing on the H100: dropped.
 * Warm start from the previous recompute's h (each lane's first bound
 * (h_prev (1 + margin))^2, lanes whose heap did not fill redone; default
 * scene's bodies, 1M / 10M): exact, and 1.47 / 12.3 ms (margin 0.02 /
 * 0.05) on static bodies against 2.27 / 16.7 cold, but moving bodies kill
 * it: drifting one frame (3 Myr) at their own velocities, at least 35 %
 * of the bounds fail at margin 0.05, 11 % at 0.2, 3 % at 0.5 (not split
 * by component; the bulge's dispersion alone moves a body ~0.4 kpc a
 * frame), so nearly every warp redoes: 2.5-2.9 / 22-23
 * ms with each warp redoing its own lanes, 12-15 / 56-112 ms with the
 * failed bodies packed 32 to a warp (scattered groups), against 2.33 /
 * 16.5 cold: dropped (H100, 2026-11-21).
 * CPU twin: render/adaptive_tree.c (render_adaptive_h), render/adaptive.c
 * (render_adaptive_cap). */
#include "render_internal.cuh"

#include <cub/cub.cuh>

#define AD_BITS 21          /* cells per axis for the Morton order: 2^21 (63-bit keys) */
#define AD_BAD (1ull << 63) /* key of a body not drawn (dark or not finite) */
#define AD_BBOX_BLOCKS 256
#define AD_LEAF 32          /* bodies per leaf = lanes per warp */
#define AD_FAN 8            /* children per node */
#define AD_GROUP 8          /* candidates tested together (one compare of their minimum) */
#define AD_MAXLEV 12        /* 32 * 8^11 bodies */
#define AD_STACK (7 * AD_MAXLEV + 4) /* depth-first: <= 7 waiting siblings per level */
#define AD_WARPS 4          /* warps per search block */
#define AD_FULL 0xffffffffu

typedef unsigned long long u64;

struct gr_adaptive {
	size_t cap;
	u64 *d_code[2];
	uint32_t *d_slot[2];
	float4 *d_spos;  /* positions in key order */
	float4 *d_lo, *d_hi; /* node boxes, every level, leaves first; lo.w unused */
	float *d_part;   /* bounding-box partials, 6 per block */
	float *d_grid;   /* lo[3], unused, cells per unit length */
	uint32_t *d_ngood;
	size_t node_cap;
	uint32_t *d_sorted; /* d_slot[0] or [1]: slots in key order, drawn first */
	float *d_capkey[2]; /* render.h_cap: the drawn h to sort (NULL when off) */
};

/* Level sizes and offsets of the node arrays (host-computed from n). */
struct ad_levels {
	int nlev;
	int count[AD_MAXLEV];
	int off[AD_MAXLEV];
};

/* What decides whether a body is drawn (render_adaptive_drawn). */
struct ad_drawn_args {
	const uint32_t *id;
	const uint16_t *comp;
	const float *colors;
	int ncomp, density;
};

__device__ __forceinline__ int ad_drawn(const struct ad_drawn_args &a, int s, float4 p)
{
	if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z)))
		return 0;
	if (a.density)
		return 1;
	const uint32_t b = a.id ? a.id[s] : (uint32_t)s;
	const int c = a.comp[b];
	if (c >= a.ncomp)
		return 1;
	const float *col = a.colors + 3 * c;
	return !(col[0] == 0.0f && col[1] == 0.0f && col[2] == 0.0f);
}

/* Cell of coordinate p on axis a, clamped to the grid. */
__device__ __forceinline__ uint32_t ad_cell(float p, const float *grid, int a)
{
	float t = floorf((p - grid[a]) * grid[4]);
	if (!(t >= 0.0f))
		return 0;
	if (t >= (float)((1 << AD_BITS) - 1))
		return (1u << AD_BITS) - 1;
	return (uint32_t)t;
}

__global__ void ad_bbox_part(const float4 *pos, int n, struct ad_drawn_args da, float *part)
{
	__shared__ float sh[6][GR_THREADS];
	float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
	for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) {
		const float4 p = pos[s];
		if (!ad_drawn(da, s, p))
			continue;
		v[0] = fminf(v[0], p.x), v[1] = fminf(v[1], p.y), v[2] = fminf(v[2], p.z);
		v[3] = fmaxf(v[3], p.x), v[4] = fmaxf(v[4], p.y), v[5] = fmaxf(v[5], p.z);
	}
	for (int k = 0; k < 6; k++)
		sh[k][threadIdx.x] = v[k];
	__syncthreads();
	for (int o = GR_THREADS / 2; o > 0; o >>= 1) {
		if ((int)threadIdx.x < o)
			for (int k = 0; k < 6; k++)
				sh[k][threadIdx.x] = k < 3 ? fminf(sh[k][threadIdx.x], sh[k][threadIdx.x + o])
							   : fmaxf(sh[k][threadIdx.x], sh[k][threadIdx.x + o]);
		__syncthreads();
	}
	if (threadIdx.x < 6)
		part[6 * blockIdx.x + threadIdx.x] = sh[threadIdx.x][0];
}

/* One thread: grid origin lo and cells per unit length (2^21 cells over
 * the largest extent). */
__global__ void ad_bbox_final(const float *part, int nparts, float *grid)
{
	float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
	for (int b = 0; b < nparts; b++)
		for (int k = 0; k < 6; k++)
			v[k] = k < 3 ? fminf(v[k], part[6 * b + k]) : fmaxf(v[k], part[6 * b + k]);
	float side = 0.0f;
	for (int k = 0; k < 3; k++) {
		if (!(v[k] <= v[k + 3]))
			v[k] = v[k + 3] = 0.0f; /* no drawn body */
		side = fmaxf(side, v[k + 3] - v[k]);
	}
	if (!(side > 0.0f && isfinite(side)))
		side = 1.0f;
	for (int k = 0; k < 3; k++)
		grid[k] = v[k];
	grid[3] = 0.0f;
	grid[4] = (float)(1 << AD_BITS) / side;
}

__global__ void ad_keys(const float4 *pos, int n, struct ad_drawn_args da, const float *grid,
			u64 *code, uint32_t *slot, uint32_t *ngood)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	int good = 0;
	if (s < n) {
		const float4 p = pos[s];
		good = ad_drawn(da, s, p);
		code[s] = good ? sim_morton_key(ad_cell(p.x, grid, 0), ad_cell(p.y, grid, 1), ad_cell(p.z, grid, 2))
			       : AD_BAD;
		slot[s] = (uint32_t)s;
	}
	good = __syncthreads_count(good);
	if (threadIdx.x == 0 && good)
		atomicAdd(ngood, (uint32_t)good);
}

__global__ void ad_gather(const float4 *pos, const uint32_t *slot, int n, float4 *spos)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		spos[i] = pos[slot[i]];
}

/* Leaf boxes: one warp per leaf, over its drawn bodies (sorted index < m). */
__global__ void ad_leaf_boxes(const float4 *spos, const uint32_t *ngood_p, int nleaf, float4 *lo,
			      float4 *hi)
{
	const int leaf = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32);
	const int lane = threadIdx.x & 31;
	if (leaf >= nleaf)
		return;
	const int m = (int)*ngood_p, i = leaf * AD_LEAF + lane;
	float4 a = make_float4(INFINITY, INFINITY, INFINITY, 0.0f);
	float4 b = make_float4(-INFINITY, -INFINITY, -INFINITY, 0.0f);
	if (i < m) {
		const float4 p = spos[i];
		a = make_float4(p.x, p.y, p.z, 0.0f);
		b = a;
	}
	for (int o = 16; o > 0; o >>= 1) {
		a.x = fminf(a.x, __shfl_xor_sync(AD_FULL, a.x, o));
		a.y = fminf(a.y, __shfl_xor_sync(AD_FULL, a.y, o));
		a.z = fminf(a.z, __shfl_xor_sync(AD_FULL, a.z, o));
		b.x = fmaxf(b.x, __shfl_xor_sync(AD_FULL, b.x, o));
		b.y = fmaxf(b.y, __shfl_xor_sync(AD_FULL, b.y, o));
		b.z = fmaxf(b.z, __shfl_xor_sync(AD_FULL, b.z, o));
	}
	if (lane == 0) {
		lo[leaf] = a;
		hi[leaf] = b;
	}
}

/* Boxes of level l from level l-1: one thread per node. */
__global__ void ad_node_boxes(float4 *lo, float4 *hi, int off_child, int nchild, int off, int count)
{
	const int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= count)
		return;
	float4 a = make_float4(INFINITY, INFINITY, INFINITY, 0.0f);
	float4 b = make_float4(-INFINITY, -INFINITY, -INFINITY, 0.0f);
	for (int c = AD_FAN * j; c < AD_FAN * j + AD_FAN && c < nchild; c++) {
		const float4 ca = lo[off_child + c], cb = hi[off_child + c];
		a.x = fminf(a.x, ca.x), a.y = fminf(a.y, ca.y), a.z = fminf(a.z, ca.z);
		b.x = fmaxf(b.x, cb.x), b.y = fmaxf(b.y, cb.y), b.z = fmaxf(b.z, cb.z);
	}
	lo[off + j] = a;
	hi[off + j] = b;
}

/* Squared distances, all formed the same way (the exactness argument at
 * the top): per-axis differences or box gaps by rounded subtraction, then
 * fma(x, x, fma(y, y, z * z)) - correctly rounded at each step, so
 * monotone in |x|, |y|, |z|. */
__device__ __forceinline__ float ad_sq3(float x, float y, float z)
{
	return __fmaf_rn(x, x, __fmaf_rn(y, y, __fmul_rn(z, z)));
}

/* From p to the box [a, b]. */
__device__ __forceinline__ float ad_box_d2(float4 p, float4 a, float4 b)
{
	return ad_sq3(fmaxf(fmaxf(__fsub_rn(a.x, p.x), __fsub_rn(p.x, b.x)), 0.0f),
		      fmaxf(fmaxf(__fsub_rn(a.y, p.y), __fsub_rn(p.y, b.y)), 0.0f),
		      fmaxf(fmaxf(__fsub_rn(a.z, p.z), __fsub_rn(p.z, b.z)), 0.0f));
}

/* From the box [ga, gb] to the box [a, b]: <= ad_box_d2(p, a, b) for
 * every p in [ga, gb] (each gap only shrinks). */
__device__ __forceinline__ float ad_boxbox_d2(float4 ga, float4 gb, float4 a, float4 b)
{
	return ad_sq3(fmaxf(fmaxf(__fsub_rn(a.x, gb.x), __fsub_rn(ga.x, b.x)), 0.0f),
		      fmaxf(fmaxf(__fsub_rn(a.y, gb.y), __fsub_rn(ga.y, b.y)), 0.0f),
		      fmaxf(fmaxf(__fsub_rn(a.z, gb.z), __fsub_rn(ga.z, b.z)), 0.0f));
}

/* From p to q. */
__device__ __forceinline__ float ad_d2(float4 p, float4 q)
{
	return ad_sq3(__fsub_rn(q.x, p.x), __fsub_rn(q.y, p.y), __fsub_rn(q.z, p.z));
}

/* A lane's k + 1 smallest squared distances (its own 0 among them): a
 * max-heap, 1-based, in hv (local memory, float2 so that the two children
 * 2i, 2i + 1 of node i are one load, hv2[i]). size < K1: filling (every
 * candidate enters, sifted up); then a candidate below the top replaces
 * it, sifted down, with -inf at K1 + 1 as the missing right child of an
 * even K1. kthb: the top's float bits once full, AD_FULL before. */
#define AD_HV(KMAX) ((KMAX) / 2 + 2) /* float2 entries: indices up to KMAX + 3 */

template <int KMAX>
__device__ __forceinline__ void ad_heap_push(float2 (&hv2)[AD_HV(KMAX)], int &size, int K1,
					     float d2, unsigned &kthb)
{
	float *hv = reinterpret_cast<float *>(hv2);
	int i;
	if (size < K1) {
		i = ++size;
		while (i > 1) {
			const float vp = hv[i >> 1];
			if (vp >= d2)
				break;
			hv[i] = vp;
			i >>= 1;
		}
		hv[i] = d2;
		if (size == K1) {
			hv[K1 + 1] = -INFINITY;
			kthb = __float_as_uint(hv[1]);
		}
		return;
	}
	i = 1;
	for (;;) {
		const int l = 2 * i;
		if (l > K1)
			break;
		const float2 c = hv2[i];
		const float vm = fmaxf(c.x, c.y);
		if (!(vm > d2))
			break;
		hv[i] = vm;
		i = c.y > c.x ? l + 1 : l;
	}
	hv[i] = d2;
	kthb = __float_as_uint(hv[1]);
}

/* Every lane tests the drawn bodies of leaf j against its own heap (its
 * own body too, at 0: no self test per candidate). The warp stages the
 * leaf in sl (32 float4 of shared memory, read back as broadcasts). In
 * groups of 8: the 8 distances unrolled, one compare of their minimum
 * against the lane's k-th; only where that passes does the lane go
 * through the ones it accepts, one heap insertion at a time (the
 * insertion is in the loop once: a version with it inlined in every
 * unrolled copy was 7x larger and stalled on instruction fetch, H100
 * galaxies 1M: 8.2 ms against 5.0). */
template <int KMAX>
__device__ __forceinline__ void ad_scan_leaf(const float4 *spos, float4 *sl, int j, int m,
					     int lane, float4 p, float2 (&hv2)[AD_HV(KMAX)],
					     int &size, int K1, unsigned &kthb)
{
	const int first = j * AD_LEAF, cnt = min(AD_LEAF, m - first);
	__syncwarp();
	if (lane < cnt)
		sl[lane] = spos[first + lane];
	__syncwarp();
	/* Groups as the bits of a mask: a plain loop over them spilled. */
	unsigned gm = (1u << ((cnt + AD_GROUP - 1) / AD_GROUP)) - 1u;
	while (gm) {
		const int t0 = (__ffs(gm) - 1) * AD_GROUP;
		gm &= gm - 1;
		const int left = cnt - t0;
		const unsigned valid = left >= AD_GROUP ? (1u << AD_GROUP) - 1u : (1u << left) - 1u;
		float d[AD_GROUP];
#pragma unroll
		for (int u = 0; u < AD_GROUP; u++)
			d[u] = ad_d2(p, sl[t0 + u]);
		if (left < AD_GROUP) { /* the last leaf: sl past cnt is stale */
#pragma unroll
			for (int u = 0; u < AD_GROUP; u++)
				if (u >= left)
					d[u] = 0.0f;
		}
		float mn = d[0];
#pragma unroll
		for (int u = 1; u < AD_GROUP; u++)
			mn = fminf(mn, d[u]);
		if (__float_as_uint(mn) >= kthb)
			continue;
		unsigned acc = 0;
#pragma unroll
		for (int u = 0; u < AD_GROUP; u++)
			acc |= (unsigned)(__float_as_uint(d[u]) < kthb) << u;
		acc &= valid;
		while (acc) {
			const int u = __ffs(acc) - 1;
			acc &= acc - 1;
			const float du = ad_d2(p, sl[t0 + u]);
			if (__float_as_uint(du) < kthb)
				ad_heap_push<KMAX>(hv2, size, K1, du, kthb);
		}
	}
}

/* Node reference on the stack: level << 27 | index within the level. */
#define AD_NODE(l, j) ((int)((l) << 27 | (j)))

/* k nearest drawn bodies of each body of one leaf per warp (the search at
 * the top). The lane's k-th squared distance is kept as its float bits
 * (non-negative floats order like their bits): AD_FULL while the heap is
 * not full (every candidate enters, even an overflowed +inf), 0 for a lane
 * without a body (nothing enters). */
template <int KMAX>
__global__ void __launch_bounds__(AD_WARPS * 32)
ad_knn(const uint32_t *slot, const float4 *spos, const float4 *blo, const float4 *bhi,
       const uint32_t *id, const uint32_t *ngood_p, int n, int k, struct ad_levels lv,
       double length, float fallback, float *h_by_id)
{
	__shared__ float4 s_lo[AD_WARPS][AD_STACK], s_hi[AD_WARPS][AD_STACK];
	__shared__ float4 s_leaf[AD_WARPS][AD_LEAF];
	__shared__ int s_count[AD_MAXLEV], s_off[AD_MAXLEV]; /* lv, indexable without local memory */
	float2 hv2[AD_HV(KMAX)];
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int leaf = blockIdx.x * AD_WARPS + w;
	if (threadIdx.x == 0) {
#pragma unroll
		for (int q = 0; q < AD_MAXLEV; q++) {
			s_count[q] = lv.count[q];
			s_off[q] = lv.off[q];
		}
	}
	__syncthreads();
	if (leaf >= lv.count[0])
		return;
	const int m = (int)*ngood_p, K = min(k, m - 1);
	const int base = leaf * AD_LEAF, i = base + lane;
	const int active = i < m && K >= 1;
	if (K < 1 || base >= m) { /* no search in this warp */
		if (i < n)
			h_by_id[id ? id[slot[i]] : slot[i]] = fallback;
		return;
	}
	const int K1 = K + 1; /* the body itself is one of them, at 0 */
	const float4 p = spos[active ? i : base];
	unsigned kthb = active ? AD_FULL : 0u;
	int size = 0, top = 0;
	/* Start from the leaves around our own in key order (at least K + 1
	 * bodies, our own leaf among them: each lane meets itself once): every
	 * lane then has a k-th distance to prune with before the walk, which
	 * skips these leaves. Without it a lane's heap fills from whatever its
	 * group's nearest-first order brings, far from it: ~4x more leaves
	 * walked and ~8x more heap insertions. */
	const int R = (K + 63) / 64;
	for (int j = max(leaf - R, 0); j <= leaf + R && j * AD_LEAF < m; j++)
		ad_scan_leaf<KMAX>(spos, s_leaf[w], j, m, lane, p, hv2, size, K1, kthb);
	const float4 ga = blo[leaf], gb = bhi[leaf]; /* our drawn bodies' box */
	const int root = lv.nlev - 1; /* s_off: lv.off[root] would copy lv to local memory */
	if (lane == 0) {
		float4 a = blo[s_off[root]];
		a.w = __int_as_float(AD_NODE(root, 0));
		s_lo[w][0] = a;
		s_hi[w][0] = bhi[s_off[root]];
	}
	top = 1;
	__syncwarp();
	while (top > 0) {
		top--;
		const float4 a = s_lo[w][top], b = s_hi[w][top];
		__syncwarp();
		if (!__any_sync(AD_FULL, __float_as_uint(ad_box_d2(p, a, b)) < kthb))
			continue;
		const int node = __float_as_int(a.w), l = node >> 27, j = node & ((1 << 27) - 1);
		if (l == 0) {
			if (j < leaf - R || j > leaf + R) /* else scanned already */
				ad_scan_leaf<KMAX>(spos, s_leaf[w], j, m, lane, p, hv2, size, K1,
						   kthb);
			continue;
		}
		/* Children: lane c < 8 loads child c's box and pushes it when it
		 * is nearer our group's box than the largest k-th distance among
		 * our lanes, keyed by that box-to-box distance. A superset of the
		 * children some lane wants (each is tested lane by lane when
		 * popped, with the bounds of then); it replaces every lane
		 * measuring all 8 boxes (H100 galaxies 1M: 3.28 ms against 3.55). */
		const int cj = AD_FAN * j + lane;
		float4 ca = make_float4(INFINITY, INFINITY, INFINITY, 0.0f);
		float4 cb = make_float4(-INFINITY, -INFINITY, -INFINITY, 0.0f);
		if (lane < AD_FAN && cj < s_count[l - 1]) {
			ca = blo[s_off[l - 1] + cj];
			cb = bhi[s_off[l - 1] + cj];
		}
		const unsigned maxk = __reduce_max_sync(AD_FULL, kthb);
		const unsigned d = __float_as_uint(ad_boxbox_d2(ga, gb, ca, cb));
		/* an empty box (lo > hi, and lanes past 8): nobody */
		const unsigned key = (ca.x <= cb.x && d < maxk) ? d : AD_FULL;
		const unsigned push = __ballot_sync(AD_FULL, lane < AD_FAN && key != AD_FULL);
		/* Farthest deepest in the stack: rank = pushed children with a
		 * larger key (ties by lane). */
		int rank = 0;
		for (int c = 0; c < AD_FAN; c++) {
			const unsigned kc = __shfl_sync(AD_FULL, key, c);
			rank += ((push >> c) & 1) && (kc > key || (kc == key && c < lane));
		}
		if ((push >> lane) & 1) {
			ca.w = __int_as_float(AD_NODE(l - 1, cj));
			s_lo[w][top + rank] = ca;
			s_hi[w][top + rank] = cb;
		}
		top += __popc(push);
		__syncwarp();
	}
	if (i < n)
		h_by_id[id ? id[slot[i]] : slot[i]] =
			active ? (float)(sqrt((double)reinterpret_cast<float *>(hv2)[1]) / length)
			       : fallback;
}

static void ad_levels_of(size_t n, struct ad_levels *lv)
{
	memset(lv, 0, sizeof *lv);
	size_t c = (n + AD_LEAF - 1) / AD_LEAF, off = 0;
	if (c == 0)
		c = 1;
	for (;;) {
		lv->count[lv->nlev] = (int)c;
		lv->off[lv->nlev] = (int)off;
		lv->nlev++;
		off += c;
		if (c == 1)
			break;
		c = (c + AD_FAN - 1) / AD_FAN;
	}
}

static int ad_alloc(struct gr_adaptive *ad, size_t n, int cap_on)
{
	struct ad_levels lv;
	ad_levels_of(n, &lv);
	ad->cap = n;
	ad->node_cap = (size_t)lv.off[lv.nlev - 1] + 1;
	for (int k = 0; k < 2; k++) {
		CUDA_CHECK(cudaMalloc(&ad->d_code[k], n * sizeof(u64)));
		CUDA_CHECK(cudaMalloc(&ad->d_slot[k], n * sizeof(uint32_t)));
	}
	CUDA_CHECK(cudaMalloc(&ad->d_spos, n * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&ad->d_lo, ad->node_cap * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&ad->d_hi, ad->node_cap * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&ad->d_part, 6 * AD_BBOX_BLOCKS * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&ad->d_grid, 8 * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&ad->d_ngood, sizeof(uint32_t)));
	if (cap_on)
		for (int k = 0; k < 2; k++)
			CUDA_CHECK(cudaMalloc(&ad->d_capkey[k], n * sizeof(float)));
	return 0;
}

void gr_adaptive_free(struct gpu_render *gr)
{
	struct gr_adaptive *ad = gr->ad;
	if (!ad)
		return;
	for (int k = 0; k < 2; k++) {
		cudaFree(ad->d_code[k]);
		cudaFree(ad->d_slot[k]);
	}
	cudaFree(ad->d_spos);
	cudaFree(ad->d_lo);
	cudaFree(ad->d_hi);
	cudaFree(ad->d_part);
	cudaFree(ad->d_grid);
	cudaFree(ad->d_ngood);
	cudaFree(ad->d_capkey[0]);
	cudaFree(ad->d_capkey[1]);
	free(ad);
	gr->ad = NULL;
}

#define AD_LAUNCH(KM)                                                                          \
	ad_knn<KM><<<(unsigned)((lv.count[0] + AD_WARPS - 1) / AD_WARPS), AD_WARPS * 32, 0, st>>>( \
		slots.Current(), ad->d_spos, ad->d_lo, ad->d_hi, in->id, ad->d_ngood, n, k, lv, \
		gr->u.length, (float)gr->smoothing, gr->d_h)

int gr_adaptive_h(struct gpu_render *gr, const struct gpu_render_input *in)
{
	const int n = (int)in->n;
	cudaStream_t st = gr->stream;
	if (n == 0)
		return 0;
	if (!gr->ad) {
		gr->ad = (struct gr_adaptive *)calloc(1, sizeof *gr->ad);
		if (!gr->ad) {
			log_error("GPU render: out of memory");
			return NB_ERUNTIME;
		}
		if (ad_alloc(gr->ad, gr->nmax, gr->h_cap > 0) != 0) {
			gr_adaptive_free(gr);
			return NB_ERUNTIME;
		}
	}
	struct gr_adaptive *ad = gr->ad;
	struct ad_levels lv;
	ad_levels_of((size_t)n, &lv);
	if (lv.nlev > AD_MAXLEV) {
		log_error("GPU render: %d bodies are too many for the adaptive-h tree", n);
		return NB_ERUNTIME;
	}
	const float4 *pos = (const float4 *)in->pos4;
	const unsigned nb = (unsigned)((n + GR_THREADS - 1) / GR_THREADS);
	struct ad_drawn_args da = {in->id, gr->d_comp, gr->d_colors, gr->ncomp,
				   gr->mode == SCENE_COLOR_DENSITY};

	ad_bbox_part<<<AD_BBOX_BLOCKS, GR_THREADS, 0, st>>>(pos, n, da, ad->d_part);
	CUDA_CHECK(cudaGetLastError());
	ad_bbox_final<<<1, 1, 0, st>>>(ad->d_part, AD_BBOX_BLOCKS, ad->d_grid);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemsetAsync(ad->d_ngood, 0, sizeof(uint32_t), st));
	ad_keys<<<nb, GR_THREADS, 0, st>>>(pos, n, da, ad->d_grid, ad->d_code[0], ad->d_slot[0],
					   ad->d_ngood);
	CUDA_CHECK(cudaGetLastError());

	cub::DoubleBuffer<u64> codes(ad->d_code[0], ad->d_code[1]);
	cub::DoubleBuffer<uint32_t> slots(ad->d_slot[0], ad->d_slot[1]);
	size_t bytes = 0;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, bytes, codes, slots, n, 0, 64, st));
	if (gr_temp_reserve(gr, bytes) != 0)
		return NB_ERUNTIME;
	bytes = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(gr->d_temp, bytes, codes, slots, n, 0, 64, st));
	ad->d_sorted = slots.Current(); /* for gr_adaptive_cap */
	ad_gather<<<nb, GR_THREADS, 0, st>>>(pos, slots.Current(), n, ad->d_spos);
	CUDA_CHECK(cudaGetLastError());

	ad_leaf_boxes<<<(unsigned)((lv.count[0] + 7) / 8), 256, 0, st>>>(ad->d_spos, ad->d_ngood,
									 lv.count[0], ad->d_lo, ad->d_hi);
	CUDA_CHECK(cudaGetLastError());
	for (int l = 1; l < lv.nlev; l++) {
		ad_node_boxes<<<(unsigned)((lv.count[l] + 255) / 256), 256, 0, st>>>(
			ad->d_lo, ad->d_hi, lv.off[l - 1], lv.count[l - 1], lv.off[l], lv.count[l]);
		CUDA_CHECK(cudaGetLastError());
	}

	int k = gr->neighbours < 1 ? 1 : gr->neighbours > 1024 ? 1024 : gr->neighbours;
	if (k <= 16)
		AD_LAUNCH(16);
	else if (k <= 32)
		AD_LAUNCH(32);
	else if (k <= 64)
		AD_LAUNCH(64);
	else if (k <= 128)
		AD_LAUNCH(128);
	else if (k <= 256)
		AD_LAUNCH(256);
	else
		AD_LAUNCH(1024);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* render.h_cap (render_adaptive_cap's meaning, render/adaptive.h). The
 * drawn bodies are sorted positions [0, m) of the last gr_adaptive_h; their
 * h are gathered (+inf past m), radix-sorted as float keys by CUB on the
 * device (no copy back, no host wait), the lower median is sorted[(m-1)/2],
 * and each drawn h becomes min(h, (float)(cap * median)). Cost: one 32-bit
 * key sort of n floats (under half the 64-bit pair sort gr_adaptive_h
 * already does) and two passes over n bodies; 8 bytes per body. */
__global__ void ad_cap_gather(const uint32_t *slot, const uint32_t *id, const uint32_t *ngood_p,
			      int n, const float *h_by_id, float *key)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		key[i] = i < (int)*ngood_p ? h_by_id[id ? id[slot[i]] : slot[i]] : INFINITY;
}

__global__ void ad_cap_apply(const uint32_t *slot, const uint32_t *id, const uint32_t *ngood_p,
			     int n, double cap, const float *sorted, float *h_by_id)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x, m = (int)*ngood_p;
	if (i >= n || i >= m || m < 2)
		return;
	const float hmax = (float)(cap * (double)sorted[(m - 1) / 2]);
	const uint32_t b = id ? id[slot[i]] : slot[i];
	h_by_id[b] = fminf(h_by_id[b], hmax);
}

int gr_adaptive_cap(struct gpu_render *gr, const struct gpu_render_input *in)
{
	const int n = (int)in->n;
	struct gr_adaptive *ad = gr->ad;
	if (!(gr->h_cap > 0) || n < 2 || !ad || !ad->d_capkey[0])
		return 0;
	cudaStream_t st = gr->stream;
	const unsigned nb = (unsigned)((n + GR_THREADS - 1) / GR_THREADS);
	ad_cap_gather<<<nb, GR_THREADS, 0, st>>>(ad->d_sorted, in->id, ad->d_ngood, n, gr->d_h,
						 ad->d_capkey[0]);
	CUDA_CHECK(cudaGetLastError());
	size_t bytes = 0;
	CUDA_CHECK(cub::DeviceRadixSort::SortKeys(NULL, bytes, ad->d_capkey[0], ad->d_capkey[1], n,
						  0, 32, st));
	if (gr_temp_reserve(gr, bytes) != 0)
		return NB_ERUNTIME;
	bytes = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortKeys(gr->d_temp, bytes, ad->d_capkey[0],
						  ad->d_capkey[1], n, 0, 32, st));
	ad_cap_apply<<<nb, GR_THREADS, 0, st>>>(ad->d_sorted, in->id, ad->d_ngood, n, gr->h_cap,
						ad->d_capkey[1], gr->d_h);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
