/* adaptive.h - adaptive smoothing lengths (render.smoothing: adaptive), the
 * CPU twin of the GPU's (kernels/render_adaptive.cu) and its test oracle.
 *
 * h_i = distance from body i to its k-th nearest other body, in 3D, in the
 * units of the positions given (scene length units when rendering), with
 * k_eff = min(k, m - 1) where m counts the bodies with a finite position.
 * Bodies that coincide count as neighbours at distance 0 (h may be 0: such
 * a body then splats into a single pixel). When k_eff < 1 (fewer than two
 * finite bodies), and for a body whose position is not finite, h_i =
 * fallback (render.smoothing). The splat then uses h_i in place of
 * render.smoothing for body i (render/splat.c's meaning otherwise). */
#ifndef NB_RENDER_ADAPTIVE_H
#define NB_RENDER_ADAPTIVE_H

#include <stddef.h>

#include "../sim/sim.h"

/* pos: 3n doubles (xyz interleaved). Writes h[0..n-1]. Uniform grid: each
 * body gets a cell key, bodies are sorted by key (counting sort), each
 * cell's start and end are found, and each body searches shells of
 * surrounding cells until its k-th distance is inside the region searched
 * (so the result is exact, equal to a brute-force search: the squared
 * distance is formed as dx*dx + dy*dy + dz*dz in double, as a brute-force
 * search would). Parallel with OpenMP, result independent of thread count.
 * k >= 1. 0 or NB_ERUNTIME (out of memory, logged). */
int render_adaptive_h(const double *pos, size_t n, int k, double fallback, double *h);

/* Same for st's bodies in scene units (pos / u->length; u NULL: from
 * sc->units), k = sc->render.neighbours, fallback = sc->render.smoothing. */
int render_adaptive_h_state(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, double *h);

#endif
