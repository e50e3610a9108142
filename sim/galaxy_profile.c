/* galaxy_profile.c - the bottom of the galaxy model: each part's own
 * profile, needing no other part and no table. The truncated Hernquist
 * sphere (Hernquist 1990), the exponential disk's surface density and
 * enclosed mass, and the razor-thin disk's circular speed (Freeman 1970)
 * with the Bessel functions it needs (the polynomial approximations of
 * Abramowitz & Stegun 9.8.1-9.8.8). The thick disk's table
 * (galaxy_disk_force.c), the softened gravity (galaxy_soften.c) and the
 * whole model (galaxy_potential.c) are built on these. */
#include "galaxy_potential.h"

#include <math.h>

/* ---- Bessel functions (A&S 9.8.1-9.8.8), scaled ---- */

double sim_galaxy_i0e(double x)
{
	if (x < 3.75) {
		double t = x / 3.75, t2 = t * t;
		double p = 1.0 + t2 * (3.5156229 + t2 * (3.0899424 + t2 * (1.2067492 +
			   t2 * (0.2659732 + t2 * (0.0360768 + t2 * 0.0045813)))));
		return p * exp(-x);
	}
	double s = 3.75 / x;
	double p = 0.39894228 + s * (0.01328592 + s * (0.00225319 + s * (-0.00157565 +
		   s * (0.00916281 + s * (-0.02057706 + s * (0.02635537 +
		   s * (-0.01647633 + s * 0.00392377)))))));
	return p / sqrt(x);
}

double sim_galaxy_i1e(double x)
{
	if (x < 3.75) {
		double t = x / 3.75, t2 = t * t;
		double p = 0.5 + t2 * (0.87890594 + t2 * (0.51498869 + t2 * (0.15084934 +
			   t2 * (0.02658733 + t2 * (0.00301532 + t2 * 0.00032411)))));
		return x * p * exp(-x);
	}
	double s = 3.75 / x;
	double p = 0.39894228 + s * (-0.03988024 + s * (-0.00362018 + s * (0.00163801 +
		   s * (-0.01031555 + s * (0.02282967 + s * (-0.02895312 +
		   s * (0.01787654 + s * -0.00420059)))))));
	return p / sqrt(x);
}

double sim_galaxy_k0e(double x)
{
	if (x <= 2.0) {
		double t = x * x / 4.0;
		double i0 = sim_galaxy_i0e(x) * exp(x);
		double p = -0.57721566 + t * (0.42278420 + t * (0.23069756 + t * (0.03488590 +
			   t * (0.00262698 + t * (0.00010750 + t * 0.00000740)))));
		return (-log(x / 2.0) * i0 + p) * exp(x);
	}
	double s = 2.0 / x;
	double p = 1.25331414 + s * (-0.07832358 + s * (0.02189568 + s * (-0.01062446 +
		   s * (0.00587872 + s * (-0.00251540 + s * 0.00053208)))));
	return p / sqrt(x);
}

double sim_galaxy_k1e(double x)
{
	if (x <= 2.0) {
		double t = x * x / 4.0;
		double i1 = sim_galaxy_i1e(x) * exp(x);
		double p = 1.0 + t * (0.15443144 + t * (-0.67278579 + t * (-0.18156897 +
			   t * (-0.01919402 + t * (-0.00110404 + t * -0.00004686)))));
		return (x * log(x / 2.0) * i1 + p) / x * exp(x);
	}
	double s = 2.0 / x;
	double p = 1.25331414 + s * (0.23498619 + s * (-0.03655620 + s * (0.01504268 +
		   s * (-0.00780353 + s * (0.00325614 + s * -0.00068245)))));
	return p / sqrt(x);
}

/* ---- spheres ---- */

double sim_galaxy_hernquist_mass(double M, double a, double rt, double r)
{
	if (M <= 0 || r <= 0)
		return 0;
	if (r >= rt)
		return M;
	double ft = rt * rt / ((rt + a) * (rt + a));
	return M / ft * r * r / ((r + a) * (r + a));
}

double sim_galaxy_hernquist_density(double M, double a, double rt, double r)
{
	if (M <= 0 || r <= 0 || r >= rt)
		return 0;
	double ft = rt * rt / ((rt + a) * (rt + a));
	double rp = r + a;
	return M / ft * a / (2 * M_PI * r * rp * rp * rp);
}

/* ---- disk ---- */

/* Mass fraction of an untruncated exponential disk inside SIM_GALAXY_DISK_RMAX h. */
static double disk_trunc_fraction(void)
{
	double x = SIM_GALAXY_DISK_RMAX;
	return 1.0 - (1.0 + x) * exp(-x);
}

double sim_galaxy_disk_sigma(const struct sim_galaxy_model *m, double R)
{
	if (m->md <= 0)
		return 0;
	return m->md / (2 * M_PI * m->h * m->h * disk_trunc_fraction()) * exp(-R / m->h);
}

double sim_galaxy_disk_mass(const struct sim_galaxy_model *m, double R)
{
	if (m->md <= 0 || R <= 0)
		return 0;
	double x = R / m->h;
	if (x >= SIM_GALAXY_DISK_RMAX)
		return m->md;
	return m->md * (1.0 - (1.0 + x) * exp(-x)) / disk_trunc_fraction();
}

/* Freeman (1970): v_c^2 = 4 pi G Sigma0 h y^2 [I0 K0 - I1 K1](y), y = R/2h,
 * for the razor-thin disk. The 10 h truncation removes 5e-4 of the mass
 * and is ignored here except in Sigma0's normalisation. */
double sim_galaxy_disk_vc2(const struct sim_galaxy_model *m, double R)
{
	if (m->md <= 0 || R <= 0)
		return 0;
	double y = R / (2 * m->h);
	double s0 = sim_galaxy_disk_sigma(m, 0);
	double bk = sim_galaxy_i0e(y) * sim_galaxy_k0e(y) - sim_galaxy_i1e(y) * sim_galaxy_k1e(y);
	return 4 * M_PI * s0 * m->h * y * y * bk;
}

