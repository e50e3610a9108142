/* test_dist_halo.c - adaptive smoothing lengths and dust over ranks that
 * hold their own bodies (simulation.ranks: domains; dist/halo.c,
 * render/adaptive.h's render_adaptive_h_near, _reach and _nearest, the CPU
 * renderer's dust slabs over the ranks; issue 31).
 *
 * In process (every build): the search for some query bodies among more
 * bodies equals the whole search's lengths of those bodies bit for bit,
 * and says INFINITY when too few are given; the reach boxes hold every
 * point within h of every drawn body; the k nearest bodies of points
 * outside the set are the brute-force ones; the halo scheme played by hand
 * over three 'ranks' (each its own h first, queries for the bodies whose
 * ball reaches another's cover, that rank's k nearest to each back, the
 * search over both) gives every body one process's h, while without the
 * halo a rank's h differs. Over MPI (NB_MPI_BIN and mpirun, as
 * tests/test_dist_domains.c; SKIP without): two components (one dark, not
 * drawn) on 1, 2 and 3 ranks: frames of render.smoothing: adaptive with
 * render.h_cap, and of the stars' diffuse layer with
 * render.diffuse_smoothing: adaptive (the lengths kept between recomputes
 * follow their bodies across ranks) and screen (the picture and the body
 * counts summed on rank 0, which makes the layer), equal one process's; so
 * do a dusty disk's (the depth slabs summed over the ranks, composited on
 * rank 0) with the screen layer.
 *   NB_BIN=build/nbody-render NB_MPI_BIN=build-mpi/nbody-render build/tests/test_dist_halo */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "test_mpi_util.h"
#include "render/adaptive.h"
#include "sim/sim.h"
#include "test_output_util.h"

/* snprintf into the array BUF, asserting that it fit */
#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)

/* ---- in process -------------------------------------------------------- */

/* n bodies: a dense clump and a sparse rest, a few coincident pairs and
 * every seventh not drawn. */
static void clumpy(size_t n, double *pos, unsigned char *drawn)
{
	for (size_t i = 0; i < n; i++) {
		const double s = i % 3 == 0 ? 1.0 : 0.08;
		for (int a = 0; a < 3; a++)
			pos[3 * i + a] = s * (2 * sim_rng_uniform(3, i, (uint64_t)a) - 1) +
					 (s < 1 ? 0.4 : 0);
		if (i % 50 == 49) /* coincides with the one before */
			memcpy(pos + 3 * i, pos + 3 * (i - 1), 3 * sizeof *pos);
		drawn[i] = i % 7 != 3;
	}
}

START_TEST(lengths_of_some_bodies_among_more_equal_the_whole_search)
{
	enum { N = 3000, NQ = 700, K = 12 };
	double *pos = malloc(3 * N * sizeof *pos), *h = malloc(N * sizeof *h),
	       *hq = malloc(N * sizeof *hq);
	unsigned char *drawn = malloc(N);
	clumpy(N, pos, drawn);
	ck_assert_int_eq(render_adaptive_h(pos, drawn, N, K, 0.25, h), 0);
	ck_assert_int_eq(render_adaptive_h_near(pos, drawn, N, NQ, K, 0.25, hq), 0);
	for (size_t i = 0; i < NQ; i++) {
		ck_assert_msg(memcmp(&h[i], &hq[i], sizeof *h) == 0, "body %zu: %.17g vs %.17g", i,
			      hq[i], h[i]);
		ck_assert(drawn[i] ? h[i] >= 0 && h[i] < 2 : h[i] == 0.25);
	}
	/* 5 bodies, 4 drawn, k 4: no 4th neighbour among them */
	ck_assert_int_eq(render_adaptive_h_near(pos, drawn, 5, 2, 4, 0.25, hq), 0);
	ck_assert(isinf(hq[0]) && isinf(hq[1]));
	printf("halo: %d of %d bodies' lengths equal the whole search's bit for bit\n", NQ, N);
	free(pos), free(h), free(hq), free(drawn);
}
END_TEST

/* 1 when p lies in one of the boxes */
static int in_boxes(const double *p, const double *b, int nb)
{
	for (int k = 0; k < nb; k++, b += 6)
		if (p[0] >= b[0] && p[0] <= b[3] && p[1] >= b[1] && p[1] <= b[4] && p[2] >= b[2] &&
		    p[2] <= b[5])
			return 1;
	return 0;
}

START_TEST(reach_boxes_hold_every_point_within_h_of_a_drawn_body)
{
	enum { N = 2000, K = 8, MAXB = 16 };
	double *pos = malloc(3 * N * sizeof *pos), *h = malloc(N * sizeof *h), boxes[6 * MAXB];
	unsigned char *drawn = malloc(N);
	clumpy(N, pos, drawn);
	ck_assert_int_eq(render_adaptive_h(pos, drawn, N, K, 0.25, h), 0);
	int nb = 0;
	ck_assert_int_eq(render_adaptive_reach(pos, drawn, N, h, MAXB, boxes, &nb), 0);
	ck_assert_int_eq(nb, MAXB);
	size_t far = 0;
	for (size_t i = 0; i < N; i++) {
		if (!drawn[i])
			continue;
		for (int a = 0; a < 3; a++)
			for (int s = -1; s <= 1; s += 2) { /* the sphere's extreme points */
				double q[3] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
				q[a] += s * h[i];
				ck_assert_msg(in_boxes(q, boxes, nb), "body %zu, axis %d", i, a);
			}
		double q[3] = {pos[3 * i] + 3 * h[i] + 1, pos[3 * i + 1], pos[3 * i + 2]};
		far += !in_boxes(q, boxes, nb);
	}
	ck_assert_msg(far > 0, "the boxes hold everything: no reach at all");
	double inf[N < 4 ? 1 : 4];
	for (int k = 0; k < 4; k++)
		inf[k] = INFINITY;
	ck_assert_int_eq(render_adaptive_reach(pos, NULL, 4, inf, MAXB, boxes, &nb), 0);
	const double anywhere[3] = {-1e300, 5e299, 0};
	ck_assert(nb >= 1 && in_boxes(anywhere, boxes, nb));
	free(pos), free(h), free(drawn);
}
END_TEST

/* Squared distance from p to the box (lo, hi). */
static double box_d2(const double *p, const double *b)
{
	double d2 = 0;
	for (int a = 0; a < 3; a++) {
		double g = fmax(b[a] - p[a], p[a] - b[3 + a]);
		d2 += g > 0 ? g * g : 0;
	}
	return d2;
}

START_TEST(the_nearest_bodies_of_outside_points_are_the_brute_force_ones)
{
	enum { N = 1500, NQ = 200, K = 7 };
	double *pos = malloc(3 * N * sizeof *pos), q[3 * NQ], d[N];
	unsigned char *drawn = malloc(N), *mark = calloc(N, 1), *want = calloc(N, 1);
	for (size_t i = 0; i < N; i++) {
		for (int a = 0; a < 3; a++)
			pos[3 * i + a] = (i % 2 ? 0.1 : 1.0) * (2 * sim_rng_uniform(8, i, (uint64_t)a) - 1);
		drawn[i] = i % 5 != 0;
	}
	for (size_t j = 0; j < NQ; j++) /* inside, and far outside */
		for (int a = 0; a < 3; a++)
			q[3 * j + a] = (j % 4 ? 1.2 : 9.0) * (2 * sim_rng_uniform(9, j, (uint64_t)a) - 1);
	ck_assert_int_eq(render_adaptive_nearest(pos, drawn, N, q, NQ, K, mark), 0);
	size_t marked = 0;
	for (size_t j = 0; j < NQ; j++) { /* the K smallest by selection */
		for (size_t i = 0; i < N; i++) {
			double dx = pos[3 * i] - q[3 * j], dy = pos[3 * i + 1] - q[3 * j + 1],
			       dz = pos[3 * i + 2] - q[3 * j + 2];
			d[i] = drawn[i] ? dx * dx + dy * dy + dz * dz : INFINITY;
		}
		for (int k = 0; k < K; k++) {
			size_t best = 0;
			for (size_t i = 1; i < N; i++)
				best = d[i] < d[best] ? i : best;
			want[best] = 1;
			d[best] = INFINITY;
		}
	}
	for (size_t i = 0; i < N; i++) {
		ck_assert_msg(mark[i] == want[i], "body %zu: marked %d, brute force %d", i, mark[i],
			      want[i]);
		marked += mark[i];
	}
	ck_assert(marked >= K && marked < N / 2);
	printf("halo: %zu bodies are the %d nearest of %d points, as by brute force\n", marked, K,
	       NQ);
	free(pos), free(drawn), free(mark), free(want);
}
END_TEST

/* The bodies of 'rank' r (x in [cut[r], cut[r+1])) into q, f (drawn),
 * who (index in pos); their count. */
static size_t rank_part(const double *pos, const unsigned char *drawn, size_t n,
			const double *cut, int r, double *q, unsigned char *f, size_t *who)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (pos[3 * i] >= cut[r] && pos[3 * i] < cut[r + 1]) {
			memcpy(q + 3 * m, pos + 3 * i, 3 * sizeof *q);
			f[m] = drawn[i];
			who[m++] = i;
		}
	return m;
}

/* dist/halo.c's scheme by hand over 3 'ranks' cut along x: each rank's h
 * of its own first; its drawn bodies whose ball of that radius reaches
 * another rank's cover ask that rank, which marks its K nearest drawn
 * bodies to each; the search over own + those. */
START_TEST(a_halo_by_hand_over_three_ranks_gives_one_process_lengths)
{
	enum { N = 2400, K = 10, MAXB = 64, P = 3 };
	double *pos = malloc(3 * N * sizeof *pos), *h = malloc(N * sizeof *h);
	double *q = malloc(3 * N * sizeof *q), *o = malloc(3 * N * sizeof *o),
	       *qs = malloc(3 * N * sizeof *qs);
	double *hr = malloc(N * sizeof *hr), *zero = calloc(N, sizeof *zero), boxes[6 * MAXB];
	unsigned char *drawn = malloc(N), *f = malloc(N), *fo = malloc(N), *mark = malloc(N);
	size_t *who = malloc(N * sizeof *who), *whoo = malloc(N * sizeof *whoo), differ = 0;
	clumpy(N, pos, drawn);
	ck_assert_int_eq(render_adaptive_h(pos, drawn, N, K, 0.25, h), 0);
	const double cut[P + 1] = {-INFINITY, -0.2, 0.42, INFINITY}; /* one through the clump */
	for (int r = 0; r < P; r++) {
		const size_t n = rank_part(pos, drawn, N, cut, r, q, f, who);
		size_t m = n;
		ck_assert_int_eq(render_adaptive_h_near(q, f, n, n, K, 0.25, hr), 0);
		for (size_t j = 0; j < n; j++)
			differ += hr[j] != h[who[j]];
		for (int s2 = 0; s2 < P; s2++) {
			if (s2 == r)
				continue;
			const size_t no = rank_part(pos, drawn, N, cut, s2, o, fo, whoo);
			int nb = 0;
			size_t nq = 0;
			ck_assert_int_eq(render_adaptive_reach(o, fo, no, zero, MAXB, boxes, &nb), 0);
			for (size_t j = 0; j < n; j++) /* the queries: balls reaching s2's cover */
				for (int b = 0; f[j] && b < nb; b++)
					if (box_d2(q + 3 * j, boxes + 6 * b) <= hr[j] * hr[j] * (1 + 1e-8)) {
						memcpy(qs + 3 * nq++, q + 3 * j, 3 * sizeof *qs);
						break;
					}
			memset(mark, 0, N);
			ck_assert_int_eq(render_adaptive_nearest(o, fo, no, qs, nq, K, mark), 0);
			for (size_t i = 0; i < no; i++)
				if (mark[i] && fo[i]) {
					memcpy(q + 3 * m, o + 3 * i, 3 * sizeof *q);
					f[m++] = 1;
				}
		}
		ck_assert_int_eq(render_adaptive_h_near(q, f, m, n, K, 0.25, hr), 0);
		for (size_t j = 0; j < n; j++)
			ck_assert_msg(memcmp(&hr[j], &h[who[j]], sizeof *hr) == 0,
				      "rank %d, body %zu: %.17g vs one process %.17g", r, who[j], hr[j],
				      h[who[j]]);
		ck_assert_msg(m - n < (N - n) / 2, "rank %d: a halo of %zu", r, m - n);
		printf("halo: rank %d of %d: %zu own bodies, a halo of %zu, lengths exact\n", r, P, n,
		       m - n);
	}
	ck_assert_msg(differ > 0, "no length changed by the halo: the cut tests nothing");
	printf("halo: %zu lengths differ without the halo\n", differ);
	free(pos), free(h), free(q), free(o), free(qs), free(hr), free(zero);
	free(drawn), free(f), free(fo), free(mark), free(who), free(whoo);
}
END_TEST

/* ---- program level ------------------------------------------------------ */

static char g_bin[PATH_MAX], g_mpi[PATH_MAX];

static int run_sh(const char *cmd)
{
	int ws = system(cmd);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Two Plummer spheres that pass each other, one of them dark (not drawn:
 * its bodies are no one's neighbours), the direct sum. */
static void write_two(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: nbody\nseed: 5\n"
		   "simulation: {solver: direct, softening: 0.02, dt: 0.002, backend: cpu, "
		   "steps_per_frame: 5}\n"
		   "bodies:\n"
		   "  - {name: stars, model: plummer, count: 900, mass: 0.6, scale: 0.4, "
		   "position: [-0.5, 0, 0], velocity: [0.3, 0, 0], color: [1.0, 0.8, 0.6]}\n"
		   "  - {name: dark, model: plummer, count: 700, mass: 0.4, scale: 0.8, "
		   "position: [0.5, 0, 0], velocity: [-0.3, 0, 0], color: [0, 0, 0]}\n"
		   "camera:\n  fov: 45\n  keys:\n"
		   "    - {frame: 0, position: [0, -5, 1.5], target: [0, 0, 0]}\n"
		   "render: {width: 128, height: 96, exposure: 1.0}\n"
		   "output: {frames: 5, fps: 10, video: \"\", initial_state: \"\", "
		   "final_state: \"\"}\n");
	fclose(f);
}

/* ---- over MPI ranks ---------------------------------------------------- */

#define MPIENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
#define MPIRUN MPIENV "mpirun --oversubscribe --bind-to none"

/* The largest pixel difference of run b's PNG frames from run a's. */
static int frames_maxdiff(const char *dir, const char *a, const char *b, int frames)
{
	int maxd = 0;
	for (int f = 0; f < frames; f++) {
		char pa[PATH_MAX], pb[PATH_MAX];
		FMT(pa, "%s/%s/frame_%05d.png", dir, a, f);
		FMT(pb, "%s/%s/frame_%05d.png", dir, b, f);
		int w, h, d, w2, h2, d2;
		uint16_t *x = read_png(pa, &w, &h, &d), *y = read_png(pb, &w2, &h2, &d2);
		ck_assert_msg(x && y, "%s or %s unreadable", pa, pb);
		ck_assert(w == w2 && h == h2 && d == d2);
		double sum = 0;
		for (size_t i = 0; i < (size_t)w * h * 3; i++) {
			int e = abs((int)x[i] - (int)y[i]);
			maxd = e > maxd ? e : maxd;
			sum += x[i];
		}
		ck_assert_msg(sum > 0, "%s: black", pa);
		free(x);
		free(y);
	}
	return maxd;
}

/* The scene with SETS (FRAMES frames) on one process and on 1..3 ranks in
 * domains mode: frames equal (the same lengths; the splats summed over the
 * ranks in another order: float rounding, at most 1 level; with
 * Barnes-Hut the ranks' trees differ within the tree's error too). */
static void halo_frames_match(const char *dir, const char *scene, const char *sets, int frames,
			      const char *what)
{
	char cmd[8192];
	FMT(cmd, "'%s' %s %s -q --set output.png_dir=%s/one", g_bin, scene, sets, dir);
	ck_assert_int_eq(run_sh(cmd), 0);
	for (int P = 1; P <= 3; P++) {
		FMT(cmd, MPIRUN " -np %d '%s' %s %s -q --set simulation.ranks=domains --set "
				"output.png_dir=%s/np%d > %s/np%d.log 2>&1",
		    P, g_mpi, scene, sets, dir, P, dir, P);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		char tag[16];
		FMT(tag, "np%d", P);
		int d = frames_maxdiff(dir, "one", tag, frames);
		ck_assert_msg(d <= 1, "%s, %d ranks: frames differ by %d levels", what, P, d);
		printf("halo: %s, %d ranks: frames within %d of one process's\n", what, P, d);
	}
	FMT(cmd, "rm -rf %s/one %s/np1 %s/np2 %s/np3", dir, dir, dir, dir);
	run_sh(cmd);
}

static int have_mpi(void)
{
	if (!nb_mpi_usable(g_mpi))
		return 0;
	ck_assert(realpath(nb_bin(), g_bin));
	return 1;
}

START_TEST(adaptive_frames_over_1_2_3_ranks_equal_one_process)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-halo-XXXXXX", scene[PATH_MAX], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(scene, "%s/two.yaml", dir);
	write_two(scene);
	/* lengths recomputed every 4th frame (the default), kept between:
	 * bodies migrate meanwhile and their lengths must follow them */
	halo_frames_match(dir, scene,
			  "--set render.style=smooth --set render.smoothing=adaptive --set "
			  "render.neighbours=8 --set render.h_cap=1.5",
			  5, "smooth, adaptive, h_cap 1.5");
	halo_frames_match(dir, scene,
			  "--set render.style=stars --set render.diffuse=0.5 --set "
			  "render.diffuse_smoothing=adaptive --set render.adaptive_every=2",
			  5, "stars, diffuse 0.5 adaptive");
	/* the screen layer: no lengths, made on rank 0 from the summed picture
	 * and body counts */
	halo_frames_match(dir, scene,
			  "--set render.style=stars --set render.diffuse=0.5 --set "
			  "render.diffuse_smoothing=screen",
			  3, "stars, diffuse 0.5 screen");
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* Dust absorbs: each rank deposits its bodies' light and optical depth
 * into the depth slabs (bounds over every rank's dust), rank 0 sums the
 * slabs and composites them front to back. Compositing each rank's own
 * slabs and summing the pictures instead is 118 levels off here (checked
 * by hand). A small dusty disk seen edge-on, the adaptive diffuse layer. */
START_TEST(dust_frames_over_1_2_3_ranks_equal_one_process)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-halo-XXXXXX", scene[PATH_MAX], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	ck_assert(realpath("scenes/dusty-disk.yaml", scene));
	halo_frames_match(dir, scene,
			  "--set bodies.0.disk.count=5000 --set bodies.0.bulge.count=1000 --set "
			  "bodies.0.halo.count=2500 --set render.width=160 --set render.height=96 "
			  "--set output.frames=3 --set simulation.steps_per_frame=1 --set "
			  "output.video= --set output.preview= --set output.stats= --set "
			  "simulation.backend=cpu --set render.exposure=1",
			  3, "dusty disk, diffuse screen");
	halo_frames_match(dir, scene,
			  "--set bodies.0.disk.count=5000 --set bodies.0.bulge.count=1000 --set "
			  "bodies.0.halo.count=2500 --set render.width=160 --set render.height=96 "
			  "--set output.frames=3 --set simulation.steps_per_frame=1 --set "
			  "output.video= --set output.preview= --set output.stats= --set "
			  "simulation.backend=cpu --set render.diffuse_smoothing=adaptive --set "
			  "render.exposure=1",
			  3, "dusty disk, diffuse adaptive");
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dist_halo");
	TCase *tc = tcase_create("in process");
	tcase_add_test(tc, lengths_of_some_bodies_among_more_equal_the_whole_search);
	tcase_add_test(tc, reach_boxes_hold_every_point_within_h_of_a_drawn_body);
	tcase_add_test(tc, the_nearest_bodies_of_outside_points_are_the_brute_force_ones);
	tcase_add_test(tc, a_halo_by_hand_over_three_ranks_gives_one_process_lengths);
	suite_add_tcase(s, tc);
	if (!nb_mpi_usable(NULL)) {
		printf("SKIP: MPI cases: no MPI build (NB_MPI_BIN) or no mpirun\n");
		return s;
	}
	TCase *mp = tcase_create("mpi");
	tcase_set_timeout(mp, 600);
	tcase_add_test(mp, adaptive_frames_over_1_2_3_ranks_equal_one_process);
	tcase_add_test(mp, dust_frames_over_1_2_3_ranks_equal_one_process);
	suite_add_tcase(s, mp);
	return s;
}

NB_CHECK_MAIN(make_suite)
