/* run_view.h - one view of the simulation inside app_run_views (app/run.c,
 * app/run_gpu.c): its scene, its open outputs and its outcome. One
 * simulation drives views[0..nv-1]; a single run is nv = 1. Private to
 * app/run*.c. */
#ifndef NB_RUN_VIEW_H
#define NB_RUN_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "../output/output.h"
#include "../render/render.h"
#include "app.h"

struct run_view {
	const struct scene *sc;
	struct app_result *res;
	int rc;               /* 0 while the view is live; its error once it failed */
	struct out_writer *w; /* NULL: no frames wanted (or the view failed) */
	FILE *stats;          /* NULL: no statistics (or the view failed) */
	int wrote_initial, wrote_final; /* the state CSVs this run put in place */
	/* the CPU renderer (run.c): HDR image, 16-bit frame, adaptive h */
	struct render_image img;
	uint16_t *rgb16;
	double *h;   /* n, scene units; NULL with fixed smoothing */
	int h_frame; /* frame of the last recompute of h, -1 none */
};

/* The view failed with rc (already logged by whoever failed): its writer
 * and statistics are closed with their temporary files removed, and it
 * takes no more frames. A view that has failed stays failed. */
void run_view_fail(struct run_view *v, int rc);
/* Number of views still live. */
int run_views_live(const struct run_view *v, int nv);

#endif
