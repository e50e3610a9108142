/* test_forces.c - softened gravity: direct summation against the pair
 * formula and Newton's third law; the Barnes-Hut tree, with both opening
 * criteria (bmax and com), against direct summation (exact at theta = 0,
 * error shrinking with theta, quadrupole better than monopole), against the
 * softened multipole expansion (the quadrupole's trace term) and on awkward
 * inputs (N = 1, 2, coincident bodies, far outliers); the local expansion
 * of far cells (sim/tree_local.c) against the expansion it truncates.
 * Run: make BUILD=build CUDA=0 build/tests/test_forces && build/tests/test_forces */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/sim.h"
#include "sim/tree_local.h"

struct bodies {
	size_t n;
	double *pos, *mass, *acc, *pot, *acc2, *pot2;
};

static void bodies_alloc(struct bodies *b, size_t n)
{
	b->n = n;
	b->pos = calloc(3 * n, sizeof(double));
	b->mass = calloc(n, sizeof(double));
	b->acc = calloc(3 * n, sizeof(double));
	b->pot = calloc(n, sizeof(double));
	b->acc2 = calloc(3 * n, sizeof(double));
	b->pot2 = calloc(n, sizeof(double));
}

static void bodies_free(struct bodies *b)
{
	free(b->pos);
	free(b->mass);
	free(b->acc);
	free(b->pot);
	free(b->acc2);
	free(b->pot2);
}

/* A Plummer sphere with unequal masses (uniform in [0.5, 1.5] / n). */
static void bodies_plummer(struct bodies *b, size_t n, uint64_t seed)
{
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20, seed, 0);
	bodies_alloc(b, n);
	memcpy(b->pos, st.pos, 3 * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		b->mass[i] = (0.5 + sim_rng_uniform(seed, 999, i)) / (double)n;
	sim_state_free(&st);
}

/* The textbook double loop: every j for every i (no pair symmetry). */
static void naive_accel(const struct bodies *b, double eps, double *acc, double *pot)
{
	for (size_t i = 0; i < b->n; i++) {
		double a[3] = {0, 0, 0}, p = 0;
		for (size_t j = 0; j < b->n; j++) {
			if (j == i)
				continue;
			double d[3], r2 = eps * eps;
			for (int c = 0; c < 3; c++) {
				d[c] = b->pos[3 * j + c] - b->pos[3 * i + c];
				r2 += d[c] * d[c];
			}
			for (int c = 0; c < 3; c++)
				a[c] += b->mass[j] * d[c] / (r2 * sqrt(r2));
			p -= b->mass[j] / sqrt(r2);
		}
		memcpy(acc + 3 * i, a, sizeof a);
		pot[i] = p;
	}
}

static double norm3(const double *v)
{
	return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* Median and maximum of |a - ref| / |ref| over all bodies. */
static void rel_errors(const double *a, const double *ref, size_t n, double *median,
		       double *max)
{
	double *e = malloc(n * sizeof *e);
	*max = 0;
	for (size_t i = 0; i < n; i++) {
		double d[3] = {a[3 * i] - ref[3 * i], a[3 * i + 1] - ref[3 * i + 1],
			       a[3 * i + 2] - ref[3 * i + 2]};
		e[i] = norm3(d) / norm3(ref + 3 * i);
		*max = fmax(*max, e[i]);
	}
	qsort(e, n, sizeof *e, cmp_double);
	*median = e[n / 2];
	free(e);
}

static const enum scene_opening OPENINGS[2] = {SCENE_OPENING_BMAX, SCENE_OPENING_COM};
static const char *const OPENING_NAMES[2] = {"bmax", "com"};

START_TEST(direct_two_bodies_match_formula)
{
	/* m1 = 1 at origin, m2 = 3 at (3, 4, 0): |r| = 5, eps = 1 -> s^2 = 26 */
	struct bodies b;
	bodies_alloc(&b, 2);
	b.mass[0] = 1, b.mass[1] = 3;
	b.pos[3] = 3, b.pos[4] = 4;
	ck_assert_int_eq(sim_direct_accel(b.pos, b.mass, 2, 1.0, b.acc, b.pot), 0);
	double s3 = pow(26.0, 1.5);
	ck_assert_close(b.acc[0], 3 * 3 / s3, 0, 1e-15);
	ck_assert_close(b.acc[1], 3 * 4 / s3, 0, 1e-15);
	ck_assert_close(b.acc[3], -1 * 3 / s3, 0, 1e-15);
	ck_assert_close(b.acc[4], -1 * 4 / s3, 0, 1e-15);
	ck_assert_close(b.acc[2], 0, 1e-300, 0);
	ck_assert_close(b.pot[0], -3 / sqrt(26.0), 0, 1e-15);
	ck_assert_close(b.pot[1], -1 / sqrt(26.0), 0, 1e-15);
	/* and the tree (any theta: one leaf), the default and both criteria */
	ck_assert_int_eq(sim_tree_accel(b.pos, b.mass, 2, 1.0, 0.7, 2, b.acc2, b.pot2), 0);
	for (int k = 0; k < 6; k++)
		ck_assert_close(b.acc2[k], b.acc[k], 1e-300, 1e-14);
	for (int op = 0; op < 2; op++) {
		ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, 2, 1.0, 0.7, 2, OPENINGS[op],
						   b.acc2, b.pot2),
				 0);
		for (int k = 0; k < 6; k++)
			ck_assert_close(b.acc2[k], b.acc[k], 1e-300, 1e-14);
	}
	bodies_free(&b);
}
END_TEST

START_TEST(direct_matches_naive_sum_and_conserves_momentum)
{
	struct bodies b;
	bodies_plummer(&b, 1500, 1);
	double *na = malloc(3 * b.n * sizeof *na), *np = malloc(b.n * sizeof *np);
	naive_accel(&b, 0.01, na, np);
	ck_assert_int_eq(sim_direct_accel(b.pos, b.mass, b.n, 0.01, b.acc, b.pot), 0);
	double med, max;
	rel_errors(b.acc, na, b.n, &med, &max);
	ck_assert_msg(max < 1e-12, "max relative difference to the naive sum %g", max);
	for (size_t i = 0; i < b.n; i++)
		ck_assert_close(b.pot[i], np[i], 0, 1e-12);
	/* sum m a = 0 (third law), relative to sum m |a| */
	double p[3] = {0, 0, 0}, s = 0;
	for (size_t i = 0; i < b.n; i++) {
		for (int c = 0; c < 3; c++)
			p[c] += b.mass[i] * b.acc[3 * i + c];
		s += b.mass[i] * norm3(b.acc + 3 * i);
	}
	ck_assert_msg(norm3(p) / s < 1e-13, "|sum m a| / sum m|a| = %g", norm3(p) / s);
	free(na);
	free(np);
	bodies_free(&b);
}
END_TEST

START_TEST(tree_theta_zero_equals_direct)
{
	struct bodies b;
	bodies_plummer(&b, 3000, 2);
	ck_assert_int_eq(sim_direct_accel(b.pos, b.mass, b.n, 0.01, b.acc, b.pot), 0);
	for (int op = 0; op < 2; op++)
		for (int mp = 1; mp <= 2; mp++) {
			ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, b.n, 0.01, 0.0, mp,
							   OPENINGS[op], b.acc2, b.pot2),
					 0);
			double med, max;
			rel_errors(b.acc2, b.acc, b.n, &med, &max);
			ck_assert_msg(max < 1e-12, "%s, multipoles %d: max relative error %g",
				      OPENING_NAMES[op], mp, max);
			for (size_t i = 0; i < b.n; i++)
				ck_assert_close(b.pot2[i], b.pot[i], 0, 1e-12);
		}
	bodies_free(&b);
}
END_TEST

START_TEST(tree_error_shrinks_with_theta)
{
	struct bodies b;
	bodies_plummer(&b, 20000, 3);
	ck_assert_int_eq(sim_direct_accel(b.pos, b.mass, b.n, 0.01, b.acc, NULL), 0);
	const double thetas[4] = {0.9, 0.7, 0.5, 0.3};
	for (int op = 0; op < 2; op++) {
		double med[2][4], max;
		for (int mp = 1; mp <= 2; mp++) {
			for (int t = 0; t < 4; t++) {
				ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, b.n, 0.01, thetas[t],
								   mp, OPENINGS[op], b.acc2, NULL),
						 0);
				rel_errors(b.acc2, b.acc, b.n, &med[mp - 1][t], &max);
				printf("%s multipoles %d theta %.1f: median %.3g max %.3g\n",
				       OPENING_NAMES[op], mp, thetas[t], med[mp - 1][t], max);
				if (t > 0)
					ck_assert_msg(med[mp - 1][t] < med[mp - 1][t - 1],
						      "%s, multipoles %d: median error %g at theta %g, "
						      "%g at %g",
						      OPENING_NAMES[op], mp, med[mp - 1][t], thetas[t],
						      med[mp - 1][t - 1], thetas[t - 1]);
			}
		}
		/* Barnes & Hut: a monopole's median error at theta 0.5 is ~1e-3
		 * (docs/PHYSICS.md, section Barnes-Hut tree: grows as
		 * ~theta^2) and the quadrupole cuts it
		 * several fold (bmax accepts more cells than com at one theta:
		 * a small cell's bodies often fill only part of its cube) */
		ck_assert_msg(med[0][2] < 5e-3, "%s: monopole median error %g at theta 0.5",
			      OPENING_NAMES[op], med[0][2]);
		ck_assert_msg(med[1][2] < 0.5 * med[0][2], "%s: quadrupole %g vs monopole %g at theta 0.5",
			      OPENING_NAMES[op], med[1][2], med[0][2]);
		/* roughly theta^2: from 0.9 to 0.3 the monopole error falls > 4x */
		ck_assert_msg(med[0][3] < med[0][0] / 4, "%s: monopole %g at 0.3 vs %g at 0.9",
			      OPENING_NAMES[op], med[0][3], med[0][0]);
	}
	bodies_free(&b);
}
END_TEST

START_TEST(tree_single_body_feels_nothing)
{
	struct bodies b;
	bodies_alloc(&b, 1);
	b.pos[0] = 1, b.pos[1] = -2, b.pos[2] = 3, b.mass[0] = 5;
	b.acc[0] = b.pot[0] = 99;
	ck_assert_int_eq(sim_tree_accel(b.pos, b.mass, 1, 0.1, 0.5, 2, b.acc, b.pot), 0);
	ck_assert(b.acc[0] == 0 && b.acc[1] == 0 && b.acc[2] == 0 && b.pot[0] == 0);
	for (int op = 0; op < 2; op++) {
		b.acc[0] = b.pot[0] = 99;
		ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, 1, 0.1, 0.5, 2, OPENINGS[op], b.acc,
						   b.pot),
				 0);
		ck_assert(b.acc[0] == 0 && b.acc[1] == 0 && b.acc[2] == 0 && b.pot[0] == 0);
	}
	ck_assert_int_eq(sim_direct_accel(b.pos, b.mass, 1, 0.1, b.acc, b.pot), 0);
	ck_assert(b.acc[0] == 0 && b.pot[0] == 0);
	bodies_free(&b);
}
END_TEST

/* Tree vs direct at theta 0 (exact) and 0.5, both criteria. com: within
 * 2%, every body. bmax: an accepted cell's own force is off by less than
 * (bmax/d)^(p+1) < theta^(p+1) of itself (p = 1 monopole, 2 quadrupole:
 * the next term of the expansion), and so is every body's total force
 * when the accepted cells' forces do not cancel; allow that, every body. */
static void check_tree_against_direct(struct bodies *b, double eps)
{
	ck_assert_int_eq(sim_direct_accel(b->pos, b->mass, b->n, eps, b->acc, b->pot), 0);
	for (int op = 0; op < 2; op++)
		for (int mp = 1; mp <= 2; mp++) {
			const enum scene_opening o = OPENINGS[op];
			double med, max;
			ck_assert_int_eq(sim_tree_accel_ex(b->pos, b->mass, b->n, eps, 0.0, mp, o,
							   b->acc2, b->pot2),
					 0);
			rel_errors(b->acc2, b->acc, b->n, &med, &max);
			ck_assert_msg(max < 1e-11, "%s, theta 0, multipoles %d: max error %g",
				      OPENING_NAMES[op], mp, max);
			ck_assert_int_eq(sim_tree_accel_ex(b->pos, b->mass, b->n, eps, 0.5, mp, o,
							   b->acc2, b->pot2),
					 0);
			rel_errors(b->acc2, b->acc, b->n, &med, &max);
			const double tol = o == SCENE_OPENING_COM ? 0.02 : pow(0.5, mp + 1);
			ck_assert_msg(max < tol, "%s, theta 0.5, multipoles %d: max error %g",
				      OPENING_NAMES[op], mp, max);
			for (size_t i = 0; i < b->n; i++)
				ck_assert(isfinite(b->pot2[i]));
		}
}

START_TEST(tree_coincident_bodies_and_outliers)
{
	/* 300 bodies: 100 at one point (no octree depth separates them), 198
	 * in a small cloud, and one 1e6 away on each side */
	struct bodies b;
	bodies_alloc(&b, 300);
	for (size_t i = 0; i < b.n; i++) {
		b.mass[i] = 1.0 / 300;
		for (int c = 0; c < 3; c++)
			b.pos[3 * i + c] = i < 100 ? 0.25 : sim_rng_uniform(4, i, (uint64_t)c) - 0.5;
	}
	b.pos[3 * 298] = 1e6;
	b.pos[3 * 299 + 1] = -1e6;
	check_tree_against_direct(&b, 0.01);
	/* the coincident bodies pull each other with zero force (softened) */
	bodies_free(&b);
}
END_TEST

START_TEST(tree_two_clusters_far_apart)
{
	/* two Plummer clumps 1e4 apart: empty octants everywhere in between */
	struct bodies b;
	bodies_plummer(&b, 2000, 5);
	for (size_t i = 1000; i < 2000; i++)
		b.pos[3 * i] += 1e4;
	check_tree_against_direct(&b, 0.01);
	bodies_free(&b);
}
END_TEST

START_TEST(tree_distant_cell_quadrupole_formula)
{
	/* A dumbbell (masses 1 at z = +-1) seen by 600 feather-weight probes
	 * near (50, 0, 10), eps = 0. The dumbbell is one leaf, far enough to be
	 * accepted at theta 0.6. Against the exact two-body sum, the monopole
	 * is off by O((1/r)^2) ~ 4e-4; the quadrupole term removes that, and
	 * the octupole vanishes by symmetry, so what is left is O((1/r)^4). */
	struct bodies b;
	const size_t n = 602; /* more than a group node's 512, so the root splits */
	bodies_alloc(&b, n);
	b.pos[2] = 1, b.pos[5] = -1, b.mass[0] = b.mass[1] = 1;
	for (size_t k = 2; k < n; k++) {
		b.pos[3 * k] = 50 + 0.001 * (double)k;
		b.pos[3 * k + 2] = 10;
		b.mass[k] = 1e-30;
	}
	naive_accel(&b, 0.0, b.acc2, b.pot2); /* exact */
	for (int op = 0; op < 2; op++) {
		for (int mp = 1; mp <= 2; mp++) {
			ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, n, 0.0, 0.6, mp,
							   OPENINGS[op], b.acc, b.pot),
					 0);
			for (size_t k = 2; k < n; k++) {
				double d[3];
				for (int c = 0; c < 3; c++)
					d[c] = b.acc[3 * k + c] - b.acc2[3 * k + c];
				double ea = norm3(d) / norm3(b.acc2 + 3 * k);
				double ep = fabs(b.pot[k] - b.pot2[k]) / fabs(b.pot2[k]);
				if (mp == 1) {
					ck_assert_msg(ea > 1e-4 && ea < 2e-3, "%s: monopole error %g",
						      OPENING_NAMES[op], ea);
					ck_assert_msg(ep > 1e-5 && ep < 1e-3, "%s: monopole pot error %g",
						      OPENING_NAMES[op], ep);
				} else {
					ck_assert_msg(ea < 1e-6, "%s: quadrupole error %g",
						      OPENING_NAMES[op], ea);
					ck_assert_msg(ep < 1e-6, "%s: quadrupole pot error %g",
						      OPENING_NAMES[op], ep);
				}
			}
		}
	}
	bodies_free(&b);
}
END_TEST

START_TEST(tree_softened_quadrupole_trace_term)
{
	/* The same dumbbell, small (masses 1 at z = +-b, b = 0.05), seen from
	 * r ~ 1 with a large softening, eps = 0.5, as one accepted cell. The
	 * softened expansion of -sum m / |x - y|_eps to second order in y has,
	 * beside the traceless Q, the term T eps^2 (T = sum m |y|^2 = 2 b^2):
	 * with it the error left is O((b/s)^4) ~ 1e-5; without it the
	 * acceleration would be off by (5/2) T eps^2 |r| / s^7 (~8e-4 of
	 * |a|) and the potential by T eps^2 / (2 s^5) (~2e-4 of |phi|). */
	struct bodies b;
	const size_t n = 602;
	const double half = 0.05, eps = 0.5, T = 2 * half * half;
	const double tol_a = 2e-5, tol_p = 2e-6;
	bodies_alloc(&b, n);
	b.pos[2] = half, b.pos[5] = -half, b.mass[0] = b.mass[1] = 1;
	for (size_t k = 2; k < n; k++) {
		b.pos[3 * k] = 1 + 1e-4 * (double)k;
		b.pos[3 * k + 2] = 0.3;
		b.mass[k] = 1e-30;
	}
	naive_accel(&b, eps, b.acc2, b.pot2); /* exact */
	for (size_t k = 2; k < n; k++) {
		/* what the trace term is worth here: well above the tolerances */
		const double r = norm3(b.pos + 3 * k);
		const double s = sqrt(r * r + eps * eps);
		ck_assert_double_gt(2.5 * T * eps * eps * r / pow(s, 7) / norm3(b.acc2 + 3 * k),
				    10 * tol_a);
		ck_assert_double_gt(0.5 * T * eps * eps / pow(s, 5) / fabs(b.pot2[k]), 10 * tol_p);
	}
	for (int op = 0; op < 2; op++) {
		for (int mp = 1; mp <= 2; mp++) {
			ck_assert_int_eq(sim_tree_accel_ex(b.pos, b.mass, n, eps, 0.6, mp,
							   OPENINGS[op], b.acc, b.pot),
					 0);
			for (size_t k = 2; k < n; k++) {
				double d[3];
				for (int c = 0; c < 3; c++)
					d[c] = b.acc[3 * k + c] - b.acc2[3 * k + c];
				double ea = norm3(d) / norm3(b.acc2 + 3 * k);
				double ep = fabs(b.pot[k] - b.pot2[k]) / fabs(b.pot2[k]);
				if (mp == 1) /* the cell was accepted: the monopole is off */
					ck_assert_msg(ea > 1e-3, "%s: monopole error %g",
						      OPENING_NAMES[op], ea);
				else
					ck_assert_msg(ea < tol_a && ep < tol_p,
						      "%s: quadrupole errors %g (acc), %g (pot)",
						      OPENING_NAMES[op], ea, ep);
			}
		}
	}
	bodies_free(&b);
}
END_TEST

/* The walk's softened quadrupole of one cell at r (tree.c, tree_eval_body):
 * a = -m r/s^3 + Q.r/s^5 - (5/2)(r.Q.r - te) r/s^7, phi = -m/s -
 * (r.Q.r - te)/(2 s^5). */
static void cell_field(const double r[3], double m, const double *q, double te, double eps2,
		       double a[3], double *phi)
{
	const double s2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps2, si = 1 / sqrt(s2);
	const double s3 = si * si * si, s5 = s3 * si * si, s7 = s5 * si * si;
	double qr[3] = {0, 0, 0}, u = 0;
	if (q) {
		qr[0] = q[0] * r[0] + q[3] * r[1] + q[4] * r[2];
		qr[1] = q[3] * r[0] + q[1] * r[1] + q[5] * r[2];
		qr[2] = q[4] * r[0] + q[5] * r[1] + q[2] * r[2];
		u = r[0] * qr[0] + r[1] * qr[1] + r[2] * qr[2] - te;
	}
	for (int k = 0; k < 3; k++)
		a[k] = -m * r[k] * s3 + qr[k] * s5 - 2.5 * u * r[k] * s7;
	*phi = -m * si - 0.5 * u * s5;
}

/* The local expansion of one cell about g, evaluated at g + y, against the
 * cell's own field at g + y: the monopole is kept to fourth order in the
 * potential, so halving |y| divides the acceleration's error by 2^4 and the
 * potential's by 2^5; the quadrupole's share is kept to second order, so
 * with a quadrupole the errors shrink as 2^2 and 2^3. A slip in any
 * coefficient would leave a lower power of |y|. */
START_TEST(tree_local_expansion_converges)
{
	const double R[3] = {0.7, -0.4, 0.5}, dir[3] = {0.3, 0.8, -0.52};
	const double q[6] = {0.02, -0.05, 0.03, 0.01, -0.015, 0.025}, te = 0.004, eps2 = 0.01, m = 1.3;
	for (int withq = 0; withq < 2; withq++) {
		double c[SIM_TREE_LOCAL_NC] = {0};
		sim_tree_local_add(c, R, m, withq ? q : NULL, withq ? te : 0, eps2);
		double prev_a = 0, prev_p = 0;
		for (int k = 0; k < 4; k++) {
			const double h = 0.05 / (1 << k);
			const double y[3] = {h * dir[0], h * dir[1], h * dir[2]};
			const double r[3] = {R[0] + y[0], R[1] + y[1], R[2] + y[2]};
			double a[3] = {0, 0, 0}, phi = 0, ae[3], pe;
			sim_tree_local_eval(c, y, a, &phi);
			cell_field(r, m, withq ? q : NULL, withq ? te : 0, eps2, ae, &pe);
			const double ea = sqrt(pow(a[0] - ae[0], 2) + pow(a[1] - ae[1], 2) +
					       pow(a[2] - ae[2], 2)) /
					  sqrt(ae[0] * ae[0] + ae[1] * ae[1] + ae[2] * ae[2]);
			const double ep = fabs(phi - pe) / fabs(pe);
			if (k > 0) {
				const double ra = prev_a / ea, rp = prev_p / ep;
				printf("local expansion, %s, |y| %.4f: acc error %.3g (ratio %.2f), pot "
				       "error %.3g (ratio %.2f)\n",
				       withq ? "quadrupole" : "monopole", h, ea, ra, ep, rp);
				ck_assert_double_gt(ra, withq ? 3.6 : 14.0);
				ck_assert_double_lt(ra, withq ? 4.5 : 18.0);
				ck_assert_double_gt(rp, withq ? 5.5 : 28.0);
			}
			ck_assert_double_lt(ea, withq ? 2e-2 : 2e-4);
			prev_a = ea, prev_p = ep;
		}
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("forces");
	TCase *tc = tcase_create("forces");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, direct_two_bodies_match_formula);
	tcase_add_test(tc, direct_matches_naive_sum_and_conserves_momentum);
	tcase_add_test(tc, tree_theta_zero_equals_direct);
	tcase_add_test(tc, tree_error_shrinks_with_theta);
	tcase_add_test(tc, tree_single_body_feels_nothing);
	tcase_add_test(tc, tree_coincident_bodies_and_outliers);
	tcase_add_test(tc, tree_two_clusters_far_apart);
	tcase_add_test(tc, tree_distant_cell_quadrupole_formula);
	tcase_add_test(tc, tree_softened_quadrupole_trace_term);
	tcase_add_test(tc, tree_local_expansion_converges);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
