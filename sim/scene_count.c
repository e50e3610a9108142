/* scene_count.c - how many bodies a scene creates (sim_scene_body_count).
 * Kept apart from the loader because file models need the state-CSV reader
 * (sim/state_csv.c) to count their rows. */
#include <limits.h>

#include "../scene/log.h"
#include "sim.h"

long sim_scene_body_count(const struct scene *sc)
{
	long total = 0;
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		long n;
		if (b->model == SCENE_MODEL_DISK_GALAXY) {
			n = b->disk.count + b->bulge.count + b->halo.count;
		} else if (b->model == SCENE_MODEL_SNAPSHOT) {
			struct sim_units u;
			struct sim_snap_info info;
			scene_units_of(sc->units, &u);
			if (sim_snap_load(sc, i, &u, NULL, 0, 0, &info) != 0)
				return -1; /* logged by the reader, with the file and dataset */
			size_t kept = 0;
			for (int t = 0; t < SIM_SNAP_NTYPES; t++)
				kept += info.kept[t];
			if (kept > (size_t)LONG_MAX / 2) {
				log_error("bodies.%d.file: %s: too many particles (%zu)", i, b->file, kept);
				return -1;
			}
			n = (long)kept;
		} else if (b->model == SCENE_MODEL_FILE) {
			struct sim_units u;
			size_t rows = 0;
			scene_units_of(sc->units, &u);
			if (sim_state_read_csv(b->file, &u, NULL, 0, &rows) != 0)
				return -1; /* logged by the reader, with file:line */
			if (rows > (size_t)LONG_MAX / 2) {
				log_error("bodies.%d.file: %s: too many rows (%zu)", i, b->file, rows);
				return -1;
			}
			n = (long)rows;
		} else {
			n = b->count;
		}
		if (n < 0 || total > LONG_MAX / 2 - n) {
			log_error("bodies.%d: body count overflows", i);
			return -1;
		}
		total += n;
	}
	return total;
}
