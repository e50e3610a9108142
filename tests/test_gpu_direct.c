/* test_gpu_direct.c - the GPU direct solver (sim/cuda/direct.cu, sim.cu)
 * against double-precision references on the CPU.
 *
 * Without a usable GPU the GPU cases are not run nor counted: the program
 * prints "SKIP: <why>" (NB_GPU_TCASE) and checks only that the probe says why.
 * NB_GPU_SANITIZE=1 (tests/gpu_sanitize.sh) keeps only small cases, which
 * compute-sanitizer can get through in seconds.
 *
 * The references get the same float-rounded positions and masses the GPU
 * computes with, so the comparison measures the kernels' arithmetic, not the
 * float storage of the state (that costs ~6e-8 |x| / r relative per pair). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "twin.h"
#include "../sim/cuda/gpu.h"
#include "../sim/sim.h"

static int sanitize_mode(void)
{
	const char *s = getenv("NB_GPU_SANITIZE");
	return s && *s && *s != '0';
}

/* Plummer-like cloud (scale 1, cut at r = 20) with every 37th body put a
 * hair (1e-3 eps) from its predecessor, as float-representable doubles. */
static void make_scene(size_t n, double eps, uint64_t seed, double *pos, double *mass)
{
	for (size_t i = 0; i < n; i++) {
		double u = sim_rng_uniform(seed, i, 0);
		double r = 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1.0);
		if (r > 20.0)
			r = 20.0 * sim_rng_uniform(seed, i, 4);
		double cz = 2.0 * sim_rng_uniform(seed, i, 1) - 1.0;
		double ph = 2.0 * M_PI * sim_rng_uniform(seed, i, 2);
		double sz = sqrt(1.0 - cz * cz);
		pos[3 * i] = r * sz * cos(ph);
		pos[3 * i + 1] = r * sz * sin(ph);
		pos[3 * i + 2] = r * cz;
		if (i % 37 == 36) {
			pos[3 * i] = pos[3 * i - 3] + 1e-3 * eps;
			pos[3 * i + 1] = pos[3 * i - 2];
			pos[3 * i + 2] = pos[3 * i - 1] - 1e-3 * eps;
		}
		mass[i] = (0.5 + sim_rng_uniform(seed, i, 3)) / (double)n;
	}
	for (size_t i = 0; i < 3 * n; i++)
		pos[i] = (float)pos[i];
	for (size_t i = 0; i < n; i++)
		mass[i] = (float)mass[i];
}

static const char *kname(enum scene_direct_kernel k)
{
	return k == SCENE_DIRECT_PAIRWISE ? "pairwise" : k == SCENE_DIRECT_GATHER ? "gather" : "auto";
}

/* Every value: |gpu - cpu| <= 1e-6 max|cpu| + 1e-5 |cpu|. */
#define TOL_DIRECT ((struct twin_tol){0, 1e-6, 1e-5, 0, 0})

/* A direct-solver case: make_scene(n, scene_eps, seed), softening eps,
 * one kernel and tile shape ("" = default); with_pot: the potential too;
 * close_pair: bodies 0 and 1 put 1e-14 apart. */
struct direct_arg {
	size_t n;
	double eps;
	enum scene_direct_kernel kernel;
	const char *tile;
	int with_pot;
	double scene_eps;
	uint64_t seed;
	int close_pair;
};

struct dfix {
	double *pos, *mass, *ag, *ac, *pg, *pc;
};

static void direct_setup(struct twin_run *r)
{
	const struct direct_arg *a = r->arg;
	struct dfix *f = calloc(1, sizeof *f);
	ck_assert_ptr_nonnull(f);
	const size_t n = a->n;
	f->pos = malloc(3 * n * sizeof *f->pos), f->mass = malloc(n * sizeof *f->mass);
	f->ag = malloc(3 * n * sizeof *f->ag), f->ac = malloc(3 * n * sizeof *f->ac);
	f->pg = malloc(n * sizeof *f->pg), f->pc = malloc(n * sizeof *f->pc);
	ck_assert(f->pos && f->mass && f->ag && f->ac && f->pg && f->pc);
	make_scene(n, a->scene_eps, a->seed, f->pos, f->mass);
	if (a->close_pair) {
		f->pos[0] = 1e-14, f->pos[1] = 0, f->pos[2] = 0;
		f->pos[3] = 2e-14, f->pos[4] = 1e-15, f->pos[5] = 0;
		for (int k = 0; k < 6; k++)
			f->pos[k] = (float)f->pos[k];
	}
	r->fix = f;
	snprintf(r->what, sizeof r->what, "n=%zu %s tile '%s'", n, kname(a->kernel), a->tile);
}

static void direct_teardown(struct twin_run *r)
{
	struct dfix *f = r->fix;
	free(f->pos), free(f->mass), free(f->ag), free(f->ac), free(f->pg), free(f->pc);
	free(f);
}

/* Outputs: 0 accelerations, 1 potentials (with_pot), 2 the accelerations
 * of all but the close pair (close_pair: on their own scale). */
static void direct_outputs(struct twin_run *r)
{
	const struct direct_arg *a = r->arg;
	struct dfix *f = r->fix;
	twin_out(r, 0, "acceleration");
	r->out[0].ref = twin_f64(f->ac, 3 * a->n, 0, 3);
	r->out[0].got = twin_f64(f->ag, 3 * a->n, 0, 3);
	if (a->with_pot) {
		twin_out(r, 1, "potential");
		r->out[1].ref = twin_f64(f->pc, a->n, 0, 1);
		r->out[1].got = twin_f64(f->pg, a->n, 0, 1);
	}
	if (a->close_pair) {
		twin_out(r, 2, "far-body acceleration");
		r->out[2].ref = twin_f64(f->ac + 6, 3 * (a->n - 2), 0, 3);
		r->out[2].got = twin_f64(f->ag + 6, 3 * (a->n - 2), 0, 3);
	}
}

/* The reference: sim_direct_accel on the same float-rounded inputs. */
static void direct_cpu(struct twin_run *r)
{
	const struct direct_arg *a = r->arg;
	struct dfix *f = r->fix;
	ck_assert_int_eq(sim_direct_accel(f->pos, f->mass, a->n, (float)a->eps, f->ac, f->pc), 0);
}

static void direct_gpu(struct twin_run *r)
{
	const struct direct_arg *a = r->arg;
	struct dfix *f = r->fix;
	if (*a->tile)
		setenv("NB_DIRECT_TILE", a->tile, 1);
	else
		unsetenv("NB_DIRECT_TILE");
	ck_assert_int_eq(gpu_direct_accel(f->pos, f->mass, a->n, a->eps, a->kernel, f->ag,
					  a->with_pot ? f->pg : NULL),
			 0);
	unsetenv("NB_DIRECT_TILE");
	direct_outputs(r);
}

/* Every GPU acceleration finite (the close pair's too), then the outputs
 * within the tolerance. */
static void direct_compare(struct twin_run *r)
{
	const struct direct_arg *a = r->arg;
	struct dfix *f = r->fix;
	for (size_t k = 0; k < 3 * a->n; k++)
		ck_assert_msg(isfinite(f->ag[k]), "%s: a[%zu] = %g", r->what, k, f->ag[k]);
	twin_compare_all(r);
}

static const struct twin_row direct_row = {
	"direct", direct_setup, direct_cpu, direct_gpu, direct_compare, direct_teardown, TOL_DIRECT, 1};

START_TEST(gpu_accel_matches_cpu_reference)
{
	static const size_t ns[] = {1, 2, 3, 127, 1000, 4097};
	const size_t nn = sanitize_mode() ? 5 : 6;
	struct direct_arg cases[6 * 4];
	size_t nc = 0;
	for (size_t a = 0; a < nn; a++) {
		const struct direct_arg base = {ns[a], 0.01, SCENE_DIRECT_PAIRWISE, "", 1, 0.01, 1000 + ns[a], 0};
		cases[nc] = base, nc++;
		cases[nc] = base, cases[nc].with_pot = 0, nc++;
		cases[nc] = base, cases[nc].kernel = SCENE_DIRECT_GATHER, nc++;
		cases[nc] = base, cases[nc].kernel = SCENE_DIRECT_AUTO, cases[nc].with_pot = 0, nc++;
	}
	twin_run_cases(&direct_row, cases, sizeof cases[0], nc);
}
END_TEST

/* Every compiled tile shape, diagonal and off-diagonal tiles, ragged n. */
START_TEST(gpu_every_tile_shape_matches)
{
	static const char *pair[] = {"128x8x4", "128x4", "64x4", "128x8x3", "256x4", "256x2"};
	static const char *gath[] = {"256x1", "128x4", "64x1"};
	const size_t n = sanitize_mode() ? 1500 : 2500; /* > one 1024 tile */
	struct direct_arg cases[2 * 6 + 3];
	size_t nc = 0;
	for (size_t k = 0; k < sizeof pair / sizeof pair[0]; k++) {
		const struct direct_arg base = {n, 0.01, SCENE_DIRECT_PAIRWISE, pair[k], 1, 0.01, 1000 + n, 0};
		cases[nc] = base, nc++;
		cases[nc] = base, cases[nc].with_pot = 0, nc++;
	}
	for (size_t k = 0; k < sizeof gath / sizeof gath[0]; k++)
		cases[nc++] = (struct direct_arg){n, 0.01, SCENE_DIRECT_GATHER, gath[k], 1, 0.01, 1000 + n, 0};
	twin_run_cases(&direct_row, cases, sizeof cases[0], nc);
}
END_TEST

/* eps = 1e-15 with a pair 1e-14 apart: unscaled float would form
 * 1/(r^2+eps^2)^{3/2} ~ 1e42 = inf. The range reduction must keep it finite
 * and right, while bodies at distance ~1 (r/eps = 1e15) still feel force. */
static const struct direct_arg close_pair_cases[] = {
	{64, 1e-15, SCENE_DIRECT_PAIRWISE, "", 1, 1.0, 77, 1},
	{64, 1e-15, SCENE_DIRECT_GATHER, "", 1, 1.0, 77, 1},
};
TWIN_TEST(gpu_close_pair_tiny_softening, &direct_row, close_pair_cases)

/* Newton's third law: sum m a = 0 up to float round-off. */
START_TEST(gpu_momentum_at_round_off)
{
	const size_t n = sanitize_mode() ? 1000 : 4097;
	double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
	double *a = malloc(3 * n * sizeof *a);
	ck_assert(pos && mass && a);
	make_scene(n, 0.01, 5, pos, mass);
	const enum scene_direct_kernel ks[] = {SCENE_DIRECT_PAIRWISE, SCENE_DIRECT_GATHER};
	for (int q = 0; q < 2; q++) {
		ck_assert_int_eq(gpu_direct_accel(pos, mass, n, 0.01, ks[q], a, NULL), 0);
		double p[3] = {0, 0, 0}, scale = 0.0;
		for (size_t i = 0; i < n; i++)
			for (int c = 0; c < 3; c++) {
				p[c] += mass[i] * a[3 * i + c];
				scale += mass[i] * fabs(a[3 * i + c]);
			}
		for (int c = 0; c < 3; c++)
			ck_assert_msg(fabs(p[c]) <= 1e-5 * scale, "%s: sum m a_%d = %g, sum m|a| = %g",
				      kname(ks[q]), c, p[c], scale);
	}
	free(pos), free(mass), free(a);
}
END_TEST

/* n = 65536: sim_direct_accel would take seconds here, so 256 bodies
 * (body (s 7919 + 13) mod n for s < 256) are checked against a plain O(n k)
 * double loop, the reference of both views (kernels pairwise, gather). */
#define LARGE_N 65536
#define LARGE_K 256

struct large_fix {
	double *pos, *mass, *ag, *pg;
	double ar[3 * LARGE_K], pr[LARGE_K], as[3 * LARGE_K], ps[LARGE_K];
};

static size_t large_body(size_t s)
{
	return (s * 7919 + 13) % LARGE_N;
}

static void large_setup(struct twin_run *r)
{
	const size_t n = LARGE_N;
	const double eps = 0.01, e2 = (double)(float)eps * (double)(float)eps;
	struct large_fix *f = calloc(1, sizeof *f);
	ck_assert_ptr_nonnull(f);
	r->fix = f;
	f->pos = malloc(3 * n * sizeof *f->pos), f->mass = malloc(n * sizeof *f->mass);
	f->ag = malloc(3 * n * sizeof *f->ag), f->pg = malloc(n * sizeof *f->pg);
	ck_assert(f->pos && f->mass && f->ag && f->pg);
	make_scene(n, eps, 65536, f->pos, f->mass);
	const double *pos = f->pos, *mass = f->mass;
	for (size_t s = 0; s < LARGE_K; s++) {
		const size_t i = large_body(s);
		double ax = 0, ay = 0, az = 0, ph = 0;
		for (size_t j = 0; j < n; j++) {
			if (j == i)
				continue;
			double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1];
			double dz = pos[3 * j + 2] - pos[3 * i + 2];
			double r2 = dx * dx + dy * dy + dz * dz + e2, inv = 1.0 / sqrt(r2);
			double g = mass[j] * inv * inv * inv;
			ax += g * dx, ay += g * dy, az += g * dz, ph -= mass[j] * inv;
		}
		f->ar[3 * s] = ax, f->ar[3 * s + 1] = ay, f->ar[3 * s + 2] = az, f->pr[s] = ph;
	}
}

static void large_teardown(struct twin_run *r)
{
	struct large_fix *f = r->fix;
	free(f->pos), free(f->mass), free(f->ag), free(f->pg);
	free(f);
}

static const enum scene_direct_kernel large_kernels[2] = {SCENE_DIRECT_PAIRWISE, SCENE_DIRECT_GATHER};

/* The view's kernel on all n bodies; the 256 picked out. */
static void large_gpu(struct twin_run *r)
{
	struct large_fix *f = r->fix;
	const enum scene_direct_kernel k = large_kernels[r->view];
	ck_assert_int_eq(gpu_direct_accel(f->pos, f->mass, LARGE_N, 0.01, k, f->ag, f->pg), 0);
	for (size_t s = 0; s < LARGE_K; s++) {
		const size_t i = large_body(s);
		for (int c = 0; c < 3; c++)
			f->as[3 * s + c] = f->ag[3 * i + c];
		f->ps[s] = f->pg[i];
	}
	snprintf(r->what, sizeof r->what, "n=65536 %s, 256 bodies", kname(k));
	twin_out(r, 0, "acceleration");
	r->out[0].ref = twin_f64(f->ar, 3 * LARGE_K, 0, 3);
	r->out[0].got = twin_f64(f->as, 3 * LARGE_K, 0, 3);
	twin_out(r, 1, "potential");
	r->out[1].ref = twin_f64(f->pr, LARGE_K, 0, 1);
	r->out[1].got = twin_f64(f->ps, LARGE_K, 0, 1);
}

static const struct twin_row large_row = {
	"large n", large_setup, NULL, large_gpu, NULL, large_teardown, TOL_DIRECT, 2};
TWIN_TEST(gpu_large_n_subset_matches_double_loop, &large_row, twin_one)

static double energy(const struct sim_state *st)
{
	double e = 0.0;
	for (size_t i = 0; i < st->n; i++) {
		const double *v = st->vel + 3 * i;
		e += 0.5 * st->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		e += 0.5 * st->mass[i] * st->pot[i];
	}
	return e;
}

/* The Plummer test scene over its whole clip (frames x steps_per_frame),
 * leapfrog on the GPU: |dE/E| <= 1e-3, as on the CPU. */
START_TEST(gpu_plummer_scene_keeps_energy)
{
	struct scene sc;
	struct sim_units u;
	ck_assert_int_eq(scene_load("tests/data/plummer-small.yaml", NULL, 0, &sc), 0);
	scene_units_of(sc.units, &u);
	const int steps = sc.output.frames * sc.simulation.steps_per_frame;
	const enum scene_direct_kernel ks[] = {SCENE_DIRECT_PAIRWISE, SCENE_DIRECT_GATHER};
	for (int q = 0; q < 2; q++) {
		struct sim_state st;
		memset(&st, 0, sizeof st);
		ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
		struct sim_params p = {
			.solver = SCENE_SOLVER_DIRECT,
			.direct_kernel = ks[q],
			.softening = sc.simulation.softening * u.length,
			.dt = sc.simulation.dt * u.time,
			.theta = sc.simulation.theta,
			.multipoles = sc.simulation.multipoles,
		};
		struct gpu_sim *g = NULL;
		ck_assert_int_eq(gpu_sim_create(&st, &p, &g), 0);
		ck_assert_int_eq(gpu_sim_download(g, &st), 0);
		const double e0 = energy(&st);
		ck_assert_int_eq(gpu_sim_advance(g, steps, 1), 0);
		ck_assert_int_eq(gpu_sim_download(g, &st), 0);
		const double e1 = energy(&st);
		printf("gpu %s: %d steps of %zu bodies, E %.9g -> %.9g (dE/E %.2e)\n", kname(ks[q]), steps,
		       st.n, e0, e1, (e1 - e0) / fabs(e0));
		ck_assert_msg(e0 < 0, "a bound cluster has E < 0, got %g", e0);
		ck_assert_msg(fabs(e1 - e0) <= 1e-3 * fabs(e0), "%s: E %g -> %g", kname(ks[q]), e0, e1);
		for (size_t i = 0; i < st.n; i++)
			ck_assert_uint_eq(st.id[i], i); /* download kept creation order */
		gpu_sim_free(&g);
		ck_assert_ptr_null(g);
		sim_state_free(&st);
	}
}
END_TEST

/* A scene too large for the card is refused before anything is read or
 * allocated, naming the bytes. */
START_TEST(gpu_too_large_scene_is_input_error)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	/* Twice the bodies whose 52 bytes each fill the card's free memory
	 * (an H100: ~3e9, an H200: ~5e9), so the refusal holds on any card. */
	size_t free_b = 0, total_b = 0;
	ck_assert_int_eq(gpu_device_info(NULL, 0, &free_b, &total_b), 0);
	st.n = 2 * (total_b / 52 + 1);
	struct sim_params p = {.solver = SCENE_SOLVER_DIRECT, .softening = 0.01, .dt = 0.001};
	ck_assert_uint_ge(gpu_sim_bytes_needed(st.n, &p), (size_t)52 * st.n);
	struct gpu_sim *g = (struct gpu_sim *)&st; /* must be overwritten with NULL */
	ck_assert_int_eq(gpu_sim_create(&st, &p, &g), NB_EINPUT);
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(gpu_absent_says_why)
{
	char why[256] = "";
	ck_assert_int_eq(gpu_probe(why, sizeof why), 0);
	ck_assert_msg(strlen(why) > 0, "gpu_probe gave no reason");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_direct");
	/* Run the GPU cases in this process: one CUDA context for all of them. */
	setenv("CK_FORK", "no", 1);
	if (!nb_gpu_usable(NULL, 0)) {
		TCase *cpu = tcase_create("no_gpu");
		tcase_add_test(cpu, gpu_absent_says_why);
		suite_add_tcase(s, cpu);
	}
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, gpu_accel_matches_cpu_reference);
	tcase_add_test(tc, gpu_every_tile_shape_matches);
	tcase_add_test(tc, gpu_close_pair_tiny_softening);
	tcase_add_test(tc, gpu_momentum_at_round_off);
	if (!sanitize_mode()) { /* compute-sanitizer runs only the small cases */
		tcase_add_test(tc, gpu_large_n_subset_matches_double_loop);
		tcase_add_test(tc, gpu_plummer_scene_keeps_energy);
	}
	tcase_add_test(tc, gpu_too_large_scene_is_input_error);
	NB_GPU_TCASE(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
