/* ic_sphere.c - equilibrium spheres: Plummer (Aarseth, Henon & Wielen 1974)
 * and Hernquist (Hernquist 1990), sampled with equal-mass bodies, G = 1.
 *
 * Body b of a model draws only from stream stream_base + b of the counter
 * generator (rejection loops just use more counters), so the result is the
 * same for every thread count. After sampling, the centre of mass and its
 * velocity are subtracted, so the model sits at the origin at rest. */
#include <math.h>

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

/* Subtract the mass-weighted mean position and velocity of the range
 * (serial sums, so independent of the thread count). */
static void ic_recentre(struct sim_state *st, size_t first, size_t count)
{
	double m = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
	for (size_t i = first; i < first + count; i++) {
		m += st->mass[i];
		for (int a = 0; a < 3; a++) {
			x[a] += st->mass[i] * st->pos[3 * i + a];
			v[a] += st->mass[i] * st->vel[3 * i + a];
		}
	}
	if (m <= 0)
		return;
	for (int a = 0; a < 3; a++) {
		x[a] /= m;
		v[a] /= m;
	}
	for (size_t i = first; i < first + count; i++) {
		for (int a = 0; a < 3; a++) {
			st->pos[3 * i + a] -= x[a];
			st->vel[3 * i + a] -= v[a];
		}
	}
}

void sim_ic_plummer(struct sim_state *st, size_t first, size_t count, double mass, double a,
		    double rmax, uint64_t seed, uint64_t stream_base)
{
	if (count == 0)
		return;
	const double m = mass / (double)count;
#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < count; b++) {
		struct ic_draw d = {seed, stream_base + b, 0};
		double r;
		do { /* M(r)/M = r^3 / (r^2 + a^2)^{3/2} inverted; truncate at rmax */
			double u = ic_next(&d);
			r = a / sqrt(pow(u, -2.0 / 3.0) - 1.0);
		} while (!(r <= rmax * a));
		double q, g;
		do { /* von Neumann: g(q) = q^2 (1 - q^2)^{7/2} <= 0.0923 < 0.1 */
			q = ic_next(&d);
			g = 0.1 * ic_next(&d);
		} while (g > q * q * pow(1 - q * q, 3.5));
		double vesc = sqrt(2 * mass) * pow(r * r + a * a, -0.25);
		size_t i = first + b;
		ic_isotropic(&d, r, st->pos + 3 * i);
		ic_isotropic(&d, q * vesc, st->vel + 3 * i);
		st->mass[i] = m;
	}
	ic_recentre(st, first, count);
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

void sim_ic_hernquist(struct sim_state *st, size_t first, size_t count, double mass, double a,
		      double rmax, uint64_t seed, uint64_t stream_base)
{
	if (count == 0)
		return;
	const double m = mass / (double)count;
	double tab[IC_HQ_NTAB];
	const double lx0 = log(IC_HQ_XMIN), lx1 = log(fmax(rmax, 2 * IC_HQ_XMIN));
	const double dlx = (lx1 - lx0) / (IC_HQ_NTAB - 1);
	for (int k = 0; k < IC_HQ_NTAB; k++)
		tab[k] = ic_hernquist_pmax(exp(lx0 + k * dlx));
#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < count; b++) {
		struct ic_draw d = {seed, stream_base + b, 0};
		double r;
		do { /* M(r)/M = r^2 / (r + a)^2 inverted; truncate at rmax */
			double s = sqrt(ic_next(&d));
			r = a * s / (1 - s);
		} while (!(r <= rmax * a));
		/* speed by rejection from w^2 f(E), w = v / v_esc in [0, 1],
		 * under the tabulated bound with 5% headroom for its error */
		const double x = r / a, vesc = sqrt(2 * mass / (r + a));
		double pmax;
		if (x < IC_HQ_XMIN) {
			pmax = ic_hernquist_pmax(x); /* probability ~1e-12 */
		} else {
			int k = (int)((log(x) - lx0) / dlx);
			pmax = tab[k < 0 ? 0 : (k >= IC_HQ_NTAB ? IC_HQ_NTAB - 1 : k)];
		}
		const double bound = 1.05 * pmax;
		double w;
		for (;;) {
			w = ic_next(&d);
			if (bound * ic_next(&d) <= ic_hernquist_pw(w, x))
				break;
		}
		size_t i = first + b;
		ic_isotropic(&d, r, st->pos + 3 * i);
		ic_isotropic(&d, w * vesc, st->vel + 3 * i);
		st->mass[i] = m;
	}
	ic_recentre(st, first, count);
}
