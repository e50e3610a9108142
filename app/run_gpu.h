/* run_gpu.h - the frame loop of app_run_views when the simulation runs on
 * the GPU (app/run_gpu.c): simulation, rendering, statistics and encoding
 * overlap. */
#ifndef NB_RUN_GPU_H
#define NB_RUN_GPU_H

#include <stdio.h>

#include "../output/output.h"
#include "../sim/sim.h"
#include "app.h"
#include "progress.h"
#include "run_view.h"

/* Frames 0 .. output.frames-1 of the views v[0..nv-1] with eng on the GPU
 * (sim_engine_gpu non-NULL): frame 0 is the state eng was created with,
 * each later frame follows steps_per_frame steps. Each live view with a
 * writer (v->w) gets its own GPU renderer, fed from the simulation's
 * device positions; each with v->stats a row per frame (one device
 * reduction per frame serves them all). A view whose renderer, camera or
 * outputs fail is failed alone (run_view_fail); the loop ends early only
 * when no view is left. st is made current on the host when a live view
 * sets output.final_state. Each live view's res->frames_done counts its
 * frames finished (queued to its writer, statistics written); its
 * render_s gets its renderer's GPU time (CUDA events); *sim_s gets the
 * time the host waited for the simulation (what the overlap did not hide).
 * Returns 0, NB_EINTR (SIGINT/SIGTERM: the frames in flight are finished
 * first), or an error of the simulation (which fails every view). */
int app_run_gpu_frames(struct run_view *v, int nv, struct sim_state *st, struct sim_engine *eng,
		       const struct sim_units *u, struct app_progress *prog, double *sim_s);

#endif
