/* splat_style.c - render_splat (render.h): the splat a scene's look picks.
 * render.style: stars draws the stars splat (render/stars.c), with
 * render.diffuse its smooth layer under them (render/diffuse.c), with a
 * dust component the depth slabs (render/dust.c); style smooth draws the
 * kernel splat (render/splat.c) with fixed or adaptive smoothing lengths
 * (render/adaptive.c). This file sits above all of those and only picks
 * and allocates: the splats themselves never call back up into it. */
#include <stdlib.h>

#include "adaptive.h"
#include "render.h"

/* render.style stars with render.diffuse > 0: adaptive h and a scratch
 * image made here (render_stars_diffuse). */
static int splat_stars_diffuse(const struct scene *sc, const struct render_camera *cam,
			       const struct sim_state *st, const struct sim_units *u,
			       struct render_image *img)
{
	struct render_image smooth = {0};
	double *h = malloc((st->n ? st->n : 1) * sizeof *h);
	int rc = NB_ERUNTIME;
	if (!h) {
		log_error("render: out of memory for %zu adaptive smoothing lengths", st->n);
		return rc;
	}
	if (render_image_alloc(&smooth, img->w, img->h) == 0 &&
	    (rc = render_adaptive_h_state(sc, st, u, h)) == 0)
		rc = render_stars_diffuse(sc, cam, st, u, h, img, &smooth);
	render_image_free(&smooth);
	free(h);
	return rc;
}

/* render.style stars with dust (render/dust.c): buffers and, with
 * render.diffuse, adaptive h made here. */
static int splat_stars_dust(const struct scene *sc, const struct render_camera *cam,
			    const struct sim_state *st, const struct sim_units *u,
			    struct render_image *img)
{
	struct render_dust_buf b;
	double *h = NULL;
	int rc = render_dust_alloc(&b, sc->render.dust_slabs, img->w, img->h, st->n);
	if (rc)
		return rc;
	if (sc->render.diffuse > 0) {
		if (!(h = malloc((st->n ? st->n : 1) * sizeof *h))) {
			log_error("render: out of memory for %zu adaptive smoothing lengths", st->n);
			rc = NB_ERUNTIME;
		} else {
			rc = render_adaptive_h_state(sc, st, u, h);
		}
	}
	if (rc == 0)
		rc = render_dust_frame(sc, cam, st, u, h, &b, img, NULL);
	free(h);
	render_dust_free(&b);
	return rc;
}

int render_splat(const struct scene *sc, const struct render_camera *cam,
		 const struct sim_state *st, const struct sim_units *u, struct render_image *img)
{
	if (sc->render.style == SCENE_STYLE_STARS && render_dust_present(st))
		return splat_stars_dust(sc, cam, st, u, img);
	int diffuse = sc->render.style == SCENE_STYLE_STARS && sc->render.diffuse > 0;
	if (sc->render.style == SCENE_STYLE_STARS && !diffuse)
		return render_stars_splat(sc, cam, st, u, img);
	if (diffuse)
		return splat_stars_diffuse(sc, cam, st, u, img);
	if (!sc->render.smoothing_adaptive || st->n == 0 || img->w <= 0 || img->h <= 0)
		return render_splat_h(sc, cam, st, u, NULL, img);
	double *h = malloc(st->n * sizeof *h);
	if (!h) {
		log_error("render: out of memory for %zu adaptive smoothing lengths", st->n);
		return NB_ERUNTIME;
	}
	int rc = render_adaptive_h_state(sc, st, u, h);
	if (rc == 0)
		rc = render_splat_h(sc, cam, st, u, h, img);
	free(h);
	return rc;
}
