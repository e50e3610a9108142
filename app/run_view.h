/* run_view.h - one view of the simulation inside app_run_views (app/run.c)
 * and the frame loop (app/frames.c): its scene, its renderer, its open
 * outputs and its outcome. One simulation drives views[0..nv-1]; a single
 * run is nv = 1. Private to app/run.c and app/frames.c; the view's own
 * functions are app/run_view.c's. */
#ifndef NB_RUN_VIEW_H
#define NB_RUN_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "../output/output.h"
#include "../render/render.h"
#include "app.h"
#include "outputs.h"
#include "renderer.h"

struct run_view {
	const struct scene *sc;
	struct app_result *res;
	int rc;               /* 0 while the view is live; its error once it failed */
	struct out_writer *w; /* NULL: no frames wanted (or the view failed) */
	FILE *stats;          /* NULL: no statistics (or the view failed) */
	struct renderer *r;   /* made by the frame loop for a view with a writer */
	struct app_framing *fr; /* made by the frame loop when its camera moves by itself */
	/* What this run put in place under final names, per row of the
	 * outputs table (app/outputs.h): a file (placed), or the members
	 * first..last of a sequence (-1: none). A failed run removes it, an
	 * interrupted one what the row's fate says (app_view_placed marks). */
	struct run_placed {
		int placed, first, last;
	} out[APP_OUTPUTS_MAX];
	struct render_camera cam; /* the camera of the frame last queued (FITS pixel scale) */
	/* over MPI ranks, on ranks other than 0: no outputs of its own; it
	 * renders its bodies for rank 0's frames (frames: a view rank 0 films) */
	int mute, frames;
};

/* The view failed with rc (already logged by whoever failed): its writer
 * and statistics are closed with their temporary files removed, and it
 * takes no more frames. A view that has failed stays failed. */
void app_view_fail(struct run_view *v, int rc);
/* Row `row` of v's outputs is in place: a file (member < 0), or member
 * `member` of a sequence. */
void app_view_placed(struct run_view *v, enum app_out_row row, int member);
/* Number of views still live. */
int app_views_live(const struct run_view *v, int nv);

/* The frame loop (app/frames.c), for both backends: frames 0 ..
 * output.frames-1 of the views v[0..nv-1]; frame 0 is the state eng was
 * created with, each later frame follows steps_per_frame steps. Each live
 * view with a writer (v->w) gets its own renderer (renderer.h) on the
 * engine's backend; each with v->stats a row per frame (one diagnostics
 * reduction per frame serves them all); simulation.max_energy_error is
 * checked on every frame's diagnostics. A view whose renderer, camera or
 * outputs fail is failed alone (app_view_fail); the loop ends early only
 * when no view is left. st is made current on the host when a live view
 * sets output.final_state. Each live view's res->frames_done counts its
 * frames finished (handed to its writer, statistics written), its
 * render_s its rendering time; *sim_s gets the time the host spent
 * stepping or waiting for the simulation. Returns 0, NB_EINTR (a stop
 * request: the frame in flight is finished first), or an error of the
 * simulation (which fails every view). */
/* first: the first frame rendered: 0, or for a restart the snapshot's
 * frame + 1 (st then holds the snapshot's frame, first - 1, which is not
 * rendered again). Snapshots (output.snapshots) are written
 * after each frame's steps, FITS maps (output.fits_dir) beside each
 * view's frame. */
struct app_progress;
int app_run_frames(struct run_view *v, int nv, struct sim_state *st, struct engine *eng,
		   const struct sim_units *u, int first, struct app_progress *prog, double *sim_s);

#endif
