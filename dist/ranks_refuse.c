/* ranks_refuse.c - what the runs over ranks do not do yet, as one table
 * of rows a mode (simulation.ranks: domains, and replicate over more than
 * one rank; dist.h, dist_ranks_refuse): each row names the key
 * that asks for it and says why and what works instead. The run and
 * --dry-run both call it (app_preflight), so both refuse alike, with exit
 * status 2 before any work. Rows go as the features are written (adaptive
 * smoothing and the adaptive diffuse layer went with dist/halo.c, dust
 * and the screen diffuse layer with the renderer's images summed over the
 * ranks before rank 0 composites them; camera.follow: light and
 * camera.frame: auto with the framing's histograms reduced over the ranks,
 * app/framing.c; individual time steps, engine/ranks.c). */
#include <stdio.h>
#include <string.h>

#include "../sim/soften_assign.h"
#include "dist.h"

struct dom_refusal {
	const char *key; /* a body's key when it holds "%d" */
	/* 1 when sc (backend: the effective simulation.backend) asks for it;
	 * for a body's key, *body gets the entry */
	int (*asks)(const struct scene *sc, int backend, int *body);
	const char *why;
};

/* GPU ranks (backend cuda; auto takes the CPU for these, dist_domains_gpu) */
static int ask_gpu_direct(const struct scene *sc, int backend, int *body)
{
	(void)body;
	return backend == SCENE_BACKEND_CUDA && sc->simulation.solver == SCENE_SOLVER_DIRECT;
}

static int ask_gpu_spline(const struct scene *sc, int backend, int *body)
{
	(void)body;
	return backend == SCENE_BACKEND_CUDA &&
	       sc->simulation.softening_kernel == SCENE_SOFT_SPLINE;
}

static int ask_gpu_mixed(const struct scene *sc, int backend, int *body)
{
	(void)body;
	return backend == SCENE_BACKEND_CUDA && sim_soft_scene_mixed(sc);
}

static int ask_solver(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->simulation.solver == SCENE_SOLVER_NONE;
}

/* a snapshot beside made bodies (a scene of snapshots only: dist/snapin.c) */
static int ask_snapshot_input(const struct scene *sc, int backend, int *body)
{
	(void)backend;
	if (dist_snapin_takes(sc))
		return 0;
	for (*body = 0; *body < sc->nbodies; (*body)++)
		if (sc->bodies[*body].model == SCENE_MODEL_SNAPSHOT)
			return 1;
	return 0;
}

/* snapshots written of a scene that reads snapshots: the file IDs */
static int ask_snapshot_ids(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->output.snapshots.dir[0] != '\0' && dist_snapin_takes(sc);
}

static int ask_snapshot_parts(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->output.snapshots.dir[0] != '\0' && sc->output.snapshots.files != dist_size();
}

static int ask_initial(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->output.initial_state[0] != '\0';
}

static int ask_final(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->output.final_state[0] != '\0';
}

/* each rank's tree knows its own mass, not the whole system's, which the
 * mass criterion's angle is relative to */
static int ask_opening_mass(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return sc->simulation.solver == SCENE_SOLVER_BARNES_HUT &&
	       sc->simulation.opening == SCENE_OPENING_MASS;
}

#define NOT_YET "simulation.ranks: domains does not "
static const struct dom_refusal dom_refusals[] = {
	{"simulation.solver", ask_gpu_direct,
	 NOT_YET "sum directly on GPU ranks yet (Barnes-Hut does): set simulation.backend: cpu "
		 "(the direct sum is passed round a ring of CPU ranks), or solver: barnes-hut"},
	{"simulation.softening_kernel", ask_gpu_spline,
	 NOT_YET "take the spline kernel on GPU ranks yet (one Plummer length only): set "
		 "simulation.backend: cpu, or softening_kernel: plummer"},
	{"simulation.softening", ask_gpu_mixed,
	 NOT_YET "take softening lengths per component on GPU ranks yet (one Plummer length "
		 "only): set simulation.backend: cpu, or drop the components' softening keys"},
	{"simulation.solver", ask_solver,
	 NOT_YET "film a series (simulation.solver: none has no forces to spread): use "
		 "simulation.ranks: replicate"},
	{"bodies.%d.model", ask_snapshot_input,
	 NOT_YET "read a snapshot beside bodies it makes yet (a scene of snapshot entries only "
		 "works: each rank reads its share): use simulation.ranks: replicate"},
	{"simulation.opening", ask_opening_mass,
	 NOT_YET "open cells by mass yet (each rank's tree knows its own mass, not the whole "
		 "system's that the angle is relative to): use bmax or com, or "
		 "simulation.ranks: replicate"},
	{"output.snapshots.files", ask_snapshot_parts,
	 "simulation.ranks: domains writes a snapshot as one part a rank (GADGET's multi-file "
	 "sets): set output.snapshots.files to the number of ranks"},
	{"output.snapshots.dir", ask_snapshot_ids,
	 NOT_YET "write snapshots of bodies read from snapshots yet (no rank holds the table of "
		 "every body's file ParticleID): set output.snapshots.dir: \"\" or use "
		 "simulation.ranks: replicate"},
	{"output.initial_state", ask_initial,
	 NOT_YET "write a state CSV yet (no rank holds every body): set output.initial_state: \"\""},
	{"output.final_state", ask_final,
	 NOT_YET "write a state CSV yet (no rank holds every body): set output.final_state: \"\""},
};

int dist_domains_gpu(const struct scene *sc)
{
	int body = -1;
	return !ask_gpu_direct(sc, SCENE_BACKEND_CUDA, &body) &&
	       !ask_gpu_spline(sc, SCENE_BACKEND_CUDA, &body) &&
	       !ask_gpu_mixed(sc, SCENE_BACKEND_CUDA, &body);
}

/* replicate: every rank steps the whole state, its stretch's forces */
static int ask_rep_individual(const struct scene *sc, int backend, int *body)
{
	(void)backend, (void)body;
	return dist_size() > 1 && sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL;
}

static const struct dom_refusal rep_refusals[] = {
	{"simulation.timesteps", ask_rep_individual,
	 "individual time steps over MPI ranks take simulation.ranks: domains (each rank steps "
	 "its own bodies' levels, on CPU or GPU ranks), not replicate; or use shared steps or "
	 "one rank"},
};

/* The first row of rows (n) that sc asks for: NB_EINPUT (logged), or 0. */
static int refuse_rows(const struct scene *sc, int backend, const struct dom_refusal *rows,
		       int n)
{
	for (int k = 0; k < n; k++) {
		const struct dom_refusal *r = &rows[k];
		int body = -1;
		if (!r->asks(sc, backend, &body))
			continue;
		char key[64];
		snprintf(key, sizeof key, r->key, body);
		return scene_fail_key(sc, key, body >= 0 && body < sc->nbodies ? body : -1, "%s",
				      r->why);
	}
	return 0;
}

int dist_ranks_refuse(const struct scene *sc, int backend_cli)
{
	const int backend = backend_cli != -1 ? backend_cli : (int)sc->simulation.backend;
	if (sc->simulation.ranks == SCENE_RANKS_DOMAINS)
		return refuse_rows(sc, backend, dom_refusals,
				   (int)(sizeof dom_refusals / sizeof dom_refusals[0]));
	return refuse_rows(sc, backend, rep_refusals,
			   (int)(sizeof rep_refusals / sizeof rep_refusals[0]));
}
