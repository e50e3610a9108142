/* blur_shared.h - render.motion_blur's sample times and drift, written once
 * for the CPU (render/stars.c) and the GPU (render/cuda/render_stars.cu):
 * static inline functions in double that compile for both (RENDER_HD,
 * tone_shared.h), with the same operations in the same order, unfused on
 * the device, so both draw a sample at the same place.
 *
 * The shutter is open for span = shutter x simulation.dt x
 * steps_per_frame (render_blur_span, internal time units), centred on the
 * frame's time. Sample k of S (k = 0 .. S - 1) is at the middle of the
 * k-th of S equal parts of that interval:
 *   t_k = ((k + 1/2) / S - 1/2) x span,
 * so the samples are symmetric about the frame (odd S: one at t = 0) and
 * each stands for span / S of exposure (a box filter in time, stratified).
 * A body of position x and velocity v (internal units; at the frame's
 * time: the leapfrog's kick-drift-kick leaves them synchronised) is drawn
 * at x + v t_k with 1/S of its light: a straight drift, which is enough
 * over one frame. Its streak on screen (a body moving across the line of
 * sight at depth d, scene length units) is |v| span / u.length x
 * focal_px / d pixels long (|v| span: the internal length it drifts while
 * the shutter is open), the samples covering (S - 1) / S of it centre to
 * centre; the light's spread along the motion has variance L^2 (1 -
 * 1/S^2) / 12 beyond the PSF's (L the streak length). */
#ifndef NB_BLUR_SHARED_H
#define NB_BLUR_SHARED_H

#include "tone_shared.h" /* RENDER_HD */

static inline RENDER_HD double render_blur_time(double span, int k, int samples)
{
	return ((k + 0.5) / samples - 0.5) * span;
}

/* x + v t in double, unfused (the CPU build has no FMA contraction). */
static inline RENDER_HD double render_blur_drift(double x, double v, double t)
{
#ifdef __CUDA_ARCH__
	return __dadd_rn(x, __dmul_rn(v, t));
#else
	return x + v * t;
#endif
}

#endif
