/* ic.c - initial conditions for a whole scene (sim_ic_build): count the
 * bodies, lay out one component per sphere/file entry and three per disk
 * galaxy (four with young stars), one per loaded particle type of a snapshot, sample each entry in its own frame, then rotate and move it where
 * sim_ic_placement (sim/encounter.c) says.
 *
 * Entry k draws from streams starting at (k + 1) << 40, so entries are
 * independent of each other and adding an entry does not change the bodies
 * of the others. Disk galaxies are sampled by sim/galaxy.c. */
#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "soften_assign.h"
#include "table.h"

/* Where entry k's state file is: the loader stores it absolute; a relative
 * path (a scene built in code) is taken relative to the scene directory. */
static void ic_file_path(const struct scene *sc, const struct scene_body *b, char *out,
			 size_t len)
{
	if (b->file[0] == '/' || sc->dir[0] == '\0')
		snprintf(out, len, "%s", b->file);
	else
		snprintf(out, len, "%s/%s", sc->dir, b->file);
}

/* Bodies and components entry k will create. */
static int ic_entry_size(const struct scene *sc, int k, const struct sim_units *u, size_t *n,
			 int *ncomp)
{
	const struct scene_body *b = &sc->bodies[k];
	switch (b->model) {
	case SCENE_MODEL_DISK_GALAXY: {
		long c = 0;
		const struct scene_part *p[3] = {&b->disk, &b->bulge, &b->halo};
		for (int j = 0; j < 3; j++)
			c += p[j]->count > 0 ? p[j]->count : 0;
		*n = (size_t)c;
		*ncomp = 3 + (sim_galaxy_young_count(&b->disk) > 0) + (scene_dust_count(b) > 0); /* sim_ic_disk_galaxy */
		return 0;
	}
	case SCENE_MODEL_SNAPSHOT: {
		struct sim_snap_info info;
		int err = sim_snap_load(sc, k, u, NULL, 0, 0, &info);
		*n = 0;
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			*n += info.kept[t];
		*ncomp = info.ncomp;
		return err;
	}
	case SCENE_MODEL_FILE: {
		char path[2 * SCENE_PATH_MAX + 2];
		ic_file_path(sc, b, path, sizeof path);
		*ncomp = 1;
		return sim_table_read(path, (const char(*)[SCENE_NAME_MAX])b->columns, u, NULL, 0, n,
				      NULL, NULL);
	}
	default:
		if (b->count < 1) {
			log_error("bodies.%d (%s): count must be >= 1, got %ld", k, b->name, b->count);
			return NB_EINPUT;
		}
		*n = (size_t)b->count;
		*ncomp = 1;
		return 0;
	}
}

/* Rotate and move bodies [first, first+n): x' = R x + pos, v' = R v + vel. */
static void ic_place(struct sim_state *st, size_t first, size_t n, const double R[9],
		     const double pos[3], const double vel[3])
{
#pragma omp parallel for schedule(static)
	for (size_t i = first; i < first + n; i++) {
		double *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		double x0[3] = {x[0], x[1], x[2]}, v0[3] = {v[0], v[1], v[2]};
		for (int a = 0; a < 3; a++) {
			x[a] = R[3 * a] * x0[0] + R[3 * a + 1] * x0[1] + R[3 * a + 2] * x0[2] + pos[a];
			v[a] = R[3 * a] * v0[0] + R[3 * a + 1] * v0[1] + R[3 * a + 2] * v0[2] + vel[a];
		}
	}
}

/* Sample entry k (not a disk galaxy) into [first, first+n) as component c. */
static int ic_one_component(const struct scene *sc, int k, const struct sim_units *u,
			    struct sim_state *st, size_t first, size_t n, int c,
			    uint64_t stream_base)
{
	const struct scene_body *b = &sc->bodies[k];
	struct sim_component *cp = &st->comps[c];
	snprintf(cp->name, sizeof cp->name, "%s", b->name);
	memcpy(cp->color, b->color, sizeof cp->color);
	cp->brightness = (float)b->brightness;
	cp->softening = sim_soft_length(sc, b, 0);
	cp->first = first;
	cp->count = n;
	for (size_t i = first; i < first + n; i++)
		st->comp[i] = (uint16_t)c;
	const double mass = b->mass * u->mass, a = b->scale * u->length;
	if (b->model == SCENE_MODEL_PLUMMER) {
		sim_ic_plummer(st, first, n, mass, a, b->rmax, sc->seed, stream_base);
	} else if (b->model == SCENE_MODEL_HERNQUIST) {
		sim_ic_hernquist(st, first, n, mass, a, b->rmax, sc->seed, stream_base);
	} else {
		char path[2 * SCENE_PATH_MAX + 2];
		size_t got = 0;
		ic_file_path(sc, b, path, sizeof path);
		int err = sim_table_read(path, (const char(*)[SCENE_NAME_MAX])b->columns, u, st,
					 first, &got, NULL, NULL);
		if (err)
			return err;
		if (got != n) {
			log_error("%s: has %zu bodies now, %zu when counted (changed while reading?)",
				  path, got, n);
			return NB_ERUNTIME;
		}
	}
	return 0;
}

/* Read snapshot entry k into [first, first+n) as components c.. */
static int ic_snapshot(const struct scene *sc, int k, const struct sim_units *u,
		       struct sim_state *st, size_t first, size_t n, int c)
{
	struct sim_snap_info info;
	int err = sim_snap_load(sc, k, u, st, first, c, &info);
	size_t got = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		got += info.kept[t];
	if (!err && got != n) {
		log_error("bodies.%d: the snapshot gives %zu bodies now, %zu when counted (changed "
			  "while reading?)",
			  k, got, n);
		return NB_ERUNTIME;
	}
	return err;
}

int sim_ic_build(const struct scene *sc, struct sim_state *st)
{
	int err = 0;
	struct sim_units u;
	scene_units(sc, &u);
	memset(st, 0, sizeof *st);

	size_t total = 0, sizes[SCENE_MAX_BODIES];
	int ncomp = 0, ncomps[SCENE_MAX_BODIES];
	for (int k = 0; k < sc->nbodies; k++) {
		if ((err = ic_entry_size(sc, k, &u, &sizes[k], &ncomps[k])))
			return err;
		total += sizes[k];
		ncomp += ncomps[k];
	}
	if (total == 0) {
		log_error("bodies: the scene creates no bodies");
		return NB_EINPUT;
	}
	if (total > UINT32_MAX) {
		log_error("bodies: %zu bodies is more than ids can number (2^32)", total);
		return NB_EINPUT;
	}
	if ((err = sim_state_alloc(st, total, ncomp)))
		return err;

	size_t first = 0;
	int c = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		const uint64_t stream_base = (uint64_t)(k + 1) << 40;
		if (sc->bodies[k].model == SCENE_MODEL_DISK_GALAXY)
			err = sim_ic_disk_galaxy(sc, k, &u, st, first, c, stream_base);
		else if (sc->bodies[k].model == SCENE_MODEL_SNAPSHOT)
			err = ic_snapshot(sc, k, &u, st, first, sizes[k], c);
		else
			err = ic_one_component(sc, k, &u, st, first, sizes[k], c, stream_base);
		if (err)
			goto fail;
		double R[9], pos[3], vel[3];
		if ((err = sim_ic_placement(sc, k, &u, R, pos, vel)))
			goto fail;
		ic_place(st, first, sizes[k], R, pos, vel);
		first += sizes[k];
		c += ncomps[k];
	}
	for (int j = 0; j < st->ncomp; j++) /* a component no row above named */
		if (!(st->comps[j].softening > 0))
			st->comps[j].softening = scene_softening(sc);
	for (size_t i = 0; i < total; i++)
		st->id[i] = (uint32_t)i;
	st->time = 0;
	st->step = 0;
	return 0;
fail:
	sim_state_free(st);
	return err;
}
