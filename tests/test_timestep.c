/* test_timestep.c - individual (block) time steps (sim/timestep.c, the
 * rule in sim/timestep_rule.h; GPU sim/cuda/sim_levels.cu): the level rule
 * by hand; an eccentric binary conserves energy at least as well as shared
 * steps at the same smallest step with fewer force evaluations; a Plummer
 * sphere keeps its energy over ten crossing times, its momentum to
 * round-off when every body shares a level and to the scheme's truncation
 * level otherwise; the engine's CPU path; the GPU against the CPU twin
 * (GPU cases SKIP without a GPU).
 * Run: make CUDA_ARCH=sm_90 build/tests/test_timestep && build/tests/test_timestep */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "engine/engine.h"
#include "sim/cuda/gpu.h"
#include "sim/sim.h"
#include "sim/timestep_rule.h"

struct fctx {
	double eps;
};

static int direct_active(const double *pos, const double *mass, size_t n, const unsigned char *active,
			 void *ctx, double *acc, double *pot)
{
	const struct fctx *c = ctx;
	return sim_direct_accel_active(pos, mass, n, c->eps, active, acc, pot);
}

static int direct_all(const double *pos, const double *mass, size_t n, void *ctx, double *acc,
		      double *pot)
{
	const struct fctx *c = ctx;
	return sim_direct_accel(pos, mass, n, c->eps, acc, pot);
}

static double total_energy(struct sim_state *st, double eps)
{
	ck_assert_int_eq(sim_direct_accel(st->pos, st->mass, st->n, eps, st->acc, st->pot), 0);
	struct sim_diag d;
	sim_diag_compute(st, &d);
	return d.total;
}

START_TEST(level_rule_by_hand)
{
	/* dt_i = sqrt(2 eta eps / |a|): eta eps = 1/2, |a| = 1 gives dt_i = 1 */
	ck_assert_int_eq(sim_ts_want_level(1.0, 1.0, 0.5, 1.0, 10), 0);
	ck_assert_int_eq(sim_ts_want_level(1.0, 2.0, 0.5, 1.0, 10), 1);   /* dt_i = 1 = 2/2 */
	ck_assert_int_eq(sim_ts_want_level(1.0, 2.01, 0.5, 1.0, 10), 2);  /* just over */
	ck_assert_int_eq(sim_ts_want_level(256.0, 1.0, 0.5, 1.0, 10), 2); /* dt_i = 1/4 */
	ck_assert_int_eq(sim_ts_want_level(1e12, 1.0, 0.5, 1.0, 10), 10); /* capped */
	ck_assert_int_eq(sim_ts_want_level(NAN, 1.0, 0.5, 1.0, 7), 7);
	/* plan 3: ticks 1..8; tick 4 ends steps of levels >= 1, tick 8 all */
	ck_assert_int_eq(sim_ts_active_level(1, 3), 3);
	ck_assert_int_eq(sim_ts_active_level(2, 3), 2);
	ck_assert_int_eq(sim_ts_active_level(4, 3), 1);
	ck_assert_int_eq(sim_ts_active_level(6, 3), 2);
	ck_assert_int_eq(sim_ts_active_level(8, 3), 0);
	/* rebuild stride (GPU refits): the default scene, dt_max 3 Myr, plan 4
	 * (ticks of 0.1875 Myr), rebuild_dt = dt = 0.5 Myr: the steps of level
	 * 3 (0.375 Myr) end every 2nd tick */
	ck_assert_int_eq(sim_ts_rebuild_stride(4, 3.0, 0.5), 2);
	/* dt = 3, steps_per_frame = 1 (rebuild_dt 3 Myr), plan 3: it refitted
	 * 7 ticks of 8 over up to 2.6 Myr of drift (11.7x the walk's work at
	 * 3 Myr): now at most one refit between builds */
	ck_assert_int_eq(sim_ts_rebuild_stride(3, 3.0, 3.0), 2);
	ck_assert_int_eq(sim_ts_rebuild_stride(3, 3.0, 0.5), 1);
	ck_assert_int_eq(sim_ts_rebuild_stride(0, 3.0, 3.0), 1);
	ck_assert_int_eq(sim_ts_rebuild_stride(5, 3.0, 0.0), 1);
	/* a larger step only where it is synchronised; never finer than the plan
	 * before the block end */
	ck_assert_int_eq(sim_ts_next_level(0, 2, 3, 0), 2);
	ck_assert_int_eq(sim_ts_next_level(1, 1, 3, 0), 1);
	ck_assert_int_eq(sim_ts_next_level(5, 2, 3, 0), 3);
	ck_assert_int_eq(sim_ts_next_level(5, 0, 3, 1), 5);
	ck_assert_int_eq(sim_ts_next_level(0, 0, 3, 1), 0);
}
END_TEST

/* Bodies 0.8 and 0.2 on a Kepler ellipse of e = 0.9, a = 1 (G M = 1,
 * period 2 pi), starting at apocentre; eps = 0.005 (pericentre 0.1 = 20
 * eps). The light body feels 4x the acceleration: a level finer. */
static void binary(struct sim_state *st)
{
	const double e = 0.9, m0 = 0.8, m1 = 0.2, ra = 1 + e, va = sqrt((1 - e) / (1 + e));
	ck_assert_int_eq(sim_state_alloc(st, 2, 1), 0);
	st->mass[0] = m0, st->mass[1] = m1;
	st->pos[0] = -m1 * ra, st->pos[3] = m0 * ra;
	st->vel[1] = -m1 * va, st->vel[4] = m0 * va;
}

/* A body whose |a| hovers around a level boundary: dt_max 2, eta eps = 1/2,
 * so dt_i = 1 / sqrt(|a|) and the L1 step (1) ends where |a| = 1. With
 * |a| alternating 1.1 / 0.9 the plain rule flips L2 / L1 at every step
 * end; with margin 1.25 the body goes to L2 once and returns to L1 only
 * where dt_i >= 1.25, i.e. |a| <= 0.64. */
START_TEST(coarsen_margin_stops_flip_flop)
{
	int plain = 1, held = 1, plain_changes = 0, held_changes = 0;
	for (int k = 0; k < 20; k++) {
		double a = k % 2 ? 0.9 : 1.1;
		int p = sim_ts_want_level_from(a * a, 2.0, 0.5, 1.0, 10, plain, 1.0);
		int h = sim_ts_want_level_from(a * a, 2.0, 0.5, 1.0, 10, held, 1.25);
		ck_assert_int_eq(p, sim_ts_want_level(a * a, 2.0, 0.5, 1.0, 10)); /* margin 1: plain */
		plain_changes += p != plain;
		held_changes += h != held;
		plain = p;
		held = h;
	}
	ck_assert_int_eq(plain_changes, 20);
	ck_assert_int_eq(held_changes, 1);
	ck_assert_int_eq(held, 2);
	/* finer at once, coarser once dt_i >= 1.25 x the coarser step */
	ck_assert_int_eq(sim_ts_want_level_from(1.1 * 1.1, 2.0, 0.5, 1.0, 10, 0, 1.25), 2);
	ck_assert_int_eq(sim_ts_want_level_from(0.65 * 0.65, 2.0, 0.5, 1.0, 10, 2, 1.25), 2);
	ck_assert_int_eq(sim_ts_want_level_from(0.6 * 0.6, 2.0, 0.5, 1.0, 10, 2, 1.25), 1);
	/* |a| 0.01: dt_i = 10, wants L0 (step 2): 10 >= 1.25 x 2 */
	ck_assert_int_eq(sim_ts_want_level_from(1e-4, 2.0, 0.5, 1.0, 10, 3, 1.25), 0);
	ck_assert_int_eq(sim_ts_want_level_from(0.0, 2.0, 0.5, 1.0, 10, 0, 0.0), 0);
}
END_TEST

START_TEST(eccentric_binary_individual_beats_shared)
{
	struct fctx c = {0.005};
	/* dt_max = period / 256: a body refines below a block's plan only at
	 * the block end, so a block must be short next to the pericentre
	 * passage (~0.02 here; with period / 64 the whole passage fits in one
	 * block and the error is 3x shared's) */
	const double t_end = 3 * 2 * M_PI, dt_max = 2 * M_PI / 256;
	struct sim_state st;
	binary(&st);
	const double e0 = total_energy(&st, c.eps);
	struct sim_ts ts;
	struct sim_params p = {.dt_max = dt_max, .eta = 0.025, .softening = c.eps, .max_level = 12};
	ck_assert_int_eq(sim_ts_init(&ts, &p, &st), 0);
	int finest = 0;
	double emax_i = 0;
	long blocks = (long)llround(t_end / dt_max);
	for (long b = 0; b < blocks; b++) {
		ck_assert_int_eq(sim_ts_block_step(&ts, &st, direct_active, &c, 1), 0);
		finest = finest > sim_ts_plan(ts.hist) ? finest : sim_ts_plan(ts.hist);
		struct sim_diag d;
		sim_diag_compute(&st, &d);
		emax_i = fmax(emax_i, fabs(d.total / e0 - 1));
	}
	/* finest level used; the plan follows it at block ends only, so also
	 * take the levels reached mid-block from the evaluations: at least one
	 * block ran at the finest plan */
	const double evals_i = ts.evals;
	sim_ts_free(&ts);
	sim_state_free(&st);

	/* shared steps at that smallest step, energy sampled at the same times */
	binary(&st);
	const double dt = ldexp(dt_max, -finest);
	const long per = 1L << finest;
	double emax_s = 0;
	ck_assert_int_eq(sim_direct_accel(st.pos, st.mass, 2, c.eps, st.acc, st.pot), 0);
	for (long b = 0; b < blocks; b++) {
		for (long k = 0; k < per; k++)
			ck_assert_int_eq(sim_leapfrog_step(&st, dt, direct_all, &c, k == per - 1), 0);
		struct sim_diag d;
		sim_diag_compute(&st, &d);
		emax_s = fmax(emax_s, fabs(d.total / e0 - 1));
	}
	const double evals_s = 2.0 * blocks * per;
	sim_state_free(&st);
	fprintf(stderr,
		"binary e = 0.9, 3 orbits: individual max |dE/E| %.3e with %.0f force evaluations; "
		"shared dt_max/2^%d: %.3e with %.0f\n",
		emax_i, evals_i, finest, emax_s, evals_s);
	ck_assert_msg(finest >= 3, "the pericentre should need a finer level, finest %d", finest);
	ck_assert_msg(emax_i <= emax_s * 1.05, "individual %.3e, shared %.3e", emax_i, emax_s);
	ck_assert_msg(evals_i < 0.5 * evals_s, "evaluations: individual %.0f, shared %.0f", evals_i,
		      evals_s);
}
END_TEST

/* G = M = a = 1 Plummer sphere, N = 500, eps = 0.05 (as test_integrate.c),
 * ten crossing times (2 sqrt(2) each), dt_max = 0.08 (4 x the shared test's
 * step), eta 0.025. */
static void plummer_run(int max_level, double *emax, double *dp, double *ps, double *epbs,
			long hist[SIM_TS_LEVELS])
{
	const size_t n = 500;
	struct fctx c = {0.05};
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20, 17, 1ull << 40);
	const double e0 = total_energy(&st, c.eps), dt_max = 0.02;
	struct sim_diag d0, d;
	sim_diag_compute(&st, &d0);
	struct sim_ts ts;
	struct sim_params p = {.dt_max = dt_max, .eta = 0.005, .softening = c.eps, .max_level = max_level};
	ck_assert_int_eq(sim_ts_init(&ts, &p, &st), 0);
	const long blocks = (long)ceil(10 * 2 * sqrt(2.0) / dt_max);
	*emax = 0;
	for (long b = 0; b < blocks; b++) {
		ck_assert_int_eq(sim_ts_block_step(&ts, &st, direct_active, &c, 1), 0);
		sim_diag_compute(&st, &d);
		*emax = fmax(*emax, fabs(d.total / e0 - 1));
	}
	*ps = 0;
	for (size_t i = 0; i < n; i++)
		*ps += st.mass[i] * sqrt(st.vel[3 * i] * st.vel[3 * i] +
					 st.vel[3 * i + 1] * st.vel[3 * i + 1] +
					 st.vel[3 * i + 2] * st.vel[3 * i + 2]);
	*dp = 0;
	for (int a = 0; a < 3; a++)
		*dp = fmax(*dp, fabs(d.p[a] - d0.p[a]));
	*epbs = ts.evals / (double)n / (double)blocks;
	memcpy(hist, ts.hist, sizeof ts.hist);
	sim_ts_free(&ts);
	sim_state_free(&st);
}

START_TEST(plummer_individual_steps_keep_energy_and_momentum)
{
	double emax, dp, ps, epbs;
	long hist[SIM_TS_LEVELS];
	char h[256];
	plummer_run(10, &emax, &dp, &ps, &epbs, hist);
	sim_ts_format_hist(hist, h, sizeof h);
	fprintf(stderr,
		"plummer N = 500, 10 crossing times, individual: max |dE/E| %.3e, |dP| %.2e of "
		"sum m|v| %.3f, %.4f evaluations per body per dt_max (levels at the end %s)\n",
		emax, dp, ps, epbs, h);
	ck_assert_msg(emax < 1e-3, "max |dE/E| = %g", emax);
	/* some bodies passed through level 1 (fine steps near the centre) */
	ck_assert_msg(epbs > 1.0, "%.4f evaluations per body per block: the test should mix levels",
		      epbs);
	/* Bodies on different levels are kicked at different times by the same
	 * pair force: the momentum error per block is the difference between
	 * the trapezoid and midpoint rules for that force, third order in the
	 * step, not round-off. What is asserted: it stays small against the
	 * momentum scale sum m|v| (measured 7e-6 of it; bound 1e-4). */
	ck_assert_msg(dp < 1e-4 * ps, "|dP| = %g with mixed levels", dp);
	/* One level (max_level 0): the scheme is shared leapfrog and the
	 * one-sided double sums give momentum to round-off. */
	plummer_run(0, &emax, &dp, &ps, &epbs, hist);
	fprintf(stderr, "plummer, every body on level 0: |dP| %.2e, max |dE/E| %.3e\n", dp, emax);
	ck_assert_msg(dp < 1e-12 * ps, "|dP| = %g on one level", dp);
}
END_TEST

/* The engine's CPU path: frames of whole blocks, time and step as shared. */
START_TEST(engine_cpu_individual_steps)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "units: nbody\nseed: 5\n"
		 "simulation: {solver: barnes-hut, softening: 0.05, dt: 0.02, steps_per_frame: 4,"
		 " timesteps: individual, blocks_per_frame: 2, backend: cpu}\n"
		 "bodies:\n  - {name: a, model: plummer, count: 800, mass: 1, scale: 1}\n");
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "ts.yaml", "/tmp", NULL, 0, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	struct engine *e = NULL;
	ck_assert_int_eq(engine_create(&sc, &st, -1, &e), 0);
	ck_assert_ptr_nonnull(strstr(engine_describe(e), "individual"));
	struct sim_diag d0, d;
	sim_diag_compute(&st, &d0);
	ck_assert_int_eq(engine_advance(e, 40, 1), 0); /* 10 frames */
	ck_assert_int_eq(engine_advance(e, 3, 1), NB_ERUNTIME); /* not whole blocks */
	ck_assert_int_eq(st.step, 40);
	ck_assert_close(st.time, 40 * 0.02, 0, 1e-12);
	sim_diag_compute(&st, &d);
	ck_assert_msg(fabs(d.total / d0.total - 1) < 1e-3, "dE/E = %g", d.total / d0.total - 1);
	struct engine_ts_stats s;
	ck_assert_int_eq(engine_ts_stats(e, &s), 0);
	ck_assert_int_eq(s.blocks, 20);
	ck_assert(s.evals_per_body_frame >= 2.0 - 1e-12); /* at least one per block */
	long tot = 0;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		tot += s.hist[L];
	ck_assert_int_eq(tot, 800);
	engine_free(&e);
	sim_state_free(&st);
}
END_TEST

/* ---- the GPU's refit, on the CPU (sim_tree_accel_refit) ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Forces and work of a refitted tree against a rebuilt one, over the
 * bodies of st drifted by tau (x + v tau, the tick loop's drift): the
 * refit's errors against direct summation stay those of a tree (bmax is
 * recomputed, so the criterion holds), and the work (interactions per
 * body) grows with the drift. Returns work(refit) / work(rebuild); *err_r
 * and *err_b the median relative force error of each against direct. */
static double refit_vs_rebuild(const struct sim_state *st, double eps, double tau, double *err_r,
			       double *err_b)
{
	const size_t n = st->n;
	double *x = malloc(3 * n * sizeof *x), *ar = malloc(3 * n * sizeof *ar),
	       *ab = malloc(3 * n * sizeof *ab), *ad = malloc(3 * n * sizeof *ad),
	       *wr = malloc(n * sizeof *wr), *wb = malloc(n * sizeof *wb),
	       *er = malloc(n * sizeof *er), *eb = malloc(n * sizeof *eb);
	ck_assert(x && ar && ab && ad && wr && wb && er && eb);
	for (size_t k = 0; k < 3 * n; k++)
		x[k] = st->pos[k] + st->vel[k] * tau;
	ck_assert_int_eq(sim_tree_accel_refit(st->pos, x, st->mass, n, eps, 0.5, 2, NULL, ar, NULL,
					      wr), 0);
	ck_assert_int_eq(sim_tree_accel_sel(x, st->mass, n, eps, 0.5, 2, SCENE_OPENING_BMAX, NULL,
					    ab, NULL, wb), 0);
	ck_assert_int_eq(sim_direct_accel(x, st->mass, n, eps, ad, NULL), 0);
	double sr = 0, sb = 0;
	for (size_t i = 0; i < n; i++) {
		double d2 = 0, r2 = 0, b2 = 0;
		for (int a = 0; a < 3; a++) {
			d2 += ad[3 * i + a] * ad[3 * i + a];
			r2 += (ar[3 * i + a] - ad[3 * i + a]) * (ar[3 * i + a] - ad[3 * i + a]);
			b2 += (ab[3 * i + a] - ad[3 * i + a]) * (ab[3 * i + a] - ad[3 * i + a]);
		}
		er[i] = sqrt(r2 / d2);
		eb[i] = sqrt(b2 / d2);
		sr += wr[i];
		sb += wb[i];
	}
	/* medians (n small: a selection by sorting is fine) */
	qsort(er, n, sizeof *er, cmp_double);
	qsort(eb, n, sizeof *eb, cmp_double);
	*err_r = er[n / 2];
	*err_b = eb[n / 2];
	free(x), free(ar), free(ab), free(ad), free(wr), free(wb), free(er), free(eb);
	return sr / sb;
}

/* A refit's forces are a tree's: after a drift of 0 the refit is the
 * build; after drifts up to a tenth of a crossing time its median error
 * against direct summation stays within the rebuilt tree's (it opens more
 * cells, so it is usually better) and its work only grows. */
START_TEST(refit_walk_forces_within_tree_tolerance)
{
	const char *text = "units: nbody\nseed: 9\n"
			   "simulation: {solver: barnes-hut, softening: 0.02, dt: 0.01}\n"
			   "bodies:\n  - {name: a, model: plummer, count: 6000, mass: 1, scale: 1}\n";
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "refit.yaml", "/tmp", NULL, 0, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	double er, eb, prev = 0;
	const double taus[] = {0, 0.01, 0.03, 0.1, 0.3};
	for (int k = 0; k < 5; k++) {
		double w = refit_vs_rebuild(&st, 0.02, taus[k], &er, &eb);
		fprintf(stderr, "plummer refit after drift %.2f: work x%.2f of a rebuild, median "
				"|da|/|a| %.2e (rebuild %.2e)\n", taus[k], w, er, eb);
		if (k == 0) {
			ck_assert_double_eq_tol(w, 1.0, 1e-12);
			ck_assert_double_eq_tol(er, eb, 1e-15);
		}
		ck_assert_msg(er <= 1.5 * eb + 1e-7, "refit error %g against rebuild %g", er, eb);
		ck_assert(w >= prev - 0.02);
		prev = w;
	}
	sim_state_free(&st);
}
END_TEST

/* The default scene's bodies (scenes/galaxy-collision.yaml, 20000 of its
 * 1M, the same softening): the refitted walk's work against the drift
 * since the build, in Myr (1 internal time unit = 9.78 Myr), and its
 * forces within the tree's tolerance. At 20000 bodies the growth is mild
 * (x1.33 at 3 Myr); at the full 1M (cells 3.7x smaller) it is x1.07 /
 * 1.25 / 1.95 / 4.4 / 11.7 at 0.19 / 0.38 / 0.75 / 1.5 / 3 Myr, which is
 * why the GPU refits at most one tick between builds
 * (sim_ts_rebuild_stride). */
START_TEST(refit_work_on_the_default_scene)
{
	const char *ov[] = {"bodies.0.disk.count=4000", "bodies.0.bulge.count=1000",
			    "bodies.0.halo.count=5000", "bodies.1.disk.count=4000",
			    "bodies.1.bulge.count=1000", "bodies.1.halo.count=5000"};
	struct scene sc;
	ck_assert_int_eq(scene_load("scenes/galaxy-collision.yaml", ov, 6, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	struct sim_units u;
	scene_units_of(sc.units, &u);
	const double eps = scene_softening(&sc);
	const double myr[] = {0.1875, 0.375, 0.75, 1.5, 3.0};
	for (int k = 0; k < 5; k++) {
		double er, eb;
		double w = refit_vs_rebuild(&st, eps, myr[k] * u.time, &er, &eb);
		fprintf(stderr, "galaxy-collision refit after %.4g Myr: work x%.2f of a rebuild, "
				"median |da|/|a| %.2e (rebuild %.2e)\n", myr[k], w, er, eb);
		ck_assert_msg(er <= 1.5 * eb + 1e-7, "refit error %g against rebuild %g", er, eb);
	}
	sim_state_free(&st);
}
END_TEST

/* ---- GPU against the CPU twin ---- */

/* A few block steps of a 2000-body two-cluster scene on both backends,
 * the same levels rule; positions within the tree's tolerance. */
static void gpu_vs_cpu(const char *solver)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "units: nbody\nseed: 9\n"
		 "simulation: {solver: %s, softening: 0.05, dt: 0.02, steps_per_frame: 4,"
		 " timesteps: individual, eta: 0.025}\n"
		 "bodies:\n"
		 "  - {name: a, model: plummer, count: 1200, mass: 1, scale: 1, position: [-2, 0, 0]}\n"
		 "  - {name: b, model: hernquist, count: 800, mass: 0.5, scale: 0.3, position: [2, 0, 0]}\n",
		 solver);
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "ts-gpu.yaml", "/tmp", NULL, 0, &sc), 0);
	struct sim_state sc_cpu, sc_gpu;
	ck_assert_int_eq(sim_ic_build(&sc, &sc_cpu), 0);
	ck_assert_int_eq(sim_ic_build(&sc, &sc_gpu), 0);
	struct engine *ec = NULL, *eg = NULL;
	ck_assert_int_eq(engine_create(&sc, &sc_cpu, SCENE_BACKEND_CPU, &ec), 0);
	ck_assert_int_eq(engine_create(&sc, &sc_gpu, SCENE_BACKEND_CUDA, &eg), 0);
	ck_assert_int_eq(engine_advance(ec, 12, 1), 0); /* 3 blocks */
	ck_assert_int_eq(engine_advance(eg, 12, 1), 0);
	ck_assert_int_eq(engine_sync(eg), 0);
	struct engine_ts_stats s1, s2;
	ck_assert_int_eq(engine_ts_stats(ec, &s1), 0);
	ck_assert_int_eq(engine_ts_stats(eg, &s2), 0);
	double worst = 0, scale = 0;
	for (size_t i = 0; i < 3 * sc_cpu.n; i++) {
		worst = fmax(worst, fabs(sc_cpu.pos[i] - sc_gpu.pos[i]));
		scale = fmax(scale, fabs(sc_cpu.pos[i]));
	}
	long dl = 0;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		dl += labs(s1.hist[L] - s2.hist[L]);
	fprintf(stderr, "GPU vs CPU (%s), 3 blocks: max |dx| %.3e (scale %.3g); evaluations %.0f / %.0f; "
		"level histogram differs in %ld bodies\n", solver, worst, scale, s1.evals, s2.evals, dl);
	/* float state and the tree's force error (median ~2e-4): positions
	 * agree to ~1e-5 of the scale after a few steps; levels may differ
	 * for bodies on a level boundary */
	ck_assert_msg(worst < 1e-4 * scale, "max |dx| = %g", worst);
	ck_assert_msg(dl <= (long)(0.01 * sc_cpu.n), "levels differ in %ld bodies", dl);
	ck_assert_msg(fabs(s1.evals - s2.evals) <= 0.01 * s1.evals, "evaluations %g vs %g", s1.evals,
		      s2.evals);
	engine_free(&ec);
	engine_free(&eg);
	sim_state_free(&sc_cpu);
	sim_state_free(&sc_gpu);
}

START_TEST(gpu_individual_steps_match_cpu_tree)
{
	gpu_vs_cpu("barnes-hut");
}
END_TEST

START_TEST(gpu_individual_steps_match_cpu_direct)
{
	gpu_vs_cpu("direct");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("timestep");
	TCase *tc = tcase_create("timestep");
	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, level_rule_by_hand);
	tcase_add_test(tc, coarsen_margin_stops_flip_flop);
	tcase_add_test(tc, eccentric_binary_individual_beats_shared);
	tcase_add_test(tc, plummer_individual_steps_keep_energy_and_momentum);
	tcase_add_test(tc, engine_cpu_individual_steps);
	suite_add_tcase(s, tc);
	TCase *tr = tcase_create("refit");
	tcase_set_timeout(tr, 600);
	tcase_add_checked_fixture(tr, nb_trap_fpe, NULL);
	tcase_add_test(tr, refit_walk_forces_within_tree_tolerance);
	tcase_add_test(tr, refit_work_on_the_default_scene);
	suite_add_tcase(s, tr);
	TCase *tg = tcase_create("gpu");
	tcase_set_timeout(tg, 600);
	tcase_add_test(tg, gpu_individual_steps_match_cpu_tree);
	tcase_add_test(tg, gpu_individual_steps_match_cpu_direct);
	NB_GPU_TCASE(s, tg);
	return s;
}

NB_CHECK_MAIN(make_suite)
