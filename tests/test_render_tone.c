/* test_render_tone.c - render.tonemap: filmic and render.exposure: auto on
 * the CPU (render/tone_shared.h, render/autoexp.c, render/tonemap.c),
 * against formulas written out here: the curve u / (1 + u), u = Y (1 +
 * Y / W^2); colour ratios kept below the knee; hue kept above it; the
 * issue's colour measure against today's per-channel asinh; the auto
 * exposure's percentile, convergence and per-frame step; the keys. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* the util headers' other helpers */
#include "test_output_util.h"
#include "test_render_util.h"
#include "test_scene_util.h"
#pragma GCC diagnostic pop
#include "../render/render.h"
#include "../render/tone_shared.h"

#define WHITE 8.0

/* The curve as the docs write it, computed here on its own. */
static double curve_expect(double y, double w)
{
	double u = y + y * y / (w * w);
	return u / (1.0 + u);
}

static double lum(const double c[3])
{
	return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

/* HSV hue in degrees, 0 for a grey (no hue). */
static double hue_deg(const double c[3])
{
	double mx = fmax(c[0], fmax(c[1], c[2])), mn = fmin(c[0], fmin(c[1], c[2]));
	double d = mx - mn;
	if (!(d > 1e-12))
		return 0.0;
	double h;
	if (mx == c[0])
		h = fmod((c[1] - c[2]) / d + 6.0, 6.0);
	else if (mx == c[1])
		h = (c[2] - c[0]) / d + 2.0;
	else
		h = (c[0] - c[1]) / d + 4.0;
	return 60.0 * h;
}

static double hue_diff(double a, double b)
{
	double d = fabs(a - b);
	return d > 180.0 ? 360.0 - d : d;
}

/* (1) Below the knee, where every channel fits, out = c Y'/Y: the r:g:b
 * ratios are the input's and the luminance is the curve's. */
START_TEST(filmic_keeps_chromaticity_below_knee)
{
	static const double cols[4][3] = {{4, 1, 0.25}, {0.5, 0.25, 0.1}, {0.2, 0.5, 1}, {1, 1, 1}};
	int tested = 0;
	for (int i = 0; i < 4; i++) {
		for (double k = 1e-4; k < 100; k *= 1.5) {
			double c[3] = {k * cols[i][0], k * cols[i][1], k * cols[i][2]}, out[3];
			double y = lum(c), yt = curve_expect(y, WHITE);
			if (yt >= RENDER_FILMIC_KNEE || fmax(c[0], fmax(c[1], c[2])) * yt / y > 1)
				continue;
			render_filmic_rgb(c, WHITE, out);
			for (int a = 0; a < 3; a++) {
				int b = (a + 1) % 3;
				ck_assert_close(out[a] / out[b], cols[i][a] / cols[i][b], 0, 1e-3);
			}
			ck_assert_close(lum(out), yt, 0, 1e-9);
			tested++;
		}
	}
	ck_assert_int_ge(tested, 40);
	/* (4, 1, 0.25) at k = 0.3: Y = 0.475095, u = 0.478622, Y' = 0.323694
	 * by hand; red = 1.2 Y' / Y = 0.817591. */
	double c[3] = {1.2, 0.3, 0.075}, out[3];
	render_filmic_rgb(c, WHITE, out);
	ck_assert_close(out[0], 0.817591, 1e-6, 0);
	ck_assert_close(out[1] / out[0], 0.25, 0, 1e-12);
}
END_TEST

/* Above the knee and where a channel would pass 1: luminance Y', hue of the
 * input, saturation falling to 0 as Y' -> 1, every channel in [0, 1]. */
START_TEST(filmic_keeps_hue_and_luminance_above_knee)
{
	static const double cols[3][3] = {{4, 1, 0.25}, {0.5, 0.25, 0.1}, {0.2, 0.5, 1}};
	for (int i = 0; i < 3; i++) {
		double h0 = hue_deg(cols[i]), last_sat = 2;
		for (double k = 1; k < 1e5; k *= 2) {
			double c[3] = {k * cols[i][0], k * cols[i][1], k * cols[i][2]}, out[3];
			double yt = curve_expect(lum(c), WHITE);
			render_filmic_rgb(c, WHITE, out);
			double mx = fmax(out[0], fmax(out[1], out[2])), mn = fmin(out[0], fmin(out[1], out[2]));
			ck_assert(mn >= 0 && mx <= 1);
			ck_assert_close(lum(out), yt, 1e-9, 0);
			if (mx - mn > 1e-6)
				ck_assert_close(hue_diff(hue_deg(out), h0), 0, 1e-3, 0);
			double sat = (mx - mn) / mx;
			if (yt > RENDER_FILMIC_KNEE) {
				ck_assert(sat <= last_sat + 1e-12);
				last_sat = sat;
			}
		}
		ck_assert(last_sat < 0.01); /* white at the end */
	}
}
END_TEST

/* (2) The curve: the formula; slope 1 at 0; strictly increasing and below 1
 * up to Y = 1e6; (W + 1) / (W + 2) at W; no corner anywhere (left and right
 * difference quotients agree; a clamp at W, as extended Reinhard needs,
 * would differ by its whole slope there). */
START_TEST(filmic_curve_monotone_below_one_smooth)
{
	ck_assert_close(render_filmic_curve(WHITE, WHITE), 9.0 / 10.0, 1e-15, 0);
	ck_assert_close(render_filmic_curve(1e-9, WHITE) / 1e-9, 1.0, 1e-8, 0);
	ck_assert(render_filmic_curve(0, WHITE) == 0);
	double prev = 0;
	for (double y = 1e-6; y <= 1e6; y *= 1.01) {
		double f = render_filmic_curve(y, WHITE);
		ck_assert_close(f, curve_expect(y, WHITE), 1e-14, 0);
		ck_assert(f > prev && f < 1.0);
		prev = f;
	}
	ck_assert(render_filmic_curve(1e6, WHITE) < 1.0);
	const double h = 1e-6;
	double worst = 0;
	for (double y = 0.01; y <= 5 * WHITE; y += 0.01) {
		double left = (render_filmic_curve(y, WHITE) - render_filmic_curve(y - h, WHITE)) / h;
		double right = (render_filmic_curve(y + h, WHITE) - render_filmic_curve(y, WHITE)) / h;
		worst = fmax(worst, fabs(left - right) / right);
	}
	printf("filmic curve: worst relative jump of the slope on [0.01, 40]: %.2e\n", worst);
	ck_assert(worst < 1e-3);
	/* The inverse used by the auto exposure's target. */
	for (double t = 0.05; t < 0.99; t += 0.05)
		ck_assert_close(render_filmic_curve(render_filmic_inverse(t, WHITE), WHITE), t, 1e-12, 0);
}
END_TEST

/* The colour is C1 as it crosses the knee (smoothstep starts flat): a pale
 * colour's red channel as the light grows. */
START_TEST(filmic_colour_smooth_at_knee)
{
	static const double col[3] = {1, 0.9, 0.8};
	double yk = render_filmic_inverse(RENDER_FILMIC_KNEE, WHITE) / lum(col);
	const double h = 1e-6 * yk;
	for (int s = -2; s <= 2; s++) {
		double k = yk * (1 + 0.001 * s), o[3][3];
		for (int j = 0; j < 3; j++) {
			double c[3] = {(k + (j - 1) * h) * col[0], (k + (j - 1) * h) * col[1],
				       (k + (j - 1) * h) * col[2]};
			render_filmic_rgb(c, WHITE, o[j]);
		}
		double left = (o[1][0] - o[0][0]) / h, right = (o[2][0] - o[1][0]) / h;
		ck_assert_close(left, right, 0, 1e-3);
	}
}
END_TEST

/* Tone map two pixels (bulge and disk colours times I) at gain 1, gamma
 * 2.2, and return the hue difference of the 16-bit results. */
static double tone_hue_diff(enum scene_tonemap tm, double I)
{
	static const float bulge[3] = {1, 0.8f, 0.5f}, disk[3] = {0.5f, 0.7f, 1};
	struct scene *sc = render_test_scene(16, 16, SCENE_KERNEL_CUBIC, 0.1);
	sc->render.tonemap = tm;
	sc->render.gamma = 2.2;
	sc->render.white = WHITE;
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 16, 16), 0);
	for (int c = 0; c < 3; c++) {
		img.rgb[c] = (float)I * bulge[c];
		img.rgb[3 + c] = (float)I * disk[c];
	}
	uint16_t *o = malloc(16 * 16 * 3 * sizeof *o);
	render_tonemap_gain(sc, &img, 1.0, o);
	double a[3], b[3];
	for (int c = 0; c < 3; c++) {
		a[c] = o[c] / 65535.0;
		b[c] = o[3 + c] / 65535.0;
	}
	free(o);
	render_image_free(&img);
	free(sc);
	return hue_diff(hue_deg(a), hue_deg(b));
}

/* (3) The colour measure, small: bulge [1, 0.8, 0.5] (hue 36) and
 * disk [0.5, 0.7, 1] (hue 216) differ by 180 degrees. At intensities where
 * asinh (today's default, per channel) has every channel at 1, filmic
 * keeps at least 60% of that difference; asinh keeps less. */
START_TEST(filmic_keeps_populations_apart)
{
	static const double in_bulge[3] = {1, 0.8, 0.5}, in_disk[3] = {0.5, 0.7, 1};
	double want = hue_diff(hue_deg(in_bulge), hue_deg(in_disk));
	ck_assert_close(want, 180.0, 1e-9, 0);
	static const double levels[3] = {2, 4, 10};
	for (int i = 0; i < 3; i++) {
		double f = tone_hue_diff(SCENE_TONEMAP_FILMIC, levels[i]);
		double s = tone_hue_diff(SCENE_TONEMAP_ASINH, levels[i]);
		printf("bulge/disk hue difference at %g: input 180, filmic %.1f (%.0f%%), asinh %.1f (%.0f%%)\n",
		       levels[i], f, 100 * f / want, s, 100 * s / want);
		ck_assert(f >= 0.6 * want);
		ck_assert(s < 0.6 * want);
	}
}
END_TEST

/* An image whose lit pixels are greys 10^(4 i / n), i < n (Y equals the
 * grey), times s; the rest dark. */
static void fill_ramp(struct render_image *img, int n, double s)
{
	render_image_clear(img);
	for (int i = 0; i < n; i++)
		for (int c = 0; c < 3; c++)
			img->rgb[3 * (size_t)(2 * i) + c] = (float)(s * pow(10.0, 4.0 * i / n));
}

static struct scene *auto_scene(double smoothing)
{
	struct scene *sc = render_test_scene(128, 64, SCENE_KERNEL_CUBIC, 0.1);
	sc->render.tonemap = SCENE_TONEMAP_FILMIC;
	sc->render.white = WHITE;
	sc->render.exposure_auto = 1;
	sc->render.auto_percentile = 99.5;
	sc->render.auto_smoothing = smoothing;
	return sc;
}

/* The 99.5th percentile of the lit pixels goes to 0.8 after the curve: the
 * gain is Y_t / P with Y_t = 32 (sqrt(1.25) - 1) (u = 4 at W = 8) and P =
 * 10^(4 * 0.995) for the ramp, within the histogram's resolution (one bin,
 * 3/16 stop = 13.9%: the interpolation assumes the percentile's bin evenly
 * filled; here the ramp ends inside it, 2.1% off). */
START_TEST(auto_exposure_sets_percentile_to_target)
{
	struct scene *sc = auto_scene(10);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 128, 64), 0);
	const int n = 4000;
	fill_ramp(&img, n, 1.0);
	struct render_auto_state st = {0};
	render_auto_exposure(sc, &img, &st);
	double yt = 32.0 * (sqrt(1.25) - 1.0), p = pow(10.0, 4.0 * 0.995);
	printf("auto exposure: gain %.6g, expected %.6g\n", st.gain, yt / p);
	ck_assert_close(st.gain, yt / p, 0, 0.139);
	ck_assert_close(render_filmic_curve(st.gain * p, WHITE), 0.8, 0.03, 0);
	ck_assert_int_eq(st.frames, 1);
	/* Dark frame: the state is kept. */
	struct render_auto_state before = st;
	render_image_clear(&img);
	render_auto_exposure(sc, &img, &st);
	ck_assert(st.gain == before.gain && st.frames == 1);
	/* render_tonemap alone (no state) uses the frame's own auto exposure:
	 * the brightest pixel of the ramp maps above 0.8 but below 1. */
	fill_ramp(&img, n, 1.0);
	sc->render.gamma = 1;
	uint16_t *o = malloc((size_t)128 * 64 * 3 * sizeof *o);
	render_tonemap(sc, &img, o);
	double top = o[3 * (size_t)(2 * (n - 1))] / 65535.0;
	ck_assert(top > 0.8 && top < 1.0);
	free(o);
	render_image_free(&img);
	free(sc);
}
END_TEST

/* (4) Frames 0-19 the ramp, then 60 frames of it 10x brighter, time
 * constant 10 frames: the first step after the jump moves log gain by
 * alpha ln 10 exactly (alpha = 1 - exp(-1/10)), and no step by more; after
 * convergence the gain is 10x smaller (within 10%). */
START_TEST(auto_exposure_converges_without_flicker)
{
	struct scene *sc = auto_scene(10);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 128, 64), 0);
	struct render_auto_state st = {0};
	const double alpha = 1.0 - exp(-0.1);
	fill_ramp(&img, 3000, 1.0);
	for (int f = 0; f < 20; f++)
		render_auto_exposure(sc, &img, &st);
	double g_dim = st.gain, prev = st.gain;
	fill_ramp(&img, 3000, 10.0);
	for (int f = 0; f < 60; f++) {
		render_auto_exposure(sc, &img, &st);
		double step = fabs(log(st.gain / prev));
		if (f == 0)
			ck_assert_close(step, alpha * log(10.0), 0, 1e-3);
		ck_assert(step <= alpha * log(10.0) * (1 + 1e-3));
		ck_assert(st.gain < prev);
		prev = st.gain;
	}
	printf("auto exposure: gain ratio after 60 frames of 10x light: %.4f (want 0.1)\n",
	       st.gain / g_dim);
	ck_assert_close(st.gain / g_dim, 0.1, 0, 0.1);
	render_image_free(&img);
	free(sc);
}
END_TEST

/* The keys: exposure a number or the word auto; tonemap filmic; defaults. */
#define BODIES "bodies: [{name: p, model: plummer, count: 10}]\n"
static struct scene sc;
START_TEST(keys_exposure_auto_and_filmic)
{
	ck_assert_int_eq(load_str(BODIES "render: {exposure: auto, tonemap: filmic}\n", NULL, 0, &sc), 0);
	ck_assert_int_eq(sc.render.exposure_auto, 1);
	ck_assert_int_eq(sc.render.tonemap, SCENE_TONEMAP_FILMIC);
	ck_assert(sc.render.white == 8 && sc.render.auto_percentile == 99.5 &&
		  sc.render.auto_smoothing == 10);
	const char *ov[] = {"render.exposure=2.5"};
	ck_assert_int_eq(load_str(BODIES "render: {exposure: auto}\n", ov, 1, &sc), 0);
	ck_assert_int_eq(sc.render.exposure_auto, 0);
	ck_assert(sc.render.exposure == 2.5);
	ck_assert_int_eq(load_str(BODIES "render: {exposure: automatic}\n", NULL, 0, &sc), NB_EINPUT);
	ck_assert_ptr_nonnull(strstr(g_err, "render.exposure"));
	ck_assert_ptr_nonnull(strstr(g_err, "the word auto"));
	ck_assert_int_eq(load_str(BODIES "render: {smoothing: auto}\n", NULL, 0, &sc), NB_EINPUT);
	ck_assert_ptr_nonnull(strstr(g_err, "the word adaptive"));
	(void)load_file;
}
END_TEST

/* render.exposure's precedence (render/exposure.c), written from the rule:
 * keys with an exposure win over auto, auto over the number. Under keys a
 * frame's exposure is the keys' (2 at frame 0, 8 at frame 2, linear ease:
 * 4 at frame 1, the geometric mean), under the number render.exposure,
 * under auto none (0); the glow's threshold exposure is the number alone,
 * else 1. A manual exposure e gives the gain e / reference; auto gives its
 * state's gain, the state stepped once. */
START_TEST(exposure_precedence_is_one_rule)
{
	struct scene *sc = render_test_scene(8, 8, SCENE_KERNEL_CUBIC, 1);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 8, 8), 0);
	for (size_t i = 0; i < 8 * 8 * 3; i++)
		img.rgb[i] = (float)(1 + i % 5);
	const double ref = render_tonemap_reference(&img);
	struct render_auto_state st = {0};
	sc->render.exposure = 3;
	ck_assert_int_eq(render_exposure_mode(sc), RENDER_EXPOSURE_NUMBER);
	ck_assert_double_eq(render_exposure_at(sc, 5), 3.0);
	ck_assert_double_eq(render_exposure_fixed(sc), 3.0);
	ck_assert_double_eq(render_exposure_gain(sc, 5, &img, &st), 3.0 / ref);
	ck_assert_int_eq(st.frames, 0);
	sc->render.exposure_auto = 1;
	ck_assert_int_eq(render_exposure_mode(sc), RENDER_EXPOSURE_AUTO);
	ck_assert_double_eq(render_exposure_at(sc, 5), 0.0);
	ck_assert_double_eq(render_exposure_fixed(sc), 1.0);
	const double g = render_exposure_gain(sc, 5, &img, &st);
	ck_assert_int_eq(st.frames, 1);
	ck_assert_double_eq(g, st.gain);
	ck_assert_double_gt(g, 0.0);
	sc->camera.nkeys = 2;
	sc->camera.keys[0].frame = 0;
	sc->camera.keys[0].exposure = 2;
	sc->camera.keys[0].has_exposure = 1;
	sc->camera.keys[1].frame = 2;
	sc->camera.keys[1].exposure = 8;
	sc->camera.keys[1].has_exposure = 1;
	ck_assert_int_eq(render_exposure_mode(sc), RENDER_EXPOSURE_KEYS);
	ck_assert_double_eq(render_exposure_at(sc, 0), 2.0);
	ck_assert_double_eq_tol(render_exposure_at(sc, 1), 4.0, 1e-12);
	ck_assert_double_eq(render_exposure_at(sc, 7), 8.0);
	ck_assert_double_eq(render_exposure_fixed(sc), 1.0);
	ck_assert_double_eq(render_exposure_gain(sc, 2, &img, &st), 8.0 / ref);
	ck_assert_int_eq(st.frames, 1); /* auto is not stepped under keys */
	render_image_free(&img);
	free(sc);
}
END_TEST

/* Exposure keys, end to end by the program (NB_BIN) on
 * tests/data/plummer-small.yaml (CPU backend, glow off: its threshold
 * counts a keyed exposure as 1, a fixed one as itself): keys 1 at frame 0
 * and 4 at frame 2 (ease in-out: s = 1/2 stays 1/2) give frame 0 the
 * pixels of render.exposure 1 and frame 1 those of render.exposure 2
 * (the geometric mean), whatever render.exposure says (auto here). */
static uint16_t *keyed_frame(const char *sets, int frame, int *npx)
{
	make_tmpdir();
	char cmd[2000], path[400];
	snprintf(cmd, sizeof cmd,
		 "'%s' tests/data/plummer-small.yaml --backend cpu -q --set output.frames=3 "
		 "--set output.video= --set output.stats= --set output.initial_state= "
		 "--set output.final_state= --set output.png_depth=16 --set render.glow=0 "
		 "--set output.png_dir=%s/frames %s",
		 nb_bin(), g_dir, sets);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	snprintf(path, sizeof path, "%s/frames/frame_%05d.png", g_dir, frame);
	int w, h, depth;
	uint16_t *px = read_png(path, &w, &h, &depth);
	*npx = w * h * 3;
	rm_tree(g_dir);
	return px;
}

START_TEST(exposure_keys_equal_manual_exposure_end_to_end)
{
	const char *keys = "--set render.exposure=auto --set 'camera.keys=["
			   "{frame: 0, position: [0, -8, 3], target: [0, 0, 0], exposure: 1},"
			   "{frame: 2, position: [0, -8, 3], target: [0, 0, 0], exposure: 4, "
			   "ease: in-out}]'";
	for (int f = 0; f < 2; f++) {
		int n1, n2;
		uint16_t *a = keyed_frame(keys, f, &n1);
		uint16_t *b = keyed_frame(f ? "--set render.exposure=2" : "--set render.exposure=1", f,
					  &n2);
		ck_assert_int_eq(n1, n2);
		int differ = 0;
		double sum = 0;
		for (int k = 0; k < n1; k++) {
			differ += a[k] != b[k];
			sum += a[k];
		}
		ck_assert_msg(differ == 0, "frame %d: %d values differ", f, differ);
		ck_assert(sum > 0);
		free(a);
		free(b);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_tone");
	TCase *tc = tcase_create("filmic_auto");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, filmic_keeps_chromaticity_below_knee);
	tcase_add_test(tc, filmic_keeps_hue_and_luminance_above_knee);
	tcase_add_test(tc, filmic_curve_monotone_below_one_smooth);
	tcase_add_test(tc, filmic_colour_smooth_at_knee);
	tcase_add_test(tc, filmic_keeps_populations_apart);
	tcase_add_test(tc, auto_exposure_sets_percentile_to_target);
	tcase_add_test(tc, auto_exposure_converges_without_flicker);
	tcase_add_test(tc, keys_exposure_auto_and_filmic);
	tcase_add_test(tc, exposure_precedence_is_one_rule);
	tcase_add_test(tc, exposure_keys_equal_manual_exposure_end_to_end);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
