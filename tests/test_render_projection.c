/* test_render_projection.c - camera.projection and camera.stereo on the CPU
 * (render/projection_shared.h, the table's rows in render/projection.c,
 * render/camera.c, render/stereo.c, the splats' wrap-around copies) against the formulas in docs/scenes.md, and
 * the loader's refusals (scene/scene.c check_projection), in the library
 * and from the program (exit status 2, file:line:col and key).
 *
 * Every expectation is written from the formula (angles to pixels, flux
 * = sum of the weights, disparity from the eye geometry), not from the
 * code's output.
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_render_projection && build/tests/test_render_projection */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "render/render.h"
#include "scene/log.h"
#include "test_render_util.h"

static struct scene g_sc; /* large: keep off the stack */
#include "test_scene_util.h"

#define DEG (M_PI / 180.0)

/* Camera at the origin looking along +y, z up: camera coordinates
 * (right, up, forward) = (x, z, y). */
static struct render_camera cam_at_origin(int projection)
{
	struct render_camera c = {.pos = {0, 0, 0}, .target = {0, 10, 0}, .up = {0, 0, 1}, .fov = 60};
	c.projection = projection;
	c.fisheye_aperture = 180;
	return c;
}

/* The point at distance r in the direction of camera coordinates (cx, cy, cz). */
static void point_cam(double r, double cx, double cy, double cz, double p[3])
{
	double n = sqrt(cx * cx + cy * cy + cz * cz);
	p[0] = r * cx / n;
	p[1] = r * cz / n;
	p[2] = r * cy / n;
}

/* One-component state of n bodies, colour 1, brightness 1, mass m each. */
static void state_new(struct sim_state *st, size_t n, double m)
{
	memset(st, 0, sizeof *st);
	ck_assert_int_eq(sim_state_alloc(st, n, 1), 0);
	for (int k = 0; k < 3; k++)
		st->comps[0].color[k] = 1.0f;
	for (size_t i = 0; i < n; i++) {
		st->mass[i] = m;
		st->comp[i] = 0;
	}
}

static double image_total(const struct render_image *img, int channel)
{
	double s = 0;
	for (size_t p = 0; p < (size_t)img->w * img->h; p++)
		s += img->rgb[3 * p + channel];
	return s;
}

static int image_finite(const struct render_image *img)
{
	for (size_t k = 0; k < (size_t)img->w * img->h * 3; k++)
		if (!isfinite(img->rgb[k]))
			return 0;
	return 1;
}

/* ---- where a body lands ---- */

/* Azimuthal equidistant: radius (theta / (aperture / 2)) (w / 2) from the
 * centre, towards (cos phi, -sin phi) on the image (phi from the camera's
 * right towards its up). */
START_TEST(fisheye_pixel_is_equidistant)
{
	const int w = 512;
	const double th[] = {0, 10, 45, 89, 120, 179};
	const double ph[] = {0, 30, 90, 200, -45};
	for (size_t a = 0; a < sizeof th / sizeof th[0]; a++)
		for (size_t b = 0; b < sizeof ph / sizeof ph[0]; b++) {
			struct render_camera c = cam_at_origin(SCENE_PROJ_FISHEYE);
			c.fisheye_aperture = th[a] > 90 ? 360 : 180;
			struct render_view v;
			render_view_make(&c, w, w, &v);
			double t = th[a] * DEG, f = ph[b] * DEG, p[3], x, y, d;
			point_cam(7.0, sin(t) * cos(f), sin(t) * sin(f), cos(t), p);
			ck_assert_int_eq(render_view_project(&v, p, &x, &y, &d), 1);
			double rho = th[a] / (0.5 * c.fisheye_aperture) * 0.5 * w;
			ck_assert_close(x, 0.5 * w + rho * cos(f), 1e-9, 1e-12);
			ck_assert_close(y, 0.5 * w - rho * sin(f), 1e-9, 1e-12);
			ck_assert_close(d, 7.0, 0, 1e-12);
		}
}
END_TEST

/* dome_tilt t: the view axis turns up by t, so the target appears t
 * degrees below the centre: y = h/2 + (t / 90) (w / 2) at aperture 180. */
START_TEST(dome_tilt_puts_target_below_centre)
{
	const int w = 400;
	const double tilts[] = {0, 15, 30, -20};
	for (size_t k = 0; k < sizeof tilts / sizeof tilts[0]; k++) {
		struct render_camera c = cam_at_origin(SCENE_PROJ_FISHEYE);
		c.dome_tilt = tilts[k];
		struct render_view v;
		render_view_make(&c, w, w, &v);
		const double tgt[3] = {0, 10, 0};
		double x, y, d;
		ck_assert_int_eq(render_view_project(&v, tgt, &x, &y, &d), 1);
		ck_assert_close(x, 0.5 * w, 1e-9, 0);
		ck_assert_close(y, 0.5 * w + tilts[k] / 90.0 * 0.5 * w, 1e-9, 1e-12);
	}
}
END_TEST

/* x = w/2 + lon w / 360, y = h/2 - lat h / 180 (degrees), lon 0 at the
 * target, positive to the right. */
START_TEST(equirect_pixel_is_lon_lat)
{
	const int w = 1024, h = 512;
	const double lon[] = {0, 45, -120, 179, -179.5, 90};
	const double lat[] = {0, 30, -60, 85, -89};
	struct render_camera c = cam_at_origin(SCENE_PROJ_EQUIRECT);
	struct render_view v;
	render_view_make(&c, w, h, &v);
	for (size_t a = 0; a < sizeof lon / sizeof lon[0]; a++)
		for (size_t b = 0; b < sizeof lat / sizeof lat[0]; b++) {
			double lo = lon[a] * DEG, la = lat[b] * DEG, p[3], x, y, d;
			point_cam(3.0, cos(la) * sin(lo), sin(la), cos(la) * cos(lo), p);
			ck_assert_int_eq(render_view_project(&v, p, &x, &y, &d), 1);
			ck_assert_close(x, 0.5 * w + lon[a] / 360.0 * w, 1e-9, 1e-12);
			ck_assert_close(y, 0.5 * h - lat[b] / 180.0 * h, 1e-9, 1e-12);
			ck_assert_close(d, 3.0, 0, 1e-12);
		}
}
END_TEST

/* A ring of bodies around the camera in its horizontal plane is the
 * horizontal line y = h/2, x running over the whole width (mono and both
 * omni-directional stereo eyes); drawn as stars, all light lies within the
 * PSF's reach of that row. */
START_TEST(equirect_ring_is_horizontal_line)
{
	const int w = 720, h = 360, n = 360;
	struct sim_state st;
	state_new(&st, n, 1.0);
	for (int i = 0; i < n; i++) {
		double a = (i + 0.25) * 2 * M_PI / n;
		st.pos[3 * i + 0] = 6.0 * sin(a);
		st.pos[3 * i + 1] = 6.0 * cos(a);
		st.pos[3 * i + 2] = 0.0;
	}
	for (int eye = -1; eye <= 1; eye++) {
		struct render_camera c0 = cam_at_origin(SCENE_PROJ_EQUIRECT), c;
		c0.eye_separation = 0.4;
		render_eye_camera(&c0, eye, &c);
		struct render_view v;
		render_view_make(&c, w, h, &v);
		double xmin = w, xmax = 0;
		for (int i = 0; i < n; i++) {
			double x, y, d;
			ck_assert_int_eq(render_view_project(&v, st.pos + 3 * i, &x, &y, &d), 1);
			ck_assert_close(y, 0.5 * h, 1e-9, 0);
			ck_assert(x >= 0 && x < w);
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
		}
		ck_assert(xmin < 3 && xmax > w - 3);
	}
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 0.05);
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.psf_fwhm = 1.5;
	struct render_camera c = cam_at_origin(SCENE_PROJ_EQUIRECT);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_stars_splat(sc, &c, &st, NULL, &img), 0);
	int R = render_stars_radius(render_stars_sigma(1.5));
	double in_band = 0;
	for (int j = h / 2 - R - 1; j <= h / 2 + R; j++)
		for (int i = 0; i < w; i++)
			in_band += img.rgb[3 * ((size_t)j * w + i)];
	ck_assert_close(image_total(&img, 0), (double)n, 0, 1e-5);
	ck_assert_close(in_band, (double)n, 0, 1e-5);
	render_image_free(&img);
	free(sc);
	sim_state_free(&st);
}
END_TEST

/* ---- flux ---- */

/* Bodies in the front hemisphere, away from the rim (theta < 80 degrees):
 * the domemaster's circle holds all their light, in both styles; after
 * the mask, every pixel beyond the circle is 0 even with bodies all around. */
START_TEST(dome_circle_holds_front_hemisphere_flux)
{
	const int w = 256, n = 3000;
	struct sim_state st;
	state_new(&st, n, 0.5);
	for (int i = 0; i < n; i++) {
		double u = sim_rng_uniform(3, (uint64_t)i, 0), v = sim_rng_uniform(3, (uint64_t)i, 1);
		double r = 5 + 15 * sim_rng_uniform(3, (uint64_t)i, 2);
		double t = acos(1 - u * (1 - cos(80 * DEG))), f = 2 * M_PI * v;
		point_cam(r, sin(t) * cos(f), sin(t) * sin(f), cos(t), st.pos + 3 * i);
	}
	for (int style = 0; style < 2; style++) {
		struct scene *sc = render_test_scene(w, w, SCENE_KERNEL_CUBIC, 0.05);
		sc->render.style = style ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
		sc->render.psf_fwhm = 1.5;
		struct render_camera c = cam_at_origin(SCENE_PROJ_FISHEYE);
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, w, w), 0);
		ck_assert_int_eq(render_splat(sc, &c, &st, NULL, &img), 0);
		render_projection_mask(&c, &img);
		ck_assert_close(image_total(&img, 1), 0.5 * n, 0, 1e-5);
		render_image_free(&img);
		free(sc);
	}
	/* now bodies everywhere: nothing beyond the circle after the mask */
	for (int i = 0; i < n; i++) {
		double u = sim_rng_uniform(4, (uint64_t)i, 0), v = sim_rng_uniform(4, (uint64_t)i, 1);
		double t = acos(1 - 2 * u), f = 2 * M_PI * v;
		point_cam(8, sin(t) * cos(f), sin(t) * sin(f), cos(t), st.pos + 3 * i);
	}
	struct scene *sc = render_test_scene(w, w, SCENE_KERNEL_CUBIC, 0.3);
	struct render_camera c = cam_at_origin(SCENE_PROJ_FISHEYE);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, w), 0);
	ck_assert_int_eq(render_splat(sc, &c, &st, NULL, &img), 0);
	render_projection_mask(&c, &img);
	double inside = 0;
	for (int j = 0; j < w; j++)
		for (int i = 0; i < w; i++) {
			double dx = i + 0.5 - 0.5 * w, dy = j + 0.5 - 0.5 * w;
			float px = img.rgb[3 * ((size_t)j * w + i)];
			if (dx * dx + dy * dy > 0.25 * w * w)
				ck_assert_msg(px == 0.0f, "pixel %d,%d beyond the circle: %g", i, j, px);
			else
				inside += px;
		}
	ck_assert(inside > 0.3 * n * 0.5);
	render_image_free(&img);
	free(sc);
	sim_state_free(&st);
}
END_TEST

/* Total light of one body of mass 2 at (lon, lat) degrees, distance 5,
 * drawn in style (1 stars, 0 smooth with smoothing sm) on a w x w/2
 * equirect frame; *left and *right: the light in the 40 columns at each
 * edge. */
static double equirect_one(double lon, double lat, int stars, double sm, int w, double *left,
			   double *right)
{
	struct sim_state st;
	state_new(&st, 1, 2.0);
	double lo = lon * DEG, la = lat * DEG;
	point_cam(5.0, cos(la) * sin(lo), sin(la), cos(la) * cos(lo), st.pos);
	struct scene *sc = render_test_scene(w, w / 2, SCENE_KERNEL_CUBIC, sm);
	sc->render.style = stars ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
	sc->render.psf_fwhm = 3.0;
	struct render_camera c = cam_at_origin(SCENE_PROJ_EQUIRECT);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, w / 2), 0);
	ck_assert_int_eq(render_splat(sc, &c, &st, NULL, &img), 0);
	ck_assert(image_finite(&img));
	double l = 0, r = 0;
	for (int j = 0; j < img.h; j++)
		for (int i = 0; i < 40; i++) {
			l += img.rgb[3 * ((size_t)j * w + i)];
			r += img.rgb[3 * ((size_t)j * w + (w - 1 - i))];
		}
	if (left)
		*left = l;
	if (right)
		*right = r;
	double t = image_total(&img, 0);
	render_image_free(&img);
	free(sc);
	sim_state_free(&st);
	return t;
}

/* A body right at +-180 degrees (behind the camera) and just either side:
 * its footprint crosses the seam and comes back on the other side; the
 * total is its weight 2 (stars; smooth footprints of ~6 px and, on level
 * 2 of the level of detail, ~40 px: the width 512 is a multiple of 16). */
START_TEST(equirect_seam_wraps_and_keeps_flux)
{
	const double lons[] = {180, 179.8, -179.8, 179.999};
	for (size_t k = 0; k < sizeof lons / sizeof lons[0]; k++) {
		double l, r;
		ck_assert_close(equirect_one(lons[k], 10, 1, 0, 512, &l, &r), 2.0, 0, 1e-6);
		ck_assert_msg(l > 0.05 && r > 0.05, "stars at %g: left %g right %g", lons[k], l, r);
		/* smooth: r = h / d * w / (2 pi) pixels */
		double sm6 = 6.0 * 5.0 / (512 / (2 * M_PI)), sm40 = 40.0 * 5.0 / (512 / (2 * M_PI));
		ck_assert_close(equirect_one(lons[k], 10, 0, sm6, 512, &l, &r), 2.0, 0, 1e-5);
		ck_assert(l > 0.05 && r > 0.05);
		ck_assert_close(equirect_one(lons[k], -20, 0, sm40, 512, &l, &r), 2.0, 0,
				RENDER_NORM_ANALYTIC_ERROR + 1e-5);
		ck_assert(l > 0.05 && r > 0.05);
	}
}
END_TEST

/* Near and at the poles: no NaN, and the light that leaves through the
 * top or bottom edge comes back over the pole (on the opposite meridian):
 * the total is the weight. */
START_TEST(equirect_poles_keep_flux_and_stay_finite)
{
	const double lats[] = {89.9, 90, -90, -89.5, 88};
	const double lons[] = {0, 100, 179.9};
	for (size_t a = 0; a < sizeof lats / sizeof lats[0]; a++)
		for (size_t b = 0; b < sizeof lons / sizeof lons[0]; b++) {
			ck_assert_close(equirect_one(lons[b], lats[a], 1, 0, 512, NULL, NULL), 2.0, 0,
					1e-6);
			double sm6 = 6.0 * 5.0 / (512 / (2 * M_PI));
			ck_assert_close(equirect_one(lons[b], lats[a], 0, sm6, 512, NULL, NULL), 2.0, 0,
					1e-5);
		}
}
END_TEST

/* ---- stereo ---- */

/* Perspective, parallel eyes +-s/2 along right, images shifted so that
 * zero parallax is at C: a body on the axis at depth Z has disparity
 * x_R - x_L = f s (1/C - 1/Z) (uncrossed, > 0, beyond C), same row. */
START_TEST(perspective_stereo_disparity)
{
	const int w = 640, h = 480;
	const double s = 0.6, C = 10, Z[] = {5, 10, 20, 1000};
	const double f = render_test_focal(h, 60);
	for (size_t k = 0; k < sizeof Z / sizeof Z[0]; k++) {
		struct render_camera c = cam_at_origin(SCENE_PROJ_PERSPECTIVE), e[2];
		c.eye_separation = s;
		c.convergence = C;
		render_eye_camera(&c, -1, &e[0]);
		render_eye_camera(&c, +1, &e[1]);
		double x[2], y[2], d;
		const double p[3] = {0.3, Z[k], -0.2};
		for (int i = 0; i < 2; i++) {
			struct render_view v;
			render_view_make(&e[i], w, h, &v);
			ck_assert_int_eq(render_view_project(&v, p, &x[i], &y[i], &d), 1);
		}
		ck_assert_close(x[1] - x[0], f * s * (1 / C - 1 / Z[k]), 1e-9, 1e-9);
		ck_assert_close(y[1], y[0], 1e-9, 0);
	}
	/* auto: convergence = the target distance (10), separation 10 / 30 */
	struct render_camera c = cam_at_origin(SCENE_PROJ_PERSPECTIVE), e[2];
	render_eye_camera(&c, -1, &e[0]);
	render_eye_camera(&c, +1, &e[1]);
	ck_assert_close(e[0].convergence, 10.0, 0, 1e-12);
	ck_assert_close(e[0].eye_separation, 10.0 / 30.0, 0, 1e-12);
}
END_TEST

/* Omni-directional stereo: each eye sees a body along the tangent from
 * the eye circle (radius s/2): the left eye's longitude is the body's plus
 * asin(s / 2 / rho), the right eye's minus it, rho the horizontal
 * distance, whatever the body's azimuth: disparity -2 asin(s / (2 rho))
 * w / (2 pi) pixels (crossed; 0 at infinity). */
START_TEST(ods_stereo_disparity)
{
	const int w = 2048, h = 1024;
	const double s = 0.5, rho[] = {2, 5, 40}, az[] = {0, 90, -135};
	for (size_t a = 0; a < sizeof rho / sizeof rho[0]; a++)
		for (size_t b = 0; b < sizeof az / sizeof az[0]; b++) {
			struct render_camera c = cam_at_origin(SCENE_PROJ_EQUIRECT), e[2];
			c.eye_separation = s;
			render_eye_camera(&c, -1, &e[0]);
			render_eye_camera(&c, +1, &e[1]);
			double p[3] = {rho[a] * sin(az[b] * DEG), rho[a] * cos(az[b] * DEG), 1.0};
			double x[2], y[2], d;
			for (int i = 0; i < 2; i++) {
				struct render_view v;
				render_view_make(&e[i], w, h, &v);
				ck_assert_int_eq(render_view_project(&v, p, &x[i], &y[i], &d), 1);
			}
			double disp = x[1] - x[0];
			if (disp > w / 2)
				disp -= w;
			if (disp < -w / 2)
				disp += w;
			ck_assert_close(disp, -2 * asin(0.5 * s / rho[a]) * w / (2 * M_PI), 1e-9, 1e-9);
			/* same latitude: atan2(1, sqrt(rho^2 - r^2)) for both */
			double lat = atan2(1.0, sqrt(rho[a] * rho[a] - 0.25 * s * s));
			ck_assert_close(y[0], 0.5 * h - lat * h / M_PI, 1e-9, 1e-12);
			ck_assert_close(y[1], y[0], 1e-9, 0);
		}
}
END_TEST

/* Side-by-side: the left eye in the left half; top-bottom: the left eye
 * on top; each eye a full picture of half the frame. */
START_TEST(stereo_eye_layout)
{
	struct scene *sc = render_test_scene(1280, 720, SCENE_KERNEL_CUBIC, 0.1);
	int w, h, x0, y0;
	sc->camera.stereo.mode = SCENE_STEREO_SIDE_BY_SIDE;
	render_eye_size(sc, &w, &h);
	ck_assert(w == 640 && h == 720);
	render_eye_origin(sc, -1, &x0, &y0);
	ck_assert(x0 == 0 && y0 == 0);
	render_eye_origin(sc, +1, &x0, &y0);
	ck_assert(x0 == 640 && y0 == 0);
	sc->camera.stereo.mode = SCENE_STEREO_TOP_BOTTOM;
	render_eye_size(sc, &w, &h);
	ck_assert(w == 1280 && h == 360);
	render_eye_origin(sc, -1, &x0, &y0);
	ck_assert(x0 == 0 && y0 == 0);
	render_eye_origin(sc, +1, &x0, &y0);
	ck_assert(x0 == 0 && y0 == 360);
	sc->camera.stereo.mode = SCENE_STEREO_NONE;
	render_eye_size(sc, &w, &h);
	ck_assert(w == 1280 && h == 720);
	free(sc);
}
END_TEST

/* ---- perspective unchanged ---- */

/* The pinhole, bit for bit: x = w/2 + f (d.right) / (d.fwd), y = h/2 - f
 * (d.upv) / (d.fwd), computed here from the view's basis, for a camera
 * written as {pos, target, up, fov} and for one from a scene's keys. */
START_TEST(perspective_is_the_old_pinhole)
{
	const char *txt = "bodies: [{name: a, model: plummer}]\n"
			  "camera: {keys: [{frame: 0, position: [1, -7, 2], target: [0.5, 0, 0.2]}]}\n";
	ck_assert_int_eq(load_str(txt, NULL, 0, &g_sc), 0);
	ck_assert_int_eq(g_sc.camera.projection, SCENE_PROJ_PERSPECTIVE);
	struct render_camera cams[2] = {{.pos = {3, -4, 5}, .target = {1, 1, 0}, .up = {0, 0, 1}, .fov = 35}};
	ck_assert_int_eq(render_camera_at(&g_sc, 0, NULL, &cams[1]), 0);
	for (int c = 0; c < 2; c++) {
		struct render_view v;
		render_view_make(&cams[c], 640, 360, &v);
		for (int i = 0; i < 1000; i++) {
			double p[3], x, y, d;
			for (int k = 0; k < 3; k++)
				p[k] = 20 * sim_rng_uniform(9, (uint64_t)i, (uint64_t)k) - 10;
			double dd[3] = {p[0] - v.pos[0], p[1] - v.pos[1], p[2] - v.pos[2]};
			double z = dd[0] * v.fwd[0] + dd[1] * v.fwd[1] + dd[2] * v.fwd[2];
			double r = dd[0] * v.right[0] + dd[1] * v.right[1] + dd[2] * v.right[2];
			double u = dd[0] * v.upv[0] + dd[1] * v.upv[1] + dd[2] * v.upv[2];
			int vis = render_view_project(&v, p, &x, &y, &d);
			ck_assert_int_eq(vis, z > v.near);
			ck_assert(d == z);
			if (vis) {
				ck_assert(x == 0.5 * 640 + v.focal_px * r / z);
				ck_assert(y == 0.5 * 360 - v.focal_px * u / z);
			}
		}
	}
}
END_TEST

/* ---- bad input ---- */

static const char *BASE = "bodies: [{name: a, model: plummer}]\n";

static void expect_load_error(const char *extra, const char *const *ov, int nov, const char *key,
			      const char *words)
{
	char txt[1024];
	snprintf(txt, sizeof txt, "%s%s", BASE, extra);
	int err = load_str(txt, ov, nov, &g_sc);
	ck_assert_msg(err == NB_EINPUT, "expected NB_EINPUT for '%s', got %d", extra, err);
	ck_assert_msg(strstr(g_err, "t.yaml:") || strstr(g_err, "--set"), "no place: %s", g_err);
	ck_assert_msg(strstr(g_err, key), "message lacks key '%s': %s", key, g_err);
	ck_assert_msg(strstr(g_err, words), "message lacks '%s': %s", words, g_err);
}

START_TEST(bad_projection_input_refused_at_load)
{
	expect_load_error("camera: {projection: cylindrical}\n", NULL, 0, "camera.projection",
			  "perspective");
	expect_load_error("camera: {projection: fisheye}\nrender: {width: 1280, height: 720}\n", NULL,
			  0, "render.width", "square");
	expect_load_error("camera: {projection: equirectangular}\nrender: {width: 1000, height: 600}\n",
			  NULL, 0, "render.width", "2:1");
	expect_load_error("camera: {projection: equirectangular, stereo: {mode: top-bottom}}\n"
			  "render: {width: 2048, height: 1024}\n",
			  NULL, 0, "render.width", "2:1");
	expect_load_error("camera: {projection: fisheye, stereo: {mode: side-by-side}}\n"
			  "render: {width: 1024, height: 1024}\n",
			  NULL, 0, "camera.stereo.mode", "fisheye");
	expect_load_error("camera: {stereo: {mode: sideways}}\n", NULL, 0, "camera.stereo.mode",
			  "side-by-side");
	expect_load_error("camera: {stereo: {eye_separation: -1}}\n", NULL, 0,
			  "camera.stereo.eye_separation", "auto");
	expect_load_error("camera: {fisheye_aperture: 400}\n", NULL, 0, "camera.fisheye_aperture",
			  "360");
	expect_load_error("render: {width: 1023}\n", (const char *const[]){"camera.projection=equirectangular"},
			  1, "render.width", "even");
	expect_load_error("camera: {projection: equirectangular, stereo: {mode: top-bottom}}\n"
			  "render: {width: 1024, height: 1024}\n"
			  "output: {fits_dir: /tmp/nb-fits-never}\n",
			  NULL, 0, "output.fits_dir", "one eye");
	/* angular maps are written (output/fits.c: ARC, CAR) */
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\ncamera: {projection: fisheye}\n"
				  "render: {width: 512, height: 512}\noutput: {fits_dir: /tmp/nb-fits}\n",
				  NULL, 0, &g_sc),
			 0);
	/* the line of the key the user wrote */
	int err = load_str("bodies: [{name: a, model: plummer}]\ncamera:\n  projection: fisheye\n",
			   NULL, 0, &g_sc);
	ck_assert_int_eq(err, NB_EINPUT);
	ck_assert_msg(strstr(g_err, "t.yaml:3:"), "expected line 3: %s", g_err);
	/* good ones load */
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\ncamera: {projection: fisheye, "
				  "dome_tilt: 25}\nrender: {width: 512, height: 512}\n",
				  NULL, 0, &g_sc),
			 0);
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\ncamera: {projection: "
				  "equirectangular, stereo: {mode: top-bottom, eye_separation: 0.2}}\n"
				  "render: {width: 1024, height: 1024}\n",
				  NULL, 0, &g_sc),
			 0);
	ck_assert_int_eq(g_sc.camera.stereo.mode, SCENE_STEREO_TOP_BOTTOM);
	ck_assert(g_sc.camera.stereo.convergence_auto && !g_sc.camera.stereo.eye_separation_auto);
}
END_TEST

/* Dust does not wrap at the equirect seam: refused, naming the key. */
START_TEST(dust_with_equirect_refused)
{
	int err = load_str("units: galactic\nbodies:\n  - {name: g, model: disk-galaxy, dust: "
			   "{mass_fraction: 0.1}}\nrender: {style: stars, width: 512, height: 256}\n"
			   "camera: {projection: equirectangular}\n",
			   NULL, 0, &g_sc);
	ck_assert_int_eq(err, NB_EINPUT);
	ck_assert_msg(strstr(g_err, "camera.projection") && strstr(g_err, "dust"), "%s", g_err);
}
END_TEST

/* The program: exit status 2, the message naming file:line:col and key. */
START_TEST(program_exits_2_on_bad_projection)
{
	static const struct {
		const char *file, *where, *key;
	} cases[] = {
		{"tests/data/bad-fisheye-not-square.yaml", ":5:10:", "render.width"},
		{"tests/data/bad-equirect-not-2to1.yaml", ":5:10:", "render.width"},
		{"tests/data/bad-stereo-fisheye.yaml", ":7:11:", "camera.stereo.mode"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		ck_assert_int_eq(load_file(cases[k].file, NULL, 0, &g_sc), NB_EINPUT);
		char cmd[1024], errf[] = "/tmp/nb-proj-errXXXXXX";
		int fd = mkstemp(errf);
		ck_assert_int_ge(fd, 0);
		close(fd);
		snprintf(cmd, sizeof cmd, "'%s' '%s' --dry-run >/dev/null 2>'%s'", nb_bin(),
			 cases[k].file, errf);
		int ws = system(cmd);
		FILE *f = fopen(errf, "r");
		size_t n = f ? fread(g_err, 1, sizeof g_err - 1, f) : 0;
		g_err[n] = '\0';
		if (f)
			fclose(f);
		unlink(errf);
		ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 2, "%s: status %d", cases[k].file, ws);
		char place[256];
		snprintf(place, sizeof place, "%s%s", cases[k].file, cases[k].where);
		ck_assert_msg(strstr(g_err, place), "%s: expected '%s' in: %s", cases[k].file, place,
			      g_err);
		ck_assert_msg(strstr(g_err, cases[k].key), "%s: expected key '%s' in: %s",
			      cases[k].file, cases[k].key, g_err);
	}
}
END_TEST

/* The projection table (render/projection.c): every value of enum
 * scene_projection has a row and nothing beyond does; a row's wrap and
 * circle say what the shared formulas do (render_proj_copies: 4 copies of
 * a footprint across the seam; render_proj_inside: the corner of a square
 * frame outside the dome's circle); an angular FITS map (wcs) has its
 * pixels' solid angles, and they add up to the sphere the frame shows:
 * 4 pi for the equirectangular frame, 2 pi inside the 180-degree dome's
 * circle (within 0.5 %: the circle's edge cuts pixels). */
START_TEST(projection_rows_agree_with_formulas)
{
	const int kinds[] = {SCENE_PROJ_PERSPECTIVE, SCENE_PROJ_FISHEYE, SCENE_PROJ_EQUIRECT};
	ck_assert_ptr_null(render_projection_of(-1));
	ck_assert_ptr_null(render_projection_of(3));
	for (int k = 0; k < 3; k++) {
		const struct render_projection *row = render_projection_of(kinds[k]);
		ck_assert_ptr_nonnull(row);
		const int w = row->wrap ? 128 : 64, h = 64;
		struct render_camera c = cam_at_origin(kinds[k]);
		struct render_view v;
		render_view_make(&c, w, h, &v);
		ck_assert_int_eq(render_proj_copies(&v.pj), row->wrap ? RENDER_PROJ_COPIES : 1);
		ck_assert_int_eq(render_proj_inside(&v.pj, 0, 0), !row->circle);
		ck_assert_int_eq(row->wcs != NULL, row->pixel_sr != NULL);
		ck_assert_int_eq(row->framed, kinds[k] == SCENE_PROJ_PERSPECTIVE);
		if (!row->wcs)
			continue;
		float *inv = malloc((size_t)w * h * sizeof *inv);
		ck_assert_ptr_nonnull(inv);
		row->pixel_sr(w, h, v.focal_px, inv);
		double sr = 0;
		for (int j = 0; j < h; j++)
			for (int i = 0; i < w; i++)
				if (render_proj_inside(&v.pj, i, j) && inv[(size_t)j * w + i] > 0)
					sr += 1.0 / inv[(size_t)j * w + i];
		const double want = row->circle ? 2 * M_PI : 4 * M_PI;
		printf("projection %d: pixels' solid angles add to %.5f sr (the frame shows %.5f)\n",
		       kinds[k], sr, want);
		ck_assert_double_le(fabs(sr - want), 5e-3 * want);
		free(inv);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_projection");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fisheye_pixel_is_equidistant);
	tcase_add_test(tc, dome_tilt_puts_target_below_centre);
	tcase_add_test(tc, equirect_pixel_is_lon_lat);
	tcase_add_test(tc, equirect_ring_is_horizontal_line);
	tcase_add_test(tc, dome_circle_holds_front_hemisphere_flux);
	tcase_add_test(tc, equirect_seam_wraps_and_keeps_flux);
	tcase_add_test(tc, equirect_poles_keep_flux_and_stay_finite);
	tcase_add_test(tc, perspective_stereo_disparity);
	tcase_add_test(tc, ods_stereo_disparity);
	tcase_add_test(tc, stereo_eye_layout);
	tcase_add_test(tc, perspective_is_the_old_pinhole);
	tcase_add_test(tc, projection_rows_agree_with_formulas);
	tcase_add_test(tc, bad_projection_input_refused_at_load);
	tcase_add_test(tc, dust_with_equirect_refused);
	tcase_add_test(tc, program_exits_2_on_bad_projection);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
