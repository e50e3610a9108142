/* test_film.c - film mode (simulation.solver: none, bodies.*.snapshots;
 * sim/snap_series.c, engine film mode, docs/snapshots.md "Filming a
 * snapshot series"). The test writes its own GADGET binary format 1 files
 * (8-byte values, native order) with a small writer below.
 *
 *  - an exact Keplerian two-body orbit (G = 1, m = 0.5 + 0.5, a = 1,
 *    e = 0.5), sampled at 20 snapshots over one period, is reconstructed
 *    between them within the cubic Hermite remainder bound
 *    |x - p| <= h^4 / 384 max|x''''| (per component; max|x''''| measured on
 *    the exact solution by a 5-point difference), and exactly at them;
 *  - bodies are matched by ParticleID when files list them in other orders;
 *  - a body absent from one file fades: its mass (light) is scaled by s;
 *  - no forces: the engine's force counter stays 0 over a film, while the
 *    direct solver counts them; the program's log says film mode;
 *  - a series with a missing number: exit 2, the message names the file.
 *
 * Run: make CUDA_ARCH=sm_90 build/tests/test_film && build/tests/test_film */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* the util header's other helpers */
#include "test_output_util.h"
#pragma GCC diagnostic pop
#include "engine/engine.h"
#include "sim/sim.h"

static char tmpdir[64];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-film-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- GADGET binary format 1, doubles, one particle type (2: disk) ---- */
static void rec(FILE *f, const void *p, uint32_t len)
{
	fwrite(&len, 4, 1, f);
	fwrite(p, 1, len, f);
	fwrite(&len, 4, 1, f);
}

static void write_g1(const char *name, double time, int n, const uint32_t *id, const double *x,
		     const double *v, double mass)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	unsigned char h[256] = {0};
	int32_t np[6] = {0, 0, n, 0, 0, 0};
	double mt[6] = {0, 0, mass, 0, 0, 0};
	int32_t one = 1;
	memcpy(h, np, 24);
	memcpy(h + 24, mt, 48);
	memcpy(h + 72, &time, 8);     /* Time; Redshift (h + 80) 0 */
	memcpy(h + 96, np, 24);       /* NumPart_Total */
	memcpy(h + 124, &one, 4);     /* NumFilesPerSnapshot */
	rec(f, h, 256);
	rec(f, x, (uint32_t)(24 * n));
	rec(f, v, (uint32_t)(24 * n));
	rec(f, id, (uint32_t)(4 * n));
	fclose(f);
}

static void write_scene_f(const char *name, const char *file, const char *pattern, int frames)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f,
		"units: nbody\n"
		"simulation: {solver: none}\n"
		"bodies:\n"
		"  - {name: k, model: snapshot, file: %s, snapshots: \"%s\",\n"
		"     types: {disk: {brightness: 1}}}\n"
		"camera: {keys: [{frame: 0, position: [0, -6, 2], target: [0, 0, 0]}]}\n"
		"render: {width: 32, height: 32}\n"
		"output: {frames: %d, png_dir: png, stats: stats.csv}\n",
		file, pattern, frames);
	fclose(f);
}

static void write_scene(const char *name, const char *pattern, int frames)
{
	write_scene_f(name, "snap_000.g1", pattern, frames);
}

static void load_scene(const char *name, struct scene *sc)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	ck_assert_int_eq(scene_load(path, NULL, 0, sc), 0);
}

/* ---- the exact Kepler orbit: relative vector r = x2 - x1, G M = 1 ---- */
#define KA 1.0
#define KE 0.5

static void kepler_rel(double t, double r[3], double v[3])
{
	double M = t, E = M; /* n = sqrt(GM / a^3) = 1, pericentre at t = 0 */
	for (int i = 0; i < 100; i++)
		E -= (E - KE * sin(E) - M) / (1 - KE * cos(E));
	const double q = sqrt(1 - KE * KE), d = 1 - KE * cos(E);
	r[0] = KA * (cos(E) - KE), r[1] = KA * q * sin(E), r[2] = 0;
	v[0] = -KA * sin(E) / d, v[1] = KA * q * cos(E) / d, v[2] = 0;
}

/* bodies 0 (ID 1001) and 1 (ID 2002), mass 0.5 each: x1 = -r/2, x2 = r/2 */
static void kepler_body(double t, int b, double x[3], double v[3])
{
	double r[3], w[3];
	kepler_rel(t, r, w);
	const double s = b == 0 ? -0.5 : 0.5;
	for (int c = 0; c < 3; c++)
		x[c] = s * r[c], v[c] = s * w[c];
}

#define NSNAP 20
static const double PERIOD = 6.283185307179586;

/* 20 files over one period; odd files list the bodies in the other order */
static void write_kepler(void)
{
	for (int i = 0; i < NSNAP; i++) {
		const double t = i * PERIOD / (NSNAP - 1);
		double x[6], v[6];
		uint32_t id[2];
		for (int k = 0; k < 2; k++) {
			const int b = i % 2 ? 1 - k : k;
			id[k] = b == 0 ? 1001 : 2002;
			kepler_body(t, b, x + 3 * k, v + 3 * k);
		}
		char name[32];
		snprintf(name, sizeof name, "snap_%03d.g1", i);
		write_g1(name, t, 2, id, x, v, 0.5);
	}
}

START_TEST(kepler_orbit_within_hermite_bound)
{
	write_kepler();
	write_scene("s.yaml", "snap_%03d.g1", 10);
	static struct scene sc;
	load_scene("s.yaml", &sc);
	struct sim_units u;
	scene_units_of(sc.units, &u);
	struct sim_state st = {0};
	struct sim_snap_series *s = NULL;
	ck_assert_int_eq(sim_snap_series_open(&sc, 0, &u, &st, &s), 0);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_int_eq(sim_snap_series_count(s), NSNAP);
	ck_assert_close(sim_snap_series_t1(s), PERIOD, 1e-12, 0);
	/* max |x''''| over the orbit, per body component (the same for both
	 * bodies up to sign): 5-point central difference of the exact orbit */
	const double dl = 1e-2;
	double d4max = 0;
	for (double t = 0; t <= PERIOD; t += 1e-3) {
		double xs[5][3], w[3];
		for (int j = 0; j < 5; j++)
			kepler_body(t + (j - 2) * dl, 1, xs[j], w);
		for (int c = 0; c < 2; c++) {
			double d4 = (xs[0][c] - 4 * xs[1][c] + 6 * xs[2][c] - 4 * xs[3][c] + xs[4][c]) /
				    (dl * dl * dl * dl);
			d4max = fmax(d4max, fabs(d4));
		}
	}
	const double h = PERIOD / (NSNAP - 1);
	const double bound = 1.02 * pow(h, 4) / 384 * d4max + 1e-12;
	double worst = 0, worst_mid = 0;
	for (int q = 0; q <= 40 * (NSNAP - 1); q++) {
		const double t = q * PERIOD / (40 * (NSNAP - 1));
		ck_assert_int_eq(sim_snap_series_at(s, t, &st), 0);
		ck_assert_close(st.time, t, 1e-12, 0);
		for (int b = 0; b < 2; b++) {
			double x[3], v[3];
			kepler_body(t, b, x, v);
			/* the union is in ID order: 1001 is body 0 */
			for (int c = 0; c < 3; c++) {
				const double err = fabs(st.pos[3 * b + c] - x[c]);
				worst = fmax(worst, err);
				if (q % 40 == 0) /* at a snapshot: the file's value */
					ck_assert_msg(err <= 1e-12, "t = %g body %d: error %g at a snapshot", t,
						      b, err);
				else if (q % 40 == 20)
					worst_mid = fmax(worst_mid, err);
			}
			ck_assert_close(st.mass[b], 0.5, 1e-15, 0);
		}
	}
	fprintf(stderr,
		"kepler (a = 1, e = 0.5, 20 snapshots, h = %.4f): max |x''''| = %.3g, Hermite bound "
		"%.3g, worst error %.3g (mid-interval %.3g)\n",
		h, d4max, bound, worst, worst_mid);
	ck_assert_msg(worst <= bound, "worst error %g > Hermite bound %g", worst, bound);
	ck_assert_msg(worst_mid > 0, "the orbit was not interpolated between snapshots");
	ck_assert_msg(worst < 2e-2, "worst error %g: not a useful reconstruction", worst);
	sim_snap_series_free(&s);
	sim_state_free(&st);

}
END_TEST

/* Three files; ID 7 is missing from file 1; files list IDs in different orders. */
static void write_fade(void)
{
	const double m = 2.0;
	double x0[9] = {0, 0, 0, 1, 0, 0, 5, 0, 0}, v[9] = {0};
	uint32_t id0[3] = {3, 5, 7};
	write_g1("f_000.g1", 0.0, 3, id0, x0, v, m);
	double x1[6] = {0, 0, 0, 1, 0, 0}; /* ID 5 at 0, ID 3 at 1 */
	uint32_t id1[2] = {5, 3};
	write_g1("f_001.g1", 1.0, 2, id1, x1, v, m);
	double x2[9] = {5, 0, 0, 1, 0, 0, 0, 0, 0};
	uint32_t id2[3] = {7, 5, 3};
	write_g1("f_002.g1", 2.0, 3, id2, x2, v, m);
}

START_TEST(ids_matched_and_bodies_fade)
{
	write_fade();
	write_scene_f("f.yaml", "f_000.g1", "f_%03d.g1", 5);
	static struct scene sc;
	load_scene("f.yaml", &sc);
	struct sim_units u;
	scene_units_of(sc.units, &u);
	struct sim_state st = {0};
	struct sim_snap_series *s = NULL;
	ck_assert_int_eq(sim_snap_series_open(&sc, 0, &u, &st, &s), 0);
	ck_assert_uint_eq(st.n, 3); /* IDs 3, 5, 7 in that order */
	/* at the files' times each ID is where its file put it, whatever the order */
	ck_assert_int_eq(sim_snap_series_at(s, 1.0, &st), 0);
	ck_assert_close(st.pos[0], 1, 1e-15, 0);  /* ID 3 */
	ck_assert_close(st.pos[3], 0, 1e-15, 0);  /* ID 5 */
	ck_assert_close(st.mass[2], 0, 1e-15, 0); /* ID 7: absent */
	ck_assert_int_eq(sim_snap_series_at(s, 2.0, &st), 0);
	ck_assert_close(st.pos[0], 0, 1e-15, 0);
	ck_assert_close(st.pos[3], 1, 1e-15, 0);
	ck_assert_close(st.pos[6], 5, 1e-15, 0);
	/* ID 3 goes 0 -> 1 -> 0 at rest ends: Hermite with v = 0 is smoothstep */
	ck_assert_int_eq(sim_snap_series_at(s, 0.5, &st), 0);
	ck_assert_close(st.pos[0], 0.5, 1e-15, 0);
	ck_assert_int_eq(sim_snap_series_at(s, 0.25, &st), 0);
	ck_assert_close(st.pos[0], 3 * 0.0625 - 2 * 0.015625, 1e-15, 0);
	/* fade out over [0, 1], fade in over [1, 2]: mass (light) x (1 - s), x s */
	ck_assert_close(st.mass[2], 0.75 * 2.0, 1e-15, 0);
	ck_assert_close(st.mass[1], 2.0, 1e-15, 0);
	ck_assert_int_eq(sim_snap_series_at(s, 1.25, &st), 0);
	ck_assert_close(st.mass[2], 0.25 * 2.0, 1e-15, 0);
	ck_assert_int_eq(sim_snap_series_at(s, 0.0, &st), 0);
	ck_assert_close(st.mass[2], 2.0, 1e-15, 0);
	sim_snap_series_free(&s);
	sim_state_free(&st);

}
END_TEST

START_TEST(film_engine_computes_no_forces)
{
	write_kepler();
	write_scene("s.yaml", "snap_%03d.g1", 10);
	static struct scene sc;
	load_scene("s.yaml", &sc);
	struct sim_units u;
	scene_units_of(sc.units, &u);
	struct sim_state st = {0};
	struct sim_snap_series *s = NULL;
	ck_assert_int_eq(sim_snap_series_open(&sc, 0, &u, &st, &s), 0);
	struct engine *e = NULL;
	ck_assert_int_eq(engine_create(&sc, &st, SCENE_BACKEND_CPU, &e), 0);
	engine_set_film(e, s);
	for (int f = 1; f < 10; f++)
		ck_assert_int_eq(engine_advance(e, sc.simulation.steps_per_frame, 1), 0);
	ck_assert_int_eq(engine_force_calls(e), 0);
	/* the last frame is the last snapshot */
	ck_assert_close(st.time, PERIOD, 1e-12, 0);
	double x[3], v[3];
	kepler_body(PERIOD, 1, x, v);
	ck_assert_close(st.pos[3], x[0], 1e-12, 0);
	/* statistics: no potential energy */
	struct sim_diag d;
	double t;
	ck_assert_int_eq(engine_diag_queue(e), 0);
	ck_assert_int_eq(engine_diag_take(e, &d, &t), 0);
	ck_assert(isnan(d.potential));
	engine_free(&e);
	/* the direct solver on the same state does count them */
	sc.simulation.solver = SCENE_SOLVER_DIRECT;
	ck_assert_int_eq(engine_create(&sc, &st, SCENE_BACKEND_CPU, &e), 0);
	ck_assert_int_eq(engine_advance(e, 2, 0), 0);
	ck_assert_int_ge(engine_force_calls(e), 3);
	engine_free(&e);
	sim_state_free(&st);

}
END_TEST

/* Run the program in tmpdir on SCENE; stderr to err.txt. Exit status. */
static int run_bin(const char *scene)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s/%s' %s --backend cpu > out.txt 2> err.txt", tmpdir,
		 getenv("PWD") ? getenv("PWD") : ".", nb_bin(), scene);
	if (nb_bin()[0] == '/')
		snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s --backend cpu > out.txt 2> err.txt",
			 tmpdir, nb_bin(), scene);
	int rc = system(cmd);
	ck_assert(WIFEXITED(rc));
	return WEXITSTATUS(rc);
}

static const char *slurp(const char *name)
{
	static char buf[16384];
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(film_runs_and_logs_no_forces)
{
	write_kepler();
	write_scene("s.yaml", "snap_%03d.g1", 12);
	ck_assert_int_eq(run_bin("s.yaml"), 0);
	const char *err = slurp("err.txt");
	ck_assert_msg(strstr(err, "film mode: no forces"), "log: %s", err);
	ck_assert_msg(strstr(err, "film of 20 snapshots"), "log: %s", err);
	char png[256];
	snprintf(png, sizeof png, "%s/png/frame_00011.png", tmpdir);
	ck_assert_msg(access(png, F_OK) == 0, "no %s", png);
}
END_TEST

START_TEST(series_missing_number_exits_2)
{
	write_kepler();
	char p[256];
	snprintf(p, sizeof p, "%s/snap_007.g1", tmpdir);
	ck_assert_int_eq(unlink(p), 0);
	write_scene("s.yaml", "snap_%03d.g1", 12);
	ck_assert_int_eq(run_bin("s.yaml"), 2);
	const char *err = slurp("err.txt");
	ck_assert_msg(strstr(err, "snap_007.g1 does not exist"), "log: %s", err);
	ck_assert_msg(strstr(err, "missing number"), "log: %s", err);
}
END_TEST

/* Film mode on the GPU: the engine stays on the host and the GPU renderer
 * uploads its state each frame (app/renderer_gpu.c). The same film drawn
 * with --backend cuda and --backend cpu: every frame within 64 LSB of 16
 * bits (0.1 % of full scale; the renderers agree to a few LSB, a broken
 * upload would be off by whole stars), and the log says the GPU drew. */
static int run_bin_backend(const char *scene, const char *backend, const char *png)
{
	char cmd[1400];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && '%s%s%s' %s --backend %s --set output.png_depth=16 "
		 "--set output.png_dir=%s > out.txt 2> err.txt",
		 tmpdir, nb_bin()[0] == '/' ? "" : (getenv("PWD") ? getenv("PWD") : "."),
		 nb_bin()[0] == '/' ? "" : "/", nb_bin(), scene, backend, png);
	int rc = system(cmd);
	ck_assert(WIFEXITED(rc));
	return WEXITSTATUS(rc);
}

START_TEST(film_on_the_gpu_matches_the_cpu)
{
	write_kepler();
	write_scene("s.yaml", "snap_%03d.g1", 12);
	ck_assert_int_eq(run_bin_backend("s.yaml", "cpu", "pcpu"), 0);
	ck_assert_int_eq(run_bin_backend("s.yaml", "cuda", "pgpu"), 0);
	const char *err = slurp("err.txt");
	ck_assert_msg(strstr(err, "on the GPU"), "log: %s", err);
	int worst = 0;
	for (int f = 0; f < 12; f++) {
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/pcpu/frame_%05d.png", tmpdir, f);
		snprintf(b, sizeof b, "%s/pgpu/frame_%05d.png", tmpdir, f);
		int wa, ha, da, wb, hb, db;
		uint16_t *x = read_png(a, &wa, &ha, &da), *y = read_png(b, &wb, &hb, &db);
		ck_assert(wa == wb && ha == hb && da == 16 && db == 16);
		long lit = 0;
		for (int k = 0; k < wa * ha * 3; k++) {
			int d = abs((int)x[k] - (int)y[k]);
			worst = d > worst ? d : worst;
			lit += x[k] > 0;
		}
		ck_assert_msg(lit > 0, "frame %d is black", f);
		free(x);
		free(y);
	}
	printf("film on the GPU vs the CPU, 12 frames: max |diff| %d LSB of 16 bits\n", worst);
	ck_assert_int_le(worst, 64);
}
END_TEST

/* Film mode out of core (render.gpu_memory, app/renderer_gpu.c): a still
 * film of 50000 bodies under a 17 MiB budget at 64x48 (the frame's buffers
 * take ~16.1 MiB by gpu_render_memory, leaving room for chunks of ~16000:
 * 4 a frame; asserted: at least 2) against
 * the same film in core: every frame within 1 LSB of 16 bits, and the log
 * says it went out of core. */
START_TEST(film_out_of_core_matches_in_core)
{
	char path[200];
	snprintf(path, sizeof path, "%s/o.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "bodies: [{name: a, model: plummer, count: 50000}]\n"
		   "simulation: {solver: none}\n"
		   "render: {width: 64, height: 48}\n"
		   "camera: {keys: [{frame: 0, position: [0, -8, 2], target: [0, 0, 0]}, "
		   "{frame: 4, position: [3, -7, 2], target: [0, 0, 0]}]}\n"
		   "output: {frames: 5}\n");
	fclose(f);
	ck_assert_int_eq(run_bin_backend("o.yaml", "cuda", "pin"), 0);
	const char *err = slurp("err.txt");
	ck_assert_msg(!strstr(err, "out of core"), "in core expected: %s", err);
	ck_assert_int_eq(run_bin_backend("o.yaml --set render.gpu_memory=17M", "cuda", "pooc"), 0);
	err = slurp("err.txt");
	const char *at = strstr(err, "drawing out of core, ");
	int chunks = 0;
	ck_assert_msg(at && sscanf(at, "drawing out of core, %d chunks", &chunks) == 1 && chunks >= 2,
		      "log: %s", err);
	int worst = 0;
	for (int k = 0; k < 5; k++) {
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/pin/frame_%05d.png", tmpdir, k);
		snprintf(b, sizeof b, "%s/pooc/frame_%05d.png", tmpdir, k);
		int wa, ha, da, wb, hb, db;
		uint16_t *x = read_png(a, &wa, &ha, &da), *y = read_png(b, &wb, &hb, &db);
		ck_assert(wa == wb && ha == hb && da == 16 && db == 16);
		long lit = 0;
		for (int i = 0; i < wa * ha * 3; i++) {
			int d = abs((int)x[i] - (int)y[i]);
			worst = d > worst ? d : worst;
			lit += x[i] > 4096;
		}
		ck_assert_msg(lit > wa * ha / 8, "frame %d is nearly black", k);
		free(x);
		free(y);
	}
	printf("film out of core (4 chunks) vs in core, 5 frames: max |diff| %d LSB of 16 bits\n",
	       worst);
	ck_assert_int_le(worst, 1);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("film");
	TCase *tc = tcase_create("film");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, kepler_orbit_within_hermite_bound);
	tcase_add_test(tc, ids_matched_and_bodies_fade);
	tcase_add_test(tc, film_engine_computes_no_forces);
	tcase_add_test(tc, film_runs_and_logs_no_forces);
	tcase_add_test(tc, series_missing_number_exits_2);
	suite_add_tcase(s, tc);
	TCase *gpu = tcase_create("film_gpu");
	tcase_add_checked_fixture(gpu, setup, teardown);
	tcase_set_timeout(gpu, 120);
	tcase_add_test(gpu, film_on_the_gpu_matches_the_cpu);
	tcase_add_test(gpu, film_out_of_core_matches_in_core);
	NB_GPU_TCASE(s, gpu);
	return s;
}

NB_CHECK_MAIN(make_suite)
