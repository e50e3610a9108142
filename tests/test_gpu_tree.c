/* test_gpu_tree.c - the GPU Barnes-Hut tree (sim/cuda/tree*.cu) against
 * double-precision direct sums, the CPU tree (sim/tree.c) and analytic
 * cases. Without a usable GPU the program prints "SKIP: <why>" and runs
 * (and counts) no case (tests/check_main.h, NB_GPU_TCASE).
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_tree && build/tests/test_gpu_tree
 *   NB_GPU_SANITIZE=1: only the 10k-body case, for compute-sanitizer
 *   (tests/gpu_tree_sanitize.sh). */
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
#endif

#if NB_HAVE_CUDA

static void plummer(struct sim_state *st, size_t n, uint64_t seed)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 1), 0);
	sim_ic_plummer(st, 0, n, 1.0, 1.0, 20.0, seed, 0);
}

/* ---- the tree against its references ---- */

/* A case: n Plummer bodies (seed), eps, theta; shape: 0 as built, 1 the
 * first 1000 at one point, 2 body 0 a million units away, 3 that and
 * every z = 0 (a flat sheet); tol_com / tol_bmax: the bound on the 99th
 * percentile error against the direct sum for each criterion; 4 every z
 * times 0.05 (a flattened sphere). */
struct tree_arg {
	const char *what;
	size_t n;
	uint64_t seed;
	int shape;
	double tol_com, tol_bmax;
};

struct tfix {
	struct sim_state st;
	size_t n;
	double *ad, *pd; /* the double direct sum */
	double *ac;      /* the CPU tree's */
	double *at, *pt; /* the GPU tree's */
	struct gpu_tree_tuning keep; /* restored by teardown */
	double kept[4];              /* what a compare keeps from view to view */
};

/* The bodies and the double direct sum (potentials too): every view's
 * reference. The tuning is kept to be restored. */
static void tree_setup(struct twin_run *r)
{
	const struct tree_arg *a = r->arg;
	struct tfix *f = calloc(1, sizeof *f);
	ck_assert_ptr_nonnull(f);
	r->fix = f;
	const size_t n = f->n = a->n;
	plummer(&f->st, n, a->seed);
	if (a->shape == 1) /* 1000 bodies at one point inside the sphere */
		for (size_t i = 0; i < 1000; i++)
			f->st.pos[3 * i] = 0.25, f->st.pos[3 * i + 1] = -0.5, f->st.pos[3 * i + 2] = 0.125;
	if (a->shape >= 2)
		f->st.pos[0] = 1e6, f->st.pos[1] = -3e5, f->st.pos[2] = 2e5;
	if (a->shape == 3) /* a flat sheet z = 0 and a line: most octants of every cell empty */
		for (size_t i = 0; i < n; i++)
			f->st.pos[3 * i + 2] = 0.0;
	if (a->shape == 4)
		for (size_t i = 0; i < n; i++)
			f->st.pos[3 * i + 2] *= 0.05;
	f->ad = malloc(3 * n * sizeof *f->ad), f->pd = malloc(n * sizeof *f->pd);
	f->ac = malloc(3 * n * sizeof *f->ac);
	f->at = malloc(3 * n * sizeof *f->at), f->pt = malloc(n * sizeof *f->pt);
	ck_assert(f->ad && f->pd && f->ac && f->at && f->pt);
	ck_assert_int_eq(sim_direct_accel(f->st.pos, f->st.mass, n, 0.05, f->ad, f->pd), 0);
	gpu_tree_tuning_get(&f->keep);
	snprintf(r->what, sizeof r->what, "%s", a->what);
}

static void tree_teardown(struct twin_run *r)
{
	struct tfix *f = r->fix;
	gpu_tree_tuning_set(&f->keep);
	free(f->ad), free(f->pd), free(f->ac), free(f->at), free(f->pt);
	sim_state_free(&f->st);
	free(f);
}

/* The kept tuning with criterion crit. */
static void tree_tune(const struct tfix *f, int crit)
{
	struct gpu_tree_tuning tu = f->keep;
	tu.criterion = crit;
	gpu_tree_tuning_set(&tu);
}

/* The views of gpu_tree_matches_cpu_tree: the GPU's criterion, the CPU's
 * opening. */
static const struct {
	int crit;
	enum scene_opening opening;
	const char *name;
} tree_crits[3] = {{GPU_TREE_CRIT_SCENE, SCENE_OPENING_BMAX, "default (bmax)"},
		   {GPU_TREE_CRIT_BMAX, SCENE_OPENING_BMAX, "bmax"},
		   {GPU_TREE_CRIT_BH, SCENE_OPENING_COM, "com"}};

static void cpu_tree(struct twin_run *r)
{
	struct tfix *f = r->fix;
	const double *pos = f->st.pos, *mass = f->st.mass;
	if (r->view == 0)
		ck_assert_int_eq(sim_tree_accel(pos, mass, f->n, 0.05, 0.5, 2, f->ac, NULL), 0);
	else
		ck_assert_int_eq(sim_tree_accel_ex(pos, mass, f->n, 0.05, 0.5, 2, tree_crits[r->view].opening,
						   f->ac, NULL),
				 0);
}

static void gpu_tree_crit(struct twin_run *r)
{
	struct tfix *f = r->fix;
	tree_tune(f, tree_crits[r->view].crit);
	ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, 0.5, 2, f->at, NULL), 0);
}

/* GPU and CPU trees within 1e-5 (median) and 1.5e-3 (99th percentile) of
 * each other, and equally accurate against the direct sum (medians
 * within 5 %). */
static void trees_compare(struct twin_run *r)
{
	const struct tfix *f = r->fix;
	const size_t n = f->n;
	double *e = twin_rel_errors(f->at, f->ac, n), *eg = twin_rel_errors(f->at, f->ad, n),
	       *ec = twin_rel_errors(f->ac, f->ad, n);
	printf("%s, theta 0.5, quadrupole: gpu vs cpu tree median %.3g 99th %.3g; vs direct: "
	       "gpu median %.3g 99th %.3g, cpu median %.3g 99th %.3g\n",
	       tree_crits[r->view].name, twin_pct(e, n, 0.5), twin_pct(e, n, 0.99), twin_pct(eg, n, 0.5),
	       twin_pct(eg, n, 0.99), twin_pct(ec, n, 0.5), twin_pct(ec, n, 0.99));
	ck_assert_double_le(twin_pct(e, n, 0.5), 1e-5);
	ck_assert_double_le(twin_pct(e, n, 0.99), 1.5e-3);
	/* and the two trees are equally accurate */
	ck_assert_double_le(fabs(twin_pct(eg, n, 0.5) - twin_pct(ec, n, 0.5)),
			    0.05 * twin_pct(ec, n, 0.5));
	free(e), free(eg), free(ec);
}

/* GPU tree and CPU tree build the same cells and walk groups and use the
 * same criteria and moments (the softened quadrupole's trace term
 * included), so with the same criterion they differ by float rounding:
 * median ~1e-6 (measured on an H100: 3.0e-7 bmax, 7.6e-7 com, where the
 * tree's own error against the direct sum is ~2e-4). A body that rounding
 * puts in a neighbouring cell shifts the walk groups cut after it, so the
 * far tail differs by up to the trees' own error (99th percentile measured
 * 7.1e-4 bmax, 2.4e-4 com, against 1.9e-3 and 6.0e-4 from the direct sum).
 * Before the CPU tree had the trace term and the GPU's cells, the median
 * difference was 2.2e-4. The default criterion (tuning
 * GPU_TREE_CRIT_SCENE, sim_tree_accel) is bmax on both. */
static const struct twin_row trees_row = {
	"trees", tree_setup, cpu_tree, gpu_tree_crit, trees_compare, tree_teardown, TWIN_TOL_OWN, 3};
static const struct tree_arg trees_cases[] = {{"plummer 20000", 20000, 11, 0, 0, 0}};
TWIN_TEST(gpu_tree_matches_cpu_tree, &trees_row, trees_cases)

/* Individual time steps: with la > 0 the active bodies are packed into
 * walk groups of their own (tree_walk.cu) and only they are walked. The
 * contract (every active body written, no inactive one) is checked inside
 * gpu_tree_accel_levels, which fails otherwise. Packing changes only the
 * boxes the opening test is made against, and that test holds for every
 * body of a box, so the active bodies' errors against the direct sum are
 * those of the full walk: median and 99th percentile within 1.5x. la 0
 * walks every group as gpu_tree_accel does: the same numbers. Levels: the
 * inner bodies (r < 0.3, the densest, as a core on fine levels) level 3,
 * the others 0..2 by index. */
START_TEST(gpu_tree_packed_active_walk)
{
	const size_t n = 20000;
	struct sim_state st;
	plummer(&st, n, 13);
	unsigned char *lev = malloc(n);
	double *ad = malloc(3 * n * sizeof *ad), *af = malloc(3 * n * sizeof *af),
	       *ap = malloc(3 * n * sizeof *ap);
	ck_assert(lev && ad && af && ap);
	for (size_t i = 0; i < n; i++) {
		const double *x = st.pos + 3 * i;
		lev[i] = x[0] * x[0] + x[1] * x[1] + x[2] * x[2] < 0.09 ? 3 : (unsigned char)(i * 7 % 3);
	}
	ck_assert_int_eq(sim_direct_accel(st.pos, st.mass, n, 0.05, ad, NULL), 0);
	ck_assert_int_eq(gpu_tree_accel(st.pos, st.mass, n, 0.05, 0.5, 2, af, NULL), 0);
	ck_assert_int_eq(gpu_tree_accel_levels(st.pos, st.mass, lev, 0, n, 0.05, 0.5, 2, ap), 0);
	ck_assert_mem_eq(ap, af, 3 * n * sizeof *ap);
	for (int la = 1; la <= 3; la++) {
		for (size_t k = 0; k < 3 * n; k++)
			ap[k] = -1.0;
		ck_assert_int_eq(gpu_tree_accel_levels(st.pos, st.mass, lev, la, n, 0.05, 0.5, 2, ap), 0);
		size_t m = 0;
		double *sp = malloc(3 * n * sizeof *sp), *sf = malloc(3 * n * sizeof *sf),
		       *sd = malloc(3 * n * sizeof *sd);
		ck_assert(sp && sf && sd);
		for (size_t i = 0; i < n; i++) {
			if (lev[i] < la) {
				ck_assert(ap[3 * i] == -1.0); /* left as set */
				continue;
			}
			memcpy(sp + 3 * m, ap + 3 * i, 3 * sizeof *sp);
			memcpy(sf + 3 * m, af + 3 * i, 3 * sizeof *sf);
			memcpy(sd + 3 * m, ad + 3 * i, 3 * sizeof *sd);
			m++;
		}
		double *ep = twin_rel_errors(sp, sd, m), *ef = twin_rel_errors(sf, sd, m);
		printf("packed walk, active from level %d (%zu of %zu bodies): vs direct median %.3g "
		       "99th %.3g; full walk median %.3g 99th %.3g\n",
		       la, m, n, twin_pct(ep, m, 0.5), twin_pct(ep, m, 0.99), twin_pct(ef, m, 0.5),
		       twin_pct(ef, m, 0.99));
		ck_assert(m > 100 && m < n);
		ck_assert_double_le(twin_pct(ep, m, 0.5), 1.5 * twin_pct(ef, m, 0.5));
		ck_assert_double_le(twin_pct(ep, m, 0.99), 1.5 * twin_pct(ef, m, 0.99));
		free(ep), free(ef), free(sp), free(sf), free(sd);
	}
	free(lev), free(ad), free(af), free(ap);
	sim_state_free(&st);
}
END_TEST

/* The dumbbell of test_forces' trace-term test on the GPU: one accepted
 * cell seen from r ~ 1 with eps = 0.5; with the T eps^2 term the softened
 * expansion is left with O((b/s)^4) ~ 1e-5 (without it, ~8e-4). The
 * dumbbell's two bodies would go body by body as a small leaf: leaf_p2p 0.
 * Seen from a group of 32 targets 3e-3 wide it is far: once applied body
 * by body (local_ratio 0), once through the group's local expansion
 * (default ratio), which adds O((rho/R)^2 (b/R)^2) ~ 1e-7. */
START_TEST(gpu_tree_softened_quadrupole_trace_term)
{
	const size_t n = 602; /* more than a group node's 512: the dumbbell is a group of its own */
	const double half = 0.05, eps = 0.5;
	double *pos = calloc(3 * n, sizeof *pos), *mass = malloc(n * sizeof *mass);
	double *ad = malloc(3 * n * sizeof *ad), *pd = malloc(n * sizeof *pd);
	double *at = malloc(3 * n * sizeof *at), *pt = malloc(n * sizeof *pt);
	pos[2] = half, pos[5] = -half, mass[0] = mass[1] = 1;
	for (size_t k = 2; k < n; k++) {
		pos[3 * k] = 1 + 1e-4 * (double)k;
		pos[3 * k + 2] = 0.3;
		mass[k] = 1e-30;
	}
	ck_assert_int_eq(sim_direct_accel(pos, mass, n, eps, ad, pd), 0);
	struct gpu_tree_tuning keep, tu;
	gpu_tree_tuning_get(&keep);
	for (int crit = 0; crit <= 3; crit++) {
		tu = keep;
		tu.criterion = crit % 2;
		tu.leaf_p2p = 0;
		if (crit < 2)
			tu.local_ratio = 0.0f;
		gpu_tree_tuning_set(&tu);
		for (int mp = 1; mp <= 2; mp++) {
			ck_assert_int_eq(gpu_tree_accel(pos, mass, n, eps, 0.6, mp, at, pt), 0);
			double worst_a = 0, worst_p = 0, least_a = INFINITY;
			for (size_t k = 2; k < n; k++) {
				double d2 = 0, r2 = 0;
				for (int c = 0; c < 3; c++) {
					double d = at[3 * k + c] - ad[3 * k + c];
					d2 += d * d, r2 += ad[3 * k + c] * ad[3 * k + c];
				}
				worst_a = fmax(worst_a, sqrt(d2 / r2));
				least_a = fmin(least_a, sqrt(d2 / r2));
				worst_p = fmax(worst_p, fabs(pt[k] - pd[k]) / fabs(pd[k]));
			}
			printf("trace term, criterion %d, local ratio %g, multipoles %d: acc error "
			       "%.3g..%.3g, pot %.3g\n",
			       crit % 2, tu.local_ratio, mp, least_a, worst_a, worst_p);
			if (mp == 1) /* the cell was accepted: the monopole is off */
				ck_assert_double_gt(least_a, 1e-3);
			else
				ck_assert_msg(worst_a < 3e-5 && worst_p < 5e-6,
					      "criterion %d: quadrupole errors %g (acc), %g (pot)", crit,
					      worst_a, worst_p);
		}
	}
	gpu_tree_tuning_set(&keep);
	free(pos), free(mass), free(ad), free(pd), free(at), free(pt);
}
END_TEST

/* Views 0..7 of gpu_tree_error_shrinks_with_theta: multipoles 1 + v / 4,
 * theta tree_thetas[v % 4]; view 8: theta 0. */
static const double tree_thetas[] = {0.9, 0.7, 0.5, 0.3};

static void gpu_tree_theta(struct twin_run *r)
{
	struct tfix *f = r->fix;
	if (r->view < 8)
		ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, tree_thetas[r->view % 4],
						1 + r->view / 4, f->at, NULL),
				 0);
	else
		ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, 0.0, 2, f->at, f->pt), 0);
}

/* The median below the last view's (kept[0]) at each multipole order,
 * 1e-3 at quadrupole theta 0.5; theta 0: every pair, float sums of n
 * terms: 99th percentile 3e-5, max 1e-3, potentials 2e-5. */
static void theta_compare(struct twin_run *r)
{
	struct tfix *f = r->fix;
	const size_t n = f->n;
	double *e = twin_rel_errors(f->at, f->ad, n);
	if (r->view < 8) {
		const int mp = 1 + r->view / 4;
		const double theta = tree_thetas[r->view % 4], med = twin_pct(e, n, 0.5);
		if (r->view % 4 == 0)
			f->kept[0] = INFINITY;
		printf("multipoles %d theta %.1f: median %.3g 99th %.3g\n", mp, theta, med,
		       twin_pct(e, n, 0.99));
		ck_assert_msg(med < f->kept[0], "median error %g at theta %g is not below %g", med, theta,
			      f->kept[0]);
		if (mp == 2 && theta == 0.5)
			ck_assert_double_le(med, 1e-3);
		f->kept[0] = med;
	} else {
		printf("theta 0: median %.3g 99th %.3g max %.3g\n", twin_pct(e, n, 0.5),
		       twin_pct(e, n, 0.99), e[n - 1]);
		ck_assert_double_le(twin_pct(e, n, 0.99), 3e-5);
		ck_assert_double_le(e[n - 1], 1e-3);
		for (size_t i = 0; i < n; i++)
			ck_assert_close(f->pt[i], f->pd[i], 0.0, 2e-5);
	}
	free(e);
}

/* Median error against the double direct sum falls as theta falls
 * (monopole error ~ theta^2, quadrupole ~ theta^3), and theta = 0 is the
 * direct sum itself up to float rounding. */
static const struct twin_row theta_row = {
	"theta", tree_setup, NULL, gpu_tree_theta, theta_compare, tree_teardown, TWIN_TOL_OWN, 9};
static const struct tree_arg theta_cases[] = {{"plummer 20000", 20000, 12, 0, 0, 0}};
TWIN_TEST(gpu_tree_error_shrinks_with_theta, &theta_row, theta_cases)

/* View on: the groups' local expansions (the default local ratio) or not
 * (ratio 0), interactions counted; kept[view]: its local share. */
static void gpu_tree_local(struct twin_run *r)
{
	struct tfix *f = r->fix;
	struct gpu_tree_tuning tu = f->keep;
	struct gpu_tree_profile pr;
	tu.count_interactions = 1;
	if (!r->view)
		tu.local_ratio = 0.0f;
	gpu_tree_tuning_set(&tu);
	gpu_tree_profile_read(&pr, 1);
	gpu_tree_profile_enable(1);
	ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, 0.5, 2, f->at, NULL), 0);
	gpu_tree_profile_enable(0);
	gpu_tree_profile_read(&pr, 1);
	f->kept[r->view] = pr.m2l / (pr.m2l + pr.m2p);
	printf("%s, local ratio %g: P2P %.0f M2P %.0f local %.0f per body\n", r->what, tu.local_ratio,
	       pr.p2p / f->n, pr.m2p / f->n, pr.m2l / f->n);
}

/* With the local expansions: a large share of the body-cell interactions
 * gone (local share > 0.2, none without), the median within 3 % and the
 * 99th percentile within 10 % of the errors without. */
static void local_compare(struct twin_run *r)
{
	struct tfix *f = r->fix;
	const size_t n = f->n;
	double *e = twin_rel_errors(f->at, f->ad, n);
	const double med = twin_pct(e, n, 0.5), p99 = twin_pct(e, n, 0.99);
	printf("%s, view %d: median %.3g 99th %.3g\n", r->what, r->view, med, p99);
	free(e);
	if (r->view == 0) {
		f->kept[2] = med, f->kept[3] = p99;
		return;
	}
	ck_assert_double_eq(f->kept[0], 0.0);
	ck_assert_double_gt(f->kept[1], 0.2);
	ck_assert_double_le(med, 1.03 * f->kept[2]);
	ck_assert_double_le(p99, 1.1 * f->kept[3]);
}

/* Far cells through the groups' local expansions (the default local
 * ratio) against every accepted cell applied body by body (ratio 0): the
 * same accuracy against the double direct sum (host emulation of 1M
 * bodies: medians within 1 %), with a large share of the body-cell
 * interactions gone. Also in a flat disk (groups are flat boxes there). */
static const struct twin_row local_row = {
	"local expansion", tree_setup, NULL, gpu_tree_local, local_compare, tree_teardown,
	TWIN_TOL_OWN, 2};
static const struct tree_arg local_cases[] = {{"Plummer", 30000, 16, 0, 0, 0},
					      {"flattened Plummer", 30000, 16, 4, 0, 0}};
TWIN_TEST(gpu_tree_local_expansion_keeps_accuracy, &local_row, local_cases)

/* One body feels nothing; two bodies feel m r / (r^2 + eps^2)^{3/2} and
 * phi = -m / sqrt(r^2 + eps^2). The potential's tolerance allows for the
 * float rounding of the self term m/eps that the walk adds and removes. */
START_TEST(gpu_tree_one_and_two_bodies)
{
	double pos[6] = {0.3, -0.2, 0.1, 1.3, 0.8, -0.4}, mass[2] = {2.0, 0.5}, acc[6], pot[2];
	ck_assert_int_eq(gpu_tree_accel(pos, mass, 1, 0.1, 0.5, 2, acc, pot), 0);
	for (int k = 0; k < 3; k++)
		ck_assert_close(acc[k], 0.0, 1e-12, 0.0);
	ck_assert_close(pot[0], 0.0, 1e-5 * mass[0] / 0.1, 0.0);
	const double eps = 0.1;
	for (int mp = 1; mp <= 2; mp++) {
		ck_assert_int_eq(gpu_tree_accel(pos, mass, 2, eps, 0.7, mp, acc, pot), 0);
		double r[3] = {pos[3] - pos[0], pos[4] - pos[1], pos[5] - pos[2]};
		double s2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps * eps;
		double f = 1.0 / (s2 * sqrt(s2));
		for (int k = 0; k < 3; k++) {
			ck_assert_close(acc[k], mass[1] * r[k] * f, 0.0, 1e-5);
			ck_assert_close(acc[3 + k], -mass[0] * r[k] * f, 0.0, 1e-5);
		}
		ck_assert_close(pot[0], -mass[1] / sqrt(s2), 1e-6 * mass[0] / eps, 1e-5);
		ck_assert_close(pot[1], -mass[0] / sqrt(s2), 1e-6 * mass[1] / eps, 1e-5);
	}
}
END_TEST

/* The tree against the double direct sum, criterion view (com or
 * bmax): every value finite, 99th percentile error below tol_com
 * (criterion com) or tol_bmax (bmax, which at small N accepts cells that
 * com opens). */
static void gpu_tree_pot(struct twin_run *r)
{
	struct tfix *f = r->fix;
	tree_tune(f, r->view);
	ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, 0.5, 2, f->at, f->pt), 0);
}

static void direct_compare(struct twin_run *r)
{
	const struct tree_arg *a = r->arg;
	const struct tfix *f = r->fix;
	const size_t n = f->n;
	const int crit = r->view;
	const double tol = crit == GPU_TREE_CRIT_BH ? a->tol_com : a->tol_bmax;
	for (size_t i = 0; i < 3 * n; i++)
		ck_assert_msg(isfinite(f->at[i]), "%s: acc[%zu] = %g", r->what, i, f->at[i]);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(isfinite(f->pt[i]), "%s: pot[%zu] = %g", r->what, i, f->pt[i]);
	double *e = twin_rel_errors(f->at, f->ad, n);
	printf("%s, criterion %d: median %.3g 99th %.3g\n", r->what, crit, twin_pct(e, n, 0.5),
	       twin_pct(e, n, 0.99));
	ck_assert_msg(twin_pct(e, n, 0.99) <= tol, "%s, criterion %d: 99th percentile error %g > %g",
		      r->what, crit, twin_pct(e, n, 0.99), tol);
	free(e);
}

/* Coincident bodies (one key for all: a leaf beyond the leaf size at the
 * deepest level), a body 1e6 away, and a flat sheet (the upper octants of
 * every cell empty). */
START_TEST(gpu_tree_awkward_inputs)
{
	static const struct twin_row row = {
		"tree vs direct", tree_setup, NULL, gpu_tree_pot, direct_compare, tree_teardown, TWIN_TOL_OWN, 2};
	static const struct tree_arg coincident[] = {{"1000 coincident bodies", 3000, 13, 1, 2e-3, 2e-2}};
	static const struct tree_arg far[] = {{"a body 1e6 away", 3000, 14, 2, 2e-3, 2e-2},
					      {"a flat sheet", 3000, 14, 3, 2e-3, 2e-2}};
	TWIN_RUN(&row, coincident);
	/* all bodies at one point: no force, phi = -(M - m) / eps */
	double *p1 = calloc(3 * 500, sizeof *p1), *m1 = malloc(500 * sizeof *m1);
	double *a1 = malloc(3 * 500 * sizeof *a1), *f1 = malloc(500 * sizeof *f1);
	for (size_t i = 0; i < 500; i++)
		m1[i] = 0.002, p1[3 * i] = 7.0;
	ck_assert_int_eq(gpu_tree_accel(p1, m1, 500, 0.05, 0.5, 2, a1, f1), 0);
	for (size_t i = 0; i < 500; i++) {
		for (int k = 0; k < 3; k++)
			ck_assert_close(a1[3 * i + k], 0.0, 1e-9, 0.0);
		ck_assert_close(f1[i], -(1.0 - 0.002) / 0.05, 0.0, 1e-4);
	}
	free(p1), free(m1), free(a1), free(f1);
	TWIN_RUN(&row, far);
}
END_TEST

/* View v of gpu_tree_all_variants: lanes 1 + v / 4, criterion v / 2 % 2,
 * multipoles 1 + v % 2; potentials where lanes + multipoles is odd.
 * NB_GPU_SANITIZE skips criterion 1. */
static int variant_skipped(const struct twin_run *r)
{
	return getenv("NB_GPU_SANITIZE") != NULL && r->view / 2 % 2 == 1;
}

static void gpu_tree_variant(struct twin_run *r)
{
	struct tfix *f = r->fix;
	const int lanes = 1 + r->view / 4, mp = 1 + r->view % 2;
	if (variant_skipped(r))
		return;
	struct gpu_tree_tuning tu = f->keep;
	tu.lanes = lanes;
	tu.criterion = r->view / 2 % 2;
	tu.leaf_size = lanes == 1 ? 16 : 32;
	gpu_tree_tuning_set(&tu);
	const int pot = (lanes + mp) % 2;
	ck_assert_int_eq(gpu_tree_accel(f->st.pos, f->st.mass, f->n, 0.05, 0.5, mp, f->at,
					pot ? f->pt : NULL),
			 0);
}

/* Median within 1e-3 (quadrupole) or 3e-3 (monopole), 99th percentile
 * 2e-2, potentials within 1e-2 relative. */
static void variant_compare(struct twin_run *r)
{
	const struct tfix *f = r->fix;
	const size_t n = f->n;
	const int lanes = 1 + r->view / 4, crit = r->view / 2 % 2, mp = 1 + r->view % 2;
	if (variant_skipped(r))
		return;
	double *e = twin_rel_errors(f->at, f->ad, n);
	printf("lanes %d criterion %d multipoles %d: median %.3g 99th %.3g\n", lanes, crit, mp,
	       twin_pct(e, n, 0.5), twin_pct(e, n, 0.99));
	ck_assert_double_le(twin_pct(e, n, 0.5), mp == 2 ? 1e-3 : 3e-3);
	ck_assert_double_le(twin_pct(e, n, 0.99), 2e-2);
	if ((lanes + mp) % 2)
		for (size_t i = 0; i < n; i++)
			ck_assert_close(f->pt[i], f->pd[i], 0.0, 1e-2);
	free(e);
}

/* Every walk variant (groups of 32 and 64, both criteria, monopole and
 * quadrupole, with and without potential) on a 10k Plummer sphere. */
static const struct twin_row variants_row = {
	"tree variants", tree_setup, NULL, gpu_tree_variant, variant_compare, tree_teardown,
	TWIN_TOL_OWN, 8};
static const struct tree_arg variants_cases[] = {{"plummer 10000", 10000, 15, 0, 0, 0}};
TWIN_TEST(gpu_tree_all_variants, &variants_row, variants_cases)

/* The Plummer test scene with solver barnes-hut stepped on the GPU:
 * momentum stays near zero (tree forces are not exactly antisymmetric, so
 * only to a small fraction of sum m|v|) and energy within 1e-3. */
START_TEST(gpu_tree_plummer_scene_conserves)
{
	const char *set[] = {"simulation.solver=barnes-hut", "simulation.multipoles=2"};
	struct scene sc;
	ck_assert_int_eq(scene_load("tests/data/plummer-small.yaml", set, 2, &sc), 0);
	struct sim_state st;
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	struct sim_params p = {
		.solver = SCENE_SOLVER_BARNES_HUT,
		.direct_kernel = SCENE_DIRECT_AUTO,
		.softening = sc.simulation.softening,
		.dt = sc.simulation.dt,
		.theta = sc.simulation.theta,
		.multipoles = sc.simulation.multipoles,
		.opening = sc.simulation.opening,
	};
	struct gpu_sim *g = NULL;
	ck_assert_int_eq(gpu_sim_create(&st, &p, &g), 0);
	ck_assert_int_eq(gpu_sim_download(g, &st), 0);
	struct sim_diag d0, d1;
	sim_diag_compute(&st, &d0);
	double pscale = 0;
	for (size_t i = 0; i < st.n; i++)
		pscale += st.mass[i] * sqrt(st.vel[3 * i] * st.vel[3 * i] + st.vel[3 * i + 1] * st.vel[3 * i + 1] +
					    st.vel[3 * i + 2] * st.vel[3 * i + 2]);
	ck_assert_int_eq(gpu_sim_advance(g, 300, 1), 0);
	ck_assert_int_eq(gpu_sim_download(g, &st), 0);
	sim_diag_compute(&st, &d1);
	printf("plummer-small, barnes-hut on the GPU, 300 steps: dE/E %.3g, |dp|/sum m|v| %.3g\n",
	       (d1.total - d0.total) / fabs(d0.total),
	       sqrt(pow(d1.p[0] - d0.p[0], 2) + pow(d1.p[1] - d0.p[1], 2) + pow(d1.p[2] - d0.p[2], 2)) / pscale);
	ck_assert_close(d1.total, d0.total, 0.0, 1e-3);
	for (int k = 0; k < 3; k++)
		ck_assert_close(d1.p[k], d0.p[k], 1e-4 * pscale, 0.0);
	gpu_sim_free(&g);
	sim_state_free(&st);
}
END_TEST

/* ---- body order between steps: migrate (sim/cuda/tree_migrate.cu) ---------
 * A Plummer sphere (velocities scaled by vscale; body 0 flung out at speed
 * fling when > 0) advanced `steps` leapfrog steps with tree reorder mode
 * `reorder` (tuning: 0 sort, 1 migrate, 2 the radix sort over migrate's
 * frozen cube), downloaded into st; the tree's profile summed over the
 * steps into pr. */
static void run_reorder(int reorder, size_t n, double vscale, double fling, int steps,
			int branch_bodies, struct sim_state *st, struct gpu_tree_profile *pr)
{
	plummer(st, n, 5);
	for (size_t i = 0; i < 3 * n; i++)
		st->vel[i] *= vscale;
	if (fling > 0)
		st->vel[0] = st->vel[1] = fling;
	struct gpu_tree_tuning tu;
	gpu_tree_tuning_get(&tu);
	tu.reorder = reorder;
	tu.branch_bodies = branch_bodies;
	gpu_tree_tuning_set(&tu);
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT,
				   .direct_kernel = SCENE_DIRECT_AUTO,
				   .softening = 0.05,
				   .dt = 0.01,
				   .theta = 0.5,
				   .multipoles = 2,
				   .opening = SCENE_OPENING_BMAX};
	struct gpu_sim *g = NULL;
	gpu_tree_profile_enable(1);
	ck_assert_int_eq(gpu_sim_create(st, &p, &g), 0);
	gpu_tree_profile_read(pr, 1); /* creation's force evaluation not counted */
	ck_assert_int_eq(gpu_sim_advance(g, steps, 0), 0);
	gpu_tree_profile_read(pr, 1);
	gpu_tree_profile_enable(0);
	ck_assert_int_eq(gpu_sim_download(g, st), 0);
	gpu_sim_free(&g);
	gpu_tree_tuning_set(NULL);
}

static void assert_same_state(const struct sim_state *a, const struct sim_state *b)
{
	ck_assert_uint_eq(a->n, b->n);
	size_t dp = 0, dv = 0, da = 0;
	for (size_t i = 0; i < 3 * a->n; i++) {
		dp += memcmp(&a->pos[i], &b->pos[i], sizeof(double)) != 0;
		dv += memcmp(&a->vel[i], &b->vel[i], sizeof(double)) != 0;
		da += memcmp(&a->acc[i], &b->acc[i], sizeof(double)) != 0;
	}
	ck_assert_msg(dp == 0 && dv == 0 && da == 0,
		      "components that differ: pos %zu, vel %zu, acc %zu of %zu", dp, dv, da,
		      3 * a->n);
}

/* Migration gives the full re-sort's order over the same keys, so the same
 * tree and bit-identical forces, step after step (the whole trajectory
 * equal); and the plain sort (a tighter cube: other cells) agrees within
 * the tree's tolerance after one step. */
START_TEST(gpu_migrate_matches_full_sort)
{
	const size_t n = 30000;
	struct sim_state sm, sf, ss;
	struct gpu_tree_profile pm, pf, ps;
	memset(&sm, 0, sizeof sm), memset(&sf, 0, sizeof sf), memset(&ss, 0, sizeof ss);
	run_reorder(1, n, 1.0, 0, 40, 256, &sm, &pm);
	run_reorder(2, n, 1.0, 0, 40, 256, &sf, &pf);
	printf("migrate, 30k Plummer, 40 steps: %ld branches, moved %.4f of the bodies a step, "
	       "%ld rebuilds, %ld refits, largest branch %d\n",
	       (long)pm.mig_branches, pm.mig_moved / pm.mig_bodies, pm.mig_rebuilds,
	       pm.mig_refits, pm.mig_max_branch);
	ck_assert_int_eq(pm.mig_steps, 40);
	ck_assert_msg(pm.mig_moved > 0 && pm.mig_moved / pm.mig_bodies < 0.25, "moved %g",
		      pm.mig_moved);
	/* the creation's step rebuilt (not counted here) with exact quantiles:
	 * none after it (before sim/cuda/tree_migrate.cu took its splitters from
	 * the sorted keys: 2 here, and every step at 1M bodies) */
	ck_assert_int_le(pm.mig_rebuilds, 1);
	ck_assert_int_le(pm.mig_max_branch, 2 * (int)((n + 116) / 117));
	assert_same_state(&sm, &sf);
	sim_state_free(&sm);
	sim_state_free(&sf);
	/* one step against the plain sort */
	run_reorder(1, n, 1.0, 0, 1, 256, &sm, &pm);
	run_reorder(0, n, 1.0, 0, 1, 256, &ss, &ps);
	double *e = twin_rel_errors(sm.acc, ss.acc, n);
	printf("migrate vs sort, one step: relative acceleration difference median %.2e, p99 %.2e\n",
	       twin_pct(e, n, 0.5), twin_pct(e, n, 0.99));
	ck_assert_msg(twin_pct(e, n, 0.99) < 1e-2, "p99 %g", twin_pct(e, n, 0.99));
	free(e);
	sim_state_free(&sm);
	sim_state_free(&ss);
}
END_TEST

/* The benchmark's case (nbody-bench migrate, 1M Plummer, branch_bodies
 * 1024): after the creation's rebuild and 2 steps of warm-up, fewer than a
 * fifth of the steps rebuild and no branch passes twice the mean. Measured
 * on an H100 before the rebuild took exact quantiles: every step rebuilt,
 * largest branch 3090 of mean 1025. */
START_TEST(gpu_migrate_1m_keeps_branches_balanced)
{
	const size_t n = 1000000;
	const int warm = 2, steps = 20;
	struct sim_state st;
	memset(&st, 0, sizeof st);
	plummer(&st, n, 37);
	struct gpu_tree_tuning tu;
	gpu_tree_tuning_get(&tu);
	tu.reorder = 1;
	tu.branch_bodies = 1024;
	gpu_tree_tuning_set(&tu);
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT,
				   .direct_kernel = SCENE_DIRECT_AUTO,
				   .softening = 0.05,
				   .dt = 0.01,
				   .theta = 0.5,
				   .multipoles = 2,
				   .opening = SCENE_OPENING_BMAX};
	struct gpu_sim *g = NULL;
	struct gpu_tree_profile pr;
	gpu_tree_profile_read(&pr, 1); /* nothing left from earlier tests */
	gpu_tree_profile_enable(1);
	ck_assert_int_eq(gpu_sim_create(&st, &p, &g), 0);
	gpu_tree_profile_read(&pr, 1);
	printf("migrate, 1M Plummer, creation: %ld rebuilds, largest branch %d of %d branches\n",
	       pr.mig_rebuilds, pr.mig_max_branch, pr.mig_branches);
	ck_assert_int_eq(pr.mig_rebuilds, 1);
	ck_assert_int_eq(gpu_sim_advance(g, warm, 0), 0);
	gpu_tree_profile_read(&pr, 1);
	int nbr = pr.mig_branches, mean = (int)((n + (size_t)nbr - 1) / (size_t)nbr);
	long rebuilds = 0, refits = 0;
	int largest = 0;
	double moved = 0, bodies = 0;
	for (int s = 0; s < steps; s++) {
		ck_assert_int_eq(gpu_sim_advance(g, 1, 0), 0);
		gpu_tree_profile_read(&pr, 1);
		ck_assert_int_eq(pr.mig_steps, 1);
		rebuilds += pr.mig_rebuilds;
		refits += pr.mig_refits;
		moved += pr.mig_moved;
		bodies += pr.mig_bodies;
		largest = pr.mig_max_branch > largest ? pr.mig_max_branch : largest;
	}
	gpu_tree_profile_enable(0);
	printf("migrate, 1M Plummer, %d steps after %d: %ld rebuilds, %ld refits, moved %.4f of "
	       "the bodies a step, largest branch %d (mean %d, %d branches)\n",
	       steps, warm, rebuilds, refits, moved / bodies, largest, mean, nbr);
	ck_assert_int_lt(rebuilds * 5, steps);
	ck_assert_int_le(largest, 2 * mean);
	ck_assert_msg(moved > 0 && moved / bodies < 0.25, "moved %g of %g", moved, bodies);
	gpu_sim_free(&g);
	gpu_tree_tuning_set(NULL);
	sim_state_free(&st);
}
END_TEST

/* Adversarial: velocities 30 times too large (more than a quarter of the
 * bodies cross in a step: rebuild from the buffer's overflow), and one
 * body flung out of the box (the frozen cube refitted): still the full
 * re-sort's trajectory bit for bit. */
START_TEST(gpu_migrate_adversarial_matches_full_sort)
{
	/* smaller under compute-sanitizer (tests/gpu_tree_sanitize.sh) */
	const size_t n = getenv("NB_GPU_SANITIZE") ? 4000 : 20000;
	struct sim_state sm, sf;
	struct gpu_tree_profile pm, pf;
	memset(&sm, 0, sizeof sm), memset(&sf, 0, sizeof sf);
	run_reorder(1, n, 30.0, 0, 10, 128, &sm, &pm);
	run_reorder(2, n, 30.0, 0, 10, 128, &sf, &pf);
	printf("migrate, hot sphere: moved %.3f a step, %ld rebuilds of %ld, %ld refits\n",
	       pm.mig_moved / pm.mig_bodies, pm.mig_rebuilds, pm.mig_steps, pm.mig_refits);
	/* At 20k bodies over 9 in 10 bodies cross a step and the buffer's
	 * overflow forces rebuilds; at the sanitizer's 4k, 128-body branches
	 * see ~18 % cross (H100, 2026-11-26), under the quarter that forces
	 * one, so there the case checks the migration path alone. */
	if (!getenv("NB_GPU_SANITIZE"))
		ck_assert_int_ge(pm.mig_rebuilds, 1);
	assert_same_state(&sm, &sf);
	sim_state_free(&sm);
	sim_state_free(&sf);
	run_reorder(1, n, 1.0, 400.0, 20, 128, &sm, &pm);
	run_reorder(2, n, 1.0, 400.0, 20, 128, &sf, &pf);
	printf("migrate, one body flung out: %ld refits, %ld rebuilds of %ld\n", pm.mig_refits,
	       pm.mig_rebuilds, pm.mig_steps);
	ck_assert_int_ge(pm.mig_refits, 1);
	assert_same_state(&sm, &sf);
	sim_state_free(&sm);
	sim_state_free(&sf);
}
END_TEST

/* More bodies than the tree indexes: a clear input error, no allocation. */
START_TEST(gpu_tree_too_big_is_input_error)
{
	double pos[3] = {0, 0, 0}, mass[1] = {1}, acc[3];
	(void)pos, (void)mass, (void)acc;
	struct sim_params p = {.solver = SCENE_SOLVER_BARNES_HUT,
				   .direct_kernel = SCENE_DIRECT_AUTO,
				   .softening = 0.05,
				   .dt = 0.01,
				   .theta = 0.5,
				   .multipoles = 2,
				   .opening = SCENE_OPENING_BMAX};
	ck_assert_int_eq(gpu_tree_accel(pos, mass, (size_t)1 << 28, 0.05, 0.5, 2, acc, NULL), NB_EINPUT);
	/* the estimate grows linearly: ~100 bytes per body at the default leaf */
	size_t b1 = gpu_sim_bytes_needed(1000000, &p), b2 = gpu_sim_bytes_needed(2000000, &p);
	ck_assert_msg(b2 > b1 && b2 < 2 * b1 + 100000000, "bytes %zu, %zu", b1, b2);
	printf("device bytes per body (sim + tree, 1M): %.1f\n", b1 / 1e6);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_tree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	if (getenv("NB_GPU_SANITIZE")) {
		tcase_add_test(tc, gpu_tree_all_variants);
		tcase_add_test(tc, gpu_tree_one_and_two_bodies);
		tcase_add_test(tc, gpu_migrate_adversarial_matches_full_sort);
		tcase_add_test(tc, gpu_tree_packed_active_walk);
	} else {
		tcase_add_test(tc, gpu_tree_one_and_two_bodies);
		tcase_add_test(tc, gpu_tree_matches_cpu_tree);
		tcase_add_test(tc, gpu_tree_packed_active_walk);
		tcase_add_test(tc, gpu_tree_softened_quadrupole_trace_term);
		tcase_add_test(tc, gpu_tree_local_expansion_keeps_accuracy);
		tcase_add_test(tc, gpu_tree_error_shrinks_with_theta);
		tcase_add_test(tc, gpu_tree_awkward_inputs);
		tcase_add_test(tc, gpu_tree_all_variants);
		tcase_add_test(tc, gpu_tree_plummer_scene_conserves);
		tcase_add_test(tc, gpu_tree_too_big_is_input_error);
		tcase_add_test(tc, gpu_migrate_matches_full_sort);
		tcase_add_test(tc, gpu_migrate_1m_keeps_branches_balanced);
		tcase_add_test(tc, gpu_migrate_adversarial_matches_full_sort);
	}
	NB_GPU_TCASE(s, tc);
	return s;
}

#else /* CPU-only build */

static Suite *make_suite(void)
{
	nb_gpu_skip_all("gpu_tree");
	return suite_create("gpu_tree");
}
#endif

NB_CHECK_MAIN(make_suite)
