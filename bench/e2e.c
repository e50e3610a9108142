/* e2e.c - nbody-bench e2e (also `nbody-bench render --e2e`): a whole movie,
 * end to end, against its slowest stage alone.
 *
 *   nbody-bench e2e [--scene scenes/galaxy-collision.yaml] [--frames N]
 *                   [--out DIR] [--bin PATH]
 *
 * Runs nbody-render (next to this binary, or --bin) three times on the
 * scene, each a fresh process, so start-up (initial conditions, device
 * set-up) is included as a user sees it:
 *
 *   movie     the scene as written, its outputs redirected into --out
 *             (default /tmp/nbody-e2e): MP4, statistics, preview;
 *   sim       the same with every output off: start-up + the steps alone,
 *             the simulation stage's own time;
 *   x264      the movie run's encoder time, as it reports it ("encoding X s
 *             on its own thread": libx264 alone, on the same frames).
 *
 * Prints wall seconds, frames per second, and wall(movie) / max(sim, x264):
 * the overlap target is <= 1.1 (a movie takes as long as its slowest stage).
 * Each run's last lines of output are kept in --out/e2e-*.log. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define E2E_MAX_ARGS 24

/* nbody-render beside /proc/self/exe into path. 0 or -1. */
static int e2e_default_bin(char *path, size_t cap)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	if (k <= 0)
		return -1;
	self[k] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return snprintf(path, cap, "%s/nbody-render", self) < (int)cap ? 0 : -1;
}

/* Run argv with stderr and stdout into log; wall seconds into *wall. The
 * process's exit status, or -1 if it could not run. */
static int e2e_spawn(char *const argv[], const char *log, double *wall)
{
	double t0 = log_clock_s();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen(log, "w", stderr) || dup2(fileno(stderr), 1) < 0)
			_exit(126);
		execv(argv[0], argv);
		fprintf(stderr, "e2e: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*wall = log_clock_s() - t0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* From a run's log: the "done:" line's frames and encoding seconds. 0 or -1. */
static int e2e_parse_done(const char *log, int *frames, double *encode_s)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return -1;
	char line[1024];
	int found = -1;
	while (fgets(line, sizeof line, f)) {
		const char *d = strstr(line, "done: ");
		const char *e = strstr(line, "encoding ");
		double wall, sim, ren;
		if (d && e && sscanf(d, "done: %d frames in %lf s (simulation %lf s, rendering %lf s",
				     frames, &wall, &sim, &ren) == 4 &&
		    sscanf(e, "encoding %lf", encode_s) == 1)
			found = 0;
	}
	fclose(f);
	return found;
}

/* Parse ARGV over the defaults (BIN: PATH_MAX bytes). 0, or 2 (bad usage,
 * reported). */
static int e2e_parse_args(int argc, char **argv, const char **scene, const char **out, char *bin,
			  int *frames)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--scene") && i + 1 < argc)
			*scene = argv[++i];
		else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
			*frames = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			*out = argv[++i];
		else if (!strcmp(argv[i], "--bin") && i + 1 < argc)
			snprintf(bin, PATH_MAX, "%s", argv[++i]);
		else {
			bench_usage(stderr, "e2e");
			return 2;
		}
	}
	return 0;
}

int bench_e2e(int argc, char **argv)
{
	const char *scene = "scenes/galaxy-collision.yaml", *out = "/tmp/nbody-e2e";
	char bin[PATH_MAX] = "";
	int frames = 0;
	if (e2e_parse_args(argc, argv, &scene, &out, bin, &frames))
		return 2;
	if (!bin[0] && e2e_default_bin(bin, sizeof bin) != 0) {
		fprintf(stderr, "e2e: cannot find nbody-render beside this program; use --bin\n");
		return 2;
	}
	if (access(bin, X_OK) != 0) {
		fprintf(stderr, "e2e: %s: %s\n", bin, strerror(errno));
		return 2;
	}
	if (mkdir(out, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "e2e: %s: %s\n", out, strerror(errno));
		return 1;
	}
	char video[PATH_MAX + 32], stats[PATH_MAX + 32], preview[PATH_MAX + 32], nfr[48];
	char log[2][PATH_MAX + 32];
	snprintf(video, sizeof video, "output.video=%s/e2e.mp4", out);
	snprintf(stats, sizeof stats, "output.stats=%s/e2e-stats.csv", out);
	snprintf(preview, sizeof preview, "output.preview=%s/e2e-preview.jpg", out);
	snprintf(nfr, sizeof nfr, "output.frames=%d", frames);
	snprintf(log[0], sizeof log[0], "%s/e2e-movie.log", out);
	snprintf(log[1], sizeof log[1], "%s/e2e-sim.log", out);

	double wall[2] = {0, 0};
	int nfr_done = 0;
	double x264 = 0;
	for (int run = 0; run < 2; run++) {
		char *a[E2E_MAX_ARGS];
		int n = 0;
		a[n++] = bin;
		a[n++] = (char *)scene;
		const char *sets[6];
		int ns = 0;
		if (run == 0) {
			sets[ns++] = video;
			sets[ns++] = stats;
			sets[ns++] = preview;
		} else {
			sets[ns++] = "output.video=";
			sets[ns++] = "output.stats=";
			sets[ns++] = "output.preview=";
		}
		sets[ns++] = "output.png_dir=";
		if (frames > 0)
			sets[ns++] = nfr;
		for (int s = 0; s < ns; s++) {
			a[n++] = "--set";
			a[n++] = (char *)sets[s];
		}
		a[n] = NULL;
		int rc = e2e_spawn(a, log[run], &wall[run]);
		if (rc != 0) {
			fprintf(stderr, "e2e: %s run of %s exited with %d (see %s)\n",
				run ? "simulation-only" : "movie", scene, rc, log[run]);
			return 1;
		}
		if (run == 0 && e2e_parse_done(log[0], &nfr_done, &x264) != 0) {
			fprintf(stderr, "e2e: no \"done:\" line in %s\n", log[0]);
			return 1;
		}
	}
	double slowest = wall[1] > x264 ? wall[1] : x264;
	printf("End to end: %s, %d frames (%s)\n\n", scene, nfr_done, bin);
	printf("| run | wall s | frames/s |\n|---|---:|---:|\n");
	printf("| movie (video + statistics + preview) | %.2f | %.1f |\n", wall[0],
	       nfr_done / wall[0]);
	printf("| simulation alone (outputs off) | %.2f | %.1f |\n", wall[1], nfr_done / wall[1]);
	printf("| x264 alone, same frames (encoder thread) | %.2f | %.1f |\n", x264,
	       x264 > 0 ? nfr_done / x264 : 0.0);
	printf("\nmovie / slowest stage alone = %.2f / %.2f = %.3f (target <= 1.1)\n", wall[0],
	       slowest, wall[0] / slowest);
	return 0;
}
