/* diffuse_screen.c - render.diffuse_smoothing: screen on the CPU: the
 * diffuse layer under the stars as the stars' own light smoothed on an
 * image pyramid, per pixel over the area holding render.neighbours
 * projected bodies (rule: render/pyramid_shared.h; the GPU twin:
 * render/cuda/render_diffuse.cu). Recomputed every frame: one pass over the
 * bodies (projection and a count), the pyramid sums and blurs on 1/4 of the
 * pixels and fewer, then per pixel a few bilinear samples. */
#include <math.h>
#include <stdlib.h>

#include "pyramid_shared.h"
#include "render.h"

void render_diffuse_counts(const struct scene *sc, const struct render_camera *cam,
			   const struct sim_state *st, const struct sim_units *u, float *c1)
{
	int w, h; /* the picture: the frame, or one stereo eye's */
	render_eye_size(sc, &w, &h);
	int gw = render_lod_dim(w, 1), gh = render_lod_dim(h, 1);
	for (size_t k = 0; k < (size_t)gw * gh; k++)
		c1[k] = 0.0f;
	struct render_view v;
	render_view_make(cam, w, h, &v);
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	long n = (long)st->n;
#pragma omp parallel for schedule(static)
	for (long b = 0; b < n; b++) {
		double p[3] = {st->pos[3 * b] / u->length, st->pos[3 * b + 1] / u->length,
			       st->pos[3 * b + 2] / u->length};
		double m = st->mass[b] / u->mass, x, y, depth;
		float light[3] = {1.0f, 1.0f, 1.0f};
		int c = st->comp ? st->comp[b] : 0;
		if (!density && st->comps && c < st->ncomp)
			render_comp_light(&st->comps[c], light);
		int dark = 1;
		for (int k = 0; k < 3; k++)
			dark &= (float)(m * light[k]) == 0.0f;
		if (dark || !render_view_project(&v, p, &x, &y, &depth) || !isfinite(x) || !isfinite(y))
			continue;
		if (!(x >= 0 && x < w && y >= 0 && y < h))
			continue;
		int i = (int)floor(x), j = (int)floor(y);
		if (i >= w || j >= h)
			continue;
#pragma omp atomic
		c1[(size_t)(j >> 1) * gw + (i >> 1)] += 1.0f;
	}
}

/* Levels 1..lmax of the light (3) and the counts (1), summed then blurred
 * in place; wrap: x round the equirectangular seam. */
static void screen_pyramid(float *buf, const size_t *off, const int *gw, const int *gh, int lmax,
			   int nch, int wrap, float *tmp)
{
	for (int l = 2; l <= lmax; l++) {
#pragma omp parallel for schedule(static)
		for (int J = 0; J < gh[l]; J++)
			for (int I = 0; I < gw[l]; I++)
				render_pyr_down_cell(buf + off[l - 1], gw[l - 1], gh[l - 1], buf + off[l], gw[l],
						     nch, I, J);
	}
	for (int l = 1; l <= lmax; l++)
		for (int ax = 1; ax >= 0; ax--) {
			const float *in = ax ? buf + off[l] : tmp;
			float *out = ax ? tmp : buf + off[l];
#pragma omp parallel for schedule(static)
			for (int J = 0; J < gh[l]; J++)
				for (int I = 0; I < gw[l]; I++)
					render_pyr_blur_cell(in, out, gw[l], gh[l], nch, ax, wrap, I, J);
		}
}

int render_diffuse_layer(const struct scene *sc, const struct render_image *stars, const float *c1,
			 struct render_image *layer)
{
	int w = stars->w, h = stars->h, lmax = render_diffuse_lmax(h);
	if (layer->w != w || layer->h != h) {
		log_error("render: diffuse layer is %dx%d, the frame %dx%d (internal)", layer->w, layer->h,
			  w, h);
		return NB_ERUNTIME;
	}
	int gw[RENDER_DIFFUSE_MAX_LEVELS + 1], gh[RENDER_DIFFUSE_MAX_LEVELS + 1];
	size_t os[RENDER_DIFFUSE_MAX_LEVELS + 2], oc[RENDER_DIFFUSE_MAX_LEVELS + 2];
	for (int l = 1; l <= lmax; l++) {
		gw[l] = render_lod_dim(w, l);
		gh[l] = render_lod_dim(h, l);
	}
	size_t ns = render_pyr_layout(w, h, 3, lmax, os), nc = render_pyr_layout(w, h, 1, lmax, oc);
	float *s = malloc(ns * sizeof *s), *c = malloc(nc * sizeof *c);
	float *tmp = malloc(os[2] * sizeof *tmp), *wb = malloc((size_t)w * h * sizeof *wb);
	int rc = 0;
	if (!s || !c || !tmp || !wb) {
		log_error("out of memory for the diffuse layer of a %dx%d frame", w, h);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	/* S_1 from the stars image */
#pragma omp parallel for schedule(static)
	for (int J = 0; J < gh[1]; J++)
		for (int I = 0; I < gw[1]; I++)
			render_pyr_down_cell(stars->rgb, w, h, s, gw[1], 3, I, J);
	for (size_t k = 0; k < oc[2]; k++)
		c[k] = c1[k];
	const int wrap = render_projection_of(sc->camera.projection)->wrap;
	screen_pyramid(s, os, gw, gh, lmax, 3, wrap, tmp);
	screen_pyramid(c, oc, gw, gh, lmax, 1, wrap, tmp);
	struct render_diffuse_levels L;
	for (int l = 1; l <= lmax; l++) {
		L.sb[l] = s + os[l];
		L.cb[l] = c + oc[l];
		L.gw[l] = gw[l];
		L.gh[l] = gh[l];
	}
	L.lmax = lmax;
	L.k = sc->render.neighbours;
	L.wrap = wrap;
	/* w_p times the raw layer, w_p (kept: the mix needs it after the
	 * sums) and the sums of the two layers' values w_p raw_p and w_p S_p */
	double raw = 0.0, total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : raw, total)
	for (int j = 0; j < h; j++) {
		double row = 0.0, wrow = 0.0;
		for (int i = 0; i < w; i++) {
			double v[3];
			size_t p = (size_t)j * w + i;
			float wp = (float)render_diffuse_pixel(&L, i, j, v);
			float *o = layer->rgb + 3 * p;
			wb[p] = wp;
			wrow += render_diffuse_wsum(wp, stars->rgb + 3 * p);
			for (int k = 0; k < 3; k++) {
				o[k] = (float)v[k];
				row += o[k];
			}
		}
		raw += row;
		total += wrow;
	}
	double f = raw > 0 ? total / raw : 0.0;
	size_t nv = (size_t)w * h * 3;
#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < nv; k++)
		layer->rgb[k] = render_diffuse_effective(layer->rgb[k], f, wb[k / 3], stars->rgb[k]);
cleanup:
	free(s);
	free(c);
	free(tmp);
	free(wb);
	return rc;
}

int render_diffuse_screen_apply(const struct scene *sc, const struct render_camera *cam,
				const struct sim_state *st, const struct sim_units *u,
				struct render_image *img, struct render_image *smooth)
{
	int w = img->w, h = img->h;
	float *c1 = malloc((size_t)render_lod_dim(w, 1) * render_lod_dim(h, 1) * sizeof *c1);
	if (!c1) {
		log_error("out of memory for the diffuse layer's counts");
		return NB_ERUNTIME;
	}
	render_diffuse_counts(sc, cam, st, u, c1);
	int rc = render_diffuse_layer(sc, img, c1, smooth);
	if (rc == 0)
		render_diffuse_mix(sc->render.diffuse, img, smooth);
	free(c1);
	return rc;
}

int render_stars_diffuse_screen(const struct scene *sc, const struct render_camera *cam,
				const struct sim_state *st, const struct sim_units *u,
				struct render_image *img, struct render_image *smooth)
{
	return render_stars_diffuse_screen_c(sc, cam, st, u, NULL, img, smooth);
}

int render_stars_diffuse_screen_c(const struct scene *sc, const struct render_camera *cam,
				  const struct sim_state *st, const struct sim_units *u,
				  const struct render_color_by *cb, struct render_image *img,
				  struct render_image *smooth)
{
	int rc = render_stars_splat_c(sc, cam, st, u, cb, img);
	if (rc == 0)
		rc = render_diffuse_screen_apply(sc, cam, st, u, img, smooth);
	return rc;
}
