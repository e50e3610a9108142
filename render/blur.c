/* blur.c - render.motion_blur's scene values for both renderers (render.h;
 * the sample times and the drift: render/blur_shared.h). */
#include "render.h"

int render_blur_samples(const struct scene *sc)
{
	int s = sc->render.motion_blur.samples;
	return s > 1 ? s : 1;
}

double render_blur_span(const struct scene *sc, const struct sim_units *u)
{
	return sc->render.motion_blur.shutter * sc->simulation.dt *
	       (double)sc->simulation.steps_per_frame * u->time;
}
