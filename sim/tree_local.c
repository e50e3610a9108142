/* tree_local.c - local expansions of far cells for the CPU tree (see
 * tree_local.h; the coefficients are derived at the top of
 * sim/cuda/tree_far.cuh, which computes the same in float on the GPU).
 *
 * With D = 1/s, s^2 = |r|^2 + eps^2 and the cell's second moment
 * S = (Q + T I)/3, the cell's potential is -m D - (1/2) S_ab D_ab; its
 * derivatives at r = g - com, with q = Q r and u = r.Q.r - T eps^2, are
 *   rank 0: -m/s - u/(2 s^5)
 *   rank 1: B r_a - q_a/s^5,  B = m/s^3 + 5u/(2 s^7)
 *   rank 2: A r_a r_b + B d_ab + (5/s^7)(q_a r_b + r_a q_b) - Q_ab/s^5,
 *           A = -3m/s^5 - 35u/(2 s^9)
 *   rank 3: 15m/s^7 r_a r_b r_c - 3m/s^5 (d_ab r_c + 2 more)
 *   rank 4: -105m/s^9 r_a r_b r_c r_d + 15m/s^7 (d_ab r_c r_d + 5 more)
 *           - 3m/s^5 (d_ab d_cd + 2 more)
 * In index counts (n0, n1, n2) of a component, "d_ab r_c ... + more" is
 * the sum over the axes of C(n_axis, 2) r^(n - 2 e_axis), and the d d term
 * counts the ways to pair the four indices into equal pairs. */
#include <math.h>

#include "sim.h"
#include "tree_local.h"

static int tl_idx(int n1, int n2)
{
	return (n1 + n2) * (n1 + n2 + 1) / 2 + n2;
}

static const int TL_BASE[5] = {0, 1, 4, 10, 20};

static double tl_pow(double x, int k)
{
	double p = 1;
	for (int j = 0; j < k; j++)
		p *= x;
	return p;
}

/* r^(n0, n1, n2) */
static double tl_mono(const double r[3], int n0, int n1, int n2)
{
	return tl_pow(r[0], n0) * tl_pow(r[1], n1) * tl_pow(r[2], n2);
}

/* sum over axes of C(n_axis, 2) r^(n - 2 e_axis) */
static double tl_pairs(const double r[3], int n0, int n1, int n2)
{
	double v = 0;
	if (n0 >= 2)
		v += n0 * (n0 - 1) / 2 * tl_mono(r, n0 - 2, n1, n2);
	if (n1 >= 2)
		v += n1 * (n1 - 1) / 2 * tl_mono(r, n0, n1 - 2, n2);
	if (n2 >= 2)
		v += n2 * (n2 - 1) / 2 * tl_mono(r, n0, n1, n2 - 2);
	return v;
}

void sim_tree_local_add(double c[SIM_TREE_LOCAL_NC], const double r[3], double m,
			const double q[6], double te, double eps2)
{
	const double s2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps2;
	const double si = 1.0 / sqrt(s2), si2 = si * si;
	const double s3 = si * si2, s5 = s3 * si2, s7 = s5 * si2, s9 = s7 * si2;
	double Q[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, qr[3] = {0, 0, 0}, u = 0;
	if (q) {
		Q[0][0] = q[0], Q[1][1] = q[1], Q[2][2] = q[2];
		Q[0][1] = Q[1][0] = q[3], Q[0][2] = Q[2][0] = q[4], Q[1][2] = Q[2][1] = q[5];
		for (int a = 0; a < 3; a++)
			qr[a] = Q[a][0] * r[0] + Q[a][1] * r[1] + Q[a][2] * r[2];
		u = r[0] * qr[0] + r[1] * qr[1] + r[2] * qr[2] - te;
	}
	const double B = m * s3 + 2.5 * u * s7, A = -3 * m * s5 - 17.5 * u * s9;
	c[0] += -m * si - 0.5 * u * s5;
	for (int a = 0; a < 3; a++)
		c[1 + a] += B * r[a] - qr[a] * s5;
	for (int a = 0; a < 3; a++)
		for (int b = a; b < 3; b++) {
			const int n1 = (a == 1) + (b == 1), n2 = (a == 2) + (b == 2);
			c[4 + tl_idx(n1, n2)] += A * r[a] * r[b] + (a == b ? B : 0) +
						 5 * s7 * (qr[a] * r[b] + r[a] * qr[b]) - Q[a][b] * s5;
		}
	for (int n2 = 0; n2 <= 3; n2++)
		for (int n1 = 0; n1 <= 3 - n2; n1++) {
			const int n0 = 3 - n1 - n2;
			c[10 + tl_idx(n1, n2)] += 15 * m * s7 * tl_mono(r, n0, n1, n2) -
						  3 * m * s5 * tl_pairs(r, n0, n1, n2);
		}
	for (int n2 = 0; n2 <= 4; n2++)
		for (int n1 = 0; n1 <= 4 - n2; n1++) {
			const int n0 = 4 - n1 - n2;
			const int pairings =
				(n0 % 2 || n1 % 2 || n2 % 2) ? 0 : (n0 == 4 || n1 == 4 || n2 == 4) ? 3 : 1;
			c[20 + tl_idx(n1, n2)] += -105 * m * s9 * tl_mono(r, n0, n1, n2) +
						  15 * m * s7 * tl_pairs(r, n0, n1, n2) -
						  3 * m * s5 * pairings;
		}
}

static double tl_fact(int n)
{
	return n <= 1 ? 1 : n * tl_fact(n - 1);
}

/* phi(g + y) = sum over ranks n and counts m of rank n of y^m / m! P_n[m];
 * a = -grad phi. */
void sim_tree_local_eval(const double c[SIM_TREE_LOCAL_NC], const double y[3], double a[3],
			 double *phi)
{
	double p = c[0], g[3] = {0, 0, 0};
	for (int n = 1; n <= 4; n++) {
		const double *t = c + TL_BASE[n];
		for (int m2 = 0; m2 <= n; m2++)
			for (int m1 = 0; m1 <= n - m2; m1++) {
				const int m0 = n - m1 - m2;
				const double w = tl_mono(y, m0, m1, m2) /
						 (tl_fact(m0) * tl_fact(m1) * tl_fact(m2));
				p += w * t[tl_idx(m1, m2)];
			}
		/* derivative: counts of rank n - 1 plus one index per axis */
		for (int m2 = 0; m2 <= n - 1; m2++)
			for (int m1 = 0; m1 <= n - 1 - m2; m1++) {
				const int m0 = n - 1 - m1 - m2;
				const double w = tl_mono(y, m0, m1, m2) /
						 (tl_fact(m0) * tl_fact(m1) * tl_fact(m2));
				g[0] += w * t[tl_idx(m1, m2)];
				g[1] += w * t[tl_idx(m1 + 1, m2)];
				g[2] += w * t[tl_idx(m1, m2 + 1)];
			}
	}
	for (int k = 0; k < 3; k++)
		a[k] -= g[k];
	if (phi)
		*phi += p;
}

double sim_tree_local_ratio(enum scene_opening opening)
{
	return opening == SCENE_OPENING_MASS ? 0.15 : 0.1;
}
