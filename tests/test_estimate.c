/* test_estimate.c - --dry-run's expected wall time (app/estimate.c): the
 * model against a hand calculation for two scenes at injected rates
 * (NB_RATES_FILE), the rates cache written whole and read back, a cache
 * directory that cannot be made, and the batch dry run's total. No timed
 * assertions: the calibration's figures are only checked to be positive.
 * Issue 29's second round: the tree's rate mixed by the scene's disk-galaxy
 * bodies, the light's statistics in the frame rate, individual time steps
 * (by hand at injected rates, and the level model against a real run's
 * force evaluations: a ratio), GPU rates read from an injected file
 * (NB_ESTIMATE_GPU names the GPU the run would use) and --calibrate.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_estimate &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_estimate
 * (run from the repository root: it reads scenes/ and tests/data/). */
#include <check.h>
#include <limits.h>
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
	/* the PNG pool's CPU seconds share the cores with the simulation */
	const double cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
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
	assert_near(stage("PNG frames (output.png_dir)"), frames * px * 2e-7 / cores);
	assert_near(stage("snapshots and FITS maps"), 0);
	ck_assert_ptr_nonnull(strstr(g_out, "NB_RATES_FILE"));
	double total = n * 1e-6 + 39 * n * (n - 1) / 2 * 1e-8 + frames * (px * 1e-7 + n * 1e-6) +
		       frames * px * (5e-8 + 2e-7 / cores);
	ck_assert_msg(fabs(stage("in all") - total) <= 1e-3 * total, "total %g, want %g",
		      stage("in all"), total);
}
END_TEST

/* render.diffuse with adaptive lengths: the rendering stage adds the
 * lengths' computation every render.adaptive_every frames (frame_h, by
 * hand); the same scene without the layer does not. */
START_TEST(adaptive_lengths_charged_by_hand)
{
	char env[256], args[1024];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates(env + strlen("NB_RATES_FILE="));
	FILE *f = fopen(env + strlen("NB_RATES_FILE="), "a");
	ck_assert_ptr_nonnull(f);
	fputs("frame_h: 2e-4\n", f);
	fclose(f);
	const char *base = "scenes/plummer.yaml --set bodies.0.count=3000 --set output.frames=20 "
			   "--set render.width=320 --set render.height=180 --set output.video= "
			   "--set output.png_dir= --set output.stats= --set output.preview= "
			   "--set render.adaptive_every=3";
	snprintf(args, sizeof args, "%s --dry-run", base);
	ck_assert_int_eq(run(env, args), 0);
	double plain = stage("rendering");
	snprintf(args, sizeof args, "%s --set render.diffuse=0.5 --set render.diffuse_smoothing=adaptive "
		 "--dry-run", base);
	ck_assert_int_eq(run(env, args), 0);
	assert_near(stage("rendering") - plain, 7 * 3000 * 2e-4); /* ceil(20 / 3) updates */
}
END_TEST

/* The spline kernel's cost is timed on the scene's bodies and said; one
 * Plummer length is not probed. */
START_TEST(softening_probe_said_for_the_spline)
{
	char env[256];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates(env + strlen("NB_RATES_FILE="));
	const char *base = "scenes/plummer.yaml --set bodies.0.count=6000 --set output.frames=200 "
			   "--set simulation.steps_per_frame=50 --set output.video= "
			   "--set output.png_dir= --set output.stats= --set output.preview= --dry-run";
	ck_assert_int_eq(run(env, base), 0);
	ck_assert_ptr_null(strstr(g_out, "takes"));
	double one = stage("simulation");
	char args[1024];
	snprintf(args, sizeof args, "%s --set simulation.softening_kernel=spline", base);
	ck_assert_int_eq(run(env, args), 0);
	const char *p = strstr(g_out, "(spline kernel) takes ");
	ck_assert_msg(p != NULL, "no probe line in:\n%s", g_out);
	double x = strtod(p + strlen("(spline kernel) takes "), NULL);
	ck_assert_msg(x >= 0.5 && x <= 50, "x %g", x);
	/* the stage is the calibrated one times the probe's factor (printed to 2 decimals) */
	ck_assert_msg(fabs(stage("simulation") / one - x) <= 0.01 * x + 0.01, "sim %g / %g vs %g",
		      stage("simulation"), one, x);
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
	/* a galaxy's fixed set-up (create_fixed) paid once by each of the two */
	FILE *f = fopen(env + strlen("NB_RATES_FILE="), "a");
	ck_assert_ptr_nonnull(f);
	fputs("create_fixed: 0.5\n", f);
	fclose(f);
	ck_assert_int_eq(run(env, args), 0);
	assert_near(stage("creation of the bodies"), n * 1e-5 + 2 * 0.5);
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
			ck_assert_msg(v >= 0 && v < (strcmp(name, "tree_small") ? 1 : 10), "%s: %g", name, v);
			rates++;
		}
	}
	fclose(f);
	ck_assert_int_eq(rates, 16);
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
	ck_assert_msg(t && strchr(t, '('), "no total in:\n%.3000s", g_out);
	ck_assert_int_eq(runs, 2);
	ck_assert(sum > 0);
	ck_assert_close(strtod(strchr(t, '(') + 1, NULL), sum, 0.11, 1e-3);
}
END_TEST

static const char mixed_scene[] =
	"units: galactic\nseed: 3\n"
	"simulation: {solver: barnes-hut, theta: 0.5, softening: 0.1, dt: 0.5, steps_per_frame: 3}\n"
	"bodies:\n"
	"  - {name: ball, model: plummer, count: 4000, mass: 1e10, scale: 2, position: [40, 0, 0]}\n"
	"  - name: g\n    model: disk-galaxy\n"
	"    disk: {count: 3000, mass: 5e10, scale: 3.5, scale_height: 0.35, toomre_q: 1.5}\n"
	"    bulge: {count: 500, mass: 1e10, scale: 0.7}\n"
	"    halo: {count: 500, mass: 4e11, scale: 15}\n"
	"camera: {follow: light, keys: [{frame: 0, position: [0, -100, 50], target: [0, 0, 0]}]}\n"
	"render: {width: 320, height: 180}\n"
	"output: {frames: 10, video: '', png_dir: '', stats: '', preview: ''}\n";

/* Rates with the optional rows too (tree_disk, tree_build, frame_track,
 * tree_small: below 20,000 bodies the tree's rates x (n / 20000)^0.5, as
 * 0.5 at 5,000 = (1/4)^0.5). */
static void write_rates_full(const char *path)
{
	write_rates(path);
	FILE *f = fopen(path, "a");
	ck_assert_ptr_nonnull(f);
	fputs("tree_disk: 6e-9\ntree_build: 3e-7\nframe_track: 4e-7\ntree_small: 0.5\n"
	      "tree_group: 0.5\n", f);
	fclose(f);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* A sphere and a disk galaxy: the tree's rate is their mix by bodies
 * (4000 at tree_inter, 4000 at tree_disk), and camera.follow: light adds
 * frame_track per body per frame. */
START_TEST(tree_rate_mixed_by_model)
{
	char env[256], args[512], scene[128];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates_full(env + strlen("NB_RATES_FILE="));
	snprintf(scene, sizeof scene, "%s/mixed.yaml", g_dir);
	write_file(scene, mixed_scene);
	snprintf(args, sizeof args, "%s --backend cpu --dry-run", scene);
	ck_assert_int_eq(run(env, args), 0);
	const double n = 8000, theta = 0.5, inter = n * 60 * log2(n) / (theta * theta);
	const double rate = 0.5 * 2e-9 + 0.5 * 6e-9; /* half the bodies in the disk galaxy */
	const double size = sqrt(n / 20000);         /* tree_small 0.5 */
	assert_near(stage("simulation"), (9 * 3 + 1) * inter * rate * size); /* 9.2 s */
	assert_near(stage("rendering"), 10 * (320 * 180 * 1e-7 + n * 1e-6 + n * 4e-7));
	assert_near(stage("creation of the bodies"), 4000 * 1e-6 + 4000 * 1e-5);
}
END_TEST

/* The number after the first pat in g_out that a number follows (or -1). */
static double after(const char *pat)
{
	for (const char *p = g_out; (p = strstr(p, pat)); p++) {
		char *end;
		double v = strtod(p + strlen(pat), &end);
		if (end != p + strlen(pat))
			return v;
	}
	return -1;
}

/* Individual time steps at injected rates: the first evaluation, then per
 * block step the ticks' tree builds of every body and the walks: each
 * body's mean 2^level evaluations at the full evaluation's cost per body
 * less a build's, of which the share tree_group (0.5 here) is paid per
 * group with an active body instead. The levels are the dry run's own
 * (printed); the arithmetic is checked here. */
START_TEST(individual_steps_by_hand)
{
	char env[256], args[1024];
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates_full(env + strlen("NB_RATES_FILE="));
	snprintf(args, sizeof args, "scenes/plummer.yaml --set bodies.0.count=3000 "
		 "--set simulation.timesteps=individual --set simulation.blocks_per_frame=2 "
		 "--set simulation.eta=0.001 "
		 "--set output.frames=11 --set render.width=320 --set render.height=180 "
		 "--set output.video= --set output.png_dir= --set output.stats= --set output.preview= "
		 "--dry-run");
	ck_assert_int_eq(run(env, args), 0);
	const double evals = after("# time: individual time steps: "), ticks = after("per block step, ");
	const double groups = after("with an active body ");
	ck_assert_msg(evals >= 1 && ticks >= 1 && groups >= evals, "no level model in:\n%.3000s",
		      g_out);
	/* the printed histogram ("L0 2650, L1 350") gives both by hand: a
	 * body on level L walks 2^L times a block; the block's ticks whose
	 * coarsest active level is l (1 for l = 0, 2^(l-1) else) find a share
	 * 1 - (1 - f)^32 of the groups of 32 active, f the bodies on >= l */
	long hist[21] = {0}, total = 0;
	int plan = 0;
	const char *h = strstr(g_out, "sampled bodies: ");
	ck_assert_ptr_nonnull(h);
	for (h += strlen("sampled bodies: "); h[0] == 'L'; h = strchr(h, ',') ? strchr(h, ',') + 2 : "") {
		int L = (int)strtol(h + 1, NULL, 10);
		hist[L] = strtol(strchr(h, ' ') + 1, NULL, 10);
		total += hist[L];
		plan = L > plan ? L : plan;
	}
	double by_hand = 0, walks_by_hand = 0;
	long above = total;
	for (int l = 0; l <= plan; l++) {
		by_hand += hist[l] * ldexp(1.0, l) / total;
		walks_by_hand += (l ? ldexp(1.0, l - 1) : 1) * (1 - pow(1 - (double)above / total, 32));
		above -= hist[l];
	}
	ck_assert_msg(total > 0 && fabs(evals - by_hand) <= 0.01 * by_hand &&
		      fabs(groups - walks_by_hand) <= 0.01 * walks_by_hand && ticks == ldexp(1.0, plan),
		      "levels %g %g %g against %g %g %g by hand", evals, groups, ticks, by_hand,
		      walks_by_hand, ldexp(1.0, plan));
	const double n = 3000, theta = 0.5, inter = n * 60 * log2(n) / (theta * theta);
	const double full = inter * 2e-9 * sqrt(n / 20000), walk = full / n - 3e-7; /* 10 us - 0.3 */
	const double want = full + 10 * 2 * (ticks * n * 3e-7 + (0.5 * groups + 0.5 * evals) * n * walk);
	assert_near(stage("simulation"), want);
	/* shared steps would be (10 x 4 + 1) full evaluations: not that */
	ck_assert_msg(fabs(stage("simulation") - 41 * full) > 0.1 * want || evals * 2 == 4,
		      "estimated as shared: %g", stage("simulation"));
}
END_TEST

/* The level model against a real individual-step run: the dry run's
 * force evaluations per body per frame at the start against the run's
 * own count over the whole run (engine_ts_report), within a factor 1.5.
 * A disk galaxy: its levels spread over 0..5 (a Plummer sphere's sit on
 * level 0, which proves nothing). Measured: 7.58 against 8.94. */
START_TEST(individual_levels_match_a_run)
{
	char args[1024], env[256];
	const char *common = "scenes/isolated-disk.yaml --backend cpu --set bodies.0.disk.count=1500 "
		"--set bodies.0.bulge.count=300 --set bodies.0.halo.count=1000 "
		"--set simulation.timesteps=individual --set output.frames=5 --set render.width=64 "
		"--set render.height=36 --set output.png_dir= --set output.stats= --set output.preview= ";
	snprintf(args, sizeof args, "%s --set output.video=%s/i.mp4 --dry-run", common, g_dir);
	snprintf(env, sizeof env, "NB_RATES_FILE=%s/rates", g_dir);
	write_rates_full(env + strlen("NB_RATES_FILE="));
	ck_assert_int_eq(run(env, args), 0);
	const double per_frame = after("# individual time steps: ");
	const double per_block = after("# time: individual time steps: ");
	ck_assert_msg(per_frame > 1 && per_block > 1, "no level model in:\n%.3000s", g_out);
	snprintf(args, sizeof args, "%s --set output.video=%s/i.mp4", common, g_dir);
	ck_assert_int_eq(run(env, args), 0);
	const double actual = after("individual time steps: ");
	ck_assert_msg(actual > 0, "no count in the run's output:\n%.3000s", g_out);
	ck_assert_msg(per_frame / actual > 0.67 && per_frame / actual < 1.5,
		      "predicted %g force evaluations per body per frame, the run made %g",
		      per_frame, actual);
}
END_TEST

static const char gpu_rates_text[] =
	"key: Test GPU | nbody-render x\ndevice: Test GPU\nmeasured_at: 1795000000\n"
	"calib_s: 4\ntree_step: 0.002\ntree_inter: 1e-12\ndirect_pair: 1e-13\n"
	"frame_fixed: 0.001\nframe_px: 1e-10\nframe_body: 2e-10\n";

/* A GPU run at the GPU's injected rates: the simulation and frames on the
 * GPU, a step = 2 ms + interactions x 1 ps, a frame = 1 ms + pixels x 0.1
 * ns + bodies x 0.2 ns; creation and encoding the CPU's, creation plus the
 * GPU's start-up (0.4 s); the encoder overlaps the GPU in the total. The line names the GPU and the date. */
START_TEST(gpu_rates_from_injected_file)
{
	char env[512], gpath[128], rpath[128];
	snprintf(gpath, sizeof gpath, "%s/gpu", g_dir);
	snprintf(rpath, sizeof rpath, "%s/rates", g_dir);
	write_file(gpath, gpu_rates_text);
	write_rates_full(rpath);
	snprintf(env, sizeof env, "NB_RATES_FILE=%s NB_GPU_RATES_FILE=%s NB_ESTIMATE_GPU='Test GPU'",
		 rpath, gpath);
	const char *args = "scenes/plummer.yaml --set bodies.0.count=200000 --set output.frames=100 "
		"--set output.png_dir= --set output.stats= --set output.preview= --dry-run";
	ck_assert_int_eq(run(env, args), 0);
	const double n = 200000, frames = 100, px = 1280 * 720, inter = n * 60 * log2(n) / 0.25;
	const double sim = (99 * 4 + 1) * (0.002 + inter * 1e-12);           /* 1.13 s */
	const double render = frames * (0.001 + px * 1e-10 + n * 2e-10);   /* 0.113 s */
	const double enc = frames * px * 5e-8, create = n * 1e-6 + 0.4;    /* 4.6 s, 0.6 s */
	assert_near(stage("simulation"), sim);
	assert_near(stage("rendering"), render);
	assert_near(stage("encoding (output.video)"), enc);
	ck_assert_msg(fabs(stage("in all") - (create + enc)) <= 1e-3 * enc,
		      "total %g, want %g (the GPU's %g s inside the encoder's time)", stage("in all"),
		      create + enc, sim + render);
	ck_assert_msg(strstr(g_out, "rates: GPU Test GPU, measured 2026-11-18 11:06 UTC"), "%.3000s", g_out);
	/* the spline kernel: the GPU's general softening walk, 2.2 x the step */
	char sargs[512];
	snprintf(sargs, sizeof sargs, "%s --set simulation.softening_kernel=spline", args);
	ck_assert_int_eq(run(env, sargs), 0);
	assert_near(stage("simulation"), 2.2 * sim);
	/* another GPU's file: not used, said so, the CPU's rates */
	snprintf(env, sizeof env, "NB_RATES_FILE=%s NB_GPU_RATES_FILE=%s NB_ESTIMATE_GPU='Other GPU'",
		 rpath, gpath);
	ck_assert_int_eq(run(env, args), 0);
	ck_assert_msg(strstr(g_out, "no GPU rates for Other GPU (") && strstr(g_out, "holds Test GPU's"),
		      "%.3000s", g_out);
	assert_near(stage("simulation"), (99 * 4 + 1) * inter * 2e-9);
	/* disk galaxies on the GPU: the CPU's disk/sphere ratio (6e-9 / 2e-9) */
	snprintf(env, sizeof env, "NB_RATES_FILE=%s NB_GPU_RATES_FILE=%s NB_ESTIMATE_GPU='Test GPU'",
		 rpath, gpath);
	ck_assert_int_eq(run(env, "scenes/galaxy-collision.yaml --set output.frames=100 --set "
			     "simulation.steps_per_frame=6 --set simulation.theta=0.5 --set "
			     "output.video= --set output.png_dir= --set output.stats= --set "
			     "output.preview= --set output.snapshots.dir= --dry-run"), 0);
	const double nd = after("# bodies: "), id = nd * 60 * log2(nd) / 0.25;
	ck_assert_msg(nd > 1000, "%.3000s", g_out);
	assert_near(stage("simulation"), (99 * 6 + 1) * (0.002 + id * 1e-12 * 3));
	/* a batch's runs on that GPU: its rates, said in the closing lines */
	snprintf(env, sizeof env, "NB_RATES_FILE=%s NB_GPU_RATES_FILE=%s NB_ESTIMATE_GPU='Test GPU'",
		 rpath, gpath);
	char batch[256], text[PATH_MAX + 512], scene[PATH_MAX], cmd[512];
	ck_assert_ptr_nonnull(realpath("tests/data/plummer-small.yaml", scene));
	snprintf(batch, sizeof batch, "%s/b.yaml", g_dir);
	snprintf(text, sizeof text, "output_dir: %s/out\nruns:\n  - scene: %s\n    name: \"p{seed}\"\n"
		 "    set: {simulation.backend: auto, output.frames: 5}\n    sweep: {seed: [1, 2]}\n",
		 g_dir, scene);
	write_file(batch, text);
	snprintf(cmd, sizeof cmd, "batch %s --dry-run", batch);
	ck_assert_int_eq(run(env, cmd), 0);
	ck_assert_msg(strstr(g_out, "# time: 2 runs on the GPU at its rates (GPU Test GPU)"),
		      "%.3000s", g_out);
	/* a malformed file is bad input (exit 2, as NB_RATES_FILE), naming its line */
	write_file(gpath, "device: Test GPU\nmeasured_at: 1\ncalib_s: x\n");
	snprintf(env, sizeof env, "NB_RATES_FILE=%s NB_GPU_RATES_FILE=%s NB_ESTIMATE_GPU='Test GPU'",
		 rpath, gpath);
	ck_assert_int_eq(run(env, args), 2);
	ck_assert_msg(strstr(g_out, "NB_GPU_RATES_FILE: line 3: calib_s: expected a number"), "%.3000s",
		      g_out);
}
END_TEST

/* --calibrate measures again (the cache's time changes), prints the rates
 * and, on the CPU backend, says no GPU is measured; exit 0, no run. */
START_TEST(calibrate_measures_again)
{
	char env[256], path[256];
	snprintf(env, sizeof env, "NB_RATES_FILE= XDG_CACHE_HOME=%s/cache", g_dir);
	snprintf(path, sizeof path, "%s/cache/nbody-render/rates", g_dir);
	const char *args = "scenes/plummer.yaml --backend cpu --calibrate";
	ck_assert_int_eq(run(env, args), 0);
	ck_assert_msg(strstr(g_out, "CPU: rates measured now") && strstr(g_out, "tree ") &&
		      strstr(g_out, "GPU: none for this run"), "%.3000s", g_out);
	ck_assert_ptr_null(strstr(g_out, "# time"));
	struct stat a, b;
	ck_assert_int_eq(stat(path, &a), 0);
	sleep(1);
	ck_assert_int_eq(run(env, "scenes/plummer.yaml --backend cpu --calibrate --dry-run"), 0);
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert_msg(b.st_mtime > a.st_mtime, "the cache was not measured again");
	ck_assert_msg(strstr(g_out, "# time in all"), "no dry run after --calibrate:\n%s", g_out);
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
	tcase_add_test(tc, adaptive_lengths_charged_by_hand);
	tcase_add_test(tc, softening_probe_said_for_the_spline);
	tcase_add_test(tc, cache_written_whole_and_read_back);
	tcase_add_test(tc, unwritable_cache_dir_measures);
	tcase_add_test(tc, bad_rates_file_refused);
	tcase_add_test(tc, batch_dry_run_total_is_the_sum);
	tcase_add_test(tc, tree_rate_mixed_by_model);
	tcase_add_test(tc, individual_steps_by_hand);
	tcase_add_test(tc, individual_levels_match_a_run);
	tcase_add_test(tc, gpu_rates_from_injected_file);
	tcase_add_test(tc, calibrate_measures_again);
	suite_add_tcase(s, tc);
	return s;
}
NB_CHECK_MAIN(make_suite)
