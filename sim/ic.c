/* ic.c - initial conditions for a whole scene (sim_ic_build): count the
 * bodies, lay out one component per sphere/file entry and three per disk
 * galaxy (four with young stars), one per loaded particle type of a snapshot, sample each entry in its own frame, then rotate and move it where
 * sim_ic_placement (sim/encounter.c) says.
 *
 * Entry k draws from streams starting at (k + 1) << 40, so entries are
 * independent of each other and adding an entry does not change the bodies
 * of the others. Disk galaxies are sampled by sim/galaxy.c.
 *
 * sim_ic_build is sim_ic_build_range (sim/ic_range.h) over the whole scene:
 * the same code makes a rank's range [lo, hi) of the bodies and all of
 * them, each entry's slot the part of [lo, hi) inside it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ic_range.h"
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

/* Where entry k's bodies go: the entry is the scene's [first, first + n),
 * of which [lo, hi) (entry-local) is made, into st at `at`; components
 * from c. */
struct ic_slot {
	size_t first, n, lo, hi, at;
	int c;
	const struct sim_ic_scan *scan; /* the spheres' centres over ranks, or NULL */
};

static int ic_sphere(const struct scene_body *b)
{
	return b->model == SCENE_MODEL_PLUMMER || b->model == SCENE_MODEL_HERNQUIST;
}

/* Read entry k's file whole into a temporary state and keep the slot's
 * bodies (a file is read in one pass; the temporary is the entry's size). */
static int ic_file_range(const struct scene *sc, int k, const struct sim_units *u,
			 struct sim_state *st, const struct ic_slot *sl)
{
	const struct scene_body *b = &sc->bodies[k];
	const int whole = sl->lo == 0 && sl->hi == sl->n; /* read in place */
	char path[2 * SCENE_PATH_MAX + 2];
	struct sim_state tmp = {0};
	size_t got = 0;
	int err = whole ? 0 : sim_state_alloc(&tmp, sl->n, 1);
	if (err)
		return err;
	ic_file_path(sc, b, path, sizeof path);
	err = sim_table_read(path, (const char(*)[SCENE_NAME_MAX])b->columns, u, whole ? st : &tmp,
			     whole ? sl->at : 0, &got, NULL, NULL);
	if (!err && got != sl->n) {
		log_error("%s: has %zu bodies now, %zu when counted (changed while reading?)", path,
			  got, sl->n);
		err = NB_ERUNTIME;
	}
	const size_t m = sl->hi - sl->lo;
	if (!err && !whole && m) {
		memcpy(st->pos + 3 * sl->at, tmp.pos + 3 * sl->lo, 3 * m * sizeof *st->pos);
		memcpy(st->vel + 3 * sl->at, tmp.vel + 3 * sl->lo, 3 * m * sizeof *st->vel);
		memcpy(st->mass + sl->at, tmp.mass + sl->lo, m * sizeof *st->mass);
	}
	sim_state_free(&tmp);
	return err;
}

/* Sample the slot of entry k (not a disk galaxy) as component sl->c. */
static int ic_one_component(const struct scene *sc, int k, const struct sim_units *u,
			    struct sim_state *st, const struct ic_slot *sl, uint64_t stream_base)
{
	const struct scene_body *b = &sc->bodies[k];
	struct sim_component *cp = &st->comps[sl->c];
	snprintf(cp->name, sizeof cp->name, "%s", b->name);
	memcpy(cp->color, b->color, sizeof cp->color);
	cp->brightness = (float)b->brightness;
	cp->softening = sim_soft_length(sc, b, 0);
	cp->first = sl->first;
	cp->count = sl->n;
	if (sl->lo >= sl->hi && !(sl->scan && ic_sphere(b))) /* a scan's fold is every rank's */
		return 0;
	for (size_t i = sl->at; i < sl->at + (sl->hi - sl->lo); i++)
		st->comp[i] = (uint16_t)sl->c;
	const double mass = b->mass * u->mass, a = b->scale * u->length;
	if (b->model == SCENE_MODEL_PLUMMER)
		return sim_ic_plummer_range(st, sl->at, sl->n, sl->lo, sl->hi, mass, a, b->rmax,
					    sc->seed, stream_base, sl->scan);
	if (b->model == SCENE_MODEL_HERNQUIST)
		return sim_ic_hernquist_range(st, sl->at, sl->n, sl->lo, sl->hi, mass, a, b->rmax,
					      sc->seed, stream_base, sl->scan);
	return ic_file_range(sc, k, u, st, sl);
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

/* Entry k's slot (an empty one still names the entry's components), then
 * its placement. */
static int ic_entry(const struct scene *sc, int k, const struct sim_units *u,
		    struct sim_state *st, const struct ic_slot *sl)
{
	const uint64_t stream_base = (uint64_t)(k + 1) << 40;
	int err;
	if (sc->bodies[k].model == SCENE_MODEL_DISK_GALAXY)
		err = sim_ic_disk_galaxy_range(sc, k, u, st, sl->first, sl->c, stream_base, sl->lo,
					       sl->hi, sl->at);
	else if (sc->bodies[k].model == SCENE_MODEL_SNAPSHOT)
		err = ic_snapshot(sc, k, u, st, sl->first, sl->n, sl->c); /* whole: see the caller */
	else
		err = ic_one_component(sc, k, u, st, sl, stream_base);
	double R[9], pos[3], vel[3];
	if (!err)
		err = sim_ic_placement(sc, k, u, R, pos, vel);
	if (!err)
		ic_place(st, sl->at, sl->hi - sl->lo, R, pos, vel);
	return err;
}

/* The scene's sizes: per entry bodies and components, and their sums. */
static int ic_sizes(const struct scene *sc, const struct sim_units *u, size_t sizes[],
		    int ncomps[], size_t *total, int *ncomp)
{
	*total = 0;
	*ncomp = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		int err = ic_entry_size(sc, k, u, &sizes[k], &ncomps[k]);
		if (err)
			return err;
		*total += sizes[k];
		*ncomp += ncomps[k];
	}
	if (*total == 0) {
		log_error("bodies: the scene creates no bodies");
		return NB_EINPUT;
	}
	if (*total > UINT32_MAX) {
		log_error("bodies: %zu bodies is more than ids can number (2^32)", *total);
		return NB_EINPUT;
	}
	return 0;
}

/* After an error before entry k: the folds of the spheres from k on, which
 * the other ranks of the scan make whatever this one does. Returns err. */
static int ic_scan_rest(const struct scene *sc, const struct sim_ic_scan *scan, int k, int err)
{
	for (; scan && k < sc->nbodies; k++)
		if (ic_sphere(&sc->bodies[k])) {
			double s[7] = {0, 0, 0, 0, 0, 0, 0};
			(void)scan->fold(scan->ctx, s, NULL, NULL, err);
		}
	return err;
}

/* sim_ic_build_range's work: lo == hi == SIZE_MAX asks for the whole scene. */
static int ic_build(const struct scene *sc, size_t lo, size_t hi, const struct sim_ic_scan *scan,
		    struct sim_state *st)
{
	struct sim_units u;
	scene_units(sc, &u);
	memset(st, 0, sizeof *st);
	size_t total, sizes[SCENE_MAX_BODIES];
	int ncomp, ncomps[SCENE_MAX_BODIES];
	int err = ic_sizes(sc, &u, sizes, ncomps, &total, &ncomp);
	if (err)
		return ic_scan_rest(sc, scan, 0, err);
	if (lo == SIZE_MAX)
		lo = 0, hi = total;
	if (lo > hi || hi > total) {
		log_error("bodies [%zu, %zu) of the scene's %zu (internal)", lo, hi, total);
		return ic_scan_rest(sc, scan, 0, NB_ERUNTIME);
	}
	if ((err = sim_state_alloc(st, hi - lo, ncomp)))
		return ic_scan_rest(sc, scan, 0, err);
	struct ic_slot sl = {.scan = scan};
	int k;
	for (k = 0; k < sc->nbodies; k++) {
		const size_t e = sl.first + sizes[k];
		sl.n = sizes[k];
		sl.lo = lo > sl.first ? (lo < e ? lo : e) - sl.first : 0;
		sl.hi = hi > sl.first ? (hi < e ? hi : e) - sl.first : 0;
		sl.hi = sl.hi < sl.lo ? sl.lo : sl.hi;
		sl.at = sl.hi > sl.lo ? sl.first + sl.lo - lo : 0;
		if (sc->bodies[k].model == SCENE_MODEL_SNAPSHOT && (lo > 0 || hi < total)) {
			log_error("bodies.%d: a snapshot entry is read whole, not as a range of the "
				  "scene's bodies (internal)", k);
			err = NB_EINPUT;
		}
		if (err || (err = ic_entry(sc, k, &u, st, &sl)))
			goto fail;
		sl.first = e;
		sl.c += ncomps[k];
	}
	for (int j = 0; j < st->ncomp; j++) /* a component no row above named */
		if (!(st->comps[j].softening > 0))
			st->comps[j].softening = scene_softening(sc);
	for (size_t i = 0; i < st->n; i++)
		st->id[i] = (uint32_t)(lo + i);
	st->time = 0;
	st->step = 0;
	return 0;
fail: /* entry k failed: a sphere's fold was made (it comes before any error) */
	sim_state_free(st);
	return ic_scan_rest(sc, scan, k + 1, err);
}

int sim_ic_build(const struct scene *sc, struct sim_state *st)
{
	return ic_build(sc, SIZE_MAX, SIZE_MAX, NULL, st);
}

int sim_ic_build_range_scan(const struct scene *sc, size_t lo, size_t hi,
			    const struct sim_ic_scan *scan, struct sim_state *st)
{
	if (lo == SIZE_MAX) {
		memset(st, 0, sizeof *st);
		log_error("bodies [%zu, %zu) of the scene (internal)", lo, hi);
		return ic_scan_rest(sc, scan, 0, NB_ERUNTIME);
	}
	return ic_build(sc, lo, hi, scan, st);
}

int sim_ic_build_range(const struct scene *sc, size_t lo, size_t hi, struct sim_state *st)
{
	return sim_ic_build_range_scan(sc, lo, hi, NULL, st);
}
