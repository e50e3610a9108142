/* test_render.c - the CPU reference renderer: projection, splatting (mass
 * conservation, culling, orientation), tone mapping and colormaps.
 *
 * Scenes and states are filled by hand. Run: make BUILD=/tmp/b CUDA=0
 * /tmp/b/tests/test_render && /tmp/b/tests/test_render */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "test_render_util.h"

/* World point (scene units) that cam_std sees at continuous pixel (x, y)
 * and depth z: inverse of the pinhole formula. */
static void unproject_std(int w, int h, double x, double y, double z, double p[3])
{
	double f = render_test_focal(h, cam_std.fov);
	p[0] = z * (x - 0.5 * w) / f;
	p[1] = cam_std.pos[1] + z;
	p[2] = -z * (y - 0.5 * h) / f;
}

static double image_total(const struct render_image *img, int c)
{
	double s = 0;
	for (size_t i = 0; i < (size_t)img->w * img->h; i++)
		s += img->rgb[3 * i + c];
	return s;
}

/* State with n bodies and 3 coloured components; body i in comp i % 3. */
static const float comp_colors[3][3] = {{1, 0.5f, 0.25f}, {0.2f, 1, 0.7f}, {0.9f, 0.1f, 1}};
static void state_new(struct sim_state *st, size_t n)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 3), 0);
	for (int c = 0; c < 3; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "c%d", c);
		memcpy(st->comps[c].color, comp_colors[c], sizeof comp_colors[c]);
	}
	for (size_t i = 0; i < n; i++)
		st->comp[i] = (uint16_t)(i % 3);
}

/* Internal = scene * factor: positions doubled, masses quadrupled. */
static const struct sim_units u_test = {2.0, 1.0, 4.0, 1.0, 1.0};

static void set_body(struct sim_state *st, size_t i, const double p[3], double mass_scene)
{
	for (int d = 0; d < 3; d++)
		st->pos[3 * i + d] = p[d] * u_test.length;
	st->mass[i] = mass_scene * u_test.mass;
}

START_TEST(projection_matches_pinhole)
{
	int w = 64, h = 48;
	struct render_view v;
	render_view_make(&cam_std, w, h, &v);
	double f = render_test_focal(h, 60);
	ck_assert_close(v.focal_px, f, 0, 1e-14);
	double p[3] = {1, 0, 2}, x, y, z;
	ck_assert_int_eq(render_view_project(&v, p, &x, &y, &z), 1);
	/* d = p - pos = (1, 10, 2): d.right = 1, d.fwd = 10, d.up = 2. */
	ck_assert_close(x, 32 + f * 1 / 10.0, 1e-12, 0);
	ck_assert_close(y, 24 - f * 2 / 10.0, 1e-12, 0);
	ck_assert_close(z, 10, 1e-12, 0);
	double t[3] = {0, 0, 0};
	ck_assert_int_eq(render_view_project(&v, t, &x, &y, &z), 1);
	ck_assert_close(x, 32, 1e-12, 0);
	ck_assert_close(y, 24, 1e-12, 0);

	/* An oblique camera, basis computed here from the definitions. */
	struct render_camera c = {.pos = {3, -4, 5}, .target = {1, 1, 0}, .up = {0, 0, 1}, .fov = 35};
	render_view_make(&c, w, h, &v);
	double fw[3] = {-2, 5, -5}, n = sqrt(54.0);
	for (int d = 0; d < 3; d++)
		fw[d] /= n;
	double r[3] = {fw[1], -fw[0], 0}; /* fw x (0,0,1) */
	double rn = sqrt(r[0] * r[0] + r[1] * r[1]);
	r[0] /= rn;
	r[1] /= rn;
	double uv[3] = {r[1] * fw[2] - r[2] * fw[1], r[2] * fw[0] - r[0] * fw[2],
			r[0] * fw[1] - r[1] * fw[0]};
	double q[3] = {2, 0.5, -1}, dq[3] = {q[0] - 3, q[1] + 4, q[2] - 5};
	double dr = dq[0] * r[0] + dq[1] * r[1] + dq[2] * r[2];
	double du = dq[0] * uv[0] + dq[1] * uv[1] + dq[2] * uv[2];
	double dz = dq[0] * fw[0] + dq[1] * fw[1] + dq[2] * fw[2];
	double fc = render_test_focal(h, 35);
	ck_assert_int_eq(render_view_project(&v, q, &x, &y, &z), 1);
	ck_assert_close(x, 32 + fc * dr / dz, 1e-9, 0);
	ck_assert_close(y, 24 - fc * du / dz, 1e-9, 0);
	ck_assert_close(z, dz, 1e-12, 0);

	/* A sub-pixel body at q lands in pixel (floor x, floor y) only. */
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1e-4);
	struct sim_state st;
	state_new(&st, 1);
	set_body(&st, 0, q, 2.0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &c, &st, &u_test, &img), 0);
	int pi = (int)floor(32 + fc * dr / dz), pj = (int)floor(24 - fc * du / dz);
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++) {
			float want = (i == pi && j == pj) ? 2.0f * comp_colors[0][0] : 0.0f;
			ck_assert_close(img.rgb[3 * ((size_t)j * w + i)], want, 0, 1e-6);
		}
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Random bodies whose footprints lie fully inside the image, with kernel
 * radii from 0.1 px (single pixel) to 30 px plus one of 60 px: the image
 * total per channel equals sum of mass * colour (scene units). */
static void check_conservation(enum scene_kernel k)
{
	int w = 256, h = 192;
	double smoothing = 0.5, f = render_test_focal(h, cam_std.fov);
	struct scene *sc = render_test_scene(w, h, k, smoothing);
	size_t n = 400;
	struct sim_state st;
	state_new(&st, n);
	double want[3] = {0, 0, 0};
	double sup = k == SCENE_KERNEL_GAUSSIAN ? 1.5 : 1.0; /* support / r */
	for (size_t i = 0; i < n; i++) {
		double u1 = sim_rng_uniform(1, 1, i), u2 = sim_rng_uniform(1, 2, i);
		double u3 = sim_rng_uniform(1, 3, i), u4 = sim_rng_uniform(1, 4, i);
		double r = i == 0 ? 60.0 : (i % 4 == 0 ? 0.1 + 0.3 * u1 : 0.1 + 30.0 * u1);
		double R = sup * r + 2;
		double x = i == 0 ? 0.5 * w : R + (w - 2 * R) * u2;
		double y = i == 0 ? 0.5 * h : R + (h - 2 * R) * u3;
		double z = smoothing * f / r, p[3], m = 0.1 + u4;
		unproject_std(w, h, x, y, z, p);
		set_body(&st, i, p, m);
		for (int c = 0; c < 3; c++)
			want[c] += m * comp_colors[i % 3][c];
	}
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	for (int c = 0; c < 3; c++)
		ck_assert_close(image_total(&img, c), want[c], 0, 1e-5);
	/* Density mode: mass into every channel, colour ignored. */
	sc->render.mode = SCENE_COLOR_DENSITY;
	render_image_clear(&img);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	double mass = 0;
	for (size_t i = 0; i < n; i++)
		mass += st.mass[i] / u_test.mass;
	for (int c = 0; c < 3; c++)
		ck_assert_close(image_total(&img, c), mass, 0, 1e-5);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}

START_TEST(mass_conserved_cubic)
{
	check_conservation(SCENE_KERNEL_CUBIC);
}
END_TEST

START_TEST(mass_conserved_gaussian)
{
	check_conservation(SCENE_KERNEL_GAUSSIAN);
}
END_TEST

/* A body centred on the image's corner keeps exactly the quarter of its
 * (symmetric, discretely normalised) footprint that is inside; one centred
 * on the left edge keeps half. */
START_TEST(edge_bodies_keep_their_inside_share)
{
	int w = 64, h = 48;
	for (int k = 0; k < 2; k++) {
		double smoothing = 0.3, r = 5.3;
		struct scene *sc = render_test_scene(w, h, k ? SCENE_KERNEL_GAUSSIAN : SCENE_KERNEL_CUBIC,
					     smoothing);
		struct sim_state st;
		state_new(&st, 1);
		double p[3], z = smoothing * render_test_focal(h, cam_std.fov) / r;
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
		unproject_std(w, h, 0, 0, z, p);
		set_body(&st, 0, p, 1.0);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		ck_assert_close(image_total(&img, 0), 0.25, 0, 1e-5);
		render_image_clear(&img);
		unproject_std(w, h, 0, 24, z, p);
		set_body(&st, 0, p, 1.0);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		ck_assert_close(image_total(&img, 0), 0.5, 0, 1e-5);
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* Kernel radius capped at RENDER_MAX_RADIUS_PX: a body asking for 1000 px
 * reaches 250 px from its centre but not 300, and keeps its whole mass.
 * (Its footprint lies on LOD level L = render_lod_level(256), whose
 * bilinear upsampling reaches at most one cell, 2^L px, past the support:
 * nothing at 256 + 2^L px.) */
START_TEST(kernel_radius_capped)
{
	int w = 600, h = 600;
	double smoothing = 1.0, z = smoothing * render_test_focal(h, cam_std.fov) / 1000.0, p[3];
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, smoothing);
	struct sim_state st;
	state_new(&st, 1);
	unproject_std(w, h, 300, 300, z, p);
	set_body(&st, 0, p, 3.0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	ck_assert_close(image_total(&img, 0), 3.0, 0, 1e-5);
	ck_assert(img.rgb[3 * ((size_t)300 * w + 300 + 250)] > 0);
	int cell = 1 << render_lod_level(RENDER_MAX_RADIUS_PX);
	ck_assert(img.rgb[3 * ((size_t)300 * w + 300 + (int)RENDER_MAX_RADIUS_PX + cell)] == 0);
	ck_assert(img.rgb[3 * ((size_t)300 * w + 599)] == 0);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

START_TEST(culled_bodies_deposit_nothing)
{
	int w = 64, h = 48;
	double smoothing = 0.2;
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, smoothing);
	struct sim_state st;
	state_new(&st, 4);
	double behind[3] = {0, -20, 0};     /* depth -10 */
	double at_lens[3] = {0, -10 + 1e-6, 0}; /* 0 < depth < near = 1e-5 */
	double outside[3], partial[3], z = 3.0;
	unproject_std(w, h, -40, 24, z, outside); /* far left of the view, r = 2.8 px */
	unproject_std(w, h, -2, 24, z, partial);  /* 2 px left of the edge */
	set_body(&st, 0, behind, 1);
	set_body(&st, 1, at_lens, 1);
	set_body(&st, 2, outside, 1);
	set_body(&st, 3, partial, 0); /* massless for now */
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	for (size_t i = 0; i < (size_t)w * h * 3; i++)
		ck_assert(img.rgb[i] == 0);
	/* The body 2 px outside the edge with a 2.8 px kernel shows in part. */
	st.mass[3] = u_test.mass;
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	double t = image_total(&img, 0) / comp_colors[0][0];
	ck_assert(t > 0 && t < 0.5);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* An asymmetric "F" seen face on from +z (x right, y up on screen): the
 * vertical bar red, the top arm green, the middle arm blue. Any flip, swap
 * of axes or of R and B shows. */
START_TEST(f_pattern_lands_right_way_up)
{
	int w = 64, h = 48;
	struct render_camera cam = {.pos = {0, 0, 10}, .target = {0, 0, 0}, .up = {0, 1, 0}, .fov = 60};
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1e-3);
	struct sim_state st;
	size_t n = 33 + 25 + 19;
	ck_assert_int_eq(sim_state_alloc(&st, n, 3), 0);
	const float col[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	for (int c = 0; c < 3; c++)
		memcpy(st.comps[c].color, col[c], sizeof col[c]);
	size_t b = 0;
	for (int k = 0; k <= 32; k++, b++) { /* bar: x = -3, y in [-4, 4] */
		double p[3] = {-3, -4 + 0.25 * k, 0};
		set_body(&st, b, p, 1);
		st.comp[b] = 0;
	}
	for (int k = 0; k <= 24; k++, b++) { /* top arm: y = 4, x in [-3, 3] */
		double p[3] = {-3 + 0.25 * k, 4, 0};
		set_body(&st, b, p, 1);
		st.comp[b] = 1;
	}
	for (int k = 0; k <= 18; k++, b++) { /* middle arm: y = 0, x in [-3, 1.5] */
		double p[3] = {-3 + 0.25 * k, 0, 0};
		set_body(&st, b, p, 1);
		st.comp[b] = 2;
	}
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam, &st, &u_test, &img), 0);

	/* Centroids (pixel centres) per channel. */
	double sx[3] = {0}, sy[3] = {0}, sm[3] = {0};
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++)
			for (int c = 0; c < 3; c++) {
				double v = img.rgb[3 * ((size_t)j * w + i) + c];
				sx[c] += v * (i + 0.5);
				sy[c] += v * (j + 0.5);
				sm[c] += v;
			}
	double f = render_test_focal(h, 60) / 10.0; /* pixels per world unit at depth 10 */
	double cx[3] = {32 - 3 * f, 32, 32 - 0.75 * f}, cy[3] = {24, 24 - 4 * f, 24};
	for (int c = 0; c < 3; c++) {
		ck_assert_close(sx[c] / sm[c], cx[c], 0.6, 0);
		ck_assert_close(sy[c] / sm[c], cy[c], 0.6, 0);
	}
	ck_assert(sx[0] / sm[0] < w / 2.0); /* bar on the left */
	ck_assert(sy[1] / sm[1] < h / 2.0); /* top arm in the top rows */

	/* Ends of the arms in the tone-mapped frame. */
	uint16_t *out = malloc((size_t)w * h * 3 * sizeof *out);
	ck_assert_ptr_nonnull(out);
	render_tonemap(sc, &img, out);
	int gi = (int)floor(32 + 3 * f), gj = (int)floor(24 - 4 * f); /* (3, 4): green */
	int ri = (int)floor(32 - 3 * f), rj = (int)floor(24 + 4 * f); /* (-3, -4): red */
	const uint16_t *g = out + 3 * ((size_t)gj * w + gi), *r = out + 3 * ((size_t)rj * w + ri);
	ck_assert(g[0] == 0 && g[1] > 0 && g[2] == 0);
	ck_assert(r[0] > 0 && r[1] == 0 && r[2] == 0);
	/* Their mirror images (bottom right, empty in an F). */
	const uint16_t *rm = out + 3 * ((size_t)rj * w + (w - 1 - ri)); /* red end mirrored in x */
	const uint16_t *gv = out + 3 * ((size_t)(h - 1 - gj) * w + gi); /* green end mirrored in y */
	ck_assert(rm[0] == 0 && rm[1] == 0 && rm[2] == 0);
	ck_assert(gv[0] == 0 && gv[1] == 0 && gv[2] == 0);
	free(out);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* The image does not depend on the number of threads, bit for bit. */
START_TEST(splat_independent_of_threads)
{
	int w = 160, h = 120;
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_GAUSSIAN, 0.05);
	size_t n = 20000;
	struct sim_state st;
	state_new(&st, n);
	for (size_t i = 0; i < n; i++) {
		double p[3] = {6 * (sim_rng_uniform(5, 0, i) - 0.5), 6 * (sim_rng_uniform(5, 1, i) - 0.5),
			       6 * (sim_rng_uniform(5, 2, i) - 0.5)};
		set_body(&st, i, p, 1e-3);
	}
	struct render_image a, b;
	ck_assert_int_eq(render_image_alloc(&a, w, h), 0);
	ck_assert_int_eq(render_image_alloc(&b, w, h), 0);
	int nt = omp_get_max_threads();
	omp_set_num_threads(1);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &a), 0);
	omp_set_num_threads(3);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &b), 0);
	omp_set_num_threads(nt);
	ck_assert(memcmp(a.rgb, b.rgb, (size_t)w * h * 3 * sizeof(float)) == 0);
	ck_assert(image_total(&a, 0) > 0);
	render_image_free(&a);
	render_image_free(&b);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Tone map a 16 x 16 image of known values and compare every pixel with
 * the formulas of render.h / tonemap.c evaluated here. */
static double curve_ref(enum scene_tonemap tm, double v)
{
	double k = RENDER_CURVE_K;
	if (v <= 0)
		return 0;
	if (tm == SCENE_TONEMAP_LOG)
		v = log1p(k * v) / log1p(k);
	else if (tm == SCENE_TONEMAP_ASINH)
		v = asinh(k * v) / asinh(k);
	return v > 1 ? 1 : v;
}

START_TEST(tonemap_matches_formulas)
{
	int w = 16, h = 16;
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	double sum = 0;
	for (int p = 0; p < w * h; p++)
		for (int c = 0; c < 3; c++) {
			/* 0 at p = 0; then growing, geometric, over 6 decades;
			 * the last pixel far brighter than the rest (v > 1) */
			float v = p == 0 ? 0.0f : (float)(1e-4 * pow(10.0, 6.0 * p / (w * h)) * (1 + c));
			if (p == w * h - 1)
				v = (float)(1e5 * (1 + c));
			img.rgb[3 * p + c] = v;
			sum += v;
		}
	double ref = RENDER_REF_SCALE * sum / (3.0 * w * h);
	ck_assert_close(render_tonemap_reference(&img), ref, 0, 1e-12);
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1);
	uint16_t *out = malloc((size_t)w * h * 3 * sizeof *out);
	ck_assert_ptr_nonnull(out);
	float bg[3] = {0.1f, 0.2f, 0.3f};
	memcpy(sc->render.background, bg, sizeof bg);
	for (int tm = 0; tm < 3; tm++)
		for (int gi = 0; gi < 2; gi++) {
			sc->render.tonemap = (enum scene_tonemap)tm;
			sc->render.gamma = gi ? 2.2 : 1.0;
			sc->render.exposure = gi ? 3.0 : 1.0;
			render_tonemap(sc, &img, out);
			for (int p = 0; p < w * h; p++)
				for (int c = 0; c < 3; c++) {
					double v = sc->render.exposure * img.rgb[3 * p + c] / ref;
					v = pow(curve_ref((enum scene_tonemap)tm, v), 1 / sc->render.gamma);
					double want = 65535.0 * (bg[c] + (1 - bg[c]) * v);
					ck_assert_close(out[3 * p + c], want, 1.0, 0);
					if (p > 0) /* monotone in the value */
						ck_assert(out[3 * p + c] >= out[3 * (p - 1) + c]);
				}
			/* 0 -> background; the brightest pixel (v > 2) saturates */
			for (int c = 0; c < 3; c++) {
				ck_assert_close(out[c], 65535.0 * bg[c], 1.0, 0);
				ck_assert_int_eq(out[3 * (w * h - 1) + c], 65535);
			}
		}
	/* An empty image is all background. */
	render_image_clear(&img);
	render_tonemap(sc, &img, out);
	for (int p = 0; p < w * h; p++)
		for (int c = 0; c < 3; c++)
			ck_assert_close(out[3 * p + c], 65535.0 * bg[c], 1.0, 0);
	free(out);
	render_image_free(&img);
	free(sc);
}
END_TEST

/* First and last colours of matplotlib's tables (_cm_listed.py), and the
 * middle of viridis (entry 128) within the interpolation tolerance. */
START_TEST(colormap_endpoints_match_matplotlib)
{
	struct {
		enum scene_colormap map;
		float first[3], last[3];
	} t[3] = {
		{SCENE_CMAP_MAGMA, {0.001462f, 0.000466f, 0.013866f}, {0.987053f, 0.991438f, 0.749504f}},
		{SCENE_CMAP_INFERNO, {0.001462f, 0.000466f, 0.013866f}, {0.988362f, 0.998364f, 0.644924f}},
		{SCENE_CMAP_VIRIDIS, {0.267004f, 0.004874f, 0.329415f}, {0.993248f, 0.906157f, 0.143936f}},
	};
	float rgb[3];
	for (int k = 0; k < 3; k++) {
		render_colormap(t[k].map, 0.0, rgb);
		for (int c = 0; c < 3; c++)
			ck_assert_close(rgb[c], t[k].first[c], 1e-6, 0);
		render_colormap(t[k].map, 1.0, rgb);
		for (int c = 0; c < 3; c++)
			ck_assert_close(rgb[c], t[k].last[c], 1e-6, 0);
		render_colormap(t[k].map, -3.0, rgb); /* clamped */
		ck_assert_close(rgb[0], t[k].first[0], 1e-6, 0);
	}
	const float mid[3] = {0.127568f, 0.566949f, 0.550556f};
	render_colormap(SCENE_CMAP_VIRIDIS, 128.0 / 255.0, rgb);
	for (int c = 0; c < 3; c++)
		ck_assert_close(rgb[c], mid[c], 0.02, 0);
	render_colormap(SCENE_CMAP_GREY, 0.25, rgb);
	for (int c = 0; c < 3; c++)
		ck_assert_close(rgb[c], 0.25, 1e-7, 0);
}
END_TEST

/* Density mode: empty pixels get the map's first colour (over black), a
 * saturated pixel its last colour. */
START_TEST(density_mode_uses_colormap)
{
	int w = 16, h = 16;
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	for (int c = 0; c < 3; c++)
		img.rgb[3 * 5 + c] = 1.0f; /* one bright pixel: v = 256/50 > 1 */
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1);
	sc->render.mode = SCENE_COLOR_DENSITY;
	sc->render.colormap = SCENE_CMAP_MAGMA;
	uint16_t *out = malloc((size_t)w * h * 3 * sizeof *out);
	ck_assert_ptr_nonnull(out);
	render_tonemap(sc, &img, out);
	const double first[3] = {0.001462, 0.000466, 0.013866}, last[3] = {0.987053, 0.991438, 0.749504};
	for (int c = 0; c < 3; c++) {
		ck_assert_close(out[c], 65535 * first[c], 1.0, 0);
		ck_assert_close(out[3 * 5 + c], 65535 * last[c], 1.0, 0);
	}
	free(out);
	render_image_free(&img);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render");
	TCase *tc = tcase_create("render");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, projection_matches_pinhole);
	tcase_add_test(tc, mass_conserved_cubic);
	tcase_add_test(tc, mass_conserved_gaussian);
	tcase_add_test(tc, edge_bodies_keep_their_inside_share);
	tcase_add_test(tc, kernel_radius_capped);
	tcase_add_test(tc, culled_bodies_deposit_nothing);
	tcase_add_test(tc, f_pattern_lands_right_way_up);
	tcase_add_test(tc, splat_independent_of_threads);
	tcase_add_test(tc, tonemap_matches_formulas);
	tcase_add_test(tc, colormap_endpoints_match_matplotlib);
	tcase_add_test(tc, density_mode_uses_colormap);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
