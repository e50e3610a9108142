/* let_force.c - the Barnes-Hut forces of ranks that each hold only their
 * own bodies (simulation.ranks: domains; dist.h): locally essential trees
 * (Salmon & Warren 1994; Bedorf et al. 2012, 2014), sim/let.h.
 *
 * Each rank builds a tree over its own bodies, tells every rank the cover
 * of its bodies (at most 32 boxes round the cells near the top of its tree,
 * sim_let_cover: one box round a Morton domain would also hold the space
 * between its pieces) and their largest softening (an allgather of 195
 * doubles a rank), exports to each other rank the part of its tree that
 * rank's cover needs (sim_let_export_cover), exchanges those buffers (one
 * all-to-all), and walks its own tree plus the received ones in rank order
 * (sim_let_accel): the forces of its own bodies only, within the tree's
 * tolerance of the one-process tree (the cells differ: each rank's tree is
 * over its own bodies). No rank holds every body: a rank holds its own
 * bodies, its tree, and what the others' covers need of theirs. */
#include <stdlib.h>
#include <string.h>

#include "../sim/let.h"
#include "dist.h"

/* A rank's record in the allgather: its bodies, their largest softening,
 * the number of boxes of its cover and the boxes (6 doubles each). */
enum { LET_MAXBOX = 32, LET_REC = 3 + 6 * LET_MAXBOX };

/* Every rank's record into all (P x LET_REC), on every rank. 0 or
 * NB_ERUNTIME (logged). */
static int let_covers(const struct sim_let_tree *t, const struct sim_state *st,
		      const struct sim_params *p, const double *each, double *all)
{
	const int P = dist_size(), me = dist_rank();
	double mine[LET_REC] = {0};
	int nbox = 0;
	int rc = sim_let_cover(t, LET_MAXBOX, mine + 3, &nbox);
	double e = p->softening;
	for (size_t i = 0; each && i < st->n; i++)
		e = i == 0 || each[i] > e ? each[i] : e;
	mine[0] = (double)st->n;
	mine[1] = e;
	mine[2] = rc ? 0 : nbox;
	size_t *b = malloc(2 * (size_t)P * sizeof *b);
	if (!b)
		dist_fail("out of memory");
	for (int r = 0; r < P; r++) {
		b[r] = sizeof mine;
		b[P + r] = (size_t)r * sizeof mine;
	}
	memcpy(all + (size_t)me * LET_REC, mine, sizeof mine);
	dist_allgatherv(mine, all, b, b + P, "domains' covers"); /* every rank, even failed */
	free(b);
	return rc;
}

/* The exports for every other rank with bodies, packed one after the other
 * (*out malloc'd; sz, off: P each, bytes), each appended as it is made so
 * that at most one export is held beside the packed ones. 0 or NB_ERUNTIME
 * (logged). */
static int let_exports(const struct sim_let_tree *t, const double *box, size_t *sz, size_t *off,
		       char **out)
{
	const int P = dist_size(), me = dist_rank();
	size_t total = 0;
	int rc = 0;
	*out = malloc(1);
	for (int r = 0; r < P; r++)
		sz[r] = off[r] = 0;
	for (int r = 0; r < P && *out && !rc; r++) {
		const double *b = box + (size_t)r * LET_REC;
		void *buf = NULL;
		off[r] = total;
		if (r == me || !(b[0] > 0))
			continue;
		if ((rc = sim_let_export_cover(t, b + 3, (int)b[2], b[1], &buf, &sz[r])))
			break; /* logged */
		char *grown = realloc(*out, total + sz[r] + 1);
		if (grown)
			memcpy(grown + total, buf, sz[r]);
		else
			free(*out);
		*out = grown;
		total += sz[r];
		free(buf);
	}
	if (!rc && !*out) {
		log_error("out of memory for the locally essential trees");
		rc = NB_ERUNTIME;
	}
	return rc;
}

/* The received trees in rank order: pointers into in where a block starts
 * on a double's boundary (the buffers are doubles; malloc aligns in), else
 * a copy of its own; then the own and remote walks. */
static int let_walk(const struct sim_let_tree *t, const char *in, const size_t *rb,
		    const size_t *ro, const struct sim_state *st, double *work)
{
	const int P = dist_size();
	const void **bufs = calloc((size_t)P, sizeof *bufs);
	void **copies = calloc((size_t)P, sizeof *copies);
	size_t *nb = calloc((size_t)P, sizeof *nb);
	int nbuf = 0, rc = bufs && copies && nb ? 0 : NB_ERUNTIME;
	for (int r = 0; r < P && !rc; r++) {
		if (!rb[r])
			continue;
		if (ro[r] % sizeof(double) == 0) {
			bufs[nbuf] = in + ro[r];
		} else if ((copies[nbuf] = malloc(rb[r]))) {
			memcpy(copies[nbuf], in + ro[r], rb[r]);
			bufs[nbuf] = copies[nbuf];
		} else {
			rc = NB_ERUNTIME;
			break;
		}
		nb[nbuf++] = rb[r];
	}
	if (rc)
		log_error("out of memory for the received trees");
	else
		rc = sim_let_accel(t, bufs, nb, nbuf, st->acc, st->pot, work);
	for (int k = 0; copies && k < nbuf; k++)
		free(copies[k]);
	free(copies);
	free((void *)bufs);
	free(nb);
	return rc;
}

int dist_let_force(const struct sim_state *st, const struct sim_params *p, const double *each,
		   double *work, size_t *held)
{
	const int P = dist_size();
	const struct sim_soft s = {.kernel = p->soft_kernel, .eps = p->softening, .each = each};
	struct sim_let_tree *t = NULL;
	int rc = sim_let_build(st->pos, st->mass, st->n, &s, p, &t);
	if (rc)
		return rc;
	double *box = malloc((size_t)P * LET_REC * sizeof *box);
	size_t *sz = malloc(4 * (size_t)P * sizeof *sz);
	char *out = NULL, *in = NULL;
	if (!box || !sz) {
		log_error("out of memory for the domains' boxes");
		rc = NB_ERUNTIME;
		goto end;
	}
	rc = let_covers(t, st, p, each, box);
	if (rc || (rc = dist_broken()) || (rc = let_exports(t, box, sz, sz + P, &out)))
		goto end;
	in = dist_alltoallv(out, sz, sz + P, sz + 2 * P, sz + 3 * P, "locally essential trees");
	if (!in) { /* rank 0: the exchange broke (logged); out stays with it */
		out = NULL;
		rc = NB_ERUNTIME;
		goto end;
	}
	free(out); /* sent: the walk needs only what came in */
	out = NULL;
	size_t sent = 0, got = 0;
	for (int r = 0; r < P; r++)
		sent += sz[r], got += sz[2 * P + r];
	*held = sent + got; /* both, while the exchange runs */
	rc = let_walk(t, in, sz + 2 * P, sz + 3 * P, st, work);
end:
	free(in);
	free(out);
	free(box);
	free(sz);
	sim_let_free(&t);
	return rc;
}
