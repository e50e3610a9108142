/* cpu_render.c - nbody-bench cpu-render: one CPU frame of a scene's
 * bodies at frame 0, stage by stage, with no force computation (the app
 * computes the first accelerations before frame 0; this measures the
 * renderer alone, as app/renderer_cpu.c runs it for a frame that
 * recomputes h):
 *
 *   adaptive   render_adaptive_h_state (k-th neighbour h of every drawn body)
 *   splat      render_splat_h with those h (fixed smoothing: NULL h)
 *   tonemap    render_tonemap to 16-bit RGB
 *
 *   nbody-bench cpu-render --scene FILE [--set KEY=VALUE]... [--repeats 3]
 *
 * E.g. a 1M-star state file (model: file) with render.smoothing adaptive,
 * k = 32, 1080p. Each stage: wall and process CPU seconds (all threads),
 * median over --repeats after none (the first run is counted: a movie's
 * frame is a first run too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../render/adaptive.h"
#include "../render/render.h"
#include "../sim/sim.h"
#include "bench.h"

#define CR_MAXSET 32
#define CR_MAXREP 32

static double cr_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_cpu_render(int argc, char **argv)
{
	const char *path = NULL, *sets[CR_MAXSET];
	int nset = 0, reps = 3;
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "--scene") == 0 && a + 1 < argc)
			path = argv[++a];
		else if (strcmp(argv[a], "--set") == 0 && a + 1 < argc && nset < CR_MAXSET)
			sets[nset++] = argv[++a];
		else if (strcmp(argv[a], "--repeats") == 0 && a + 1 < argc)
			reps = atoi(argv[++a]);
		else {
			bench_usage(stderr, "cpu-render");
			return 2;
		}
	}
	if (!path || reps < 1 || reps > CR_MAXREP) {
		bench_usage(stderr, "cpu-render");
		return 2;
	}
	struct scene sc;
	struct sim_state st;
	struct render_camera cam;
	struct render_image img = {0};
	double *h = NULL;
	uint16_t *rgb = NULL;
	int rc = 1;
	memset(&st, 0, sizeof st);
	double t0 = log_clock_s();
	if (scene_load(path, sets, nset, &sc) != 0)
		return 2;
	if (sim_ic_build(&sc, &st) != 0 || render_camera_at(&sc, 0, &st, &cam) != 0)
		goto cleanup;
	fprintf(stderr, "cpu-render: %zu bodies loaded in %.1f s\n", st.n, log_clock_s() - t0);
	size_t px = (size_t)sc.render.width * (size_t)sc.render.height * 3;
	if (render_image_alloc(&img, sc.render.width, sc.render.height) ||
	    !(rgb = malloc(px * sizeof *rgb)) ||
	    (sc.render.smoothing_adaptive && !(h = malloc((st.n ? st.n : 1) * sizeof *h))))
		goto cleanup;
	double v[6][CR_MAXREP];
	for (int r = 0; r < reps; r++) {
		double w0 = log_clock_s(), c0 = cr_cpu_s();
		if (h && render_adaptive_h_state(&sc, &st, NULL, h))
			goto cleanup;
		double w1 = log_clock_s(), c1 = cr_cpu_s();
		render_image_clear(&img);
		if (render_splat_h(&sc, &cam, &st, NULL, h, &img))
			goto cleanup;
		double w2 = log_clock_s(), c2 = cr_cpu_s();
		render_tonemap(&sc, &img, rgb);
		double w3 = log_clock_s(), c3 = cr_cpu_s();
		v[0][r] = w1 - w0, v[1][r] = c1 - c0;
		v[2][r] = w2 - w1, v[3][r] = c2 - c1;
		v[4][r] = w3 - w2, v[5][r] = c3 - c2;
		fprintf(stderr, "cpu-render: run %d: adaptive %.3f s (cpu %.3f), splat %.3f s (cpu %.3f), tonemap %.3f s (cpu %.3f)\n",
			r, v[0][r], v[1][r], v[2][r], v[3][r], v[4][r], v[5][r]);
	}
	double med[6], tw = 0, tc = 0;
	for (int s = 0; s < 6; s++)
		med[s] = bench_median(v[s], reps);
	for (int s = 0; s < 6; s += 2)
		tw += med[s], tc += med[s + 1];
	printf("| N | size | k | adaptive wall / cpu s | splat wall / cpu s | tonemap wall / cpu s | sum wall / cpu s |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|\n");
	printf("| %zu | %dx%d | %d | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f |\n",
	       st.n, sc.render.width, sc.render.height,
	       sc.render.smoothing_adaptive ? sc.render.neighbours : 0, med[0], med[1], med[2],
	       med[3], med[4], med[5], tw, tc);
	rc = 0;
cleanup:
	if (rc)
		fprintf(stderr, "cpu-render: failed\n");
	render_image_free(&img);
	free(rgb);
	free(h);
	sim_state_free(&st);
	return rc;
}
