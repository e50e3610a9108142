/* diag.c - conserved quantities of a state: kinetic and potential energy,
 * momentum, angular momentum, centre of mass; and the NaN/Inf scan the engine
 * runs after each advance. Sums run serially in body order so the numbers do
 * not depend on the thread count. */
#include <math.h>
#include <string.h>

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
