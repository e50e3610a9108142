/* psort.c - a sort over the threads for the domains' per-body arrays
 * (dist.h, dist_psort): at hundreds of millions of bodies a rank, one
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
