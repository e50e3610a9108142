/* calibrate_gpu.c - measure a GPU's rates (estimate.h, app_calibrate_gpu)
 * through the program's own GPU paths: gpu_sim_* (the tree at 2^17 and
 * 2^20 bodies of a Plummer sphere, the direct sum at 2^16) and
 * gpu_render_* (frames of the default look at 1280x720 and 3840x2160 with
 * 2^17 bodies, and 1280x720 with 2^20). A step's time is the host's wall
 * time around gpu_sim_advance (it waits for the device, as a run's frame
 * does); a frame's around gpu_render_frame and gpu_render_wait (splat,
 * tone map, conversion, copy to the host). Each figure is the best of a
 * few after a first, untimed one. Without CUDA the first call reports no
 * GPU and nothing else runs.
 *
 * Try (a GPU machine): nbody-render scenes/galaxy-collision.yaml --calibrate */
#include <stdlib.h>
#include <string.h>

#include "../render/cuda/gpu_render.h"
#include "../render/render.h"
#include "../sim/cuda/gpu.h"
#include "app.h"
#include "estimate.h"

#define GCAL_BIG (1 << 20)
#define GCAL_SMALL (1 << 17)
#define GCAL_DIRECT (1 << 16)
#define GCAL_REPS 3

static const char gcal_scene[] =
	"units: nbody\nseed: 1\n"
	"simulation: {solver: barnes-hut, theta: 0.5, multipoles: 2, softening: 0.01, dt: 0.001}\n"
	"bodies:\n  - {name: c, model: plummer, count: 1048576, mass: 1, scale: 1}\n"
	"camera: {fov: 35, keys: [{frame: 0, position: [0, -9, 3.5], target: [0, 0, 0]}]}\n"
	"output: {frames: 2}\n";

/* Seconds per step of st's first n bodies under sc's solver (or direct):
 * best of GCAL_REPS timings of 2 steps, after 2 untimed ones. */
static int time_steps(const struct scene *sc, struct sim_state *st, size_t n, int direct,
		      double *s)
{
	struct sim_params p;
	struct gpu_sim *g = NULL;
	const size_t keep = st->n;
	sim_params_of(sc, &p);
	if (direct)
		p.solver = SCENE_SOLVER_DIRECT;
	st->n = n;
	int rc = gpu_sim_create(st, &p, &g);
	st->n = keep;
	rc = rc ? rc : gpu_sim_advance(g, 2, 0);
	*s = 1e30;
	for (int i = 0; !rc && i < GCAL_REPS; i++) {
		double t0 = log_clock_s();
		rc = gpu_sim_advance(g, 2, 0);
		double t = (log_clock_s() - t0) / 2;
		*s = t < *s ? t : *s;
	}
	gpu_sim_free(&g);
	return rc;
}

/* Seconds per frame of st's first n bodies at w x h: best of GCAL_REPS. */
static int time_frame(const struct scene *sc, struct sim_state *st, size_t n, int w, int h,
		      double *s)
{
	struct scene c = *sc;
	c.render.width = w, c.render.height = h;
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	struct gpu_render *gr = NULL;
	struct gpu_render_input in;
	struct render_camera cam;
	const size_t keep = st->n;
	st->n = n;
	int rc = render_camera_at(&c, 0, st, &cam) ? NB_ERUNTIME : 0;
	rc = rc ? rc : gpu_render_create(&c, st, NULL, &p, &gr);
	rc = rc ? rc : gpu_render_upload(gr, st, &in);
	st->n = keep;
	*s = 1e30;
	for (int i = -1; !rc && i < GCAL_REPS; i++) {
		double t0 = log_clock_s();
		rc = gpu_render_frame(gr, &in, i + 1, &cam, 0);
		rc = rc ? rc : gpu_render_wait(gr, 0);
		double t = log_clock_s() - t0;
		if (i >= 0)
			*s = t < *s ? t : *s;
	}
	gpu_render_free(&gr);
	return rc;
}

/* The rates from the timings: a step = fixed + interactions x rate (two
 * sizes), a frame = fixed + pixels x rate + bodies x rate (three). */
static int gpu_measure(const struct scene *sc, struct sim_state *st, struct app_gpu_rates *g)
{
	double ts, tb, td, fa, fb, fc;
	const double pa = 1280.0 * 720, pb = 3840.0 * 2160;
	int rc = time_steps(sc, st, GCAL_SMALL, 0, &ts);
	rc = rc ? rc : time_steps(sc, st, GCAL_BIG, 0, &tb);
	rc = rc ? rc : time_steps(sc, st, GCAL_DIRECT, 1, &td);
	rc = rc ? rc : time_frame(sc, st, GCAL_SMALL, 1280, 720, &fa);
	rc = rc ? rc : time_frame(sc, st, GCAL_SMALL, 3840, 2160, &fb);
	rc = rc ? rc : time_frame(sc, st, GCAL_BIG, 1280, 720, &fc);
	if (rc)
		return rc;
	const double is = app_estimate_interactions(sc, GCAL_SMALL);
	const double ib = app_estimate_interactions(sc, GCAL_BIG);
	g->tree_inter = tb > ts ? (tb - ts) / (ib - is) : tb / ib;
	g->tree_step = ts > is * g->tree_inter ? ts - is * g->tree_inter : 0;
	g->direct_pair = td / (GCAL_DIRECT * (GCAL_DIRECT - 1.0) / 2);
	g->frame_px = fb > fa ? (fb - fa) / (pb - pa) : 0;
	g->frame_body = fc > fa ? (fc - fa) / (GCAL_BIG - GCAL_SMALL) : 0;
	double fixed = fa - pa * g->frame_px - GCAL_SMALL * g->frame_body;
	g->frame_fixed = fixed > 0 ? fixed : 0;
	return 0;
}

int app_calibrate_gpu(struct app_gpu_rates *g)
{
	char why[256];
	size_t fr, tot;
	if (!gpu_probe(why, sizeof why) || gpu_device_info(g->device, sizeof g->device, &fr, &tot)) {
		log_error("--calibrate: no GPU to measure (%s)", why);
		return NB_ERUNTIME;
	}
	struct scene *sc = calloc(1, sizeof *sc);
	struct sim_state st;
	memset(&st, 0, sizeof st);
	const double t0 = log_clock_s();
	int rc = sc ? scene_load_string(gcal_scene, "GPU calibration", ".", NULL, 0, sc) : NB_ERUNTIME;
	rc = rc ? rc : sim_ic_build(sc, &st);
	rc = rc ? rc : gpu_measure(sc, &st, g);
	if (rc)
		log_error("calibration of the GPU's rates (%s) failed", g->device);
	g->calib_s = log_clock_s() - t0;
	sim_state_free(&st);
	free(sc);
	return rc ? NB_ERUNTIME : 0;
}
