/* gpu.h - everything the GPU does, behind one C interface (the sim/cuda/ .cu files; the renderer's are behind render/cuda/gpu_render.h).
 *
 * With CUDA=0 the build links sim/cuda/gpu_none.c instead, whose functions
 * report that the program was built without CUDA. Every function returns 0 or
 * a negative NB_* code (log.h) after logging the failing CUDA call's text,
 * file and line.
 *
 * Device state is float4 (x, y, z, m) positions plus float4 velocities and
 * accelerations (w unused / potential): 16-byte coalesced loads. The host
 * state (sim_state, double) is uploaded once and downloaded only when output
 * needs it. */
#ifndef NB_GPU_H
#define NB_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "../../sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if a CUDA device is usable, 0 if not (why gets the reason: built
 * without CUDA, no driver, no device). Never logs; cheap after first call. */
int gpu_probe(char *why, size_t whylen);
/* Device name and free/total memory of device 0. 0 or NB_ERUNTIME. */
int gpu_device_info(char *name, size_t namelen, size_t *free_bytes, size_t *total_bytes);

struct gpu_ranks; /* below */

/* ---- one simulation over MPI ranks, each with a GPU (additive;
 * sim/cuda/sim_ranks.cu; dist/ gives the callbacks, docs/PHYSICS.md "Over
 * MPI ranks") ----
 * Every rank holds the whole state on its GPU and steps every body: the
 * same kernels on the same numbers give the same positions bit for bit.
 * Forces: each rank walks the tree (or sums the direct forces) for the
 * slots [cut[rank], cut[rank + 1]) only, a stretch of the tree's Morton
 * order (the key sort is stable and its input the same on every rank, so
 * the order is too), and the ranks then swap those accelerations and
 * potentials, 16 bytes a body, so every rank holds them all.
 * The swap: NCCL broadcasts on the simulation stream when nccl is set and
 * libnccl.so.2 loads (each rank must then have a GPU of its own; the
 * library is opened at run time, so no build needs NCCL), else through
 * host memory: the own stretch down, allgather, the others' stretches up.
 * Refused with individual time steps; reorder migrate becomes sort. */
struct gpu_ranks_step {
	double force_ms;      /* this rank's force stage (tree: build and walk) */
	double exchange_ms;   /* the swap, waiting for the others included */
	uint64_t sent, received; /* bytes this rank moved in the swap */
};
struct gpu_ranks {
	int P, rank;
	int nccl;  /* 1: swap through NCCL if it loads (every rank its own GPU) */
	void *ctx; /* the callbacks' */
	/* Host memory, every rank's block to every rank, in place: rank r's
	 * block is bytes[r] bytes at off[r] of buf. 0 or an NB_* code (a
	 * callback may also end the run itself). */
	int (*allgather)(void *ctx, void *buf, const size_t *bytes, const size_t *off);
	/* Rank 0's bytes bytes of buf to every rank. 0 or an NB_* code. */
	int (*bcast)(void *ctx, void *buf, size_t bytes);
	/* After each swap, on every rank: the step's figures; cut (P + 1
	 * slots, cut[0] = 0, cut[P] = n) may be changed for the next force
	 * evaluation, the same way on every rank. */
	void (*balance)(void *ctx, const struct gpu_ranks_step *s, size_t *cut);
};
/* Bind this process to GPU local_rank % the devices it sees (call before
 * any other gpu_* call; ranks of one host then spread over its GPUs).
 * *dev gets the device, *count how many there are. 0 or NB_ERUNTIME. */
int gpu_bind_local(int local_rank, int *dev, int *count);

struct gpu_sim; /* device-resident simulation; owns all device memory */
/* How the swap of gpu_sim g goes: "nccl" or "host" (or "" for one process). */
const char *gpu_sim_ranks_exchange(const struct gpu_sim *g);

/* Estimate device bytes for n bodies with these params (sim/params.h). */
size_t gpu_sim_bytes_needed(size_t n, const struct sim_params *p);
/* Upload st (positions, masses, velocities), compute first accelerations.
 * p is copied. Too large a scene for the card: NB_EINPUT naming bytes
 * needed and free. */
int gpu_sim_create(const struct sim_state *st, const struct sim_params *p,
		   struct gpu_sim **out);
/* gpu_sim_create on this rank of RANKS (struct gpu_ranks above; must
 * outlive the simulation; NULL: one process, as gpu_sim_create). */
int gpu_sim_create_ranks(const struct sim_state *st, const struct sim_params *p,
			 const struct gpu_ranks *ranks, struct gpu_sim **out);
/* nsteps kick-drift-kick steps on the device; potential computed on the
 * last force evaluation when need_potential. No host round trip. */
int gpu_sim_advance(struct gpu_sim *g, int nsteps, int need_potential);
/* Copy pos, vel, acc (and pot if computed) back into st (double). */
int gpu_sim_download(struct gpu_sim *g, struct sim_state *st);
/* Benchmark hook (bench/): nsteps steps as gpu_sim_advance takes them (no
 * potential, no finiteness check), each timed with CUDA events: force_ms[k]
 * around the force computation alone, step_ms[k] around the whole step.
 * 0 or NB_ERUNTIME. Added by the GPU direct solver (sim/cuda/sim.cu). */
int gpu_sim_time_steps(struct gpu_sim *g, int nsteps, double *force_ms, double *step_ms);
/* "direct/pairwise" etc. for messages. */
const char *gpu_sim_describe(const struct gpu_sim *g);
void gpu_sim_free(struct gpu_sim **g);

/* ---- individual time steps (additive; sim/cuda/sim_levels.cu) ----
 * With params.timesteps individual, gpu_sim_create sets each body's level
 * from its first acceleration (sim/timestep_rule.h) and the simulation
 * advances by block steps of dt_max, queued like gpu_sim_advance_async:
 * per tick, drift all, forces of the active bodies only (the tree walk
 * skips groups without one; the direct sum gathers over a compacted list
 * of active targets), close/relevel/open kicks. Each block's plan (its
 * finest level) comes from the level histogram of the previous block end,
 * which the host reads from pinned memory: it waits for the previous
 * block (already done when the frame loop queues a frame). */
int gpu_sim_advance_blocks_async(struct gpu_sim *g, int blocks, int need_potential);
/* After waiting for the stream: the level histogram as of the last block
 * end, the force evaluations (active bodies summed over ticks) and the
 * ticks since creation, and the tree rebuilds and refits among them. */
int gpu_sim_levels(struct gpu_sim *g, long hist[SIM_TS_LEVELS], double *evals, long *ticks,
		   long *rebuilds);

/* ---- the overlapped frame pipeline (additive; app/frames.c) ----
 * The app drives the simulation stream directly so that frame f+1 is
 * simulated while frame f is rendered and copied and frame f-1 encoded:
 *   gpu_sim_wait_event(g, gpu_render_consumed_event(gr));
 *   gpu_sim_advance_async(g, steps, need_pot);   // returns at once
 *   ... host work for earlier frames ...
 *   gpu_sim_check(g);                            // waits, reports NaN
 *   gpu_sim_render_input(g, &in); gpu_render_frame(gr, &in, ...);
 * Statistics come from a reduction on the device (gpu_sim_diag_*); the whole
 * state is brought over only for the final state CSV (gpu_sim_download). */
/* Where a frame's bodies are (the simulation hands them to render/cuda/): device memory, float4 per slot s = (x, y, z, m)
 * in internal units; body id of slot s = id[s] (id NULL: s), which picks the
 * component colour and the adaptive h (both kept per id, so a solver may
 * permute slots between frames). n <= st->n given at create.
 * ready_event: a cudaEvent_t (cast to void *) recorded by the producer after
 * writing pos4, or NULL when pos4 is already complete for the device. */
struct gpu_render_input {
	const void *pos4;
	/* float4 (vx, vy, vz, -) per slot, internal units, the same slots as
	 * pos4: read only with render.color_by los_velocity or speed, or
	 * render.motion_blur.samples > 1 (then required; NULL otherwise
	 * allowed). Must stay unchanged until gpu_render_consumed_event, as
	 * pos4. */
	const void *vel4;
	const uint32_t *id;
	size_t n;
	void *ready_event;
};
/* Point in at the device bodies: pos4 = float4 (x, y, z, m) per slot in
 * internal units, id = body id per slot (a solver may permute slots), n;
 * ready_event = an event recorded now on the simulation stream, after every
 * step queued so far. in stays valid until steps are queued again (and the
 * positions must not change before the renderer's consumed event: see
 * gpu_sim_wait_event). 0 or NB_ERUNTIME. */
int gpu_sim_render_input(struct gpu_sim *g, struct gpu_render_input *in);
/* Work queued on the simulation stream after this call waits for
 * cuda_event (a cudaEvent_t as void *, e.g. gpu_render_consumed_event).
 * NULL: nothing to wait for. 0 or NB_ERUNTIME. */
int gpu_sim_wait_event(struct gpu_sim *g, void *cuda_event);
/* gpu_sim_advance without the wait: the steps and the finiteness check are
 * queued and the call returns; gpu_sim_check gives the check's result. */
int gpu_sim_advance_async(struct gpu_sim *g, int nsteps, int need_potential);
/* Wait for the simulation stream, then report a non-finite body of the
 * last queued check exactly as gpu_sim_advance does (NB_ERUNTIME). */
int gpu_sim_check(struct gpu_sim *g);

/* The statistics' numbers without the state (additive): queue on the
 * simulation stream, after every step queued so far, a reduction of the
 * device bodies to sim_diag_compute's quantities (kinetic energy,
 * potential 0.5 sum m phi when the last advance computed phi -- else NaN --,
 * momentum, angular momentum, centre of mass and its velocity, mass),
 * summed in double from the float state in a fixed order (block partials,
 * then one final pass; no atomics); 96 bytes then travel to pinned memory.
 * ~0.03 ms per 1M bodies; the call returns at once. gpu_sim_diag_take
 * waits for that copy only. Queue one, take it, then queue the next.
 * Both 0 or NB_ERUNTIME. */
int gpu_sim_diag_queue(struct gpu_sim *g);
int gpu_sim_diag_take(struct gpu_sim *g, struct sim_diag *d);

/* Bodies whose centre of mass gpu_sim_com reports: sel_by_id[i] != 0 for
 * body id i (n values, copied to the device), or NULL for all bodies. */
int gpu_sim_set_selection(struct gpu_sim *g, const unsigned char *sel_by_id);
/* Centre of mass (internal units) of the selected bodies, summed in double
 * on the device, now (waits for the simulation stream). Massless bodies
 * only: their plain mean; none selected: the origin (as camera follow
 * defines it, render/camera.c). *mass gets their total mass, *count how
 * many. 0 or NB_ERUNTIME. */
int gpu_sim_com(struct gpu_sim *g, double com[3], double *mass, size_t *count);

/* ---- locally essential trees on the GPU (sim/cuda/tree_let.cu) --------------
 * One rank's part of a Barnes-Hut force over ranks that each hold only their
 * own bodies (simulation.ranks: domains; dist/let_force.c drives it, the GPU
 * twin of sim/let.h). Per force evaluation:
 *   gpu_let_build   the own bodies (host, double) up to the device, their
 *                   octree built (over cube, when given) and walked: the
 *                   own part of acc;
 *   gpu_let_cover   at most max boxes (lo[3], hi[3] each) round this rank's
 *                   bodies, every walk group inside one of them: what the
 *                   others export to;
 *   gpu_let_export  the part of the tree a receiver whose bodies lie in the
 *                   union of boxes needs (selected on the device, level by
 *                   level): cells no box opens go as moments only (always
 *                   accepted by the receiver's walk), opened leaves and
 *                   leaves of at most the tree's leaf_p2p bodies with their
 *                   bodies; *buf malloc'd, a checked wire format;
 *   gpu_let_accel   each received buffer checked (structure, sizes, the
 *                   walk's parameters, finite values), uploaded and walked by
 *                   the own walk groups; acc (3n), pot (n, or NULL) of the
 *                   bodies in the order gpu_let_build was given them.
 * Individual time steps: active (n, or NULL: every body) names the bodies
 * whose forces are wanted, the same to build and accel; the walks skip the
 * groups without one and only their acc and pot are written (the tree, its
 * cover and its exports are every body's: the others' walks need them).
 * Plummer softening with one length only (no spline, no lengths per body);
 * one Plummer length and the tree's opening criterion are the scene's
 * (sim_params; with simulation.timesteps: individual the tree keeps the
 * levels' arrays, 9 bytes a body more). 0, NB_EINPUT (a buffer that does not check
 * out, or the device too small, logged) or NB_ERUNTIME (logged). */
struct gpu_let;
int gpu_let_create(const struct sim_params *p, struct gpu_let **out);
/* cube (lo[3], hi[3], or NULL): a box the tree's box must hold, the same
 * on every rank (the domains' global cube: every rank's cells are then
 * the global Morton cells, and its cover's boxes do not reach round
 * another rank's bodies) */
int gpu_let_build(struct gpu_let *g, const double *pos, const double *mass, size_t n,
		  const unsigned char *active, const double *cube);
int gpu_let_cover(struct gpu_let *g, int max, double *boxes, int *nbox);
int gpu_let_export(struct gpu_let *g, const double *boxes, int nbox, void **buf, size_t *nbytes);
int gpu_let_accel(struct gpu_let *g, const void *const *bufs, const size_t *nbytes, int nbuf,
		  const unsigned char *active, double *acc, double *pot);
/* Device bytes g holds now, and the milliseconds of the last build's own
 * walk and of the last accel's remote walks (device time). */
size_t gpu_let_bytes(const struct gpu_let *g);
void gpu_let_times(const struct gpu_let *g, double *own_ms, double *remote_ms);
void gpu_let_free(struct gpu_let **g);

/* One-shot direct accelerations for tests and benchmarks (float on device,
 * returned as double). kernel: pairwise or gather (auto picks). pot may be NULL. */
int gpu_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     enum scene_direct_kernel kernel, double *acc, double *pot);
/* gpu_direct_accel with the softening of docs/PHYSICS.md "Softening":
 * kernel soft (plummer | spline) and, when eps_body (n) is non-NULL, each
 * body's own length, a pair taking the larger; eps is then the scale of
 * the float range (the smallest length). Spline or eps_body run the
 * general gather kernel whatever kernel says. */
int gpu_direct_accel_soft(const double *pos, const double *mass, const double *eps_body, size_t n,
			  double eps, enum scene_soft_kernel soft, enum scene_direct_kernel kernel,
			  double *acc, double *pot);

#ifdef __cplusplus
}
#endif
#endif
