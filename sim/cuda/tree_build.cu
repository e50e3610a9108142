/* tree_build.cu - the GPU octree's construction stages, all on the device:
 * bounding box (parallel reduction), 63-bit Morton keys, CUB radix sort of
 * (key, index), gather of the bodies into key order, compressed-octree build
 * depth by depth from the sorted keys, and bottom-up moments (mass, centre of
 * mass, traceless quadrupole, opening radius). No host round trip: every
 * kernel reads the sizes it needs from the device control block.
 *
 * Costs per body (bytes through DRAM): bbox 16; keys 16 + 12; sort ~8 passes
 * x 24; gather 36 read + 36 written, copy back 72; build ~log(n/leaf) binary
 * searches per node; moments one pass over bodies (2 for leaves) and one per
 * node. */
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "tree_internal.cuh"

#define BUILD_THREADS 256

/* ---- reset ---------------------------------------------------------------- */

__global__ void tree_reset_kernel(struct tree_ctl *c, int n, int2 *node_range)
{
	int k = threadIdx.x;
	if (k < 3) {
		c->bmin[k] = 0xffffffffu;
		c->bmax[k] = 0u;
	}
	if (k < TREE_MAX_DEPTH + 2)
		c->depth_start[k] = k == 0 ? 0 : 1;
	if (k < TREE_MAX_DEPTH + 1)
		c->blocks_done[k] = 0;
	if (k == 0) {
		c->node_count = 1;
		c->alloc_end = 1;
		c->overflow = 0;
		c->stack_overflow = 0;
		c->group_next = 0;
		c->group_count = 0;
		c->group_overflow = 0;
		c->p2p = 0;
		c->m2p = 0;
		c->m2l = 0;
		node_range[0] = make_int2(0, n);
	}
}

/* A refit keeps the cells and walk groups: only the walk's counters. */
__global__ void tree_refit_reset_kernel(struct tree_ctl *c)
{
	c->group_next = 0;
	c->p2p = 0;
	c->m2p = 0;
	c->m2l = 0;
}

int tree_stage_refit_reset(struct gpu_tree *t, cudaStream_t s)
{
	tree_refit_reset_kernel<<<1, 1, 0, s>>>(t->ctl);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int tree_stage_reset(struct gpu_tree *t, size_t n, cudaStream_t s)
{
	tree_reset_kernel<<<1, 64, 0, s>>>(t->ctl, (int)n, t->node_range);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* ---- bounding box ----------------------------------------------------------
 * Grid-stride min/max per thread, warp shuffles, one atomic per block and
 * axis on order-preserving uints. 16 B read per body, 6 FMNMX. */

__global__ void tree_bbox_kernel(const float4 *__restrict__ pos, size_t n, struct tree_ctl *c)
{
	float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 p = pos[i];
		lo[0] = fminf(lo[0], p.x), hi[0] = fmaxf(hi[0], p.x);
		lo[1] = fminf(lo[1], p.y), hi[1] = fmaxf(hi[1], p.y);
		lo[2] = fminf(lo[2], p.z), hi[2] = fmaxf(hi[2], p.z);
	}
	for (int off = 16; off > 0; off >>= 1) {
		for (int a = 0; a < 3; a++) {
			lo[a] = fminf(lo[a], __shfl_xor_sync(0xffffffffu, lo[a], off));
			hi[a] = fmaxf(hi[a], __shfl_xor_sync(0xffffffffu, hi[a], off));
		}
	}
	__shared__ float s_lo[3][BUILD_THREADS / 32], s_hi[3][BUILD_THREADS / 32];
	int w = threadIdx.x / 32, lane = threadIdx.x % 32;
	if (lane == 0) {
		for (int a = 0; a < 3; a++)
			s_lo[a][w] = lo[a], s_hi[a][w] = hi[a];
	}
	__syncthreads();
	if (threadIdx.x < 3) {
		int a = threadIdx.x;
		float l = s_lo[a][0], h = s_hi[a][0];
		for (int k = 1; k < BUILD_THREADS / 32; k++)
			l = fminf(l, s_lo[a][k]), h = fmaxf(h, s_hi[a][k]);
		atomicMin(&c->bmin[a], tree_f2u(l));
		atomicMax(&c->bmax[a], tree_f2u(h));
	}
}

/* the box grown to hold t->cover_box (gpu_tree_cover_box) */
__global__ void tree_cover_box_kernel(struct tree_ctl *c, float x0, float y0, float z0, float x1,
				      float y1, float z1)
{
	const float lo[3] = {x0, y0, z0}, hi[3] = {x1, y1, z1};
	for (int a = 0; a < 3; a++) {
		atomicMin(&c->bmin[a], tree_f2u(lo[a]));
		atomicMax(&c->bmax[a], tree_f2u(hi[a]));
	}
}

int tree_stage_bbox(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s)
{
	size_t want = (b->n + BUILD_THREADS - 1) / BUILD_THREADS;
	int grid = (int)(want < (size_t)t->sm_count * 4 ? want : (size_t)t->sm_count * 4);
	tree_bbox_kernel<<<grid > 0 ? grid : 1, BUILD_THREADS, 0, s>>>(b->pos, b->n, t->ctl);
	CUDA_CHECK(cudaGetLastError());
	if (t->cover_box) {
		const float *q = t->cover_lohi;
		tree_cover_box_kernel<<<1, 1, 0, s>>>(t->ctl, q[0], q[1], q[2], q[3], q[4], q[5]);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* ---- keys, sort, gather ---------------------------------------------------- */

__device__ __forceinline__ unsigned int tree_cell_coord(float x, float x0, float scale)
{
	/* fmaxf first: a NaN coordinate maps to 0 instead of poisoning the key */
	float f = fminf(fmaxf((x - x0) * scale, 0.0f), 2097151.0f);
	return (unsigned int)f;
}

/* 16 B read, 12 B written per body. */
__global__ void tree_keys_kernel(const float4 *__restrict__ pos, size_t n,
				 const struct tree_ctl *c, unsigned long long *keys, uint32_t *iota)
{
	struct tree_cube q = tree_cube_of(c);
	float scale = 2097152.0f / q.side;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 p = pos[i];
		unsigned int ix = tree_cell_coord(p.x, q.x0, scale);
		unsigned int iy = tree_cell_coord(p.y, q.y0, scale);
		unsigned int iz = tree_cell_coord(p.z, q.z0, scale);
		keys[i] = sim_morton_key(ix, iy, iz);
		iota[i] = (uint32_t)i;
	}
}

/* Tree-order copies of pos, vel and id; perm[k] = old slot of new slot k.
 * Bodies stay sorted between steps, so perm is close to the identity and
 * these reads are nearly coalesced. */
__global__ void tree_gather_kernel(const uint32_t *__restrict__ perm, size_t n,
				   const float4 *__restrict__ pos, const float4 *__restrict__ vel,
				   const uint32_t *__restrict__ id, float4 *pos_o, float4 *vel_o,
				   uint32_t *id_o, const uint8_t *__restrict__ lev, uint8_t *lev_o)
{
	for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
	     k += (size_t)gridDim.x * blockDim.x) {
		uint32_t i = perm[k];
		pos_o[k] = pos[i];
		if (vel)
			vel_o[k] = vel[i];
		if (id)
			id_o[k] = id[i];
		if (lev)
			lev_o[k] = lev[i];
	}
}

size_t tree_sort_tmp_bytes(size_t n)
{
	size_t bytes = 0;
	cub::DeviceRadixSort::SortPairs(NULL, bytes, (const unsigned long long *)NULL,
					(unsigned long long *)NULL, (const uint32_t *)NULL,
					(uint32_t *)NULL, (int)n, 0, 63);
	return bytes;
}

/* Grid-stride grids: per_sm blocks of BUILD_THREADS per multiprocessor. */
static int grid_for(const struct gpu_tree *t, size_t n, int per_sm)
{
	size_t want = (n + BUILD_THREADS - 1) / BUILD_THREADS;
	size_t cap = (size_t)t->sm_count * per_sm;
	return (int)(want < 1 ? 1 : want < cap ? want : cap);
}

int tree_stage_keys(struct gpu_tree *t, const struct gpu_bodies *b, unsigned long long *keys,
		    cudaStream_t s)
{
	tree_keys_kernel<<<grid_for(t, b->n, 16), BUILD_THREADS, 0, s>>>(b->pos, b->n, t->ctl, keys,
									 t->iota);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int tree_stage_gather(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s)
{
	size_t n = b->n;
	int grid = grid_for(t, n, 16);
	tree_gather_kernel<<<grid, BUILD_THREADS, 0, s>>>(t->perm, n, b->pos, b->vel, b->id, t->pos,
							 t->vel, t->id, b->lev, t->lev);
	CUDA_CHECK(cudaGetLastError());
	/* the caller's arrays follow tree order (acc is rewritten by the walk) */
	CUDA_CHECK(cudaMemcpyAsync(b->pos, t->pos, n * sizeof(float4), cudaMemcpyDeviceToDevice, s));
	if (b->vel)
		CUDA_CHECK(cudaMemcpyAsync(b->vel, t->vel, n * sizeof(float4),
					   cudaMemcpyDeviceToDevice, s));
	if (b->id)
		CUDA_CHECK(cudaMemcpyAsync(b->id, t->id, n * sizeof(uint32_t),
					   cudaMemcpyDeviceToDevice, s));
	if (b->lev)
		CUDA_CHECK(cudaMemcpyAsync(b->lev, t->lev, n, cudaMemcpyDeviceToDevice, s));
	return 0;
}

int tree_stage_sort(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s)
{
	int rc;
	size_t n = b->n;
	if ((rc = tree_stage_keys(t, b, t->keys_alt, s)))
		return rc;
	size_t bytes = t->sort_tmp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(t->sort_tmp, bytes, t->keys_alt, t->keys, t->iota,
						   t->perm, (int)n, 0, 63, s));
	return tree_stage_gather(t, b, s);
}

/* ---- build -----------------------------------------------------------------
 * One launch per depth d: each node of depth d either becomes a leaf (at most
 * leaf bodies, or all keys equal) or finds its 2..8 non-empty child octants
 * by binary searches over its sorted keys. A block scan numbers the children;
 * one atomicAdd per block allocates them, contiguous per parent. When the
 * node capacity is reached the block's nodes stay leaves (exact sums, just
 * slower) and ctl->overflow says so. The block that finishes last records
 * where depth d+1 ends (threadfence + counter, no spinning). */

/* The 7 octant boundaries of a sorted key range [b, e): bound[o] = first
 * index whose key >= prefix | o << sh. The 7 binary searches run in
 * lockstep (the same halving sequence, as it depends only on e - b), so
 * their dependent loads overlap instead of queueing one search after
 * another: about log2(e - b) memory latencies per node instead of 7x that. */
__device__ __forceinline__ void tree_octant_bounds(const unsigned long long *__restrict__ keys,
						   int b, int e, unsigned long long prefix, int sh,
						   int bound[9])
{
	int pos[7];
#pragma unroll
	for (int o = 0; o < 7; o++)
		pos[o] = b;
	int len = e - b; /* search [pos, pos + len) for the first key >= target */
	while (len > 1) {
		int half = len >> 1;
#pragma unroll
		for (int o = 0; o < 7; o++) {
			unsigned long long t = prefix | (unsigned long long)(o + 1) << sh;
			if (keys[pos[o] + half - 1] < t)
				pos[o] += half;
		}
		len -= half;
	}
	bound[0] = b;
#pragma unroll
	for (int o = 0; o < 7; o++) {
		unsigned long long t = prefix | (unsigned long long)(o + 1) << sh;
		bound[o + 1] = pos[o] + (keys[pos[o]] < t ? 1 : 0);
	}
	bound[8] = e;
}

/* Walk groups: a group node is a node of at most gmax bodies whose parent
 * has more (or the root, if it has at most gmax); its body range is cut into
 * chunks of gsize consecutive bodies, one walk group each. A leaf of more
 * than gmax bodies (coincident bodies, or the node cap) is cut the same way.
 * Every body lands in exactly one group: the first node of at most gmax
 * bodies on its root-to-leaf path, or else its leaf. Groups therefore never
 * straddle a coarse octant boundary, which would give a box as large as the
 * system and one warp doing a near-direct sum for the whole step. */
__device__ __forceinline__ int tree_chunks(int count, int gsize)
{
	return (count + gsize - 1) / gsize;
}

/* one group node's (or big leaf's) chunks; its first is its head */
__device__ __forceinline__ int tree_put_chunks(int2 *groups, uint8_t *head, int k, int b, int e,
					       int gsize)
{
	for (int b0 = b; b < e; b += gsize) {
		head[k] = b == b0;
		groups[k++] = make_int2(b, min(b + gsize, e));
	}
	return k;
}

__global__ void tree_split_kernel(int d, const unsigned long long *__restrict__ keys,
				  int2 *node_range, int2 *node_kids, int2 *groups,
				  uint8_t *group_head, struct tree_ctl *c, int leaf, int cap,
				  int gsize, int gmax, int gcap)
{
	typedef cub::BlockScan<int, BUILD_THREADS> scan_t;
	__shared__ typename scan_t::TempStorage scan_tmp;
	__shared__ int s_first, s_gfirst;
	const int lo = c->depth_start[d], hi = c->depth_start[d + 1];
	for (int base = lo + blockIdx.x * BUILD_THREADS; base < hi; base += gridDim.x * BUILD_THREADS) {
		int i = base + threadIdx.x;
		int bound[9];
		int nch = 0;
		int2 r = make_int2(0, 0);
		if (i < hi) {
			r = node_range[i];
			unsigned long long k0 = keys[r.x], k1 = keys[r.y - 1];
			if (r.y - r.x > leaf && k0 != k1) {
				int level = tree_common_level(k0, k1) + 1; /* children's level, <= 21 */
				int sh = 63 - 3 * level;
				unsigned long long prefix = k0 >> (sh + 3) << (sh + 3); /* sh + 3 <= 63 */
				tree_octant_bounds(keys, r.x, r.y, prefix, sh, bound);
#pragma unroll
				for (int o = 0; o < 8; o++)
					nch += bound[o + 1] > bound[o];
			}
		}
		int off, total;
		scan_t(scan_tmp).ExclusiveSum(nch, off, total);
		if (threadIdx.x == 0) {
			int first = total > 0 ? atomicAdd(&c->node_count, total) : 0;
			if (total > 0 && first + total > cap) {
				first = -1;
				c->overflow = 1;
			} else if (total > 0) {
				atomicMax(&c->alloc_end, first + total);
			}
			s_first = first;
		}
		__syncthreads();
		const int first = s_first;
		const bool split = nch > 0 && first >= 0;
		const int cnt = r.y - r.x;

		/* walk groups this node starts (see above) */
		int gch = 0;
		if (i < hi) {
			if (d == 0 && cnt <= gmax)
				gch = tree_chunks(cnt, gsize);
			else if (!split && cnt > gmax)
				gch = tree_chunks(cnt, gsize);
			else if (split && cnt > gmax) {
#pragma unroll
				for (int o = 0; o < 8; o++) {
					int cc = bound[o + 1] - bound[o];
					if (cc > 0 && cc <= gmax)
						gch += tree_chunks(cc, gsize);
				}
			}
		}
		int goff, gtotal;
		__syncthreads(); /* scan_tmp reused */
		scan_t(scan_tmp).ExclusiveSum(gch, goff, gtotal);
		if (threadIdx.x == 0) {
			int gfirst = gtotal > 0 ? atomicAdd(&c->group_count, gtotal) : 0;
			if (gtotal > 0 && gfirst + gtotal > gcap) {
				gfirst = -1; /* impossible by the bound in tree.cu */
				c->group_overflow = 1;
			}
			s_gfirst = gfirst;
		}
		__syncthreads();
		const int gfirst = s_gfirst;

		if (i < hi) {
			if (split) {
				int k = first + off;
				node_kids[i] = make_int2(k, nch);
#pragma unroll
				for (int o = 0; o < 8; o++) {
					if (bound[o + 1] > bound[o])
						node_range[k++] = make_int2(bound[o], bound[o + 1]);
				}
			} else {
				node_kids[i] = make_int2(r.x, -cnt);
			}
			if (gch > 0 && gfirst >= 0) {
				int k = gfirst + goff;
				if ((d == 0 && cnt <= gmax) || (!split && cnt > gmax)) {
					tree_put_chunks(groups, group_head, k, r.x, r.y, gsize);
				} else {
#pragma unroll
					for (int o = 0; o < 8; o++) {
						int cc = bound[o + 1] - bound[o];
						if (cc > 0 && cc <= gmax)
							k = tree_put_chunks(groups, group_head, k, bound[o],
									    bound[o + 1], gsize);
					}
				}
			}
		}
		__syncthreads(); /* scan_tmp and s_first are reused */
	}
	/* the last block to finish publishes where depth d+1 ends */
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned int done = atomicAdd(&c->blocks_done[d], 1u);
		if (done == gridDim.x - 1) {
			__threadfence();
			c->depth_start[d + 2] = atomicAdd(&c->alloc_end, 0);
		}
	}
}

int tree_stage_build(struct gpu_tree *t, cudaStream_t s)
{
	/* one depth holds a fraction of the nodes: a small grid-stride grid
	 * keeps the many near-empty depths cheap */
	int grid = grid_for(t, (size_t)t->node_cap, 4);
	for (int d = 0; d < TREE_MAX_DEPTH; d++) {
		tree_split_kernel<<<grid, BUILD_THREADS, 0, s>>>(
			d, t->keys, t->node_range, t->node_kids, t->groups, t->group_head, t->ctl,
			t->leaf_size,
			t->node_cap, 32 * t->lanes, t->group_max, t->group_cap);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* ---- moments ---------------------------------------------------------------
 * Depth by depth from the deepest: a leaf sums its bodies (two passes: centre
 * of mass, then Q, T and bmax about it), an internal node combines its
 * children by the parallel-axis theorem,
 *   Q = sum_c [Q_c + m_c (3 s s^T - |s|^2 I)],  T = sum_c [T_c + m_c |s|^2],
 *   s = com_c - com, and bmax = max_c (|s| + bmax_c).
 * T = tr sum m y y^T is what the softened expansion needs beyond Q (see
 * tree_walk.cu). Then the opening radius (tree_api.h). */

struct tree_mom {
	float m, x, y, z, q[6], tr, bmax;
};

__device__ void tree_leaf_moments(const float4 *__restrict__ pos, int b, int e, float cx, float cy,
				  float cz, struct tree_mom *o)
{
	/* sums relative to the cell centre keep float precision */
	float m = 0, sx = 0, sy = 0, sz = 0;
	for (int j = b; j < e; j++) {
		float4 p = pos[j];
		m += p.w;
		sx += p.w * (p.x - cx), sy += p.w * (p.y - cy), sz += p.w * (p.z - cz);
	}
	float inv = m > 0 ? 1.0f / m : 0.0f;
	o->m = m;
	o->x = cx + sx * inv, o->y = cy + sy * inv, o->z = cz + sz * inv;
	float q[6] = {0, 0, 0, 0, 0, 0}, b2 = 0, tr = 0;
	for (int j = b; j < e; j++) {
		float4 p = pos[j];
		float dx = p.x - o->x, dy = p.y - o->y, dz = p.z - o->z;
		float r2 = dx * dx + dy * dy + dz * dz;
		b2 = fmaxf(b2, r2);
		tr += p.w * r2;
		q[0] += p.w * (3 * dx * dx - r2);
		q[1] += p.w * (3 * dy * dy - r2);
		q[2] += p.w * (3 * dz * dz - r2);
		q[3] += p.w * 3 * dx * dy;
		q[4] += p.w * 3 * dx * dz;
		q[5] += p.w * 3 * dy * dz;
	}
	for (int a = 0; a < 6; a++)
		o->q[a] = q[a];
	o->tr = tr;
	o->bmax = sqrtf(b2);
}

__global__ void tree_moments_kernel(int d, const unsigned long long *__restrict__ keys,
				    const float4 *__restrict__ pos, const int2 *__restrict__ node_range,
				    const int2 *__restrict__ node_kids, float4 *node_open,
				    float4 *node_mq0, float4 *node_mq1, float *node_bmax,
				    const struct tree_ctl *c,
				    float theta, int criterion)
{
	const int lo = c->depth_start[d], hi = c->depth_start[d + 1];
	const struct tree_cube cube = tree_cube_of(c);
	for (int i = lo + blockIdx.x * blockDim.x + threadIdx.x; i < hi; i += gridDim.x * blockDim.x) {
		int2 r = node_range[i], kid = node_kids[i];
		unsigned long long k0 = keys[r.x];
		int level = tree_common_level(k0, keys[r.y - 1]);
		/* cell centre from the key prefix */
		unsigned int ix = 0, iy = 0, iz = 0;
		for (int l = 0; l < level; l++) {
			unsigned int o = (unsigned int)(k0 >> (60 - 3 * l)) & 7u;
			ix = ix << 1 | (o & 1u), iy = iy << 1 | (o >> 1 & 1u), iz = iz << 1 | (o >> 2);
		}
		float side = ldexpf(cube.side, -level);
		float cx = cube.x0 + (ix + 0.5f) * side, cy = cube.y0 + (iy + 0.5f) * side,
		      cz = cube.z0 + (iz + 0.5f) * side;
		struct tree_mom o;
		if (kid.y < 0) {
			tree_leaf_moments(pos, r.x, r.y, cx, cy, cz, &o);
		} else {
			float m = 0, sx = 0, sy = 0, sz = 0;
			for (int k = kid.x; k < kid.x + kid.y; k++) {
				float4 cc = node_open[k];
				float cm = node_mq0[k].x;
				m += cm;
				sx += cm * (cc.x - cx), sy += cm * (cc.y - cy), sz += cm * (cc.z - cz);
			}
			float inv = m > 0 ? 1.0f / m : 0.0f;
			o.m = m;
			o.x = cx + sx * inv, o.y = cy + sy * inv, o.z = cz + sz * inv;
			for (int a = 0; a < 6; a++)
				o.q[a] = 0;
			o.tr = 0;
			o.bmax = 0;
			for (int k = kid.x; k < kid.x + kid.y; k++) {
				float4 cc = node_open[k], q0 = node_mq0[k], q1 = node_mq1[k];
				float dx = cc.x - o.x, dy = cc.y - o.y, dz = cc.z - o.z;
				float s2 = dx * dx + dy * dy + dz * dz, cm = q0.x;
				o.q[0] += q0.y + cm * (3 * dx * dx - s2);
				o.q[1] += q0.z + cm * (3 * dy * dy - s2);
				o.q[2] += q0.w + cm * (3 * dz * dz - s2);
				o.q[3] += q1.x + cm * 3 * dx * dy;
				o.q[4] += q1.y + cm * 3 * dx * dz;
				o.q[5] += q1.z + cm * 3 * dy * dz;
				o.tr += q1.w + cm * s2;
				o.bmax = fmaxf(o.bmax, sqrtf(s2) + node_bmax[k]);
			}
		}
		/* opening radius: accepted when dist(com, group box) > rcrit
		 * (mass: bmax's here, tree_mass_rcrit_kernel sets it once the
		 * root's mass is known) */
		float rc;
		if (criterion == GPU_TREE_CRIT_BMAX || criterion == GPU_TREE_CRIT_MASS) {
			rc = theta > 0 ? o.bmax / theta : INFINITY;
			rc = fmaxf(rc, o.bmax) * (1.0f + 1e-5f);
		} else {
			float dx = o.x - cx, dy = o.y - cy, dz = o.z - cz;
			float delta = sqrtf(dx * dx + dy * dy + dz * dz);
			rc = theta > 0 ? side / theta : INFINITY;
			/* never accept a cell that may hold a group body: the cube
			 * lies within delta + sqrt(3)/2 side of the com (plus two
			 * finest cells for rounding in the keys) */
			rc = fmaxf(rc, delta + 0.8660254f * side + ldexpf(cube.side, -20));
		}
		node_open[i] = make_float4(o.x, o.y, o.z, rc * rc);
		node_mq0[i] = make_float4(o.m, o.q[0], o.q[1], o.q[2]);
		node_mq1[i] = make_float4(o.q[3], o.q[4], o.q[5], o.tr);
		node_bmax[i] = o.bmax;
	}
}

/* theta(m) of the mass criterion (GPU_TREE_CRIT_MASS, tree_api.h): the
 * root of theta^5 = c (1 - theta)^2 on [0, 1], c = theta0^5 / (1 -
 * theta0)^2 (m / mtot)^(-1/3), by 24 halvings (float's precision): the
 * CPU's test (sim/tree.c, tree_mass_accepts: x^5 < c (1 - x)^2 with
 * x = bmax/d) solved for the angle. ~120 flops a node, once a build. */
__device__ float tree_mass_theta(float theta0, float m, float mtot)
{
	if (!(theta0 > 0.0f))
		return 0.0f;
	if (theta0 >= 1.0f || !(m > 0.0f) || !(mtot > 0.0f))
		return 1.0f;
	const float t5 = theta0 * theta0 * theta0 * theta0 * theta0;
	const float c = t5 / ((1.0f - theta0) * (1.0f - theta0)) / cbrtf(fminf(m / mtot, 1.0f));
	float lo = 0.0f, hi = 1.0f;
	for (int k = 0; k < 24; k++) {
		const float x = 0.5f * (lo + hi);
		if (x * x * x * x * x < c * (1.0f - x) * (1.0f - x))
			lo = x;
		else
			hi = x;
	}
	return lo;
}

/* The mass criterion's opening radii, after the moments (the root's mass,
 * node 0, is the tree's): rcrit = max(bmax / theta(M), bmax) (1 + 1e-5),
 * as bmax's with theta(M) for theta. */
__global__ void tree_mass_rcrit_kernel(float4 *node_open, const float4 *__restrict__ node_mq0,
				       const float *__restrict__ node_bmax,
				       const struct tree_ctl *c, float theta0)
{
	const int n = c->depth_start[TREE_MAX_DEPTH];
	const float mtot = node_mq0[0].x;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		const float b = node_bmax[i], th = tree_mass_theta(theta0, node_mq0[i].x, mtot);
		float rc = th > 0.0f ? b / th : INFINITY;
		rc = fmaxf(rc, b) * (1.0f + 1e-5f);
		node_open[i].w = rc * rc;
	}
}

int tree_stage_moments(struct gpu_tree *t, const float4 *pos, cudaStream_t s)
{
	int grid = grid_for(t, (size_t)t->node_cap, 4);
	for (int d = TREE_MAX_DEPTH - 1; d >= 0; d--) {
		tree_moments_kernel<<<grid, BUILD_THREADS, 0, s>>>(
			d, t->keys, pos, t->node_range, t->node_kids, t->node_open, t->node_mq0,
			t->node_mq1, t->node_bmax, t->ctl, t->theta, t->criterion);
		CUDA_CHECK(cudaGetLastError());
	}
	if (t->criterion == GPU_TREE_CRIT_MASS) {
		tree_mass_rcrit_kernel<<<grid, BUILD_THREADS, 0, s>>>(t->node_open, t->node_mq0,
								      t->node_bmax, t->ctl, t->theta);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* ---- softening moments (lengths per body; docs/PHYSICS.md "Softening") ----
 * Depth by depth from the deepest, after the moments: a leaf takes the
 * largest of its bodies' lengths and the mass-weighted mean of their
 * squares, an internal node combines its children's (the masses from
 * node_mq0 and the bodies). A massless cell keeps eps_max^2 as its mean. */
__global__ void tree_soft_kernel(int d, const float4 *__restrict__ pos, const float *__restrict__ beps,
				 const int2 *__restrict__ node_range, const int2 *__restrict__ node_kids,
				 const float4 *__restrict__ node_mq0, float2 *node_soft,
				 const struct tree_ctl *c)
{
	const int lo = c->depth_start[d], hi = c->depth_start[d + 1];
	for (int i = lo + blockIdx.x * blockDim.x + threadIdx.x; i < hi; i += gridDim.x * blockDim.x) {
		const int2 r = node_range[i], kid = node_kids[i];
		float emax = 0.0f, me2 = 0.0f, m = 0.0f;
		if (kid.y < 0) {
			for (int j = r.x; j < r.y; j++) {
				const float e = beps[j], mj = pos[j].w;
				emax = fmaxf(emax, e);
				me2 = fmaf(mj, e * e, me2);
				m += mj;
			}
		} else {
			for (int k = kid.x; k < kid.x + kid.y; k++) {
				const float2 cs = node_soft[k];
				const float mk = node_mq0[k].x;
				emax = fmaxf(emax, cs.x);
				me2 = fmaf(mk, cs.y, me2);
				m += mk;
			}
		}
		node_soft[i] = make_float2(emax, m > 0.0f ? me2 / m : emax * emax);
	}
}

int tree_stage_soft(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s)
{
	if (!t->node_soft)
		return 0;
	if (!b->eps) {
		log_error("barnes-hut (GPU): the tree was made for softening lengths per body, the "
			  "bodies have none (internal)");
		return NB_ERUNTIME;
	}
	int grid = grid_for(t, (size_t)t->node_cap, 4);
	for (int d = TREE_MAX_DEPTH - 1; d >= 0; d--) {
		tree_soft_kernel<<<grid, BUILD_THREADS, 0, s>>>(d, b->pos, b->eps, t->node_range,
								t->node_kids, t->node_mq0, t->node_soft,
								t->ctl);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}
