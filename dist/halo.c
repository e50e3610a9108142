/* halo.c - adaptive smoothing lengths over ranks that hold their own bodies
 * (simulation.ranks: domains; dist.h, dist_halo_h; issue 31): a body's h
 * is the distance to its k-th nearest drawn neighbour (render/adaptive.h),
 * and near a domain's face those neighbours are another rank's bodies. So
 * each rank receives a halo of the others' drawn bodies and searches its
 * own plus the halo.
 *
 * Which bodies, exactly and without a second round. Each rank first finds
 * its bodies' h among its own drawn bodies only (with k_eff = min(k, M -
 * 1), M the drawn bodies over every rank): h_own >= the true h, since the
 * true search has every body the local one has and more, so each of body
 * i's true k nearest lies within h_own(i) of it. Every rank sends the
 * others its cover: the tight boxes of up to HALO_MAXBOX runs of its drawn
 * bodies along the Morton curve (render_adaptive_reach with no length, an
 * allgather). A body whose ball of radius h_own reaches rank r's cover is
 * a query to r (its position, one all-to-all); r answers with its k_eff
 * nearest drawn bodies to each of its queries, each body once
 * (render_adaptive_nearest; a second all-to-all). A rank whose cover the
 * ball misses holds none of the body's true neighbours; from a rank it
 * reaches, the true neighbours there are among its k nearest. So own +
 * halo hold every true neighbour of every own body, and the exact search
 * over them (the same squared distances, in double, as one process's)
 * gives each body one process's h bit for bit; the other bodies of the
 * halo are real bodies farther than the k-th and change nothing. A rank
 * with fewer than k_eff + 1 drawn bodies has no bound (h_own infinite):
 * its bodies ask every rank. Asking for the k nearest rather than taking
 * every body within reach keeps the halo small where h_own is large (a
 * thin disk cut through its plane on 2 ranks, 25000 bodies a rank: 3700
 * bodies received instead of 15500 within reach).
 *
 * render.h_cap: h = min(h, cap x median) with the lower median of every
 * rank's drawn bodies' h, found exactly without gathering them: a
 * bisection on the bits of the doubles (h >= 0, so their order is the
 * order of their bits), each step a sum of counts over the ranks (at most
 * 63 small sums per update, every render.adaptive_every frames). Between
 * updates the kept lengths follow their bodies by id (dist_halo_follow).
 *
 * Each rank holds beside its state: its positions in scene units, its
 * queries and the others' (3 doubles each), the halo (3 doubles a body). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../render/adaptive.h"
#include "dist.h"

/* A rank's record in the allgather: its boxes' count, then the boxes. */
enum { HALO_MAXBOX = 64, HALO_REC = 1 + 6 * HALO_MAXBOX };

/* 1 when the ball of radius r round p reaches one of the nbox boxes (6
 * doubles each): its squared distance formed as the search forms a box's
 * (render/adaptive_tree.c: never above a body's in the box), against r
 * widened by a relative 1e-9 against rounding (r infinite: any box). */
static int halo_near(const double *p, double r, const double *boxes, int nbox)
{
	const double r2 = r * (1 + 1e-9) * r * (1 + 1e-9);
	for (int b = 0; b < nbox; b++) {
		const double *lo = boxes + 6 * b, *hi = lo + 3;
		double d2 = 0;
		for (int a = 0; a < 3; a++) {
			double u = lo[a] - p[a], v = p[a] - hi[a], g = u > v ? u : v;
			d2 += g > 0 ? g * g : 0;
		}
		if (d2 <= r2)
			return 1;
	}
	return 0;
}

/* The queries: for each rank r != this one, the positions (3 doubles) of
 * this rank's drawn bodies (ok) whose ball of radius h (an upper bound of
 * their length) reaches r's cover (rec + r HALO_REC), packed in rank order
 * into *out (malloc'd); sz, off: bytes. 0 or NB_ERUNTIME (logged). */
static int halo_pack(const double *p, const unsigned char *ok, const double *h, size_t n,
		     const double *rec, size_t *sz, size_t *off, double **out)
{
	const int P = dist_size(), me = dist_rank();
	size_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		total = 0;
		for (int r = 0; r < P; r++) {
			const double *b = rec + (size_t)r * HALO_REC;
			size_t k = 0;
			for (size_t i = 0; r != me && i < n; i++) {
				if (!ok[i] || !halo_near(p + 3 * i, h[i], b + 1, (int)b[0]))
					continue;
				if (pass == 1)
					memcpy(*out + 3 * (total + k), p + 3 * i, 3 * sizeof **out);
				k++;
			}
			off[r] = total * 3 * sizeof **out;
			sz[r] = k * 3 * sizeof **out;
			total += k;
		}
		if (pass == 0 && !(*out = malloc((3 * total + 1) * sizeof **out))) {
			log_error("adaptive smoothing: out of memory for %zu queries", total);
			return NB_ERUNTIME;
		}
	}
	return 0;
}

/* The answers: for each rank r, this rank's k nearest drawn bodies to each
 * of r's queries (rank r's block of in at roff, rbytes), each body once a
 * rank, as positions packed in rank order into *out (malloc'd); sz, off:
 * bytes. 0 or NB_ERUNTIME (logged). */
static int halo_answer(const double *p, const unsigned char *drawn, const unsigned char *ok,
		       size_t n, const char *in, const size_t *rbytes, const size_t *roff, int k,
		       size_t *sz, size_t *off, double **out)
{
	const int P = dist_size();
	unsigned char *mark = malloc(n + 1);
	double *q = NULL;
	size_t total = 0;
	int rc = mark && (*out = malloc(sizeof **out)) ? 0 : NB_ERUNTIME;
	for (int r = 0; r < P && !rc; r++) {
		const size_t nq = rbytes[r] / (3 * sizeof(double)), k0 = total;
		memset(mark, 0, n + 1);
		free(q); /* the queries, copied: in's blocks need not be aligned */
		if (!(q = malloc((3 * nq + 1) * sizeof *q))) {
			rc = NB_ERUNTIME;
			break;
		}
		memcpy(q, in + roff[r], 3 * nq * sizeof *q);
		if ((rc = render_adaptive_nearest(p, drawn, n, q, nq, k, mark)))
			break;
		for (size_t i = 0; i < n; i++)
			total += mark[i] && ok[i];
		double *grown = realloc(*out, (3 * total + 1) * sizeof *grown);
		if (!grown) {
			rc = NB_ERUNTIME;
			break;
		}
		*out = grown;
		for (size_t i = 0, j = k0; i < n; i++)
			if (mark[i] && ok[i])
				memcpy(grown + 3 * j++, p + 3 * i, 3 * sizeof *grown);
		off[r] = k0 * 3 * sizeof **out;
		sz[r] = (total - k0) * 3 * sizeof **out;
	}
	if (rc)
		log_error("adaptive smoothing: out of memory for the nearest bodies of %zu", n);
	free(mark);
	free(q);
	return rc;
}

/* The lower median of the drawn (ok) bodies' h over every rank: the
 * ((M + 1) / 2)-th smallest of the M values (render_adaptive_cap's rule),
 * an exact element. Collective. */
static double halo_median(const double *h, const unsigned char *ok, size_t n, double M)
{
	const double want = floor((M + 1) / 2);
	uint64_t lo = 0, hi = 0x7ff0000000000000u; /* 0 .. +infinity */
	while (lo < hi) {
		const uint64_t mid = lo + (hi - lo) / 2;
		double v, cnt = 0;
		memcpy(&v, &mid, sizeof v);
		for (size_t i = 0; i < n; i++)
			cnt += ok[i] && h[i] <= v;
		dist_sum_doubles(&cnt, 1, "adaptive smoothing: the median h");
		if (cnt >= want)
			hi = mid;
		else
			lo = mid + 1;
	}
	double v;
	memcpy(&v, &lo, sizeof v);
	return v;
}

/* Every rank's cover (P x HALO_REC) into all: the tight boxes of up to
 * HALO_MAXBOX runs of its drawn bodies along the Morton curve
 * (render_adaptive_reach with no length). 0 or NB_ERUNTIME (logged); the
 * allgather is made whatever happens. */
static int halo_covers(const double *p, const unsigned char *drawn, size_t n, double *all)
{
	const int P = dist_size(), me = dist_rank();
	double mine[HALO_REC] = {0};
	int nbox = 0;
	double *zero = calloc(n + 1, sizeof *zero);
	size_t *b = malloc(2 * (size_t)P * sizeof *b);
	if (!zero || !b)
		dist_fail("out of memory");
	int rc = render_adaptive_reach(p, drawn, n, zero, HALO_MAXBOX, mine + 1, &nbox);
	mine[0] = rc ? 0 : nbox;
	for (int r = 0; r < P; r++) {
		b[r] = sizeof mine;
		b[P + r] = (size_t)r * sizeof mine;
	}
	memcpy(all + (size_t)me * HALO_REC, mine, sizeof mine);
	dist_allgatherv(mine, all, b, b + P, "adaptive smoothing: covers");
	free(b);
	free(zero);
	return rc;
}

/* One all-to-all of out (sz, off: P each; NULL or rc set: nothing sent):
 * the received bytes, rbytes and roff into sz + 2P, sz + 3P. NULL when
 * rank 0's exchange broke (logged; *out is then left to the messages). */
static char *halo_swap(double **out, size_t *sz, int rc, const char *what)
{
	const int P = dist_size();
	if (rc || !*out)
		for (int r = 0; r < P; r++) /* still take part in the exchange */
			sz[r] = sz[P + r] = 0;
	char *in = dist_alltoallv(*out ? (void *)*out : (void *)sz, sz, sz + P, sz + 2 * P,
				  sz + 3 * P, what);
	if (!in)
		*out = NULL;
	return in;
}

/* The own bodies (p, drawn: n) followed by the halo (rank r's block of
 * in at roff[r], rbytes[r] long, 3 doubles a body), and h of the own from
 * all of them. */
static int halo_search(const double *p, const unsigned char *drawn, size_t n, const char *in,
		       const size_t *rbytes, const size_t *roff, int keff, double fallback,
		       double *h)
{
	const int P = dist_size();
	size_t m = 0;
	for (int r = 0; r < P; r++)
		m += rbytes[r] / (3 * sizeof(double));
	double *q = malloc((3 * (n + m) + 1) * sizeof *q);
	unsigned char *f = malloc(n + m + 1);
	int rc = NB_ERUNTIME;
	if (!q || !f) {
		log_error("adaptive smoothing: out of memory for %zu bodies and a halo of %zu", n, m);
		goto end;
	}
	memcpy(q, p, 3 * n * sizeof *q);
	size_t at = n; /* bodies placed */
	for (int r = 0; r < P; r++) {
		const size_t k = rbytes[r] / (3 * sizeof(double));
		memcpy(q + 3 * at, in + roff[r], 3 * k * sizeof *q);
		at += k;
	}
	memcpy(f, drawn, n);
	memset(f + n, 1, m);
	rc = render_adaptive_h_near(q, f, n + m, n, keff, fallback, h);
end:
	free(q);
	free(f);
	return rc;
}

/* The halo's two exchanges and the search; h holds h_own on entry: the
 * queries to the ranks whose cover a body's ball reaches, their k nearest
 * drawn bodies back, and the search over own + those. */
static int halo_exchange(const double *p, const unsigned char *drawn, const unsigned char *ok,
			 size_t n, int keff, double fallback, double *h)
{
	const int P = dist_size();
	double *all = malloc((size_t)P * HALO_REC * sizeof *all), *out = NULL;
	size_t *sz = malloc(4 * (size_t)P * sizeof *sz);
	char *in = NULL;
	if (!all || !sz)
		dist_fail("out of memory");
	int rc = halo_covers(p, drawn, n, all);
	if (!rc && !(rc = dist_broken()))
		rc = halo_pack(p, ok, h, n, all, sz, sz + P, &out);
	if (!(in = halo_swap(&out, sz, rc, "adaptive smoothing: queries"))) {
		rc = NB_ERUNTIME;
		goto end;
	}
	free(out);
	out = NULL;
	if (!rc)
		rc = halo_answer(p, drawn, ok, n, in, sz + 2 * P, sz + 3 * P, keff, sz, sz + P, &out);
	free(in);
	if (!(in = halo_swap(&out, sz, rc, "adaptive smoothing: halo"))) {
		rc = NB_ERUNTIME;
		goto end;
	}
	if (!rc)
		rc = halo_search(p, drawn, n, in, sz + 2 * P, sz + 3 * P, keff, fallback, h);
end:
	free(in);
	free(out);
	free(all);
	free(sz);
	return rc;
}

int dist_halo_h(const struct scene *sc, const struct sim_state *st, const struct sim_units *u,
		double *h)
{
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	const size_t n = st->n;
	double *p = malloc((3 * n + 1) * sizeof *p);
	unsigned char *drawn = malloc(n + 1), *ok = malloc(n + 1);
	if (!p || !drawn || !ok)
		dist_fail("adaptive smoothing: out of memory for %zu bodies", n);
	for (size_t i = 0; i < 3 * n; i++)
		p[i] = st->pos[i] / u->length;
	render_adaptive_drawn(sc, st, drawn);
	double M = 0;
	for (size_t i = 0; i < n; i++) {
		ok[i] = drawn[i] && isfinite(p[3 * i]) && isfinite(p[3 * i + 1]) &&
			isfinite(p[3 * i + 2]);
		M += ok[i];
	}
	dist_sum_doubles(&M, 1, "adaptive smoothing: bodies drawn");
	const double k = sc->render.neighbours, keff = M - 1 < k ? M - 1 : k;
	int rc = 0;
	if (keff < 1) { /* fewer than two drawn bodies in all: the fallback */
		for (size_t i = 0; i < n; i++)
			h[i] = sc->render.smoothing;
		goto end;
	}
	rc = render_adaptive_h_near(p, drawn, n, n, (int)keff, sc->render.smoothing, h);
	rc = halo_exchange(p, drawn, ok, n, (int)keff, sc->render.smoothing, h) ? NB_ERUNTIME : rc;
	if (sc->render.h_cap > 0) /* every rank alike (M >= 2 here) */
		render_adaptive_clamp(p, drawn, n, sc->render.h_cap * halo_median(h, ok, n, M), h);
end:
	free(p);
	free(drawn);
	free(ok);
	return rc;
}

/* ---- lengths kept between frames follow their bodies ---------------------- */

struct halo_idh {
	uint32_t id;
	double h;
};

static int halo_idh_cmp(const void *a, const void *b)
{
	const struct halo_idh *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The entry of id in v (n, sorted by id), or NULL. */
static const struct halo_idh *halo_find(const struct halo_idh *v, size_t n, uint32_t id)
{
	const struct halo_idh key = {id, 0};
	return n ? bsearch(&key, v, n, sizeof *v, halo_idh_cmp) : NULL;
}

/* Every rank's ids that it lacks (want: nw of this rank's), allgathered:
 * *all (malloc'd) holds rank r's at cnt-prefix offsets; cnt: P counts. */
static uint32_t *halo_requests(const uint32_t *want, size_t nw, size_t *cnt)
{
	const int P = dist_size(), me = dist_rank();
	double *c = calloc((size_t)P, sizeof *c);
	size_t *b = malloc(2 * (size_t)P * sizeof *b), total = 0;
	if (!c || !b)
		dist_fail("out of memory");
	c[me] = (double)nw;
	dist_sum_doubles(c, P, "adaptive smoothing: lengths asked for");
	for (int r = 0; r < P; r++) {
		cnt[r] = (size_t)c[r];
		b[r] = cnt[r] * sizeof *want;
		b[P + r] = total * sizeof *want;
		total += cnt[r];
	}
	uint32_t *all = malloc((total + 1) * sizeof *all);
	if (!all)
		dist_fail("adaptive smoothing: out of memory for %zu ids", total);
	memcpy((char *)all + b[P + me], want, nw * sizeof *want);
	dist_allgatherv(want, all, b, b + P, "adaptive smoothing: lengths asked for");
	free(c);
	free(b);
	return all;
}

/* The answers this rank holds (then: n, sorted) to every rank's requests
 * (all, cnt), packed by rank into *out (malloc'd); sz, off: P each. */
static void halo_answers(const struct halo_idh *then, size_t n, const uint32_t *all,
			 const size_t *cnt, size_t *sz, size_t *off, struct halo_idh **out)
{
	const int P = dist_size();
	size_t total = 0;
	for (int r = 0; r < P; r++)
		total += cnt[r];
	if (!(*out = malloc((total + 1) * sizeof **out)))
		dist_fail("adaptive smoothing: out of memory for %zu lengths", total);
	size_t k = 0, at = 0;
	for (int r = 0; r < P; r++) {
		off[r] = k * sizeof **out;
		for (size_t j = 0; j < cnt[r]; j++, at++) {
			const struct halo_idh *e = halo_find(then, n, all[at]);
			if (e)
				(*out)[k++] = *e;
		}
		sz[r] = k * sizeof **out - off[r];
	}
}

/* out[i] for st's bodies missing from then (miss: nm indices into st):
 * asked of every rank, answered by the one that held it. */
static int halo_fetch(const struct halo_idh *then, size_t n, const struct sim_state *st,
		      const size_t *miss, size_t nm, double *out)
{
	const int P = dist_size();
	uint32_t *want = malloc((nm + 1) * sizeof *want);
	size_t *sz = malloc(5 * (size_t)P * sizeof *sz);
	struct halo_idh *ans = NULL;
	if (!want || !sz)
		dist_fail("out of memory");
	for (size_t j = 0; j < nm; j++)
		want[j] = st->id[miss[j]];
	uint32_t *all = halo_requests(want, nm, sz + 4 * P);
	halo_answers(then, n, all, sz + 4 * P, sz, sz + P, &ans);
	char *in = dist_alltoallv(ans, sz, sz + P, sz + 2 * P, sz + 3 * P,
				  "adaptive smoothing: lengths that moved");
	int rc = in ? 0 : NB_ERUNTIME; /* rank 0: the exchange broke (logged) */
	if (!in)
		ans = NULL; /* left to the pending messages */
	size_t got = 0;
	for (int r = 0; in && r < P; r++)
		got += sz[2 * P + r] / sizeof *ans;
	struct halo_idh *g = malloc((got + 1) * sizeof *g);
	if (!g)
		dist_fail("adaptive smoothing: out of memory for %zu lengths", got);
	for (size_t r = 0, k = 0; in && r < (size_t)P; r++) { /* k: entries placed */
		memcpy(g + k, in + sz[3 * P + r], sz[2 * P + r] / sizeof *g * sizeof *g);
		k += sz[2 * P + r] / sizeof *g;
	}
	if (in && got > nm) {
		rc = NB_ERUNTIME;
		log_error("adaptive smoothing: %zu lengths came back for %zu bodies (internal)", got, nm);
	}
	if (!rc)
		qsort(g, got, sizeof *g, halo_idh_cmp);
	for (size_t j = 0; !rc && j < nm; j++) {
		const struct halo_idh *e = halo_find(g, got, want[j]);
		if (!e) {
			log_error("adaptive smoothing: no rank held the length of body %u (internal)",
				  (unsigned)want[j]);
			rc = NB_ERUNTIME;
		} else
			out[miss[j]] = e->h;
	}
	free(g);
	free(in);
	free(ans);
	free(all);
	free(want);
	free(sz);
	return rc;
}

int dist_halo_follow(const uint32_t *id_then, const double *h_then, size_t n_then,
		     const struct sim_state *st, double *out)
{
	struct halo_idh *then = malloc((n_then + 1) * sizeof *then);
	size_t *miss = malloc((st->n + 1) * sizeof *miss), nm = 0;
	if (!then || !miss)
		dist_fail("adaptive smoothing: out of memory for %zu lengths", n_then + st->n);
	for (size_t k = 0; k < n_then; k++)
		then[k] = (struct halo_idh){id_then[k], h_then[k]};
	qsort(then, n_then, sizeof *then, halo_idh_cmp);
	for (size_t i = 0; i < st->n; i++) {
		const struct halo_idh *e = halo_find(then, n_then, st->id[i]);
		if (e)
			out[i] = e->h;
		else
			miss[nm++] = i;
	}
	int rc = halo_fetch(then, n_then, st, miss, nm, out); /* every rank, even with none */
	free(then);
	free(miss);
	return rc;
}
