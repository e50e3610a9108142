/* glow_shared.h - the formulas of the glow (render.glow, render/glow.c)
 * that the CPU and the GPU (kernels/render_glow.cu) compute alike, written
 * once as static inline functions that compile for both (RENDER_HD).
 *
 * Rule, on the HDR image before tone mapping (docs/scenes.md, "Glow"):
 *  1. Threshold: T = render.glow_threshold * ref / exposure, ref =
 *     render_tonemap_reference(img) of the image before the glow, exposure =
 *     render.exposure (1 with render.exposure: auto). So a pixel glows where
 *     the fixed-exposure tone map's level v = exposure * value / ref exceeds
 *     glow_threshold (v = 1 is where the linear curve reaches white).
 *  2. Excess: per pixel, Y its Rec. 709 luminance, f = max(Y - T, 0) / Y;
 *     e = glow * f * rgb is removed from the pixel (colour kept).
 *  3. Halo: for each of RENDER_GLOW_SCALES scales s (cell size d = 2^s
 *     pixels): the excess image is box-summed into cells of d x d pixels
 *     (ceil(w/d) x ceil(h/d) cells, edge cells hold the in-frame pixels),
 *     blurred by a separable sampled Gaussian of sigma RENDER_GLOW_SIGMA
 *     cells (taps -R..R, R = RENDER_GLOW_RADIUS, weights summing to 1), so
 *     sigma = 2, 4, 8, 16 px, and upsampled bilinearly to the pixels
 *     (render_glow_coord: cell centres at d (I + 1/2), clamped to the edge
 *     cells), divided by d^2 and by the number of scales (their average).
 *  4. Frame edges, renormalisation: a cell's blur weights that would fall
 *     outside the frame are given back to it (each source cell's value is
 *     divided by render_glow_norm, the sum of its in-frame weights), so no
 *     light is blurred off the frame; a star at the edge gets a one-sided,
 *     brighter halo.
 *  5. Energy: the halo is multiplied by (sum of e) / (sum of halo), both
 *     sums in double over the whole image, and added to the pixels. The
 *     total light is therefore unchanged up to float rounding (the global
 *     factor is 1 up to rounding except where partial edge cells, w or h
 *     not a multiple of d, lose a share in the upsample).
 * Pixels with Y <= T are not touched by step 2; an image without any such
 * pixel is returned bit for bit. */
#ifndef NB_RENDER_GLOW_SHARED_H
#define NB_RENDER_GLOW_SHARED_H

#include <math.h>

#ifdef __CUDACC__
#define RENDER_GLOW_HD __host__ __device__
#else
#define RENDER_GLOW_HD
#endif

#define RENDER_GLOW_SCALES 4  /* d = 1, 2, 4, 8 */
#define RENDER_GLOW_SIGMA 2.0 /* cells */
#define RENDER_GLOW_RADIUS 6  /* ceil(3 sigma) */

/* Unnormalised weight of tap k. */
static inline RENDER_GLOW_HD double render_glow_tap(int k)
{
	return exp(-(double)(k * k) / (2.0 * RENDER_GLOW_SIGMA * RENDER_GLOW_SIGMA));
}

/* Sum of the taps over -R..R (the weights are tap / this). */
static inline RENDER_GLOW_HD double render_glow_tapsum(void)
{
	double s = 0.0;
	for (int k = -RENDER_GLOW_RADIUS; k <= RENDER_GLOW_RADIUS; k++)
		s += render_glow_tap(k);
	return s;
}

/* Share of source cell j's normalised weights that land in [0, n): 1 away
 * from the edges. */
static inline RENDER_GLOW_HD double render_glow_norm(int j, int n)
{
	if (j >= RENDER_GLOW_RADIUS && j + RENDER_GLOW_RADIUS < n)
		return 1.0;
	double s = 0.0;
	for (int k = -RENDER_GLOW_RADIUS; k <= RENDER_GLOW_RADIUS; k++)
		if (j + k >= 0 && j + k < n)
			s += render_glow_tap(k);
	return s / render_glow_tapsum();
}

/* Bilinear upsample along one axis: pixel i (centre i + 1/2) between cells
 * *i0 and *i1 (n cells of d pixels) with weight *t on *i1. */
static inline RENDER_GLOW_HD void render_glow_coord(int i, int d, int n, int *i0, int *i1, double *t)
{
	double u = (i + 0.5) / d - 0.5;
	if (u < 0)
		u = 0;
	if (u > n - 1)
		u = n - 1;
	int a = (int)floor(u);
	*i0 = a;
	*i1 = a + 1 < n ? a + 1 : a;
	*t = u - a;
}

/* Fraction of a pixel of luminance y moved out at threshold thr. */
static inline RENDER_GLOW_HD double render_glow_excess(double y, double thr)
{
	return y > thr && y > 0 ? (y - thr) / y : 0.0;
}

/* Cell (I, J) of one blur pass of the gw x gh grid in -> out, along x
 * (along_x) or y: the taps times inv = 1 / render_glow_tapsum(), each
 * renormalised at the frame edge (render_glow_norm). The CPU and the GPU
 * (one thread per cell) run this same code. */
static inline RENDER_GLOW_HD void render_glow_blur_cell(const float *in, float *out, int gw, int gh,
							 int along_x, double inv, int I, int J)
{
	int n = along_x ? gw : gh, at = along_x ? I : J;
	double s[3] = {0, 0, 0};
	for (int k = -RENDER_GLOW_RADIUS; k <= RENDER_GLOW_RADIUS; k++) {
		int src = at + k;
		if (src < 0 || src >= n)
			continue;
		double wk = render_glow_tap(k) * inv / render_glow_norm(src, n);
		size_t p = along_x ? (size_t)J * gw + src : (size_t)src * gw + I;
		for (int c = 0; c < 3; c++)
			s[c] += wk * in[3 * p + c];
	}
	for (int c = 0; c < 3; c++)
		out[3 * ((size_t)J * gw + I) + c] = (float)s[c];
}

#endif
