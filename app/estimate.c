/* estimate.c - the model of a run's wall time: the scene's work per stage
 * times this machine's rates (estimate.h), and the lines that print it.
 *
 * The work per stage (each scales as below; the rates carry the rest):
 *   creation  bodies (a disk galaxy's bodies at their own rate: the disk's
 *             distribution function and potential tables cost more)
 *   forces    (steps + 1) evaluations (shared steps, kick-drift-kick with
 *             the first force at the start) x interactions per step:
 *             n (n - 1) / 2 for the direct sum, n 60 log2(n) / theta^2
 *             for the tree (app_estimate_interactions), the tree's rate
 *             the scene's mix of sphere and disk-galaxy bodies, times
 *             the probe's soft_x (the spline kernel or lengths per body,
 *             app/estimate_soft.c);
 *             individual steps: per block step, its ticks' tree builds
 *             and each body's 2^level walks (app_estimate_levels)
 *   render    frames x (pixels x rate + bodies x motion-blur samples x rate
 *             + bodies x rate of the light's statistics when the camera
 *             follows the light or frames itself))
 *             + bodies x rate of the adaptive smoothing lengths each
 *             render.adaptive_every frames, when the look needs them)
 *   encode    frames x pixels; PNG frames x pixels / the PNG pool's threads
 *             (GPU) or / the cores (CPU: the pool's CPU seconds share the
 *             cores with the simulation's threads; measured on a 2-core
 *             machine, plummer's PNG frames took 6.2 s of CPU and added
 *             about 3 s to the run)
 *   files     bytes of the snapshots and FITS maps
 * The stages are added: on a small machine the writer thread's encoding
 * competes with the simulation's threads for the same cores. On a GPU the
 * simulation and frames take the GPU's rates (a fixed part per step and
 * frame, launches and copies, plus the scaling part), and the encoder's
 * host thread overlaps them.
 *
 * Try: nbody-render scenes/plummer.yaml --dry-run | tail -12 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../output/output.h"
#include "../render/adaptive.h"
#include "../render/render.h"
#include "../sim/cuda/gpu.h"
#include "app.h"
#include "batch.h"
#include "estimate.h"

/* Disk-galaxy entries (each pays create_fixed once). */
static int disk_entries(const struct scene *sc)
{
	int k = 0;
	for (int i = 0; i < sc->nbodies; i++)
		k += sc->bodies[i].model == SCENE_MODEL_DISK_GALAXY;
	return k;
}

/* Bodies of disk galaxies (created at create_disk), at most n. */
static double disk_bodies(const struct scene *sc, long n)
{
	double d = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model == SCENE_MODEL_DISK_GALAXY)
			d += (double)(b->disk.count + b->bulge.count + b->halo.count);
	}
	return d < (double)n ? d : (double)n;
}

/* Bytes of the snapshots and FITS maps the run writes. */
static double file_bytes(const struct scene *sc, long n)
{
	double bytes = 0;
	if (sc->output.snapshots.dir[0]) {
		int count = 0;
		for (int fr = 0; fr < sc->output.frames; fr++)
			count += out_snap_number(sc, fr) >= 0;
		bytes += out_snap_bytes((size_t)n, sc->units) * count;
	}
	if (sc->output.fits_dir[0])
		bytes += ((double)sc->render.width * sc->render.height * 12 + 5760) * sc->output.frames;
	return bytes;
}

/* The CPU's cores (the simulation's OpenMP team and the PNG pool share
 * them: the pool's CPU seconds cost the run that many over the cores). */
static double app_cpu_cores(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c > 1 ? (double)c : 1;
}

/* The computations of the adaptive smoothing lengths: every
 * render.adaptive_every frames (app/renderer_cpu.c). */
static double h_updates(const struct scene *sc)
{
	int every = sc->render.adaptive_every > 0 ? sc->render.adaptive_every : 1;
	return ceil((double)sc->output.frames / every);
}

/* 1 when camera.follow: light or camera.frame: auto measure the drawn
 * light every frame (app/framing.c). */
static int tracks_light(const struct scene *sc)
{
	return !strcmp(sc->camera.follow, "light") || sc->camera.frame == SCENE_FRAME_AUTO;
}

/* Seconds of one shared force evaluation of n bodies at r (or g). The
 * tree's rate is the scene's mix: disk-galaxy bodies at tree_disk. The
 * GPU's tree is timed on a sphere only (a 2^20-body disk galaxy takes too
 * long to make): its disk bodies take the CPU's ratio tree_disk /
 * tree_inter (the two trees open cells by the same criteria, so a disk's
 * extra interactions are the same). */
/* The GPU tree's general softening path (the spline kernel, or lengths per
 * body: sim/cuda's SOFT walk instances, without the group's local
 * expansion for mixed Plummer lengths) against the calibrated one-length
 * walk: APP_GPU_SOFT_FACTOR, measured once, not calibrated: on an H200
 * scenes/gadget2-galaxy.yaml (60k bodies, spline, two lengths) stepped at
 * 1.6 ms against the model's 0.74 (docs/BENCHMARKS.md, Estimates). */
#define APP_GPU_SOFT_FACTOR 2.2
/* A GPU run's start-up (the CUDA context, the device's buffers), counted
 * with the creation of the bodies: measured, not calibrated, as the gap
 * between the model and small scenes' runs on an H200 (plummer 0.64 s,
 * two-clusters 0.2 s, gadget2-galaxy 0.5 s; docs/BENCHMARKS.md). */
#define APP_GPU_START_S 0.4
static double gpu_soft_factor(const struct scene *sc)
{
	struct sim_params p;
	sim_params_of(sc, &p);
	return p.soft_mixed || p.soft_kernel == SCENE_SOFT_SPLINE ? APP_GPU_SOFT_FACTOR : 1;
}

static double force_s(const struct scene *sc, double n, double dn, const struct app_rates *r,
		      const struct app_gpu_rates *g)
{
	double inter = app_estimate_interactions(sc, n);
	if (sc->simulation.solver == SCENE_SOLVER_DIRECT)
		return inter * (g ? g->direct_pair : r->direct_pair);
	double fd = n > 0 ? dn / n : 0;
	if (g)
		return (g->tree_step + inter * g->tree_inter *
			(1 - fd + (r->tree_inter > 0 ? fd * r->tree_disk / r->tree_inter : fd))) *
		       gpu_soft_factor(sc);
	double slope = r->tree_small > 0 ? log(r->tree_small) / log(1.0 * APP_CAL_SMALL / APP_CAL_N) : 0;
	slope = slope < -1 ? -1 : slope > 1 ? 1 : slope;
	double size = n < APP_CAL_N && n >= 2 ? pow(n / APP_CAL_N, slope) : 1;
	return inter * size * ((1 - fd) * r->tree_inter + fd * r->tree_disk) *
	       (r->soft_x > 0 ? r->soft_x : 1);
}

/* Seconds of the simulation. Shared steps: (steps + 1) evaluations.
 * Individual (lv): the first evaluation, then per block step lv->ticks
 * tree builds (or refits) of every body and the walks: each active
 * body's at the full evaluation's cost per body less the build's, of which
 * the share tree_group (the group's walk and list) is paid by every group
 * with an active body (group_walks; on the GPU all of it: a group is a
 * warp). */
static double sim_s(const struct scene *sc, double n, double dn, const struct app_rates *r,
		    const struct app_gpu_rates *g, const struct app_levels *lv)
{
	const double frames = sc->output.frames, full = force_s(sc, n, dn, r, g);
	if (!lv || n <= 0)
		return ((frames - 1) * sc->simulation.steps_per_frame + 1) * full;
	const double blocks = (frames - 1) * sc->simulation.blocks_per_frame;
	double tick = 0, walk = full / n, share = 0; /* per tick; per body's evaluation */
	if (sc->simulation.solver != SCENE_SOLVER_DIRECT) {
		tick = g ? g->tree_step : n * r->tree_build;
		walk = (full - tick) / n > 0.1 * full / n ? (full - tick) / n : 0.1 * full / n;
		share = g ? 1 : r->tree_group;
	} else if (!g) {
		walk = 2 * full / n; /* an active body's row is every pair, not half */
	}
	double walks = share * lv->group_walks + (1 - share) * lv->evals_per_body;
	return full + blocks * (lv->ticks * tick + walks * n * walk);
}

void app_estimate_model(const struct scene *sc, long n, const struct app_rates *r,
			const struct app_gpu_rates *g, const struct app_levels *lv,
			struct app_estimate *e)
{
	memset(e, 0, sizeof *e);
	const double N = n > 0 ? (double)n : 0, frames = sc->output.frames;
	const double px = (double)sc->render.width * sc->render.height;
	const double dn = disk_bodies(sc, n), blur = render_blur_samples(sc);
	e->stage_s[APP_STAGE_CREATE] = dn * r->create_disk + (N - dn) * r->create_body +
				       disk_entries(sc) * r->create_fixed + (g ? APP_GPU_START_S : 0);
	if (sc->simulation.solver != SCENE_SOLVER_NONE)
		e->stage_s[APP_STAGE_SIM] = sim_s(sc, N, dn, r, g, lv);
	if (g)
		e->stage_s[APP_STAGE_RENDER] =
			frames * (g->frame_fixed + px * g->frame_px + N * blur * g->frame_body);
	else
		e->stage_s[APP_STAGE_RENDER] =
			frames * (px * r->frame_px + N * blur * r->frame_body +
				  (tracks_light(sc) ? N * r->frame_track : 0)) +
			(render_needs_h(sc) ? h_updates(sc) * N * r->frame_h : 0);
	if (sc->output.video[0])
		e->stage_s[APP_STAGE_ENCODE] = frames * px * r->encode_px;
	if (sc->output.png_dir[0]) /* the PNG pool's threads share the frames (GPU), or the
				    * cores with the simulation's threads (CPU) */
		e->stage_s[APP_STAGE_PNG] = frames * px * r->png_px /
					    (g ? out_png_threads_default() : app_cpu_cores());
	e->stage_s[APP_STAGE_FILES] = file_bytes(sc, n) * r->file_byte;
	for (int s = 0; s < APP_NSTAGES; s++)
		e->total_s += e->stage_s[s];
	if (g) { /* the encoder's thread and the PNG pool run beside the GPU's work */
		double gpu = e->stage_s[APP_STAGE_SIM] + e->stage_s[APP_STAGE_RENDER];
		double enc = e->stage_s[APP_STAGE_ENCODE], png = e->stage_s[APP_STAGE_PNG];
		double most = gpu > enc ? gpu : enc;
		most = most > png ? most : png;
		e->total_s -= gpu + enc + png - most;
	}
}

void app_estimate_compute(const struct scene *sc, long n, const struct app_rates *r,
			  struct app_estimate *e)
{
	app_estimate_model(sc, n, r, NULL, NULL, e);
}

void app_rates_describe(const struct app_rates_info *info, char *buf, size_t len)
{
	char age[32] = "at an unknown time";
	double a = info->measured_at > 0 ? difftime(time(NULL), (time_t)info->measured_at) : -1;
	if (a >= 0 && a < 90)
		snprintf(age, sizeof age, "%.0f s ago", a);
	else if (a >= 0 && a < 5400)
		snprintf(age, sizeof age, "%.0f min ago", a / 60);
	else if (a >= 0 && a < 172800)
		snprintf(age, sizeof age, "%.0f h ago", a / 3600);
	else if (a >= 0)
		snprintf(age, sizeof age, "%.0f days ago", a / 86400);
	switch (info->source) {
	case APP_RATES_FILE:
		snprintf(buf, len, "rates read from %s (NB_RATES_FILE), measured %s", info->path, age);
		break;
	case APP_RATES_CACHED:
		snprintf(buf, len, "rates measured %s on this machine (calibration, %.1f s; cached in %s)",
			 age, info->calib_s, info->path);
		break;
	default:
		if (info->cached)
			snprintf(buf, len, "rates measured now on this machine (calibration, %.1f s; cached "
				 "in %s)", info->calib_s, info->path);
		else
			snprintf(buf, len, "rates measured now on this machine (calibration, %.1f s; not "
				 "cached: %s)", info->calib_s, info->why);
	}
}

int app_estimate_gpu_device(const struct scene *sc, int backend_cli, char *name, size_t len)
{
	int backend = backend_cli >= 0 ? backend_cli : (int)sc->simulation.backend;
	const char *fake = getenv("NB_ESTIMATE_GPU");
	char why[256];
	size_t fr, tot;
	name[0] = 0;
	if (backend == SCENE_BACKEND_CPU)
		return 0;
	if (fake && fake[0]) {
		snprintf(name, len, "%s", fake);
		return 1;
	}
	return gpu_probe(why, sizeof why) && gpu_device_info(name, len, &fr, &tot) == 0;
}

/* The line that says whose rates the GPU run is estimated at. */
static void describe_gpu(const char *device, const struct app_gpu_rates *g, const char *why,
			 FILE *f)
{
	if (!g) {
		fprintf(f, "# time: rates: no GPU rates for %s (%s): simulation and frames at the "
			"CPU's; nbody-render SCENE --calibrate measures them\n", device, why);
		return;
	}
	char date[64] = "at an unknown time";
	time_t t = (time_t)g->measured_at;
	struct tm tm;
	if (g->measured_at > 0 && gmtime_r(&t, &tm))
		strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
	fprintf(f, "# time: rates: GPU %s, measured %s (%s %s); creation, encoding, PNG and "
		"files: this machine's CPU\n", g->device, date,
		g->source == APP_RATES_FILE ? "NB_GPU_RATES_FILE" : "cached in", g->path);
}

/* The probe's line (app_estimate_soft_x). */
static void say_soft(const struct scene *sc, double x, FILE *f)
{
	struct sim_params p;
	sim_params_of(sc, &p);
	fprintf(f, "# time: the tree with this scene's softening (%s kernel%s) takes %.2fx the "
		"time of one Plummer length (its bodies timed both ways)\n",
		p.soft_kernel == SCENE_SOFT_SPLINE ? "spline" : "plummer",
		p.soft_mixed ? ", lengths per type" : "", x);
}

int app_estimate_print(const struct scene *sc, long n, int backend_cli, FILE *f)
{
	static const char *const name[APP_NSTAGES] = {
		"creation of the bodies", "simulation", "rendering", "encoding (output.video)",
		"PNG frames (output.png_dir)", "snapshots and FITS maps"};
	struct app_rates r;
	struct app_rates_info info;
	int rc = app_rates_get(&r, &info);
	if (rc)
		return rc;
	char device[128], why[600] = "", b[32], line[1024];
	struct app_gpu_rates g;
	int gpu = app_estimate_gpu_device(sc, backend_cli, device, sizeof device);
	int grc = gpu ? app_gpu_rates_peek(device, &g, why, sizeof why) : -1, have_g = grc == 0;
	if (grc == NB_EINPUT) {
		log_error("NB_GPU_RATES_FILE: %s", why);
		return NB_EINPUT;
	}
	struct app_levels lv;
	int have_lv = sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL &&
		      sc->simulation.solver != SCENE_SOLVER_NONE && app_estimate_levels(sc, n, &lv) == 0;
	if (!have_g)
		(void)app_estimate_soft_x(sc, &r.soft_x);
	struct app_estimate e;
	app_estimate_model(sc, n, &r, have_g ? &g : NULL, have_lv ? &lv : NULL, &e);
	fprintf(f, "\n# --- expected wall time on this machine ---\n");
	for (int s = 0; s < APP_NSTAGES; s++) {
		batch_format_duration(e.stage_s[s], b, sizeof b);
		fprintf(f, "# time %-28s %9s\n", name[s], b);
	}
	batch_format_duration(e.total_s, b, sizeof b);
	fprintf(f, "# time %-28s %9s (%.4g s)\n", "in all", b, e.total_s);
	if (have_lv)
		fprintf(f, "# time: individual time steps: %.3g force evaluations per body per block "
			"step, %ld ticks per block, walk groups with an active body %.3g times per "
			"block (the initial levels of %zu sampled bodies)\n",
			lv.evals_per_body, lv.ticks, lv.group_walks, lv.sampled);
	if (!have_g && r.soft_x != 1)
		say_soft(sc, r.soft_x, f);
	app_rates_describe(&info, line, sizeof line);
	fprintf(f, "# time: %s; encoding, PNG and files: reference rates scaled by this machine's "
		"rendering speed\n", line);
	if (gpu)
		describe_gpu(device, have_g ? &g : NULL, why, f);
	return 0;
}

void app_estimate_warn(const struct scene *sc, int backend_cli)
{
	long n = sim_scene_body_count(sc);
	char device[128], why[600];
	struct app_gpu_rates g;
	int gpu = app_estimate_gpu_device(sc, backend_cli, device, sizeof device);
	if (n < 0 || (gpu && app_gpu_rates_peek(device, &g, why, sizeof why)))
		return; /* no GPU rates: no claim */
	struct app_rates r;
	struct app_rates_info info;
	int have = app_rates_peek(&r, &info) == 0;
	if (!have)
		r = app_rates_reference;
	struct app_estimate e;
	app_estimate_model(sc, n, &r, gpu ? &g : NULL, NULL, &e);
	if (e.total_s <= APP_ESTIMATE_WARN_S)
		return;
	char b[32];
	if (e.total_s < 3600)
		snprintf(b, sizeof b, "%.0f min", e.total_s / 60);
	else
		snprintf(b, sizeof b, "%.1f h", e.total_s / 3600);
	log_info("expected about %s on this machine%s; --dry-run for the stages", b,
		 have ? "" : " (reference rates: --dry-run measures this machine's)");
}

/* The GPU the last batch's runs were estimated on, for its closing line:
 * gpu_runs runs at its rates (batch_gpu), cpu_runs that would run on a GPU
 * without rates for it (batch_nogpu). A batch dry run is one thread. */
static char batch_gpu[128], batch_nogpu[128];
static int gpu_runs, cpu_runs;

double app_estimate_batch_run(const struct batch_run *r, const struct app_rates *rates)
{
	struct scene *sc = malloc(sizeof *sc);
	char msg[1024], device[128], why[600];
	if (!sc || !r->loaded || batch_scene_load(r, sc, msg, sizeof msg)) {
		free(sc);
		return -1;
	}
	struct app_estimate e;
	struct app_levels lv;
	struct app_gpu_rates g;
	int gpu = app_estimate_gpu_device(sc, -1, device, sizeof device);
	int have_g = gpu && app_gpu_rates_peek(device, &g, why, sizeof why) == 0;
	if (gpu) /* the device is named once per batch: one GPU */
		snprintf(have_g ? batch_gpu : batch_nogpu, sizeof batch_gpu, "%s", device);
	gpu_runs += have_g, cpu_runs += gpu && !have_g;
	int have_lv = sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL &&
		      sc->simulation.solver != SCENE_SOLVER_NONE &&
		      app_estimate_levels(sc, r->bodies, &lv) == 0;
	struct app_rates mine = *rates;
	if (!have_g)
		(void)app_estimate_soft_x(sc, &mine.soft_x);
	app_estimate_model(sc, r->bodies, &mine, have_g ? &g : NULL, have_lv ? &lv : NULL, &e);
	free(sc);
	if (r->group >= 0 && r->group != r->index) /* simulated by its group's run */
		e.total_s -= e.stage_s[APP_STAGE_CREATE] + e.stage_s[APP_STAGE_SIM];
	return e.total_s;
}

void app_estimate_batch_print(double total_s, const struct app_rates_info *info, FILE *f)
{
	char b[32], line[1600];
	batch_format_duration(total_s, b, sizeof b);
	app_rates_describe(info, line, sizeof line);
	fprintf(f, "# expected wall time: %s in all (%.4g s; the runs one at a time, each run's "
		"expected_s above)\n# time: %s\n", b, total_s, line);
	if (gpu_runs)
		fprintf(f, "# time: %d run%s on the GPU at its rates (GPU %s)\n", gpu_runs,
			gpu_runs == 1 ? "" : "s", batch_gpu);
	if (cpu_runs)
		fprintf(f, "# time: %d run%s on the GPU at the CPU's rates: no GPU rates for %s "
			"(nbody-render SCENE --calibrate measures them)\n", cpu_runs,
			cpu_runs == 1 ? "" : "s", batch_nogpu);
}
