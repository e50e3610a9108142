/* spring.c - the critically damped spring that smooths camera.follow:
 * light and camera.frame: auto (render.h, render_spring_step).
 *
 * x'' = (g - x) / tau^2 - 2 x' / tau with g constant over a frame has the
 * exact solution, for e = x - g, e0 and v0 at the frame's start and t in
 * frames,
 *     e(t) = (e0 + (v0 + e0 / tau) t) exp(-t / tau)
 *     v(t) = (v0 - (v0 + e0 / tau) t / tau) exp(-t / tau)
 * (critical damping: the double root -1/tau). It is used at t = 1, so the
 * result does not depend on a step size and never goes unstable: from rest
 * a step of g is reached without overshoot, 1 - (1 + t/tau) exp(-t/tau) of
 * the way after t frames (99% after 6.64 tau). */
#include <math.h>

#include "render.h"

double render_spring_step(struct render_spring *s, double g, double tau)
{
	if (!s->started || !(tau > 0)) {
		s->x = g;
		s->v = 0;
		s->started = 1;
		return s->x;
	}
	double e0 = s->x - g, k = s->v + e0 / tau, decay = exp(-1.0 / tau);
	s->x = g + (e0 + k) * decay;
	s->v = (s->v - k / tau) * decay;
	return s->x;
}
