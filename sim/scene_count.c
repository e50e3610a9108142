/* scene_count.c - how many bodies a scene creates (sim_scene_body_count),
 * and the check of every input file before any work (sim_inputs_check).
 * Kept apart from the loader because file models need the state-CSV reader
 * (sim/state_csv.c) to count their rows, and snapshot entries the readers.
 *
 * Both are called by app_preflight, which --dry-run and the run share: so
 * what the run refuses about an input, the dry run refuses the same way.
 * Each refusal is two lines: the reader's (the file and what is wrong in
 * it), then the scene entry's file:line:col (scene_fail_key). */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "../scene/log.h"
#include "sim.h"
#include "table.h"

#define SIM_ACC_MAX 1e30 /* as scene/scene.c's SCENE_ACC_MAX */

/* bodies.K.KEY of each enum scene_column, for a body table's refusal */
static const char *const count_column_key[SCENE_NCOL] = {
	"columns.x", "columns.y", "columns.z", "columns.vx", "columns.vy", "columns.vz",
	"columns.mass"};

/* Place a reader's refusal (already logged) at entry k's key. */
static int count_refused(const struct scene *sc, int k, const char *key, const char *path,
			 const char *what)
{
	char full[64];
	snprintf(full, sizeof full, "bodies.%d.%s", k, key);
	return scene_fail_key(sc, full, k, "%s '%s' refused (the reason is the message above)",
			      what, path);
}

int sim_inputs_check(const struct scene *sc)
{
	struct sim_units u;
	scene_units(sc, &u);
	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model != SCENE_MODEL_SNAPSHOT)
			continue;
		struct sim_snap_info info;
		char path[SCENE_PATH_MAX + 64];
		sim_snap_entry_path(sc, k, path, sizeof path);
		int err = sim_snap_check_path(sc, k, NULL, &info);
		if (err)
			return err == NB_EINPUT ? count_refused(sc, k, "file", path, "the snapshot")
						: err;
		if (b->snap.series[0] && (err = sim_snap_series_check(sc, k, &u)))
			return err == NB_EINPUT ? count_refused(sc, k, "snapshots", b->snap.series,
								"the snapshot series")
						: err;
	}
	return 0;
}

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
			scene_units(sc, &u);
			int err = sim_snap_load(sc, i, &u, NULL, 0, 0, &info);
			if (err == NB_EINPUT)
				count_refused(sc, i, "file", b->file, "the snapshot");
			if (err)
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
			scene_units(sc, &u);
			double lg = 0;
			int bad = -1;
			int err = sim_table_read(b->file, (const char(*)[SCENE_NAME_MAX])b->columns,
						 NULL, NULL, 0, &rows, &lg, &bad);
			if (err == NB_EINPUT)
				count_refused(sc, i, bad >= 0 ? count_column_key[bad] : "file", b->file,
					      "the body table");
			if (err)
				return -1; /* logged by the reader, with file:line */
			/* as the scene's own masses (scene_load's force check): the
			 * largest acceleration G M / softening^2 must stay finite */
			const double acc = lg + log10(u.mass) - 2 * log10(scene_softening(sc));
			if (acc > log10(SIM_ACC_MAX) && sc->simulation.solver != SCENE_SOLVER_NONE) {
				char key[48];
				snprintf(key, sizeof key, "bodies.%d.file", i);
				scene_fail_key(sc, key, i,
					       "the bodies of %s have a total mass of 1e%.1f (column "
					       "'mass', scene units): with simulation.softening %g their "
					       "accelerations reach about 1e%.0f internal units (G M / "
					       "softening^2), beyond %g where they overflow; a bad mass "
					       "column (or units), or raise simulation.softening",
					       b->file, lg, sc->simulation.softening, acc, SIM_ACC_MAX);
				return -1;
			}
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
