/* framing_shared.h - the rules of camera.follow: light and camera.frame:
 * auto that the CPU (render/framing.c) and the GPU (render/cuda/framing.cu)
 * must compute alike, written once as static inline functions in double
 * that compile for both (RENDER_HD).
 *
 * A drawn body has the weight w = mass x Y, Y the Rec. 709 luminance of
 * its component's light per unit mass (render_framing_weights); w = 0 is
 * not drawn and never counts.
 *
 * Weighted quantiles by a three-level histogram. A value v of a body (a
 * coordinate, or the distance a body needs, below) over the range [lo, hi]
 * of the drawn bodies' values falls on the step
 *     s = floor((v - lo) x 2^28 / (hi - lo)), clamped to [0, 2^28 - 1]
 * (0 when hi = lo): 2^28 steps, so the answer is resolved to 3.7e-9 of
 * the range (a body flung 1000 times as far as the galaxy's size still
 * leaves steps of 4e-6 of that size). The steps are found by three
 * histograms of one pass each: the top 10 bits of s (1024 bins), then the
 * next 9 bits (512 bins) of the bodies in the chosen top bin, then the
 * last 9 of those in the chosen pair. The histograms sum quantised weights
 * q = round(w / wmax x 2^32) in 64-bit integers (wmax the largest w), so
 * their sums do not depend on the order of the additions (threads,
 * atomics): the CPU is bit-identical for any thread count, and the GPU's
 * histograms equal the CPU's wherever the two find the same s. The
 * quantile p of the light is the first step, in order, where the
 * cumulative sum of q reaches R = ceil(p Q) (Q the sum of all q; R at
 * least 1): the first bin on each level, from the rank left over.
 *
 * Light centre (follow: light): per axis, the trimmed mean of the drawn
 * light: the weighted mean of the bodies whose step lies between the
 * RENDER_FRAMING_TRIM and 1 - RENDER_FRAMING_TRIM quantiles' steps, both
 * included (the central 90% of the light on that axis).
 *
 * The distance a body needs (frame: auto). The camera looks at the target
 * T from pos = T - D fwd (fwd, right, up the view's basis). A body at p,
 * d = p - T, a = d.right, b = d.up, c = d.fwd, is inside the frame less
 * the margin when |a| / (D + c) <= tx and |b| / (D + c) <= ty, with
 * tx = (1 - margin) tan(fov/2) w/h, ty = (1 - margin) tan(fov/2): that
 * is, exactly when D >= need = max(|a| / tx, |b| / ty) - c. So the share
 * of the light inside the frame at distance D is the weighted share of
 * bodies with need <= D, and the smallest D that keeps the fraction f in
 * is the f-quantile of need: the upper edge of its step. */
#ifndef NB_RENDER_FRAMING_SHARED_H
#define NB_RENDER_FRAMING_SHARED_H

#include <math.h>
#include <stdint.h>

#include "render.h" /* struct render_frame_geom */

#ifdef __CUDACC__
#define RENDER_FR_HD __host__ __device__
#else
#define RENDER_FR_HD
#endif

#define RENDER_FRAMING_BITS 28 /* steps over the range: 2^28 */
#define RENDER_FRAMING_STEPS 268435456.0
#define RENDER_FRAMING_B1 1024 /* level 1: bits 27..18 of the step */
#define RENDER_FRAMING_B2 512  /* levels 2 and 3: bits 17..9, 8..0 */
#define RENDER_FRAMING_TRIM 0.05
#define RENDER_FRAMING_QSCALE 4294967296.0 /* 2^32: quantised weight of wmax */

/* Quantised weight of w (0 < w <= wmax). */
static inline RENDER_FR_HD uint64_t render_framing_q(double w, double wmax)
{
	return wmax > 0 ? (uint64_t)(w / wmax * RENDER_FRAMING_QSCALE + 0.5) : 0;
}

/* 2^28 / (hi - lo), or 0 when the range is one value. */
static inline RENDER_FR_HD double render_framing_inv(double lo, double hi)
{
	return hi > lo ? RENDER_FRAMING_STEPS / (hi - lo) : 0.0;
}

/* The step of v. */
static inline RENDER_FR_HD int render_framing_step(double v, double lo, double inv)
{
	double t = (v - lo) * inv;
	if (!(t > 0))
		return 0;
	if (t >= RENDER_FRAMING_STEPS)
		return (1 << RENDER_FRAMING_BITS) - 1;
	return (int)t;
}

/* Level L (1, 2, 3) of a step: its bin, and the prefix of the levels
 * above it that a body must share with the chosen bins to be counted. */
static inline RENDER_FR_HD int render_framing_bin(int s, int level)
{
	return level == 1 ? s >> 18 : (level == 2 ? (s >> 9) & 511 : s & 511);
}
static inline RENDER_FR_HD int render_framing_prefix(int s, int level)
{
	return level == 1 ? 0 : (level == 2 ? s >> 18 : s >> 9);
}

/* The rank of quantile p (0 < p <= 1) among total quantised weight Q. */
static inline RENDER_FR_HD uint64_t render_framing_rank(double p, uint64_t Q)
{
	double r = ceil(p * (double)Q);
	uint64_t R = r < 1 ? 1 : (uint64_t)r;
	return R > Q ? Q : R;
}

/* The value at the upper edge of step s. */
static inline RENDER_FR_HD double render_framing_upper(double lo, double inv, int s)
{
	if (!(inv > 0))
		return lo;
	return lo + ((double)s + 1.0) / inv;
}

/* The distance body p needs (see the top of this file); p and g->target in
 * the same units. */
static inline RENDER_FR_HD double render_framing_need(const double p[3],
						       const struct render_frame_geom *g)
{
	double d[3] = {p[0] - g->target[0], p[1] - g->target[1], p[2] - g->target[2]};
	double a = fabs(d[0] * g->right[0] + d[1] * g->right[1] + d[2] * g->right[2]) / g->tx;
	double b = fabs(d[0] * g->up[0] + d[1] * g->up[1] + d[2] * g->up[2]) / g->ty;
	double c = d[0] * g->fwd[0] + d[1] * g->fwd[1] + d[2] * g->fwd[2];
	return (a > b ? a : b) - c;
}

#endif
