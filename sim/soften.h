/* soften.h - the softened force and potential of one pair, for both kernels
 * of simulation.softening_kernel, written once for the host (double) and
 * the device (float; this header compiles under nvcc as __host__
 * __device__).
 *
 * eps is the Plummer-equivalent softening length of the pair. With lengths
 * per body (bodies.*.softening and below), a pair takes the larger of its
 * two (GADGET's rule, symmetric, so forces stay equal and opposite):
 * sim_soft_pair(eps_i, eps_j).
 *
 * plummer: a(r) = -m r_vec / (r^2 + eps^2)^(3/2), phi = -m / sqrt(r^2 + eps^2).
 * spline:  GADGET-2's cubic-spline kernel (Springel 2005, eq. 4; Monaghan &
 *          Lattanzio 1985) with h = 2.8 eps: the force of a mass spread over
 *          the kernel W(r, h), exactly Newtonian (1/r^2) for r >= h, with the
 *          same potential depth at r = 0 as a Plummer sphere of eps
 *          (phi(0) = -2.8 m / h = -m / eps).
 *
 * Each function takes r^2 (and eps) and returns the factor f with
 * a_vec = m f d_vec (d_vec = r_j - r_i), i.e. f = 1/r^3 in the Newtonian
 * limit; the _phi functions return the potential per unit mass, phi / m. */
#ifndef NB_SIM_SOFTEN_H
#define NB_SIM_SOFTEN_H

#include <math.h>

#ifdef __CUDACC__
#define SOFT_HD __host__ __device__ __forceinline__
#else
#define SOFT_HD static inline
#endif

#define SIM_SOFT_SPLINE_H 2.8 /* h / eps of the spline kernel */

/* the pair's length: the larger of the two bodies' (GADGET's rule) */
SOFT_HD double sim_soft_pair(double ei, double ej)
{
	return ei > ej ? ei : ej;
}

SOFT_HD double sim_soft_plummer(double r2, double eps)
{
	const double s = 1.0 / sqrt(r2 + eps * eps);
	return s * s * s;
}

SOFT_HD double sim_soft_plummer_phi(double r2, double eps)
{
	return -1.0 / sqrt(r2 + eps * eps);
}

/* spline: 1/r^3 beyond h = 2.8 eps; inside, GADGET-2's polynomial in u = r/h */
SOFT_HD double sim_soft_spline(double r2, double eps)
{
	const double h = SIM_SOFT_SPLINE_H * eps;
	if (r2 >= h * h)
		return 1.0 / (r2 * sqrt(r2));
	const double u = sqrt(r2) / h, hinv3 = 1.0 / (h * h * h);
	if (u < 0.5)
		return hinv3 * (10.666666666666667 + u * u * (32.0 * u - 38.4));
	return hinv3 * (21.333333333333333 - 48.0 * u + 38.4 * u * u - 10.666666666666667 * u * u * u -
			0.066666666666666667 / (u * u * u));
}

SOFT_HD double sim_soft_spline_phi(double r2, double eps)
{
	const double h = SIM_SOFT_SPLINE_H * eps;
	if (r2 >= h * h)
		return -1.0 / sqrt(r2);
	const double u = sqrt(r2) / h;
	if (u < 0.5)
		return (-2.8 + u * u * (5.333333333333333 + u * u * (6.4 * u - 9.6))) / h;
	return (-3.2 + 0.066666666666666667 / u +
		u * u * (10.666666666666667 + u * (-16.0 + u * (9.6 - 2.1333333333333333 * u)))) / h;
}

#ifdef __CUDACC__
/* float twins for the kernels (same formulas) */
__device__ __forceinline__ float sim_soft_pairf(float ei, float ej)
{
	return fmaxf(ei, ej);
}

__device__ __forceinline__ float sim_soft_plummerf(float r2, float eps)
{
	const float s = rsqrtf(fmaf(eps, eps, r2));
	return s * s * s;
}

__device__ __forceinline__ float sim_soft_plummer_phif(float r2, float eps)
{
	return -rsqrtf(fmaf(eps, eps, r2));
}

__device__ __forceinline__ float sim_soft_splinef(float r2, float eps)
{
	const float h = (float)SIM_SOFT_SPLINE_H * eps;
	if (r2 >= h * h)
		return rsqrtf(r2) / r2;
	const float u = sqrtf(r2) / h, hinv3 = 1.0f / (h * h * h);
	if (u < 0.5f)
		return hinv3 * (10.666667f + u * u * (32.0f * u - 38.4f));
	return hinv3 * (21.333333f - 48.0f * u + 38.4f * u * u - 10.666667f * u * u * u -
			0.06666667f / (u * u * u));
}

__device__ __forceinline__ float sim_soft_spline_phif(float r2, float eps)
{
	const float h = (float)SIM_SOFT_SPLINE_H * eps;
	if (r2 >= h * h)
		return -rsqrtf(r2);
	const float u = sqrtf(r2) / h;
	if (u < 0.5f)
		return (-2.8f + u * u * (5.3333333f + u * u * (6.4f * u - 9.6f))) / h;
	return (-3.2f + 0.06666667f / u + u * u * (10.666667f + u * (-16.0f + u * (9.6f - 2.1333333f * u)))) / h;
}
#endif

#endif
