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

#endif
