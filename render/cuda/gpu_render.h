/* gpu_render.h - the frame renderer on the GPU: splatting (fixed or adaptive
 * smoothing), tone mapping, colormaps and RGB -> YUV420P, with the results
 * copied into a ring of pinned host buffers on a copy stream of its own.
 *
 * Meaning: exactly render_splat + render_tonemap (render/render.h) with the
 * per-body smoothing of render/adaptive.h when render.smoothing is adaptive
 * (render.style: stars: render_stars_splat's PSF instead, no smoothing,
 * with render.motion_blur's sub-frame samples, render/blur_shared.h;
 * with render.diffuse > 0, render_stars_diffuse: the stars over an
 * adaptive smooth layer, or with render.diffuse_smoothing: screen,
 * render_stars_diffuse_screen: over the stars' own light smoothed on a
 * pyramid, render/cuda/render_diffuse.cu; with a dust component,
 * render_dust_frame's depth slabs, render/cuda/render_dust.cu, the screen layer
 * then made from the composited light); camera.projection and
 * camera.stereo as render_view_make and renderer_cpu (each eye's picture
 * on its own, up to the glow and the fisheye mask, then one tone map of
 * the frame); render.h_cap caps the adaptive h as
 * render_adaptive_cap (median sorted on the device);
 * the YUV planes are render_rgb16_to_yuv420p (render/yuv.h) of the 16-bit
 * picture, after the overlay (gpu_render_overlay: render_overlay_apply's
 * rule on the CPU's codes, exact). tests/test_gpu_render.c holds each stage against its CPU twin:
 *   HDR image   |gpu - cpu| <= 1e-4 max(cpu) + 1e-3 |cpu| per pixel and
 *               channel (float summation order differs; the projection is
 *               done in double exactly like the CPU, so footprints agree);
 *   16-bit RGB  within 1 LSB from the same HDR image, 2 LSB end to end;
 *   YUV planes  within 1 of the CPU conversion of the same 16-bit picture;
 *   adaptive h  within 1e-5 relative of render_adaptive_h.
 *
 * Use (one frame; the app keeps several slots in flight):
 *
 *   struct gpu_render *gr;
 *   gpu_render_create(sc, st, NULL, &params, &gr);    // st: comps, n
 *   struct gpu_render_input in;
 *   gpu_render_upload(gr, st, &in);                   // or fill in from the GPU sim
 *   gpu_render_frame(gr, &in, frame, &cam, slot);     // returns once queued
 *   ... (simulate the next frame meanwhile) ...
 *   gpu_render_wait(gr, slot);                        // host buffers now valid
 *   gpu_render_host_frame(gr, slot, &f);              // f.y/u/v, f.rgb8, f.rgb16
 *   ... encode f (the slot is yours until you pass it to gpu_render_frame again)
 *   gpu_render_free(&gr);
 *
 * Ownership: gr owns every device buffer, both streams, the events and the
 * pinned host ring (params.slots slots, each holding the outputs asked for).
 * Bodies passed as a gpu_render_input stay owned by the caller. With CUDA=0
 * every function logs that CUDA is missing and returns NB_ERUNTIME
 * (render/cuda/gpu_render_none.c). All functions return 0 or a negative NB_* code
 * (scene/log.h) after logging. Not thread-safe: one host thread drives a gr. */
#ifndef NB_GPU_RENDER_H
#define NB_GPU_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../../render/render.h"
#include "../../sim/sim.h"
#include "../../sim/cuda/gpu.h"

/* Outputs each slot receives (bit mask). */
enum {
	GPU_RENDER_OUT_YUV420P = 1, /* 8-bit planes Y (w*h), U, V (w/2*h/2 each), BT.709 limited */
	GPU_RENDER_OUT_RGB8 = 2,    /* w*h*3 bytes, out_to8 of the 16-bit values (PNG depth 8, preview) */
	GPU_RENDER_OUT_RGB16 = 4,   /* w*h*3 uint16, render_tonemap's output (PNG depth 16) */
};

/* How bodies reach the image. Both give the same picture within rounding. */
enum gpu_render_method {
	GPU_RENDER_TILED = 0,  /* footprints binned into 16x16 px tiles (sorted by tile key), each
			        * block gathers its tile on chip: no atomics on dense cores (default) */
	GPU_RENDER_ATOMIC = 1, /* each body adds its footprint with global atomicAdd */
};

struct gpu_render_params {
	int outputs;                   /* GPU_RENDER_OUT_* mask, nonzero */
	int slots;                     /* pinned host ring size, 1..16 (e.g. 3) */
	int adaptive_every;            /* recompute adaptive h every this many frames (>= 1) */
	enum gpu_render_method method;
	/* 0: in core, st->n body slots on the device. > 0: out of core
	 * (below), room on the device for this many bodies only (the chunk;
	 * render_ooc_plan makes it from a budget). */
	size_t chunk;
};
/* outputs YUV420P, 3 slots, adaptive h every frame, tiled, in core: the
 * defaults, written here once for the CUDA build and the CPU-only stub. */
static inline void gpu_render_default_params(struct gpu_render_params *p)
{
	memset(p, 0, sizeof *p);
	p->outputs = GPU_RENDER_OUT_YUV420P;
	p->slots = 3;
	p->adaptive_every = 1;
	p->method = GPU_RENDER_TILED;
}

struct gpu_render;

/* render.color_by los_velocity / speed: the colour range and the linear
 * colour table are made here on the host by render_color_by_init from st
 * (the initial state, frame 0's camera), exactly as the CPU renderer does;
 * the kernels then colour each body by color_by_shared.h from in->vel4.
 * Renderer for sc's render block (width, height, style and psf_fwhm,
 * kernel, smoothing or adaptive with render.neighbours, mode, colormap, tonemap, exposure, gamma,
 * background, glow: render_glow before the tone map) and st's bodies: st->n is the most bodies a frame may have;
 * st->comp (may be NULL: component 0) and st->comps colours (times their
 * brightness, render_comp_light) are copied, as
 * component of each body id. u: internal -> scene factors (NULL: from
 * sc->units), as render_splat. Device memory grows later only for the
 * splat pair list. NB_EINPUT on odd width/height with YUV420P output or bad
 * params, NB_ERUNTIME on a CUDA failure (e.g. out of device memory). */
int gpu_render_create(const struct scene *sc, const struct sim_state *st,
		      const struct sim_units *u, const struct gpu_render_params *p,
		      struct gpu_render **out);
void gpu_render_free(struct gpu_render **gr);

/* struct gpu_render_input (where a frame's bodies are) is the simulation's
 * side of the hand-over: sim/cuda/gpu.h. */
/* Copy st's positions and masses (double, internal), and its velocities
 * when render.color_by or render.motion_blur needs them, into gr's own device buffers as float4 and fill *in to point at it (CPU engine and tests).
 * Synchronous on the host side (the data is staged before returning). */
int gpu_render_upload(struct gpu_render *gr, const struct sim_state *st,
		      struct gpu_render_input *in);

/* Queue frame `frame` of in, seen by cam, into ring slot `slot`: adaptive h
 * (when due: frame - last recompute >= adaptive_every, or never computed),
 * splat, tone map, conversions, async copy into the slot's pinned buffers.
 * Returns once queued; the host waits only for one scalar (the splat pair
 * count, which sizes the sort) in between. The caller must be done with
 * the slot's host buffers before calling. in->pos4 must stay unchanged on
 * the device until gpu_render_consumed_event has completed. */
int gpu_render_frame(struct gpu_render *gr, const struct gpu_render_input *in, int frame,
		     const struct render_camera *cam, int slot);
/* cudaEvent_t (as void *) recorded on gr's stream once the last frame no
 * longer reads in->pos4: a simulation stream waits on it
 * (cudaStreamWaitEvent) before the next drift. Valid for gr's lifetime. */
void *gpu_render_consumed_event(struct gpu_render *gr);
/* Block until slot's copy is complete (then its host buffers are valid). */
int gpu_render_wait(struct gpu_render *gr, int slot);
/* 1 if slot's copy is complete, 0 if not yet, NB_ERUNTIME on error. */
int gpu_render_query(struct gpu_render *gr, int slot);

/* A slot's pinned host buffers (NULL for outputs not asked for). Owned by
 * gr; valid after gpu_render_wait until the slot is rendered into again. */
struct gpu_render_host_frame {
	int frame;       /* frame number rendered into the slot, -1 if none yet */
	int w, h;
	const uint8_t *y, *u, *v; /* strides w, w/2, w/2 */
	const uint8_t *rgb8;
	const uint16_t *rgb16;
};
int gpu_render_host_frame(const struct gpu_render *gr, int slot, struct gpu_render_host_frame *f);

/* Milliseconds of each stage of the last frame (CUDA events; waits for it).
 * tonemap covers the reference level, tone curve, colormap and every output
 * conversion (one fused kernel); copy is device -> pinned host. */
struct gpu_render_timing {
	double adaptive_ms, splat_ms, tonemap_ms, copy_ms, total_ms;
	/* splat_ms's parts: the splat itself (stars, or the smooth/adaptive
	 * one) and the diffuse layer after it (0 without one; with
	 * diffuse_smoothing adaptive: the stars splat and the mix). tonemap_ms's
	 * parts: the glow, the auto exposure's histogram and step, and the rest
	 * (total light, tone curve, conversions). */
	double stars_ms, diffuse_ms, glow_ms, exposure_ms, tone_only_ms;
	size_t pairs; /* (body, tile) pairs of the tiled splat, 0 for atomic */
	int adaptive_done; /* 1 if this frame recomputed h */
};
int gpu_render_last_timing(struct gpu_render *gr, struct gpu_render_timing *t);

/* The overlay (overlay.* keys; render_overlay_build's codes, ov->nbox 0:
 * none) of the next frame queued into slot, by gpu_render_frame or
 * gpu_render_tonemap_hdr: its codes are copied into the slot's pinned
 * staging now (after waiting for the slot's last copy to the host), and
 * that frame's tone map composites them into its 16-bit values before
 * every conversion, exactly as render_overlay_apply (the rule of
 * render/overlay_shared.h): so the overlay's pixels equal the CPU's bit
 * for bit given the same 16-bit values under them. A frame queued without
 * a call has no overlay. */
int gpu_render_overlay(struct gpu_render *gr, const struct render_overlay *ov, int slot);

/* ---- out of core (docs/snapshots.md, "Bigger than the GPU") ----
 * Made with params.chunk > 0, a renderer holds device room for one chunk
 * of bodies (twice: double-buffered) whatever st->n says (st->n at create
 * is the most bodies a frame may have: it may be more than the GPU holds;
 * st's comps and render.color_by's initial state are read as in core,
 * st->pos and st->comp are not). A frame then draws host bodies: clear the
 * HDR image; for each chunk k, copy its rows to device buffer k % 2 on a
 * stream of its own (pinned rows directly; others through a pinned
 * staging, packed on the host while the previous chunk is copied and
 * drawn) and splat it into the same image on gr's stream once it has
 * landed (events: the copy of chunk k + 1 overlaps the splat of chunk k);
 * then the look once on the sum: the screen diffuse layer, wing, glow,
 * tone map, conversions, as in core. Splats add, so the picture equals the
 * one-shot render within float summation order (tests/test_gpu_ooc.c: 1
 * LSB of 16 bits).
 * Drawn: render.style stars (its tiled or atomic form, motion blur,
 * color_by, the screen diffuse layer), style smooth with a fixed
 * render.smoothing (each chunk splat on its own, its picture added into an
 * accumulator), every projection, stereo (each eye streams every chunk).
 * Refused at create (NB_EINPUT, gr_ooc_check): adaptive smoothing, the
 * adaptive diffuse layer, dust. gpu_render_frame and gpu_render_upload are
 * refused; gpu_render_set_smoothing and gpu_render_download_h too. */

/* Device bytes of a renderer for sc with params p (p->chunk ignored):
 * *fixed for the frame's images, pyramids and output slots, *per_body for
 * each body slot of the device's capacity (all n bodies in core:
 * out_of_core 0; a chunk: 1), *max_chunk the most bodies a chunk may hold
 * (the splat's 32-bit keys). An estimate made from the allocations' sizes
 * (style smooth: its pair lists assumed 4 tiles per footprint), for
 * render_ooc_plan. CUDA=0: all 0. */
void gpu_render_memory(const struct scene *sc, const struct gpu_render_params *p, int out_of_core,
		       size_t *fixed, size_t *per_body, size_t *max_chunk);

/* Bodies in host memory, rows of 4 floats, internal units. */
struct gpu_render_host {
	const float *pos4;     /* n rows (x, y, z, mass) */
	const float *vel4;     /* n rows (vx, vy, vz, -): needed with render.color_by or
				* motion blur (else not read; may be NULL) */
	const uint16_t *comp;  /* n components (NULL: all component 0) */
	size_t n;              /* <= st->n at create */
	void *owned;           /* gpu_render_mirror's allocation (NULL: the caller's rows) */
};
/* Page-locked host memory (cudaMallocHost) for rows: rows there are
 * copied straight to the device; rows elsewhere first into the renderer's
 * pinned staging (one more host copy per frame). NULL on failure (logged). */
void *gpu_render_host_alloc(size_t bytes);
void gpu_render_host_free(void *p);
/* st (its n bodies) packed once into page-locked rows (render_ooc_pack;
 * velocities only when gr reads them) for a still film drawn over many
 * frames: each frame then only copies. 16 bytes a body (32 with
 * velocities) + 2 with components. Free with gpu_render_mirror_free. */
int gpu_render_mirror(const struct gpu_render *gr, const struct sim_state *st,
		      struct gpu_render_host *hb);
void gpu_render_mirror_free(struct gpu_render_host *hb);
/* Queue frame `frame` of hb's bodies seen by cam into slot (as
 * gpu_render_frame). Returns once every chunk is queued; hb's rows must
 * stay unchanged until gpu_render_wait(slot). Only out of core. */
int gpu_render_frame_host(struct gpu_render *gr, const struct gpu_render_host *hb, int frame,
			  const struct render_camera *cam, int slot);
/* The same from st (double, a moving film): each chunk packed on the host
 * into the pinned staging while the previous one is copied and drawn, so
 * the conversion is part of the frame's cost. st is read only before this
 * returns. */
int gpu_render_frame_state(struct gpu_render *gr, const struct sim_state *st, int frame,
			   const struct render_camera *cam, int slot);
/* The last out-of-core frame's stages (waits for it): chunks drawn (per
 * eye with stereo, summed), bytes copied to the device, milliseconds of
 * the copies (summed over chunks, copy stream), of the splats (summed over
 * chunks, gr's stream, from the copy's arrival), the look (the last
 * splat's end to the tone map's end: diffuse layer, wing, glow, tone map,
 * conversions), the host staging (packing, summed; 0 for pinned rows) and
 * the whole frame (first copy's start to the host copy's end). */
struct gpu_render_ooc_timing {
	int chunks;
	size_t bytes;
	double upload_ms, splat_ms, look_ms, stage_ms, frame_ms;
};
int gpu_render_ooc_last_timing(struct gpu_render *gr, struct gpu_render_ooc_timing *t);
/* Bodies per chunk, 0 in core. */
size_t gpu_render_chunk(const struct gpu_render *gr);

/* ---- pieces, for tests and benchmarks ---- */
/* Switch the splat method from the next frame on. */
void gpu_render_set_method(struct gpu_render *gr, enum gpu_render_method m);
/* The manual exposure of the frames queued from now on (render.exposure's
 * meaning; e > 0). With exposure keys (render_camera_has_exposure) the
 * renderer is created with auto exposure off, and the caller sets each
 * frame's render_camera_exposure here before gpu_render_frame. */
void gpu_render_set_exposure(struct gpu_render *gr, double e);
/* Use these per-body smoothing lengths (scene units, indexed by body id, n
 * values) instead of render.smoothing / adaptive from now on. */
int gpu_render_set_smoothing(struct gpu_render *gr, const float *h_by_id, size_t n);
/* The device HDR image of the last frame into rgb (w*h*3, render_image
 * layout; after the glow, when render.glow > 0; with camera.stereo the
 * whole frame, both eyes). Synchronous. */
int gpu_render_download_hdr(struct gpu_render *gr, float *rgb);
/* Replace the device HDR image with rgb and redo the glow, tone map and
 * output conversions into slot (as gpu_render_frame after its splat). */
int gpu_render_tonemap_hdr(struct gpu_render *gr, const float *rgb, int frame, int slot);
/* The auto exposure state (render.exposure: auto) after the last frame
 * queued: its gain was that frame's (render_auto_exposure's meaning, with the
 * frame's own histogram: no lag). All zero when auto is off. Synchronous. */
int gpu_render_auto_exposure(struct gpu_render *gr, struct render_auto_state *st);
/* Adaptive h of the last recompute, scene units, indexed by body id
 * (n values). Synchronous. */
int gpu_render_download_h(struct gpu_render *gr, float *h_by_id, size_t n);

#ifdef __cplusplus
}
#endif
#endif
