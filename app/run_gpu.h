/* run_gpu.h - the frame loop of app_run when the simulation runs on the GPU
 * (app/run_gpu.c): simulation, rendering, statistics and encoding overlap. */
#ifndef NB_RUN_GPU_H
#define NB_RUN_GPU_H

#include <stdio.h>

#include "../output/output.h"
#include "../sim/sim.h"
#include "app.h"
#include "progress.h"

/* Frames 0 .. output.frames-1 of sc with eng on the GPU (sim_engine_gpu
 * non-NULL): frame 0 is the state eng was created with, each later frame
 * follows steps_per_frame steps. Frames go to w (NULL: no frames wanted,
 * nothing is rendered), statistics rows to stats (NULL: none). st is made
 * current on the host when output.final_state is set. res->frames_done
 * counts the frames finished (queued to w, statistics written); res's
 * stage times are added to: sim_s the time the host waited for the
 * simulation (what the overlap did not hide), render_s the renderer's GPU
 * time (CUDA events). Returns 0, NB_EINTR (SIGINT/SIGTERM: the frames
 * in flight are finished first), or an error. */
int app_run_gpu_frames(const struct scene *sc, struct sim_state *st, struct sim_engine *eng,
		       const struct sim_units *u, FILE *stats, struct out_writer *w,
		       struct app_progress *prog, struct app_result *res);

#endif
