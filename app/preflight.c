/* preflight.c - the checks a run makes before it allocates or writes
 * anything, shared by the real run and --dry-run (main.c calls it for both)
 * so that a dry run refuses exactly what the run would refuse at start:
 * memory (host, and GPU when the CUDA backend runs), a CUDA backend with no
 * GPU, output paths that cannot be created, and a video whose name no
 * container has or whose encoder this build lacks. Each refusal is NB_EINPUT
 * with the key's file:line:col or --set origin (scene_fail_key). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../sim/cuda/gpu.h"
#include "../dist/dist.h"
#include "../engine/engine.h"
#include "../output/output.h"
#include "app.h"
#include "outputs.h"

/* Host bytes per body: pos, vel, acc (3 doubles each), mass, pot, id, comp. */
#define HOST_BYTES_PER_BODY (9 * 8 + 8 + 8 + 4 + 2)
/* Barnes-Hut octree on the CPU: nodes (about n/2 of ~150 bytes) plus the
 * sort keys and order (16 bytes): a rough bound per body. */
#define TREE_BYTES_PER_BODY 96

double app_host_bytes(const struct scene *sc, long n)
{
	double px = (double)sc->render.width * sc->render.height;
	double per = HOST_BYTES_PER_BODY;
	if (sc->simulation.solver == SCENE_SOLVER_BARNES_HUT)
		per += TREE_BYTES_PER_BODY;
	if (sc->render.smoothing_adaptive && sc->render.style != SCENE_STYLE_STARS)
		per += 4; /* a smoothing length per body (style stars has none) */
	double bytes = (double)n * per + px * (3 * 4 + 3 * 2 * 5);
	/* a snapshot is built in memory before it is written (output/snap_write.c),
	 * a FITS map too (float32 RGB) */
	if (sc->output.snapshots.dir[0])
		bytes += out_snap_bytes((size_t)n, sc->units);
	if (sc->output.fits_dir[0])
		bytes += px * 3 * 4;
	return bytes;
}

void app_human_bytes(double b, char *buf, size_t n)
{
	const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int k = 0;
	while (b >= 1024 && k < 4)
		b /= 1024, k++;
	snprintf(buf, n, "%.1f %s", b, unit[k]);
}

/* The body entry with the most bodies: where a memory message points. */
static int largest_body(const struct scene *sc)
{
	int best = 0;
	long most = -1;
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		long c = b->model == SCENE_MODEL_DISK_GALAXY ? b->disk.count + b->bulge.count + b->halo.count
							     : b->count;
		if (c > most)
			most = c, best = i;
	}
	return best;
}

/* The bodies that memory is needed for: all of them, or under
 * simulation.ranks: domains the share of `ranks` of them (a rank's GPU
 * holds one share; its host, its ranks'), a quarter more for an uneven
 * cut and the other ranks' cells and bodies it imports. */
static long share_of(const struct scene *sc, long n, int ranks)
{
	const int P = dist_size();
	if (sc->simulation.ranks != SCENE_RANKS_DOMAINS || P <= 1)
		return n;
	const double s = 1.25 * (double)n * (double)(ranks < P ? ranks : P) / (double)P;
	return s < (double)n ? (long)s : n;
}

/* What n bodies are in a memory message: under domains over ranks, a
 * share of the scene's, said so. */
static const char *share_words(const struct scene *sc, char *buf, size_t len)
{
	buf[0] = '\0';
	if (sc->simulation.ranks == SCENE_RANKS_DOMAINS && dist_size() > 1)
		snprintf(buf, len, " (this rank's share over %d ranks, and a quarter more for "
			 "the others' imported cells)", dist_size());
	return buf;
}

static int check_host_memory(const struct scene *sc, long n)
{
	double need = app_host_bytes(sc, n);
	double avail = (double)sim_mem_available();
	if (avail < 0 || need <= avail)
		return 0;
	char nb[32], ab[32], key[64];
	app_human_bytes(need, nb, sizeof nb);
	app_human_bytes(avail, ab, sizeof ab);
	int b = largest_body(sc);
	snprintf(key, sizeof key, "bodies.%d%s", b,
		 sc->bodies[b].model == SCENE_MODEL_DISK_GALAXY ? ""
		 : sc->bodies[b].model == SCENE_MODEL_FILE || sc->bodies[b].model == SCENE_MODEL_SNAPSHOT
			 ? ".file"
			 : ".count");
	char sw[128];
	return scene_fail_key(sc, key, b,
			      "%ld bodies%s need about %s of host memory, but this machine has %s "
			      "available (MemAvailable in /proc/meminfo); lower the body counts",
			      n, share_words(sc, sw, sizeof sw), nb, ab);
}

/* The CUDA backend: refused without a GPU (as engine_create would),
 * and when the simulation needs more device memory than is free. */
static int check_gpu(const struct scene *sc, long n, int backend_cli)
{
	int backend = backend_cli >= 0 ? backend_cli : (int)sc->simulation.backend;
	char why[256] = "", name[128] = "GPU";
	if (backend == SCENE_BACKEND_CPU)
		return 0;
	if (!gpu_probe(why, sizeof why)) {
		if (backend != SCENE_BACKEND_CUDA)
			return 0;
		if (backend_cli == SCENE_BACKEND_CUDA) {
			log_error("--backend cuda: cuda was requested but there is no usable GPU: %s", why);
			return NB_EINPUT;
		}
		return scene_fail_key(sc, "simulation.backend", -1,
				      "cuda was requested but there is no usable GPU: %s", why);
	}
	/* film mode keeps no simulation on the GPU: its renderer plans its own
	 * memory and goes out of core when the bodies do not fit
	 * (render.gpu_memory, app/renderer_gpu.c) */
	if (sc->simulation.solver == SCENE_SOLVER_NONE)
		return 0;
	size_t need = engine_gpu_bytes_needed(sc, (size_t)n), fr = 0, tot = 0;
	if (gpu_device_info(name, sizeof name, &fr, &tot) != 0 || need <= fr)
		return 0;
	char nb[32], fb[32];
	app_human_bytes((double)need, nb, sizeof nb);
	app_human_bytes((double)fr, fb, sizeof fb);
	int b = largest_body(sc);
	char key[64];
	snprintf(key, sizeof key, "bodies.%d%s", b,
		 sc->bodies[b].model == SCENE_MODEL_DISK_GALAXY ? ""
		 : sc->bodies[b].model == SCENE_MODEL_FILE || sc->bodies[b].model == SCENE_MODEL_SNAPSHOT
			 ? ".file"
			 : ".count");
	char sw[128];
	return scene_fail_key(sc, key, b, "%ld bodies%s need about %s of GPU memory, but %s has %s "
			      "free (cudaMemGetInfo), and a simulation on the GPU cannot run out of "
			      "core (only film mode, simulation.solver: none, streams bodies through "
			      "render.gpu_memory); lower the body counts, use more ranks (simulation."
			      "ranks: domains) or --backend cpu",
			      n, share_words(sc, sw, sizeof sw), nb, name, fb);
}

/* PATH (the value of KEY) can be created: no directory on its way is an
 * existing non-directory, and it is not itself an existing directory
 * (IS_DIR 0) or an existing non-directory (IS_DIR 1). Reads only. */
static int check_output_path(const struct scene *sc, const char *key, const char *path, int is_dir)
{
	char pre[SCENE_PATH_MAX];
	struct stat st;
	if (!path[0])
		return 0;
	for (size_t i = 1; path[i]; i++) {
		if (path[i] != '/')
			continue;
		snprintf(pre, sizeof pre, "%.*s", (int)i, path);
		if (stat(pre, &st) == 0 && !S_ISDIR(st.st_mode))
			return scene_fail_key(sc, key, -1,
					      "cannot create '%s': '%s' exists and is not a directory",
					      path, pre);
	}
	if (stat(path, &st) != 0)
		return 0;
	if (!is_dir && S_ISDIR(st.st_mode))
		return scene_fail_key(sc, key, -1, "expected a file path, got '%s', a directory", path);
	if (is_dir && !S_ISDIR(st.st_mode))
		return scene_fail_key(sc, key, -1, "expected a directory, got '%s', which exists and is not one",
				      path);
	return 0;
}

/* Every row of the outputs table (app/outputs.h) that sc writes. */
static int check_outputs(const struct scene *sc)
{
	char path[SCENE_PATH_MAX];
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		if (!app_out_path(sc, i, path)[0])
			continue;
		/* a derived resolved scene has no key of its own: its first
		 * set output's key names the place */
		int rc = check_output_path(sc, k->key, path, k->shape == APP_OUT_SEQ);
		if (rc)
			return rc;
	}
	return 0;
}

/* output.video: its extension names a container of output/video_formats.c
 * and this build has an encoder for it (out_video_choose, which the
 * writer asks again when it opens the file). */
static int check_video(const struct scene *sc)
{
	struct out_video_choice ch;
	if (!sc->output.video[0] || !out_video_choose(sc->output.video, sc->output.codec, &ch))
		return 0;
	return scene_fail_key(sc, ch.key, -1, "'%s': %s", sc->output.video, ch.why);
}

int app_preflight(const struct scene *sc, int backend_cli)
{
	if (sim_inputs_check(sc)) /* every input file, before any work (sim/scene_count.c) */
		return NB_EINPUT;
	long n = sim_scene_body_count(sc);
	if (n < 0)
		return NB_EINPUT;
	/* outputs that collide, or would replace an input or a special file;
	 * then paths whose directories cannot be made */
	struct app_view one = {.sc = sc};
	int rc = app_outputs_check(&one, 0);
	if (!rc)
		rc = check_video(sc);
	if (!rc)
		rc = check_outputs(sc);
	if (!rc) /* simulation.ranks: domains: what it does not do yet */
		rc = dist_ranks_refuse(sc, backend_cli);
	if (!rc)
		rc = check_gpu(sc, share_of(sc, n, 1), backend_cli);
	if (!rc)
		rc = check_host_memory(sc, share_of(sc, n, dist_local_size()));
	return rc;
}
