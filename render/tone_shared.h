/* tone_shared.h - the formulas of the filmic tone map and of the auto
 * exposure that the CPU (render/tonemap.c, render/autoexp.c) and the GPU
 * (render/cuda/render_tone.cu) must compute alike. They are written once here,
 * as static inline functions in double that compile for both (RENDER_HD),
 * so the two renderers differ only by the rounding of the math library.
 *
 * Filmic curve (render.tonemap: filmic), on the luminance Y (Rec. 709
 * weights) after exposure, with W = render.white:
 *
 *     Y' = u / (1 + u),   u = Y (1 + Y / W^2)
 *
 * u is the numerator of Reinhard's extended operator (Reinhard, Stark,
 * Shirley, Ferwerda 2002, "Photographic Tone Reproduction for Digital
 * Images", eq. 4: L (1 + L / Lw^2) / (1 + L)); we feed it to the simple
 * operator of their eq. 3 (x / (1 + x)) instead of dividing by (1 + Y).
 * Eq. 4 reaches 1 at L = Lw and exceeds it beyond, so it must be clamped:
 * a corner in the curve at Lw and flat white above it, i.e. the burnt cores
 * we want to get rid of. Ours keeps what is good in both: slope 1 at 0
 * (faint light is unchanged), strictly increasing, infinitely smooth, and
 * below 1 for every finite Y (1 - Y' = 1 / (1 + u)); the Y^2 / W^2 term
 * makes the shoulder roll to white sooner than plain Reinhard around Y ~ W
 * (Y' = (W + 1) / (W + 2) at Y = W, 0.9 for W = 8); W -> infinity is plain
 * Reinhard. A Hable/ACES-style fitted rational was not chosen because those
 * also cross 1 at a finite input and need the same clamp.
 *
 * Colour: the RGB is scaled by Y' / Y, so r:g:b is kept exactly; then,
 * only where Y' passes the knee RENDER_FILMIC_KNEE, it is blended toward
 * the grey (Y', Y', Y') with weight smoothstep((Y' - knee) / (1 - knee))
 * (0 below the knee, 1 at Y' = 1); and where a channel would still exceed
 * 1, it is blended toward the same grey just enough that the largest
 * channel is 1. Both blends keep the luminance Y' and the hue (a blend with
 * grey scales r - g, g - b, b - r alike), only the saturation falls. Last,
 * clamp to [0, 1] (rounding only).
 *
 * Auto exposure (render.exposure: auto): a RENDER_AUTO_BINS-bin histogram of
 * log2(Y / a) over the lit pixels (Y > 0), where a = the frame's mean pixel
 * value over all pixels and channels (render_tonemap_reference /
 * RENDER_REF_SCALE), bins of equal width over [RENDER_AUTO_LO,
 * RENDER_AUTO_HI) stops (out-of-range values go to the end bins). Bins
 * relative to a make the histogram of a frame whose light is scaled by s
 * the same as before, its percentile exactly s times larger. The
 * percentile p of the lit pixels: rank r = p / 100 * N (N lit pixels),
 * the first bin whose cumulative count reaches r, interpolated linearly in
 * log within that bin. The exposure's target gain is T / level, where T is
 * the linear level that the tone curve maps to RENDER_AUTO_TARGET (0.8);
 * the gain is an exponential moving average of log gain over frames,
 * weight alpha = 1 - exp(-1 / tau) for tau = render.auto_smoothing frames
 * (tau 0: alpha 1), the first lit frame taken as it is. */
#ifndef NB_RENDER_TONE_SHARED_H
#define NB_RENDER_TONE_SHARED_H

#include <math.h>
#include <stdint.h>

#include "render.h" /* struct render_auto_state */

#ifdef __CUDACC__
#define RENDER_HD __host__ __device__
#else
#define RENDER_HD
#endif

#define RENDER_FILMIC_KNEE 0.8
#define RENDER_AUTO_BINS 256
#define RENDER_AUTO_LO (-24.0) /* stops below the mean: lower edge of bin 0 */
#define RENDER_AUTO_HI 24.0    /* stops above the mean: upper edge of the last bin */
#define RENDER_AUTO_TARGET 0.8 /* the percentile goes here after the curve */

/* Rec. 709 luminance, in this order of operations on both sides (no fused
 * multiply-add on the GPU, so both bin a pixel alike). */
static inline RENDER_HD double render_lum709(double r, double g, double b)
{
#ifdef __CUDA_ARCH__
	return __dadd_rn(__dadd_rn(__dmul_rn(0.2126, r), __dmul_rn(0.7152, g)), __dmul_rn(0.0722, b));
#else
	return 0.2126 * r + 0.7152 * g + 0.0722 * b;
#endif
}

/* Y' of the filmic curve (above); 0 for y <= 0 or NaN. */
static inline RENDER_HD double render_filmic_curve(double y, double white)
{
	if (!(y > 0))
		return 0.0;
	double u = y * (1.0 + y / (white * white));
	return u < 1e15 ? u / (1.0 + u) : 1.0 - 1.0 / u; /* u = inf: 1 */
}

/* The y >= 0 with render_filmic_curve(y, white) = t, for t in [0, 1). */
static inline RENDER_HD double render_filmic_inverse(double t, double white)
{
	double u = t / (1.0 - t);
	return 2.0 * u / (1.0 + sqrt(1.0 + 4.0 * u / (white * white)));
}

/* The filmic colour of linear RGB c (after exposure) into out, each in
 * [0, 1] (above). */
static inline RENDER_HD void render_filmic_rgb(const double c[3], double white, double out[3])
{
	double y = render_lum709(c[0], c[1], c[2]);
	if (!(y > 0)) {
		out[0] = out[1] = out[2] = 0.0;
		return;
	}
	double yt = render_filmic_curve(y, white), s = yt / y;
	double x = (yt - RENDER_FILMIC_KNEE) / (1.0 - RENDER_FILMIC_KNEE);
	double keep = x > 0 ? 1.0 - x * x * (3.0 - 2.0 * x) : 1.0; /* 1 - smoothstep */
	double m = 0.0;
	for (int k = 0; k < 3; k++) {
		out[k] = yt + keep * (s * c[k] - yt);
		m = out[k] > m ? out[k] : m;
	}
	double g = m > 1.0 ? (1.0 - yt) / (m - yt) : 1.0;
	for (int k = 0; k < 3; k++) {
		double v = yt + g * (out[k] - yt);
		out[k] = v > 0 ? (v < 1 ? v : 1.0) : 0.0;
	}
}

/* Histogram bin of a lit pixel of luminance y > 0 for mean value a > 0. */
static inline RENDER_HD int render_auto_bin(double y, double a)
{
	double t = (log2(y / a) - RENDER_AUTO_LO) * (RENDER_AUTO_BINS / (RENDER_AUTO_HI - RENDER_AUTO_LO));
	if (!(t > 0))
		return 0;
	return t < RENDER_AUTO_BINS - 1 ? (int)t : RENDER_AUTO_BINS - 1;
}

/* Luminance at percentile p (0, 100] of the histogram's lit pixels, for
 * mean value a; 0 when nothing is lit. */
static inline RENDER_HD double render_auto_level(const uint32_t *hist, double a, double p)
{
	double n = 0.0;
	for (int b = 0; b < RENDER_AUTO_BINS; b++)
		n += hist[b];
	if (!(n > 0) || !(a > 0))
		return 0.0;
	double r = p / 100.0 * n, below = 0.0;
	int b = 0;
	while (b < RENDER_AUTO_BINS - 1 && below + hist[b] < r)
		below += hist[b++];
	double frac = hist[b] ? (r - below) / hist[b] : 1.0;
	double width = (RENDER_AUTO_HI - RENDER_AUTO_LO) / RENDER_AUTO_BINS;
	return a * exp2(RENDER_AUTO_LO + (b + frac) * width);
}

/* One frame's step of the state toward target / level (level 0: no light,
 * the state is kept). alpha: the moving average's weight (above). */
static inline RENDER_HD void render_auto_step(struct render_auto_state *st, double level,
					      double target, double alpha)
{
	if (!(level > 0))
		return;
	double want = log(target / level);
	st->log_gain = st->frames ? st->log_gain + alpha * (want - st->log_gain) : want;
	st->gain = exp(st->log_gain);
	st->frames++;
}

#endif
