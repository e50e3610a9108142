/* ic_range.h - a range of the scene's bodies made alone (issue 31: each
 * rank makes only its own bodies). Body i of the scene is a function of
 * (seed, entry, i) under the counter-based generator (sim/rng.c), so a
 * range is drawn without the others; what is computed over a whole model
 * (its centre of mass) is computed so that the bits equal one process's:
 * see each function. sim/ic.c, sim/ic_sphere.c, sim/galaxy.c. */
#ifndef NB_SIM_IC_RANGE_H
#define NB_SIM_IC_RANGE_H

#include "sim.h"

/* How ranks whose ranges of the scene are consecutive in rank order find
 * a sphere's centre without drawing each other's bodies: the sum in index
 * order, carried from rank to rank (sim_ic_build_range_scan). */
struct sim_ic_scan {
	/* A collective call: every rank makes it once for each Plummer or
	 * Hernquist entry of the scene, in entry order, whatever its range
	 * holds, and after an error too. s (7 doubles) enters as zeros; in
	 * rank order, each rank's add(actx, s) (NULL: nothing) adds its bodies
	 * to the running sum the rank before it passed on; on return s is the
	 * last rank's, the whole model's sum, on every rank. err: this rank's
	 * error so far (0: none). Returns the first rank's nonzero err, else 0
	 * (or NB_ERUNTIME when the exchange broke). */
	int (*fold)(void *ctx, double s[7], void (*add)(void *actx, double s[7]), void *actx,
		    int err);
	void *ctx;
};

/* Bodies [lo, hi) (0 <= lo <= hi <= the scene's count) of what
 * sim_ic_build makes for sc, bit for bit: positions, velocities, masses,
 * ids (lo..hi-1), components; st->n = hi - lo, and st->comps the scene's
 * every component as sim_ic_build gives them (first and count over the
 * whole scene). Memory: the range's, plus IC_CHUNK bodies while a sphere's
 * centre is summed, plus a whole entry of model: file read into a
 * temporary; an entry of model: snapshot is read whole, so it is only
 * taken when the range is the whole scene (else NB_EINPUT: each rank's
 * part of a snapshot is read by sim_snap_load_share). Time: the range's
 * bodies, plus every other body of a Plummer or Hernquist sphere the range
 * touches drawn once more for its centre (a sum in index order: the ranks'
 * partial sums would round differently); disk galaxies' parts are mirror
 * pairs whose centre is known without them (sim/galaxy.c). 0, NB_EINPUT or
 * NB_ERUNTIME (logged as sim_ic_build's; st zeroed on error). */
int sim_ic_build_range(const struct scene *sc, size_t lo, size_t hi, struct sim_state *st);
/* The same, each sphere's centre summed through scan (NULL: drawn again,
 * as sim_ic_build_range): O(hi - lo) time for this rank's bodies, plus one
 * scan->fold a sphere entry. Every rank of the scan calls it, with ranges
 * consecutive in rank order; an error on any rank is every rank's. */
int sim_ic_build_range_scan(const struct scene *sc, size_t lo, size_t hi,
			    const struct sim_ic_scan *scan, struct sim_state *st);

/* Bodies [lo, hi) of a count-body sphere (sim_ic_plummer's and
 * sim_ic_hernquist's, which are these with lo = 0, hi = count, at =
 * first, scan NULL) into st at [at, at + hi - lo), centred on the whole
 * model's centre of mass bit for bit: scan NULL, by drawing the others
 * again; else through one scan->fold (made even for an empty range). 0,
 * NB_ERUNTIME (out of memory, logged), or the fold's error. */
int sim_ic_plummer_range(struct sim_state *st, size_t at, size_t count, size_t lo, size_t hi,
			 double mass, double a, double rmax, uint64_t seed, uint64_t stream_base,
			 const struct sim_ic_scan *scan);
int sim_ic_hernquist_range(struct sim_state *st, size_t at, size_t count, size_t lo, size_t hi,
			   double mass, double a, double rmax, uint64_t seed, uint64_t stream_base,
			   const struct sim_ic_scan *scan);

/* Bodies [lo, hi) (entry-local, hi <= the entry's count) of what
 * sim_ic_disk_galaxy makes of entry k at first with components comp0..,
 * into st at [at, at + hi - lo): the same values bit for bit, ids
 * first + lo.. ; every component of the entry named in st->comps (first
 * and count: the whole entry's) whatever the range. sim_ic_disk_galaxy is
 * this with lo = 0, hi = n, at = first. 0, NB_EINPUT or NB_ERUNTIME. */
int sim_ic_disk_galaxy_range(const struct scene *sc, int k, const struct sim_units *u,
			     struct sim_state *st, size_t first, int comp0, uint64_t stream_base,
			     size_t lo, size_t hi, size_t at);

#endif
