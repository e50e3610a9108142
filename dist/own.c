/* own.c - which rank owns which bodies when each rank holds only its own
 * (simulation.ranks: domains; dist.h): a contiguous stretch of the Morton
 * curve over the GLOBAL bounding cube, cut where the running sum of the
 * bodies' measured work crosses r W / P.
 *
 * No rank sees every key. The cuts are found from histograms summed over
 * the ranks (dist_sum_doubles), refined seven times by 2^9 bins: the first
 * pass bins the whole 63-bit key range for every cut; each later pass bins
 * only the bin where its cut's target fell, 512 times finer, until a bin
 * is one key (63 = 7 x 9 bits). Each pass sums (P - 1) x 513 doubles over
 * the ranks, whatever the number of bodies: a global weighted histogram
 * (GADGET-4's domain decomposition counts a global tree's leaves the same
 * way; Keller et al. 2023's cornerstone octree its focus nodes). The result
 * is the cut a rank holding every key would make by the rule of
 * dist_domain_cut (a key's bodies go to the later rank when the running
 * sum plus half their weight reaches the target), except that bodies with
 * the same key are never split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/morton.h"
#include "dist.h"

#define OWN_BITS 9
#define OWN_BINS (1 << OWN_BITS)
#define OWN_PASSES 7 /* OWN_PASSES x OWN_BITS = 63 */

uint64_t dist_morton_key(const double p[3], const double lo[3], double scale)
{
	uint64_t k = 0;
	for (int a = 0; a < 3; a++) {
		double c = floor((p[a] - lo[a]) * scale);
		uint64_t u = c < 0 ? 0 : c > 2097151 ? 2097151 : (uint64_t)c;
		k |= sim_morton_spread(u) << a;
	}
	return k;
}

void dist_own_box(const double *pos, size_t n, double lo[3], double *scale)
{
	double v[6]; /* -lo, hi: one maximum over the ranks */
	for (int a = 0; a < 3; a++)
		v[a] = v[3 + a] = -INFINITY;
	double m0 = v[0], m1 = v[1], m2 = v[2], m3 = v[3], m4 = v[4], m5 = v[5];
#pragma omp parallel for schedule(static) reduction(max : m0, m1, m2, m3, m4, m5)
	for (size_t i = 0; i < n; i++) {
		const double *x = pos + 3 * i;
		m0 = fmax(m0, -x[0]), m1 = fmax(m1, -x[1]), m2 = fmax(m2, -x[2]);
		m3 = fmax(m3, x[0]), m4 = fmax(m4, x[1]), m5 = fmax(m5, x[2]);
	}
	v[0] = m0, v[1] = m1, v[2] = m2, v[3] = m3, v[4] = m4, v[5] = m5;
	dist_max_doubles(v, 6, "domains' box");
	double ext = 0;
	for (int a = 0; a < 3; a++) {
		lo[a] = isfinite(v[a]) ? -v[a] : 0;
		if (isfinite(v[a]) && isfinite(v[3 + a]))
			ext = fmax(ext, v[3 + a] + v[a]);
	}
	*scale = ext > 0 ? 2097152.0 / (ext * (1 + 1e-6)) : 0;
}

/* The first index k of the sorted keys with key[k] >= x. */
static size_t own_lower(const uint64_t *key, size_t n, uint64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (key[m] < x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* This rank's row of cut c: the weight of its keys in each of the 512 bins
 * of width wd from lo[c], and (last) the weight of its keys below lo[c].
 * pre: n + 1 prefix sums of the weights. */
static void own_hist_row(const uint64_t *key, const double *pre, size_t n, uint64_t lo,
			 uint64_t wd, double *row)
{
	size_t k0 = own_lower(key, n, lo);
	row[OWN_BINS] = pre[k0];
	for (int b = 0; b < OWN_BINS; b++) {
		size_t k1 = own_lower(key, n, lo + (uint64_t)(b + 1) * wd);
		row[b] = pre[k1] - pre[k0];
		k0 = k1;
	}
}

/* Cut c's bin from its summed row (target tgt): *lo moves to the bin the
 * target falls in; at the last pass (wd 1) the cut itself. */
static uint64_t own_pick(const double *row, uint64_t *lo, uint64_t wd, double tgt)
{
	double run = row[OWN_BINS];
	int b = 0;
	for (; b < OWN_BINS - 1; b++) {
		if (run + row[b] > tgt)
			break;
		run += row[b];
	}
	*lo += (uint64_t)b * wd;
	if (wd > 1)
		return *lo;
	return run + 0.5 * row[b] >= tgt ? *lo : *lo + 1; /* the half rule, per key */
}

void dist_own_cut(const uint64_t *key, const double *w, size_t n, int P, uint64_t *bound)
{
	const int nc = P - 1;
	double *pre = malloc((n + 1) * sizeof *pre);
	double *hist = malloc(((size_t)(nc > 0 ? nc : 1) * (OWN_BINS + 1) + 1) * sizeof *hist);
	uint64_t *lo = calloc((size_t)(nc > 0 ? nc : 1), sizeof *lo);
	if (!pre || !hist || !lo)
		dist_fail("out of memory for the domains' histograms");
	pre[0] = 0;
	for (size_t k = 0; k < n; k++)
		pre[k + 1] = pre[k] + (w ? w[k] : 1.0);
	bound[0] = 0;
	bound[P] = DIST_KEY_END;
	double total = pre[n];
	dist_sum_doubles(&total, 1, "domains' work");
	for (int pass = 0; pass < OWN_PASSES && nc > 0; pass++) {
		const uint64_t wd = (uint64_t)1 << (63 - OWN_BITS * (pass + 1));
		for (int c = 0; c < nc; c++)
			own_hist_row(key, pre, n, lo[c], wd, hist + (size_t)c * (OWN_BINS + 1));
		dist_sum_doubles(hist, nc * (OWN_BINS + 1), "domains' histogram");
		for (int c = 0; c < nc; c++)
			bound[c + 1] = own_pick(hist + (size_t)c * (OWN_BINS + 1), &lo[c], wd,
						total * (c + 1) / P);
	}
	for (int c = 1; c < P; c++)
		if (bound[c] < bound[c - 1])
			bound[c] = bound[c - 1];
	free(pre);
	free(hist);
	free(lo);
}

int dist_own_owner(const uint64_t *bound, int P, uint64_t key)
{
	int a = 0, b = P - 1; /* the last r with bound[r] <= key */
	while (a < b) {
		int m = a + (b - a + 1) / 2;
		if (bound[m] <= key)
			a = m;
		else
			b = m - 1;
	}
	return a;
}
