/* framing.c - the CPU twin of the framing statistics (render.h, "framing";
 * the rules in render/framing_shared.h; GPU: render/cuda/framing.cu): the light
 * centre of camera.follow: light, the distance of camera.frame: auto and
 * the share of the light inside a frame; and render_camera_at, a frame's
 * camera with follow and frame auto measured on the bodies as they are
 * (keys and orbit from render_camera_at_com, render/camera.c).
 *
 * Every pass runs over FR_CHUNKS fixed chunks of the bodies (OpenMP over
 * chunks), each chunk into its own partial result; the partials are then
 * combined in chunk order. Histograms hold integers and the range is a
 * min/max, so those are exact whatever the order; the double sums are
 * combined in a fixed order. So the results are bit-identical for any
 * number of threads. Cost: five or six passes over the bodies per call
 * (range, three histogram levels, sums), ~10 ns a body each on one core. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framing_shared.h"
#include "render.h"

#define FR_CHUNKS 64
#define FR_MAXCH 3 /* values per body: x, y, z; or the need */
#define FR_MAXQ 2  /* quantiles per value */

struct fr_src {
	const struct sim_state *st;
	const float *wc;
	const struct render_frame_geom *g; /* NULL: the values are the position */
	int nch;
	const struct render_reduce *red; /* NULL: st holds every body */
};

/* Weight of body b (0: not drawn). */
static double fr_weight(const struct fr_src *s, size_t b)
{
	const struct sim_state *st = s->st;
	int c = st->comp ? st->comp[b] : 0;
	if (c >= st->ncomp)
		return 0;
	double w = st->mass[b] * (double)s->wc[c];
	return w > 0 && isfinite(w) ? w : 0;
}

/* Values of body b; 0 when one is not finite (the body does not count). */
static int fr_values(const struct fr_src *s, size_t b, double v[FR_MAXCH])
{
	const double *p = s->st->pos + 3 * b;
	if (s->g) {
		v[0] = render_framing_need(p, s->g);
		return isfinite(v[0]);
	}
	v[0] = p[0], v[1] = p[1], v[2] = p[2];
	return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static void chunk_range(size_t n, int c, size_t *a, size_t *b)
{
	*a = n * (size_t)c / FR_CHUNKS;
	*b = n * (size_t)(c + 1) / FR_CHUNKS;
}

/* The quantiles p[0 .. nq-1] of each value, as steps. */
struct fr_quant {
	int nq;
	double p[FR_MAXQ];
	double lo[FR_MAXCH], inv[FR_MAXCH], wmax, light;
	size_t count;
	int step[FR_MAXCH][FR_MAXQ];
};

/* First index whose cumulative sum of h reaches *rank; *rank becomes the
 * rank left inside that index. */
static int fr_select(const uint64_t *h, int nb, uint64_t *rank)
{
	uint64_t cum = 0;
	for (int i = 0; i < nb; i++) {
		if (cum + h[i] >= *rank) {
			*rank -= cum;
			return i;
		}
		cum += h[i];
	}
	*rank = 0;
	return nb - 1; /* not reached when rank <= the total */
}

/* Pass 1: the range of each value, the largest weight, the light. */
static void fr_range(const struct fr_src *s, struct fr_quant *q)
{
	const size_t n = s->st->n;
	const int nch = s->nch;
	double lo[FR_CHUNKS][FR_MAXCH], hi[FR_CHUNKS][FR_MAXCH], wmax[FR_CHUNKS], light[FR_CHUNKS];
	size_t count[FR_CHUNKS];
#pragma omp parallel for schedule(static)
	for (int c = 0; c < FR_CHUNKS; c++) {
		size_t a, b;
		chunk_range(n, c, &a, &b);
		wmax[c] = 0, light[c] = 0, count[c] = 0;
		for (int d = 0; d < nch; d++)
			lo[c][d] = INFINITY, hi[c][d] = -INFINITY;
		for (size_t i = a; i < b; i++) {
			double w = fr_weight(s, i), v[FR_MAXCH];
			if (!(w > 0) || !fr_values(s, i, v))
				continue;
			count[c]++;
			light[c] += w;
			wmax[c] = w > wmax[c] ? w : wmax[c];
			for (int d = 0; d < nch; d++) {
				lo[c][d] = v[d] < lo[c][d] ? v[d] : lo[c][d];
				hi[c][d] = v[d] > hi[c][d] ? v[d] : hi[c][d];
			}
		}
	}
	q->wmax = 0, q->light = 0, q->count = 0;
	double glo[FR_MAXCH], ghi[FR_MAXCH];
	for (int d = 0; d < nch; d++)
		glo[d] = INFINITY, ghi[d] = -INFINITY;
	for (int c = 0; c < FR_CHUNKS; c++) {
		q->count += count[c];
		q->light += light[c];
		q->wmax = wmax[c] > q->wmax ? wmax[c] : q->wmax;
		for (int d = 0; d < nch; d++) {
			glo[d] = lo[c][d] < glo[d] ? lo[c][d] : glo[d];
			ghi[d] = hi[c][d] > ghi[d] ? hi[c][d] : ghi[d];
		}
	}
	if (s->red) { /* every rank's bodies */
		double mx[1 + 2 * FR_MAXCH], sm[2] = {q->light, (double)q->count};
		mx[0] = q->wmax;
		for (int d = 0; d < nch; d++)
			mx[1 + d] = -glo[d], mx[1 + nch + d] = ghi[d];
		s->red->max_f64(s->red->ctx, mx, 1 + 2 * nch);
		s->red->sum_f64(s->red->ctx, sm, 2);
		q->wmax = mx[0], q->light = sm[0], q->count = (size_t)sm[1];
		for (int d = 0; d < nch; d++)
			glo[d] = -mx[1 + d], ghi[d] = mx[1 + nch + d];
	}
	for (int d = 0; d < nch && q->count > 0; d++) {
		q->lo[d] = glo[d];
		q->inv[d] = render_framing_inv(glo[d], ghi[d]);
	}
}

static int fr_quantiles(const struct fr_src *s, struct fr_quant *q)
{
	const size_t n = s->st->n;
	const int nch = s->nch, nq = q->nq;
	fr_range(s, q);
	if (q->count == 0)
		return 0;
	/* passes 2 to 4: level 1 per value; levels 2 and 3 per value and
	 * quantile, over the bodies that share the bins chosen above */
	const int per = nch * RENDER_FRAMING_B1; /* >= nch * nq * B2 */
	uint64_t *part = calloc((size_t)FR_CHUNKS * per, sizeof *part);
	uint64_t *tot = calloc((size_t)per, sizeof *tot);
	if (!part || !tot) {
		free(part);
		free(tot);
		log_error("out of memory for the framing histograms");
		return NB_ERUNTIME;
	}
	uint64_t rank[FR_MAXCH][FR_MAXQ];
	int prefix[FR_MAXCH][FR_MAXQ]; /* the steps' bits chosen so far */
	for (int level = 1; level <= 3; level++) {
		const int nb = level == 1 ? RENDER_FRAMING_B1 : RENDER_FRAMING_B2;
		const int nh = level == 1 ? nch : nch * nq; /* histograms */
		memset(part, 0, (size_t)FR_CHUNKS * per * sizeof *part);
#pragma omp parallel for schedule(static)
		for (int c = 0; c < FR_CHUNKS; c++) {
			uint64_t *h = part + (size_t)c * per;
			size_t a, b;
			chunk_range(n, c, &a, &b);
			for (size_t i = a; i < b; i++) {
				double w = fr_weight(s, i), v[FR_MAXCH];
				if (!(w > 0) || !fr_values(s, i, v))
					continue;
				uint64_t qw = render_framing_q(w, q->wmax);
				for (int d = 0; d < nch; d++) {
					int sp = render_framing_step(v[d], q->lo[d], q->inv[d]);
					int bin = render_framing_bin(sp, level);
					if (level == 1) {
						h[d * nb + bin] += qw;
						continue;
					}
					for (int e = 0; e < nq; e++)
						if (render_framing_prefix(sp, level) == prefix[d][e])
							h[(d * nq + e) * nb + bin] += qw;
				}
			}
		}
		memset(tot, 0, (size_t)per * sizeof *tot);
		for (int c = 0; c < FR_CHUNKS; c++)
			for (int x = 0; x < nh * nb; x++)
				tot[x] += part[(size_t)c * per + x];
		if (s->red) /* integers: every rank's sum exactly */
			s->red->sum_u64(s->red->ctx, tot, nh * nb);
		for (int d = 0; d < nch; d++)
			for (int e = 0; e < nq; e++) {
				const uint64_t *h = tot + (level == 1 ? d : d * nq + e) * nb;
				if (level == 1) {
					uint64_t Q = 0;
					for (int x = 0; x < nb; x++)
						Q += h[x];
					rank[d][e] = render_framing_rank(q->p[e], Q);
					prefix[d][e] = 0;
				}
				prefix[d][e] = (prefix[d][e] << (level == 1 ? 10 : 9)) | fr_select(h, nb, &rank[d][e]);
			}
	}
	for (int d = 0; d < nch; d++)
		for (int e = 0; e < nq; e++)
			q->step[d][e] = prefix[d][e];
	free(part);
	free(tot);
	return 0;
}

void render_frame_geom_make(const struct render_camera *cam, int w, int h, double margin,
			    double length, struct render_frame_geom *g)
{
	struct render_view v;
	render_view_make(cam, w, h, &v);
	for (int d = 0; d < 3; d++) {
		g->target[d] = cam->target[d] * length;
		g->right[d] = v.right[d];
		g->up[d] = v.upv[d];
		g->fwd[d] = v.fwd[d];
	}
	double t = tan(0.5 * cam->fov * M_PI / 180.0) * (1.0 - margin);
	g->ty = t;
	g->tx = t * (double)w / (double)h;
}

void render_framing_weights(const struct scene *sc, const struct sim_state *st, float *w_by_comp)
{
	for (int c = 0; c < st->ncomp; c++) {
		const struct sim_component *cp = &st->comps[c];
		float l[3] = {1, 1, 1};
		if (sc->render.mode != SCENE_COLOR_DENSITY)
			render_body_light(sc, cp, l);
		double y = 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
		w_by_comp[c] = cp->kappa > 0 || !(y > 0) ? 0.0f : (float)y;
	}
}

int render_light_centre(const struct sim_state *st, const float *w_by_comp,
			struct render_light_centre *out)
{
	return render_light_centre_over(st, w_by_comp, NULL, out);
}

int render_light_centre_over(const struct sim_state *st, const float *w_by_comp,
			     const struct render_reduce *red, struct render_light_centre *out)
{
	struct fr_src s = {.st = st, .wc = w_by_comp, .g = NULL, .nch = 3, .red = red};
	struct fr_quant q = {.nq = 2, .p = {RENDER_FRAMING_TRIM, 1.0 - RENDER_FRAMING_TRIM}};
	memset(out, 0, sizeof *out);
	int rc = fr_quantiles(&s, &q);
	if (rc || q.count == 0)
		return rc;
	out->light = q.light;
	out->count = q.count;
	/* pass 4: the trimmed sums */
	double sw[FR_CHUNKS][3], swx[FR_CHUNKS][3];
	const size_t n = st->n;
#pragma omp parallel for schedule(static)
	for (int c = 0; c < FR_CHUNKS; c++) {
		size_t a, b;
		chunk_range(n, c, &a, &b);
		for (int d = 0; d < 3; d++)
			sw[c][d] = 0, swx[c][d] = 0;
		for (size_t i = a; i < b; i++) {
			double w = fr_weight(&s, i), v[FR_MAXCH];
			if (!(w > 0) || !fr_values(&s, i, v))
				continue;
			for (int d = 0; d < 3; d++) {
				int sp = render_framing_step(v[d], q.lo[d], q.inv[d]);
				if (sp >= q.step[d][0] && sp <= q.step[d][1]) {
					sw[c][d] += w;
					swx[c][d] += w * v[d];
				}
			}
		}
	}
	double ab[6] = {0};
	for (int d = 0; d < 3; d++)
		for (int c = 0; c < FR_CHUNKS; c++)
			ab[d] += sw[c][d], ab[3 + d] += swx[c][d];
	if (red)
		red->sum_f64(red->ctx, ab, 6);
	for (int d = 0; d < 3; d++)
		out->c[d] = ab[d] > 0 ? ab[3 + d] / ab[d] : q.lo[d];
	return 0;
}

int render_frame_need(const struct sim_state *st, const float *w_by_comp,
		      const struct render_frame_geom *g, double fraction, double *dist)
{
	return render_frame_need_over(st, w_by_comp, g, fraction, NULL, dist);
}

int render_frame_need_over(const struct sim_state *st, const float *w_by_comp,
			   const struct render_frame_geom *g, double fraction,
			   const struct render_reduce *red, double *dist)
{
	struct fr_src s = {.st = st, .wc = w_by_comp, .g = g, .nch = 1, .red = red};
	struct fr_quant q = {.nq = 1, .p = {fraction}};
	*dist = -1;
	int rc = fr_quantiles(&s, &q);
	if (rc || q.count == 0)
		return rc;
	*dist = render_framing_upper(q.lo[0], q.inv[0], q.step[0][0]);
	return 0;
}

double render_frame_inside(const struct sim_state *st, const float *w_by_comp,
			   const struct render_frame_geom *g, double dist)
{
	return render_frame_inside_over(st, w_by_comp, g, dist, NULL);
}

double render_frame_inside_over(const struct sim_state *st, const float *w_by_comp,
				const struct render_frame_geom *g, double dist,
				const struct render_reduce *red)
{
	struct fr_src s = {.st = st, .wc = w_by_comp, .g = g, .nch = 1, .red = red};
	double in[FR_CHUNKS], all[FR_CHUNKS];
	const size_t n = st->n;
#pragma omp parallel for schedule(static)
	for (int c = 0; c < FR_CHUNKS; c++) {
		size_t a, b;
		chunk_range(n, c, &a, &b);
		in[c] = 0, all[c] = 0;
		for (size_t i = a; i < b; i++) {
			double w = fr_weight(&s, i), v[FR_MAXCH];
			if (!(w > 0) || !fr_values(&s, i, v))
				continue;
			all[c] += w;
			if (v[0] <= dist)
				in[c] += w;
		}
	}
	double ab[2] = {0, 0};
	for (int c = 0; c < FR_CHUNKS; c++)
		ab[0] += in[c], ab[1] += all[c];
	if (red)
		red->sum_f64(red->ctx, ab, 2);
	return ab[1] > 0 ? ab[0] / ab[1] : 1.0;
}

/* st and its per-component weights for the two below. */
static int framing_prep(const struct scene *sc, const struct sim_state *st, float **wc,
			struct sim_units *u)
{
	*wc = NULL;
	if (!st) {
		log_error("camera: follow light and frame auto need the simulation state (internal: st "
			  "is NULL)");
		return NB_EINPUT;
	}
	if (!(*wc = malloc((st->ncomp > 0 ? st->ncomp : 1) * sizeof **wc))) {
		log_error("out of memory for the framing weights");
		return NB_ERUNTIME;
	}
	render_framing_weights(sc, st, *wc);
	scene_units(sc, u);
	return 0;
}

int render_framing_light_com(const struct scene *sc, const struct sim_state *st, double com[3])
{
	float *wc;
	struct sim_units u;
	struct render_light_centre lc;
	com[0] = com[1] = com[2] = 0;
	int rc = framing_prep(sc, st, &wc, &u);
	if (rc == 0)
		rc = render_light_centre(st, wc, &lc);
	if (rc == 0 && lc.count > 0)
		for (int d = 0; d < 3; d++)
			com[d] = lc.c[d] / u.length;
	free(wc);
	return rc;
}

/* ---- frame auto's rule, read by render_framing_auto (below, unsmoothed)
 * and by a run's framing (app/framing.c, which smooths the scale) ---- */

void render_framing_geom(const struct scene *sc, const struct render_camera *cam, double length,
			 struct render_frame_geom *g)
{
	int w, h; /* an eye's picture in stereo */
	render_eye_size(sc, &w, &h);
	render_frame_geom_make(cam, w, h, sc->camera.frame_margin, length, g);
}

double render_framing_dist(const struct render_camera *cam)
{
	double d[3] = {cam->pos[0] - cam->target[0], cam->pos[1] - cam->target[1],
		       cam->pos[2] - cam->target[2]};
	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

double render_framing_range(const struct scene *sc, double need, double d0, double *scale)
{
	const double s = need / d0, lo = sc->camera.frame_range[0], hi = sc->camera.frame_range[1];
	*scale = s < lo ? lo : (s > hi ? hi : s);
	const double dlo = lo * d0, dhi = hi * d0;
	return need < dlo ? dlo : (need > dhi ? dhi : need);
}

void render_framing_place(struct render_camera *cam, const struct render_frame_geom *g,
			  double dist)
{
	for (int k = 0; k < 3; k++)
		cam->pos[k] = cam->target[k] - dist * g->fwd[k];
}

int render_framing_auto(const struct scene *sc, const struct sim_state *st,
			struct render_camera *cam)
{
	float *wc;
	struct sim_units u;
	struct render_frame_geom g;
	double need = -1, scale;
	int rc = framing_prep(sc, st, &wc, &u);
	if (rc == 0) {
		render_framing_geom(sc, cam, u.length, &g);
		rc = render_frame_need(st, wc, &g, sc->camera.frame_fraction, &need);
	}
	free(wc);
	if (rc || need < 0)
		return rc;
	need /= u.length;
	render_framing_place(cam, &g, render_framing_range(sc, need, render_framing_dist(cam), &scale));
	return 0;
}

/* Mass-weighted centre of the followed bodies, scene units. */
static int follow_com(const struct scene *sc, const struct sim_state *st, double com[3])
{
	const char *f = sc->camera.follow;
	if (!st) {
		log_error("camera.follow: '%s' needs the simulation state (internal: st is NULL)", f);
		return NB_ERUNTIME;
	}
	int all = strcmp(f, "all") == 0;
	int any = all;
	for (int c = 0; c < st->ncomp && !any; c++)
		any = sim_component_follows(f, st->comps[c].name);
	if (!any) {
		char list[1024] = "";
		size_t len = 0;
		for (int c = 0; c < st->ncomp && len < sizeof list - 1; c++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
						c ? ", " : "", st->comps[c].name);
		log_error("camera.follow: no component named '%s' (components: %s; or 'all')", f,
			  list);
		return NB_EINPUT;
	}
	unsigned char *sel = NULL;
	if (!all) {
		if (!(sel = malloc(st->n ? st->n : 1))) {
			log_error("out of memory for the camera follow selection of %zu bodies", st->n);
			return NB_ERUNTIME;
		}
		for (size_t i = 0; i < st->n; i++)
			sel[i] = st->comp[i] < st->ncomp &&
				 sim_component_follows(f, st->comps[st->comp[i]].name);
	}
	double x[3];
	sim_state_com(st, sel, x, NULL, NULL);
	free(sel);
	struct sim_units u;
	scene_units(sc, &u);
	for (int d = 0; d < 3; d++)
		com[d] = x[d] / u.length;
	return 0;
}

int render_camera_at(const struct scene *sc, int frame, const struct sim_state *st,
		     struct render_camera *cam)
{
	double com[3] = {0, 0, 0};
	if (sc->camera.follow[0]) {
		int rc = strcmp(sc->camera.follow, "light") == 0 ? render_framing_light_com(sc, st, com)
								 : follow_com(sc, st, com);
		if (rc)
			return rc;
	}
	render_camera_at_com(sc, frame, com, cam);
	return sc->camera.frame == SCENE_FRAME_AUTO ? render_framing_auto(sc, st, cam) : 0;
}
