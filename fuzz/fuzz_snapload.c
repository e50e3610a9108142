/* fuzz_snapload.c - libFuzzer harness for a scene's model: snapshot entry,
 * the whole way a run takes it: scene_load_string (the file: key checked
 * and made absolute), app_preflight's checks (sim_inputs_check; a refusal
 * ends there, as it ends the run), the count pass the dry run makes
 * (sim_snap_load with no state, sim_scene_body_count), then sim_ic_build, which
 * app/run.c's views_start calls for the bodies: every file of the
 * snapshot, units, comoving rules, region, subsample, type selection,
 * the entry's placement, and a plummer entry before it when asked.
 *
 * Input: FUZZ_NOPT option bytes, then up to 3 files separated by the line
 * "=====" (fuzz_files.h): the parts snap.0, snap.1, snap.2 of a snapshot
 * (a header saying num_files 2 or 3 reads the others). Option byte 0,
 * bit 0: the files are HDF5 recipes (fuzz_h5.h: libhdf5 writes a file
 * with a hostile layout) named snap.N.hdf5; else raw GADGET binary bytes
 * named snap.N.dat, which never get format gadget-hdf5 and whose first
 * byte is changed when it starts HDF5's signature (libhdf5's own parser
 * of damaged files is not this project's code: fuzz_snaph5.c). Bit 1: a
 * plummer entry of 3 bodies first. The other option bits pick the entry's
 * keys (fuzz_snap_keys). Files are written to a private directory under
 * $TMPDIR and removed after each input.
 *
 * Contract: each call returns 0 or NB_EINPUT (the checks, the count pass,
 * the body count, the build); a build that succeeds had a count pass that succeeded
 * with the same number of bodies; every body is finite in internal units,
 * masses >= 0, components in range, and no more bodies than the files
 * could hold (12 bytes of positions a binary particle; 7 rows a type in a
 * recipe file) plus the plummer entry's 3. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/scene.h"
#include "../sim/sim.h"
#include "fuzz_files.h"
#include "fuzz_h5.h"
#include "fuzz_util.h"

/* The scene loaded from text: checked, counted and built as the program
 * does; the counts agree and the bodies are sane. */
static void load_scene(const char *text, const char *dir, const struct fuzz_parts *pt, int hdf5,
		       int ball)
{
	int err;
	struct scene *sc = fuzz_scene_load(text, dir, &err);
	if (err == 0) {
		const int k = sc->nbodies - 1;
		if (sc->bodies[k].model != SCENE_MODEL_SNAPSHOT)
			fuzz_fail("the scene's last entry is not the snapshot", k);
		/* app_preflight: every input checked before any work; a refusal ends the run */
		err = sim_inputs_check(sc);
		fuzz_rc("sim_inputs_check returned neither 0 nor NB_EINPUT", err);
	}
	if (err == 0) {
		const int k = sc->nbodies - 1;
		struct sim_units u;
		scene_units_of(sc->units, &u);
		struct sim_snap_info info;
		int cerr = sim_snap_load(sc, k, &u, NULL, 0, 0, &info);
		fuzz_rc("the count pass returned neither 0 nor NB_EINPUT", cerr);
		size_t counted = ball ? 3 : 0;
		for (int t = 0; t < SIM_SNAP_NTYPES && cerr == 0; t++) {
			if (info.kept[t] > info.in_file[t])
				fuzz_fail("the count pass keeps more than the snapshot holds", t);
			counted += info.kept[t];
		}
		/* app_preflight's body count: -1 ends the run */
		long dry = sim_scene_body_count(sc);
		if ((cerr == 0) != (dry >= 0) || (cerr == 0 && dry != (long)counted))
			fuzz_fail("sim_scene_body_count and the count pass disagree", (int)dry);
		struct sim_state st = {0};
		err = dry < 0 ? NB_EINPUT : sim_ic_build(sc, &st);
		fuzz_rc("sim_ic_build returned neither 0 nor NB_EINPUT", err);
		if (err == 0) {
			if (st.n != counted)
				fuzz_fail("the build made another number of bodies than counted", (int)st.n);
			fuzz_check_state(&st, fuzz_most_bodies(pt, hdf5, FUZZ_H5_MAX_ROWS) + (ball ? 3 : 0));
			sim_state_free(&st);
		}
	}
	free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	const char *dir = fuzz_dir("snapload");
	uint8_t o[FUZZ_NOPT];
	struct fuzz_parts pt;
	fuzz_snap_input(data, size, o, &pt);
	const int hdf5 = o[0] & 1, ball = (o[0] >> 1) & 1;
	char names[FUZZ_MAX_PARTS][32];
	for (int i = 0; i < pt.count; i++)
		snprintf(names[i], sizeof names[i], "snap.%d.%s", i, hdf5 ? "hdf5" : "dat");
	fuzz_write_snaps(dir, &pt, hdf5, names);

	char text[4096] = "";
	fuzz_cat(text, sizeof text, "units: %s\nbodies:\n", o[6] & 1 ? "nbody" : "galactic");
	if (ball)
		fuzz_cat(text, sizeof text,
			 "  - {name: ball, model: plummer, count: 3, mass: 1, scale: 1}\n");
	fuzz_cat(text, sizeof text, "  - name: run\n    model: snapshot\n    file: %s\n", names[0]);
	fuzz_snap_keys(text, sizeof text, o, hdf5, 1);
	load_scene(text, dir, &pt, hdf5, ball);
	for (int i = 0; i < pt.count; i++)
		fuzz_unlink(dir, names[i]);
	return 0;
}
