/* scene_body.c - what a body entry's keys imply (scene.h): counts derived
 * from them, read by the loader's checks (scene.c), the warnings
 * (scene_warn.c) and the simulation (sim/ic.c). It calls nothing of scene/,
 * so the files that read it make no circle (make check-rules). */
#include <math.h>

#include "scene.h"

long scene_dust_count(const struct scene_body *b)
{
	if (b->model != SCENE_MODEL_DISK_GALAXY || !(b->dust.mass_fraction > 0) || b->disk.count <= 0)
		return 0;
	return (long)floor(b->dust.mass_fraction * (double)b->disk.count + 0.5);
}

int scene_soft_keys(struct scene *sc, double **out)
{
	int k = 0;
	out[k++] = &sc->simulation.softening;
	for (int i = 0; i < sc->nbodies; i++) {
		struct scene_body *b = &sc->bodies[i];
		out[k++] = &b->softening;
		out[k++] = &b->disk.softening;
		out[k++] = &b->bulge.softening;
		out[k++] = &b->halo.softening;
		for (int t = 0; t < SCENE_SNAP_NTYPES; t++)
			out[k++] = &b->snap.types[t].softening;
	}
	return k;
}
