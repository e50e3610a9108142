/* direct.c - placeholder until its owner lands it. */
#include <stdio.h>
#include "bench.h"
int bench_direct(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "nbody-bench: direct: not built yet\n");
	return 1;
}
