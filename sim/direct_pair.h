/* direct_pair.h - the softened pair term that every direct sum on the host
 * evaluates (sim/direct.c's each-pair-once loop and its active-body twin,
 * dist/direct.c's rows): one expression, written once, so the sums that
 * must agree bit for bit (a run over ranks and one process) cannot drift.
 *
 * Body j at pj seen from (x, y, z): d = pj - (x, y, z), r^2 = |d|^2 +
 * eps2, *rinv = 1 / sqrt(r^2), returns rinv^3. ~13 flops and a sqrt. */
#ifndef NB_SIM_DIRECT_PAIR_H
#define NB_SIM_DIRECT_PAIR_H

#include <math.h>
#include <stddef.h>

#include "soften.h"

static inline double sim_direct_pair(const double *pj, double x, double y, double z, double eps2,
				     double d[3], double *rinv)
{
	d[0] = pj[0] - x;
	d[1] = pj[1] - y;
	d[2] = pj[2] - z;
	const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
	*rinv = 1.0 / sqrt(r2);
	return *rinv * *rinv * *rinv;
}

/* The same with the pair's own length e (sim_soft_pair of the two bodies')
 * and the kernel (spline != 0: GADGET's cubic spline, else Plummer;
 * sim/soften.h): returns f with a = m f d, and *phi the potential per
 * unit mass (negative). */
static inline double sim_direct_pair_soft(const double *pj, double x, double y, double z,
					  double e, int spline, double d[3], double *phi)
{
	d[0] = pj[0] - x;
	d[1] = pj[1] - y;
	d[2] = pj[2] - z;
	const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
	if (spline) {
		*phi = sim_soft_spline_phi(r2, e);
		return sim_soft_spline(r2, e);
	}
	*phi = sim_soft_plummer_phi(r2, e);
	return sim_soft_plummer(r2, e);
}

/* Add to sum (ax ay az phi) the terms of the bodies j in [j0, j1) on the
 * body at (x, y, z) of length ei, in order of j: each with e =
 * sim_soft_pair(ei, each[j]) (ei when each is NULL) and the kernel. The
 * one-sided sums (sim/direct.c's active targets, dist/direct.c's rows). */
static inline void sim_direct_sum_soft(const double *pos, const double *mass, size_t j0,
				       size_t j1, double x, double y, double z, double ei,
				       const double *each, int spline, double sum[4])
{
	double ax = sum[0], ay = sum[1], az = sum[2], ph = sum[3];
	for (size_t j = j0; j < j1; j++) {
		double d[3], phi;
		const double e = each ? sim_soft_pair(ei, each[j]) : ei;
		const double f = sim_direct_pair_soft(pos + 3 * j, x, y, z, e, spline, d, &phi);
		ax += mass[j] * d[0] * f;
		ay += mass[j] * d[1] * f;
		az += mass[j] * d[2] * f;
		ph += mass[j] * phi;
	}
	sum[0] = ax;
	sum[1] = ay;
	sum[2] = az;
	sum[3] = ph;
}

#endif
