/* snap_units.c - units: snapshot, resolved once (sim_scene_units_resolve):
 * the scene's keys are in the code units of its first snapshot entry, as
 * the file's header gives them (sim/snap_hdf5.c reads SWIFT's Units group,
 * GADGET-4's Parameters group or Header attributes), else as the scene's
 * loader set them (scene/units.c: bodies.*.units.*, else GADGET's 1 kpc,
 * 1e10 M_sun, 1 km/s). The scene layer cannot read the file, so the
 * program calls this right after loading, for the run and --dry-run alike,
 * and every conversion then reads sc->units_cgs through scene_units().
 * Comoving files keep their a and h in sim/snap_load.c: the scene's units
 * are the plain code units (1 kpc, not 1 kpc/h). */
#include <stdio.h>
#include <unistd.h>

#include "../scene/scene_schema.h"
#include "snap_internal.h"

/* The row bodies.K.format names, NULL for auto (as sim/snap_load.c). */
static const struct sim_snap_format *entry_format(const struct scene_snapshot *o)
{
	const struct scene_key *key = scene_schema_find("bodies.*.format");
	return sim_snap_format_find(key->names[o->format]);
}

int sim_scene_units_resolve(struct scene *sc)
{
	if (sc->units != SCENE_UNITS_SNAPSHOT)
		return 0;
	const int k = sc->units_entry;
	const struct scene_body *b = &sc->bodies[k];
	char path[SCENE_PATH_MAX + 64];
	sim_snap_entry_path(sc, k, path, sizeof path);
	/* a film series' files are named by a pattern: its entry's keys rule */
	if (!b->snap.series[0] && access(path, R_OK) == 0) {
		struct sim_snap *s;
		int err = sim_snap_open(path, entry_format(&b->snap), &s);
		if (err)
			return err;
		const struct sim_snap_header *h = sim_snap_header(s);
		if (h->units_from[0] && h->unit_length_cm > 0 && h->unit_mass_g > 0 &&
		    h->unit_velocity_cm_s > 0) {
			sc->units_cgs[0] = h->unit_length_cm;
			sc->units_cgs[1] = h->unit_mass_g;
			sc->units_cgs[2] = h->unit_velocity_cm_s;
			snprintf(sc->units_from, sizeof sc->units_from, "its %s", h->units_from);
		}
		sim_snap_close(&s);
	}
	struct sim_units u;
	scene_units(sc, &u);
	log_info("units: snapshot: the code units of bodies.%d (%s, from %s): length %.7g cm, "
		 "mass %.7g g, velocity %.7g cm/s; time unit %.6g Myr; G = %.6g",
		 k, b->name, sc->units_from, sc->units_cgs[0], sc->units_cgs[1], sc->units_cgs[2],
		 sc->units_cgs[0] / sc->units_cgs[2] / 3.15576e13, u.G_scene);
	return 0;
}
