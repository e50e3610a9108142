/* galaxy_disk_force.c - radial force of a THICK exponential disk,
 * rho = Sigma0 exp(-R/h) sech^2(z/z0) / (2 z0), tabulated on an (R, z) grid.
 *
 * Freeman's razor-thin v_c overestimates the force a sech^2 disk exerts on
 * its own stars: by 12% in v_c^2 at R = h in the midplane for z0 = 0.15 h,
 * more above it. Rotating the stars with the thin-disk curve makes the disk
 * expand at once, so the sampler uses this table instead.
 *
 * Method: the thin disk's potential is a Hankel integral (Binney & Tremaine
 * 2008, eq. 2.168), Phi(R, z) = -2 pi G Sigma0 h^2 int_0^inf J0(kR) e^{-k|z|}
 * (1 + k^2 h^2)^{-3/2} dk. Stacking thin sheets with the vertical profile
 * p(z') = sech^2(z'/z0) / (2 z0) replaces e^{-k|z|} by
 *   G(k, z) = int p(z') e^{-k|z - z'|} dz',
 * a function of s = k z0 and zeta = z/z0 alone, tabulated once. Then
 *   v^2(R, z) = R F_R = 2 pi G Sigma0 h^2 R int k J1(kR) G W dk,
 *   kappa^2(R) = 3 F_R/R + dF_R/dR = 2 pi G Sigma0 h^2 int k G W (2 J1(kR)/R + k J0(kR)) dk
 * with W = (1 + k^2 h^2)^{-3/2}, by 8-point Gauss-Legendre panels in k no
 * wider than 1/R (a sixth of J's period). Plummer softening eps (m->eps)
 * enters through G, see g_exact.
 *
 * The vertical force dPhi/dz = 2 pi G Sigma0 h^2 int J0(kR) k Gz W' dk
 * (Gz = -(1/k) dG/dz) gives the disk's own share of sigma_z^2 by the
 * vertical Jeans equation. The isothermal-sheet value pi G Sigma z0 assumes
 * an infinite sheet and is ~20% too hot for z0 = 0.3 h: such a disk puffs
 * up, its midplane pull weakens, and it then expands radially too. */
#include <math.h>
#include <stdlib.h>

#include "galaxy_potential.h"
#include "../scene/log.h"

#define NR 128      /* R_i = i * 10 h / (NR - 1) */
#define NZ 25       /* z_j = j * 0.25 z0, up to 6 z0 */
#define NS 384      /* ln s grid for G */
#define S_MIN 1e-3
#define S_MAX 1e4
#define S_ASYM 15.0 /* above: Laplace's asymptotic series for G */

struct sim_galaxy_disk_table {
	double dr, dz;
	double fr[NZ][NR]; /* disk's dPhi/dR at (R_i, z_j): linear in R near 0, so
			    * interpolating it (not R dPhi/dR) stays exact there */
	double fz[NZ][NR]; /* disk's dPhi/dz at (R_i, z_j) */
	double sz[NZ][NR]; /* disk's share of sigma_z^2 at (R_i, z_j) */
	double k2[NR];     /* disk's kappa^2 in the midplane */
	double g[NS][NZ];  /* G(s_i, zeta_j) */
	double gz[NS][NZ]; /* Gz(s_i, zeta_j), see g_exact */
	double lns0, dlns;
	double eta;        /* softening / z0 */
};

static const double GL_X[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
			       0.9602898564975363};
static const double GL_W[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
			       0.1012285362903763};

/* f(u) = sech^2(u)/2 and its derivatives f^(n), n = 0..4 (S = sech^2, T = tanh). */
static void fderiv(double u, double f[5])
{
	double c = cosh(u), S = 1 / (c * c), T = tanh(u), T2 = T * T;
	f[0] = 0.5 * S;
	f[1] = -S * T;
	f[2] = 2 * S * T2 - S * S;
	f[3] = -4 * S * T2 * T + 8 * S * S * T;
	f[4] = 8 * S * T2 * T2 - 44 * S * S * T2 + 8 * S * S * S;
}

/* G(s, zeta) = int f(u) e^{-s |zeta - u|} du, or with Plummer softening
 * eta = eps/z0, int f(u) e^{-s d(u)} du with d = sqrt((zeta - u)^2 + eta^2):
 * softening a thin sheet's Hankel mode turns e^{-k|z|} into
 * e^{-k sqrt(z^2 + eps^2)} (from 1/sqrt(R^2 + a^2) = int J0(kR) e^{-ka} dk
 * with a^2 = z^2 + eps^2). Gz = -(1/s) dG/dzeta = int f(u) ((zeta-u)/d) e^{-s d} du.
 * Unsoftened, large s: Laplace's series, G = 2 (f/s + f''/s^3 + f''''/s^5),
 * Gz = -2 (f'/s^2 + f'''/s^4) (next terms ~3e-5 relative at s = 15).
 * Otherwise the trapezoid rule on both sides of u = zeta (the kink, when
 * eta = 0), with steps small against 1/s and the range cut where the kernel
 * is below e^{-40} of its peak. */
static void g_exact(double s, double zeta, double eta, double *g, double *gz)
{
	if (eta == 0 && s >= S_ASYM) {
		double f[5];
		fderiv(zeta, f);
		double is = 1 / s, is2 = is * is;
		*g = 2 * is * (f[0] + is2 * (f[2] + is2 * f[4]));
		*gz = -2 * is2 * (f[1] + is2 * f[3]);
		return;
	}
	*g = *gz = 0;
	if (s * eta > 50)
		return;
	const double L = 22; /* sech^2(22) ~ 3e-19 */
	double du = fmin(0.02, 0.05 / s);
	double reach = sqrt((eta + 40 / s) * (eta + 40 / s) - eta * eta);
	reach = fmin(L + zeta, reach);
	for (int side = -1; side <= 1; side += 2) {
		int n = (int)ceil(reach / du);
		double step = reach / n, part = 0, partz = 0;
		for (int i = 0; i <= n; i++) {
			double w = i * step, u = zeta + side * w, d = sqrt(w * w + eta * eta);
			double c = cosh(u), wt = (i == 0 || i == n) ? 0.5 : 1.0;
			double k = wt * 0.5 / (c * c) * exp(-s * d);
			part += k;
			if (d > 0)
				partz += k * (-side * w) / d; /* (zeta - u)/d */
		}
		*g += part * step;
		*gz += partz * step;
	}
}

/* Linear in ln s; *gz gets Gz. */
static double g_lookup(const struct sim_galaxy_disk_table *t, double s, int j, double *gz)
{
	if (s >= S_MAX) {
		double g;
		g_exact(s, j * 0.25, t->eta, &g, gz);
		return g;
	}
	double x = (log(s > S_MIN ? s : S_MIN) - t->lns0) / t->dlns;
	int i = (int)x;
	if (i >= NS - 1) {
		*gz = t->gz[NS - 1][j];
		return t->g[NS - 1][j];
	}
	double w = x - i;
	*gz = (1 - w) * t->gz[i][j] + w * t->gz[i + 1][j];
	return (1 - w) * t->g[i][j] + w * t->g[i + 1][j];
}

/* One R: the k integrals for every z_j and kappa^2. */
static void integrate_radius(struct sim_galaxy_disk_table *t, const struct sim_galaxy_model *m,
			     int i, double c)
{
	double h = m->h, R = i * t->dr;
	/* Beyond k ~ 100/R the oscillating tail cancels; below 1/z0 G ~ 1 and
	 * the integrand only falls as k^-2.5. */
	double kmax = fmin(200 / m->z0, R > 0 ? 100 / R : HUGE_VAL);
	if (m->eps > 0) /* softened: G falls as e^{-k eps} */
		kmax = fmin(kmax, 50 / m->eps);
	kmax = fmax(40 / h, kmax);
	double v2[NZ] = {0}, vz[NZ] = {0}, k2 = 0;
	for (double k0 = 0; k0 < kmax;) {
		double dk = fmax(1 / h, 0.25 * k0);
		if (R > 0 && dk > 1 / R)
			dk = 1 / R;
		for (int q = 0; q < 8; q++) {
			double x = q < 4 ? -GL_X[q] : GL_X[q - 4], wq = GL_W[q < 4 ? q : q - 4];
			double k = k0 + 0.5 * dk * (1 + x), wk = 0.5 * dk * wq;
			double W = k / pow(1 + k * k * h * h, 1.5);
			double s = k * m->z0;
			double j1v = R > 0 ? j1(k * R) : 0, j0v = R > 0 ? j0(k * R) : 1, gz, g0 = 0;
			for (int j = 0; j < NZ; j++) {
				double g = g_lookup(t, s, j, &gz);
				v2[j] += wk * W * j1v * g;
				vz[j] += wk * W * j0v * gz;
				if (j == 0)
					g0 = g;
			}
			double kk = R > 0 ? 2 * j1v / R + k * j0v : 2 * k;
			k2 += wk * W * g0 * kk;
		}
		k0 += dk;
	}
	for (int j = 0; j < NZ; j++) {
		t->fr[j][i] = c * v2[j];
		t->fz[j][i] = c * vz[j];
	}
	t->k2[i] = c * k2;
	/* sigma_z^2 (z) = (1/rho) int_z^inf rho dPhi/dz' dz' for the sech^2 layer,
	 * trapezoid on the z grid from the top; above 6 z0 the weight
	 * sech^2 ~ 4 e^{-2u} integrates to half its value at the top. */
	double cum = 0;
	for (int j = NZ - 1; j >= 0; j--) {
		double cj = cosh(j * 0.25), wj = 1 / (cj * cj);
		if (j == NZ - 1) {
			cum = 0.5 * m->z0 * wj * t->fz[j][i];
		} else {
			double cn = cosh((j + 1) * 0.25), wn = 1 / (cn * cn);
			cum += 0.5 * t->dz * (wj * t->fz[j][i] + wn * t->fz[j + 1][i]);
		}
		t->sz[j][i] = cum / wj;
	}
}

int sim_galaxy_disk_table_build(struct sim_galaxy_model *m)
{
	m->tab = NULL;
	if (!(m->md > 0) || !(m->h > 0) || !(m->z0 > 0))
		return 0;
	struct sim_galaxy_disk_table *t = malloc(sizeof *t);
	if (!t) {
		log_error("disk galaxy: out of memory for the disk force table");
		return NB_ERUNTIME;
	}
	t->dr = SIM_GALAXY_DISK_RMAX * m->h / (NR - 1);
	t->dz = 0.25 * m->z0;
	t->eta = m->eps > 0 ? m->eps / m->z0 : 0;
	t->lns0 = log(S_MIN);
	t->dlns = (log(S_MAX) - t->lns0) / (NS - 1);
#pragma omp parallel for schedule(dynamic)
	for (int i = 0; i < NS; i++)
		for (int j = 0; j < NZ; j++)
			g_exact(exp(t->lns0 + i * t->dlns), j * 0.25, t->eta, &t->g[i][j], &t->gz[i][j]);
	double c = 2 * M_PI * sim_galaxy_disk_sigma(m, 0) * m->h * m->h;
#pragma omp parallel for schedule(dynamic)
	for (int i = 0; i < NR; i++)
		integrate_radius(t, m, i, c);
	m->tab = t;
	return 0;
}

void sim_galaxy_disk_table_free(struct sim_galaxy_model *m)
{
	free(m->tab);
	m->tab = NULL;
}

static double bilinear(const struct sim_galaxy_disk_table *t, const double (*y)[NR], double R,
		       double z)
{
	double x = R / t->dr, v = fabs(z) / t->dz;
	if (v > NZ - 1)
		v = NZ - 1;
	int i = (int)x, j = (int)v;
	if (j > NZ - 2)
		j = NZ - 2;
	if (i > NR - 2)
		i = NR - 2;
	double wx = x - i, wy = v - j;
	return (1 - wy) * ((1 - wx) * y[j][i] + wx * y[j][i + 1]) +
	       wy * ((1 - wx) * y[j + 1][i] + wx * y[j + 1][i + 1]);
}

/* Bilinear in (R, |z|); |z| beyond 6 z0 is clamped (1e-5 of the stars). */
double sim_galaxy_disk_table_v2(const struct sim_galaxy_model *m, double R, double z)
{
	return R * bilinear(m->tab, m->tab->fr, R, z);
}

double sim_galaxy_disk_table_sigz2(const struct sim_galaxy_model *m, double R, double z)
{
	return bilinear(m->tab, m->tab->sz, R, z);
}

double sim_galaxy_disk_table_kappa2(const struct sim_galaxy_model *m, double R)
{
	const struct sim_galaxy_disk_table *t = m->tab;
	double x = R / t->dr;
	int i = (int)x;
	if (i > NR - 2)
		i = NR - 2;
	double w = x - i;
	return (1 - w) * t->k2[i] + w * t->k2[i + 1];
}

double sim_galaxy_disk_table_rmax(const struct sim_galaxy_model *m)
{
	return m->tab ? (NR - 1) * m->tab->dr : 0;
}
