/* gpu_internal.h - contract between the CUDA files (not for C callers).
 *
 * sim/cuda/sim.cu owns struct gpu_bodies and the step loop; sim/cuda/direct.cu
 * and sim/cuda/tree.cu compute accelerations on it. */
#ifndef NB_GPU_INTERNAL_H
#define NB_GPU_INTERNAL_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu.h"
#include "../../sim/morton.h"
#include "../../sim/timestep_rule.h"

/* The one CUDA check macro: on failure logs the call's text, file and line
 * and returns NB_ERUNTIME from the enclosing function (which must return int
 * and may not need cleanup; use CUDA_GOTO otherwise). Use after every launch
 * as CUDA_CHECK(cudaGetLastError()). Build with -DNB_CUDA_SYNC_CHECK to also
 * synchronise after each checked call (debug). */
#define CUDA_CHECK(call)                                                              \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ == cudaSuccess && NB_CUDA_SYNC)                                 \
			e_ = cudaDeviceSynchronize();                                  \
		if (e_ != cudaSuccess) {                                              \
			log_error("CUDA: %s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
				  cudaGetErrorString(e_));                            \
			return NB_ERUNTIME;                                           \
		}                                                                     \
	} while (0)
/* Same, but sets rc = NB_ERUNTIME and jumps to label (goto cleanup). */
#define CUDA_GOTO(call, rc, label)                                                    \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ == cudaSuccess && NB_CUDA_SYNC)                                 \
			e_ = cudaDeviceSynchronize();                                  \
		if (e_ != cudaSuccess) {                                              \
			log_error("CUDA: %s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
				  cudaGetErrorString(e_));                            \
			rc = NB_ERUNTIME;                                             \
			goto label;                                                   \
		}                                                                     \
	} while (0)
#ifdef NB_CUDA_SYNC_CHECK
#define NB_CUDA_SYNC 1
#else
#define NB_CUDA_SYNC 0
#endif

/* Device-resident bodies (allocated and freed by sim.cu). float4 for 16-byte
 * coalesced access: pos = (x, y, z, m), vel = (vx, vy, vz, 0),
 * acc = (ax, ay, az, phi). id[i] = original body id of slot i: a solver may
 * permute all four arrays together (tree order) as long as id follows. */
struct gpu_bodies {
	size_t n;
	float4 *pos, *vel, *acc;
	uint32_t *id;
	uint8_t *lev; /* individual time steps: each slot's level (follows the
		       * permutation like id); NULL with shared steps */
	/* Softening (docs/PHYSICS.md "Softening"). spline: 1 for the cubic-spline
	 * kernel (sim/soften.h), 0 for Plummer. eps: with lengths per body
	 * (sim_params.soft_mixed) each slot's length, in slot order (refreshed
	 * from eps_id through id after every reorder: gpu_soft_refresh); eps_id
	 * the same by body id (never permuted). Both NULL with one length:
	 * uniform runs keep today's memory and kernels. */
	int spline;
	float *eps, *eps_id;
};

/* 1 when the forces need the general softening path (spline or lengths
 * per body), 0 for today's uniform Plummer kernels. */
static inline int gpu_soft_general(const struct gpu_bodies *b)
{
	return b->spline || b->eps != NULL;
}
/* b->eps[k] = b->eps_id[b->id[k]] (id NULL: k) for every slot; nothing
 * when b->eps is NULL. Queued on stream. 0 or NB_ERUNTIME. (direct.cu) */
int gpu_soft_refresh(const struct gpu_bodies *b, cudaStream_t stream);

/* ---- probe.cu ---- */
/* The device's stream priorities: *low the least, *high the greatest (a
 * numerically lower value is a higher priority in CUDA). Both 0 when
 * NB_STREAM_PRIORITY=0 is set (the A/B switch of docs/BENCHMARKS.md).
 * 0, or NB_ERUNTIME when the runtime cannot say. */
int gpu_stream_priorities(int *low, int *high);

/* ---- direct.cu ---- */
/* acc[i] = softened gravity (and acc[i].w = phi_i when need_pot) from all
 * bodies. kernel: pairwise (each pair once) or gather; auto picks by n. */
int gpu_direct_compute(const struct gpu_bodies *b, float eps, enum scene_direct_kernel kernel,
		       int need_pot, cudaStream_t stream);
size_t gpu_direct_bytes_needed(size_t n);
/* Individual time steps: acc of the bodies list[0 .. *count) (device
 * memory, sim/cuda/sim_levels.cu's active list) from every body, the gather
 * kernel's sum; other slots untouched. */
int gpu_direct_compute_active(const struct gpu_bodies *b, float eps, const int *list,
			      const int *count, int need_pot, cudaStream_t stream);
enum scene_direct_kernel gpu_direct_pick(size_t n); /* what auto means for n */

/* ---- tree.cu ---- */
struct gpu_tree; /* owns the tree's device memory */
size_t gpu_tree_bytes_needed(size_t n, const struct sim_params *p);
int gpu_tree_create(size_t n, const struct sim_params *p, struct gpu_tree **out);
/* gpu_tree_create for bodies without velocities or levels, shared steps
 * only (gpu_tree_compute(_ex) with b->vel and b->lev NULL, la 0): no
 * tree-order copies of those, no packed walk lists (21 bytes a body and
 * 8 a group less; sim/cuda/tree_let.cu's domains). */
int gpu_tree_create_lean(size_t n, const struct sim_params *p, struct gpu_tree **out);
/* Later builds take the bounding box of the bodies and lohi (lo[3],
 * hi[3]) together as the tree's box; NULL: the bodies' alone. */
void gpu_tree_cover_box(struct gpu_tree *t, const float *lohi);
/* Build the octree over b and compute acc (phi in .w when need_pot). May
 * permute b's arrays into tree order (id follows). No host round trip
 * beyond a scalar or two. */
int gpu_tree_compute(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, cudaStream_t stream);
/* Individual time steps: as gpu_tree_compute, but only the slots with
 * b->lev[i] >= la get acc (walk groups without one are skipped; b->lev
 * NULL or la 0: every body). refit: keep the last build's cells, body
 * order and walk groups and recompute only the moments from the current
 * positions (bmax stays a true bound, so the bmax criterion stays
 * correct); refused (a full build instead) with the com criterion, whose
 * guard relies on the cells' geometry, and before the first build.
 * *rebuilt (may be NULL) says which it did. */
int gpu_tree_compute_ex(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, int la, int refit,
			int *rebuilt, cudaStream_t stream);
/* Shared time steps on one GPU (gpu_sim): gpu_tree_compute, but with the
 * tuning's refit_every K > 1 (tree_api.h) a build only every K evaluations
 * and gpu_tree_compute_ex's refit at the others (the body order is the
 * last build's until the next: nothing else permutes b). K <= 1: exactly
 * gpu_tree_compute. */
int gpu_tree_compute_shared(struct gpu_tree *t, struct gpu_bodies *b, int need_pot,
			    cudaStream_t stream);
void gpu_tree_free(struct gpu_tree **t);
/* Over MPI ranks: later walks give acc only to the slots [lo, hi) (groups
 * without one are skipped; other slots untouched); 0, SIZE_MAX: all. */
void gpu_tree_set_slots(struct gpu_tree *t, size_t lo, size_t hi);

/* ---- sim_ranks.cu: the force stage over MPI ranks (gpu.h, struct gpu_ranks) ---- */
struct gpu_rk; /* one rank's share: the cut, the swap's buffers, NCCL */
/* For n bodies. A collective call when r->nccl (every rank agrees on
 * NCCL). 0 or NB_ERUNTIME (logged). */
int gpu_rk_open(const struct gpu_ranks *r, size_t n, struct gpu_rk **out);
/* acc (and phi in .w when need_pot) of every slot: this rank's share
 * through the tree (tree non-NULL; it is built over every body) or the
 * direct gather, then the swap, then the balance callback. Waits for the
 * stream. */
int gpu_rk_force(struct gpu_rk *rk, struct gpu_bodies *b, struct gpu_tree *tree, float eps,
		 int need_pot, cudaStream_t s);
const char *gpu_rk_exchange(const struct gpu_rk *rk);
void gpu_rk_close(struct gpu_rk **rk);

/* ---- sim_levels.cu: individual time steps (sim/timestep_rule.h) ---- */
/* eps below: the one length; with lengths per body (b->eps) each slot's
 * own (dt_i = sqrt(2 eta eps_i / |a_i|), docs/PHYSICS.md "Softening") */
/* lev[i] = the level acc[i] wants */
int gpu_levels_init(const struct gpu_bodies *b, double dt_max, double eta, double eps, int max_level,
		    cudaStream_t s);
/* v += a dt_L / 2 for the slots with L >= la */
int gpu_levels_kick(const struct gpu_bodies *b, int la, double dt_max, cudaStream_t s);
/* x += v h for every slot */
int gpu_levels_drift(const struct gpu_bodies *b, double h, cudaStream_t s);
/* The active slots (L >= la) close their step (kick with their old level),
 * take their next level (sim_ts_next_level) and, unless block_end, open
 * it; *evals (device) grows by their number. */
int gpu_levels_close_open(const struct gpu_bodies *b, int la, int plan, int block_end, double dt_max,
			  double eta, double eps, int max_level, double coarsen_margin,
			  unsigned long long *evals,
			  cudaStream_t s);
/* hist[L] (device, SIM_TS_LEVELS ints, zeroed here) = slots of level L */
int gpu_levels_histogram(const struct gpu_bodies *b, int *hist, cudaStream_t s);
/* list[0 .. *count) = the slots with L >= la (device; *count zeroed here) */
int gpu_levels_active_list(const struct gpu_bodies *b, int la, int *list, int *count,
			   cudaStream_t s);

/* Accelerations (x, y, z) and potentials (w) downloaded as n float4 into
 * double arrays: slot k goes to body id[k] (id NULL: body k). pot may be
 * NULL. The one-shot force calls' unpack (gpu_direct_accel, the tree's). */
static inline void gpu_unpack_acc(const float4 *h, const uint32_t *id, size_t n, double *acc,
				  double *pot)
{
	for (size_t k = 0; k < n; k++) {
		const size_t i = id ? id[k] : k;
		acc[3 * i] = h[k].x;
		acc[3 * i + 1] = h[k].y;
		acc[3 * i + 2] = h[k].z;
		if (pot)
			pot[i] = h[k].w;
	}
}

#endif
