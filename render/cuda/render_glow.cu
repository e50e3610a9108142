/* render_glow.cu - render.glow on the GPU, in place on gr->d_pic before the
 * tone map: render/glow.c's meaning, with the cell operations of
 * render/glow_shared.h and render/pyramid_shared.h shared with the CPU.
 * One thread per item in every kernel:
 *
 *  1. total light (deterministic: GW_BLOCKS grid-stride partials in double,
 *     then one block sums them in order) -> threshold on the device;
 *  2. gw_extract per level-1 cell: the excess out of its 2x2 pixels and
 *     their sum into P_1; the sum of P_1;
 *  3. gw_down per cell of levels 2..4; from level 4 down to 1, gw_blur
 *     along x (9 taps) and gw_blur_add along y (9 taps) plus the bilinear
 *     sample of the coarser level's U;
 *  4. the halo's sum (on level 1, U_1 weighted by the upsample's edge
 *     shares, reduced as 1), then gw_apply per pixel: += k * the bilinear
 *     sample of U_1 / 4.
 * Full-resolution traffic: 3 passes of 12 bytes per pixel (sum, extract
 * read+write, apply read+write); the blurs and sums touch 1/4 + 1/16 + ...
 * of the pixels. Memory:
 * the pyramid (1/3 of the image) and one level-1 scratch (1/4).
 * CPU twin: render/glow.c (render_glow, render_wing). */
#include "render_internal.cuh"
#include "../../render/glow_shared.h"
#include "../../render/tone_shared.h"

#define GW_BLOCKS GR_SUM_BLOCKS

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

int gr_sum_floats(struct gpu_render *gr, const float *v, size_t n, double *part, double *out)
{
	gw_sum_part<<<GW_BLOCKS, GR_THREADS, 0, gr->stream>>>(v, n, part);
	gw_sum_final<<<1, GW_BLOCKS, 0, gr->stream>>>(part, out);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

static int gw_sum(struct gpu_render *gr, const float *v, size_t n, double *out)
{
	return gr_sum_floats(gr, v, n, gr->d_glow_part, out);
}

/* sums[0] = total light before. */
__global__ void gw_extract(float *hdr, int w, int h, const double *sums, double scale, float glow,
			   float *p1, int gw, int gh)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I >= gw)
		return;
	/* render_glow_threshold_abs(ref) with ref = RENDER_REF_SCALE * total / (3 w h) */
	double ref = RENDER_REF_SCALE * sums[0] / (3.0 * (double)w * (double)h);
	double thr = ref > 0 ? scale * ref : INFINITY;
	render_glow_extract_cell(hdr, w, h, thr, glow, p1, gw, I, J);
}

__global__ void gw_down(const float *fine, int fw, int fh, float *g, int gw, int gh)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I < gw)
		render_pyr_down_cell(fine, fw, fh, g, gw, 3, I, J);
}

/* wrap (every kernel below): x round the equirectangular seam. */
__global__ void gw_blur(const float *in, float *out, int gw, int gh, int wrap)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I < gw)
		render_pyr_blur_cell(in, out, gw, gh, 3, 1, wrap, I, J);
}

/* out = cl * blur_y(in); then, with a coarser level c, out += U_{l+1} / 4
 * (cl: the level's weight, 1 for the glow; glow.c's glow_pyramid). */
__global__ void gw_blur_add(const float *in, float *out, int gw, int gh, float cl, const float *c,
			    int cw, int ch, int wrap)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I >= gw)
		return;
	render_pyr_blur_cell(in, out, gw, gh, 3, 0, wrap, I, J);
	float *o = out + 3 * ((size_t)J * gw + I);
	if (!c) {
		for (int k = 0; k < 3; k++)
			o[k] *= cl;
		return;
	}
	double v[3];
	render_pyr_sample(c, cw, ch, 3, 2, wrap, I, J, v);
	for (int k = 0; k < 3; k++)
		o[k] = (float)(cl * o[k] + 0.25 * v[k]);
}

/* Partial sums of the halo (glow.c's glow_halo_sum: U_1 weighted by the
 * upsample's edge shares), grid-stride over the level-1 cells. */
__global__ void __launch_bounds__(GR_THREADS) gw_halo_part(const float *u1, int gw, int gh, int w,
							   int h, double *part)
{
	__shared__ double sh[GR_THREADS];
	double s = 0.0;
	size_t ncell = (size_t)gw * gh;
	for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < ncell;
	     k += (size_t)gridDim.x * blockDim.x) {
		const int I = (int)(k % gw), J = (int)(k / gw);
		const float *v = u1 + 3 * k;
		s += ((double)v[0] + v[1] + v[2]) * render_glow_share(I, gw, w) * render_glow_share(J, gh, h);
	}
	s = gr_block_sum(s, sh);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

/* sums[1] = removed, sums[2] = halo total. */
__global__ void gw_apply(float *hdr, const float *u1, int gw, int gh, int w, int h,
			 const double *sums, int wrap)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
	if (i >= w)
		return;
	float f = sums[2] > 0 ? (float)(sums[1] / sums[2]) : 0.0f;
	double v[3];
	render_pyr_sample(u1, gw, gh, 3, 2, wrap, i, j, v);
	float *o = hdr + 3 * ((size_t)j * w + i);
	for (int c = 0; c < 3; c++)
		o[c] += f * (float)(0.25 * v[c]);
}

int gr_glow_alloc(struct gpu_render *gr)
{
	if (!(gr->glow > 0) && !(gr->wing > 0))
		return 0;
	size_t off[RENDER_GLOW_LEVELS + 2];
	size_t nf = render_pyr_layout(gr->w, gr->h, 3, RENDER_GLOW_LEVELS, off);
	CUDA_CHECK(cudaMalloc(&gr->d_glow, (nf + off[2]) * sizeof(float)));
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

static dim3 gw_grid(int gw, int gh)
{
	return dim3((unsigned)((gw + GR_THREADS - 1) / GR_THREADS), (unsigned)gh);
}

/* Steps 2-5 with threshold scale * ref, fraction frac, level weights
 * c[1..RENDER_GLOW_LEVELS]. */
static int gw_pass(struct gpu_render *gr, double scale, float frac, const float *c)
{
	cudaStream_t st = gr->stream;
	int w = gr->w, h = gr->h;
	int gw[RENDER_GLOW_LEVELS + 1], gh[RENDER_GLOW_LEVELS + 1];
	size_t off[RENDER_GLOW_LEVELS + 2];
	size_t nf = render_pyr_layout(w, h, 3, RENDER_GLOW_LEVELS, off);
	for (int l = 1; l <= RENDER_GLOW_LEVELS; l++) {
		gw[l] = render_lod_dim(w, l);
		gh[l] = render_lod_dim(h, l);
	}
	float *buf = gr->d_glow, *tmp = buf + nf;
	const int wrap = render_projection_of(gr->projection)->wrap;
	double *sums = gr->d_glow_part + GW_BLOCKS;
	if (gw_sum(gr, gr->d_pic, (size_t)w * h * 3, sums))
		return NB_ERUNTIME;
	gw_extract<<<gw_grid(gw[1], gh[1]), GR_THREADS, 0, st>>>(
		gr->d_pic, w, h, sums, scale, frac, buf + off[1], gw[1], gh[1]);
	CUDA_CHECK(cudaGetLastError());
	if (gw_sum(gr, buf + off[1], off[2] - off[1], sums + 1))
		return NB_ERUNTIME;
	for (int l = 2; l <= RENDER_GLOW_LEVELS; l++)
		gw_down<<<gw_grid(gw[l], gh[l]), GR_THREADS, 0, st>>>(buf + off[l - 1], gw[l - 1], gh[l - 1],
									buf + off[l], gw[l], gh[l]);
	for (int l = RENDER_GLOW_LEVELS; l >= 1; l--) {
		int top = l == RENDER_GLOW_LEVELS;
		gw_blur<<<gw_grid(gw[l], gh[l]), GR_THREADS, 0, st>>>(buf + off[l], tmp, gw[l], gh[l],
									wrap);
		gw_blur_add<<<gw_grid(gw[l], gh[l]), GR_THREADS, 0, st>>>(
			tmp, buf + off[l], gw[l], gh[l], c[l], top ? NULL : buf + off[l + 1], top ? 0 : gw[l + 1],
			top ? 0 : gh[l + 1], wrap);
	}
	CUDA_CHECK(cudaGetLastError());
	gw_halo_part<<<GW_BLOCKS, GR_THREADS, 0, st>>>(buf + off[1], gw[1], gh[1], w, h, gr->d_glow_part);
	gw_sum_final<<<1, GW_BLOCKS, 0, st>>>(gr->d_glow_part, sums + 2);
	gw_apply<<<gw_grid(w, h), GR_THREADS, 0, st>>>(gr->d_pic, buf + off[1], gw[1], gh[1], w, h, sums,
						       wrap);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gr_glow(struct gpu_render *gr)
{
	if (!(gr->glow > 0))
		return 0;
	float c[RENDER_GLOW_LEVELS + 1];
	for (int l = 0; l <= RENDER_GLOW_LEVELS; l++)
		c[l] = 1.0f;
	return gw_pass(gr, gr->glow_threshold / gr->glow_exposure, (float)gr->glow, c);
}

int gr_wing(struct gpu_render *gr)
{
	if (!(gr->wing > 0))
		return 0;
	float c[RENDER_GLOW_LEVELS + 1];
	for (int l = 0; l <= RENDER_GLOW_LEVELS; l++)
		c[l] = (float)render_wing_level_weight(l, gr->wing_beta);
	return gw_pass(gr, 0.0, (float)gr->wing, c);
}
