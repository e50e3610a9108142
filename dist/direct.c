/* direct.c - the direct sum for a rank's own bodies, in the order
 * sim_direct_accel sums them on one thread, so a distributed run matches
 * a single process bit for bit (dist.h).
 *
 * sim_direct_accel on one thread visits rows i = 0, 1, ...; body i first
 * receives the reactions of rows k < i into its buffer (subtracting
 * m_k (x_i - x_k) / s^3 in order of k), then adds the sum over j > i it
 * accumulated from zero. The same expressions are written here in the same
 * order for one body at a time (the pair term is sim/direct_pair.h's, as
 * there): no reactions, so every body is independent
 * and the OpenMP loop over rows needs no buffers. Cost: ~20 flops per
 * (row, body), n per row: twice each-pair-once's n^2 / 2. */
#include "../sim/direct_pair.h"
#include "dist.h"

/* Body i's row with one Plummer length (eps2 = eps^2): the reactions of
 * rows k < i, then its own sum over j > i; out[0..3] = ax ay az phi. */
static void direct_row(const double *pos, const double *mass, size_t n, size_t i, double eps2,
		       double out[4])
{
	const double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
	/* reactions of rows k < i: ba[3 i] -= m_k dx rinv3, dx = x_i - x_k */
	double bx = 0, by = 0, bz = 0, bp = 0;
	for (size_t k = 0; k < i; k++) {
		/* row k's pair term with body i: d = x_i - x_k */
		double d[3], rinv;
		const double rinv3 = sim_direct_pair(pos + 3 * i, pos[3 * k], pos[3 * k + 1],
						     pos[3 * k + 2], eps2, d, &rinv);
		const double mk = mass[k];
		bx -= mk * d[0] * rinv3;
		by -= mk * d[1] * rinv3;
		bz -= mk * d[2] * rinv3;
		bp -= mk * rinv;
	}
	/* row i's own sum over j > i */
	double ax = 0, ay = 0, az = 0, ph = 0;
	for (size_t j = i + 1; j < n; j++) {
		double d[3], rinv;
		const double rinv3 = sim_direct_pair(pos + 3 * j, xi, yi, zi, eps2, d, &rinv);
		const double mj = mass[j];
		ax += mj * d[0] * rinv3;
		ay += mj * d[1] * rinv3;
		az += mj * d[2] * rinv3;
		ph -= mj * rinv;
	}
	/* the buffer's += at row i, then the thread reduction's 0 + b */
	out[0] = 0.0 + (bx + ax);
	out[1] = 0.0 + (by + ay);
	out[2] = 0.0 + (bz + az);
	out[3] = 0.0 + (bp + ph);
}

/* Body i's row with the softening s, in the same order, the terms
 * sim/direct.c's direct_row_soft writes (the reactions: d = x_i - x_k, so
 * subtracted; its own sum: sim_direct_sum_soft). */
static void direct_row_soft(const double *pos, const double *mass, size_t n, size_t i,
			    const struct sim_soft *s, double out[4])
{
	const double ei = s->each ? s->each[i] : s->eps;
	const int spline = s->kernel == SCENE_SOFT_SPLINE;
	double bx = 0, by = 0, bz = 0, bp = 0;
	for (size_t k = 0; k < i; k++) {
		double d[3], phi;
		const double e = s->each ? sim_soft_pair(s->each[k], ei) : ei;
		const double f = sim_direct_pair_soft(pos + 3 * i, pos[3 * k], pos[3 * k + 1],
						      pos[3 * k + 2], e, spline, d, &phi);
		const double mk = mass[k];
		bx -= mk * d[0] * f;
		by -= mk * d[1] * f;
		bz -= mk * d[2] * f;
		bp += mk * phi;
	}
	double a[4] = {0, 0, 0, 0};
	sim_direct_sum_soft(pos, mass, i + 1, n, pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], ei,
			    s->each, spline, a);
	out[0] = 0.0 + (bx + a[0]);
	out[1] = 0.0 + (by + a[1]);
	out[2] = 0.0 + (bz + a[2]);
	out[3] = 0.0 + (bp + a[3]);
}

void dist_direct_rows(const double *pos, const double *mass, size_t n, double eps,
		      const uint32_t *rows, size_t nrows, double *out)
{
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = eps, .each = NULL};
	dist_direct_rows_soft(pos, mass, n, &s, rows, nrows, out);
}

void dist_direct_rows_soft(const double *pos, const double *mass, size_t n,
			   const struct sim_soft *s, const uint32_t *rows, size_t nrows,
			   double *out)
{
	const int uniform = !s->each && s->kernel == SCENE_SOFT_PLUMMER;
	const double eps2 = s->eps * s->eps;
	int stopped = 0; /* a stop request seen: the rows left are skipped (dist.h) */
#pragma omp parallel for schedule(dynamic, 8) if (nrows >= 64)
	for (size_t r = 0; r < nrows; r++) {
		int seen;
#pragma omp atomic read
		seen = stopped;
		if (seen || (r % 64 == 0 && sim_stop_requested())) {
#pragma omp atomic write
			stopped = 1;
			continue;
		}
		if (uniform)
			direct_row(pos, mass, n, rows[r], eps2, out + 4 * r);
		else
			direct_row_soft(pos, mass, n, rows[r], s, out + 4 * r);
	}
}
