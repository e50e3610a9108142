/* test_gpu_diag.c - the statistics' diagnostics reduced on the device
 * (gpu_sim_diag_*, sim/cuda/diag.cu; engine_diag_*, engine/engine.c)
 * against sim_diag_compute (sim/diag.c) on the same state downloaded to the
 * host, and against hand-computed sums for three bodies.
 *
 * The masses are rounded to float before the upload, so the device's float
 * state and the downloaded double state are the same numbers and both sides
 * sum them in double: they differ only by the order of the sums, ~1e-16
 * relative per term. The bound asserted, 1e-10 of the sum of the terms'
 * magnitudes (sum m|v| for momentum, sum m|x||v| for angular momentum,
 * ...), is far above that and far below any real mistake (a lost block or
 * body, a float accumulator: 1e-7 and worse). The potential comes from the
 * force pass in float on both sides: the same numbers too.
 * Without a usable GPU the engine test runs on the CPU engine (queue/take
 * and time bookkeeping) and the GPU cases are neither run nor counted
 * (NB_GPU_TCASE prints "SKIP: <why>").
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_diag && build/tests/test_gpu_diag */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "../engine/engine.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"

static char tmpdir[64];

static void setup(void)
{
	nb_trap_fpe();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-gpu-diag-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	rmdir(tmpdir);
}

/* Two clusters with offsets and bulk velocities, so that momentum and
 * angular momentum are far from zero. */
static void load_scene(struct scene *sc, const char *solver, int n1, int n2)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "units: nbody\nseed: 11\n"
		 "simulation: {solver: %s, theta: 0.5, softening: 0.05, dt: 0.01,"
		 " steps_per_frame: 5, backend: auto}\n"
		 "bodies:\n"
		 "  - {name: a, model: plummer, count: %d, mass: 1, scale: 1,"
		 " position: [-3, 1, 0.5], velocity: [0.1, 0.3, 0]}\n"
		 "  - {name: b, model: hernquist, count: %d, mass: 0.7, scale: 0.5,"
		 " position: [4, -1, 0], velocity: [0, -0.2, 0.2]}\n",
		 solver, n1, n2);
	ck_assert_int_eq(scene_load_string(text, "diag.yaml", tmpdir, NULL, 0, sc), 0);
}

/* Magnitude scales of the sums, for the tolerances. */
struct diag_scale {
	double m, mv2, mphi, mv, mxv, mx;
};

static void scales_of(const struct sim_state *st, int with_pot, struct diag_scale *s)
{
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < st->n; i++) {
		const double m = st->mass[i], *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		const double vv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		const double xx = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
		s->m += fabs(m);
		s->mv2 += 0.5 * fabs(m) * vv * vv;
		if (with_pot)
			s->mphi += 0.5 * fabs(m * st->pot[i]);
		s->mv += fabs(m) * vv;
		s->mxv += fabs(m) * xx * vv;
		s->mx += fabs(m) * xx;
	}
}

#define DIAG_RTOL 1e-10

/* |g - ref| <= DIAG_RTOL * scale for every quantity; returns the largest
 * |g - ref| / scale seen (printed by the callers). */
static double assert_diag_matches(const struct sim_diag *g, const struct sim_state *st,
				  int with_pot, const char *what)
{
	struct sim_diag r;
	struct diag_scale s;
	sim_diag_compute(st, &r);
	scales_of(st, with_pot, &s);
	double worst = 0;
#define DIAG_CMP(a, b, scale)                                                                 \
	do {                                                                                  \
		double e_ = fabs((a) - (b)) / (scale);                                        \
		worst = e_ > worst ? e_ : worst;                                              \
		ck_assert_msg(e_ <= DIAG_RTOL, "%s: %s = %.17g, host %.17g (%.3g of %s)", what, \
			      #a, (a), (b), e_, #scale);                                      \
	} while (0)
	DIAG_CMP(g->mass, r.mass, s.m);
	DIAG_CMP(g->kinetic, r.kinetic, s.mv2);
	if (with_pot) {
		ck_assert_msg(isfinite(g->potential) && g->potential < 0, "%s: potential %g", what,
			      g->potential);
		DIAG_CMP(g->potential, r.potential, s.mphi);
		DIAG_CMP(g->total, r.total, s.mphi + s.mv2);
	}
	for (int c = 0; c < 3; c++) {
		DIAG_CMP(g->p[c], r.p[c], s.mv);
		DIAG_CMP(g->l[c], r.l[c], s.mxv);
		DIAG_CMP(g->com[c] * g->mass, r.com[c] * r.mass, s.mx);
		DIAG_CMP(g->comv[c] * g->mass, r.comv[c] * r.mass, s.mv);
	}
#undef DIAG_CMP
	/* not trivially zero: the bulk motions make them large */
	ck_assert_msg(fabs(r.p[1]) > 0.01 * s.mv && fabs(r.l[2]) > 0.01 * s.mxv,
		      "%s: test state has p_y %g, l_z %g", what, r.p[1], r.l[2]);
	return worst;
}

/* Through the engine: frame 0, then steps with the potential, then steps
 * without it. Each time: queue, wait, take, download, compare. */
static void engine_case(const char *solver, int n1, int n2)
{
	struct scene sc;
	struct sim_state st;
	struct engine *e = NULL;
	struct sim_diag d;
	double t = -1, worst = 0;
	char what[96];
	load_scene(&sc, solver, n1, n2);
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	for (size_t i = 0; i < st.n; i++)
		st.mass[i] = (float)st.mass[i]; /* the device's masses exactly */
	ck_assert_int_eq(engine_create(&sc, &st, -1, &e), 0);
	const int gpu = engine_gpu(e) != NULL;
	const int steps[3] = {0, 7, 4}, pot[3] = {1, 1, 0};
	for (int k = 0; k < 3; k++) {
		snprintf(what, sizeof what, "%s, %zu bodies, %s, after %d steps", solver, st.n,
			 gpu ? "GPU" : "CPU", steps[k]);
		ck_assert_int_eq(engine_advance_async(e, steps[k], pot[k]), 0);
		ck_assert_int_eq(engine_diag_queue(e), 0);
		ck_assert_int_eq(engine_check(e), 0);
		ck_assert_int_eq(engine_diag_take(e, &d, &t), 0);
		ck_assert_int_eq(engine_sync(e), 0);
		ck_assert_msg(t == st.time, "%s: diag time %.17g, state %.17g", what, t, st.time);
		/* the CPU keeps the last potential it computed; the GPU says NaN */
		if (gpu && !pot[k])
			ck_assert_msg(isnan(d.potential), "%s: potential %g, expected NaN", what,
				      d.potential);
		double w = assert_diag_matches(&d, &st, pot[k], what);
		worst = w > worst ? w : worst;
	}
	printf("%s, %zu bodies on the %s: largest |diag - host| / scale %.3g (bound %g)\n", solver,
	       st.n, gpu ? "GPU" : "CPU", worst, DIAG_RTOL);
	/* a take without a queue is an error, not a stale answer */
	ck_assert_int_eq(engine_diag_take(e, &d, &t), NB_ERUNTIME);
	engine_free(&e);
	sim_state_free(&st);
}

START_TEST(engine_diag_matches_sim_diag_compute)
{
	/* 1000 + 333 bodies: partial last block, several blocks */
	engine_case("direct", 1000, 333);
}
END_TEST

START_TEST(gpu_engine_diag_large_tree)
{
	/* more bodies than the reduction has threads (grid-stride loop), in
	 * the tree's permuted slot order */
	engine_case("barnes-hut", 150000, 50001);
}
END_TEST

/* Three bodies by hand: K, p, L from their definitions, W = -sum over
 * pairs m_i m_j / sqrt(r^2 + eps^2) (float force pass: 1e-5). */
START_TEST(gpu_diag_three_bodies_by_hand)
{
	const double x[9] = {1, 0, 0, -0.5, 2, 0.25, 0, -1.5, 3};
	const double v[9] = {0, 0.5, -0.25, 1, 0, 0.125, -0.75, 0.5, 1};
	const double m[3] = {2, 0.5, 1.25}, eps = 0.125;
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 3, 1), 0);
	memcpy(st.pos, x, sizeof x);
	memcpy(st.vel, v, sizeof v);
	memcpy(st.mass, m, sizeof m);
	struct sim_params p = {.solver = SCENE_SOLVER_DIRECT,
				   .direct_kernel = SCENE_DIRECT_AUTO,
				   .softening = eps,
				   .dt = 0.01,
				   .theta = 0.5,
				   .multipoles = 2,
				   .opening = SCENE_OPENING_BMAX};
	struct gpu_sim *g = NULL;
	ck_assert_int_eq(gpu_sim_create(&st, &p, &g), 0);
	struct sim_diag d, d2;
	ck_assert_int_eq(gpu_sim_diag_queue(g), 0);
	ck_assert_int_eq(gpu_sim_diag_take(g, &d), 0);
	/* the same state again: the same bits (fixed summation order) */
	ck_assert_int_eq(gpu_sim_diag_queue(g), 0);
	ck_assert_int_eq(gpu_sim_diag_take(g, &d2), 0);
	ck_assert_msg(memcmp(&d, &d2, sizeof d) == 0, "two reductions of one state differ");

	double K = 0, W = 0, P[3] = {0, 0, 0}, L[3] = {0, 0, 0}, M = 0, X[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		const double *xi = x + 3 * i, *vi = v + 3 * i;
		K += 0.5 * m[i] * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
		M += m[i];
		for (int c = 0; c < 3; c++) {
			P[c] += m[i] * vi[c];
			X[c] += m[i] * xi[c];
		}
		L[0] += m[i] * (xi[1] * vi[2] - xi[2] * vi[1]);
		L[1] += m[i] * (xi[2] * vi[0] - xi[0] * vi[2]);
		L[2] += m[i] * (xi[0] * vi[1] - xi[1] * vi[0]);
		for (int j = i + 1; j < 3; j++) {
			double r2 = eps * eps;
			for (int c = 0; c < 3; c++)
				r2 += (x[3 * j + c] - xi[c]) * (x[3 * j + c] - xi[c]);
			W -= m[i] * m[j] / sqrt(r2);
		}
	}
	/* all inputs are exact in float: K, p, L, com are exact sums */
	ck_assert_close(d.mass, M, 0, 1e-15);
	ck_assert_close(d.kinetic, K, 0, 1e-15);
	/* phi from the float force pass (rsqrtf, float sums): 1e-5 of |W|,
	 * measured 9.5e-7 on an H100; K + W cancels, so the total's bound is
	 * taken on |K| + |W| */
	ck_assert_close(d.potential, W, 0, 1e-5);
	ck_assert_close(d.total, K + W, 1e-5 * (fabs(K) + fabs(W)), 0);
	for (int c = 0; c < 3; c++) {
		ck_assert_close(d.p[c], P[c], 1e-15, 1e-15);
		ck_assert_close(d.l[c], L[c], 1e-15, 1e-15);
		ck_assert_close(d.com[c], X[c] / M, 1e-15, 1e-15);
		ck_assert_close(d.comv[c], P[c] / M, 1e-15, 1e-15);
	}
	/* a take with nothing queued is an error */
	ck_assert_int_eq(gpu_sim_diag_take(g, &d), NB_ERUNTIME);
	gpu_sim_free(&g);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_diag");
	TCase *tc = tcase_create("diag");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, engine_diag_matches_sim_diag_compute);
	suite_add_tcase(s, tc);
	TCase *gpu = tcase_create("gpu");
	tcase_add_checked_fixture(gpu, setup, teardown);
	tcase_set_timeout(gpu, 300);
	tcase_add_test(gpu, gpu_engine_diag_large_tree);
	tcase_add_test(gpu, gpu_diag_three_bodies_by_hand);
	NB_GPU_TCASE(s, gpu);
	return s;
}

NB_CHECK_MAIN(make_suite)
