/* test_render_util.h - helpers shared by the renderer tests
 * (tests/test_render.c, tests/test_render_lod.c, tests/test_gpu_render.c):
 * a bare render scene, the standard camera, its focal length, and the
 * stated GPU-vs-CPU HDR tolerance (render/cuda/gpu_render.h). */
#ifndef NB_TEST_RENDER_UTIL_H
#define NB_TEST_RENDER_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "render/render.h"

/* w x h, kernel k, fixed smoothing; linear tone map, exposure 1, gamma 1,
 * component colours, k = 32 neighbours for adaptive h. calloc'd: free(). */
static inline struct scene *render_test_scene(int w, int h, enum scene_kernel k,
					      double smoothing)
{
	struct scene *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	sc->render.width = w;
	sc->render.height = h;
	sc->render.kernel = k;
	sc->render.smoothing = smoothing;
	sc->render.neighbours = 32;
	sc->render.exposure = 1;
	sc->render.gamma = 1;
	sc->render.tonemap = SCENE_TONEMAP_LINEAR;
	sc->render.mode = SCENE_COLOR_COMPONENTS;
	sc->output.frames = 1;
	return sc;
}

/* Camera at (0,-10,0) looking at the origin, z up, 60 degrees: forward +y,
 * right +x, screen-up +z (worked out by hand from right = forward x up). */
static const struct render_camera cam_std = {.pos = {0, -10, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 60};

/* Pinhole focal length in pixels for an image h pixels high. */
static inline double render_test_focal(int h, double fov_deg)
{
	return 0.5 * h / tan(0.5 * fov_deg * M_PI / 180.0);
}

/* The stated HDR tolerance, every value of a w x h RGB image:
 * |gpu - cpu| <= 1e-4 max|cpu| + 1e-3 |cpu|, totals within 1e-5; prints
 * the worst ratio to the tolerance. */
static inline void expect_hdr_close(const float *g, const float *c, int w, int h,
				    const char *what)
{
	size_t nv = (size_t)w * h * 3;
	double cmax = 0, worst = 0, sg = 0, scpu = 0;
	for (size_t k = 0; k < nv; k++)
		cmax = fmax(cmax, fabs(c[k]));
	ck_assert_msg(cmax > 0, "%s: empty reference image", what);
	for (size_t k = 0; k < nv; k++) {
		double tol = 1e-4 * cmax + 1e-3 * fabs(c[k]);
		double err = fabs((double)g[k] - c[k]);
		worst = fmax(worst, err / tol);
		ck_assert_msg(err <= tol, "%s: value %zu (pixel %zu,%zu ch %zu): gpu %.9g cpu %.9g", what,
			      k, k / 3 % w, k / 3 / w, k % 3, g[k], c[k]);
		sg += g[k];
		scpu += c[k];
	}
	ck_assert_close(sg, scpu, 0, 1e-5);
	printf("%s: worst |gpu-cpu| / tolerance = %.3g, totals %.9g vs %.9g\n", what, worst, sg, scpu);
}

#endif
