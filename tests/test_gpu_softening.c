/* test_gpu_softening.c - the GPU's softening per body and its cubic-spline
 * kernel (docs/PHYSICS.md "Softening"; sim/cuda/direct.cu's general gather,
 * the tree walk's SOFT instances, sim/cuda/sim_levels.cu) against a double
 * direct sum written here from sim/soften.h's formulas, so that it does not
 * depend on the CPU engines. Without a usable GPU the program prints
 * "SKIP: <why>" and runs (and counts) no case (tests/check_main.h).
 *
 * The model has two types, as a GADGET galaxy has: a halo (3000 bodies,
 * Plummer a = 1, mass 1, softening 0.05) and a compact core inside it
 * (3000 bodies, a = 0.1, mass 0.2, softening 0.01): a pair takes the larger
 * length, so core-core pairs are softened at 0.01 and halo-core pairs at
 * 0.05. Each check states its bound and also that the references it tells
 * apart (the other kernel, one length for all) differ by far more than
 * that bound, so that a path that ignored the lengths or the kernel fails.
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_softening && build/tests/test_gpu_softening */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "twin.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"
#if NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#include "../sim/soften.h"
#include "../sim/timestep_rule.h"
#endif

#if NB_HAVE_CUDA

#define NH 3000 /* halo bodies */
#define NC 3000 /* core bodies */
#define NB (NH + NC)
#define EPS_HALO 0.05
#define EPS_CORE 0.01

/* The two-type model: st's bodies, their components (softening set as
 * creation sets it) and each body's length in eps (NB). */
static void two_types(struct sim_state *st, double *eps)
{
	ck_assert_int_eq(sim_state_alloc(st, NB, 2), 0);
	sim_ic_plummer(st, 0, NH, 1.0, 1.0, 20.0, 31, 0);
	sim_ic_plummer(st, NH, NC, 0.2, 0.1, 20.0, 32, 1);
	snprintf(st->comps[0].name, sizeof st->comps[0].name, "halo");
	snprintf(st->comps[1].name, sizeof st->comps[1].name, "core");
	st->comps[0].first = 0, st->comps[0].count = NH, st->comps[0].softening = EPS_HALO;
	st->comps[1].first = NH, st->comps[1].count = NC, st->comps[1].softening = EPS_CORE;
	for (size_t i = 0; i < NB; i++) {
		st->comp[i] = i < NH ? 0 : 1;
		eps[i] = st->comps[st->comp[i]].softening;
	}
}

/* The reference: a_i = sum_j m_j f(r^2, max(eps_i, eps_j)) (x_j - x_i),
 * phi_i = sum_{j != i} m_j phi(r^2, max(eps_i, eps_j)), in double, with
 * sim/soften.h's kernels; eps NULL: one length e for all. pot may be NULL. */
static void ref_direct(const struct sim_state *st, const double *eps, double e, int spline,
		       double *acc, double *pot)
{
	const size_t n = st->n;
#pragma omp parallel for schedule(dynamic, 64)
	for (size_t i = 0; i < n; i++) {
		double a[3] = {0, 0, 0}, p = 0;
		for (size_t j = 0; j < n; j++) {
			if (j == i)
				continue;
			double d[3], r2 = 0;
			for (int k = 0; k < 3; k++) {
				d[k] = st->pos[3 * j + k] - st->pos[3 * i + k];
				r2 += d[k] * d[k];
			}
			const double ep = eps ? sim_soft_pair(eps[i], eps[j]) : e;
			const double f = spline ? sim_soft_spline(r2, ep) : sim_soft_plummer(r2, ep);
			const double ph = spline ? sim_soft_spline_phi(r2, ep) : sim_soft_plummer_phi(r2, ep);
			for (int k = 0; k < 3; k++)
				a[k] += st->mass[j] * f * d[k];
			p += st->mass[j] * ph;
		}
		for (int k = 0; k < 3; k++)
			acc[3 * i + k] = a[k];
		if (pot)
			pot[i] = p;
	}
}

/* Potentials as 3-vectors (p, 0, 0) for twin_rel_errors. malloc'd. */
static double *as_vec(const double *p, size_t n)
{
	double *v = calloc(3 * n, sizeof *v);
	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++)
		v[3 * i] = p[i];
	return v;
}

/* The median and 99th percentile of |got - ref| / |ref| over the bodies;
 * out[0], out[1] (may be NULL). Prints them under what. */
static void rel_err(const char *what, const double *got, const double *ref, size_t n, double out[2])
{
	double *e = twin_rel_errors(got, ref, n);
	const double med = twin_pct(e, n, 0.5), p99 = twin_pct(e, n, 0.99);
	printf("%s: median %.3g, 99th %.3g\n", what, med, p99);
	if (out)
		out[0] = med, out[1] = p99;
	free(e);
}

/* got within (med, p99) of ref, named in the message. */
static void expect_within(const char *what, const double *got, const double *ref, size_t n, double med,
			  double p99)
{
	double e[2];
	rel_err(what, got, ref, n, e);
	ck_assert_msg(e[0] <= med && e[1] <= p99,
		      "%s: relative error median %.3g (bound %g), 99th percentile %.3g (bound %g)", what,
		      e[0], med, e[1], p99);
}

/* other differs from ref by 5x the bounds (med, p99) at the median or at
 * the 99th percentile: a GPU path that computed other instead fails there */
static void expect_apart(const char *what, const double *other, const double *ref, size_t n,
			 double med, double p99)
{
	double e[2];
	rel_err(what, other, ref, n, e);
	ck_assert_msg(e[0] >= 5 * med || e[1] >= 5 * p99,
		      "%s: the references differ by only %.3g (median) and %.3g (99th percentile), "
		      "not 5 x the bounds %g, %g: the model does not tell them apart",
		      what, e[0], e[1], med, p99);
}

/* One kernel (spline 0 plummer, 1 spline): the GPU direct sum (the general
 * gather, whatever the kernel asked) and the tree at theta 0 (every pair
 * body by body) and 0.5 (quadrupole: cells with eps_max / eps2_mean) with
 * lengths per body, against the double sum. Bounds: float sums, 1e-5
 * median and 1e-4 at the 99th percentile (test_gpu_direct's tolerance is
 * 1e-5 relative per value); the tree at theta 0.5, 1e-3 and 1.5e-2
 * quadrupole, 3e-3 and 2e-2 monopole (test_gpu_tree's bounds for every
 * walk variant: 1e-3 / 3e-3 median, 2e-2 99th; a Plummer sphere measures
 * ~2e-4 and ~2e-3). The references told apart: the other kernel differs by
 * ~1.7e-2 (median) and ~9e-2 (99th), one length for all by ~0.5 (99th;
 * the halo's pairs all take 0.05 either way, so its median is 0). */
#define TREE_MED 1e-3
#define TREE_P99 1.5e-2
static void mixed_case(int spline)
{
	struct sim_state st;
	double *eps = malloc(NB * sizeof *eps);
	double *ar = malloc(3 * NB * sizeof *ar), *pr = malloc(NB * sizeof *pr);
	double *ao = malloc(3 * NB * sizeof *ao), *ag = malloc(3 * NB * sizeof *ag),
	       *pg = malloc(NB * sizeof *pg);
	ck_assert(eps && ar && pr && ao && ag && pg);
	two_types(&st, eps);
	const char *k = spline ? "spline" : "plummer";
	char what[160];
	ref_direct(&st, eps, 0, spline, ar, pr);
	double *prv = as_vec(pr, NB);

	/* the references this check tells apart */
	ref_direct(&st, NULL, EPS_HALO, spline, ao, NULL);
	snprintf(what, sizeof what, "%s: one length %g against lengths per type", k, EPS_HALO);
	expect_apart(what, ao, ar, NB, TREE_MED, TREE_P99);
	ref_direct(&st, eps, 0, !spline, ao, NULL);
	snprintf(what, sizeof what, "%s: the other kernel against this one", k);
	expect_apart(what, ao, ar, NB, TREE_MED, TREE_P99);

	const enum scene_soft_kernel sk = spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER;
	const enum scene_direct_kernel dk[2] = {SCENE_DIRECT_GATHER, SCENE_DIRECT_PAIRWISE};
	for (int q = 0; q < 2; q++) {
		ck_assert_int_eq(gpu_direct_accel_soft(st.pos, st.mass, eps, NB, EPS_CORE, sk, dk[q], ag, pg), 0);
		snprintf(what, sizeof what, "%s, GPU direct (%s asked), acc", k, q ? "pairwise" : "gather");
		expect_within(what, ag, ar, NB, 1e-5, 1e-4);
		double *pgv = as_vec(pg, NB);
		snprintf(what, sizeof what, "%s, GPU direct (%s asked), potential", k, q ? "pairwise" : "gather");
		expect_within(what, pgv, prv, NB, 1e-5, 1e-4);
		free(pgv);
	}
	const double thetas[2] = {0.0, 0.5};
	for (int t = 0; t < 2; t++) {
		const double med = t ? TREE_MED : 1e-5, p99 = t ? TREE_P99 : 1e-4;
		ck_assert_int_eq(gpu_tree_accel_soft(st.pos, st.mass, eps, NB, EPS_HALO, spline, thetas[t], 2,
						     ag, pg), 0);
		snprintf(what, sizeof what, "%s, GPU tree theta %g quadrupole, acc", k, thetas[t]);
		expect_within(what, ag, ar, NB, med, p99);
		double *pgv = as_vec(pg, NB);
		snprintf(what, sizeof what, "%s, GPU tree theta %g quadrupole, potential", k, thetas[t]);
		expect_within(what, pgv, prv, NB, med, p99);
		free(pgv);
	}
	/* monopole cells too (no quadrupole staging) */
	ck_assert_int_eq(gpu_tree_accel_soft(st.pos, st.mass, eps, NB, EPS_HALO, spline, 0.5, 1, ag, NULL), 0);
	snprintf(what, sizeof what, "%s, GPU tree theta 0.5 monopole, acc", k);
	expect_within(what, ag, ar, NB, 3e-3, 2e-2);
	free(prv);
	free(eps), free(ar), free(pr), free(ao), free(ag), free(pg);
	sim_state_free(&st);
}

START_TEST(gpu_mixed_plummer_matches_double_sum)
{
	mixed_case(0);
}
END_TEST

START_TEST(gpu_mixed_spline_matches_double_sum)
{
	mixed_case(1);
}
END_TEST

/* One length, the spline kernel: the general paths with eps for every pair
 * (no per-body array), against the double sum. */
START_TEST(gpu_uniform_spline_matches_double_sum)
{
	struct sim_state st;
	double *eps = malloc(NB * sizeof *eps), *ar = malloc(3 * NB * sizeof *ar),
	       *ag = malloc(3 * NB * sizeof *ag);
	ck_assert(eps && ar && ag);
	two_types(&st, eps);
	ref_direct(&st, NULL, EPS_HALO, 1, ar, NULL);
	ck_assert_int_eq(gpu_direct_accel_soft(st.pos, st.mass, NULL, NB, EPS_HALO, SCENE_SOFT_SPLINE,
					       SCENE_DIRECT_AUTO, ag, NULL), 0);
	expect_within("spline, one length, GPU direct", ag, ar, NB, 1e-5, 1e-4);
	ck_assert_int_eq(gpu_tree_accel_soft(st.pos, st.mass, NULL, NB, EPS_HALO, 1, 0.5, 2, ag, NULL), 0);
	expect_within("spline, one length, GPU tree theta 0.5", ag, ar, NB, TREE_MED, TREE_P99);
	free(eps), free(ar), free(ag);
	sim_state_free(&st);
}
END_TEST

/* One length, Plummer: the entry points with no lengths take today's
 * kernels, bit for bit (gpu_direct_accel and gpu_tree_accel are those
 * paths); lengths per body that are all equal take the general path and
 * agree with them to float rounding (direct) and to the tree's own error
 * (the general Plummer walk has no local expansion: both within 1.5x of each
 * other's error against the double sum). */
START_TEST(gpu_uniform_plummer_unchanged)
{
	struct sim_state st;
	double *eps = malloc(NB * sizeof *eps), *ar = malloc(3 * NB * sizeof *ar);
	double *a0 = malloc(3 * NB * sizeof *a0), *a1 = malloc(3 * NB * sizeof *a1);
	ck_assert(eps && ar && a0 && a1);
	two_types(&st, eps);
	for (size_t i = 0; i < NB; i++)
		eps[i] = EPS_HALO;
	ref_direct(&st, NULL, EPS_HALO, 0, ar, NULL);
	const enum scene_direct_kernel dk[2] = {SCENE_DIRECT_GATHER, SCENE_DIRECT_PAIRWISE};
	for (int q = 0; q < 2; q++) {
		ck_assert_int_eq(gpu_direct_accel(st.pos, st.mass, NB, EPS_HALO, dk[q], a0, NULL), 0);
		ck_assert_int_eq(gpu_direct_accel_soft(st.pos, st.mass, NULL, NB, EPS_HALO,
						       SCENE_SOFT_PLUMMER, dk[q], a1, NULL), 0);
		/* gather sums in a fixed order: bit for bit; pairwise adds each
		 * pair's reaction with atomics, so two calls of today's kernel
		 * already differ in the last bits: float rounding only */
		if (dk[q] == SCENE_DIRECT_GATHER)
			ck_assert_msg(memcmp(a0, a1, 3 * NB * sizeof *a0) == 0,
				      "direct gather: no lengths per body must be today's kernel, bit for bit");
		else
			expect_within("direct pairwise, no lengths per body against today's", a1, a0, NB,
				      1e-6, 1e-5);
		ck_assert_int_eq(gpu_direct_accel_soft(st.pos, st.mass, eps, NB, EPS_HALO,
						       SCENE_SOFT_PLUMMER, dk[q], a1, NULL), 0);
		expect_within("direct, equal lengths per body against one length", a1, a0, NB, 1e-5, 1e-4);
	}
	ck_assert_int_eq(gpu_tree_accel(st.pos, st.mass, NB, EPS_HALO, 0.5, 2, a0, NULL), 0);
	ck_assert_int_eq(gpu_tree_accel_soft(st.pos, st.mass, NULL, NB, EPS_HALO, 0, 0.5, 2, a1, NULL), 0);
	ck_assert_msg(memcmp(a0, a1, 3 * NB * sizeof *a0) == 0,
		      "tree: no lengths per body must be today's walk, bit for bit");
	ck_assert_int_eq(gpu_tree_accel_soft(st.pos, st.mass, eps, NB, EPS_HALO, 0, 0.5, 2, a1, NULL), 0);
	double e0[2], e1[2];
	rel_err("tree, one length, against the double sum", a0, ar, NB, e0);
	rel_err("tree, equal lengths per body, against the double sum", a1, ar, NB, e1);
	ck_assert_msg(e1[0] <= 1.5 * e0[0] + 1e-6 && e1[1] <= 1.5 * e0[1] + 1e-5,
		      "tree with equal lengths per body: median %.3g, 99th %.3g against one length's "
		      "%.3g, %.3g (bound 1.5x)", e1[0], e1[1], e0[0], e0[1]);
	free(eps), free(ar), free(a0), free(a1);
	sim_state_free(&st);
}
END_TEST

/* Individual time steps: gpu_sim_create sets each body's level from its
 * first acceleration with its own length, dt_i = sqrt(2 eta eps_i / |a_i|)
 * (sim_ts_want_level). The expected histogram comes from the double sum's
 * accelerations and each body's eps; float accelerations may put a body
 * at a level boundary on the other side: at most n/200 + 2 per level
 * (direct), n/50 + 2 (tree). The histogram with one length (0.05) for the
 * core differs from it by far more, so a walk that used one length fails. */
static void levels_case(enum scene_solver solver, enum scene_reorder reorder)
{
	struct sim_state st;
	double *eps = malloc(NB * sizeof *eps), *ar = malloc(3 * NB * sizeof *ar);
	ck_assert(eps && ar);
	two_types(&st, eps);
	struct sim_params p;
	memset(&p, 0, sizeof p);
	p.solver = solver;
	p.direct_kernel = SCENE_DIRECT_AUTO;
	p.softening = EPS_HALO;
	p.soft_kernel = SCENE_SOFT_PLUMMER;
	p.soft_mixed = 1;
	p.dt = p.dt_max = 0.05;
	p.theta = 0.5;
	p.multipoles = 2;
	p.opening = SCENE_OPENING_BMAX;
	p.reorder = reorder;
	p.timesteps = SCENE_TIMESTEPS_INDIVIDUAL;
	p.eta = 0.025;
	p.max_level = 10;
	p.steps_per_frame = p.blocks_per_frame = 1;
	ref_direct(&st, eps, 0, 0, ar, NULL);
	long want[SIM_TS_LEVELS] = {0}, one[SIM_TS_LEVELS] = {0}, got[SIM_TS_LEVELS];
	for (size_t i = 0; i < NB; i++) {
		const double *a = ar + 3 * i, a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
		want[sim_ts_want_level(a2, p.dt_max, p.eta, eps[i], p.max_level)]++;
		one[sim_ts_want_level(a2, p.dt_max, p.eta, EPS_HALO, p.max_level)]++;
	}
	struct gpu_sim *g = NULL;
	ck_assert_int_eq(gpu_sim_create(&st, &p, &g), 0);
	double evals = 0;
	long ticks = 0, rebuilds = 0;
	ck_assert_int_eq(gpu_sim_levels(g, got, &evals, &ticks, &rebuilds), 0);
	const long slack = solver == SCENE_SOLVER_DIRECT ? NB / 200 + 2 : NB / 50 + 2;
	const char *label = solver == SCENE_SOLVER_DIRECT       ? "direct"
			    : reorder == SCENE_REORDER_MIGRATE ? "tree (migrate)"
							       : "tree (sort)";
	long apart = 0;
	for (int L = 0; L < SIM_TS_LEVELS; L++) {
		if (want[L] || got[L] || one[L])
			printf("%s level %d: GPU %ld, expected %ld (one length: %ld)\n", label, L, got[L],
			       want[L], one[L]);
		ck_assert_msg(labs(got[L] - want[L]) <= slack,
			      "%s: level %d holds %ld bodies, expected %ld from each body's softening "
			      "(slack %ld; one length would give %ld)",
			      label, L, got[L], want[L], slack, one[L]);
		apart += labs(one[L] - want[L]);
	}
	ck_assert_msg(apart > 20 * slack, "the model does not tell the lengths apart (%ld)", apart);
	/* two block steps: the bodies move, the tree sorts them again (each
	 * slot's length follows through its id) and refits between; at a block
	 * end every body's force is fresh, so it is held against the double sum
	 * at the positions downloaded (the GPU's own, float) */
	ck_assert_int_eq(gpu_sim_advance_blocks_async(g, 2, 0), 0);
	ck_assert_int_eq(gpu_sim_check(g), 0);
	ck_assert_int_eq(gpu_sim_download(g, &st), 0);
	double *ag = malloc(3 * NB * sizeof *ag);
	ck_assert_ptr_nonnull(ag);
	memcpy(ag, st.acc, 3 * NB * sizeof *ag);
	ref_direct(&st, eps, 0, 0, ar, NULL);
	const int direct = solver == SCENE_SOLVER_DIRECT;
	char what[96];
	snprintf(what, sizeof what, "%s, after two block steps", label);
	expect_within(what, ag, ar, NB, direct ? 1e-5 : TREE_MED, direct ? 1e-4 : TREE_P99);
	free(ag);
	gpu_sim_free(&g);
	free(eps), free(ar);
	sim_state_free(&st);
}

START_TEST(gpu_levels_use_each_body_softening)
{
	levels_case(SCENE_SOLVER_DIRECT, SCENE_REORDER_SORT);
	levels_case(SCENE_SOLVER_BARNES_HUT, SCENE_REORDER_SORT);
	levels_case(SCENE_SOLVER_BARNES_HUT, SCENE_REORDER_MIGRATE); /* movers only */
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_softening");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, gpu_mixed_plummer_matches_double_sum);
	tcase_add_test(tc, gpu_mixed_spline_matches_double_sum);
	tcase_add_test(tc, gpu_uniform_spline_matches_double_sum);
	tcase_add_test(tc, gpu_uniform_plummer_unchanged);
	tcase_add_test(tc, gpu_levels_use_each_body_softening);
	NB_GPU_TCASE(s, tc);
	return s;
}

#else /* CPU-only build */

static Suite *make_suite(void)
{
	nb_gpu_skip_all("gpu_softening");
	return suite_create("gpu_softening");
}

#endif

NB_CHECK_MAIN(make_suite)
