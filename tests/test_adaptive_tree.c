/* test_adaptive_tree.c - the box-tree neighbour search (render/adaptive_tree.c,
 * render_adaptive_h) against an independent brute force, exact to the bit,
 * on inputs chosen to stress a tree over Morton-ordered bodies: several
 * tree levels (n well above 32 * 8 bodies, n not a multiple of 32), a dense
 * Plummer core in a sparse halo, exact duplicates, every body at one
 * point, bodies on a line, two far clusters (a Morton jump inside a leaf),
 * a tiny extent (the key scale), squared distances that overflow, and k
 * from 1 to beyond a leaf.
 *
 * The brute force here keeps the k smallest squared distances by insertion
 * into a sorted array (no heap, no tree, no sort of all distances), each
 * formed as dx*dx + dy*dy + dz*dz in double, the formula render/adaptive.h
 * promises; its k-th is the expected h^2.
 *
 * Run: make build/tests/test_adaptive_tree && build/tests/test_adaptive_tree */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/adaptive.h"

/* Expected h of every body: the k_eff-th smallest distance to another body
 * (all bodies finite and drawn here), k_eff = min(k, n - 1). */
static void brute_knn(const double *pos, size_t n, int k, double *h)
{
	int keff = (long)n - 1 < k ? (int)n - 1 : k;
	double *best = malloc((size_t)(keff > 0 ? keff : 1) * sizeof *best);
	ck_assert_ptr_nonnull(best);
	for (size_t i = 0; i < n; i++) {
		int cnt = 0;
		for (size_t j = 0; j < n; j++) {
			if (j == i)
				continue;
			double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1],
			       dz = pos[3 * j + 2] - pos[3 * i + 2];
			double d2 = dx * dx + dy * dy + dz * dz;
			if (cnt == keff && !(d2 < best[keff - 1]))
				continue;
			int at = cnt < keff ? cnt++ : keff - 1; /* drop the largest when full */
			while (at > 0 && best[at - 1] > d2) {
				best[at] = best[at - 1];
				at--;
			}
			best[at] = d2;
		}
		h[i] = keff > 0 ? sqrt(best[keff - 1]) : -1.0;
	}
	free(best);
}

static void expect_tree_equals_brute(const double *pos, size_t n, int k, const char *what)
{
	double *h = malloc(n * sizeof *h), *ref = malloc(n * sizeof *ref);
	ck_assert(h && ref);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, k, 0.125, h), 0);
	brute_knn(pos, n, k, ref);
	size_t bad = 0, first = n;
	for (size_t i = 0; i < n; i++)
		if (h[i] != ref[i]) {
			bad++;
			first = first < n ? first : i;
		}
	ck_assert_msg(bad == 0, "%s n=%zu k=%d: %zu bodies differ, first %zu: tree %.17g brute %.17g",
		      what, n, k, bad, first, first < n ? h[first] : 0.0,
		      first < n ? ref[first] : 0.0);
	free(h);
	free(ref);
}

/* Reproducible uniform numbers in [0, 1) (splitmix64). */
static double u01(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1p-53;
}

static void on_sphere(uint64_t *s, double r, double *p)
{
	double cz = 2 * u01(s) - 1, ph = 2 * M_PI * u01(s), sz = sqrt(1 - cz * cz);
	p[0] = r * sz * cos(ph);
	p[1] = r * sz * sin(ph);
	p[2] = r * cz;
}

START_TEST(random_cube_equals_brute_force)
{
	size_t n = 4001; /* 126 leaves, the last one partial; 3 levels */
	uint64_t s = 11;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < 3 * n; i++)
		pos[i] = 20.0 * u01(&s) - 10.0;
	int ks[] = {1, 2, 31, 32, 33, 64};
	for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++)
		expect_tree_equals_brute(pos, n, ks[t], "cube");
	free(pos);
}
END_TEST

/* Plummer core (a = 0.01) holding 80 % of the bodies inside a sparse
 * halo out to 1e3, every 7th body an exact copy of the one before it:
 * density contrast ~1e12 and zero distances. */
START_TEST(plummer_core_halo_duplicates_equal_brute_force)
{
	size_t n = 6000;
	uint64_t s = 12;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < n; i++) {
		double r;
		if (i % 5 != 4) {
			double u = 0.001 + 0.998 * u01(&s);
			r = 0.01 / sqrt(pow(u, -2.0 / 3.0) - 1.0);
		} else {
			r = 1e3 * cbrt(u01(&s));
		}
		on_sphere(&s, r, pos + 3 * i);
		if (i % 7 == 6)
			memcpy(pos + 3 * i, pos + 3 * (i - 1), 3 * sizeof *pos);
	}
	expect_tree_equals_brute(pos, n, 32, "plummer+halo");
	expect_tree_equals_brute(pos, n, 1, "plummer+halo");
	expect_tree_equals_brute(pos, n, 50, "plummer+halo");
	free(pos);
}
END_TEST

/* Every body at one point: every h is exactly 0 (k others at distance 0). */
START_TEST(all_bodies_at_one_point_give_zero)
{
	size_t n = 3000;
	double *pos = malloc(3 * n * sizeof *pos), *h = malloc(n * sizeof *h);
	for (size_t i = 0; i < n; i++) {
		pos[3 * i] = 1.5;
		pos[3 * i + 1] = -2.25;
		pos[3 * i + 2] = 1e6;
	}
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.125, h), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(h[i] == 0.0, "body %zu: h %g, want 0", i, h[i]);
	/* and one body moved 3 units away along y: its h is 3, the others' 0 */
	pos[3 * 17 + 1] += 3.0;
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.125, h), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(h[i] == (i == 17 ? 3.0 : 0.0), "body %zu: h %g", i, h[i]);
	free(pos);
	free(h);
}
END_TEST

/* Bodies on the x axis at integer positions 0..n-1: body i's k-th
 * neighbour distance follows from counting (k = 2: 1 inside, 2 at the
 * ends). Also checks against brute force. */
START_TEST(line_of_bodies_matches_counting)
{
	size_t n = 2500;
	double *pos = calloc(3 * n, sizeof *pos), *h = malloc(n * sizeof *h);
	for (size_t i = 0; i < n; i++)
		pos[3 * (n - 1 - i)] = (double)i; /* reversed: the tree reorders anyway */
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 2, 0.125, h), 0);
	for (size_t i = 0; i < n; i++) {
		double x = pos[3 * i];
		double want = (x == 0 || x == (double)(n - 1)) ? 2.0 : 1.0;
		ck_assert_msg(h[i] == want, "x=%g: h %g, want %g", x, h[i], want);
	}
	expect_tree_equals_brute(pos, n, 9, "line");
	free(pos);
	free(h);
}
END_TEST

/* Two far clusters and a sprinkle of lone bodies (leaves that span a
 * Morton jump), a set of tiny extent (1e-200: the key scale), and small
 * n around k. */
START_TEST(far_clusters_tiny_extent_and_small_n_equal_brute_force)
{
	size_t n = 3000;
	uint64_t s = 13;
	double *pos = malloc(3 * n * sizeof *pos);
	for (size_t i = 0; i < n; i++) {
		double c = i % 2 ? 500.0 : -500.0, w = i % 97 == 0 ? 400.0 : 1.0;
		for (int a = 0; a < 3; a++)
			pos[3 * i + a] = (a == 0 ? c : 0.0) + w * (2 * u01(&s) - 1);
	}
	expect_tree_equals_brute(pos, n, 32, "two clusters");
	for (size_t i = 0; i < 3 * n; i++)
		pos[i] = 1e-200 * (1 + u01(&s));
	expect_tree_equals_brute(pos, n, 16, "tiny extent");
	size_t small[] = {2, 3, 32, 33, 34, 65, 300};
	for (size_t t = 0; t < sizeof small / sizeof small[0]; t++) {
		for (size_t i = 0; i < 3 * small[t]; i++)
			pos[i] = u01(&s);
		expect_tree_equals_brute(pos, small[t], 32, "small n");
	}
	free(pos);
}
END_TEST

START_TEST(result_independent_of_thread_count)
{
	size_t n = 20000;
	uint64_t s = 14;
	double *pos = malloc(3 * n * sizeof *pos), *h1 = malloc(n * sizeof *h1),
	       *h2 = malloc(n * sizeof *h2);
	for (size_t i = 0; i < n; i++)
		on_sphere(&s, i % 3 ? 0.1 * u01(&s) : 10 * u01(&s), pos + 3 * i);
	omp_set_num_threads(1);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.125, h1), 0);
	omp_set_num_threads(3);
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 32, 0.125, h2), 0);
	ck_assert_int_eq(memcmp(h1, h2, n * sizeof *h1), 0);
	free(pos);
	free(h1);
	free(h2);
}
END_TEST

/* Two clusters 2e200 apart: squared distances across overflow to inf,
 * so with k beyond a cluster's size the k-th is inf (h = inf, as a brute
 * force finds); inside a cluster they stay finite. Overflow on purpose:
 * registered without the FPE trap. */
START_TEST(overflowing_distances_equal_brute_force)
{
	size_t n = 80;
	uint64_t s = 15;
	double *pos = malloc(3 * n * sizeof *pos), *h = malloc(n * sizeof *h);
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < 3; a++)
			pos[3 * i + a] = (a == 0 ? (i % 2 ? 1e200 : -1e200) : 0.0) + 1e150 * u01(&s);
	expect_tree_equals_brute(pos, n, 50, "overflow");
	expect_tree_equals_brute(pos, n, 10, "overflow");
	ck_assert_int_eq(render_adaptive_h(pos, NULL, n, 50, 0.125, h), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(isinf(h[i]), "body %zu: h %g, want inf (the 50th nearest other is 2e200 away)", i,
			      h[i]);
	free(pos);
	free(h);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("adaptive_tree");
	TCase *tc = tcase_create("tree_knn");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, random_cube_equals_brute_force);
	tcase_add_test(tc, plummer_core_halo_duplicates_equal_brute_force);
	tcase_add_test(tc, all_bodies_at_one_point_give_zero);
	tcase_add_test(tc, line_of_bodies_matches_counting);
	tcase_add_test(tc, far_clusters_tiny_extent_and_small_n_equal_brute_force);
	tcase_add_test(tc, result_independent_of_thread_count);
	suite_add_tcase(s, tc);
	TCase *to = tcase_create("overflow"); /* inf on purpose: no FPE trap */
	tcase_add_checked_fixture(to, nb_untrap_fpe, NULL);
	tcase_add_test(to, overflowing_distances_equal_brute_force);
	suite_add_tcase(s, to);
	return s;
}

NB_CHECK_MAIN(make_suite)
