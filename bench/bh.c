/* bh.c - placeholder until its owner lands it. */
#include <stdio.h>
#include "bench.h"
int bench_bh(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "nbody-bench: bh: not built yet\n");
	return 1;
}
int bench_bh_accuracy(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "nbody-bench: bh-accuracy: not built yet\n");
	return 1;
}
