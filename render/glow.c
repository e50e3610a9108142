/* glow.c - render.glow on the CPU: light above a threshold bleeds into a
 * soft halo built on a pyramid of 2x-downsampled levels (cells of 2 to 16
 * px), energy kept. The rule is written in render/glow_shared.h, which the
 * GPU (render/cuda/render_glow.cu) shares. Cost per pixel: one luminance, one
 * bilinear sample; the blurs (2 x 9 taps) run on grids of 1/4 of the
 * pixels and fewer (~1/3 of a tap set per pixel in all). */
#include <stdlib.h>
#include <string.h>

#include "glow_shared.h"
#include "render.h"

/* The pyramid's grids: level l at buf + off[l], its blur scratch tmp;
 * wrap: x round the equirectangular seam (pyramid_shared.h). */
struct glow_pyr {
	int gw[RENDER_GLOW_LEVELS + 1], gh[RENDER_GLOW_LEVELS + 1];
	size_t off[RENDER_GLOW_LEVELS + 2];
	float *buf, *tmp;
	int wrap;
};

static void glow_blur(const float *in, float *out, int gw, int gh, int along_x, int wrap)
{
#pragma omp parallel for schedule(static)
	for (int J = 0; J < gh; J++)
		for (int I = 0; I < gw; I++)
			render_pyr_blur_cell(in, out, gw, gh, 3, along_x, wrap, I, J);
}

/* Step 3 after P_1: the coarser sums, the blurs, U_l from the coarsest
 * level down (in place: level l of buf ends as U_l), level l's blur
 * weighted by c[l] (glow: all 1; wing: render_wing_level_weight). */
static void glow_pyramid(struct glow_pyr *p, const float *c)
{
	for (int l = 2; l <= RENDER_GLOW_LEVELS; l++) {
		int gw = p->gw[l], gh = p->gh[l];
		const float *fine = p->buf + p->off[l - 1];
		float *g = p->buf + p->off[l];
#pragma omp parallel for schedule(static)
		for (int J = 0; J < gh; J++)
			for (int I = 0; I < gw; I++)
				render_pyr_down_cell(fine, p->gw[l - 1], p->gh[l - 1], g, gw, 3, I, J);
	}
	for (int l = RENDER_GLOW_LEVELS; l >= 1; l--) {
		int gw = p->gw[l], gh = p->gh[l];
		float *g = p->buf + p->off[l];
		glow_blur(g, p->tmp, gw, gh, 1, p->wrap);
		glow_blur(p->tmp, g, gw, gh, 0, p->wrap);
		const float cl = c[l];
		if (l == RENDER_GLOW_LEVELS) {
			for (size_t k = 0; k < (size_t)gw * gh * 3; k++)
				g[k] *= cl;
			continue;
		}
		const float *cg = p->buf + p->off[l + 1];
#pragma omp parallel for schedule(static)
		for (int J = 0; J < gh; J++)
			for (int I = 0; I < gw; I++) {
				double v[3];
				render_pyr_sample(cg, p->gw[l + 1], p->gh[l + 1], 3, 2, p->wrap, I, J, v);
				float *o = g + 3 * ((size_t)J * gw + I);
				for (int k = 0; k < 3; k++)
					o[k] = (float)(cl * o[k] + 0.25 * v[k]);
			}
	}
}

/* Sum of the halo over the pixels, from U_1 (glow_shared.h step 4). */
static double glow_halo_sum(const struct glow_pyr *p, int w, int h)
{
	const float *u1 = p->buf + p->off[1];
	int gw = p->gw[1], gh = p->gh[1];
	double s = 0.0;
	for (int J = 0; J < gh; J++) {
		double row = 0.0, sy = render_glow_share(J, gh, h);
		for (int I = 0; I < gw; I++) {
			const float *v = u1 + 3 * ((size_t)J * gw + I);
			row += ((double)v[0] + v[1] + v[2]) * render_glow_share(I, gw, w);
		}
		s += row * sy;
	}
	return s;
}

/* Steps 2-5 at threshold thr (pixel values), moving fraction frac of the
 * excess, levels weighted by c[1..RENDER_GLOW_LEVELS]; wrap: x round the
 * seam. */
static int glow_pass(struct render_image *img, double thr, float frac, const float *c, int wrap)
{
	int w = img->w, h = img->h;
	struct glow_pyr p;
	p.wrap = wrap;
	for (int l = 1; l <= RENDER_GLOW_LEVELS; l++) {
		p.gw[l] = render_lod_dim(w, l);
		p.gh[l] = render_lod_dim(h, l);
	}
	size_t nf = render_pyr_layout(w, h, 3, RENDER_GLOW_LEVELS, p.off);
	p.buf = malloc(nf * sizeof *p.buf);
	p.tmp = malloc((p.off[2] - p.off[1]) * sizeof *p.tmp);
	int rc = 0;
	if (!p.buf || !p.tmp) {
		log_error("out of memory for the glow of a %dx%d frame", w, h);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	float glow = frac;
	float *p1 = p.buf + p.off[1];
#pragma omp parallel for schedule(static)
	for (int J = 0; J < p.gh[1]; J++)
		for (int I = 0; I < p.gw[1]; I++)
			render_glow_extract_cell(img->rgb, w, h, thr, glow, p1, p.gw[1], I, J);
	double removed = 0.0;
	for (size_t k = 0; k < p.off[2]; k++)
		removed += p1[k];
	if (!(removed > 0))
		goto cleanup;
	glow_pyramid(&p, c);
	double hsum = glow_halo_sum(&p, w, h);
	float f = hsum > 0 ? (float)(removed / hsum) : 0.0f;
#pragma omp parallel for schedule(static)
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++) {
			double v[3];
			render_pyr_sample(p1, p.gw[1], p.gh[1], 3, 2, wrap, i, j, v);
			float *o = img->rgb + 3 * ((size_t)j * w + i);
			for (int c = 0; c < 3; c++)
				o[c] += f * (float)(0.25 * v[c]);
		}
cleanup:
	free(p.buf);
	free(p.tmp);
	return rc;
}

int render_glow(const struct scene *sc, struct render_image *img)
{
	if (!(sc->render.glow > 0) || !img->rgb)
		return 0;
	double ref = render_tonemap_reference(img);
	if (!(ref > 0))
		return 0;
	float c[RENDER_GLOW_LEVELS + 1];
	for (int l = 0; l <= RENDER_GLOW_LEVELS; l++)
		c[l] = 1.0f;
	return glow_pass(img, render_glow_threshold_abs(sc, ref), (float)sc->render.glow, c,
			 render_projection_of(sc->camera.projection)->wrap);
}

int render_wing(const struct scene *sc, struct render_image *img)
{
	if (!(sc->render.psf_wing > 0) || !img->rgb)
		return 0;
	float c[RENDER_GLOW_LEVELS + 1];
	for (int l = 0; l <= RENDER_GLOW_LEVELS; l++)
		c[l] = (float)render_wing_level_weight(l, sc->render.psf_wing_beta);
	return glow_pass(img, 0.0, (float)sc->render.psf_wing, c,
			 render_projection_of(sc->camera.projection)->wrap);
}

double render_glow_threshold_abs(const struct scene *sc, double ref)
{
	/* auto or keyed exposure: the threshold does not move with it */
	return sc->render.glow_threshold * ref / render_exposure_fixed(sc);
}
