/* framing_shared.h - the rules of camera.follow: light and camera.frame:
 * auto that the CPU (render/framing.c) and the GPU (kernels/framing.cu)
 * must compute alike, written once as static inline functions in double
 * that compile for both (RENDER_HD).
 *
 * A drawn body has the weight w = mass x Y, Y the Rec. 709 luminance of
 * its component's light per unit mass (render_framing_weights); w = 0 is
 * not drawn and never counts.
 *
 * Weighted quantiles by a two-level histogram. A value v of a body (a
 * coordinate, or the distance a body needs, below) over the range [lo, hi]
 * of the drawn bodies' values has t = (v - lo) x B1 / (hi - lo) (0 when
 * hi = lo), clamped to [0, B1): its level-1 bin is k = floor(t), its
 * level-2 bin j = floor((t - k) x B2): so (k, j) splits [lo, hi] into
 * B1 x B2 = 524288 steps and both levels come from the one number t. The
 * histograms sum quantised weights q = round(w / wmax x 2^32) in 64-bit
 * integers (wmax the largest w), so their sums do not depend on the order
 * of the additions (threads, atomics): the CPU is bit-identical for any
 * thread count, and the GPU's histograms equal the CPU's wherever the two
 * find the same t. The quantile p of the light is the first (k, j), in
 * order, where the cumulative sum of q reaches R = ceil(p Q) (Q the sum of
 * all q; R at least 1): first k on level 1, then j among the bodies of bin
 * k, from the rank left over.
 *
 * Light centre (follow: light): per axis, the trimmed mean of the drawn
 * light: the weighted mean of the bodies whose (k, j) lies between the
 * RENDER_FRAMING_TRIM and 1 - RENDER_FRAMING_TRIM quantiles' (k, j), both
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
 * is the f-quantile of need: the upper edge of its (k, j) step. */
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

#define RENDER_FRAMING_B1 1024 /* level-1 bins */
#define RENDER_FRAMING_B2 512  /* level-2 bins inside one level-1 bin */
#define RENDER_FRAMING_TRIM 0.05
#define RENDER_FRAMING_QSCALE 4294967296.0 /* 2^32: quantised weight of wmax */

/* Quantised weight of w (0 < w <= wmax). */
static inline RENDER_FR_HD uint64_t render_framing_q(double w, double wmax)
{
	return wmax > 0 ? (uint64_t)(w / wmax * RENDER_FRAMING_QSCALE + 0.5) : 0;
}

/* B1 / (hi - lo), or 0 when the range is one value. */
static inline RENDER_FR_HD double render_framing_inv(double lo, double hi)
{
	return hi > lo ? RENDER_FRAMING_B1 / (hi - lo) : 0.0;
}

/* Level-1 bin *k and level-2 bin *j of v. */
static inline RENDER_FR_HD void render_framing_bins(double v, double lo, double inv, int *k, int *j)
{
	double t = (v - lo) * inv;
	if (!(t > 0)) {
		*k = 0, *j = 0;
		return;
	}
	if (t >= RENDER_FRAMING_B1) {
		*k = RENDER_FRAMING_B1 - 1, *j = RENDER_FRAMING_B2 - 1;
		return;
	}
	int kk = (int)t;
	int jj = (int)((t - kk) * RENDER_FRAMING_B2);
	*k = kk;
	*j = jj < RENDER_FRAMING_B2 ? jj : RENDER_FRAMING_B2 - 1;
}

/* The rank of quantile p (0 < p <= 1) among total quantised weight Q. */
static inline RENDER_FR_HD uint64_t render_framing_rank(double p, uint64_t Q)
{
	double r = ceil(p * (double)Q);
	uint64_t R = r < 1 ? 1 : (uint64_t)r;
	return R > Q ? Q : R;
}

/* The value at the upper edge of step (k, j). */
static inline RENDER_FR_HD double render_framing_upper(double lo, double inv, int k, int j)
{
	if (!(inv > 0))
		return lo;
	return lo + ((double)k + (double)(j + 1) / RENDER_FRAMING_B2) / inv;
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

/* (k, j) at or after (k0, j0) and at or before (k1, j1). */
static inline RENDER_FR_HD int render_framing_between(int k, int j, int k0, int j0, int k1, int j1)
{
	int after = k > k0 || (k == k0 && j >= j0);
	int before = k < k1 || (k == k1 && j <= j1);
	return after && before;
}

#endif
