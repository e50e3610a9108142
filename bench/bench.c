/* bench.c - nbody-bench: performance measurements (make bench).
 *
 *   nbody-bench direct --n 65536,262144,1048576
 *   nbody-bench bh --n 1000000,4000000,16000000
 *   nbody-bench bh-accuracy
 *   nbody-bench frame
 *   nbody-bench cpu-render --scene FILE [--set KEY=VALUE]...
 *   nbody-bench render [--e2e]
 *   nbody-bench render-ooc --n 1e9 --budget 8G   (or render --out-of-core ...)
 *   nbody-bench migrate
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
	const char *options;
} cmds[] = {
	{"direct", bench_direct, "GPU all-pairs kernels: interactions/s (--n LIST)",
	 "[--n LIST] [--steps K] [--tiles pairwise:128x8,gather:256x1,...]"},
	{"bh", bench_bh, "GPU Barnes-Hut: ms per step and per stage (--n LIST)",
	 "[--n LIST] [--steps K] [--configs ecl,com,default,fast,THETA:MP:bh|bmax:LEAF:LANES"
	 "[:GMAX[:BLOCKS[:RATIO[:LEAFP2P[:SPREAD]]]]], each +rK (refit) +mF (monopole far) +g (graphs)] "
	 "[--accuracy-max N] [--scene FILE --frames F] [--ncu]"},
	{"bh-accuracy", bench_bh_accuracy, "tree force error vs direct, theta and multipoles",
	 "[--n N] [--criterion bmax|bh] [--local RATIO] [--leaf-p2p K]"},
	{"frame", bench_frame, "CPU frame stages: splat, tone map, convert, encode, PNG",
	 "[--sizes 1080p,4k,WxH] [--n 100000,1000000] [--repeats 5] [--dir /tmp]"},
	{"cpu-render", bench_cpu_render, "one CPU frame of a scene at frame 0: adaptive h, splat, tone map (no forces)",
	 "--scene FILE [--set KEY=VALUE]... [--repeats 3]"},
	{"render", bench_render, "GPU renderer: splat (tiled/atomic, fixed/adaptive h), tone map, YUV",
	 "[--sizes 1080p,4k,WxH] [--n LIST] [--repeats R] [--png DIR] [--e2e] [--scenes scene,galaxies,core] "
	 "[--look] [--style stars|smooth] [--tonemap filmic|asinh|log|linear] [--exposure auto|X] "
	 "[--glow X] [--diffuse X] [--diffuse-smoothing screen|adaptive] [--h-cap X] "
	 "[--blur S] [--shutter X] "
	 "[--projection perspective|fisheye|equirectangular] [--stereo none|side-by-side|top-bottom]"},
	{"render-ooc", bench_render_ooc,
	 "GPU renderer out of core: host bodies streamed in chunks under a budget (also render --out-of-core)",
	 "[--n 1e9] [--frames F] [--budget 8G] [--size 4k|1080p|WxH] [--model plummer|galaxies] [--png DIR]"},
	{"migrate", bench_migrate, "GPU tree body order: migrate vs sort, movers and ms per step",
	 "[--scene FILE] [--frames 0,115,260,400] [--n 1000000,4000000] [--steps K] "
	 "[--branch-bodies B]"},
	{"e2e", bench_e2e, "a whole movie end to end vs its slowest stage (--scene PATH)",
	 "[--scene PATH] [--frames N] [--out DIR] [--bin nbody-render]"},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

void bench_usage(FILE *f, const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (strcmp(name, cmds[i].name) == 0)
			fprintf(f, "usage: nbody-bench %s %s\n  %s\n", cmds[i].name, cmds[i].options,
				cmds[i].help);
}

static void usage_all(FILE *f)
{
	fprintf(f, "usage: nbody-bench COMMAND [options]   (nbody-bench COMMAND --help: its options)\n"
		   "\ncommands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage_all(stdout);
		return 0;
	}
	if (argc >= 2) {
		for (size_t i = 0; i < NCMDS; i++) {
			if (strcmp(argv[1], cmds[i].name) != 0)
				continue;
			for (int a = 2; a < argc; a++)
				if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
					bench_usage(stdout, cmds[i].name);
					return 0;
				}
			return cmds[i].fn(argc - 2, argv + 2);
		}
		fprintf(stderr, "nbody-bench: unknown command '%s'\n", argv[1]);
	}
	usage_all(stderr);
	return 2;
}
