/* psort.c - sorts over the threads for the domains' per-body arrays
 * (dist.h, dist_psort, dist_psort_key64): at hundreds of millions of
 * bodies a rank, one
 * thread's qsort of the migrated bodies or of the cuts' keys took longer
 * than the step (4M bodies: 1.8 s against a 37 ms force on an H200).
 *
 * The array is cut into one chunk a thread, each chunk sorted by qsort,
 * then neighbouring runs are merged pairwise, round after round (the
 * merges of one round in parallel), through one scratch array of the same
 * size. Stable between chunks (a merge takes the left run's element on a
 * tie), so with a total order (every comparator here breaks ties by id)
 * the result is qsort's, whatever the thread count. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

/* Merge the sorted runs a[0, na) and b[0, nb) into out. */
static void psort_merge(const char *a, size_t na, const char *b, size_t nb, char *out, size_t size,
			int (*cmp)(const void *, const void *))
{
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		if (cmp(b + j * size, a + i * size) < 0)
			memcpy(out, b + j++ * size, size);
		else
			memcpy(out, a + i++ * size, size);
		out += size;
	}
	memcpy(out, a + i * size, (na - i) * size);
	memcpy(out + (na - i) * size, b + j * size, (nb - j) * size);
}

int dist_psort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	int T = omp_get_max_threads();
	if (T > 64)
		T = 64;
	if (T < 2 || n < 100000) {
		qsort(base, n, size, cmp);
		return 0;
	}
	char *scratch = malloc(n * size);
	if (!scratch) { /* the slow way, in place */
		qsort(base, n, size, cmp);
		return 0;
	}
	size_t cut[65];
	for (int t = 0; t <= T; t++)
		cut[t] = n * (size_t)t / (size_t)T;
	char *src = base, *dst = scratch;
#pragma omp parallel for schedule(static, 1) num_threads(T)
	for (int t = 0; t < T; t++)
		qsort(src + cut[t] * size, cut[t + 1] - cut[t], size, cmp);
	for (int w = 1; w < T; w *= 2) { /* runs [cut[t], cut[t + w]) merged in pairs */
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
		for (int t = 0; t < T; t += 2 * w) {
			const int m = t + w < T ? t + w : T, e = t + 2 * w < T ? t + 2 * w : T;
			psort_merge(src + cut[t] * size, cut[m] - cut[t], src + cut[m] * size,
				    cut[e] - cut[m], dst + cut[t] * size, size, cmp);
		}
		char *sw = src;
		src = dst;
		dst = sw;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(scratch);
	return 0;
}

/* ---- records led by a 64-bit key: LSD radix over the threads ------------
 * dist_psort_key64: 11-bit digits, 6 passes (a pass whose digit is the
 * same for every record is skipped: a rank's keys share their top bits),
 * each a stable counting scatter over the threads (one contiguous chunk a
 * thread; bucket-major, thread-minor places, so the order within a digit
 * is the input's), through one scratch array. Then every run of equal keys
 * is sorted by cmp (qsort; rare, short). */
enum { RX_BITS = 11, RX_B = 1 << RX_BITS, RX_PASSES = (64 + RX_BITS - 1) / RX_BITS };

static uint64_t rx_key(const char *rec)
{
	uint64_t k;
	memcpy(&k, rec, sizeof k);
	return k;
}

/* One pass on digit d from src to dst (n records of size bytes, T threads,
 * cnt: T x RX_B scratch). 0 when every record has the same digit (nothing
 * moved), else 1. */
static int rx_pass(const char *src, char *dst, size_t n, size_t size, int T, int d, size_t *cnt)
{
	const int sh = d * RX_BITS;
	memset(cnt, 0, (size_t)T * RX_B * sizeof *cnt);
#pragma omp parallel for schedule(static, 1) num_threads(T)
	for (int t = 0; t < T; t++) {
		size_t *c = cnt + (size_t)t * RX_B;
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++)
			c[(rx_key(src + i * size) >> sh) & (RX_B - 1)]++;
	}
	size_t at = 0;
	int used = 0;
	for (int b = 0; b < RX_B; b++) {
		size_t in_b = 0;
		for (int t = 0; t < T; t++) {
			const size_t c = cnt[(size_t)t * RX_B + (size_t)b];
			cnt[(size_t)t * RX_B + (size_t)b] = at + in_b;
			in_b += c;
		}
		used += in_b > 0;
		at += in_b;
	}
	if (used <= 1)
		return 0;
#pragma omp parallel for schedule(static, 1) num_threads(T)
	for (int t = 0; t < T; t++) {
		size_t *c = cnt + (size_t)t * RX_B;
		for (size_t i = n * (size_t)t / (size_t)T; i < n * (size_t)(t + 1) / (size_t)T; i++) {
			const char *r = src + i * size;
			memcpy(dst + c[(rx_key(r) >> sh) & (RX_B - 1)]++ * size, r, size);
		}
	}
	return 1;
}

int dist_psort_key64(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	int T = omp_get_max_threads();
	T = T < 1 ? 1 : T > 64 ? 64 : T;
	char *scratch = n >= 4096 ? malloc(n * size) : NULL;
	size_t *cnt = scratch ? malloc((size_t)T * RX_B * sizeof *cnt) : NULL;
	if (!cnt) { /* small, or no scratch: the comparison sort */
		free(scratch);
		return dist_psort(base, n, size, cmp);
	}
	char *src = base, *dst = scratch;
	for (int d = 0; d < RX_PASSES; d++)
		if (rx_pass(src, dst, n, size, T, d, cnt)) {
			char *sw = src;
			src = dst;
			dst = sw;
		}
	if (src != base)
		memcpy(base, src, n * size);
	free(scratch);
	free(cnt);
	char *a = base; /* runs of one key: their order by cmp */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && rx_key(a + j * size) == rx_key(a + i * size))
			j++;
		if (j - i > 1)
			qsort(a + i * size, j - i, size, cmp);
		i = j;
	}
	return 0;
}
