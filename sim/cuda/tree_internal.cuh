/* tree_internal.cuh - what sim/cuda/tree.cu, tree_build.cu and tree_walk.cu
 * share: the device octree's layout and the launchers of each stage.
 *
 * The tree is a compressed octree over 63-bit Morton keys (21 levels):
 * every node is the smallest octree cell that holds its bodies, so every
 * internal node has 2..8 children (no single-child chains) and there are at
 * most 2n - 1 nodes. Children of a node are contiguous; nodes are stored
 * depth by depth (breadth first), depth d in [depth_start[d],
 * depth_start[d+1]). Bodies are sorted by key, so every node owns the
 * contiguous body range [begin, end).
 *
 * Node arrays are structures of arrays so the walk loads only what each test
 * needs: the opening test reads node_open (16 B) and node_kids (8 B); an
 * accepted cell's interaction reads node_open and node_mq0/1. */
#ifndef NB_TREE_INTERNAL_CUH
#define NB_TREE_INTERNAL_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/* log.h and sim.h carry no extern "C" of their own */
extern "C" {
#include "../../sim/sim.h"
}
#include "gpu_internal.h"
#include "tree_api.h"

#define TREE_KEY_LEVELS 21                  /* 3 * 21 = 63 key bits */
#define TREE_MAX_DEPTH (TREE_KEY_LEVELS + 1) /* depths 0..21: levels rise by >= 1 per depth */
#define TREE_WARP 32
/* Walk stack bound (see tree_walk.cu): at most 32 ranges per surviving
 * generation and one generation per depth 1..21, plus the root. */
#define TREE_STACK_CAP (TREE_WARP * (TREE_MAX_DEPTH - 1) + 32)

/* Device control block: reset at the start of every compute. */
struct tree_ctl {
	unsigned int bmin[3], bmax[3]; /* bounding box as order-preserving uints */
	int node_count;                /* bump allocator (may pass cap on overflow) */
	int alloc_end;                 /* end of the last successful allocation */
	int depth_start[TREE_MAX_DEPTH + 2];
	unsigned int blocks_done[TREE_MAX_DEPTH + 1];
	int overflow;     /* 1: node capacity reached (bigger leaves, still exact sums) */
	int stack_overflow; /* walk stack bound violated (never expected) */
	unsigned int group_next; /* walk work counter */
	int group_count;         /* walk groups listed by the build */
	int group_overflow;      /* group list full (never expected) */
	/* individual time steps: the active bodies packed into walk groups
	 * (tree_walk.cu, tree_stage_walk with la > 0) */
	unsigned int pk_next;    /* packed walk's work counter */
	int pk_groups;           /* packed groups listed */
	int pk_slots;            /* active slots listed */
	unsigned long long p2p, m2p, m2l; /* interaction counts when counting */
};

struct gpu_tree {
	size_t n;          /* bodies the buffers hold */
	int node_cap;
	int leaf_size;     /* max bodies per leaf (more only at key depth 21) */
	int lanes;         /* bodies per lane in a walk group (1 or 2) */
	int group_max;     /* group nodes hold at most this many bodies */
	int group_cap;     /* capacity of groups[] */
	int criterion;     /* enum gpu_tree_criterion */
	int multipoles;
	float theta, eps;
	int count_interactions;
	unsigned slot_lo, slot_hi; /* over MPI ranks: walk only these slots
				    * [lo, hi) (gpu_tree_set_slots; 0, UINT_MAX: all) */
	float local_ratio; /* far cells: local expansion (tree_far.cuh) */
	int leaf_p2p;      /* near accepted leaves up to this size: body by body */
	int local_dist;    /* local sums spread over the warp's lanes (tree_far.cuh) */
	int refit_every;   /* gpu_tree_compute_shared: rebuild every this many (tuning) */
	int since_build;   /* gpu_tree_compute_shared's evaluations since its last build */
	float mono_factor; /* near cells beyond this times rcrit: monopole (0: never) */
	int graph_stages;  /* build and moments through CUDA graphs (tuning) */
	int cover_box;     /* 1: the bounding box also holds cover_lohi (lo[3], hi[3]):
			    * gpu_tree_cover_box (domains: every rank's tree over the
			    * one global cube, so its cells are the global Morton
			    * cells and a rank's cells do not straddle another's) */
	float cover_lohi[6];
	cudaGraphExec_t gx_build, gx_moments; /* captured at first use (or NULL) */
	const float4 *gx_pos; /* the positions gx_moments was captured with */

	/* per body */
	unsigned long long *keys, *keys_alt;
	uint32_t *iota, *perm;
	float4 *pos, *vel; /* tree-order copies (gather targets) */
	uint32_t *id;
	uint8_t *lev;      /* tree-order copy of the levels (individual time steps) */
	int built;         /* a build has run: a refit may follow */
	size_t built_n;    /* bodies of that build */
	void *sort_tmp;
	size_t sort_tmp_bytes;

	/* per node */
	int2 *node_range; /* body [begin, end) */
	int2 *node_kids;  /* internal: (first child, nchild > 0); leaf: (first body, -count) */
	float4 *node_open; /* (com x, y, z, rcrit^2): accepted when dist^2 > rcrit^2 */
	float4 *node_mq0;  /* (mass, Qxx, Qyy, Qzz) */
	float4 *node_mq1;  /* (Qxy, Qxz, Qyz, T = tr sum m y y^T) */
	float *node_bmax;  /* largest distance of a body from the com */
	/* the general softening (docs/PHYSICS.md "Softening"): soft 1 with
	 * the spline kernel or lengths per body (the walk's SOFT instances);
	 * node_soft (lengths per body only, else NULL): each cell's
	 * (eps_max, eps2_mean), the largest length of its bodies and the
	 * mass-weighted mean of their squares */
	int soft, spline;
	float2 *node_soft;
	int2 *groups;      /* walk groups: body [begin, end), at most 32 * lanes */
	uint8_t *group_head; /* 1: the first group of its group node (tree_build.cu) */
	int *pk_slot;      /* the active slots, group node by group node (n) */
	int2 *pk_group;    /* packed walk groups: pk_slot [begin, end) (group_cap) */

	struct tree_ctl *ctl;

	/* body order between steps (tree_migrate.cu); allocated for reorder
	 * TREE_REORDER_MIGRATE and TREE_REORDER_FROZEN only */
	int reorder;      /* enum tree_reorder */
	int mig_nbr;      /* branches (key ranges), 1..TREE_MIG_MAX_BR */
	int mig_cap;      /* moved bodies the buffer holds; more: rebuild */
	const float4 *mig_pos; /* bodies of the last compute: the stored order is */
	size_t mig_n;          /* theirs while these stay the same */
	int mig_primed;   /* a compute has left br/off describing that order */
	int mig_par;      /* which of mig_off[2] holds the current order's offsets */
	struct tree_mig_ctl *mig;
	unsigned long long *mig_spl; /* nbr + 1 splitters: branch b = keys [spl[b], spl[b+1]) */
	int *mig_off[2];  /* nbr + 1: branch b at positions [off[b], off[b+1]) */
	int *mig_arr;     /* nbr: bodies arriving in each branch this step */
	int *mig_stay;    /* nbr: bodies staying in each branch this step */
	int *mig_base;    /* nbr: slot of a stayer = base[b] + rank */
	int *mig_fill;    /* nbr: arrivals placed so far (atomic) */
	int *mig_seg_b, *mig_seg_e; /* nbr: segments of the large-branch sort */
	uint32_t *mig_br; /* n: branch of each position of the current order */
	int *mig_flag;    /* n: 1 stays, 0 moves */
	int *mig_rank;    /* n: exclusive prefix sum of flag */
	int2 *mig_buf;    /* cap: (position, destination branch) of movers */
	unsigned long long *mig_key; /* n: keys grouped by branch, unsorted within */
	uint32_t *mig_val;           /* n: their positions in the current order */
	void *mig_tmp;
	size_t mig_tmp_bytes;

	size_t bytes; /* device bytes owned */
	int sm_count;
	int walk_blocks[2][2][2]; /* persistent grid size per walk variant [lanes-1][mp-1][pot] */
	int walk_blocks_per_sm;   /* tuning override (0: occupancy) */
	int walk_last_blocks, walk_fit_per_sm;
	cudaEvent_t ev[7];
};

/* How the bodies reach key order each step (gpu_tree_tuning.reorder):
 * SORT: keys over the tight bounding box, CUB radix sort (the reference);
 * MIGRATE: keys over a frozen cube, movers only (tree_migrate.cu);
 * FROZEN: keys over the same frozen cube as MIGRATE, then the CUB radix
 * sort: the exact reference for MIGRATE (same keys, same order). */
enum tree_reorder { TREE_REORDER_SORT = 0, TREE_REORDER_MIGRATE = 1, TREE_REORDER_FROZEN = 2 };

#define TREE_MIG_MAX_BR 4096    /* branches at most (one block sorts the splitters) */
#define TREE_MIG_BLOCK_CAP 4096 /* bodies a branch may hold for the one-block sort */

/* The migration's device state (tree_migrate.cu), kept across computes. */
struct tree_mig_ctl {
	unsigned int lo[3], hi[3]; /* frozen cube's box, order-preserving uints */
	int have_box;
	int rebuild;     /* this step places every body anew */
	int rebalance;   /* a branch passed twice the mean (or twice built_max): the
			  * next step rebuilds */
	int moved;       /* movers this step (may pass cap: then rebuild) */
	int max_branch;  /* largest branch after this step */
	int refit;       /* this step refitted the cube */
	int built_max;   /* largest branch the last rebuild left (its splitters are
			  * exact quantiles: above the mean only by coincident keys,
			  * which no rebuild can split) */
};

/* tree_build.cu: the stages before the walk, each enqueued on stream. */
int tree_stage_reset(struct gpu_tree *t, size_t n, cudaStream_t s);
int tree_stage_bbox(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s);
/* keys, radix sort, gather of pos/vel/id into tree order and copy back into b */
int tree_stage_sort(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s);
int tree_stage_build(struct gpu_tree *t, cudaStream_t s);
/* moments from pos (the bodies in the last build's order: b->pos) */
int tree_stage_moments(struct gpu_tree *t, const float4 *pos, cudaStream_t s);
/* node_soft from b->eps (slot order, refreshed after the reorder); nothing
 * when t->node_soft is NULL. After tree_stage_moments (reads the masses). */
int tree_stage_soft(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s);
/* a refit's reset: only the walk's counters (the cells stay) */
int tree_stage_refit_reset(struct gpu_tree *t, cudaStream_t s);
size_t tree_sort_tmp_bytes(size_t n);
/* the keys kernel's launch (tree_build.cu), for tree_migrate.cu */
int tree_stage_keys(struct gpu_tree *t, const struct gpu_bodies *b, unsigned long long *keys,
		    cudaStream_t s);
/* gather of pos/vel/id by t->perm into tree order and copy back into b */
int tree_stage_gather(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s);

/* tree_migrate.cu (reorder MIGRATE and FROZEN) */
size_t tree_mig_bytes(size_t n, int nbr);
int tree_mig_branches(size_t n, int branch_bodies); /* branch count for n bodies */
int tree_mig_alloc(struct gpu_tree *t, size_t n);   /* t->bytes grows; 0 or NB_ERUNTIME */
void tree_mig_free(struct gpu_tree *t);
/* The frozen cube: refit when the bounding box leaves it (or fills less than
 * half of it); writes it over ctl's box so every later stage uses it. */
int tree_stage_mig_box(struct gpu_tree *t, const struct gpu_bodies *b, cudaStream_t s);
/* keys over the frozen cube, movers detected, appended, stayers compacted,
 * movers inserted, branches sorted: t->keys sorted, t->perm, then the
 * gather as tree_stage_sort's. */
int tree_stage_migrate(struct gpu_tree *t, struct gpu_bodies *b, cudaStream_t s);

/* tree_walk.cu */
/* acc of the slots with b->lev[i] >= la (b->lev NULL: all). With la > 0
 * the active slots are first packed into walk groups of their own, group
 * node by group node (so a group never spans more than one group node's
 * cell), and only those groups are walked: the cost follows the active
 * bodies, not the groups that hold one. */
int tree_stage_walk(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, int la, cudaStream_t s);
int tree_walk_prepare(struct gpu_tree *t); /* occupancy -> persistent grid sizes */
/* Another tree's cells as the walk reads them (a received locally
 * essential tree, sim/cuda/tree_let.cu): the node arrays of struct
 * gpu_tree's layout, root at 0, leaves' bodies indexing the walk's pos. */
struct tree_src {
	const int2 *kids;
	const float4 *open, *mq0, *mq1;
};
/* t's walk groups (their bodies pos[0, n), t's tree order, as the last
 * build left them) walk src's cells instead of t's: acc[i] of every slot
 * gets that tree's sum (.w: phi + m / eps, as tree_stage_walk writes it,
 * with the self term taken out that this walk never added); lev (n, tree
 * order) not NULL: only the slots with lev[i] >= la (individual time
 * steps; a group without one is not walked, the others' acc is left as it
 * was). One Plummer length only (t->soft 0). Queued on s. 0 or
 * NB_ERUNTIME. */
int tree_stage_walk_src(struct gpu_tree *t, const float4 *pos, size_t n, const uint8_t *lev, int la,
			const struct tree_src *src, float4 *acc, int need_pot, cudaStream_t s);

/* Order-preserving float <-> uint (so atomicMin/Max on uint order floats). */
__device__ __forceinline__ unsigned int tree_f2u(float f)
{
	unsigned int u = __float_as_uint(f);
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float tree_u2f(unsigned int u)
{
	return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

/* The key cube: lower corner and side, from the reduced box. Every kernel
 * derives it the same way from ctl, so no kernel needs to store it. */
struct tree_cube {
	float x0, y0, z0, side;
};
__device__ __forceinline__ struct tree_cube tree_cube_of(const struct tree_ctl *c)
{
	struct tree_cube q;
	float lo[3], ext = 0.0f;
	for (int a = 0; a < 3; a++) {
		lo[a] = tree_u2f(c->bmin[a]);
		ext = fmaxf(ext, tree_u2f(c->bmax[a]) - lo[a]);
	}
	/* slack so the top face maps inside; any side will do for one point */
	q.side = ext > 0.0f ? ext * (1.0f + 1e-6f) + 1e-30f : 1.0f;
	q.x0 = lo[0];
	q.y0 = lo[1];
	q.z0 = lo[2];
	return q;
}

/* Level (0..21) of the smallest cell holding keys a <= b of one node. */
__device__ __forceinline__ int tree_common_level(unsigned long long a, unsigned long long b)
{
	unsigned long long x = a ^ b;
	if (!x)
		return TREE_KEY_LEVELS;
	int hb = 63 - __clzll((long long)x); /* highest differing bit, 0..62 */
	return (62 - hb) / 3;
}

#endif
