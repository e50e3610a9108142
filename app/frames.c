/* frames.c - the one frame loop of app_run_views, for both backends:
 * simulation, every view's rendering, statistics and outputs.
 *
 * The loop is the GPU pipeline's; on the CPU each call below completes
 * before it returns and frame f is finished right after step 5, so the
 * same code is a plain sequence there. Iteration f:
 *   1. every renderer releases the positions of frame f-1 (GPU: the
 *      engine's stream waits on its consumed event), then the steps of
 *      frame f are queued (GPU: the call returns at once; CPU: they run);
 *   2. frame f-1 is finished: its statistics row and energy check from the
 *      diagnostics queued for it, then each view's frame handed to its
 *      writer thread (GPU: waiting for its ring slot);
 *   3. the diagnostics of frame f are queued (when statistics or the energy
 *      check want them: GPU: reduced on the device; CPU: computed now);
 *   4. wait for the steps of frame f (the finiteness check);
 *   5. each view's camera for frame f (a camera that moves by itself,
 *      camera.follow or frame auto: app/framing.c, its statistics from the
 *      engine's bodies) and its renderer queued (GPU: async; CPU: rendered
 *      now).
 * On the GPU four things then run at once: the steps of frame f+1, the
 * rendering of frame f, the writer threads' encoding of frame f-1, and
 * this thread. Views fail alone (app_view_fail); the loop ends early only
 * when no view is left, on a simulation error, or on a stop request. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "framing.h"
#include "progress.h"
#include "renderer.h"
#include "run_view.h"

struct frame_loop {
	struct run_view *v;
	int nv;
	struct sim_state *st;
	struct engine *eng;
	const struct sim_units *u;
	int need_pot;    /* a force pass computes potentials: statistics or the energy check */
	int want_diag;   /* diagnostics each frame */
	double max_e;    /* simulation.max_energy_error; 0: not checked */
	int have_d0;     /* d0 holds frame 0's diagnostics */
	struct sim_diag d0;
	int diag_queued; /* a reduction awaits its take */
	int start;       /* the frame the state held when the loop began */
	double t0;       /* its time, scene units (FITS SIMTIME of later frames) */
	double t_wait_sim, t_stats, t_push, t_files;
};

/* output.fits_dir of view v, frame f: the HDR image its renderer holds. */
static int write_fits(struct frame_loop *L, struct run_view *v, int f)
{
	const struct scene *sc = v->sc;
	const int galactic = sc->units == SCENE_UNITS_GALACTIC;
	const float *rgb;
	int w, h, rc = renderer_hdr(v->r, f, &rgb, &w, &h);
	if (rc)
		return rc;
	double dist = 0;
	for (int k = 0; k < 3; k++)
		dist += (v->cam.target[k] - v->cam.pos[k]) * (v->cam.target[k] - v->cam.pos[k]);
	struct render_view rv;
	render_view_make(&v->cam, w, h, &rv);
	struct out_fits_meta m = {
		.frame = f,
		.time = L->t0 + (double)(f - L->start) * sc->simulation.steps_per_frame * sc->simulation.dt,
		.time_unit = galactic ? "Myr" : "",
		.pixel_scale = rv.focal_px > 0 ? sqrt(dist) / rv.focal_px : 0,
		.length_unit = galactic ? "kpc" : "",
		.density = sc->render.mode == SCENE_COLOR_DENSITY,
		.cam = &v->cam,
		.units = galactic ? "galactic" : sc->units == SCENE_UNITS_SNAPSHOT ? "snapshot" : "nbody",
		.projection = v->cam.projection,
		.px_per_rad = rv.focal_px,
	};
	if ((rc = out_fits_write(sc->output.fits_dir, &m, w, h, rgb)))
		return rc;
	app_view_placed(v, APP_OUT_FITS, f);
	return 0;
}

/* 1 when every rank holds its own bodies (simulation.ranks: domains over
 * ranks): each rank then writes its bodies as its part of the set
 * (out_snap_write_ranks, the collective steps dist/'s). */
static int snap_by_ranks(const struct frame_loop *L, const struct run_view *v)
{
	return engine_is_split(L->eng) && v->sc->simulation.ranks == SCENE_RANKS_DOMAINS;
}

static int snap_write(const struct frame_loop *L, const struct run_view *v, const char *path,
		      int f, const char *backend, const struct render_camera *cam)
{
	if (!snap_by_ranks(L, v))
		return out_snap_write(path, v->sc, L->st, f, backend, cam);
	const struct out_snap_comm c = {.rank = dist_rank(), .size = dist_size(),
					.sum_u64 = dist_cb_sum_u64, .max_f64 = dist_cb_max_f64,
					.bcast_u64 = dist_cb_bcast_u64, .min_int = dist_cb_min_int};
	return out_snap_write_ranks(path, &c, v->sc, L->st, f, backend, cam);
}

/* output.snapshots of frame f (the state the steps just made), for every
 * live view whose snapshots include f. The host state is fetched once
 * (GPU: a download of the float state). A view's failure is its own. */
static int write_snapshots(struct frame_loop *L, int f)
{
	int synced = 0, rc = 0;
	double t = log_clock_s();
	for (int k = 0; rc == 0 && k < L->nv; k++) {
		struct run_view *v = &L->v[k];
		int num = v->rc || (v->mute && !snap_by_ranks(L, v)) ? -1 : out_snap_number(v->sc, f);
		if (num < 0)
			continue;
		if (!synced && (rc = engine_sync(L->eng)))
			break; /* the simulation's failure, every view's */
		synced = 1;
		char path[SCENE_PATH_MAX + 32];
		const char *backend = engine_gpu(L->eng) ? "cuda" : "cpu";
		int vrc = out_snap_path(v->sc->output.snapshots.dir, num, path, sizeof path);
		/* the camera frame f was drawn with (queue_frame); a view that
		 * draws nothing: the scene's camera from the synced state */
		struct render_camera cam = v->cam;
		int have_cam = v->r != NULL || render_camera_at(v->sc, f, L->st, &cam) == 0;
		if (vrc == 0)
			vrc = snap_write(L, v, path, f, backend, have_cam ? &cam : NULL);
		if (vrc) {
			app_view_fail(v, vrc);
			continue;
		}
		app_view_placed(v, APP_OUT_SNAPSHOTS, num);
	}
	L->t_files += log_clock_s() - t;
	return rc;
}

/* Statistics rows and the energy check of frame f, from its diagnostics. */
static int stats_of(struct frame_loop *L, int f)
{
	if (!L->diag_queued)
		return 0;
	struct sim_diag d;
	/* sim_stats_row reads only the time of the state it is given: the
	 * engine's diagnostics carry frame f's */
	struct sim_state at = {0};
	double t = log_clock_s();
	L->diag_queued = 0;
	int rc = engine_diag_take(L->eng, &d, &at.time);
	if (rc == 0 && L->max_e > 0) { /* a blow-up that stays finite */
		if (!L->have_d0) {
			L->d0 = d, L->have_d0 = 1;
		} else if (sim_diag_energy_error(&L->d0, &d) > L->max_e) {
			/* the host state for the message: the engine's latest */
			if ((rc = engine_sync(L->eng)) == 0)
				rc = sim_diag_check_energy(L->st, &L->d0, &d, L->max_e);
			return rc ? rc : NB_ERUNTIME;
		}
	}
	for (int k = 0; rc == 0 && k < L->nv; k++) {
		struct run_view *v = &L->v[k];
		int vrc = v->stats ? sim_stats_row(v->stats, f, &at, &d, L->u) : 0;
		if (vrc)
			app_view_fail(v, vrc);
	}
	L->t_stats += log_clock_s() - t;
	return rc;
}

/* Steps 2: frame f's statistics, then each live view's frame to its writer. */
static int finish_frame(struct frame_loop *L, int f)
{
	int rc = stats_of(L, f);
	for (int k = 0; rc == 0 && k < L->nv; k++) {
		struct run_view *v = &L->v[k];
		if (v->rc || !v->r || v->mute)
			continue;
		double t = log_clock_s();
		int vrc = renderer_push(v->r, f, v->w, &v->res->render_s);
		L->t_push += log_clock_s() - t;
		if (vrc == 0 && v->sc->output.fits_dir[0]) {
			t = log_clock_s();
			vrc = write_fits(L, v, f);
			L->t_files += log_clock_s() - t;
		}
		if (vrc)
			app_view_fail(v, vrc);
	}
	for (int k = 0; rc == 0 && k < L->nv; k++)
		if (L->v[k].rc == 0)
			L->v[k].res->frames_done = f + 1;
	return rc;
}

/* Steps 3-5: frame f's diagnostics, wait for its steps, queue its views. */
static int queue_frame(struct frame_loop *L, int f)
{
	int rc;
	if (L->want_diag) {
		if ((rc = engine_diag_queue(L->eng)))
			return rc;
		L->diag_queued = 1;
	}
	double t = log_clock_s();
	rc = engine_check(L->eng);
	L->t_wait_sim += log_clock_s() - t;
	for (int k = 0; rc == 0 && k < L->nv; k++) {
		struct run_view *v = &L->v[k];
		const struct scene *sc = v->sc;
		if (v->rc || !v->r)
			continue;
		const double fixed[3] = {0, 0, 0};
		struct render_camera cam;
		int vrc = 0;
		if (v->fr) /* follow, frame auto: app/framing.c */
			vrc = app_framing_camera(v->fr, f, &cam);
		else
			render_camera_at_com(sc, f, fixed, &cam);
		if (vrc == 0) {
			v->cam = cam;
			vrc = renderer_queue(v->r, f, &cam);
		}
		if (vrc)
			app_view_fail(v, vrc);
	}
	return rc;
}

/* Step 1: the renderers have read the positions; then the steps of frame f. */
static int advance(struct frame_loop *L, int steps)
{
	for (int k = 0; k < L->nv; k++) {
		/* a failed view's renderer too: its last frame may still read them */
		int rc = L->v[k].r ? renderer_release(L->v[k].r) : 0;
		if (rc)
			return rc;
	}
	double t = log_clock_s();
	int rc = engine_advance_async(L->eng, steps, L->need_pot);
	L->t_wait_sim += log_clock_s() - t;
	return rc;
}

static void loop_setup(struct frame_loop *L)
{
	const struct scene *sc = L->v[0].sc;
	L->max_e = sc->simulation.max_energy_error;
	L->need_pot = L->max_e > 0;
	for (int k = 0; k < L->nv; k++) {
		struct run_view *v = &L->v[k];
		L->need_pot |= v->stats != NULL;
		/* FITS maps need a renderer even without a frame writer; GPU
		 * ranks other than 0 draw nothing (rank 0 holds every body) */
		const int draws = !(v->mute && engine_gpu(L->eng));
		int vrc = v->rc == 0 && (v->w || v->frames) && draws
				  ? renderer_create(v->sc, L->st, L->eng, L->u, &v->r)
				  : 0;
		if (vrc == 0 && v->rc == 0 && v->r)
			vrc = app_framing_create(v->sc, L->st, L->eng, L->u, k, &v->fr);
		if (vrc)
			app_view_fail(v, vrc);
	}
	L->want_diag = L->need_pot;
}

int app_run_frames(struct run_view *v, int nv, struct sim_state *st, struct engine *eng,
		   const struct sim_units *u, int first, struct app_progress *prog, double *sim_s)
{
	/* the frame the state holds: 0, or a restart's snapshot frame first - 1 */
	const int start = first > 0 ? first - 1 : 0;
	struct frame_loop L = {.v = v, .nv = nv, .st = st, .eng = eng, .u = u, .start = start,
			       .t0 = st->time / u->time};
	const struct scene *sc = v[0].sc;
	const int frames = sc->output.frames, spf = sc->simulation.steps_per_frame;
	int rc = 0, f, queued = -1, want_final = 0; /* queued: the frame awaiting finish_frame */
	double t0 = log_clock_s();

	loop_setup(&L);
	/* On the GPU frame f is finished while frame f+1 simulates; on the CPU
	 * nothing runs beside this thread, so each frame is finished at once
	 * (its file appears before the next frame's steps). */
	const int pipelined = engine_gpu(eng) != NULL;
	/* a restart's frame `start` was rendered by the run that wrote it */
	for (f = first; f < frames && app_views_live(v, nv); f++) {
		if (f > start && (rc = advance(&L, spf)))
			break;
		if (queued >= 0) {
			int q = queued;
			queued = -1;
			if ((rc = finish_frame(&L, q)))
				break;
			app_progress_update(prog, q + 1);
		}
		if ((rc = queue_frame(&L, f)) || (rc = write_snapshots(&L, f)))
			break;
		queued = f;
		if (!pipelined) {
			queued = -1;
			if ((rc = finish_frame(&L, f)))
				break;
			app_progress_update(prog, f + 1);
		}
		if (app_interrupted() && f + 1 < frames) {
			rc = NB_EINTR;
			break;
		}
	}
	/* The last frame (or, stopped, the frame in flight) is finished. */
	if ((rc == 0 || rc == NB_EINTR) && queued >= 0) {
		int frc = finish_frame(&L, queued);
		if (frc)
			rc = frc;
		app_progress_update(prog, frc ? queued : queued + 1);
	}
	for (int k = 0; k < nv; k++)
		want_final |= v[k].rc == 0 && v[k].sc->output.final_state[0];
	if (rc == 0 && want_final)
		rc = engine_sync(eng);
	for (int k = 0; k < nv; k++) {
		char who[32] = "";
		if (nv > 1)
			snprintf(who, sizeof who, "view %d: ", k + 1);
		if (v[k].rc == 0 && (rc == 0 || rc == NB_EINTR))
			app_framing_report(v[k].fr, who);
		app_framing_free(&v[k].fr);
		renderer_free(&v[k].r);
	}
	*sim_s += L.t_wait_sim;
	if (engine_gpu(eng) && frames > 0 && (rc == 0 || rc == NB_EINTR) && app_views_live(v, nv))
		log_info("GPU pipeline: %.1f s for %d frames%s; host waited %.1f s for the simulation, "
			 "spent %.1f s on statistics and %.1f s handing frames to the writers",
			 log_clock_s() - t0, v[0].res->frames_done, nv > 1 ? " of every view" : "",
			 L.t_wait_sim, L.t_stats, L.t_push);
	if (rc == 0 || rc == NB_EINTR)
		engine_ts_report(eng);
	if (L.t_files >= 0.05) /* a line only when it is worth a tenth of a second */
		log_info("snapshots and FITS maps: %.1f s on the main thread", L.t_files);
	return rc;
}
