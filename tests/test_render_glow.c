/* test_render_glow.c - render.glow (render/glow.c, rule in
 * render/glow_shared.h) on hand-made HDR images.
 *
 * Expectations are formulas: the total light is kept (sum before = after);
 * a pixel of luminance Y above T = glow_threshold * ref / exposure keeps
 * (1 - glow (Y - T) / Y) of its light plus its share of the halo; a single
 * bright pixel spreads into a halo that falls monotonically with distance;
 * images with no pixel above T, and glow 0, are returned bit for bit; the
 * halo's spread and its light near and far match the pyramid's scales
 * (2 to 16 px cells) as the rule's variances predict.
 * render.psf_wing (render_wing) is the same halo at threshold 0 with level
 * l weighted by 2^((2 - 2 beta)(l - 1)): the same formulas, weighted.
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_glow &&
 *   build-cpu/tests/test_render_glow */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "test_render_util.h"

static struct render_image image_new(int w, int h, uint64_t seed, float base)
{
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
	for (size_t k = 0; k < (size_t)w * h * 3; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		img.rgb[k] = base * (float)((x >> 40) & 0xffff) / 65536.0f;
	}
	return img;
}

static double total(const struct render_image *img)
{
	double s = 0;
	for (size_t k = 0; k < (size_t)img->w * img->h * 3; k++)
		s += img->rgb[k];
	return s;
}

static void set_px(struct render_image *img, int i, int j, float r, float g, float b)
{
	float *p = img->rgb + 3 * ((size_t)j * img->w + i);
	p[0] = r;
	p[1] = g;
	p[2] = b;
}

static struct scene *glow_scene(int w, int h, double glow, double thr)
{
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1.0);
	sc->render.glow = glow;
	sc->render.glow_threshold = thr;
	return sc;
}

START_TEST(glow_zero_is_bit_identical)
{
	struct scene *sc = glow_scene(64, 48, 0.0, 0.0);
	struct render_image img = image_new(64, 48, 1, 100.0f), ref = image_new(64, 48, 1, 100.0f);
	ck_assert_int_eq(render_glow(sc, &img), 0);
	ck_assert(memcmp(img.rgb, ref.rgb, 64 * 48 * 3 * sizeof(float)) == 0);
	render_image_free(&img);
	render_image_free(&ref);
	free(sc);
}
END_TEST

/* Values in [0, 1): ref = 50 * mean ~ 25, T = ref at threshold 1: no pixel
 * reaches it. */
START_TEST(below_threshold_is_bit_identical)
{
	struct scene *sc = glow_scene(64, 48, 0.5, 1.0);
	struct render_image img = image_new(64, 48, 2, 1.0f), ref = image_new(64, 48, 2, 1.0f);
	double thr = render_glow_threshold_abs(sc, render_tonemap_reference(&img));
	ck_assert_double_gt(thr, 1.0);
	ck_assert_int_eq(render_glow(sc, &img), 0);
	ck_assert(memcmp(img.rgb, ref.rgb, 64 * 48 * 3 * sizeof(float)) == 0);
	render_image_free(&img);
	render_image_free(&ref);
	free(sc);
}
END_TEST

/* Bright coloured spots away from the edges on a faint background; also
 * with spots on the frame's edges and a width that is no multiple of 8
 * (renormalised at the edges: no light lost there either). */
START_TEST(glow_conserves_energy)
{
	for (int edge = 0; edge < 2; edge++) {
		int w = edge ? 150 : 160, h = edge ? 101 : 120;
		struct scene *sc = glow_scene(w, h, 0.6, 1.0);
		struct render_image img = image_new(w, h, 3, 0.01f);
		set_px(&img, 80, 60, 500, 300, 100);
		set_px(&img, 60, 50, 50, 200, 400);
		set_px(&img, 100, 70, 900, 900, 900);
		if (edge) {
			set_px(&img, 0, 0, 800, 100, 100);
			set_px(&img, w - 1, h / 2, 100, 800, 100);
			set_px(&img, w / 3, h - 1, 100, 100, 800);
		}
		float before = img.rgb[3 * (60 * (size_t)w + 80)];
		double t0 = total(&img);
		ck_assert_int_eq(render_glow(sc, &img), 0);
		double t1 = total(&img);
		printf("glow edge=%d: total %.9g -> %.9g\n", edge, t0, t1);
		ck_assert_close(t1, t0, 0, 1e-5);
		ck_assert_float_lt(img.rgb[3 * (60 * (size_t)w + 80)], 0.6f * before);
		render_image_free(&img);
		free(sc);
	}
}
END_TEST

/* One grey pixel of value L on black: ref = 50 L / (w h), T = ref, f = (L -
 * T) / L; the pixel keeps L (1 - glow f) plus its halo share, between
 * that and L; along the four axes the values fall strictly out to 40 px
 * and stay positive; total kept. */
START_TEST(point_becomes_point_plus_falling_halo)
{
	const int w = 136, h = 136, ci = 67, cj = 67;
	const double L = 1000.0, glow = 0.5;
	struct scene *sc = glow_scene(w, h, glow, 1.0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	set_px(&img, ci, cj, (float)L, (float)L, (float)L);
	double T = 50.0 * L / ((double)w * h), f = (L - T) / L;
	ck_assert_double_eq_tol(render_glow_threshold_abs(sc, render_tonemap_reference(&img)), T,
				1e-9 * T);
	ck_assert_int_eq(render_glow(sc, &img), 0);
	ck_assert_close(total(&img), 3 * L, 0, 1e-5);
	double centre = img.rgb[3 * ((size_t)cj * w + ci)];
	ck_assert_double_gt(centre, L * (1 - glow * f));
	ck_assert_double_lt(centre, L);
	const int dirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
	for (int d = 0; d < 4; d++) {
		double prev = centre;
		for (int r = 1; r <= 40; r++) {
			int i = ci + r * dirs[d][0], j = cj + r * dirs[d][1];
			double v = img.rgb[3 * ((size_t)j * w + i)];
			ck_assert_msg(v > 0 && v < prev, "dir %d r %d: %.9g after %.9g", d, r, v, prev);
			ck_assert_float_eq(img.rgb[3 * ((size_t)j * w + i) + 1], (float)v); /* grey kept */
			prev = v;
		}
	}
	render_image_free(&img);
	free(sc);
}
END_TEST

/* The halo's scales (glow_shared.h step 3): one grey point of value L at
 * pixel (p, p), p = 128, on black, glow 1, in a 256 x 256 frame. Level l
 * (cell c = 2^l px) spreads the point's light with a per-axis variance of
 * c^2 (the blur's 1 cell^2) plus 3/16 (2^m)^2 for each 2x
 * bilinear upsample from level m = l .. 1 (the tent's discrete weights
 * 1/4, 3/4 at +-1/4 and +-3/4 of a coarse cell), about a centre offset
 * from the point by o_l = (cell centre of the point's cell) - (p + 1/2)
 * along each axis; the halo is the four levels in equal shares. So the
 * halo's mean r^2 is the mean over l of 2 (var_l + o_l^2), and the
 * fractions of its light within 4 px and beyond 32 px those of the mixture
 * of the four 2D Gaussians (centred offsets neglected there): each within
 * the tolerances below (the pyramid's kernels are not Gaussian). */
START_TEST(halo_spans_2_to_16_px)
{
	const int w = 256, h = 256, p = 128;
	const double L = 1000.0;
	struct scene *sc = glow_scene(w, h, 1.0, 1.0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	set_px(&img, p, p, (float)L, (float)L, (float)L);
	double T = 50.0 * L / ((double)w * h);
	ck_assert_int_eq(render_glow(sc, &img), 0);
	double er2 = 0, in4 = 0, out32 = 0;
	for (int l = 1; l <= 4; l++) {
		double c = 1 << l, var = c * c, o = (floor(p / c) + 0.5) * c - (p + 0.5);
		for (int m = 1; m <= l; m++)
			var += 3.0 / 16.0 * (double)(1 << m) * (1 << m);
		er2 += 2 * (var + o * o) / 4;
		in4 += (1 - exp(-16 / (2 * var))) / 4;
		out32 += exp(-1024 / (2 * var)) / 4;
	}
	double tot = 0, r2 = 0, a4 = 0, b32 = 0;
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++) {
			double v = img.rgb[3 * ((size_t)j * w + i)];
			if (i == p && j == p)
				v -= T; /* the point keeps T: the rest of its light is halo */
			double d2 = (double)(i - p) * (i - p) + (double)(j - p) * (j - p);
			tot += v;
			r2 += v * d2;
			a4 += d2 <= 16 ? v : 0;
			b32 += d2 > 1024 ? v : 0;
		}
	printf("halo: rms %.2f px (rule %.2f), within 4 px %.3f (%.3f), beyond 32 px %.3f (%.3f)\n",
	       sqrt(r2 / tot), sqrt(er2), a4 / tot, in4, b32 / tot, out32);
	ck_assert_close(tot, L - T, 0, 1e-4);
	ck_assert_close(sqrt(r2 / tot), sqrt(er2), 0, 0.15);
	ck_assert_close(a4 / tot, in4, 0.05, 0);
	ck_assert_close(b32 / tot, out32, 0.03, 0);
	render_image_free(&img);
	free(sc);
}
END_TEST

/* The halo is round to its end: an isotropic halo has the same light at
 * the same distance along the axes and the diagonals. One point of light
 * in a 256 x 256 frame, glow 1: at 8 .. 72 px (down to 1e-7 of the point's
 * light) the diagonals' mean within 0.85 .. 1.35 of the axes' (the 2 x 2
 * cells and the bilinear upsample are not isotropic; seen 0.90 .. 1.27).
 * The 5-tap binomial blur before (1 4 6 4 1) / 16 ended at 1/6 of its
 * centre: a square halo, 1.59 at 56 px and nothing on the axes from 64 px
 * while the diagonals still had light (the step seen round every bright
 * clump of the default collision). */
START_TEST(halo_is_round_to_its_end)
{
	const int w = 256, h = 256, p = 128;
	struct scene *sc = glow_scene(w, h, 1.0, 1.0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	set_px(&img, p, p, 1000.0f, 1000.0f, 1000.0f);
	ck_assert_int_eq(render_glow(sc, &img), 0);
#define AT(x, y) ((double)img.rgb[3 * ((size_t)(y) * w + (x))])
	for (int r = 8; r <= 72; r += 8) {
		const int d = (int)lround(r / sqrt(2.0));
		const double ax = (AT(p + r, p) + AT(p - r, p) + AT(p, p + r) + AT(p, p - r)) / 4;
		const double dg = (AT(p + d, p + d) + AT(p - d, p - d) + AT(p + d, p - d) +
				   AT(p - d, p + d)) / 4;
		printf("halo at %d px: axes %.3e, diagonals %.3e (ratio %.3f)\n", r, ax, dg, dg / ax);
		ck_assert_msg(ax > 0 && dg / ax > 0.85 && dg / ax < 1.35,
			      "%d px: axes %.3e, diagonals %.3e", r, ax, dg);
	}
#undef AT
	render_image_free(&img);
	free(sc);
}
END_TEST

static struct scene *wing_scene(int w, int h, double wing, double beta)
{
	struct scene *sc = glow_scene(w, h, 0.0, 1.0);
	sc->render.psf_wing = wing;
	sc->render.psf_wing_beta = beta;
	return sc;
}

START_TEST(wing_zero_is_bit_identical)
{
	struct scene *sc = wing_scene(64, 48, 0.0, 1.5);
	struct render_image img = image_new(64, 48, 4, 100.0f), ref = image_new(64, 48, 4, 100.0f);
	ck_assert_int_eq(render_wing(sc, &img), 0);
	ck_assert(memcmp(img.rgb, ref.rgb, 64 * 48 * 3 * sizeof(float)) == 0);
	render_image_free(&img);
	render_image_free(&ref);
	free(sc);
}
END_TEST

/* Every lit pixel gives the fraction psf_wing of its light (threshold 0),
 * whatever its level: a faint background and bright spots, odd size,
 * spots on the edges: the total is kept, and a faint pixel far from the
 * spots keeps at least 1 - psf_wing of its light. */
START_TEST(wing_conserves_energy)
{
	const int w = 150, h = 101;
	struct scene *sc = wing_scene(w, h, 0.2, 2.0);
	struct render_image img = image_new(w, h, 5, 0.01f), ref = image_new(w, h, 5, 0.01f);
	set_px(&img, 80, 60, 500, 300, 100);
	set_px(&img, 0, 0, 800, 100, 100);
	set_px(&img, w - 1, h / 2, 100, 800, 100);
	double t0 = total(&img);
	ck_assert_int_eq(render_wing(sc, &img), 0);
	ck_assert_close(total(&img), t0, 0, 1e-5);
	size_t far = 3 * ((size_t)95 * w + 20);
	ck_assert_float_ge(img.rgb[far], 0.8f * ref.rgb[far] * 0.999f);
	ck_assert_float_lt(img.rgb[3 * ((size_t)60 * w + 80)], 0.81f * 500);
	render_image_free(&img);
	render_image_free(&ref);
	free(sc);
}
END_TEST

/* One grey point of value L, psf_wing f, at pixel (128, 128) of a 256^2
 * frame: the point keeps (1 - f) L and the wing holds f L, spread as the
 * glow's four levels (halo_spans_2_to_16_px's variances) weighted by c_l =
 * 2^((2 - 2 beta)(l - 1)) / sum: its rms radius and its light beyond 16
 * px follow from those weights. Larger beta: a tighter wing, Moffat-like
 * (beta 1 gives the glow's equal shares). */
START_TEST(wing_follows_moffat_weights)
{
	const int w = 256, h = 256, p = 128;
	const double L = 1000.0, f = 0.1;
	const double betas[3] = {1.0, 1.5, 3.0};
	double rms_prev = 1e30;
	for (int b = 0; b < 3; b++) {
		struct scene *sc = wing_scene(w, h, f, betas[b]);
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
		set_px(&img, p, p, (float)L, (float)L, (float)L);
		ck_assert_int_eq(render_wing(sc, &img), 0);
		double er2 = 0, out16 = 0, csum = 0;
		for (int l = 1; l <= 4; l++)
			csum += pow(2.0, (2 - 2 * betas[b]) * (l - 1));
		for (int l = 1; l <= 4; l++) {
			double cl = pow(2.0, (2 - 2 * betas[b]) * (l - 1)) / csum;
			double c = 1 << l, var = c * c, o = (floor(p / c) + 0.5) * c - (p + 0.5);
			for (int m = 1; m <= l; m++)
				var += 3.0 / 16.0 * (double)(1 << m) * (1 << m);
			er2 += cl * 2 * (var + o * o);
			out16 += cl * exp(-256 / (2 * var));
		}
		double tot = 0, r2 = 0, b16 = 0;
		for (int j = 0; j < h; j++)
			for (int i = 0; i < w; i++) {
				double v = img.rgb[3 * ((size_t)j * w + i)];
				if (i == p && j == p)
					v -= (1 - f) * L;
				double d2 = (double)(i - p) * (i - p) + (double)(j - p) * (j - p);
				tot += v;
				r2 += v * d2;
				b16 += d2 > 256 ? v : 0;
			}
		double rms = sqrt(r2 / tot);
		printf("wing beta %.1f: holds %.4f of the light (f %.2f), rms %.2f px (rule %.2f), "
		       "beyond 16 px %.3f (%.3f)\n",
		       betas[b], tot / L, f, rms, sqrt(er2), b16 / tot, out16);
		ck_assert_close(tot, f * L, 0, 1e-4);
		ck_assert_close(rms, sqrt(er2), 0, 0.15);
		ck_assert_close(b16 / tot, out16, 0.04, 0);
		ck_assert_double_lt(rms, rms_prev);
		rms_prev = rms;
		render_image_free(&img);
		free(sc);
	}
}
END_TEST

/* image b = image a turned by dx columns round the seam (b(i) = a(i - dx)). */
static void roll_x(const struct render_image *a, struct render_image *b, int dx)
{
	for (int j = 0; j < a->h; j++)
		for (int i = 0; i < a->w; i++)
			for (int c = 0; c < 3; c++)
				b->rgb[3 * ((size_t)j * a->w + (i + dx) % a->w) + c] =
					a->rgb[3 * ((size_t)j * a->w + i) + c];
}

/* camera.projection: equirectangular: the x axis is a circle, so the glow
 * wraps at the +-180 degree seam. A grey spot straddling the seam
 * (columns w-2, w-1, 0, 1 of rows 60-61; a body right behind the camera)
 * in a 256 x 128 frame, glow 0.6:
 *  - its glow is the mirror image of itself about the seam (pixel i and
 *    w-1-i alike): as much light bleeds onto the left edge as onto the
 *    right;
 *  - it is the glow of the same spot in the middle of the frame (columns
 *    126-129, far from every edge), turned by w/2: the seam is no edge
 *    (w/2 = 128 is a whole number of the coarsest 16 px cells);
 *  - a spot at columns 0-1 alone lights columns w-8 .. w-1 of its rows,
 *    which the perspective projection's clamped pyramid leaves at 0.
 * The poles (rows) stay clamped: a spot on row 0 does not light row h-1
 * as it lights row 0 (wrapped over the pole it would); only the far tail
 * of the coarsest level's Gaussian reaches down there (3.7e-9 of the row
 * 0 light's 1e3). */
START_TEST(glow_wraps_across_the_equirect_seam)
{
	const int w = 256, h = 128;
	const size_t nv = (size_t)w * h * 3;
	struct scene *sc = glow_scene(w, h, 0.6, 1.0);
	sc->camera.projection = SCENE_PROJ_EQUIRECT;
	struct render_image seam, mid, turned;
	ck_assert_int_eq(render_image_alloc(&seam, w, h), 0);
	ck_assert_int_eq(render_image_alloc(&mid, w, h), 0);
	ck_assert_int_eq(render_image_alloc(&turned, w, h), 0);
	const int cols[4] = {w - 2, w - 1, 0, 1};
	for (int k = 0; k < 4; k++)
		for (int j = 60; j < 62; j++) {
			float v = k == 1 || k == 2 ? 800.0f : 300.0f;
			set_px(&seam, cols[k], j, v, 0.8f * v, 0.6f * v);
		}
	roll_x(&seam, &mid, w / 2);
	ck_assert_int_eq(render_glow(sc, &seam), 0);
	ck_assert_int_eq(render_glow(sc, &mid), 0);
	roll_x(&mid, &turned, w / 2);
	double vmax = 0;
	for (size_t k = 0; k < nv; k++)
		vmax = fmax(vmax, seam.rgb[k]);
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++)
			for (int c = 0; c < 3; c++) {
				size_t p = 3 * ((size_t)j * w + i) + c, q = 3 * ((size_t)j * w + (w - 1 - i)) + c;
				ck_assert_msg(fabs(seam.rgb[p] - seam.rgb[q]) <= 1e-6 * vmax + 1e-5 * seam.rgb[p],
					      "mirror (%d,%d,%d): %.9g vs %.9g", i, j, c, seam.rgb[p], seam.rgb[q]);
				ck_assert_msg(fabs(seam.rgb[p] - turned.rgb[p]) <= 1e-6 * vmax + 1e-5 * turned.rgb[p],
					      "turned (%d,%d,%d): %.9g vs %.9g", i, j, c, seam.rgb[p], turned.rgb[p]);
			}
	/* the halo reaches ~50 px either side of the seam */
	ck_assert_double_gt(seam.rgb[3 * (60 * (size_t)w + w - 40)], 0.0);
	ck_assert_double_gt(seam.rgb[3 * (60 * (size_t)w + 39)], 0.0);

	/* one side of the seam only: the other edge gets light with wrap, none without */
	for (int proj = 0; proj < 2; proj++) {
		sc->camera.projection = proj ? SCENE_PROJ_EQUIRECT : SCENE_PROJ_PERSPECTIVE;
		render_image_clear(&seam);
		set_px(&seam, 0, 60, 900, 900, 900);
		set_px(&seam, 1, 60, 900, 900, 900);
		set_px(&seam, 100, 0, 900, 900, 900); /* a spot on the top row (a pole) */
		ck_assert_int_eq(render_glow(sc, &seam), 0);
		double right = 0, bottom = 0, top = 0;
		for (int i = w - 8; i < w; i++)
			right += seam.rgb[3 * (60 * (size_t)w + i)];
		for (int i = 90; i < 110; i++) {
			bottom += seam.rgb[3 * ((size_t)(h - 1) * w + i)];
			top += seam.rgb[3 * (size_t)i];
		}
		double left = seam.rgb[3 * (60 * (size_t)w + 7)];
		printf("glow %s: right edge of the seam row %.4g (8 px), column 7 %.4g, bottom row under "
		       "the top spot %.4g\n", proj ? "equirect" : "perspective", right, left, bottom);
		if (proj)
			ck_assert_double_gt(right, 8 * 0.5 * left); /* comparable to 7 px in from the left */
		else
			ck_assert_double_eq(right, 0.0);
		ck_assert_double_lt(bottom, 1e-9 * top);
	}
	render_image_free(&seam);
	render_image_free(&mid);
	render_image_free(&turned);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_glow");
	TCase *tc = tcase_create("glow");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, glow_zero_is_bit_identical);
	tcase_add_test(tc, below_threshold_is_bit_identical);
	tcase_add_test(tc, glow_conserves_energy);
	tcase_add_test(tc, point_becomes_point_plus_falling_halo);
	tcase_add_test(tc, halo_spans_2_to_16_px);
	tcase_add_test(tc, halo_is_round_to_its_end);
	tcase_add_test(tc, wing_zero_is_bit_identical);
	tcase_add_test(tc, wing_conserves_energy);
	tcase_add_test(tc, wing_follows_moffat_weights);
	tcase_add_test(tc, glow_wraps_across_the_equirect_seam);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
