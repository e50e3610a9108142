/* galaxy_soften.c - the spherically averaged gravity that the bulge and halo
 * feel, as the simulation computes it: the disk's mass inside spheres, and
 * Plummer softening eps (sim.h: a = sum m r / (r^2 + eps^2)^{3/2}).
 *
 * Disk mass inside a sphere: for a sech^2 layer of height z0 it is well
 * below the mass inside the cylinder R < r until r >> z0 (by half at
 * r = z0). Counting the cylinder, as a thin disk would allow, makes the
 * centre look heavier than it is, and a bulge or halo given velocities for
 * it expands at once. With w the height above the plane on the sphere,
 *   M_d(r) = int_0^r 2 pi w Sigma(sqrt(r^2 - w^2)) tanh(w/z0) dw,
 *   dM_d/dr = int_0^r 2 pi Sigma(sqrt(r^2 - w^2)) sech^2(w/z0) (r/z0) dw.
 *
 * Softening: near the centre it weakens gravity a lot (at r = 2 eps a point
 * mass pulls 28% less); a cusp given velocities for the unsoftened potential
 * is too hot there and puffs up in the first crossing time, dragging the
 * inner disk out with it. So the sampler uses the softened force, written
 * as an effective enclosed mass M_eff(r) = r^2 |dPhi/dr|:
 *   M_eff(r) = int K(r, s) dM(s),
 * K(r, s) = r^2 d/dr of the softened potential of a thin shell of radius s,
 *   phi(r; s) = -(A - B) / (2 r s), A = sqrt((r+s)^2 + eps^2), B = sqrt((r-s)^2 + eps^2)
 * (the shell average of -1/sqrt(d^2 + eps^2)). With eps = 0, K is the step
 * H(r - s) and M_eff the enclosed mass. Tabulated on a log grid up to
 * 200 eps; beyond, the unsoftened mass (error 1.5 (eps/r)^2 < 4e-5). */
#include <math.h>
#include <stdlib.h>

#include "galaxy_potential.h"
#include "../scene/log.h"

#define SOFT_N 400
#define RCUT_EPS 200.0 /* table up to RCUT_EPS * eps */
#define NEAR 20.0      /* |s - r| < NEAR eps: the uniform fine part */

#define DSPH_N 512

struct sim_galaxy_soft {
	int softened;                    /* eps > 0: the sph/dsk tables are filled */
	double lnr0, dlnr, rcut;
	double sph[SOFT_N], dsk[SOFT_N]; /* M_eff of bulge+halo, of the disk's spherical mass */
	int has_disk;                    /* the dsph tables are filled */
	double lnd0, dlnd, dmax;         /* their grid, up to dmax */
	double dsph[DSPH_N], ddsph[DSPH_N]; /* disk mass in spheres, its derivative */
};

/* Sigma with the 10 h truncation. */
static double sigma_tr(const struct sim_galaxy_model *m, double R)
{
	return R < SIM_GALAXY_DISK_RMAX * m->h ? sim_galaxy_disk_sigma(m, R) : 0;
}

/* dM_d/dr by quadrature: on w in [0, 20 z0] when the sphere is much wider
 * than the layer, else with w = r sin(phi), which removes the square-root
 * end point. */
static double dsph_deriv(const struct sim_galaxy_model *m, double r)
{
	const int n = 800;
	double z0 = m->z0, sum = 0;
	if (r > 22 * z0) {
		double dw = 20 * z0 / n;
		for (int i = 0; i < n; i++) {
			double w = (i + 0.5) * dw, c = cosh(w / z0);
			sum += sigma_tr(m, sqrt(r * r - w * w)) / (c * c) * dw;
		}
	} else {
		double dp = 0.5 * M_PI / n;
		for (int i = 0; i < n; i++) {
			double p = (i + 0.5) * dp, c = cosh(r * sin(p) / z0);
			sum += sigma_tr(m, r * cos(p)) / (c * c) * r * cos(p) * dp;
		}
	}
	return 2 * M_PI * sum * r / z0;
}

static void build_dsph(struct sim_galaxy_soft *t, const struct sim_galaxy_model *m)
{
	t->has_disk = m->md > 0 && m->h > 0 && m->z0 > 0;
	if (!t->has_disk)
		return;
	t->dmax = 1.2 * SIM_GALAXY_DISK_RMAX * m->h + 30 * m->z0;
	t->lnd0 = log(1e-3 * fmin(m->h, m->z0));
	t->dlnd = (log(t->dmax) - t->lnd0) / (DSPH_N - 1);
#pragma omp parallel for schedule(dynamic, 16)
	for (int i = 0; i < DSPH_N; i++)
		t->ddsph[i] = dsph_deriv(m, exp(t->lnd0 + i * t->dlnd));
	/* Start from the uniform centre, rho0 = Sigma0 / (2 z0), then the
	 * trapezoid in ln r. */
	double r0 = exp(t->lnd0);
	t->dsph[0] = 4.0 / 3.0 * M_PI * r0 * r0 * r0 * sim_galaxy_disk_sigma(m, 0) / (2 * m->z0);
	for (int i = 1; i < DSPH_N; i++) {
		double ra = exp(t->lnd0 + (i - 1) * t->dlnd), rb = exp(t->lnd0 + i * t->dlnd);
		t->dsph[i] = t->dsph[i - 1] + 0.5 * t->dlnd * (t->ddsph[i - 1] * ra + t->ddsph[i] * rb);
	}
}

/* y[] at grid position x > 0 (x = (ln r - ln r_0) / d ln r), linear
 * between its two nodes; the last value beyond the grid. */
static double grid_lin(const double *y, int n, double x)
{
	int i = (int)x;
	if (i >= n - 1)
		return y[n - 1];
	double w = x - i;
	return (1 - w) * y[i] + w * y[i + 1];
}

/* Linear in ln r on the dsph grid; r^3 (or r^2 for the derivative) inside. */
static double dsph_lookup(const struct sim_galaxy_soft *t, const double *y, double r, int pw)
{
	double x = (log(r) - t->lnd0) / t->dlnd;
	if (x <= 0)
		return y[0] * pow(r / exp(t->lnd0), pw);
	return grid_lin(y, DSPH_N, x);
}

double sim_galaxy_disk_mass_sph(const struct sim_galaxy_model *m, double r)
{
	if (r <= 0 || m->md <= 0)
		return 0;
	if (!m->soft || !m->soft->has_disk)
		return sim_galaxy_disk_mass(m, r);
	if (r >= m->soft->dmax)
		return m->md;
	return dsph_lookup(m->soft, m->soft->dsph, r, 3);
}

static double kernel(double r, double s, double eps)
{
	if (s < 1e-4 * r) /* the shell is a point at the centre */
		return r * r * r / pow(r * r + eps * eps, 1.5);
	double A = sqrt((r + s) * (r + s) + eps * eps), B = sqrt((r - s) * (r - s) + eps * eps);
	double d = -((r + s) / A - (r - s) / B) / (2 * r * s) + (A - B) / (2 * r * r * s);
	return r * r * d;
}

/* dM/ds of the bulge + halo (which 0) or of the disk's spherical mass (1). */
static double dmds(const struct sim_galaxy_model *m, int which, double s)
{
	if (which == 0)
		return 4 * M_PI * s * s *
		       (sim_galaxy_hernquist_density(m->mb, m->ab, m->rtb, s) +
			sim_galaxy_hernquist_density(m->mh, m->ah, m->rth, s));
	if (m->md <= 0)
		return 0;
	if (m->soft && m->soft->has_disk)
		return s >= m->soft->dmax ? 0 : dsph_lookup(m->soft, m->soft->ddsph, s, 2);
	if (s >= SIM_GALAXY_DISK_RMAX * m->h)
		return 0;
	double x = SIM_GALAXY_DISK_RMAX;
	return m->md * s * exp(-s / m->h) / (m->h * m->h * (1 - (1 + x) * exp(-x)));
}

/* Trapezoid of K dM over [a, b]: n steps uniform in s (lin) or in ln s. */
static double piece(const struct sim_galaxy_model *m, int which, double r, double a, double b,
		    int n, int logsp)
{
	if (!(b > a))
		return 0;
	double sum = 0;
	for (int i = 0; i <= n; i++) {
		double s, ds;
		if (logsp) {
			double l = log(a) + (log(b) - log(a)) * i / n;
			s = exp(l);
			ds = s * (log(b) - log(a)) / n;
		} else {
			s = a + (b - a) * i / n;
			ds = (b - a) / n;
		}
		double w = (i == 0 || i == n) ? 0.5 : 1.0;
		sum += w * ds * kernel(r, s, m->eps) * dmds(m, which, s);
	}
	return sum;
}

static double outer_radius(const struct sim_galaxy_model *m)
{
	double e = 0;
	if (m->md > 0)
		e = fmax(e, SIM_GALAXY_DISK_RMAX * m->h);
	if (m->mb > 0)
		e = fmax(e, m->rtb);
	if (m->mh > 0)
		e = fmax(e, m->rth);
	return e;
}

static double smallest_scale(const struct sim_galaxy_model *m)
{
	double s = m->eps;
	if (m->md > 0)
		s = fmin(s, m->h);
	if (m->mb > 0)
		s = fmin(s, m->ab);
	if (m->mh > 0)
		s = fmin(s, m->ah);
	return s;
}

/* M_eff(r): the shell kernel changes from 1 to 0 within a few eps of s = r,
 * so that stretch gets a fine uniform grid and the rest log grids; shells
 * inside 1e-6 r act as a point at the centre. */
static double meff(const struct sim_galaxy_model *m, int which, double r)
{
	double ext = outer_radius(m), e = m->eps;
	double lo = r - NEAR * e, hi = r + NEAR * e, s0 = 1e-6 * r;
	double sum = 0;
	if (lo > s0) {
		sum += piece(m, which, r, s0, lo, 300, 1);
	} else {
		lo = s0;
	}
	/* mass inside s0, as a point */
	double m0 = which == 0 ? sim_galaxy_hernquist_mass(m->mb, m->ab, m->rtb, s0) +
					 sim_galaxy_hernquist_mass(m->mh, m->ah, m->rth, s0)
			       : sim_galaxy_disk_mass_sph(m, s0);
	sum += m0 * kernel(r, 0, e);
	sum += piece(m, which, r, lo, fmin(hi, ext), 400, 0);
	if (hi < ext)
		sum += piece(m, which, r, hi, ext, 300, 1);
	return sum;
}

int sim_galaxy_soft_build(struct sim_galaxy_model *m)
{
	m->soft = NULL;
	struct sim_galaxy_soft *t = malloc(sizeof *t);
	if (!t) {
		log_error("disk galaxy: out of memory for the spherical-gravity table");
		return NB_ERUNTIME;
	}
	build_dsph(t, m);
	m->soft = t; /* meff below reads the disk table through m */
	t->softened = m->eps > 0;
	if (!t->softened)
		return 0;
	t->rcut = RCUT_EPS * m->eps;
	t->lnr0 = log(1e-3 * smallest_scale(m));
	t->dlnr = (log(t->rcut) - t->lnr0) / (SOFT_N - 1);
#pragma omp parallel for schedule(dynamic, 8)
	for (int i = 0; i < SOFT_N; i++) {
		double r = exp(t->lnr0 + i * t->dlnr);
		t->sph[i] = meff(m, 0, r);
		t->dsk[i] = meff(m, 1, r);
	}
	return 0;
}

void sim_galaxy_soft_free(struct sim_galaxy_model *m)
{
	free(m->soft);
	m->soft = NULL;
}

/* Linear in ln r; inside the grid M_eff ~ r^3 (uniform softened core). */
static double lookup(const struct sim_galaxy_soft *t, const double *y, double r)
{
	double x = (log(r) - t->lnr0) / t->dlnr;
	if (x <= 0) {
		double r0 = exp(t->lnr0);
		return y[0] * (r / r0) * (r / r0) * (r / r0);
	}
	return grid_lin(y, SOFT_N, x);
}

double sim_galaxy_spheres_meff(const struct sim_galaxy_model *m, double r)
{
	if (r <= 0)
		return 0;
	if (m->soft && m->soft->softened && r < m->soft->rcut)
		return lookup(m->soft, m->soft->sph, r);
	return sim_galaxy_hernquist_mass(m->mb, m->ab, m->rtb, r) +
	       sim_galaxy_hernquist_mass(m->mh, m->ah, m->rth, r);
}

double sim_galaxy_disk_sph_meff(const struct sim_galaxy_model *m, double r)
{
	if (r <= 0)
		return 0;
	if (m->soft && m->soft->softened && r < m->soft->rcut)
		return lookup(m->soft, m->soft->dsk, r);
	return sim_galaxy_disk_mass_sph(m, r);
}
