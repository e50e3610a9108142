/* tree_api.h - C entry points of the GPU Barnes-Hut tree (sim/cuda/tree*.cu)
 * for tests and benchmarks: a one-shot force call, tuning knobs and
 * per-stage timings. Only in CUDA builds (NB_HAVE_CUDA); the simulation
 * itself reaches the tree through gpu_sim_* (gpu.h) and gpu_tree_*
 * (gpu_internal.h). */
#ifndef NB_TREE_API_H
#define NB_TREE_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opening criteria. d is the distance from the cell's centre of mass to the
 * nearest point of the walking group's bounding box; l the side of the
 * smallest octree cell that holds the cell's bodies.
 *  GPU_TREE_CRIT_BH: accept when l < theta d (Barnes & Hut 1986; scene
 *    simulation.opening: com), and never a cell that may contain a group
 *    body (d must also exceed |com - centre| + sqrt(3)/2 l; this matters
 *    only for theta > 1/sqrt(3)).
 *  GPU_TREE_CRIT_BMAX: accept when bmax < theta d and bmax < d, bmax a
 *    bound on the distance of the cell's bodies from its centre of mass
 *    (Salmon & Warren 1994; simulation.opening: bmax, the default): it
 *    bounds the multipole error by the mass's real extent.
 *  GPU_TREE_CRIT_MASS: as BMAX with theta(M) in place of theta, M the
 *    cell's mass (Dehnen 2002; SCENE_OPENING_MASS): the root of
 *    theta^5 / (1 - theta)^2 = theta0^5 / (1 - theta0)^2 (M / M_tot)^(-1/3),
 *    M_tot the root's mass, theta0 the tree's theta: lighter cells are
 *    accepted at wider angles (sim/tree_internal.h, sim_tree_mass_scale).
 *  GPU_TREE_CRIT_SCENE (tuning only, the default): the criterion that
 *    sim_params.opening names; gpu_tree_accel uses bmax.
 * The CPU twin (sim/tree.c, sim_tree_accel_ex) implements all three. */
enum gpu_tree_criterion {
	GPU_TREE_CRIT_SCENE = -1,
	GPU_TREE_CRIT_BH = 0,
	GPU_TREE_CRIT_BMAX = 1,
	GPU_TREE_CRIT_MASS = 2
};

struct gpu_tree_tuning {
	int leaf_size; /* max bodies per leaf, 1..64 (default 16) */
	int lanes;     /* bodies per warp lane in a walk group: 1 (32) or 2 (64) */
	int criterion; /* enum gpu_tree_criterion; GPU_TREE_CRIT_SCENE by default */
	int count_interactions; /* count body-body and body-cell interactions */
	int walk_blocks_per_sm; /* walk grid: 0 = as many as fit (occupancy) */
	int group_max; /* walk groups come from nodes of at most this many bodies
			* (0: 16 groups' worth); see tree_build.cu */
	/* Added after group_max (callers get, change and set the whole struct): */
	float local_ratio; /* an accepted cell with rho < local_ratio R goes through the
			    * walk group's local expansion (sim/cuda/tree_far.cuh; rho the
			    * group box's half diagonal, R the distance from its centre to
			    * the cell's com); 0: never; -1 (the default): the
			    * criterion's, sim_tree_local_ratio as sim/tree.c (0.1; 0.15
			    * under mass) */
	int leaf_p2p;      /* accepted near leaves of at most this many bodies interact
			    * body by body (default 2, as sim/tree.c; 0: never) */
	int local_spread;  /* 1: the local sums are spread over the warp's lanes (fewer
			    * registers, more shuffles); 0 (default): every lane keeps
			    * all 35 (tree_walk.cu) */
	/* Added after local_spread: how bodies reach key order each step. */
	int reorder;       /* -1 (default): the scene's simulation.reorder
			    * (gpu_tree_accel: sort); 0 sort (CUB radix sort over the
			    * tight box); 1 migrate (sim/cuda/tree_migrate.cu); 2 the
			    * radix sort over migrate's frozen cube: the same keys and
			    * order as migrate, so the same forces bit for bit (tests) */
	int branch_bodies; /* migrate: bodies a branch holds at a rebuild (0: 1024) */
	/* Added after branch_bodies: speed-up variants (issue 30), off by default. */
	int refit_every;   /* shared time steps on one GPU (gpu_sim): rebuild the tree
			    * every refit_every force evaluations and refit it (moments,
			    * bmax and opening radii from the current positions; cells,
			    * body order and walk groups kept) at the others; 0 or 1:
			    * rebuild every evaluation (default). bmax criterion only
			    * (with com every evaluation rebuilds) */
	float mono_factor; /* quadrupole walks (multipoles 2, one Plummer length): an
			    * accepted near cell whose distance d exceeds mono_factor
			    * times its opening radius takes the monopole only (its
			    * error, ~(bmax/d)^2, is then below theta^2 / mono_factor^2);
			    * 0: never (default), else >= 1 */
	int graph_stages;  /* 1: the build's and the moments' launches (one per
			    * depth each, ~45 a step) replayed as two CUDA graphs
			    * captured at their first use (streams other than the
			    * legacy default stream: gpu_sim's); 0: launched one by
			    * one (default). The same kernels: the same forces */
};
/* The tuning that trees created from now on use (process-wide; benchmarks
 * and tests only). set(NULL) restores the defaults. */
void gpu_tree_tuning_get(struct gpu_tree_tuning *t);
void gpu_tree_tuning_set(const struct gpu_tree_tuning *t);

/* Per-stage device time, summed over force evaluations since the last
 * reset, while profiling is on (each evaluation then synchronises once). */
struct gpu_tree_profile {
	long computes;
	double ms_bbox, ms_sort, ms_build, ms_moments, ms_walk, ms_total;
	double p2p, m2p;        /* interactions (when counting), summed */
	double m2l;             /* far cells taken by local expansions, times the
				 * group's bodies (when counting), summed */
	long nodes_max;         /* most nodes used by one tree */
	long node_cap;          /* node capacity of the last tree */
	int overflow;           /* a tree ran out of nodes (leaves grew instead) */
	size_t bytes;           /* device bytes of the last tree created */
	int walk_blocks;        /* walk grid of the last evaluation (blocks of 128) */
	int walk_fit_per_sm;    /* walk blocks that fit on one multiprocessor */
	long groups;            /* walk groups of the last evaluation */
	/* Added after groups: migration (reorder migrate), summed. ms_sort is
	 * the whole reorder stage (keys to gather) in every mode. */
	long mig_steps;         /* evaluations that migrated (or rebuilt) */
	long mig_rebuilds;      /* of which placed every body anew */
	long mig_refits;        /* of which refitted the frozen cube */
	double mig_moved;       /* movers (bodies that left their branch) */
	double mig_bodies;      /* bodies of those evaluations */
	int mig_branches;       /* branches of the last tree */
	int mig_max_branch;     /* largest branch of the last evaluation */
};
void gpu_tree_profile_enable(int on);
/* cudaProfilerStart (on) / cudaProfilerStop (off): marks what
 * `ncu --profile-from-start off` profiles. */
void gpu_tree_profiler_mark(int on);
void gpu_tree_profile_read(struct gpu_tree_profile *p, int reset);

/* One-shot tree accelerations (double in and out, float on the device):
 * builds a tree over pos (3n) and mass (n) with softening eps > 0, opening
 * angle theta >= 0 (0: every pair, exact) and multipoles 1 or 2, writes acc
 * (3n) and, when pot != NULL, pot (n), in the caller's body order. The
 * opening criterion is the tuning's, or bmax (the scene default, as
 * sim_tree_accel) when that is GPU_TREE_CRIT_SCENE. Returns 0,
 * NB_EINPUT (bad argument or too big for the card, logged) or NB_ERUNTIME. */
int gpu_tree_accel(const double *pos, const double *mass, size_t n, double eps, double theta,
		   int multipoles, double *acc, double *pot);
/* gpu_tree_accel with the softening of docs/PHYSICS.md "Softening": the
 * cubic-spline kernel when spline, and, when eps_body (n) is non-NULL, each
 * body's own length (a pair takes the larger; cells carry eps_max and
 * eps2_mean); eps is then simulation.softening's role only (any positive
 * value). The walk's SOFT instances (far cells through the
 * group's local expansion with the spline only). */
int gpu_tree_accel_soft(const double *pos, const double *mass, const double *eps_body, size_t n,
			double eps, int spline, double theta, int multipoles, double *acc,
			double *pot);
/* gpu_tree_accel at pos1 (3n, the same bodies moved) from a tree built at
 * pos0 and refitted at pos1 (gpu_tree_compute_ex's refit: cells, order and
 * walk groups of pos0, moments and bmax of pos1): the force of a refitted
 * step (tuning refit_every), for its error against the direct sum at pos1.
 * acc (3n) in the caller's order. */
int gpu_tree_accel_refit(const double *pos0, const double *pos1, const double *mass, size_t n,
			 double eps, double theta, int multipoles, double *acc);
/* As gpu_tree_accel for the bodies with lev[i] >= la only (individual time
 * steps: the walk of the active bodies packed into their own groups when
 * la > 0); the others' acc (3 each) are left as the caller set them. */
int gpu_tree_accel_levels(const double *pos, const double *mass, const unsigned char *lev, int la,
			  size_t n, double eps, double theta, int multipoles, double *acc);

#ifdef __cplusplus
}
#endif
#endif
