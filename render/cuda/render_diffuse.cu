/* render_diffuse.cu - render.diffuse with render.diffuse_smoothing: screen
 * on the GPU: render/diffuse_screen.c's meaning, the rule and the cell
 * operations in render/pyramid_shared.h, shared with the CPU. After
 * gr_stars has drawn the stars into d_pic and counted the drawn bodies
 * into the level-1 grid d_count1 (one float atomicAdd of 1 per body in the
 * frame: exact integers, so the counts are the same every run):
 *
 *  1. dd_down per level-1 cell: S_1 = 2x2 sums of the stars;
 *  2. dd_down per cell of levels 2..Lmax, for S (3 channels) and C (1);
 *     dd_blur x then y on each level (9 taps, edge-renormalised);
 *  3. dd_layer per pixel: render_diffuse_pixel (at most Lmax bilinear
 *     count samples and two bilinear light samples, times w_p) into
 *     d_smooth, its weight w_p into a w x h float buffer, w_p S_p
 *     (render_diffuse_wsum) into another; the sums of d_smooth and of
 *     w_p S_p;
 *  4. dd_mix per value: hdr = stars / (1 + d) + E d / (1 + d), E =
 *     render_diffuse_effective (w_p raw layer * sum w S / sum w raw +
 *     (1 - w_p) stars), in double as render_diffuse_mix.
 * w_p is kept in a buffer, not recomputed in dd_mix: recomputing it is the
 * whole level search again (up to Lmax bilinear count samples per pixel,
 * and the levels' table in shared memory) for 4 bytes per pixel read once;
 * the buffer also makes the mix read exactly the w_p that was summed.
 * Full-resolution traffic: the stars read three times (1, 3, 4), the layer
 * written once and read twice (3, its sum, 4), w_p and w_p S_p 8 bytes
 * written and read, hdr written once: ~7 passes of 12 bytes per pixel; the
 * pyramids are 1/3 of the pixels. No smoothing lengths, no second splat.
 * Memory: the counts and the pyramids (~0.45 of an image), w_p and w_p S_p
 * (2/3 of an image), d_smooth (one image).
 * CPU twin: render/diffuse_screen.c. */
#include "render_internal.cuh"
#include "../../render/pyramid_shared.h"

#include <string.h>

struct dd_layout {
	int lmax, gw[RENDER_DIFFUSE_MAX_LEVELS + 1], gh[RENDER_DIFFUSE_MAX_LEVELS + 1];
	size_t os[RENDER_DIFFUSE_MAX_LEVELS + 2], oc[RENDER_DIFFUSE_MAX_LEVELS + 2];
	size_t floats; /* counts, S levels, a level-1 scratch of 3 channels, w_p, w_p S_p */
	float *c, *s, *tmp, *wb, *ws;
};

/* d_count1 holds the count pyramid (level 1 first: the counts gr_stars
 * makes), then the light pyramid, then the scratch, then w_p and w_p S_p
 * (w x h each). */
static void dd_layout_of(const struct gpu_render *gr, struct dd_layout *L)
{
	L->lmax = render_diffuse_lmax(gr->h);
	for (int l = 1; l <= L->lmax; l++) {
		L->gw[l] = render_lod_dim(gr->w, l);
		L->gh[l] = render_lod_dim(gr->h, l);
	}
	size_t nc = render_pyr_layout(gr->w, gr->h, 1, L->lmax, L->oc);
	size_t ns = render_pyr_layout(gr->w, gr->h, 3, L->lmax, L->os);
	size_t np = (size_t)gr->w * gr->h;
	L->floats = nc + ns + L->os[2] + 2 * np;
	L->c = gr->d_count1;
	L->s = L->c ? L->c + nc : NULL;
	L->tmp = L->s ? L->s + ns : NULL;
	L->wb = L->tmp ? L->tmp + L->os[2] : NULL;
	L->ws = L->wb ? L->wb + np : NULL;
}

int gr_diffuse_alloc(struct gpu_render *gr)
{
	if (!gr->diffuse_screen)
		return 0;
	struct dd_layout L;
	dd_layout_of(gr, &L);
	CUDA_CHECK(cudaMalloc(&gr->d_count1, L.floats * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&gr->d_dpart, (GR_SUM_BLOCKS + 2) * sizeof(double)));
	return 0;
}

void gr_diffuse_free(struct gpu_render *gr)
{
	cudaFree(gr->d_count1);
	cudaFree(gr->d_dpart);
	gr->d_count1 = NULL;
	gr->d_dpart = NULL;
}

__global__ void dd_down(const float *fine, int fw, int fh, float *g, int gw, int gh, int nch)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I < gw)
		render_pyr_down_cell(fine, fw, fh, g, gw, nch, I, J);
}

/* wrap: x round the equirectangular seam. */
__global__ void dd_blur(const float *in, float *out, int gw, int gh, int nch, int along_x, int wrap)
{
	int I = blockIdx.x * blockDim.x + threadIdx.x, J = blockIdx.y;
	if (I < gw)
		render_pyr_blur_cell(in, out, gw, gh, nch, along_x, wrap, I, J);
}

/* The levels' table goes to shared memory: render_diffuse_pixel indexes it
 * by a run-time level, which a kernel parameter would turn into a
 * per-thread local copy. */
__global__ void dd_layer(struct render_diffuse_levels L, const float *stars, float *out, float *wb,
			 float *ws, int w, int h)
{
	__shared__ struct render_diffuse_levels sL;
	if (threadIdx.x == 0)
		sL = L;
	__syncthreads();
	int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
	if (i >= w)
		return;
	double v[3];
	const size_t p = (size_t)j * w + i;
	const float wp = (float)render_diffuse_pixel(&sL, i, j, v);
	float *o = out + 3 * p;
	for (int c = 0; c < 3; c++)
		o[c] = (float)v[c];
	wb[p] = wp;
	ws[p] = render_diffuse_wsum(wp, stars + 3 * p);
}

/* sums[0] = the sum of w_p S_p, sums[1] = the raw layer's; wb: w_p. */
__global__ void dd_mix(float *hdr, const float *layer, const float *wb, size_t nv, const double *sums,
		       double a, double b)
{
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nv)
		return;
	const double f = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
	const float q = render_diffuse_effective(layer[i], f, wb[i / 3], hdr[i]);
	hdr[i] = (float)__dadd_rn(__dmul_rn((double)hdr[i], a), __dmul_rn((double)q, b));
}

static dim3 dd_grid(int gw, int gh)
{
	return dim3((unsigned)((gw + GR_THREADS - 1) / GR_THREADS), (unsigned)gh);
}

/* Levels 2..lmax of one pyramid, then every level blurred in place. */
static int dd_pyramid(struct gpu_render *gr, const struct dd_layout *L, float *buf, const size_t *off,
		      int nch)
{
	cudaStream_t st = gr->stream;
	const int wrap = render_projection_of(gr->projection)->wrap;
	for (int l = 2; l <= L->lmax; l++)
		dd_down<<<dd_grid(L->gw[l], L->gh[l]), GR_THREADS, 0, st>>>(
			buf + off[l - 1], L->gw[l - 1], L->gh[l - 1], buf + off[l], L->gw[l], L->gh[l], nch);
	for (int l = 1; l <= L->lmax; l++) {
		dd_blur<<<dd_grid(L->gw[l], L->gh[l]), GR_THREADS, 0, st>>>(buf + off[l], L->tmp, L->gw[l],
									     L->gh[l], nch, 1, wrap);
		dd_blur<<<dd_grid(L->gw[l], L->gh[l]), GR_THREADS, 0, st>>>(L->tmp, buf + off[l], L->gw[l],
									     L->gh[l], nch, 0, wrap);
	}
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gr_diffuse_screen(struct gpu_render *gr)
{
	cudaStream_t st = gr->stream;
	int w = gr->w, h = gr->h;
	struct dd_layout L;
	dd_layout_of(gr, &L);
	double *sums = gr->d_dpart + GR_SUM_BLOCKS;
	dd_down<<<dd_grid(L.gw[1], L.gh[1]), GR_THREADS, 0, st>>>(gr->d_pic, w, h, L.s + L.os[1], L.gw[1],
								    L.gh[1], 3);
	CUDA_CHECK(cudaGetLastError());
	if (dd_pyramid(gr, &L, L.s, L.os, 3) || dd_pyramid(gr, &L, L.c, L.oc, 1))
		return NB_ERUNTIME;
	struct render_diffuse_levels D;
	memset(&D, 0, sizeof D);
	for (int l = 1; l <= L.lmax; l++) {
		D.sb[l] = L.s + L.os[l];
		D.cb[l] = L.c + L.oc[l];
		D.gw[l] = L.gw[l];
		D.gh[l] = L.gh[l];
	}
	D.lmax = L.lmax;
	D.k = gr->neighbours;
	D.wrap = render_projection_of(gr->projection)->wrap;
	dd_layer<<<dd_grid(w, h), GR_THREADS, 0, st>>>(D, gr->d_pic, gr->d_smooth, L.wb, L.ws, w, h);
	CUDA_CHECK(cudaGetLastError());
	const size_t nv = (size_t)w * h * 3;
	if (gr_sum_floats(gr, L.ws, (size_t)w * h, gr->d_dpart, sums) ||
	    gr_sum_floats(gr, gr->d_smooth, nv, gr->d_dpart, sums + 1))
		return NB_ERUNTIME;
	const double d = gr->diffuse;
	dd_mix<<<gr_blocks(nv), GR_THREADS, 0, st>>>(gr->d_pic, gr->d_smooth, L.wb, nv, sums,
						       1.0 / (1.0 + d), d / (1.0 + d));
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
