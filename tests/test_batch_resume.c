/* test_batch_resume.c - `nbody-render batch --resume` redoes exactly the
 * runs whose outputs are damaged or unfinished, and the batch command line
 * and sweeps are bounded (docs/batch.md, Resuming; Options).
 *
 * Program level (NB_BIN, in a temporary directory): a four-run batch, then
 * one frame deleted, one video truncated, one statistics file cut short:
 * --resume runs those three again and skips the fourth; then a frame
 * without its end, a preview cut short, an empty video. A run SIGKILLed while it redoes its outputs is redone too.
 * --jobs and sweep sizes past their limits are bad input (exit 2) before
 * anything is written.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_batch_resume && NB_BIN=build-cpu/nbody-render build-cpu/tests/test_batch_resume */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "test_batch_util.h"

/* A fresh temporary directory with b.yaml: NRUNS runs p-1 ... of a tiny
 * Plummer sphere, 3 frames, SPF steps per frame, every output. */
static void make_batch(char *dir, int nruns, int spf)
{
	char path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	fprintf(f, "output_dir: o\n"
		   "set: {output.frames: 3, render.width: 32, render.height: 32, bodies.0.count: 100,\n"
		   "      simulation.steps_per_frame: %d, output.preview: prev.jpg}\n"
		   "runs:\n"
		   "  - scene: '%s/plummer-small.yaml'\n"
		   "    name: 'p-{seed}'\n"
		   "    sweep: {seed: {from: 1, to: %d, step: 1}}\n",
		spf, g_data, nruns);
	fclose(f);
}

static void rm_dir(const char *dir)
{
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}

/* "name:status ..." of every run in DIR/o/batch-report.json. */
static void check_statuses(const char *dir, const char *want)
{
	batch_check_report(dir, "o", "\" \".join(r[\"name\"]+\":\"+r[\"status\"] for r in d[\"runs\"])", want);
}

/* Shell command CMD (with %s = DIR) succeeds. */
static int in_dir(const char *dir, const char *cmd)
{
	char full[4 * PATH_MAX];
	snprintf(full, sizeof full, "cd '%%s' && %s", cmd);
	return sh(full, dir, "");
}

START_TEST(resume_redoes_exactly_the_runs_with_damaged_outputs)
{
	char dir[] = "/tmp/nb-resume-XXXXXX";
	make_batch(dir, 4, 2);
	ck_assert_int_eq(batch_in(dir, "b.yaml -q --jobs 2"), 0);
	check_statuses(dir, "p-1:ok p-2:ok p-3:ok p-4:ok");

	/* damage three runs, each in a different output; p-4 is untouched */
	ck_assert_int_eq(in_dir(dir, "rm o/p-1/plummer-frames/frame_00001.png"), 0);
	ck_assert_int_eq(in_dir(dir, "truncate -s -64 o/p-2/plummer.mp4"), 0);
	ck_assert_int_eq(in_dir(dir, "truncate -s -5 o/p-3/plummer-stats.csv"), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml -q --jobs 2 --resume"), 0);
	check_statuses(dir, "p-1:ok p-2:ok p-3:ok p-4:skipped");
	/* the redone outputs are whole again: ffprobe (independent of the
	 * program) counts 3 frames in the video; the frame is back */
	ck_assert_int_eq(in_dir(dir, "test -s o/p-1/plummer-frames/frame_00001.png"), 0);
	if (system("command -v ffprobe >/dev/null 2>&1") == 0)
		ck_assert_int_eq(in_dir(dir, "test \"$(ffprobe -v error -count_frames -select_streams v:0 "
					     "-show_entries stream=nb_read_frames -of csv=p=0 o/p-2/plummer.mp4)\" = 3"), 0);

	/* a frame with its IEND cut off, a preview cut short, a video of zero bytes */
	ck_assert_int_eq(in_dir(dir, "truncate -s -12 o/p-1/plummer-frames/frame_00002.png"), 0);
	ck_assert_int_eq(in_dir(dir, "truncate -s -2 o/p-2/prev.jpg"), 0);
	ck_assert_int_eq(in_dir(dir, ": > o/p-3/plummer.mp4"), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --jobs 2 --resume"), 0); /* not quiet: the reasons are logged */
	check_statuses(dir, "p-1:ok p-2:ok p-3:ok p-4:skipped");
	ck_assert_int_eq(in_dir(dir, "grep -q 'p-3/plummer.mp4 is empty' log"), 0);
	rm_dir(dir);
}
END_TEST

/* Wait up to SECONDS for PATH (relative to DIR) to exist. */
static int wait_for(const char *dir, const char *rel, double seconds)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	for (int i = 0; i < (int)(seconds * 200); i++) {
		if (access(p, F_OK) == 0)
			return 1;
		usleep(5000);
	}
	return 0;
}

START_TEST(run_sigkilled_while_redoing_is_not_complete)
{
	char dir[] = "/tmp/nb-resume-XXXXXX", cmd[4 * PATH_MAX];
	/* each frame 0.25 s or more of steps: the redo is still running when killed */
	make_batch(dir, 1, 10000);
	ck_assert_int_eq(batch_in(dir, "b.yaml -q"), 0);
	/* its first frame deleted: --resume redoes the run. Kill the batch and its
	 * run with SIGKILL once the frame is written again (all else is old and
	 * whole, so only a completion mark removed first can tell). */
	ck_assert_int_eq(in_dir(dir, "rm o/p-1/plummer-frames/frame_00000.png"), 0);
	snprintf(cmd, sizeof cmd, "cd '%s' && exec '%s' batch b.yaml -q --resume >>log 2>&1", dir, g_bin);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	ck_assert_msg(wait_for(dir, "o/p-1/plummer-frames/frame_00000.png", 20), "the redo wrote no frame");
	snprintf(cmd, sizeof cmd, "pkill -KILL -P %d; kill -KILL %d", (int)pid, (int)pid);
	ck_assert_int_eq(system(cmd), 0);
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	usleep(100000); /* the run's process is gone too */
	ck_assert_int_eq(in_dir(dir, "test ! -e o/p-1/plummer.scene.yaml"), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml -q --resume"), 0);
	check_statuses(dir, "p-1:ok");
	rm_dir(dir);
}
END_TEST

START_TEST(absurd_jobs_are_bad_input)
{
	char dir[] = "/tmp/nb-resume-XXXXXX", args[256];
	const char *bad[] = {"0", "-1", "1e9", "abc", "4x", "' 4'", "257", "1024", "99999999999999999999", "''"};
	make_batch(dir, 1, 2);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(args, sizeof args, "b.yaml --jobs %s", bad[i]);
		ck_assert_msg(batch_in(dir, args) == 2, "--jobs %s was accepted", bad[i]);
	}
	ck_assert_int_eq(in_dir(dir, "test $(grep -c 'error: --jobs: expected a whole number from 1 to 256' log) = 10"), 0);
	ck_assert_int_eq(in_dir(dir, "test ! -e o"), 0); /* nothing ran */
	/* the limit itself is fine */
	ck_assert_int_eq(batch_in(dir, "b.yaml --jobs 256 --dry-run"), 0);
	rm_dir(dir);
}
END_TEST

START_TEST(huge_sweep_is_refused_with_its_count_before_any_work)
{
	char dir[] = "/tmp/nb-resume-XXXXXX", path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	/* 5 keys of 100 values: 1e10 runs */
	fprintf(f, "output_dir: o\nruns:\n  - scene: '%s/plummer-small.yaml'\n    sweep:\n", g_data);
	const char *keys[] = {"seed", "render.width", "render.height", "bodies.0.count", "output.fps"};
	for (int k = 0; k < 5; k++)
		fprintf(f, "      %s: {from: 2, to: 200, step: 2}\n", keys[k]);
	fclose(f);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_eq(in_dir(dir, "grep -q 'b.yaml:3:5: runs.0.sweep: expands to 10000000000 runs "
				     "(100 x 100 x 100 x 100 x 100 values' log"), 0);
	ck_assert_int_eq(in_dir(dir, "grep -q 'more than the 10000 runs a batch may have' log"), 0);
	ck_assert_int_eq(in_dir(dir, "test ! -e o"), 0);
	ck_assert((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec) < 5);

	/* two entries within the limit alone but not together: the sum is counted */
	f = fopen(path, "w");
	ck_assert(f);
	fprintf(f, "output_dir: o\nruns:\n"
		   "  - {scene: '%s/plummer-small.yaml', name: 'a{seed}', sweep: {seed: {from: 1, to: 6000, step: 1}}}\n"
		   "  - {scene: '%s/plummer-small.yaml', name: 'b{seed}', sweep: {seed: {from: 1, to: 5000, step: 1}}}\n",
		g_data, g_data);
	fclose(f);
	ck_assert_int_eq(batch_in(dir, "b.yaml --dry-run"), 2);
	ck_assert_int_eq(in_dir(dir, "grep -q 'runs.1.sweep: expands to 5000 runs (5000 values; 11000 in the whole batch)' log"), 0);
	rm_dir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("batch_resume");
	TCase *p = tcase_create("program");
	tcase_set_timeout(p, 120);
	tcase_add_test(p, resume_redoes_exactly_the_runs_with_damaged_outputs);
	tcase_add_test(p, run_sigkilled_while_redoing_is_not_complete);
	tcase_add_test(p, absurd_jobs_are_bad_input);
	tcase_add_test(p, huge_sweep_is_refused_with_its_count_before_any_work);
	suite_add_tcase(s, p);
	return s;
}

NB_CHECK_MAIN(make_suite)
