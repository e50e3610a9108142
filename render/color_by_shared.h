/* color_by_shared.h - render.color_by's per-body colour, written once for
 * the CPU (render/splat.c, render/stars.c) and the GPU
 * (render/cuda/render_splat.cu, render/cuda/render_stars.cu): static inline
 * functions in double that compile for both (RENDER_HD, tone_shared.h).
 *
 * A body's quantity q, from its position p and velocity v (scene units)
 * and the camera position c:
 *   los_velocity  q = v . (p - c) / |p - c|  (> 0 receding, < 0 approaching;
 *                 the line of sight of each body, so it holds in
 *                 perspective too; 0 at the camera itself)
 *   speed         q = |v|
 * then t = (q - lo) / (hi - lo) clamped to [0, 1] (NaN -> 0) and its colour
 * the linear interpolation of lut (RENDER_COLOR_LUT_N linear-RGB samples
 * at t = k / (RENDER_COLOR_LUT_N - 1), made by render_color_by_init). The
 * body's weight per channel is mass * (its component's light) * colour:
 * with color_by the component's light is its brightness alone
 * (render_body_light), so only the colour changes. */
#ifndef NB_COLOR_BY_SHARED_H
#define NB_COLOR_BY_SHARED_H

#include <math.h>

#include "render.h"       /* RENDER_COLOR_LUT_N, enum scene_color_by */
#include "tone_shared.h" /* RENDER_HD */

static inline RENDER_HD double render_color_q(int by, const double p[3], const double v[3],
					      const double c[3])
{
	if (by == SCENE_COLOR_BY_SPEED)
		return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
	const double d0 = p[0] - c[0], d1 = p[1] - c[1], d2 = p[2] - c[2];
	const double r = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
	return r > 0 ? (v[0] * d0 + v[1] * d1 + v[2] * d2) / r : 0.0;
}

/* Colour of q on lut (RENDER_COLOR_LUT_N * 3 floats) for the range
 * [lo, hi], lo < hi. */
static inline RENDER_HD void render_color_lookup(const float *lut, double lo, double hi,
						 double q, double col[3])
{
	double t = (q - lo) / (hi - lo);
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	const double x = t * (RENDER_COLOR_LUT_N - 1);
	int k = (int)x;
	if (k > RENDER_COLOR_LUT_N - 2)
		k = RENDER_COLOR_LUT_N - 2;
	const double f = x - k;
	for (int c = 0; c < 3; c++)
		col[c] = (1 - f) * lut[3 * k + c] + f * lut[3 * k + 3 + c];
}

#endif
