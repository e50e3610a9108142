/* test_gpu_let.c - locally essential trees on the GPU (gpu.h's gpu_let_*,
 * sim/cuda/tree_let.cu): P domains of one Plummer sphere, each a gpu_let of
 * its own in this one process, exchange their exports as ranks would
 * (dist/let_force.c does it over MPI), and their forces are held against
 * the double direct sum and against one GPU tree over every body. Without
 * a usable GPU the program prints "SKIP: <why>" and runs no case.
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_let && build/tests/test_gpu_let */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "../dist/dist.h"
#include "../sim/cuda/gpu.h"
#include "../sim/let_gwire.h"
#include "../sim/sim.h"
#if NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#endif

#if NB_HAVE_CUDA

static int cmp_d(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median and 99th percentile of |a - ref| / |ref| */
static void rel_err(const double *a, const double *ref, size_t n, double *med, double *p99)
{
	double *e = malloc(n * sizeof *e);
	ck_assert_ptr_nonnull(e);
	for (size_t i = 0; i < n; i++) {
		const double *x = a + 3 * i, *r = ref + 3 * i;
		const double d = sqrt((x[0] - r[0]) * (x[0] - r[0]) + (x[1] - r[1]) * (x[1] - r[1]) +
				      (x[2] - r[2]) * (x[2] - r[2]));
		e[i] = d / sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
	}
	qsort(e, n, sizeof *e, cmp_d);
	*med = e[n / 2];
	*p99 = e[(size_t)(0.99 * (double)n)];
	free(e);
}

static const struct sim_params let_params = {.solver = SCENE_SOLVER_BARNES_HUT,
					     .softening = 0.05,
					     .dt = 0.01,
					     .theta = 0.5,
					     .multipoles = 2,
					     .opening = SCENE_OPENING_BMAX};

/* The cube round every body of st (lo[3], hi[3]), as dist_own_box makes it. */
static void cube_of(const struct sim_state *st, double *cube)
{
	double ext = 0;
	for (int k = 0; k < 3; k++)
		cube[k] = INFINITY, cube[3 + k] = -INFINITY;
	for (size_t i = 0; i < st->n; i++)
		for (int k = 0; k < 3; k++) {
			cube[k] = fmin(cube[k], st->pos[3 * i + k]);
			cube[3 + k] = fmax(cube[3 + k], st->pos[3 * i + k]);
		}
	for (int k = 0; k < 3; k++)
		ext = fmax(ext, cube[3 + k] - cube[k]);
	for (int k = 0; k < 3; k++)
		cube[3 + k] = cube[k] + ext * (1 + 1e-6);
}

/* Individual time steps: the lean tree keeps the levels' arrays */
static const struct sim_params let_params_ind = {.solver = SCENE_SOLVER_BARNES_HUT,
						 .softening = 0.05,
						 .dt = 0.01,
						 .theta = 0.5,
						 .multipoles = 2,
						 .opening = SCENE_OPENING_BMAX,
						 .timesteps = SCENE_TIMESTEPS_INDIVIDUAL};

/* One domain of let_domains: its bodies, results and cover. */
struct let_dom {
	struct gpu_let *g;
	size_t m;
	double *pos, *mass, *a, *ph;
	unsigned char *act;
	double box[6 * 64];
	int nbox;
};

/* Domain r of d (P of them) as D: its bodies of st, a gpu_let built over
 * them (active: by body index, or NULL) and its cover, every own body
 * inside one of the cover's boxes. */
static void let_dom_build(struct let_dom *D, const struct sim_state *st, const struct dist_domain *d,
			  int r, int P, const unsigned char *active, const double *cube)
{
	const size_t m = D->m = d->cut[r + 1] - d->cut[r], m1 = m ? m : 1;
	D->pos = malloc(3 * m1 * sizeof *D->pos);
	D->mass = malloc(m1 * sizeof *D->mass);
	D->a = malloc(3 * m1 * sizeof *D->a);
	D->ph = malloc(m1 * sizeof *D->ph);
	D->act = malloc(m1);
	ck_assert(D->pos && D->mass && D->a && D->ph && D->act);
	for (size_t k = 0; k < m; k++) {
		const size_t i = d->order[d->cut[r] + k];
		memcpy(D->pos + 3 * k, st->pos + 3 * i, 3 * sizeof(double));
		D->mass[k] = st->mass[i];
		D->act[k] = active ? active[i] : 1;
		D->a[3 * k] = D->a[3 * k + 1] = D->a[3 * k + 2] = D->ph[k] = NAN;
	}
	ck_assert_int_eq(gpu_let_create(active ? &let_params_ind : &let_params, &D->g), 0);
	ck_assert_int_eq(gpu_let_build(D->g, D->pos, D->mass, m, active ? D->act : NULL,
				       P > 1 ? cube : NULL),
			 0);
	ck_assert_int_eq(gpu_let_cover(D->g, 32, D->box, &D->nbox), 0);
	ck_assert(D->nbox >= 1 && D->nbox <= 32);
	for (size_t k = 0; k < m; k++) {
		int in = 0;
		for (int b = 0; b < D->nbox && !in; b++) {
			const double *x = D->box + 6 * b, *p = D->pos + 3 * k;
			in = (float)p[0] >= x[0] && (float)p[0] <= x[3] && (float)p[1] >= x[1] &&
			     (float)p[1] <= x[4] && (float)p[2] >= x[2] && (float)p[2] <= x[5];
		}
		ck_assert_msg(in, "domain %d body %zu outside its cover", r, k);
	}
}

/* The forces of n Plummer bodies (seed) cut into P Morton domains, each
 * a gpu_let, into acc/pot (by body index); *bytes the exports' sum.
 * active (n, by body index, or NULL: all): the bodies asked for; the
 * others' acc and pot come back NaN (each domain's arrays start so). */
static void let_domains(const struct sim_state *st, int P, const unsigned char *active,
			double *acc, double *pot, size_t *bytes)
{
	struct dist_domain d;
	ck_assert_int_eq(dist_domain_init(&d, st->n, P), 0);
	ck_assert_int_eq(dist_domain_cut(&d, st->pos, NULL), 0);
	struct let_dom *D = calloc((size_t)P, sizeof *D);
	void **buf = calloc((size_t)P * (size_t)P, sizeof *buf);
	size_t *nb = calloc((size_t)P * (size_t)P, sizeof *nb);
	ck_assert(D && buf && nb);
	/* over ranks, every tree over the one cube round every body (as
	 * dist/let_force.c does); one domain: its own box (the one tree's) */
	double cube[6];
	cube_of(st, cube);
	for (int r = 0; r < P; r++)
		let_dom_build(&D[r], st, &d, r, P, active, cube);
	*bytes = 0;
	for (int r = 0; r < P; r++) /* r's export to q */
		for (int q = 0; q < P; q++)
			if (q != r) {
				ck_assert_int_eq(gpu_let_export(D[r].g, D[q].box, D[q].nbox,
								&buf[r * P + q], &nb[r * P + q]),
						 0);
				struct sim_glet_view v;
				ck_assert_int_eq(sim_glet_check(buf[r * P + q], nb[r * P + q], "export", &v), 0);
				*bytes += nb[r * P + q];
			}
	for (int q = 0; q < P; q++) {
		const void *in[16];
		size_t inb[16];
		int k = 0;
		for (int r = 0; r < P; r++)
			if (r != q)
				in[k] = buf[r * P + q], inb[k++] = nb[r * P + q];
		ck_assert_int_eq(gpu_let_accel(D[q].g, in, inb, k, active ? D[q].act : NULL, D[q].a,
					       D[q].ph),
				 0);
		for (size_t j = 0; j < D[q].m; j++) {
			const size_t i = d.order[d.cut[q] + j];
			memcpy(acc + 3 * i, D[q].a + 3 * j, 3 * sizeof(double));
			pot[i] = D[q].ph[j];
		}
	}
	for (int r = 0; r < P; r++) {
		gpu_let_free(&D[r].g);
		free(D[r].pos), free(D[r].mass), free(D[r].a), free(D[r].ph), free(D[r].act);
	}
	for (int k = 0; k < P * P; k++)
		free(buf[k]);
	free(D), free(buf), free(nb);
	dist_domain_free(&d);
}

/* One domain is the one GPU tree bit for bit (no received tree); 2 and 3
 * domains give the direct sum's forces within the one tree's own error
 * (the cells differ: each domain's tree is over its own bodies). */
/* The cases' sphere: n Plummer bodies, their direct sums (ad, pd) and one
 * GPU tree's forces (at, pt), and room for a case's (al, pl); all
 * malloc'd, freed by let_sphere_free. */
struct let_sphere {
	struct sim_state st;
	double *ad, *pd, *at, *pt, *al, *pl;
};

static void let_sphere_make(struct let_sphere *S, size_t n)
{
	memset(S, 0, sizeof *S);
	ck_assert_int_eq(sim_state_alloc(&S->st, n, 1), 0);
	sim_ic_plummer(&S->st, 0, n, 1.0, 1.0, 20.0, 31, 0);
	S->ad = malloc(3 * n * sizeof *S->ad), S->pd = malloc(n * sizeof *S->pd);
	S->at = malloc(3 * n * sizeof *S->at), S->pt = malloc(n * sizeof *S->pt);
	S->al = malloc(3 * n * sizeof *S->al), S->pl = malloc(n * sizeof *S->pl);
	ck_assert(S->ad && S->pd && S->at && S->pt && S->al && S->pl);
	ck_assert_int_eq(sim_direct_accel(S->st.pos, S->st.mass, n, 0.05, S->ad, S->pd), 0);
	ck_assert_int_eq(gpu_tree_accel(S->st.pos, S->st.mass, n, 0.05, 0.5, 2, S->at, S->pt), 0);
}

static void let_sphere_free(struct let_sphere *S)
{
	free(S->ad), free(S->pd), free(S->at), free(S->pt), free(S->al), free(S->pl);
	sim_state_free(&S->st);
}

START_TEST(gpu_let_domains_match_one_tree_and_direct)
{
	const size_t n = 200000;
	struct let_sphere S;
	let_sphere_make(&S, n);
	const struct sim_state st = S.st;
	double *ad = S.ad, *pd = S.pd, *at = S.at, *al = S.al, *pl = S.pl;
	double tmed, t99;
	rel_err(at, ad, n, &tmed, &t99);
	size_t bytes = 0;
	let_domains(&st, 1, NULL, al, pl, &bytes);
	for (size_t i = 0; i < 3 * n; i++)
		ck_assert_msg(al[i] == at[i], "one domain: acc[%zu] %.9g, the one tree's %.9g", i, al[i],
			      at[i]);
	for (int P = 2; P <= 3; P++) {
		let_domains(&st, P, NULL, al, pl, &bytes);
		double med, p99, pmax = 0;
		rel_err(al, ad, n, &med, &p99);
		for (size_t i = 0; i < n; i++)
			pmax = fmax(pmax, fabs(pl[i] - pd[i]) / fabs(pd[i]));
		printf("gpu let, %zu bodies, %d domains: median error %.3g (one tree %.3g), 99th %.3g "
		       "(%.3g), potential worst %.3g, exports %.2f MB (%.1f B a body)\n",
		       n, P, med, tmed, p99, t99, pmax, bytes / 1e6, (double)bytes / (double)n);
		ck_assert_msg(med < 1.5 * tmed && p99 < 1.5 * t99,
			      "%d domains: median %.3g, 99th %.3g against the one tree's %.3g, %.3g", P,
			      med, p99, tmed, t99);
		ck_assert_msg(pmax < 1e-3, "%d domains: potential off by %.3g", P, pmax);
	}
	let_sphere_free(&S);
}
END_TEST

/* Individual time steps: only the bodies asked for are walked (a body of
 * level >= la; here every 7th body, and a clump near the centre where
 * whole walk groups are active), each within the one tree's error of the
 * direct sum on 1 to 3 domains, and no other body's result is written
 * (their arrays stay NaN). The own tree packs the active bodies into walk
 * groups of their own (tree_stage_walk), the received ones keep the
 * groups and skip their inactive bodies. */
START_TEST(gpu_let_walks_only_the_active_bodies)
{
	const size_t n = 200000;
	struct let_sphere S;
	let_sphere_make(&S, n);
	const struct sim_state st = S.st;
	const double *ad = S.ad, *at = S.at;
	double *al = S.al, *pl = S.pl;
	double *sa = malloc(3 * n * sizeof *sa), *sd = malloc(3 * n * sizeof *sd);
	unsigned char *active = malloc(n);
	ck_assert(sa && sd && active);
	size_t nact = 0;
	for (size_t i = 0; i < n; i++) {
		const double *x = st.pos + 3 * i;
		active[i] = i % 7 == 0 || x[0] * x[0] + x[1] * x[1] + x[2] * x[2] < 0.01;
		nact += active[i];
	}
	for (int P = 1; P <= 3; P++) {
		size_t bytes = 0, k = 0;
		let_domains(&st, P, active, al, pl, &bytes);
		for (size_t i = 0; i < n; i++) {
			if (!active[i]) {
				ck_assert_msg(isnan(al[3 * i]) && isnan(pl[i]),
					      "%d domains: inactive body %zu was written", P, i);
				continue;
			}
			ck_assert_msg(isfinite(al[3 * i]) && isfinite(pl[i]),
				      "%d domains: active body %zu not walked", P, i);
			memcpy(sa + 3 * k, al + 3 * i, 3 * sizeof *sa);
			memcpy(sd + 3 * k, ad + 3 * i, 3 * sizeof *sd);
			k++;
		}
		double med, p99, tmed, t99;
		rel_err(sa, sd, k, &med, &p99);
		for (size_t j = 0, i = 0; i < n; i++) /* the one tree's on the same bodies */
			if (active[i])
				memcpy(sa + 3 * j++, at + 3 * i, 3 * sizeof *sa);
		rel_err(sa, sd, k, &tmed, &t99);
		printf("gpu let, %zu of %zu bodies active, %d domains: median error %.3g (one tree "
		       "%.3g), 99th %.3g (%.3g)\n", nact, n, P, med, tmed, p99, t99);
		ck_assert_msg(med < 1.5 * tmed && p99 < 1.5 * t99,
			      "%d domains, active bodies: median %.3g, 99th %.3g against the one "
			      "tree's %.3g, %.3g", P, med, p99, tmed, t99);
	}
	free(sa), free(sd), free(active);
	let_sphere_free(&S);
}
END_TEST

/* A received buffer of another walk, or one that does not check out, is
 * refused (NB_EINPUT) and nothing is walked. */
START_TEST(gpu_let_refuses_foreign_buffers)
{
	const size_t n = 20000;
	struct sim_state st = {0};
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	sim_ic_plummer(&st, 0, n, 1.0, 1.0, 20.0, 7, 0);
	struct gpu_let *a = NULL, *b = NULL;
	struct sim_params other = let_params;
	other.theta = 0.6;
	ck_assert_int_eq(gpu_let_create(&let_params, &a), 0);
	ck_assert_int_eq(gpu_let_create(&other, &b), 0);
	ck_assert_int_eq(gpu_let_build(a, st.pos, st.mass, n / 2, NULL, NULL), 0);
	ck_assert_int_eq(gpu_let_build(b, st.pos + 3 * (n / 2), st.mass + n / 2, n / 2, NULL, NULL), 0);
	double box[6 * 64];
	int nbox = 0;
	ck_assert_int_eq(gpu_let_cover(a, 32, box, &nbox), 0);
	void *buf = NULL;
	size_t nbytes = 0;
	ck_assert_int_eq(gpu_let_export(b, box, nbox, &buf, &nbytes), 0);
	double *acc = malloc(3 * n * sizeof *acc);
	const void *in[1] = {buf};
	ck_assert_int_eq(gpu_let_accel(a, in, &nbytes, 1, NULL, acc, NULL), NB_EINPUT);
	size_t cut = nbytes - 16;
	ck_assert_int_eq(gpu_let_accel(a, in, &cut, 1, NULL, acc, NULL), NB_EINPUT);
	free(buf);
	free(acc);
	gpu_let_free(&a);
	gpu_let_free(&b);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_let");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, gpu_let_domains_match_one_tree_and_direct);
	tcase_add_test(tc, gpu_let_walks_only_the_active_bodies);
	tcase_add_test(tc, gpu_let_refuses_foreign_buffers);
	NB_GPU_TCASE(s, tc);
	return s;
}

#else /* CPU-only build */

static Suite *make_suite(void)
{
	nb_gpu_skip_all("gpu_let");
	return suite_create("gpu_let");
}
#endif

NB_CHECK_MAIN(make_suite)
