/* domain.c - the ranks' domains: runs of the Morton curve (the order
 * sim/tree.c and the GPU tree sort bodies in), cut so each rank's run
 * carries the same measured work (dist.h).
 *
 * Keys: 21 bits an axis over the bodies' bounding cube (lower corner the
 * bounds' minimum, side the largest extent), interleaved x lowest, as the
 * tree's octant numbering (x | y << 1 | z << 2) at each level. Bodies are
 * sorted by (key, index), so the order is a pure function of the
 * positions: every rank cuts the same domains from the same state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/morton.h"
#include "dist.h"

int dist_domain_init(struct dist_domain *d, size_t n, int P)
{
	memset(d, 0, sizeof *d);
	d->n = n;
	d->P = P;
	d->order = malloc((n ? n : 1) * sizeof *d->order);
	d->key = malloc((n ? n : 1) * sizeof *d->key);
	d->cut = calloc((size_t)P + 1, sizeof *d->cut);
	if (!d->order || !d->key || !d->cut) {
		log_error("out of memory for the domains of %zu bodies over %d ranks", n, P);
		dist_domain_free(d);
		return NB_ERUNTIME;
	}
	return 0;
}

void dist_domain_free(struct dist_domain *d)
{
	free(d->order);
	free(d->key);
	free(d->cut);
	memset(d, 0, sizeof *d);
}

static const uint64_t *g_sort_key; /* qsort has no context argument */

static int domain_cmp(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t ki = g_sort_key[i], kj = g_sort_key[j];
	if (ki != kj)
		return ki < kj ? -1 : 1;
	return (i > j) - (i < j);
}

int dist_domain_cut(struct dist_domain *d, const double *pos, const double *w)
{
	const size_t n = d->n;
	double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < 3; a++) {
			double x = pos[3 * i + a];
			if (i == 0 || x < lo[a])
				lo[a] = x;
			if (i == 0 || x > hi[a])
				hi[a] = x;
		}
	double ext = 0;
	for (int a = 0; a < 3; a++)
		ext = fmax(ext, hi[a] - lo[a]);
	const double scale = ext > 0 ? 2097152.0 / (ext * (1 + 1e-6)) : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = 0;
		for (int a = 0; a < 3; a++) {
			double c = floor((pos[3 * i + a] - lo[a]) * scale);
			uint64_t u = c < 0 ? 0 : c > 2097151 ? 2097151 : (uint64_t)c;
			k |= sim_morton_spread(u) << a;
		}
		d->key[i] = k;
		d->order[i] = (uint32_t)i;
	}
	g_sort_key = d->key;
	qsort(d->order, n, sizeof *d->order, domain_cmp);
	g_sort_key = NULL;
	/* cut by the running sum of w */
	double total = 0;
	for (size_t k = 0; k < n; k++)
		total += w ? w[d->order[k]] : 1.0;
	d->cut[0] = 0;
	double run = 0;
	size_t k = 0;
	for (int r = 1; r < d->P; r++) {
		const double target = total * r / d->P;
		while (k < n) {
			const double wk = w ? w[d->order[k]] : 1.0;
			if (run + 0.5 * wk >= target)
				break;
			run += wk;
			k++;
		}
		d->cut[r] = k;
	}
	d->cut[d->P] = n;
	return 0;
}

double dist_imbalance(const double *work, int P)
{
	double sum = 0, max = 0;
	for (int r = 0; r < P; r++) {
		sum += work[r];
		if (work[r] > max)
			max = work[r];
	}
	return sum > 0 ? max / (sum / P) : 1.0;
}

void dist_cut_by_time(const size_t *cut, const double *t, int P, size_t *out)
{
	const size_t n = cut[P];
	double total = 0;
	for (int r = 0; r < P; r++)
		total += t[r] > 0 && cut[r + 1] > cut[r] ? t[r] : 0;
	out[0] = 0;
	out[P] = n;
	if (!(total > 0)) { /* nothing measured: equal stretches */
		for (int k = 1; k < P; k++)
			out[k] = (size_t)((unsigned long long)n * (unsigned)k / (unsigned)P);
		return;
	}
	/* the cost runs linearly through each old stretch; cut k where it
	 * reaches k/P of the total */
	int r = 0;
	double before = 0; /* cost of the stretches before r */
	for (int k = 1; k < P; k++) {
		const double target = total * k / P;
		for (;;) {
			const double tr = t[r] > 0 && cut[r + 1] > cut[r] ? t[r] : 0;
			if (r == P - 1 || before + tr >= target)
				break;
			before += tr;
			r++;
		}
		const double tr = t[r] > 0 && cut[r + 1] > cut[r] ? t[r] : 0;
		const double len = (double)(cut[r + 1] - cut[r]);
		double x = tr > 0 ? (double)cut[r] + (target - before) / tr * len : (double)cut[r];
		size_t c = (size_t)(x + 0.5);
		if (c > n)
			c = n;
		if (c < out[k - 1])
			c = out[k - 1];
		out[k] = c;
	}
}
