/* test_writer_hostile.c - every output writer under a full disk (issue 27):
 * the MP4, the PNG frames, the preview JPEG (last frame and contact sheet),
 * the statistics CSV, the initial and final state CSVs, the HDF5 snapshots
 * and the FITS maps. Each is run through the program (nb_bin()) with its
 * output in g_dir/w and the disk made full two ways:
 *
 *   - a file size limit (RLIMIT_FSIZE set in the child before exec, SIGXFSZ
 *     ignored, so a write past it fails with EFBIG, "File too large"); no
 *     privilege needed. Three limits per writer, from the size S of the
 *     file it writes first in an unlimited run: 1 byte (the header), S / 2
 *     (the middle) and S - 1 (the last byte, at the close);
 *   - a small tmpfs mounted on g_dir/w (ENOSPC, "No space left on device"),
 *     with no room left and with half the file's room left; only where
 *     mount(2) is permitted (root), else SKIP is printed.
 *
 * After each: exit status 1 (not a signal: a crash is a failure), no
 * ".partial" file anywhere under g_dir, no file at all left in g_dir/w (a
 * failed run removes the outputs it put in place, docs/scenes.md
 * "Outputs: owned, complete or absent"), and one message on stderr naming
 * the output's path and the OS's reason. stderr is a pipe, so the limit
 * never cuts the message itself.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_writer_hostile
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_writer_hostile */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

static char g_dir[256];
static char g_bin[PATH_MAX];

/* One writer: the --set K=V that turn it on (writing under "w"), the file
 * whose size sets the limits, and what its error message must name. */
struct writer {
	const char *name;
	const char *sets[3];
	const char *probe;
	const char *names;
};

static const struct writer g_writers[] = {
	{"mp4", {"output.video=w/v.mp4"}, "w/v.mp4", "w/v.mp4"},
	{"png", {"output.png_dir=w"}, "w/frame_00000.png", "w/frame_"},
	{"preview (last)", {"output.preview=w/p.jpg"}, "w/p.jpg", "w/p.jpg"},
	{"preview (sheet)", {"output.preview=w/p.jpg", "output.preview_kind=sheet"}, "w/p.jpg",
	 "w/p.jpg"},
	{"stats", {"output.stats=w/s.csv", "output.frames=40"}, "w/s.csv", "w/s.csv"},
	{"initial state", {"output.initial_state=w/i.csv"}, "w/i.csv", "w/i.csv"},
	{"final state", {"output.final_state=w/f.csv"}, "w/f.csv", "w/f.csv"},
	{"snapshots", {"output.snapshots.dir=w", "output.snapshots.every=1"}, "w/snap_000.hdf5",
	 "w/snap_"},
	{"fits", {"output.fits_dir=w"}, "w/frame_00000.fits", "w/frame_"},
};
#define NWRITERS ((int)(sizeof g_writers / sizeof g_writers[0]))

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-writer-hostile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	ck_assert_ptr_nonnull(realpath(nb_bin(), g_bin));
	char src[PATH_MAX], cmd[3 * PATH_MAX];
	ck_assert_ptr_nonnull(realpath("tests/data/plummer-small.yaml", src));
	snprintf(cmd, sizeof cmd, "cp '%s' '%s/scene.yaml'", src, g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The tmpfs cases' mount, if any (none: EINVAL, ignored). */
static void unmount_w(void)
{
	char w[300];
	snprintf(w, sizeof w, "%s/w", g_dir);
	umount2(w, MNT_DETACH);
}

static void teardown(void)
{
	unmount_w();
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* What a run did: its exit (status or signal) and its stderr. */
struct result {
	int status; /* waitpid's */
	char err[16384];
};

/* Run the program in g_dir on scene.yaml, tiny (500 bodies, 6 frames of
 * 160 x 96), every output off but W's; the resolved scene to g_dir/r.yaml.
 * W's own --set come last and win (the statistics take 40 frames, so that
 * a row, not only the close, meets the limit). fsize > 0: the file size
 * limit in bytes. */
static void run(const struct writer *w, long fsize, struct result *res)
{
	const char *argv[48] = {g_bin, "scene.yaml", "--quiet"};
	int n = 3;
	static const char *base[] = {"output.frames=6", "bodies.0.count=500",
				     "render.width=160", "render.height=96",
				     "output.video=", "output.png_dir=", "output.stats=",
				     "output.initial_state=", "output.final_state=",
				     "output.resolved_scene=r.yaml"};
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = "--set", argv[n++] = base[i];
	for (int i = 0; i < 3 && w->sets[i]; i++)
		argv[n++] = "--set", argv[n++] = w->sets[i];
	argv[n] = NULL;
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (chdir(g_dir) != 0 || dup2(fds[1], 2) < 0)
			_exit(99);
		int null = open("/dev/null", O_WRONLY);
		if (null < 0 || dup2(null, 1) < 0)
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
	close(fds[1]);
	size_t len = 0;
	ssize_t r;
	while ((r = read(fds[0], res->err + len, sizeof res->err - 1 - len)) > 0 ||
	       (r < 0 && errno == EINTR))
		len += r > 0 ? (size_t)r : 0;
	res->err[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &res->status, 0), pid);
}

static int g_partials, g_files;

static int walk_partial(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type;
	g_partials += strstr(p + ftw->base, ".partial") != NULL;
	return 0;
}

static int walk_files(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)p, (void)ftw;
	g_files += type == FTW_F && S_ISREG(sb->st_mode) && strcmp(p + ftw->base, "fill") != 0;
	return 0;
}

/* Regular files under g_dir/w (the tmpfs cases' filler not counted). */
static int files_in_w(void)
{
	char w[300];
	snprintf(w, sizeof w, "%s/w", g_dir);
	g_files = 0;
	if (access(w, F_OK) == 0)
		nftw(w, walk_files, 16, FTW_PHYS);
	return g_files;
}

/* The checks after a run that must fail on a full disk: NULL when it
 * failed cleanly, else what went wrong (static text). Nothing is asserted
 * here, so that the tmpfs case can unmount before it fails. */
static const char *failed_cleanly(const struct writer *w, const char *how, const char *reason,
				  const struct result *res)
{
	static char why[20000];
	why[0] = '\0';
	g_partials = 0;
	nftw(g_dir, walk_partial, 16, FTW_PHYS);
	if (WIFSIGNALED(res->status))
		snprintf(why, sizeof why, "%s, %s: killed by signal %d (%s); stderr: %s", w->name,
			 how, WTERMSIG(res->status), strsignal(WTERMSIG(res->status)), res->err);
	else if (!WIFEXITED(res->status) || WEXITSTATUS(res->status) != 1)
		snprintf(why, sizeof why, "%s, %s: exit status %d, expected 1; stderr: %s", w->name,
			 how, WEXITSTATUS(res->status), res->err);
	else if (g_partials != 0)
		snprintf(why, sizeof why, "%s, %s: %d .partial file(s) left", w->name, how,
			 g_partials);
	else if (files_in_w() != 0)
		snprintf(why, sizeof why, "%s, %s: %d file(s) left in w/ by a failed run", w->name,
			 how, g_files);
	else if (!strstr(res->err, w->names) || !strstr(res->err, reason))
		snprintf(why, sizeof why, "%s, %s: the message does not name '%s' and '%s': %s",
			 w->name, how, w->names, reason, res->err);
	else if (strstr(res->err, "HDF5-DIAG") || strstr(res->err, "#000:"))
		snprintf(why, sizeof why, "%s, %s: a library error stack reached stderr: %s",
			 w->name, how, res->err);
	return why[0] ? why : NULL;
}

/* The size of W's first file in an unlimited run, which must succeed. */
static long probe_size(const struct writer *w)
{
	static struct result res;
	char path[PATH_MAX];
	struct stat sb;
	run(w, 0, &res);
	ck_assert_msg(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0,
		      "%s: the unlimited run failed: %s", w->name, res.err);
	snprintf(path, sizeof path, "%s/%s", g_dir, w->probe);
	ck_assert_msg(stat(path, &sb) == 0 && sb.st_size > 2, "%s: no %s", w->name, w->probe);
	return (long)sb.st_size;
}

static void clear_w(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/w/* '%s'/r.yaml", g_dir, g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Each writer at three file size limits: the header, the middle, the end. */
START_TEST(file_size_limit)
{
	const struct writer *w = &g_writers[_i];
	static struct result res;
	const long s = probe_size(w);
	const long limits[3] = {1, s / 2, s - 1};
	const char *how[3] = {"limit 1 byte (header)", "limit S/2 (middle)",
			      "limit S-1 (last byte, at close)"};
	static char all[3 * 1024];
	all[0] = '\0';
	for (int k = 0; k < 3; k++) { /* every limit runs; the failures are listed together */
		clear_w();
		run(w, limits[k], &res);
		char what[128];
		snprintf(what, sizeof what, "%s, S = %ld", how[k], s);
		const char *why = failed_cleanly(w, what, "File too large", &res);
		if (why)
			snprintf(all + strlen(all), sizeof all - strlen(all), "%s%.900s",
				 all[0] ? "\n  " : "", why);
	}
	ck_assert_msg(all[0] == '\0', "%s", all);
}
END_TEST

/* 1: a tmpfs of SIZE bytes is mounted on g_dir/w; 0: mount is refused. */
static int mount_small(long size)
{
	char w[300], opt[64];
	snprintf(w, sizeof w, "%s/w", g_dir);
	mkdir(w, 0755);
	snprintf(opt, sizeof opt, "size=%ld,mode=0755", size);
	return mount("tmpfs", w, "tmpfs", 0, opt) == 0;
}

/* Fill g_dir/w (a tmpfs) so that at most ROOM bytes stay free (a page
 * at a time). */
static void fill_leaving(long room)
{
	char w[300], path[320];
	snprintf(w, sizeof w, "%s/w", g_dir);
	snprintf(path, sizeof path, "%s/fill", w);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	static char block[4096];
	struct statvfs vfs;
	while (statvfs(w, &vfs) == 0 && (long)(vfs.f_bavail * vfs.f_frsize) > room)
		if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
			break;
	close(fd);
}

/* Each writer on a full tmpfs (ENOSPC): no room at all, then half its
 * first file's room. Only where mount(2) is permitted. */
START_TEST(full_tmpfs)
{
	const struct writer *w = &g_writers[_i];
	static struct result res;
	const long s = probe_size(w);
	clear_w();
	if (!mount_small(1024 * 1024)) {
		printf("SKIP: %s on a full tmpfs: mount is not permitted here (%s)\n", w->name,
		       strerror(errno));
		return;
	}
	const long room[2] = {0, s / 2};
	static char all[2 * 1024];
	all[0] = '\0';
	for (int k = 0; k < 2; k++) {
		clear_w();
		fill_leaving(room[k]);
		run(w, 0, &res);
		char what[128];
		snprintf(what, sizeof what, "tmpfs with %ld of %ld bytes free", room[k], s);
		const char *why = failed_cleanly(w, what, "No space left on device", &res);
		if (why)
			snprintf(all + strlen(all), sizeof all - strlen(all), "%s%.900s",
				 all[0] ? "\n  " : "", why);
	}
	unmount_w(); /* before any failure: a failing case leaves no mount behind */
	ck_assert_msg(all[0] == '\0', "%s", all);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("writer_hostile");
	TCase *tc = tcase_create("full disk");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, file_size_limit, 0, NWRITERS);
	tcase_add_loop_test(tc, full_tmpfs, 0, NWRITERS);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
