/* engine.h - the solver for one run: picks the backend (the CPU code of
 * sim/ or the CUDA code of sim/cuda/ and render/cuda/), owns the GPU simulation when there is
 * one, and advances the state by leapfrog steps of the scene's dt. Each
 * back end (host, device, film, CPU ranks; shared or individual steps) is
 * one row of struct engine_ops in a file of its own (engine_internal.h);
 * the parameters are one struct sim_params (sim/params.h) made from the
 * scene at engine_create.
 *
 * It is its own layer because it is the one place that sees both sim/ and
 * sim/cuda/ and render/cuda/ (see docs/DESIGN.md): the simulation and the kernels never see
 * each other's callers, and app/ drives a run only through this header. */
#ifndef NB_ENGINE_H
#define NB_ENGINE_H

#include "../sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An engine owns the solver state for one run, on the CPU or the GPU. */
struct engine;

/* Choose the backend (scene->simulation.backend, overridden by backend_cli
 * unless it is -1), build the solver, compute the first accelerations and
 * potentials (so frame 0's statistics are complete).
 * auto without a usable GPU says once that it uses the CPU. cuda without a
 * usable GPU is NB_EINPUT with the reason. st stays owned by the caller and
 * must outlive the engine. */
int engine_create(const struct scene *sc, struct sim_state *st, int backend_cli,
		      struct engine **out);
/* A CPU simulation split over ranks (dist/'s CPU ranks; dist/ sits above
 * the engine, so it hands its part in as callbacks, ctx theirs):
 *   force   replaces the CPU solver's force (called as the solver would
 *           be: for the first accelerations and once per step, with the
 *           engine's parameters: the ranks keep no copy of them);
 *   bodies  this rank's bodies of st (st as the engine leaves it) as a
 *           state of their own for a renderer: *sub points into buffers
 *           ctx owns (valid until the next call); h (n or NULL) gives
 *           *sub_h. 0 or NB_ERUNTIME;
 *   sum     sums n floats (a picture of this rank's bodies) over the
 *           ranks into rank 0's buf;
 *   sums    NULL when every rank holds the whole state; else (each rank
 *           holds its own bodies: simulation.ranks: domains) it sums n
 *           doubles over the ranks, on every rank, and the engine's
 *           diagnostics (engine_diag_take) and centre of mass (engine_com)
 *           are then the ranks' sums. The force may then also replace st's
 *           bodies (a migration): it must leave st consistent and write
 *           st->acc and st->pot (pot when the call passes one), whatever
 *           pointers it was given;
 *   force_active, regroup  NULL: individual time steps are refused over
 *           these ranks; else (with sums) force_active writes st->acc and
 *           st->pot of the bodies with active[i] != 0 (active NULL: all)
 *           without moving any body (a tick of a block step), and regroup,
 *           between block steps, moves the bodies to their owners (as
 *           force may) with their levels: *lev (st->n entries, malloc'd)
 *           is replaced by the new state's. Both are collective calls;
 *   h       NULL when every rank holds the whole state; else the
 *           adaptive smoothing lengths of this rank's bodies st in scene
 *           units (render_adaptive_h_state's contract, the neighbours
 *           searched over every rank's bodies), a collective call;
 *   h_follow NULL when a rank's bodies keep their places between frames;
 *           else (they move between ranks and are reordered) h_then[k],
 *           the length computed for the body of id id_then[k] (n_then of
 *           them, this rank's at that time), found for each of st's
 *           bodies now, wherever it was then: out[i] is the length of the
 *           body st->id[i]. A collective call;
 *   desc    engine_describe's text. */
struct engine_split {
	int (*force)(void *ctx, const struct sim_params *p, const double *pos, const double *mass,
		     size_t n, double *acc, double *pot);
	int (*force_active)(void *ctx, const struct sim_params *p, const unsigned char *active);
	int (*regroup)(void *ctx, unsigned char **lev);
	int (*bodies)(void *ctx, const struct sim_state *st, const double *h,
		      struct sim_state *sub, const double **sub_h);
	void (*sum)(void *ctx, float *buf, size_t n);
	void (*sums)(void *ctx, double *v, int n);
	int (*h)(void *ctx, const struct scene *sc, const struct sim_state *st,
		 const struct sim_units *u, double *h);
	int (*h_follow)(void *ctx, const uint32_t *id_then, const double *h_then, size_t n_then,
			const struct sim_state *st, double *out);
	void *ctx;
	const char *desc;
	int gpu; /* 1: the ranks' forces run on their GPUs (a renderer may splat there) */
};
/* engine_create with the force and the bodies split over ranks as SPLIT
 * says (copied; its ctx must outlive the engine). The CPU backend only:
 * cuda is NB_EINPUT (GPU ranks: engine_create_ranks), auto takes the
 * CPU. */
int engine_create_split(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct engine_split *split, struct engine **out);
/* engine_create on the GPU of this rank, one of RANKS (sim/cuda/gpu.h,
 * struct gpu_ranks; must outlive the engine): every rank steps the whole
 * state and computes its stretch's forces. Backend cpu, or no usable GPU:
 * NB_EINPUT. */
struct gpu_ranks;
int engine_create_ranks(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct gpu_ranks *ranks, struct engine **out);
/* Device bytes the GPU engine of scene sc would hold for n bodies (the
 * estimate engine_create's device simulation is made with; 0 in a CPU-only
 * build). For --dry-run and the memory check before any allocation. */
size_t engine_gpu_bytes_needed(const struct scene *sc, size_t n);
/* Advance `steps` leapfrog (kick-drift-kick) steps of scene dt. If
 * need_potential, the last force evaluation also computes st->pot (GPU: on
 * the device, fetched by engine_sync). Returns 0, or NB_ERUNTIME on a
 * non-finite value (logged with step, body id and a hint), or NB_EINTR when
 * the stop check (sim_set_stop_check) says stop: on the CPU it is asked
 * between steps and inside the direct force sum, so the state may be left
 * between steps (not for output). */
int engine_advance(struct engine *e, int steps, int need_potential);
/* Make st->pos/vel/acc/pot/time/step current on the host (no-op on CPU). */
int engine_sync(struct engine *e);
/* "cpu" or "cuda (NVIDIA H100 80GB HBM3)" etc. */
const char *engine_describe(const struct engine *e);
void engine_free(struct engine **e);
/* simulation.solver: none (film mode, docs/snapshots.md): the engine
 * computes no forces at all (not even the first accelerations; the
 * statistics' potential and total energy are NaN) and takes the series
 * (owned from now on; NULL: the state stays still): engine_advance then
 * makes the state of frame steps / steps_per_frame, frame f at
 * t0 + f (t1 - t0) / (output.frames - 1), on the host (CPU backend). */
void engine_set_film(struct engine *e, struct sim_snap_series *series);
/* CPU force evaluations so far (0 in film mode; for tests). */
long engine_force_calls(const struct engine *e);
/* 1 if the frames are drawn on the GPU: the simulation runs there
 * (engine_gpu), or film mode found a usable GPU with simulation.backend
 * auto or cuda (the renderer then uploads the host state each frame). */
int engine_draws_on_gpu(const struct engine *e);
/* 1 when the engine was made by engine_create_split: a renderer then draws
 * this rank's bodies (engine_split_bodies) and sums its picture over the
 * ranks (engine_split_sum). */
int engine_is_split(const struct engine *e);
/* 1 when the split's ranks run on their GPUs (struct engine_split's gpu). */
int engine_split_gpu(const struct engine *e);
/* 1 when each rank's state is only its own bodies (a split with sums:
 * simulation.ranks: domains): measures of the drawn bodies (the camera's
 * framing) must then be reduced over the ranks. */
int engine_ranks_own_bodies(const struct engine *e);
/* The split's bodies callback (engine_create_split); NB_ERUNTIME (internal)
 * on an engine that is not split. */
int engine_split_bodies(struct engine *e, const struct sim_state *st, const double *h,
			struct sim_state *sub, const double **sub_h);
/* The adaptive smoothing lengths of st (the renderer's state: this rank's
 * bodies when split): the split's h when it has one, else
 * render_adaptive_h_state (render/adaptive.h). A collective call over
 * ranks that hold their own bodies. */
int engine_split_h(struct engine *e, const struct scene *sc, const struct sim_state *st,
		   const struct sim_units *u, double *h);
/* 1 when the split has h_follow: lengths kept between frames must then
 * follow their bodies (engine_split_h_follow), as they move between ranks. */
int engine_split_h_moves(const struct engine *e);
/* The split's h_follow; NB_ERUNTIME (internal) without one. */
int engine_split_h_follow(struct engine *e, const uint32_t *id_then, const double *h_then,
			  size_t n_then, const struct sim_state *st, double *out);
/* The split's sum of n floats over the ranks; nothing when not split. */
void engine_split_sum(struct engine *e, float *buf, size_t n);
/* 1 in film mode without a series (simulation.solver: none, no
 * bodies.*.snapshots): the bodies never move, so a renderer may keep its
 * own copy of them from the first frame on (app/renderer_gpu.c's
 * out-of-core mirror). */
int engine_film_still(const struct engine *e);

/* ---- the overlapped GPU frame pipeline (app/frames.c, app/renderer_gpu.c) ---- */
struct gpu_sim; /* sim/cuda/gpu.h */
/* The engine's device simulation, or NULL on the CPU. The app may queue
 * work beside it (gpu_sim_render_input, gpu_sim_wait_event, gpu_sim_com)
 * but advances it only through the engine, so time and step stay right. */
struct gpu_sim *engine_gpu(struct engine *e);
/* As engine_advance, except that on the GPU the steps are only queued:
 * engine_check waits for them and reports a non-finite value exactly as
 * engine_advance would. On the CPU: engine_advance, and check is a
 * no-op. */
int engine_advance_async(struct engine *e, int steps, int need_potential);
int engine_check(struct engine *e);
/* Centre of mass (internal units) of the bodies whose component follows
 * FOLLOW (sim_component_follows; "all": every body), in the current state
 * after the steps queued so far (GPU: reduced on the device in double from
 * the float positions, waiting for the simulation; CPU: sim_state_com).
 * The engine keeps one selection and rebuilds it when FOLLOW changes.
 * 0, NB_EINPUT (logged: no component follows FOLLOW) or NB_ERUNTIME. */
int engine_com(struct engine *e, const char *follow, double com[3]);
/* The statistics' diagnostics of the current state without a copy of it
 * (additive): GPU: a reduction queued on the simulation stream after the
 * steps queued so far (gpu_sim_diag_queue), taken later (waits for its
 * 96-byte copy only); CPU: sim_diag_compute of st at the queue. take
 * fills *d as sim_diag_compute would from the state at the queue (GPU:
 * from the float state; the potential is NaN unless that advance computed
 * it) and *time with its time (internal units). Queue one, take it, then
 * queue the next. 0 or NB_ERUNTIME. */
int engine_diag_queue(struct engine *e);
int engine_diag_take(struct engine *e, struct sim_diag *d, double *time);

/* ---- individual time steps (simulation.timesteps: individual) ----
 * engine_advance and engine_advance_async then take `steps` steps of dt
 * as steps * blocks_per_frame / steps_per_frame block steps of dt_max (a
 * whole number, else NB_ERUNTIME): the frames fall on block ends. */
struct engine_ts_stats {
	int individual;              /* 0: shared steps, nothing below is set but blocks */
	long hist[SIM_TS_LEVELS];    /* bodies per level at the last block end */
	double evals;                /* force evaluations (active bodies summed over ticks) */
	long ticks;                  /* ticks with forces */
	long rebuilds;               /* of which rebuilt the tree (GPU; CPU: all) */
	long blocks;                 /* block steps advanced */
	double evals_per_body_frame; /* evals / n / frames advanced */
	double bodies;               /* n over every rank (0: this state's; levels sets it) */
};
/* Waits for the GPU. 0 or NB_ERUNTIME. */
int engine_ts_stats(struct engine *e, struct engine_ts_stats *s);
/* One log line with the above (nothing with shared steps). */
void engine_ts_report(struct engine *e);

#ifdef __cplusplus
}
#endif
#endif
