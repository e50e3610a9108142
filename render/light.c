/* light.c - the light per unit mass a body's component gives (render.h):
 * its colour times its brightness, or with render.color_by its brightness
 * alone (the colour then comes from the quantity, render/color_by.c).
 * Every splat, the adaptive smoothing's drawn bodies and the framing's
 * weights read these two, so they sit at the bottom of render/. */
#include "render.h"

void render_comp_light(const struct sim_component *c, float light[3])
{
	for (int k = 0; k < 3; k++)
		light[k] = c->color[k] * c->brightness;
}

void render_body_light(const struct scene *sc, const struct sim_component *c, float light[3])
{
	if (sc->render.color_by == SCENE_COLOR_BY_COMPONENT) {
		render_comp_light(c, light);
		return;
	}
	/* A component drawn black stays undrawn (the scenes hide dark haloes
	 * that way), whatever its velocities. */
	int black = c->color[0] == 0.0f && c->color[1] == 0.0f && c->color[2] == 0.0f;
	light[0] = light[1] = light[2] = black ? 0.0f : c->brightness;
}
