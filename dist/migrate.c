/* migrate.c - bodies that left their rank's domain move to its owner
 * (simulation.ranks: domains; dist.h): one all-to-all exchange of whole
 * bodies (dist_alltoallv), after which each rank holds exactly the bodies
 * whose keys fall in its stretch, in (key, id) order, so that the state a
 * rank holds is a function of the positions and the cuts only, not of
 * where the bodies came from.
 *
 * A body that leaves travels as one struct mig_body (104 bytes: position,
 * velocity, acceleration, mass, work, key, id, component and, with
 * individual time steps, its level in what was padding; the ranks of one
 * run share a byte order and layout); a body that stays is not copied
 * until the new state is gathered. The potential is not sent: every force
 * call that follows a migration computes it again. The order: the stayers'
 * and arrivals' (key, id) with their places, 16 bytes a body, sorted over
 * the threads (dist_psort: a radix sort on the key), then every
 * array gathered once in that order
 * (the old state, the received records and the new state are held
 * together for that time: about 2 x 110 bytes a body plus the movers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

struct mig_body {
	double pos[3], vel[3], acc[3], mass, work;
	uint64_t key;
	uint32_t id;
	uint16_t comp;
	uint8_t lev; /* o->lev's, or 0 */
};
_Static_assert(sizeof(struct mig_body) == 104, "a migrating body is 104 bytes");

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

/* The owner of each body (who, n) and, over T stretches of the bodies,
 * each stretch's count for each owner (at[t P + r]). */
static void mig_owners(const struct dist_owned *o, size_t n, const uint64_t *bound, int P, int T,
		       int *who, size_t *at)
{
#pragma omp parallel for schedule(static, 1)
	for (int t = 0; t < T; t++)
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++)
			at[(size_t)t * (size_t)P + (size_t)(who[i] = dist_own_owner(bound, P, o->key[i]))]++;
}

/* The bodies that leave (who[i] != me) as records grouped by owner into
 * out (cnt, off: P each, in records; this rank's 0), and the stayers'
 * places in the order array: each stretch's first into stay_at (T).
 * at: mig_owners' counts, turned into places. */
static void mig_pack(const struct sim_state *st, const struct dist_owned *o, const int *who, int P,
		     int me, int T, size_t *at, struct mig_body *out, size_t *cnt, size_t *off,
		     size_t *stay_at)
{
	const size_t n = st->n;
	size_t sum = 0, stay = 0;
	for (int t = 0; t < T; t++) { /* the stayers keep their order */
		stay_at[t] = stay;
		stay += at[(size_t)t * (size_t)P + (size_t)me];
	}
	for (int r = 0; r < P; r++) {
		off[r] = sum;
		for (int t = 0; t < T && r != me; t++) {
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
			if (who[i] == me)
				continue;
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
			b->lev = o->lev ? o->lev[i] : 0;
		}
	}
}

/* The (key, id) order of the stayers (place = their index in st) and the
 * arrivals (place = n + their index in in). */
static void mig_order(const struct sim_state *st, const struct dist_owned *o, const int *who,
		      int me, int T, const size_t *stay_at, const struct mig_body *in, size_t nin,
		      size_t nstay, struct mig_kx *order)
{
	const size_t n = st->n;
#pragma omp parallel for schedule(static, 1)
	for (int t = 0; t < T; t++) {
		size_t k = stay_at[t];
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++)
			if (who[i] == me)
				order[k++] = (struct mig_kx){o->key[i], st->id[i], (uint32_t)i};
	}
#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < nin; k++)
		order[nstay + k] = (struct mig_kx){in[k].key, in[k].id, (uint32_t)(n + k)};
	dist_psort(order, nstay + nin, sizeof *order, mig_kx_cmp);
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
	free(o->lev);
	st->pos = st->vel = st->acc = st->mass = st->pot = NULL;
	st->id = NULL;
	st->comp = NULL;
	o->key = NULL;
	o->work = NULL;
	o->lev = NULL;
}

/* The new state: m bodies in order's order, each from st (place < n) or
 * from in. st's and o's arrays are replaced. 0 or NB_ERUNTIME (logged). */
static int mig_gather(struct sim_state *st, struct dist_owned *o, const struct mig_body *in,
		      const struct mig_kx *order, size_t m)
{
	const size_t n = st->n, m1 = m ? m : 1;
	struct sim_state s = *st;
	struct dist_owned w = {0};
	s.pos = malloc(3 * m1 * sizeof *s.pos);
	s.vel = malloc(3 * m1 * sizeof *s.vel);
	s.acc = malloc(3 * m1 * sizeof *s.acc);
	s.mass = malloc(m1 * sizeof *s.mass);
	s.pot = calloc(m1, sizeof *s.pot);
	s.id = malloc(m1 * sizeof *s.id);
	s.comp = malloc(m1 * sizeof *s.comp);
	w.key = malloc(m1 * sizeof *w.key);
	w.work = malloc(m1 * sizeof *w.work);
	w.lev = o->lev ? malloc(m1) : NULL;
	s.n = m;
	if (!s.pos || !s.vel || !s.acc || !s.mass || !s.pot || !s.id || !s.comp || !w.key ||
	    !w.work || (o->lev && !w.lev)) {
		log_error("out of memory for this rank's %zu bodies after migration", m);
		mig_free_arrays(&s, &w);
		return NB_ERUNTIME;
	}
#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < m; k++) {
		const size_t i = order[k].at;
		if (i < n) {
			memcpy(s.pos + 3 * k, st->pos + 3 * i, 3 * sizeof *s.pos);
			memcpy(s.vel + 3 * k, st->vel + 3 * i, 3 * sizeof *s.vel);
			memcpy(s.acc + 3 * k, st->acc + 3 * i, 3 * sizeof *s.acc);
			s.mass[k] = st->mass[i];
			w.work[k] = o->work[i];
			w.key[k] = o->key[i];
			s.id[k] = st->id[i];
			s.comp[k] = st->comp[i];
			if (w.lev)
				w.lev[k] = o->lev[i];
		} else {
			const struct mig_body *b = in + (i - n);
			memcpy(s.pos + 3 * k, b->pos, sizeof b->pos);
			memcpy(s.vel + 3 * k, b->vel, sizeof b->vel);
			memcpy(s.acc + 3 * k, b->acc, sizeof b->acc);
			s.mass[k] = b->mass;
			w.work[k] = b->work;
			w.key[k] = b->key;
			s.id[k] = b->id;
			s.comp[k] = b->comp;
			if (w.lev)
				w.lev[k] = b->lev;
		}
	}
	mig_free_arrays(st, o);
	*st = s;
	*o = w;
	return 0;
}

int dist_migrate(struct sim_state *st, struct dist_owned *o, const uint64_t *bound, int P,
		 size_t *sent)
{
	const int me = dist_rank(), T = st->n < 100000 ? 1 : 16;
	const size_t n = st->n;
	size_t *sz = malloc(4 * (size_t)P * sizeof *sz), stay_at[16];
	int *who = malloc((n ? n : 1) * sizeof *who);
	size_t *at = calloc((size_t)T * (size_t)P, sizeof *at);
	if (!sz || !who || !at)
		dist_fail("out of memory for the migration of %zu bodies", n);
	size_t *soff = sz + P, *rbytes = sz + 2 * P, *roff = sz + 3 * P;
	mig_owners(o, n, bound, P, T, who, at);
	size_t nstay = 0;
	for (int t = 0; t < T; t++)
		nstay += at[(size_t)t * (size_t)P + (size_t)me];
	struct mig_body *out = malloc((n - nstay ? n - nstay : 1) * sizeof *out);
	if (!out)
		dist_fail("out of memory for the migration of %zu bodies", n - nstay);
	mig_pack(st, o, who, P, me, T, at, out, sz, soff, stay_at);
	*sent = n - nstay;
	for (int r = 0; r < P; r++) {
		sz[r] *= sizeof *out;
		soff[r] *= sizeof *out;
	}
	struct mig_body *in = dist_alltoallv(out, sz, soff, rbytes, roff, "migration");
	if (!in) { /* rank 0: the exchange broke (logged); st is left empty, and out
		    * to the messages still pending */
		mig_free_arrays(st, o);
		st->n = 0;
		free(who), free(at);
		return NB_ERUNTIME;
	}
	free(out);
	size_t nin = 0;
	for (int r = 0; r < P; r++)
		nin += rbytes[r] / sizeof *in;
	free(sz), free(at);
	struct mig_kx *order = malloc((nstay + nin ? nstay + nin : 1) * sizeof *order);
	int rc = 0;
	if (!order || n + nin >= UINT32_MAX) {
		log_error("out of memory for the order of %zu bodies after migration", nstay + nin);
		rc = NB_ERUNTIME;
	} else {
		mig_order(st, o, who, me, T, stay_at, in, nin, nstay, order);
		rc = mig_gather(st, o, in, order, nstay + nin);
	}
	free(order);
	free(who);
	free(in);
	return rc;
}
