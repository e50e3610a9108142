/* fuzz_bodyfile.c - libFuzzer harness for the body-file readers: the state
 * CSV (sim/state_csv.c) and the body table of model: file (sim/table.c).
 *
 * The input is a body file, handed to sim_state_read_csv and to
 * sim_table_read (with the default column map, and with a map by position
 * x: 1, y: 2, z: 3, mass: 4) through an in-memory file (memfd) so that no
 * disk is touched. Contract checked (sim/sim.h, sim/table.h): on any bytes
 * each returns 0 or NB_EINPUT; the count pass (st == NULL) and the read pass
 * agree on the number of bodies, and every body read has finite position,
 * velocity and mass >= 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../scene/scene.h"
#include "../sim/sim.h"
#include "../sim/table.h"
#include "fuzz_util.h"

#define FUZZ_MAX_BODIES 100000

/* The reader under test: the state CSV, or a body table with map cols. */
static int fuzz_read(int table, const char (*cols)[SCENE_NAME_MAX], const char *path,
		     const struct sim_units *u, struct sim_state *st, size_t *n)
{
	if (!table)
		return sim_state_read_csv(path, u, st, 0, n);
	return sim_table_read(path, cols, u, st, 0, n, NULL, NULL);
}

/* One reader over the file at path: the contract above. */
static void fuzz_reader(int table, const char (*cols)[SCENE_NAME_MAX], const char *path)
{
	struct sim_units u;
	scene_units_of(SCENE_UNITS_NBODY, &u);
	size_t n = 0, n2 = 0;
	int err = fuzz_read(table, cols, path, &u, NULL, &n);
	if (err != 0 && err != NB_EINPUT)
		fuzz_fail("count pass returned neither 0 nor NB_EINPUT", err);
	if (err != 0 || n == 0 || n > FUZZ_MAX_BODIES)
		return;
	struct sim_state st;
	memset(&st, 0, sizeof st);
	if (sim_state_alloc(&st, n, 1))
		abort();
	err = fuzz_read(table, cols, path, &u, &st, &n2);
	if (err)
		fuzz_fail("read pass refused what the count pass accepted", err);
	if (n2 != n)
		fuzz_fail("count and read passes disagree", (int)n2);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++)
			if (!isfinite(st.pos[3 * i + k]) || !isfinite(st.vel[3 * i + k]))
				fuzz_fail("a body read has a non-finite coordinate", (int)i);
		if (!(st.mass[i] >= 0) || !isfinite(st.mass[i]))
			fuzz_fail("a body read has a mass that is not finite and >= 0", (int)i);
	}
	sim_state_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char by_position[SCENE_NCOL][SCENE_NAME_MAX] = {
		[SCENE_COL_X] = "1", [SCENE_COL_Y] = "2", [SCENE_COL_Z] = "3", [SCENE_COL_MASS] = "4"};
	fuzz_quiet_stderr();
	char path[64];
	int fd = fuzz_memfile("bodies.csv", data, size, path, sizeof path);
	fuzz_reader(0, NULL, path);
	fuzz_reader(1, NULL, path);
	fuzz_reader(1, by_position, path);
	close(fd);
	return 0;
}
