/* frame.c - placeholder until its owner lands it. */
#include <stdio.h>
#include "bench.h"
int bench_frame(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "nbody-bench: frame: not built yet\n");
	return 1;
}
