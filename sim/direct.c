/* direct.c - softened direct-summation gravity on the CPU: every pair once,
 * in double. The oracle for the tree code and the GPU kernels.
 *
 * Pair (i, j), i < j: f = (x_j - x_i) / (r^2 + eps^2)^{3/2};
 * a_i += m_j f, a_j -= m_i f (Newton's third law, so sum_i m_i a_i = 0 up to
 * round-off). Rows i are handed out dynamically to threads; each thread
 * accumulates its rows' reactions on j in a private buffer, and the buffers
 * are summed at the end. Cost: ~20 flops per pair, n(n-1)/2 pairs.
 *
 * With a length per body or the spline kernel (struct sim_soft, the _soft
 * entry points) the pair takes e = max(eps_i, eps_j) (sim_soft_pair) and
 * sim/soften.h's factor and potential, in the same loops; plummer with one
 * length stays the loop above, bit for bit. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "direct_pair.h"
#include "sim.h"

/* Per-thread buffers cost 4n doubles each; above this many bytes in all,
 * use fewer threads rather than exhaust memory. */
#define DIRECT_BUF_LIMIT ((size_t)1 << 30)
/* Below this many bodies (~0.5M pairs, well under a millisecond) one thread
 * is faster than waking a team, and much faster on a busy machine. */
#define DIRECT_SERIAL_N 1000

/* Row i of the each-pair-once sum with one Plummer length (eps2 = eps^2):
 * its sum over j > i into ba[3 i..], bp[i], the reactions into ba[3 j..],
 * bp[j]. */
static void direct_row(const double *pos, const double *mass, size_t n, size_t i, double eps2,
		       double *ba, double *bp)
{
	const double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
	const double mi = mass[i];
	double ax = 0, ay = 0, az = 0, ph = 0;
	for (size_t j = i + 1; j < n; j++) {
		double d[3], rinv;
		const double rinv3 =
			sim_direct_pair(pos + 3 * j, xi, yi, zi, eps2, d, &rinv);
		const double mj = mass[j];
		ax += mj * d[0] * rinv3;
		ay += mj * d[1] * rinv3;
		az += mj * d[2] * rinv3;
		ph -= mj * rinv;
		ba[3 * j] -= mi * d[0] * rinv3;
		ba[3 * j + 1] -= mi * d[1] * rinv3;
		ba[3 * j + 2] -= mi * d[2] * rinv3;
		bp[j] -= mi * rinv;
	}
	ba[3 * i] += ax;
	ba[3 * i + 1] += ay;
	ba[3 * i + 2] += az;
	bp[i] += ph;
}

/* Row i with the softening s (a length per body, or the spline). */
static void direct_row_soft(const double *pos, const double *mass, size_t n, size_t i,
			    const struct sim_soft *s, double *ba, double *bp)
{
	const double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
	const double mi = mass[i], ei = s->each ? s->each[i] : s->eps;
	const int spline = s->kernel == SCENE_SOFT_SPLINE;
	double ax = 0, ay = 0, az = 0, ph = 0;
	for (size_t j = i + 1; j < n; j++) {
		double d[3], phi;
		const double e = s->each ? sim_soft_pair(ei, s->each[j]) : ei;
		const double f = sim_direct_pair_soft(pos + 3 * j, xi, yi, zi, e, spline, d, &phi);
		const double mj = mass[j];
		ax += mj * d[0] * f;
		ay += mj * d[1] * f;
		az += mj * d[2] * f;
		ph += mj * phi;
		ba[3 * j] -= mi * d[0] * f;
		ba[3 * j + 1] -= mi * d[1] * f;
		ba[3 * j + 2] -= mi * d[2] * f;
		bp[j] += mi * phi;
	}
	ba[3 * i] += ax;
	ba[3 * i + 1] += ay;
	ba[3 * i + 2] += az;
	bp[i] += ph;
}

int sim_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     double *acc, double *pot)
{
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = eps, .each = NULL};
	return sim_direct_accel_soft(pos, mass, n, &s, acc, pot);
}

int sim_direct_accel_soft(const double *pos, const double *mass, size_t n,
			  const struct sim_soft *sf, double *acc, double *pot)
{
	int nt = 1;
#ifdef _OPENMP
	if (n >= DIRECT_SERIAL_N)
		nt = omp_get_max_threads();
#endif
	while (nt > 1 && (size_t)nt * 4 * n * sizeof(double) > DIRECT_BUF_LIMIT)
		nt--;
	const size_t stride = 4 * n; /* per thread: acc (3n) then pot (n) */
	double *buf = calloc(stride * (size_t)nt + 1, sizeof *buf);
	if (!buf) {
		log_error("direct forces: out of memory for %d thread buffers of %zu bodies", nt, n);
		return NB_ERUNTIME;
	}
	const double eps2 = sf->eps * sf->eps;
	const int uniform = !sf->each && sf->kernel == SCENE_SOFT_PLUMMER;
	atomic_int stopped = 0; /* a stop request (sim_stop_requested) seen by some thread */

#pragma omp parallel num_threads(nt)
	{
		int t = 0;
#ifdef _OPENMP
		t = omp_get_thread_num();
#endif
		double *ba = buf + stride * (size_t)t;
		double *bp = ba + 3 * n;
#pragma omp for schedule(dynamic, 8)
		for (size_t i = 0; i < n; i++) {
			if (atomic_load_explicit(&stopped, memory_order_relaxed) || sim_stop_requested()) { /* one check per row: cheap next to it */
				atomic_store_explicit(&stopped, 1, memory_order_relaxed);
				continue;
			}
			if (uniform)
				direct_row(pos, mass, n, i, eps2, ba, bp);
			else
				direct_row_soft(pos, mass, n, i, sf, ba, bp);
		}
		/* implicit barrier: every buffer is complete; reduce in thread order */
#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			double s[4] = {0, 0, 0, 0};
			for (int u = 0; u < nt; u++) {
				const double *b = buf + stride * (size_t)u;
				s[0] += b[3 * i];
				s[1] += b[3 * i + 1];
				s[2] += b[3 * i + 2];
				s[3] += b[3 * n + i];
			}
			acc[3 * i] = s[0];
			acc[3 * i + 1] = s[1];
			acc[3 * i + 2] = s[2];
			if (pot)
				pot[i] = s[3];
		}
	}
	free(buf);
	return atomic_load(&stopped) ? NB_EINTR : 0;
}

/* Target i of the one-sided sum with the softening s: every source j != i
 * in order, into a[0..2] and *pot. */
static void direct_target_soft(const double *pos, const double *mass, long nl, long i,
			       const struct sim_soft *s, double a[3], double *pot)
{
	const double ei = s->each ? s->each[i] : s->eps;
	const int spline = s->kernel == SCENE_SOFT_SPLINE;
	double sum[4] = {0, 0, 0, 0};
	sim_direct_sum_soft(pos, mass, 0, (size_t)i, pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], ei,
			    s->each, spline, sum);
	sim_direct_sum_soft(pos, mass, (size_t)i + 1, (size_t)nl, pos[3 * i], pos[3 * i + 1],
			    pos[3 * i + 2], ei, s->each, spline, sum);
	a[0] = sum[0];
	a[1] = sum[1];
	a[2] = sum[2];
	*pot = sum[3];
}

int sim_direct_accel_active(const double *pos, const double *mass, size_t n, double eps,
			    const unsigned char *active, double *acc, double *pot)
{
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = eps, .each = NULL};
	return sim_direct_accel_active_soft(pos, mass, n, &s, active, acc, pot);
}

int sim_direct_accel_active_soft(const double *pos, const double *mass, size_t n,
				 const struct sim_soft *sf, const unsigned char *active,
				 double *acc, double *pot)
{
	const double eps2 = sf->eps * sf->eps;
	const int uniform = !sf->each && sf->kernel == SCENE_SOFT_PLUMMER;
	atomic_int stopped = 0;
	const long nl = (long)n;
#pragma omp parallel for schedule(dynamic, 8) if (n >= DIRECT_SERIAL_N)
	for (long i = 0; i < nl; i++) {
		if (active && !active[i])
			continue;
		if (atomic_load_explicit(&stopped, memory_order_relaxed) || sim_stop_requested()) {
			atomic_store_explicit(&stopped, 1, memory_order_relaxed);
			continue;
		}
		if (!uniform) {
			double ph;
			direct_target_soft(pos, mass, nl, i, sf, acc + 3 * i, &ph);
			if (pot)
				pot[i] = ph;
			continue;
		}
		const double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
		double ax = 0, ay = 0, az = 0, ph = 0;
		for (long j = 0; j < nl; j++) {
			if (j == i)
				continue;
			double d[3], rinv;
			const double rinv3 = sim_direct_pair(pos + 3 * j, xi, yi, zi, eps2, d, &rinv);
			ax += mass[j] * d[0] * rinv3;
			ay += mass[j] * d[1] * rinv3;
			az += mass[j] * d[2] * rinv3;
			ph -= mass[j] * rinv;
		}
		acc[3 * i] = ax;
		acc[3 * i + 1] = ay;
		acc[3 * i + 2] = az;
		if (pot)
			pot[i] = ph;
	}
	return atomic_load(&stopped) ? NB_EINTR : 0;
}
