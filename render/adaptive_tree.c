/* adaptive_tree.c - render_adaptive_h (render/adaptive.h): h_i = distance
 * to the k-th nearest other drawn body, by a box tree over the drawn
 * bodies in Morton order; the CPU twin of render/cuda/render_adaptive.cu's
 * search, with the same tree, in double.
 *
 * Order. The bounding box of the drawn bodies is cut into 2^21 cells per
 * axis; each drawn body gets the 63-bit Morton code of its cell and an LSD
 * radix sort (stable, so ties keep body order) puts them in key order;
 * their positions are gathered in that order (structure of arrays). The
 * order only decides which bodies are grouped: the result never depends
 * on it.
 *
 * Tree. Leaves are runs of 32 consecutive sorted bodies; a node of level
 * l >= 1 has the (up to) 8 nodes 8j..8j+7 of level l-1 as children. Each
 * node holds the tight box (min and max per axis) of its bodies. Built
 * bottom-up, one pass per level.
 *
 * Search, one leaf (a group of up to 32 bodies) per OpenMP iteration:
 *   1. Start: every body of the group scans the window of leaves around
 *      its own in key order, widened one leaf at a time (alternating
 *      sides) until it holds at least k + 1 bodies, keeping its k smallest squared distances to the
 *      others (struct at_kbuf), so every body has a bound: its k-th.
 *   2. Walk: from the root, a node is kept when the distance between its
 *      box and the group's box is below B, the largest bound of the
 *      group; the leaves reached (minus the window) form the group's list,
 *      sorted nearest first.
 *   3. Each body walks the list: the list is nearest first, so once a
 *      leaf's group distance reaches the body's own bound the rest can be
 *      dropped; a leaf whose box is not closer to the body than its bound
 *      is skipped, and so is each run of 8 bodies (a sub-box) in it
 *      whose box is not closer; the others are scanned.
 *
 * Exactness. A candidate's squared distance is dx*dx + dy*dy + dz*dz in
 * double, as a brute-force search forms it. A box's is formed the same
 * way from the per-axis gaps max(lo - p, p - hi, 0) (box to box: max(lo_n
 * - hi_g, lo_g - hi_n, 0)); the gap is <= |q - p| for every body q in the
 * box and every body p in the group's box, each operation is correctly
 * rounded and so monotone, hence a box's squared distance is <= that of
 * every pair it stands for, bit for bit. A box (or list entry) is dropped
 * only when that distance is >= the bound (>= the k-th smallest seen),
 * and only values below the bound are kept: nothing dropped could be among
 * the k smallest. So h is
 * exactly the brute-force value, for any thread count and any order. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/morton.h"
#include "adaptive.h"
#include "render.h"

#define AT_BITS 21  /* cells per axis of the Morton order: 2^21 (63-bit keys) */
#define AT_LEAF 32  /* bodies per leaf */
#define AT_SUB 8    /* bodies per sub-box of a leaf (each body's own pruning) */
#define AT_FAN 8    /* children per node */
#define AT_MAXLEV 16 /* 32 * 8^15 bodies, far above any n */

struct at_tree {
	size_t m;            /* drawn bodies */
	size_t *idx;         /* m: body index of sorted position s */
	double *x, *y, *z;   /* m each: positions in key order */
	int nlev;
	size_t count[AT_MAXLEV], off[AT_MAXLEV]; /* nodes per level, first node */
	double *lo, *hi;     /* 3 per node, every level, leaves first */
	double *slo, *shi;   /* 3 per run of AT_SUB sorted bodies */
};

/* Stable LSD radix sort of (key, idx) pairs by key, 8 bits a pass; passes
 * whose digit is the same for every key are skipped. */
static void radix_sort(uint64_t *key, size_t *idx, uint64_t *tkey, size_t *tidx, size_t m)
{
	for (int shift = 0; shift < 64; shift += 8) {
		size_t cnt[257] = {0};
		for (size_t s = 0; s < m; s++)
			cnt[((key[s] >> shift) & 0xff) + 1]++;
		int used = 0;
		for (int d = 1; d <= 256; d++)
			used += cnt[d] != 0;
		if (used <= 1)
			continue;
		for (int d = 0; d < 256; d++)
			cnt[d + 1] += cnt[d];
		for (size_t s = 0; s < m; s++) {
			size_t t = cnt[(key[s] >> shift) & 0xff]++;
			tkey[t] = key[s];
			tidx[t] = idx[s];
		}
		memcpy(key, tkey, m * sizeof *key);
		memcpy(idx, tidx, m * sizeof *idx);
	}
}

/* Boxes of the nr runs of `len` consecutive sorted bodies. */
static void runs_box(const struct at_tree *t, size_t len, size_t nr, double *lo, double *hi)
{
	for (size_t r = 0; r < nr; r++) {
		size_t s0 = r * len, s1 = s0 + len < t->m ? s0 + len : t->m;
		for (int a = 0; a < 3; a++) {
			const double *v = a == 0 ? t->x : a == 1 ? t->y : t->z;
			double l = v[s0], h = v[s0];
			for (size_t s = s0 + 1; s < s1; s++) {
				l = v[s] < l ? v[s] : l;
				h = v[s] > h ? v[s] : h;
			}
			lo[3 * r + a] = l;
			hi[3 * r + a] = h;
		}
	}
}

/* The m bodies with ok set, their index in t->idx and their positions in
 * t->x, t->y, t->z, in the Morton order of their cells (sim/morton.h) in
 * the bodies' bounding cube. 0 or NB_ERUNTIME (memory; t's arrays are
 * freed by the caller). */
static int tree_sort(struct at_tree *t, const double *pos, const unsigned char *ok, size_t n,
		     size_t m)
{
	int rc = NB_ERUNTIME;
	uint64_t *key = malloc(m * sizeof *key), *tkey = malloc(m * sizeof *tkey);
	size_t *tidx = malloc(m * sizeof *tidx);
	t->m = m;
	t->idx = malloc(m * sizeof *t->idx);
	t->x = malloc(m * sizeof *t->x);
	t->y = malloc(m * sizeof *t->y);
	t->z = malloc(m * sizeof *t->z);
	if (!key || !tkey || !tidx || !t->idx || !t->x || !t->y || !t->z)
		goto cleanup;
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	size_t s = 0;
	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		t->idx[s++] = i;
		for (int a = 0; a < 3; a++) {
			double v = pos[3 * i + a];
			lo[a] = v < lo[a] ? v : lo[a];
			hi[a] = v > hi[a] ? v : hi[a];
		}
	}
	double emax = 0;
	for (int a = 0; a < 3; a++)
		emax = hi[a] - lo[a] > emax ? hi[a] - lo[a] : emax;
	for (s = 0; s < m; s++) {
		const double *p = pos + 3 * t->idx[s];
		uint64_t c[3];
		for (int a = 0; a < 3; a++) {
			/* in [0, 2^21 - 1] up to rounding; no overflow for a tiny emax */
			double u = emax > 0 ? (p[a] - lo[a]) / emax * (double)((1 << AT_BITS) - 1) : 0;
			c[a] = u > 0 ? (uint64_t)u : 0;
			c[a] = c[a] > (1u << AT_BITS) - 1 ? (1u << AT_BITS) - 1 : c[a];
		}
		key[s] = sim_morton_key(c[0], c[1], c[2]);
	}
	radix_sort(key, t->idx, tkey, tidx, m);
	for (s = 0; s < m; s++) {
		const double *p = pos + 3 * t->idx[s];
		t->x[s] = p[0];
		t->y[s] = p[1];
		t->z[s] = p[2];
	}
	rc = 0;
cleanup:
	free(key);
	free(tkey);
	free(tidx);
	return rc;
}

/* The boxes of t's sorted bodies: the runs of AT_SUB, the leaves of
 * AT_LEAF, then groups of AT_FAN until one root. 0 or NB_ERUNTIME. */
static int tree_boxes(struct at_tree *t)
{
	const size_t m = t->m;
	size_t total = 0, c = (m + AT_LEAF - 1) / AT_LEAF;
	t->nlev = 0;
	for (;;) {
		t->count[t->nlev] = c;
		t->off[t->nlev] = total;
		total += c;
		t->nlev++;
		if (c == 1)
			break;
		c = (c + AT_FAN - 1) / AT_FAN;
	}
	t->lo = malloc(3 * total * sizeof *t->lo);
	t->hi = malloc(3 * total * sizeof *t->hi);
	if (!t->lo || !t->hi)
		return NB_ERUNTIME;
	size_t nsub = (m + AT_SUB - 1) / AT_SUB;
	t->slo = malloc(3 * nsub * sizeof *t->slo);
	t->shi = malloc(3 * nsub * sizeof *t->shi);
	if (!t->slo || !t->shi)
		return NB_ERUNTIME;
	runs_box(t, AT_SUB, nsub, t->slo, t->shi);
	runs_box(t, AT_LEAF, t->count[0], t->lo, t->hi);
	for (int lev = 1; lev < t->nlev; lev++) {
		for (size_t j = 0; j < t->count[lev]; j++) {
			size_t c0 = j * AT_FAN, c1 = c0 + AT_FAN < t->count[lev - 1] ? c0 + AT_FAN
										: t->count[lev - 1];
			double *nl = t->lo + 3 * (t->off[lev] + j), *nh = t->hi + 3 * (t->off[lev] + j);
			const double *cl = t->lo + 3 * t->off[lev - 1], *ch = t->hi + 3 * t->off[lev - 1];
			for (int a = 0; a < 3; a++) {
				nl[a] = cl[3 * c0 + a];
				nh[a] = ch[3 * c0 + a];
				for (size_t q = c0 + 1; q < c1; q++) {
					nl[a] = cl[3 * q + a] < nl[a] ? cl[3 * q + a] : nl[a];
					nh[a] = ch[3 * q + a] > nh[a] ? ch[3 * q + a] : nh[a];
				}
			}
		}
	}
	return 0;
}

static int tree_build(struct at_tree *t, const double *pos, const unsigned char *ok, size_t n,
		      size_t m)
{
	int rc = tree_sort(t, pos, ok, n, m);
	return rc ? rc : tree_boxes(t);
}

static void tree_free(struct at_tree *t)
{
	free(t->idx);
	free(t->x);
	free(t->y);
	free(t->z);
	free(t->lo);
	free(t->hi);
	free(t->slo);
	free(t->shi);
}

/* The k smallest squared distances seen by one body, kept loosely: a value
 * below `bound` is appended (any value while fewer than k are held, so
 * even infinite ones, from squares that overflow, fill it), and a full
 * buffer (AT_KBUF * k values) is cut to its k smallest by a selection,
 * bound becoming the largest of them, i.e. the k-th smallest value seen
 * so far. So bound is never below the
 * k-th smallest seen (pruning with it is safe: a value >= bound cannot be
 * among the k smallest), and kbuf_settle makes it exactly that. Cheaper
 * than a heap: one append per accepted value, a selection per k - 1 or
 * more of them. */
#define AT_KBUF 3
struct at_kbuf {
	double *v;
	int n;
	double bound; /* INFINITY until the first cut */
};

/* Put the k smallest of v[0..n) (1 <= k <= n) first, the k-th smallest of
 * them at v[k - 1]; returns it (Hoare quickselect, middle pivot). */
static double select_kth(double *v, int n, int k)
{
	int lo = 0, hi = n - 1, r = k - 1;
	while (lo < hi) {
		double piv = v[lo + (hi - lo) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i <= j) {
				double x = v[i];
				v[i] = v[j];
				v[j] = x;
				i++;
				j--;
			}
		}
		/* now v[lo..j] <= piv <= v[i..hi], and j < i */
		if (r <= j)
			hi = j;
		else if (r >= i)
			lo = i;
		else
			break; /* v[j+1..i-1] all equal piv */
	}
	return v[r];
}

static void kbuf_settle(struct at_kbuf *b, int k)
{
	b->bound = select_kth(b->v, b->n, k);
	b->n = k;
}

/* Called for d2 < bound, or while fewer than k are held. */
static inline void kbuf_add(struct at_kbuf *b, int k, double d2)
{
	b->v[b->n++] = d2;
	if (b->n == AT_KBUF * k)
		kbuf_settle(b, k);
}

/* Body at sorted position s against sorted bodies [j0, j1), itself skipped. */
static void scan_range(const struct at_tree *t, size_t s, size_t j0, size_t j1,
		       struct at_kbuf *b, int k)
{
	double px = t->x[s], py = t->y[s], pz = t->z[s];
	for (size_t j = j0; j < j1; j++) {
		double dx = t->x[j] - px, dy = t->y[j] - py, dz = t->z[j] - pz;
		double d2 = dx * dx + dy * dy + dz * dz;
		if ((d2 < b->bound || b->n < k) && j != s)
			kbuf_add(b, k, d2);
	}
}

/* Squared distance from box (lo, hi) to box (glo, ghi); a point is a box. */
static inline double gap(double lo, double hi, double glo, double ghi)
{
	double u = lo - ghi, v = glo - hi;
	double g = u > v ? u : v;
	return g > 0 ? g : 0;
}

static inline double box_d2(const double *lo, const double *hi, const double *glo,
			    const double *ghi)
{
	double gx = gap(lo[0], hi[0], glo[0], ghi[0]), gy = gap(lo[1], hi[1], glo[1], ghi[1]),
	       gz = gap(lo[2], hi[2], glo[2], ghi[2]);
	return gx * gx + gy * gy + gz * gz;
}

struct at_entry {
	double d2;
	size_t leaf;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct at_entry *x = a, *y = b;
	if (x->d2 != y->d2)
		return (x->d2 > y->d2) - (x->d2 < y->d2);
	return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* Per-thread scratch: heaps of the group's bodies, the walk's stack and list. */
struct at_work {
	double *buf;         /* AT_LEAF * AT_KBUF * k */
	struct at_kbuf kb[AT_LEAF];
	struct at_entry *list;
	size_t list_cap;
	size_t *stack;       /* node (level, index) packed as index * AT_MAXLEV + level */
	size_t stack_cap;
};

static int push_stack(struct at_work *w, size_t *top, size_t v)
{
	if (*top == w->stack_cap) {
		size_t cap = w->stack_cap ? 2 * w->stack_cap : 256;
		size_t *p = realloc(w->stack, cap * sizeof *p);
		if (!p)
			return NB_ERUNTIME;
		w->stack = p;
		w->stack_cap = cap;
	}
	w->stack[(*top)++] = v;
	return 0;
}

static int push_list(struct at_work *w, size_t *len, double d2, size_t leaf)
{
	if (*len == w->list_cap) {
		size_t cap = w->list_cap ? 2 * w->list_cap : 256;
		struct at_entry *p = realloc(w->list, cap * sizeof *p);
		if (!p)
			return NB_ERUNTIME;
		w->list = p;
		w->list_cap = cap;
	}
	w->list[(*len)++] = (struct at_entry){d2, leaf};
	return 0;
}

/* Squared k-th distances of leaf g's bodies into d2out (sorted order). */
static int search_leaf(const struct at_tree *t, size_t g, int k, struct at_work *w, double *d2out)
{
	size_t m = t->m, nleaf = t->count[0];
	size_t s0 = g * AT_LEAF, s1 = s0 + AT_LEAF < m ? s0 + AT_LEAF : m;
	/* 1. the window [la, lb) of leaves, at least k + 1 bodies */
	size_t la = g, lb = g + 1;
	for (;;) {
		size_t b1 = lb * AT_LEAF < m ? lb * AT_LEAF : m;
		if (b1 - la * AT_LEAF >= (size_t)k + 1 || (la == 0 && lb == nleaf))
			break;
		if (lb < nleaf && (lb - g <= g - la || la == 0))
			lb++; /* one leaf at a time, alternating sides */
		else if (la > 0)
			la--;
	}
	size_t w0 = la * AT_LEAF, w1 = lb * AT_LEAF < m ? lb * AT_LEAF : m;
	double bound = 0;
	for (size_t s = s0; s < s1; s++) {
		struct at_kbuf *b = &w->kb[s - s0];
		*b = (struct at_kbuf){w->buf + (s - s0) * (size_t)AT_KBUF * k, 0, INFINITY};
		scan_range(t, s, w0, w1, b, k);
		kbuf_settle(b, k); /* >= k values: the window holds k others */
		bound = b->bound > bound ? b->bound : bound;
	}
	/* 2. the leaves whose box is nearer the group's box than the bound */
	const double *glo = t->lo + 3 * g, *ghi = t->hi + 3 * g;
	size_t top = 0, len = 0;
	if (push_stack(w, &top, (size_t)(t->nlev - 1)))
		return NB_ERUNTIME;
	while (top > 0) {
		size_t v = w->stack[--top];
		int lev = (int)(v % AT_MAXLEV);
		size_t j = v / AT_MAXLEV, node = t->off[lev] + j;
		double d2 = box_d2(t->lo + 3 * node, t->hi + 3 * node, glo, ghi);
		if (!(d2 < bound))
			continue;
		if (lev == 0) {
			if ((j < la || j >= lb) && push_list(w, &len, d2, j))
				return NB_ERUNTIME;
			continue;
		}
		size_t c1 = (j + 1) * AT_FAN < t->count[lev - 1] ? (j + 1) * AT_FAN : t->count[lev - 1];
		for (size_t c = j * AT_FAN; c < c1; c++)
			if (push_stack(w, &top, c * AT_MAXLEV + (size_t)(lev - 1)))
				return NB_ERUNTIME;
	}
	qsort(w->list, len, sizeof *w->list, cmp_entry);
	/* 3. each body down the list with its own bound */
	for (size_t s = s0; s < s1; s++) {
		struct at_kbuf *b = &w->kb[s - s0];
		double p[3] = {t->x[s], t->y[s], t->z[s]};
		for (size_t e = 0; e < len; e++) {
			if (!(w->list[e].d2 < b->bound))
				break;
			size_t l = w->list[e].leaf;
			if (!(box_d2(t->lo + 3 * l, t->hi + 3 * l, p, p) < b->bound))
				continue;
			size_t q1 = (l + 1) * (AT_LEAF / AT_SUB);
			for (size_t q = l * (AT_LEAF / AT_SUB); q < q1 && q * AT_SUB < m; q++) {
				if (!(box_d2(t->slo + 3 * q, t->shi + 3 * q, p, p) < b->bound))
					continue;
				size_t j1 = (q + 1) * AT_SUB < m ? (q + 1) * AT_SUB : m;
				scan_range(t, s, q * AT_SUB, j1, b, k);
			}
		}
		kbuf_settle(b, k);
		d2out[s - s0] = b->bound;
	}
	return 0;
}

/* Squared k-th distances of the query bodies (t->idx < nq) of every leaf
 * that holds one, written as h[idx] = sqrt. 0 or NB_ERUNTIME. */
static int search_all(const struct at_tree *t, size_t nq, int keff, double *h)
{
	int failed = 0;
	const size_t m = t->m, nleaf = t->count[0];
#pragma omp parallel
	{
		struct at_work w = {0};
		double d2[AT_LEAF];
		w.buf = malloc((size_t)AT_LEAF * AT_KBUF * (size_t)keff * sizeof *w.buf);
		if (!w.buf) {
#pragma omp atomic write
			failed = 1;
		}
#pragma omp for schedule(dynamic, 16)
		for (size_t g = 0; g < nleaf; g++) {
			size_t s0 = g * AT_LEAF, s1 = s0 + AT_LEAF < m ? s0 + AT_LEAF : m, s;
			for (s = s0; s < s1 && t->idx[s] >= nq; s++)
				;
			if (s == s1) /* neighbours only (a halo) */
				continue;
			if (!w.buf || search_leaf(t, g, keff, &w, d2)) {
#pragma omp atomic write
				failed = 1;
				continue;
			}
			for (s = s0; s < s1; s++)
				if (t->idx[s] < nq)
					h[t->idx[s]] = sqrt(d2[s - s0]);
		}
		free(w.buf);
		free(w.list);
		free(w.stack);
	}
	return failed ? NB_ERUNTIME : 0;
}

/* ok[i] (n, malloc'd; NULL, logged: out of memory): body i is drawn
 * (flag, or drawn NULL) and finite; *m their count. */
static unsigned char *drawn_ok(const double *pos, const unsigned char *drawn, size_t n, size_t *m)
{
	unsigned char *ok = malloc(n ? n : 1);
	if (!ok) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		return NULL;
	}
	*m = 0;
	for (size_t i = 0; i < n; i++) {
		ok[i] = (!drawn || drawn[i]) && isfinite(pos[3 * i]) && isfinite(pos[3 * i + 1]) &&
			isfinite(pos[3 * i + 2]);
		*m += ok[i];
	}
	return ok;
}

int render_adaptive_h_near(const double *pos, const unsigned char *drawn, size_t n, size_t nq,
			   int keff, double fallback, double *h)
{
	int rc = 0;
	struct at_tree t;
	memset(&t, 0, sizeof t);
	size_t m;
	unsigned char *ok = drawn_ok(pos, drawn, n, &m);
	if (!ok)
		return NB_ERUNTIME;
	for (size_t i = 0; i < nq; i++) /* drawn bodies' h are overwritten below */
		h[i] = ok[i] && (long)m - 1 < (long)keff ? INFINITY : fallback;
	if (keff < 1 || (long)m - 1 < (long)keff)
		goto cleanup;
	if (tree_build(&t, pos, ok, n, m) != 0) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	if (search_all(&t, nq, keff, h)) {
		log_error("adaptive smoothing: out of memory for the neighbour search");
		rc = NB_ERUNTIME;
	}
cleanup:
	tree_free(&t);
	free(ok);
	return rc;
}

int render_adaptive_h(const double *pos, const unsigned char *drawn, size_t n, int k,
		      double fallback, double *h)
{
	size_t m;
	unsigned char *ok = drawn_ok(pos, drawn, n, &m);
	if (!ok)
		return NB_ERUNTIME;
	free(ok);
	long keff = (long)m - 1 < (long)k ? (long)m - 1 : (long)k;
	if (keff < 1) {
		for (size_t i = 0; i < n; i++)
			h[i] = fallback;
		return 0;
	}
	return render_adaptive_h_near(pos, drawn, n, n, (int)keff, fallback, h);
}

/* The run [s0, s1) of sorted bodies' box, each side moved out by the run's
 * largest h (and a little more: the box only has to hold every body within
 * h of one of the run's, and rounding must not leave one out). */
static void reach_box(const struct at_tree *t, const double *h, size_t s0, size_t s1, double *b)
{
	double r = 0;
	for (int a = 0; a < 3; a++) {
		const double *v = a == 0 ? t->x : a == 1 ? t->y : t->z;
		double l = v[s0], u = v[s0];
		for (size_t s = s0 + 1; s < s1; s++) {
			l = v[s] < l ? v[s] : l;
			u = v[s] > u ? v[s] : u;
		}
		b[a] = l;
		b[3 + a] = u;
	}
	for (size_t s = s0; s < s1; s++)
		r = h[t->idx[s]] > r ? h[t->idx[s]] : r;
	r = r * (1 + 1e-9);
	for (int a = 0; a < 3; a++) {
		double pad = r + 1e-12 * (fabs(b[a]) + fabs(b[3 + a]));
		b[a] -= pad;
		b[3 + a] += pad;
	}
}

int render_adaptive_reach(const double *pos, const unsigned char *drawn, size_t n,
			  const double *h, int max, double *boxes, int *nbox)
{
	int rc = 0;
	struct at_tree t;
	memset(&t, 0, sizeof t);
	size_t m;
	unsigned char *ok = drawn_ok(pos, drawn, n, &m);
	*nbox = 0;
	if (!ok)
		return NB_ERUNTIME;
	if (m > 0 && max > 0 && (rc = tree_sort(&t, pos, ok, n, m)) != 0)
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
	for (int b = 0; !rc && m > 0 && b < max; b++) {
		size_t s0 = m * (size_t)b / (size_t)max, s1 = m * (size_t)(b + 1) / (size_t)max;
		if (s1 > s0)
			reach_box(&t, h, s0, s1, boxes + 6 * (*nbox)++);
	}
	tree_free(&t);
	free(ok);
	return rc;
}

/* ---- the k nearest bodies of points outside the set ---------------------- */

/* The k best (smallest d2) seen by one query point: sorted positions s. */
struct at_best {
	double *d2;
	size_t *s;
	int n, k;
	double bound; /* the largest kept once k are held, else INFINITY */
	int seeded;   /* the list began with the last point's bodies */
};

static void best_add(struct at_best *b, double d2, size_t s)
{
	for (int i = 0; b->seeded && i < b->n; i++)
		if (b->s[i] == s) /* met again by the walk: held already */
			return;
	int at = b->n;
	if (b->n == b->k) { /* replace the largest */
		at = 0;
		for (int i = 1; i < b->n; i++)
			at = b->d2[i] > b->d2[at] ? i : at;
	} else
		b->n++;
	b->d2[at] = d2;
	b->s[at] = s;
	if (b->n == b->k) {
		b->bound = b->d2[0];
		for (int i = 1; i < b->n; i++)
			b->bound = b->d2[i] > b->bound ? b->d2[i] : b->bound;
	}
}

/* Node j of level lev for point p, children nearest first, pruned by the
 * bound as the search in search_leaf prunes. */
static void nearest_walk(const struct at_tree *t, int lev, size_t j, const double *p,
			 struct at_best *b)
{
	if (lev == 0) {
		const size_t s1 = (j + 1) * AT_LEAF < t->m ? (j + 1) * AT_LEAF : t->m;
		for (size_t s = j * AT_LEAF; s < s1; s++) {
			double dx = t->x[s] - p[0], dy = t->y[s] - p[1], dz = t->z[s] - p[2];
			double d2 = dx * dx + dy * dy + dz * dz;
			if (b->n < b->k || d2 < b->bound)
				best_add(b, d2, s);
		}
		return;
	}
	size_t c0 = j * AT_FAN, c1 = c0 + AT_FAN < t->count[lev - 1] ? c0 + AT_FAN : t->count[lev - 1];
	struct at_entry e[AT_FAN];
	int ne = 0;
	for (size_t c = c0; c < c1; c++) {
		const size_t node = t->off[lev - 1] + c;
		struct at_entry x = {box_d2(t->lo + 3 * node, t->hi + 3 * node, p, p), c};
		int i = ne++;
		for (; i > 0 && e[i - 1].d2 > x.d2; i--) /* insertion: nearest first */
			e[i] = e[i - 1];
		e[i] = x;
	}
	for (int i = 0; i < ne; i++)
		if (b->n < b->k || e[i].d2 < b->bound)
			nearest_walk(t, lev - 1, e[i].leaf, p, b);
}

/* Start point p's list with the bodies the thread's last point kept (its
 * k nearest): their distances to p make a bound at once, which a walk
 * from the root lacks, and the queries of one rank come in its curve's
 * order, so the last point is usually near. The walk then skips them. */
static void nearest_seed(const struct at_tree *t, const double *p, struct at_best *b)
{
	const int n = b->n;
	b->n = 0;
	b->bound = INFINITY;
	b->seeded = 0;
	for (int i = 0; i < n; i++) {
		const size_t s = b->s[i];
		double dx = t->x[s] - p[0], dy = t->y[s] - p[1], dz = t->z[s] - p[2];
		best_add(b, dx * dx + dy * dy + dz * dz, s);
	}
	b->seeded = n > 0;
}

int render_adaptive_nearest(const double *pos, const unsigned char *drawn, size_t n,
			    const double *q, size_t nq, int k, unsigned char *mark)
{
	int rc = 0, failed = 0;
	struct at_tree t;
	memset(&t, 0, sizeof t);
	size_t m;
	unsigned char *ok = drawn_ok(pos, drawn, n, &m);
	if (!ok)
		return NB_ERUNTIME;
	if (m == 0 || nq == 0 || k < 1)
		goto cleanup;
	if ((rc = tree_build(&t, pos, ok, n, m)) != 0) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		goto cleanup;
	}
	const int kk = (size_t)k < m ? k : (int)m;
#pragma omp parallel
	{
		struct at_best b = {malloc((size_t)kk * sizeof *b.d2), malloc((size_t)kk * sizeof *b.s),
				    0, kk, INFINITY, 0};
		if (!b.d2 || !b.s) {
#pragma omp atomic write
			failed = 1;
		}
#pragma omp for schedule(dynamic, 64)
		for (size_t j = 0; j < nq; j++) {
			if (!b.d2 || !b.s)
				continue;
			nearest_seed(&t, q + 3 * j, &b);
			nearest_walk(&t, t.nlev - 1, 0, q + 3 * j, &b);
			for (int i = 0; i < b.n; i++) {
#pragma omp atomic write
				mark[t.idx[b.s[i]]] = 1;
			}
		}
		free(b.d2);
		free(b.s);
	}
	if (failed) {
		log_error("adaptive smoothing: out of memory for the nearest bodies");
		rc = NB_ERUNTIME;
	}
cleanup:
	tree_free(&t);
	free(ok);
	return rc;
}
