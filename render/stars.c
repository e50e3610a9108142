/* stars.c - render.style: stars: each body deposits its light through a
 * small Gaussian point-spread function whose size is fixed in PIXELS (CPU
 * reference for render/cuda/render_stars.cu).
 *
 * Weight. W = mass * light[comp] per channel (render_comp_light: colour
 * times brightness; density mode: mass in all three channels), mass in
 * scene units, exactly as render_splat_h. A body of zero weight (drawn
 * black, or brightness 0) deposits nothing. No smoothing length is used or
 * computed: render.smoothing and adaptive smoothing are ignored.
 *
 * PSF. A Gaussian of standard deviation s = render.psf_fwhm / (2 sqrt(2 ln
 * 2)) pixels, whatever the body's distance, centred on the body's
 * continuous pixel position (x, y) (render_view_project). Pixel (i, j)
 * covers [i, i+1) x [j, j+1) and receives W * wx[i] * wy[j], where wx[i] is
 * the Gaussian integrated over [i, i+1): (erf((i+1-x)/(s sqrt 2)) -
 * erf((i-x)/(s sqrt 2))) / 2, over the footprint i = floor(x) - R ..
 * floor(x) + R, R = render_stars_radius (ceil(3 s) + 1), and divided by the
 * footprint's sum of these (wy the same in y). So the footprint's weights
 * sum to 1 and each body deposits exactly W (the tail cut off beyond R,
 * which the normalisation puts back, is 4e-8 of the light at the default
 * 1.5 px and at most 2.4e-4 per axis at 8 px), whatever its sub-pixel
 * position. The footprint is at most RENDER_STARS_MAX_WIDTH pixels wide.
 *
 * Visibility: a body with depth <= near deposits nothing; its footprint is
 * clipped to the image (the pixels inside get their share, the rest is
 * lost), as the smooth style's footprints are. Equirectangular frames draw
 * each footprint as render_proj_copies copies (render_proj_ghost: across
 * the seam and over the poles), records b * copies + k, so what leaves
 * the frame there comes back on the other side.
 *
 * Motion blur (render.motion_blur.samples S > 1; render.h, blur_shared.h):
 * each body becomes S records, at its drifted sample positions, with
 * W / S each; the passes below run over records (body-major), so the order
 * and the determinism are the same.
 *
 * Parallelism and determinism, as splat.c: pass 1 (parallel over bodies)
 * projects; pass 2 (serial) lists the bodies touching each band of
 * STARS_BAND_ROWS rows, in body order; pass 3 (parallel over bands)
 * deposits. Every pixel receives its contributions in body order, so the
 * image is bit-identical for any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blur_shared.h"
#include "render.h"

#define STARS_BAND_ROWS 16

struct stars_rec {
	double x, y; /* projected centre, pixels */
	float w[3];  /* weight per channel */
	int i0, j0;  /* footprint box [i0, i0 + 2R] x [j0, j0 + 2R], unclipped */
	int slab;    /* image it goes into (render_stars_splat_slabs; else 0) */
};

double render_stars_sigma(double fwhm)
{
	if (!(fwhm >= RENDER_STARS_FWHM_MIN))
		fwhm = RENDER_STARS_FWHM_MIN;
	if (fwhm > RENDER_STARS_FWHM_MAX)
		fwhm = RENDER_STARS_FWHM_MAX;
	return fwhm / (2.0 * sqrt(2.0 * log(2.0)));
}

int render_stars_radius(double sigma)
{
	return (int)ceil(3.0 * sigma) + 1;
}

/* The normalised 1D weights of a PSF of sigma s centred at x over the
 * 2R + 1 pixels from floor(x) - R: wk[k] for pixel floor(x) - R + k. */
static void stars_weights(double x, double s, int R, double *wk)
{
	const double inv = 1.0 / (s * sqrt(2.0));
	const int i0 = (int)floor(x) - R;
	double sum = 0.0, lo = erf((i0 - x) * inv);
	for (int k = 0; k <= 2 * R; k++) {
		double hi = erf((i0 + k + 1 - x) * inv);
		wk[k] = 0.5 * (hi - lo);
		sum += wk[k];
		lo = hi;
	}
	for (int k = 0; k <= 2 * R; k++)
		wk[k] /= sum;
}

/* Pass 1 for one copy of a body (render_proj_ghost) centred at (x, y): 1
 * if its footprint reaches the image. */
static int stars_prepare(const struct render_view *v, int R, double x, double y, const float w[3],
			 struct stars_rec *rec)
{
	/* Far outside (also keeps the int casts safe). */
	if (x + R + 1 < 0 || x - R - 1 >= v->w || y + R + 1 < 0 || y - R - 1 >= v->h)
		return 0;
	rec->x = x;
	rec->y = y;
	memcpy(rec->w, w, sizeof rec->w);
	rec->i0 = (int)floor(x) - R;
	rec->j0 = (int)floor(y) - R;
	if (rec->i0 + 2 * R < 0 || rec->i0 >= v->w || rec->j0 + 2 * R < 0 || rec->j0 >= v->h)
		return 0;
	return 1;
}

/* Pass 3 for one body: its rows [ja, jb] (inside the image). */
static void stars_deposit(const struct stars_rec *rec, double s, int R, int ja, int jb,
			  struct render_image *img)
{
	double wx[RENDER_STARS_MAX_WIDTH], wy[RENDER_STARS_MAX_WIDTH];
	stars_weights(rec->x, s, R, wx);
	stars_weights(rec->y, s, R, wy);
	int ia = rec->i0 < 0 ? 0 : rec->i0;
	int ib = rec->i0 + 2 * R >= img->w ? img->w - 1 : rec->i0 + 2 * R;
	for (int j = ja; j <= jb; j++) {
		float *row = img->rgb + 3 * (size_t)j * img->w;
		double fy = wy[j - rec->j0];
		for (int i = ia; i <= ib; i++) {
			double f = wx[i - rec->i0] * fy;
			row[3 * i + 0] += (float)(rec->w[0] * f);
			row[3 * i + 1] += (float)(rec->w[1] * f);
			row[3 * i + 2] += (float)(rec->w[2] * f);
		}
	}
}

/* Pass 1 over all records: point q is body q / S at its sample q % S
 * (render.motion_blur, blur_shared.h; S = 1: point q is body q, at its
 * position); record q * nc + k is copy k of point q (nc =
 * render_proj_copies: 1 but for equirectangular frames). */
static void stars_project(const struct render_view *v, int R, const struct scene *sc,
			  const struct sim_state *st, const struct sim_units *u,
			  const struct render_color_by *cb, const unsigned char *slab, int S,
			  double span, struct stars_rec *recs, unsigned char *live)
{
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	const size_t nq = st->n * (size_t)S; /* bodies x samples */
	const int nc = render_proj_copies(&v->pj); /* record q * nc + k: copy k of point q */
#pragma omp parallel for schedule(dynamic, 1024)
	for (size_t q = 0; q < nq; q++) {
		const size_t b = S > 1 ? q / (size_t)S : q;
		double p[3];
		for (int i = 0; i < 3; i++) {
			double x = st->pos[3 * b + i];
			if (S > 1)
				x = render_blur_drift(x, st->vel[3 * b + i],
						      render_blur_time(span, (int)(q % (size_t)S), S));
			p[i] = x / u->length;
		}
		double m = st->mass[b] / u->mass;
		if (S > 1)
			m /= S; /* each sample carries 1/S of the light */
		float light[3] = {1.0f, 1.0f, 1.0f}, w[3];
		double cc[3] = {1.0, 1.0, 1.0}; /* render.color_by's colour */
		int c = st->comp ? st->comp[b] : 0;
		if (!density && st->comps && c < st->ncomp)
			render_body_light(sc, &st->comps[c], light);
		if (!density && cb)
			render_color_by_body(cb, st, u, b, v->pos, cc);
		for (int k = 0; k < 3; k++)
			w[k] = (float)(m * light[k] * cc[k]);
		int dark = w[0] == 0.0f && w[1] == 0.0f && w[2] == 0.0f;
		if (slab && slab[b] == RENDER_DUST_NO_SLAB)
			dark = 1;
		double x = 0, y = 0, depth;
		if (dark || !render_view_project(v, p, &x, &y, &depth) || !isfinite(x) || !isfinite(y))
			dark = 1;
		for (int k = 0; k < nc; k++) {
			size_t e = q * (size_t)nc + k;
			double gx = x, gy = y;
			if (!dark)
				render_proj_ghost(&v->pj, k, x, y, &gx, &gy);
			live[e] = dark ? 0 : (unsigned char)stars_prepare(v, R, gx, gy, w, &recs[e]);
			if (live[e])
				recs[e].slab = slab ? slab[b] : 0;
		}
	}
}

/* Rows of rec's footprint inside the image. */
static void stars_rows(const struct stars_rec *rec, int R, int h, int *ja, int *jb)
{
	*ja = rec->j0 < 0 ? 0 : rec->j0;
	*jb = rec->j0 + 2 * R >= h ? h - 1 : rec->j0 + 2 * R;
}

/* Pass 2: start[k] .. start[k + 1] of list: the bodies of band k, in body
 * order. 0 or NB_ERUNTIME (out of memory). */
static int stars_bands(const struct stars_rec *recs, const unsigned char *live, size_t n, int R,
		       int h, int nbands, size_t *start, size_t **list)
{
	size_t *fill = calloc((size_t)nbands, sizeof *fill);
	if (!fill)
		return NB_ERUNTIME;
	for (size_t b = 0; b < n; b++) {
		if (!live[b])
			continue;
		int ja, jb;
		stars_rows(&recs[b], R, h, &ja, &jb);
		for (int k = ja / STARS_BAND_ROWS; k <= jb / STARS_BAND_ROWS; k++)
			start[k + 1]++;
	}
	for (int k = 0; k < nbands; k++)
		start[k + 1] += start[k];
	*list = malloc((start[nbands] ? start[nbands] : 1) * sizeof **list);
	if (!*list) {
		free(fill);
		return NB_ERUNTIME;
	}
	for (size_t b = 0; b < n; b++) {
		if (!live[b])
			continue;
		int ja, jb;
		stars_rows(&recs[b], R, h, &ja, &jb);
		for (int k = ja / STARS_BAND_ROWS; k <= jb / STARS_BAND_ROWS; k++)
			(*list)[start[k] + fill[k]++] = b;
	}
	free(fill);
	return 0;
}

/* render_stars_splat_c into imgs[0] (slab NULL), or each body b into
 * imgs[slab[b]] (render_stars_splat_slabs). */
static int stars_splat_into(const struct scene *sc, const struct render_camera *cam,
			    const struct sim_state *st, const struct sim_units *u,
			    const struct render_color_by *cb_in, const unsigned char *slab,
			    struct render_image *imgs)
{
	struct render_image *img = &imgs[0];
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	if (st->n == 0 || img->w <= 0 || img->h <= 0)
		return 0;
	struct render_view v;
	render_view_make(cam, img->w, img->h, &v);
	const double s = render_stars_sigma(sc->render.psf_fwhm);
	const int R = render_stars_radius(s);
	const int nbands = (img->h + STARS_BAND_ROWS - 1) / STARS_BAND_ROWS;
	const struct render_color_by *cb;
	struct render_color_by *cb_own;
	int rc = render_color_by_resolve(sc, st, u, cb_in, &cb, &cb_own);
	if (rc)
		return rc;
	if (cb && cb->by == SCENE_COLOR_BY_COMPONENT)
		cb = NULL;
	/* render.motion_blur: S samples per body (never for the dust slabs),
	 * each drawn as render_proj_copies copies */
	const int S = slab ? 1 : render_blur_samples(sc);
	const double span = S > 1 ? render_blur_span(sc, u) : 0.0;
	const size_t nrec = st->n * (size_t)S * (size_t)render_proj_copies(&v.pj);
	struct stars_rec *recs = malloc(nrec * sizeof *recs);
	unsigned char *live = malloc(nrec);
	size_t *start = calloc((size_t)nbands + 1, sizeof *start), *list = NULL;
	if (!recs || !live || !start) {
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	stars_project(&v, R, sc, st, u, cb, slab, S, span, recs, live);
	if ((rc = stars_bands(recs, live, nrec, R, img->h, nbands, start, &list)))
		goto cleanup;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < nbands; k++) {
		int r0 = k * STARS_BAND_ROWS, r1 = r0 + STARS_BAND_ROWS - 1;
		for (size_t e = start[k]; e < start[k + 1]; e++) {
			const struct stars_rec *rec = &recs[list[e]];
			int ja, jb;
			stars_rows(rec, R, img->h, &ja, &jb);
			stars_deposit(rec, s, R, ja > r0 ? ja : r0, jb < r1 ? jb : r1,
				      &imgs[rec->slab]);
		}
	}
cleanup:
	if (rc)
		log_error("render: out of memory drawing %zu bodies as stars", st->n);
	free(recs);
	free(live);
	free(start);
	free(list);
	free(cb_own);
	return rc;
}

int render_stars_splat(const struct scene *sc, const struct render_camera *cam,
		       const struct sim_state *st, const struct sim_units *u,
		       struct render_image *img)
{
	return stars_splat_into(sc, cam, st, u, NULL, NULL, img);
}

int render_stars_splat_c(const struct scene *sc, const struct render_camera *cam,
			 const struct sim_state *st, const struct sim_units *u,
			 const struct render_color_by *cb, struct render_image *img)
{
	return stars_splat_into(sc, cam, st, u, cb, NULL, img);
}

int render_stars_splat_slabs(const struct scene *sc, const struct render_camera *cam,
			     const struct sim_state *st, const struct sim_units *u,
			     const struct render_color_by *cb, const unsigned char *slab,
			     struct render_image *imgs)
{
	return stars_splat_into(sc, cam, st, u, cb, slab, imgs);
}
