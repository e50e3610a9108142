/* test_rng.c - the counter-based generator (sim/rng.c): a pure function of
 * (seed, stream, counter), uniform on (0, 1), streams uncorrelated.
 * Run: make BUILD=build CUDA=0 build/tests/test_rng && build/tests/test_rng */
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "sim/sim.h"

START_TEST(rng_is_a_pure_function)
{
	/* evaluated in different orders, the same triple gives the same bits */
	uint64_t a[64], b[64];
	for (int k = 0; k < 64; k++)
		a[k] = sim_rng_u64(42, 7, (uint64_t)k);
	for (int k = 63; k >= 0; k--)
		b[k] = sim_rng_u64(42, 7, (uint64_t)k);
	ck_assert(memcmp(a, b, sizeof a) == 0);
	/* and any change of seed, stream or counter changes the output */
	ck_assert(sim_rng_u64(42, 7, 0) != sim_rng_u64(43, 7, 0));
	ck_assert(sim_rng_u64(42, 7, 0) != sim_rng_u64(42, 8, 0));
	ck_assert(sim_rng_u64(42, 7, 0) != sim_rng_u64(42, 7, 1));
	ck_assert(sim_rng_u64(0, 0, 0) != sim_rng_u64(0, 0, 1));
}
END_TEST

START_TEST(rng_uniform_mean_variance_and_bins)
{
	/* mean 1/2 and variance 1/12 within 5 sigma; chi-square over 100 equal
	 * bins below the 99.99% point of chi^2 with 99 d.o.f. (~ 153) */
	const int n = 1000000, nbin = 100;
	static long bins[100];
	memset(bins, 0, sizeof bins);
	double s = 0, s2 = 0, lo = 1, hi = 0;
	for (int k = 0; k < n; k++) {
		double u = sim_rng_uniform(1234, 99, (uint64_t)k);
		ck_assert(u > 0 && u < 1);
		s += u;
		s2 += u * u;
		lo = fmin(lo, u);
		hi = fmax(hi, u);
		bins[(int)(u * nbin)]++;
	}
	double mean = s / n, var = s2 / n - mean * mean;
	ck_assert_close(mean, 0.5, 5 * sqrt(1.0 / 12 / n), 0);
	/* var of u^2 is 4/45; of the variance estimator ~ 1/(180 n) */
	ck_assert_close(var, 1.0 / 12, 5 * sqrt(1.0 / 180 / n), 0);
	double chi2 = 0, e = (double)n / nbin;
	for (int b = 0; b < nbin; b++)
		chi2 += (bins[b] - e) * (bins[b] - e) / e;
	ck_assert_msg(chi2 < 153, "chi2 = %g over 99 d.o.f.", chi2);
	ck_assert(lo < 1e-5 && hi > 1 - 1e-5);
}
END_TEST

START_TEST(rng_streams_and_counters_uncorrelated)
{
	/* Pearson correlation of neighbouring streams and of neighbouring
	 * counters, and of the same counter under seeds s and s+1: |r| below
	 * 5 / sqrt(n) */
	const int n = 200000;
	double r[3];
	for (int t = 0; t < 3; t++) {
		double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
		for (int k = 0; k < n; k++) {
			double x = sim_rng_uniform(5, (uint64_t)k, 0);
			double y = t == 0 ? sim_rng_uniform(5, (uint64_t)k + 1, 0)
				 : t == 1 ? sim_rng_uniform(5, (uint64_t)k, 1)
					  : sim_rng_uniform(6, (uint64_t)k, 0);
			sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
		}
		double cov = sxy / n - sx / n * sy / n;
		r[t] = cov / sqrt((sxx / n - sx / n * sx / n) * (syy / n - sy / n * sy / n));
		ck_assert_msg(fabs(r[t]) < 5 / sqrt(n), "case %d: correlation %g", t, r[t]);
	}
}
END_TEST

START_TEST(rng_bits_balanced)
{
	/* each of the 64 output bits is set half the time (5 sigma), even for
	 * consecutive small counters of stream 0 under seed 0 */
	const int n = 100000;
	static long ones[64];
	memset(ones, 0, sizeof ones);
	for (int k = 0; k < n; k++) {
		uint64_t x = sim_rng_u64(0, 0, (uint64_t)k);
		for (int b = 0; b < 64; b++)
			ones[b] += (long)((x >> b) & 1);
	}
	for (int b = 0; b < 64; b++)
		ck_assert_msg(fabs(ones[b] - n / 2.0) < 5 * sqrt(n / 4.0), "bit %d set %ld of %d", b,
			      ones[b], n);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("rng");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, rng_is_a_pure_function);
	tcase_add_test(tc, rng_uniform_mean_variance_and_bins);
	tcase_add_test(tc, rng_streams_and_counters_uncorrelated);
	tcase_add_test(tc, rng_bits_balanced);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
