/* test_models.c - initial conditions and state files: Plummer and Hernquist
 * spheres against their analytic profiles, dispersions and the virial
 * theorem; sim_ic_build's component table, placement and units; the state
 * CSV round trip and its error messages.
 * Run: make BUILD=build CUDA=0 build/tests/test_models && build/tests/test_models */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/sim.h"

#define NMODEL 10000

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void make_sphere(struct sim_state *st, int hernquist, size_t n, double rmax, uint64_t seed)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 1), 0);
	if (hernquist)
		sim_ic_hernquist(st, 0, n, 1.0, 1.0, rmax, seed, 1ull << 40);
	else
		sim_ic_plummer(st, 0, n, 1.0, 1.0, rmax, seed, 1ull << 40);
}

/* 2K / |W| with W from direct summation (eps tiny next to a = 1). */
static double virial_ratio(struct sim_state *st)
{
	ck_assert_int_eq(sim_direct_accel(st->pos, st->mass, st->n, 1e-4, st->acc, st->pot), 0);
	struct sim_diag d;
	sim_diag_compute(st, &d);
	return 2 * d.kinetic / fabs(d.potential);
}

static double radius(const struct sim_state *st, size_t i)
{
	const double *x = st->pos + 3 * i;
	return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

START_TEST(spheres_same_seed_identical_for_any_thread_count)
{
	for (int h = 0; h < 2; h++) {
		struct sim_state a, b, c;
		omp_set_num_threads(1);
		make_sphere(&a, h, 3000, h ? 50 : 20, 11);
		omp_set_num_threads(2);
		make_sphere(&b, h, 3000, h ? 50 : 20, 11);
		make_sphere(&c, h, 3000, h ? 50 : 20, 12);
		ck_assert(memcmp(a.pos, b.pos, 3 * a.n * sizeof(double)) == 0);
		ck_assert(memcmp(a.vel, b.vel, 3 * a.n * sizeof(double)) == 0);
		ck_assert(memcmp(a.mass, b.mass, a.n * sizeof(double)) == 0);
		size_t same = 0;
		for (size_t i = 0; i < 3 * a.n; i++)
			same += a.pos[i] == c.pos[i];
		ck_assert_msg(same == 0, "%zu coordinates equal under a different seed", same);
		sim_state_free(&a);
		sim_state_free(&b);
		sim_state_free(&c);
	}
}
END_TEST

START_TEST(spheres_have_mass_and_rest_at_origin)
{
	for (int h = 0; h < 2; h++) {
		struct sim_state st;
		make_sphere(&st, h, 5000, h ? 50 : 20, 3);
		struct sim_diag d;
		sim_diag_compute(&st, &d);
		ck_assert_close(d.mass, 1.0, 0, 1e-12);
		for (int a = 0; a < 3; a++) {
			ck_assert_close(d.com[a], 0.0, 1e-12, 0);
			ck_assert_close(d.comv[a], 0.0, 1e-12, 0);
		}
		double rmax = 0;
		for (size_t i = 0; i < st.n; i++)
			rmax = fmax(rmax, radius(&st, i));
		/* truncation radius (plus the recentring shift, << 1) */
		ck_assert(rmax < (h ? 50 : 20) + 1);
		sim_state_free(&st);
	}
}
END_TEST

START_TEST(plummer_half_mass_radius_and_virial)
{
	struct sim_state st;
	const double rmax = 20;
	make_sphere(&st, 0, NMODEL, rmax, 5);
	double *r = malloc(st.n * sizeof *r);
	for (size_t i = 0; i < st.n; i++)
		r[i] = radius(&st, i);
	qsort(r, st.n, sizeof *r, cmp_double);
	/* M(r)/M = r^3/(r^2+a^2)^{3/2}; half of the mass inside rmax */
	double y = 0.5 * pow(rmax * rmax / (rmax * rmax + 1), 1.5);
	double rh = 1 / sqrt(pow(y, -2.0 / 3.0) - 1);
	ck_assert_close(rh, 1 / sqrt(pow(2, 2.0 / 3.0) - 1), 0, 0.01); /* 1.305 a untruncated */
	ck_assert_close(r[st.n / 2], rh, 0, 0.03);
	free(r);
	ck_assert_close(virial_ratio(&st), 1.0, 0, 0.05);
	sim_state_free(&st);
}
END_TEST

/* Mean v^2 of bodies with r in [r0, r1) against 3 sigma^2(r) averaged over
 * the shell's mass: sigma2(r) and rho(r) given as functions. Tolerance: 4
 * standard errors of the sample mean plus 1% for the quadrature. */
static void check_shell_dispersion(const struct sim_state *st, double r0, double r1,
				   double (*sigma2)(double), double (*rho)(double))
{
	double sv2 = 0, sv4 = 0;
	long cnt = 0;
	for (size_t i = 0; i < st->n; i++) {
		double r = radius(st, i);
		if (r >= r0 && r < r1) {
			const double *v = st->vel + 3 * i;
			double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
			sv2 += v2;
			sv4 += v2 * v2;
			cnt++;
		}
	}
	double num = 0, den = 0;
	const int m = 2000;
	for (int k = 0; k < m; k++) {
		double r = r0 + (r1 - r0) * (k + 0.5) / m;
		double w = rho(r) * r * r;
		num += w * 3 * sigma2(r);
		den += w;
	}
	ck_assert_msg(cnt > 500, "only %ld bodies in [%g, %g)", cnt, r0, r1);
	double mean = sv2 / cnt, sem = sqrt((sv4 / cnt - mean * mean) / cnt);
	ck_assert_msg(NB_CLOSE(mean, num / den, 4 * sem, 0.01),
		      "shell [%g, %g): <v^2> = %g +- %g, expected %g (%ld bodies)", r0, r1, mean,
		      sem, num / den, cnt);
}

/* Plummer, G = M = a = 1: sigma^2 = 1 / (6 sqrt(r^2 + 1)) (isotropic). */
static double plummer_sigma2(double r)
{
	return 1 / (6 * sqrt(r * r + 1));
}
static double plummer_rho(double r)
{
	return pow(1 + r * r, -2.5);
}

/* Hernquist, G = M = a = 1: rho = 1/(2 pi r (1+r)^3), M(r) = r^2/(1+r)^2.
 * sigma^2 from the isotropic Jeans equation, integrated numerically:
 * rho sigma^2 = int_r^inf rho(s) M(s) / s^2 ds (substituting s = r/t). */
static double hernquist_rho(double r)
{
	return 1 / (2 * M_PI * r * pow(1 + r, 3));
}
static double hernquist_sigma2(double r)
{
	const int m = 4000;
	double sum = 0;
	for (int k = 0; k < m; k++) {
		double t = (k + 0.5) / m; /* s = r / t, ds = r / t^2 dt */
		double s = r / t;
		sum += hernquist_rho(s) * (s * s / ((1 + s) * (1 + s))) / (s * s) * r / (t * t);
	}
	return sum / m / hernquist_rho(r);
}

START_TEST(spheres_velocity_dispersion_profiles)
{
	struct sim_state st;
	make_sphere(&st, 0, NMODEL, 20, 8);
	check_shell_dispersion(&st, 0.0, 0.7, plummer_sigma2, plummer_rho);
	check_shell_dispersion(&st, 0.7, 1.5, plummer_sigma2, plummer_rho);
	check_shell_dispersion(&st, 1.5, 4.0, plummer_sigma2, plummer_rho);
	sim_state_free(&st);
	make_sphere(&st, 1, NMODEL, 50, 8);
	check_shell_dispersion(&st, 0.1, 0.5, hernquist_sigma2, hernquist_rho);
	check_shell_dispersion(&st, 0.5, 1.5, hernquist_sigma2, hernquist_rho);
	check_shell_dispersion(&st, 1.5, 5.0, hernquist_sigma2, hernquist_rho);
	sim_state_free(&st);
}
END_TEST

START_TEST(hernquist_cumulative_mass_and_virial)
{
	struct sim_state st;
	const double rmax = 50;
	make_sphere(&st, 1, NMODEL, rmax, 9);
	const double R[4] = {0.3, 1.0, 2.0, 5.0};
	double ftrunc = rmax * rmax / ((rmax + 1) * (rmax + 1));
	for (int k = 0; k < 4; k++) {
		long in = 0;
		for (size_t i = 0; i < st.n; i++)
			in += radius(&st, i) < R[k];
		double p = R[k] * R[k] / ((R[k] + 1) * (R[k] + 1)) / ftrunc;
		double sigma = sqrt(p * (1 - p) / st.n);
		ck_assert_msg(fabs((double)in / st.n - p) < 3 * sigma,
			      "M(<%g)/M = %g, expected %g +- %g", R[k], (double)in / st.n, p, sigma);
	}
	ck_assert_close(virial_ratio(&st), 1.0, 0, 0.05);
	sim_state_free(&st);
}
END_TEST

/* ---- state CSV ---- */

static char tmpdir[64];

static void make_tmpdir(void)
{
	nb_trap_fpe();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-models-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Read PATH as a state CSV with stderr captured into msg. */
static int read_capturing(const char *path, char *msg, size_t len, size_t *n)
{
	char errpath[128];
	snprintf(errpath, sizeof errpath, "%s/stderr.txt", tmpdir);
	fflush(stderr);
	int saved = dup(2);
	FILE *ef = fopen(errpath, "w");
	dup2(fileno(ef), 2);
	struct sim_units u;
	scene_units_of(SCENE_UNITS_NBODY, &u);
	int rc = sim_state_read_csv(path, &u, NULL, 0, n);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(ef);
	ef = fopen(errpath, "r");
	size_t got = fread(msg, 1, len - 1, ef);
	msg[got] = '\0';
	fclose(ef);
	return rc;
}

START_TEST(state_csv_round_trip_galactic)
{
	struct sim_state st, back;
	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	make_sphere(&st, 0, 500, 20, 4);
	snprintf(st.comps[0].name, sizeof st.comps[0].name, "cluster");
	char path[128];
	snprintf(path, sizeof path, "%s/state.csv", tmpdir);
	ck_assert_int_eq(sim_state_write_csv(path, &st, &u), 0);
	char tmp[140];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	ck_assert_int_ne(access(tmp, F_OK), 0); /* renamed into place */

	FILE *f = fopen(path, "r");
	char line[256];
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
	ck_assert_str_eq(line, "id,component,mass,x,y,z,vx,vy,vz\n");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
	/* scene units: body mass 1/500 internal = 2.32509e9/500 M_sun */
	double m;
	ck_assert_int_eq(sscanf(line, "0,cluster,%lf,", &m), 1);
	ck_assert_close(m, 2.32509e9 / 500, 0, 1e-5);
	fclose(f);

	size_t n = 0;
	ck_assert_int_eq(sim_state_read_csv(path, &u, NULL, 0, &n), 0);
	ck_assert_uint_eq(n, 500);
	ck_assert_int_eq(sim_state_alloc(&back, n + 7, 1), 0);
	ck_assert_int_eq(sim_state_read_csv(path, &u, &back, 7, &n), 0);
	/* %.9g keeps 9 significant digits: relative error <= 5e-9 */
	for (size_t i = 0; i < st.n; i++) {
		ck_assert_close(back.mass[7 + i], st.mass[i], 0, 6e-9);
		for (int a = 0; a < 3; a++) {
			ck_assert_close(back.pos[3 * (7 + i) + a], st.pos[3 * i + a], 1e-300, 6e-9);
			ck_assert_close(back.vel[3 * (7 + i) + a], st.vel[3 * i + a], 1e-300, 6e-9);
		}
	}
	sim_state_free(&st);
	sim_state_free(&back);
}
END_TEST

START_TEST(state_csv_bad_files_are_input_errors)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "the file is empty"},
		{"x,y,z\n1,2,3\n", ":1: expected the header line"},
		{"id,component,mass,x,y,z,vx,vy,vz\n", "no bodies"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n1,a,1,abc,0,0,0,0,0\n",
		 ":3: column 'x': expected a decimal number, got 'abc'"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0\n", ":2: expected 9 columns"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0,9\n", ":2: expected 9 columns"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,nan,0\n",
		 ":2: column 'vy': expected a finite number, got 'nan'"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,inf,0,0,0\n",
		 ":2: column 'z': expected a finite number"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,-1,0,0,0,0,0,0\n",
		 ":2: column 'mass': expected a mass > 0"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,1e999\n",
		 ":2: column 'vz': expected a finite number"},
		{"id,component,mass,x,y,z,vx,vy,vz\n0,a,,0,0,0,0,0,0\n",
		 ":2: column 'mass': expected a decimal number, got ''"},
	};
	char path[128], msg[1024];
	/* strtod("1e999") raises the overflow flag by design: untrap here */
	fedisableexcept(FE_ALL_EXCEPT);
	snprintf(path, sizeof path, "%s/bad.csv", tmpdir);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		write_text(path, cases[c].text);
		size_t n = 99;
		int rc = read_capturing(path, msg, sizeof msg, &n);
		ck_assert_msg(rc == NB_EINPUT, "case %zu: rc %d", c, rc);
		ck_assert_msg(strstr(msg, path) && strstr(msg, cases[c].msg),
			      "case %zu: message '%s' lacks '%s'", c, msg, cases[c].msg);
		ck_assert_uint_eq(n, 0);
	}
	/* a CRLF file with a trailing blank line is fine */
	write_text(path, "id,component,mass,x,y,z,vx,vy,vz\r\n0,a,1,0,0,0,0,0,0\r\n\r\n");
	size_t n = 0;
	ck_assert_int_eq(read_capturing(path, msg, sizeof msg, &n), 0);
	ck_assert_uint_eq(n, 1);
	/* a missing file */
	snprintf(path, sizeof path, "%s/none.csv", tmpdir);
	ck_assert_int_eq(read_capturing(path, msg, sizeof msg, &n), NB_EINPUT);
	ck_assert(strstr(msg, path) != NULL);
}
END_TEST

/* ---- sim_ic_build ---- */

START_TEST(ic_build_components_placement_and_files)
{
	char csv[128], text[2048];
	snprintf(csv, sizeof csv, "%s/three.csv", tmpdir);
	write_text(csv, "id,component,mass,x,y,z,vx,vy,vz\n"
			"5,old,0.25,1,0,0,0,0.5,0\n"
			"6,old,0.25,-1,0,0,0,-0.5,0\n"
			"7,old,0.5,0,2,0,1,0,0\n");
	snprintf(text, sizeof text,
		 "units: nbody\nseed: 21\n"
		 "bodies:\n"
		 "  - {name: a, model: plummer, count: 300, mass: 1, scale: 1,"
		 " position: [5, 0, 0], velocity: [0, 1, 0], color: [1, 0, 0]}\n"
		 "  - {name: b, model: hernquist, count: 200, mass: 2, scale: 0.5,"
		 " position: [-5, 1, 0], velocity: [0, -0.5, 0.25], color: [0, 0, 1]}\n"
		 "  - {name: c, model: file, file: %s, position: [0, 10, 0], velocity: [3, 0, 0]}\n",
		 csv);
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "ic.yaml", tmpdir, NULL, 0, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	ck_assert_uint_eq(st.n, 503);
	ck_assert_int_eq(st.ncomp, 3);
	const char *names[3] = {"a", "b", "c"};
	const size_t first[3] = {0, 300, 500}, count[3] = {300, 200, 3};
	/* spheres are centred on their entry; the file's bodies keep their own
	 * centre of mass (0, 1, 0) and mean velocity (0.5, 0, 0), shifted */
	const double mass[3] = {1, 2, 1}, pos[3][3] = {{5, 0, 0}, {-5, 1, 0}, {0, 11, 0}},
		     vel[3][3] = {{0, 1, 0}, {0, -0.5, 0.25}, {3.5, 0, 0}};
	for (int c = 0; c < 3; c++) {
		ck_assert_str_eq(st.comps[c].name, names[c]);
		ck_assert_uint_eq(st.comps[c].first, first[c]);
		ck_assert_uint_eq(st.comps[c].count, count[c]);
		double m = 0, x[3] = {0}, v[3] = {0};
		for (size_t i = first[c]; i < first[c] + count[c]; i++) {
			ck_assert_int_eq(st.comp[i], c);
			m += st.mass[i];
			for (int a = 0; a < 3; a++) {
				x[a] += st.mass[i] * st.pos[3 * i + a];
				v[a] += st.mass[i] * st.vel[3 * i + a];
			}
		}
		ck_assert_close(m, mass[c], 0, 1e-12);
		for (int a = 0; a < 3; a++) {
			ck_assert_close(x[a] / m, pos[c][a], 1e-12, 1e-12);
			ck_assert_close(v[a] / m, vel[c][a], 1e-12, 1e-12);
		}
	}
	ck_assert(st.comps[0].color[0] == 1.0f && st.comps[0].color[2] == 0.0f);
	ck_assert(st.comps[1].color[2] == 1.0f && st.comps[1].color[0] == 0.0f);
	for (size_t i = 0; i < st.n; i++)
		ck_assert_uint_eq(st.id[i], i);
	/* the file's bodies keep their values, shifted by the entry's offsets */
	ck_assert_close(st.pos[3 * 502 + 1], 12.0, 0, 1e-15);
	ck_assert_close(st.vel[3 * 502 + 0], 4.0, 0, 1e-15);
	ck_assert_close(st.vel[3 * 500 + 1], 0.5, 0, 1e-15);

	/* entries draw from their own streams: dropping b leaves a's bodies */
	struct scene sc2 = sc;
	sc2.nbodies = 1;
	struct sim_state st2;
	ck_assert_int_eq(sim_ic_build(&sc2, &st2), 0);
	ck_assert(memcmp(st2.pos, st.pos, 3 * 300 * sizeof(double)) == 0);
	sim_state_free(&st2);
	sim_state_free(&st);
}
END_TEST

START_TEST(ic_build_converts_galactic_units)
{
	/* 1e10 M_sun, 2 kpc, at 10 kpc moving at 100 km/s: in internal units
	 * (G = 1, 1 kpc, 100 km/s) the mass is 1e10 G / (1 kpc (100 km/s)^2) */
	const char *text = "units: galactic\nseed: 1\n"
			   "bodies:\n"
			   "  - {name: g, model: plummer, count: 400, mass: 1.0e10, scale: 2,"
			   " position: [10, 0, 0], velocity: [100, 0, 0]}\n";
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "gal.yaml", tmpdir, NULL, 0, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	struct sim_diag d;
	sim_diag_compute(&st, &d);
	const double G = 4.30091727e-6; /* kpc (km/s)^2 / M_sun */
	ck_assert_close(d.mass, 1e10 * G / 1e4, 0, 1e-6);
	ck_assert_close(d.com[0], 10.0, 0, 1e-12);
	ck_assert_close(d.comv[0], 1.0, 0, 1e-12);
	/* the half-mass radius scales with a = 2 kpc (untruncated 1.305 a) */
	double *r = malloc(st.n * sizeof *r);
	for (size_t i = 0; i < st.n; i++) {
		double dx = st.pos[3 * i] - 10, dy = st.pos[3 * i + 1], dz = st.pos[3 * i + 2];
		r[i] = sqrt(dx * dx + dy * dy + dz * dz);
	}
	qsort(r, st.n, sizeof *r, cmp_double);
	ck_assert_close(r[st.n / 2], 2 * 1.3048, 0, 0.15);
	free(r);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("models");
	TCase *tc = tcase_create("spheres");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, spheres_same_seed_identical_for_any_thread_count);
	tcase_add_test(tc, spheres_have_mass_and_rest_at_origin);
	tcase_add_test(tc, plummer_half_mass_radius_and_virial);
	tcase_add_test(tc, spheres_velocity_dispersion_profiles);
	tcase_add_test(tc, hernquist_cumulative_mass_and_virial);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("files");
	tcase_set_timeout(tf, 60);
	tcase_add_checked_fixture(tf, make_tmpdir, NULL);
	tcase_add_test(tf, state_csv_round_trip_galactic);
	tcase_add_test(tf, state_csv_bad_files_are_input_errors);
	tcase_add_test(tf, ic_build_components_placement_and_files);
	tcase_add_test(tf, ic_build_converts_galactic_units);
	suite_add_tcase(s, tf);
	return s;
}

NB_CHECK_MAIN(make_suite)
