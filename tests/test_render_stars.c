/* test_render_stars.c - render.style: stars (render/stars.c) and the
 * per-component brightness (both styles).
 *
 * Expectations are formulas: a body deposits mass x brightness x colour in
 * total wherever its sub-pixel position; a Gaussian of sigma = FWHM / (2
 * sqrt(2 ln 2)) pixels integrated over pixels has variance sigma^2 + 1/12
 * about the body (Sheppard), whatever the body's distance; brightness b
 * scales a component's light by b; the fog measure (a pixel is lit
 * above 2% of the frame's maximum) on tests/data/plummer-small.yaml, run
 * end to end by the program (NB_BIN).
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_stars &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_render_stars */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "test_output_util.h"
#include "test_render_util.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* load_file */
#include "test_scene_util.h"
#pragma GCC diagnostic pop

#define W 64
#define H 48

/* Internal = scene * factor: positions doubled, masses quadrupled. */
static const struct sim_units u_test = {2.0, 1.0, 4.0, 1.0, 1.0};
static const float colour[3] = {1.0f, 0.6f, 0.25f};

/* World point (scene units) that cam_std sees at continuous pixel (x, y)
 * and depth z: inverse of the pinhole formula. */
static void unproject_std(double x, double y, double z, double p[3])
{
	double f = render_test_focal(H, cam_std.fov);
	p[0] = z * (x - 0.5 * W) / f;
	p[1] = cam_std.pos[1] + z;
	p[2] = -z * (y - 0.5 * H) / f;
}

/* n bodies in ncomp components of the same colour; body i in comp i % ncomp. */
static void state_new(struct sim_state *st, size_t n, int ncomp)
{
	ck_assert_int_eq(sim_state_alloc(st, n, ncomp), 0);
	for (int c = 0; c < ncomp; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "c%d", c);
		memcpy(st->comps[c].color, colour, sizeof colour);
		ck_assert(st->comps[c].brightness == 1.0f); /* sim_state_alloc's default */
	}
	for (size_t i = 0; i < n; i++)
		st->comp[i] = (uint16_t)(i % (size_t)ncomp);
}

static void set_body(struct sim_state *st, size_t i, double x, double y, double z, double m)
{
	double p[3];
	unproject_std(x, y, z, p);
	for (int d = 0; d < 3; d++)
		st->pos[3 * i + d] = p[d] * u_test.length;
	st->mass[i] = m * u_test.mass;
}

static struct scene *stars_scene(double fwhm)
{
	struct scene *sc = render_test_scene(W, H, SCENE_KERNEL_CUBIC, 0.3);
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.psf_fwhm = fwhm;
	return sc;
}

/* Sum of channel c over the columns [i0, i1) of img. */
static double cols_total(const struct render_image *img, int c, int i0, int i1)
{
	double s = 0;
	for (int j = 0; j < img->h; j++)
		for (int i = i0; i < i1; i++)
			s += img->rgb[3 * ((size_t)j * img->w + i) + c];
	return s;
}

static double lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0;
}

/* (1) One body at 50 random sub-pixel positions, its PSF inside the frame:
 * each channel totals mass x brightness x colour within 1e-6 relative. */
START_TEST(one_body_deposits_its_light_exactly)
{
	const double fwhm[] = {1.5, 0.5, 8.0};
	uint64_t seed = 12345;
	for (int f = 0; f < 3; f++) {
		struct scene *sc = stars_scene(fwhm[f]);
		double margin = ceil(3 * fwhm[f] / 2.3548) + 2; /* R + 1 */
		struct sim_state st;
		state_new(&st, 1, 1);
		st.comps[0].brightness = 2.5f;
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
		for (int k = 0; k < 50; k++) {
			double x = margin + (W - 2 * margin) * lcg(&seed);
			double y = margin + (H - 2 * margin) * lcg(&seed);
			double z = 3 + 30 * lcg(&seed), m = 0.1 + lcg(&seed);
			set_body(&st, 0, x, y, z, m);
			render_image_clear(&img);
			ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
			for (int c = 0; c < 3; c++) {
				double want = m * 2.5 * colour[c], got = cols_total(&img, c, 0, W);
				ck_assert_msg(fabs(got - want) <= 1e-6 * want,
					      "fwhm %g body at (%.4f, %.4f) channel %d: %.9g, want %.9g",
					      fwhm[f], x, y, c, got, want);
			}
			/* More than one pixel lit: light is spread, not dropped in one */
			if (fwhm[f] >= 1.5) {
				int lit = 0;
				for (int p = 0; p < W * H; p++)
					lit += img.rgb[3 * p] > 0;
				ck_assert_int_ge(lit, 4);
			}
		}
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* Variance of the image about (cx, cy) along x and y (channel 0). */
static void image_variance(const struct render_image *img, double cx, double cy, double *vx,
			   double *vy)
{
	double s = 0, sx = 0, sy = 0;
	for (int j = 0; j < img->h; j++)
		for (int i = 0; i < img->w; i++) {
			double v = img->rgb[3 * ((size_t)j * img->w + i)];
			s += v;
			sx += v * (i + 0.5 - cx) * (i + 0.5 - cx);
			sy += v * (j + 0.5 - cy) * (j + 0.5 - cy);
		}
	*vx = sx / s;
	*vy = sy / s;
}

/* (2) A body at a pixel centre: the image's variance along x and y is
 * sigma^2 + 1/12 within 2%, the same at depth 4 and at depth 40 (the PSF
 * is fixed in pixels, not in world units). */
START_TEST(psf_second_moment_is_sigma2_plus_twelfth)
{
	const double fwhm[] = {1.5, 3.0};
	for (int f = 0; f < 2; f++) {
		struct scene *sc = stars_scene(fwhm[f]);
		sc->render.smoothing_adaptive = 1; /* bypassed in this style */
		double sigma = fwhm[f] / (2 * sqrt(2 * log(2.0)));
		double want = sigma * sigma + 1.0 / 12;
		struct sim_state st;
		state_new(&st, 1, 1);
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
		const double depth[] = {4, 40};
		for (int d = 0; d < 2; d++) {
			double cx = 30.5, cy = 20.5;
			set_body(&st, 0, cx, cy, depth[d], 1.0);
			render_image_clear(&img);
			ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
			double vx, vy;
			image_variance(&img, cx, cy, &vx, &vy);
			printf("fwhm %g depth %g: variance x %.6f y %.6f, sigma^2 + 1/12 = %.6f\n",
			       fwhm[f], depth[d], vx, vy, want);
			ck_assert_msg(fabs(vx / want - 1) <= 0.02 && fabs(vy / want - 1) <= 0.02,
				      "fwhm %g depth %g: variance %.6f, %.6f, want %.6f", fwhm[f],
				      depth[d], vx, vy, want);
		}
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* (4) Two components of brightness 1 and 3, same colour, mass and count,
 * one in each half of the frame: the halves hold light in ratio 3, in
 * both styles; brightness 0 (like colour black) deposits nothing. */
START_TEST(brightness_scales_a_component)
{
	for (int style = 0; style < 2; style++) {
		struct scene *sc = stars_scene(1.5);
		sc->render.style = style ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
		struct sim_state st;
		state_new(&st, 20, 2);
		st.comps[1].brightness = 3.0f;
		uint64_t seed = 99;
		for (size_t i = 0; i < st.n; i++) {
			double x = 6 + 20 * lcg(&seed) + (i % 2 ? W / 2 : 0);
			set_body(&st, i, x, 6 + (H - 12) * lcg(&seed), 10, 0.5);
		}
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, W, H), 0);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		for (int c = 0; c < 3; c++) {
			double a = cols_total(&img, c, 0, W / 2), b = cols_total(&img, c, W / 2, W);
			ck_assert_msg(fabs(b / a - 3) <= 1e-5, "style %d channel %d: ratio %.9g",
				      style, c, b / a);
			ck_assert_msg(fabs(a - 10 * 0.5 * colour[c]) <= 1e-5 * a, "style %d: %.9g",
				      style, a);
		}
		st.comps[1].brightness = 0.0f;
		render_image_clear(&img);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		ck_assert(cols_total(&img, 0, W / 2, W) == 0.0);
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* The brightness keys reach the components (spheres, and each part of a
 * disk galaxy), default 1; render.style and render.psf_fwhm load. */
START_TEST(brightness_keys_reach_components)
{
	static struct scene sc;
	const char *text = "bodies:\n"
			   "  - {name: a, model: plummer, count: 10}\n"
			   "  - {name: b, model: plummer, count: 10, brightness: 3}\n"
			   "  - {name: g, model: disk-galaxy, disk: {count: 50, brightness: 2},\n"
			   "     bulge: {count: 20, brightness: 0.5}, halo: {count: 30}}\n"
			   "render: {style: stars, psf_fwhm: 2.5}\n";
	ck_assert_int_eq(load_str(text, NULL, 0, &sc), 0);
	ck_assert_int_eq(sc.render.style, SCENE_STYLE_STARS);
	ck_assert(sc.render.psf_fwhm == 2.5);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	ck_assert_int_eq(st.ncomp, 5);
	const float want[5] = {1, 3, 2, 0.5f, 1};
	for (int c = 0; c < 5; c++)
		ck_assert_msg(st.comps[c].brightness == want[c], "%s: brightness %g, want %g",
			      st.comps[c].name, st.comps[c].brightness, want[c]);
	sim_state_free(&st);
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\n", NULL, 0, &sc), 0);
	ck_assert_int_eq(sc.render.style, SCENE_STYLE_STARS); /* the default look */
	ck_assert(sc.render.psf_fwhm == 1.5 && sc.bodies[0].brightness == 1);
	const char *bad[] = {"render.psf_fwhm=0.2", "render.psf_fwhm=9", "bodies.0.brightness=-1",
			     "render.style=points"};
	for (int k = 0; k < 4; k++)
		ck_assert_msg(load_str("bodies: [{name: a, model: plummer}]\n", &bad[k], 1, &sc) ==
				      NB_EINPUT,
			      "%s accepted", bad[k]);
}
END_TEST

/* (3) The fog measure on plummer-small: the default look (stars,
 * filmic, auto exposure, glow) and stars with adaptive smoothing asked for
 * too (bypassed) light at most 30% of the pixels; the smooth style with
 * adaptive smoothing fogs the frame (the 99%). */
START_TEST(stars_do_not_fog_plummer_small)
{
	double look = plummer_lit("");
	double stars = plummer_lit("--set render.style=stars --set render.smoothing=adaptive");
	double adaptive = plummer_lit("--set render.style=smooth --set render.smoothing=adaptive "
				      "--set render.tonemap=asinh --set render.exposure=1 "
				      "--set render.glow=0");
	double fixed = plummer_lit("--set render.style=smooth");
	printf("plummer-small frame 0 lit (> 2%% of max): default look %.1f%%, stars %.1f%%, "
	       "smooth adaptive %.1f%%, smooth fixed %.1f%%\n",
	       100 * look, 100 * stars, 100 * adaptive, 100 * fixed);
	ck_assert_msg(look <= 0.30, "the default look lights %.1f%% of the pixels", 100 * look);
	ck_assert_msg(stars <= 0.30, "stars light %.1f%% of the pixels", 100 * stars);
	ck_assert_msg(stars > 0.01, "stars light only %.2f%% of the pixels", 100 * stars);
	ck_assert_msg(adaptive > 0.9, "smooth adaptive lights only %.1f%%", 100 * adaptive);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_stars");
	TCase *tc = tcase_create("stars");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_body_deposits_its_light_exactly);
	tcase_add_test(tc, psf_second_moment_is_sigma2_plus_twelfth);
	tcase_add_test(tc, brightness_scales_a_component);
	tcase_add_test(tc, brightness_keys_reach_components);
	tcase_add_test(tc, stars_do_not_fog_plummer_small);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
