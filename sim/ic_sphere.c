/* ic_sphere.c - equilibrium spheres: Plummer (Aarseth, Henon & Wielen 1974)
 * and Hernquist (Hernquist 1990), sampled with equal-mass bodies, G = 1.
 *
 * Body b of a model draws only from stream stream_base + b of the counter
 * generator (rejection loops just use more counters), so the result is the
 * same for every thread count. After sampling, the centre of mass and its
 * velocity are subtracted, so the model sits at the origin at rest.
 *
 * Ranges (sim_ic_plummer_range, sim_ic_hernquist_range; issue 31): bodies
 * [lo, hi) of a model are drawn alone, each from its own stream. Only the
 * centre of mass needs the others: it is the serial sum over all bodies in
 * index order, and floating-point sums are not associative, so a sum of
 * the ranks' partial sums would move every body by a rounding. Either the
 * ranks carry the running sum in rank order (a struct sim_ic_scan: each
 * adds its own bodies to what the rank before passed on), or, alone, the
 * others are drawn again, a chunk at a time, and summed in order with the
 * range's own (O(count) time, O(hi - lo + IC_CHUNK) memory): either way
 * the same sum bit for bit as one process's. */
#include <math.h>
#include <stdlib.h>

#include "ic_range.h"
#include "sim.h"

#define IC_PI 3.14159265358979323846

/* Sequential draws from one body's stream. */
struct ic_draw {
	uint64_t seed, stream, counter;
};

static double ic_next(struct ic_draw *d)
{
	return sim_rng_uniform(d->seed, d->stream, d->counter++);
}

/* An isotropic vector of length len. */
static void ic_isotropic(struct ic_draw *d, double len, double out[3])
{
	double c = 2 * ic_next(d) - 1; /* cos theta */
	double phi = 2 * IC_PI * ic_next(d);
	double s = sqrt(fmax(0.0, 1 - c * c));
	out[0] = len * s * cos(phi);
	out[1] = len * s * sin(phi);
	out[2] = len * c;
}

/* Bodies drawn again at a time for the centre's sum outside a range. */
#define IC_CHUNK 4096

/* One sphere model: count bodies of mass m each; tab the Hernquist
 * rejection bounds (ic_hq_table). */
struct ic_model {
	size_t count;
	double mass, m, a, rmax;
	uint64_t seed, stream_base;
	const double *tab;
	double lx0, dlx;
};

/* Body b of the model: position x and velocity v (3 each). */
typedef void ic_body_fn(const struct ic_model *md, size_t b, double *x, double *v);

/* Add bodies' m, m x and m v to s[0], s[1..3], s[4..6], in index order
 * (ic_recentre's sum). */
static void ic_sum(const double *pos, const double *vel, size_t n, double m, double s[7])
{
	for (size_t i = 0; i < n; i++) {
		s[0] += m;
		for (int a = 0; a < 3; a++) {
			s[1 + a] += m * pos[3 * i + a];
			s[4 + a] += m * vel[3 * i + a];
		}
	}
}

/* s += the sums of bodies [b0, b1) drawn again. 0 or NB_ERUNTIME. */
static int ic_sum_drawn(const struct ic_model *md, ic_body_fn *body, size_t b0, size_t b1,
			double s[7])
{
	if (b0 >= b1)
		return 0;
	double *buf = malloc(2 * 3 * IC_CHUNK * sizeof *buf);
	if (!buf) {
		log_error("out of memory drawing the centre of a model of %zu bodies", md->count);
		return NB_ERUNTIME;
	}
	for (size_t c0 = b0; c0 < b1; c0 += IC_CHUNK) {
		const size_t c1 = b1 - c0 < IC_CHUNK ? b1 : c0 + IC_CHUNK;
#pragma omp parallel for schedule(static)
		for (size_t b = c0; b < c1; b++)
			body(md, b, buf + 3 * (b - c0), buf + 3 * IC_CHUNK + 3 * (b - c0));
		ic_sum(buf, buf + 3 * IC_CHUNK, c1 - c0, md->m, s);
	}
	free(buf);
	return 0;
}

/* A range's own bodies for a scan's add. */
struct ic_own {
	const struct sim_state *st;
	size_t at, n;
	double m;
};

static void ic_add_own(void *actx, double s[7])
{
	const struct ic_own *o = actx;
	ic_sum(o->st->pos + 3 * o->at, o->st->vel + 3 * o->at, o->n, o->m, s);
}

/* Bodies [lo, hi) of the model into st at `at`, centred on the whole
 * model's mass-weighted mean (see the top; scan: the ranks carry the sum).
 * 0, NB_ERUNTIME or the scan's error. */
static int ic_sample_range(const struct ic_model *md, ic_body_fn *body, struct sim_state *st,
			   size_t at, size_t lo, size_t hi, const struct sim_ic_scan *scan)
{
	if (lo >= hi && !scan)
		return 0;
#pragma omp parallel for schedule(static)
	for (size_t b = lo; b < hi; b++) {
		body(md, b, st->pos + 3 * (at + b - lo), st->vel + 3 * (at + b - lo));
		st->mass[at + b - lo] = md->m;
	}
	double s[7] = {0, 0, 0, 0, 0, 0, 0};
	struct ic_own own = {st, at, hi > lo ? hi - lo : 0, md->m};
	int err = scan ? scan->fold(scan->ctx, s, ic_add_own, &own, 0)
		       : ic_sum_drawn(md, body, 0, lo, s);
	if (!err && !scan)
		ic_sum(st->pos + 3 * at, st->vel + 3 * at, hi - lo, md->m, s);
	if (!err && !scan)
		err = ic_sum_drawn(md, body, hi, md->count, s);
	if (err || s[0] <= 0 || lo >= hi)
		return err;
	double x[3], v[3];
	for (int a = 0; a < 3; a++) {
		x[a] = s[1 + a] / s[0];
		v[a] = s[4 + a] / s[0];
	}
	for (size_t i = at; i < at + (hi - lo); i++) {
		for (int a = 0; a < 3; a++) {
			st->pos[3 * i + a] -= x[a];
			st->vel[3 * i + a] -= v[a];
		}
	}
	return 0;
}

static void ic_plummer_body(const struct ic_model *md, size_t b, double *x, double *v)
{
	struct ic_draw d = {md->seed, md->stream_base + b, 0};
	const double a = md->a;
	double r;
	do { /* M(r)/M = r^3 / (r^2 + a^2)^{3/2} inverted; truncate at rmax */
		double u = ic_next(&d);
		r = a / sqrt(pow(u, -2.0 / 3.0) - 1.0);
	} while (!(r <= md->rmax * a));
	double q, g;
	do { /* von Neumann: g(q) = q^2 (1 - q^2)^{7/2} <= 0.0923 < 0.1 */
		q = ic_next(&d);
		g = 0.1 * ic_next(&d);
	} while (g > q * q * pow(1 - q * q, 3.5));
	double vesc = sqrt(2 * md->mass) * pow(r * r + a * a, -0.25);
	ic_isotropic(&d, r, x);
	ic_isotropic(&d, q * vesc, v);
}

int sim_ic_plummer_range(struct sim_state *st, size_t at, size_t count, size_t lo, size_t hi,
			 double mass, double a, double rmax, uint64_t seed, uint64_t stream_base,
			 const struct sim_ic_scan *scan)
{
	const struct ic_model md = {count, mass, count ? mass / (double)count : 0, a, rmax,
				    seed, stream_base, NULL, 0, 0};
	return ic_sample_range(&md, ic_plummer_body, st, at, lo, hi, scan);
}

void sim_ic_plummer(struct sim_state *st, size_t first, size_t count, double mass, double a,
		    double rmax, uint64_t seed, uint64_t stream_base)
{
	/* the whole model draws nothing again: it cannot fail */
	(void)sim_ic_plummer_range(st, first, count, 0, count, mass, a, rmax, seed, stream_base,
				   NULL);
}

/* Hernquist (1990) eq. 17 without its constant factor, as a function of
 * q = sqrt(E a / (G M)) with E the binding energy per unit mass (> 0). */
static double ic_hernquist_df(double q)
{
	if (q <= 0)
		return 0;
	if (q >= 1)
		return INFINITY;
	if (q < 0.005) /* the bracket cancels to 25.6 q^5 (+ O(q^7)) */
		return 25.6 * pow(q, 5);
	double q2 = q * q;
	double br = 3 * asin(q) +
		    q * sqrt(1 - q2) * (1 - 2 * q2) * (8 * q2 * q2 - 8 * q2 - 3);
	return fmax(br, 0.0) / pow(1 - q2, 2.5);
}

/* Probability density (unnormalised) of w = v / v_esc at x = r / a:
 * w^2 f(E) with E = psi (1 - w^2), psi = G M / (r + a), so that
 * q^2 = E a / (G M) = (1 - w^2) / (1 + x): the shape depends on x only. */
static double ic_hernquist_pw(double w, double x)
{
	return w * w * ic_hernquist_df(sqrt((1 - w * w) / (1 + x)));
}

/* Maximum over w in [0, 1] of ic_hernquist_pw(., x): a fine grid, then a
 * golden-section search around the best point (the density is smooth and
 * single-peaked in w). */
static double ic_hernquist_pmax(double x)
{
	const int ngrid = 128;
	double best = 0, wbest = 0.5;
	for (int k = 1; k < ngrid; k++) {
		double w = (double)k / ngrid, p = ic_hernquist_pw(w, x);
		if (p > best) {
			best = p;
			wbest = w;
		}
	}
	double lo = fmax(0.0, wbest - 1.0 / ngrid), hi = fmin(1.0, wbest + 1.0 / ngrid);
	const double gr = 0.6180339887498949;
	for (int it = 0; it < 40; it++) {
		double w1 = hi - gr * (hi - lo), w2 = lo + gr * (hi - lo);
		if (ic_hernquist_pw(w1, x) > ic_hernquist_pw(w2, x))
			hi = w2;
		else
			lo = w1;
	}
	return fmax(best, ic_hernquist_pw(0.5 * (lo + hi), x));
}

/* Rejection bounds on a log grid of x = r / a. Since f grows with q and q
 * falls with x at fixed w, the density falls pointwise with x, and so does
 * its maximum: the value at a node bounds every x up to the next node. */
#define IC_HQ_NTAB 256
#define IC_HQ_XMIN 1e-6

static void ic_hernquist_body(const struct ic_model *md, size_t b, double *x, double *v)
{
	struct ic_draw d = {md->seed, md->stream_base + b, 0};
	const double a = md->a;
	double r;
	do { /* M(r)/M = r^2 / (r + a)^2 inverted; truncate at rmax */
		double s = sqrt(ic_next(&d));
		r = a * s / (1 - s);
	} while (!(r <= md->rmax * a));
	/* speed by rejection from w^2 f(E), w = v / v_esc in [0, 1],
	 * under the tabulated bound with 5% headroom for its error */
	const double xr = r / a, vesc = sqrt(2 * md->mass / (r + a));
	double pmax;
	if (xr < IC_HQ_XMIN) {
		pmax = ic_hernquist_pmax(xr); /* probability ~1e-12 */
	} else {
		int k = (int)((log(xr) - md->lx0) / md->dlx);
		pmax = md->tab[k < 0 ? 0 : (k >= IC_HQ_NTAB ? IC_HQ_NTAB - 1 : k)];
	}
	const double bound = 1.05 * pmax;
	double w;
	for (;;) {
		w = ic_next(&d);
		if (bound * ic_next(&d) <= ic_hernquist_pw(w, xr))
			break;
	}
	ic_isotropic(&d, r, x);
	ic_isotropic(&d, w * vesc, v);
}

int sim_ic_hernquist_range(struct sim_state *st, size_t at, size_t count, size_t lo, size_t hi,
			   double mass, double a, double rmax, uint64_t seed, uint64_t stream_base,
			   const struct sim_ic_scan *scan)
{
	if (lo >= hi && !scan)
		return 0;
	double tab[IC_HQ_NTAB];
	const double lx0 = log(IC_HQ_XMIN), lx1 = log(fmax(rmax, 2 * IC_HQ_XMIN));
	const double dlx = (lx1 - lx0) / (IC_HQ_NTAB - 1);
	for (int k = 0; k < IC_HQ_NTAB; k++)
		tab[k] = ic_hernquist_pmax(exp(lx0 + k * dlx));
	const struct ic_model md = {count, mass, count ? mass / (double)count : 0, a, rmax,
				    seed, stream_base, tab, lx0, dlx};
	return ic_sample_range(&md, ic_hernquist_body, st, at, lo, hi, scan);
}

void sim_ic_hernquist(struct sim_state *st, size_t first, size_t count, double mass, double a,
		      double rmax, uint64_t seed, uint64_t stream_base)
{
	/* the whole model draws nothing again: it cannot fail */
	(void)sim_ic_hernquist_range(st, first, count, 0, count, mass, a, rmax, seed, stream_base,
				     NULL);
}
