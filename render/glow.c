/* glow.c - render.glow on the CPU: light above a threshold bleeds into a
 * soft halo of RENDER_GLOW_SCALES blurred scales, energy kept. The rule is
 * written in render/glow_shared.h, which the GPU (kernels/render_glow.cu)
 * shares. Cost per pixel: one luminance, then per scale s (d = 2^s) one box
 * sum, 2 x 13 taps on a grid of 1/d^2 of the pixels (~35 taps per pixel in
 * all) and one bilinear sample; two full-size float buffers. */
#include <stdlib.h>
#include <string.h>

#include "glow_shared.h"
#include "render.h"
#include "tone_shared.h"

/* Box sum of the w x h image e into cells of d x d: g, gw x gh. */
static void glow_down(const float *e, int w, int h, int d, float *g, int gw, int gh)
{
#pragma omp parallel for schedule(static)
	for (int J = 0; J < gh; J++)
		for (int I = 0; I < gw; I++) {
			double s[3] = {0, 0, 0};
			for (int j = J * d; j < (J + 1) * d && j < h; j++)
				for (int i = I * d; i < (I + 1) * d && i < w; i++)
					for (int c = 0; c < 3; c++)
						s[c] += e[3 * ((size_t)j * w + i) + c];
			for (int c = 0; c < 3; c++)
				g[3 * ((size_t)J * gw + I) + c] = (float)s[c];
		}
}

/* One blur pass of the gw x gh grid in -> out, along x (dx = 1) or y. */
static void glow_blur(const float *in, float *out, int gw, int gh, int along_x)
{
	double inv = 1.0 / render_glow_tapsum();
#pragma omp parallel for schedule(static)
	for (int J = 0; J < gh; J++)
		for (int I = 0; I < gw; I++)
			render_glow_blur_cell(in, out, gw, gh, along_x, inv, I, J);
}

/* halo += f * the bilinear upsample of grid g (gw x gh cells of d px). */
static void glow_up_add(const float *g, int gw, int gh, int d, double f, float *halo, int w, int h)
{
#pragma omp parallel for schedule(static)
	for (int j = 0; j < h; j++) {
		int j0, j1;
		double ty;
		render_glow_coord(j, d, gh, &j0, &j1, &ty);
		for (int i = 0; i < w; i++) {
			int i0, i1;
			double tx;
			render_glow_coord(i, d, gw, &i0, &i1, &tx);
			const float *a = g + 3 * ((size_t)j0 * gw + i0), *b = g + 3 * ((size_t)j0 * gw + i1);
			const float *p = g + 3 * ((size_t)j1 * gw + i0), *q = g + 3 * ((size_t)j1 * gw + i1);
			for (int c = 0; c < 3; c++) {
				double v = (1 - ty) * ((1 - tx) * a[c] + tx * b[c]) +
					   ty * ((1 - tx) * p[c] + tx * q[c]);
				halo[3 * ((size_t)j * w + i) + c] += (float)(f * v);
			}
		}
	}
}

/* Step 2: e = glow * f * rgb out of img; returns the sum of e. */
static double glow_extract(const struct scene *sc, struct render_image *img, double thr, float *e)
{
	size_t npix = (size_t)img->w * (size_t)img->h;
	double removed = 0.0;
	float glow = (float)sc->render.glow;
	for (size_t p = 0; p < npix; p++) {
		float *v = img->rgb + 3 * p;
		double f = render_glow_excess(render_lum709(v[0], v[1], v[2]), thr);
		for (int c = 0; c < 3; c++) {
			float x = f > 0 ? (float)(glow * f * v[c]) : 0.0f;
			e[3 * p + c] = x;
			v[c] -= x;
			removed += x;
		}
	}
	return removed;
}

static double glow_sum(const float *v, size_t n)
{
	double s = 0.0;
	for (size_t k = 0; k < n; k++)
		s += v[k];
	return s;
}

int render_glow(const struct scene *sc, struct render_image *img)
{
	if (!(sc->render.glow > 0) || !img->rgb)
		return 0;
	int w = img->w, h = img->h;
	size_t nv = (size_t)w * h * 3;
	double ref = render_tonemap_reference(img);
	if (!(ref > 0))
		return 0;
	double thr = render_glow_threshold_abs(sc, ref);
	float *e = malloc(nv * sizeof *e), *halo = calloc(nv, sizeof *halo);
	float *g = malloc(nv * sizeof *g), *g2 = malloc(nv * sizeof *g2);
	int rc = 0;
	if (!e || !halo || !g || !g2) {
		log_error("out of memory for the glow of a %dx%d frame", w, h);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	double removed = glow_extract(sc, img, thr, e);
	if (!(removed > 0))
		goto cleanup;
	for (int s = 0; s < RENDER_GLOW_SCALES; s++) {
		int d = 1 << s, gw = render_lod_dim(w, s), gh = render_lod_dim(h, s);
		glow_down(e, w, h, d, g, gw, gh);
		glow_blur(g, g2, gw, gh, 1);
		glow_blur(g2, g, gw, gh, 0);
		glow_up_add(g, gw, gh, d, 1.0 / ((double)d * d * RENDER_GLOW_SCALES), halo, w, h);
	}
	double hsum = glow_sum(halo, nv);
	float k = hsum > 0 ? (float)(removed / hsum) : 0.0f;
	for (size_t i = 0; i < nv; i++)
		img->rgb[i] += k * halo[i];
cleanup:
	free(e);
	free(halo);
	free(g);
	free(g2);
	return rc;
}

double render_glow_threshold_abs(const struct scene *sc, double ref)
{
	double exposure = sc->render.exposure_auto ? 1.0 : sc->render.exposure;
	return sc->render.glow_threshold * ref / exposure;
}
