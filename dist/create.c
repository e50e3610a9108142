/* create.c - each rank makes only its own bodies (simulation.ranks:
 * domains, issue 31; dist.h, dist_create_build).
 *
 * Rank r of P makes the bodies [r n / P, (r + 1) n / P) of the n that one
 * process's sim_ic_build makes, by sim_ic_build_range (sim/ic_range.h): the
 * same bodies bit for bit (positions, velocities, masses, ids, components)
 * at any rank count, because body i is a function of (seed, entry, i) under
 * the counter-based generator; each model's centre of mass is found as one
 * process finds it: a galaxy part's from its mirror pairs, O(1); a
 * sphere's is the sum over its bodies in index order, which the ranks carry
 * in rank order (create_fold: P rounds, in round q rank q adds its own
 * bodies to the running sum of ranks < q and every rank gets the result, 64
 * bytes a rank a round), so that a rank draws only its own bodies and the
 * sum has one process's bits. These are the slices dist_domains_create used to
 * keep of a whole state, so the first force call migrates them to their
 * owners just as before. A scene with snapshot entries is not made here: a
 * scene of snapshot entries only is read a share a rank (dist/snapin.c);
 * one that mixes snapshots with made bodies is refused
 * (dist/ranks_refuse.c).
 *
 * Memory: a rank holds its range, plus 4096 bodies while a sphere's centre
 * is summed, plus a whole entry of model: file while it is read. */
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "sim/ic_range.h"

/* struct sim_ic_scan's fold over the ranks: in round q, rank q adds its
 * bodies to the sum so far and the rounds' allgather passes it on, with
 * each rank's error in the eighth double. */
static int create_fold(void *ctx, double s[7], void (*add)(void *actx, double s[7]), void *actx,
		       int err)
{
	(void)ctx;
	const int P = dist_size(), r = dist_rank();
	double *all = malloc((size_t)P * 8 * sizeof *all);
	size_t *bytes = malloc(2 * (size_t)P * sizeof *bytes);
	if (!all || !bytes) /* the others would wait on this rank: no way on */
		dist_fail("out of memory for a sphere's centre over %d ranks", P);
	for (int q = 0; q < P; q++) {
		bytes[q] = 8 * sizeof *all;
		bytes[P + q] = (size_t)q * 8 * sizeof *all;
	}
	int first = 0;
	for (int q = 0; q < P; q++) {
		double mine[8] = {0};
		if (q == r) {
			if (add && !err)
				add(actx, s);
			memcpy(mine, s, 7 * sizeof *s);
			mine[7] = err;
		}
		dist_allgatherv(mine, all, bytes, bytes + P, "a sphere's centre");
		if (dist_broken())
			break;
		memcpy(s, all + 8 * q, 7 * sizeof *s);
		if (!first && all[8 * q + 7] != 0)
			first = (int)all[8 * q + 7];
	}
	free(all);
	free(bytes);
	return dist_broken() ? NB_ERUNTIME : first;
}

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
	const struct sim_ic_scan scan = {create_fold, NULL};
	/* made even when the count failed here (the folds are every rank's) */
	const int built = sim_ic_build_range_scan(sc, lo, hi, &scan, st);
	err = err ? err : built;
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
