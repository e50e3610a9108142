/* render_tone.cu - HDR image -> the 8/16-bit outputs on the GPU, in one
 * fused kernel after a deterministic reduction (render/tonemap.c's meaning,
 * render/yuv.c's YUV):
 *
 *  1. total light: fixed grid of TN_PART_BLOCKS blocks, each summing a
 *     grid-stride share in double, then one block summing the partials in
 *     order (same result every run, any device);
 *  2. one thread per 2x2 pixel block: level (exposure / (RENDER_REF_SCALE
 *     x mean)), curve, gamma, colormap (density mode), background screen,
 *     round to 16 bits exactly as render_tonemap; then, from those 16-bit
 *     values, RGB16 / RGB8 (out_to8) / Y per pixel and U, V per block.
 *     The curve and gamma run in float: ~1e-7 relative, under 0.01 LSB of
 *     the 16-bit result, so the outputs match the CPU within 1 LSB (ties).
 *     Filmic (render.tonemap: filmic) runs render/tone_shared.h's
 *     render_filmic_rgb itself, in double, then gamma in float.
 *  With render.exposure: auto, between 1 and 2: the lit pixels' luminance
 *  histogram (tn_hist: render_auto_bin per pixel, shared-memory atomics,
 *  then one global atomicAdd per bin and block), then one thread
 *  (tn_auto_step) takes the percentile and moves the state on the device
 *  (render_auto_level, render_auto_step: the CPU's very code), and the tone
 *  map reads the gain from there: this frame's own histogram, no lag and no
 *  host round trip. Extra cost per pixel: 12 bytes read, one double log2
 *  and one shared atomic; per frame: a 1 KB memset and a 256-step loop.
 *
 * Cost per pixel: 12 bytes read twice (reduction, then tone map), 1.5 bytes
 * written (YUV) plus 3 (RGB8) and 6 (RGB16) when asked; ~3 pow + 3 log per
 * pixel in components mode. Memory-bound at 4K: ~0.1 ms on an H100.
 * CPU twin: render/tonemap.c, render/yuv.c, render/autoexp.c. */
#include "render_internal.cuh"
#include "../../render/overlay_shared.h"
#include "../../render/tone_shared.h"

extern "C" {
#include "../../render/yuv.h"
}

#define TN_PART_BLOCKS 1024

struct tn_args {
	int w, h, tonemap, density, outputs, exposure_auto;
	double exposure, white;
	float inv_gamma, curve_norm; /* 1/gamma; 1/log1p(K) or 1/asinh(K) */
	float bg[3];
	size_t off_y, off_u, off_v, off_rgb8, off_rgb16;
	struct gr_overlay ov; /* overlay.*: boxes of the codes at ov_code (nbox 0: none) */
};

/* 12 bytes per pixel read, float4 loads (w*h*3 floats; the tail scalar). */
__global__ void __launch_bounds__(GR_THREADS) tn_sum_part(const float *hdr, size_t nvals, double *part)
{
	__shared__ double sh[GR_THREADS];
	double s = 0.0;
	const size_t n4 = nvals / 4, stride = (size_t)gridDim.x * blockDim.x;
	const float4 *h4 = (const float4 *)hdr;
	for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n4; k += stride) {
		const float4 v = h4[k];
		s += ((double)v.x + (double)v.y) + ((double)v.z + (double)v.w);
	}
	if (blockIdx.x == 0 && threadIdx.x < nvals - 4 * n4)
		s += hdr[4 * n4 + threadIdx.x];
	s = gr_block_sum(s, sh);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

__global__ void __launch_bounds__(TN_PART_BLOCKS) tn_sum_final(const double *part, double *light)
{
	__shared__ double sh[TN_PART_BLOCKS];
	double s = gr_block_sum(part[threadIdx.x], sh);
	if (threadIdx.x == 0)
		*light = s;
}

/* render/tonemap.c curve() then clamp, in float. */
__device__ __forceinline__ float tn_curve(const struct tn_args &a, double v)
{
	if (!(v > 0))
		return 0.0f;
	float f = (float)v;
	if (a.tonemap == SCENE_TONEMAP_LOG)
		f = log1pf((float)RENDER_CURVE_K * f) * a.curve_norm;
	else if (a.tonemap == SCENE_TONEMAP_ASINH)
		f = asinhf((float)RENDER_CURVE_K * f) * a.curve_norm;
	else if (a.tonemap == SCENE_TONEMAP_FILMIC)
		f = (float)render_filmic_curve(v, a.white);
	return f < 1.0f ? f : 1.0f;
}

/* Luminance histogram of the lit pixels (render_auto_histogram's meaning):
 * a block's counts in shared memory, then added to hist (zeroed before). */
__global__ void __launch_bounds__(GR_THREADS)
tn_hist(const float *hdr, size_t npix, const double *light, double nvals, uint32_t *hist)
{
	__shared__ uint32_t sh[RENDER_AUTO_BINS];
	for (int b = threadIdx.x; b < RENDER_AUTO_BINS; b += blockDim.x)
		sh[b] = 0;
	__syncthreads();
	/* a as render_auto_exposure: render_tonemap_reference / RENDER_REF_SCALE */
	const double a = RENDER_REF_SCALE * *light / nvals / RENDER_REF_SCALE;
	if (a > 0) {
		const size_t stride = (size_t)gridDim.x * blockDim.x;
		for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < npix; p += stride) {
			const float *in = hdr + 3 * p;
			double y = render_lum709(in[0], in[1], in[2]);
			if (y > 0)
				atomicAdd(&sh[render_auto_bin(y, a)], 1u);
		}
	}
	__syncthreads();
	for (int b = threadIdx.x; b < RENDER_AUTO_BINS; b += blockDim.x)
		if (sh[b])
			atomicAdd(&hist[b], sh[b]);
}

/* One thread: percentile and moving-average step (render_auto_exposure). */
__global__ void tn_auto_step(const uint32_t *hist, const double *light, double nvals, double pct,
			     double target, double alpha, struct render_auto_state *st)
{
	const double a = RENDER_REF_SCALE * *light / nvals / RENDER_REF_SCALE;
	render_auto_step(st, render_auto_level(hist, a, pct), target, alpha);
}

__device__ __forceinline__ uint16_t tn_quant16(float x)
{
	if (!(x > 0.0f))
		return 0;
	if (x >= 1.0f)
		return 65535;
	return (uint16_t)__float2uint_rn(x * 65535.0f);
}

__device__ __forceinline__ uint8_t tn_round8(float x)
{
	float r = floorf(x + 0.5f);
	return (uint8_t)(r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
}

__global__ void __launch_bounds__(GR_THREADS)
tn_tonemap(struct tn_args a, const float *hdr, const double *light, const float *lut,
	   const struct render_auto_state *auto_st, const uint8_t *ov_code, uint8_t *out)
{
	const int bx = blockIdx.x * blockDim.x + threadIdx.x, by = blockIdx.y;
	if (2 * bx >= a.w)
		return;
	const double ref = RENDER_REF_SCALE * *light / (3.0 * (double)a.w * (double)a.h);
	const double gain = a.exposure_auto ? auto_st->gain : ref > 0 ? a.exposure / ref : 0.0;
	const float ys = (float)(219.0 / 65535.0);
	uint32_t sum[3] = {0, 0, 0};
	for (int dy = 0; dy < 2; dy++) {
		for (int dx = 0; dx < 2; dx++) {
			const int i = 2 * bx + dx, j = 2 * by + dy;
			if (i >= a.w || j >= a.h)
				continue;
			const size_t p = (size_t)j * a.w + i;
			const float *in = hdr + 3 * p;
			float v[3];
			if (a.density) {
				double lum = 0.2126 * in[0] + 0.7152 * in[1] + 0.0722 * in[2];
				float t = powf(tn_curve(a, gain * lum), a.inv_gamma);
				float x = t * (float)(GR_LUT_N - 1);
				int k = min((int)x, GR_LUT_N - 2);
				float f = x - (float)k;
				for (int c = 0; c < 3; c++)
					v[c] = (1.0f - f) * lut[3 * k + c] + f * lut[3 * k + 3 + c];
			} else if (a.tonemap == SCENE_TONEMAP_FILMIC) {
				double c[3] = {gain * in[0], gain * in[1], gain * in[2]}, f[3];
				render_filmic_rgb(c, a.white, f);
				for (int k = 0; k < 3; k++)
					v[k] = powf((float)f[k], a.inv_gamma);
			} else {
				for (int c = 0; c < 3; c++)
					v[c] = powf(tn_curve(a, gain * in[c]), a.inv_gamma);
			}
			uint16_t o[3];
			for (int c = 0; c < 3; c++)
				o[c] = tn_quant16(a.bg[c] + (1.0f - a.bg[c]) * v[c]);
			if (a.ov.nbox) /* render_overlay_apply's rule, before every output */
				render_overlay_pixel(a.ov.box, a.ov.nbox, ov_code, a.ov.ink, i, j, o);
			for (int c = 0; c < 3; c++)
				sum[c] += o[c];
			if (a.outputs & GPU_RENDER_OUT_RGB16) {
				uint16_t *d = (uint16_t *)(out + a.off_rgb16) + 3 * p;
				d[0] = o[0], d[1] = o[1], d[2] = o[2];
			}
			if (a.outputs & GPU_RENDER_OUT_RGB8) {
				uint8_t *d = out + a.off_rgb8 + 3 * p;
				for (int c = 0; c < 3; c++)
					d[c] = (uint8_t)(((uint32_t)o[c] * 255u + 32767u) / 65535u);
			}
			if (a.outputs & GPU_RENDER_OUT_YUV420P) {
				float luma = (float)RENDER_YUV_KR * o[0] + (float)RENDER_YUV_KG * o[1] +
					     (float)RENDER_YUV_KB * o[2];
				out[a.off_y + p] = tn_round8(16.0f + ys * luma);
			}
		}
	}
	if (a.outputs & GPU_RENDER_OUT_YUV420P) { /* w, h even: a full block */
		const float s4 = (float)(0.25 / 65535.0);
		const float r = s4 * sum[0], g = s4 * sum[1], b = s4 * sum[2];
		const float luma = (float)RENDER_YUV_KR * r + (float)RENDER_YUV_KG * g +
				   (float)RENDER_YUV_KB * b;
		const size_t q = (size_t)by * (a.w / 2) + bx;
		out[a.off_u + q] = tn_round8(128.0f + 112.0f * (b - luma) / (float)(1.0 - RENDER_YUV_KB));
		out[a.off_v + q] = tn_round8(128.0f + 112.0f * (r - luma) / (float)(1.0 - RENDER_YUV_KR));
	}
}

int gr_tone_alloc(struct gpu_render *gr, const struct scene *sc)
{
	float *lut = (float *)malloc(GR_LUT_N * 3 * sizeof(float));
	if (!lut) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	/* Samples of render_colormap_scene itself; the control points
	 * t = k/255 fall on samples, so linear interpolation between samples
	 * is exact for the tables (cubehelix, a formula, within ~1e-6). */
	for (int s = 0; s < GR_LUT_N; s++)
		render_colormap_scene(sc, (double)s / (GR_LUT_N - 1), lut + 3 * s);
	cudaError_t e = cudaMalloc(&gr->d_lut, GR_LUT_N * 3 * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMemcpy(gr->d_lut, lut, GR_LUT_N * 3 * sizeof(float), cudaMemcpyHostToDevice);
	free(lut);
	CUDA_CHECK(e);
	CUDA_CHECK(cudaMalloc(&gr->d_partial, TN_PART_BLOCKS * sizeof(double)));
	CUDA_CHECK(cudaMalloc(&gr->d_light, sizeof(double)));
	CUDA_CHECK(cudaMalloc(&gr->d_hist, RENDER_AUTO_BINS * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_auto, sizeof(struct render_auto_state)));
	CUDA_CHECK(cudaMemset(gr->d_auto, 0, sizeof(struct render_auto_state)));
	return 0;
}

void gr_tone_free(struct gpu_render *gr)
{
	cudaFree(gr->d_lut);
	cudaFree(gr->d_partial);
	cudaFree(gr->d_light);
	cudaFree(gr->d_hist);
	cudaFree(gr->d_auto);
}

int gr_tone(struct gpu_render *gr, int slot)
{
	cudaStream_t st = gr->stream;
	struct tn_args a;
	/* The frame: d_hdr, or with stereo both eyes in d_frame. */
	const float *hdr = gr->d_frame ? gr->d_frame : gr->d_hdr;
	const int fw = gr->fw, fh = gr->fh;
	a.w = fw;
	a.h = fh;
	a.tonemap = gr->tonemap;
	a.density = gr->mode == SCENE_COLOR_DENSITY;
	a.outputs = gr->outputs;
	a.exposure = gr->exposure;
	a.exposure_auto = gr->exposure_auto;
	a.white = gr->white;
	a.inv_gamma = (float)(gr->gamma > 0 ? 1.0 / gr->gamma : 1.0);
	a.curve_norm = (float)(gr->tonemap == SCENE_TONEMAP_ASINH ? 1.0 / asinh(RENDER_CURVE_K)
								  : 1.0 / log1p(RENDER_CURVE_K));
	for (int c = 0; c < 3; c++)
		a.bg[c] = gr->bg[c];
	a.off_y = gr->off_y;
	a.off_u = gr->off_u;
	a.off_v = gr->off_v;
	a.off_rgb8 = gr->off_rgb8;
	a.off_rgb16 = gr->off_rgb16;

	tn_sum_part<<<TN_PART_BLOCKS, GR_THREADS, 0, st>>>(hdr, (size_t)fw * fh * 3,
							    gr->d_partial);
	CUDA_CHECK(cudaGetLastError());
	tn_sum_final<<<1, TN_PART_BLOCKS, 0, st>>>(gr->d_partial, gr->d_light);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(gr->ev_x[3], st)); /* timing: auto exposure from here */
	if (gr->exposure_auto) {
		const double nvals = 3.0 * (double)fw * (double)fh;
		CUDA_CHECK(cudaMemsetAsync(gr->d_hist, 0, RENDER_AUTO_BINS * sizeof(uint32_t), st));
		tn_hist<<<TN_PART_BLOCKS, GR_THREADS, 0, st>>>(hdr, (size_t)fw * fh,
							     gr->d_light, nvals, gr->d_hist);
		CUDA_CHECK(cudaGetLastError());
		tn_auto_step<<<1, 1, 0, st>>>(gr->d_hist, gr->d_light, nvals, gr->auto_percentile,
					      gr->auto_target, gr->auto_alpha, gr->d_auto);
		CUDA_CHECK(cudaGetLastError());
	}
	if (gr_overlay_take(gr, slot, &a.ov))
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_x[2], st)); /* timing: auto exposure to here */
	/* The slot's device buffer is free once its last copy is done. */
	CUDA_CHECK(cudaStreamWaitEvent(st, gr->ev_done[slot], 0));
	dim3 grid((unsigned)(((fw + 1) / 2 + GR_THREADS - 1) / GR_THREADS), (unsigned)((fh + 1) / 2));
	tn_tonemap<<<grid, GR_THREADS, 0, st>>>(a, hdr, gr->d_light, gr->d_lut, gr->d_auto,
						 gr->d_ov, gr->d_out[slot]);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
