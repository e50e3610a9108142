/* tree.cu - GPU Barnes-Hut: the gpu_tree_* contract (gpu_internal.h) and the
 * test/benchmark entry points (tree_api.h). One force evaluation enqueues,
 * on one stream and with no host round trip:
 *   bbox -> keys + sort + gather (tree_build.cu) -> build -> moments
 *   -> walk (tree_walk.cu)
 * The bodies stay in key order afterwards (id follows), so the next step's
 * gather reads almost in order.
 *
 * Device memory: per body 60 B (keys x2, index x2, tree-order pos, vel,
 * id), per node 68 B, per walk group 8 B, nodes capped at 6n/leaf + 4096 (about 4n/leaf are
 * used on a Plummer sphere; at the cap, nodes stay leaves and the sums stay
 * exact), plus CUB's sort scratch. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_profiler_api.h>

#include "tree_internal.cuh"

/* The defaults; sim/tree.c uses the same leaf size, groups, local ratio and
 * leaf_p2p so that the two trees agree. */
#define TREE_DEFAULT_TUNING {16, 1, GPU_TREE_CRIT_SCENE, 0, 0, 0, -1.0f, 2, 0, -1, 0, 0, 0.0f, 0}
static struct gpu_tree_tuning g_tuning = TREE_DEFAULT_TUNING;
static int g_profile_on;
static struct gpu_tree_profile g_prof;

extern "C" void gpu_tree_tuning_get(struct gpu_tree_tuning *t)
{
	*t = g_tuning;
}

extern "C" void gpu_tree_tuning_set(const struct gpu_tree_tuning *t)
{
	static const struct gpu_tree_tuning defaults = TREE_DEFAULT_TUNING;
	g_tuning = t ? *t : defaults;
	if (g_tuning.leaf_size < 1 || g_tuning.leaf_size > 64)
		g_tuning.leaf_size = defaults.leaf_size;
	if (g_tuning.lanes != 1 && g_tuning.lanes != 2)
		g_tuning.lanes = defaults.lanes;
	if (g_tuning.criterion != GPU_TREE_CRIT_BH && g_tuning.criterion != GPU_TREE_CRIT_BMAX &&
	    g_tuning.criterion != GPU_TREE_CRIT_MASS && g_tuning.criterion != GPU_TREE_CRIT_SCENE)
		g_tuning.criterion = defaults.criterion;
	if (g_tuning.walk_blocks_per_sm < 0)
		g_tuning.walk_blocks_per_sm = 0;
	if (g_tuning.group_max < 0)
		g_tuning.group_max = 0;
	if (!(g_tuning.local_ratio >= 0.0f && g_tuning.local_ratio <= 1.0f)) /* -1: the criterion's */
		g_tuning.local_ratio = defaults.local_ratio;
	if (g_tuning.leaf_p2p < 0 || g_tuning.leaf_p2p > 64)
		g_tuning.leaf_p2p = defaults.leaf_p2p;
	if (g_tuning.reorder < -1 || g_tuning.reorder > TREE_REORDER_FROZEN)
		g_tuning.reorder = defaults.reorder;
	if (g_tuning.branch_bodies < 0)
		g_tuning.branch_bodies = defaults.branch_bodies;
	if (g_tuning.refit_every < 0)
		g_tuning.refit_every = defaults.refit_every;
	const float mf = g_tuning.mono_factor;
	if (!(mf == 0.0f || (mf >= 1.0f && mf < 1e3f)))
		g_tuning.mono_factor = defaults.mono_factor;
	g_tuning.graph_stages = g_tuning.graph_stages != 0;
}

/* enum tree_reorder for a tree made now with params p */
static int tree_reorder_of(const struct sim_params *p)
{
	if (g_tuning.reorder >= 0)
		return g_tuning.reorder;
	return p && p->reorder == SCENE_REORDER_MIGRATE ? TREE_REORDER_MIGRATE : TREE_REORDER_SORT;
}

extern "C" void gpu_tree_profile_enable(int on)
{
	g_profile_on = on;
}

extern "C" void gpu_tree_profiler_mark(int on)
{
	cudaDeviceSynchronize();
	if (on)
		cudaProfilerStart();
	else
		cudaProfilerStop();
}

extern "C" void gpu_tree_profile_read(struct gpu_tree_profile *p, int reset)
{
	*p = g_prof;
	if (reset) {
		size_t bytes = g_prof.bytes;
		long cap = g_prof.node_cap;
		memset(&g_prof, 0, sizeof g_prof);
		g_prof.bytes = bytes;
		g_prof.node_cap = cap;
	}
}

static size_t tree_node_cap(size_t n, int leaf)
{
	size_t cap = 6 * n / (size_t)leaf + 4096;
	size_t hard = 2 * n + 1; /* a compressed octree never needs more */
	return cap < hard ? cap : hard;
}

/* Walk groups (tree_build.cu): chunks of group nodes and of big leaves, at
 * most 2n/gsize + (number of group nodes) <= 2n/gsize + node_cap. */
static size_t tree_group_cap(size_t n, size_t node_cap, int lanes)
{
	return 2 * n / (32 * (size_t)lanes) + node_cap + 2;
}

static size_t round256(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

size_t gpu_tree_bytes_needed(size_t n, const struct sim_params *p)
{
	size_t nn = n ? n : 1;
	size_t mig = tree_reorder_of(p) != TREE_REORDER_SORT
			     ? tree_mig_bytes(nn, tree_mig_branches(nn, g_tuning.branch_bodies))
			     : 0;
	size_t cap = tree_node_cap(nn, g_tuning.leaf_size);
	size_t body = 2 * round256(nn * 8) + 2 * round256(nn * 4) + 2 * round256(nn * 16) +
		      round256(nn * 4) + round256(nn);
	size_t node = 2 * round256(cap * 8) + 3 * round256(cap * 16) + round256(cap * 4);
	const size_t gcap = tree_group_cap(nn, cap, g_tuning.lanes);
	node += round256(gcap * 8) + round256(gcap) + round256(gcap * 8); /* groups, heads, packed */
	if (p->soft_mixed)
		node += round256(cap * 8); /* node_soft */
	body += round256(nn * 4);                                          /* packed slots */
	return body + node + round256(tree_sort_tmp_bytes(nn)) + round256(sizeof(struct tree_ctl)) +
	       mig;
}

#define TREE_ALLOC(ptr, count)                                                                \
	do {                                                                                  \
		size_t b_ = round256((count) * sizeof(*(ptr)));                               \
		CUDA_GOTO(cudaMalloc((void **)&(ptr), b_), rc, fail);                         \
		t->bytes += b_;                                                               \
	} while (0)

/* What gpu_tree_create refuses before it allocates: too many bodies,
 * parameters the walk does not take, too little free device memory. */
static int tree_create_check(size_t n, const struct sim_params *p)
{
	if (n >= ((size_t)1 << 28)) {
		log_error("barnes-hut (GPU): %zu bodies is more than the GPU tree supports (2^28)", n);
		return NB_EINPUT;
	}
	if (!(p->softening > 0) || !(p->theta >= 0) || (p->multipoles != 1 && p->multipoles != 2) ||
	    (p->opening != SCENE_OPENING_BMAX && p->opening != SCENE_OPENING_COM &&
	     p->opening != SCENE_OPENING_MASS)) {
		log_error("barnes-hut (GPU): needs softening > 0, theta >= 0, multipoles 1 or 2 and "
			  "opening bmax, com or mass (got %g, %g, %d, %d)",
			  p->softening, p->theta, p->multipoles, (int)p->opening);
		return NB_EINPUT;
	}
	size_t need = gpu_tree_bytes_needed(n, p), free_b = 0, total_b = 0;
	CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
	if (need > free_b) {
		log_error("barnes-hut (GPU): the tree for %zu bodies needs %zu bytes of device memory, "
			  "%zu of %zu are free",
			  n, need, free_b, total_b);
		return NB_EINPUT;
	}
	return 0;
}

/* t's settings for n bodies (nn = n, at least 1): the tuning's and p's. */
static void tree_settings(struct gpu_tree *t, size_t n, size_t nn, const struct sim_params *p)
{
	t->n = n;
	t->leaf_size = g_tuning.leaf_size;
	t->lanes = g_tuning.lanes;
	if (g_tuning.criterion == GPU_TREE_CRIT_SCENE)
		t->criterion = p->opening == SCENE_OPENING_COM    ? GPU_TREE_CRIT_BH
			       : p->opening == SCENE_OPENING_MASS ? GPU_TREE_CRIT_MASS
								   : GPU_TREE_CRIT_BMAX;
	else
		t->criterion = g_tuning.criterion;
	t->count_interactions = g_tuning.count_interactions;
	t->slot_lo = 0;
	t->slot_hi = UINT_MAX;
	t->walk_blocks_per_sm = g_tuning.walk_blocks_per_sm;
	t->local_ratio = g_tuning.local_ratio >= 0.0f
				 ? g_tuning.local_ratio
				 : (float)sim_tree_local_ratio(t->criterion == GPU_TREE_CRIT_MASS
								 ? SCENE_OPENING_MASS
								 : SCENE_OPENING_BMAX);
	t->leaf_p2p = g_tuning.leaf_p2p;
	t->local_dist = g_tuning.local_spread != 0;
	t->refit_every = g_tuning.refit_every;
	t->mono_factor = g_tuning.mono_factor;
	t->graph_stages = g_tuning.graph_stages;
	t->multipoles = p->multipoles;
	t->theta = (float)p->theta;
	t->eps = (float)p->softening;
	t->spline = p->soft_kernel == SCENE_SOFT_SPLINE;
	t->soft = t->spline || p->soft_mixed;
	t->node_cap = (int)tree_node_cap(nn, t->leaf_size);
	t->group_cap = (int)tree_group_cap(nn, (size_t)t->node_cap, t->lanes);
	t->group_max = g_tuning.group_max > 0 ? g_tuning.group_max : 16 * 32 * t->lanes;
	if (t->group_max < 32 * t->lanes)
		t->group_max = 32 * t->lanes;
	t->reorder = tree_reorder_of(p);
}

/* t's device arrays for nn bodies (t's settings made), counted in
 * t->bytes; on failure the caller frees t. */
static int tree_alloc(struct gpu_tree *t, size_t nn, int p_mixed, int lean, int levels)
{
	int rc = 0, dev = 0;
	CUDA_GOTO(cudaGetDevice(&dev), rc, fail);
	CUDA_GOTO(cudaDeviceGetAttribute(&t->sm_count, cudaDevAttrMultiProcessorCount, dev), rc, fail);

	TREE_ALLOC(t->keys, nn);
	TREE_ALLOC(t->keys_alt, nn);
	TREE_ALLOC(t->iota, nn);
	TREE_ALLOC(t->perm, nn);
	TREE_ALLOC(t->pos, nn);
	if (!lean)
		TREE_ALLOC(t->vel, nn);
	TREE_ALLOC(t->id, nn);
	if (!lean || levels)
		TREE_ALLOC(t->lev, nn);
	TREE_ALLOC(t->node_range, (size_t)t->node_cap);
	TREE_ALLOC(t->node_kids, (size_t)t->node_cap);
	TREE_ALLOC(t->node_open, (size_t)t->node_cap);
	TREE_ALLOC(t->node_mq0, (size_t)t->node_cap);
	TREE_ALLOC(t->node_mq1, (size_t)t->node_cap);
	TREE_ALLOC(t->node_bmax, (size_t)t->node_cap);
	if (p_mixed)
		TREE_ALLOC(t->node_soft, (size_t)t->node_cap);
	TREE_ALLOC(t->groups, (size_t)t->group_cap);
	TREE_ALLOC(t->group_head, (size_t)t->group_cap);
	if (!lean || levels)
		TREE_ALLOC(t->pk_group, (size_t)t->group_cap);
	if (!lean || levels)
		TREE_ALLOC(t->pk_slot, nn);
	TREE_ALLOC(t->ctl, 1);
	t->sort_tmp_bytes = tree_sort_tmp_bytes(nn);
	CUDA_GOTO(cudaMalloc(&t->sort_tmp, round256(t->sort_tmp_bytes)), rc, fail);
	t->bytes += round256(t->sort_tmp_bytes);
	if (t->reorder != TREE_REORDER_SORT) {
		t->mig_nbr = tree_mig_branches(nn, g_tuning.branch_bodies);
		if ((rc = tree_mig_alloc(t, nn)))
			goto fail;
	}
	for (int k = 0; k < 7; k++)
		CUDA_GOTO(cudaEventCreate(&t->ev[k]), rc, fail);
	return 0;
fail:
	return rc ? rc : NB_ERUNTIME;
}

static int tree_create(size_t n, const struct sim_params *p, int lean, struct gpu_tree **out)
{
	*out = NULL;
	int rc = tree_create_check(n, p);
	if (rc)
		return rc;
	struct gpu_tree *t = (struct gpu_tree *)calloc(1, sizeof *t);
	if (!t) {
		log_error("barnes-hut (GPU): out of host memory");
		return NB_ERUNTIME;
	}
	size_t nn = n ? n : 1;
	tree_settings(t, n, nn, p);
	/* a lean tree keeps the levels' arrays for individual time steps */
	const int levels = p->timesteps == SCENE_TIMESTEPS_INDIVIDUAL;
	if ((rc = tree_alloc(t, nn, p->soft_mixed, lean, levels)) || (rc = tree_walk_prepare(t)))
		goto fail;
	g_prof.bytes = t->bytes;
	g_prof.node_cap = t->node_cap;
	*out = t;
	return 0;
fail:
	gpu_tree_free(&t);
	return rc ? rc : NB_ERUNTIME;
}

int gpu_tree_create(size_t n, const struct sim_params *p, struct gpu_tree **out)
{
	return tree_create(n, p, 0, out);
}

void gpu_tree_cover_box(struct gpu_tree *t, const float *lohi)
{
	t->cover_box = lohi != NULL;
	for (int k = 0; lohi && k < 6; k++)
		t->cover_lohi[k] = lohi[k];
}

int gpu_tree_create_lean(size_t n, const struct sim_params *p, struct gpu_tree **out)
{
	return tree_create(n, p, 1, out);
}

static int tree_profile_collect(struct gpu_tree *t)
{
	float ms[6];
	CUDA_CHECK(cudaEventSynchronize(t->ev[6]));
	for (int k = 0; k < 6; k++)
		CUDA_CHECK(cudaEventElapsedTime(&ms[k], t->ev[k], t->ev[k + 1]));
	struct tree_ctl c;
	CUDA_CHECK(cudaMemcpy(&c, t->ctl, sizeof c, cudaMemcpyDeviceToHost));
	g_prof.computes++;
	g_prof.ms_bbox += ms[0];
	g_prof.ms_sort += ms[1];
	g_prof.ms_build += ms[2];
	g_prof.ms_moments += ms[3];
	g_prof.ms_walk += ms[4] + ms[5];
	g_prof.ms_total += ms[0] + ms[1] + ms[2] + ms[3] + ms[4] + ms[5];
	g_prof.p2p += (double)c.p2p;
	g_prof.m2p += (double)c.m2p;
	g_prof.m2l += (double)c.m2l;
	long used = c.alloc_end;
	if (used > g_prof.nodes_max)
		g_prof.nodes_max = used;
	if (c.overflow)
		g_prof.overflow = 1;
	g_prof.walk_blocks = t->walk_last_blocks;
	g_prof.groups = c.group_count;
	g_prof.walk_fit_per_sm = t->walk_fit_per_sm;
	if (t->reorder == TREE_REORDER_MIGRATE) {
		struct tree_mig_ctl m;
		CUDA_CHECK(cudaMemcpy(&m, t->mig, sizeof m, cudaMemcpyDeviceToHost));
		g_prof.mig_steps++;
		g_prof.mig_rebuilds += m.rebuild != 0;
		g_prof.mig_refits += m.refit != 0;
		g_prof.mig_moved += m.rebuild ? (double)t->mig_n : (double)m.moved;
		g_prof.mig_bodies += (double)t->mig_n;
		g_prof.mig_branches = t->mig_nbr;
		g_prof.mig_max_branch = m.max_branch;
	}
	return 0;
}

void gpu_tree_set_slots(struct gpu_tree *t, size_t lo, size_t hi)
{
	t->slot_lo = (unsigned)lo;
	t->slot_hi = hi >= UINT_MAX ? UINT_MAX : (unsigned)hi;
}

int gpu_tree_compute(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, cudaStream_t stream)
{
	return gpu_tree_compute_ex(t, b, need_pot, 0, 0, NULL, stream);
}

/* ---- build and moments as CUDA graphs (tuning graph_stages) ---- */

static int tree_build_stage(struct gpu_tree *t, const float4 *pos, cudaStream_t s)
{
	(void)pos;
	return tree_stage_build(t, s);
}

/* STAGE's launches on s, through *exec: captured from s at the first call
 * (the launches depend only on the tree and pos, fixed until recaptured),
 * then replayed. 0 or NB_ERUNTIME (logged). */
static int tree_graph_run(struct gpu_tree *t, cudaGraphExec_t *exec,
			  int (*stage)(struct gpu_tree *, const float4 *, cudaStream_t),
			  const float4 *pos, cudaStream_t s)
{
	if (!*exec) {
		cudaGraph_t g = NULL;
		CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
		int rc = stage(t, pos, s);
		cudaError_t e = cudaStreamEndCapture(s, &g);
		if (rc == 0 && e == cudaSuccess)
			e = cudaGraphInstantiate(exec, g, 0);
		if (g)
			cudaGraphDestroy(g);
		if (rc || e != cudaSuccess) {
			*exec = NULL;
			log_error("barnes-hut (GPU): capturing the tree's stages as a CUDA graph "
				  "failed: %s", cudaGetErrorString(e));
			return NB_ERUNTIME;
		}
	}
	CUDA_CHECK(cudaGraphLaunch(*exec, s));
	return 0;
}

/* The build's launches (through a graph when the tuning asks). */
static int tree_build(struct gpu_tree *t, cudaStream_t s)
{
	if (!t->graph_stages || s == 0)
		return tree_stage_build(t, s);
	return tree_graph_run(t, &t->gx_build, tree_build_stage, NULL, s);
}

/* The moments' launches over pos (through a graph when the tuning asks;
 * recaptured when pos is another array). */
static int tree_moments(struct gpu_tree *t, const float4 *pos, cudaStream_t s)
{
	if (!t->graph_stages || s == 0)
		return tree_stage_moments(t, pos, s);
	if (t->gx_moments && t->gx_pos != pos) {
		CUDA_CHECK(cudaGraphExecDestroy(t->gx_moments));
		t->gx_moments = NULL;
	}
	t->gx_pos = pos;
	return tree_graph_run(t, &t->gx_moments, tree_stage_moments, pos, s);
}

int gpu_tree_compute_shared(struct gpu_tree *t, struct gpu_bodies *b, int need_pot,
			    cudaStream_t stream)
{
	const int refit = t->refit_every > 1 && t->since_build % t->refit_every != 0;
	int rebuilt = 0;
	int rc = gpu_tree_compute_ex(t, b, need_pot, 0, refit, &rebuilt, stream);
	t->since_build = rebuilt ? 1 : t->since_build + 1;
	return rc;
}

int gpu_tree_compute_ex(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, int la, int refit,
			int *rebuilt, cudaStream_t stream)
{
	int rc;
	if (rebuilt)
		*rebuilt = 0;
	if (b->n == 0)
		return 0;
	if (b->n > t->n) {
		log_error("barnes-hut (GPU): tree made for %zu bodies was given %zu", t->n, b->n);
		return NB_EINPUT;
	}
	const int prof = g_profile_on;
	/* a refit needs the last build's order (same bodies, no permutation
	 * since) and the bmax criterion (see gpu_internal.h) */
	refit = refit && t->built && t->criterion == GPU_TREE_CRIT_BMAX && b->n == t->built_n;
	if (refit) {
		if (prof)
			for (int k = 0; k < 4; k++)
				CUDA_CHECK(cudaEventRecord(t->ev[k], stream));
		if ((rc = tree_stage_refit_reset(t, stream)) || (rc = tree_moments(t, b->pos, stream)) ||
		    (rc = tree_stage_soft(t, b, stream)))
			return rc;
		goto walk;
	}
	if (rebuilt)
		*rebuilt = 1;
	if (prof)
		CUDA_CHECK(cudaEventRecord(t->ev[0], stream));
	if ((rc = tree_stage_reset(t, b->n, stream)) || (rc = tree_stage_bbox(t, b, stream)))
		return rc;
	if (prof)
		CUDA_CHECK(cudaEventRecord(t->ev[1], stream));
	if (t->reorder != TREE_REORDER_SORT && (rc = tree_stage_mig_box(t, b, stream)))
		return rc;
	rc = t->reorder == TREE_REORDER_MIGRATE ? tree_stage_migrate(t, b, stream)
						: tree_stage_sort(t, b, stream);
	if (rc)
		return rc;
	if (b->eps && (rc = gpu_soft_refresh(b, stream))) /* lengths follow the new order */
		return rc;
	if (prof)
		CUDA_CHECK(cudaEventRecord(t->ev[2], stream));
	if ((rc = tree_build(t, stream)))
		return rc;
	if (prof)
		CUDA_CHECK(cudaEventRecord(t->ev[3], stream));
	if ((rc = tree_moments(t, b->pos, stream)) || (rc = tree_stage_soft(t, b, stream)))
		return rc;
	t->built = 1;
	t->built_n = b->n;
walk:
	if (prof)
		CUDA_CHECK(cudaEventRecord(t->ev[4], stream));
	if ((rc = tree_stage_walk(t, b, need_pot, la, stream)))
		return rc;
	if (prof) {
		CUDA_CHECK(cudaEventRecord(t->ev[5], stream));
		CUDA_CHECK(cudaEventRecord(t->ev[6], stream));
		return tree_profile_collect(t);
	}
	return 0;
}

void gpu_tree_free(struct gpu_tree **tp)
{
	struct gpu_tree *t = tp ? *tp : NULL;
	if (!t)
		return;
	if (t->ctl) {
		struct tree_ctl c;
		if (cudaMemcpy(&c, t->ctl, sizeof c, cudaMemcpyDeviceToHost) == cudaSuccess) {
			if (c.overflow)
				log_warn("barnes-hut (GPU): the tree ran out of its %d nodes; larger leaves "
					 "kept the forces exact but slower",
					 t->node_cap);
			if (c.group_overflow)
				log_warn("barnes-hut (GPU): walk group list overflow (a bug): forces "
					 "were incomplete");
			if (c.stack_overflow)
				log_warn("barnes-hut (GPU): walk stack overflow (a bug): forces were "
					 "incomplete");
		}
	}
	void *bufs[] = {t->keys,      t->keys_alt,  t->iota,     t->perm,     t->pos,
			t->vel,       t->id,        t->lev,        t->node_range, t->node_kids, t->node_open,
			t->node_mq0,  t->node_mq1,  t->node_bmax, t->groups, t->group_head,
			t->pk_group,  t->pk_slot,   t->ctl,  t->sort_tmp, t->node_soft};
	for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
		if (bufs[k])
			cudaFree(bufs[k]);
	tree_mig_free(t);
	if (t->gx_build)
		cudaGraphExecDestroy(t->gx_build);
	if (t->gx_moments)
		cudaGraphExecDestroy(t->gx_moments);
	for (int k = 0; k < 7; k++)
		if (t->ev[k])
			cudaEventDestroy(t->ev[k]);
	free(t);
	*tp = NULL;
}

/* ---- one-shot accelerations (tests, benchmarks) --------------------------- */

/* The active slots' accelerations of a one-shot call (h4, hid: the
 * device's acc and slot ids) into acc by body, the contract checked: every
 * active slot (lev >= la) was walked, no other. 0 or NB_ERUNTIME. */
static int tree_unpack_active(const float4 *h4, const uint32_t *hid, size_t n,
			      const unsigned char *lev, int la, double *acc)
{
	for (size_t k = 0; k < n; k++) {
		const size_t i = hid[k];
		if ((lev[i] >= la) != !isnan(h4[k].x)) {
			log_error("barnes-hut (GPU): body %zu (level %d, active from %d) was %s", i,
				  (int)lev[i], la, lev[i] >= la ? "not walked" : "walked");
			return NB_ERUNTIME;
		}
		if (lev[i] < la)
			continue;
		acc[3 * i] = h4[k].x;
		acc[3 * i + 1] = h4[k].y;
		acc[3 * i + 2] = h4[k].z;
	}
	return 0;
}

/* The one-shot call of both entry points below: lev NULL, every body
 * (acc and pot); else only the bodies with lev[i] >= la (acc), the walk
 * packing them, and the contract checked. */
struct tree_once_soft {
	const double *eps_body; /* n lengths, or NULL: eps for all */
	int spline;
	const double *refit_pos; /* non-NULL: after the build, these positions (3n, by
				  * body) refitted into it and walked instead */
};

/* The one-shot's refit (gpu_tree_accel_refit): the bodies in the build's
 * slot order (b->id) moved to rpos, then a refit and its walk; h4, hid: n
 * staging entries. 0, NB_EINPUT (no refit possible) or NB_ERUNTIME. */
static int tree_once_refit(struct gpu_tree *t, struct gpu_bodies *b, const double *rpos,
			   float4 *h4, uint32_t *hid)
{
	const size_t n = b->n;
	int rebuilt = 0, rc;
	CUDA_CHECK(cudaMemcpy(h4, b->pos, n * sizeof(float4), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(hid, b->id, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	for (size_t k = 0; k < n; k++) {
		const double *q = rpos + 3 * (size_t)hid[k];
		h4[k] = make_float4((float)q[0], (float)q[1], (float)q[2], h4[k].w);
	}
	CUDA_CHECK(cudaMemcpy(b->pos, h4, n * sizeof(float4), cudaMemcpyHostToDevice));
	if ((rc = gpu_tree_compute_ex(t, b, 0, 0, 1, &rebuilt, 0)))
		return rc;
	if (rebuilt) {
		log_error("barnes-hut (GPU): a refit needs the bmax criterion (tuning)");
		return NB_EINPUT;
	}
	return 0;
}

/* b.eps and b.eps_id (slot = body before the sort) for the one-shot call */
static int tree_once_eps(struct gpu_bodies *b, const double *eps_body)
{
	int rc = 0;
	const size_t n = b->n;
	float *he = (float *)malloc(n * sizeof *he);
	if (!he) {
		log_error("barnes-hut (GPU): out of host memory for %zu bodies", n);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < n; i++)
		he[i] = (float)eps_body[i];
	CUDA_GOTO(cudaMalloc((void **)&b->eps, n * sizeof(float)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&b->eps_id, n * sizeof(float)), rc, end);
	CUDA_GOTO(cudaMemcpy(b->eps_id, he, n * sizeof(float), cudaMemcpyHostToDevice), rc, end);
end:
	free(he);
	return rc;
}

static int tree_accel_once(const double *pos, const double *mass, const unsigned char *lev, int la,
			   size_t n, double eps, double theta, int multipoles, double *acc,
			   double *pot, struct tree_once_soft so)
{
	int rc = 0;
	struct gpu_tree *t = NULL;
	struct gpu_bodies b;
	float4 *h4 = NULL;
	uint32_t *hid = NULL;
	memset(&b, 0, sizeof b);
	if (n == 0)
		return 0;
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT, .softening = eps, .theta = theta,
			       .multipoles = multipoles,
			       .opening = SCENE_OPENING_BMAX}; /* the scene default, as sim_tree_accel */
	p.soft_kernel = so.spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER;
	p.soft_mixed = so.eps_body != NULL;
	if ((rc = gpu_tree_create(n, &p, &t)))
		return rc;
	h4 = (float4 *)malloc(n * sizeof *h4);
	hid = (uint32_t *)malloc(n * sizeof *hid);
	if (!h4 || !hid) {
		log_error("barnes-hut (GPU): out of host memory for %zu bodies", n);
		rc = NB_ERUNTIME;
		goto end;
	}
	for (size_t i = 0; i < n; i++) {
		h4[i] = make_float4((float)pos[3 * i], (float)pos[3 * i + 1], (float)pos[3 * i + 2],
				    (float)mass[i]);
		hid[i] = (uint32_t)i;
	}
	b.n = n;
	b.spline = so.spline;
	if (so.eps_body && (rc = tree_once_eps(&b, so.eps_body)))
		goto end;
	CUDA_GOTO(cudaMalloc((void **)&b.pos, n * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&b.acc, n * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&b.id, n * sizeof(uint32_t)), rc, end);
	CUDA_GOTO(cudaMemcpy(b.pos, h4, n * sizeof(float4), cudaMemcpyHostToDevice), rc, end);
	CUDA_GOTO(cudaMemcpy(b.id, hid, n * sizeof(uint32_t), cudaMemcpyHostToDevice), rc, end);
	if (lev) {
		CUDA_GOTO(cudaMalloc((void **)&b.lev, n), rc, end);
		CUDA_GOTO(cudaMemcpy(b.lev, lev, n, cudaMemcpyHostToDevice), rc, end);
		/* inactive slots keep a NaN mark: only the active ones are copied out */
		CUDA_GOTO(cudaMemset(b.acc, 0xff, n * sizeof(float4)), rc, end);
	}
	if ((rc = gpu_tree_compute_ex(t, &b, pot != NULL, lev ? la : 0, 0, NULL, 0)))
		goto end;
	if (so.refit_pos && (rc = tree_once_refit(t, &b, so.refit_pos, h4, hid)))
		goto end;
	CUDA_GOTO(cudaMemcpy(h4, b.acc, n * sizeof(float4), cudaMemcpyDeviceToHost), rc, end);
	CUDA_GOTO(cudaMemcpy(hid, b.id, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), rc, end);
	if (!lev)
		gpu_unpack_acc(h4, hid, n, acc, pot);
	else
		rc = tree_unpack_active(h4, hid, n, lev, la, acc);
end:
	if (b.pos)
		cudaFree(b.pos);
	if (b.acc)
		cudaFree(b.acc);
	if (b.id)
		cudaFree(b.id);
	if (b.lev)
		cudaFree(b.lev);
	cudaFree(b.eps);
	cudaFree(b.eps_id);
	free(h4);
	free(hid);
	gpu_tree_free(&t);
	return rc;
}

extern "C" int gpu_tree_accel(const double *pos, const double *mass, size_t n, double eps,
			      double theta, int multipoles, double *acc, double *pot)
{
	return tree_accel_once(pos, mass, NULL, 0, n, eps, theta, multipoles, acc, pot,
			       tree_once_soft{NULL, 0, NULL});
}

extern "C" int gpu_tree_accel_soft(const double *pos, const double *mass, const double *eps_body,
				   size_t n, double eps, int spline, double theta, int multipoles,
				   double *acc, double *pot)
{
	return tree_accel_once(pos, mass, NULL, 0, n, eps, theta, multipoles, acc, pot,
			       tree_once_soft{eps_body, spline, NULL});
}

extern "C" int gpu_tree_accel_refit(const double *pos0, const double *pos1, const double *mass,
				    size_t n, double eps, double theta, int multipoles, double *acc)
{
	return tree_accel_once(pos0, mass, NULL, 0, n, eps, theta, multipoles, acc, NULL,
			       tree_once_soft{NULL, 0, pos1});
}

extern "C" int gpu_tree_accel_levels(const double *pos, const double *mass,
				     const unsigned char *lev, int la, size_t n, double eps,
				     double theta, int multipoles, double *acc)
{
	return tree_accel_once(pos, mass, lev, la, n, eps, theta, multipoles, acc, NULL,
			       tree_once_soft{NULL, 0, NULL});
}
