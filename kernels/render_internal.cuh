/* render_internal.cuh - contract between the GPU renderer's files:
 *   render.cu           public API (gpu_render.h): buffers, streams, ring
 *   render_splat.cu     bodies -> HDR image (tiled gather or atomics)
 *   render_adaptive.cu  adaptive h: k-th neighbour distance on a grid
 *   render_tone.cu      reference level, tone curve, colormap, YUV/RGB
 * Everything here runs on gr->stream unless said otherwise. */
#ifndef NB_RENDER_INTERNAL_CUH
#define NB_RENDER_INTERNAL_CUH

extern "C" {
#include "../render/render.h"
#include "../sim/log.h"
#include "../sim/sim.h"
}
#include "gpu_internal.h"
#include "gpu_render.h"

#define GR_TILE 16          /* tile side, pixels; one thread per pixel */
#define GR_THREADS 256      /* = GR_TILE * GR_TILE */
#define GR_CHUNK 1024       /* (body, tile) pairs per deposit block; longer tile lists are split */
#define GR_NORM_INLINE 128  /* footprints up to this many samples are normalised by one
			     * thread; larger ones by a warp (render_splat.cu) */
#define GR_LUT_N (17 * 256 + 1) /* colormap samples: every control point (t = k/17) is a sample */
#define GR_MAX_SLOTS 16

/* render_view in the form the kernels read (double, as the CPU). */
struct gr_view {
	double pos[3], fwd[3], right[3], upv[3];
	double focal, near;
	int w, h;
};

/* One body's footprint (render/splat.c's splat_rec). 56 bytes. */
struct gr_rec {
	double x, y;    /* projected centre, continuous pixel coordinates */
	double inv_r;   /* 1 / r; 0 for a single-pixel deposit */
	float inv_norm; /* 1 / (sum of the kernel samples over the whole footprint) */
	float w[3];     /* weight per channel */
	int i0, i1, j0, j1; /* footprint box, unclipped */
};

/* Adaptive-h buffers (render_adaptive.cu). */
struct gr_adaptive;

struct gpu_render {
	/* configuration */
	int w, h, outputs, nslots, adaptive_every;
	enum gpu_render_method method;
	size_t nmax;
	struct sim_units u;
	enum scene_kernel kernel;
	enum scene_colormode mode;
	enum scene_colormap cmap;
	enum scene_tonemap tonemap;
	double exposure, gamma, smoothing;
	float bg[3];
	int adaptive, neighbours;
	int ntx, nty, ntiles, key_bits;

	cudaStream_t stream, copy_stream;
	cudaEvent_t ev_consumed, ev_pairs, ev_upload;
	cudaEvent_t ev_t[4], ev_c[2]; /* timing: start, after adaptive, after splat, after tone;
				       * copy start/end (on copy_stream) */
	cudaEvent_t ev_planes[GR_MAX_SLOTS], ev_done[GR_MAX_SLOTS];
	int slot_frame[GR_MAX_SLOTS];
	int timed; /* a frame has been recorded */

	/* bodies */
	uint16_t *d_comp; /* component of each body id (nmax) */
	float *d_colors;  /* 3 per component */
	int ncomp;
	float *d_h;       /* smoothing per body id, scene units (nmax) */
	int h_valid, h_given, h_frame, last_adaptive;
	float4 *d_upload, *h_stage; /* gpu_render_upload's device copy and pinned staging */
	struct gr_adaptive *ad;

	/* splat */
	struct gr_rec *d_rec;
	uint32_t *d_count, *d_offset, *d_big, *d_nbig;
	unsigned long long *d_total, *h_total; /* pair count (device, pinned host) */
	uint32_t *d_keys[2], *d_vals[2];
	size_t pair_cap, last_pairs;
	uint32_t *d_tile_start, *d_tile_end, *d_tile_nchunk, *d_item_off, *d_nitems;
	uint2 *d_items;
	size_t item_cap;
	float *d_hdr; /* w*h*3 */
	void *d_temp;
	size_t temp_bytes;
	int warned_fallback;

	/* tone */
	double *d_partial, *d_light; /* reduction partials, total light */
	float *d_lut;                /* GR_LUT_N * 3 */
	size_t off_y, off_u, off_v, off_rgb8, off_rgb16, out_bytes;
	uint8_t *d_out[GR_MAX_SLOTS], *h_out[GR_MAX_SLOTS];
};

/* render.cu: make d_temp at least bytes (may synchronise the device). */
int gr_temp_reserve(struct gpu_render *gr, size_t bytes);

/* render_splat.cu */
int gr_splat_alloc(struct gpu_render *gr);
void gr_splat_free(struct gpu_render *gr);
/* Bodies of in -> gr->d_hdr, seen through v. d_h: per-id smoothing (scene
 * units) or NULL for gr->smoothing. Records gr->ev_consumed once the
 * positions are no longer read. */
int gr_splat(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v,
	     const float *d_h);

/* render_adaptive.cu: gr->d_h[id] = k-th neighbour distance of each body
 * of in (scene units), render/adaptive.h's meaning. */
int gr_adaptive_h(struct gpu_render *gr, const struct gpu_render_input *in);
void gr_adaptive_free(struct gpu_render *gr);

/* render_tone.cu */
int gr_tone_alloc(struct gpu_render *gr);
void gr_tone_free(struct gpu_render *gr);
/* gr->d_hdr -> outputs in gr->d_out[slot] (waits for the slot's last copy). */
int gr_tone(struct gpu_render *gr, int slot);

#endif
