/* timestep.c - individual (block) time steps on the CPU: kick-drift-kick
 * across a power-of-two hierarchy of levels (GADGET-2, Springel 2005,
 * sec. 4; Dehnen & Read 2011, sec. 3.2). The level rule is shared with the
 * GPU (sim/timestep_rule.h); docs/PHYSICS.md, section Individual time
 * steps, says what of leapfrog's behaviour is kept and what is lost.
 *
 * One block step of dt_max, plan P = finest level occupied at its start,
 * ticks of h = dt_max / 2^P:
 *   tick 0:  every body opens its step: v += a dt_L / 2
 *   tick t:  every body drifts x += v h (positions for the tree);
 *            the active bodies (L >= la(t)) get a(x) and close their step:
 *            v += a dt_L / 2; then take their next level and open it:
 *            v += a dt_L' / 2 (at the block end the opening waits for the
 *            next block, so v is synchronised at every block end).
 * Only the active bodies' forces are computed (force(active)), from every
 * body's position. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "timestep_rule.h"

#define TS_PARALLEL_MIN 20000

/* Body i's softening for its step, dt_i = sqrt(2 eta eps_i / |a_i|): its
 * own (its component's) when the lengths differ (GADGET's rule takes the
 * body's softening), else simulation.softening. */
static double ts_eps(const struct sim_params *p, const struct sim_state *st, size_t i)
{
	return p->soft_mixed ? st->comps[st->comp[i]].softening : p->softening;
}

/* hist of lev (n) and changes += this block step's level changes, both
 * summed over the ranks (one sum) when ts has a sum */
static void ts_hist(struct sim_ts *ts, size_t n, long changes)
{
	sim_ts_histogram(ts->lev, n, ts->hist);
	if (!ts->sum) {
		ts->changes += changes;
		return;
	}
	double h[SIM_TS_LEVELS + 1];
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		h[L] = (double)ts->hist[L];
	h[SIM_TS_LEVELS] = (double)changes;
	ts->sum(ts->sum_ctx, h, SIM_TS_LEVELS + 1);
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		ts->hist[L] = (long)h[L];
	ts->changes += (long)h[SIM_TS_LEVELS];
}

int sim_ts_init(struct sim_ts *ts, const struct sim_params *p, const struct sim_state *st)
{
	return sim_ts_init_over(ts, p, st, NULL, NULL);
}

int sim_ts_init_over(struct sim_ts *ts, const struct sim_params *p, const struct sim_state *st,
		     void (*sum)(void *ctx, double *v, int n), void *ctx)
{
	memset(ts, 0, sizeof *ts);
	ts->p = *p;
	ts->sum = sum;
	ts->sum_ctx = ctx;
	size_t n = st->n ? st->n : 1;
	ts->lev = malloc(n);
	ts->active = malloc(n);
	ts->cap = n;
	if (!ts->lev || !ts->active) {
		log_error("individual time steps: out of memory for %zu bodies", st->n);
		sim_ts_free(ts);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < st->n; i++) {
		const double *a = st->acc + 3 * i;
		ts->lev[i] = (unsigned char)sim_ts_want_level(a[0] * a[0] + a[1] * a[1] + a[2] * a[2],
							      p->dt_max, p->eta, ts_eps(p, st, i),
							      p->max_level);
	}
	ts_hist(ts, st->n, 0);
	return 0;
}

void sim_ts_free(struct sim_ts *ts)
{
	free(ts->lev);
	free(ts->active);
	ts->lev = NULL;
	ts->active = NULL;
}

void sim_ts_histogram(const unsigned char *lev, size_t n, long hist[SIM_TS_LEVELS])
{
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		hist[L] = 0;
	for (size_t i = 0; i < n; i++)
		hist[lev[i] < SIM_TS_LEVELS ? lev[i] : SIM_TS_LEVELS - 1]++;
}

int sim_ts_plan(const long hist[SIM_TS_LEVELS])
{
	int plan = 0;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		if (hist[L] > 0)
			plan = L;
	return plan;
}

/* v += a dt_L / 2 for the bodies with L >= la (every one when la = 0). */
static void ts_kick(struct sim_state *st, const unsigned char *lev, int la, double dt_max)
{
	const long n = (long)st->n;
#pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
	for (long i = 0; i < n; i++) {
		if (lev[i] < la)
			continue;
		const double h = 0.5 * ldexp(dt_max, -(int)lev[i]);
		for (int d = 0; d < 3; d++)
			st->vel[3 * i + d] += st->acc[3 * i + d] * h;
	}
}

static void ts_drift(struct sim_state *st, double h)
{
	const size_t m = 3 * st->n;
#pragma omp parallel for schedule(static) if (m >= 3 * TS_PARALLEL_MIN)
	for (size_t k = 0; k < m; k++)
		st->pos[k] += st->vel[k] * h;
}

int sim_ts_block_step(struct sim_ts *ts, struct sim_state *st, sim_force_active_fn force,
		      void *ctx, int need_potential)
{
	const struct sim_params *p = &ts->p;
	const int plan = sim_ts_plan(ts->hist);
	const long ticks = 1L << plan;
	const double h = ldexp(p->dt_max, -plan);
	const size_t n = st->n;
	if (n > ts->cap) { /* the bodies changed (migration over ranks) */
		unsigned char *a = realloc(ts->active, n);
		if (!a) {
			log_error("individual time steps: out of memory for %zu bodies", n);
			return NB_ERUNTIME;
		}
		ts->active = a;
		ts->cap = n;
	}
	unsigned char *lev = ts->lev;
	long changes = 0;

	ts_kick(st, lev, 0, p->dt_max); /* every body opens its step */
	for (long t = 1; t <= ticks; t++) {
		if (sim_stop_requested())
			return NB_EINTR;
		const int la = sim_ts_active_level(t, plan);
		const int end = t == ticks;
		ts_drift(st, h);
		size_t nact = 0;
		for (size_t i = 0; i < n; i++) {
			ts->active[i] = lev[i] >= la;
			nact += ts->active[i];
		}
		double all = (double)nact; /* over ranks: a tick is every rank's or none's */
		if (ts->sum)
			ts->sum(ts->sum_ctx, &all, 1);
		if (all == 0)
			continue; /* every body on this tick's levels moved to a larger step */
		int err = force(st->pos, st->mass, n, la == 0 ? NULL : ts->active, ctx, st->acc,
				need_potential && end ? st->pot : NULL);
		if (err)
			return err;
		ts->evals += all;
		ts->ticks++;
		ts_kick(st, lev, la, p->dt_max); /* the active bodies close their step */
		for (size_t i = 0; i < n; i++) {
			if (lev[i] < la)
				continue;
			const double *a = st->acc + 3 * i;
			int want = sim_ts_want_level_from(a[0] * a[0] + a[1] * a[1] + a[2] * a[2],
							  p->dt_max, p->eta, ts_eps(p, st, i), p->max_level,
							  lev[i], p->coarsen_margin);
			int L2 = sim_ts_next_level(want, la, plan, end);
			changes += L2 != lev[i];
			lev[i] = (unsigned char)L2;
		}
		if (!end)
			ts_kick(st, lev, la, p->dt_max); /* and open the next one */
	}
	ts_hist(ts, n, changes);
	ts->blocks++;
	st->time += p->dt_max;
	return 0;
}

void sim_ts_format_hist(const long hist[SIM_TS_LEVELS], char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int L = 0; L < SIM_TS_LEVELS && k + 1 < len; L++) {
		if (hist[L] == 0)
			continue;
		int w = snprintf(buf + k, len - k, "%sL%d %ld", k ? ", " : "", L, hist[L]);
		if (w < 0)
			break;
		k += (size_t)w;
	}
	if (k == 0)
		snprintf(buf, len, "none");
}
