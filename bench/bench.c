/* bench.c - nbody-bench: performance measurements (make bench).
 *
 *   nbody-bench direct --n 65536,262144,1048576
 *   nbody-bench bh --n 1000000,4000000,16000000
 *   nbody-bench bh-accuracy
 *   nbody-bench frame
 *   nbody-bench render [--e2e]
 *   nbody-bench e2e --scene scenes/galaxy-collision.yaml
 *
 * Speed is measured here, never asserted in unit tests. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"direct", bench_direct, "GPU all-pairs kernels: interactions/s (--n LIST)"},
	{"bh", bench_bh, "GPU Barnes-Hut: ms per step and per stage (--n LIST)"},
	{"bh-accuracy", bench_bh_accuracy, "tree force error vs direct, theta and multipoles"},
	{"frame", bench_frame, "CPU frame stages: splat, tone map, convert, encode, PNG"},
	{"render", bench_render, "GPU renderer: splat (tiled/atomic, fixed/adaptive h), tone map, YUV"},
	{"e2e", bench_e2e, "a whole movie end to end vs its slowest stage (--scene PATH)"},
};

int main(int argc, char **argv)
{
	if (argc >= 2) {
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
			if (strcmp(argv[1], cmds[i].name) == 0)
				return cmds[i].fn(argc - 2, argv + 2);
	}
	fprintf(stderr, "usage: nbody-bench COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(stderr, "  %-12s %s\n", cmds[i].name, cmds[i].help);
	return 2;
}
