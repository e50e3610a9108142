/* bench.h - nbody-bench subcommands; each lives in its own file under bench/.
 * Each takes the arguments after the subcommand name and returns an exit
 * status. Timings are medians over repeats after a warm-up. */
#ifndef NB_BENCH_H
#define NB_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "../scene/log.h" /* log_clock_s: the one clock */

/* bench/bench.c: print "usage: nbody-bench NAME OPTIONS" and its one-line
 * description to f (the subcommands print it on a bad option). */
void bench_usage(FILE *f, const char *name);

/* bench/bench_util.c */
/* Parse "65536,262144,..." into out (at most max values, each in [1, limit]).
 * Returns the count, or -1 on a malformed list. */
int bench_parse_sizes(const char *s, size_t *out, int max, double limit);
/* qsort comparator for doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* Median of v[0..n) (n >= 1); sorts v in place. */
double bench_median(double *v, int n);

int bench_direct(int argc, char **argv);      /* bench/direct.c: GPU all-pairs kernels */
int bench_bh(int argc, char **argv);          /* bench/bh.c: GPU Barnes-Hut per step */
int bench_bh_accuracy(int argc, char **argv); /* bench/bh.c: tree vs direct force error */
int bench_frame(int argc, char **argv);       /* bench/frame.c: CPU splat/tonemap/convert/encode/PNG */
int bench_cpu_render(int argc, char **argv);  /* bench/cpu_render.c: one CPU frame, stage by stage */
int bench_render(int argc, char **argv);      /* bench/render.c: GPU splat/adaptive h/tone map/YUV */
int bench_render_ooc(int argc, char **argv);  /* bench/render_ooc.c: GPU frames out of core, chunked */
int bench_migrate(int argc, char **argv);     /* bench/migrate.c: tree body order, migrate vs sort */
int bench_e2e(int argc, char **argv);         /* bench/e2e.c: a whole movie vs its slowest stage */
#endif
