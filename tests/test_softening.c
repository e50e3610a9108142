/* test_softening.c - softening per body and GADGET's spline kernel on the
 * CPU (issue 30; docs/PHYSICS.md "Softening"): pair forces against the
 * kernels' formulas written here (the spline's from its mass density by
 * quadrature, not from sim/soften.h) with GADGET's pair rule (the larger
 * length); the tree against the direct sum with two lengths and each
 * kernel; energy and momentum of a two-type Plummer model under leapfrog;
 * individual steps from the body's own length; the ranks' direct rows and
 * the tree's selection bit for bit against one process; which length each
 * component gets from the scene's keys.
 * Run: make CUDA=0 BUILD=build build/tests/test_softening && build/tests/test_softening */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "dist/dist.h"
#include "sim/sim.h"
#include "test_scene_util.h"

/* ---- the kernels, independently ----
 * GADGET-2's spline (Springel 2005, eq. 4; Monaghan & Lattanzio 1985): the
 * density of a unit mass W(u) = 8/(pi h^3) (1 - 6u^2 + 6u^3) for u = r/h
 * < 1/2, 16/(pi h^3) (1 - u)^3 for 1/2 <= u < 1, 0 beyond, with h = 2.8 eps.
 * Its force on a unit mass at r is -M(<r) / r^2 (Gauss), M(<r) = int 4 pi s^2
 * W ds; its potential -M(<r)/r - int_r^h 4 pi s W ds (beyond h: -1/r). */
static double spline_w(double s, double h)
{
	const double u = s / h, c = 8 / (M_PI * h * h * h);
	if (u < 0.5)
		return c * (1 - 6 * u * u + 6 * u * u * u);
	return u < 1 ? 2 * c * (1 - u) * (1 - u) * (1 - u) : 0;
}

/* int_a^b g(s) ds by Simpson's rule with 2000 intervals, g = 4 pi s^k W(s) */
static double spline_int(double a, double b, double h, int k)
{
	const int N = 2000;
	double sum = 0, dx = (b - a) / N;
	for (int i = 0; i <= N; i++) {
		const double s = a + i * dx, w = (i == 0 || i == N) ? 1 : (i % 2 ? 4 : 2);
		sum += w * 4 * M_PI * pow(s, k) * spline_w(s, h);
	}
	return sum * dx / 3;
}

/* force factor f (a = m f d) and potential per unit mass of one pair */
static void kernel_by_hand(int spline, double r, double eps, double *f, double *phi)
{
	if (!spline) {
		*f = 1 / pow(r * r + eps * eps, 1.5);
		*phi = -1 / sqrt(r * r + eps * eps);
		return;
	}
	const double h = 2.8 * eps;
	if (r >= h) {
		*f = 1 / (r * r * r);
		*phi = -1 / r;
		return;
	}
	/* the kernel's two pieces meet at h/2: integrate each separately */
	const double hm = 0.5 * h;
	double m = r <= hm ? spline_int(0, r, h, 2) : spline_int(0, hm, h, 2) + spline_int(hm, r, h, 2);
	double out = r <= hm ? spline_int(r, hm, h, 1) + spline_int(hm, h, h, 1) : spline_int(r, h, h, 1);
	*f = m / (r * r * r);
	*phi = -m / r - out;
}

/* ---- bodies ---- */
struct bodies {
	size_t n;
	double *pos, *mass, *eps, *acc, *pot, *acc2, *pot2;
};

static void bodies_alloc(struct bodies *b, size_t n)
{
	b->n = n;
	b->pos = calloc(3 * n, sizeof(double));
	b->mass = calloc(n, sizeof(double));
	b->eps = calloc(n, sizeof(double));
	b->acc = calloc(3 * n, sizeof(double));
	b->pot = calloc(n, sizeof(double));
	b->acc2 = calloc(3 * n, sizeof(double));
	b->pot2 = calloc(n, sizeof(double));
}

static void bodies_free(struct bodies *b)
{
	free(b->pos);
	free(b->mass);
	free(b->eps);
	free(b->acc);
	free(b->pot);
	free(b->acc2);
	free(b->pot2);
}

/* A Plummer sphere (scale a, total mass 1, equal masses) whose bodies
 * alternate between lengths e0 (even index) and e1 (odd): two types
 * sharing one distribution. */
static void bodies_two_types(struct bodies *b, size_t n, double a, double e0, double e1,
			     uint64_t seed)
{
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	sim_ic_plummer(&st, 0, n, 1.0, a, 20, seed, 0);
	bodies_alloc(b, n);
	memcpy(b->pos, st.pos, 3 * n * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		b->mass[i] = 1.0 / (double)n;
		b->eps[i] = i % 2 ? e1 : e0;
	}
	sim_state_free(&st);
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median and 99th percentile of |a - ref| / |ref| over the bodies */
static void rel_errors(const double *a, const double *ref, size_t n, double *med, double *p99)
{
	double *e = malloc(n * sizeof *e);
	for (size_t i = 0; i < n; i++) {
		double d = 0, r = 0;
		for (int c = 0; c < 3; c++) {
			d += (a[3 * i + c] - ref[3 * i + c]) * (a[3 * i + c] - ref[3 * i + c]);
			r += ref[3 * i + c] * ref[3 * i + c];
		}
		e[i] = sqrt(d / r);
	}
	qsort(e, n, sizeof *e, cmp_double);
	*med = e[n / 2];
	*p99 = e[(size_t)(0.99 * (double)(n - 1))];
	free(e);
}

static const char *const KERNEL_NAMES[2] = {"plummer", "spline"};

/* ---- pair forces by hand ---- */

/* Four bodies, two types (eps 0.02 and 0.05), at separations inside and
 * beyond both kernels' lengths: each body's acceleration and potential is
 * the sum of its pairs with e = max(eps_i, eps_j), by hand. */
START_TEST(pair_forces_by_hand_mixed_types)
{
	const int spline = _i;
	struct bodies b;
	bodies_alloc(&b, 4);
	const double x[4][3] = {{0, 0, 0}, {0.03, 0.01, 0}, {0.0, 0.09, 0.02}, {0.5, -0.2, 0.1}};
	const double m[4] = {1.0, 0.5, 2.0, 0.25}, e[4] = {0.02, 0.05, 0.02, 0.05};
	for (int i = 0; i < 4; i++) {
		memcpy(b.pos + 3 * i, x[i], sizeof x[i]);
		b.mass[i] = m[i];
		b.eps[i] = e[i];
	}
	const struct sim_soft s = {.kernel = spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER,
				   .eps = 0.02, .each = b.eps};
	ck_assert_int_eq(sim_direct_accel_soft(b.pos, b.mass, 4, &s, b.acc, b.pot), 0);
	const unsigned char all[4] = {1, 1, 1, 1};
	ck_assert_int_eq(sim_direct_accel_active_soft(b.pos, b.mass, 4, &s, all, b.acc2, b.pot2), 0);
	for (int i = 0; i < 4; i++) {
		double a[3] = {0, 0, 0}, phi = 0;
		for (int j = 0; j < 4; j++) {
			if (j == i)
				continue;
			double d[3], r2 = 0, f, p;
			for (int c = 0; c < 3; c++) {
				d[c] = x[j][c] - x[i][c];
				r2 += d[c] * d[c];
			}
			kernel_by_hand(spline, sqrt(r2), e[i] > e[j] ? e[i] : e[j], &f, &p);
			for (int c = 0; c < 3; c++)
				a[c] += m[j] * f * d[c];
			phi += m[j] * p;
		}
		for (int c = 0; c < 3; c++) {
			ck_assert_close(b.acc[3 * i + c], a[c], 1e-9 * fabs(phi), 1e-9);
			ck_assert_close(b.acc2[3 * i + c], a[c], 1e-9 * fabs(phi), 1e-9);
		}
		ck_assert_close(b.pot[i], phi, 0, 1e-9);
		ck_assert_close(b.pot2[i], phi, 0, 1e-9);
	}
	/* the pair rule: body 0 (0.02) and 1 (0.05) use 0.05, so the force
	 * on 0 differs from what 0.02 would give by more than the tolerance */
	double f02, f05, p;
	kernel_by_hand(spline, sqrt(0.03 * 0.03 + 0.01 * 0.01), 0.02, &f02, &p);
	kernel_by_hand(spline, sqrt(0.03 * 0.03 + 0.01 * 0.01), 0.05, &f05, &p);
	ck_assert_msg(fabs(f02 - f05) > 0.2 * f05, "%s: the two lengths give %g and %g",
		      KERNEL_NAMES[spline], f02, f05);
	/* the tree at theta 0 lists every body: the same pairs */
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, 4, &s, 0.0, 2, SCENE_OPENING_BMAX, NULL,
					     b.acc2, b.pot2, NULL), 0);
	for (int k = 0; k < 12; k++)
		ck_assert_close(b.acc2[k], b.acc[k], 1e-12 * fabs(b.pot[k / 3]), 1e-12);
	bodies_free(&b);
}
END_TEST

/* The spline is Newtonian from h = 2.8 eps on and keeps the Plummer
 * sphere's depth at r = 0 (phi(0) = -m / eps): checked at the formulas
 * by hand above, through the direct sum of two bodies. */
START_TEST(spline_newtonian_beyond_h_and_plummer_depth)
{
	double pos[6] = {0, 0, 0, 0, 0, 0}, mass[2] = {1, 1}, acc[6], pot[2];
	const struct sim_soft s = {.kernel = SCENE_SOFT_SPLINE, .eps = 0.1, .each = NULL};
	pos[3] = 0.2801; /* just beyond h = 0.28 */
	ck_assert_int_eq(sim_direct_accel_soft(pos, mass, 2, &s, acc, pot), 0);
	ck_assert_close(acc[0], 1 / (0.2801 * 0.2801), 0, 1e-12);
	ck_assert_close(pot[0], -1 / 0.2801, 0, 1e-12);
	pos[3] = 1e-9;
	ck_assert_int_eq(sim_direct_accel_soft(pos, mass, 2, &s, acc, pot), 0);
	ck_assert_close(pot[0], -1 / 0.1, 0, 1e-6);
}
END_TEST

/* ---- the tree with two lengths ---- */

/* 10,000 bodies, eps 0.01 and 0.06 alternating (a = 1: the mean
 * separation at the centre is ~0.06, so softening shapes the near field):
 * quadrupole tree at theta 0.5 against the direct sum with the same
 * lengths. The tree's usual tolerance (tests/test_forces.c: quadrupole
 * median under 2.5e-3 at theta 0.5 for one length); and the tree must be
 * far closer to the mixed direct sum than the direct sum of one length is
 * (otherwise the lengths per body would not be what the tree used). */
START_TEST(tree_matches_direct_with_two_lengths)
{
	const int spline = _i;
	struct bodies b;
	bodies_two_types(&b, 10000, 1.0, 0.01, 0.06, 7);
	const struct sim_soft s = {.kernel = spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER,
				   .eps = 0.01, .each = b.eps};
	const struct sim_soft one = {.kernel = s.kernel, .eps = 0.01, .each = NULL};
	ck_assert_int_eq(sim_direct_accel_soft(b.pos, b.mass, b.n, &s, b.acc, b.pot), 0);
	ck_assert_int_eq(sim_direct_accel_soft(b.pos, b.mass, b.n, &one, b.acc2, NULL), 0);
	double med_one, p99_one, med, p99;
	rel_errors(b.acc2, b.acc, b.n, &med_one, &p99_one);
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, b.n, &s, 0.5, 2, SCENE_OPENING_BMAX,
					     NULL, b.acc2, b.pot2, NULL), 0);
	rel_errors(b.acc2, b.acc, b.n, &med, &p99);
	double pmax = 0;
	for (size_t i = 0; i < b.n; i++)
		pmax = fmax(pmax, fabs(b.pot2[i] - b.pot[i]) / fabs(b.pot[i]));
	printf("tree, %s, eps 0.01/0.06, theta 0.5 quadrupole: median %.3g, 99th %.3g, potential "
	       "max %.3g; one length against two: median %.3g\n",
	       KERNEL_NAMES[spline], med, p99, pmax, med_one);
	ck_assert_msg(med < 2.5e-3, "%s: median %g", KERNEL_NAMES[spline], med);
	ck_assert_msg(p99 < 2e-2, "%s: 99th percentile %g", KERNEL_NAMES[spline], p99);
	ck_assert_msg(pmax < 1e-2, "%s: potential off by %g", KERNEL_NAMES[spline], pmax);
	ck_assert_msg(med < 0.2 * med_one, "%s: tree %g, one length %g", KERNEL_NAMES[spline], med,
		      med_one);
	/* theta 0.3 is closer still */
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, b.n, &s, 0.3, 2, SCENE_OPENING_BMAX,
					     NULL, b.acc2, NULL, NULL), 0);
	double med3, p993;
	rel_errors(b.acc2, b.acc, b.n, &med3, &p993);
	ck_assert_msg(med3 < med, "%s: median %g at theta 0.3, %g at 0.5", KERNEL_NAMES[spline],
		      med3, med);
	bodies_free(&b);
}
END_TEST

/* The soft paths with one length agree with the plain Plummer path (the
 * same pairs, summed in another order) */
START_TEST(tree_soft_path_with_one_length_equals_plain)
{
	struct bodies b;
	bodies_two_types(&b, 5000, 1.0, 0.02, 0.02, 11);
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = 0.02, .each = b.eps};
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, b.n, &s, 0.5, 2, SCENE_OPENING_BMAX,
					     NULL, b.acc, b.pot, NULL), 0);
	ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, b.n, 0.02, 0.5, 2, SCENE_OPENING_BMAX,
					   b.acc2, b.pot2), 0);
	for (size_t i = 0; i < b.n; i++) {
		for (int c = 0; c < 3; c++)
			ck_assert_close(b.acc[3 * i + c], b.acc2[3 * i + c], 1e-12 * fabs(b.pot2[i]),
					1e-9);
		ck_assert_close(b.pot[i], b.pot2[i], 0, 1e-12);
	}
	bodies_free(&b);
}
END_TEST

/* ---- energy of a two-type Plummer model ---- */

struct soft_ctx {
	const struct sim_soft *s;
};

static int force_direct(const double *pos, const double *mass, size_t n, void *ctx, double *acc,
			double *pot)
{
	const struct soft_ctx *c = ctx;
	return sim_direct_accel_soft(pos, mass, n, c->s, acc, pot);
}

/* 1000 bodies in N-body units (M = 1, a = 3 pi / 16: E = -1/4 for a point-
 * mass sphere), halves with eps 0.02 and 0.05, leapfrog dt = 0.005 for
 * 400 steps (0.7 crossing times of 2 sqrt 2). The force derives from the
 * potential the diagnostics sum (one pair rule, one kernel, symmetric), so
 * leapfrog keeps the energy to O((dt / tau)^2) of the share of the binding
 * energy in close pairs, tau ~ eps / v ~ 0.02 for the smaller length at
 * v ~ 1, and that share is small at 1000 bodies. Measured: 5.4e-6
 * (plummer) and 3.5e-6 (spline); the bound 5e-5 leaves a factor 10 for
 * other seeds and machines, and fails for a step four times longer
 * (dt 0.02 for 100 steps: 1.0e-4 and 6.6e-5, the dt^2 of leapfrog).
 * Momentum: the pair rule is symmetric, so forces are equal and opposite:
 * round-off. */
START_TEST(two_type_plummer_conserves_energy)
{
	const int spline = _i;
	const size_t n = 1000;
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 2), 0);
	sim_ic_plummer(&st, 0, n, 1.0, 3 * M_PI / 16, 20, 5, 0);
	double *each = malloc(n * sizeof *each);
	for (size_t i = 0; i < n; i++) {
		st.comp[i] = i < n / 2 ? 0 : 1;
		st.mass[i] = 1.0 / (double)n;
		each[i] = i < n / 2 ? 0.02 : 0.05;
	}
	const struct sim_soft s = {.kernel = spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER,
				   .eps = 0.02, .each = each};
	struct soft_ctx ctx = {&s};
	ck_assert_int_eq(force_direct(st.pos, st.mass, n, &ctx, st.acc, st.pot), 0);
	struct sim_diag d0, d;
	sim_diag_compute(&st, &d0);
	double worst = 0;
	for (int k = 0; k < 400; k++) {
		ck_assert_int_eq(sim_leapfrog_step(&st, 0.005, force_direct, &ctx, 1), 0);
		sim_diag_compute(&st, &d);
		worst = fmax(worst, sim_diag_energy_error(&d0, &d));
	}
	const double p = sqrt(d.p[0] * d.p[0] + d.p[1] * d.p[1] + d.p[2] * d.p[2]);
	printf("two-type plummer, %s, eps 0.02/0.05: E0 %.6f, max |dE/E0| %.3g over 400 steps, "
	       "|P| %.3g\n",
	       KERNEL_NAMES[spline], d0.total, worst, p);
	ck_assert_msg(worst < 5e-5, "%s: |dE/E0| reached %g", KERNEL_NAMES[spline], worst);
	ck_assert_msg(p < 1e-13, "%s: momentum %g", KERNEL_NAMES[spline], p);
	free(each);
	sim_state_free(&st);
}
END_TEST

/* ---- individual steps: the body's own length ---- */

/* |a| = 1, dt_max = 1, eta = 0.5: dt_i = sqrt(eps_i), level L the
 * smallest with 2^-L <= dt_i: eps 1 -> 1 (L0), 0.2 -> 0.447 (L2), 0.05 ->
 * 0.224 (L3). With one length (soft_mixed 0) every body takes
 * simulation.softening's level. */
START_TEST(individual_steps_use_the_body_length)
{
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 3, 3), 0);
	const double eps[3] = {1.0, 0.2, 0.05};
	for (int i = 0; i < 3; i++) {
		st.comp[i] = (uint16_t)i;
		st.comps[i].softening = eps[i];
		st.acc[3 * i + 1] = 1.0;
		st.mass[i] = 1;
	}
	struct sim_params p = {.dt_max = 1, .eta = 0.5, .softening = 0.2, .max_level = 10,
			       .soft_mixed = 1};
	struct sim_ts ts;
	ck_assert_int_eq(sim_ts_init(&ts, &p, &st), 0);
	ck_assert_int_eq(ts.lev[0], 0);
	ck_assert_int_eq(ts.lev[1], 2);
	ck_assert_int_eq(ts.lev[2], 3);
	sim_ts_free(&ts);
	p.soft_mixed = 0;
	ck_assert_int_eq(sim_ts_init(&ts, &p, &st), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(ts.lev[i], 2);
	sim_ts_free(&ts);
	sim_state_free(&st);
}
END_TEST

/* ---- the ranks' forces against one process ---- */

/* dist_direct_rows_soft of every body, in a shuffled row order, is bit for
 * bit sim_direct_accel_soft on one thread (n < 1000); the tree's selected
 * bodies (what each rank computes) bit for bit the whole walk's. */
START_TEST(ranks_agree_with_one_process)
{
	const int spline = _i;
	struct bodies b;
	bodies_two_types(&b, 900, 1.0, 0.02, 0.05, 3);
	const struct sim_soft s = {.kernel = spline ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER,
				   .eps = 0.02, .each = b.eps};
	ck_assert_int_eq(sim_direct_accel_soft(b.pos, b.mass, b.n, &s, b.acc, b.pot), 0);
	uint32_t *rows = malloc(b.n * sizeof *rows);
	double *out = malloc(4 * b.n * sizeof *out);
	for (size_t r = 0; r < b.n; r++)
		rows[r] = (uint32_t)((r * 7) % b.n); /* 7 and 900 are coprime */
	dist_direct_rows_soft(b.pos, b.mass, b.n, &s, rows, b.n, out);
	for (size_t r = 0; r < b.n; r++) {
		const size_t i = rows[r];
		ck_assert_msg(memcmp(out + 4 * r, b.acc + 3 * i, 3 * sizeof(double)) == 0 &&
				      memcmp(out + 4 * r + 3, b.pot + i, sizeof(double)) == 0,
			      "%s: body %zu: rows (%.17g %.17g) against one process (%.17g %.17g)",
			      KERNEL_NAMES[spline], i, out[4 * r], out[4 * r + 3], b.acc[3 * i],
			      b.pot[i]);
	}
	unsigned char *sel = calloc(b.n, 1);
	for (size_t i = 0; i < b.n; i += 3)
		sel[i] = 1;
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, b.n, &s, 0.5, 2, SCENE_OPENING_BMAX,
					     NULL, b.acc, b.pot, NULL), 0);
	memset(b.acc2, 0, 3 * b.n * sizeof(double));
	ck_assert_int_eq(sim_tree_accel_soft(b.pos, b.mass, b.n, &s, 0.5, 2, SCENE_OPENING_BMAX,
					     sel, b.acc2, b.pot2, NULL), 0);
	for (size_t i = 0; i < b.n; i += 3)
		ck_assert(memcmp(b.acc2 + 3 * i, b.acc + 3 * i, 3 * sizeof(double)) == 0 &&
			  b.pot2[i] == b.pot[i]);
	free(sel);
	free(rows);
	free(out);
	bodies_free(&b);
}
END_TEST

/* ---- which length each component gets ---- */

static const char *SCENE_TWO =
	"units: nbody\n"
	"simulation: {solver: direct, softening: 0.02, dt: 0.01, steps_per_frame: 1}\n"
	"bodies:\n"
	"  - {name: a, model: plummer, count: 10, mass: 1, scale: 1}\n"
	"  - {name: b, model: plummer, count: 20, mass: 1, scale: 1, position: [5, 0, 0]}\n"
	"  - name: g\n"
	"    model: disk-galaxy\n"
	"    position: [-9, 0, 0]\n"
	"    disk: {count: 30, mass: 1, scale: 1, scale_height: 0.1}\n"
	"    bulge: {count: 10, mass: 0.2, scale: 0.2}\n"
	"    halo: {count: 40, mass: 5, scale: 3}\n"
	"output: {frames: 1}\n";

START_TEST(each_component_takes_its_key)
{
	struct scene sc;
	ck_assert_msg(load_str(SCENE_TWO, NULL, 0, &sc) == 0, "%s", g_err);
	struct sim_params p;
	sim_params_of(&sc, &p);
	ck_assert_int_eq(p.soft_mixed, 0);
	ck_assert_int_eq(p.soft_kernel, SCENE_SOFT_PLUMMER);
	/* entry b's own, the galaxy's halo its own, the rest the entry's or
	 * simulation.softening; a value equal to simulation.softening is
	 * not a second length */
	const char *ov[4] = {"bodies.1.softening=0.05", "bodies.2.softening=0.03",
			     "bodies.2.halo.softening=0.1", "simulation.softening_kernel=spline"};
	ck_assert_msg(load_str(SCENE_TWO, ov, 4, &sc) == 0, "%s", g_err);
	sim_params_of(&sc, &p);
	ck_assert_int_eq(p.soft_mixed, 1);
	ck_assert_int_eq(p.soft_kernel, SCENE_SOFT_SPLINE);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	const char *names[5] = {"a", "b", "g.disk", "g.bulge", "g.halo"};
	const double want[5] = {0.02, 0.05, 0.03, 0.03, 0.1};
	ck_assert_int_eq(st.ncomp, 5);
	double *each = malloc(st.n * sizeof *each);
	sim_soft_each(&st, each);
	for (int c = 0; c < 5; c++) {
		ck_assert_str_eq(st.comps[c].name, names[c]);
		ck_assert_close(st.comps[c].softening, want[c], 0, 1e-15);
		ck_assert_close(each[st.comps[c].first], want[c], 0, 1e-15);
	}
	free(each);
	sim_state_free(&st);
	const char *same[1] = {"bodies.1.softening=0.02"};
	ck_assert_msg(load_str(SCENE_TWO, same, 1, &sc) == 0, "%s", g_err);
	sim_params_of(&sc, &p);
	ck_assert_int_eq(p.soft_mixed, 0);
}
END_TEST

/* The CPU ranks' force (dist_sim_force, one rank here) with the lengths
 * of a scene whose entries differ: bit for bit one process's, direct (n <
 * 1000: one thread) and tree, each kernel. */
START_TEST(dist_force_takes_each_body_length)
{
	const int spline = _i;
	const char *ov[3] = {"bodies.1.softening=0.05", "simulation.softening_kernel=plummer",
			     "simulation.solver=direct"};
	if (spline)
		ov[1] = "simulation.softening_kernel=spline";
	for (int tree = 0; tree < 2; tree++) {
		struct scene sc;
		if (tree)
			ov[2] = "simulation.solver=barnes-hut";
		ck_assert_msg(load_str(SCENE_TWO, ov, 3, &sc) == 0, "%s", g_err);
		struct sim_state st;
		ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
		struct sim_params p;
		sim_params_of(&sc, &p);
		ck_assert_int_eq(p.soft_mixed, 1);
		struct dist_sim *ds;
		ck_assert_int_eq(dist_sim_create(&sc, &st, 0, &ds), 0);
		const size_t n = st.n;
		double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
		ck_assert_int_eq(dist_sim_force(ds, &p, st.pos, st.mass, n, acc, pot), 0);
		struct sim_soft s;
		double *each;
		ck_assert_int_eq(sim_soft_of(&p, &st, &s, &each), 0);
		ck_assert_ptr_nonnull(each);
		if (tree)
			ck_assert_int_eq(sim_tree_accel_soft(st.pos, st.mass, n, &s, p.theta, p.multipoles,
							     p.opening, NULL, st.acc, st.pot, NULL), 0);
		else
			ck_assert_int_eq(sim_direct_accel_soft(st.pos, st.mass, n, &s, st.acc, st.pot), 0);
		ck_assert_msg(memcmp(acc, st.acc, 3 * n * sizeof *acc) == 0 &&
				      memcmp(pot, st.pot, n * sizeof *pot) == 0,
			      "%s, %s: the ranks' force differs from one process's",
			      KERNEL_NAMES[spline], tree ? "tree" : "direct");
		free(each);
		free(acc);
		free(pot);
		dist_sim_free(&ds);
		sim_state_free(&st);
	}
}
END_TEST

/* A GADGET-1 binary file at path: 10 halo (type 1) and 6 disk (type 2)
 * particles on a line, masses from the mass table, float32 positions and
 * velocities, uint32 IDs, native byte order. */
static void write_gadget1(const char *path)
{
	const int32_t npart[6] = {0, 10, 6, 0, 0, 0};
	unsigned char head[256] = {0};
	const double mtab[6] = {0, 1e-4, 2e-5, 0, 0, 0}, hubble = 1.0;
	memcpy(head, npart, sizeof npart);
	memcpy(head + 24, mtab, sizeof mtab);
	memcpy(head + 24 + 48 + 16 + 8, npart, sizeof npart); /* npartTotal */
	const int32_t one = 1;
	memcpy(head + 24 + 48 + 16 + 8 + 24 + 4, &one, 4); /* num_files */
	memcpy(head + 24 + 48 + 16 + 8 + 24 + 8 + 8 + 16, &hubble, 8);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	int32_t m = 256;
	fwrite(&m, 4, 1, f), fwrite(head, 1, 256, f), fwrite(&m, 4, 1, f);
	float x[3 * 16], v[3 * 16] = {0};
	uint32_t id[16];
	for (int i = 0; i < 16; i++) {
		x[3 * i] = (float)i, x[3 * i + 1] = (float)(i % 3), x[3 * i + 2] = 0;
		id[i] = (uint32_t)(100 + i);
	}
	m = (int32_t)sizeof x;
	fwrite(&m, 4, 1, f), fwrite(x, 1, sizeof x, f), fwrite(&m, 4, 1, f);
	fwrite(&m, 4, 1, f), fwrite(v, 1, sizeof v, f), fwrite(&m, 4, 1, f);
	m = (int32_t)sizeof id;
	fwrite(&m, 4, 1, f), fwrite(id, 1, sizeof id, f), fwrite(&m, 4, 1, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* A snapshot's types take bodies.*.types.NAME.softening, else the
 * entry's, else simulation.softening (galactic: kpc). */
START_TEST(snapshot_types_take_their_key)
{
	char dir[] = "/tmp/nb-soft-XXXXXX", path[64], text[512];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/g.dat", dir);
	write_gadget1(path);
	snprintf(text, sizeof text,
		 "units: galactic\n"
		 "simulation: {solver: direct, softening: 0.1, dt: 1, steps_per_frame: 1}\n"
		 "bodies:\n"
		 "  - {name: s, model: snapshot, file: %s, format: gadget1}\n"
		 "output: {frames: 1}\n",
		 path);
	const char *ov[2] = {"bodies.0.types.halo.softening=1.0", "bodies.0.softening=0.4"};
	for (int k = 0; k <= 2; k++) {
		struct scene sc;
		ck_assert_msg(load_str(text, ov, k, &sc) == 0, "%s", g_err);
		struct sim_params p;
		sim_params_of(&sc, &p);
		ck_assert_int_eq(p.soft_mixed, k > 0);
		struct sim_state st;
		ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
		ck_assert_int_eq(st.ncomp, 2);
		ck_assert_str_eq(st.comps[0].name, "s.halo");
		ck_assert_str_eq(st.comps[1].name, "s.disk");
		/* in simulation.softening's units: 0.1 kpc */
		const double halo = k > 0 ? 1.0 : 0.1, disk = k > 1 ? 0.4 : 0.1, e0 = scene_softening(&sc);
		ck_assert_close(st.comps[0].softening / e0, halo / 0.1, 0, 1e-12);
		ck_assert_close(st.comps[1].softening / e0, disk / 0.1, 0, 1e-12);
		sim_state_free(&st);
	}
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("softening");
	TCase *tc = tcase_create("softening");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_loop_test(tc, pair_forces_by_hand_mixed_types, 0, 2);
	tcase_add_test(tc, spline_newtonian_beyond_h_and_plummer_depth);
	tcase_add_loop_test(tc, tree_matches_direct_with_two_lengths, 0, 2);
	tcase_add_test(tc, tree_soft_path_with_one_length_equals_plain);
	tcase_add_loop_test(tc, two_type_plummer_conserves_energy, 0, 2);
	tcase_add_test(tc, individual_steps_use_the_body_length);
	tcase_add_loop_test(tc, ranks_agree_with_one_process, 0, 2);
	tcase_add_test(tc, each_component_takes_its_key);
	tcase_add_test(tc, snapshot_types_take_their_key);
	tcase_add_loop_test(tc, dist_force_takes_each_body_length, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
