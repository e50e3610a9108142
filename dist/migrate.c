/* migrate.c - bodies that left their rank's domain move to its owner
 * (simulation.ranks: domains; dist.h): one all-to-all exchange of whole
 * bodies (dist_alltoallv), after which each rank holds exactly the bodies
 * whose keys fall in its stretch, in (key, id) order, so that the state a
 * rank holds is a function of the positions and the cuts only, not of
 * where the bodies came from.
 *
 * A body travels as one struct mig_body (104 bytes: position, velocity,
 * acceleration, mass, work, key, id, component; the ranks of one run share
 * a byte order and layout). The potential is not sent: every force call
 * that follows a migration computes it again. Memory: the state is packed
 * and freed before the exchange, so a rank holds at most its packed bodies,
 * the received ones and then the new state: about three times its 110
 * bytes a body, for the time of the exchange. Packing, ordering (the keys
 * and ids with their places, 16 bytes a body, dist_psort) and unpacking
 * run over the threads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

struct mig_body {
	double pos[3], vel[3], acc[3], mass, work;
	uint64_t key;
	uint32_t id;
	uint16_t comp;
};

/* A received record's place in the (key, id) order: sorted instead of the
 * 104-byte records themselves (dist_psort), then the records gathered. */
struct mig_kx {
	uint64_t key;
	uint32_t id, at;
};

static int mig_kx_cmp(const void *a, const void *b)
{
	const struct mig_kx *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* st's bodies into records grouped by owner (out: n records; off and cnt:
 * P each, in records), then st's per-body arrays freed. */
static void mig_pack(struct sim_state *st, struct dist_owned *o, const uint64_t *bound, int P,
		     struct mig_body *out, size_t *cnt, size_t *off)
{
	const size_t n = st->n;
	int *who = malloc((n ? n : 1) * sizeof *who);
	/* T stretches of the bodies, each with its own place in every
	 * owner's block: cnt of stretch t for owner r at at[t P + r] */
	const int T = n < 100000 ? 1 : 16;
	size_t *at = calloc((size_t)T * (size_t)P, sizeof *at);
	if (!who || !at)
		dist_fail("out of memory for the owners of %zu bodies", n);
#pragma omp parallel for schedule(static, 1)
	for (int t = 0; t < T; t++)
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++)
			at[(size_t)t * (size_t)P + (size_t)(who[i] = dist_own_owner(bound, P, o->key[i]))]++;
	size_t sum = 0;
	for (int r = 0; r < P; r++) {
		off[r] = sum;
		for (int t = 0; t < T; t++) {
			const size_t c = at[(size_t)t * (size_t)P + (size_t)r];
			at[(size_t)t * (size_t)P + (size_t)r] = sum;
			sum += c;
		}
		cnt[r] = sum - off[r];
	}
#pragma omp parallel for schedule(static, 1)
	for (int t = 0; t < T; t++) {
		size_t *place = at + (size_t)t * (size_t)P;
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++) {
			struct mig_body *b = out + place[who[i]]++;
			memset(b, 0, sizeof *b); /* the padding too: the bytes are sent */
			memcpy(b->pos, st->pos + 3 * i, sizeof b->pos);
			memcpy(b->vel, st->vel + 3 * i, sizeof b->vel);
			memcpy(b->acc, st->acc + 3 * i, sizeof b->acc);
			b->mass = st->mass[i];
			b->work = o->work[i];
			b->key = o->key[i];
			b->id = st->id[i];
			b->comp = st->comp[i];
		}
	}
	free(at);
	free(who);
}

/* st (and o's arrays) made of the n records in, in their order. 0 or
 * NB_ERUNTIME (logged). */
static int mig_unpack(struct sim_state *st, struct dist_owned *o, const struct mig_body *in,
		      const struct mig_kx *order, size_t n)
{
	const size_t n1 = n ? n : 1;
	st->pos = malloc(3 * n1 * sizeof *st->pos);
	st->vel = malloc(3 * n1 * sizeof *st->vel);
	st->acc = malloc(3 * n1 * sizeof *st->acc);
	st->mass = malloc(n1 * sizeof *st->mass);
	st->pot = calloc(n1, sizeof *st->pot);
	st->id = malloc(n1 * sizeof *st->id);
	st->comp = malloc(n1 * sizeof *st->comp);
	o->key = malloc(n1 * sizeof *o->key);
	o->work = malloc(n1 * sizeof *o->work);
	st->n = n;
	if (!st->pos || !st->vel || !st->acc || !st->mass || !st->pot || !st->id || !st->comp ||
	    !o->key || !o->work) {
		log_error("out of memory for this rank's %zu bodies after migration", n);
		return NB_ERUNTIME;
	}
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++) {
		const struct mig_body *b = in + order[i].at;
		memcpy(st->pos + 3 * i, b->pos, sizeof b->pos);
		memcpy(st->vel + 3 * i, b->vel, sizeof b->vel);
		memcpy(st->acc + 3 * i, b->acc, sizeof b->acc);
		st->mass[i] = b->mass;
		o->work[i] = b->work;
		o->key[i] = b->key;
		st->id[i] = b->id;
		st->comp[i] = b->comp;
	}
	return 0;
}

static void mig_free_arrays(struct sim_state *st, struct dist_owned *o)
{
	free(st->pos);
	free(st->vel);
	free(st->acc);
	free(st->mass);
	free(st->pot);
	free(st->id);
	free(st->comp);
	free(o->key);
	free(o->work);
	st->pos = st->vel = st->acc = st->mass = st->pot = NULL;
	st->id = NULL;
	st->comp = NULL;
	o->key = NULL;
	o->work = NULL;
}

int dist_migrate(struct sim_state *st, struct dist_owned *o, const uint64_t *bound, int P,
		 size_t *sent)
{
	const int me = dist_rank();
	size_t *sz = malloc(4 * (size_t)P * sizeof *sz);
	struct mig_body *out = malloc((st->n ? st->n : 1) * sizeof *out);
	if (!sz || !out)
		dist_fail("out of memory for the migration of %zu bodies", st->n);
	size_t *soff = sz + P, *rbytes = sz + 2 * P, *roff = sz + 3 * P;
	mig_pack(st, o, bound, P, out, sz, soff);
	mig_free_arrays(st, o);
	*sent = 0;
	for (int r = 0; r < P; r++) {
		*sent += r == me ? 0 : sz[r];
		sz[r] *= sizeof *out;
		soff[r] *= sizeof *out;
	}
	struct mig_body *in = dist_alltoallv(out, sz, soff, rbytes, roff, "migration");
	if (!in) { /* rank 0: the exchange broke (logged); st is left empty, and out
		    * to the messages still pending */
		st->n = 0;
		return NB_ERUNTIME;
	}
	free(out);
	size_t n = 0;
	for (int r = 0; r < P; r++)
		n += rbytes[r] / sizeof *in;
	free(sz);
	struct mig_kx *order = malloc((n ? n : 1) * sizeof *order);
	if (!order || n >= UINT32_MAX) {
		log_error("out of memory for the order of %zu migrated bodies", n);
		free(order);
		free(in);
		return NB_ERUNTIME;
	}
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++)
		order[i] = (struct mig_kx){in[i].key, in[i].id, (uint32_t)i};
	dist_psort(order, n, sizeof *order, mig_kx_cmp);
	int rc = mig_unpack(st, o, in, order, n);
	free(order);
	free(in);
	return rc;
}
