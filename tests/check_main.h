/* check_main.h - shared helpers for the Check test programs.
 *
 * Each tests/test_NAME.c defines `static Suite *make_suite(void)` and ends
 * with NB_CHECK_MAIN(make_suite). Floating-point exceptions (invalid, divide
 * by zero, overflow) are fatal in tests, as in SWIFT's test suite: a NaN is a
 * bug, not a result. Set NB_LONG=1 to enable the long checks (make check-long). */
#ifndef NB_CHECK_MAIN_H
#define NB_CHECK_MAIN_H

#include <check.h>
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* |a - b| <= atol + rtol * |ref| */
#define NB_CLOSE(a, b, atol, rtol) (fabs((double)(a) - (double)(b)) <= (atol) + (rtol) * fabs((double)(b)))

#define ck_assert_close(a, b, atol, rtol)                                                      \
	ck_assert_msg(NB_CLOSE(a, b, atol, rtol), "%s = %.10g, expected %s = %.10g (atol %g, rtol %g)", \
		      #a, (double)(a), #b, (double)(b), (double)(atol), (double)(rtol))

static inline int nb_long_tests(void)
{
	const char *s = getenv("NB_LONG");
	return s && *s && *s != '0';
}

/* Path of the program under test (set by make test), for CLI tests. */
static inline const char *nb_bin(void)
{
	const char *s = getenv("NB_BIN");
	return s ? s : "build/nbody-render";
}

static inline void nb_trap_fpe(void)
{
#if defined(__GLIBC__)
	feenableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
#endif
}

#define NB_CHECK_MAIN(make_suite_fn)                                        \
	int main(void)                                                      \
	{                                                                   \
		SRunner *sr = srunner_create(make_suite_fn());              \
		srunner_run_all(sr, CK_NORMAL);                             \
		int failed = srunner_ntests_failed(sr);                     \
		srunner_free(sr);                                           \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;           \
	}

#endif
