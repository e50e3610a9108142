/* fuzz_scene.c - libFuzzer harness for the scene loader with --set paths.
 *
 * The input is a scene file. Its lines that start with "#set " are also
 * passed as --set overrides (up to 8: "#set camera.fov=40"); to YAML they are
 * comments, so one input mutates both the file and the command line.
 * Contract checked (scene/scene.h): scene_load_string returns 0 or
 * NB_EINPUT on any bytes, and a scene that loads is emitted as YAML that
 * loads again (scene_emit) to an identical emission. Body files named by
 * model: file are looked up in an empty directory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../scene/scene.h"
#include "fuzz_util.h"

#define FUZZ_MAX_SETS 8

static const char *empty_dir(void)
{
	static char dir[64];
	return fuzz_empty_dir(dir, "/tmp/nb-fuzz-scene.XXXXXX");
}

/* Emit sc to a malloc'd string (caller frees). */
static char *emit(const struct scene *sc, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	int err = scene_emit(sc, f);
	fclose(f);
	if (err)
		fuzz_fail("scene_emit failed on a loaded scene", err);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	char *text = fuzz_text(data, size);
	char *copy = fuzz_text(data, size);
	const char *sets[FUZZ_MAX_SETS];
	int nsets = 0;
	for (char *line = copy, *next; line && nsets < FUZZ_MAX_SETS; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "#set ", 5) == 0)
			sets[nsets++] = line + 5;
	}

	struct scene *sc = calloc(1, sizeof *sc), *again = calloc(1, sizeof *again);
	if (!sc || !again)
		abort();
	int err = scene_load_string(text, "fuzz.yaml", empty_dir(), sets, nsets, sc);
	if (err != 0 && err != NB_EINPUT)
		fuzz_fail("scene_load_string returned neither 0 nor NB_EINPUT", err);
	if (err == 0) {
		size_t n1, n2;
		char *y1 = emit(sc, &n1);
		err = scene_load_string(y1, "resolved.yaml", empty_dir(), NULL, 0, again);
		if (err)
			fuzz_fail("the resolved scene does not load again", err);
		char *y2 = emit(again, &n2);
		if (n1 != n2 || memcmp(y1, y2, n1) != 0)
			fuzz_fail("the resolved scene reloads to a different scene", 0);
		free(y1);
		free(y2);
	}
	free(sc);
	free(again);
	free(copy);
	free(text);
	return 0;
}
