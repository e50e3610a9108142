/* engine_internal.h - the engine's back ends behind one interface, in the
 * shape of app/renderer.h's renderer_ops (and of cuda-samples' BodySystem:
 * one interface, a CPU and a CUDA implementation). engine/engine.c keeps
 * what every back end shares (the public API, the body selection for the
 * camera, the diagnostics' queue) and picks the row (engine_pick); each
 * row lives in a file of its own:
 *
 *   engine_ops_cpu, engine_ops_cpu_blocks   engine/cpu.c    sim/'s solver on the host
 *   engine_ops_gpu, engine_ops_gpu_blocks   engine/gpu.c    sim/cuda/'s device simulation
 *                                                           (GPU ranks too: e->ranks)
 *   engine_ops_film                         engine/film.c   no forces (solver: none)
 *   engine_ops_ranks, engine_ops_ranks_blocks  engine/ranks.c  CPU ranks: dist/'s force
 *
 * The _blocks rows take individual time steps (block steps of dt_max).
 * Not for use outside engine/. */
#ifndef NB_ENGINE_INTERNAL_H
#define NB_ENGINE_INTERNAL_H

#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"
#include "engine.h"

/* A row names its open and advance; every other op may be NULL, which
 * means the state is on the host: advance_async is advance, check and sync
 * do nothing, the diagnostics and the centre of mass are computed from
 * e->st (engine/common.c's engine_host_*), select, levels, ts_report and
 * close have nothing to do. (FFmpeg's optional callbacks, the same way.) */
struct engine_ops {
	const char *name;
	int blocks; /* 1: individual time steps (engine_ts_stats reads levels) */
	int film;   /* 1: no forces; the state follows a series or stays still */
	/* The solver for e (e->st, e->p, e->split, e->ranks set), its first
	 * accelerations and e->desc. BACKEND: the scene's or the command
	 * line's. 0 or an error (logged); the caller frees e either way. */
	int (*open)(struct engine *e, int backend);
	/* steps > 0 (engine_advance's contract) */
	int (*advance)(struct engine *e, int steps, int need_potential);
	int (*advance_async)(struct engine *e, int steps, int need_potential);
	int (*check)(struct engine *e);
	int (*sync)(struct engine *e);
	/* the diagnostics of the current state: queue (sets e->diag_time), take */
	int (*diag_queue)(struct engine *e);
	int (*diag_take)(struct engine *e, struct sim_diag *d);
	/* e->sel changed (NULL: every body) */
	int (*select)(struct engine *e);
	int (*com)(struct engine *e, double com[3]);
	/* blocks rows: the level histogram and the evaluation counts into s */
	int (*levels)(struct engine *e, struct engine_ts_stats *s);
	/* blocks rows: log what the back end counts beyond engine_ts_report's
	 * line */
	void (*ts_report)(struct engine *e);
	/* free what open made */
	void (*close)(struct engine *e);
};

extern const struct engine_ops engine_ops_cpu, engine_ops_cpu_blocks, engine_ops_gpu,
	engine_ops_gpu_blocks, engine_ops_film, engine_ops_ranks, engine_ops_ranks_blocks;

struct engine {
	const struct engine_ops *ops;
	struct sim_state *st;           /* not owned */
	struct sim_params p;            /* sim_params_of the scene: the one copy */
	struct engine_split split;      /* engine_create_split's; force NULL: not split */
	const struct gpu_ranks *ranks;  /* GPU ranks (engine_create_ranks), or NULL */
	/* the host's force (cpu.c, ranks.c): called through engine_cpu_force */
	int (*force)(struct engine *e, const double *pos, const double *mass, size_t n, double *acc,
		     double *pot);
	long force_calls;               /* host force evaluations (film: must stay 0) */
	struct gpu_sim *gpu;            /* the GPU rows' simulation; NULL on the host */
	int draw_gpu;                   /* frames drawn on the GPU (engine_draws_on_gpu) */
	struct sim_ts ts;               /* the host's _blocks rows' levels */
	long blocks;                    /* block steps advanced */
	double time;                    /* GPU rows: time and step as of the last advance */
	long step;
	double diag_time;               /* time of the queued diagnostics */
	int diag_queued;
	struct sim_diag diag;           /* host rows: the queued diagnostics */
	char sel_follow[SCENE_NAME_MAX + 8]; /* follow name sel was built for; "" none */
	unsigned char *sel;             /* by body (= id on the GPU); NULL: all */
	char desc[192];
	/* engine_ops_film: frames follow the series when there is one, else the
	 * state stays as it was read */
	struct sim_snap_series *film;   /* owned; NULL: a still state */
	int frames;                     /* output.frames: frame f at t0 + f (t1 - t0) / (frames - 1) */
	long film_steps;                /* steps advanced (steps_per_frame per frame) */
};

/* (engine/common.c) Report body i's non-finite value with a hint; always
 * NB_ERUNTIME. */
int engine_report_nonfinite(const struct engine *e, long i);
/* Individual steps: `steps` steps of dt as whole block steps of dt_max
 * (else NB_ERUNTIME, logged). */
int engine_blocks_of(const struct engine *e, int steps, int *blocks);
/* The host rows' sim_force_fn (ctx: the engine): counts the evaluation and
 * calls e->force. */
int engine_cpu_force(const double *pos, const double *mass, size_t n, void *ctx, double *acc,
		     double *pot);
/* (engine/common.c) The ops of a state on the host, for a row's NULL. */
int engine_host_diag_queue(struct engine *e);
int engine_host_diag_take(struct engine *e, struct sim_diag *d);
int engine_host_com(struct engine *e, double com[3]);
/* (engine/cpu.c) Leapfrog steps of dt on the host through e->force. */
int engine_cpu_advance(struct engine *e, int steps, int need_potential);
/* (engine/cpu.c) The first accelerations and potentials of e->st through
 * e->force, checked. */
int engine_cpu_first(struct engine *e);
/* (engine/cpu.c) `steps` steps of dt as block steps of the host's e->ts
 * through force (individual time steps); over ranks that hold their own
 * bodies the split's regroup runs before each block step. */
int engine_cpu_blocks(struct engine *e, int steps, int need_potential, sim_force_active_fn force);
/* (engine/cpu.c) The host _blocks rows' levels, ts_report and close (of
 * e->ts; over ranks its counts are every rank's: sim_ts_init_over). */
int engine_cpu_levels(struct engine *e, struct engine_ts_stats *s);
void engine_cpu_ts_report(struct engine *e);
void engine_cpu_close(struct engine *e);

#endif
