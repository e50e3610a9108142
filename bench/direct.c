/* direct.c - nbody-bench direct: the GPU all-pairs kernels, timed.
 *
 *   nbody-bench direct [--n 65536,262144,1048576] [--steps 5]
 *                      [--tiles pairwise:128x8,pairwise:128x4,gather:256x1]
 *
 * For each n: a Plummer sphere (M = 1, a = 1, sim_ic_plummer), eps = 0.1 as
 * in NVIDIA's nbody sample, one gpu_sim per kernel; creating it and one
 * step are the warm-up, then --steps leapfrog steps are timed with CUDA
 * events (gpu_sim_time_steps): the force computation alone and the whole
 * step. Prints the medians and the effective interactions per second N^2/t
 * (the pairwise kernel computes N(N-1)/2 pairs for the same N^2 effect).
 * --tiles picks kernel:shape runs (shapes as in sim/cuda/direct.cu); the
 * default is each kernel with its built-in shape for that n. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"

#define DIRECT_MAX_N 64
#define DIRECT_MAX_RUNS 16
#define DIRECT_MAX_STEPS 101

#ifdef NB_HAVE_CUDA
struct direct_run {
	enum scene_direct_kernel kernel;
	char tile[16]; /* "" = built-in */
};

static int parse_runs(const char *s, struct direct_run *out, int max)
{
	int k = 0;
	char buf[512];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *tok = strtok(buf, ","); tok && k < max; tok = strtok(NULL, ",")) {
		char *colon = strchr(tok, ':');
		if (colon)
			*colon = '\0';
		if (strcmp(tok, "pairwise") == 0)
			out[k].kernel = SCENE_DIRECT_PAIRWISE;
		else if (strcmp(tok, "gather") == 0)
			out[k].kernel = SCENE_DIRECT_GATHER;
		else
			return -1;
		snprintf(out[k].tile, sizeof out[k].tile, "%s", colon ? colon + 1 : "");
		k++;
	}
	return k;
}

/* One kernel at one n: medians into *force_ms, *step_ms. */
static int time_one(struct sim_state *st, const struct direct_run *r, int steps, double *force_ms,
		    double *step_ms, char *desc, size_t desclen)
{
	double f[DIRECT_MAX_STEPS], t[DIRECT_MAX_STEPS];
	struct sim_params p = {
		.solver = SCENE_SOLVER_DIRECT,
		.direct_kernel = r->kernel,
		.softening = 0.1,
		.dt = 1e-3,
		.theta = 0.5,
		.multipoles = 1,
	};
	struct gpu_sim *g = NULL;
	int rc;
	if (r->tile[0])
		setenv("NB_DIRECT_TILE", r->tile, 1);
	else
		unsetenv("NB_DIRECT_TILE");
	rc = gpu_sim_create(st, &p, &g); /* first force evaluation: warm-up 1 */
	if (rc == 0)
		rc = gpu_sim_advance(g, 1, 0); /* warm-up 2 */
	if (rc == 0)
		rc = gpu_sim_time_steps(g, steps, f, t);
	if (rc == 0) {
		*force_ms = bench_median(f, steps);
		*step_ms = bench_median(t, steps);
		snprintf(desc, desclen, "%s", gpu_sim_describe(g));
	}
	gpu_sim_free(&g);
	unsetenv("NB_DIRECT_TILE");
	return rc;
}
#endif

int bench_direct(int argc, char **argv)
{
	size_t ns[DIRECT_MAX_N] = {65536, 262144, 1048576};
	int nn = 3, steps = 5;
	const char *tiles = "gather,pairwise";
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
			nn = bench_parse_sizes(argv[++a], ns, DIRECT_MAX_N, 1e9);
			if (nn <= 0) {
				fprintf(stderr, "nbody-bench direct: --n %s: expected a list like 65536,262144\n",
					argv[a]);
				return 2;
			}
		} else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
			steps = atoi(argv[++a]);
			if (steps < 1 || steps >= DIRECT_MAX_STEPS) {
				fprintf(stderr, "nbody-bench direct: --steps: expected 1..%d\n",
					DIRECT_MAX_STEPS - 1);
				return 2;
			}
		} else if (strcmp(argv[a], "--tiles") == 0 && a + 1 < argc) {
			tiles = argv[++a];
		} else {
			bench_usage(stderr, "direct");
			return 2;
		}
	}
#ifndef NB_HAVE_CUDA
	(void)tiles;
	fprintf(stderr, "nbody-bench direct: this build has no CUDA support\n");
	return 1;
#else
	struct direct_run runs[DIRECT_MAX_RUNS];
	int nr = parse_runs(tiles, runs, DIRECT_MAX_RUNS);
	char why[256], name[256] = "?", date[32];
	size_t fr = 0, tot = 0;
	if (nr <= 0) {
		fprintf(stderr, "nbody-bench direct: --tiles %s: expected kernel[:NTxR],...\n", tiles);
		return 2;
	}
	if (!gpu_probe(why, sizeof why)) {
		fprintf(stderr, "nbody-bench direct: no usable GPU: %s\n", why);
		return 1;
	}
	gpu_device_info(name, sizeof name, &fr, &tot);
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
	printf("# nbody-bench direct: %s, %s, build %s; Plummer M=1 a=1, eps=0.1, fp32;\n"
	       "# median of %d steps after 2 warm-up force evaluations; N^2/t effective interactions/s\n",
	       name, date, NB_VERSION, steps);
	printf("%9s  %-16s %-7s %11s %11s %13s %13s\n", "n", "kernel", "tile", "force_ms", "step_ms",
	       "force_int/s", "step_int/s");
	for (int k = 0; k < nn; k++) {
		struct sim_state st;
		memset(&st, 0, sizeof st);
		if (sim_state_alloc(&st, ns[k], 1) != 0)
			return 1;
		sim_ic_plummer(&st, 0, ns[k], 1.0, 1.0, 20.0, 42, 0);
		for (int r = 0; r < nr; r++) {
			double fm = 0, sm = 0;
			char desc[64] = "";
			if (time_one(&st, &runs[r], steps, &fm, &sm, desc, sizeof desc) != 0) {
				sim_state_free(&st);
				return 1;
			}
			const double n2 = (double)ns[k] * (double)ns[k];
			printf("%9zu  %-16s %-7s %11.3f %11.3f %13.3e %13.3e\n", ns[k], desc,
			       runs[r].tile[0] ? runs[r].tile : "auto", fm, sm, n2 / (fm * 1e-3),
			       n2 / (sm * 1e-3));
			fflush(stdout);
		}
		sim_state_free(&st);
	}
	return 0;
#endif
}
