/* psort.c - the sort over the threads for the domains' per-body records
 * (dist.h, dist_psort): at hundreds of millions of bodies a rank, one
 * thread's qsort of the migrated bodies or of the cuts' keys took longer
 * than the step (4M bodies: 1.8 s against a 37 ms force on an H200), and
 * chunks by qsort merged pairwise after it still ended in one thread's
 * merge of every record (16M on 16 cores: the migration 922 ms a call).
 * Every record sorted here is led by its 64-bit key. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

/* LSD radix over the threads: 11-bit digits, 6 passes (a pass whose digit is the
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

int dist_psort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	int T = omp_get_max_threads();
	T = T < 1 ? 1 : T > 64 ? 64 : T;
	char *scratch = n >= 4096 ? malloc(n * size) : NULL;
	size_t *cnt = scratch ? malloc((size_t)T * RX_B * sizeof *cnt) : NULL;
	if (!cnt) { /* small, or no scratch: one thread's comparison sort */
		free(scratch);
		qsort(base, n, size, cmp);
		return 0;
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
