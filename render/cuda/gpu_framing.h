/* gpu_framing.h - the framing statistics on the GPU (render/cuda/framing.cu):
 * camera.follow: light's light centre, camera.frame: auto's distance and
 * the share of the light inside a frame, from the bodies on the device
 * (the engine's positions: they never leave the GPU per frame).
 *
 * Meaning: exactly render_light_centre, render_frame_need and
 * render_frame_inside (render/render.h, the rules in
 * render/framing_shared.h). The histograms are sums of 64-bit integers,
 * so they equal the CPU's wherever the two compute the same bin; the
 * values come from float positions and masses (the CPU's from double),
 * and the trimmed and inside sums are added in double in another order.
 * tests/test_gpu_framing.c holds each against its CPU twin on
 * float-rounded states: centre within 1e-6 of the range of the drawn
 * bodies, distance within 2^-18 of the range of the needs, inside share
 * within 1e-9.
 *
 * Cost per call: up to five passes over the bodies of 24 bytes a body
 * (position, id, weight by id; estimated ~10 us each for 1M bodies on an
 * H100, not measured here: test_gpu_framing's
 * framing_of_a_million_bodies_is_cheap times the three calls of a frame and
 * asks < 0.5 ms) and three one-block kernels, one copy of ~300 bytes to
 * the host and one wait for it (the caller needs the number before the
 * frame is queued).
 *
 * Ownership: fr owns its device buffers, its stream and pinned result;
 * the bodies of a gpu_render_input stay the caller's. All functions
 * return 0 or NB_ERUNTIME (logged). With CUDA=0 each logs that CUDA is
 * missing (render/cuda/gpu_render_none.c). Not thread-safe. */
#ifndef NB_GPU_FRAMING_H
#define NB_GPU_FRAMING_H

#include "gpu_render.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_framing;

/* For st's bodies (n, id, comp as created: the weight of each body id is
 * w_by_comp[st->comp[i]], render_framing_weights). */
int gpu_framing_create(const struct sim_state *st, const float *w_by_comp,
		       struct gpu_framing **out);
void gpu_framing_free(struct gpu_framing **fr);
/* The statistics of the bodies of in (its ready_event waited for on fr's
 * stream; returns once the result is on the host). Internal units. */
int gpu_framing_centre(struct gpu_framing *fr, const struct gpu_render_input *in,
		       struct render_light_centre *out);
int gpu_framing_need(struct gpu_framing *fr, const struct gpu_render_input *in,
		     const struct render_frame_geom *g, double fraction, double *dist);
int gpu_framing_inside(struct gpu_framing *fr, const struct gpu_render_input *in,
		       const struct render_frame_geom *g, double dist, double *fraction);
/* Tests: st's positions and masses as float4 into fr's own buffer, ids 0..n-1. */
int gpu_framing_upload(struct gpu_framing *fr, const struct sim_state *st,
		       struct gpu_render_input *in);

#ifdef __cplusplus
}
#endif
#endif
