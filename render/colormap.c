/* colormap.c - colour lookup t in [0, 1] -> display RGB: linear
 * interpolation between the control points of colormap_data.h (grey is
 * the identity ramp), cubehelix computed from its formula, and a scene's
 * render.colormap_file table. */
#include <math.h>

#include "colormap_data.h"
#include "render.h"

/* Linear interpolation of an n-point table at t in [0, 1]. */
static void table_at(const float (*tab)[3], int n, double t, float rgb[3])
{
	double x = t * (n - 1);
	int k = (int)floor(x);
	if (k >= n - 1)
		k = n - 2;
	double f = x - k;
	for (int c = 0; c < 3; c++)
		rgb[c] = (float)((1 - f) * tab[k][c] + f * tab[k + 1][c]);
}

/* Green (2011), "A colour scheme for the display of astronomical intensity
 * images", Bull. Astr. Soc. India 39, 289, eq. 2: the grey level l^gamma
 * plus a deviation of amplitude a = h l^gamma (1 - l^gamma) / 2 at angle
 * phi = 2 pi (s / 3 + r l) in the plane of constant perceived intensity,
 * whose basis in RGB is given by the paper's matrix (from the luminance
 * weights 0.30, 0.59, 0.11). matplotlib's parameters: s = 0.5, r = -1.5,
 * h = 1, gamma = 1. Clipped to [0, 1], as the paper says. */
static void cubehelix(double l, float rgb[3])
{
	const double s = 0.5, r = -1.5, h = 1.0, gamma = 1.0;
	const double lg = pow(l, gamma);
	const double a = h * lg * (1 - lg) / 2;
	const double phi = 2 * M_PI * (s / 3 + r * l);
	const double cp = cos(phi), sp = sin(phi);
	const double v[3] = {lg + a * (-0.14861 * cp + 1.78277 * sp),
			     lg + a * (-0.29227 * cp - 0.90649 * sp), lg + a * (1.97294 * cp)};
	for (int c = 0; c < 3; c++)
		rgb[c] = (float)(v[c] < 0 ? 0 : v[c] > 1 ? 1 : v[c]);
}

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
	case SCENE_CMAP_PLASMA:
		tab = colormap_plasma;
		break;
	case SCENE_CMAP_CIVIDIS:
		tab = colormap_cividis;
		break;
	case SCENE_CMAP_TWILIGHT:
		tab = colormap_twilight;
		break;
	case SCENE_CMAP_CUBEHELIX:
		cubehelix(t, rgb);
		return;
	default:
		rgb[0] = rgb[1] = rgb[2] = (float)t;
		return;
	}
	table_at(tab, COLORMAP_NPOINTS, t, rgb);
}

void render_colormap_scene(const struct scene *sc, double t, float rgb[3])
{
	if (!sc->render.colormap_file[0]) {
		render_colormap(sc->render.colormap, t, rgb);
		return;
	}
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	table_at((const float(*)[3])sc->render.colormap_lut, SCENE_LUT_N, t, rgb);
}
