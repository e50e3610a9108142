/* test_batch_signals.c - SIGINT, SIGTERM and SIGHUP stop a run, or a batch,
 * within about a second, even in the middle of a long frame or a long force
 * sum: exit 130, the MP4 finished with the frames made, no partial files
 * (app/signals.c, the stop checks in engine/engine.c and sim/direct.c).
 *
 * Program level (NB_BIN, in a temporary directory): a run of 100 bodies
 * with 1e6 steps per frame (tens of seconds a frame) gets the signal once
 * its first frame is written; a 60,000-body direct run gets it during its
 * first force sum; a batch gets SIGHUP while its run is in a long frame.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_batch_signals && NB_BIN=build-cpu/nbody-render build-cpu/tests/test_batch_signals */
#include <fcntl.h>
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

#define STOP_LIMIT_S 2.0 /* the promise: stopped within about a second */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Start the program with ARGV (argv[0] ignored) in DIR, output to DIR/log. */
static pid_t start(const char *dir, char *const argv[])
{
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		char log[2 * PATH_MAX];
		snprintf(log, sizeof log, "%s/log", dir);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0 || chdir(dir) != 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		/* SIGHUP at its default, as a terminal starts a program: under
		 * nohup (a test run started with it) it would be inherited
		 * ignored, and the program keeps an ignored SIGHUP ignored */
		signal(SIGHUP, SIG_DFL);
		execv(g_bin, argv);
		_exit(127);
	}
	return pid;
}

/* Wait up to SECONDS for DIR/REL to exist. */
static int wait_for(const char *dir, const char *rel, double seconds)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	for (double t0 = now(); now() - t0 < seconds; usleep(5000))
		if (access(p, F_OK) == 0)
			return 1;
	return 0;
}

/* The pids of PID's children (Linux /proc), up to max. */
static int children_of(pid_t pid, pid_t *kids, int max)
{
	char p[64];
	int n = 0;
	long k;
	snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(p, "r");
	while (f && n < max && fscanf(f, "%ld", &k) == 1)
		kids[n++] = (pid_t)k;
	if (f)
		fclose(f);
	return n;
}

/* Send SIG to PID; its exit status if it exits within STOP_LIMIT_S, else
 * -1 (it and KIDS are then killed, so nothing outlives the test). */
static int signal_and_wait(pid_t pid, int sig, const pid_t *kids, int nkids, double *took)
{
	int ws;
	double t0 = now();
	ck_assert_int_eq(kill(pid, sig), 0);
	while (now() - t0 < STOP_LIMIT_S) {
		pid_t got = waitpid(pid, &ws, WNOHANG);
		if (got == pid) {
			*took = now() - t0;
			return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		}
		usleep(5000);
	}
	*took = now() - t0;
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	for (int i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	return -1;
}

/* No temporary output left anywhere under DIR. */
static void check_no_partials(const char *dir)
{
	ck_assert_int_eq(sh("cd '%s' && test -z \"$(find . -name '.*.partial*' -o -name '*.tmp')\"%s", dir, ""), 0);
}

/* DIR/REL is an MP4 ffprobe reads FRAMES video frames from (file check
 * only where ffprobe is missing). */
static void check_video(const char *dir, const char *rel, int frames)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd,
		 "cd '%%s' && test -s %s && { ! command -v ffprobe >/dev/null || test \"$(ffprobe -v error "
		 "-count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 %s)\" = %d; }",
		 rel, rel, frames);
	ck_assert_msg(sh(cmd, dir, "") == 0, "%s is not a finished video of %d frames", rel, frames);
}

static void rm_dir(const char *dir)
{
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}

/* A single run with 1e6 steps per frame gets SIG after its first frame. */
static void long_frame_run_stops(int sig)
{
	char dir[] = "/tmp/nb-signals-XXXXXX", scene[PATH_MAX + 32];
	setup_paths();
	ck_assert(mkdtemp(dir));
	snprintf(scene, sizeof scene, "%s/plummer-small.yaml", g_data);
	char *argv[] = {"nbody-render", scene, "--set", "bodies.0.count=100", "--set",
			"simulation.steps_per_frame=1000000", "--set", "output.frames=3", "--set",
			"render.width=32", "--set", "render.height=32", NULL};
	pid_t pid = start(dir, argv);
	ck_assert_msg(wait_for(dir, "out/plummer-frames/frame_00000.png", 30), "no first frame");
	usleep(200000); /* well inside the 1e6 steps of frame 1 */
	double took;
	int rc = signal_and_wait(pid, sig, NULL, 0, &took);
	ck_assert_msg(rc == 130, "signal %d: exit %d after %.2f s (want 130 within %.1f s)", sig, rc, took,
		      STOP_LIMIT_S);
	check_video(dir, "out/plummer.mp4", 1);
	ck_assert_int_eq(sh("cd '%s' && test $(wc -l < out/plummer-stats.csv) = 2%s", dir, ""), 0);
	check_no_partials(dir);
	rm_dir(dir);
}

START_TEST(sigterm_stops_a_long_frame_within_a_second)
{
	long_frame_run_stops(SIGTERM);
}
END_TEST

START_TEST(sighup_stops_like_sigterm)
{
	long_frame_run_stops(SIGHUP);
}
END_TEST

START_TEST(sigint_stops_a_long_direct_force_sum)
{
	/* 60,000 bodies, direct: one force sum is ~1.8e9 pairs, seconds on two
	 * cores. The signal comes when the initial state is written, just before
	 * the first force sum. */
	char dir[] = "/tmp/nb-signals-XXXXXX", scene[PATH_MAX + 32];
	setup_paths();
	ck_assert(mkdtemp(dir));
	snprintf(scene, sizeof scene, "%s/plummer-small.yaml", g_data);
	char *argv[] = {"nbody-render", scene, "--set", "bodies.0.count=60000", "--set",
			"simulation.steps_per_frame=1", "--set", "output.frames=2", "--set",
			"render.width=32", "--set", "render.height=32", NULL};
	pid_t pid = start(dir, argv);
	ck_assert_msg(wait_for(dir, "out/plummer-initial.csv", 30), "no initial state");
	double took;
	int rc = signal_and_wait(pid, SIGINT, NULL, 0, &took);
	ck_assert_msg(rc == 130, "exit %d after %.2f s (want 130 within %.1f s)", rc, took, STOP_LIMIT_S);
	check_no_partials(dir);
	rm_dir(dir);
}
END_TEST

START_TEST(sighup_stops_a_batch_and_its_run)
{
	char dir[] = "/tmp/nb-signals-XXXXXX", path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	fprintf(f, "output_dir: o\n"
		   "set: {output.frames: 3, render.width: 32, render.height: 32, bodies.0.count: 100,\n"
		   "      simulation.steps_per_frame: 1000000}\n"
		   "runs:\n"
		   "  - {scene: '%s/plummer-small.yaml', name: slow}\n"
		   "  - {scene: '%s/plummer-small.yaml', name: later, set: {seed: 2}}\n",
		g_data, g_data);
	fclose(f);
	char *argv[] = {"nbody-render", "batch", "b.yaml", NULL};
	pid_t pid = start(dir, argv);
	ck_assert_msg(wait_for(dir, "o/slow/plummer-frames/frame_00000.png", 30), "no first frame");
	usleep(200000);
	pid_t kids[8] = {0};
	int nkids = children_of(pid, kids, 8);
	double took;
	int rc = signal_and_wait(pid, SIGHUP, kids, nkids, &took);
	ck_assert_msg(rc == 130, "exit %d after %.2f s (want 130 within %.1f s)", rc, took, STOP_LIMIT_S);
	for (int i = 0; i < nkids; i++) /* the run has ended too */
		ck_assert_msg(kill(kids[i], 0) != 0, "run process %d still alive", (int)kids[i]);
	batch_check_report(dir, "o", "\" \".join(r[\"name\"]+\":\"+r[\"status\"] for r in d[\"runs\"])",
			   "slow:interrupted later:not run");
	check_video(dir, "o/slow/plummer.mp4", 1);
	check_no_partials(dir);
	rm_dir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("batch_signals");
	TCase *p = tcase_create("program");
	tcase_set_timeout(p, 120);
	tcase_add_test(p, sigterm_stops_a_long_frame_within_a_second);
	tcase_add_test(p, sighup_stops_like_sigterm);
	tcase_add_test(p, sigint_stops_a_long_direct_force_sum);
	tcase_add_test(p, sighup_stops_a_batch_and_its_run);
	suite_add_tcase(s, p);
	return s;
}

NB_CHECK_MAIN(make_suite)
