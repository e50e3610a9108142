/* test_output_safety.c - "outputs are owned, complete or absent", through
 * the program (nb_bin()): colliding outputs and outputs on special files
 * are bad input before any work; concurrent runs to the same paths both
 * finish with complete files; a PNG sequence holds exactly the last run's
 * frames; a run that fails late leaves none of its files. Every run is
 * tiny (200 bodies, a few 64x48 frames) in a mkdtemp directory.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_output_safety
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_output_safety */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/sim.h"
#include "check_main.h"

static char g_dir[256];
static char g_bin[PATH_MAX];
static char g_scene[PATH_MAX];

/* A temp dir holding a copy of the small scene; runs start in it. */
static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-safety-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	ck_assert_ptr_nonnull(realpath(nb_bin(), g_bin));
	char src[PATH_MAX], cmd[3 * PATH_MAX];
	ck_assert_ptr_nonnull(realpath("tests/data/plummer-small.yaml", src));
	snprintf(g_scene, sizeof g_scene, "%s/scene.yaml", g_dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, g_scene);
	ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Start the program in g_dir on scene.yaml with the tiny settings, every
 * output off, then the extra --set K=V given (NULL-terminated; an argument
 * starting with "--" is passed as an option instead); stderr to
 * g_dir/LOG. fsize > 0: a file size limit (SIGXFSZ ignored, so a write
 * fails with EFBIG). Returns the pid. */
static pid_t start_v(const char *log, long fsize, va_list ap)
{
	const char *argv[64] = {g_bin, "scene.yaml", "--quiet"};
	int n = 3;
	static const char *base[] = {"output.frames=3", "bodies.0.count=200", "render.width=64",
				     "render.height=48", "output.video=", "output.png_dir=",
				     "output.stats=", "output.initial_state=",
				     "output.final_state="};
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = "--set", argv[n++] = base[i];
	const char *kv;
	while ((kv = va_arg(ap, const char *)) && n < 62) {
		if (strncmp(kv, "--", 2) == 0) /* an option such as --dry-run */
			argv[n++] = kv;
		else
			argv[n++] = "--set", argv[n++] = kv;
	}
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(g_dir) != 0)
			_exit(99);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(99);
		if (fsize > 0) {
			struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
				_exit(99);
		}
		execv(g_bin, (char *const *)argv);
		_exit(98);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Run to the end: the exit status; stderr in g_dir/run.log. */
static int run(long fsize, ...)
{
	va_list ap;
	va_start(ap, fsize);
	pid_t pid = start_v("run.log", fsize, ap);
	va_end(ap);
	return wait_exit(pid);
}

static pid_t start(const char *log, ...)
{
	va_list ap;
	va_start(ap, log);
	pid_t pid = start_v(log, 0, ap);
	va_end(ap);
	return pid;
}

/* The text of g_dir/NAME (static buffer). */
static const char *slurp(const char *name)
{
	static char buf[8192];
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (f) {
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

static int exists(const char *name)
{
	char path[PATH_MAX];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	return stat(path, &sb) == 0;
}

/* Entries of g_dir/SUB whose name contains PART (. and .. not counted). */
static int count(const char *sub, const char *part)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, sub);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, part))
			n++;
	closedir(d);
	return n;
}

static int lines(const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	int n = 0, c;
	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The 8-byte PNG signature and the IEND chunk at the end: a whole file. */
static int png_whole(const char *name)
{
	char path[PATH_MAX];
	unsigned char head[8], tail[12];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	int ok = fread(head, 1, 8, f) == 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0 &&
		 fseek(f, -12, SEEK_END) == 0 && fread(tail, 1, 12, f) == 12 &&
		 memcmp(tail + 4, "IEND", 4) == 0;
	fclose(f);
	return ok;
}

static void assert_bad_input(const char *a, const char *b, const char *path)
{
	const char *log = slurp("run.log");
	ck_assert_msg(strstr(log, a) && strstr(log, b) && strstr(log, path), "message: %s", log);
}

/* ---- 1. collisions ---- */

START_TEST(same_file_twice_is_bad_input)
{
	ck_assert_int_eq(run(0, "output.video=a.mp4", "output.stats=a.mp4", NULL), 2);
	assert_bad_input("output.video", "output.stats", "/a.mp4");
	ck_assert(!exists("a.mp4"));
	/* The same file spelled three ways. */
	ck_assert_int_eq(mkdir(strcat(strcpy((char[300]){0}, g_dir), "/d"), 0755), 0);
	ck_assert_int_eq(run(0, "output.video=./a.mp4", "output.final_state=d/../a.mp4", NULL), 2);
	assert_bad_input("output.video", "output.final_state", "/a.mp4");
	ck_assert(!exists("a.mp4"));
	ck_assert_int_eq(count(".", "partial"), 0);
}
END_TEST

START_TEST(output_on_scene_file_is_bad_input)
{
	const char *before = strdup(slurp("scene.yaml"));
	ck_assert_int_eq(run(0, "output.stats=s.csv", "output.resolved_scene=./scene.yaml", NULL), 2);
	assert_bad_input("the scene file", "output.resolved_scene", "/scene.yaml");
	ck_assert_int_eq(run(0, "output.final_state=scene.yaml", NULL), 2);
	assert_bad_input("the scene file", "output.final_state", "/scene.yaml");
	ck_assert_str_eq(slurp("scene.yaml"), before);
	ck_assert(!exists("s.csv"));
	free((void *)before);
}
END_TEST

/* The derived resolved-scene path (video x.mp4 -> x.scene.yaml) counts. */
/* The body file a run reads (model: file) is an input too; --dry-run
 * refuses every collision exactly as the run does. */
START_TEST(output_on_body_file_and_dry_run_twin)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/b.csv", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("id,component,mass,x,y,z,vx,vy,vz\n0,c,1,1,0,0,0,0.5,0\n1,c,1,-1,0,0,0,-0.5,0\n", f);
	fclose(f);
	const char *before = strdup(slurp("b.csv"));
	ck_assert_int_eq(run(0, "bodies.0={name: cluster, model: file, file: b.csv}",
			     "output.final_state=./b.csv", NULL), 2);
	assert_bad_input("bodies.0.file", "output.final_state", "/b.csv");
	ck_assert_str_eq(slurp("b.csv"), before);
	char run_msg[1024];
	snprintf(run_msg, sizeof run_msg, "%s", slurp("run.log"));
	ck_assert_int_eq(run(0, "bodies.0={name: cluster, model: file, file: b.csv}",
			     "output.final_state=./b.csv", "--dry-run", NULL), 2);
	ck_assert_str_eq(slurp("run.log"), run_msg);
	ck_assert_int_eq(run(0, "output.video=a.mp4", "output.stats=a.mp4", "--dry-run", NULL), 2);
	assert_bad_input("output.video", "output.stats", "/a.mp4");
	ck_assert_str_eq(slurp("b.csv"), before);
	free((void *)before);
}
END_TEST

START_TEST(derived_resolved_scene_collides)
{
	ck_assert_int_eq(run(0, "output.video=x.mp4", "output.stats=x.scene.yaml", NULL), 2);
	assert_bad_input("output.stats", "resolved scene", "/x.scene.yaml");
	ck_assert(!exists("x.mp4"));
}
END_TEST

/* Inside png_dir: another file is fine, a frame name is not. */
START_TEST(png_dir_owns_frame_names_only)
{
	ck_assert_int_eq(run(0, "output.png_dir=p", "output.stats=p/frame_00001.png", NULL), 2);
	assert_bad_input("output.stats", "output.png_dir", "/p/frame_00001.png");
	ck_assert_int_eq(count("p", "frame_"), 0);
	ck_assert_int_eq(run(0, "output.png_dir=p", "output.stats=p/stats.csv", NULL), 0);
	ck_assert_int_eq(count("p", "frame_"), 3);
	ck_assert_int_eq(lines("p/stats.csv"), 4);
}
END_TEST

/* ---- 2. special files ---- */

START_TEST(fifo_is_never_replaced)
{
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s/fifo", g_dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	const char *keys[] = {"output.video=fifo", "output.stats=fifo", "output.final_state=fifo",
			      "output.resolved_scene=fifo", "output.png_dir=fifo"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		ck_assert_int_eq(run(0, "output.preview=", keys[i], i == 3 ? "output.stats=s.csv" : NULL,
				     NULL),
				 2);
		char key[64];
		snprintf(key, sizeof key, "%.*s", (int)(strchr(keys[i], '=') - keys[i]), keys[i]);
		assert_bad_input(key, "fifo", "is a FIFO");
		struct stat sb;
		ck_assert_int_eq(lstat(fifo, &sb), 0);
		ck_assert_msg(S_ISFIFO(sb.st_mode), "%s replaced the FIFO", keys[i]);
	}
	/* A directory where a file belongs, and a frame name taken by one. */
	ck_assert_int_eq(run(0, "output.stats=.", NULL), 2);
	assert_bad_input("output.stats", ".", "is a directory");
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s/p/frame_00001.png", g_dir);
	ck_assert_int_eq(mkdir(strcat(strcpy((char[300]){0}, g_dir), "/p"), 0755), 0);
	ck_assert_int_eq(mkfifo(d, 0644), 0);
	ck_assert_int_eq(run(0, "output.png_dir=p", NULL), 2);
	assert_bad_input("output.png_dir", "frame_00001.png", "is a FIFO");
	ck_assert_int_eq(count("p", "frame_00000"), 0);
}
END_TEST

/* The final rename checks again (the path may have become a FIFO after
 * the check at load): the FIFO stays, the temp file goes. */
START_TEST(rename_never_replaces_a_fifo)
{
	char fifo[PATH_MAX], tmp[PATH_MAX + 64];
	snprintf(fifo, sizeof fifo, "%s/fifo", g_dir);
	int fd = sim_outfile_temp(fifo, tmp, sizeof tmp);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x\n", 2), 2);
	close(fd);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	log_set_level(LOG_QUIET);
	ck_assert_int_eq(sim_outfile_commit(tmp, fifo, 1), NB_ERUNTIME);
	struct stat sb;
	ck_assert_int_eq(lstat(fifo, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	ck_assert_int_ne(access(tmp, F_OK), 0);
}
END_TEST

/* ---- 3. concurrent runs ---- */

START_TEST(concurrent_runs_both_complete)
{
	pid_t a = start("a.log", "output.frames=8", "output.png_dir=p", "output.stats=s.csv",
			"output.video=v.mp4", "output.final_state=f.csv", NULL);
	pid_t b = start("b.log", "output.frames=8", "output.png_dir=p", "output.stats=s.csv",
			"output.video=v.mp4", "output.final_state=f.csv", NULL);
	int ra = wait_exit(a), rb = wait_exit(b);
	ck_assert_msg(ra == 0 && rb == 0, "exit %d, %d: %s / %s", ra, rb, slurp("a.log"),
		      slurp("b.log"));
	ck_assert_int_eq(lines("s.csv"), 9);   /* header + 8 rows, not 17 or mixed */
	ck_assert_int_eq(lines("f.csv"), 201); /* header + 200 bodies */
	ck_assert_int_eq(count("p", "frame_"), 8);
	for (int k = 0; k < 8; k++) {
		char name[64];
		snprintf(name, sizeof name, "p/frame_%05d.png", k);
		ck_assert_msg(png_whole(name), "%s is not a whole PNG", name);
	}
	ck_assert(exists("v.mp4"));
	ck_assert_int_eq(count(".", "partial"), 0);
	ck_assert_int_eq(count("p", "partial"), 0);
}
END_TEST

/* ---- 4. the PNG sequence is the run's own ---- */

START_TEST(png_dir_holds_exactly_this_runs_frames)
{
	ck_assert_int_eq(run(0, "output.frames=5", "output.png_dir=p", NULL), 0);
	ck_assert_int_eq(count("p", "frame_"), 5);
	FILE *f = fopen(strcat(strcpy((char[300]){0}, g_dir), "/p/notes.txt"), "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(run(0, "output.frames=2", "output.png_dir=p", NULL), 0);
	ck_assert_int_eq(count("p", "frame_"), 2);
	ck_assert(png_whole("p/frame_00000.png") && png_whole("p/frame_00001.png"));
	ck_assert(exists("p/notes.txt")); /* not ours: left alone */
	ck_assert(exists("p/scene.yaml"));
}
END_TEST

/* ---- 5. a run that fails late leaves none of its files ----
 * A file size limit of 100 kB: the frames, the MP4, the statistics and the
 * preview fit; the final state of 2000 bodies (~180 kB), written after the
 * last frame, does not (EFBIG: a real write failure, as on a full disk). */
START_TEST(late_failure_leaves_nothing)
{
	ck_assert_int_eq(run(100000, "bodies.0.count=2000", "output.png_dir=p", "output.video=v.mp4",
			     "output.stats=s.csv", "output.final_state=f.csv",
			     "output.preview=v.jpg", NULL),
			 1);
	const char *log = slurp("run.log");
	ck_assert_msg(strstr(log, "f.csv") && strstr(log, "File too large"), "message: %s", log);
	ck_assert_int_eq(count("p", "frame_"), 0);
	ck_assert_int_eq(count("p", "partial"), 0);
	ck_assert_int_eq(count(".", "partial"), 0);
	ck_assert(!exists("v.mp4") && !exists("s.csv") && !exists("f.csv") && !exists("v.jpg"));
	ck_assert(!exists("v.scene.yaml"));
	/* The same run without the limit succeeds: the limit made the failure. */
	ck_assert_int_eq(run(0, "bodies.0.count=2000", "output.png_dir=p", "output.video=v.mp4",
			     "output.stats=s.csv", "output.final_state=f.csv",
			     "output.preview=v.jpg", NULL),
			 0);
	ck_assert_int_eq(count("p", "frame_"), 3);
	ck_assert(exists("v.mp4") && exists("f.csv") && exists("v.scene.yaml"));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output_safety");
	TCase *tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_file_twice_is_bad_input);
	tcase_add_test(tc, output_on_scene_file_is_bad_input);
	tcase_add_test(tc, derived_resolved_scene_collides);
	tcase_add_test(tc, output_on_body_file_and_dry_run_twin);
	tcase_add_test(tc, png_dir_owns_frame_names_only);
	tcase_add_test(tc, fifo_is_never_replaced);
	tcase_add_test(tc, rename_never_replaces_a_fifo);
	tcase_add_test(tc, concurrent_runs_both_complete);
	tcase_add_test(tc, png_dir_holds_exactly_this_runs_frames);
	tcase_add_test(tc, late_failure_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
