/* test_runend.c - what a run says at its start and its end (issue 29):
 * a scene whose input file is not in the repository says where the file
 * comes from when it is missing (bodies.*.source), for the run and the
 * dry run alike, with exit 2; the end of a run names every output it
 * wrote with its size (checked against stat of the files), and no stage
 * that did not run is reported as "0.0 s".
 *
 * Program level (NB_BIN, each case in a temporary directory).
 *   NB_BIN=build/nbody-render build/tests/test_runend */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

/* snprintf into the array BUF, asserting that it fit */
#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)

static char g_bin[PATH_MAX];

static void setup(void)
{
	ck_assert_msg(realpath(nb_bin(), g_bin), "NB_BIN %s not found", nb_bin());
}

/* A fresh temporary directory into DIR. */
static void make_dir(char *dir, size_t len)
{
	ck_assert((size_t)snprintf(dir, len, "/tmp/nb_runend_XXXXXX") < len);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Run the program in DIR with ARGS (a shell word list); stderr (and
 * stdout) into DIR/log. The exit status. */
static int run_in(const char *dir, const char *args)
{
	char cmd[PATH_MAX * 3];
	FMT(cmd, "cd '%s' && '%s' %s >log 2>&1", dir, g_bin, args);
	int st = system(cmd);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The whole of DIR/NAME (malloc'd, NUL-terminated). */
static char *slurp(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FMT(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: cannot open", path);
	char *buf = malloc(1 << 20);
	ck_assert_ptr_nonnull(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FMT(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];
	FMT(cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A snapshot entry whose file is missing: the message names the file, the
 * key's place, and where the file comes from; the run and the dry run
 * both refuse it with exit 2 before any work. */
START_TEST(missing_example_file_says_where_it_comes_from)
{
	char dir[64];
	make_dir(dir, sizeof dir);
	write_file(dir, "s.yaml",
		   "units: galactic\n"
		   "simulation: {solver: none}\n"
		   "bodies:\n"
		   "  - name: g\n"
		   "    model: snapshot\n"
		   "    file: data/ics.dat\n"
		   "    source: \"the Example-9 archive, as ICs/ics.dat\"\n"
		   "output: {frames: 2, stats: o/s.csv}\n");
	const char *modes[] = {"s.yaml --dry-run", "s.yaml"};
	for (int m = 0; m < 2; m++) {
		ck_assert_int_eq(run_in(dir, modes[m]), 2);
		char *log = slurp(dir, "log");
		ck_assert_msg(strstr(log, "s.yaml:6:11: bodies.0.file: cannot open 'data/ics.dat'") ||
				      strstr(log, "s.yaml:6:11: bodies.0.file: cannot open './data/ics.dat'"),
			      "%s: no file:line:col and path in: %s", modes[m], log);
		ck_assert_msg(strstr(log, "it comes from the Example-9 archive, as ICs/ics.dat"),
			      "%s: no word of where the file comes from in: %s", modes[m], log);
		free(log);
		char o[PATH_MAX];
		struct stat sb;
		FMT(o, "%s/o", dir);
		ck_assert_msg(stat(o, &sb) != 0, "%s: made %s before refusing", modes[m], o);
	}
	/* without source the message is the plain one */
	write_file(dir, "t.yaml",
		   "units: galactic\nsimulation: {solver: none}\nbodies:\n"
		   "  - {name: g, model: snapshot, file: data/ics.dat}\n"
		   "output: {frames: 2, stats: o/s.csv}\n");
	ck_assert_int_eq(run_in(dir, "t.yaml --dry-run"), 2);
	char *log = slurp(dir, "log");
	ck_assert_msg(strstr(log, "No such file or directory\n") && !strstr(log, "comes from"),
		      "unexpected message: %s", log);
	free(log);
	remove_tree(dir);
}
END_TEST

static const char *small_scene =
	"units: nbody\nseed: 3\n"
	"simulation: {solver: direct, softening: 0.05, dt: 0.001, steps_per_frame: 2, backend: cpu}\n"
	"bodies:\n  - {name: c, model: plummer, count: 200}\n"
	"camera: {keys: [{frame: 0, position: [0, -8, 3], target: [0, 0, 0]}]}\n"
	"render: {width: 64, height: 36}\n"
	"output: {frames: 4}\n";

/* Size of DIR/NAME, a regular file; -1 if it is none. */
static long long size_of(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat sb;
	FMT(path, "%s/%s", dir, name);
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1;
}

/* "N bytes" or "X.Y KiB/MiB/GiB" at S: the size it says holds bytes (within
 * the rounding of one decimal). */
static void assert_size_text(const char *s, long long bytes, const char *line)
{
	double v = 0;
	char unit[8] = "";
	ck_assert_msg(sscanf(s, "%lf %7s", &v, unit) == 2, "no size in '%s'", line);
	double scale = !strncmp(unit, "byte", 4) ? 1 : !strcmp(unit, "KiB") ? 1024
		       : !strcmp(unit, "MiB") ? 1048576.0 : !strcmp(unit, "GiB") ? 1073741824.0 : 0;
	ck_assert_msg(scale > 0, "unknown unit '%s' in '%s'", unit, line);
	if (scale == 1)
		ck_assert_msg((long long)v == bytes, "'%s': %lld bytes on disk", line, bytes);
	else
		ck_assert_msg(fabs(v * scale - (double)bytes) <= 0.05 * scale + 1e-9 && v < 1024,
			      "'%s': %lld bytes on disk", line, bytes);
}

/* The line of LOG that starts with "  PREFIX": its text after the prefix. */
static const char *listed(const char *log, const char *prefix)
{
	char needle[PATH_MAX];
	FMT(needle, "\n  %s", prefix);
	const char *at = strstr(log, needle);
	ck_assert_msg(at != NULL, "no line '  %s' in: %s", prefix, log);
	return at + strlen(needle);
}

/* Every output a run wrote is listed once at its end, with the size stat
 * gives (a sequence: its first and last member, the count, the sum), and
 * the total; the "done:" line names only the stages that ran, none as
 * "0.0 s"; --quiet prints none of it. */
START_TEST(run_end_lists_every_output_with_its_size)
{
	char dir[64];
	make_dir(dir, sizeof dir);
	write_file(dir, "s.yaml", small_scene);
	ck_assert_int_eq(run_in(dir, "s.yaml --set output.video=o/v.mp4 --set output.png_dir=o/png "
				     "--set output.stats=o/s.csv --set output.initial_state=o/i.csv "
				     "--set output.final_state=o/f.csv --set output.preview=o/p.jpg "
				     "--set output.snapshots.dir=o/snap --set output.snapshots.every=2"),
			 0);
	char *log = slurp(dir, "log");
	const char *files[] = {"o/v.mp4", "o/p.jpg", "o/s.csv", "o/i.csv", "o/f.csv",
			       "o/v.scene.yaml"};
	long long total = 0;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		long long b = size_of(dir, files[i]);
		char prefix[64];
		ck_assert_msg(b > 0, "%s not written", files[i]);
		FMT(prefix, "%s, ", files[i]);
		assert_size_text(listed(log, prefix), b, files[i]);
		total += b;
	}
	long long png = 0, snap = 0;
	for (int f = 0; f < 4; f++) {
		char name[64];
		FMT(name, "o/png/frame_%05d.png", f);
		ck_assert_int_gt(size_of(dir, name), 0);
		png += size_of(dir, name);
	}
	/* every 2 frames: frames 0 and 2, and the last, 3 */
	for (int n = 0; n < 3; n++) {
		char name[64];
		FMT(name, "o/snap/snap_%03d.hdf5", n);
		ck_assert_int_gt(size_of(dir, name), 0);
		snap += size_of(dir, name);
	}
	ck_assert_int_lt(size_of(dir, "o/snap/snap_003.hdf5"), 0);
	assert_size_text(listed(log, "o/png/frame_00000.png .. frame_00003.png, 4 files, "), png,
			 "png");
	assert_size_text(listed(log, "o/snap/snap_000.hdf5 .. snap_002.hdf5, 3 files, "), snap,
			 "snapshots");
	total += png + snap;
	const char *head = strstr(log, "wrote 8 outputs, ");
	ck_assert_msg(head != NULL, "no 'wrote 8 outputs' in: %s", log);
	assert_size_text(head + strlen("wrote 8 outputs, "), total, "the total");
	ck_assert_msg(strstr(log, "done: 4 frames in ") && !strstr(log, " 0.0 s") &&
			      !strstr(log, "main thread"),
		      "a stage of no time, or no done line, in: %s", log);
	free(log);

	/* statistics only: no rendering, encoding or PNG stage is named */
	ck_assert_int_eq(run_in(dir, "s.yaml --set output.stats=o2/s.csv"), 0);
	log = slurp(dir, "log");
	ck_assert_msg(strstr(log, "done: 4 frames in ") && !strstr(log, "rendering") &&
			      !strstr(log, "encoding") && !strstr(log, "PNG") && !strstr(log, " 0.0 s"),
		      "a stage that did not run is named in: %s", log);
	ck_assert_msg(strstr(log, "wrote 2 outputs, ") && strstr(log, "\n  o2/s.csv, ") &&
			      strstr(log, "\n  o2/s.scene.yaml, "),
		      "the statistics run's outputs are not listed in: %s", log);
	free(log);

	ck_assert_int_eq(run_in(dir, "s.yaml --set output.stats=o3/s.csv --quiet"), 0);
	log = slurp(dir, "log");
	ck_assert_msg(log[0] == '\0', "--quiet printed: %s", log);
	ck_assert_int_gt(size_of(dir, "o3/s.csv"), 0);
	free(log);
	remove_tree(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("runend");
	TCase *tc = tcase_create("runend");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, missing_example_file_says_where_it_comes_from);
	tcase_add_test(tc, run_end_lists_every_output_with_its_size);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
