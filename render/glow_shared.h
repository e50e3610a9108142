/* glow_shared.h - the formulas of the glow (render.glow, render/glow.c)
 * that the CPU and the GPU (render/cuda/render_glow.cu) compute alike, written
 * once as static inline functions that compile for both (RENDER_GLOW_HD);
 * the pyramid's cell operations are in render/pyramid_shared.h.
 *
 * Rule, on the HDR image before tone mapping (docs/scenes.md, "Glow"):
 *  1. Threshold: T = render.glow_threshold * ref / exposure, ref =
 *     render_tonemap_reference(img) of the image before the glow, exposure =
 *     render.exposure (1 with render.exposure: auto or with exposure keys,
 *     render_camera_has_exposure). So a pixel glows where
 *     the fixed-exposure tone map's level v = exposure * value / ref exceeds
 *     glow_threshold (v = 1 is where the linear curve reaches white).
 *  2. Excess: per pixel, Y its Rec. 709 luminance, f = max(Y - T, 0) / Y;
 *     e = glow * f * rgb is removed from the pixel (colour kept).
 *  3. Halo from a pyramid (pyramid_shared.h): P_1 = the 2x2 sums of e,
 *     P_l = the 2x2 sums of P_{l-1} for l = 2 .. RENDER_GLOW_LEVELS (cells
 *     of 2, 4, 8, 16 px); B_l = P_l blurred by the 9-tap Gaussian along x
 *     then y (sigma 1 cell, edge-renormalised); then from the coarsest
 *     level down, U_L = B_L and U_l = B_l + up(U_{l+1}) / 4 (bilinear);
 *     the halo at pixel p is up(U_1)(p) / 4. Every level carries all of
 *     e, so each scale gets an equal share of the halo's light, as the
 *     average of Gaussians of sigma ~2.5, 5, 10 and 20 px would (per-axis
 *     variance of level l 4^l plus 3/16 4^m for each 2x upsample from
 *     level m = l .. 1, tests/test_render_glow.c). Cost: the
 *     full-resolution image is passed over three times in all (threshold
 *     sum, extraction with the first 2x2 sum, apply); everything else is
 *     on grids of 1/4 of the pixels or fewer.
 *  4. Energy: the halo is multiplied by (sum of e) / (sum of halo), both
 *     sums in double, and added to the pixels. The sum of the halo is
 *     taken on level 1 with the upsample's exact weights: each level-1
 *     cell gives its value to the pixels times render_glow_share along x
 *     and along y (1, or 1/2 for an edge cell hanging over an odd size),
 *     so no full-resolution pass is needed for it. The
 *     total light is therefore unchanged up to float rounding (the factor
 *     is 1 up to rounding except where odd sizes make an edge cell of a
 *     coarser level hang over the frame and lose a share in the upsample).
 * Pixels with Y <= T are not touched by step 2; an image without any such
 * pixel is returned bit for bit. */
#ifndef NB_RENDER_GLOW_SHARED_H
#define NB_RENDER_GLOW_SHARED_H

#include <math.h>

#include "pyramid_shared.h"
#include "tone_shared.h"

#ifdef __CUDACC__
#define RENDER_GLOW_HD __host__ __device__
#else
#define RENDER_GLOW_HD
#endif

/* Wing (render.psf_wing, render_wing): the same steps with threshold 0
 * (every lit pixel gives fraction psf_wing of its light) and level l's blur
 * weighted by c_l = render_wing_level_weight(l, beta) in the collapse,
 * U_l = c_l B_l + up(U_{l+1}) / 4 (the glow: c_l = 1). Level l holds light
 * at radii ~2.5 * 2^(l-1) px, so c_l = 2^((2 - 2 beta)(l - 1)) gives each
 * octave of radius a share that falls as r^(2 - 2 beta): the light beyond
 * r of a Moffat profile (1 + r^2/a^2)^-beta for r >> a. beta 1: equal
 * shares, the glow's halo; beta 4: the wing is nearly all level 1. Step 4's
 * normalisation keeps the total whatever the weights. */
static inline RENDER_GLOW_HD double render_wing_level_weight(int l, double beta)
{
	return exp2((2.0 - 2.0 * beta) * (double)(l - 1));
}

/* Fraction of a pixel of luminance y moved out at threshold thr. */
static inline RENDER_GLOW_HD double render_glow_excess(double y, double thr)
{
	return y > thr && y > 0 ? (y - thr) / y : 0.0;
}

/* Share of level-1 cell I (of nc = ceil(n / 2)) that the bilinear 2x
 * upsample (render_pyr_coord, clamped) puts inside n pixels, divided by
 * the 2 pixels it covers: 1, except 1/2 for the last cell when n is odd
 * (worked out pixel by pixel: interior cells get weights 1/4, 3/4, 3/4,
 * 1/4; the first and last cells 1, 3/4, 1/4; a half cell 3/4, 1/4). */
static inline RENDER_GLOW_HD double render_glow_share(int I, int nc, int n)
{
	return (I == nc - 1 && (n & 1)) ? 0.5 : 1.0;
}

/* Step 2 fused with the first 2x2 sum, for level-1 cell (I, J) of a w x h
 * image: the excess out of each of its in-frame pixels (in place), and
 * their sum into p1 (gw = render_lod_dim(w, 1) cells per row). */
static inline RENDER_GLOW_HD void render_glow_extract_cell(float *rgb, int w, int h, double thr,
							    float glow, float *p1, int gw, int I, int J)
{
	double s[3] = {0, 0, 0};
	for (int j = 2 * J; j < 2 * J + 2 && j < h; j++)
		for (int i = 2 * I; i < 2 * I + 2 && i < w; i++) {
			float *v = rgb + 3 * ((size_t)j * w + i);
			double f = render_glow_excess(render_lum709(v[0], v[1], v[2]), thr);
			if (!(f > 0))
				continue;
			for (int c = 0; c < 3; c++) {
				float x = (float)(glow * f * v[c]);
				v[c] -= x;
				s[c] += x;
			}
		}
	for (int c = 0; c < 3; c++)
		p1[3 * ((size_t)J * gw + I) + c] = (float)s[c];
}

#endif
