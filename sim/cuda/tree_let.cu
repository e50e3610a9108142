/* tree_let.cu - locally essential trees on the GPU (gpu.h, gpu_let_*): the
 * GPU twin of sim/let.c for ranks that each hold only their own bodies
 * (simulation.ranks: domains, dist/let_force.c).
 *
 * The own bodies' octree is struct gpu_tree's, built and walked as on one
 * GPU (gpu_tree_compute_ex). What another rank needs of it is selected on
 * the device level by level (Salmon & Warren 1994; Bedorf et al. 2014's
 * breadth-first LET): the frontier's cells are tested against the
 * receiver's cover boxes with the walk's own test (distance from the com
 * to the nearest point of a box against rcrit^2), with a margin of 1e-4
 * so that float rounding never accepts here what a walk group inside the
 * box would open. A cell no box opens goes as its moments only, marked
 * accepted (open.w = -1: the receiver's walk takes it whatever its group);
 * an opened cell goes with its children (the next level's frontier, in
 * order, by an exclusive scan of the child counts: the breadth-first
 * layout of sim/let_gwire.h); an opened leaf, or a leaf of at most
 * leaf_p2p bodies (which the walk takes body by body), with its bodies.
 *
 * A received tree is checked on the host (sim/let_gwire.c), its cells
 * uploaded into arrays of the walk's layout and its bodies behind the own
 * bodies in the walk's pos array (leaves' first body shifted by n), and
 * the own walk groups walk it (tree_stage_walk_src); the sums are added to
 * the own walk's. No kernel of the single-GPU walk changed: a received
 * tree is walked by the same code as the own one. */
#include <cub/cub.cuh>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree_internal.cuh"
extern "C" {
#include "../../sim/let_gwire.h"
}

#define LET_THREADS 256
#define LET_MAX_BOX 256    /* cover boxes a receiver may send */
#define LET_TOP_NODES (1 << 20) /* nodes read back to choose the cover (depth by
				     * depth: a dense core lies deep, past the first few
				     * thousand, and its cells must be split too) */
#define LET_MARGIN 1.0001f /* export: open when d^2 <= rcrit^2 times this */

struct gpu_let {
	struct sim_params p;
	struct gpu_tree *t;
	cudaStream_t s;
	cudaEvent_t ev[4];
	size_t cap, n;      /* bodies the tree holds at most; now */
	struct gpu_bodies b; /* pos: pos_cap slots (the own, then a received tree's) */
	size_t pos_cap;
	float4 *tacc;       /* a received tree's sums (cap) */
	uint8_t *d_act;     /* individual time steps: each body active or not (cap);
			     * b.lev points here for the evaluation, tree order after
			     * the build */
	size_t act_cap;
	int act;            /* this evaluation's bodies are b.lev's active ones */
	float4 *h_pos, *h_acc; /* host staging (cap) */
	uint32_t *h_id;
	/* export: frontier, counts and scans (cnt_cap each), output cells */
	int *front, *front_next, *cc, *cb, *sc, *sb;
	size_t front_cap, cnt_cap;
	void *scan_tmp;
	size_t scan_tmp_bytes;
	int2 *o_kids;
	float4 *o_open, *o_mq0, *o_mq1, *o_body;
	size_t o_ccap, o_bcap;
	float *d_box;        /* LET_MAX_BOX * 6 */
	unsigned *d_boxu;    /* cover: LET_MAX_BOX * 6 order-preserving */
	int2 *d_cov;         /* cover: LET_MAX_BOX body ranges */
	/* a received tree's cells on the device */
	int2 *r_kids;
	float4 *r_open, *r_mq0, *r_mq1;
	size_t r_cap;
	size_t bytes;       /* device bytes here (the tree's apart) */
	double own_ms, remote_ms;
};

/* ---- device memory that grows ---------------------------------------------- */
/* *p holds at least need elements of elem bytes (its first keep kept);
 * grows by a quarter more than asked (slack), or to need exactly (the
 * per-body buffers, which let_reserve sizes with a margin of its own). 0
 * or NB_ERUNTIME. */
static int let_grow(void **p, size_t *cap, size_t need, size_t elem, size_t keep, size_t *bytes,
		    int slack)
{
	if (need <= *cap && *p)
		return 0;
	size_t want = slack ? need + need / 4 + 64 : need;
	void *q = NULL;
	CUDA_CHECK(cudaMalloc(&q, want * elem));
	if (keep && *p && cudaMemcpy(q, *p, keep * elem, cudaMemcpyDeviceToDevice) != cudaSuccess) {
		cudaFree(q);
		log_error("CUDA: copying %zu bytes on the device failed", keep * elem);
		return NB_ERUNTIME;
	}
	if (*p) {
		cudaFree(*p);
		*bytes -= *cap * elem;
	}
	*p = q;
	*cap = want;
	*bytes += want * elem;
	return 0;
}

#define LET_GROW(ptr, cap, need, keep, g) \
	let_grow((void **)&(ptr), &(cap), (need), sizeof *(ptr), (keep), &(g)->bytes, 1)
#define LET_FIT(ptr, cap, need, g) \
	let_grow((void **)&(ptr), &(cap), (need), sizeof *(ptr), 0, &(g)->bytes, 0)

/* ---- kernels ------------------------------------------------------------------ */
__global__ void let_iota_kernel(uint32_t *id, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		id[i] = (uint32_t)i;
}

/* The bounds of the bodies of each cover range (sorted, partitioning
 * [0, n)): chunks of 64 consecutive bodies a thread, one atomic per range
 * a chunk touches. */
__global__ void let_box_kernel(const float4 *__restrict__ pos, size_t n, const int2 *__restrict__ cov,
			       int ncov, unsigned *boxu)
{
	const size_t CH = 64;
	for (size_t c0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * CH; c0 < n;
	     c0 += (size_t)gridDim.x * blockDim.x * CH) {
		const size_t e = c0 + CH < n ? c0 + CH : n;
		int k = 0, top = ncov - 1; /* the last range that starts at or before c0 */
		while (k < top) {
			const int mid = (k + top + 1) / 2;
			if ((size_t)cov[mid].x <= c0)
				k = mid;
			else
				top = mid - 1;
		}
		float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
		for (size_t i = c0; i <= e; i++) {
			if (i == e || (k + 1 < ncov && i >= (size_t)cov[k].y)) {
				if (lo[0] <= hi[0])
					for (int a = 0; a < 3; a++) {
						atomicMin(&boxu[6 * k + a], tree_f2u(lo[a]));
						atomicMax(&boxu[6 * k + 3 + a], tree_f2u(hi[a]));
					}
				if (i == e)
					break;
				k++;
				for (int a = 0; a < 3; a++)
					lo[a] = INFINITY, hi[a] = -INFINITY;
			}
			const float4 p = pos[i];
			lo[0] = fminf(lo[0], p.x), hi[0] = fmaxf(hi[0], p.x);
			lo[1] = fminf(lo[1], p.y), hi[1] = fmaxf(hi[1], p.y);
			lo[2] = fminf(lo[2], p.z), hi[2] = fmaxf(hi[2], p.z);
		}
	}
}

/* Export, one level: what each frontier cell sends (children to the next
 * level, bodies); the slot past the last gets 0 so the scans' last
 * element is the total. */
__global__ void let_classify_kernel(const int *__restrict__ front, int nf,
				    const int2 *__restrict__ kids, const float4 *__restrict__ open,
				    const float *__restrict__ box, int nbox, int small, int *cc, int *cb)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i > nf)
		return;
	if (i == nf) {
		cc[i] = cb[i] = 0;
		return;
	}
	const int c = front[i];
	const int2 k = kids[c];
	const float4 op = open[c];
	bool opened = !(op.w < INFINITY);
	for (int j = 0; j < nbox && !opened; j++) {
		const float *b = box + 6 * j;
		/* the walk's test (tree_walk.cu) against the box as a group */
		const float cx = 0.5f * (b[0] + b[3]), cy = 0.5f * (b[1] + b[4]),
			    cz = 0.5f * (b[2] + b[5]);
		const float hx = 0.5f * (b[3] - b[0]), hy = 0.5f * (b[4] - b[1]),
			    hz = 0.5f * (b[5] - b[2]);
		const float dx = fmaxf(fabsf(op.x - cx) - hx, 0.0f);
		const float dy = fmaxf(fabsf(op.y - cy) - hy, 0.0f);
		const float dz = fmaxf(fabsf(op.z - cz) - hz, 0.0f);
		const float d2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
		opened = !(d2 > op.w * LET_MARGIN + 1e-30f);
	}
	if (k.y > 0) {
		cc[i] = opened ? k.y : 0;
		cb[i] = 0;
	} else {
		const int cnt = -k.y;
		cc[i] = 0;
		cb[i] = opened || cnt <= small ? cnt : 0;
	}
}

__global__ void let_emit_kernel(const int *__restrict__ front, int nf, const int2 *__restrict__ kids,
				const float4 *__restrict__ open, const float4 *__restrict__ mq0,
				const float4 *__restrict__ mq1, const float4 *__restrict__ pos, int mp,
				const int *__restrict__ cc, const int *__restrict__ sc,
				const int *__restrict__ cb, const int *__restrict__ sb, int base,
				int next_base, int body_base, int2 *ok, float4 *oo, float4 *om0,
				float4 *om1, float4 *obody, int *next_front)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nf)
		return;
	const int c = front[i], o = base + i;
	const int2 k = kids[c];
	float4 op = open[c];
	if (cc[i] > 0) {
		ok[o] = make_int2(next_base + sc[i], k.y);
		for (int j = 0; j < k.y; j++)
			next_front[sc[i] + j] = k.x + j;
	} else if (cb[i] > 0) {
		const int at = body_base + sb[i];
		ok[o] = make_int2(at, -cb[i]);
		for (int j = 0; j < cb[i]; j++)
			obody[at + j] = pos[k.x + j];
	} else {
		ok[o] = make_int2(0, 0);
		op.w = -1.0f; /* moments only: accepted by every walk group */
	}
	oo[o] = op;
	om0[o] = mq0[c];
	om1[o] = mp >= 2 ? mq1[c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

/* A received tree's leaves: their bodies sit behind the n own ones. */
__global__ void let_shift_kernel(int2 *kids, int nc, int n)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nc && kids[i].y < 0)
		kids[i].x += n;
}

/* acc += a received tree's sums; the walk wrote phi + m / eps (the self
 * term it takes out of the own walk), which this walk never added. */
__global__ void let_add_kernel(float4 *acc, const float4 *__restrict__ tacc,
			       const float4 *__restrict__ pos, size_t n, float eps2)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		const float4 a = tacc[i], s = acc[i];
		const float w = a.w - pos[i].w * rsqrtf(eps2);
		acc[i] = make_float4(s.x + a.x, s.y + a.y, s.z + a.z, s.w + w);
	}
}

static unsigned let_grid(size_t n)
{
	size_t g = (n + LET_THREADS - 1) / LET_THREADS;
	return (unsigned)(g < 1 ? 1 : g > 65535 * 8 ? 65535 * 8 : g);
}

/* ---- create / free --------------------------------------------------------- */
int gpu_let_create(const struct sim_params *p, struct gpu_let **out)
{
	*out = NULL;
	if (p->soft_mixed || p->soft_kernel == SCENE_SOFT_SPLINE) {
		log_error("barnes-hut (GPU) over domains: one Plummer softening length only (no "
			  "spline kernel, no lengths per body)");
		return NB_EINPUT;
	}
	struct gpu_let *g = (struct gpu_let *)calloc(1, sizeof *g);
	if (!g) {
		log_error("out of host memory");
		return NB_ERUNTIME;
	}
	g->p = *p;
	/* the bodies change from one evaluation to the next (migration):
	 * every build sorts them afresh, nothing is kept of the last order */
	g->p.reorder = SCENE_REORDER_SORT;
	int rc = 0;
	CUDA_GOTO(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking), rc, fail);
	for (int k = 0; k < 4; k++)
		CUDA_GOTO(cudaEventCreate(&g->ev[k]), rc, fail);
	CUDA_GOTO(cudaMalloc(&g->d_box, LET_MAX_BOX * 6 * sizeof(float)), rc, fail);
	CUDA_GOTO(cudaMalloc(&g->d_boxu, LET_MAX_BOX * 6 * sizeof(unsigned)), rc, fail);
	CUDA_GOTO(cudaMalloc(&g->d_cov, LET_MAX_BOX * sizeof(int2)), rc, fail);
	g->bytes = LET_MAX_BOX * (6 * sizeof(float) + 6 * sizeof(unsigned) + sizeof(int2));
	*out = g;
	return 0;
fail:
	gpu_let_free(&g);
	return rc ? rc : NB_ERUNTIME;
}

/* NB_DIST_DEBUG: g's buffers at their largest, MB (where the device bytes
 * a rank holds beyond its owned bodies go), on stderr. */
static void let_report_buffers(const struct gpu_let *g)
{
	const double M = 1e-6;
	fprintf(stderr,
		"gpu_let: %zu bodies (room %zu): tree %.1f MB; positions %.1f, accelerations/ids/sums "
		"%.1f, active %.1f; export cells %.1f, bodies %.1f, frontier %.1f, counts/scans %.1f, "
		"scan scratch %.1f; received cells %.1f; in all %.1f MB\n",
		g->n, g->cap, M * (double)(g->t ? g->t->bytes : 0), M * 16.0 * (double)g->pos_cap,
		M * 36.0 * (double)g->cap, M * (double)g->act_cap, M * 56.0 * (double)g->o_ccap,
		M * 16.0 * (double)g->o_bcap, M * 8.0 * (double)g->front_cap,
		M * 16.0 * (double)g->cnt_cap, M * (double)g->scan_tmp_bytes, M * 56.0 * (double)g->r_cap,
		M * (double)gpu_let_bytes(g));
}

void gpu_let_free(struct gpu_let **gp)
{
	struct gpu_let *g = gp ? *gp : NULL;
	if (!g)
		return;
	if (getenv("NB_DIST_DEBUG"))
		let_report_buffers(g);
	gpu_tree_free(&g->t);
	void *dev[] = {g->b.pos, g->b.acc, g->b.id, g->tacc, g->d_act, g->front, g->front_next, g->cc,
		       g->cb,    g->sc,    g->sb,   g->scan_tmp, g->o_kids, g->o_open, g->o_mq0,
		       g->o_mq1, g->o_body, g->d_box, g->d_boxu, g->d_cov, g->r_kids, g->r_open,
		       g->r_mq0, g->r_mq1};
	for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
		if (dev[k])
			cudaFree(dev[k]);
	free(g->h_pos);
	free(g->h_acc);
	free(g->h_id);
	for (int k = 0; k < 4; k++)
		if (g->ev[k])
			cudaEventDestroy(g->ev[k]);
	if (g->s)
		cudaStreamDestroy(g->s);
	free(g);
	*gp = NULL;
}

size_t gpu_let_bytes(const struct gpu_let *g)
{
	return g ? g->bytes + (g->t ? g->t->bytes : 0) : 0;
}

void gpu_let_times(const struct gpu_let *g, double *own_ms, double *remote_ms)
{
	*own_ms = g ? g->own_ms : 0;
	*remote_ms = g ? g->remote_ms : 0;
}

/* ---- build ------------------------------------------------------------------ */
/* The tree and the per-body buffers for at least n bodies. */
static int let_reserve(struct gpu_let *g, size_t n)
{
	if (g->t && n <= g->cap)
		return 0;
	const size_t cap = n + n / 8 + 1024;
	gpu_tree_free(&g->t);
	int rc = gpu_tree_create_lean(cap, &g->p, &g->t);
	if (rc)
		return rc;
	size_t acap = g->cap, icap = g->cap, tcap = g->cap;
	/* cap has the margin already: the buffers take it exactly (a quarter
	 * more on top was 15 bytes an owned body for nothing) */
	if ((rc = LET_FIT(g->b.acc, acap, cap, g)) || (rc = LET_FIT(g->b.id, icap, cap, g)) ||
	    (rc = LET_FIT(g->tacc, tcap, cap, g)) || (rc = LET_FIT(g->b.pos, g->pos_cap, cap, g)))
		return rc;
	free(g->h_pos);
	free(g->h_acc);
	free(g->h_id);
	g->h_pos = (float4 *)malloc(cap * sizeof(float4));
	g->h_acc = (float4 *)malloc(cap * sizeof(float4));
	g->h_id = (uint32_t *)malloc(cap * sizeof(uint32_t));
	if (!g->h_pos || !g->h_acc || !g->h_id) {
		log_error("out of host memory for %zu bodies' staging", cap);
		return NB_ERUNTIME;
	}
	g->cap = cap;
	return 0;
}

int gpu_let_build(struct gpu_let *g, const double *pos, const double *mass, size_t n,
		  const unsigned char *active, const double *cube)
{
	if (n >= (size_t)1 << 31) {
		log_error("barnes-hut (GPU) over domains: %zu bodies on one rank (at most 2^31)", n);
		return NB_EINPUT;
	}
	int rc = let_reserve(g, n ? n : 1);
	if (rc)
		return rc;
	g->n = n;
	g->own_ms = 0;
	g->act = active != NULL;
	if (!n)
		return 0;
	if (active) { /* level 1 active, 0 not: the walks take la = 1 */
		if ((rc = LET_GROW(g->d_act, g->act_cap, n, 0, g)))
			return rc;
		CUDA_CHECK(cudaMemcpyAsync(g->d_act, active, n, cudaMemcpyHostToDevice, g->s));
	}
	float4 *h = g->h_pos;
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++)
		h[i] = make_float4((float)pos[3 * i], (float)pos[3 * i + 1], (float)pos[3 * i + 2],
				   (float)mass[i]);
	CUDA_CHECK(cudaMemcpyAsync(g->b.pos, h, n * sizeof(float4), cudaMemcpyHostToDevice, g->s));
	let_iota_kernel<<<let_grid(n), LET_THREADS, 0, g->s>>>(g->b.id, n);
	CUDA_CHECK(cudaGetLastError());
	float lohi[6];
	for (int k = 0; cube && k < 6; k++) /* outward: the box holds every body */
		lohi[k] = k < 3 ? nextafterf((float)cube[k], -INFINITY)
			       : nextafterf((float)cube[k], INFINITY);
	gpu_tree_cover_box(g->t, cube ? lohi : NULL);
	g->b.n = n;
	g->b.vel = NULL;
	g->b.lev = active ? g->d_act : NULL; /* the build puts it in tree order */
	CUDA_CHECK(cudaEventRecord(g->ev[0], g->s));
	if ((rc = gpu_tree_compute_ex(g->t, &g->b, 1, active ? 1 : 0, 0, NULL, g->s)))
		return rc;
	CUDA_CHECK(cudaEventRecord(g->ev[1], g->s));
	CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
	float ms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]));
	g->own_ms = ms;
	return 0;
}

/* ---- cover ------------------------------------------------------------------ */
/* The cover's cells: from the root, split the widest cell (the largest
 * bmax: a cell that holds a few far bodies beside a dense clump boxes
 * empty space, where the other ranks' bodies may lie, which would then
 * all be opened for this rank) while the boxes stay within max; only
 * cells of more than group_max bodies, so that every walk group (within a
 * node of at most group_max bodies, tree_build.cu) lies in one box. hk,
 * hr, hb: the first nn nodes' kids, ranges and bmax. Their body ranges
 * into cov, in body order; returns how many. */
static int let_cover_cut(const int2 *hk, const int2 *hr, const float *hb, int nn, int group_max,
			 int max, int2 *cov)
{
	int list[LET_MAX_BOX], nl = 1;
	list[0] = 0;
	for (;;) {
		int best = -1;
		float widest = -1.0f;
		for (int k = 0; k < nl; k++) {
			const int2 kd = hk[list[k]], r = hr[list[k]];
			if (kd.y > 0 && kd.x + kd.y <= nn && r.y - r.x > group_max &&
			    nl - 1 + kd.y <= max && hb[list[k]] > widest)
				best = k, widest = hb[list[k]];
		}
		if (best < 0)
			break;
		const int2 kd = hk[list[best]];
		list[best] = list[--nl];
		for (int j = 0; j < kd.y; j++)
			list[nl++] = kd.x + j;
	}
	for (int k = 0; k < nl; k++)
		cov[k] = hr[list[k]];
	for (int a = 1; a < nl; a++)
		for (int b = a; b > 0 && cov[b].x < cov[b - 1].x; b--) {
			int2 tmp = cov[b];
			cov[b] = cov[b - 1];
			cov[b - 1] = tmp;
		}
	return nl;
}

/* The bounds of the bodies of each of the nl ranges cov into boxes. */
static int let_cover_boxes(struct gpu_let *g, const int2 *cov, int nl, double *boxes)
{
	unsigned u[LET_MAX_BOX * 6];
	for (int k = 0; k < nl; k++)
		for (int a = 0; a < 3; a++)
			u[6 * k + a] = 0xffffffffu, u[6 * k + 3 + a] = 0u;
	CUDA_CHECK(cudaMemcpy(g->d_cov, cov, (size_t)nl * sizeof(int2), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->d_boxu, u, (size_t)nl * 6 * sizeof(unsigned), cudaMemcpyHostToDevice));
	const size_t chunks = (g->n + 63) / 64;
	let_box_kernel<<<let_grid(chunks), LET_THREADS, 0, g->s>>>(g->b.pos, g->n, g->d_cov, nl,
								   g->d_boxu);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaStreamSynchronize(g->s));
	CUDA_CHECK(cudaMemcpy(u, g->d_boxu, (size_t)nl * 6 * sizeof(unsigned), cudaMemcpyDeviceToHost));
	for (int k = 0; k < 6 * nl; k++) {
		const unsigned f = (u[k] & 0x80000000u) ? (u[k] & 0x7fffffffu) : ~u[k];
		float v;
		memcpy(&v, &f, sizeof v);
		boxes[k] = v;
	}
	return 0;
}

int gpu_let_cover(struct gpu_let *g, int max, double *boxes, int *nbox)
{
	*nbox = 0;
	if (!g->n)
		return 0;
	max = max < 1 ? 1 : max > LET_MAX_BOX ? LET_MAX_BOX : max;
	struct tree_ctl c;
	CUDA_CHECK(cudaMemcpy(&c, g->t->ctl, sizeof c, cudaMemcpyDeviceToHost));
	int nn = c.alloc_end < LET_TOP_NODES ? c.alloc_end : LET_TOP_NODES;
	nn = nn < 1 ? 1 : nn;
	int2 *hk = (int2 *)malloc((size_t)nn * sizeof(int2));
	int2 *hr = (int2 *)malloc((size_t)nn * sizeof(int2));
	float *hb = (float *)malloc((size_t)nn * sizeof(float));
	int2 cov[LET_MAX_BOX];
	int rc = 0, nl = 0;
	if (!hk || !hr || !hb) {
		log_error("out of host memory");
		rc = NB_ERUNTIME;
		goto end;
	}
	CUDA_GOTO(cudaMemcpy(hk, g->t->node_kids, (size_t)nn * sizeof(int2), cudaMemcpyDeviceToHost),
		  rc, end);
	CUDA_GOTO(cudaMemcpy(hr, g->t->node_range, (size_t)nn * sizeof(int2), cudaMemcpyDeviceToHost),
		  rc, end);
	CUDA_GOTO(cudaMemcpy(hb, g->t->node_bmax, (size_t)nn * sizeof(float), cudaMemcpyDeviceToHost),
		  rc, end);
	nl = let_cover_cut(hk, hr, hb, nn, g->t->group_max, max, cov);
	if (!(rc = let_cover_boxes(g, cov, nl, boxes)))
		*nbox = nl;
end:
	free(hk);
	free(hr);
	free(hb);
	return rc;
}

/* ---- export ------------------------------------------------------------------ */
/* The scans' scratch for need elements. */
static int let_scan_room(struct gpu_let *g, size_t need)
{
	size_t tmp = 0;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, tmp, g->cc, g->sc, (int)need, g->s));
	if (tmp <= g->scan_tmp_bytes)
		return 0;
	size_t cap = g->scan_tmp_bytes;
	char *p = (char *)g->scan_tmp;
	int rc = let_grow((void **)&p, &cap, tmp, 1, 0, &g->bytes, 1);
	g->scan_tmp = p;
	g->scan_tmp_bytes = cap;
	return rc;
}

/* One level of the export: the frontier's nf cells (g->front) classified
 * against the receiver's nbox boxes (g->d_box) and written as cells
 * *ncell.. of the output, their bodies at *nbody..; *nf becomes the next
 * level's frontier (g->front). */
static int let_export_level(struct gpu_let *g, int nbox, int *nf, size_t *ncell, size_t *nbody)
{
	struct gpu_tree *t = g->t;
	const size_t need = (size_t)*nf + 1;
	size_t c1 = g->cnt_cap, c2 = g->cnt_cap, c3 = g->cnt_cap, c4 = g->cnt_cap;
	int rc;
	if ((rc = LET_GROW(g->cc, c1, need, 0, g)) || (rc = LET_GROW(g->cb, c2, need, 0, g)) ||
	    (rc = LET_GROW(g->sc, c3, need, 0, g)) || (rc = LET_GROW(g->sb, c4, need, 0, g)))
		return rc;
	g->cnt_cap = c1;
	let_classify_kernel<<<let_grid(need), LET_THREADS, 0, g->s>>>(
		g->front, *nf, t->node_kids, t->node_open, g->d_box, nbox, t->leaf_p2p, g->cc, g->cb);
	CUDA_CHECK(cudaGetLastError());
	if ((rc = let_scan_room(g, need)))
		return rc;
	size_t tmp = g->scan_tmp_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tmp, g->cc, g->sc, (int)need, g->s));
	tmp = g->scan_tmp_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tmp, g->cb, g->sb, (int)need, g->s));
	int tot[2];
	CUDA_CHECK(cudaMemcpyAsync(&tot[0], g->sc + *nf, sizeof(int), cudaMemcpyDeviceToHost, g->s));
	CUDA_CHECK(cudaMemcpyAsync(&tot[1], g->sb + *nf, sizeof(int), cudaMemcpyDeviceToHost, g->s));
	CUDA_CHECK(cudaStreamSynchronize(g->s));
	const size_t nc = *ncell, nb = *nbody;
	if (tot[0] < 0 || tot[1] < 0 || nc + (size_t)*nf + (size_t)tot[0] >= SIM_GLET_MAX_COUNT ||
	    nb + (size_t)tot[1] >= SIM_GLET_MAX_COUNT) {
		log_error("barnes-hut (GPU) over domains: an export past 2^31 cells or bodies");
		return NB_ERUNTIME;
	}
	size_t k1 = g->o_ccap, k2 = g->o_ccap, k3 = g->o_ccap, k4 = g->o_ccap;
	size_t fa = g->front_cap, fb = g->front_cap;
	if ((rc = LET_GROW(g->o_kids, k1, nc + *nf, nc, g)) ||
	    (rc = LET_GROW(g->o_open, k2, nc + *nf, nc, g)) ||
	    (rc = LET_GROW(g->o_mq0, k3, nc + *nf, nc, g)) ||
	    (rc = LET_GROW(g->o_mq1, k4, nc + *nf, nc, g)) ||
	    (rc = LET_GROW(g->o_body, g->o_bcap, nb + (size_t)tot[1], nb, g)) ||
	    (rc = LET_GROW(g->front_next, fb, (size_t)tot[0] + 1, 0, g)) ||
	    (rc = LET_GROW(g->front, fa, (size_t)tot[0] + 1, (size_t)*nf, g)))
		return rc;
	g->o_ccap = k1;
	g->front_cap = fa < fb ? fa : fb;
	let_emit_kernel<<<let_grid((size_t)*nf), LET_THREADS, 0, g->s>>>(
		g->front, *nf, t->node_kids, t->node_open, t->node_mq0, t->node_mq1, g->b.pos,
		t->multipoles, g->cc, g->sc, g->cb, g->sb, (int)nc, (int)(nc + *nf), (int)nb, g->o_kids,
		g->o_open, g->o_mq0, g->o_mq1, g->o_body, g->front_next);
	CUDA_CHECK(cudaGetLastError());
	*ncell = nc + (size_t)*nf;
	*nbody = nb + (size_t)tot[1];
	int *sw = g->front;
	g->front = g->front_next;
	g->front_next = sw;
	*nf = tot[0];
	return 0;
}

/* The export's cells and bodies from the device into out (the buffer of
 * sim/let_gwire.h, header written). */
static int let_export_pack(struct gpu_let *g, size_t ncell, size_t nbody, char *out)
{
	struct gpu_tree *t = g->t;
	struct sim_glet_header h;
	sim_glet_header_make(&h, ncell, nbody, t->multipoles, t->criterion, t->leaf_p2p, t->theta,
			     t->eps);
	memcpy(out, &h, sizeof h);
	if (!ncell)
		return 0;
	char *p = out + sizeof h;
	CUDA_CHECK(cudaMemcpyAsync(p, g->o_kids, ncell * sizeof(int2), cudaMemcpyDeviceToHost, g->s));
	p += ncell * sizeof(int2);
	const float4 *arr[3] = {g->o_open, g->o_mq0, g->o_mq1};
	for (int a = 0; a < 3; a++, p += ncell * sizeof(float4))
		CUDA_CHECK(cudaMemcpyAsync(p, arr[a], ncell * sizeof(float4), cudaMemcpyDeviceToHost,
					   g->s));
	if (nbody)
		CUDA_CHECK(cudaMemcpyAsync(p, g->o_body, nbody * sizeof(float4), cudaMemcpyDeviceToHost,
					   g->s));
	CUDA_CHECK(cudaStreamSynchronize(g->s));
	return 0;
}

int gpu_let_export(struct gpu_let *g, const double *boxes, int nbox, void **buf, size_t *nbytes)
{
	*buf = NULL;
	*nbytes = 0;
	if (nbox > LET_MAX_BOX) {
		log_error("barnes-hut (GPU) over domains: a cover of %d boxes (at most %d)", nbox,
			  LET_MAX_BOX);
		return NB_EINPUT;
	}
	int rc = 0, nf = g->n && nbox > 0 ? 1 : 0;
	size_t ncell = 0, nbody = 0;
	if (nf) {
		float fb[LET_MAX_BOX * 6];
		for (int k = 0; k < 6 * nbox; k++)
			fb[k] = (float)boxes[k];
		CUDA_CHECK(cudaMemcpyAsync(g->d_box, fb, (size_t)nbox * 6 * sizeof(float),
					   cudaMemcpyHostToDevice, g->s));
		size_t fc = g->front_cap, fn = g->front_cap;
		if ((rc = LET_GROW(g->front, fc, 1, 0, g)) || (rc = LET_GROW(g->front_next, fn, 1, 0, g)))
			return rc;
		g->front_cap = fc < fn ? fc : fn;
		const int root = 0;
		CUDA_CHECK(cudaMemcpyAsync(g->front, &root, sizeof root, cudaMemcpyHostToDevice, g->s));
	}
	while (nf > 0)
		if ((rc = let_export_level(g, nbox, &nf, &ncell, &nbody)))
			return rc;
	const size_t bytes = sim_glet_bytes(ncell, nbody);
	char *out = (char *)malloc(bytes);
	if (!out) {
		log_error("out of host memory for a locally essential tree of %zu bytes", bytes);
		return NB_ERUNTIME;
	}
	if ((rc = let_export_pack(g, ncell, nbody, out))) {
		free(out);
		return rc;
	}
	*buf = out;
	*nbytes = bytes;
	return 0;
}

/* ---- the walk of the received trees ----------------------------------------- */
static int let_walk_one(struct gpu_let *g, const struct sim_glet_view *v)
{
	struct gpu_tree *t = g->t;
	const size_t nc = (size_t)v->h->ncells, nb = (size_t)v->h->nbodies, n = g->n;
	size_t c1 = g->r_cap, c2 = g->r_cap, c3 = g->r_cap, c4 = g->r_cap;
	int rc;
	if (n + nb >= (size_t)1 << 31) { /* the walk indexes its bodies with int */
		log_error("barnes-hut (GPU) over domains: %zu own and %zu received bodies (at most "
			  "2^31 together)", n, nb);
		return NB_EINPUT;
	}
	if ((rc = LET_GROW(g->r_kids, c1, nc, 0, g)) || (rc = LET_GROW(g->r_open, c2, nc, 0, g)) ||
	    (rc = LET_GROW(g->r_mq0, c3, nc, 0, g)) || (rc = LET_GROW(g->r_mq1, c4, nc, 0, g)) ||
	    (rc = LET_GROW(g->b.pos, g->pos_cap, n + nb, n, g)))
		return rc;
	g->r_cap = c1;
	CUDA_CHECK(cudaMemcpyAsync(g->r_kids, v->kids, nc * sizeof(int2), cudaMemcpyHostToDevice, g->s));
	CUDA_CHECK(cudaMemcpyAsync(g->r_open, v->open, nc * sizeof(float4), cudaMemcpyHostToDevice, g->s));
	CUDA_CHECK(cudaMemcpyAsync(g->r_mq0, v->mq0, nc * sizeof(float4), cudaMemcpyHostToDevice, g->s));
	CUDA_CHECK(cudaMemcpyAsync(g->r_mq1, v->mq1, nc * sizeof(float4), cudaMemcpyHostToDevice, g->s));
	if (nb)
		CUDA_CHECK(cudaMemcpyAsync(g->b.pos + n, v->body, nb * sizeof(float4),
					   cudaMemcpyHostToDevice, g->s));
	let_shift_kernel<<<let_grid(nc), LET_THREADS, 0, g->s>>>(g->r_kids, (int)nc, (int)n);
	CUDA_CHECK(cudaGetLastError());
	const struct tree_src src = {g->r_kids, g->r_open, g->r_mq0, g->r_mq1};
	if ((rc = tree_stage_walk_src(t, g->b.pos, n, g->act ? g->b.lev : NULL, 1, &src, g->tacc, 1,
				      g->s)))
		return rc;
	let_add_kernel<<<let_grid(n), LET_THREADS, 0, g->s>>>(g->b.acc, g->tacc, g->b.pos, n,
							       t->eps * t->eps);
	CUDA_CHECK(cudaGetLastError());
	/* the host's buffer must outlive the copies */
	CUDA_CHECK(cudaStreamSynchronize(g->s));
	return 0;
}

int gpu_let_accel(struct gpu_let *g, const void *const *bufs, const size_t *nbytes, int nbuf,
		  const unsigned char *active, double *acc, double *pot)
{
	struct gpu_tree *t = g->t;
	const size_t n = g->n;
	int rc = 0;
	g->remote_ms = 0;
	if ((active != NULL) != g->act) {
		log_error("barnes-hut (GPU) over domains: the walk's active bodies are not the "
			  "build's (internal)");
		return NB_ERUNTIME;
	}
	if (!n)
		return 0;
	CUDA_CHECK(cudaEventRecord(g->ev[2], g->s));
	for (int k = 0; k < nbuf && !rc; k++) {
		if (!nbytes[k])
			continue;
		struct sim_glet_view v;
		char what[64];
		snprintf(what, sizeof what, "received locally essential tree %d", k);
		if ((rc = sim_glet_check(bufs[k], nbytes[k], what, &v)))
			break;
		if (!sim_glet_same_walk(v.h, t->multipoles, t->criterion, t->leaf_p2p, t->theta, t->eps,
				    what)) {
			rc = NB_EINPUT;
			break;
		}
		if (v.h->ncells)
			rc = let_walk_one(g, &v);
	}
	if (rc)
		return rc;
	CUDA_CHECK(cudaEventRecord(g->ev[3], g->s));
	CUDA_CHECK(cudaMemcpyAsync(g->h_acc, g->b.acc, n * sizeof(float4), cudaMemcpyDeviceToHost, g->s));
	CUDA_CHECK(cudaMemcpyAsync(g->h_id, g->b.id, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, g->s));
	CUDA_CHECK(cudaStreamSynchronize(g->s));
	float ms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->ev[2], g->ev[3]));
	g->remote_ms = ms;
	int bad = 0;
	const float4 *a = g->h_acc;
	const uint32_t *id = g->h_id;
#pragma omp parallel for schedule(static) reduction(| : bad)
	for (size_t s = 0; s < n; s++) {
		const size_t i = id[s];
		if (i >= n) {
			bad = 1;
			continue;
		}
		if (active && !active[i])
			continue; /* not walked: its slot holds no sum */
		acc[3 * i] = a[s].x, acc[3 * i + 1] = a[s].y, acc[3 * i + 2] = a[s].z;
		if (pot)
			pot[i] = a[s].w;
	}
	if (bad) {
		log_error("barnes-hut (GPU) over domains: a slot holds a body id past %zu (a bug)", n);
		return NB_ERUNTIME;
	}
	return 0;
}
