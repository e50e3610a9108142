/* test_render_blur.c - render.motion_blur on the CPU (render/stars.c, the
 * rule in render/blur_shared.h).
 *
 * Expectations are formulas: S samples of W / S each keep a frame's total
 * light (every footprint inside the image); a body crossing the line of
 * sight at depth d drifts |v| span (internal length, span = shutter x dt x
 * steps_per_frame x u.time) while the shutter is open, a streak of L =
 * |v| span / u.length x focal_px / d pixels, centred on its frame-time
 * position: the light's centroid does not move, its variance along the
 * motion grows by L^2 (1 - 1/S^2) / 12 (S points spaced L / S) and across
 * it not at all, no light lies beyond L/2 + R + 1 px of the centre, and
 * with S = 64 the light per column inside the streak is W / L; S = 1
 * never reads the velocities (frames bit for bit the unblurred ones); the
 * loader refuses blur where it is not drawn (smooth style, adaptive
 * diffuse layer, dust).
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_blur && build-cpu/tests/test_render_blur */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "test_render_util.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* load_file */
#include "test_scene_util.h"
#pragma GCC diagnostic pop

#define W 160
#define H 64

/* Internal = scene * factor; the time factor makes span differ from the
 * scene's shutter x dt x steps_per_frame. */
static const struct sim_units u_test = {2.0, 3.0, 4.0, 0.5, 1.0};
static const float colour[3] = {1.0f, 0.6f, 0.25f};

/* World point (scene units) that cam_std sees at pixel (x, y), depth z. */
static void unproject_std(double x, double y, double z, double p[3])
{
	double f = render_test_focal(H, cam_std.fov);
	p[0] = z * (x - 0.5 * W) / f;
	p[1] = cam_std.pos[1] + z;
	p[2] = -z * (y - 0.5 * H) / f;
}

static void state_new(struct sim_state *st, size_t n)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 1), 0);
	snprintf(st->comps[0].name, sizeof st->comps[0].name, "c");
	memcpy(st->comps[0].color, colour, sizeof colour);
	memset(st->comp, 0, n * sizeof *st->comp);
	memset(st->vel, 0, 3 * n * sizeof *st->vel);
}

/* Body i at pixel (x, y), depth z, mass m (scene units), velocity v
 * (internal units). */
static void set_body(struct sim_state *st, size_t i, double x, double y, double z, double m,
		     const double v[3])
{
	double p[3];
	unproject_std(x, y, z, p);
	for (int d = 0; d < 3; d++) {
		st->pos[3 * i + d] = p[d] * u_test.length;
		st->vel[3 * i + d] = v[d];
	}
	st->mass[i] = m * u_test.mass;
}

static struct scene *blur_scene(double fwhm, int samples, double shutter)
{
	struct scene *sc = render_test_scene(W, H, SCENE_KERNEL_CUBIC, 0.3);
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.psf_fwhm = fwhm;
	sc->simulation.dt = 0.01;
	sc->simulation.steps_per_frame = 10;
	sc->render.motion_blur.samples = samples;
	sc->render.motion_blur.shutter = shutter;
	return sc;
}

/* The internal speed that draws a streak of L pixels at depth z. */
static double speed_for_streak(const struct scene *sc, double L, double z)
{
	double span = sc->render.motion_blur.shutter * sc->simulation.dt *
		      sc->simulation.steps_per_frame * u_test.time;
	return L * z / render_test_focal(H, cam_std.fov) * u_test.length / span;
}

static double lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static void channel_totals(const struct render_image *img, double t[3])
{
	t[0] = t[1] = t[2] = 0;
	for (size_t k = 0; k < (size_t)img->w * img->h; k++)
		for (int c = 0; c < 3; c++)
			t[c] += img->rgb[3 * k + c];
}

/* Centroid and variances of channel 0 about its centroid. */
static void moments(const struct render_image *img, double *mx, double *my, double *vx,
		    double *vy)
{
	double s = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
	for (int j = 0; j < img->h; j++)
		for (int i = 0; i < img->w; i++) {
			double v = img->rgb[3 * ((size_t)j * img->w + i)];
			s += v;
			sx += v * (i + 0.5);
			sy += v * (j + 0.5);
		}
	*mx = sx / s;
	*my = sy / s;
	for (int j = 0; j < img->h; j++)
		for (int i = 0; i < img->w; i++) {
			double v = img->rgb[3 * ((size_t)j * img->w + i)];
			sxx += v * (i + 0.5 - *mx) * (i + 0.5 - *mx);
			syy += v * (j + 0.5 - *my) * (j + 0.5 - *my);
		}
	*vx = sxx / s;
	*vy = syy / s;
}

/* (1) 300 bodies with random velocities whose streaks stay inside the
 * frame: each channel's total is the unblurred one and the analytic
 * sum of m x colour, within 1e-5 relative, for S = 2, 5, 8 and 64. */
START_TEST(blur_keeps_total_light)
{
	const size_t n = 300;
	struct sim_state st;
	state_new(&st, n);
	uint64_t seed = 99;
	struct scene *sc = blur_scene(1.5, 1, 1.0);
	double want[3] = {0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		double z = 5 + 20 * lcg(&seed), m = 0.1 + lcg(&seed);
		double L = 30 * lcg(&seed); /* streak length, px, in a random direction */
		double ang = 2 * M_PI * lcg(&seed), sp = speed_for_streak(sc, L, z);
		double x = 20 + (W - 40) * lcg(&seed), y = 20 + (H - 40) * lcg(&seed);
		/* across the line of sight: world x is screen right, world z screen up */
		double v[3] = {sp * cos(ang), 0.3 * sp * (lcg(&seed) - 0.5), sp * sin(ang)};
		set_body(&st, i, x, y, z, m, v);
		for (int c = 0; c < 3; c++)
			want[c] += m * colour[c];
	}
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
	const int S[] = {1, 2, 5, 8, 64};
	for (int k = 0; k < 5; k++) {
		sc->render.motion_blur.samples = S[k];
		render_image_clear(&img);
		ck_assert_int_eq(render_stars_splat(sc, &cam_std, &st, &u_test, &img), 0);
		double t[3];
		channel_totals(&img, t);
		for (int c = 0; c < 3; c++)
			ck_assert_msg(fabs(t[c] - want[c]) <= 1e-5 * want[c],
				      "S %d channel %d: total %.9g, expected %.9g", S[k], c, t[c],
				      want[c]);
	}
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* (2) One body crossing the frame along screen x at depth 10 (streak L =
 * 60 px, FWHM 3 px: the pixel grid's aliasing of the PSF moments is
 * ~e^-32): centroid unchanged within 1e-3 px, variance along x grown by
 * L^2 (1 - 1/S^2) / 12 within 1e-3 relative, across unchanged within
 * 1e-3 px^2, no light beyond L/2 + R + 1 px; shutters 1 and 0.5 (half
 * the streak at the same speed). */
START_TEST(blur_streak_matches_analytic)
{
	struct sim_state st;
	state_new(&st, 1);
	const double z = 10, x0 = 80.3, y0 = 31.7, L = 60;
	struct scene *sc = blur_scene(3.0, 1, 1.0);
	const double sp = speed_for_streak(sc, L, z);
	const double v[3] = {sp, 0, 0};
	set_body(&st, 0, x0, y0, z, 0.5, v);
	const int R = render_stars_radius(render_stars_sigma(3.0));
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
	ck_assert_int_eq(render_stars_splat(sc, &cam_std, &st, &u_test, &img), 0);
	double mx0, my0, vx0, vy0;
	moments(&img, &mx0, &my0, &vx0, &vy0);
	ck_assert_msg(fabs(mx0 - x0) < 1e-3 && fabs(my0 - y0) < 1e-3, "unblurred at %g %g", mx0, my0);
	const double shutters[] = {1.0, 0.5};
	const int S[] = {2, 3, 16, 64};
	for (int a = 0; a < 2; a++)
		for (int k = 0; k < 4; k++) {
			sc->render.motion_blur.shutter = shutters[a];
			sc->render.motion_blur.samples = S[k];
			const double Ls = L * shutters[a];
			render_image_clear(&img);
			ck_assert_int_eq(render_stars_splat(sc, &cam_std, &st, &u_test, &img), 0);
			double mx, my, vx, vy;
			moments(&img, &mx, &my, &vx, &vy);
			double grow = Ls * Ls * (1.0 - 1.0 / ((double)S[k] * S[k])) / 12.0;
			ck_assert_msg(fabs(mx - x0) < 1e-3 && fabs(my - y0) < 1e-3,
				      "shutter %g S %d: centroid %g %g", shutters[a], S[k], mx, my);
			ck_assert_msg(fabs((vx - vx0) - grow) <= 1e-3 * grow,
				      "shutter %g S %d: x variance grew %g, expected %g", shutters[a],
				      S[k], vx - vx0, grow);
			ck_assert_msg(fabs(vy - vy0) <= 1e-3, "shutter %g S %d: y variance %g vs %g",
				      shutters[a], S[k], vy, vy0);
			for (int j = 0; j < H; j++)
				for (int i = 0; i < W; i++)
					if (fabs(i + 0.5 - x0) > Ls / 2 + R + 1)
						ck_assert_msg(img.rgb[3 * ((size_t)j * W + i)] == 0.0f,
							      "shutter %g S %d: light at column %d",
							      shutters[a], S[k], i);
		}
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* (3) With S = 64 the streak is even: each column more than 8 px inside
 * either end holds W / L of the light within 1 %. */
START_TEST(blur_streak_is_even)
{
	struct sim_state st;
	state_new(&st, 1);
	const double z = 10, x0 = 80.3, y0 = 31.7, L = 60, m = 0.5;
	struct scene *sc = blur_scene(3.0, 64, 1.0);
	const double v[3] = {speed_for_streak(sc, L, z), 0, 0};
	set_body(&st, 0, x0, y0, z, m, v);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
	ck_assert_int_eq(render_stars_splat(sc, &cam_std, &st, &u_test, &img), 0);
	const double per_col = m * colour[0] / L;
	int checked = 0;
	for (int i = 0; i < W; i++) {
		if (fabs(i + 0.5 - x0) > L / 2 - 8)
			continue;
		double s = 0;
		for (int j = 0; j < H; j++)
			s += img.rgb[3 * ((size_t)j * W + i)];
		ck_assert_msg(fabs(s - per_col) <= 0.01 * per_col, "column %d: %g, expected %g", i, s,
			      per_col);
		checked++;
	}
	ck_assert_int_ge(checked, 40);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* (4) samples 1 is the unblurred splat bit for bit and never reads the
 * velocities (NaN here), also through the screen diffuse layer. */
START_TEST(one_sample_is_bit_identical)
{
	const size_t n = 200;
	struct sim_state st;
	state_new(&st, n);
	uint64_t seed = 7;
	const double nanv[3] = {NAN, NAN, NAN};
	for (size_t i = 0; i < n; i++)
		set_body(&st, i, W * lcg(&seed), H * lcg(&seed), 3 + 20 * lcg(&seed),
			 0.1 + lcg(&seed), nanv);
	struct scene *off = blur_scene(1.5, 0, 0); /* as a scene without the key: zeroed */
	struct scene *one = blur_scene(1.5, 1, 0.7);
	struct render_image a, b, sa, sb;
	ck_assert_int_eq(render_image_alloc(&a, W, H), 0);
	ck_assert_int_eq(render_image_alloc(&b, W, H), 0);
	ck_assert_int_eq(render_image_alloc(&sa, W, H), 0);
	ck_assert_int_eq(render_image_alloc(&sb, W, H), 0);
	ck_assert_int_eq(render_stars_splat(off, &cam_std, &st, &u_test, &a), 0);
	ck_assert_int_eq(render_stars_splat(one, &cam_std, &st, &u_test, &b), 0);
	ck_assert(memcmp(a.rgb, b.rgb, (size_t)W * H * 3 * sizeof(float)) == 0);
	off->render.diffuse = one->render.diffuse = 0.5;
	render_image_clear(&a);
	render_image_clear(&b);
	ck_assert_int_eq(render_stars_diffuse_screen(off, &cam_std, &st, &u_test, &a, &sa), 0);
	ck_assert_int_eq(render_stars_diffuse_screen(one, &cam_std, &st, &u_test, &b, &sb), 0);
	ck_assert(memcmp(a.rgb, b.rgb, (size_t)W * H * 3 * sizeof(float)) == 0);
	double t[3];
	channel_totals(&a, t);
	ck_assert(t[0] > 0);
	render_image_free(&a);
	render_image_free(&b);
	render_image_free(&sa);
	render_image_free(&sb);
	sim_state_free(&st);
	free(off);
	free(one);
}
END_TEST

/* (5) Through the screen diffuse layer the blurred frame keeps its total
 * light too (the layer keeps the stars' total). */
START_TEST(blur_with_screen_diffuse_keeps_light)
{
	const size_t n = 200;
	struct sim_state st;
	state_new(&st, n);
	uint64_t seed = 11;
	struct scene *sc = blur_scene(1.5, 8, 0.5);
	sc->render.diffuse = 1.0;
	sc->render.diffuse_smoothing = SCENE_DIFFUSE_SCREEN;
	double want = 0;
	for (size_t i = 0; i < n; i++) {
		double z = 5 + 10 * lcg(&seed), m = 0.1 + lcg(&seed);
		double sp = speed_for_streak(sc, 20 * lcg(&seed), z);
		double v[3] = {sp, 0, -sp};
		set_body(&st, i, 30 + (W - 60) * lcg(&seed), 24 + (H - 48) * lcg(&seed), z, m, v);
		want += m * colour[0];
	}
	struct render_image img, sm;
	ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
	ck_assert_int_eq(render_image_alloc(&sm, W, H), 0);
	ck_assert_int_eq(render_stars_diffuse_screen(sc, &cam_std, &st, &u_test, &img, &sm), 0);
	double t[3];
	channel_totals(&img, t);
	ck_assert_msg(fabs(t[0] - want) <= 1e-5 * want, "total %.9g, expected %.9g", t[0], want);
	render_image_free(&img);
	render_image_free(&sm);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* (6) The loader refuses blur where it is not drawn, naming the key. */
START_TEST(loader_refuses_blur_it_cannot_draw)
{
	static const char base[] =
		"bodies:\n"
		"  - {name: c, model: plummer, count: 100}\n"
		"render: {motion_blur: {samples: 4}}\n";
	struct scene *sc = calloc(1, sizeof *sc);
	ck_assert_int_eq(load_str(base, NULL, 0, sc), 0);
	ck_assert_int_eq(sc->render.motion_blur.samples, 4);
	ck_assert(sc->render.motion_blur.shutter == 0.5);
	const char *smooth[] = {"render.style=smooth"};
	ck_assert_int_eq(load_str(base, smooth, 1, sc), NB_EINPUT);
	ck_assert_msg(strstr(g_err, "render.motion_blur.samples") &&
			      strstr(g_err, "render.style: stars"),
		      "%s", g_err);
	const char *adaptive[] = {"render.diffuse=0.5", "render.diffuse_smoothing=adaptive"};
	ck_assert_int_eq(load_str(base, adaptive, 2, sc), NB_EINPUT);
	ck_assert_msg(strstr(g_err, "diffuse_smoothing: screen"), "%s", g_err);
	static const char dusty[] =
		"units: galactic\n"
		"bodies:\n"
		"  - {name: g, model: disk-galaxy, disk: {count: 1000}, bulge: {count: 0}, halo: {count: 0},\n"
		"     dust: {mass_fraction: 0.1}}\n"
		"render: {motion_blur: {samples: 2}}\n";
	ck_assert_int_eq(load_str(dusty, NULL, 0, sc), NB_EINPUT);
	ck_assert_msg(strstr(g_err, "not drawn through dust (bodies.0.dust)"), "%s", g_err);
	const char *zero[] = {"render.motion_blur.shutter=0"};
	ck_assert_int_eq(load_str(base, zero, 1, sc), NB_EINPUT);
	const char *many[] = {"render.motion_blur.samples=65"};
	ck_assert_int_eq(load_str(base, many, 1, sc), NB_EINPUT);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_blur");
	TCase *tc = tcase_create("render_blur");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, blur_keeps_total_light);
	tcase_add_test(tc, blur_streak_matches_analytic);
	tcase_add_test(tc, blur_streak_is_even);
	tcase_add_test(tc, one_sample_is_bit_identical);
	tcase_add_test(tc, blur_with_screen_diffuse_keeps_light);
	tcase_add_test(tc, loader_refuses_blur_it_cannot_draw);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
