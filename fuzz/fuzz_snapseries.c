/* fuzz_snapseries.c - libFuzzer harness for film mode's snapshot series,
 * the way app/run.c takes it: scene_load_string of a scene with
 * simulation.solver: none and one model: snapshot entry whose
 * bodies.0.snapshots pattern names 2 or 3 fuzzed files, app_preflight's
 * checks (sim_inputs_check, which runs sim_snap_series_check; a refusal
 * ends there, as it ends the run), then sim_snap_series_open
 * (views_start) and every frame's
 * sim_snap_series_at at the time engine.c's film mode asks for
 * (t0 + f (t1 - t0) / (frames - 1)).
 *
 * Input: FUZZ_NOPT option bytes, then the members separated by the line
 * "=====" (fuzz_files.h), written as s_000, s_001, s_002 (.dat raw GADGET
 * binary, or .hdf5 from the fuzz_h5.h recipe when option byte 0 bit 0 is
 * set; raw files never get gadget-hdf5, and a first byte starting HDF5's
 * signature is changed: libhdf5's parser of damaged files is not ours).
 * Option byte 6: bit 0 nbody units, bits 1-3 output.frames - 2 (2..9).
 * The other bytes pick units, comoving, region, subsample and type keys
 * (fuzz_snap_keys). Files live in a private directory under $TMPDIR,
 * removed after each input.
 *
 * Contract: scene load, the checks, open and every frame return 0 or
 * NB_EINPUT (the open may refuse what the checks passed: they read no
 * values, docs/snapshots.md, so a mass that overflows is the run's to
 * find); an
 * open series has as many files as written, first and last times finite
 * and increasing; the state at open and at every frame has bodies finite
 * in internal units, masses >= 0, components in range, a finite time in
 * [t0, t1], and no more bodies than the members could hold together. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/scene.h"
#include "../sim/sim.h"
#include "fuzz_files.h"
#include "fuzz_h5.h"
#include "fuzz_util.h"

static void check_frame(const struct sim_snap_series *film, const struct sim_state *st,
			size_t most)
{
	fuzz_check_state(st, most);
	const double t0 = sim_snap_series_t0(film), t1 = sim_snap_series_t1(film);
	if (!(st->time >= t0 && st->time <= t1))
		fuzz_fail("a frame's time is outside the series", 0);
}

/* The scene loaded from text, its series checked and opened as the
 * program does, and played over its frames. */
static void play_scene(const char *text, const char *dir, const struct fuzz_parts *pt, int hdf5,
		       int frames)
{
	int err;
	struct scene *sc = fuzz_scene_load(text, dir, &err);
	if (err == 0) {
		struct sim_units u;
		scene_units_of(sc->units, &u);
		/* app_preflight: every input checked before any work (the series
		 * included); a refusal ends the run, so the series is not opened */
		int pre = sim_inputs_check(sc);
		fuzz_rc("sim_inputs_check returned neither 0 nor NB_EINPUT", pre);
		struct sim_state st = {0};
		struct sim_snap_series *film = NULL;
		err = pre ? pre : sim_snap_series_open(sc, 0, &u, &st, &film);
		fuzz_rc("sim_snap_series_open returned neither 0 nor NB_EINPUT", err);
		if (err != 0 && film)
			fuzz_fail("a refused series left a handle", err);
		if (err == 0) {
			const size_t most = fuzz_most_bodies(pt, hdf5, FUZZ_H5_MAX_ROWS);
			const double t0 = sim_snap_series_t0(film), t1 = sim_snap_series_t1(film);
			if (sim_snap_series_count(film) != pt->count)
				fuzz_fail("the series has another number of files than written",
					  sim_snap_series_count(film));
			if (!(isfinite(t0) && isfinite(t1) && t0 < t1))
				fuzz_fail("the series' times are not finite and increasing", 0);
			check_frame(film, &st, most);
			/* engine.c's film mode: frame f at t0 + f (t1 - t0) / (frames - 1) */
			for (int f = 1; f < frames && err == 0; f++) {
				const double t = t0 + f * (t1 - t0) / (frames - 1);
				err = sim_snap_series_at(film, t, &st);
				fuzz_rc("sim_snap_series_at returned neither 0 nor NB_EINPUT", err);
				if (err == 0)
					check_frame(film, &st, most);
			}
			sim_snap_series_free(&film);
			sim_state_free(&st);
		}
	}
	free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	const char *dir = fuzz_dir("snapseries");
	uint8_t o[FUZZ_NOPT];
	struct fuzz_parts pt;
	fuzz_snap_input(data, size, o, &pt);
	const int hdf5 = o[0] & 1, frames = 2 + ((o[6] >> 1) & 7);
	const char *ext = hdf5 ? "hdf5" : "dat";
	char names[FUZZ_MAX_PARTS][32];
	for (int i = 0; i < pt.count; i++)
		snprintf(names[i], sizeof names[i], "s_%03d.%s", i, ext);
	fuzz_write_snaps(dir, &pt, hdf5, names);

	char text[4096] = "";
	fuzz_cat(text, sizeof text,
		 "units: %s\nsimulation: {solver: none}\noutput: {frames: %d}\nbodies:\n"
		 "  - name: run\n    model: snapshot\n    file: %s\n    snapshots: \"s_%%03d.%s\"\n",
		 o[6] & 1 ? "nbody" : "galactic", frames, names[0], ext);
	fuzz_snap_keys(text, sizeof text, o, hdf5, 0);
	play_scene(text, dir, &pt, hdf5, frames);
	for (int i = 0; i < pt.count; i++)
		fuzz_unlink(dir, names[i]);
	return 0;
}
