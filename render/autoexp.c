/* autoexp.c - auto exposure on the CPU (render.exposure: auto): the
 * luminance histogram of a frame, and the target and weight of the moving
 * average; the percentile and the step are render/tone_shared.h's, which
 * the GPU shares. */
#include <math.h>
#include <string.h>

#include "render.h"
#include "tone_shared.h"

void render_auto_histogram(const struct render_image *img, double a, uint32_t *hist)
{
	memset(hist, 0, RENDER_AUTO_BINS * sizeof *hist);
	if (!img->rgb || !(a > 0))
		return;
	size_t npix = (size_t)img->w * (size_t)img->h;
	/* Counts per thread, then added: integer sums, the same in any order.
	 * Cost per pixel: 12 bytes read, one log2 when lit. */
#pragma omp parallel
	{
		uint32_t mine[RENDER_AUTO_BINS] = {0};
#pragma omp for schedule(static)
		for (size_t p = 0; p < npix; p++) {
			const float *in = img->rgb + 3 * p;
			double y = render_lum709(in[0], in[1], in[2]);
			if (y > 0)
				mine[render_auto_bin(y, a)]++;
		}
#pragma omp critical
		for (int b = 0; b < RENDER_AUTO_BINS; b++)
			hist[b] += mine[b];
	}
}

double render_auto_target(const struct scene *sc)
{
	const double t = RENDER_AUTO_TARGET, k = RENDER_CURVE_K;
	switch (sc->render.tonemap) {
	case SCENE_TONEMAP_LOG:
		return expm1(t * log1p(k)) / k;
	case SCENE_TONEMAP_ASINH:
		return sinh(t * asinh(k)) / k;
	case SCENE_TONEMAP_FILMIC:
		return render_filmic_inverse(t, sc->render.white);
	default:
		return t;
	}
}

double render_auto_alpha(const struct scene *sc)
{
	double tau = sc->render.auto_smoothing;
	return tau > 0 ? -expm1(-1.0 / tau) : 1.0;
}

void render_auto_exposure(const struct scene *sc, const struct render_image *img,
			  struct render_auto_state *st)
{
	uint32_t hist[RENDER_AUTO_BINS];
	double a = render_tonemap_reference(img) / RENDER_REF_SCALE;
	render_auto_histogram(img, a, hist);
	double level = render_auto_level(hist, a, sc->render.auto_percentile);
	render_auto_step(st, level, render_auto_target(sc), render_auto_alpha(sc));
}
