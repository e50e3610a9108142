/* diffuse.c - render.diffuse: a smooth adaptive layer under the stars
 * (render.h, render_stars_diffuse), the CPU twin of the GPU's (the stars
 * branch of gpu_render_frame, render/cuda/render.cu). Both splats are the
 * existing ones (render_splat_h, render_stars_splat); this file only mixes
 * them. */
#include <stdlib.h>

#include "render.h"

int render_stars_diffuse(const struct scene *sc, const struct render_camera *cam,
			 const struct sim_state *st, const struct sim_units *u,
			 const double *h_by_body, struct render_image *img,
			 struct render_image *smooth)
{
	return render_stars_diffuse_c(sc, cam, st, u, h_by_body, NULL, img, smooth);
}

/* Both layers take the same colours: one color_by state for the two. */
int render_stars_diffuse_c(const struct scene *sc, const struct render_camera *cam,
			   const struct sim_state *st, const struct sim_units *u,
			   const double *h_by_body, const struct render_color_by *cb_in,
			   struct render_image *img, struct render_image *smooth)
{
	if (smooth->w != img->w || smooth->h != img->h) {
		log_error("render: diffuse layer is %dx%d, the frame %dx%d (internal)", smooth->w,
			  smooth->h, img->w, img->h);
		return NB_ERUNTIME;
	}
	const struct render_color_by *cb;
	struct render_color_by *cb_own;
	int rc = render_color_by_resolve(sc, st, u, cb_in, &cb, &cb_own);
	if (rc)
		return rc;
	render_image_clear(smooth);
	rc = render_splat_hc(sc, cam, st, u, h_by_body, cb, smooth);
	if (rc == 0)
		rc = render_stars_splat_c(sc, cam, st, u, cb, img);
	free(cb_own);
	if (rc)
		return rc;
	render_diffuse_mix(sc->render.diffuse, img, smooth);
	return 0;
}

void render_diffuse_mix(double d, struct render_image *img, const struct render_image *smooth)
{
	const double a = 1.0 / (1.0 + d), b = d / (1.0 + d);
	const size_t nv = (size_t)img->w * (size_t)img->h * 3;
	float *p = img->rgb;
	const float *q = smooth->rgb;
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < nv; i++)
		p[i] = (float)((double)p[i] * a + (double)q[i] * b);
}
