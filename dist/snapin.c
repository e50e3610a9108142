/* snapin.c - each rank reads its own part of the scene's snapshots
 * (simulation.ranks: domains, issue 31; dist.h, dist_snapin_build).
 *
 * For a scene whose every entry is model: snapshot, rank r of P reads share
 * r of each entry (sim_snap_load_share: the loaded particles, type by type
 * and file by file, cut into P stretches of equal count; of a multi-file
 * set it opens again only the parts its stretch reaches). The shares end to
 * end in rank order are one process's sim_snap_load, so the ids (a body's
 * index in one process's state) follow from every rank's counts, and the
 * first force call migrates the bodies to their owners as for made bodies.
 *
 * Checks: every rank reads every part's header and refuses what one
 * process refuses; a value refused while reading is refused by the rank
 * that reads it, and every rank returns that rank's error (dist_agree). The
 * checks over the whole entry (the masses against the softening, an entry
 * that gives no body) are made on the ranks' sums. No rank holds a table of
 * every body's file ID: the bodies' ParticleIDs written to snapshots are
 * their ids, so domains refuses snapshot output with snapshot input
 * (dist/ranks_refuse.c).
 *
 * Memory: a rank holds its share, plus the reader's chunk buffers, plus P
 * counts a component. */
#include <stdlib.h>
#include <string.h>

#include "dist.h"

int dist_snapin_takes(const struct scene *sc)
{
	for (int k = 0; k < sc->nbodies; k++)
		if (sc->bodies[k].model != SCENE_MODEL_SNAPSHOT)
			return 0;
	return sc->nbodies > 0;
}

/* Bodies and components of this rank's share of each entry (the count
 * pass). 0 or the reader's error (logged on this rank). */
static int snapin_count(const struct scene *sc, const struct sim_units *u, size_t *n,
			int *ncomp)
{
	*n = 0, *ncomp = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		struct sim_snap_info info;
		int err = sim_snap_load_share(sc, k, u, NULL, 0, 0, dist_rank(), dist_size(), NULL,
					      &info);
		if (err)
			return err;
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			*n += info.kept[t];
		*ncomp += info.ncomp;
	}
	return 0;
}

/* x' = R x + pos, v' = R v + vel over bodies [a, b): sim/ic.c's placement,
 * the same operations in the same order (so the same bits). */
static void snapin_place(struct sim_state *st, size_t a, size_t b, const double R[9],
			 const double pos[3], const double vel[3])
{
	for (size_t i = a; i < b; i++) {
		double *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		double x0[3] = {x[0], x[1], x[2]}, v0[3] = {v[0], v[1], v[2]};
		for (int c = 0; c < 3; c++) {
			x[c] = R[3 * c] * x0[0] + R[3 * c + 1] * x0[1] + R[3 * c + 2] * x0[2] + pos[c];
			v[c] = R[3 * c] * v0[0] + R[3 * c + 1] * v0[1] + R[3 * c + 2] * v0[2] + vel[c];
		}
	}
}

/* Read this rank's share of every entry into st (allocated by the caller
 * to the count pass's size), placed; mass[k] and kept[k] the share's. */
static int snapin_read(const struct scene *sc, const struct sim_units *u, struct sim_state *st,
		       double *mass, double *kept, struct sim_snap_info *info)
{
	size_t at = 0;
	int c = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		int err = sim_snap_load_share(sc, k, u, st, at, c, dist_rank(), dist_size(), NULL,
					      &info[k]);
		double R[9], pos[3], vel[3];
		if (!err)
			err = sim_ic_placement(sc, k, u, R, pos, vel);
		if (err)
			return err;
		size_t m = 0;
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			m += info[k].kept[t];
		if (at + m > st->n) {
			log_error("bodies.%d: the snapshot gives more bodies now than when counted "
				  "(changed while reading?)",
				  k);
			return NB_ERUNTIME;
		}
		snapin_place(st, at, at + m, R, pos, vel);
		mass[k] = 0;
		for (size_t i = at; i < at + m; i++)
			mass[k] += st->mass[i];
		kept[k] = (double)m;
		at += m;
		c += info[k].ncomp;
	}
	return 0;
}

/* ids and components over the ranks: each rank's count of each component
 * summed into every rank's table (exact below 2^53), so body i of this
 * rank is body (bodies of the ranks before it, entry by entry) of one
 * process, and each component's first and count are the whole scene's. */
static int snapin_number(struct sim_state *st, size_t *total)
{
	const int P = dist_size(), r = dist_rank(), nc = st->ncomp;
	double *cnt = calloc((size_t)nc * (size_t)P + 1, sizeof *cnt);
	if (!cnt) {
		log_error("out of memory for the counts of %d components over %d ranks", nc, P);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < st->n; i++)
		cnt[(size_t)st->comp[i] * (size_t)P + (size_t)r] += 1;
	dist_sum_doubles(cnt, nc * P, "snapshot shares");
	size_t first = 0, i = 0;
	for (int c = 0; c < nc; c++) {
		size_t before = 0, all = 0; /* component c's bodies on the ranks before r, in all */
		for (int q = 0; q < P; q++) {
			before += q < r ? (size_t)cnt[(size_t)c * P + q] : 0;
			all += (size_t)cnt[(size_t)c * P + q];
		}
		/* a rank's bodies of component c are contiguous (entries and
		 * types in order, as in one process) */
		for (; i < st->n && st->comp[i] == c; i++)
			st->id[i] = (uint32_t)(first + before + (i - (size_t)(st->comps[c].first)));
		st->comps[c].first = first;
		st->comps[c].count = all;
		first += all;
	}
	free(cnt);
	*total = first;
	return 0;
}

/* The whole entries' checks on the ranks' sums (rank 0 logs). */
static int snapin_check(const struct scene *sc, double *mass, double *kept,
			const struct sim_snap_info *info)
{
	const int nb = sc->nbodies;
	double *v = malloc(2 * (size_t)nb * sizeof *v);
	if (!v) {
		log_error("out of memory");
		return NB_ERUNTIME;
	}
	memcpy(v, mass, (size_t)nb * sizeof *v);
	memcpy(v + nb, kept, (size_t)nb * sizeof *v);
	dist_sum_doubles(v, 2 * nb, "snapshot sums");
	int err = 0;
	for (int k = 0; k < nb && !err && dist_rank() == 0; k++)
		err = sim_snap_entry_check(sc, k, v[k], (size_t)v[nb + k], &info[k]);
	free(v);
	return err;
}

int dist_snapin_build(const struct scene *sc, struct sim_state *st, size_t *total)
{
	struct sim_units u;
	scene_units(sc, &u);
	memset(st, 0, sizeof *st);
	*total = 0;
	size_t n;
	int ncomp, who;
	int err = snapin_count(sc, &u, &n, &ncomp);
	if (!err && n > UINT32_MAX) {
		log_error("bodies: %zu bodies on rank %d is more than ids can number (2^32)", n,
			  dist_rank());
		err = NB_EINPUT;
	}
	err = err ? err : sim_state_alloc(st, n, ncomp);
	if ((err = dist_agree(err, &who)))
		goto fail;
	struct sim_snap_info *info = calloc((size_t)sc->nbodies, sizeof *info);
	double *mass = calloc(2 * (size_t)sc->nbodies, sizeof *mass);
	err = info && mass ? snapin_read(sc, &u, st, mass, mass + sc->nbodies, info) : NB_ERUNTIME;
	if ((err = dist_agree(err, &who)) == 0)
		err = dist_agree(snapin_check(sc, mass, mass + sc->nbodies, info), &who);
	free(info);
	free(mass);
	if (!err)
		err = dist_agree(snapin_number(st, total), &who);
	if (!err && *total > UINT32_MAX) {
		log_error("bodies: %zu bodies is more than ids can number (2^32)", *total);
		err = NB_EINPUT;
	}
	if (err)
		goto fail;
	if (dist_rank() == 0)
		log_info("bodies: each of %d ranks read its own share of the snapshots: %zu bodies "
			 "in all, %zu on rank 0",
			 dist_size(), *total, st->n);
	return 0;
fail:
	sim_state_free(st);
	return err;
}
