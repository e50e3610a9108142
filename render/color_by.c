/* color_by.c - render.color_by: colour a body by its line-of-sight
 * velocity or its speed instead of its component (render.h; the per-body
 * rule is render/color_by_shared.h, which the GPU shares).
 *
 * The range (render.color_range: auto) is fixed once from the initial
 * state and frame 0's camera rather than recomputed per frame: a
 * percentile that moves with every frame would make the colours of a movie
 * breathe, and a fixed one lets the CPU and the GPU take it from the same
 * host data, with no percentile to compute on the device. */
#include <math.h>
#include <stdlib.h>

#include "color_by_shared.h"
#include "render.h"

/* los_velocity's map (display RGB): deep blue, light blue, white, light
 * red, deep red at t = 0, 1/4, 1/2, 3/4, 1. Our own choice in the spirit of
 * ColorBrewer's RdBu (reversed), with the centre exactly white so that a
 * body at rest along the line of sight is neutral. */
static const float diverging[5][3] = {
	{0.05f, 0.25f, 0.80f}, {0.45f, 0.68f, 1.00f}, {1.00f, 1.00f, 1.00f},
	{1.00f, 0.55f, 0.42f}, {0.75f, 0.06f, 0.10f},
};

void render_diverging(double t, float rgb[3])
{
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * 4;
	int k = (int)floor(x);
	if (k > 3)
		k = 3;
	double f = x - k;
	for (int c = 0; c < 3; c++)
		rgb[c] = (float)((1 - f) * diverging[k][c] + f * diverging[k + 1][c]);
}

void render_color_by_body(const struct render_color_by *cb, const struct sim_state *st,
			  const struct sim_units *u, size_t b, const double cam_pos[3],
			  double col[3])
{
	if (cb->by == SCENE_COLOR_BY_COMPONENT) {
		col[0] = col[1] = col[2] = 1.0;
		return;
	}
	double p[3], v[3];
	for (int d = 0; d < 3; d++) {
		p[d] = st->pos[3 * b + d] / u->length;
		v[d] = st->vel[3 * b + d] / u->velocity;
	}
	double q = render_color_q(cb->by, p, v, cam_pos);
	render_color_lookup(cb->lut, cb->lo, cb->hi, q, col);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile p (0..100) of the sorted q[0..m-1], m >= 1. */
static double percentile(const double *q, size_t m, double p)
{
	size_t k = (size_t)floor(p / 100.0 * (double)(m - 1) + 0.5);
	return q[k < m ? k : m - 1];
}

/* render.color_range: auto (render.h). */
static int auto_range(const struct scene *sc, const struct sim_state *st,
		      const struct sim_units *u, struct render_color_by *cb)
{
	struct render_camera cam;
	int rc = render_camera_at(sc, 0, st, &cam);
	if (rc)
		return rc;
	double *q = malloc((st->n ? st->n : 1) * sizeof *q);
	if (!q) {
		log_error("render.color_range: out of memory for %zu bodies", st->n);
		return NB_ERUNTIME;
	}
	size_t m = 0;
	for (size_t b = 0; b < st->n; b++) {
		int c = st->comp ? st->comp[b] : 0;
		float light[3] = {1.0f, 1.0f, 1.0f};
		if (st->comps && c < st->ncomp)
			render_body_light(sc, &st->comps[c], light);
		if (!(light[0] > 0))
			continue; /* not drawn */
		double p[3], v[3];
		for (int d = 0; d < 3; d++) {
			p[d] = st->pos[3 * b + d] / u->length;
			v[d] = st->vel[3 * b + d] / u->velocity;
		}
		double x = render_color_q(cb->by, p, v, cam.pos);
		if (!isfinite(x))
			continue;
		q[m++] = cb->by == SCENE_COLOR_BY_LOS_VELOCITY ? fabs(x) : x;
	}
	double lo = 0, hi = 0;
	if (m > 0) {
		qsort(q, m, sizeof *q, cmp_double);
		if (cb->by == SCENE_COLOR_BY_LOS_VELOCITY) {
			hi = percentile(q, m, 99.0);
			lo = -hi;
		} else {
			lo = percentile(q, m, 1.0);
			hi = percentile(q, m, 99.0);
		}
	}
	free(q);
	if (!(hi > lo))
		hi = lo + (fabs(lo) > 1 ? fabs(lo) : 1);
	cb->lo = lo;
	cb->hi = hi;
	return 0;
}

int render_color_by_init(const struct scene *sc, const struct sim_state *st,
			 const struct sim_units *u, struct render_color_by *cb)
{
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	cb->by = sc->render.color_by;
	cb->lo = sc->render.color_range[0];
	cb->hi = sc->render.color_range[1];
	if (cb->by == SCENE_COLOR_BY_COMPONENT)
		return 0;
	const double gamma = sc->render.gamma > 0 ? sc->render.gamma : 1.0;
	for (int k = 0; k < RENDER_COLOR_LUT_N; k++) {
		double t = (double)k / (RENDER_COLOR_LUT_N - 1);
		float rgb[3];
		if (cb->by == SCENE_COLOR_BY_LOS_VELOCITY)
			render_diverging(t, rgb);
		else
			render_colormap_scene(sc, t, rgb);
		for (int c = 0; c < 3; c++)
			cb->lut[3 * k + c] = (float)pow(rgb[c], gamma);
	}
	if (sc->render.color_range_auto)
		return auto_range(sc, st, u, cb);
	return 0;
}

int render_color_by_resolve(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, const struct render_color_by *cb,
			    const struct render_color_by **use, struct render_color_by **own)
{
	*own = NULL;
	*use = cb;
	if (cb || sc->render.color_by == SCENE_COLOR_BY_COMPONENT ||
	    sc->render.mode == SCENE_COLOR_DENSITY)
		return 0;
	struct render_color_by *m = malloc(sizeof *m);
	if (!m) {
		log_error("render.color_by: out of memory");
		return NB_ERUNTIME;
	}
	int rc = render_color_by_init(sc, st, u, m);
	if (rc) {
		free(m);
		return rc;
	}
	*use = *own = m;
	return 0;
}
