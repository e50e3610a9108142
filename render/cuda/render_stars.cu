/* render_stars.cu - render.style: stars on the GPU, render/stars.c's
 * meaning: each body deposits W = mass * light (colour times brightness;
 * density mode: mass) through a Gaussian PSF of sigma gr->psf_sigma PIXELS
 * integrated over each pixel (erf differences), over the 2R + 1 pixels
 * from floor(x) - R in x and in y, normalised by the footprint's sum, and
 * clipped to the image.
 *
 * Exactness. Projection in double with the CPU's operation order, unfused
 * (as render_splat.cu's prepare), so the footprint boxes are the CPU's;
 * the 1D weights in double with the same formula (the device erf differs
 * from glibc's by a few ulp), each pixel's value rounded to float as on the
 * CPU. Only the summation order differs: atomicAdd from many threads, so
 * the image matches the CPU within gpu_render.h's HDR tolerance, not bit
 * for bit.
 *
 * Two forms. The simple (atomic) one, gr_stars_deposit, one thread per
 * body: ~60 double flops of projection, 2 (2R + 2) double erf for the
 * weights wx[k], wy[k] (R = 3 at the default FWHM 1.5 px: 16 erf; at most
 * 2 x 26 at 8 px), then (2R + 1)^2 pixels (49 at the default, at most
 * 625) of 3 float GLOBAL atomicAdd each. Dense cores put many bodies on
 * the same pixels, so atomics there contend (measured on the H100: 2.8 ms
 * at 1080p / 1M, 26.6 ms at 10M). It is kept obviously equal to the CPU,
 * serves the dust slabs, and is picked for gr_stars by GPU_RENDER_ATOMIC
 * or the environment NB_STARS_ATOMIC=1 (A/B in one build). The tiled one
 * (the default, below gr_stars_deposit, with its predicted cost): the same
 * per-pixel values accumulated per screen tile in shared memory. With the
 * screen diffuse layer on, each drawn body inside the frame also adds 1 to
 * its level-1 cell of gr->d_count1 (render_diffuse_counts), in both.
 * render.color_by adds 16 bytes (the velocity) and ~30 double flops per
 * body (color_by_shared.h), in both (the tiled form: in both passes).
 *
 * render.motion_blur (samples S > 1, render/blur_shared.h): point slot p
 * in [0, n S) is body slot p / S at its sample k = p % S, projected from
 * x + v t_k (double, unfused, as the CPU) with weight W / S and the
 * body's frame-time colour; both forms run over the n S points as over n
 * bodies, so the cost is the unblurred splat's for n S bodies (16 more
 * bytes read per point: the velocity). The screen layer's counts are made
 * at the frame's positions, once per body (at its sample 0), as
 * render_diffuse_counts does. S = 1: the code and the values of before
 * (no velocity read).
 *
 * Projections (render/projection_shared.h, gr_project): equirectangular
 * frames draw render_proj_copies (4) copies of each footprint
 * (render_proj_ghost: across the seam, over the poles), in the atomic form
 * by a loop in the body's thread, in the tiled form as 4 keys per body
 * (copy k of slot s is record s * 4 + k; most copies miss the frame and
 * take the key "nothing"), so the sort has 4 n keys.
 * CPU twin: render/stars.c. */
#include "render_internal.cuh"
#include "../../render/blur_shared.h"
#include "../../render/color_by_shared.h"

#include <stdlib.h>

#include <cub/cub.cuh>

struct gr_stars_args {
	struct gr_view v;
	double length, mass; /* internal = scene * factor */
	const uint16_t *comp;
	const float *colors; /* colour * brightness per component */
	int ncomp, density;
	double sigma; /* PSF, pixels */
	int R;        /* footprint half-width, pixels */
	const uint8_t *slab; /* dust: slot s goes into hdr + slab[s] * stride; NULL: hdr */
	size_t stride;
	/* render.color_by (color_by_shared.h): by 0 = component */
	int cb_by;
	double cb_lo, cb_hi, velocity; /* range (scene units); internal = scene * velocity */
	const float *cb_lut;
	const float4 *vel4;
	/* render.motion_blur: samples per body (1 off) and the shutter's span */
	int samples;
	double blur_span; /* internal time */
};

/* stars.c's stars_weights: the normalised 1D weights of the PSF centred at
 * x over the 2R + 1 pixels from floor(x) - R. */
__device__ void gr_stars_weights(double x, double s, int R, double *wk)
{
	const double inv = 1.0 / (s * sqrt(2.0));
	const int i0 = (int)floor(x) - R;
	double sum = 0.0, lo = erf((i0 - x) * inv);
	for (int k = 0; k <= 2 * R; k++) {
		const double hi = erf((i0 + k + 1 - x) * inv);
		wk[k] = 0.5 * (hi - lo);
		sum += wk[k];
		lo = hi;
	}
	for (int k = 0; k <= 2 * R; k++)
		wk[k] /= sum;
}

/* Body slot s projected, (*x, *y) in pixels, and its weight w: 1 if it is
 * in front of the camera and not black (render/stars.c's pass 1, before
 * the footprint tests). k < 0: at its position (the unblurred splat, the
 * counts); k >= 0: at motion-blur sample k, from x + v t_k, weight W / S. */
__device__ __forceinline__ bool gr_stars_point(const struct gr_stars_args &a, const float4 *pos4,
					       const uint32_t *id, int s, int k, double *x,
					       double *y, float *w)
{
	const float4 pf = pos4[s];
	const uint32_t b = id ? id[s] : (uint32_t)s;
	const struct gr_view &v = a.v;
	const double p0 = (double)pf.x / a.length, p1 = (double)pf.y / a.length,
		     p2 = (double)pf.z / a.length;
	double q0 = p0, q1 = p1, q2 = p2; /* where it is drawn */
	if (k >= 0) {
		const float4 vb = a.vel4[s];
		const double t = render_blur_time(a.blur_span, k, a.samples);
		q0 = render_blur_drift((double)pf.x, (double)vb.x, t) / a.length;
		q1 = render_blur_drift((double)pf.y, (double)vb.y, t) / a.length;
		q2 = render_blur_drift((double)pf.z, (double)vb.z, t) / a.length;
	}
	const double d0 = q0 - v.pos[0], d1 = q1 - v.pos[1], d2 = q2 - v.pos[2];
	double depth;
	if (!gr_project(v, d0, d1, d2, x, y, &depth))
		return false;
	double m = (double)pf.w / a.mass;
	if (k >= 0)
		m /= a.samples; /* as render/stars.c: each sample carries 1/S */
	const int c = a.comp ? a.comp[b] : 0;
	double cc[3] = {1.0, 1.0, 1.0};
	if (a.cb_by) { /* the body's colour at the frame's time, blurred or not */
		const float4 vf = a.vel4[s];
		const double pp[3] = {p0, p1, p2};
		const double vv[3] = {(double)vf.x / a.velocity, (double)vf.y / a.velocity,
				      (double)vf.z / a.velocity};
		render_color_lookup(a.cb_lut, a.cb_lo, a.cb_hi, render_color_q(a.cb_by, pp, vv, v.pos),
				    cc);
	}
	for (int k3 = 0; k3 < 3; k3++) {
		const float col = (!a.density && c < a.ncomp) ? a.colors[3 * c + k3] : 1.0f;
		w[k3] = (float)(m * col * cc[k3]);
	}
	return !(w[0] == 0.0f && w[1] == 0.0f && w[2] == 0.0f); /* black: nothing, as on the CPU */
}

/* Point slot p: body slot p at its position (samples 1), or body slot
 * p / S at sample p % S. */
__device__ __forceinline__ bool gr_stars_body(const struct gr_stars_args &a, const float4 *pos4,
					      const uint32_t *id, int p, double *x, double *y,
					      float *w)
{
	if (a.samples <= 1)
		return gr_stars_point(a, pos4, id, p, -1, x, y, w);
	return gr_stars_point(a, pos4, id, p / a.samples, p % a.samples, x, y, w);
}

/* render_diffuse_counts: a drawn body inside the frame adds 1 to its
 * level-1 cell. */
__device__ __forceinline__ void gr_stars_count(const struct gr_view &v, double x, double y,
					       float *count1)
{
	if (count1 && x >= 0 && x < v.w && y >= 0 && y < v.h) {
		const int ci = (int)floor(x), cj = (int)floor(y);
		if (ci < v.w && cj < v.h)
			atomicAdd(count1 + (size_t)(cj >> 1) * ((v.w + 1) >> 1) + (ci >> 1), 1.0f);
	}
}

/* The counts of point slot p: with samples 1 its own (x, y) when drawn
 * (drawn 1); with motion blur, once per body, at sample 0, the body at its
 * frame-time position (render_diffuse_counts counts the unblurred bodies). */
__device__ __forceinline__ void gr_stars_count_point(const struct gr_stars_args &a,
						     const float4 *pos4, const uint32_t *id, int p,
						     bool drawn, double x, double y, float *count1)
{
	if (!count1)
		return;
	if (a.samples <= 1) {
		if (drawn)
			gr_stars_count(a.v, x, y, count1);
		return;
	}
	if (p % a.samples != 0)
		return;
	double x0, y0;
	float w0[3];
	if (gr_stars_point(a, pos4, id, p / a.samples, -1, &x0, &y0, w0))
		gr_stars_count(a.v, x0, y0, count1);
}

/* 1 if the footprint of a body at (x, y) reaches the image (stars.c's
 * stars_prepare; the first test also keeps the int casts safe). */
__device__ __forceinline__ bool gr_stars_reaches(const struct gr_view &v, int R, double x, double y)
{
	if (x + R + 1 < 0 || x - R - 1 >= v.w || y + R + 1 < 0 || y - R - 1 >= v.h)
		return false;
	const int i0 = (int)floor(x) - R, j0 = (int)floor(y) - R;
	return !(i0 + 2 * R < 0 || i0 >= v.w || j0 + 2 * R < 0 || j0 >= v.h);
}

/* One thread per body slot: project, weigh, deposit with atomics (the
 * simple form: GPU_RENDER_ATOMIC, NB_STARS_ATOMIC=1, and the dust slabs). */
__global__ void __launch_bounds__(GR_THREADS)
gr_stars_deposit(struct gr_stars_args a, const float4 *pos4, const uint32_t *id, int n, float *hdr,
		 float *count1)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	const struct gr_view &v = a.v;
	double x, y;
	float w[3];
	const bool drawn = gr_stars_body(a, pos4, id, s, &x, &y, w);
	gr_stars_count_point(a, pos4, id, s, drawn, x, y, count1);
	if (!drawn)
		return;
	if (a.slab) { /* samples 1 (the dust slabs take no motion blur) */
		const uint8_t k = a.slab[s];
		if (k == RENDER_DUST_NO_SLAB)
			return;
		hdr += (size_t)k * a.stride;
	}
	const int R = a.R, nc = render_proj_copies(&v.pj);
	for (int copy = 0; copy < nc; copy++) { /* equirect: across the seam, over the poles */
		double cx, cy;
		render_proj_ghost(&v.pj, copy, x, y, &cx, &cy);
		if (!gr_stars_reaches(v, R, cx, cy))
			continue;
		const int i0 = (int)floor(cx) - R, j0 = (int)floor(cy) - R;
		double wx[RENDER_STARS_MAX_WIDTH], wy[RENDER_STARS_MAX_WIDTH];
		gr_stars_weights(cx, a.sigma, R, wx);
		gr_stars_weights(cy, a.sigma, R, wy);
		const int ia = max(i0, 0), ib = min(i0 + 2 * R, v.w - 1);
		const int ja = max(j0, 0), jb = min(j0 + 2 * R, v.h - 1);
		for (int j = ja; j <= jb; j++) {
			const double fy = wy[j - j0];
			for (int i = ia; i <= ib; i++) {
				const double f = wx[i - i0] * fy;
				float *px = hdr + 3 * ((size_t)j * v.w + i);
				atomicAdd(px + 0, (float)(w[0] * f));
				atomicAdd(px + 1, (float)(w[1] * f));
				atomicAdd(px + 2, (float)(w[2] * f));
			}
		}
	}
}

/* The tiled form (default; gr_stars without slabs). Bodies keyed by the
 * GR_ST_TILE-pixel screen tile of their centre pixel clamped into the
 * image, sorted by key (CUB radix sort), each tile's list cut into
 * GR_ST_CHUNK-body chunks; one block per chunk accumulates its tile plus
 * an R-pixel apron, (GR_ST_TILE + 2R)^2 pixels x 3 floats, in shared
 * memory with shared atomics, then adds the nonzero values to the image
 * with global atomics (apron pixels overlap the neighbouring tiles'
 * blocks, and a tile's chunks overlap each other). Every in-image pixel
 * of a footprint lies within R of the clamped centre, so inside the
 * apron. Same per-pixel values (float)(w * wx * wy) as the simple form:
 * only the summation order differs (gpu_render.h's tolerance).
 *
 * Predicted cost per body (R = 3): key pass 16 B pos4 (+ 4 B id, 2 B comp)
 * read, 8 B key + slot written; radix sort of 8 B pairs over
 * ceil(log2(tiles + 1)) <= 16 bits: 2 passes, ~32 B moved; ranges 4 B;
 * deposit 4 B slot + 16 B pos4 (+ id, comp) read again (projection redone
 * in double, same code, same result), 16 double erf, 49 x 3 = 147 SHARED
 * atomics, 0 global atomics. Per tile chunk: (32 + 2R)^2 x 3 = 4332
 * shared floats zeroed and at most 4332 global atomics (only nonzero
 * pixels: a tile with one body adds its 49 x 3). Dense cores: 200k bodies
 * on one tile = 196 chunks x <= 4332 global atomics instead of 29.4M. So
 * ~60-70 B of traffic and ~147 shared atomics per body, global atomics
 * ~ min(147 per body, 4332 per chunk). */
#define GR_ST_TILE 32     /* tile side, pixels */
#define GR_ST_THREADS 256 /* deposit block */
#define GR_ST_CHUNK 1024  /* bodies per deposit block; longer tile lists are split */

struct gr_stars_fast {
	uint32_t *keys[2], *vals[2];
	size_t cap; /* point slots the key arrays hold: body_cap x render.motion_blur samples */
	size_t body_cap; /* body slots pos, vel and id hold */
	uint32_t *tstart, *tend, *nchunk, *item_off, *nitems; /* ntiles + 1 each; nitems 1 */
	uint2 *items;    /* (tile, chunk) per deposit block */
	/* The frame's own copy of the caller's bodies (gr_stars): the sort and
	 * the deposit read these, so the simulation may move on (ev_consumed)
	 * once the copy is made instead of after the whole splat. */
	float4 *pos, *vel; /* vel only with render.color_by or motion blur */
	uint32_t *id;
	size_t item_cap; /* = ntiles + cap / GR_ST_CHUNK + 1 */
	int samples;     /* gr->blur_samples when made */
	int w, h, ntx, ntiles, bits;
};

/* Key of each slot: its tile (row-major, ntx per row), or ntiles when it
 * draws nothing; fills count1 as the simple form does. */
__global__ void gr_stars_key(struct gr_stars_args a, const float4 *pos4, const uint32_t *id, int n,
			     int ntx, uint32_t ntiles, float *count1, uint32_t *keys, uint32_t *vals)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	const struct gr_view &v = a.v;
	double x, y;
	float w[3];
	const int nc = render_proj_copies(&v.pj);
	const bool drawn = gr_stars_body(a, pos4, id, s, &x, &y, w);
	gr_stars_count_point(a, pos4, id, s, drawn, x, y, count1);
	for (int copy = 0; copy < nc; copy++) {
		uint32_t key = ntiles;
		double cx, cy;
		if (drawn) {
			render_proj_ghost(&v.pj, copy, x, y, &cx, &cy);
			if (gr_stars_reaches(v, a.R, cx, cy)) {
				const int ci = min(max((int)floor(cx), 0), v.w - 1);
				const int cj = min(max((int)floor(cy), 0), v.h - 1);
				key = (uint32_t)((cj / GR_ST_TILE) * ntx + ci / GR_ST_TILE);
			}
		}
		const size_t e = (size_t)s * nc + copy;
		keys[e] = key;
		vals[e] = (uint32_t)e;
	}
}

/* Each tile's [start, end) in the sorted keys (arrays zeroed before). */
__global__ void gr_stars_ranges(const uint32_t *keys, int n, uint32_t ntiles, uint32_t *start,
				uint32_t *end)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const uint32_t k = keys[i];
	if (k >= ntiles)
		return;
	if (i == 0 || keys[i - 1] != k)
		start[k] = (uint32_t)i;
	if (i == n - 1 || keys[i + 1] != k)
		end[k] = (uint32_t)i + 1;
}

/* One block per (tile, chunk) item; blocks past *nitems return at once.
 * Dynamic shared memory: (GR_ST_TILE + 2R)^2 x 3 floats. */
__global__ void __launch_bounds__(GR_ST_THREADS, 4)
gr_stars_tile(struct gr_stars_args a, const float4 *pos4, const uint32_t *id, const uint32_t *vals,
	      const uint32_t *start, const uint32_t *end, const uint2 *items, const uint32_t *nitems,
	      int ntx, float *hdr)
{
	extern __shared__ float acc[];
	if (blockIdx.x >= *nitems)
		return;
	const struct gr_view &v = a.v;
	const int R = a.R, side = GR_ST_TILE + 2 * R, np = side * side;
	const uint2 it = items[blockIdx.x];
	const uint32_t t = it.x;
	const uint32_t e0 = start[t] + it.y * GR_ST_CHUNK, e1 = min(end[t], e0 + GR_ST_CHUNK);
	const int x0 = (int)(t % (uint32_t)ntx) * GR_ST_TILE - R; /* shared pixel (0, 0) */
	const int y0 = (int)(t / (uint32_t)ntx) * GR_ST_TILE - R;
	for (int k = threadIdx.x; k < 3 * np; k += blockDim.x)
		acc[k] = 0.0f;
	__syncthreads();
	const int nc = render_proj_copies(&v.pj);
	for (uint32_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
		const uint32_t rec = vals[e]; /* slot s, copy k: s * nc + k */
		const int s = (int)(rec / (uint32_t)nc), copy = (int)(rec - (uint32_t)s * nc);
		double x, y;
		float w[3];
		/* Keyed to this tile, so it draws and reaches the image. */
		if (!gr_stars_body(a, pos4, id, s, &x, &y, w))
			continue;
		render_proj_ghost(&v.pj, copy, x, y, &x, &y);
		const int i0 = (int)floor(x) - R, j0 = (int)floor(y) - R;
		double wx[RENDER_STARS_MAX_WIDTH], wy[RENDER_STARS_MAX_WIDTH];
		gr_stars_weights(x, a.sigma, R, wx);
		gr_stars_weights(y, a.sigma, R, wy);
		const int ia = max(i0, 0), ib = min(i0 + 2 * R, v.w - 1);
		const int ja = max(j0, 0), jb = min(j0 + 2 * R, v.h - 1);
		/* Inside the apron by construction (same projection as the key
		 * pass, bit for bit); the test only guards the shared array. */
		if (ia < x0 || ib >= x0 + side || ja < y0 || jb >= y0 + side)
			continue;
		for (int j = ja; j <= jb; j++) {
			const double fy = wy[j - j0];
			float *row = acc + 3 * (size_t)(j - y0) * side;
			for (int i = ia; i <= ib; i++) {
				const double f = wx[i - i0] * fy;
				float *px = row + 3 * (i - x0);
				atomicAdd(px + 0, (float)(w[0] * f));
				atomicAdd(px + 1, (float)(w[1] * f));
				atomicAdd(px + 2, (float)(w[2] * f));
			}
		}
	}
	__syncthreads();
	for (int k = threadIdx.x; k < np; k += blockDim.x) {
		const int gi = x0 + k % side, gj = y0 + k / side;
		if (gi < 0 || gi >= v.w || gj < 0 || gj >= v.h)
			continue;
		float *px = hdr + 3 * ((size_t)gj * v.w + gi);
		for (int c = 0; c < 3; c++)
			if (acc[3 * k + c] != 0.0f)
				atomicAdd(px + c, acc[3 * k + c]);
	}
}

void gr_stars_free(struct gpu_render *gr)
{
	struct gr_stars_fast *f = gr->stars_fast;
	if (!f)
		return;
	for (int k = 0; k < 2; k++) {
		cudaFree(f->keys[k]);
		cudaFree(f->vals[k]);
	}
	cudaFree(f->tstart);
	cudaFree(f->tend);
	cudaFree(f->nchunk);
	cudaFree(f->item_off);
	cudaFree(f->nitems);
	cudaFree(f->items);
	cudaFree(f->pos);
	cudaFree(f->vel);
	cudaFree(f->id);
	free(f);
	gr->stars_fast = NULL;
}

/* Buffers for n body slots (n x gr->blur_samples points) on a w x h image
 * (grown on demand, kept). */
static int gr_stars_fast_reserve(struct gpu_render *gr, size_t n)
{
	struct gr_stars_fast *f = gr->stars_fast;
	if (f && f->body_cap >= n && f->samples == gr->blur_samples && f->w == gr->w &&
	    f->h == gr->h)
		return 0;
	gr_stars_free(gr);
	gr->own_ready = 0; /* the frame's copy went with the old buffers */
	f = (struct gr_stars_fast *)calloc(1, sizeof *f);
	if (!f) {
		log_error("GPU render: out of memory (stars buffers)");
		return NB_ERUNTIME;
	}
	gr->stars_fast = f;
	f->w = gr->w;
	f->h = gr->h;
	f->ntx = (gr->w + GR_ST_TILE - 1) / GR_ST_TILE;
	f->ntiles = f->ntx * ((gr->h + GR_ST_TILE - 1) / GR_ST_TILE);
	f->bits = 1;
	while (f->bits < 32 && (1u << f->bits) <= (uint32_t)f->ntiles)
		f->bits++; /* keys 0 .. ntiles (ntiles: draws nothing) */
	size_t bodies = n > gr->nmax ? n : gr->nmax; /* f->cap stays 0 until all are made */
	if (bodies < 1)
		bodies = 1;
	const size_t cap = bodies * (size_t)gr->blur_samples; /* point slots */
	f->samples = gr->blur_samples;
	const size_t nkey = cap * (size_t)gr->nc; /* a key per footprint copy of each point */
	f->item_cap = (size_t)f->ntiles + nkey / GR_ST_CHUNK + 1;
	const size_t nt = (size_t)f->ntiles + 1;
	for (int k = 0; k < 2; k++) {
		CUDA_CHECK(cudaMalloc(&f->keys[k], nkey * sizeof(uint32_t)));
		CUDA_CHECK(cudaMalloc(&f->vals[k], nkey * sizeof(uint32_t)));
	}
	CUDA_CHECK(cudaMalloc(&f->tstart, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&f->tend, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&f->nchunk, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&f->item_off, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&f->nitems, sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&f->items, f->item_cap * sizeof(uint2)));
	if (!gr->ooc_chunk) { /* gr_stars' own copy; out of core the chunk is the renderer's */
		CUDA_CHECK(cudaMalloc(&f->pos, bodies * sizeof(float4)));
		CUDA_CHECK(cudaMalloc(&f->id, bodies * sizeof(uint32_t)));
		if (gr->color_by || gr->blur_samples > 1)
			CUDA_CHECK(cudaMalloc(&f->vel, bodies * sizeof(float4)));
	}
	f->body_cap = bodies;
	f->cap = cap;
	return 0;
}

/* The tiled form into out (not cleared here), n > 0 point slots (in->n
 * bodies x a.samples). */
static int gr_stars_tiled(struct gpu_render *gr, const struct gpu_render_input *in,
			  const struct gr_stars_args &a, int n, float *out, float *count1)
{
	cudaStream_t st = gr->stream;
	if (gr_stars_fast_reserve(gr, in->n) != 0)
		return NB_ERUNTIME;
	struct gr_stars_fast *f = gr->stars_fast;
	const int nt = f->ntiles;
	const int nk = n * gr->nc; /* keys: one per copy of each footprint */
	gr_stars_key<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
		a, (const float4 *)in->pos4, in->id, n, f->ntx, (uint32_t)nt, count1, f->keys[0],
		f->vals[0]);
	CUDA_CHECK(cudaGetLastError());

	cub::DoubleBuffer<uint32_t> keys(f->keys[0], f->keys[1]);
	cub::DoubleBuffer<uint32_t> vals(f->vals[0], f->vals[1]);
	size_t b_sort = 0, b_scan = 0;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, vals, nk, 0, f->bits, st));
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, b_scan, f->nchunk, f->item_off, nt + 1, st));
	if (gr_temp_reserve(gr, b_sort > b_scan ? b_sort : b_scan) != 0)
		return NB_ERUNTIME;
	b_sort = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(gr->d_temp, b_sort, keys, vals, nk, 0, f->bits, st));

	CUDA_CHECK(cudaMemsetAsync(f->tstart, 0, ((size_t)nt + 1) * sizeof(uint32_t), st));
	CUDA_CHECK(cudaMemsetAsync(f->tend, 0, ((size_t)nt + 1) * sizeof(uint32_t), st));
	gr_stars_ranges<<<gr_blocks((size_t)nk), GR_THREADS, 0, st>>>(keys.Current(), nk, (uint32_t)nt,
								      f->tstart, f->tend);
	CUDA_CHECK(cudaGetLastError());
	gr_tile_chunks<<<gr_blocks((size_t)nt + 1), GR_THREADS, 0, st>>>(f->tstart, f->tend, nt,
									  GR_ST_CHUNK, f->nchunk);
	CUDA_CHECK(cudaGetLastError());
	b_scan = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(gr->d_temp, b_scan, f->nchunk, f->item_off, nt + 1,
						 st));
	gr_tile_items<<<gr_blocks((size_t)nt + 1), GR_THREADS, 0, st>>>(f->nchunk, f->item_off, nt,
									 f->items, f->nitems);
	CUDA_CHECK(cudaGetLastError());

	/* Items <= ntiles + n / GR_ST_CHUNK: launch that many, the rest return. */
	const size_t nblocks = (size_t)nt + (size_t)nk / GR_ST_CHUNK + 1;
	const int side = GR_ST_TILE + 2 * a.R;
	const size_t shmem = (size_t)side * side * 3 * sizeof(float); /* <= 56^2 x 12 = 37632 B */
	gr_stars_tile<<<(unsigned)nblocks, GR_ST_THREADS, shmem, st>>>(
		a, (const float4 *)in->pos4, in->id, vals.Current(), f->tstart, f->tend, f->items,
		f->nitems, f->ntx, out);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* The tiled form unless GPU_RENDER_ATOMIC or NB_STARS_ATOMIC=1 (A/B). */
static int gr_stars_use_tiled(const struct gpu_render *gr)
{
	const char *env = getenv("NB_STARS_ATOMIC");
	return gr->method != GPU_RENDER_ATOMIC && !(env && atoi(env) != 0);
}

/* gr_stars and gr_stars_slabs: the launch, into out (slab NULL) or its slabs;
 * clear: the screen layer's counts start from 0 (not when adding a chunk). */
static int gr_stars_launch(struct gpu_render *gr, const struct gpu_render_input *in,
			   const struct gr_view *v, const uint8_t *slab, float *out, size_t stride,
			   int clear)
{
	cudaStream_t st = gr->stream;
	/* motion blur: in->n bodies x S points (the dust slabs: no blur; the
	 * loader refuses both together) */
	const int samples = slab ? 1 : gr->blur_samples;
	const int n = (int)in->n * samples; /* <= INT32_MAX: gr_check_params */
	float *count1 = gr->diffuse_screen ? gr->d_count1 : NULL; /* render_diffuse.cu's level 1 */
	if (count1 && clear)
		CUDA_CHECK(cudaMemsetAsync(count1, 0, (size_t)render_lod_dim(gr->w, 1) *
							  render_lod_dim(gr->h, 1) * sizeof(float), st));
	if (n > 0) {
		struct gr_stars_args a;
		a.v = *v;
		a.length = gr->u.length;
		a.mass = gr->u.mass;
		a.comp = gr->comp_slot ? gr->comp_slot : gr->d_comp;
		a.colors = gr->d_colors;
		a.ncomp = gr->ncomp;
		a.density = gr->mode == SCENE_COLOR_DENSITY;
		a.sigma = gr->psf_sigma;
		a.R = gr->psf_radius;
		a.slab = slab;
		a.stride = stride;
		a.cb_by = gr->color_by;
		a.cb_lo = gr->cb_lo;
		a.cb_hi = gr->cb_hi;
		a.velocity = gr->u.velocity;
		a.cb_lut = gr->d_cblut;
		a.vel4 = (const float4 *)in->vel4;
		a.samples = samples;
		a.blur_span = gr->blur_span;
		if (!slab && gr_stars_use_tiled(gr))
			return gr_stars_tiled(gr, in, a, n, out, count1);
		gr_stars_deposit<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
			a, (const float4 *)in->pos4, in->id, n, out, count1);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* The tiled form first copies the caller's bodies (20 B per body, 36 with
 * color_by or motion blur: ~15 us at 1M on an H100) and records ev_consumed after the
 * copy, so the simulation's next steps overlap the sort and the deposit
 * rather than wait for them (measured: the stars look slowed the default
 * movie's simulation by ~0.3 s when ev_consumed followed the deposit). The
 * copy is made once per frame: a stereo frame's second eye (and the
 * adaptive diffuse layer's second call) read it again (gr->own_ready). */
int gr_stars(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v)
{
	cudaStream_t st = gr->stream;
	CUDA_CHECK(cudaMemsetAsync(gr->d_pic, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
	struct gpu_render_input own = *in;
	if (in->n > 0 && gr_stars_use_tiled(gr)) {
		if (gr_stars_fast_reserve(gr, in->n) != 0)
			return NB_ERUNTIME;
		struct gr_stars_fast *f = gr->stars_fast;
		const int vel = (gr->color_by || gr->blur_samples > 1) && in->vel4 && f->vel;
		if (!gr->own_ready) {
			CUDA_CHECK(cudaMemcpyAsync(f->pos, in->pos4, in->n * sizeof(float4),
						   cudaMemcpyDeviceToDevice, st));
			if (in->id)
				CUDA_CHECK(cudaMemcpyAsync(f->id, in->id, in->n * sizeof(uint32_t),
							   cudaMemcpyDeviceToDevice, st));
			if (vel)
				CUDA_CHECK(cudaMemcpyAsync(f->vel, in->vel4, in->n * sizeof(float4),
							   cudaMemcpyDeviceToDevice, st));
			CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
			gr->own_ready = 1;
		}
		own.pos4 = f->pos;
		if (in->id)
			own.id = f->id;
		if (vel)
			own.vel4 = f->vel;
		return gr_stars_launch(gr, &own, v, NULL, gr->d_pic, 0, 1);
	}
	if (gr_stars_launch(gr, in, v, NULL, gr->d_pic, 0, 1))
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	return 0;
}

int gr_stars_slabs(struct gpu_render *gr, const struct gpu_render_input *in,
		   const struct gr_view *v, const uint8_t *slab, float *out, size_t stride)
{
	return gr_stars_launch(gr, in, v, slab, out, stride, 1);
}

int gr_stars_begin(struct gpu_render *gr)
{
	cudaStream_t st = gr->stream;
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
	if (gr->diffuse_screen)
		CUDA_CHECK(cudaMemsetAsync(gr->d_count1, 0, (size_t)render_lod_dim(gr->w, 1) *
							       render_lod_dim(gr->h, 1) * sizeof(float),
					   st));
	return 0;
}

int gr_stars_add(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v)
{
	return gr_stars_launch(gr, in, v, NULL, gr->d_hdr, 0, 0);
}
