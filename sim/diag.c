/* diag.c - conserved quantities of a state: kinetic and potential energy,
 * momentum, angular momentum, centre of mass; and the NaN/Inf scan the engine
 * runs after each advance. Sums run serially in body order so the numbers do
 * not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "../scene/log.h"

#include "sim.h"

void sim_diag_compute(const struct sim_state *st, struct sim_diag *d)
{
	memset(d, 0, sizeof *d);
	double kin = 0, pot = 0;
	for (size_t i = 0; i < st->n; i++) {
		const double m = st->mass[i];
		const double *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		kin += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		if (st->pot)
			pot += 0.5 * m * st->pot[i]; /* each pair counted from both ends */
		d->mass += m;
		for (int c = 0; c < 3; c++) {
			d->p[c] += m * v[c];
			d->com[c] += m * x[c];
		}
		d->l[0] += m * (x[1] * v[2] - x[2] * v[1]);
		d->l[1] += m * (x[2] * v[0] - x[0] * v[2]);
		d->l[2] += m * (x[0] * v[1] - x[1] * v[0]);
	}
	d->kinetic = kin;
	d->potential = st->pot ? pot : NAN;
	d->total = d->kinetic + d->potential;
	for (int c = 0; c < 3; c++) {
		d->comv[c] = d->mass > 0 ? d->p[c] / d->mass : 0;
		d->com[c] = d->mass > 0 ? d->com[c] / d->mass : 0;
	}
}

long sim_diag_find_nonfinite(const struct sim_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		for (int c = 0; c < 3; c++) {
			if (!isfinite(st->pos[3 * i + c]) || !isfinite(st->vel[3 * i + c]) ||
			    !isfinite(st->acc[3 * i + c]))
				return (long)i;
		}
	}
	return -1;
}

double sim_diag_energy_error(const struct sim_diag *d0, const struct sim_diag *d)
{
	double scale = fabs(d0->total);
	/* a total near zero (a marginally bound system): measure against the
	 * energies themselves instead */
	double parts = fabs(d0->kinetic) + fabs(d0->potential);
	if (scale < 1e-3 * parts)
		scale = parts;
	if (!isfinite(d->total) || !isfinite(d0->total) || !(scale > 0))
		return NAN;
	return fabs(d->total - d0->total) / scale;
}

int sim_diag_check_energy(const struct sim_state *st, const struct sim_diag *d0,
			  const struct sim_diag *d, double max_error)
{
	double err = sim_diag_energy_error(d0, d);
	if (!(max_error > 0) || !(err > max_error)) /* NaN (no potential): not checked */
		return 0;
	size_t worst = 0;
	double vmax = -1;
	for (size_t i = 0; i < st->n; i++) {
		const double *v = st->vel + 3 * i;
		double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
		if (v2 > vmax)
			vmax = v2, worst = i;
	}
	const char *comp = st->n && st->comp[worst] < st->ncomp ? st->comps[st->comp[worst]].name : "?";
	log_error("step %ld (t = %g internal units): the total energy drifted by %.3g of its initial "
		  "value (%.6g -> %.6g), more than simulation.max_energy_error = %g: the integration "
		  "has blown up; the fastest body is %u of component '%s' (speed %.3g): time step too "
		  "large or softening too small: try simulation.dt smaller or simulation.softening larger",
		  st->step, st->time, err, d0->total, d->total, max_error,
		  st->n ? (unsigned)st->id[worst] : 0u, comp, sqrt(vmax > 0 ? vmax : 0));
	return NB_ERUNTIME;
}

double sim_diag_crossing_time(const struct sim_state *st, double eps, double *v_rms)
{
	double mean[3] = {0, 0, 0}, s2 = 0;
	const size_t n = st->n;
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < 3; a++)
			mean[a] += st->vel[3 * i + a];
	for (int a = 0; a < 3; a++)
		mean[a] = n ? mean[a] / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < 3; a++) {
			const double d = st->vel[3 * i + a] - mean[a];
			s2 += d * d;
		}
	const double v = n ? sqrt(s2 / (double)n) : 0;
	if (v_rms)
		*v_rms = v;
	return v > 0 ? eps / v : INFINITY;
}
