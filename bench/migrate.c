/* migrate.c - nbody-bench migrate: the GPU tree's body order between steps,
 * simulation.reorder migrate against sort (issue 17; sim/cuda/tree_migrate.cu).
 *
 *   nbody-bench migrate [--scene scenes/galaxy-collision.yaml]
 *                       [--frames 0,115,260,400] [--n 1000000,4000000]
 *                       [--steps 20] [--branch-bodies 1024]
 *
 * States: the scene's bodies at each of --frames (one GPU run of its steps,
 * sort, downloaded at each frame), then a Plummer sphere (M = 1, a = 1,
 * eps 0.05, dt 0.01) of each --n. For each state and each mode (sort,
 * migrate) a fresh gpu_sim from that state (scene's softening, dt, theta,
 * multipoles, opening): creation and 3 steps warm up (migrate's first
 * evaluation, at creation, rebuilds with exact quantiles: the steps after it
 * migrate unless the cube is refitted, more than n/4 bodies cross or a
 * branch doubles), then --steps steps with the tree's
 * per-stage events (one sync a step): the reorder stage's ms (ms_sort:
 * box check to gather, the whole of what migrate replaces) and the force
 * evaluation's; the movers (bodies that left their branch) and rebuilds;
 * then --steps steps timed as gpu_sim_time_steps times them (no syncs):
 * whole step. Medians. One line a state and mode:
 *   state n mode moved/step rebuilds reorder_ms force_ms step_ms maxbranch */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"
#if NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#endif

#define MG_MAX 16
#define MG_MAX_STEPS 64

#if NB_HAVE_CUDA
struct mg_opts {
	const char *scene;
	size_t frames[MG_MAX], ns[MG_MAX];
	int nf, nn, steps, branch_bodies;
};

/* One state, one mode (tuning reorder 0 sort, 1 migrate). */
static int mg_one(const char *label, const struct sim_state *st0, const struct sim_params *p0,
		  int reorder, const struct mg_opts *o)
{
	double rs[MG_MAX_STEPS], fs[MG_MAX_STEPS], f[MG_MAX_STEPS], t[MG_MAX_STEPS];
	struct sim_state st;
	struct gpu_sim *g = NULL;
	struct gpu_tree_profile pr, sum;
	struct gpu_tree_tuning tu;
	struct sim_params p = *p0;
	int rc;
	memset(&st, 0, sizeof st);
	memset(&sum, 0, sizeof sum);
	if ((rc = sim_state_alloc(&st, st0->n, 1)))
		return rc;
	memcpy(st.pos, st0->pos, 3 * st0->n * sizeof *st.pos);
	memcpy(st.vel, st0->vel, 3 * st0->n * sizeof *st.vel);
	memcpy(st.mass, st0->mass, st0->n * sizeof *st.mass);
	gpu_tree_tuning_get(&tu);
	tu.reorder = reorder;
	tu.branch_bodies = o->branch_bodies;
	gpu_tree_tuning_set(&tu);
	rc = gpu_sim_create(&st, &p, &g);
	if (rc == 0)
		rc = gpu_sim_advance(g, 3, 0);
	gpu_tree_profile_read(&pr, 1);
	gpu_tree_profile_enable(1);
	for (int s = 0; rc == 0 && s < o->steps; s++) {
		rc = gpu_sim_advance(g, 1, 0);
		gpu_tree_profile_read(&pr, 1);
		rs[s] = pr.ms_sort;
		fs[s] = pr.ms_total;
		sum.mig_moved += pr.mig_moved;
		sum.mig_bodies += pr.mig_bodies;
		sum.mig_rebuilds += pr.mig_rebuilds;
		sum.mig_refits += pr.mig_refits;
		if (pr.mig_max_branch > sum.mig_max_branch)
			sum.mig_max_branch = pr.mig_max_branch;
		sum.mig_branches = pr.mig_branches;
	}
	gpu_tree_profile_enable(0);
	if (rc == 0)
		rc = gpu_sim_time_steps(g, o->steps, f, t);
	gpu_sim_free(&g);
	gpu_tree_tuning_set(NULL);
	sim_state_free(&st);
	if (rc)
		return rc;
	if (reorder == 1)
		printf("%-12s %9zu %-7s %9.5f %4ld/%-3d %4ld %5d/%-5d %9.4f %8.3f %8.3f\n", label,
		       st0->n, "migrate", sum.mig_bodies > 0 ? sum.mig_moved / sum.mig_bodies : 0.0,
		       sum.mig_rebuilds, o->steps, sum.mig_refits, sum.mig_max_branch,
		       sum.mig_branches, bench_median(rs, o->steps), bench_median(fs, o->steps),
		       bench_median(t, o->steps));
	else
		printf("%-12s %9zu %-7s %9s %8s %4s %11s %9.4f %8.3f %8.3f\n", label, st0->n, "sort",
		       "-", "-", "-", "-", bench_median(rs, o->steps), bench_median(fs, o->steps),
		       bench_median(t, o->steps));
	fflush(stdout);
	return 0;
}

static int mg_both(const char *label, const struct sim_state *st, const struct sim_params *p,
		   const struct mg_opts *o)
{
	int rc = mg_one(label, st, p, 0, o);
	return rc ? rc : mg_one(label, st, p, 1, o);
}

static int mg_scene(const struct mg_opts *o)
{
	struct scene sc;
	struct sim_units u;
	struct sim_state st;
	struct gpu_sim *g = NULL;
	memset(&st, 0, sizeof st);
	int rc = scene_load(o->scene, NULL, 0, &sc);
	if (rc)
		return rc;
	scene_units_of(sc.units, &u);
	if ((rc = sim_ic_build(&sc, &st)))
		return rc;
	struct sim_params p = {
		.solver = SCENE_SOLVER_BARNES_HUT,
		.direct_kernel = SCENE_DIRECT_AUTO,
		.softening = scene_softening(&sc),
		.dt = sc.simulation.dt * u.time,
		.theta = sc.simulation.theta,
		.multipoles = sc.simulation.multipoles,
		.opening = sc.simulation.opening,
	};
	double t0 = log_clock_s();
	rc = gpu_sim_create(&st, &p, &g);
	long done = 0;
	for (int k = 0; rc == 0 && k < o->nf; k++) {
		long want = (long)o->frames[k] * sc.simulation.steps_per_frame;
		while (rc == 0 && done < want) {
			int s = want - done < 600 ? (int)(want - done) : 600;
			rc = gpu_sim_advance(g, s, 0);
			done += s;
		}
		if (rc == 0)
			rc = gpu_sim_download(g, &st);
		if (rc)
			break;
		char label[32];
		snprintf(label, sizeof label, "frame %zu", o->frames[k]);
		rc = mg_both(label, &st, &p, o);
	}
	gpu_sim_free(&g);
	sim_state_free(&st);
	printf("# %s: %.1f s in all\n", o->scene, log_clock_s() - t0);
	return rc;
}

static int mg_plummer(size_t n, const struct mg_opts *o)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	int rc = sim_state_alloc(&st, n, 1);
	if (rc)
		return rc;
	sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20.0, 1, 0);
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT,
				   .direct_kernel = SCENE_DIRECT_AUTO,
				   .softening = 0.05,
				   .dt = 0.01,
				   .theta = 0.5,
				   .multipoles = 2,
				   .opening = SCENE_OPENING_BMAX};
	rc = mg_both("plummer", &st, &p, o);
	sim_state_free(&st);
	return rc;
}
#endif

#if NB_HAVE_CUDA
/* "0,115,260" (frames may be 0; bench_parse_sizes refuses it): count or -1. */
static int mg_parse_frames(const char *s, size_t *out)
{
	int k = 0;
	while (*s && k < MG_MAX) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 0 || v > 1000000 || (*end && *end != ','))
			return -1;
		out[k++] = (size_t)v;
		s = *end == ',' ? end + 1 : end;
	}
	return k;
}
#endif

int bench_migrate(int argc, char **argv)
{
#if NB_HAVE_CUDA
	struct mg_opts o = {.scene = "scenes/galaxy-collision.yaml",
			    .frames = {0, 115, 260, 400},
			    .ns = {1000000, 4000000},
			    .nf = 4,
			    .nn = 2,
			    .steps = 20,
			    .branch_bodies = 1024};
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "--scene") == 0 && a + 1 < argc) {
			o.scene = argv[++a];
		} else if (strcmp(argv[a], "--frames") == 0 && a + 1 < argc) {
			if ((o.nf = mg_parse_frames(argv[++a], o.frames)) < 0)
				goto usage;
		} else if (strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
			if ((o.nn = bench_parse_sizes(argv[++a], o.ns, MG_MAX, 2.6e8)) < 0)
				goto usage;
		} else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
			o.steps = atoi(argv[++a]);
			if (o.steps < 1 || o.steps > MG_MAX_STEPS)
				goto usage;
		} else if (strcmp(argv[a], "--branch-bodies") == 0 && a + 1 < argc) {
			o.branch_bodies = atoi(argv[++a]);
			if (o.branch_bodies < 1)
				goto usage;
		} else {
			goto usage;
		}
	}
	char why[256];
	if (!gpu_probe(why, sizeof why)) {
		fprintf(stderr, "nbody-bench migrate: no usable GPU: %s\n", why);
		return 1;
	}
	printf("# reorder: sort (CUB radix sort every step) vs migrate (movers only, then a sort "
	       "within branches); %d steps after 3 of warm-up, medians; branch_bodies %d\n",
	       o.steps, o.branch_bodies);
	printf("%-12s %9s %-7s %9s %8s %4s %11s %9s %8s %8s\n", "state", "n", "mode", "moved",
	       "rebuilds", "refit", "maxbr/nbr", "reorder", "force", "step");
	printf("%-12s %9s %-7s %9s %8s %4s %11s %9s %8s %8s\n", "", "", "", "/step", "", "", "",
	       "ms", "ms", "ms");
	int rc = 0;
	if (o.nf > 0 && o.scene[0])
		rc = mg_scene(&o);
	for (int k = 0; rc == 0 && k < o.nn; k++)
		rc = mg_plummer(o.ns[k], &o);
	return rc ? 1 : 0;
usage:
	bench_usage(stderr, "migrate");
	return 2;
#else
	(void)argc, (void)argv;
	printf("SKIP: built without CUDA\n");
	return 0;
#endif
}
