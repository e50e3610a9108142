/* test_let.c - locally essential trees (sim/let.h, issue 31): bodies split
 * into P domains along the Morton curve, each domain's tree exported to the
 * others' boxes, each domain's forces from its own tree plus the received
 * ones, held against the direct sum (sim_direct_accel_soft) and against
 * the single tree over every body (sim_tree_accel_soft): a Plummer sphere
 * with one length, and two spheres of different lengths (per body) under
 * each kernel. Also: theta = 0 is the exact pair sum, one domain is the
 * single tree bit for bit, the export to a far box is a few cells, an
 * empty domain, and hostile buffers (truncated, counts that lie, child
 * indices out of range, non-finite values, another walk's parameters).
 * Prints the exchange volume (bytes per cell and per body) for the model
 * of docs/BENCHMARKS.md.
 * Run: make CUDA=0 BUILD=build build/tests/test_let && build/tests/test_let */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/let.h"
#include "sim/morton.h"
#include "sim/sim.h"

/* ---- bodies ---- */
struct set {
	size_t n;
	double *pos, *mass, *eps; /* eps: lengths per body, or NULL */
	struct sim_soft s;
};

static double rnd(uint64_t *st)
{
	*st = *st * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(*st >> 11) + 0.5) / 9007199254740992.0;
}

/* Plummer sphere of scale a about c (Aarseth, Henon & Wielen 1974:
 * r = a / sqrt(X^-2/3 - 1)), radius cut at 20 a, into bodies [b, e). */
static void plummer(struct set *s, size_t b, size_t e, double a, const double c[3], uint64_t *st)
{
	for (size_t i = b; i < e; i++) {
		double r;
		do
			r = a / sqrt(pow(rnd(st), -2.0 / 3.0) - 1);
		while (r > 20 * a);
		const double u = 2 * rnd(st) - 1, ph = 2 * M_PI * rnd(st), q = sqrt(1 - u * u);
		s->pos[3 * i] = c[0] + r * q * cos(ph);
		s->pos[3 * i + 1] = c[1] + r * q * sin(ph);
		s->pos[3 * i + 2] = c[2] + r * u;
		s->mass[i] = 1.0 / (double)s->n;
	}
}

/* kind 0: one Plummer sphere, one length (Plummer kernel); 1, 2: a dense
 * sphere of length 0.005 and a wide one of 0.05 beside it, lengths per
 * body, kernel plummer (1) or spline (2). */
static void set_make(struct set *s, int kind, size_t n)
{
	uint64_t st = 12345 + (uint64_t)kind;
	s->n = n;
	s->pos = malloc(3 * n * sizeof *s->pos);
	s->mass = malloc(n * sizeof *s->mass);
	s->eps = kind ? malloc(n * sizeof *s->eps) : NULL;
	const double c0[3] = {0, 0, 0}, c1[3] = {1.5, 0.4, -0.3};
	if (!kind) {
		plummer(s, 0, n, 0.3, c0, &st);
	} else {
		plummer(s, 0, n / 2, 0.1, c0, &st);
		plummer(s, n / 2, n, 0.5, c1, &st);
		for (size_t i = 0; i < n; i++)
			s->eps[i] = i < n / 2 ? 0.005 : 0.05;
	}
	s->s.kernel = kind == 2 ? SCENE_SOFT_SPLINE : SCENE_SOFT_PLUMMER;
	s->s.eps = 0.01;
	s->s.each = s->eps;
}

static void set_free(struct set *s)
{
	free(s->pos);
	free(s->mass);
	free(s->eps);
}

/* ---- domains along the Morton curve ---- */
static uint64_t *g_keys;
static int by_key(const void *a, const void *b)
{
	const uint64_t ka = g_keys[*(const size_t *)a], kb = g_keys[*(const size_t *)b];
	return ka < kb ? -1 : ka > kb;
}

/* The bodies of s in Morton order (perm[k] = body index). */
static size_t *morton_order(const struct set *s)
{
	double lo[3], hi[3];
	for (int a = 0; a < 3; a++) {
		lo[a] = hi[a] = s->pos[a];
		for (size_t i = 0; i < s->n; i++) {
			lo[a] = fmin(lo[a], s->pos[3 * i + a]);
			hi[a] = fmax(hi[a], s->pos[3 * i + a]);
		}
	}
	const double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
	g_keys = malloc(s->n * sizeof *g_keys);
	size_t *perm = malloc(s->n * sizeof *perm);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t c[3];
		for (int a = 0; a < 3; a++)
			c[a] = (uint64_t)((s->pos[3 * i + a] - lo[a]) / ext * 2097151.0);
		g_keys[i] = sim_morton_key(c[0], c[1], c[2]);
		perm[i] = i;
	}
	qsort(perm, s->n, sizeof *perm, by_key);
	free(g_keys);
	return perm;
}

/* One domain: its bodies' copies and global indices, its bounds and its
 * cover (nbox boxes; 0: the others export to its bounds). */
struct dom {
	size_t n, *idx;
	double *pos, *mass, *eps, *acc, *pot, lo[3], hi[3], eps_max, *box;
	int nbox;
	struct sim_let_tree *t;
};

/* Every body of d in one of its cover's boxes, and at most max boxes. */
static void cover_holds_bodies(const struct dom *d, int max)
{
	ck_assert_int_le(d->nbox, max);
	ck_assert_int_eq(d->nbox > 0, d->n > 0);
	for (size_t q = 0; q < d->n; q++) {
		int in = 0;
		for (int b = 0; b < d->nbox && !in; b++) {
			const double *x = d->box + 6 * b, *y = d->pos + 3 * q;
			in = x[0] <= y[0] && y[0] <= x[3] && x[1] <= y[1] && y[1] <= x[4] &&
			     x[2] <= y[2] && y[2] <= x[5];
		}
		ck_assert_msg(in, "body %zu of the domain is in no box of its cover", q);
	}
}

/* Split s into P contiguous pieces of the Morton order (piece `empty`, if
 * in [0, P), gets no bodies) and build each piece's tree; cover > 0: each
 * piece's cover of at most that many boxes. */
static struct dom *domains_make(const struct set *s, int P, int empty,
				const struct sim_params *p, int cover)
{
	size_t *perm = morton_order(s);
	struct dom *d = calloc((size_t)P, sizeof *d);
	const int full = empty >= 0 && empty < P ? P - 1 : P;
	size_t k = 0;
	for (int r = 0, j = 0; r < P; r++) {
		struct dom *dm = &d[r];
		dm->n = r == empty ? 0 : s->n * (size_t)(j + 1) / (size_t)full - k;
		dm->idx = malloc((dm->n + 1) * sizeof *dm->idx);
		dm->pos = malloc((3 * dm->n + 1) * sizeof *dm->pos);
		dm->mass = malloc((dm->n + 1) * sizeof *dm->mass);
		dm->eps = s->eps ? malloc((dm->n + 1) * sizeof *dm->eps) : NULL;
		dm->acc = calloc(3 * dm->n + 1, sizeof *dm->acc);
		dm->pot = calloc(dm->n + 1, sizeof *dm->pot);
		for (size_t q = 0; q < dm->n; q++, k++) {
			const size_t i = perm[k];
			dm->idx[q] = i;
			memcpy(dm->pos + 3 * q, s->pos + 3 * i, 3 * sizeof(double));
			dm->mass[q] = s->mass[i];
			if (s->eps)
				dm->eps[q] = s->eps[i];
			dm->eps_max = fmax(dm->eps_max, s->eps ? s->eps[i] : s->s.eps);
		}
		j += r != empty;
		const struct sim_soft sd = {.kernel = s->s.kernel, .eps = s->s.eps, .each = dm->eps};
		ck_assert_int_eq(sim_let_build(dm->pos, dm->mass, dm->n, &sd, p, &dm->t), 0);
		sim_let_bounds(dm->t, dm->lo, dm->hi);
		dm->box = malloc((6 * (size_t)cover + 1) * sizeof *dm->box);
		if (cover > 0) {
			ck_assert_int_eq(sim_let_cover(dm->t, cover, dm->box, &dm->nbox), 0);
			cover_holds_bodies(dm, cover);
		}
	}
	free(perm);
	return d;
}

static void domains_free(struct dom *d, int P)
{
	for (int r = 0; r < P; r++) {
		sim_let_free(&d[r].t);
		ck_assert_ptr_null(d[r].t);
		free(d[r].idx);
		free(d[r].pos);
		free(d[r].mass);
		free(d[r].eps);
		free(d[r].acc);
		free(d[r].pot);
		free(d[r].box);
	}
	free(d);
}

/* The exchange's totals, for the printed volume. */
struct volume {
	size_t bytes, cells, bodies;
};

/* Every domain's forces from its own tree and the others' exports to its
 * box, scattered into acc (3n) and pot (n) by global index. */
static void domains_accel(struct dom *d, int P, double *acc, double *pot, struct volume *v)
{
	void **bufs = calloc((size_t)P, sizeof *bufs);
	size_t *len = calloc((size_t)P, sizeof *len);
	for (int r = 0; r < P; r++) {
		int nb = 0;
		for (int e = 0; e < P; e++) {
			if (e == r)
				continue;
			if (d[r].nbox > 0)
				ck_assert_int_eq(sim_let_export_cover(d[e].t, d[r].box, d[r].nbox,
								      d[r].eps_max, &bufs[nb],
								      &len[nb]), 0);
			else
				ck_assert_int_eq(sim_let_export(d[e].t, d[r].lo, d[r].hi,
								d[r].eps_max, &bufs[nb], &len[nb]),
						 0);
			size_t nc, nbod;
			ck_assert_int_eq(sim_let_count(bufs[nb], len[nb], &nc, &nbod), 0);
			if (v) {
				v->bytes += len[nb];
				v->cells += nc;
				v->bodies += nbod;
			}
			nb++;
		}
		ck_assert_int_eq(sim_let_accel(d[r].t, (const void *const *)bufs, len, nb, d[r].acc,
					       d[r].pot, NULL), 0);
		for (int j = 0; j < nb; j++)
			free(bufs[j]);
		for (size_t q = 0; q < d[r].n; q++) {
			memcpy(acc + 3 * d[r].idx[q], d[r].acc + 3 * q, 3 * sizeof(double));
			pot[d[r].idx[q]] = d[r].pot[q];
		}
	}
	free(bufs);
	free(len);
}

/* |a - b| of two 3-vectors (b NULL: |a|) */
static double dist3(const double *a, const double *b)
{
	const double z[3] = {0, 0, 0};
	const double *c = b ? b : z;
	return hypot(hypot(a[0] - c[0], a[1] - c[1]), a[2] - c[2]);
}

static int by_value(const void *a, const void *b)
{
	return (*(const double *)a > *(const double *)b) - (*(const double *)a < *(const double *)b);
}

/* The median and 99th percentile of the relative force errors. */
static void rel_errors(const double *a, const double *ref, size_t n, double *med, double *p99)
{
	double *e = malloc(n * sizeof *e);
	for (size_t i = 0; i < n; i++)
		e[i] = dist3(a + 3 * i, ref + 3 * i) / dist3(ref + 3 * i, NULL);
	qsort(e, n, sizeof *e, by_value);
	*med = e[n / 2];
	*p99 = e[n * 99 / 100];
	free(e);
}

/* One force field: acc 3n, pot n, work n (zeroed). */
struct field {
	double *acc, *pot, *work;
};

static struct field field_new(size_t n)
{
	const struct field f = {calloc(3 * n, sizeof(double)), calloc(n, sizeof(double)),
				calloc(n, sizeof(double))};
	return f;
}

static void field_free(struct field *f)
{
	free(f->acc);
	free(f->pot);
	free(f->work);
}

static struct sim_params params(double theta, enum scene_opening opening)
{
	struct sim_params p;
	memset(&p, 0, sizeof p);
	p.theta = theta;
	p.multipoles = 2;
	p.opening = opening;
	return p;
}

#define LET_N 16000
#define LET_COVER 64 /* boxes in a domain's cover */

/* (a) at theta 0.5 the domains' forces are as close to the direct sum as
 * the single tree's, for P = 2, 3, 4 (loop: the three sets; opening com
 * on the Plummer sphere as well). */
START_TEST(let_matches_single_tree_error)
{
	struct set s;
	set_make(&s, _i, LET_N);
	struct field dir = field_new(s.n), one = field_new(s.n), let = field_new(s.n),
		     bnd = field_new(s.n);
	ck_assert_int_eq(sim_direct_accel_soft(s.pos, s.mass, s.n, &s.s, dir.acc, dir.pot), 0);
	for (int op = 0; op < (_i == 0 ? 2 : 1); op++) {
		const enum scene_opening opening = op ? SCENE_OPENING_COM : SCENE_OPENING_BMAX;
		const struct sim_params p = params(0.5, opening);
		ck_assert_int_eq(sim_tree_accel_soft(s.pos, s.mass, s.n, &s.s, 0.5, 2, opening, NULL,
						     one.acc, one.pot, NULL), 0);
		double tm, t99;
		rel_errors(one.acc, dir.acc, s.n, &tm, &t99);
		for (int P = 2; P <= 4; P++) {
			size_t bytes[2];
			for (int cv = 0; cv < 2; cv++) {
				struct dom *d = domains_make(&s, P, -1, &p, cv ? LET_COVER : 0);
				struct volume v = {0};
				domains_accel(d, P, let.acc, let.pot, &v);
				double lm, l99;
				rel_errors(let.acc, dir.acc, s.n, &lm, &l99);
				printf("let: set %d opening %d P=%d %s: median %.3g p99 %.3g (single "
				       "tree %.3g, %.3g); %.0f bytes per rank: %.0f cells, %.0f bodies "
				       "(%.1f B/item)\n",
				       _i, op, P, cv ? "cover" : "bounds", lm, l99, tm, t99,
				       (double)v.bytes / P, (double)v.cells / P, (double)v.bodies / P,
				       (double)v.bytes / (double)(v.cells + v.bodies));
				ck_assert_msg(lm <= 1.5 * tm + 1e-7, "median %g vs tree %g", lm, tm);
				ck_assert_msg(l99 <= 1.5 * t99 + 1e-7, "p99 %g vs tree %g", l99, t99);
				/* and a tree's error at all: not the direct sum by accident */
				ck_assert_double_gt(lm, 1e-9);
				bytes[cv] = v.bytes;
				if (!cv)
					memcpy(bnd.acc, let.acc, 3 * s.n * sizeof(double));
				domains_free(d, P);
			}
			/* the receiver's walk decides alike on either export: the same sums */
			ck_assert_int_eq(memcmp(bnd.acc, let.acc, 3 * s.n * sizeof(double)), 0);
			/* the cover leaves out the space between a domain's clumps */
			ck_assert_uint_lt(bytes[1], bytes[0]);
		}
	}
	field_free(&dir), field_free(&one), field_free(&let), field_free(&bnd);
	set_free(&s);
}
END_TEST

/* (b) theta = 0 opens every cell: the domains' sums are the exact pair
 * sums, the direct sum's to rounding. */
START_TEST(let_theta_zero_is_direct_sum)
{
	struct set s;
	set_make(&s, _i, 3000);
	const struct sim_params p = params(0, SCENE_OPENING_BMAX);
	struct field dir = field_new(s.n), let = field_new(s.n);
	ck_assert_int_eq(sim_direct_accel_soft(s.pos, s.mass, s.n, &s.s, dir.acc, dir.pot), 0);
	/* bounds for the one-length sphere, covers for the two-length sets */
	struct dom *d = domains_make(&s, 3, -1, &p, _i ? LET_COVER : 0);
	domains_accel(d, 3, let.acc, let.pot, NULL);
	for (size_t i = 0; i < s.n; i++) {
		const double amag = dist3(dir.acc + 3 * i, NULL);
		for (int k = 0; k < 3; k++)
			ck_assert_close(let.acc[3 * i + k], dir.acc[3 * i + k], 1e-12 * amag, 0);
		ck_assert_close(let.pot[i], dir.pot[i], 0, 1e-12);
	}
	domains_free(d, 3);
	field_free(&dir), field_free(&let);
	set_free(&s);
}
END_TEST

/* (c) one domain is the single tree: the same cells, groups and sums, bit
 * for bit (forces, potentials, interaction counts). */
START_TEST(let_one_domain_is_single_tree)
{
	struct set s;
	set_make(&s, _i, 5000);
	const struct sim_params p = params(0.6, SCENE_OPENING_BMAX);
	struct field one = field_new(s.n), let = field_new(s.n);
	ck_assert_int_eq(sim_tree_accel_soft(s.pos, s.mass, s.n, &s.s, 0.6, 2, SCENE_OPENING_BMAX,
					     NULL, one.acc, one.pot, one.work), 0);
	struct sim_let_tree *t;
	ck_assert_int_eq(sim_let_build(s.pos, s.mass, s.n, &s.s, &p, &t), 0);
	ck_assert_int_eq(sim_let_accel(t, NULL, NULL, 0, let.acc, let.pot, let.work), 0);
	ck_assert_int_eq(memcmp(one.acc, let.acc, 3 * s.n * sizeof(double)), 0);
	ck_assert_int_eq(memcmp(one.pot, let.pot, s.n * sizeof(double)), 0);
	ck_assert_int_eq(memcmp(one.work, let.work, s.n * sizeof(double)), 0);
	ck_assert_double_gt(let.work[0], 1);
	sim_let_free(&t);
	field_free(&one), field_free(&let);
	set_free(&s);
}
END_TEST

/* Individual time steps: with every third body active, each domain's
 * active bodies get the all-active forces bit for bit, the others keep
 * what they held. */
START_TEST(let_active_bodies_as_all)
{
	struct set s;
	set_make(&s, 1, 6000);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct dom *d = domains_make(&s, 3, -1, &p, LET_COVER);
	struct field all = field_new(s.n);
	domains_accel(d, 3, all.acc, all.pot, NULL);
	void *bufs[2];
	size_t len[2];
	for (int r = 0; r < 3; r++) {
		for (int e = 0, nb = 0; e < 3; e++) {
			if (e == r)
				continue;
			ck_assert_int_eq(sim_let_export_cover(d[e].t, d[r].box, d[r].nbox, d[r].eps_max,
							      &bufs[nb], &len[nb]), 0);
			nb++;
		}
		unsigned char *act = malloc(d[r].n);
		double *acc = malloc(3 * d[r].n * sizeof *acc);
		for (size_t q = 0; q < d[r].n; q++) {
			act[q] = q % 3 == 0;
			acc[3 * q] = acc[3 * q + 1] = acc[3 * q + 2] = -7;
		}
		ck_assert_int_eq(sim_let_accel_active(d[r].t, act, (const void *const *)bufs, len, 2,
						      acc, NULL, NULL), 0);
		for (size_t q = 0; q < d[r].n; q++)
			for (int k = 0; k < 3; k++) {
				const double want = act[q] ? all.acc[3 * d[r].idx[q] + k] : -7;
				ck_assert_msg(acc[3 * q + k] == want, "domain %d body %zu: %g, want %g", r,
					      q, acc[3 * q + k], want);
			}
		free(act), free(acc), free(bufs[0]), free(bufs[1]);
	}
	field_free(&all);
	domains_free(d, 3);
	set_free(&s);
}
END_TEST

/* The bytes of domain 0's export to domain 1 (P = 2) for the one-length
 * sphere of n bodies, to its bounds and to its cover of at most 512
 * boxes, printed. */
static void adjacent_bytes(size_t n, size_t bytes[2])
{
	struct set s;
	set_make(&s, 0, n);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct dom *d = domains_make(&s, 2, -1, &p, 512);
	for (int cv = 0; cv < 2; cv++) {
		void *b;
		size_t nc, nb;
		if (cv)
			ck_assert_int_eq(sim_let_export_cover(d[0].t, d[1].box, d[1].nbox, 0.01, &b,
							      &bytes[cv]), 0);
		else
			ck_assert_int_eq(sim_let_export(d[0].t, d[1].lo, d[1].hi, 0.01, &b,
							&bytes[cv]), 0);
		ck_assert_int_eq(sim_let_count(b, bytes[cv], &nc, &nb), 0);
		printf("let: %zu bodies a domain: to the adjacent domain's %s (%d boxes) %zu bytes "
		       "(%zu cells, %zu bodies)\n", d[0].n, cv ? "cover" : "bounds",
		       cv ? d[1].nbox : 1, bytes[cv], nc, nb);
		free(b);
	}
	domains_free(d, 2);
	set_free(&s);
}

/* The export grows with the surface the receiver shares, not with the
 * sender's volume: to the cover, 8 times the bodies send less than 6
 * times the bytes (the surface: 4). The Morton halves' bounds overlap the
 * other half (the curve's first half is not a half-space), so the export
 * to the bounds grows with the volume, and the cover sends less than half
 * of it. A box far away gets the root's moments alone. */
START_TEST(let_export_grows_like_surface)
{
	size_t b1[2], b8[2];
	adjacent_bytes(16000, b1);
	adjacent_bytes(128000, b8);
	ck_assert_uint_lt(b8[1], 6 * b1[1]);
	ck_assert_uint_lt(2 * b8[1], b8[0]);
	struct set s;
	set_make(&s, 0, 4000);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct sim_let_tree *t;
	ck_assert_int_eq(sim_let_build(s.pos, s.mass, s.n, &s.s, &p, &t), 0);
	const double far_lo[3] = {100, 100, 100}, far_hi[3] = {101, 101, 101};
	void *far_b;
	size_t far_n, fc, fb;
	ck_assert_int_eq(sim_let_export(t, far_lo, far_hi, 0.01, &far_b, &far_n), 0);
	ck_assert_int_eq(sim_let_count(far_b, far_n, &fc, &fb), 0);
	ck_assert_uint_eq(fc, 1);
	ck_assert_uint_eq(fb, 0);
	ck_assert_uint_eq(far_n, 64 + 12 * 8 + 16); /* bmax, quadrupoles, one length */
	free(far_b);
	sim_let_free(&t);
	set_free(&s);
}
END_TEST

/* An empty domain exports a valid empty buffer (zero counts) that changes
 * nobody's forces, and its own accel does nothing. */
START_TEST(let_empty_domain)
{
	struct set s;
	set_make(&s, 1, 4000);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct dom *d = domains_make(&s, 3, 1, &p, LET_COVER);
	ck_assert_uint_eq(d[1].n, 0);
	for (int a = 0; a < 3; a++)
		ck_assert(d[1].lo[a] == 0 && d[1].hi[a] == 0);
	void *eb, *ob;
	size_t en, on, c, b;
	ck_assert_int_eq(sim_let_export(d[1].t, d[0].lo, d[0].hi, 0.05, &eb, &en), 0);
	ck_assert_int_eq(sim_let_count(eb, en, &c, &b), 0);
	ck_assert_uint_eq(c, 0);
	ck_assert_uint_eq(b, 0);
	/* and nothing goes to it: its cover has no box */
	void *zb;
	size_t zn;
	ck_assert_int_eq(sim_let_export_cover(d[0].t, d[1].box, d[1].nbox, 0.05, &zb, &zn), 0);
	ck_assert_int_eq(sim_let_count(zb, zn, &c, &b), 0);
	ck_assert_uint_eq(c + b, 0);
	free(zb);
	ck_assert_int_eq(sim_let_export(d[2].t, d[0].lo, d[0].hi, d[0].eps_max, &ob, &on), 0);
	double *a1 = calloc(3 * d[0].n, sizeof *a1), *a2 = calloc(3 * d[0].n, sizeof *a2);
	const void *two[2] = {ob, eb}, *one[1] = {ob};
	const size_t twon[2] = {on, en}, onen[1] = {on};
	ck_assert_int_eq(sim_let_accel(d[0].t, two, twon, 2, a1, NULL, NULL), 0);
	ck_assert_int_eq(sim_let_accel(d[0].t, one, onen, 1, a2, NULL, NULL), 0);
	ck_assert_int_eq(memcmp(a1, a2, 3 * d[0].n * sizeof *a1), 0);
	ck_assert_double_ne(a1[0], 0);
	ck_assert_int_eq(sim_let_accel(d[1].t, one, onen, 1, NULL, NULL, NULL), 0);
	free(a1), free(a2), free(eb), free(ob);
	domains_free(d, 3);
	set_free(&s);
}
END_TEST

/* Hostile buffers: each refused with NB_ERUNTIME by sim_let_count and by
 * sim_let_accel, never read out of bounds (make check-sanitize runs this
 * under ASan). Loop: the case. */
START_TEST(let_hostile_buffer_refused)
{
	struct set s;
	set_make(&s, 1, 4000);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct dom *d = domains_make(&s, 2, -1, &p, 0);
	void *b0;
	size_t n0;
	ck_assert_int_eq(sim_let_export(d[1].t, d[0].lo, d[0].hi, d[0].eps_max, &b0, &n0), 0);
	unsigned char *b = malloc(n0 + 64);
	memcpy(b, b0, n0);
	size_t n = n0, nc, nbod;
	ck_assert_int_eq(sim_let_count(b, n, &nc, &nbod), 0);
	ck_assert_uint_gt(nc, 1);
	ck_assert_uint_gt(nbod, 0);
	uint64_t u;
	int32_t i32;
	uint32_t cd; /* doubles a cell: the header's fourth word */
	memcpy(&cd, b + 12, 4);
	ck_assert_uint_eq(cd, 5 + 7 + 2); /* com m bmax, q T, the lengths */
	const size_t ints = 64 + nc * cd * 8, bodies = ints + nc * 16;
	switch (_i) {
	case 0: n = n0 - 1; break;                      /* truncated by a byte */
	case 1: n = 40; break;                          /* inside the header */
	case 2: n = n0 + 8; break;                      /* a trailing word */
	case 3: u = nc + 1; memcpy(b + 40, &u, 8); break; /* ncells lies */
	case 4: u = nbod - 1; memcpy(b + 48, &u, 8); break; /* nbodies lies */
	case 5: i32 = (int32_t)nc; memcpy(b + ints, &i32, 4); break; /* root's child beyond */
	case 6: i32 = 0; memcpy(b + ints, &i32, 4); break;  /* root its own child */
	case 7: /* the root a leaf whose bodies run one past the end */
		i32 = 0x100; memcpy(b + ints + 4, &i32, 4);
		i32 = 1; memcpy(b + ints + 8, &i32, 4);
		i32 = (int32_t)nbod; memcpy(b + ints + 12, &i32, 4); break;
	case 8: { const double nan = NAN; memcpy(b + bodies, &nan, 8); break; } /* body x */
	case 9: { const double neg = -1; memcpy(b + 64 + 4 * 8, &neg, 8); break; } /* bmax */
	case 10: b[0] ^= 0xff; break;                   /* magic */
	case 11: { const double th = 0.7; memcpy(b + 64 - 8, &th, 8); break; } /* theta */
	case 12: i32 = 1; memcpy(b + 32, &i32, 4); break; /* monopoles, yet q and T sent */
	}
	nb_untrap_fpe(); /* case 8 carries a NaN on purpose */
	if (_i != 11) {
		ck_assert_int_eq(sim_let_count(b, n, &nc, &nbod), NB_ERUNTIME);
	} else {
		/* well formed, but made by a walk with other parameters */
		ck_assert_int_eq(sim_let_count(b, n, &nc, &nbod), 0);
	}
	double *acc = calloc(3 * d[0].n, sizeof *acc);
	const void *bufs[1] = {b};
	ck_assert_int_eq(sim_let_accel(d[0].t, bufs, &n, 1, acc, NULL, NULL), NB_ERUNTIME);
	free(acc), free(b), free(b0);
	domains_free(d, 2);
	set_free(&s);
}
END_TEST

/* Random damage (1 to 8 bytes of a valid buffer rewritten, 300 times):
 * each buffer is refused or walked, never a crash or a read out of bounds
 * (make check-sanitize). Floating-point traps are off: a damaged value
 * may be finite and huge, and its forces overflow; that is a result, not
 * this test's failure. */
START_TEST(let_random_damage_never_crashes)
{
	struct set s;
	set_make(&s, 2, 2000);
	const struct sim_params p = params(0.5, SCENE_OPENING_BMAX);
	struct dom *d = domains_make(&s, 2, -1, &p, 0);
	void *b0;
	size_t n0;
	ck_assert_int_eq(sim_let_export(d[1].t, d[0].lo, d[0].hi, d[0].eps_max, &b0, &n0), 0);
	unsigned char *b = malloc(n0);
	double *acc = malloc(3 * d[0].n * sizeof *acc);
	uint64_t st = 99;
	int refused = 0, walked = 0;
	nb_untrap_fpe();
	for (int it = 0; it < 300; it++) {
		memcpy(b, b0, n0);
		const int k = 1 + (int)(8 * rnd(&st));
		for (int j = 0; j < k; j++) {
			/* half the hits in the header and the cells' ints, where damage matters */
			const size_t at = rnd(&st) < 0.5 ? (size_t)(rnd(&st) * 64)
							 : (size_t)(rnd(&st) * (double)n0);
			b[at < n0 ? at : n0 - 1] = (unsigned char)(256 * rnd(&st));
		}
		const size_t n = rnd(&st) < 0.1 ? (size_t)(rnd(&st) * (double)n0) : n0;
		size_t nc, nb;
		const int rc = sim_let_count(b, n, &nc, &nb);
		ck_assert(rc == 0 || rc == NB_ERUNTIME);
		const void *one[1] = {b};
		const int ra = sim_let_accel(d[0].t, one, &n, 1, acc, NULL, NULL);
		ck_assert(ra == 0 || ra == NB_ERUNTIME);
		ck_assert(rc == 0 || ra == NB_ERUNTIME); /* what the count refuses, the walk does */
		refused += ra != 0;
		walked += ra == 0;
	}
	printf("let: random damage: %d buffers refused, %d walked\n", refused, walked);
	ck_assert_int_gt(refused, 100);
	free(b), free(b0), free(acc);
	domains_free(d, 2);
	set_free(&s);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("let");
	TCase *tc = tcase_create("let");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_loop_test(tc, let_matches_single_tree_error, 0, 3);
	tcase_add_loop_test(tc, let_theta_zero_is_direct_sum, 0, 3);
	tcase_add_loop_test(tc, let_one_domain_is_single_tree, 0, 3);
	tcase_add_test(tc, let_active_bodies_as_all);
	tcase_add_test(tc, let_export_grows_like_surface);
	tcase_add_test(tc, let_empty_domain);
	tcase_add_loop_test(tc, let_hostile_buffer_refused, 0, 13);
	tcase_add_test(tc, let_random_damage_never_crashes);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
