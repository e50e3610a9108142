/* test_integrate.c - leapfrog and the engine: a circular two-body orbit
 * closes after one period; a Plummer sphere keeps its energy over ten
 * crossing times; the engine conserves momentum, picks the CPU when there
 * is no GPU, and stops with NB_ERUNTIME when a value turns non-finite; the
 * stats CSV carries the right values in galactic units.
 * Run: make BUILD=build CUDA=0 build/tests/test_integrate && build/tests/test_integrate */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/cuda/gpu.h"
#include "engine/engine.h"
#include "sim/sim.h"

struct force_ctx {
	double eps;
};

static int direct_force(const double *pos, const double *mass, size_t n, void *ctx, double *acc,
			double *pot)
{
	const struct force_ctx *c = ctx;
	return sim_direct_accel(pos, mass, n, c->eps, acc, pot);
}

static double energy(struct sim_state *st, double eps)
{
	ck_assert_int_eq(sim_direct_accel(st->pos, st->mass, st->n, eps, st->acc, st->pot), 0);
	struct sim_diag d;
	sim_diag_compute(st, &d);
	return d.total;
}

START_TEST(two_body_circular_orbit_closes)
{
	/* m1 = m2 = 1/2, separation 1: relative orbit of G M = 1, a = 1, so
	 * v_rel = 1 (each body 1/2) and period 2 pi sqrt(a^3 / (G M)) = 2 pi */
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 2, 1), 0);
	st.mass[0] = st.mass[1] = 0.5;
	st.pos[0] = 0.5, st.pos[3] = -0.5;
	st.vel[1] = 0.5, st.vel[4] = -0.5;
	double x0[6];
	memcpy(x0, st.pos, sizeof x0);
	struct force_ctx c = {1e-6};
	const int steps = 2000;
	const double T = 2 * M_PI, dt = T / steps;
	double e0 = energy(&st, c.eps), emax = 0, rmin = 1, rmax = 1;
	for (int s = 0; s < steps; s++) {
		ck_assert_int_eq(sim_leapfrog_step(&st, dt, direct_force, &c, 1), 0);
		struct sim_diag d;
		sim_diag_compute(&st, &d);
		emax = fmax(emax, fabs(d.total / e0 - 1));
		double dx = st.pos[0] - st.pos[3], dy = st.pos[1] - st.pos[4], dz = st.pos[2] - st.pos[5];
		double r = sqrt(dx * dx + dy * dy + dz * dz);
		rmin = fmin(rmin, r), rmax = fmax(rmax, r);
	}
	ck_assert_close(st.time, T, 0, 1e-12);
	ck_assert_int_eq(st.step, steps);
	for (int k = 0; k < 6; k++)
		ck_assert_close(st.pos[k], x0[k], 1e-3, 0);
	/* leapfrog: energy error of order (omega dt)^2, bounded, no drift */
	ck_assert_msg(emax < 1e-5, "max |dE/E| = %g", emax);
	ck_assert_msg(rmax - rmin < 1e-4, "separation varied between %g and %g", rmin, rmax);
	sim_state_free(&st);
}
END_TEST

START_TEST(plummer_energy_conserved_over_ten_crossing_times)
{
	/* G = M = a = 1: crossing time ~ 2 sqrt(2); dt = 0.02 ~ t_cross / 140,
	 * 10 crossing times. Softening 0.05 (~ the mean interparticle distance
	 * at the half-mass radius for N = 500). */
	const size_t n = nb_long_tests() ? 2000 : 500;
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20, 17, 1ull << 40);
	struct force_ctx c = {0.05};
	const double dt = 0.02, t_end = 10 * 2 * sqrt(2.0);
	double e0 = energy(&st, c.eps), emax = 0;
	struct sim_diag d0, d;
	sim_diag_compute(&st, &d0);
	while (st.time < t_end) {
		ck_assert_int_eq(sim_leapfrog_step(&st, dt, direct_force, &c, 1), 0);
		sim_diag_compute(&st, &d);
		emax = fmax(emax, fabs(d.total / e0 - 1));
	}
	ck_assert_msg(emax < 1e-3, "max |dE/E| = %g over %ld steps", emax, st.step);
	/* momentum and angular momentum stay at their initial values */
	double ps = 0;
	for (size_t i = 0; i < n; i++)
		ps += st.mass[i] * sqrt(st.vel[3 * i] * st.vel[3 * i] + st.vel[3 * i + 1] * st.vel[3 * i + 1] +
					st.vel[3 * i + 2] * st.vel[3 * i + 2]);
	for (int a = 0; a < 3; a++) {
		ck_assert_close(d.p[a], d0.p[a], 1e-12 * ps, 0);
		ck_assert_close(d.l[a], d0.l[a], 1e-10 * ps, 0);
	}
	sim_state_free(&st);
}
END_TEST

/* ---- engine ---- */

static char tmpdir[64];

static void setup(void)
{
	nb_trap_fpe();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-integrate-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void load_scene(struct scene *sc, const char *solver, const char *backend)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "units: nbody\nseed: 5\n"
		 "simulation: {solver: %s, theta: 0.5, softening: 0.05, dt: 0.02,"
		 " steps_per_frame: 10, backend: %s}\n"
		 "bodies:\n"
		 "  - {name: a, model: plummer, count: 600, mass: 1, scale: 1,"
		 " position: [-3, 0, 0], velocity: [0, 0.2, 0]}\n"
		 "  - {name: b, model: hernquist, count: 400, mass: 0.5, scale: 0.5,"
		 " position: [3, 0, 0], velocity: [0, -0.4, 0]}\n",
		 solver, backend);
	ck_assert_int_eq(scene_load_string(text, "engine.yaml", tmpdir, NULL, 0, sc), 0);
}

/* Read the whole of stderr written while f(arg) runs. */
static int capture_stderr(int (*f)(void *), void *arg, char *msg, size_t len)
{
	char path[128];
	snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
	fflush(stderr);
	int saved = dup(2);
	FILE *ef = fopen(path, "w");
	dup2(fileno(ef), 2);
	int rc = f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(ef);
	ef = fopen(path, "r");
	size_t got = fread(msg, 1, len - 1, ef);
	msg[got] = '\0';
	fclose(ef);
	return rc;
}

START_TEST(engine_cpu_conserves_momentum_and_energy)
{
	for (int tree = 0; tree < 2; tree++) { /* the CPU engine, GPU or not */
		struct scene sc;
		load_scene(&sc, tree ? "barnes-hut" : "direct", "cpu");
		struct sim_state st;
		ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
		struct engine *e = NULL;
		ck_assert_int_eq(engine_create(&sc, &st, -1, &e), 0);
		const char *desc = engine_describe(e);
		ck_assert_msg(strncmp(desc, "cpu (", 5) == 0 &&
				      strstr(desc, tree ? "barnes-hut" : "direct"),
			      "describe: %s", desc);
		struct sim_diag d0, d;
		sim_diag_compute(&st, &d0); /* create computed the potentials */
		ck_assert(isfinite(d0.potential) && d0.potential < 0);
		ck_assert_int_eq(engine_advance(e, 150, 1), 0);
		ck_assert_int_eq(engine_sync(e), 0);
		ck_assert_int_eq(st.step, 150);
		ck_assert_close(st.time, 150 * 0.02, 0, 1e-12);
		sim_diag_compute(&st, &d);
		/* |p| ~ 0.4; direct: third law to round-off; tree: not exactly */
		for (int a = 0; a < 3; a++)
			ck_assert_close(d.p[a], d0.p[a], tree ? 1e-4 : 1e-13, 0);
		ck_assert_msg(fabs(d.total / d0.total - 1) < 1e-3, "%s: dE/E = %g",
			      tree ? "tree" : "direct", d.total / d0.total - 1);
		engine_free(&e);
		ck_assert_ptr_null(e);
		sim_state_free(&st);
	}
}
END_TEST

static int create_cuda_engine(void *arg)
{
	struct scene *sc = arg;
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(sc, &st), 0);
	struct engine *e = NULL;
	int rc = engine_create(sc, &st, SCENE_BACKEND_CUDA, &e);
	engine_free(&e);
	sim_state_free(&st);
	return rc;
}

START_TEST(engine_cuda_without_gpu_is_an_input_error)
{
	char why[256], msg[2048];
	ck_assert_int_eq(gpu_probe(why, sizeof why), 0); /* registered only without a GPU */
	struct scene sc;
	load_scene(&sc, "direct", "cpu");
	int rc = capture_stderr(create_cuda_engine, &sc, msg, sizeof msg);
	ck_assert_int_eq(rc, NB_EINPUT);
	ck_assert_msg(strstr(msg, why) != NULL, "message '%s' lacks the reason '%s'", msg, why);
}
END_TEST

/* Two bodies fall straight at each other with no softening and meet
 * exactly at the origin after one step: x = +-1, v = -+0.9375, a = -+1/8,
 * dt = 1 -> x + (v + a/2) dt = 0 in binary floating point. The force of a
 * body on one at the same point is 0 * inf = NaN. */
static int run_to_nan(void *arg)
{
	(void)arg;
	fedisableexcept(FE_ALL_EXCEPT); /* the division by zero is the point */
	struct scene sc;
	load_scene(&sc, "direct", "cpu");
	sc.simulation.softening = 0;
	sc.simulation.dt = 1;
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 2, 1), 0);
	snprintf(st.comps[0].name, sizeof st.comps[0].name, "pair");
	st.comps[0].count = 2;
	st.mass[0] = st.mass[1] = 0.5;
	st.pos[0] = 1, st.pos[3] = -1;
	st.vel[0] = -0.9375, st.vel[3] = 0.9375;
	struct engine *e = NULL;
	ck_assert_int_eq(engine_create(&sc, &st, SCENE_BACKEND_CPU, &e), 0);
	ck_assert_close(st.acc[0], -0.125, 0, 1e-15);
	int rc = engine_advance(e, 5, 0);
	ck_assert_int_eq(st.step, 1); /* stopped at the first bad step */
	engine_free(&e);
	sim_state_free(&st);
	return rc;
}

START_TEST(engine_stops_on_non_finite_values)
{
	char msg[2048];
	int rc = capture_stderr(run_to_nan, NULL, msg, sizeof msg);
	ck_assert_int_eq(rc, NB_ERUNTIME);
	ck_assert_msg(strstr(msg, "step 1") && strstr(msg, "body 0") && strstr(msg, "'pair'") &&
			      strstr(msg, "try simulation.dt smaller or simulation.softening larger"),
		      "message: %s", msg);
}
END_TEST

START_TEST(stats_csv_in_galactic_units)
{
	/* one body of internal mass 1 (2.32509e9 M_sun) at (0, 1, 0) kpc moving
	 * at (1, 0, 0) internal = 100 km/s, phi = -2 internal, t = 1 internal
	 * (9.7779 Myr): K = 1/2 m v^2, W = 1/2 m phi, L_z = m (x v_y - y v_x) */
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 1, 1), 0);
	st.mass[0] = 1, st.pos[1] = 1, st.vel[0] = 1, st.pot[0] = -2, st.time = 1;
	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	struct sim_diag d;
	sim_diag_compute(&st, &d);
	char path[128], tmp[256];
	snprintf(path, sizeof path, "%s/stats.csv", tmpdir);
	ck_assert_int_eq(sim_outfile_temp_name(path, tmp, sizeof tmp), 0);
	FILE *f = NULL;
	ck_assert_int_eq(sim_stats_open(path, &f), 0);
	ck_assert_int_eq(sim_stats_row(f, 3, &st, &d, &u), 0);
	ck_assert_int_eq(access(path, F_OK) == 0, 0); /* not in place yet */
	ck_assert_int_eq(access(tmp, F_OK), 0);
	ck_assert_int_eq(sim_stats_close(f, path, 1), 0);
	ck_assert_int_ne(access(tmp, F_OK), 0);

	FILE *r = fopen(path, "r");
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof line, r));
	ck_assert_str_eq(line, "frame,time,kinetic,potential,total,px,py,pz,lx,ly,lz\n");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, r));
	fclose(r);
	int frame;
	double v[10];
	ck_assert_int_eq(sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &frame, &v[0],
				&v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]),
			 11);
	const double M = 2.32509e9, V = 100; /* M_sun, km/s per internal unit */
	ck_assert_int_eq(frame, 3);
	ck_assert_close(v[0], 9.7779, 0, 1e-4);
	ck_assert_close(v[1], 0.5 * M * V * V, 0, 1e-5);
	ck_assert_close(v[2], -1.0 * M * V * V, 0, 1e-5);
	ck_assert_close(v[3], -0.5 * M * V * V, 0, 1e-5);
	ck_assert_close(v[4], M * V, 0, 1e-5);
	ck_assert_close(v[5], 0, 1e-300, 0);
	ck_assert_close(v[9], -M * V, 0, 1e-5); /* kpc = 1 internal length */

	/* a failed run leaves neither file */
	snprintf(path, sizeof path, "%s/stats2.csv", tmpdir);
	ck_assert_int_eq(sim_outfile_temp_name(path, tmp, sizeof tmp), 0);
	ck_assert_int_eq(sim_stats_open(path, &f), 0);
	ck_assert_int_eq(sim_stats_close(f, path, 0), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("integrate");
	TCase *tc = tcase_create("integrate");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, two_body_circular_orbit_closes);
	tcase_add_test(tc, plummer_energy_conserved_over_ten_crossing_times);
	tcase_add_test(tc, engine_cpu_conserves_momentum_and_energy);
	if (!nb_gpu_usable(NULL, 0))
		tcase_add_test(tc, engine_cuda_without_gpu_is_an_input_error);
	tcase_add_test(tc, engine_stops_on_non_finite_values);
	tcase_add_test(tc, stats_csv_in_galactic_units);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
