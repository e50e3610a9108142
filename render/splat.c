/* splat.c - bodies into the HDR image: each body spreads its weight over a
 * small 2D kernel footprint (CPU reference for the GPU splatter).
 *
 * Weight. W = mass * color[comp] per channel (density mode: mass in all three
 * channels), mass in scene units (internal mass / u->mass).
 *
 * Footprint. The body projects (render_view_project) to the continuous pixel
 * position (x, y); pixel (i, j) has its centre at (i + 0.5, j + 0.5). The
 * kernel radius in pixels is r = h / depth * focal_px (h in scene length
 * units: render.smoothing, or with render.smoothing: adaptive the body's own
 * h_i of render/adaptive.h, used as is: no factor, no clamp; h_i = 0 gives
 * a single-pixel deposit), capped at RENDER_MAX_RADIUS_PX so that a body
 * at the lens costs bounded work (its light is then spread over that radius
 * only; its mass is still conserved). Kernels, d = distance of a pixel
 * centre from (x, y):
 *   cubic   : M4 cubic spline with support r, q = d/r (Monaghan & Lattanzio
 *             1985): 40/(7 pi r^2) * (1 - 6q^2 + 6q^3) for q <= 1/2,
 *             40/(7 pi r^2) * 2 (1 - q)^3 for 1/2 < q < 1, 0 beyond;
 *   gaussian: exp(-d^2 / (2 s^2)), s = r/2, cut at d <= 3 s = 1.5 r.
 * The kernel is sampled at the pixel centres of its support and the samples
 * are divided by their sum (discrete normalisation), so a body deposits
 * exactly W in total. If r < 0.5 px, or no pixel centre lies inside the
 * support, the whole W goes into the pixel containing (x, y).
 *
 * Visibility, precisely: a body with depth <= near (render_view) deposits
 * nothing. Otherwise its normalised footprint is clipped to the image: the
 * pixels inside get their share and the rest is lost. So the image total is
 * sum over bodies of W * (fraction of the body's normalised footprint that
 * falls inside the image); for a body whose footprint is fully inside that
 * fraction is 1, and for a single-pixel body it is 1 or 0 as (x, y) is
 * inside [0, w) x [0, h) or not. ("Visible mass" in render.h means this.)
 *
 * Parallelism and determinism. Pass 1 (parallel over bodies) projects each
 * body and computes its normalisation; pass 2 (serial) lists, for each band
 * of RENDER_BAND_ROWS rows, the bodies whose footprint touches it, in body
 * order; pass 3 (parallel over bands) deposits. Every pixel receives its
 * contributions in body order, so the image is bit-identical for any thread
 * count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adaptive.h"
#include "render.h"

#define RENDER_BAND_ROWS 16

struct splat_rec {
	double x, y;     /* projected centre, continuous pixel coordinates */
	double r;        /* kernel radius r_px (0: single-pixel deposit) */
	double support;  /* pixel-centre distance cut: r (cubic) or 1.5 r (gaussian) */
	double inv_norm; /* 1 / sum of kernel samples over the full footprint */
	float w[3];      /* weight per channel */
	int i0, i1, j0, j1; /* footprint box, unclipped (columns i, rows j) */
};

/* Kernel sample at squared pixel distance d2, up to a constant factor (the
 * discrete normalisation removes it, so the 40/(7 pi r^2) of the cubic
 * spline is left out). inv_r = 1/r. Zero outside the support. */
static inline double kernel_sample(enum scene_kernel k, double d2, double inv_r)
{
	double q2 = d2 * inv_r * inv_r;
	if (k == SCENE_KERNEL_GAUSSIAN) {
		/* s = r/2: d^2 / (2 s^2) = 2 q^2; cut at d = 3 s, q^2 = 2.25 */
		return q2 > 2.25 ? 0.0 : exp(-2.0 * q2);
	}
	if (q2 >= 1.0)
		return 0.0;
	double q = sqrt(q2);
	if (q <= 0.5)
		return 1.0 - 6.0 * q2 + 6.0 * q2 * q;
	double t = 1.0 - q;
	return 2.0 * t * t * t;
}

/* Fill rec for a body at scene position p with weight w. Returns 1 if the
 * body can reach the image, 0 if culled. */
static int splat_prepare(const struct render_view *v, enum scene_kernel kern, double smoothing,
			 const double p[3], const float w[3], struct splat_rec *rec)
{
	double x, y, depth;
	if (!render_view_project(v, p, &x, &y, &depth) || !isfinite(x) || !isfinite(y))
		return 0;
	double r = smoothing / depth * v->focal_px;
	if (!(r <= RENDER_MAX_RADIUS_PX))
		r = RENDER_MAX_RADIUS_PX;
	double support = kern == SCENE_KERNEL_GAUSSIAN ? 1.5 * r : r;
	rec->x = x;
	rec->y = y;
	memcpy(rec->w, w, sizeof rec->w);

	/* Cull footprints that miss the image (also keeps the int casts safe). */
	double reach = r < 0.5 ? 0.0 : support;
	if (x + reach < 0 || x - reach >= v->w || y + reach < 0 || y - reach >= v->h)
		return 0;

	if (r >= 0.5) {
		/* Pixel centres c with |c - x| <= support: c = i + 0.5. */
		int i0 = (int)ceil(x - support - 0.5), i1 = (int)floor(x + support - 0.5);
		int j0 = (int)ceil(y - support - 0.5), j1 = (int)floor(y + support - 0.5);
		double sum = 0.0, inv_r = 1.0 / r;
		for (int j = j0; j <= j1; j++) {
			double dy = (j + 0.5) - y;
			for (int i = i0; i <= i1; i++) {
				double dx = (i + 0.5) - x;
				sum += kernel_sample(kern, dx * dx + dy * dy, inv_r);
			}
		}
		if (sum > 0) {
			rec->r = r;
			rec->support = support;
			rec->inv_norm = 1.0 / sum;
			rec->i0 = i0;
			rec->i1 = i1;
			rec->j0 = j0;
			rec->j1 = j1;
			if (i1 < 0 || i0 >= v->w || j1 < 0 || j0 >= v->h)
				return 0;
			return 1;
		}
	}
	/* Single-pixel deposit into the pixel containing (x, y). */
	if (!(x >= 0 && x < v->w && y >= 0 && y < v->h))
		return 0;
	rec->r = 0;
	rec->support = 0;
	rec->inv_norm = 1.0;
	rec->i0 = rec->i1 = (int)floor(x);
	rec->j0 = rec->j1 = (int)floor(y);
	return 1;
}

/* Deposit rows [ja, jb] of rec's footprint (already within the image rows). */
static void splat_deposit(const struct splat_rec *rec, enum scene_kernel kern, int ja, int jb,
			  struct render_image *img)
{
	if (rec->r == 0) {
		float *px = img->rgb + 3 * ((size_t)rec->j0 * img->w + rec->i0);
		px[0] += rec->w[0];
		px[1] += rec->w[1];
		px[2] += rec->w[2];
		return;
	}
	int ia = rec->i0 < 0 ? 0 : rec->i0;
	int ib = rec->i1 >= img->w ? img->w - 1 : rec->i1;
	double inv_r = 1.0 / rec->r;
	for (int j = ja; j <= jb; j++) {
		double dy = (j + 0.5) - rec->y;
		float *row = img->rgb + 3 * (size_t)j * img->w;
		for (int i = ia; i <= ib; i++) {
			double dx = (i + 0.5) - rec->x;
			double f = kernel_sample(kern, dx * dx + dy * dy, inv_r) * rec->inv_norm;
			if (f == 0)
				continue;
			row[3 * i + 0] += (float)(rec->w[0] * f);
			row[3 * i + 1] += (float)(rec->w[1] * f);
			row[3 * i + 2] += (float)(rec->w[2] * f);
		}
	}
}

int render_splat_h(const struct scene *sc, const struct render_camera *cam,
		   const struct sim_state *st, const struct sim_units *u, const double *h_by_body,
		   struct render_image *img)
{
	int rc = 0;
	struct splat_rec *recs = NULL;
	unsigned char *live = NULL;
	size_t *band_start = NULL, *band_list = NULL, *band_fill = NULL;
	struct sim_units uu;
	if (!u) {
		sim_units_of(sc->units, &uu);
		u = &uu;
	}
	if (st->n == 0 || img->w <= 0 || img->h <= 0)
		return 0;

	struct render_view v;
	render_view_make(cam, img->w, img->h, &v);
	enum scene_kernel kern = sc->render.kernel;
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	double smoothing = sc->render.smoothing; /* when h_by_body is NULL */
	size_t n = st->n;

	recs = malloc(n * sizeof *recs);
	live = malloc(n);
	int nbands = (img->h + RENDER_BAND_ROWS - 1) / RENDER_BAND_ROWS;
	band_start = calloc((size_t)nbands + 1, sizeof *band_start);
	band_fill = calloc((size_t)nbands, sizeof *band_fill);
	if (!recs || !live || !band_start || !band_fill) {
		log_error("render: out of memory splatting %zu bodies", n);
		rc = NB_ERUNTIME;
		goto cleanup;
	}

	/* Pass 1: project and normalise, per body. */
#pragma omp parallel for schedule(dynamic, 1024)
	for (size_t b = 0; b < n; b++) {
		double p[3] = {st->pos[3 * b] / u->length, st->pos[3 * b + 1] / u->length,
			       st->pos[3 * b + 2] / u->length};
		double m = st->mass[b] / u->mass;
		float w[3];
		int c = st->comp ? st->comp[b] : 0;
		for (int k = 0; k < 3; k++) {
			float col = 1.0f;
			if (!density && st->comps && c < st->ncomp)
				col = st->comps[c].color[k];
			w[k] = (float)(m * col);
		}
		double hs = h_by_body ? h_by_body[b] : smoothing;
		/* A body of zero weight (a dark halo drawn black) adds nothing:
		 * skip it, as the GPU does, rather than spread zeros. */
		int dark = w[0] == 0.0f && w[1] == 0.0f && w[2] == 0.0f;
		live[b] = dark ? 0 : (unsigned char)splat_prepare(&v, kern, hs, p, w, &recs[b]);
	}

	/* Pass 2: band lists, in body order. */
	for (size_t b = 0; b < n; b++) {
		if (!live[b])
			continue;
		int ja = recs[b].j0 < 0 ? 0 : recs[b].j0;
		int jb = recs[b].j1 >= img->h ? img->h - 1 : recs[b].j1;
		for (int k = ja / RENDER_BAND_ROWS; k <= jb / RENDER_BAND_ROWS; k++)
			band_start[k + 1]++;
	}
	for (int k = 0; k < nbands; k++)
		band_start[k + 1] += band_start[k];
	band_list = malloc((band_start[nbands] ? band_start[nbands] : 1) * sizeof *band_list);
	if (!band_list) {
		log_error("render: out of memory splatting %zu bodies", n);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	for (size_t b = 0; b < n; b++) {
		if (!live[b])
			continue;
		int ja = recs[b].j0 < 0 ? 0 : recs[b].j0;
		int jb = recs[b].j1 >= img->h ? img->h - 1 : recs[b].j1;
		for (int k = ja / RENDER_BAND_ROWS; k <= jb / RENDER_BAND_ROWS; k++)
			band_list[band_start[k] + band_fill[k]++] = b;
	}

	/* Pass 3: deposit, one band per task. */
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < nbands; k++) {
		int r0 = k * RENDER_BAND_ROWS;
		int r1 = r0 + RENDER_BAND_ROWS - 1;
		if (r1 >= img->h)
			r1 = img->h - 1;
		for (size_t e = band_start[k]; e < band_start[k + 1]; e++) {
			const struct splat_rec *rec = &recs[band_list[e]];
			int ja = rec->j0 > r0 ? rec->j0 : r0;
			int jb = rec->j1 < r1 ? rec->j1 : r1;
			splat_deposit(rec, kern, ja, jb, img);
		}
	}

cleanup:
	free(recs);
	free(live);
	free(band_start);
	free(band_fill);
	free(band_list);
	return rc;
}

int render_splat(const struct scene *sc, const struct render_camera *cam,
		 const struct sim_state *st, const struct sim_units *u, struct render_image *img)
{
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
