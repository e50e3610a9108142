/* bench_util.c - what every benchmark needs: comma-separated sizes,
 * medians and a wall clock (see bench.h). */
#include <stdlib.h>
#include <time.h>

#include "bench.h"

int bench_parse_sizes(const char *s, size_t *out, int max, double limit)
{
	int k = 0;
	while (*s && k < max) {
		char *end;
		double v = strtod(s, &end);
		if (end == s || v < 1 || v > limit || (*end && *end != ','))
			return -1;
		out[k++] = (size_t)v;
		s = *end == ',' ? end + 1 : end;
	}
	return k;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

