/* adaptive.c - what adaptive smoothing needs around the neighbour search
 * (render/adaptive.h): which bodies are drawn, the cap render.h_cap and the
 * state wrapper in scene units. The search itself, render_adaptive_h, is
 * render/adaptive_tree.c (a box tree over Morton-ordered bodies, the CPU
 * twin of render/cuda/render_adaptive.cu). */
#include <math.h>
#include <stdlib.h>

#include "adaptive.h"
#include "render.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void render_adaptive_clamp(const double *pos, const unsigned char *drawn, size_t n, double hmax,
			   double *h)
{
	for (size_t i = 0; i < n; i++)
		if ((!drawn || drawn[i]) && isfinite(pos[3 * i]) && isfinite(pos[3 * i + 1]) &&
		    isfinite(pos[3 * i + 2]) && h[i] > hmax)
			h[i] = hmax;
}

int render_adaptive_cap(const double *pos, const unsigned char *drawn, size_t n, double cap,
			double *h)
{
	if (!(cap > 0) || n < 2)
		return 0;
	double *v = malloc(n * sizeof *v);
	if (!v) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		return NB_ERUNTIME;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if ((!drawn || drawn[i]) && isfinite(pos[3 * i]) && isfinite(pos[3 * i + 1]) &&
		    isfinite(pos[3 * i + 2]))
			v[m++] = h[i];
	if (m >= 2) {
		qsort(v, m, sizeof *v, cmp_double);
		render_adaptive_clamp(pos, drawn, n, cap * v[(m - 1) / 2], h);
	}
	free(v);
	return 0;
}

void render_adaptive_drawn(const struct scene *sc, const struct sim_state *st,
			   unsigned char *drawn)
{
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	for (size_t i = 0; i < st->n; i++) {
		int c = st->comp ? st->comp[i] : 0;
		int dark = 0;
		if (!density && st->comps && c < st->ncomp) {
			float col[3];
			render_body_light(sc, &st->comps[c], col);
			dark = col[0] == 0.0f && col[1] == 0.0f && col[2] == 0.0f;
		}
		drawn[i] = (unsigned char)!dark;
	}
}

int render_adaptive_h_state(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, double *h)
{
	struct sim_units uu;
	if (!u) {
		scene_units(sc, &uu);
		u = &uu;
	}
	double *p = malloc((st->n ? 3 * st->n : 1) * sizeof *p);
	unsigned char *drawn = malloc(st->n ? st->n : 1);
	if (!p || !drawn) {
		log_error("adaptive smoothing: out of memory for %zu bodies", st->n);
		free(p);
		free(drawn);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < 3 * st->n; i++)
		p[i] = st->pos[i] / u->length;
	render_adaptive_drawn(sc, st, drawn);
	int rc = render_adaptive_h(p, drawn, st->n, sc->render.neighbours, sc->render.smoothing, h);
	if (rc == 0)
		rc = render_adaptive_cap(p, drawn, st->n, sc->render.h_cap, h);
	free(p);
	free(drawn);
	return rc;
}

int render_needs_h(const struct scene *sc)
{
	const int stars = sc->render.style == SCENE_STYLE_STARS;
	return (sc->render.smoothing_adaptive && !stars) ||
	       (stars && sc->render.diffuse > 0 &&
		sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE);
}
