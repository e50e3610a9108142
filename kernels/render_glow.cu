/* render_glow.cu - render.glow on the GPU, in place on gr->d_hdr before the
 * tone map: render/glow.c's meaning, with the formulas of
 * render/glow_shared.h (taps, edge renormalisation, bilinear coordinates,
 * excess) shared with the CPU. One thread per item in every kernel:
 *
 *  1. total light (deterministic: GW_BLOCKS grid-stride partials in double,
 *     then one block sums them in order) -> threshold on the device;
 *  2. gw_extract, per pixel: the excess e out of the pixel (one luminance);
 *  3. per scale d = 1, 2, 4, 8: gw_down per cell (box sum of d x d pixels),
 *     gw_blur along x then y per cell (13 taps each), gw_up per pixel (one
 *     bilinear sample added to the halo);
 *  4. sums of e and of the halo (as 1), gw_apply per pixel: += k * halo.
 * Cost per pixel: ~35 taps (2 x 13 at d = 1, a quarter of that at each
 * coarser scale), 4 bilinear samples, and ~11 full-image float passes of
 * 12 bytes (read or written). Four extra w*h*3 float buffers. */
#include "render_internal.cuh"
#include "../render/glow_shared.h"
#include "../render/tone_shared.h"

#define GW_BLOCKS 256

__global__ void __launch_bounds__(GR_THREADS) gw_sum_part(const float *v, size_t n, double *part)
{
	__shared__ double sh[GR_THREADS];
	double s = 0.0;
	for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
	     k += (size_t)gridDim.x * blockDim.x)
		s += v[k];
	s = gr_block_sum(s, sh);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

__global__ void __launch_bounds__(GW_BLOCKS) gw_sum_final(const double *part, double *out)
{
	__shared__ double sh[GW_BLOCKS];
	double s = gr_block_sum(part[threadIdx.x], sh);
	if (threadIdx.x == 0)
		*out = s;
}

static int gw_sum(struct gpu_render *gr, const float *v, size_t n, double *out)
{
	gw_sum_part<<<GW_BLOCKS, GR_THREADS, 0, gr->stream>>>(v, n, gr->d_glow_part);
	gw_sum_final<<<1, GW_BLOCKS, 0, gr->stream>>>(gr->d_glow_part, out);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* sums[0] = total light before; sums[1] = sum of e. */
__global__ void gw_extract(float *hdr, float *e, int w, int h, const double *sums, double scale,
			   float glow)
{
	size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (p >= (size_t)w * h)
		return;
	/* render_glow_threshold_abs(ref) with ref = RENDER_REF_SCALE * total / (3 w h) */
	double ref = RENDER_REF_SCALE * sums[0] / (3.0 * (double)w * (double)h);
	double thr = scale * ref;
	float *v = hdr + 3 * p;
	double f = ref > 0 ? render_glow_excess(render_lum709(v[0], v[1], v[2]), thr) : 0.0;
	for (int c = 0; c < 3; c++) {
		float x = f > 0 ? (float)(glow * f * v[c]) : 0.0f;
		e[3 * p + c] = x;
		v[c] -= x;
	}
}

__global__ void gw_down(const float *e, int w, int h, int d, float *g, int gw, int gh)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I >= gw)
		return;
	double s[3] = {0, 0, 0};
	for (int j = J * d; j < (J + 1) * d && j < h; j++)
		for (int i = I * d; i < (I + 1) * d && i < w; i++)
			for (int c = 0; c < 3; c++)
				s[c] += e[3 * ((size_t)j * w + i) + c];
	for (int c = 0; c < 3; c++)
		g[3 * ((size_t)J * gw + I) + c] = (float)s[c];
}

__global__ void gw_blur(const float *in, float *out, int gw, int gh, int along_x, double inv)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I < gw)
		render_glow_blur_cell(in, out, gw, gh, along_x, inv, I, J);
}

__global__ void gw_up(const float *g, int gw, int gh, int d, double f, float *halo, int w, int h,
		      int first)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
	if (i >= w)
		return;
	int i0, i1, j0, j1;
	double tx, ty;
	render_glow_coord(j, d, gh, &j0, &j1, &ty);
	render_glow_coord(i, d, gw, &i0, &i1, &tx);
	const float *a = g + 3 * ((size_t)j0 * gw + i0), *b = g + 3 * ((size_t)j0 * gw + i1);
	const float *p = g + 3 * ((size_t)j1 * gw + i0), *q = g + 3 * ((size_t)j1 * gw + i1);
	for (int c = 0; c < 3; c++) {
		double v = (1 - ty) * ((1 - tx) * a[c] + tx * b[c]) + ty * ((1 - tx) * p[c] + tx * q[c]);
		float *o = halo + 3 * ((size_t)j * w + i) + c;
		*o = (first ? 0.0f : *o) + (float)(f * v);
	}
}

/* sums[1] = removed, sums[2] = halo total. */
__global__ void gw_apply(float *hdr, const float *halo, size_t nv, const double *sums)
{
	size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= nv)
		return;
	float s = sums[2] > 0 ? (float)(sums[1] / sums[2]) : 0.0f;
	hdr[k] += s * halo[k];
}

int gr_glow_alloc(struct gpu_render *gr)
{
	if (!(gr->glow > 0))
		return 0;
	size_t nv = (size_t)gr->w * gr->h * 3;
	CUDA_CHECK(cudaMalloc(&gr->d_glow, 4 * nv * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&gr->d_glow_part, (GW_BLOCKS + 3) * sizeof(double)));
	return 0;
}

void gr_glow_free(struct gpu_render *gr)
{
	cudaFree(gr->d_glow);
	cudaFree(gr->d_glow_part);
	gr->d_glow = NULL;
	gr->d_glow_part = NULL;
}

int gr_glow(struct gpu_render *gr)
{
	if (!(gr->glow > 0))
		return 0;
	cudaStream_t st = gr->stream;
	int w = gr->w, h = gr->h;
	size_t npix = (size_t)w * h, nv = 3 * npix;
	float *e = gr->d_glow, *halo = e + nv, *g = halo + nv, *g2 = g + nv;
	double *sums = gr->d_glow_part + GW_BLOCKS;
	double exposure = gr->exposure_auto ? 1.0 : gr->exposure;
	if (gw_sum(gr, gr->d_hdr, nv, sums))
		return NB_ERUNTIME;
	unsigned nb = (unsigned)((npix + GR_THREADS - 1) / GR_THREADS);
	gw_extract<<<nb, GR_THREADS, 0, st>>>(gr->d_hdr, e, w, h, sums, gr->glow_threshold / exposure,
					     (float)gr->glow);
	CUDA_CHECK(cudaGetLastError());
	double inv = 1.0 / render_glow_tapsum();
	for (int s = 0; s < RENDER_GLOW_SCALES; s++) {
		int d = 1 << s, gw = render_lod_dim(w, s), gh = render_lod_dim(h, s);
		dim3 cg((gw + GR_THREADS - 1) / GR_THREADS, gh), pg((w + GR_THREADS - 1) / GR_THREADS, h);
		gw_down<<<cg, GR_THREADS, 0, st>>>(e, w, h, d, g, gw, gh);
		gw_blur<<<cg, GR_THREADS, 0, st>>>(g, g2, gw, gh, 1, inv);
		gw_blur<<<cg, GR_THREADS, 0, st>>>(g2, g, gw, gh, 0, inv);
		gw_up<<<pg, GR_THREADS, 0, st>>>(g, gw, gh, d, 1.0 / ((double)d * d * RENDER_GLOW_SCALES),
						 halo, w, h, s == 0);
		CUDA_CHECK(cudaGetLastError());
	}
	if (gw_sum(gr, e, nv, sums + 1) || gw_sum(gr, halo, nv, sums + 2))
		return NB_ERUNTIME;
	gw_apply<<<(unsigned)((nv + GR_THREADS - 1) / GR_THREADS), GR_THREADS, 0, st>>>(gr->d_hdr, halo,
											  nv, sums);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
