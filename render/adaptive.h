/* adaptive.h - adaptive smoothing lengths (render.smoothing: adaptive), the
 * CPU twin of the GPU's (render/cuda/render_adaptive.cu) and its test oracle.
 *
 * Neighbours are searched among the DRAWN bodies only. A body is drawn
 * when its position is finite and, in colour mode (render.mode:
 * components), its component's light (colour times brightness,
 * render_comp_light) is not [0, 0, 0] (a body whose
 * component has no colour entry counts as colour [1, 1, 1], as in
 * render/splat.c); in density mode every finite body is drawn. Mass does
 * not matter (a massless body of a visible colour is drawn). So a star's h
 * follows the stars seen around it, not an invisible dark halo.
 *
 * h_i = distance from drawn body i to its k-th nearest other drawn body,
 * in 3D, in the units of the positions given (scene length units when
 * rendering), with k_eff = min(k, m - 1) where m counts the drawn bodies.
 * Bodies that coincide count as neighbours at distance 0 (h may be 0: such
 * a body then splats into a single pixel). When k_eff < 1 (fewer than two
 * drawn bodies), and for a body that is not drawn, h_i = fallback
 * (render.smoothing; splat skips such bodies anyway, their weight being
 * 0). The splat then uses h_i in place of render.smoothing for body i
 * (render/splat.c's meaning otherwise). */
#ifndef NB_RENDER_ADAPTIVE_H
#define NB_RENDER_ADAPTIVE_H

#include <stddef.h>

#include "../sim/sim.h"

/* pos: 3n doubles (xyz interleaved). drawn: n flags (nonzero: drawn if the
 * position is also finite) or NULL (every finite body is drawn). Writes
 * h[0..n-1]. Box tree over the drawn bodies in Morton order (leaves of 32
 * consecutive bodies, fan-out 8, render/adaptive_tree.c: the GPU's tree),
 * one group walk per leaf after a start from the neighbouring leaves. The
 * result is exact, equal to a brute-force search (the squared distance is
 * formed as dx*dx + dy*dy + dz*dz in double, as a brute-force search
 * would; boxes are pruned only when no body in them can be nearer). Cost
 * about O(m (k + log m)), dense cores included (250k -> 1M galaxy stars:
 * 4.1x, docs/BENCHMARKS.md); bodies that all coincide cost O(k) each.
 * Parallel with OpenMP over leaves, result independent of thread
 * count. k >= 1. 0 or NB_ERUNTIME (out of memory, logged). */
int render_adaptive_h(const double *pos, const unsigned char *drawn, size_t n, int k,
		      double fallback, double *h);

/* render_adaptive_h for the query bodies [0, nq) only, from the
 * neighbours among all n (bodies [nq, n): neighbours only, e.g. a halo of
 * other ranks' bodies; their h is not written), with keff >= 1 given (over
 * ranks: min(k, M - 1) for M drawn bodies in all): h[0..nq-1] written,
 * fallback for a query body not drawn, INFINITY for a drawn one when the n
 * hold fewer than keff + 1 drawn bodies (its k-th neighbour is not among
 * them). Exact as render_adaptive_h: the same bodies give the same bits,
 * whatever their order. 0 or NB_ERUNTIME (out of memory, logged). */
int render_adaptive_h_near(const double *pos, const unsigned char *drawn, size_t n, size_t nq,
			   int keff, double fallback, double *h);

/* Boxes (lo[3], hi[3]: 6 doubles each, at most max, *nbox of them) that
 * hold every point within h[i] of each drawn body i (drawn as in
 * render_adaptive_h): the drawn bodies in Morton order cut into max runs
 * of consecutive bodies, each run's box widened by its largest h (and a
 * relative 1e-9 against rounding; an infinite h gives an infinite box).
 * With every h 0: the runs' tight boxes, the cover a rank sends the
 * others so that they know which of their bodies' balls reach it
 * (dist/halo.c). nbox 0 without drawn bodies. 0 or NB_ERUNTIME (out of
 * memory, logged). */
int render_adaptive_reach(const double *pos, const unsigned char *drawn, size_t n,
			  const double *h, int max, double *boxes, int *nbox);

/* mark[i] = 1 for each of the k nearest drawn bodies (drawn as in
 * render_adaptive_h) among pos' n to each query point q[3j..3j+2], j <
 * nq (points outside the set: nothing skipped; at a tie for the k-th any
 * of the tied bodies; all drawn bodies when fewer than k). Other marks
 * are left as they were. The squared distances are formed as the search
 * forms them. What a rank sends another for its bodies near the domains'
 * faces (dist/halo.c): the union over the ranks of each one's k nearest
 * holds a point's k nearest. 0 or NB_ERUNTIME (out of memory, logged). */
int render_adaptive_nearest(const double *pos, const unsigned char *drawn, size_t n,
			    const double *q, size_t nq, int k, unsigned char *mark);

/* h[i] = min(h[i], hmax) for each drawn body i (drawn as in
 * render_adaptive_h); the cap's last step, its median found elsewhere
 * (render_adaptive_cap; over ranks, dist/halo.c). */
void render_adaptive_clamp(const double *pos, const unsigned char *drawn, size_t n, double hmax,
			   double *h);

/* drawn[i] = 1 if st's body i is drawn by its colour (the rule at the top,
 * finiteness aside): sc->render.mode density, or its component's colour
 * (st->comp NULL: component 0; no st->comps or c >= st->ncomp: [1, 1, 1])
 * is not [0, 0, 0]; else 0. Writes st->n flags. */
void render_adaptive_drawn(const struct scene *sc, const struct sim_state *st,
			   unsigned char *drawn);

/* render.h_cap: with cap > 0 and at least two bodies drawn (drawn as in
 * render_adaptive_h: flag set, or drawn NULL, and a finite position), each
 * drawn body's h becomes min(h, cap * med), med = the lower median of the
 * drawn bodies' h (the ((m + 1) / 2)-th smallest of the m values, integer
 * division; an exact element, found by sorting a copy). Bodies not drawn
 * keep their h (the fallback). cap <= 0 or m < 2: h unchanged. Cost: O(m
 * log m). 0 or NB_ERUNTIME (out of memory, logged). */
int render_adaptive_cap(const double *pos, const unsigned char *drawn, size_t n, double cap,
			double *h);

/* Same for st's bodies in scene units (pos / u->length; u NULL: from
 * sc->units), k = sc->render.neighbours, fallback = sc->render.smoothing,
 * drawn from sc->render.mode and st->comp / st->comps as said at the top;
 * then capped by render_adaptive_cap with cap = sc->render.h_cap. */
int render_adaptive_h_state(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, double *h);

/* 1 when a frame of sc needs render_adaptive_h_state's lengths (every
 * render.adaptive_every frames): render.smoothing: adaptive outside the
 * stars style, or the stars style's render.diffuse layer with
 * render.diffuse_smoothing: adaptive. The CPU renderer allocates them,
 * the time estimate charges them (app/estimate.c). */
int render_needs_h(const struct scene *sc);

#endif
