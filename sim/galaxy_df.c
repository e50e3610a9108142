/* galaxy_df.c - isotropic distribution function f(E) of the bulge or the halo
 * in the COMBINED potential of the galaxy (disk spherically averaged), by
 * Eddington's formula (Binney & Tremaine 2008, eq. 4.46b):
 *   f(e) = 1/(sqrt(8) pi^2) d/de int_0^e (drho/dPsi) dPsi / sqrt(e - Psi),
 * with Psi = -Phi the relative potential and e = Psi - v^2/2.
 *
 * Gaussian velocities with the Jeans dispersion have the right second moment
 * but the wrong shape: a Hernquist cusp drawn that way relaxes at once
 * (Kazantzidis, Magorrian & Moore 2004), and cutting the Gaussian at the
 * escape speed leaves the halo ~3% short of virial equilibrium, enough to
 * make it contract and drag the disk with it. Drawing speeds from f(E)
 * gives the equilibrium itself.
 *
 * Numerics: on a log grid in r reaching 1000 x past every truncation,
 * Psi(r) from the enclosed mass, rho(r) the part's Hernquist density
 * (continued past its truncation so that f stays positive: the stars near
 * r_t then have the velocities of an untruncated halo, which only matters at
 * its far edge). drho/dPsi is taken constant on each grid interval, so the
 * inner integral is exact per interval; d/de by differences. */
#include <math.h>
#include <stdlib.h>

#include "galaxy_potential.h"
#include "../scene/log.h"

#define DF_N 3000

static double rho_ext(double M, double a, double rt, double r)
{
	double ft = rt * rt / ((rt + a) * (rt + a));
	double rp = r + a;
	return M / ft * a / (2 * M_PI * r * rp * rp * rp);
}

/* Grid: from 1e-4 of the smallest scale to 1000 x the largest extent, N
 * points even in ln r. */
static void df_grid(const struct sim_galaxy_model *m, int n, struct sim_galaxy_df *df)
{
	double s = HUGE_VAL, ext = 0;
	if (m->md > 0) {
		s = fmin(s, m->h);
		ext = fmax(ext, SIM_GALAXY_DISK_RMAX * m->h);
	}
	if (m->mb > 0) {
		s = fmin(s, m->ab);
		ext = fmax(ext, m->rtb);
	}
	if (m->mh > 0) {
		s = fmin(s, m->ah);
		ext = fmax(ext, m->rth);
	}
	df->lnr0 = log(1e-4 * s);
	df->dlnr = (log(1e3 * ext) - df->lnr0) / (n - 1);
}

int sim_galaxy_df_build(const struct sim_galaxy_model *m, int which, struct sim_galaxy_df *df)
{
	double M = which == 1 ? m->mb : m->mh;
	double a = which == 1 ? m->ab : m->ah;
	double rt = which == 1 ? m->rtb : m->rth;
	int n = DF_N, rc = 0;
	double *rho = malloc(n * sizeof *rho), *F = malloc(n * sizeof *F);
	df->n = n;
	df->psi = malloc(n * sizeof *df->psi);
	df->eps = malloc((n - 1) * sizeof *df->eps);
	df->f = malloc((n - 1) * sizeof *df->f);
	df->gmax = malloc(n * sizeof *df->gmax);
	if (!rho || !F || !df->psi || !df->eps || !df->f || !df->gmax) {
		log_error("disk galaxy: out of memory for the distribution function");
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	df_grid(m, n, df);

	/* Psi inward from Psi(r_max) = M_tot / r_max (trapezoid in ln r). */
	double gr_prev = 0;
	for (int i = n - 1; i >= 0; i--) {
		double r = exp(df->lnr0 + i * df->dlnr);
		double gr = sim_galaxy_mass_sph(m, r) / r; /* g r */
		if (i == n - 1)
			df->psi[i] = gr;
		else
			df->psi[i] = df->psi[i + 1] + 0.5 * df->dlnr * (gr + gr_prev);
		gr_prev = gr;
		rho[i] = rho_ext(M, a, rt, r);
	}
	/* F(Psi_j) = int_0^{Psi_j} (drho/dPsi) dPsi / sqrt(Psi_j - Psi). */
#pragma omp parallel for schedule(dynamic, 16)
	for (int j = 0; j < n; j++) {
		double sum = 0;
		for (int k = j; k < n - 1; k++) {
			double slope = (rho[k] - rho[k + 1]) / (df->psi[k] - df->psi[k + 1]);
			sum += slope * 2 * (sqrt(df->psi[j] - df->psi[k + 1]) - sqrt(df->psi[j] - df->psi[k]));
		}
		F[j] = sum;
	}
	/* f at interval midpoints, e decreasing with j; clamp round-off below 0. */
	const double norm = 1 / (sqrt(8.0) * M_PI * M_PI);
	for (int j = 0; j < n - 1; j++) {
		df->eps[j] = 0.5 * (df->psi[j] + df->psi[j + 1]);
		double fj = norm * (F[j] - F[j + 1]) / (df->psi[j] - df->psi[j + 1]);
		df->f[j] = fj > 0 ? fj : 0;
	}
	/* Speed bound per grid radius: the largest of 64 evenly spaced samples
	 * of v^2 f(psi - v^2/2) below v_esc. */
#pragma omp parallel for schedule(static)
	for (int i = 0; i < n; i++) {
		double vesc = sqrt(2 * df->psi[i]), g = 0;
		for (int k = 1; k < 64; k++) {
			double v = vesc * k / 64;
			g = fmax(g, v * v * sim_galaxy_df_f(df, df->psi[i] - 0.5 * v * v));
		}
		df->gmax[i] = g;
	}

cleanup:
	free(rho);
	free(F);
	if (rc)
		sim_galaxy_df_free(df);
	return rc;
}

void sim_galaxy_df_free(struct sim_galaxy_df *df)
{
	free(df->psi);
	free(df->eps);
	free(df->f);
	free(df->gmax);
	df->psi = df->eps = df->f = df->gmax = NULL;
	df->n = 0;
}

/* The two grid radii around r: the larger bound (adjacent radii differ by
 * 0.7%, so the peak barely moves between them). */
double sim_galaxy_df_gmax(const struct sim_galaxy_df *df, double r)
{
	double x = (log(r) - df->lnr0) / df->dlnr;
	int i = x > 0 ? (int)x : 0;
	if (i >= df->n - 1)
		i = df->n - 2;
	return fmax(df->gmax[i], df->gmax[i + 1]);
}

double sim_galaxy_df_psi(const struct sim_galaxy_df *df, double r)
{
	double x = (log(r) - df->lnr0) / df->dlnr;
	if (!(x > 0))
		return df->psi[0];
	if (x >= df->n - 1)
		return df->psi[df->n - 1] * exp(df->lnr0 + (df->n - 1) * df->dlnr) / r;
	int i = (int)x;
	double w = x - i;
	return (1 - w) * df->psi[i] + w * df->psi[i + 1];
}

/* eps[] decreases with the index: bisection, then linear in e. */
double sim_galaxy_df_f(const struct sim_galaxy_df *df, double e)
{
	int n = df->n - 1;
	if (e <= df->eps[n - 1])
		return 0;
	if (e >= df->eps[0])
		return df->f[0];
	int lo = 0, hi = n - 1; /* eps[lo] > e >= eps[hi] */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (df->eps[mid] > e)
			lo = mid;
		else
			hi = mid;
	}
	double w = (df->eps[lo] - e) / (df->eps[lo] - df->eps[hi]);
	return (1 - w) * df->f[lo] + w * df->f[hi];
}
