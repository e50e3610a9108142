/* test_batch_util.h - helpers shared by the batch program tests
 * (tests/test_batch.c, tests/test_batch_views.c): the program and data
 * paths, running `nbody-render batch` in a directory, and reading
 * batch-report.json with an independent JSON parser (python3). */
#ifndef NB_TEST_BATCH_UTIL_H
#define NB_TEST_BATCH_UTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check_main.h"

static char g_bin[PATH_MAX], g_data[PATH_MAX];

/* g_bin = the program under test (NB_BIN), g_data = tests/data, absolute. */
static inline void setup_paths(void)
{
	ck_assert_msg(realpath(nb_bin(), g_bin), "no program at %s (build it, or set NB_BIN)", nb_bin());
	ck_assert(realpath("tests/data", g_data));
}

/* setup_paths, then a new directory from the mkdtemp template dir and the
 * batch file dir/b.yaml (its path in path) open for writing. */
static inline FILE *batch_file_create(char *dir, char *path, size_t len)
{
	setup_paths();
	ck_assert(mkdtemp(dir));
	ck_assert((size_t)snprintf(path, len, "%s/b.yaml", dir) < len);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	return f;
}

/* system(printf(fmt, dir, arg)): the shell's exit status, -1 if killed. */
static inline int sh(const char *fmt, const char *dir, const char *arg)
{
	char cmd[8 * PATH_MAX];
	ck_assert((size_t)snprintf(cmd, sizeof cmd, fmt, dir, arg) < sizeof cmd);
	int ws = system(cmd);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* nbody-render batch ARGS in DIR (output appended to DIR/log): exit status. */
static inline int batch_in(const char *dir, const char *args)
{
	char a[4 * PATH_MAX];
	ck_assert((size_t)snprintf(a, sizeof a, "'%s' batch %s", g_bin, args) < sizeof a);
	return sh("cd '%s' && %s >>log 2>&1", dir, a);
}

/* The Python expression EXPR (over d, the parsed DIR/OUT/batch-report.json)
 * printed by python3 into buf; "" if python3 is missing. */
static inline void batch_report_query(const char *dir, const char *out, const char *expr,
				      char *buf, size_t len)
{
	char cmd[3 * PATH_MAX + 1024];
	buf[0] = '\0';
	if (system("command -v python3 >/dev/null 2>&1"))
		return;
	ck_assert((size_t)snprintf(cmd, sizeof cmd,
				   "cd '%s' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
				   "print(%s)' %s/batch-report.json",
				   dir, expr, out) < sizeof cmd);
	FILE *p = popen(cmd, "r");
	ck_assert(p);
	if (!fgets(buf, (int)len, p))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	ck_assert_int_eq(pclose(p), 0);
}

/* batch_report_query equals want (skipped without python3). */
static inline void batch_check_report(const char *dir, const char *out, const char *expr,
				      const char *want)
{
	char got[1024];
	batch_report_query(dir, out, expr, got, sizeof got);
	if (got[0])
		ck_assert_str_eq(got, want);
}

#endif
