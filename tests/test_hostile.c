/* test_hostile.c - the hostile cases of every row of the outputs table
 * (app/outputs.h), through the program (nb_bin()). The table is walked:
 * a row without its entry in `cases` below fails the first test, so a new
 * output kind cannot land without its hostile cases (docs/PROMISES.md).
 *
 * For every row, alone in a tiny run (200 bodies, 64x48 frames):
 *   full disk       a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: a
 *                   write fails with EFBIG) at several sizes, so the
 *                   failure hits the start, the middle and the end: the
 *                   run exits 0 or 1, never by a signal; exit 1 names the
 *                   path and the OS's reason; no temporary file is left;
 *                   the row is complete or absent; and a real full disk,
 *                   a small tmpfs (where mounting is allowed; SKIP
 *                   otherwise) at four sizes, ENOSPC;
 *   special files   a FIFO, a directory (files) or a FIFO member (sequences)
 *                   at the output's name: exit 2 before any work, the
 *                   special file untouched;
 *   file in the way a regular file where the row needs a directory: the
 *                   run and the dry run alike refuse it (exit 2);
 *   same name       another row on the same path, and (sequences) a file
 *                   row on one of the sequence's member names: exit 2,
 *                   nothing written;
 *   interrupt       SIGINT mid-run: exit 130, no temporary file, the row
 *                   complete or absent (rows kept after an interrupt hold
 *                   whole files: a playable MP4, whole statistics rows,
 *                   whole snapshots);
 *   kill -9         SIGKILL mid-run: no final name holds a partial file,
 *                   and the next run removes the dead process's temporary
 *                   files (a minute old);
 *   batch           two runs of one batch with the same value for the row:
 *                   each run's files in its own directory, both complete;
 *                   --resume runs again the one missing a file of the row;
 *   earlier run     a longer run's higher members are removed, a FIFO
 *                   with a member's name never is.
 * Completeness is judged here from the file structure (signatures, end
 * markers, record sizes), not by the program's own --resume checks.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_hostile
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_hostile
 * NB_HOSTILE_SLOW=1 adds the signal cases (make check-hostile);
 * NB_TEST_BACKEND=cuda runs every case on the GPU (the lent machine). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../app/batch_verify.c"
#include "../app/outputs.c"
#include "../app/outputs_member.c"
#include "check_main.h"

/* One row's way in: its value (relative to the run's directory), a --set
 * it also needs to write, and another row set to the same value. */
struct row_case {
	const char *key;
	const char *path;
	const char *enable; /* NULL: none */
	const char *clash;  /* another row's key */
};

static const struct row_case cases[] = {
	{"output.video", "o/v.mp4", NULL, "output.stats"},
	{"output.png_dir", "o/png", NULL, "output.fits_dir"},
	{"output.preview", "o/p.jpg", "output.preview_kind=last", "output.final_state"},
	{"output.stats", "o/s.csv", NULL, "output.video"},
	{"output.initial_state", "o/i.csv", NULL, "output.final_state"},
	{"output.final_state", "o/f.csv", NULL, "output.initial_state"},
	{"output.snapshots.dir", "o/snaps", "output.snapshots.every=1", "output.png_dir"},
	{"output.fits_dir", "o/fits", NULL, "output.snapshots.dir"},
	{"output.resolved_scene", "o/r.yaml", NULL, "output.stats"},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static char g_dir[256];
static char g_bin[PATH_MAX];
static int g_log_fd = -1;  /* the read end of the running program's stderr */
static char g_log[16384];  /* what it wrote (wait_exit reads it) */

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-hostile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	ck_assert_ptr_nonnull(realpath(nb_bin(), g_bin));
	char src[PATH_MAX], cmd[3 * PATH_MAX];
	ck_assert_ptr_nonnull(realpath("tests/data/plummer-small.yaml", src));
	snprintf(cmd, sizeof cmd, "cp '%s' '%s/scene.yaml'", src, g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", g_dir, g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const struct row_case *case_of(int row)
{
	for (int i = 0; i < NCASES; i++)
		if (!strcmp(cases[i].key, app_outputs[row].key))
			return &cases[i];
	return NULL;
}

/* Start the program in g_dir on scene.yaml, every output off, `frames`
 * frames, then the arguments given (NULL-terminated; "K=V" is a --set,
 * anything starting with "-" is passed as is); stderr to g_dir/run.log.
 * fsize > 0: a file size limit of that many bytes. */
static pid_t start_v(int frames, long fsize, va_list ap)
{
	const char *argv[64] = {g_bin, "scene.yaml"};
	int n = 2;
	static char fr[32];
	snprintf(fr, sizeof fr, "output.frames=%d", frames);
	const char *base[] = {fr, "bodies.0.count=200", "render.width=64", "render.height=48",
			      "output.video=", "output.png_dir=", "output.stats=",
			      "output.initial_state=", "output.final_state="};
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = "--set", argv[n++] = base[i];
	/* NB_TEST_BACKEND=cuda: the same cases through the GPU simulation and
	 * renderer (the scene says cpu) */
	static char be[64];
	const char *backend = getenv("NB_TEST_BACKEND");
	if (backend && *backend) {
		snprintf(be, sizeof be, "--backend=%s", backend);
		argv[n++] = be;
	}
	for (const char *a; (a = va_arg(ap, const char *)) && n < 60;) {
		if (a[0] == '-')
			argv[n++] = a;
		else
			argv[n++] = "--set", argv[n++] = a;
	}
	argv[n] = NULL;
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* stderr and stdout into a pipe: a size limit must not cut the log */
		close(fds[0]);
		if (chdir(g_dir) != 0 || dup2(fds[1], 2) < 0 || dup2(fds[1], 1) < 0)
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
	if (g_log_fd >= 0)
		close(g_log_fd);
	g_log_fd = fds[0];
	return pid;
}

/* Read the program's output until it closes it (it has exited). */
static void drain_log(void)
{
	size_t n = 0;
	ssize_t r;
	while (g_log_fd >= 0 && (r = read(g_log_fd, g_log + n, sizeof g_log - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
		if (n == sizeof g_log - 1) { /* full: keep the start, drop the rest */
			char sink[4096];
			while (read(g_log_fd, sink, sizeof sink) > 0)
				;
			break;
		}
	}
	g_log[n] = '\0';
	if (g_log_fd >= 0)
		close(g_log_fd);
	g_log_fd = -1;
}

static pid_t start(int frames, long fsize, ...)
{
	va_list ap;
	va_start(ap, fsize);
	pid_t pid = start_v(frames, fsize, ap);
	va_end(ap);
	return pid;
}

/* The exit status; a death by a signal fails the test. */
static int wait_exit(pid_t pid)
{
	int st;
	drain_log();
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "the program died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

static const char *run_log(void)
{
	return g_log;
}

static void at(char *buf, size_t n, const char *rel)
{
	ck_assert((size_t)snprintf(buf, n, "%s/%s", g_dir, rel) < n);
}

/* ---- judging files from their structure ---- */

static long long sz_of(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1;
}

static int rd_at(const char *path, long long off, void *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fseeko(f, (off_t)off, off < 0 ? SEEK_END : SEEK_SET) == 0 &&
		 fread(buf, 1, n, f) == n;
	if (f)
		fclose(f);
	return ok;
}

static unsigned long long be32(const unsigned char *b)
{
	return (unsigned long long)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

/* MP4: top-level boxes that tile the file, with ftyp, moov and mdat. */
static int mp4_whole(const char *path)
{
	long long size = sz_of(path), off = 0;
	int have = 0;
	unsigned char h[8];
	while (size > 0 && off + 8 <= size && rd_at(path, off, h, 8)) {
		unsigned long long box = be32(h);
		if (box < 8 || (long long)box > size - off)
			return 0;
		have |= !memcmp(h + 4, "ftyp", 4) ? 1 : !memcmp(h + 4, "moov", 4) ? 2
						: !memcmp(h + 4, "mdat", 4) ? 4 : 0;
		off += (long long)box;
	}
	return size > 0 && off == size && have == 7;
}

static int framed(const char *path, const void *head, size_t nh, const void *tail, size_t nt)
{
	unsigned char b[16];
	long long size = sz_of(path);
	return size >= (long long)(nh + nt) && rd_at(path, 0, b, nh) && !memcmp(b, head, nh) &&
	       rd_at(path, -(long long)nt, b, nt) && !memcmp(b, tail, nt);
}

/* Text: non-empty, ending in a newline. */
static int text_whole(const char *path)
{
	char c;
	return sz_of(path) > 0 && rd_at(path, -1, &c, 1) && c == '\n';
}

/* One file of an output, judged by its name. */
static int file_whole(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot)
		return 0;
	if (!strcmp(dot, ".mp4"))
		return mp4_whole(path);
	if (!strcmp(dot, ".png"))
		return framed(path, "\x89PNG\r\n\x1a\n", 8, "IEND\xae\x42\x60\x82", 8);
	if (!strcmp(dot, ".jpg"))
		return framed(path, "\xff\xd8", 2, "\xff\xd9", 2);
	if (!strcmp(dot, ".hdf5")) /* the signature, and more than a superblock */
		return sz_of(path) > 1024 && framed(path, "\x89HDF\r\n\x1a\n", 8, "", 0);
	if (!strcmp(dot, ".fits")) {
		long long s = sz_of(path);
		return s > 0 && s % 2880 == 0 && framed(path, "SIMPLE  =", 9, "", 0);
	}
	if (!strcmp(dot, ".csv") || !strcmp(dot, ".yaml"))
		return text_whole(path);
	return 0;
}

/* Names in the tree under g_dir/o containing PART (recursive). */
static int count_in(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat sb;
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
			n += count_in(p, part);
		n += strstr(e->d_name, part) != NULL;
	}
	closedir(d);
	return n;
}

static int partials(void)
{
	return count_in(g_dir, ".partial");
}

/* Row `row` (its value rel) is complete or absent: every file of it whole,
 * a sequence holding members 0..k-1 for some k with no gap; *files gets
 * how many it holds. */
static int complete_or_absent(int row, const char *rel, int *files)
{
	const struct app_out_kind *k = &app_outputs[row];
	char path[PATH_MAX];
	at(path, sizeof path, rel);
	*files = 0;
	if (k->shape == APP_OUT_FILE) {
		if (sz_of(path) < 0 && access(path, F_OK) != 0)
			return 1;
		*files = 1;
		return file_whole(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return 1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (app_out_member(k, e->d_name) < 0)
			continue;
		char p[PATH_MAX + 300];
		snprintf(p, sizeof p, "%s/%s", path, e->d_name);
		if (!file_whole(p))
			return 0;
		n++;
	}
	closedir(d);
	*files = n;
	return 1;
}

/* ---- the table is covered ---- */

START_TEST(every_row_has_its_cases)
{
	ck_assert_int_eq(app_outputs_n, NCASES);
	for (int i = 0; i < app_outputs_n; i++) {
		ck_assert_msg(app_outputs[i].key, "row %d of the outputs table is empty", i);
		ck_assert_msg(case_of(i), "row %s of the outputs table has no hostile cases here",
			      app_outputs[i].key);
		const struct row_case *c = case_of(i);
		int known = 0;
		for (int j = 0; j < app_outputs_n; j++)
			known |= !strcmp(app_outputs[j].key, c->clash) && j != i;
		ck_assert_msg(known, "%s: its clash %s is not another row", c->key, c->clash);
		const struct app_out_kind *k = &app_outputs[i];
		ck_assert_msg(k->what && k->batch_name, "%s: no description or batch name", k->key);
		ck_assert_msg(k->problem || i == APP_OUT_RESOLVED, "%s: no --resume check", k->key);
		if (k->shape == APP_OUT_SEQ)
			ck_assert_msg(k->prefix && k->suffix && k->width > 0 && k->member_of_frame,
				      "%s: a sequence without its member names", k->key);
	}
}
END_TEST

/* A plain run writing only row i: complete, no temporary file. */
START_TEST(row_alone_is_complete)
{
	const struct row_case *c = case_of(_i);
	char kv[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	int rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", NULL));
	ck_assert_msg(rc == 0, "%s: exit %d: %s", c->key, rc, run_log());
	int files = 0;
	ck_assert_msg(complete_or_absent(_i, c->path, &files) && files > 0, "%s: not written whole",
		      c->key);
	ck_assert_int_eq(partials(), 0);
}
END_TEST

/* A full disk at several sizes: exit 0 or 1, the path and the OS's reason
 * named, complete or absent, no temporary file. */
/* After a full disk (what: "limit 700", "tmpfs 24k"), row `row` of case c
 * ended with exit rc: 0 or 1; the row complete or absent (files: how many
 * it holds); no temporary file; on exit 1, one line names the output's
 * path (under o/) and the OS's reason, and a file row is absent. */
static void assert_full_disk_outcome(int row, const struct row_case *c, const char *what, int rc,
				     int whole, int files, int left, const char *reason)
{
	const char *log = run_log();
	ck_assert_msg(rc == 0 || rc == 1, "%s, %s: exit %d: %s", c->key, what, rc, log);
	ck_assert_msg(whole, "%s, %s: a partial output", c->key, what);
	ck_assert_msg(left == 0, "%s, %s: temporary files left", c->key, what);
	if (rc != 1)
		return;
	const char *r = strstr(log, reason), *line = r;
	while (line && line > log && line[-1] != '\n')
		line--;
	ck_assert_msg(r, "%s, %s: no OS reason: %s", c->key, what, log);
	ck_assert_msg(strstr(line, "o/") && strstr(line, "o/") < r,
		      "%s, %s: the path is not named with the reason: %s", c->key, what, log);
	if (app_outputs[row].shape == APP_OUT_FILE)
		ck_assert_msg(files == 0, "%s, %s: a failed run left its file", c->key, what);
}

START_TEST(full_disk)
{
	const struct row_case *c = case_of(_i);
	static const long limits[] = {1, 700, 3000, 12000, 60000, 250000};
	char kv[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
		char cmd[PATH_MAX], what[32];
		snprintf(cmd, sizeof cmd, "rm -rf '%s/o'", g_dir);
		ck_assert_int_eq(system(cmd), 0);
		int rc = wait_exit(start(4, limits[l], kv, c->enable ? c->enable : "seed=7", NULL));
		int files = 0, whole = complete_or_absent(_i, c->path, &files);
		snprintf(what, sizeof what, "limit %ld", limits[l]);
		assert_full_disk_outcome(_i, c, what, rc, whole, files, partials(), "File too large");
	}
}
END_TEST

/* A real full disk: a small tmpfs at o/ (root only; SKIP elsewhere), at
 * sizes that fail the row at its start, its middle and its end: as above,
 * with the OS's own reason, "No space left on device". */
START_TEST(full_disk_tmpfs)
{
	const struct row_case *c = case_of(_i);
	static const char *sizes[] = {"4k", "24k", "96k", "400k"};
	char kv[PATH_MAX], odir[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	at(odir, sizeof odir, "o");
	for (size_t l = 0; l < sizeof sizes / sizeof sizes[0]; l++) {
		char opts[32], what[32];
		snprintf(opts, sizeof opts, "size=%s", sizes[l]);
		ck_assert_int_eq(mkdir(odir, 0755), 0);
		if (mount("tmpfs", odir, "tmpfs", 0, opts) != 0) {
			printf("SKIP full_disk_tmpfs %s: cannot mount a tmpfs here (%s)\n", c->key,
			       strerror(errno));
			rmdir(odir);
			return;
		}
		int rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", NULL));
		int files = 0, whole = complete_or_absent(_i, c->path, &files), left = partials();
		ck_assert_int_eq(umount(odir), 0); /* what was written goes with it */
		ck_assert_int_eq(rmdir(odir), 0);
		snprintf(what, sizeof what, "tmpfs %s", sizes[l]);
		assert_full_disk_outcome(_i, c, what, rc, whole, files, left, "No space left on device");
	}
}
END_TEST

/* A FIFO (and for a file row a directory) at the output's name: exit 2
 * before any work, left as it was. */
START_TEST(special_file_at_name)
{
	const struct row_case *c = case_of(_i);
	const struct app_out_kind *k = &app_outputs[_i];
	char path[PATH_MAX], fifo[PATH_MAX + 64], kv[PATH_MAX];
	at(path, sizeof path, c->path);
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	char odir[PATH_MAX];
	at(odir, sizeof odir, "o");
	ck_assert_int_eq(mkdir(odir, 0755), 0);
	if (k->shape == APP_OUT_FILE) {
		snprintf(fifo, sizeof fifo, "%s", path);
	} else {
		ck_assert_int_eq(mkdir(path, 0755), 0);
		ck_assert_int_eq(app_out_member_path(k, path, 1, fifo, sizeof fifo), 0);
	}
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	int rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", NULL));
	ck_assert_msg(rc == 2, "%s: a FIFO at %s: exit %d: %s", c->key, fifo, rc, run_log());
	struct stat sb;
	ck_assert(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
	ck_assert_msg(strstr(run_log(), "FIFO"), "%s: the message does not say what is there: %s",
		      c->key, run_log());
	/* the dry run refuses the same */
	rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", "--dry-run", NULL));
	ck_assert_msg(rc == 2, "%s: --dry-run with a FIFO at the name: exit %d", c->key, rc);
	if (k->shape == APP_OUT_FILE) {
		ck_assert_int_eq(unlink(fifo), 0);
		ck_assert_int_eq(mkdir(fifo, 0755), 0);
		rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", NULL));
		ck_assert_msg(rc == 2, "%s: a directory at the name: exit %d: %s", c->key, rc, run_log());
		ck_assert(lstat(fifo, &sb) == 0 && S_ISDIR(sb.st_mode));
	}
	ck_assert_int_eq(partials(), 0);
}
END_TEST

/* A regular file where the row needs a directory on its way (o/ is a
 * file): the run and the dry run both refuse it, exit 2, before any work,
 * naming the key; the file is left as it was. */
START_TEST(file_in_the_way)
{
	const struct row_case *c = case_of(_i);
	char kv[PATH_MAX], odir[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	at(odir, sizeof odir, "o");
	FILE *f = fopen(odir, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a directory\n", f);
	fclose(f);
	int rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", "--dry-run", NULL));
	ck_assert_msg(rc == 2, "%s: --dry-run with a file at o: exit %d: %s", c->key, rc, run_log());
	rc = wait_exit(start(4, 0, kv, c->enable ? c->enable : "seed=7", NULL));
	ck_assert_msg(rc == 2, "%s: a file at o: exit %d: %s", c->key, rc, run_log());
	ck_assert_msg(strstr(run_log(), c->key), "%s: the key is not named: %s", c->key, run_log());
	ck_assert_int_eq(sz_of(odir), 16);
}
END_TEST

/* Another row on the same path (and a file row on a member's name of a
 * sequence): exit 2, nothing written. */
START_TEST(same_name_as_another_output)
{
	const struct row_case *c = case_of(_i);
	const struct app_out_kind *k = &app_outputs[_i];
	char kv[PATH_MAX], other[PATH_MAX + 128];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	snprintf(other, sizeof other, "%s=%s", c->clash, c->path);
	int rc = wait_exit(start(4, 0, kv, other, c->enable ? c->enable : "seed=7", NULL));
	ck_assert_msg(rc == 2, "%s and %s on one path: exit %d: %s", c->key, c->clash, rc, run_log());
	ck_assert_msg(strstr(run_log(), c->key), "the message does not name %s: %s", c->key, run_log());
	char odir[PATH_MAX];
	at(odir, sizeof odir, "o");
	ck_assert_msg(access(odir, F_OK) != 0, "%s: something was written before the refusal", c->key);
	if (k->shape == APP_OUT_SEQ) {
		char member[PATH_MAX];
		ck_assert_int_eq(app_out_member_path(k, c->path, 2, member, sizeof member), 0);
		snprintf(other, sizeof other, "output.final_state=%s", member);
		rc = wait_exit(start(4, 0, kv, other, c->enable ? c->enable : "seed=7", NULL));
		ck_assert_msg(rc == 2, "%s: a file output on its member %s: exit %d: %s", c->key, member,
			      rc, run_log());
		ck_assert(access(odir, F_OK) != 0);
	}
}
END_TEST

/* Wait until g_dir/rel exists (a sequence: holds a member) or t seconds. */
static void wait_for(int row, const char *rel, double t)
{
	char path[PATH_MAX];
	at(path, sizeof path, rel);
	for (double w = 0; w < t; w += 0.02) {
		int files = 0;
		if (app_outputs[row].shape == APP_OUT_FILE ? access(path, F_OK) == 0
							   : (complete_or_absent(row, rel, &files), files > 0))
			return;
		if (count_in(g_dir, ".partial") > 0)
			return;
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
}

/* SIGINT mid-run: exit 130, complete or absent, no temporary file. */
START_TEST(interrupt_mid_run)
{
	const struct row_case *c = case_of(_i);
	char kv[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	pid_t pid = start(400, 0, kv, c->enable ? c->enable : "seed=7", "bodies.0.count=3000", NULL);
	wait_for(_i, c->path, 20);
	struct timespec ts = {0, 50000000};
	nanosleep(&ts, NULL);
	kill(pid, SIGINT);
	int rc = wait_exit(pid);
	ck_assert_msg(rc == 130 || rc == 0, "%s: SIGINT: exit %d: %s", c->key, rc, run_log());
	int files = 0;
	ck_assert_msg(complete_or_absent(_i, c->path, &files), "%s: SIGINT left a partial output",
		      c->key);
	ck_assert_msg(partials() == 0, "%s: SIGINT left temporary files", c->key);
	if (rc == 130 && app_outputs[_i].fate == APP_OUT_REMOVE && _i != APP_OUT_INITIAL_STATE)
		ck_assert_msg(files == 0, "%s: an interrupted run kept it", c->key);
}
END_TEST

/* SIGKILL mid-run: no final name holds a partial file. */
START_TEST(kill_mid_run)
{
	const struct row_case *c = case_of(_i);
	char kv[PATH_MAX];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	pid_t pid = start(400, 0, kv, c->enable ? c->enable : "seed=7", "bodies.0.count=3000", NULL);
	wait_for(_i, c->path, 20);
	kill(pid, SIGKILL);
	int st;
	drain_log();
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	int files = 0;
	ck_assert_msg(complete_or_absent(_i, c->path, &files), "%s: kill -9 left a partial file "
		      "under a final name", c->key);
	/* the next run over the same outputs removes the dead process's
	 * temporary files once they are a minute old (made so here) */
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "find '%s' -name '*.partial' -exec touch -d '-2 minutes' {} +", g_dir);
	ck_assert_int_eq(system(cmd), 0);
	int rc = wait_exit(start(3, 0, kv, c->enable ? c->enable : "seed=7", NULL));
	ck_assert_msg(rc == 0, "%s: the run after kill -9: exit %d: %s", c->key, rc, run_log());
	ck_assert_msg(partials() == 0, "%s: the killed run's temporary files stayed", c->key);
	ck_assert(complete_or_absent(_i, c->path, &files) && files > 0);
}
END_TEST

/* `nbody-render batch` wrote g_dir/run.log: into g_log (run_log). */
static void batch_log(void)
{
	char path[PATH_MAX];
	at(path, sizeof path, "run.log");
	FILE *f = fopen(path, "r");
	g_log[0] = '\0';
	if (f) {
		g_log[fread(g_log, 1, sizeof g_log - 1, f)] = '\0';
		fclose(f);
	}
}

/* Two runs of one batch with the same value: each in its own directory,
 * both complete, nothing at the shared value itself. */
START_TEST(batch_runs_never_share)
{
	const struct row_case *c = case_of(_i);
	char path[PATH_MAX], cmd[4 * PATH_MAX];
	at(path, sizeof path, "b.yaml");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	char enable[128] = "";
	if (c->enable) { /* "k=v" as YAML: ", k: v" */
		const char *eq = strchr(c->enable, '=');
		snprintf(enable, sizeof enable, ", %.*s: %s", (int)(eq - c->enable), c->enable, eq + 1);
	}
	fprintf(f, "output_dir: out\nruns:\n  - scene: scene.yaml\n    name: \"r{seed}\"\n"
		   "    set: {output.frames: 3, bodies.0.count: 100, render.width: 64, render.height: 48");
	static const char *off[] = {"output.video", "output.png_dir", "output.stats",
				    "output.initial_state", "output.final_state"};
	for (size_t o = 0; o < sizeof off / sizeof off[0]; o++)
		if (strcmp(off[o], c->key))
			fprintf(f, ", %s: \"\"", off[o]);
	fprintf(f, ", %s: \"%s\"%s}\n    sweep: {seed: [1, 2]}\n", c->key, c->path, enable);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' batch b.yaml --jobs 2 >run.log 2>&1", g_dir, g_bin);
	int ws = system(cmd);
	batch_log();
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s: the batch failed: %s", c->key,
		      run_log());
	const char *last = strrchr(c->path, '/');
	for (int s = 1; s <= 2; s++) {
		char rel[PATH_MAX];
		snprintf(rel, sizeof rel, "out/r%d/%s", s, last + 1);
		int files = 0;
		ck_assert_msg(complete_or_absent(_i, rel, &files) && files > 0,
			      "%s: run %d has no whole output of its own at %s", c->key, s, rel);
	}
	at(path, sizeof path, c->path);
	ck_assert_msg(access(path, F_OK) != 0, "%s: a batch run wrote the shared path %s", c->key, path);
	ck_assert_int_eq(partials(), 0);
	/* --resume: a run missing one file of this row runs again, the other not */
	char gone[PATH_MAX + 64], rel[PATH_MAX];
	snprintf(rel, sizeof rel, "out/r2/%s", last + 1);
	at(path, sizeof path, rel);
	if (app_outputs[_i].shape == APP_OUT_SEQ)
		ck_assert_int_eq(app_out_member_path(&app_outputs[_i], path, 1, gone, sizeof gone), 0);
	else
		snprintf(gone, sizeof gone, "%s", path);
	ck_assert_int_eq(unlink(gone), 0);
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' batch b.yaml --resume >run.log 2>&1", g_dir, g_bin);
	ws = system(cmd);
	batch_log();
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s: --resume failed: %s", c->key, g_log);
	ck_assert_msg(strstr(g_log, "run r2: incomplete") && strstr(g_log, "r1: complete, skipped"),
		      "%s: --resume did not see the missing %s: %s", c->key, gone, g_log);
	int files = 0;
	ck_assert(complete_or_absent(_i, rel, &files) && files > 0 && access(gone, F_OK) == 0);
}
END_TEST

/* A longer earlier run's higher members go; a FIFO that carries a member
 * name beyond the run, which is not ours, is never removed (refused). */
START_TEST(earlier_run_members)
{
	const struct app_out_kind *k = &app_outputs[_i];
	const struct row_case *c = case_of(_i);
	if (k->shape != APP_OUT_SEQ)
		return;
	char kv[PATH_MAX], dir[PATH_MAX], m[PATH_MAX + 64];
	snprintf(kv, sizeof kv, "%s=%s", c->key, c->path);
	ck_assert_int_eq(wait_exit(start(6, 0, kv, c->enable ? c->enable : "seed=7", NULL)), 0);
	at(dir, sizeof dir, c->path);
	ck_assert_int_eq(app_out_member_path(k, dir, 5, m, sizeof m), 0);
	ck_assert(access(m, F_OK) == 0);
	ck_assert_int_eq(wait_exit(start(3, 0, kv, c->enable ? c->enable : "seed=7", NULL)), 0);
	ck_assert_msg(access(m, F_OK) != 0, "%s: the earlier run's %s stayed", c->key, m);
	int files = 0;
	ck_assert(complete_or_absent(_i, c->path, &files));
	ck_assert_int_eq(files, 3);
	ck_assert_int_eq(mkfifo(m, 0644), 0);
	int rc = wait_exit(start(3, 0, kv, c->enable ? c->enable : "seed=7", NULL));
	struct stat sb;
	ck_assert_msg(lstat(m, &sb) == 0 && S_ISFIFO(sb.st_mode), "%s: the FIFO %s was removed", c->key, m);
	ck_assert_int_eq(rc, 2);
}
END_TEST

/* A restart never writes over or removes the snapshot it starts from: a
 * snapshots.every that would number a later frame like it is refused
 * (exit 2, and the dry run the same); the snapshot is unchanged. */
START_TEST(restart_keeps_its_snapshot)
{
	ck_assert_int_eq(wait_exit(start(9, 0, "output.snapshots.dir=o/snaps", "output.snapshots.every=2",
					 "output.stats=o/s.csv", NULL)),
			 0);
	char snap[PATH_MAX];
	at(snap, sizeof snap, "o/snaps/snap_001.hdf5"); /* frame 2 */
	long long before = sz_of(snap);
	ck_assert_int_gt(before, 0);
	struct stat s0, s1;
	ck_assert_int_eq(stat(snap, &s0), 0);
	char restart_arg[PATH_MAX + 16];
	snprintf(restart_arg, sizeof restart_arg, "--restart=%s", snap);
	/* every 4: frame 4 would be snap_001 again */
	int rc = wait_exit(start(9, 0, "output.snapshots.dir=o/snaps", "output.snapshots.every=4",
				 "output.stats=o/s.csv", restart_arg, NULL));
	ck_assert_msg(rc == 2, "restart over its own snapshot: exit %d: %s", rc, run_log());
	ck_assert_msg(strstr(run_log(), "snap_001.hdf5"), "message: %s", run_log());
	rc = wait_exit(start(9, 0, "output.snapshots.dir=o/snaps", "output.snapshots.every=4",
			     "output.stats=o/s.csv", restart_arg, "--dry-run", NULL));
	ck_assert_int_eq(rc, 2);
	/* fewer frames: the snapshot would be an earlier, longer run's number */
	rc = wait_exit(start(3, 0, "output.snapshots.dir=o/snaps", "output.snapshots.every=2",
			     "output.stats=o/s.csv", restart_arg, NULL));
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(stat(snap, &s1), 0);
	ck_assert(s1.st_ino == s0.st_ino && s1.st_size == s0.st_size &&
		  s1.st_mtim.tv_sec == s0.st_mtim.tv_sec && s1.st_mtim.tv_nsec == s0.st_mtim.tv_nsec);
	/* the same every: allowed, and the snapshot stays */
	rc = wait_exit(start(9, 0, "output.snapshots.dir=o/snaps", "output.snapshots.every=2",
			     "output.stats=o/s.csv", restart_arg, NULL));
	ck_assert_msg(rc == 0, "a plain restart: exit %d: %s", rc, run_log());
	ck_assert_int_eq(stat(snap, &s1), 0);
	ck_assert(s1.st_ino == s0.st_ino && s1.st_mtim.tv_nsec == s0.st_mtim.tv_nsec);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, every_row_has_its_cases);
	suite_add_tcase(s, tc);
	TCase *rows = tcase_create("rows");
	tcase_add_checked_fixture(rows, setup, teardown);
	tcase_set_timeout(rows, 120);
	tcase_add_loop_test(rows, row_alone_is_complete, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, full_disk, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, full_disk_tmpfs, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, special_file_at_name, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, same_name_as_another_output, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, file_in_the_way, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, batch_runs_never_share, 0, APP_OUTPUTS_MAX);
	tcase_add_loop_test(rows, earlier_run_members, 0, APP_OUTPUTS_MAX);
	tcase_add_test(rows, restart_keeps_its_snapshot);
	suite_add_tcase(s, rows);
	/* the slow part (make check-hostile, NB_HOSTILE_SLOW=1) */
	const char *slow = getenv("NB_HOSTILE_SLOW");
	if (slow && *slow && *slow != '0') {
		TCase *sig = tcase_create("signals");
		tcase_add_checked_fixture(sig, setup, teardown);
		tcase_set_timeout(sig, 120);
		tcase_add_loop_test(sig, interrupt_mid_run, 0, APP_OUTPUTS_MAX);
		tcase_add_loop_test(sig, kill_mid_run, 0, APP_OUTPUTS_MAX);
		suite_add_tcase(s, sig);
	}
	return s;
}

NB_CHECK_MAIN(make_suite)
