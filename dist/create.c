/* create.c - each rank makes only its own bodies (simulation.ranks:
 * domains, issue 31; dist.h, dist_create_build).
 *
 * Rank r of P makes the bodies [r n / P, (r + 1) n / P) of the n that one
 * process's sim_ic_build makes, by sim_ic_build_range (sim/ic_range.h): the
 * same bodies bit for bit (positions, velocities, masses, ids, components)
 * at any rank count, because body i is a function of (seed, entry, i) under
 * the counter-based generator; each model's centre of mass is found as one
 * process finds it (a sphere's by drawing its other bodies again and
 * summing in index order, O(n) time but no memory; a galaxy part's from its
 * mirror pairs, O(1)). These are the slices dist_domains_create used to
 * keep of a whole state, so the first force call migrates them to their
 * owners just as before. A scene with snapshot entries is not made here: a
 * scene of snapshot entries only is read a share a rank (dist/snapin.c);
 * one that mixes snapshots with made bodies is refused
 * (dist/domains_refuse.c).
 *
 * Memory: a rank holds its range, plus 4096 bodies while a sphere's centre
 * is summed, plus a whole entry of model: file while it is read. */
#include <string.h>

#include "dist.h"
#include "sim/ic_range.h"

int dist_create_takes(const struct scene *sc)
{
	for (int k = 0; k < sc->nbodies; k++)
		if (sc->bodies[k].model == SCENE_MODEL_SNAPSHOT)
			return 0;
	return sc->nbodies > 0;
}

int dist_create_build(const struct scene *sc, struct sim_state *st, size_t *total)
{
	*total = 0;
	const long n = sim_scene_body_count(sc); /* logged when < 0 */
	const int P = dist_size(), r = dist_rank();
	int who, err = n < 0 ? NB_EINPUT : 0;
	const size_t lo = n > 0 ? (size_t)n * (size_t)r / (size_t)P : 0;
	const size_t hi = n > 0 ? (size_t)n * (size_t)(r + 1) / (size_t)P : 0;
	if (!err)
		err = sim_ic_build_range(sc, lo, hi, st);
	else
		memset(st, 0, sizeof *st);
	if ((err = dist_agree(err, &who))) {
		sim_state_free(st);
		return err;
	}
	*total = (size_t)n;
	if (r == 0)
		log_info("bodies: each of %d ranks made only its own bodies (rank 0: [0, %zu) of %zu)",
			 P, hi, *total);
	return 0;
}
