/* test_batch_warn.c - a batch's warnings about keys that do nothing
 * (scene/scene_warn.c, said by app/batch.c from app/batch_scene.c's
 * planning): each run's warning is said once, with the run's name, in the
 * dry run and in the run (shared simulation or not); `batch --strict`
 * makes it an error, exit 2 before any output is written, even with
 * --quiet and in the dry run; a batch without such keys says nothing.
 * Program level (NB_BIN, in a temporary directory).
 *
 *   make CUDA=0 BUILD=/tmp/b /tmp/b/nbody-render /tmp/b/tests/test_batch_warn && NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_batch_warn */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "test_batch_util.h"

/* Small, fast runs: 100 bodies, 2 frames of 32 x 32. */
#define SMALL "set: {output.frames: 2, render.width: 32, render.height: 32, bodies.0.count: 100}\n"

/* What scene_warn.c says of render.smoothing under the default style. */
#define IGNORED "render.smoothing: does nothing with render.style: stars"

/* A batch in a new directory dir: run "plain", and, with loud, run "loud"
 * that sets render.smoothing (ignored under style stars) on line 5. */
static void write_batch(char *dir, int loud)
{
	char path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	fprintf(f, "output_dir: o\n" SMALL "runs:\n  - {scene: '%s/plummer-small.yaml', name: plain}\n",
		g_data);
	if (loud)
		fprintf(f, "  - {scene: '%s/plummer-small.yaml', name: loud, set: {render.smoothing: adaptive}}\n",
			g_data);
	fclose(f);
}

/* DIR/log read into buf, then removed (the next command starts a new one). */
static void take_log(const char *dir, char *buf, size_t len)
{
	char p[PATH_MAX + 8];
	snprintf(p, sizeof p, "%s/log", dir);
	FILE *f = fopen(p, "r");
	buf[0] = '\0';
	if (f) {
		buf[fread(buf, 1, len - 1, f)] = '\0';
		fclose(f);
	}
	remove(p);
}

/* Lines of TEXT that contain S. */
static int lines_with(const char *text, const char *s)
{
	int n = 0;
	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		char line[4096];
		snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
		n += strstr(line, s) != NULL;
		l += len + (end != NULL);
	}
	return n;
}

static int exists(const char *dir, const char *rel)
{
	char p[2 * PATH_MAX];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return stat(p, &st) == 0;
}

static void remove_dir(const char *dir)
{
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}

/* The one warning: loud's, named and placed where the batch file set it. */
static void expect_one_warning(const char *log, const char *what)
{
	ck_assert_msg(lines_with(log, "warning:") == 1, "%s: expected one warning, got:\n%s", what, log);
	ck_assert_msg(lines_with(log, "nbody-render: warning: run 2/2 loud: b.yaml:5:") == 1,
		      "%s: the warning lacks the run's name and place:\n%s", what, log);
	ck_assert_msg(lines_with(log, IGNORED) == 1, "%s: the warning lacks '%s':\n%s", what, IGNORED, log);
	ck_assert_msg(!lines_with(log, "warning: run 1/2") && !lines_with(log, "error"), "%s:\n%s", what, log);
}

START_TEST(ignored_key_warns_once_with_the_run_name_in_dry_run_and_run)
{
	char dir[] = "/tmp/nb-bwarn-XXXXXX", log[64 * 1024];
	write_batch(dir, 1);
	ck_assert_int_eq(batch_in(dir, "b.yaml --dry-run"), 0);
	take_log(dir, log, sizeof log);
	expect_one_warning(log, "dry run");
	ck_assert_msg(strstr(log, "name: \"loud\""), "no listing:\n%s", log);
	ck_assert(!exists(dir, "o"));

	/* one process films both runs (shared simulation), reloading each scene */
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 0);
	take_log(dir, log, sizeof log);
	expect_one_warning(log, "shared run");
	ck_assert(exists(dir, "o/loud/plummer.scene.yaml"));

	/* a process per run, two at a time */
	ck_assert_int_eq(batch_in(dir, "b.yaml --no-share --jobs 2"), 0);
	take_log(dir, log, sizeof log);
	expect_one_warning(log, "runs of their own");

	/* --quiet: no warning, and the runs still go */
	ck_assert_int_eq(batch_in(dir, "b.yaml --quiet --no-share"), 0);
	take_log(dir, log, sizeof log);
	ck_assert_msg(!strstr(log, "warning"), "quiet:\n%s", log);
	remove_dir(dir);
}
END_TEST

START_TEST(strict_exits_2_before_any_output_is_written)
{
	static const char *const args[] = {"b.yaml --strict", "b.yaml --strict --dry-run",
					   "b.yaml --strict --quiet", "b.yaml --strict --no-share --jobs 2"};
	char dir[] = "/tmp/nb-bwarn-XXXXXX", log[64 * 1024];
	write_batch(dir, 1);
	for (int i = 0; i < (int)(sizeof args / sizeof args[0]); i++) {
		ck_assert_msg(batch_in(dir, args[i]) == 2, "%s", args[i]);
		take_log(dir, log, sizeof log);
		ck_assert_msg(lines_with(log, "nbody-render: error: run 2/2 loud: b.yaml:5:") == 1 &&
				      lines_with(log, IGNORED) == 1 && lines_with(log, "(an error under --strict)") == 1,
			      "%s: expected the one error:\n%s", args[i], log);
		ck_assert_msg(!strstr(log, "warning") && !strstr(log, "runs:") && !strstr(log, "started"),
			      "%s: went on:\n%s", args[i], log);
		ck_assert_msg(!exists(dir, "o"), "%s: wrote o/", args[i]);
	}
	remove_dir(dir);
}
END_TEST

START_TEST(no_ignored_key_no_warning_and_strict_runs)
{
	char dir[] = "/tmp/nb-bwarn-XXXXXX", log[64 * 1024];
	write_batch(dir, 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --dry-run --strict"), 0);
	take_log(dir, log, sizeof log);
	ck_assert_msg(strstr(log, "name: \"plain\"") && !strstr(log, "warning") && !strstr(log, "error"),
		      "dry run:\n%s", log);
	ck_assert_int_eq(batch_in(dir, "b.yaml --strict"), 0);
	take_log(dir, log, sizeof log);
	ck_assert_msg(!strstr(log, "warning") && !strstr(log, "error"), "run:\n%s", log);
	ck_assert(exists(dir, "o/plain/plummer.scene.yaml"));
	remove_dir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("batch_warn");
	TCase *p = tcase_create("program");
	tcase_set_timeout(p, 120);
	tcase_add_test(p, ignored_key_warns_once_with_the_run_name_in_dry_run_and_run);
	tcase_add_test(p, strict_exits_2_before_any_output_is_written);
	tcase_add_test(p, no_ignored_key_no_warning_and_strict_runs);
	suite_add_tcase(s, p);
	return s;
}

NB_CHECK_MAIN(make_suite)
