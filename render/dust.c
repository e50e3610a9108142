/* dust.c - dust that absorbs the light behind it, composited front to back
 * in depth slabs (render.h, "Dust"; CPU reference for
 * render/cuda/render_dust.cu). Used only when a component has kappa > 0
 * (bodies.*.dust), with render.style: stars (the scene refuses dust in the
 * smooth style and in density mode).
 *
 * Why slabs, and these slabs. Absorption needs, per line of sight, the
 * order of emitters and dust in depth. Sorting every body per pixel is
 * out of reach at 10M bodies; K slabs of depth keep the order between
 * slabs exactly and treat each slab as emitters and dust uniformly mixed,
 * whose mean transmission is f(t) = (1 - e^-t) / t (the integral of
 * e^(-s t) over s in [0, 1]), the standard slab solution of the transfer
 * equation with emission and absorption in a uniform medium. The slabs span
 * only the dust's own depth range [d0, d1] (min and max depth of the dust
 * bodies): light in front of all dust (slab 0) and behind it (slab K + 1)
 * is then exact whatever K, and K is spent where dust is. The rule needs
 * only a min/max reduction, the same on the GPU (bit for bit: the depth is
 * computed with the same unfused operations).
 *
 * Why a fixed footprint h = RENDER_DUST_H_RATIO x dust_z. Absorption from
 * points would be spotty; a smooth footprint spreads each body's
 * cross-section. An adaptive h (k-th neighbour among the dust) in a thin
 * disk is set by the in-plane spacing (~1 kpc for a 20k-body galaxy),
 * which smears the lane vertically to many times its true thickness when
 * the disk is seen edge-on. A fixed multiple of the layer's own height
 * keeps the lane thin: the cubic of radius 3 z_d has a FWHM of 2.0 z_d,
 * so the lane's is ~2.7 z_d, against 4.4 z_d for the stars' sech^2 at the
 * default z_d = 0.4 z0. Seen face-on, footprints of radius 3 z_d overlap a
 * few deep at a 20k-body galaxy's scale length (more with more bodies);
 * radius 2 z_d looked blotchy edge-on (frames in docs/scenes.md, "Dust").
 * It also needs no neighbour search on the GPU.
 *
 * Determinism: pass 1 (parallel over bodies) projects and classifies; the
 * stars are render_stars_splat's bands; the dust is deposited per slab
 * (parallel over slabs), each slab's bodies in body order; the composite
 * is per pixel. Bit-identical for any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dust_shared.h"
#include "render.h"

struct dust_rec {
	double x, y, r; /* pixels; r 0: one pixel */
	double tau;     /* kappa m / A(depth): optical depth x pixel, before W; 0: nothing */
	int slab;       /* its slab, 1..K (the body's entry in slab[] is RENDER_DUST_NO_SLAB) */
};

int render_dust_present(const struct sim_state *st)
{
	for (int c = 0; st->comps && c < st->ncomp; c++)
		if (st->comps[c].kappa > 0 && st->comps[c].count > 0)
			return 1;
	return 0;
}

int render_dust_slab(double d, double d0, double d1, int K, int is_dust)
{
	return render_dust_slab_of(d, d0, d1, K, is_dust);
}

double render_dust_mix(double t)
{
	return render_dust_mix_of(t);
}

int render_dust_alloc(struct render_dust_buf *b, int K, int w, int h, size_t n)
{
	memset(b, 0, sizeof *b);
	b->K = K;
	b->w = w;
	b->h = h;
	b->n = n;
	b->emit = calloc((size_t)K + 2, sizeof *b->emit);
	b->tau = malloc(((size_t)K + 2) * (size_t)w * (size_t)h * sizeof *b->tau);
	b->slab = malloc(n ? n : 1);
	if (!b->emit || !b->tau || !b->slab)
		goto oom;
	for (int k = 0; k < K + 2; k++)
		if (render_image_alloc(&b->emit[k], w, h))
			goto oom;
	if (render_image_alloc(&b->scratch, w, h))
		goto oom;
	return 0;
oom:
	log_error("render: out of memory for %d dust slabs of %dx%d", K, w, h);
	render_dust_free(b);
	return NB_ERUNTIME;
}

void render_dust_free(struct render_dust_buf *b)
{
	if (b->emit)
		for (int k = 0; k < b->K + 2; k++)
			render_image_free(&b->emit[k]);
	free(b->emit);
	free(b->tau);
	free(b->slab);
	render_image_free(&b->scratch);
	memset(b, 0, sizeof *b);
}

/* The component's kappa of body b (0: not dust). */
static double body_kappa(const struct sim_state *st, size_t b)
{
	int c = st->comp ? st->comp[b] : 0;
	return st->comps && c < st->ncomp ? st->comps[c].kappa : 0.0;
}

/* One dust body into its slab's tau image (w x h). */
static void dust_deposit(const struct dust_rec *d, int w, int h, float *tau)
{
	double sum = 0.0;
	int i0 = 0, i1 = -1, j0 = 0, j1 = -1;
	double inv_r2 = 0.0;
	if (d->r >= 0.5) {
		i0 = (int)floor(d->x - d->r);
		i1 = (int)floor(d->x + d->r);
		j0 = (int)floor(d->y - d->r);
		j1 = (int)floor(d->y + d->r);
		inv_r2 = 1.0 / (d->r * d->r);
		for (int j = j0; j <= j1; j++) {
			double dy = j + 0.5 - d->y;
			for (int i = i0; i <= i1; i++) {
				double dx = i + 0.5 - d->x;
				sum += render_dust_shape((dx * dx + dy * dy) * inv_r2);
			}
		}
	}
	if (!(sum > 0.0)) { /* one pixel */
		int i = (int)floor(d->x), j = (int)floor(d->y);
		if (i >= 0 && i < w && j >= 0 && j < h)
			tau[(size_t)j * w + i] += (float)d->tau;
		return;
	}
	const double f = d->tau / sum;
	for (int j = j0 < 0 ? 0 : j0; j <= j1 && j < h; j++) {
		double dy = j + 0.5 - d->y;
		for (int i = i0 < 0 ? 0 : i0; i <= i1 && i < w; i++) {
			double dx = i + 0.5 - d->x;
			double k = render_dust_shape((dx * dx + dy * dy) * inv_r2);
			if (k > 0.0)
				tau[(size_t)j * w + i] += (float)(f * k);
		}
	}
}

/* Pass 1: depths; the bounds over the dust; each body's slab and each dust
 * body's record. */
static void dust_classify(const struct scene *sc, const struct render_view *v,
			  const struct sim_state *st, const struct sim_units *u,
			  struct render_dust_buf *b, struct dust_rec *recs, double *depth,
			  double d0d1[2])
{
	const int K = b->K;
	double d0 = INFINITY, d1 = -INFINITY;
	size_t n = st->n;
	for (size_t i = 0; i < n; i++) {
		double p[3] = {st->pos[3 * i] / u->length, st->pos[3 * i + 1] / u->length,
			       st->pos[3 * i + 2] / u->length};
		double x, y;
		int vis = render_view_project(v, p, &x, &y, &depth[i]) && isfinite(depth[i]);
		if (!vis)
			depth[i] = NAN;
		if (vis && body_kappa(st, i) > 0) {
			if (depth[i] < d0)
				d0 = depth[i];
			if (depth[i] > d1)
				d1 = depth[i];
		}
	}
	d0d1[0] = d0;
	d0d1[1] = d1;
	if (b->bounds) { /* over ranks: every rank's dust */
		b->bounds(b->ctx, d0d1);
		d0 = d0d1[0];
		d1 = d0d1[1];
	}
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++) {
		double kap = body_kappa(st, i);
		b->slab[i] = RENDER_DUST_NO_SLAB; /* culled, or dust: it emits nothing */
		if (kap > 0)
			recs[i] = (struct dust_rec){0, 0, 0, 0, 0};
		if (isnan(depth[i]))
			continue;
		int k = render_dust_slab(depth[i], d0, d1, K, kap > 0);
		if (!(kap > 0)) {
			b->slab[i] = (unsigned char)k;
			continue;
		}
		double p[3] = {st->pos[3 * i] / u->length, st->pos[3 * i + 1] / u->length,
			       st->pos[3 * i + 2] / u->length};
		double x, y, z;
		render_view_project(v, p, &x, &y, &z);
		int c = st->comp ? st->comp[i] : 0;
		double h = RENDER_DUST_H_RATIO * st->comps[c].dust_z;
		double r = h / z * v->focal_px;
		if (!(r <= RENDER_DUST_MAX_RADIUS_PX))
			r = RENDER_DUST_MAX_RADIUS_PX;
		double a = z / v->focal_px;
		recs[i] = (struct dust_rec){x, y, r, kap * (st->mass[i] / u->mass) / (a * a), k};
		if (!isfinite(x) || !isfinite(y) || x + r + 1 < 0 || x - r - 1 >= v->w ||
		    y + r + 1 < 0 || y - r - 1 >= v->h)
			recs[i].tau = 0; /* off the image: nothing to deposit */
	}
	(void)sc;
}

/* render.diffuse: E_k = E_k a + smooth_k b, smooth_k = render_splat_h of
 * slab k's emitting bodies. */
static int dust_diffuse(const struct scene *sc, const struct render_camera *cam,
			const struct sim_state *st, const struct sim_units *u,
			const double *h_by_body, struct render_dust_buf *b)
{
	const double dd = sc->render.diffuse, a = 1.0 / (1.0 + dd), bb = dd / (1.0 + dd);
	size_t n = st->n;
	struct sim_state sub;
	memset(&sub, 0, sizeof sub);
	sub.pos = malloc((n ? 3 * n : 1) * sizeof *sub.pos);
	sub.mass = malloc((n ? n : 1) * sizeof *sub.mass);
	sub.comp = malloc((n ? n : 1) * sizeof *sub.comp);
	double *h = malloc((n ? n : 1) * sizeof *h);
	int rc = 0;
	if (!sub.pos || !sub.mass || !sub.comp || !h) {
		log_error("render: out of memory for the diffuse layer's slabs");
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	sub.comps = st->comps;
	sub.ncomp = st->ncomp;
	const size_t nv = (size_t)b->w * (size_t)b->h * 3;
	for (int k = 0; k < b->K + 2 && rc == 0; k++) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (b->slab[i] != k)
				continue;
			memcpy(sub.pos + 3 * m, st->pos + 3 * i, 3 * sizeof *sub.pos);
			sub.mass[m] = st->mass[i];
			sub.comp[m] = st->comp ? st->comp[i] : 0;
			h[m] = h_by_body[i];
			m++;
		}
		sub.n = m;
		render_image_clear(&b->scratch);
		if (m && (rc = render_splat_h(sc, cam, &sub, u, h, &b->scratch)))
			break;
		float *p = b->emit[k].rgb;
		const float *q = b->scratch.rgb;
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < nv; i++)
			p[i] = (float)((double)p[i] * a + (double)q[i] * bb);
	}
cleanup:
	sub.comps = NULL;
	free(sub.pos);
	free(sub.mass);
	free(sub.comp);
	free(h);
	return rc;
}

int render_dust_frame(const struct scene *sc, const struct render_camera *cam,
		      const struct sim_state *st, const struct sim_units *u,
		      const double *h_by_body, struct render_dust_buf *b,
		      struct render_image *img, double d0d1[2])
{
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	if (b->w != img->w || b->h != img->h || st->n > b->n) {
		log_error("render: dust buffers are %dx%d for %zu bodies, the frame %dx%d with %zu "
			  "(internal)", b->w, b->h, b->n, img->w, img->h, st->n);
		return NB_ERUNTIME;
	}
	const int K = b->K, w = img->w, h = img->h;
	const size_t npix = (size_t)w * (size_t)h;
	struct render_view v;
	render_view_make(cam, w, h, &v);
	struct dust_rec *recs = malloc((st->n ? st->n : 1) * sizeof *recs);
	double *depth = malloc((st->n ? st->n : 1) * sizeof *depth);
	double bounds[2];
	int rc = 0;
	if (!recs || !depth) {
		log_error("render: out of memory for %zu bodies' dust records", st->n);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	dust_classify(sc, &v, st, u, b, recs, depth, bounds);
	if (d0d1) {
		d0d1[0] = bounds[0];
		d0d1[1] = bounds[1];
	}
	for (int k = 0; k < K + 2; k++)
		render_image_clear(&b->emit[k]);
	memset(b->tau, 0, (size_t)(K + 2) * npix * sizeof *b->tau);
	if ((rc = render_stars_splat_slabs(sc, cam, st, u, NULL, b->slab, b->emit)))
		goto cleanup;
	if (h_by_body && sc->render.diffuse > 0 && (rc = dust_diffuse(sc, cam, st, u, h_by_body, b)))
		goto cleanup;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 1; k <= K; k++)
		for (size_t i = 0; i < st->n; i++)
			if (body_kappa(st, i) > 0 && recs[i].slab == k && recs[i].tau > 0)
				dust_deposit(&recs[i], w, h, b->tau + (size_t)k * npix);
	for (int k = 0; b->sum && k < K + 2; k++) /* over ranks: rank 0 gets every rank's */
		b->sum(b->ctx, b->emit[k].rgb, 3 * npix);
	if (b->sum)
		b->sum(b->ctx, b->tau, (size_t)(K + 2) * npix);
	/* front to back */
#pragma omp parallel for schedule(static)
	for (size_t p = 0; p < npix; p++) {
		double cum = 0.0, out[3] = {0, 0, 0};
		for (int k = 0; k < K + 2; k++) {
			const double t = b->tau[(size_t)k * npix + p];
			const float *e = b->emit[k].rgb + 3 * p;
			const double tr = exp(-cum) * render_dust_mix(t);
			for (int c = 0; c < 3; c++)
				out[c] += (double)e[c] * tr;
			cum += t;
		}
		for (int c = 0; c < 3; c++)
			img->rgb[3 * p + c] = (float)out[c];
	}
cleanup:
	free(recs);
	free(depth);
	return rc;
}
