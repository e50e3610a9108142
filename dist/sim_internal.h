/* sim_internal.h - what dist/sim.c (the CPU ranks' forces, the run's
 * figures), dist/sim_gpu.c (the GPU ranks' callbacks) and dist/sim_times.c
 * (the clock and the time accounting both use) share: the struct behind
 * dist.h's struct dist_sim, and its helpers. Not for use outside dist/. */
#ifndef NB_DIST_SIM_INTERNAL_H
#define NB_DIST_SIM_INTERNAL_H

#include "dist.h"

#define DIST_VALS 5 /* ax ay az phi work, per body in the exchange */

struct dist_sim {
	size_t n;
	int P, rank;
	struct dist_domain dom;
	double *w;             /* n: each body's work at the last call (by index) */
	double *packed;        /* DIST_VALS n, domain order */
	double *pot;           /* n: potentials when the caller wants none */
	double *rowout;        /* 4 per own body (direct) */
	unsigned char *mine;   /* n */
	double *eps;           /* n: each body's softening (sim_soft_each) when the
				* scene's lengths differ (soft_mixed), else NULL */
	size_t *bytes, *off;   /* P each: the exchange's blocks */
	long calls;
	int every;             /* recut every this many calls */
	double threshold;      /* recut after work imbalance above 1 + this */
	int recut;             /* recut at the next call */
	int die_rank;
	long die_call;
	struct dist_stats stats;
	/* the renderer's subset */
	struct sim_state sub;
	double *sub_h;
	char desc[224];
	/* GPU ranks (dist_sim_create's gpu): the stretches of the slots are the
	 * kernels' (sim/cuda/sim_ranks.cu); this side measures and recuts */
	int gpu;
	struct gpu_ranks ranks;
	size_t *gcut;          /* P + 1: the stretches of the last evaluation */
	size_t *gnext;         /* P + 1: scratch for the recut */
	double *gtime;         /* P: each rank's force ms of the last evaluation */
	/* simulation.ranks: domains (dist/domains.c): the engine's state is this
	 * rank's own bodies; n above is the total over the ranks */
	int domains;
	struct sim_state *st;  /* the engine's state (not owned) */
	struct dist_owned own; /* st->n keys and works (individual time steps: the
				* works summed over the block step's ticks) */
	double *tick_work;     /* individual time steps: one tick's works */
	size_t tick_cap;       /* tick_work's length */
	long places;           /* domains placed (dom_place; cuts every `every`) */
	long regroups;         /* individual time steps: block steps' migrations */
	uint64_t *bound;       /* P + 1: the domains' key stretches */
	size_t force_held;     /* the last force's exchange buffers, bytes */
	struct engine_split dsplit; /* dist_sim_split's answer for domains */
	const struct dist_dom_solver *solver; /* domains: the forces' row (dist/domains.c) */
	void *solver_state;    /* the row's own between calls (its release frees it) */
};

/* simulation.ranks: domains: one row of dist/domains.c's table of forces. */
struct dist_dom_solver {
	enum scene_solver solver;
	int gpu; /* 1: the forces on each rank's GPU */
	int (*force)(void **state, const struct sim_state *st, const struct sim_params *p,
		     const double *each, const unsigned char *active, double *work, size_t *held);
	void (*release)(void **state);      /* NULL: no state */
	size_t (*device_bytes)(void *state); /* NULL: no device memory */
	const char *desc;  /* engine_describe's words */
	const char *after; /* NULL, or desc is followed by theta and these words */
};

/* Monotonic seconds (dist/sim_times.c). */
double dist_sim_now(void);
/* One force evaluation's force and exchange seconds into ds->stats: the
 * first evaluation's apart (call 0: potential, first allocations, NCCL's
 * connections), the steps' summed. Before ds->calls moves on
 * (dist/sim_times.c). */
void dist_sim_add_times(struct dist_sim *ds, double force_s, double exchange_s);
/* A run report's figures: every rank's nv doubles mine gathered on rank 0
 * (P x nv, malloc'd, the caller frees); NULL on the other ranks and when
 * the exchanges broke. Every rank must call (dist/sim.c). */
double *dist_sim_gather_figures(const struct dist_sim *ds, const double *mine, int nv);
/* The environment variable NAME as a long, or DEF when unset or empty. */
long dist_sim_env_long(const char *name, long def);
/* GPU ranks (dist_sim_create's gpu): ds's stretches, time buffers and the
 * struct gpu_ranks callbacks (dist/sim_gpu.c), the NCCL choice agreed over
 * the ranks (a collective call). ds's n, P, rank, every, threshold and die
 * fields must be set. 0, or NB_ERUNTIME (out of memory; not logged). */
int dist_sim_gpu_setup(struct dist_sim *ds);

#endif
