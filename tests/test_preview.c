/* test_preview.c - --preview TIME (app/preview_fit.c): the shrunk scene's
 * estimate is within the budget (+-30 %) for plummer and galaxy-collision at
 * injected rates (NB_RATES_FILE: deterministic, no calibration); each
 * component's total mass is unchanged in a real run's initial state; a
 * scene over budget is fitted at the draft accuracy (the frame time kept)
 * and buys more bodies than at the default, dark halos shrink more than
 * the drawn parts and pixels more than frames; the
 * camera keys are rescaled (first and last kept); the printed --set list,
 * given back, resolves the same scene; a scene that fits is left as it is;
 * too small a budget is refused (exit 2, nothing written) naming a minimum
 * that is itself accepted. No timed assertions.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_preview &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_preview
 * (run from the repository root: it reads scenes/). */
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
static char g_out[131072]; /* stdout of the last run */
static char g_err[65536];  /* its stderr */
static char g_env[160];

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-preview-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	snprintf(g_env, sizeof g_env, "NB_RATES_FILE=%s/rates", g_dir);
	FILE *f = fopen(g_env + strlen("NB_RATES_FILE="), "w");
	ck_assert_ptr_nonnull(f);
	fputs("key: test\nmeasured: 0\ncalibration_s: 1\ncreate_body: 1e-6\ncreate_disk: 1e-5\n"
	      "direct_pair: 1e-8\ntree_inter: 2e-9\nframe_px: 1e-7\nframe_body: 1e-6\n"
	      "encode_px: 5e-8\npng_px: 2e-7\nfile_byte: 1e-8\n", f);
	fclose(f);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
}

/* Run "NB_BIN ARGS" at the injected rates: stdout into g_out, stderr into
 * g_err; the exit status. */
static int run(const char *args)
{
	char cmd[8192], o[128], e[128];
	snprintf(o, sizeof o, "%s/out.txt", g_dir);
	snprintf(e, sizeof e, "%s/err.txt", g_dir);
	snprintf(cmd, sizeof cmd, "env %s %s %s > %s 2> %s", g_env, nb_bin(), args, o, e);
	int st = system(cmd);
	slurp(o, g_out, sizeof g_out);
	slurp(e, g_err, sizeof g_err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The dry run's total: "# time in all ... (N s)". */
static double total_s(void)
{
	const char *p = strstr(g_out, "# time in all");
	ck_assert_msg(p != NULL, "no total in:\n%s", g_out);
	return strtod(strchr(p, '(') + 1, NULL);
}

/* The --set list the fit printed (the line after its summary), into buf. */
static void set_list(char *buf, size_t len)
{
	const char *p = strstr(g_err, "to reuse them:\n  ");
	ck_assert_msg(p != NULL, "no --set list in:\n%s", g_err);
	p += strlen("to reuse them:\n  ");
	size_t n = strcspn(p, "\n");
	ck_assert_uint_lt(n, len);
	memcpy(buf, p, n);
	buf[n] = 0;
}

/* The value of override KEY= in the printed list; -1 when absent. */
static long set_value(const char *key)
{
	char pat[128];
	snprintf(pat, sizeof pat, "--set %s=", key);
	const char *p = strstr(g_err, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* The camera keys' frames of the dry run's YAML ("    - frame: N"). */
static int key_frames(int *fr, int max)
{
	int n = 0;
	for (const char *p = g_out; (p = strstr(p, "    - frame: ")) && n < max; p++)
		fr[n++] = atoi(p + strlen("    - frame: "));
	return n;
}

/* The dry run's lines, less the one that reads the free memory now. */
static void stable_lines(const char *in, char *out, size_t len)
{
	size_t k = 0;
	for (const char *p = in; *p;) {
		size_t n = strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0);
		if (!(n > 14 && strncmp(p, "# host memory:", 14) == 0) && k + n < len) {
			memcpy(out + k, p, n);
			k += n;
		}
		p += n;
	}
	out[k] = 0;
}

#define QUIET_OUTS "--set output.video=%s/v.mp4 --set output.png_dir= --set output.stats= " \
	"--set output.preview="

/* Every shipped single-run scene shrinks to a scene the loader accepts,
 * within the budget: the stereo one to a height of two even halves (a
 * 786 x 786 top-bottom frame was refused), the GADGET-2 example only where
 * its file is (it is not in the repository). */
START_TEST(every_shipped_scene_fits)
{
	static const char *scenes[] = {
		"plummer", "two-clusters", "galaxy-collision", "antennae", "mice",
		"minor-merger", "isolated-disk", "dusty-disk", "dome-collision",
		"vr-collision", "gadget2-galaxy",
	};
	char args[512];
	for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
		if (strcmp(scenes[i], "gadget2-galaxy") == 0 &&
		    access("../shared/data/gadget2-ics/galaxy_littleendian.dat", R_OK) != 0)
			continue;
		snprintf(args, sizeof args, "scenes/%s.yaml --preview 60s --dry-run", scenes[i]);
		int rc = run(args);
		ck_assert_msg(rc == 0, "%s: exit %d:\n%s", args, rc, g_err);
		double t = total_s();
		ck_assert_msg(t > 42 && t < 78, "%s: %g s, not 60 s +- 30 %%", args, t);
	}
	/* the stereo scene over budgets whose sizes fell on 2 mod 4 when sides
	 * were rounded to even only (15 s, 30 s, 40 s, 45 s, 2 min at these
	 * rates) */
	static const char *budgets[] = {"10s", "15s", "20s", "30s", "40s", "45s", "90s", "2m"};
	for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
		snprintf(args, sizeof args, "scenes/vr-collision.yaml --preview %s --dry-run", budgets[i]);
		int rc = run(args);
		ck_assert_msg(rc == 0, "%s: exit %d:\n%s", args, rc, g_err);
		long h = set_value("render.height");
		ck_assert_msg(h > 0 && h % 4 == 0, "%s: render.height %ld", args, h);
	}
}
END_TEST

START_TEST(plummer_fits_budget)
{
	char args[1024];
	snprintf(args, sizeof args, "scenes/plummer.yaml --dry-run --preview 60s");
	ck_assert_int_eq(run(args), 0);
	ck_assert_msg(fabs(total_s() - 60) <= 18, "estimate %g s for 60 s", total_s());
	ck_assert_int_lt(set_value("bodies.0.count"), 20000);
	ck_assert_int_lt(set_value("output.frames"), 240);
	/* the simulated time is kept: (frames - 1) x steps_per_frame */
	long fr = set_value("output.frames"), spf = set_value("simulation.steps_per_frame");
	ck_assert_msg(labs((fr - 1) * spf - 239 * 4) <= fr, "%ld x %ld steps", fr - 1, spf);
	/* aspect kept, even sizes */
	long w = set_value("render.width"), h = set_value("render.height");
	ck_assert(w % 2 == 0 && h % 2 == 0 && w < 1280);
	ck_assert_msg(fabs((double)w / h - 1280.0 / 720) < 0.02, "%ld x %ld", w, h);
	snprintf(args, sizeof args, "scenes/plummer.yaml --dry-run --preview 2m");
	ck_assert_int_eq(run(args), 0);
	ck_assert_msg(fabs(total_s() - 120) <= 36, "estimate %g s for 2m", total_s());
}
END_TEST

/* galaxy-collision: six components; keys at 0, 115, 260, 400, 599 of 600. */
START_TEST(galaxy_fits_budget_and_keys_rescaled)
{
	int before[16], after[16];
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run"), 0);
	int nk = key_frames(before, 16);
	ck_assert_int_eq(nk, 5);
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run --preview 90"), 0);
	ck_assert_msg(fabs(total_s() - 90) <= 27, "estimate %g s for 90 s", total_s());
	ck_assert_int_eq(key_frames(after, 16), nk);
	long fr = set_value("output.frames");
	ck_assert(fr > 2 && fr < 600);
	ck_assert_int_eq(after[0], 0);
	ck_assert_int_eq(after[nk - 1], fr - 1); /* the last frame to the last frame */
	for (int i = 1; i < nk - 1; i++) {
		double want = before[i] * (double)(fr - 1) / 599;
		ck_assert_msg(fabs(after[i] - want) <= 0.5 + 1e-9, "key %d at %d, want %g", i, after[i],
			      want);
	}
	ck_assert_int_lt(set_value("bodies.0.disk.count"), 200000);
	ck_assert_int_lt(set_value("bodies.1.halo.count"), 250000);
	ck_assert_ptr_null(strstr(g_err, "mass="));
}
END_TEST

/* A real run of the shrunk scene: every component's total mass as the
 * scene gives it (disk 5e10, bulge 1e10, halo 4e11 M_sun), with fewer bodies. */
START_TEST(galaxy_masses_kept)
{
	char args[1024], path[128];
	snprintf(path, sizeof path, "%s/init.csv", g_dir);
	snprintf(args, sizeof args, "scenes/galaxy-collision.yaml --preview 4 " QUIET_OUTS
		 " --set output.video= --set output.initial_state=%s --set output.resolved_scene=%s/r.yaml",
		 g_dir, path, g_dir);
	ck_assert_int_eq(run(args), 0);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	static const char *const comp[3] = {".disk,", ".bulge,", ".halo,"};
	const double want[3] = {5e10, 1e10, 4e11};
	double sum[2][3] = {{0}};
	long count = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *c = strchr(line, ',');
		if (!c || !strchr(c + 1, ',') || line[0] == 'i')
			continue;
		int g = strncmp(c + 1, "twin.", 5) == 0;
		for (int k = 0; k < 3; k++)
			if (strstr(c, comp[k]) && strstr(c, comp[k]) < strchr(c + 1, ',') + 1)
				sum[g][k] += strtod(strchr(c + 1, ',') + 1, NULL);
		count++;
	}
	fclose(f);
	ck_assert_int_lt(count, 5000);
	ck_assert_int_ge(count, 600);
	for (int g = 0; g < 2; g++)
		for (int k = 0; k < 3; k++)
			ck_assert_close(sum[g][k], want[k], 0, 1e-6);
}
END_TEST

/* A snapshot entry (written by a 3000-body plummer run): bodies.0.subsample
 * lowered; its kept particles carry 1/subsample of their mass, so the total
 * (1) is kept within the hash's scatter (1/sqrt(kept) ~ 4 %: 15 % allowed). */
START_TEST(snapshot_subsampled)
{
	char args[2048], path[160];
	snprintf(args, sizeof args, "scenes/plummer.yaml -q --set bodies.0.count=3000 "
		 "--set output.frames=1 --set render.width=64 --set render.height=36 " QUIET_OUTS
		 " --set output.video= --set output.snapshots.dir=%s/s --set output.resolved_scene=%s/r0.yaml",
		 g_dir, g_dir, g_dir);
	ck_assert_int_eq(run(args), 0);
	snprintf(path, sizeof path, "%s/snap.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("units: nbody\nsimulation: {softening: 0.02, dt: 0.005, steps_per_frame: 4}\n"
	      "bodies:\n  - {name: cl, model: snapshot, file: s/snap_000.hdf5}\n"
	      "camera: {keys: [{frame: 0, position: [0, -9, 3.5], target: [0, 0, 0]}]}\n"
	      "render: {width: 640, height: 360}\noutput: {frames: 60, video: \"\"}\n", f);
	fclose(f);
	snprintf(args, sizeof args, "%s --preview 1s --set output.initial_state=%s/i.csv "
		 "--set output.resolved_scene=%s/r.yaml", path, g_dir, g_dir);
	ck_assert_int_eq(run(args), 0);
	ck_assert_ptr_nonnull(strstr(g_err, "--set bodies.0.subsample=0."));
	snprintf(path, sizeof path, "%s/i.csv", g_dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	double mass = 0;
	long n = 0;
	while (fgets(line, sizeof line, f)) {
		char *c = strchr(line, ',');
		if (line[0] != 'i' && c && (c = strchr(c + 1, ',')) != NULL) {
			mass += strtod(c + 1, NULL);
			n++;
		}
	}
	fclose(f);
	ck_assert_int_lt(n, 2000);
	ck_assert_int_ge(n, 100);
	ck_assert_close(mass, 1.0, 0, 0.15);
}
END_TEST

/* The dry run's "# bodies: N". */
static long dry_bodies(void)
{
	const char *p = strstr(g_out, "# bodies: ");
	ck_assert_msg(p != NULL, "no body count in:\n%s", g_out);
	return strtol(p + strlen("# bodies: "), NULL, 10);
}

/* The value of "  KEY: V" in the dry run's YAML (first match). */
static double yaml_value(const char *key)
{
	char pat[96];
	snprintf(pat, sizeof pat, "\n  %s: ", key);
	const char *p = strstr(g_out, pat);
	ck_assert_msg(p != NULL, "no %s in the resolved scene", key);
	return strtod(p + strlen(pat), NULL);
}

/* Over budget at the default accuracy, the fit takes the draft preset
 * (said, and in the list), which the loader applies to the list's steps
 * per frame with the frame time kept (dt 0.5 Myr x the list's value); the
 * bodies it buys: at least 1.5x those of the same budget at the default
 * accuracy, which a user's own --set keeps (the list has no preset). */
START_TEST(draft_chosen_for_more_bodies)
{
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run --preview 60s"), 0);
	ck_assert_ptr_nonnull(strstr(g_err, "--set simulation.accuracy=draft --set "));
	ck_assert_ptr_nonnull(strstr(g_err, "--preview 60s: at the draft accuracy"));
	ck_assert_ptr_nonnull(strstr(g_out, "accuracy: default  # draft applied"));
	long spf = set_value("simulation.steps_per_frame");
	ck_assert_int_gt(spf, 6);
	ck_assert_close(yaml_value("steps_per_frame"), (spf + 2) / 3, 0, 0);
	ck_assert_close(yaml_value("dt") * yaml_value("steps_per_frame"), 0.5 * spf, 0, 1e-12);
	ck_assert_close(yaml_value("softening"), 0.3, 0, 1e-12);
	ck_assert_close(yaml_value("theta"), 0.5, 0, 0); /* given in the file: kept */
	ck_assert_msg(fabs(total_s() - 60) <= 18, "estimate %g s for 60 s", total_s());
	long n_draft = dry_bodies();
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run --preview 60s "
			     "--set simulation.accuracy=default"), 0);
	ck_assert_ptr_null(strstr(g_err, "accuracy=draft"));
	ck_assert_ptr_null(strstr(g_err, "at the draft accuracy"));
	ck_assert_close(yaml_value("steps_per_frame"), set_value("simulation.steps_per_frame"), 0, 0);
	ck_assert_msg(fabs(total_s() - 60) <= 18, "estimate %g s for 60 s", total_s());
	long n_default = dry_bodies();
	ck_assert_msg(n_draft >= 1.5 * n_default, "draft %ld bodies, default %ld", n_draft, n_default);
}
END_TEST

/* The budget goes to the bodies the frames show: a dark halo keeps half
 * the drawn parts' share (the scene: 250k halo to 200k disk bodies), and
 * the pixels shrink faster than the frames. */
START_TEST(bodies_before_pixels)
{
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run --preview 90s"), 0);
	double disk = set_value("bodies.0.disk.count"), halo = set_value("bodies.0.halo.count");
	ck_assert_msg(fabs(halo / disk - 0.5 * 250000 / 200000) < 0.01, "halo %g, disk %g", halo,
		      disk);
	double px = (double)set_value("render.width") * set_value("render.height") / (1920 * 1080);
	double frames = (double)set_value("output.frames") / 600;
	ck_assert_msg(px < 0.75 * frames, "pixels x%g, frames x%g", px, frames);
}
END_TEST

/* The printed list, given back as --set options: the same resolved scene. */
START_TEST(printed_list_resolves_the_same)
{
	static char a[131072], b[131072];
	char list[8192], args[10240];
	ck_assert_int_eq(run("scenes/galaxy-collision.yaml --dry-run --preview 45s"), 0);
	set_list(list, sizeof list);
	stable_lines(g_out, a, sizeof a);
	snprintf(args, sizeof args, "scenes/galaxy-collision.yaml --dry-run %s", list);
	ck_assert_int_eq(run(args), 0);
	stable_lines(g_out, b, sizeof b);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_null(strstr(g_err, "--preview"));
}
END_TEST

START_TEST(fitting_scene_left_as_it_is)
{
	static char a[131072], b[131072];
	ck_assert_int_eq(run("scenes/plummer.yaml --dry-run"), 0);
	stable_lines(g_out, a, sizeof a);
	ck_assert_int_eq(run("scenes/plummer.yaml --dry-run --preview 1h"), 0);
	stable_lines(g_out, b, sizeof b);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(g_err, "already fits"));
}
END_TEST

/* Under the least scene: exit 2 before any work, naming the minimum; that
 * minimum is accepted and fits. */
START_TEST(too_small_budget_names_minimum)
{
	char args[1024], path[128];
	snprintf(args, sizeof args, "scenes/galaxy-collision.yaml --preview 0.5s " QUIET_OUTS, g_dir);
	ck_assert_int_eq(run(args), 2);
	const char *p = strstr(g_err, "the minimum is --preview ");
	ck_assert_msg(p != NULL, "no minimum in:\n%s", g_err);
	double least = strtod(p + strlen("the minimum is --preview "), NULL);
	ck_assert(least > 0.5);
	snprintf(path, sizeof path, "%s/v.mp4", g_dir);
	ck_assert_int_ne(access(path, F_OK), 0); /* nothing written */
	snprintf(args, sizeof args, "scenes/galaxy-collision.yaml --dry-run --preview %gs", least);
	ck_assert_int_eq(run(args), 0);
	ck_assert_msg(total_s() <= least * 1.3, "estimate %g s for %g s", total_s(), least);
	ck_assert_int_eq(run("scenes/plummer.yaml --dry-run --preview 5x"), 2);
	ck_assert_ptr_nonnull(strstr(g_err, "--preview: expected a time"));
	ck_assert_int_eq(run("scenes/plummer.yaml --dry-run --preview 0"), 2);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("preview");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_shipped_scene_fits);
	tcase_add_test(tc, plummer_fits_budget);
	tcase_add_test(tc, galaxy_fits_budget_and_keys_rescaled);
	tcase_add_test(tc, galaxy_masses_kept);
	tcase_add_test(tc, snapshot_subsampled);
	tcase_add_test(tc, draft_chosen_for_more_bodies);
	tcase_add_test(tc, bodies_before_pixels);
	tcase_add_test(tc, printed_list_resolves_the_same);
	tcase_add_test(tc, fitting_scene_left_as_it_is);
	tcase_add_test(tc, too_small_budget_names_minimum);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
