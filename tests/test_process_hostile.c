/* test_process_hostile.c - the program's standard streams taken away
 * (issue 27, "Processes"): a closed pipe on stdout and stderr, a closed
 * stderr descriptor, a dry run into a closed pipe, a batch whose stderr
 * pipe closes. The promise (README, exit status): the run is never killed
 * mid-write by SIGPIPE; it finishes with its outputs complete and no
 * temporary `.NAME.<pid>-<token>.partial` file, and no message lands in an
 * output file. A dry run whose stdout is a closed pipe exits 1 with one
 * message (it could not deliver what it was asked for). A batch killed
 * with SIGKILL: its running run stops as on Ctrl-C, not orphaned.
 *
 * Program level (NB_BIN, each case in a temporary directory). The MPI
 * cases of the same section (bad input reported once, a rank killed) are
 * in tests/test_dist.c.
 *
 *   NB_BIN=build/nbody-render build/tests/test_process_hostile */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

/* snprintf into the array BUF, asserting that it fit */
#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)

static char g_bin[PATH_MAX], g_scene[PATH_MAX];

static void setup(void)
{
	ck_assert_msg(realpath(nb_bin(), g_bin), "NB_BIN %s not found", nb_bin());
	ck_assert(realpath("tests/data/plummer-small.yaml", g_scene));
}

/* A fresh temporary directory into DIR. */
static void tmpdir(char *dir, size_t len)
{
	ck_assert((size_t)snprintf(dir, len, "/tmp/nb-proc-XXXXXX") < len);
	ck_assert(mkdtemp(dir));
}

static void rmrf(const char *dir)
{
	char cmd[PATH_MAX + 32];
	FMT(cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The run's argv (NULL-terminated, into av): a small Plummer run of FRAMES
 * frames writing every kind of file output into DIR (argv[0] is g_bin). */
static void run_argv(const char *dir, int frames, char bufs[][PATH_MAX + 64], const char **av)
{
	static const char *const keys[] = {"output.video=%s/o/v.mp4",
					   "output.png_dir=%s/o/png",
					   "output.stats=%s/o/s.csv",
					   "output.initial_state=%s/o/i.csv",
					   "output.final_state=%s/o/f.csv",
					   "output.snapshots.dir=%s/o/snap",
					   "output.preview=%s/o/p.jpg"};
	int n = 0, k = 0;
	av[n++] = g_bin;
	av[n++] = g_scene;
	av[n++] = "--backend";
	av[n++] = "cpu";
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++, k++) {
		ck_assert((size_t)snprintf(bufs[k], PATH_MAX + 64, keys[i], dir) < PATH_MAX + 64);
		av[n++] = "--set";
		av[n++] = bufs[k];
	}
	snprintf(bufs[k], PATH_MAX + 64, "output.frames=%d", frames);
	av[n++] = "--set";
	av[n++] = bufs[k++];
	av[n++] = "--set";
	av[n++] = "output.snapshots.every=2";
	av[n++] = "--set";
	av[n++] = "bodies.0.count=300";
	av[n] = NULL;
}

/* How the child's standard streams are set up before exec. */
enum streams {
	PIPE_BOTH_HEAD,  /* stdout and stderr one pipe; the reader takes one line and leaves */
	PIPE_BOTH_GONE,  /* stdout and stderr one pipe whose reader is already gone */
	STDERR_CLOSED,   /* fd 2 closed (2>&-), stdout to /dev/null */
	STDOUT_GONE_ERR_FILE, /* stdout a pipe whose reader is gone, stderr to DIR/err */
};

/* Run av (av[0] the binary) in DIR with the streams MODE; its wait status. */
static int run_streams(const char *dir, const char *const *av, enum streams mode)
{
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL); /* as a shell starts a command */
		if (chdir(dir) != 0)
			_exit(127);
		int null = open("/dev/null", O_RDWR);
		if (mode == STDERR_CLOSED) {
			dup2(null, 1);
			close(2);
		} else if (mode == STDOUT_GONE_ERR_FILE) {
			char err[PATH_MAX + 8];
			snprintf(err, sizeof err, "%s/err", dir);
			int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(fd[1], 1);
			dup2(e, 2);
			close(e);
		} else {
			dup2(fd[1], 1);
			dup2(fd[1], 2);
		}
		close(null);
		close(fd[0]);
		close(fd[1]);
		execv(av[0], (char *const *)av);
		_exit(127);
	}
	close(fd[1]);
	if (mode == PIPE_BOTH_HEAD) { /* head -1 */
		char c;
		while (read(fd[0], &c, 1) == 1 && c != '\n')
			;
	}
	close(fd[0]);
	int ws = 0;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	return ws;
}

/* Number of files under DIR (recursively) whose name ends in ".partial". */
static int count_partial(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char p[PATH_MAX];
		FMT(p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			n += count_partial(p);
		size_t len = strlen(e->d_name);
		if (len > 8 && strcmp(e->d_name + len - 8, ".partial") == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Does the file PATH hold the bytes NEEDLE? */
static int file_holds(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "%s missing", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)len + 1);
	ck_assert(buf);
	ck_assert_int_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	buf[len] = '\0';
	int found = 0;
	for (long i = 0; i + (long)strlen(needle) <= len && !found; i++)
		found = memcmp(buf + i, needle, strlen(needle)) == 0;
	free(buf);
	return found;
}

static int exists(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	FMT(p, "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

/* Every output of run_argv's run with FRAMES frames is there, complete
 * (the resolved scene is written last: the run's completion mark), and no
 * temporary file is left. */
static void outputs_complete(const char *dir, int frames)
{
	static const char *const files[] = {"o/v.mp4", "o/s.csv", "o/i.csv", "o/f.csv", "o/p.jpg",
					    "o/v.scene.yaml", "o/snap/snap_000.hdf5"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		ck_assert_msg(exists(dir, files[i]), "%s/%s missing", dir, files[i]);
	char png[64];
	FMT(png, "o/png/frame_%05d.png", frames - 1);
	ck_assert_msg(exists(dir, png), "%s/%s missing", dir, png);
	ck_assert_msg(count_partial(dir) == 0, "temporary files left in %s", dir);
}

static void assert_exit(int ws, int status, const char *what)
{
	ck_assert_msg(!WIFSIGNALED(ws), "%s: killed by signal %d (%s)", what,
		      WIFSIGNALED(ws) ? WTERMSIG(ws) : 0, WIFSIGNALED(ws) ? strsignal(WTERMSIG(ws)) : "");
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == status, "%s: exit status %d, expected %d",
		      what, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, status);
}

/* `nbody-render s.yaml 2>&1 | head -1`: the reader leaves after the first
 * line, the run goes on and finishes (before: SIGPIPE at the next message,
 * .v.mp4.PID-TOKEN.partial and .s.csv...partial left, no video). */
START_TEST(closed_pipe_on_stdout_and_stderr_run_finishes)
{
	setup();
	char dir[64], bufs[12][PATH_MAX + 64];
	const char *av[40];
	tmpdir(dir, sizeof dir);
	run_argv(dir, 12, bufs, av);
	int ws = run_streams(dir, av, PIPE_BOTH_HEAD);
	assert_exit(ws, 0, "run | head -1");
	outputs_complete(dir, 12);
	/* and a pipe closed before the first message */
	rmrf(dir);
	tmpdir(dir, sizeof dir);
	run_argv(dir, 6, bufs, av);
	ws = run_streams(dir, av, PIPE_BOTH_GONE);
	assert_exit(ws, 0, "run into a closed pipe");
	outputs_complete(dir, 6);
	rmrf(dir);
}
END_TEST

/* `nbody-render s.yaml 2>&-`: no message may land in an output opened as
 * descriptor 2 (before: the progress lines "frame 1/6 ..." were written
 * into the MP4, exit 0, a video no player decodes). */
START_TEST(closed_stderr_no_message_in_outputs)
{
	setup();
	char dir[64], bufs[12][PATH_MAX + 64];
	const char *av[40];
	tmpdir(dir, sizeof dir);
	run_argv(dir, 6, bufs, av);
	int ws = run_streams(dir, av, STDERR_CLOSED);
	assert_exit(ws, 0, "run 2>&-");
	outputs_complete(dir, 6);
	static const char *const files[] = {"o/v.mp4", "o/s.csv", "o/i.csv", "o/f.csv",
					    "o/v.scene.yaml"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char p[PATH_MAX];
		FMT(p, "%s/%s", dir, files[i]);
		ck_assert_msg(!file_holds(p, "frame 1/6") && !file_holds(p, "bodies, 6 frames") &&
				      !file_holds(p, "done: 6 frames"),
			      "%s holds the program's messages", p);
	}
	if (system("command -v ffprobe >/dev/null 2>&1") == 0) {
		char cmd[PATH_MAX + 256];
		FMT(cmd, "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
			 "stream=nb_read_frames -of csv=p=0 %s/o/v.mp4 2>&1 | grep -qx 6", dir);
		ck_assert_msg(system(cmd) == 0, "%s/o/v.mp4 does not decode to 6 frames", dir);
	}
	rmrf(dir);
}
END_TEST

/* `nbody-render s.yaml --dry-run | head -0`: exit 1 and one message, not a
 * death by SIGPIPE (before: killed by SIGPIPE, status 141 in a shell). */
START_TEST(dry_run_into_closed_pipe_exits_1)
{
	setup();
	char dir[64], err[PATH_MAX];
	tmpdir(dir, sizeof dir);
	const char *av[] = {g_bin, g_scene, "--dry-run", NULL};
	int ws = run_streams(dir, av, STDOUT_GONE_ERR_FILE);
	assert_exit(ws, 1, "--dry-run into a closed pipe");
	FMT(err, "%s/err", dir);
	ck_assert_msg(file_holds(err, "Broken pipe"), "no message naming the broken pipe in %s", err);
	rmrf(dir);
}
END_TEST

/* A batch whose stdout and stderr pipe closes (`nbody-render batch b.yaml
 * 2>&1 | head -1`): the parent, which relays its runs' messages, goes on,
 * and every run finishes complete (before: the parent died of SIGPIPE and
 * its runs then at their next message, leaving temporary files). */
START_TEST(batch_with_closed_pipe_finishes)
{
	setup();
	char dir[64], path[PATH_MAX];
	tmpdir(dir, sizeof dir);
	FMT(path, "%s/b.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	fprintf(f,
		"output_dir: out\nruns:\n  - scene: %s\n    name: \"p-{seed}\"\n"
		"    set: {output.frames: 4, render.width: 64, render.height: 48, bodies.0.count: 200,\n"
		"          simulation.backend: cpu}\n"
		"    sweep: {seed: [1, 2]}\n",
		g_scene);
	fclose(f);
	const char *av[] = {g_bin, "batch", path, NULL};
	int ws = run_streams(dir, av, PIPE_BOTH_HEAD);
	assert_exit(ws, 0, "batch | head -1");
	ck_assert_msg(count_partial(dir) == 0, "temporary files left in %s", dir);
	ck_assert(exists(dir, "out/batch-report.json"));
	for (int s = 1; s <= 2; s++) {
		char rel[64];
		FMT(rel, "out/p-%d/plummer.scene.yaml", s);
		ck_assert_msg(exists(dir, rel), "%s/%s missing: run %d incomplete", dir, rel, s);
		FMT(rel, "out/p-%d/plummer.mp4", s);
		ck_assert_msg(exists(dir, rel), "%s/%s missing", dir, rel);
	}
	rmrf(dir);
}
END_TEST

/* `kill -9` of a batch: its run, a child in a process group of its own,
 * stops as on Ctrl-C (its MP4 finished with the frames made, no temporary
 * file) instead of going on alone (before: it went on writing with nobody
 * reading its messages and died of SIGPIPE at the next one, its
 * temporary files left). */
START_TEST(batch_killed_its_run_stops_cleanly)
{
	setup();
	char dir[64], path[PATH_MAX];
	tmpdir(dir, sizeof dir);
	FMT(path, "%s/b.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	fprintf(f,
		"output_dir: out\nruns:\n  - scene: %s\n    name: long\n"
		"    set: {output.frames: 2000, render.width: 64, render.height: 48,\n"
		"          bodies.0.count: 1000, simulation.backend: cpu}\n",
		g_scene);
	fclose(f);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		char log[PATH_MAX];
		snprintf(log, sizeof log, "%s/log", dir);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || chdir(dir) != 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(g_bin, g_bin, "batch", path, (char *)NULL);
		_exit(127);
	}
	FMT(path, "%s/out/long/plummer-frames/frame_00003.png", dir);
	int seen = 0;
	for (int i = 0; i < 6000 && !seen; i++, usleep(10000))
		seen = access(path, F_OK) == 0;
	ck_assert_msg(seen, "no frame 3 after 60 s (%s/log)", dir);
	char kids[64];
	FMT(kids, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *k = fopen(kids, "r");
	long run = 0;
	ck_assert_msg(k && fscanf(k, "%ld", &run) == 1 && run > 0, "the batch's run not found");
	fclose(k);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	int gone = 0; /* the run is not our child: kill(run, 0) until it has gone */
	for (int i = 0; i < 1000 && !gone; i++, usleep(10000))
		gone = kill((pid_t)run, 0) != 0;
	if (!gone)
		kill((pid_t)run, SIGKILL);
	ck_assert_msg(gone, "the run of a killed batch still runs 10 s later");
	ck_assert_msg(count_partial(dir) == 0, "temporary files left in %s", dir);
	ck_assert_msg(exists(dir, "out/long/plummer.mp4"), "no MP4 of the frames made");
	rmrf(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("process_hostile");
	TCase *tc = tcase_create("streams");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, closed_pipe_on_stdout_and_stderr_run_finishes);
	tcase_add_test(tc, closed_stderr_no_message_in_outputs);
	tcase_add_test(tc, dry_run_into_closed_pipe_exits_1);
	tcase_add_test(tc, batch_with_closed_pipe_finishes);
	tcase_add_test(tc, batch_killed_its_run_stops_cleanly);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
