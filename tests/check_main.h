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

/* Floating-point exceptions (invalid, divide by zero, overflow) raise
 * SIGFPE. NB_CHECK_MAIN turns them on for every test program before any
 * case runs (Check's forked children and the threads they start inherit
 * it); GPU cases turn them off (nb_untrap_fpe: the CUDA driver's own code
 * may raise flags), as do cases whose point is a non-finite value or
 * that run third-party codecs, each saying why where it registers. */
static inline void nb_trap_fpe(void)
{
#if defined(__GLIBC__)
	feenableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
#endif
}

static inline void nb_untrap_fpe(void)
{
#if defined(__GLIBC__)
	fedisableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
#endif
}

/* ---- GPU cases ------------------------------------------------------------
 * One policy for every test program with GPU cases: a GPU case is registered
 * only when this build can use a GPU (gpu_probe); otherwise the program
 * prints "SKIP: <what>: <why>" and registers nothing, so Check counts no
 * pass for a case that did not run. The probe runs in a forked child: CUDA
 * does not survive fork() once initialised, and Check forks each test. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/cuda/gpu.h"

static inline int nb_gpu_usable(char *why, size_t len)
{
	static int cached = -1;
	static char reason[256];
	if (cached < 0) {
		int fd[2];
		cached = 0;
		snprintf(reason, sizeof reason, "the GPU probe could not run");
		if (pipe(fd) == 0) {
			pid_t pid = fork();
			if (pid == 0) {
				nb_untrap_fpe();
				char r[257];
				r[0] = (char)gpu_probe(r + 1, sizeof r - 1);
				ssize_t w = write(fd[1], r, 1 + strlen(r + 1) + 1);
				_exit(w > 0 ? 0 : 1);
			}
			close(fd[1]);
			char r[257] = {0};
			ssize_t n = pid > 0 ? read(fd[0], r, sizeof r - 1) : -1;
			close(fd[0]);
			if (pid > 0)
				waitpid(pid, NULL, 0);
			if (n >= 2) {
				cached = r[0] != 0;
				snprintf(reason, sizeof reason, "%s", r + 1);
			}
		}
	}
	if (why && len)
		snprintf(why, len, "%s", cached ? "" : reason);
	return cached;
}

/* Add TC to S when a GPU is usable, else print SKIP with the reason. */
static inline void nb_gpu_tcase(Suite *s, TCase *tc, const char *what)
{
	char why[256];
	if (nb_gpu_usable(why, sizeof why)) {
		tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
		suite_add_tcase(s, tc);
	}
	else
		printf("SKIP: %s: GPU cases: %s (not run, not counted)\n", what, why);
}
#define NB_GPU_TCASE(s, tc) nb_gpu_tcase((s), (tc), __FILE__)
/* A program whose GPU cases are compiled out (CPU-only build): say SKIP. */
static inline void nb_gpu_skip_all(const char *what)
{
	char why[256];
	nb_gpu_usable(why, sizeof why);
	printf("SKIP: %s: %s (not run, not counted)\n", what, why);
}

#define NB_CHECK_MAIN(make_suite_fn)                                        \
	int main(void)                                                      \
	{                                                                   \
		Suite *suite_ = make_suite_fn();                            \
		nb_trap_fpe(); /* every CPU case; GPU cases opt out */      \
		SRunner *sr = srunner_create(suite_);                       \
		srunner_run_all(sr, CK_NORMAL);                             \
		int failed = srunner_ntests_failed(sr);                     \
		srunner_free(sr);                                           \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;           \
	}

#endif
