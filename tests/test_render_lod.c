/* test_render_lod.c - level-of-detail splatting (render.h RENDER_LOD_*):
 * footprints wider than RENDER_LOD_RADIUS_PX are deposited on a coarser
 * grid and upsampled bilinearly.
 *
 * Checks, each against an expectation computed here from the definitions:
 *   - the level rule (smallest L with r <= 2^L RENDER_LOD_RADIUS_PX) and
 *     the grid sizes (ceil(n / 2^L));
 *   - one body vs its exact level-0 splat (kernel formula sampled at every
 *     pixel centre, divided by the sum; computed here): max |image - exact|
 *     <= RENDER_LOD_ERROR_CUBIC / _GAUSS of the exact peak, at the radii
 *     just past each level's threshold (coarsest sampling: r / 2^L just
 *     over RENDER_LOD_RADIUS_PX / 2) and at the 256 px cap, several
 *     sub-cell positions; its image total equals its weight to 1e-6
 *     (gaussian), RENDER_NORM_ANALYTIC_ERROR (cubic, r >= 8 cells);
 *   - the analytic normalisation (render.h): a cubic body with r >=
 *     RENDER_NORM_ANALYTIC_R px on level 0 deposits its weight times (sum
 *     of its samples, computed here) / (7 pi r^2 / 40) to 1e-6, within
 *     RENDER_NORM_ANALYTIC_ERROR of its weight; below that radius exactly
 *     its weight;
 *   - at r = RENDER_LOD_RADIUS_PX (level 0) the image is the exact splat
 *     to float rounding: no LOD below the threshold;
 *   - the edge rule: a body centred on the image's corner keeps 1/4 of its
 *     weight, on an edge 1/2 (its coarse footprint is symmetric about a
 *     cell boundary; the clamp keeps the left/top edges exact, the image
 *     size is a multiple of the cell);
 *   - many bodies from 0.3 to 256 px, all inside: total = sum of weights;
 *   - GPU vs CPU per pixel within gpu_render.h's tolerance, bodies on every
 *     level, on an image whose size is no multiple of the cells, tiled and
 *     atomic, cubic, gaussian and density mode (SKIP without a GPU).
 *
 * Run: make CUDA_ARCH=sm_90 BUILD=/tmp/b /tmp/b/tests/test_render_lod && /tmp/b/tests/test_render_lod */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/cuda/gpu.h"
#include "render/cuda/gpu_render.h"
#include "render/render.h"
#include "test_render_util.h"

/* Internal = scene * factor: positions doubled, masses quadrupled. */
static const struct sim_units u_test = {2.0, 1.0, 4.0, 1.0, 1.0};
static const float comp_colors[3][3] = {{1, 0.5f, 0.25f}, {0.2f, 1, 0.7f}, {0.9f, 0.1f, 1}};

/* Body b of st at continuous pixel (x, y) with kernel radius r px under
 * smoothing h (depth h f / r), weight m (scene units). Positions are
 * rounded to float, as the GPU stores them: the caller reads the radius
 * back from render_view_project when it needs it exactly. */
static void place(struct sim_state *st, size_t b, int w, int hgt, double x, double y, double r,
		  double h, double m)
{
	double f = render_test_focal(hgt, cam_std.fov), z = h * f / r;
	double p[3] = {z * (x - 0.5 * w) / f, cam_std.pos[1] + z, -z * (y - 0.5 * hgt) / f};
	for (int d = 0; d < 3; d++)
		st->pos[3 * b + d] = (float)(p[d] * u_test.length);
	st->mass[b] = (float)(m * u_test.mass);
}

static void state_new(struct sim_state *st, size_t n)
{
	memset(st, 0, sizeof *st);
	ck_assert_int_eq(sim_state_alloc(st, n, 3), 0);
	for (int c = 0; c < 3; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "c%d", c);
		memcpy(st->comps[c].color, comp_colors[c], sizeof comp_colors[c]);
	}
	for (size_t i = 0; i < n; i++)
		st->comp[i] = (uint16_t)(i % 3);
}

static double total(const struct render_image *img, int c)
{
	double s = 0;
	for (size_t i = 0; i < (size_t)img->w * img->h; i++)
		s += img->rgb[3 * i + c];
	return s;
}

/* Kernel shape at q = d / r, from the formulas of render/splat.c. */
static double shape(enum scene_kernel k, double q)
{
	if (k == SCENE_KERNEL_GAUSSIAN)
		return q > 1.5 ? 0.0 : exp(-2.0 * q * q);
	if (q >= 1)
		return 0;
	return q <= 0.5 ? 1 - 6 * q * q + 6 * q * q * q : 2 * pow(1 - q, 3);
}

START_TEST(level_rule_and_grid_sizes)
{
	double R = RENDER_LOD_RADIUS_PX;
	ck_assert_int_eq(render_lod_level(0.1), 0);
	ck_assert_int_eq(render_lod_level(R), 0);
	ck_assert_int_eq(render_lod_level(R * 1.0001), 1);
	ck_assert_int_eq(render_lod_level(2 * R), 1);
	ck_assert_int_eq(render_lod_level(2 * R * 1.0001), 2);
	ck_assert_int_eq(render_lod_level(8 * R * 1.0001), 4);
	ck_assert_int_eq(render_lod_level(RENDER_MAX_RADIUS_PX), RENDER_LOD_LEVELS - 1);
	ck_assert(RENDER_MAX_RADIUS_PX <= R * (1 << (RENDER_LOD_LEVELS - 1)));
	ck_assert_int_eq(render_lod_dim(1080, 0), 1080);
	ck_assert_int_eq(render_lod_dim(1080, 4), 68);  /* 67.5 rounded up */
	ck_assert_int_eq(render_lod_dim(1920, 4), 120);
	ck_assert_int_eq(render_lod_dim(1, 3), 1);
}
END_TEST

/* One body at (x, y) with radius r on a w x h image (footprint inside):
 * worst |lod - exact| / exact peak, and checks the total. */
static double single_body_error(enum scene_kernel k, int w, int h, double x, double y, double r)
{
	struct scene *sc = render_test_scene(w, h, k, 1.0);
	struct sim_state st;
	state_new(&st, 1);
	place(&st, 0, w, h, x, y, r, 1.0, 1.0);
	/* The exact position and radius the renderer sees (float positions). */
	struct render_view v;
	render_view_make(&cam_std, w, h, &v);
	double p[3] = {st.pos[0] / u_test.length, st.pos[1] / u_test.length,
		       st.pos[2] / u_test.length}, bx, by, bz;
	ck_assert_int_eq(render_view_project(&v, p, &bx, &by, &bz), 1);
	double br = 1.0 / bz * v.focal_px, wt = st.mass[0] / u_test.mass * comp_colors[0][0];
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	double *ex = malloc((size_t)w * h * sizeof *ex), sum = 0, peak = 0, worst = 0;
	ck_assert_ptr_nonnull(ex);
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++) {
			double q = hypot(i + 0.5 - bx, j + 0.5 - by) / br;
			ex[(size_t)j * w + i] = shape(k, q);
			sum += ex[(size_t)j * w + i];
		}
	for (size_t i = 0; i < (size_t)w * h; i++) {
		ex[i] *= wt / sum;
		peak = fmax(peak, ex[i]);
	}
	for (size_t i = 0; i < (size_t)w * h; i++)
		worst = fmax(worst, fabs(img.rgb[3 * i] - ex[i]));
	ck_assert_close(total(&img, 0), wt, 0,
			k == SCENE_KERNEL_CUBIC ? RENDER_NORM_ANALYTIC_ERROR : 1e-6);
	free(ex);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
	return worst / peak;
}

START_TEST(single_body_close_to_exact_splat)
{
	const double R = RENDER_LOD_RADIUS_PX;
	/* Just past each threshold (r / 2^L just over R / 2), mid-level, cap. */
	const double rs[] = {R * 1.003, 2 * R * 1.003, 4 * R * 1.003, 8 * R * 1.003, 3 * R,
			     RENDER_MAX_RADIUS_PX};
	const double off[4][2] = {{0.5, 0.5}, {0.0, 0.0}, {7.3, 11.9}, {13.75, 2.25}};
	for (int k = 0; k < 2; k++) {
		enum scene_kernel kern = k ? SCENE_KERNEL_GAUSSIAN : SCENE_KERNEL_CUBIC;
		double bound = k ? RENDER_LOD_ERROR_GAUSS : RENDER_LOD_ERROR_CUBIC, worst = 0;
		for (size_t a = 0; a < sizeof rs / sizeof rs[0]; a++)
			for (int o = 0; o < 4; o++) {
				/* Image: support + 2 cells each side, w a multiple of 16. */
				int half = (int)ceil((k ? 1.5 : 1.0) * rs[a]) + 40;
				int w = 2 * half + (a % 2 ? 16 : 0), h = 2 * half;
				double e = single_body_error(kern, w, h, half + off[o][0],
							     half + off[o][1], rs[a]);
				ck_assert_msg(e <= bound, "%s r = %g offset %d: max error %.4f of the peak > %g",
					      k ? "gaussian" : "cubic", rs[a], o, e, bound);
				worst = fmax(worst, e);
			}
		printf("LOD %s: worst |lod - exact| = %.4f of the peak (bound %g)\n",
		       k ? "gaussian" : "cubic", worst, bound);
	}
}
END_TEST

/* r = RENDER_LOD_RADIUS_PX is level 0: the exact splat to float rounding. */
START_TEST(threshold_radius_is_exact)
{
	for (int k = 0; k < 2; k++) {
		enum scene_kernel kern = k ? SCENE_KERNEL_GAUSSIAN : SCENE_KERNEL_CUBIC;
		double e = single_body_error(kern, 96, 80, 48.3, 40.6, RENDER_LOD_RADIUS_PX * 0.999);
		ck_assert_msg(e < 1e-5, "level 0 differs from the exact splat by %g of the peak", e);
	}
}
END_TEST

/* Cubic bodies on level 0 with r from 6 to 16 px at sub-pixel positions:
 * r >= RENDER_NORM_ANALYTIC_R deposits wt * (discrete sum) / (7 pi r^2 /
 * 40), the shape's integral over the disc, within
 * RENDER_NORM_ANALYTIC_ERROR of wt; smaller ones exactly wt. */
START_TEST(analytic_normalisation_mass)
{
	const int w = 48, h = 48;
	double worst = 0;
	for (int a = 0; a < 41; a++) {
		double r = 6.0 + 0.25 * a;
		struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1.0);
		struct sim_state st;
		state_new(&st, 1);
		place(&st, 0, w, h, 24 + 0.37 * (a % 7) / 7.0 * 2.7, 24 + 0.61 * (a % 5) / 5.0, r, 1.0, 1.5);
		struct render_view v;
		render_view_make(&cam_std, w, h, &v);
		double p[3] = {st.pos[0] / u_test.length, st.pos[1] / u_test.length,
			       st.pos[2] / u_test.length}, bx, by, bz;
		ck_assert_int_eq(render_view_project(&v, p, &bx, &by, &bz), 1);
		double br = 1.0 / bz * v.focal_px, wt = st.mass[0] / u_test.mass * comp_colors[0][0];
		double sum = 0;
		for (int j = 0; j < h; j++)
			for (int i = 0; i < w; i++)
				sum += shape(SCENE_KERNEL_CUBIC, hypot(i + 0.5 - bx, j + 0.5 - by) / br);
		double integral = 7 * M_PI / 40 * br * br;
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		double tot = total(&img, 0);
		if (br >= RENDER_NORM_ANALYTIC_R) {
			ck_assert_msg(NB_CLOSE(tot, wt * sum / integral, 0, 1e-6),
				      "r %g: total %.9g, want wt sum / integral = %.9g", br, tot,
				      wt * sum / integral);
			ck_assert_msg(fabs(tot / wt - 1) <= RENDER_NORM_ANALYTIC_ERROR,
				      "r %g: total / weight - 1 = %.3g", br, tot / wt - 1);
			worst = fmax(worst, fabs(tot / wt - 1));
		} else {
			ck_assert_close(tot, wt, 0, 1e-6);
		}
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
	printf("analytic normalisation: worst |total / weight - 1| = %.3g (bound %g)\n", worst,
	       RENDER_NORM_ANALYTIC_ERROR);
}
END_TEST

/* A body centred on the top-left corner keeps 1/4 of its weight, one on
 * the left edge or the top edge 1/2, one on the bottom-right corner 1/4:
 * levels 1 to 4 (cells 2 to 16 px; the image a multiple of 16). */
START_TEST(edge_bodies_keep_their_share)
{
	const int w = 576, h = 544;
	const double r[] = {20, 50, 100, 150}; /* levels 1, 2, 3, 4 */
	const double at[4][3] = {{0, 0, 0.25}, {0, 272, 0.5}, {288, 0, 0.5}, {576, 544, 0.25}};
	for (int k = 0; k < 2; k++)
		for (int a = 0; a < 4; a++)
			for (int e = 0; e < 4; e++) {
				struct scene *sc = render_test_scene(w, h, k ? SCENE_KERNEL_GAUSSIAN
								     : SCENE_KERNEL_CUBIC, 1.0);
				struct sim_state st;
				state_new(&st, 1);
				/* (float positions put it ~1e-6 px off the edge) */
				place(&st, 0, w, h, at[e][0], at[e][1], r[a], 1.0, 2.0);
				struct render_image img;
				ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
				ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
				double wt = st.mass[0] / u_test.mass * comp_colors[0][0];
				double tol = 1e-5 + (k ? 0 : RENDER_NORM_ANALYTIC_ERROR);
				ck_assert_msg(NB_CLOSE(total(&img, 0), at[e][2] * wt, 0, tol),
					      "r %g at (%g, %g): total %.8g, want %.8g", r[a],
					      at[e][0], at[e][1], total(&img, 0), at[e][2] * wt);
				render_image_free(&img);
				sim_state_free(&st);
				free(sc);
			}
}
END_TEST

/* n bodies with radii from 0.3 to 256 px (every level), footprints inside
 * a w x h image; h: smoothing. */
static void mixed_bodies(struct sim_state *st, size_t n, int w, int h, double margin, uint64_t seed)
{
	state_new(st, n);
	for (size_t i = 0; i < n; i++) {
		double u0 = sim_rng_uniform(seed, i, 0), u1 = sim_rng_uniform(seed, i, 1);
		double u2 = sim_rng_uniform(seed, i, 2), u3 = sim_rng_uniform(seed, i, 3);
		double r = 0.3 * pow(256 / 0.3, u0); /* log-uniform */
		double R = margin * r + 18;
		double x = R + (w - 2 * R) * u1, y = R + (h - 2 * R) * u2;
		if (!(w > 2 * R && h > 2 * R)) { /* too big for the frame: centred */
			x = 0.5 * w + 3 * u1;
			y = 0.5 * h + 3 * u2;
		}
		place(st, i, w, h, x, y, r, 0.5, 0.1 + u3);
	}
}

START_TEST(mixed_levels_conserve_mass)
{
	const int w = 832, h = 832; /* the 256 px gaussian (support 384 px) fits */
	for (int k = 0; k < 2; k++) {
		struct scene *sc = render_test_scene(w, h, k ? SCENE_KERNEL_GAUSSIAN : SCENE_KERNEL_CUBIC, 0.5);
		struct sim_state st;
		mixed_bodies(&st, 300, w, h, k ? 1.5 : 1.0, 9);
		double want[3] = {0, 0, 0};
		for (size_t i = 0; i < st.n; i++)
			for (int c = 0; c < 3; c++)
				want[c] += st.mass[i] / u_test.mass * comp_colors[st.comp[i]][c];
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		for (int c = 0; c < 3; c++)
			ck_assert_close(total(&img, c), want[c], 0, 1e-6);
		render_image_free(&img);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* ---- GPU vs CPU ---- */

static void gpu_case(enum scene_kernel k, enum scene_colormode mode, enum gpu_render_method m,
		     const char *what)
{
	/* 330 x 202: no multiple of any cell, so edge cells hang over. */
	const int w = 330, h = 202;
	struct scene *sc = render_test_scene(w, h, k, 0.5);
	sc->render.mode = mode;
	struct sim_state st;
	mixed_bodies(&st, 1500, w, h, -0.5, 21); /* many footprints cross the edges */
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_RGB16;
	p.slots = 1;
	p.method = m;
	struct gpu_render *gr = NULL;
	struct gpu_render_input in;
	float *g = malloc((size_t)w * h * 3 * sizeof *g);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(gpu_render_create(sc, &st, &u_test, &p, &gr), 0);
	ck_assert_int_eq(gpu_render_upload(gr, &st, &in), 0);
	ck_assert_int_eq(gpu_render_frame(gr, &in, 0, &cam_std, 0), 0);
	ck_assert_int_eq(gpu_render_wait(gr, 0), 0);
	ck_assert_int_eq(gpu_render_download_hdr(gr, g), 0);
	expect_hdr_close(g, img.rgb, w, h, what);
	gpu_render_free(&gr);
	free(g);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}

START_TEST(gpu_matches_cpu_on_every_level)
{
	for (int m = 0; m < 2; m++) {
		enum gpu_render_method me = (enum gpu_render_method)m;
		gpu_case(SCENE_KERNEL_CUBIC, SCENE_COLOR_COMPONENTS, me, m ? "lod cubic atomic" : "lod cubic tiled");
		gpu_case(SCENE_KERNEL_GAUSSIAN, SCENE_COLOR_COMPONENTS, me, m ? "lod gaussian atomic" : "lod gaussian tiled");
		gpu_case(SCENE_KERNEL_CUBIC, SCENE_COLOR_DENSITY, me, m ? "lod density atomic" : "lod density tiled");
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_lod");
	TCase *tc = tcase_create("render_lod");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, level_rule_and_grid_sizes);
	tcase_add_test(tc, single_body_close_to_exact_splat);
	tcase_add_test(tc, threshold_radius_is_exact);
	tcase_add_test(tc, edge_bodies_keep_their_share);
	tcase_add_test(tc, mixed_levels_conserve_mass);
	tcase_add_test(tc, analytic_normalisation_mass);
	suite_add_tcase(s, tc);
	TCase *gpu = tcase_create("gpu");
	tcase_set_timeout(gpu, 120);
	tcase_add_checked_fixture(gpu, nb_trap_fpe, NULL);
	tcase_add_test(gpu, gpu_matches_cpu_on_every_level);
	NB_GPU_TCASE(s, gpu);
	return s;
}

NB_CHECK_MAIN(make_suite)
