/* render_internal.cuh - contract between the GPU renderer's files. They
 * call each other as a tree, from the drivers at the top down to the
 * shared services (tools/circles.py finds no circle among them):
 *   render_create.cu    gpu_render_create / free: the scene's keys, every buffer
 *   render.cu           the frame driver, bodies on the device (gpu_render_frame)
 *   render_ooc.cu       the frame driver out of core: host bodies streamed in chunks
 *   render_dust.cu      dust: depth slabs of stars (and of the diffuse splat)
 *   render_adaptive.cu  adaptive h: k-th neighbour distance, box-tree walk
 *   render_splat.cu     bodies -> HDR image (footprints), then one deposit:
 *   render_splat_tiled.cu   the tiled gather
 *   render_splat_atomic.cu  the atomic deposit (GPU_RENDER_ATOMIC)
 *   render_lod.cu       level-of-detail grids and their upsampling (render.h)
 *   render_stars.cu     render.style: stars (a PSF fixed in pixels; tiled, or atomics)
 *   render_diffuse.cu   render.diffuse_smoothing: screen (a pyramid of the stars)
 *   render_finish.cu    the end of a frame: wing, glow, mask, eyes, tone map into a
 *                       slot, its copy to the host; the slots' ring
 *   render_glow.cu      render.glow and render.psf_wing; the float sum
 *   render_tone.cu      reference level, tone curve, colormap, YUV/RGB
 *   render_overlay.cu   overlay.*: the CPU's codes staged per slot, uploaded
 *   render_shared.cu    at the bottom: temporary device memory, a camera's view
 * Each .cu names its CPU twin in render/ at its top ("CPU twin:").
 * Everything here runs on gr->stream unless said otherwise. */
#ifndef NB_RENDER_INTERNAL_CUH
#define NB_RENDER_INTERNAL_CUH

extern "C" {
#include "../../render/render.h"
#include "../../scene/log.h"
#include "../../sim/sim.h"
}
#include "../../sim/cuda/gpu_internal.h"
#include "gpu_render.h"

#define GR_TILE 16          /* tile side, pixels; one thread per pixel */
#define GR_THREADS 256      /* = GR_TILE * GR_TILE */
#define GR_CHUNK 1024       /* (body, tile) pairs per deposit block; longer tile lists are split */
#define GR_NORM_INLINE 128  /* footprints up to this many samples are normalised by one
			     * thread; larger ones by a warp (render_splat.cu) */
#define GR_LUT_N (255 * 16 + 1) /* colormap samples: every control point (t = k/255) is a sample */
#define GR_MAX_SLOTS 16

/* render_view in the form the kernels read (double, as the CPU). */
struct gr_view {
	double pos[3], fwd[3], right[3], upv[3];
	double focal, near;
	int w, h;
	struct render_proj pj; /* the projection (render/projection_shared.h) */
};


/* One body's footprint (render/splat.c's splat_rec), in the coordinates of
 * its level's grid (level 0: pixels). 56 bytes. */
struct gr_rec {
	double x, y;    /* projected centre, continuous coordinates of its level */
	double inv_r;   /* 1 / r; 0 for a single-pixel deposit */
	float inv_norm; /* 1 / (sum of the kernel samples over the whole footprint) */
	float w[3];     /* weight per channel */
	int i0, i1, j0, j1; /* footprint box, unclipped */
};

/* The level-of-detail grids (render.h, RENDER_LOD_*). Level L is a
 * w[L] x h[L] image at d_hdr + off[L] floats (level 0: the picture itself,
 * off 0), cut into ntx[L] tiles per row whose tile keys are [toff[L],
 * toff[L + 1]). Set by gr_lod_init. */
struct gr_levels {
	int w[RENDER_LOD_LEVELS], h[RENDER_LOD_LEVELS], ntx[RENDER_LOD_LEVELS];
	uint32_t toff[RENDER_LOD_LEVELS + 1];
	size_t off[RENDER_LOD_LEVELS];
	size_t floats; /* all levels: the size of d_hdr */
};

/* A frame's overlay as the tone map reads it (render.h's boxes; nbox 0:
 * none), the codes at gr->d_ov. */
struct gr_overlay {
	int nbox;
	struct render_overlay_box box[RENDER_OVERLAY_BOXES];
	uint16_t ink[3];
};

/* Adaptive-h buffers (render_adaptive.cu). */
struct gr_adaptive;
/* Out-of-core buffers (render_ooc.cu). */
struct gr_ooc;

struct gpu_render {
	/* configuration */
	int w, h, outputs, nslots, adaptive_every; /* w, h: an eye's picture (the frame's when mono) */
	int fw, fh;      /* the frame (outputs, tone map) */
	int stereo;      /* enum scene_stereo: 0 mono */
	int nc;          /* copies of each footprint (render_proj_copies: 4 equirect, else 1) */
	int projection;  /* enum scene_projection: fisheye masks beyond its circle */
	float *d_frame;  /* stereo: the frame's HDR, fw*fh*3 (NULL mono) */
	float *d_pic;    /* the picture the stages after the splat work on (stars, diffuse
			  * layer, wing, glow, mask), w*h*3: d_hdr, or with top-bottom stereo
			  * the eye's half of d_frame (contiguous there), drawn in place */
	enum gpu_render_method method;
	size_t nmax;
	struct sim_units u;
	enum scene_kernel kernel;
	enum scene_colormode mode;
	enum scene_colormap cmap;
	enum scene_tonemap tonemap;
	double exposure, gamma, smoothing;
	int exposure_auto;                /* render.exposure: auto (off with exposure keys) */
	double glow_exposure;             /* render_exposure_fixed: the glow threshold's exposure */
	double white, auto_percentile, auto_target, auto_alpha; /* render_auto_* of the scene */
	double glow, glow_threshold;      /* render.glow (render_glow.cu); 0: off */
	double wing, wing_beta;           /* render.psf_wing, psf_wing_beta (render_glow.cu); 0: off */
	float bg[3];
	int adaptive, neighbours;
	int stars;                      /* render.style: stars (render_stars.cu) */
	double h_cap;                   /* render.h_cap (render_adaptive.cu), 0 off */
	double diffuse;                 /* render.diffuse with stars, 0 off (render.cu) */
	float *d_smooth;                /* its smooth layer, w*h*3 (NULL when off) */
	int diffuse_screen;             /* render.diffuse_smoothing: screen (render_diffuse.cu) */
	float *d_count1;                /* its level-1 body counts, then its pyramids (NULL off) */
	double *d_dpart;                /* its reductions: partials, then 2 sums */
	cudaEvent_t ev_x[4];            /* timing: after the splat, after the glow, after the
					 * auto exposure's histogram and step, before them */
	double psf_sigma;               /* its PSF, pixels (render_stars_sigma) */
	int psf_radius;                 /* render_stars_radius(psf_sigma) */
	struct gr_stars_fast *stars_fast; /* the tiled stars splat's buffers (render_stars.cu) */
	int blur_samples;               /* render.motion_blur: samples per body, 1 off (render_stars.cu) */
	double blur_span;               /* its shutter's open time, internal units (render_blur_span) */
	int ntx, nty, ntiles, key_bits; /* ntiles, key_bits: all levels' tiles (gr_lod_init) */
	struct gr_levels lev;

	cudaStream_t stream, copy_stream;
	cudaEvent_t ev_consumed, ev_pairs, ev_upload;
	cudaEvent_t ev_t[4], ev_c[2]; /* timing: start, after adaptive, after splat, after tone;
				       * copy start/end (on copy_stream) */
	cudaEvent_t ev_planes[GR_MAX_SLOTS], ev_done[GR_MAX_SLOTS];
	int slot_frame[GR_MAX_SLOTS];
	int timed; /* a frame has been recorded */

	/* bodies */
	uint16_t *d_comp; /* component of each body id (nmax) */
	float *d_colors;  /* 3 per component: render_body_light (colour * brightness; with
			   * color_by, brightness alone) */
	int ncomp;
	float *d_h;       /* smoothing per body id, scene units (nmax) */
	int h_valid, h_given, h_frame, last_adaptive;
	float4 *d_upload, *h_stage; /* gpu_render_upload's device copy and pinned staging */
	float4 *d_upload_vel, *h_stage_vel; /* the same for velocities (color_by, motion blur) */
	int own_ready;    /* gr_stars: this frame's bodies are already in its own copy (the
			   * second stereo eye reuses it); cleared by gpu_render_frame */
	/* render.color_by (render/color_by_shared.h): 0 component */
	int color_by;
	double cb_lo, cb_hi; /* range, scene velocity units */
	float *d_cblut;      /* RENDER_COLOR_LUT_N * 3 linear RGB, or NULL */
	struct gr_adaptive *ad;

	/* splat */
	struct gr_rec *d_rec;
	uint8_t *d_level; /* LOD level of each body slot */
	uint32_t *d_count, *d_offset, *d_big, *d_nbig;
	unsigned long long *d_total, *h_total; /* [0] pair count, [1] mask of the levels
						* used (device, pinned host) */
	uint32_t *d_keys[2], *d_vals[2];
	size_t pair_cap, last_pairs;
	uint32_t *d_tile_start, *d_tile_end, *d_tile_nchunk, *d_item_off, *d_nitems;
	uint2 *d_items;
	size_t item_cap;
	float *d_hdr; /* w*h*3, then the coarser levels (lev.floats in all) */
	void *d_temp;
	size_t temp_bytes;
	int warned_fallback;

	/* tone */
	double *d_partial, *d_light; /* reduction partials, total light */
	uint32_t *d_hist;            /* auto exposure: RENDER_AUTO_BINS counts */
	struct render_auto_state *d_auto; /* its moving average (zeroed at create) */
	float *d_lut;                /* GR_LUT_N * 3 */
	size_t off_y, off_u, off_v, off_rgb8, off_rgb16, out_bytes;
	uint8_t *d_out[GR_MAX_SLOTS], *h_out[GR_MAX_SLOTS];

	/* overlay (render_overlay.cu): per slot, the staged codes (pinned) */
	struct gr_overlay ov_meta[GR_MAX_SLOTS];
	uint8_t *h_ov[GR_MAX_SLOTS];
	size_t h_ov_cap[GR_MAX_SLOTS], ov_ncode[GR_MAX_SLOTS];
	uint8_t *d_ov; /* the codes of the frame being tone mapped */
	size_t d_ov_cap;
	/* out of core (render_ooc.cu; params.chunk > 0): nmax is the chunk */
	size_t ooc_chunk;             /* bodies per chunk; 0: in core */
	size_t ntotal;                /* the most bodies a frame may have (st->n at create) */
	const uint16_t *comp_slot;    /* the chunk being drawn: component per slot, read by
				       * the splats instead of d_comp by id (NULL: in core) */
	struct gr_ooc *ooc;           /* its buffers, streams and events */
	/* dust (render_dust.cu; only when the scene has a dust component) */
	int dust_K;              /* render.dust_slabs; 0: no dust, the old path */
	float *d_emit;           /* (K + 2) * w*h*3: emission per slab */
	float *d_tau;            /* (K + 2) * w*h: optical depth per slab */
	uint8_t *d_slab;         /* nmax: slab of each body slot */
	double *d_dust;          /* 2 per component: kappa, footprint h (scene units) */
	unsigned long long *d_dbounds; /* 2: bits of the dust's min and max depth */
	uint32_t *d_dcount, *h_dcount; /* K + 2 per-slab counts (device, pinned host) */
	float4 *d_dpos;          /* diffuse: slots regrouped by slab (nmax) */
	uint32_t *d_dids;        /* their body ids */

	/* glow (render_glow.cu; only with glow > 0) */
	float *d_glow;       /* the pyramid, levels 1..RENDER_GLOW_LEVELS, then a level-1 scratch */
	double *d_glow_part; /* reduction partials, then 3 sums */
};

/* Kernel samples (splat.c kernel_sample), float first. q^2 = d^2 / r^2 is
 * formed in float from the footprint centre relative to a nearby origin
 * (a tile's or the box's corner: |offset| < ~64 cells, so its float
 * rounding is < 4e-6 cells) and 1 / r^2 in float: relative error < ~2e-5
 * even at r = 0.5. Where that q^2 is within GR_EDGE (relative) of the
 * support edge, whether the cell centre is inside is decided again in
 * double with the CPU's operations and order, unfused (gr_inside_exact):
 * so the GPU samples exactly the CPU's cells. The value itself is float
 * (approximate sqrt / exp: relative error ~1e-6). */
#define GR_EDGE 2e-4f

/* The CPU's support test for cell (i, j) of footprint r, in double. */
__device__ __forceinline__ bool gr_inside_exact(int gauss, const struct gr_rec &r, int i, int j)
{
	double dx = (i + 0.5) - r.x, dy = (j + 0.5) - r.y;
	double d2 = __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
	double q2 = __dmul_rn(__dmul_rn(d2, r.inv_r), r.inv_r);
	return gauss ? !(q2 > 2.25) : q2 < 1.0;
}

/* Kernel shape at q2 inside the support, up to the normalisation. */
__device__ __forceinline__ float gr_shape(int gauss, float q2)
{
	if (gauss)
		return __expf(-2.0f * q2);
	float q;
	asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(q2));
	const float t = fmaxf(1.0f - q, 0.0f);
	const float inner = fmaf(6.0f * q2, q - 1.0f, 1.0f), outer = 2.0f * t * t * t;
	return q <= 0.5f ? inner : outer; /* both formed: a select, no branch */
}

/* Sample of footprint r at cell (i, j), (dx, dy) = cell centre - footprint
 * centre in float (from a nearby origin), a2 = 1 / r^2 in float (0 for a
 * single-pixel footprint: q2 = 0, sample 1). */
__device__ __forceinline__ float gr_sample(int gauss, float dx, float dy, float a2,
					   const struct gr_rec &r, int i, int j)
{
	const float q2 = (dx * dx + dy * dy) * a2;
	const float cut = gauss ? 2.25f : 1.0f;
	bool in;
	if (fabsf(q2 - cut) <= GR_EDGE * cut)
		in = gr_inside_exact(gauss, r, i, j);
	else
		in = q2 < cut;
	return in ? gr_shape(gauss, q2) : 0.0f;
}

/* 1 / r^2 of footprint r in float (0 for a single-pixel footprint). */
__device__ __forceinline__ float gr_a2(const struct gr_rec &r)
{
	return (float)(r.inv_r * r.inv_r);
}

/* Sum of the samples of r over its box [i0, i1] x [j0, j1] by one warp
 * (every lane gets the total): lanes walk the box row-major with 32-bit
 * steps; float per lane, double across lanes. */
__device__ __forceinline__ double gr_warp_box_sum(int gauss, const struct gr_rec &r, int lane)
{
	const int bw = r.i1 - r.i0 + 1, bh = r.j1 - r.j0 + 1;
	const float xl = (float)(r.x - r.i0), yl = (float)(r.y - r.j0), a2 = gr_a2(r);
	const int di = 32 % bw, dj = 32 / bw;
	int ii = lane % bw, jj = lane / bw;
	float sum = 0.0f;
	while (jj < bh) {
		sum += gr_sample(gauss, (float)ii + 0.5f - xl, (float)jj + 0.5f - yl, a2, r, r.i0 + ii,
				 r.j0 + jj);
		ii += di;
		jj += dj;
		if (ii >= bw) {
			ii -= bw;
			jj++;
		}
	}
	double d = sum;
	for (int o = 16; o > 0; o >>= 1)
		d += __shfl_xor_sync(0xffffffffu, d, o);
	return d;
}

/* a.b for a double[3] and (d0, d1, d2), in the CPU's order, unfused. */
__device__ __forceinline__ double gr_dot(const double a[3], double d0, double d1, double d2)
{
	return __dadd_rn(__dadd_rn(__dmul_rn(d0, a[0]), __dmul_rn(d1, a[1])), __dmul_rn(d2, a[2]));
}

/* A body at offset d from the eye seen through v's projection: (*x, *y)
 * the centre of its copy 0 (render_proj_map, the dot products in the CPU's
 * order, unfused), *depth the depth that sizes footprints (perspective:
 * along the axis; else the distance). 1 when in front (not culled) with
 * finite x, y. */
__device__ __forceinline__ bool gr_project(const struct gr_view &v, double d0, double d1,
					   double d2, double *x, double *y, double *depth)
{
	const double cx = gr_dot(v.right, d0, d1, d2), cy = gr_dot(v.upv, d0, d1, d2),
		     cz = gr_dot(v.fwd, d0, d1, d2);
	*x = 0.0;
	*y = 0.0;
	return render_proj_map(&v.pj, cx, cy, cz, x, y, depth) && isfinite(*x) && isfinite(*y);
}

/* Blocks of GR_THREADS for n threads. */
static inline unsigned gr_blocks(size_t n)
{
	return (unsigned)((n + GR_THREADS - 1) / GR_THREADS);
}

/* render_shared.cu: make d_temp at least bytes (may synchronise the
 * device); a frame's view of cam, in the kernels' form. */
int gr_temp_reserve(struct gpu_render *gr, size_t bytes);
void gr_view_of(const struct gpu_render *gr, const struct render_camera *cam, struct gr_view *g);

/* render_splat.cu */
int gr_splat_alloc(struct gpu_render *gr);
void gr_splat_free(struct gpu_render *gr);
/* Bodies of in -> gr->d_hdr, seen through v. d_h: per-id smoothing (scene
 * units) or NULL for gr->smoothing. Records gr->ev_consumed once the
 * positions are no longer read. */
int gr_splat(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v,
	     const float *d_h);

/* render_splat_tiled.cu: the tiled deposit of the footprints gr_splat
 * prepared (n body slots, npairs (tile, body) pairs as counted; levels: the
 * mask of the levels used, bit L), upsampled into the picture; and the
 * free of its pair arrays (grown on demand, kept between frames). */
int gr_deposit_tiled(struct gpu_render *gr, int n, size_t npairs, int nch, unsigned levels);
void gr_tiled_free(struct gpu_render *gr);

/* render_splat_atomic.cu: the atomic deposit of the footprints gr_splat
 * prepared (n body slots), into every level; leaves the levels to upsample. */
int gr_deposit_atomic(struct gpu_render *gr, int n, int nch);

/* render_lod.cu: gr->lev, gr->ntiles and gr->key_bits for gr->w x gr->h
 * (called by gr_splat_alloc). */
void gr_lod_init(struct gpu_render *gr);
/* Add the levels of mask (bit L: level L; bit 0 ignored) to the picture,
 * upsampled (render.h). nch == 1 (density): channel 0 only is read, and
 * written to all three channels, even when mask has no level. */
int gr_lod_upsample(struct gpu_render *gr, unsigned mask, int nch);

/* render_stars.cu: bodies of in -> gr->d_pic (zeroed first) through the
 * PSF of render/stars.c, seen through v. Records gr->ev_consumed once the
 * positions are no longer read: the tiled form copies the bodies first,
 * once per frame (gr->own_ready), so a second stereo eye reads that copy. */
int gr_stars(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v);
/* The same into slab images: slot s into out + slab[s] * stride floats
 * (RENDER_DUST_NO_SLAB: nothing); out is not cleared. */
int gr_stars_slabs(struct gpu_render *gr, const struct gpu_render_input *in,
		   const struct gr_view *v, const uint8_t *slab, float *out, size_t stride);
/* Out of core (render_ooc.cu): gr_stars_begin clears d_hdr (and the screen
 * layer's counts) for a frame; gr_stars_add then adds the bodies of each
 * chunk in (slot s: component gr->comp_slot[s]) into both, reading in
 * directly (no own copy; the caller keeps in unchanged until its splat
 * is done on gr->stream). */
int gr_stars_begin(struct gpu_render *gr);
int gr_stars_add(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v);
/* gr_stars' tiled form (the default; GPU_RENDER_ATOMIC or the environment
 * NB_STARS_ATOMIC=1 pick the one-thread-per-body atomic form, which the
 * slabs always use): its buffers, freed at gpu_render_free. */
void gr_stars_free(struct gpu_render *gr);
/* render_finish.cu, for both frame drivers (render.cu, render_ooc.cu): the
 * look after the splat on d_pic (wing, glow, mask); where an eye's picture
 * is drawn (d_pic for eye -1 left, +1 right); a stereo eye stored from
 * d_hdr into d_frame; the tone map, conversions and host copy into slot;
 * the slot's range check (NB_EINPUT, logged). gr_slots_alloc / free: the
 * slots' device and pinned host buffers and events (gr->nslots, at create
 * and gpu_render_free). */
int gr_eye_finish(struct gpu_render *gr);
float *gr_eye_picture(const struct gpu_render *gr, int eye);
int gr_eye_store(struct gpu_render *gr, int eye);
int gr_finish(struct gpu_render *gr, int frame, int slot);
int gr_check_slot(const struct gpu_render *gr, int slot);
int gr_slots_alloc(struct gpu_render *gr);
void gr_slots_free(struct gpu_render *gr);
/* render_ooc.cu: its buffers (gr->ooc), made at create when ooc_chunk > 0. */
int gr_ooc_alloc(struct gpu_render *gr);
/* NB_EINPUT (logged) when sc or st asks for what cannot be drawn in chunks:
 * adaptive h (smooth style), the adaptive diffuse layer, dust. */
int gr_ooc_check(const struct scene *sc, const struct sim_state *st);
void gr_ooc_free(struct gpu_render *gr);

/* render_dust.cu: dust (render/dust.c's meaning). Buffers only when st has
 * a dust component and the style is stars (else dust_K stays 0). */
int gr_dust_alloc(struct gpu_render *gr, const struct scene *sc, const struct sim_state *st);
void gr_dust_free(struct gpu_render *gr);
/* The frame with dust into d_pic (render_dust_frame; d_hdr is its
 * scratch); d_h: the diffuse layer's h by id, or NULL without
 * render.diffuse. */
int gr_dust_frame(struct gpu_render *gr, const struct gpu_render_input *in,
		  const struct gr_view *v, const float *d_h);

/* render_adaptive.cu: gr->d_h[id] = k-th neighbour distance of each body
 * of in (scene units), render/adaptive.h's meaning. */
int gr_adaptive_h(struct gpu_render *gr, const struct gpu_render_input *in);
void gr_adaptive_free(struct gpu_render *gr);
/* render_adaptive.cu: render.h_cap on gr->d_h after gr_adaptive_h
 * (render_adaptive_cap's meaning; does nothing when gr->h_cap <= 0). */
int gr_adaptive_cap(struct gpu_render *gr, const struct gpu_render_input *in);

/* render_glow.cu: render.glow in place on gr->d_pic (render/glow.c's
 * meaning; equirectangular: wrapped across the seam); nothing with glow 0. */
int gr_glow_alloc(struct gpu_render *gr);
void gr_glow_free(struct gpu_render *gr);
int gr_glow(struct gpu_render *gr);
/* render.psf_wing in place on gr->d_pic (render_wing's meaning), before
 * the glow; nothing with psf_wing 0. Uses the glow's buffers. */
int gr_wing(struct gpu_render *gr);

/* render_overlay.cu: queue on gr->stream the upload of slot's staged codes
 * into gr->d_ov and give their boxes in *ov (nbox 0: none staged); the
 * staging is consumed (the slot's next frame has none unless staged
 * again). gr_overlay_free: at gpu_render_free. */
int gr_overlay_take(struct gpu_render *gr, int slot, struct gr_overlay *ov);
void gr_overlay_free(struct gpu_render *gr);
/* render_glow.cu: *out = the sum of the n floats v (in double, in a fixed
 * order: GR_SUM_BLOCKS partials into part, then one block), on gr->stream. */
#define GR_SUM_BLOCKS 256
int gr_sum_floats(struct gpu_render *gr, const float *v, size_t n, double *part, double *out);

/* render_diffuse.cu: render.diffuse_smoothing: screen (render/diffuse_screen.c's
 * meaning). gr_stars fills gr->d_count1 (the level-1 counts) when it is
 * set; gr_diffuse_screen then turns the stars in d_pic into
 * (stars + d layer) / (1 + d). */
int gr_diffuse_alloc(struct gpu_render *gr);
void gr_diffuse_free(struct gpu_render *gr);
int gr_diffuse_screen(struct gpu_render *gr);

/* render_splat_tiled.cu, shared with the tiled stars (render_stars.cu): per
 * tile t < ntiles the number of chunks of at most chunk bodies in [start[t],
 * end[t]) (nchunk[ntiles] = 0, for the scan); then from their exclusive
 * scan item_off, one item (tile, chunk) per chunk and the item count
 * (*nitems). One thread per tile, ntiles + 1 threads. */
__global__ void gr_tile_chunks(const uint32_t *start, const uint32_t *end, int ntiles,
			       uint32_t chunk, uint32_t *nchunk);
__global__ void gr_tile_items(const uint32_t *nchunk, const uint32_t *item_off, int ntiles,
			      uint2 *items, uint32_t *nitems);

/* render_tone.cu */
int gr_tone_alloc(struct gpu_render *gr, const struct scene *sc);
void gr_tone_free(struct gpu_render *gr);
/* gr->d_hdr -> outputs in gr->d_out[slot] (waits for the slot's last copy). */
int gr_tone(struct gpu_render *gr, int slot);

/* Sum of v over the block (blockDim.x a power of two, sh of blockDim.x
 * doubles in shared memory); every thread gets it. The renderer's
 * reductions (tone map level, glow energy). */
__device__ __forceinline__ double gr_block_sum(double v, double *sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1) {
		if ((int)threadIdx.x < o)
			sh[threadIdx.x] += sh[threadIdx.x + o];
		__syncthreads();
	}
	return sh[0];
}

#endif
