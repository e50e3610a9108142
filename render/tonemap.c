/* tonemap.c - HDR image -> 16-bit RGB (row 0 top), the CPU reference: the
 * reference level and render_tonemap_gain. Which exposure a frame gets
 * (keys, auto or the number) is render/exposure.c's rule, which calls
 * down into this file (render_tonemap is there).
 *
 * Per pixel, in this order:
 *  1. Level: v = exposure * value / ref, where ref = render_tonemap_reference
 *     = RENDER_REF_SCALE * (mean pixel value over all pixels and channels).
 *     The image total is the visible mass (times colour), so ref depends
 *     only on the visible mass and the image area: the same scene looks the
 *     same at any N and any resolution, and ref changes only as smoothly as
 *     the visible mass does (no per-frame percentile, so no flicker). One ref
 *     for all channels keeps colour ratios. An empty image (ref 0) shows the
 *     background.
 *     With render.exposure: auto the level is v = gain * value instead,
 *     gain from render_auto_exposure (render/tone_shared.h; the renderers
 *     keep its moving average across frames); render_exposure_gain
 *     (render/exposure.c) picks the gain.
 *  2. Curve, then clamp to [0, 1] (k = RENDER_CURVE_K):
 *       linear: v;  log: log1p(k v) / log1p(k);  asinh: asinh(k v) / asinh(k);
 *       filmic: render_filmic_curve(v, render.white) (render/tone_shared.h).
 *     log and asinh reach 1 at v = 1, like linear, but lift the faint tails
 *     (~k times) so that halo and tidal tails show while dense cores
 *     saturate only where v > 1.
 *  3. Gamma: v^(1 / gamma).
 *  4. Colour. Components mode: steps 1-3 per channel, except filmic, where
 *     step 2 is render_filmic_rgb of the pixel (the curve on its luminance,
 *     colour ratios kept, desaturated only near white). Density mode: steps 1-3
 *     on the luminance (Rec. 709 weights; all channels are equal there) and
 *     the result looked up in the colormap (render_colormap).
 *  5. Background, per channel: out = bg + (1 - bg) v ("screen": v = 0 gives
 *     the background, v = 1 gives white, never above 1). In density mode v is
 *     the colormap colour, so empty sky is the map's first colour screened
 *     over the background (near black for magma/inferno over black).
 *  6. out16 = round(65535 * out). */
#include <math.h>
#include <stdlib.h>

#include "render.h"
#include "tone_shared.h"

double render_tonemap_reference(const struct render_image *img)
{
	if (!img->rgb || img->w <= 0 || img->h <= 0)
		return 0.0;
	int h = img->h;
	size_t roww = 3 * (size_t)img->w;
	double *rows = malloc((size_t)h * sizeof *rows);
	double total = 0.0;
	if (rows) {
		/* Row sums in parallel, then summed in row order: deterministic. */
#pragma omp parallel for schedule(static)
		for (int j = 0; j < h; j++) {
			const float *p = img->rgb + (size_t)j * roww;
			double s = 0.0;
			for (size_t i = 0; i < roww; i++)
				s += p[i];
			rows[j] = s;
		}
		for (int j = 0; j < h; j++)
			total += rows[j];
		free(rows);
	} else {
		for (size_t i = 0; i < roww * (size_t)h; i++)
			total += img->rgb[i];
	}
	return RENDER_REF_SCALE * total / (3.0 * (double)img->w * (double)h);
}

static double curve(enum scene_tonemap tm, double white, double v)
{
	if (!(v > 0))
		return 0.0;
	switch (tm) {
	case SCENE_TONEMAP_LOG:
		v = log1p(RENDER_CURVE_K * v) / log1p(RENDER_CURVE_K);
		break;
	case SCENE_TONEMAP_ASINH:
		v = asinh(RENDER_CURVE_K * v) / asinh(RENDER_CURVE_K);
		break;
	case SCENE_TONEMAP_FILMIC:
		v = render_filmic_curve(v, white);
		break;
	default:
		break;
	}
	return v < 1.0 ? v : 1.0;
}

static uint16_t quant16(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 65535;
	return (uint16_t)lrint(x * 65535.0);
}

void render_tonemap_gain(const struct scene *sc, const struct render_image *img, double gain,
			 uint16_t *out16)
{
	double white = sc->render.white;
	double inv_gamma = sc->render.gamma > 0 ? 1.0 / sc->render.gamma : 1.0;
	enum scene_tonemap tm = sc->render.tonemap;
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	double bg[3];
	for (int c = 0; c < 3; c++) {
		double b = sc->render.background[c];
		bg[c] = b > 0 ? (b < 1 ? b : 1) : 0;
	}
	size_t npix = (size_t)img->w * (size_t)img->h;

#pragma omp parallel for schedule(static)
	for (size_t p = 0; p < npix; p++) {
		const float *in = img->rgb + 3 * p;
		double v[3];
		if (density) {
			double lum = 0.2126 * in[0] + 0.7152 * in[1] + 0.0722 * in[2];
			double t = pow(curve(tm, white, gain * lum), inv_gamma);
			float rgb[3];
			render_colormap_scene(sc, t, rgb);
			v[0] = rgb[0];
			v[1] = rgb[1];
			v[2] = rgb[2];
		} else if (tm == SCENE_TONEMAP_FILMIC) {
			double c[3] = {gain * in[0], gain * in[1], gain * in[2]}, f[3];
			render_filmic_rgb(c, white, f);
			for (int k = 0; k < 3; k++)
				v[k] = pow(f[k], inv_gamma);
		} else {
			for (int c = 0; c < 3; c++)
				v[c] = pow(curve(tm, white, gain * in[c]), inv_gamma);
		}
		for (int c = 0; c < 3; c++)
			out16[3 * p + c] = quant16(bg[c] + (1.0 - bg[c]) * v[c]);
	}
}
