/* bh.c - nbody-bench bh and bh-accuracy: the GPU Barnes-Hut tree, timed and
 * held against the GPU direct sum.
 *
 *   nbody-bench bh [--n 1000000,4000000,16000000] [--steps 7]
 *                  [--configs ecl,com,default,fast] [--accuracy-max 4000000]
 *                  [--scene FILE.yaml --frames F]
 *   nbody-bench bh-accuracy [--n 1000000] [--criterion bmax|bh|mass]
 *
 * bh: for each n, a Plummer sphere (M = 1, a = 1, sim_ic_plummer), eps =
 * 0.05. For each config a gpu_sim (solver barnes-hut): creation and two
 * steps warm up, then --steps leapfrog steps timed with CUDA events
 * (gpu_sim_time_steps: whole step and force), then --steps more with the
 * tree's per-stage events on (one sync per step). Medians are printed;
 * integrate = step - force. Then one more tree evaluation at the initial
 * positions counts interactions and, for n <= --accuracy-max, is compared
 * with gpu_direct_accel: median and 99th percentile of
 * |a_tree - a_direct| / |a_direct| over all bodies.
 * --scene: instead of Plummer spheres, the scene's bodies (its initial
 * conditions, softening and dt) after F frames of its steps on the GPU
 * (default tuning), e.g. a galaxy merger in progress.
 * A config is a name or
 * THETA:MULTIPOLES:CRITERION:LEAF:LANES[:GMAX[:BLOCKS[:RATIO[:LEAFP2P[:SPREAD]]]]],
 * e.g. 0.55:2:bmax:16:1 (GMAX: walk groups from nodes of at most GMAX
 * bodies, 0 = default; BLOCKS: walk blocks per multiprocessor, default as
 * many as fit; RATIO: gpu_tree_tuning.local_ratio, far cells through the
 * group's local expansion, 0 = never; LEAFP2P: leaf_p2p; SPREAD:
 * local_spread; these default to the tuning's defaults). Names: ecl = 0.5:1:bh:16:1 (ECL-BH's settings),
 * default = 0.5:2:bmax:16:1 (the scene defaults), com = 0.5:2:bh:16:1
 * (simulation.opening: com), fast = 0.55:2:bmax:16:1. Criterion bh is the
 * scene's opening com; mass is Dehnen's (2002) theta(M) (sim/cuda/tree_api.h,
 * GPU_TREE_CRIT_MASS), THETA its theta0, e.g. 0.33:2:mass:16:1.
 * Speed-up variants (issue 30; gpu_tree_tuning in sim/cuda/tree_api.h), as
 * suffixes of any config, e.g. default+r4, default+m1.6, fast+r4+m1.6+g:
 *   +rK  refit_every K: the tree is rebuilt every K steps and refitted
 *        between. Its error is measured where it is largest, at the last
 *        refit before the next build: the bodies K-1 steps on (default
 *        tuning), their forces from the tree built at the start and
 *        refitted there (gpu_tree_accel_refit), against the direct sum at
 *        those positions (columns "refit err"); the step column "mean" is
 *        then the one to read (use --steps a multiple of K).
 *   +mF  mono_factor F >= 1: near cells beyond F times their opening radius
 *        take the monopole only.
 *   +g   graph_stages: the build's and moments' ~45 launches a step
 *        replayed as two CUDA graphs.
 *
 * bh-accuracy: the error table for theta in {0.3, 0.5, 0.7, 0.9} (and 0),
 * monopole and quadrupole, on a Plummer sphere (eps = 0.05) and on two disk
 * galaxies (disk, bulge, halo each) approaching on a parabolic orbit
 * (galactic units, the scene's default eps of 0.1 kpc). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"
#if NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#endif

#define BH_MAX_N 16
#define BH_MAX_CONFIGS 24
#define BH_MAX_STEPS 64

#if NB_HAVE_CUDA
/* The bodies of a scene after `frames` frames of its steps on the GPU
 * (scene's softening, dt, theta, multipoles, opening; default tuning);
 * eps and dt in internal units. 0 or an error code (logged). */
static int scene_state(const char *path, int frames, struct sim_state *st, double *eps, double *dt)
{
	struct scene sc;
	struct sim_units u;
	struct gpu_sim *g = NULL;
	int rc = scene_load(path, NULL, 0, &sc);
	if (rc)
		return rc;
	scene_units_of(sc.units, &u);
	*eps = scene_softening(&sc);
	*dt = sc.simulation.dt * u.time;
	if ((rc = sim_ic_build(&sc, st)))
		return rc;
	struct sim_params p = {
		.solver = SCENE_SOLVER_BARNES_HUT,
		.direct_kernel = SCENE_DIRECT_AUTO,
		.softening = *eps,
		.dt = *dt,
		.theta = sc.simulation.theta,
		.multipoles = sc.simulation.multipoles,
		.opening = sc.simulation.opening,
	};
	long steps = (long)frames * sc.simulation.steps_per_frame;
	double t0 = log_clock_s();
	rc = gpu_sim_create(st, &p, &g);
	for (long s = 0; rc == 0 && s < steps; s += 600)
		rc = gpu_sim_advance(g, (int)(steps - s < 600 ? steps - s : 600), 0);
	if (rc == 0)
		rc = gpu_sim_download(g, st);
	gpu_sim_free(&g);
	printf("# %s: %zu bodies after %d frames (%ld steps, %.2f s on the GPU with the default "
	       "tuning, creation included)\n",
	       path, st->n, frames, steps, log_clock_s() - t0);
	return rc;
}

struct bh_config {
	char name[48];
	double theta;
	int multipoles;
	struct gpu_tree_tuning tu;
};

/* The variant suffixes of a config (+rK, +mF; see the top) into tu; the
 * base is cut off at the first '+'. 0 or -1. */
static int parse_variants(char *tok, struct gpu_tree_tuning *tu)
{
	char *v = strchr(tok, '+');
	if (!v)
		return 0;
	*v++ = 0;
	for (char *next; v; v = next) {
		next = strchr(v, '+');
		if (next)
			*next++ = 0;
		if (!v[0])
			return -1;
		if (strcmp(v, "g") == 0) {
			tu->graph_stages = 1;
			continue;
		}
		char *end = NULL;
		double x = strtod(v + 1, &end);
		if (end == v + 1 || *end)
			return -1;
		if (v[0] == 'r' && x >= 1 && x <= 1000 && x == (int)x)
			tu->refit_every = (int)x;
		else if (v[0] == 'm' && x >= 1 && x < 1000)
			tu->mono_factor = (float)x;
		else
			return -1;
	}
	return 0;
}

static int parse_config(const char *name, struct bh_config *c)
{
	char crit[16] = "", base[48];
	gpu_tree_tuning_get(&c->tu);
	c->tu.count_interactions = 0;
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(base, sizeof base, "%s", name);
	if (parse_variants(base, &c->tu))
		return -1;
	const char *tok = base;
	if (strcmp(tok, "ecl") == 0)
		tok = "0.5:1:bh:16:1";
	else if (strcmp(tok, "default") == 0)
		tok = "0.5:2:bmax:16:1";
	else if (strcmp(tok, "com") == 0)
		tok = "0.5:2:bh:16:1";
	else if (strcmp(tok, "fast") == 0)
		tok = "0.55:2:bmax:16:1";
	int got = sscanf(tok, "%lf:%d:%15[a-z]:%d:%d:%d:%d:%f:%d:%d", &c->theta, &c->multipoles,
			 crit, &c->tu.leaf_size, &c->tu.lanes, &c->tu.group_max,
			 &c->tu.walk_blocks_per_sm, &c->tu.local_ratio, &c->tu.leaf_p2p,
			 &c->tu.local_spread);
	if (got < 5)
		return -1;
	if (strcmp(crit, "bh") == 0)
		c->tu.criterion = GPU_TREE_CRIT_BH;
	else if (strcmp(crit, "bmax") == 0)
		c->tu.criterion = GPU_TREE_CRIT_BMAX;
	else if (strcmp(crit, "mass") == 0)
		c->tu.criterion = GPU_TREE_CRIT_MASS;
	else
		return -1;
	if (c->tu.refit_every > 1 && c->tu.criterion != GPU_TREE_CRIT_BMAX)
		return -1; /* a refit needs bmax (gpu_tree_compute_ex) */
	if (c->theta < 0 || (c->multipoles != 1 && c->multipoles != 2) || c->tu.leaf_size < 1 ||
	    c->tu.leaf_size > 64 || (c->tu.lanes != 1 && c->tu.lanes != 2))
		return -1;
	return 0;
}

/* Median and 99th percentile of |a - ref| / |ref|; max too if wanted. */
static int error_stats(const double *a, const double *ref, size_t n, double *med, double *p99,
		       double *max)
{
	double *e = malloc(n * sizeof *e);
	if (!e)
		return -1;
	for (size_t i = 0; i < n; i++) {
		double d2 = 0, r2 = 0;
		for (int k = 0; k < 3; k++) {
			double d = a[3 * i + k] - ref[3 * i + k];
			d2 += d * d, r2 += ref[3 * i + k] * ref[3 * i + k];
		}
		e[i] = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
	}
	qsort(e, n, sizeof *e, bench_cmp_double);
	*med = e[n / 2];
	*p99 = e[(size_t)(0.99 * (double)(n - 1))];
	if (max)
		*max = e[n - 1];
	free(e);
	return 0;
}

/* One tree evaluation with interaction counting: per-body counts, and
 * the error against ref (ref may be NULL). */
static int tree_eval(const struct sim_state *st, double eps, double theta, int mp,
		     const struct gpu_tree_tuning *tu, const double *ref, double *acc, double *p2p,
		     double *m2p, double *m2l, double *med, double *p99, double *max)
{
	struct gpu_tree_tuning keep, t = *tu;
	struct gpu_tree_profile pr;
	gpu_tree_tuning_get(&keep);
	t.count_interactions = 1;
	gpu_tree_tuning_set(&t);
	gpu_tree_profile_read(&pr, 1);
	gpu_tree_profile_enable(1);
	int rc = gpu_tree_accel(st->pos, st->mass, st->n, eps, theta, mp, acc, NULL);
	gpu_tree_profile_enable(0);
	gpu_tree_profile_read(&pr, 1);
	gpu_tree_tuning_set(&keep);
	if (rc)
		return rc;
	*p2p = pr.p2p / (double)st->n;
	*m2p = pr.m2p / (double)st->n;
	*m2l = pr.m2l / (double)st->n;
	*med = *p99 = NAN;
	if (max)
		*max = NAN;
	if (ref && error_stats(acc, ref, st->n, med, p99, max))
		return NB_ERUNTIME;
	return 0;
}

/* The bodies K-1 steps on and their direct forces, for the refit
 * variants' error (computed once per size and K). */
struct bh_refit_ref {
	int k;
	struct sim_state st;
	double *ref;
};

static void refit_ref_free(struct bh_refit_ref *r)
{
	sim_state_free(&r->st);
	free(r->ref);
	memset(r, 0, sizeof *r);
}

/* r for st and K (kept when r->k is K already): K-1 shared leapfrog steps
 * of dt with the default tree tuning, then the direct sum. 0 or error. */
static int refit_ref_make(const struct sim_state *st, int k, double eps, double dt,
			  struct bh_refit_ref *r)
{
	if (r->k == k)
		return 0;
	refit_ref_free(r);
	struct gpu_tree_tuning keep;
	struct gpu_sim *g = NULL;
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT, .direct_kernel = SCENE_DIRECT_AUTO,
			       .softening = eps, .dt = dt, .theta = 0.5, .multipoles = 2,
			       .opening = SCENE_OPENING_BMAX};
	gpu_tree_tuning_get(&keep);
	gpu_tree_tuning_set(NULL);
	int rc = sim_state_alloc(&r->st, st->n, 1);
	if (rc == 0)
		rc = gpu_sim_create(st, &p, &g);
	if (rc == 0)
		rc = gpu_sim_advance(g, k - 1, 0);
	if (rc == 0)
		rc = gpu_sim_download(g, &r->st);
	gpu_sim_free(&g);
	gpu_tree_tuning_set(&keep);
	if (rc == 0 && !(r->ref = malloc(3 * st->n * sizeof *r->ref)))
		rc = NB_ERUNTIME;
	if (rc == 0)
		rc = gpu_direct_accel(r->st.pos, r->st.mass, st->n, eps, SCENE_DIRECT_AUTO, r->ref, NULL);
	if (rc)
		refit_ref_free(r);
	else
		r->k = k;
	return rc;
}

/* The refit variant's error (see the top): median and 99th, NAN without
 * a direct sum or refit. 0 or an error code. */
static int refit_error(const struct sim_state *st, const struct bh_config *c, double eps,
		       double dt, int have_ref, struct bh_refit_ref *r, double *acc, double *med,
		       double *p99)
{
	*med = *p99 = NAN;
	if (c->tu.refit_every < 2 || !have_ref)
		return 0;
	struct gpu_tree_tuning keep;
	int rc = refit_ref_make(st, c->tu.refit_every, eps, dt, r);
	if (rc)
		return rc;
	gpu_tree_tuning_get(&keep);
	gpu_tree_tuning_set(&c->tu);
	rc = gpu_tree_accel_refit(st->pos, r->st.pos, st->mass, st->n, eps, c->theta, c->multipoles,
				  acc);
	gpu_tree_tuning_set(&keep);
	if (rc == 0 && error_stats(acc, r->ref, st->n, med, p99, NULL))
		rc = NB_ERUNTIME;
	return rc;
}

static double mean_of(const double *v, int n)
{
	double s = 0;
	for (int k = 0; k < n; k++)
		s += v[k];
	return n > 0 ? s / n : NAN;
}

static int bh_one(struct sim_state *st, const struct bh_config *c, int steps, const double *ref,
		  double *acc, double eps, double dt, struct bh_refit_ref *rr)
{
	double f[BH_MAX_STEPS], t[BH_MAX_STEPS], sb[BH_MAX_STEPS], ss[BH_MAX_STEPS],
		sd[BH_MAX_STEPS], sm[BH_MAX_STEPS], sw[BH_MAX_STEPS];
	struct sim_params p = {
		.solver = SCENE_SOLVER_BARNES_HUT,
		.direct_kernel = SCENE_DIRECT_AUTO,
		.softening = eps,
		.dt = dt,
		.theta = c->theta,
		.multipoles = c->multipoles,
		.opening = c->tu.criterion == GPU_TREE_CRIT_BH     ? SCENE_OPENING_COM
			   : c->tu.criterion == GPU_TREE_CRIT_MASS ? SCENE_OPENING_MASS
								   : SCENE_OPENING_BMAX,
	};
	struct gpu_tree_profile pr;
	struct gpu_sim *g = NULL;
	const size_t n = st->n;
	gpu_tree_tuning_set(&c->tu);
	int rc = gpu_sim_create(st, &p, &g);
	if (rc == 0)
		rc = gpu_sim_advance(g, 2, 0);
	if (rc == 0)
		rc = gpu_sim_time_steps(g, steps, f, t);
	gpu_tree_profile_read(&pr, 1);
	gpu_tree_profile_enable(1);
	for (int s = 0; rc == 0 && s < steps; s++) {
		rc = gpu_sim_advance(g, 1, 0);
		gpu_tree_profile_read(&pr, 1);
		sb[s] = pr.ms_bbox, ss[s] = pr.ms_sort, sd[s] = pr.ms_build;
		sm[s] = pr.ms_moments, sw[s] = pr.ms_walk;
	}
	gpu_tree_profile_enable(0);
	long nodes = pr.nodes_max;
	int overflow = pr.overflow, wblocks = pr.walk_blocks, wfit = pr.walk_fit_per_sm;
	double gsize = pr.groups > 0 ? (double)n / (double)pr.groups : 0;
	size_t tree_bytes = pr.bytes, all_bytes = gpu_sim_bytes_needed(n, &p);
	gpu_sim_free(&g);
	if (rc)
		return rc;
	double p2p, m2p, m2l, med, p99, rmed, rp99;
	rc = tree_eval(st, eps, c->theta, c->multipoles, &c->tu, ref, acc, &p2p, &m2p, &m2l, &med,
		       &p99, NULL);
	if (rc == 0)
		rc = refit_error(st, c, eps, dt, ref != NULL, rr, acc, &rmed, &rp99);
	if (rc)
		return rc;
	double mean = mean_of(t, steps);
	double step = bench_median(t, steps), force = bench_median(f, steps);
	printf("%10zu %-22s %8.2f %8.2f %8.2f | %6.3f %6.3f %6.3f %6.3f %7.2f %6.3f | %6.0f %6.0f "
	       "%6.0f | %8.2e %8.2e | %8.2e %8.2e | %5.1f %5.1f %5.3f %5.1f %5d/%d%s\n",
	       n, c->name, step, mean, force, bench_median(sb, steps), bench_median(ss, steps),
	       bench_median(sd, steps), bench_median(sm, steps), bench_median(sw, steps), step - force,
	       p2p, m2p, m2l, med, p99, rmed, rp99, (double)tree_bytes / n, (double)all_bytes / n,
	       (double)nodes / n, gsize, wblocks, wfit, overflow ? " (node cap reached)" : "");
	fflush(stdout);
	return 0;
}
#endif

/* nbody-bench bh's options. */
struct bh_opts {
	size_t ns[BH_MAX_N];
	int nn, steps;
	size_t acc_max;
	const char *configs, *scene;
	int frames, ncu;
};

/* Parse ARGV into O. 0, or 2 (bad usage, reported). */
static int bh_parse_args(int argc, char **argv, struct bh_opts *o)
{
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
			if ((o->nn = bench_parse_sizes(argv[++a], o->ns, BH_MAX_N, 3e8)) <= 0) {
				fprintf(stderr, "nbody-bench bh: --n %s: expected a list like 1000000,4000000\n",
					argv[a]);
				return 2;
			}
		} else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
			o->steps = atoi(argv[++a]);
			if (o->steps < 1 || o->steps > BH_MAX_STEPS) {
				fprintf(stderr, "nbody-bench bh: --steps: expected 1..%d\n", BH_MAX_STEPS);
				return 2;
			}
		} else if (strcmp(argv[a], "--configs") == 0 && a + 1 < argc) {
			o->configs = argv[++a];
		} else if (strcmp(argv[a], "--accuracy-max") == 0 && a + 1 < argc) {
			o->acc_max = (size_t)strtod(argv[++a], NULL);
		} else if (strcmp(argv[a], "--scene") == 0 && a + 1 < argc) {
			o->scene = argv[++a];
			o->nn = 1;
		} else if (strcmp(argv[a], "--frames") == 0 && a + 1 < argc) {
			o->frames = atoi(argv[++a]);
		} else if (strcmp(argv[a], "--ncu") == 0) {
			o->ncu = 1; /* profile (cudaProfilerStart) one tree evaluation per config */
		} else {
			bench_usage(stderr, "bh");
			return 2;
		}
	}
	return 0;
}

#if NB_HAVE_CUDA
/* The device line and the column headings. 0, or 1 without a GPU. */
static int bh_header(const struct bh_opts *o)
{
	char why[256], name[256];
	size_t fr = 0, tot = 0;
	if (!gpu_probe(why, sizeof why)) {
		fprintf(stderr, "nbody-bench bh: no usable GPU: %s\n", why);
		return 1;
	}
	if (gpu_device_info(name, sizeof name, &fr, &tot) == 0)
		printf("# %s, %.1f GiB free of %.1f; %s%s; medians of %d steps\n", name,
		       fr / 1073741824.0, tot / 1073741824.0,
		       o->scene ? "scene " : "Plummer sphere, eps 0.05", o->scene ? o->scene : "",
		       o->steps);
	printf("# config THETA:MULTIPOLES:CRITERION:LEAF:LANES; stage columns in ms; interactions per "
	       "body; error |a-a_direct|/|a_direct|; bytes per body (tree, whole sim); nodes per body; "
	       "bodies per walk group; walk blocks/fit per SM\n");
	printf("# step: median, mean: the mean (read it for +rK); refit err: at the last refit "
	       "before a build (+rK only); M2P counts monopole-only cells (+mF) too\n");
	printf("%10s %-22s %8s %8s %8s | %6s %6s %6s %6s %7s %6s | %6s %6s %6s | %8s %8s | %8s %8s | "
	       "%5s %5s %5s %5s %s\n",
	       "n", "config", "step", "mean", "force", "bbox", "sort", "build", "moment", "walk", "integ",
	       "P2P", "M2P", "local", "err med", "err p99", "refit md", "refit 99", "B/bd", "B/all",
	       "nodes", "grp", "walk grid/fit");
	return 0;
}

/* Every config at size N (or the scene's bodies). 0, or 1 (reported). */
static int bh_size(const struct bh_opts *o, const struct bh_config *cfg, int nc, size_t n)
{
	struct sim_state st;
	double eps = 0.05, dt = 1e-3;
	int rc = 0;
	memset(&st, 0, sizeof st);
	if (o->scene) {
		if (scene_state(o->scene, o->frames, &st, &eps, &dt))
			return 1;
		n = st.n;
	} else if (sim_state_alloc(&st, n, 1) == 0) {
		sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20.0, 42, 0);
	}
	double *ref = NULL, *acc = malloc(3 * n * sizeof *acc);
	if (!acc || !st.pos) {
		fprintf(stderr, "nbody-bench bh: out of host memory for %zu bodies\n", n);
		free(acc);
		return 1;
	}
	if (n <= o->acc_max) {
		ref = malloc(3 * n * sizeof *ref);
		if (!ref || gpu_direct_accel(st.pos, st.mass, n, eps, SCENE_DIRECT_AUTO, ref, NULL)) {
			free(ref);
			ref = NULL;
		}
	}
	struct bh_refit_ref rr;
	memset(&rr, 0, sizeof rr);
	for (int c = 0; c < nc && rc == 0; c++) {
		rc = bh_one(&st, &cfg[c], o->steps, ref, acc, eps, dt, &rr);
		if (rc == 0 && o->ncu) { /* one more evaluation, between profiler marks */
			struct gpu_tree_tuning keep;
			gpu_tree_tuning_get(&keep);
			gpu_tree_tuning_set(&cfg[c].tu);
			gpu_tree_profiler_mark(1);
			rc = gpu_tree_accel(st.pos, st.mass, n, eps, cfg[c].theta, cfg[c].multipoles,
					    acc, NULL);
			gpu_tree_profiler_mark(0);
			gpu_tree_tuning_set(&keep);
		}
	}
	refit_ref_free(&rr);
	free(ref);
	free(acc);
	sim_state_free(&st);
	return rc ? 1 : 0;
}
#endif

int bench_bh(int argc, char **argv)
{
	struct bh_opts o = {.ns = {1000000, 4000000, 16000000}, .nn = 3, .steps = 7,
			    .acc_max = 4000000, .configs = "ecl,com,default,fast"};
	int rc = bh_parse_args(argc, argv, &o);
	if (rc)
		return rc;
#if !NB_HAVE_CUDA
	fprintf(stderr, "nbody-bench bh: this build has no CUDA support\n");
	return 1;
#else
	struct bh_config cfg[BH_MAX_CONFIGS];
	int nc = 0;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", o.configs);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		if (nc == BH_MAX_CONFIGS || parse_config(tok, &cfg[nc])) {
			fprintf(stderr, "nbody-bench bh: --configs: bad or too many entries at '%s'\n", tok);
			return 2;
		}
		nc++;
	}
	if (bh_header(&o))
		return 1;
	for (int k = 0; k < o.nn && rc == 0; k++)
		rc = bh_size(&o, cfg, nc, o.ns[k]);
	return rc ? 1 : 0;
#endif
}

#if NB_HAVE_CUDA
/* Two disk galaxies on a parabolic encounter, n bodies in all. */
static int two_galaxies(size_t n, struct sim_state *st, double *eps)
{
	char y[1024];
	long d = (long)(n / 5), b = (long)(n / 20), h = (long)(n / 2) - d - b;
	snprintf(y, sizeof y,
		 "units: galactic\nseed: 3\nsimulation: {solver: barnes-hut}\nbodies:\n"
		 "  - {name: a, model: disk-galaxy, disk: {count: %ld}, bulge: {count: %ld}, halo: "
		 "{count: %ld}}\n"
		 "  - {name: b, model: disk-galaxy, disk: {count: %ld}, bulge: {count: %ld}, halo: "
		 "{count: %ld}}\n"
		 "encounter: {pericenter: 10, separation: 50}\n",
		 d, b, h, d, b, h);
	struct scene sc;
	struct sim_units u;
	int rc = scene_load_string(y, "two-galaxies", ".", NULL, 0, &sc);
	if (rc)
		return rc;
	scene_units_of(sc.units, &u);
	*eps = scene_softening(&sc);
	memset(st, 0, sizeof *st);
	return sim_ic_build(&sc, st);
}
#endif

#if NB_HAVE_CUDA
/* The accuracy table's rows for SCENE (0: Plummer, 1: two galaxies) of N
 * bodies. 0 or an error code. */
static int accuracy_scene(int scene, size_t n, const struct gpu_tree_tuning *tu)
{
	const double thetas[] = {0.0, 0.3, 0.5, 0.55, 0.6, 0.7, 0.9};
	struct sim_state st;
	double eps = 0.05;
	int rc;
	if (scene == 0) {
		rc = sim_state_alloc(&st, n, 1);
		if (rc == 0)
			sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20.0, 42, 0);
	} else {
		rc = two_galaxies(n, &st, &eps);
	}
	if (rc)
		return rc;
	double *ref = malloc(3 * st.n * sizeof *ref), *acc = malloc(3 * st.n * sizeof *acc);
	if (!ref || !acc)
		rc = NB_ERUNTIME;
	if (rc == 0)
		rc = gpu_direct_accel(st.pos, st.mass, st.n, eps, SCENE_DIRECT_AUTO, ref, NULL);
	for (int mp = 1; mp <= 2 && rc == 0; mp++) {
		for (int k = 0; k < 7 && rc == 0; k++) {
			if (k == 0 && mp == 1)
				continue; /* theta 0 is the same sum for both */
			double p2p, m2p, m2l, med, p99, max;
			rc = tree_eval(&st, eps, thetas[k], mp, tu, ref, acc, &p2p, &m2p, &m2l, &med,
				       &p99, &max);
			if (rc == 0)
				printf("%-12s %9zu %3d %5.2f | %9.3e %9.3e %9.3e | %7.0f %7.0f %7.0f\n",
				       scene ? "two-galaxy" : "plummer", st.n, mp, thetas[k], med, p99,
				       max, p2p, m2p, m2l);
			fflush(stdout);
		}
	}
	free(ref);
	free(acc);
	sim_state_free(&st);
	return rc;
}
#endif

int bench_bh_accuracy(int argc, char **argv)
{
	size_t n = 1000000;
	int crit = 1; /* bmax, the scene default */
	double ratio = -1;
	int leaf_p2p = -1;
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
			n = (size_t)strtod(argv[++a], NULL);
		} else if (strcmp(argv[a], "--criterion") == 0 && a + 1 < argc) {
			a++;
			/* enum gpu_tree_criterion's values (tree_api.h: CUDA builds only) */
			if (strcmp(argv[a], "bh") == 0 || strcmp(argv[a], "com") == 0)
				crit = 0;
			else
				crit = strcmp(argv[a], "mass") == 0 ? 2 : 1;
		} else if (strcmp(argv[a], "--local") == 0 && a + 1 < argc) {
			ratio = atof(argv[++a]);
		} else if (strcmp(argv[a], "--leaf-p2p") == 0 && a + 1 < argc) {
			leaf_p2p = atoi(argv[++a]);
		} else {
			bench_usage(stderr, "bh-accuracy");
			return 2;
		}
	}
	if (n < 2 || n > 50000000) {
		fprintf(stderr, "nbody-bench bh-accuracy: --n: expected 2..5e7\n");
		return 2;
	}
#if !NB_HAVE_CUDA
	(void)crit, (void)ratio, (void)leaf_p2p;
	fprintf(stderr, "nbody-bench bh-accuracy: this build has no CUDA support\n");
	return 1;
#else
	char why[256];
	if (!gpu_probe(why, sizeof why)) {
		fprintf(stderr, "nbody-bench bh-accuracy: no usable GPU: %s\n", why);
		return 1;
	}
	struct gpu_tree_tuning tu;
	gpu_tree_tuning_get(&tu);
	tu.criterion = crit;
	if (ratio >= 0)
		tu.local_ratio = (float)ratio;
	if (leaf_p2p >= 0)
		tu.leaf_p2p = leaf_p2p;
	printf("# |a_tree - a_direct| / |a_direct| over all bodies; direct = gpu_direct_accel; "
	       "criterion %s, leaf %d, groups of %d, local ratio %g, leaf_p2p %d\n",
	       crit == GPU_TREE_CRIT_MASS ? "mass" : crit ? "bmax" : "bh", tu.leaf_size, 32 * tu.lanes, tu.local_ratio, tu.leaf_p2p);
	printf("%-12s %9s %3s %5s | %9s %9s %9s | %7s %7s %7s\n", "scene", "n", "mp", "theta",
	       "median", "99th", "max", "P2P/bd", "M2P/bd", "local");
	int rc = 0;
	for (int scene = 0; scene < 2 && rc == 0; scene++)
		rc = accuracy_scene(scene, n, &tu);
	return rc ? 1 : 0;
#endif
}
