/* test_adaptive.c - adaptive smoothing lengths on the CPU (render/adaptive.c)
 * against a brute-force k-nearest-neighbour search: exact equality, on
 * uniform, clustered, flat, coincident and non-finite point sets, with
 * some bodies not drawn (dark), and independence of the thread count. Also
 * the state wrapper's units and its drawn rule (black components).
 *
 * Run: make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_adaptive && /tmp/b/tests/test_adaptive */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/adaptive.h"

/* Brute force: sort all squared distances to the other drawn finite points
 * and take the k_eff-th, formed as dx*dx + dy*dy + dz*dz like any direct
 * search. drawn NULL: all. */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int usable(const double *pos, const unsigned char *drawn, size_t i)
{
	const double *p = pos + 3 * i;
	return (!drawn || drawn[i]) && isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static void brute_h(const double *pos, const unsigned char *drawn, size_t n, int k,
		    double fallback, double *h)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		m += usable(pos, drawn, i);
	long keff = (long)m - 1 < k ? (long)m - 1 : k;
	double *d = malloc((n ? n : 1) * sizeof *d);
	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < n; i++) {
		const double *p = pos + 3 * i;
		if (keff < 1 || !usable(pos, drawn, i)) {
			h[i] = fallback;
			continue;
		}
		size_t c = 0;
		for (size_t j = 0; j < n; j++) {
			const double *q = pos + 3 * j;
			if (j == i || !usable(pos, drawn, j))
				continue;
			double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
			d[c++] = dx * dx + dy * dy + dz * dz;
		}
		qsort(d, c, sizeof *d, cmp_d);
		h[i] = sqrt(d[keff - 1]);
	}
	free(d);
}

static void expect_exact_drawn(const double *pos, const unsigned char *drawn, size_t n, int k,
			       double fallback)
{
	double *h = malloc(n * sizeof *h), *ref = malloc(n * sizeof *ref);
	ck_assert(h && ref);
	ck_assert_int_eq(render_adaptive_h(pos, drawn, n, k, fallback, h), 0);
	brute_h(pos, drawn, n, k, fallback, ref);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(h[i] == ref[i] || (isnan(h[i]) && isnan(ref[i])),
			      "n=%zu k=%d body %zu: grid h %.17g, brute force %.17g", n, k, i, h[i],
			      ref[i]);
	free(h);
	free(ref);
}

static void expect_exact(const double *pos, size_t n, int k, double fallback)
{
	expect_exact_drawn(pos, NULL, n, k, fallback);
}

static double urand(uint64_t seed, size_t i, int d)
{
	return sim_rng_uniform(seed, i, (uint64_t)d);
}

START_TEST(uniform_cube_matches_brute_force)
{
	size_t n = 2000;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < 3 * n; i++)
		pos[i] = 10.0 * urand(1, i / 3, (int)(i % 3)) - 5.0;
	int ks[] = {1, 7, 32, 100};
	for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++)
		expect_exact(pos, n, ks[t], 0.1);
	free(pos);
}
END_TEST

/* A dense Plummer-like core in a sparse halo with a few far escapers:
 * density contrast ~1e6 (the case the former uniform grid handled worst). */
START_TEST(clustered_with_escapers_matches_brute_force)
{
	size_t n = 3000;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < n; i++) {
		double u = urand(2, i, 0);
		double r = 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1.0);
		if (i % 500 == 0)
			r = 1e3 * (1 + urand(2, i, 4)); /* escaper */
		double cz = 2 * urand(2, i, 1) - 1, ph = 2 * M_PI * urand(2, i, 2);
		double sz = sqrt(1 - cz * cz);
		pos[3 * i] = r * sz * cos(ph);
		pos[3 * i + 1] = r * sz * sin(ph);
		pos[3 * i + 2] = r * cz;
	}
	expect_exact(pos, n, 32, 0.1);
	expect_exact(pos, n, 5, 0.1);
	free(pos);
}
END_TEST

/* A thin disk: one axis much flatter than the others. */
START_TEST(flat_disk_matches_brute_force)
{
	size_t n = 2000;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < n; i++) {
		double r = -3.0 * log(urand(3, i, 0) * urand(3, i, 1));
		double ph = 2 * M_PI * urand(3, i, 2);
		pos[3 * i] = r * cos(ph);
		pos[3 * i + 1] = r * sin(ph);
		pos[3 * i + 2] = i % 2 ? 0.0 : 1e-4 * (urand(3, i, 3) - 0.5);
	}
	expect_exact(pos, n, 16, 0.1);
	free(pos);
}
END_TEST

/* Coincident bodies are neighbours at distance 0; NaN/inf bodies get the
 * fallback and are nobody's neighbour; k beyond n-1 uses n-1. */
START_TEST(coincident_nonfinite_and_small_sets)
{
	double pos[3 * 8] = {0, 0, 0,  0, 0, 0,  0, 0, 0,  1, 0, 0,
			     NAN, 0, 0, 0, INFINITY, 0, 3, 4, 0,  0, 0, 2};
	double h[8];
	ck_assert_int_eq(render_adaptive_h(pos, NULL, 8, 2, 0.5, h), 0);
	/* body 0: neighbours at 0, 0, 1, 2, 5 -> 2nd = 0 */
	ck_assert(h[0] == 0.0);
	ck_assert(h[3] == 1.0);  /* body 3 at (1,0,0): 1, 1, 1, sqrt(5), sqrt(20) */
	ck_assert(h[4] == 0.5 && h[5] == 0.5);
	ck_assert(h[6] == 5.0); /* body 6 at (3,4,0): sqrt 20, then 5 three times */
	expect_exact(pos, 8, 2, 0.5);
	expect_exact(pos, 8, 100, 0.5); /* k_eff = 5 finite others */
	/* one finite body: fallback */
	double one[3] = {1, 2, 3};
	ck_assert_int_eq(render_adaptive_h(one, NULL, 1, 32, 0.25, h), 0);
	ck_assert(h[0] == 0.25);
	/* two bodies: each other's only neighbour */
	double two[6] = {0, 0, 0, 0, 3, 4};
	ck_assert_int_eq(render_adaptive_h(two, NULL, 2, 32, 0.25, h), 0);
	ck_assert(h[0] == 5.0 && h[1] == 5.0);
}
END_TEST

START_TEST(same_result_for_any_thread_count)
{
	size_t n = 5000;
	double *pos = malloc(3 * n * sizeof *pos), *h1 = malloc(n * sizeof *h1),
	       *h4 = malloc(n * sizeof *h4);
	for (size_t i = 0; i < 3 * n; i++)
		pos[i] = urand(4, i / 3, (int)(i % 3)) * (i % 3 == 2 ? 0.1 : 1.0);
	omp_set_num_threads(1);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.1, h1), 0);
	omp_set_num_threads(4);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.1, h4), 0);
	ck_assert_int_eq(memcmp(h1, h4, n * sizeof *h1), 0);
	free(pos);
	free(h1);
	free(h4);
}
END_TEST

/* The state wrapper divides positions by the length factor: a regular
 * lattice of spacing 2 internal units, length factor 2 -> h = 1 (scene
 * units) for the 6 face neighbours of an interior point, k = 6. */
START_TEST(state_wrapper_uses_scene_units)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(sim_state_alloc(&st, 125, 1), 0);
	for (int c = 0; c < 3; c++)
		st.comps[0].color[c] = 1.0f; /* drawn (calloc'd black would be dark) */
	for (size_t i = 0; i < 125; i++) {
		st.pos[3 * i] = 2.0 * (double)(i % 5);
		st.pos[3 * i + 1] = 2.0 * (double)(i / 5 % 5);
		st.pos[3 * i + 2] = 2.0 * (double)(i / 25);
	}
	struct scene *sc = calloc(1, sizeof *sc);
	sc->render.neighbours = 6;
	sc->render.smoothing = 0.3;
	struct sim_units u = {2.0, 1.0, 1.0, 1.0, 1.0};
	double h[125];
	ck_assert_int_eq(render_adaptive_h_state(sc, &st, &u, h), 0);
	ck_assert_close(h[62], 1.0, 0, 1e-15); /* centre (2,2,2) */
	ck_assert_close(h[0], sqrt(2.0), 0, 1e-15); /* corner: 3 at 1, then 3 at sqrt 2 */
	free(sc);
	sim_state_free(&st);
}
END_TEST

/* A disk of drawn stars inside a dense dark halo (half the bodies, drawn
 * 0): h follows the drawn stars only. Exact against the brute force over
 * drawn bodies, dark bodies get the fallback; and by hand: two drawn
 * bodies 5 apart with dark ones between them are each other's neighbour. */
START_TEST(dark_bodies_are_neither_searched_nor_neighbours)
{
	size_t n = 3000;
	double *pos = malloc(3 * n * sizeof *pos);
	unsigned char *drawn = malloc(n);
	for (size_t i = 0; i < n; i++) {
		drawn[i] = i % 2 == 0 || i % 7 == 3; /* ~57 % drawn, interleaved */
		if (drawn[i]) { /* thin disk of radius ~3 */
			double r = -1.5 * log(urand(5, i, 0) * urand(5, i, 1));
			double ph = 2 * M_PI * urand(5, i, 2);
			pos[3 * i] = r * cos(ph);
			pos[3 * i + 1] = r * sin(ph);
			pos[3 * i + 2] = 0.05 * (urand(5, i, 3) - 0.5);
		} else { /* dense dark ball of radius 1 around the centre */
			for (int d = 0; d < 3; d++)
				pos[3 * i + d] = 2 * urand(5, i, 4 + d) - 1;
		}
	}
	expect_exact_drawn(pos, drawn, n, 32, 0.1);
	expect_exact_drawn(pos, drawn, n, 3, 0.1);
	double *h = malloc(n * sizeof *h), *hall = malloc(n * sizeof *hall);
	ck_assert_int_eq(render_adaptive_h(pos, drawn, n, 32, 0.1, h), 0);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.1, hall), 0);
	size_t larger = 0, ndrawn = 0;
	for (size_t i = 0; i < n; i++) {
		if (!drawn[i]) {
			ck_assert(h[i] == 0.1);
			continue;
		}
		ck_assert(h[i] >= hall[i]); /* fewer candidates: never nearer */
		larger += h[i] > hall[i];
		ndrawn++;
	}
	ck_assert_uint_gt(larger, ndrawn / 10); /* the halo did matter */
	free(h);
	free(hall);
	free(pos);
	free(drawn);

	double line[3 * 5] = {0, 0, 0, 1, 0, 0, 2.5, 0, 0, 4, 0, 0, 5, 0, 0};
	unsigned char lit[5] = {1, 0, 0, 0, 1};
	double hl[5];
	ck_assert_int_eq(render_adaptive_h(line, lit, 5, 32, 0.25, hl), 0);
	ck_assert(hl[0] == 5.0 && hl[4] == 5.0);
	ck_assert(hl[1] == 0.25 && hl[2] == 0.25 && hl[3] == 0.25);
	/* one drawn body: nobody to measure against */
	lit[4] = 0;
	ck_assert_int_eq(render_adaptive_h(line, lit, 5, 1, 0.25, hl), 0);
	for (int i = 0; i < 5; i++)
		ck_assert(hl[i] == 0.25);
}
END_TEST

/* The state wrapper's drawn rule: in colour mode a component of colour
 * [0, 0, 0] is dark; a body whose component has no colour entry is drawn;
 * in density mode all are drawn. Bodies on a line at x = 0, 1, 2, ..., 9,
 * components 0 (white), 1 (black) alternating; body 9 has component 5 (no
 * entry). k = 1. */
START_TEST(state_wrapper_derives_drawn_from_colours)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(sim_state_alloc(&st, 10, 2), 0);
	for (int c = 0; c < 3; c++) {
		st.comps[0].color[c] = 1.0f;
		st.comps[1].color[c] = 0.0f;
	}
	for (size_t i = 0; i < 10; i++) {
		st.pos[3 * i] = (double)i;
		st.comp[i] = (uint16_t)(i % 2);
	}
	st.comp[9] = 5;
	struct scene *sc = calloc(1, sizeof *sc);
	sc->render.neighbours = 1;
	sc->render.smoothing = 0.3;
	sc->render.mode = SCENE_COLOR_COMPONENTS;
	struct sim_units u = {1.0, 1.0, 1.0, 1.0, 1.0};
	unsigned char drawn[10];
	render_adaptive_drawn(sc, &st, drawn);
	for (size_t i = 0; i < 10; i++)
		ck_assert_int_eq(drawn[i], i % 2 == 0 || i == 9);
	double h[10];
	ck_assert_int_eq(render_adaptive_h_state(sc, &st, &u, h), 0);
	/* drawn at 0, 2, 4, 6, 8, 9: nearest drawn 2, 2, 2, 2, 1, 1 */
	const double want[10] = {2, 0.3, 2, 0.3, 2, 0.3, 2, 0.3, 1, 1};
	for (size_t i = 0; i < 10; i++)
		ck_assert_msg(h[i] == want[i], "body %zu: h %g, want %g", i, h[i], want[i]);
	sc->render.mode = SCENE_COLOR_DENSITY;
	ck_assert_int_eq(render_adaptive_h_state(sc, &st, &u, h), 0);
	for (size_t i = 0; i < 10; i++)
		ck_assert(h[i] == 1.0);
	free(sc);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("adaptive");
	TCase *tc = tcase_create("knn");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, uniform_cube_matches_brute_force);
	tcase_add_test(tc, clustered_with_escapers_matches_brute_force);
	tcase_add_test(tc, flat_disk_matches_brute_force);
	tcase_add_test(tc, same_result_for_any_thread_count);
	tcase_add_test(tc, state_wrapper_uses_scene_units);
	tcase_add_test(tc, dark_bodies_are_neither_searched_nor_neighbours);
	tcase_add_test(tc, state_wrapper_derives_drawn_from_colours);
	suite_add_tcase(s, tc);
	/* NaN and inf inputs on purpose: no FPE trap here. */
	TCase *tn = tcase_create("edge");
	tcase_add_test(tn, coincident_nonfinite_and_small_sets);
	suite_add_tcase(s, tn);
	return s;
}

NB_CHECK_MAIN(make_suite)
