/* projection.c - the projection table (render.h, "camera.projection"):
 * one const row per projection, indexed by enum scene_projection, in the
 * way a libavformat format is one const row of values and callbacks. The
 * per-body formulas, which the GPU shares, stay in
 * render/projection_shared.h (render_proj_map, render_proj_copies,
 * render_proj_ghost, render_proj_inside); everything else a stage asks of a
 * projection is a field of its row: the view's focal length
 * (render_view_make), the wrap (glow, wing and screen diffuse pyramids, the
 * GPU's footprint copies), the circle mask, the stereo eyes, whether the
 * framing works in it, the FITS map's WCS and pixel solid angles
 * (output/fits.c) and the MP4's spherical tag (output/mp4_sphere.c).
 *
 * Adding a projection: its formulas in projection_shared.h, a row here,
 * and the scene's word and checks (scene/scene.h's enum, scene_schema.c's
 * names, scene.c's size rules); docs/DESIGN.md lists every place. */
#include <math.h>

#include "render.h"

/* fisheye: the dome's zenith is fwd turned towards upv about right by
 * camera.dome_tilt; focal = (w/2) / (aperture/2) pixels per radian. */
static void fisheye_view(const struct render_camera *cam, struct render_view *v)
{
	double t = cam->dome_tilt * M_PI / 180.0, ct = cos(t), st = sin(t);
	double f[3], u[3];
	for (int d = 0; d < 3; d++) {
		f[d] = ct * v->fwd[d] + st * v->upv[d];
		u[d] = ct * v->upv[d] - st * v->fwd[d];
	}
	for (int d = 0; d < 3; d++) {
		v->fwd[d] = f[d];
		v->upv[d] = u[d];
	}
	double ap = cam->fisheye_aperture > 0 ? cam->fisheye_aperture : 180.0;
	v->focal_px = 0.5 * v->w / (0.5 * ap * M_PI / 180.0);
}

/* equirectangular: w / (2 pi) = h / pi pixels per radian. */
static void equirect_view(const struct render_camera *cam, struct render_view *v)
{
	(void)cam;
	v->focal_px = v->w / (2.0 * M_PI);
}

/* ARC: the solid angle of the pixel [x0, x0 + 1) x [y0, y0 + 1) (pixels from
 * the centre), the Jacobian sin(theta) / theta at the 2 x 2 Gauss points
 * (exact for cubics in each direction; 0 past the antipode). */
static double arc_omega(double x0, double y0, double k)
{
	static const double g[2] = {0.5 - 0.5 / 1.7320508075688772, 0.5 + 0.5 / 1.7320508075688772};
	double sum = 0;
	for (int b = 0; b < 2; b++) {
		for (int a = 0; a < 2; a++) {
			const double x = x0 + g[a], y = y0 + g[b];
			const double th = sqrt(x * x + y * y) / k;
			sum += th < 1e-12 ? 1.0 : th < M_PI ? sin(th) / th : 0.0;
		}
	}
	return sum / 4 / (k * k);
}

/* fisheye (ARC): symmetric about the centre (w and h are even), so one
 * quadrant is computed and mirrored. */
static void fisheye_pixel_sr(int w, int h, double k, float *scale)
{
	for (int j = 0; j < h; j++) {
		for (int i = 0; i < w; i++) {
			if (i >= w / 2 || j >= h / 2) {
				const int mi = i >= w / 2 ? w - 1 - i : i, mj = j >= h / 2 ? h - 1 - j : j;
				scale[(size_t)j * w + i] = scale[(size_t)mj * w + mi];
				continue;
			}
			const double om = arc_omega(i - 0.5 * w, j - 0.5 * h, k);
			scale[(size_t)j * w + i] = om > 0 ? (float)(1.0 / om) : 0.0f;
		}
	}
}

/* equirectangular (CAR): dlon (sin lat_top - sin lat_bottom), the same
 * along a row. */
static void equirect_pixel_sr(int w, int h, double k, float *scale)
{
	for (int j = 0; j < h; j++) {
		const double om = (sin((0.5 * h - j) / k) - sin((0.5 * h - j - 1) / k)) / k;
		for (int i = 0; i < w; i++)
			scale[(size_t)j * w + i] = om > 0 ? (float)(1.0 / om) : 0.0f;
	}
}

static const struct render_projection projections[] = {
	[SCENE_PROJ_PERSPECTIVE] = {.framed = 1},
	[SCENE_PROJ_FISHEYE] = {.circle = 1, .view = fisheye_view, .wcs = "ARC", .wcs_lat0 = 90,
				.pixel_sr = fisheye_pixel_sr},
	[SCENE_PROJ_EQUIRECT] = {.wrap = 1, .ods = 1, .view = equirect_view, .wcs = "CAR",
				 .pixel_sr = equirect_pixel_sr, .mp4_equirect = 1},
};

const struct render_projection *render_projection_of(int kind)
{
	if (kind < 0 || kind >= (int)(sizeof projections / sizeof projections[0]))
		return 0;
	return &projections[kind];
}
