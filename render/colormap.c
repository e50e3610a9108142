/* colormap.c - density-mode colour lookup: t in [0, 1] -> display RGB by
 * linear interpolation between the control points of colormap_data.h
 * (grey is the identity ramp). */
#include <math.h>

#include "colormap_data.h"
#include "render.h"

void render_colormap(enum scene_colormap map, double t, float rgb[3])
{
	if (!(t > 0))
		t = 0; /* also maps NaN to 0 */
	if (t > 1)
		t = 1;
	const float(*tab)[3];
	switch (map) {
	case SCENE_CMAP_MAGMA:
		tab = colormap_magma;
		break;
	case SCENE_CMAP_INFERNO:
		tab = colormap_inferno;
		break;
	case SCENE_CMAP_VIRIDIS:
		tab = colormap_viridis;
		break;
	default:
		rgb[0] = rgb[1] = rgb[2] = (float)t;
		return;
	}
	double x = t * (COLORMAP_NPOINTS - 1);
	int k = (int)floor(x);
	if (k >= COLORMAP_NPOINTS - 1)
		k = COLORMAP_NPOINTS - 2;
	double f = x - k;
	for (int c = 0; c < 3; c++)
		rgb[c] = (float)((1 - f) * tab[k][c] + f * tab[k + 1][c]);
}
