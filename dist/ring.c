/* ring.c - the direct sum over ranks that each hold only their own bodies
 * (simulation.ranks: domains, simulation.solver: direct; dist.h): the
 * systolic ring of the classic parallel N-body codes. Each rank's block
 * (position, mass, softening: 40 bytes a body) visits every other rank
 * once, P - 1 rounds of one block sent and one received, so a rank holds
 * its own bodies and one visitor at a time, never every body.
 *
 * Body i's sum: its own block's bodies j < i then j > i, then each visiting
 * block in round order (from rank me - 1, me - 2, ...), the pair term
 * sim/direct_pair.h's. A different order from one process's
 * each-pair-once sum, so the result agrees with it to rounding (about
 * 1e-15 relative a step), not bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "../sim/direct_pair.h"
#include "dist.h"

/* acc, phi of own body i from the block (pos 3m, mass m, eps m); skip:
 * the index of i itself in it, or (size_t)-1 */
static void ring_block(const double *blk, size_t m, size_t skip, const double *x, double ei,
		       int mixed, int spline, double sum[4])
{
	const double *pos = blk, *mass = blk + 3 * m, *each = mixed ? blk + 4 * m : NULL;
	if (skip == (size_t)-1) {
		sim_direct_sum_soft(pos, mass, 0, m, x[0], x[1], x[2], ei, each, spline, sum);
		return;
	}
	sim_direct_sum_soft(pos, mass, 0, skip, x[0], x[1], x[2], ei, each, spline, sum);
	sim_direct_sum_soft(pos, mass, skip + 1, m, x[0], x[1], x[2], ei, each, spline, sum);
}

/* Add block blk (m bodies) to the sums of the n own bodies in acc4 (of
 * the active ones; active NULL: all). */
static void ring_add(const double *own, size_t n, const unsigned char *active, const double *blk,
		     size_t m, int self, const struct sim_params *p, double *acc4)
{
	const int spline = p->soft_kernel == SCENE_SOFT_SPLINE, mixed = p->soft_mixed;
#pragma omp parallel for schedule(dynamic, 64)
	for (size_t i = 0; i < n; i++) {
		if (active && !active[i])
			continue;
		const double ei = own[4 * n + i];
		ring_block(blk, m, self ? i : (size_t)-1, own + 3 * i, ei, mixed, spline,
			   acc4 + 4 * i);
	}
}

int dist_ring_direct(void **state, const struct sim_state *st, const struct sim_params *p,
		     const double *each, const unsigned char *active, double *work, size_t *held)
{
	(void)state;
	const int P = dist_size(), me = dist_rank();
	const size_t n = st->n;
	double *own = malloc(5 * (n ? n : 1) * sizeof *own);
	double *acc4 = calloc(4 * (n ? n : 1), sizeof *acc4);
	size_t *sz = calloc(4 * (size_t)P, sizeof *sz);
	if (!own || !acc4 || !sz) {
		log_error("out of memory for the direct sum of %zu bodies", n);
		free(own), free(acc4), free(sz);
		return NB_ERUNTIME;
	}
	memcpy(own, st->pos, 3 * n * sizeof *own);
	memcpy(own + 3 * n, st->mass, n * sizeof *own);
	for (size_t i = 0; i < n; i++)
		own[4 * n + i] = each ? each[i] : p->softening;
	ring_add(own, n, active, own, n, 1, p, acc4);
	size_t seen = n, big = 0;
	for (int s = 1; s < P; s++) { /* to me + s, from me - s */
		memset(sz, 0, 4 * (size_t)P * sizeof *sz);
		sz[(me + s) % P] = 5 * n * sizeof *own;
		double *blk = dist_alltoallv(own, sz, sz + P, sz + 2 * P, sz + 3 * P, "direct ring");
		if (!blk) /* rank 0: the exchange broke (logged); own stays with it */
			return NB_ERUNTIME;
		const size_t m = sz[2 * P + (me - s + P) % P] / (5 * sizeof *own);
		ring_add(own, n, active, blk, m, 0, p, acc4);
		seen += m;
		big = m > big ? m : big;
		free(blk);
	}
	for (size_t i = 0; i < n; i++) {
		if (active && !active[i])
			continue;
		memcpy(st->acc + 3 * i, acc4 + 4 * i, 3 * sizeof *acc4);
		st->pot[i] = acc4[4 * i + 3];
		work[i] = seen > 0 ? (double)(seen - 1) : 0;
	}
	*held = (5 * n + 4 * n + 5 * big) * sizeof *own;
	free(own), free(acc4), free(sz);
	return 0;
}
