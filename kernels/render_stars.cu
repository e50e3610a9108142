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
 * Cost per body (one thread each): ~60 double flops of projection, 2 (2R
 * + 2) double erf for the weights wx[k], wy[k] (R = 3 at the default FWHM
 * 1.5 px: 16 erf; at most 2 x 26 at 8 px), then (2R + 1)^2 pixels (49 at
 * the default, at most 625) of 3 float atomicAdd each. Dense cores put
 * many bodies on the same pixels, so atomics there contend; this is the
 * simple form, kept obviously equal to the CPU. With the screen diffuse
 * layer on, each drawn body inside the frame also adds 1 to its level-1
 * cell of gr->d_count1 (render_diffuse_counts). render.color_by adds 16
 * bytes (the velocity) and ~30 double flops per body (color_by_shared.h). */
#include "render_internal.cuh"
#include "../render/color_by_shared.h"

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

/* One thread per body slot: project, weigh, deposit with atomics. */
__global__ void __launch_bounds__(GR_THREADS)
gr_stars_deposit(struct gr_stars_args a, const float4 *pos4, const uint32_t *id, int n, float *hdr,
		 float *count1)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	const float4 pf = pos4[s];
	const uint32_t b = id ? id[s] : (uint32_t)s;
	const struct gr_view &v = a.v;
	const double p0 = (double)pf.x / a.length, p1 = (double)pf.y / a.length,
		     p2 = (double)pf.z / a.length;
	const double d0 = p0 - v.pos[0], d1 = p1 - v.pos[1], d2 = p2 - v.pos[2];
	const double z = gr_dot(v.fwd, d0, d1, d2);
	const double x = __dadd_rn(0.5 * v.w, __dmul_rn(v.focal, gr_dot(v.right, d0, d1, d2)) / z);
	const double y = __dsub_rn(0.5 * v.h, __dmul_rn(v.focal, gr_dot(v.upv, d0, d1, d2)) / z);
	if (!((z > v.near) && z > 0 && isfinite(x) && isfinite(y)))
		return;
	const double m = (double)pf.w / a.mass;
	const int c = a.comp ? a.comp[b] : 0;
	double cc[3] = {1.0, 1.0, 1.0};
	if (a.cb_by) {
		const float4 vf = a.vel4[s];
		const double pp[3] = {p0, p1, p2};
		const double vv[3] = {(double)vf.x / a.velocity, (double)vf.y / a.velocity,
				      (double)vf.z / a.velocity};
		render_color_lookup(a.cb_lut, a.cb_lo, a.cb_hi, render_color_q(a.cb_by, pp, vv, v.pos),
				    cc);
	}
	float w[3];
	for (int k = 0; k < 3; k++) {
		const float col = (!a.density && c < a.ncomp) ? a.colors[3 * c + k] : 1.0f;
		w[k] = (float)(m * col * cc[k]);
	}
	if (w[0] == 0.0f && w[1] == 0.0f && w[2] == 0.0f)
		return; /* drawn black or brightness 0: nothing, as on the CPU */
	if (count1 && x >= 0 && x < v.w && y >= 0 && y < v.h) { /* render_diffuse_counts */
		const int ci = (int)floor(x), cj = (int)floor(y);
		if (ci < v.w && cj < v.h)
			atomicAdd(count1 + (size_t)(cj >> 1) * ((v.w + 1) >> 1) + (ci >> 1), 1.0f);
	}
	if (a.slab) {
		const uint8_t k = a.slab[s];
		if (k == RENDER_DUST_NO_SLAB)
			return;
		hdr += (size_t)k * a.stride;
	}
	const int R = a.R;
	if (x + R + 1 < 0 || x - R - 1 >= v.w || y + R + 1 < 0 || y - R - 1 >= v.h)
		return;
	const int i0 = (int)floor(x) - R, j0 = (int)floor(y) - R;
	if (i0 + 2 * R < 0 || i0 >= v.w || j0 + 2 * R < 0 || j0 >= v.h)
		return;
	double wx[RENDER_STARS_MAX_WIDTH], wy[RENDER_STARS_MAX_WIDTH];
	gr_stars_weights(x, a.sigma, R, wx);
	gr_stars_weights(y, a.sigma, R, wy);
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

/* gr_stars and gr_stars_slabs: the launch, into out (slab NULL) or its slabs. */
static int gr_stars_launch(struct gpu_render *gr, const struct gpu_render_input *in,
			   const struct gr_view *v, const uint8_t *slab, float *out, size_t stride)
{
	cudaStream_t st = gr->stream;
	const int n = (int)in->n;
	float *count1 = gr->diffuse_screen ? gr->d_count1 : NULL; /* render_diffuse.cu's level 1 */
	if (count1)
		CUDA_CHECK(cudaMemsetAsync(count1, 0, (size_t)render_lod_dim(gr->w, 1) *
							  render_lod_dim(gr->h, 1) * sizeof(float), st));
	if (n > 0) {
		struct gr_stars_args a;
		a.v = *v;
		a.length = gr->u.length;
		a.mass = gr->u.mass;
		a.comp = gr->d_comp;
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
		gr_stars_deposit<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
			a, (const float4 *)in->pos4, in->id, n, out, count1);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

int gr_stars(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v)
{
	cudaStream_t st = gr->stream;
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
	if (gr_stars_launch(gr, in, v, NULL, gr->d_hdr, 0))
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	return 0;
}

int gr_stars_slabs(struct gpu_render *gr, const struct gpu_render_input *in,
		   const struct gr_view *v, const uint8_t *slab, float *out, size_t stride)
{
	return gr_stars_launch(gr, in, v, slab, out, stride);
}
