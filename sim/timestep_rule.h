/* timestep_rule.h - the level rule of individual (block) time steps, one
 * code for the CPU (sim/timestep.c) and the GPU (sim/cuda/sim_levels.cu).
 * docs/PHYSICS.md, section Individual time steps.
 *
 * Level L steps by dt_L = dt_max / 2^L, L in [0, max_level]. A block step
 * of plan P (the finest level occupied when it starts) is cut into 2^P
 * ticks of dt_max / 2^P; at tick t (1..2^P) the bodies whose step ends are
 * those with L >= sim_ts_active_level(t, P): every level whose step
 * divides t dt_max / 2^P. At t = 2^P every body is active (the block end,
 * a synchronisation point: the frames fall on these). */
#ifndef NB_TIMESTEP_RULE_H
#define NB_TIMESTEP_RULE_H

#ifdef __CUDACC__
#define SIM_TS_HD __host__ __device__
#else
#include <math.h>
#define SIM_TS_HD
#endif

#define SIM_TS_LEVELS 21 /* levels 0..20 (simulation.max_level <= 20) */

/* The level a body with acceleration |a|^2 = a2 wants: the smallest L with
 * dt_max / 2^L <= dt_i = min(dt_max, sqrt(2 eta eps / |a|)) (GADGET-2,
 * Springel 2005, eq. 34), at most max_level. Squared, without roots or
 * logarithms: r2 = dt_max^2 |a| / (2 eta eps) = (dt_max / dt_i)^2, and each
 * level divides it by 4 exactly, so float and double agree except where
 * r2 itself rounds across a power of 4. A non-finite a2 gets max_level (the
 * finiteness check reports it). */
static inline SIM_TS_HD int sim_ts_want_level(double a2, double dt_max, double eta, double eps,
					      int max_level)
{
	if (!(a2 >= 0.0) || a2 > 1e300)
		return max_level;
	double r2 = dt_max * dt_max * sqrt(a2) / (2.0 * eta * eps);
	int L = 0;
	while (L < max_level && r2 > 1.0) {
		r2 *= 0.25;
		L++;
	}
	return L;
}

/* The level a body now on level cur wants, with a margin against moving
 * to a coarser level: a finer level at once (as sim_ts_want_level), a
 * coarser one only as far as dt_i >= margin x that level's step, i.e. the
 * smallest L >= sim_ts_want_level with (margin dt_L / dt_i)^2 <= 1, never
 * finer than cur. margin <= 1 (or 0, zero-initialised): the plain rule.
 * A body whose dt_i hovers at a level's boundary then changes level once
 * instead of at every step end (simulation.coarsen_margin; docs/PHYSICS.md;
 * measured in docs/BENCHMARKS.md, issue 18). */
static inline SIM_TS_HD int sim_ts_want_level_from(double a2, double dt_max, double eta, double eps,
						   int max_level, int cur, double margin)
{
	if (!(a2 >= 0.0) || a2 > 1e300)
		return max_level;
	double r2 = dt_max * dt_max * sqrt(a2) / (2.0 * eta * eps);
	int L = 0;
	while (L < max_level && r2 > 1.0) {
		r2 *= 0.25;
		L++;
	}
	if (margin > 1.0) {
		r2 *= margin * margin;
		while (L < cur && r2 > 1.0) {
			r2 *= 0.25;
			L++;
		}
	}
	return L;
}

/* Coarsest active level at tick t (1..2^plan) of a block of plan P: the
 * bodies with L >= it end their step at t. 0 at the block end. */
static inline SIM_TS_HD int sim_ts_active_level(long t, int plan)
{
	if (t >= (1L << plan))
		return 0;
	int tz = 0;
	while (!(t & 1L)) {
		t >>= 1;
		tz++;
	}
	return plan - tz;
}

/* The level an active body takes at the end of its step, tick t of a block
 * of plan P whose active level is la: what it wants, kept synchronised
 * (GADGET-2 sec. 4; Dehnen & Read 2011 sec. 3.2): a smaller step at any
 * step end, but not below the block's finest tick (P) before the block
 * ends; a larger step only where that step's boundary falls, i.e. a level
 * >= la. At the block end (la = 0) every level is synchronised and only
 * max_level bounds it. */
static inline SIM_TS_HD int sim_ts_next_level(int want, int la, int plan, int block_end)
{
	if (block_end)
		return want;
	if (want < la)
		want = la;
	return want > plan ? plan : want;
}

/* Ticks between tree rebuilds in a block of plan P (GPU, opening bmax):
 * the tree is rebuilt at the ticks that end a step of level rl (the
 * largest level whose step dt_max / 2^rl is at most rebuild_dt) and at the
 * block end, and refitted in between; but never refitted twice in a row
 * (stride at most 2). A refit keeps the build's cells, whose bmax grows
 * with the drift: on the default scene's 1M bodies the walk's work after a
 * drift of 0.19 / 0.38 / 0.75 / 1.5 / 3 Myr is 1.07 / 1.25 / 1.95 / 4.4 /
 * 11.7 times a rebuilt tree's (tests/test_timestep.c, docs/BENCHMARKS.md
 * issue 18), while a refit saves only ~0.6 ms of a 0.82 ms build. Before
 * this cap, simulation.dt = 3 Myr refitted 7 ticks of 8 and ran 5x slower.
 * rebuild_dt <= 0: every tick rebuilds (stride 1). */
static inline SIM_TS_HD long sim_ts_rebuild_stride(int plan, double dt_max, double rebuild_dt)
{
	if (rebuild_dt <= 0)
		return 1;
	int rl = 0;
	while (rl < plan && ldexp(dt_max, -rl) > rebuild_dt * (1 + 1e-9))
		rl++;
	long stride = 1L << (plan - rl);
	return stride > 2 ? 2 : stride;
}

#endif
