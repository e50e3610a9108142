/* renderer.h - one view's renderer behind one interface, whatever the
 * backend: the frame loop (app/frames.c) queues a frame for a camera, later
 * hands the finished frame to the view's writer, and frees. In the spirit
 * of cuda-samples' BodySystem: one interface, a CPU and a CUDA
 * implementation behind it.
 *
 *   CPU (app/renderer_cpu.c): render/ splat, tone map; synchronous: the
 *     frame is rendered when it is queued, from the host state; the writer
 *     thread converts and encodes it.
 *   GPU (app/renderer_gpu.c): render/cuda/gpu_render.h on the engine's device
 *     positions: splat, tone map and YUV run on the renderer's streams into
 *     a ring of pinned host slots while the engine steps the next frame.
 *
 * A feature of the picture is written once per backend inside these two
 * (each a twin of the other), never in the frame loop. */
#ifndef NB_RENDERER_H
#define NB_RENDERER_H

#include "../engine/engine.h"
#include "../output/output.h"
#include "../render/render.h"
#include "../sim/sim.h"

struct renderer;

/* The ring depth of the GPU renderer: frame f renders into slot f % RING
 * while frame f-1 is handed to the writer (2 would do; 3 gives slack). */
#define RENDERER_RING 3

/* A renderer for view sc (its render and output keys) of the bodies in st,
 * on the engine's backend (GPU when engine_gpu(eng) is non-NULL). st
 * and eng must outlive it. 0, or an error (logged). */
int renderer_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
		    const struct sim_units *u, struct renderer **out);
/* Queue frame f, seen through cam, of the engine's current positions (the
 * steps of frame f are complete: engine_check returned). */
int renderer_queue(struct renderer *r, int f, const struct render_camera *cam);
/* Hand frame f (the last one queued) to writer w; *render_s gets its
 * rendering time added (CPU: wall time; GPU: the renderer's GPU time from
 * CUDA events). */
int renderer_push(struct renderer *r, int f, struct out_writer *w, double *render_s);
/* Make the engine's next steps wait until this renderer has read the
 * positions of the frame last queued (GPU: a stream wait on its consumed
 * event; CPU: nothing, it read them when queued). */
int renderer_release(struct renderer *r);
/* The HDR image of frame f (the last one pushed, before the next queue):
 * w x h x 3 floats in render_image layout (row 0 the top), linear light
 * after psf_wing and glow, before exposure and tone map (output.fits_dir).
 * CPU: the renderer's own image; GPU: downloaded into a host buffer the
 * renderer owns (a synchronous copy of w h 12 bytes per call). Valid until
 * the next queue. 0 or an error (logged). */
int renderer_hdr(struct renderer *r, int f, const float **rgb, int *w, int *h);
/* Free everything; *r = NULL. Safe on NULL. */
void renderer_free(struct renderer **r);

/* ---- the two implementations (their create functions) ---- */
struct renderer_ops {
	int (*queue)(struct renderer *r, int f, const struct render_camera *cam);
	int (*push)(struct renderer *r, int f, struct out_writer *w, double *render_s);
	int (*release)(struct renderer *r);
	void (*free)(struct renderer *r);
	int (*hdr)(struct renderer *r, int f, const float **rgb, int *w, int *h);
};
/* Every implementation's struct starts with this. */
struct renderer {
	const struct renderer_ops *ops;
};
/* The CPU renderer reads the engine only where it is split over ranks
 * (engine_is_split): it then draws this rank's bodies and sums the
 * picture over the ranks; on GPU ranks (engine_split_gpu) its stars splat
 * runs on the rank's GPU where it can (app_rank_splat). */
int renderer_cpu_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
			const struct sim_units *u, struct renderer **out);
/* (app/renderer_rank_gpu.c) The stars splat of a GPU rank's own bodies
 * into an eye-sized (ew x eh) picture on its GPU: *out NULL (0 returned)
 * when sc's look is not that splat alone (render.style stars, no dust,
 * color_by component, no motion blur, not the fisheye). A collective
 * call (every rank, taken or not). 0 or an error (logged). */
struct app_rank_splat;
int app_rank_splat_create(const struct scene *sc, const struct sim_state *st,
			  const struct sim_units *u, int ew, int eh, struct app_rank_splat **out);
/* img (the eye's size) = the splat of st's bodies seen by cam (HDR, as
 * render_stars_splat_c draws it to float rounding). Synchronous. */
int app_rank_splat(struct app_rank_splat *s, const struct render_camera *cam,
		   const struct sim_state *st, struct render_image *img);
void app_rank_splat_free(struct app_rank_splat **s);
int renderer_gpu_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
			const struct sim_units *u, struct renderer **out);
#endif
