/* test_scene_util.h - shared by the scene tests: load a scene from a
 * string or a file with stderr captured into g_err, so a test can assert
 * on the one error message a bad input must produce. */
#ifndef NB_TEST_SCENE_UTIL_H
#define NB_TEST_SCENE_UTIL_H

#include <check.h>
#include <stdio.h>
#include <unistd.h>

#include "scene/scene.h"

static char g_err[8192];

/* Run a load with stderr captured into g_err. */
static int cap_begin(FILE **tmp, int *saved)
{
	fflush(stderr);
	*tmp = tmpfile();
	ck_assert_ptr_nonnull(*tmp);
	*saved = dup(2);
	dup2(fileno(*tmp), 2);
	return 0;
}

static void cap_end(FILE *tmp, int saved)
{
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(g_err, 1, sizeof(g_err) - 1, tmp);
	g_err[n] = '\0';
	fclose(tmp);
}

static int load_str(const char *text, const char *const *ov, int nov, struct scene *sc)
{
	FILE *tmp;
	int saved;
	cap_begin(&tmp, &saved);
	int err = scene_load_string(text, "t.yaml", "tests/data", ov, nov, sc);
	cap_end(tmp, saved);
	return err;
}

static int load_file(const char *path, const char *const *ov, int nov, struct scene *sc)
{
	FILE *tmp;
	int saved;
	cap_begin(&tmp, &saved);
	int err = scene_load(path, ov, nov, sc);
	cap_end(tmp, saved);
	return err;
}

#endif
