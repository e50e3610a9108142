/* tree_local.h - local (Taylor) expansions of far cells about a walk
 * group's centre, for the CPU tree (sim/tree.c); the GPU's float twin is
 * sim/cuda/tree_far.cuh, whose top comment derives the coefficients.
 *
 * c[SIM_TREE_LOCAL_NC] holds the derivatives of the potential at the
 * group's centre g: rank 0 (1), 1 (3), 2 (6), 3 (10), 4 (15), one after
 * another; a component of rank n with index counts (n0, n1, n2) sits at
 * k (k + 1)/2 + n2 within its rank, k = n1 + n2. */
#ifndef NB_SIM_TREE_LOCAL_H
#define NB_SIM_TREE_LOCAL_H

#define SIM_TREE_LOCAL_NC 35

/* Add a cell seen from g: r = g - com, mass m, traceless quadrupole
 * q = (Qxx, Qyy, Qzz, Qxy, Qxz, Qyz) or NULL (monopole), te = T eps^2 (T
 * the trace of the second moment), eps2 = eps^2. The cell's potential is
 * the tree's softened quadrupole, -m/s - (r.Q.r - te)/(2 s^5); ranks 3 and
 * 4 carry its monopole part only. */
void sim_tree_local_add(double c[SIM_TREE_LOCAL_NC], const double r[3], double m,
			const double q[6], double te, double eps2);

/* Acceleration (added to a) and potential (added to *phi unless NULL) of
 * the expansion at g + y. */
void sim_tree_local_eval(const double c[SIM_TREE_LOCAL_NC], const double y[3], double a[3],
			 double *phi);

#endif
