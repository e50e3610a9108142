/* test_estimate.c - --dry-run's expected wall time (app/estimate.c): the
 * model against a hand calculation for two scenes at injected rates
 * (NB_RATES_FILE), the rates cache written whole and read back, a cache
 * directory that cannot be made, and the batch dry run's total. No timed
 * assertions: the calibration's figures are only checked to be positive.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_estimate &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_estimate
 * (run from the repository root: it reads scenes/ and tests/data/). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

static char g_dir[64];
static char g_out[65536];

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-estimate-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
}

/* Run "ENV NB_BIN ARGS", stdout and stderr into g_out; exit status. */
static int run(const char *env, const char *args)
{
	char cmd[4096], outf[128];
	const char *bin = getenv("NB_BIN") ? getenv("NB_BIN") : "build/nbody-render";
	snprintf(outf, sizeof outf, "%s/out.txt", g_dir);
	snprintf(cmd, sizeof cmd, "env %s %s %s > %s 2>&1", env, bin, args, outf);
	int st = system(cmd);
	FILE *f = fopen(outf, "r");
	size_t n = f ? fread(g_out, 1, sizeof g_out - 1, f) : 0;
	g_out[n] = 0;
	if (f)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The seconds printed on the "# time <stage>" line (the total's "(N s)"). */
static double stage(const char *name)
{
	char pat[128];
	snprintf(pat, sizeof pat, "# time %s ", name);
	const char *p = strstr(g_out, pat);
	ck_assert_msg(p != NULL, "no line for %s in:\n%s", name, g_out);
	p += strlen(pat);
	while (*p == ' ')
		p++;
	double v = strtod(p, NULL);
	const char *unit = strpbrk(p, "smh");
	if (!strcmp(name, "in all"))
		return strtod(strchr(p, '(') + 1, NULL);
	if (unit && unit[0] == 'm' && unit[1] != 'i') /* 3m05s */
		return v * 60 + strtod(unit + 1, NULL);
	if (unit && unit[0] == 'h')
		return v * 3600 + strtod(unit + 1, NULL) * 60;
	return v;
}

static void write_rates(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("key: test\nmeasured: 0\ncalibration_s: 1\ncreate_body: 1e-6\ncreate_disk: 1e-5\n"
	      "direct_pair: 1e-8\ntree_inter: 2e-9\nframe_px: 1e-7\nframe_body: 1e-6\n"
	      "encode_px: 5e-8\npng_px: 2e-7\nfile_byte: 1e-8\n", f);
	fclose(f);
}

static void assert_near(double got, double want)
{
	ck_assert_msg(fabs(got - want) <= 0.051 + 0.002 * want, "got %g, want %g", got, want);
}

/* plummer.yaml with 3000 bodies, direct sum, 20 frames of 320x180 x 2
 * steps, video and PNG: by hand. */
START_TEST(plummer_direct_by_hand)
{
	char env[256], args[1024];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates(env + strlen("NB_RATES_FILE="));
	snprintf(args, sizeof args, "scenes/plummer.yaml --set bodies.0.count=3000 "
		 "--set simulation.solver=direct --set output.frames=20 --set simulation.steps_per_frame=2 "
		 "--set render.width=320 --set render.height=180 --set output.video=%s/a.mp4 "
		 "--set output.png_dir=%s/f --set output.stats= --set output.preview= --dry-run",
		 g_dir, g_dir);
	ck_assert_int_eq(run(env, args), 0);
	const double px = 320 * 180, n = 3000, frames = 20;
	assert_near(stage("creation of the bodies"), n * 1e-6);
	assert_near(stage("simulation"), (19 * 2 + 1) * n * (n - 1) / 2 * 1e-8); /* 17.5 s */
	assert_near(stage("rendering"), frames * (px * 1e-7 + n * 1e-6));    /* 0.175 s */
	assert_near(stage("encoding (output.video)"), frames * px * 5e-8);
	assert_near(stage("PNG frames (output.png_dir)"), frames * px * 2e-7);
	assert_near(stage("snapshots and FITS maps"), 0);
	ck_assert_ptr_nonnull(strstr(g_out, "NB_RATES_FILE"));
	double total = n * 1e-6 + 39 * n * (n - 1) / 2 * 1e-8 + frames * (px * 1e-7 + n * 1e-6) +
		       frames * px * (5e-8 + 2e-7);
	ck_assert_msg(fabs(stage("in all") - total) <= 1e-3 * total, "total %g, want %g",
		      stage("in all"), total);
}
END_TEST

/* galaxy-collision.yaml: disk galaxies (create_disk), the tree (n 60
 * log2 n / theta^2 interactions), no PNG. */
START_TEST(galaxy_tree_by_hand)
{
	char env[256], args[2048];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates(env + strlen("NB_RATES_FILE="));
	snprintf(args, sizeof args, "scenes/galaxy-collision.yaml --backend cpu "
		 "--set bodies.0.disk.count=4000 --set bodies.0.bulge.count=1000 --set bodies.0.halo.count=5000 "
		 "--set bodies.1.disk.count=4000 --set bodies.1.bulge.count=1000 --set bodies.1.halo.count=5000 "
		 "--set render.width=640 --set render.height=360 --set output.frames=50 "
		 "--set simulation.steps_per_frame=4 --set output.video=%s/g.mp4 --set output.png_dir= "
		 "--set output.stats= --set output.preview= --set output.snapshots.dir= --dry-run", g_dir);
	ck_assert_int_eq(run(env, args), 0);
	const double n = 20000, px = 640 * 360, frames = 50, theta = 0.5;
	const double inter = n * 60 * log2(n) / (theta * theta);
	assert_near(stage("creation of the bodies"), n * 1e-5);
	assert_near(stage("simulation"), (49 * 4 + 1) * inter * 2e-9); /* 27 s */
	assert_near(stage("rendering"), frames * (px * 1e-7 + n * 1e-6));
	assert_near(stage("encoding (output.video)"), frames * px * 5e-8);
	assert_near(stage("PNG frames (output.png_dir)"), 0);
}
END_TEST

/* No injected rates: the calibration runs, its cache is written whole
 * (no temporary left), read back on the next run, and says how old. */
START_TEST(cache_written_whole_and_read_back)
{
	char env[256], path[256];
	snprintf(env, sizeof env, "NB_RATES_FILE= XDG_CACHE_HOME=%s/cache", g_dir);
	const char *args = "scenes/plummer.yaml --set bodies.0.count=500 --set output.frames=3 --dry-run";
	ck_assert_int_eq(run(env, args), 0);
	ck_assert_ptr_nonnull(strstr(g_out, "rates measured now on this machine (calibration, "));
	ck_assert_ptr_nonnull(strstr(g_out, "cached in"));
	snprintf(path, sizeof path, "%s/cache/nbody-render/rates", g_dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	int rates = 0, key = 0;
	while (fgets(line, sizeof line, f)) {
		double v;
		char name[64];
		key += !strncmp(line, "key: ", 5) && strstr(line, "threads | cpu | nbody-render");
		if (sscanf(line, "%63[a-z_]: %lf", name, &v) == 2 && strcmp(name, "measured") &&
		    strcmp(name, "calibration_s")) {
			ck_assert_msg(v > 0 && v < 1, "%s: %g", name, v);
			rates++;
		}
	}
	fclose(f);
	ck_assert_int_eq(rates, 9);
	ck_assert_int_eq(key, 1);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "ls %s/cache/nbody-render | wc -l | grep -qx 1", g_dir);
	ck_assert_int_eq(system(cmd), 0); /* the temporary file was renamed */
	ck_assert_int_eq(run(env, args), 0);
	ck_assert_msg(strstr(g_out, "# time: rates measured ") && strstr(g_out, " s ago on this machine"),
		      "second run did not read the cache:\n%s", g_out);
}
END_TEST

/* A cache directory that cannot be made (its parent is a file): the rates
 * are measured, used and not cached, the run says so and succeeds. */
START_TEST(unwritable_cache_dir_measures)
{
	char env[256], file[128];
	snprintf(file, sizeof file, "%s/plain", g_dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(env, sizeof env, "NB_RATES_FILE= XDG_CACHE_HOME=%s", file);
	ck_assert_int_eq(run(env, "scenes/plummer.yaml --set bodies.0.count=500 --dry-run"), 0);
	ck_assert_ptr_nonnull(strstr(g_out, "not cached: cannot create"));
	ck_assert(stage("in all") > 0);
}
END_TEST

/* A malformed NB_RATES_FILE is bad input (exit 2), naming the line. */
START_TEST(bad_rates_file_refused)
{
	char env[256], path[128];
	snprintf(path, sizeof path, "%s/bad", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("key: x\ncreate_body: fast\n", f);
	fclose(f);
	snprintf(env, sizeof env, "NB_RATES_FILE=%s", path);
	ck_assert_int_eq(run(env, "scenes/plummer.yaml --dry-run"), 2);
	ck_assert_ptr_nonnull(strstr(g_out, "line 2: create_body: expected a number"));
}
END_TEST

/* The batch dry run: expected_s per run that loads, and the total is
 * their sum (the bad run has none). */
START_TEST(batch_dry_run_total_is_the_sum)
{
	char env[256];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates(env + strlen("NB_RATES_FILE="));
	run(env, "batch tests/data/batch-small.yaml --dry-run");
	double sum = 0;
	int runs = 0;
	for (const char *p = g_out; (p = strstr(p, "expected_s: ")); p++, runs++)
		sum += strtod(p + strlen("expected_s: "), NULL);
	const char *t = strstr(g_out, "# expected wall time: ");
	ck_assert_msg(t && strchr(t, '('), "no total in:\n%s", g_out);
	ck_assert_int_eq(runs, 2);
	ck_assert(sum > 0);
	ck_assert_close(strtod(strchr(t, '(') + 1, NULL), sum, 0.11, 1e-3);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("estimate");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, plummer_direct_by_hand);
	tcase_add_test(tc, galaxy_tree_by_hand);
	tcase_add_test(tc, cache_written_whole_and_read_back);
	tcase_add_test(tc, unwritable_cache_dir_measures);
	tcase_add_test(tc, bad_rates_file_refused);
	tcase_add_test(tc, batch_dry_run_total_is_the_sum);
	suite_add_tcase(s, tc);
	return s;
}
NB_CHECK_MAIN(make_suite)
