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
 * exactly W in total; except a cubic footprint with r >=
 * RENDER_NORM_ANALYTIC_R cells, divided by the integral 7 pi r^2 / 40
 * instead (render.h: W within RENDER_NORM_ANALYTIC_ERROR relative). If
 * r < 0.5 px, or no pixel centre lies inside the support, the whole W goes
 * into the pixel containing (x, y).
 *
 * Level of detail (render.h). A footprint with r > RENDER_LOD_RADIUS_PX is
 * all of the above on the grid of level L = render_lod_level(r): x, y, r
 * divided by 2^L (exact: a power of two), "pixels" being the level's cells
 * and the image the level's grid. Each level used has its own image and
 * band lists; pass 4 upsamples the levels into the full image (bilinear,
 * clamped at the edges, divided by 4^L). Cost per body is then at most
 * ~(2 RENDER_LOD_RADIUS_PX + 1)^2 samples (x 2.25 for the gaussian) instead
 * of up to (2 r + 1)^2.
 *
 * Projections (render/projection_shared.h): depth is the distance for the
 * fisheye and equirectangular ones, focal_px their pixels per radian, so r
 * is the footprint's angular size on the image's meridian scale (round
 * footprints: not stretched towards the poles or the fisheye's rim).
 * Equirectangular frames draw each footprint as render_proj_copies copies
 * (render_proj_ghost: across the seam, over the poles), records b * copies
 * + k; on a level L grid the copies land exactly on the wrapped cells when
 * the width and height are multiples of 2^L (else the wrapped part is off
 * by the grid's rounding).
 *
 * Visibility, precisely: a body with depth <= near (render_view) deposits
 * nothing. Otherwise its normalised footprint is clipped to the image (to
 * its level's grid): the pixels inside get their share and the rest is
 * lost. So the image total is sum over bodies of W * (fraction of the
 * body's normalised footprint that falls inside the image); for a body
 * whose footprint is fully inside that fraction is 1, and for a
 * single-pixel body it is 1 or 0 as (x, y) is inside [0, w) x [0, h) or
 * not. ("Visible mass" in render.h means this; render.h says what the
 * upsampling keeps at the edges.)
 *
 * Parallelism and determinism. Pass 1 (parallel over bodies) projects each
 * body and computes its normalisation; pass 2 (serial) lists, for each band
 * of RENDER_BAND_ROWS rows of each level, the bodies whose footprint
 * touches it, in body order; pass 3 (parallel over bands) deposits; pass 4
 * (parallel over rows) adds the upsampled levels 1, 2, ... to each pixel in
 * that order. Every pixel receives its contributions in body order, so the
 * image is bit-identical for any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#define RENDER_BAND_ROWS 16

struct splat_rec {
	double x, y;     /* projected centre, continuous coordinates of its level's grid */
	double r;        /* kernel radius in cells of its level (0: single-pixel deposit) */
	double support;  /* cell-centre distance cut: r (cubic) or 1.5 r (gaussian) */
	double inv_norm; /* 1 / sum of kernel samples over the full footprint */
	float w[3];      /* weight per channel */
	int level;       /* render_lod_level of the radius in pixels */
	int i0, i1, j0, j1; /* footprint box on its level's grid, unclipped (columns i, rows j) */
};

/* One level's image and its bands. */
struct splat_level {
	struct render_image img; /* level 0: the caller's image; others owned here */
	int band0, nbands;       /* its bands in the global band numbering */
};

int render_lod_level(double r_px)
{
	int L = 0;
	while (L < RENDER_LOD_LEVELS - 1 && r_px > RENDER_LOD_RADIUS_PX * (double)(1 << L))
		L++;
	return L;
}

int render_lod_dim(int n, int level)
{
	return (int)(((long)n + (1l << level) - 1) >> level);
}

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

/* Fill rec for (a copy of) a body projected at pixel (x, y), depth depth
 * (render_view_project), with weight w. Returns 1 if the body can reach
 * the image, 0 if culled. */
static int splat_prepare(const struct render_view *v, enum scene_kernel kern, double smoothing,
			 double x, double y, double depth, const float w[3], struct splat_rec *rec)
{
	double r = smoothing / depth * v->focal_px;
	if (!(r <= RENDER_MAX_RADIUS_PX))
		r = RENDER_MAX_RADIUS_PX;
	/* Level of detail: from here on "pixels" are the level's cells. */
	int level = render_lod_level(r);
	double cell = (double)(1 << level);
	int gw = render_lod_dim(v->w, level), gh = render_lod_dim(v->h, level);
	x /= cell;
	y /= cell;
	r /= cell;
	double support = kern == SCENE_KERNEL_GAUSSIAN ? 1.5 * r : r;
	rec->x = x;
	rec->y = y;
	rec->level = level;
	memcpy(rec->w, w, sizeof rec->w);

	/* Cull footprints that miss the grid (also keeps the int casts safe). */
	double reach = r < 0.5 ? 0.0 : support;
	if (x + reach < 0 || x - reach >= gw || y + reach < 0 || y - reach >= gh)
		return 0;

	if (r >= 0.5) {
		/* Pixel centres c with |c - x| <= support: c = i + 0.5. */
		int i0 = (int)ceil(x - support - 0.5), i1 = (int)floor(x + support - 0.5);
		int j0 = (int)ceil(y - support - 0.5), j1 = (int)floor(y + support - 0.5);
		double sum = 0.0, inv_r = 1.0 / r;
		if (kern == SCENE_KERNEL_CUBIC && r >= RENDER_NORM_ANALYTIC_R)
			sum = RENDER_CUBIC_SHAPE_AREA * r * r; /* render.h: analytic */
		else
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
			if (i1 < 0 || i0 >= gw || j1 < 0 || j0 >= gh)
				return 0;
			return 1;
		}
	}
	/* Single-pixel deposit into the pixel containing (x, y). */
	if (!(x >= 0 && x < gw && y >= 0 && y < gh))
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

/* Pass 4: add level L's upsampled image to the rows [ja, jb] of img:
 * bilinear between cell centres, clamped to the edge cells, / 4^L. */
static void lod_upsample_rows(const struct render_image *lv, int level, int ja, int jb,
			      struct render_image *img)
{
	double cell = (double)(1 << level), inv_area = 1.0 / (cell * cell);
	for (int j = ja; j <= jb; j++) {
		double v = (j + 0.5) / cell - 0.5;
		int J0 = (int)floor(v), J1 = J0 + 1;
		double fy = v - J0;
		J0 = J0 < 0 ? 0 : J0;
		J1 = J1 >= lv->h ? lv->h - 1 : J1;
		const float *r0 = lv->rgb + 3 * (size_t)J0 * lv->w, *r1 = lv->rgb + 3 * (size_t)J1 * lv->w;
		float *row = img->rgb + 3 * (size_t)j * img->w;
		for (int i = 0; i < img->w; i++) {
			double u = (i + 0.5) / cell - 0.5;
			int I0 = (int)floor(u), I1 = I0 + 1;
			double fx = u - I0;
			I0 = I0 < 0 ? 0 : I0;
			I1 = I1 >= lv->w ? lv->w - 1 : I1;
			for (int c = 0; c < 3; c++) {
				double top = (1 - fx) * r0[3 * I0 + c] + fx * r0[3 * I1 + c];
				double bot = (1 - fx) * r1[3 * I0 + c] + fx * r1[3 * I1 + c];
				row[3 * i + c] += (float)(((1 - fy) * top + fy * bot) * inv_area);
			}
		}
	}
}

/* Rows [ja, jb] of rec's footprint clipped to its level's grid. */
static void band_rows(const struct splat_rec *rec, const struct splat_level *lv, int *ja, int *jb)
{
	*ja = rec->j0 < 0 ? 0 : rec->j0;
	*jb = rec->j1 >= lv->img.h ? lv->img.h - 1 : rec->j1;
}

/* One render_splat_h call: the bodies' footprints, the levels in use and
 * the band lists (bodies by band, in body order). */
struct splat_job {
	size_t n; /* records: bodies x nc */
	int nc;   /* copies of each footprint (render_proj_copies) */
	enum scene_kernel kern;
	struct splat_rec *recs;
	unsigned char *live;
	size_t *band_start, *band_list, *band_fill;
	struct splat_level lv[RENDER_LOD_LEVELS];
	int nlev; /* levels 0 .. nlev - 1 in use */
	int nbands;
};

/* Pass 1: project and normalise, per body. Returns the coarsest level used. */
static int splat_project(struct splat_job *j, const struct render_view *v,
			 const struct scene *sc, const struct sim_state *st,
			 const struct sim_units *u, const double *h_by_body,
			 const struct render_color_by *cb)
{
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	double smoothing = sc->render.smoothing; /* when h_by_body is NULL */
	enum scene_kernel kern = j->kern;
	struct splat_rec *recs = j->recs;
	unsigned char *live = j->live;
	const int nc = j->nc; /* record b * nc + k: copy k of body b (render_proj_ghost) */
	size_t n = j->n / (size_t)nc;
	int maxlev = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(max : maxlev)
	for (size_t b = 0; b < n; b++) {
		double p[3] = {st->pos[3 * b] / u->length, st->pos[3 * b + 1] / u->length,
			       st->pos[3 * b + 2] / u->length};
		double m = st->mass[b] / u->mass;
		float w[3];
		int c = st->comp ? st->comp[b] : 0;
		float light[3] = {1.0f, 1.0f, 1.0f};
		double cc[3] = {1.0, 1.0, 1.0}; /* render.color_by's colour */
		if (!density && st->comps && c < st->ncomp)
			render_body_light(sc, &st->comps[c], light);
		if (!density && cb)
			render_color_by_body(cb, st, u, b, v->pos, cc);
		for (int k = 0; k < 3; k++)
			w[k] = (float)(m * light[k] * cc[k]);
		double hs = h_by_body ? h_by_body[b] : smoothing;
		/* A body of zero weight (a dark halo drawn black) adds nothing:
		 * skip it, as the GPU does, rather than spread zeros. */
		int dark = w[0] == 0.0f && w[1] == 0.0f && w[2] == 0.0f;
		double x = 0, y = 0, depth = 0;
		if (dark || !render_view_project(v, p, &x, &y, &depth) || !isfinite(x) || !isfinite(y))
			dark = 1;
		for (int k = 0; k < nc; k++) {
			size_t e = b * (size_t)nc + k;
			double gx = x, gy = y;
			if (!dark)
				render_proj_ghost(&v->pj, k, x, y, &gx, &gy);
			live[e] = dark ? 0 : (unsigned char)splat_prepare(v, kern, hs, gx, gy, depth, w,
									    &recs[e]);
			if (live[e] && recs[e].level > maxlev)
				maxlev = recs[e].level;
		}
	}
	return maxlev;
}

/* The levels in use (0 .. NLEV - 1), their images and band numbering. */
static int splat_levels(struct splat_job *j, int nlev, struct render_image *img)
{
	struct splat_level *lv = j->lv;
	j->nlev = nlev;
	j->nbands = 0;
	for (int L = 0; L < nlev; L++) {
		if (L == 0) {
			lv[0].img = *img;
		} else if (render_image_alloc(&lv[L].img, render_lod_dim(img->w, L),
					      render_lod_dim(img->h, L)) != 0) {
			return NB_ERUNTIME;
		}
		lv[L].band0 = j->nbands;
		lv[L].nbands = (lv[L].img.h + RENDER_BAND_ROWS - 1) / RENDER_BAND_ROWS;
		j->nbands += lv[L].nbands;
	}
	return 0;
}

/* Pass 2: band lists, in body order. */
static int splat_bands(struct splat_job *j)
{
	int nbands = j->nbands;
	j->band_start = calloc((size_t)nbands + 1, sizeof *j->band_start);
	j->band_fill = calloc((size_t)nbands, sizeof *j->band_fill);
	if (!j->band_start || !j->band_fill)
		return NB_ERUNTIME;
	size_t *band_start = j->band_start, *band_fill = j->band_fill;
	for (size_t b = 0; b < j->n; b++) {
		if (!j->live[b])
			continue;
		const struct splat_level *l = &j->lv[j->recs[b].level];
		int ja, jb;
		band_rows(&j->recs[b], l, &ja, &jb);
		for (int k = ja / RENDER_BAND_ROWS; k <= jb / RENDER_BAND_ROWS; k++)
			band_start[l->band0 + k + 1]++;
	}
	for (int k = 0; k < nbands; k++)
		band_start[k + 1] += band_start[k];
	j->band_list = malloc((band_start[nbands] ? band_start[nbands] : 1) * sizeof *j->band_list);
	if (!j->band_list)
		return NB_ERUNTIME;
	for (size_t b = 0; b < j->n; b++) {
		if (!j->live[b])
			continue;
		const struct splat_level *l = &j->lv[j->recs[b].level];
		int ja, jb;
		band_rows(&j->recs[b], l, &ja, &jb);
		for (int k = l->band0 + ja / RENDER_BAND_ROWS; k <= l->band0 + jb / RENDER_BAND_ROWS; k++)
			j->band_list[band_start[k] + band_fill[k]++] = b;
	}
	return 0;
}

/* Pass 3: deposit, one band per task. */
static void splat_deposit_bands(struct splat_job *j)
{
	struct splat_level *lv = j->lv;
	int nlev = j->nlev, nbands = j->nbands;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < nbands; k++) {
		int L = nlev - 1;
		while (lv[L].band0 > k)
			L--;
		struct render_image *limg = &lv[L].img;
		int r0 = (k - lv[L].band0) * RENDER_BAND_ROWS;
		int r1 = r0 + RENDER_BAND_ROWS - 1;
		if (r1 >= limg->h)
			r1 = limg->h - 1;
		for (size_t e = j->band_start[k]; e < j->band_start[k + 1]; e++) {
			const struct splat_rec *rec = &j->recs[j->band_list[e]];
			int ja = rec->j0 > r0 ? rec->j0 : r0;
			int jb = rec->j1 < r1 ? rec->j1 : r1;
			splat_deposit(rec, j->kern, ja, jb, limg);
		}
	}
}

/* Pass 4: the coarser levels, upsampled, into the image. */
static void splat_upsample(const struct splat_job *j, struct render_image *img)
{
	const struct splat_level *lv = j->lv;
	int nlev = j->nlev;
	if (nlev <= 1)
		return;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < lv[0].nbands; k++) {
		int ja = k * RENDER_BAND_ROWS, jb = ja + RENDER_BAND_ROWS - 1;
		if (jb >= img->h)
			jb = img->h - 1;
		for (int L = 1; L < nlev; L++)
			lod_upsample_rows(&lv[L].img, L, ja, jb, img);
	}
}

int render_splat_h(const struct scene *sc, const struct render_camera *cam,
		   const struct sim_state *st, const struct sim_units *u, const double *h_by_body,
		   struct render_image *img)
{
	return render_splat_hc(sc, cam, st, u, h_by_body, NULL, img);
}

int render_splat_hc(const struct scene *sc, const struct render_camera *cam,
		    const struct sim_state *st, const struct sim_units *u, const double *h_by_body,
		    const struct render_color_by *cb_in, struct render_image *img)
{
	int rc = 0;
	struct splat_job j;
	memset(&j, 0, sizeof j);
	j.nlev = 1;
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	if (st->n == 0 || img->w <= 0 || img->h <= 0)
		return 0;
	const struct render_color_by *cb;
	struct render_color_by *cb_own;
	if ((rc = render_color_by_resolve(sc, st, u, cb_in, &cb, &cb_own)))
		return rc;

	struct render_view v;
	render_view_make(cam, img->w, img->h, &v);
	j.kern = sc->render.kernel;
	j.nc = render_proj_copies(&v.pj);
	j.n = st->n * (size_t)j.nc;
	j.recs = malloc(j.n * sizeof *j.recs);
	j.live = malloc(j.n);
	if (!j.recs || !j.live)
		goto oom;
	int maxlev = splat_project(&j, &v, sc, st, u, h_by_body,
				   cb && cb->by != SCENE_COLOR_BY_COMPONENT ? cb : NULL);
	if ((rc = splat_levels(&j, maxlev + 1, img)))
		goto cleanup;
	if (splat_bands(&j))
		goto oom;
	splat_deposit_bands(&j);
	splat_upsample(&j, img);
	goto cleanup;
oom:
	log_error("render: out of memory splatting %zu bodies", j.n);
	rc = NB_ERUNTIME;
cleanup:
	for (int L = 1; L < RENDER_LOD_LEVELS; L++)
		render_image_free(&j.lv[L].img);
	free(j.recs);
	free(j.live);
	free(j.band_start);
	free(j.band_fill);
	free(j.band_list);
	free(cb_own);
	return rc;
}
