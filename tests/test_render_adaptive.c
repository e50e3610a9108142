/* test_render_adaptive.c - the CPU splatter with render.smoothing: adaptive
 * (render_splat, render_splat_h in render/splat.c): each body's kernel
 * radius comes from its own h = distance to the k-th nearest other body.
 *
 * Checks: mass conservation (image total = sum of weights when every
 * footprint is inside); per-body footprints measured in isolation (other
 * bodies' masses set to 0, which leaves every h unchanged) against the
 * number of pixel centres inside the disc of radius h_b / depth * focal, h_b
 * from a brute-force neighbour search here, so a cluster body gets a smaller
 * footprint than an isolated one; a configuration whose h is known exactly
 * renders like the fixed smoothing of that value; render_splat equals
 * render_splat_h fed with render_adaptive_h's output, bit for bit, for 1
 * and 2 threads.
 *
 * Run: make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_render_adaptive &&
 * /tmp/b/tests/test_render_adaptive */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/adaptive.h"
#include "render/render.h"

#define IMG 128

static struct scene *scene_new(int k)
{
	struct scene *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	sc->render.width = IMG;
	sc->render.height = IMG;
	sc->render.kernel = SCENE_KERNEL_CUBIC;
	sc->render.smoothing = 0.05; /* fallback only */
	sc->render.smoothing_adaptive = 1;
	sc->render.neighbours = k;
	sc->render.exposure = 1;
	sc->render.gamma = 1;
	sc->render.tonemap = SCENE_TONEMAP_LINEAR;
	sc->render.mode = SCENE_COLOR_COMPONENTS;
	sc->output.frames = 1;
	return sc;
}

/* Camera at (0,-10,0) looking at the origin, z up: depth = y + 10, screen
 * x = IMG/2 + f x / depth, screen y = IMG/2 - f z / depth. */
static const struct render_camera cam_std = {.pos = {0, -10, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 60};
static double focal(void)
{
	return 0.5 * IMG / tan(0.5 * cam_std.fov * M_PI / 180.0);
}

/* Internal = scene * factor. */
static const struct sim_units u_test = {2.0, 1.0, 4.0, 1.0, 1.0};
static const float comp_colors[2][3] = {{1, 0.5f, 0.25f}, {0.2f, 1, 0.7f}};

static void state_new(struct sim_state *st, size_t n)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 2), 0);
	for (int c = 0; c < 2; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "c%d", c);
		memcpy(st->comps[c].color, comp_colors[c], sizeof comp_colors[c]);
	}
	for (size_t i = 0; i < n; i++)
		st->comp[i] = (uint16_t)(i % 2);
}

static void set_body(struct sim_state *st, size_t i, double x, double y, double z, double m)
{
	st->pos[3 * i + 0] = x * u_test.length;
	st->pos[3 * i + 1] = y * u_test.length;
	st->pos[3 * i + 2] = z * u_test.length;
	st->mass[i] = m * u_test.mass;
}

static double urand(unsigned long long *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0;
}

/* A tight cluster of NCL bodies in a cube of side 0.1 around (-1, 0, 0),
 * then isolated bodies on a cross around (1.5, 0, 0), spacing 1, all at
 * depth 10. Body ISO = (1.5, 0, 0): its 4 nearest are all at distance 1. */
#define NCL 30
#define ISO NCL
static size_t scene_bodies(struct sim_state *st)
{
	static const double iso[5][3] = {{1.5, 0, 0}, {1.5, 0, 1}, {1.5, 0, -1}, {2.5, 0, 0}, {0.5, 0, 0}};
	size_t n = NCL + 5;
	state_new(st, n);
	unsigned long long s = 12345;
	for (size_t i = 0; i < NCL; i++) {
		double x = -1 + 0.1 * (urand(&s) - 0.5), y = 0.1 * (urand(&s) - 0.5),
		       z = 0.1 * (urand(&s) - 0.5);
		set_body(st, i, x, y, z, 0.5 + urand(&s));
	}
	for (size_t i = 0; i < 5; i++)
		set_body(st, NCL + i, iso[i][0], iso[i][1], iso[i][2], 1.0 + i);
	return n;
}

/* k-th nearest distance of body b, brute force over all pairs (scene units). */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}
static double brute_h(const struct sim_state *st, size_t b, int k)
{
	double *d = malloc(st->n * sizeof *d);
	ck_assert_ptr_nonnull(d);
	size_t c = 0;
	double p[3];
	for (int a = 0; a < 3; a++)
		p[a] = st->pos[3 * b + a] / u_test.length;
	for (size_t j = 0; j < st->n; j++) {
		if (j == b)
			continue;
		double dx = st->pos[3 * j] / u_test.length - p[0];
		double dy = st->pos[3 * j + 1] / u_test.length - p[1];
		double dz = st->pos[3 * j + 2] / u_test.length - p[2];
		d[c++] = dx * dx + dy * dy + dz * dz;
	}
	qsort(d, c, sizeof *d, cmp_d);
	double h = sqrt(d[(size_t)k - 1 < c ? (size_t)k - 1 : c - 1]);
	free(d);
	return h;
}

static size_t nonzero_pixels(const struct render_image *img)
{
	size_t c = 0;
	for (size_t i = 0; i < (size_t)img->w * img->h; i++)
		c += img->rgb[3 * i] != 0 || img->rgb[3 * i + 1] != 0 || img->rgb[3 * i + 2] != 0;
	return c;
}

START_TEST(mass_conserved_adaptive)
{
	struct scene *sc = scene_new(4);
	struct sim_state st;
	size_t n = scene_bodies(&st);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, IMG, IMG), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	for (int c = 0; c < 3; c++) {
		double want = 0, got = 0;
		for (size_t i = 0; i < n; i++)
			want += st.mass[i] / u_test.mass * comp_colors[st.comp[i]][c];
		for (size_t i = 0; i < (size_t)IMG * IMG; i++)
			got += img.rgb[3 * i + c];
		ck_assert_close(got, want, 0, 1e-5);
	}
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Body b alone (others at mass 0: same positions, so same h), its nonzero
 * pixels against the pixel centres strictly inside its kernel support. */
static void footprint_of(const struct scene *sc, const struct sim_state *st0, size_t b,
			 size_t *got, size_t *want)
{
	struct sim_state st;
	state_new(&st, st0->n);
	memcpy(st.pos, st0->pos, 3 * st0->n * sizeof *st.pos);
	for (size_t i = 0; i < st0->n; i++)
		st.mass[i] = i == b ? st0->mass[i] : 0.0;
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, IMG, IMG), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
	*got = nonzero_pixels(&img);

	double px = st.pos[3 * b] / u_test.length, py = st.pos[3 * b + 1] / u_test.length,
	       pz = st.pos[3 * b + 2] / u_test.length;
	double depth = py + 10, f = focal();
	double x = 0.5 * IMG + f * px / depth, y = 0.5 * IMG - f * pz / depth;
	double r = brute_h(&st, b, sc->render.neighbours) / depth * f;
	size_t c = 0;
	for (int j = 0; j < IMG; j++)
		for (int i = 0; i < IMG; i++)
			c += hypot(i + 0.5 - x, j + 0.5 - y) < r;
	*want = (r < 0.5 || c == 0) ? 1 : c;
	render_image_free(&img);
	sim_state_free(&st);
}

START_TEST(cluster_footprint_smaller_than_isolated)
{
	struct scene *sc = scene_new(4);
	struct sim_state st;
	scene_bodies(&st);
	/* The isolated body: h = 1 exactly, r = f / 10 ~ 11.1 px. */
	ck_assert_double_eq(brute_h(&st, ISO, 4), 1.0);
	size_t got_iso, want_iso;
	footprint_of(sc, &st, ISO, &got_iso, &want_iso);
	ck_assert_uint_eq(got_iso, want_iso);
	double r_iso = focal() / 10;
	ck_assert_close((double)got_iso, M_PI * r_iso * r_iso, 0, 0.05);
	for (size_t b = 0; b < NCL; b += 7) {
		size_t got, want;
		footprint_of(sc, &st, b, &got, &want);
		ck_assert_uint_eq(got, want);
		ck_assert_uint_lt(got * 10, got_iso);
	}
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Four bodies on a square of side 0.5 in the screen plane: with k = 1 every
 * h is 0.5; with k = 32 (k_eff = 3) every h is the diagonal sqrt(0.5). Both
 * must render exactly like the fixed smoothing of that length. */
START_TEST(known_h_renders_like_fixed)
{
	static const double sq[4][2] = {{-0.25, -0.25}, {0.25, -0.25}, {-0.25, 0.25}, {0.25, 0.25}};
	static const int ks[2] = {1, 32};
	const double hs[2] = {0.5, sqrt(0.5)};
	struct sim_state st;
	state_new(&st, 4);
	for (size_t i = 0; i < 4; i++)
		set_body(&st, i, sq[i][0] + 0.125, 0, sq[i][1], 1.0 + i);
	for (int t = 0; t < 2; t++) {
		for (int kern = 0; kern < 2; kern++) {
			struct scene *sc = scene_new(ks[t]);
			sc->render.kernel = kern ? SCENE_KERNEL_GAUSSIAN : SCENE_KERNEL_CUBIC;
			struct render_image a, b;
			ck_assert_int_eq(render_image_alloc(&a, IMG, IMG), 0);
			ck_assert_int_eq(render_image_alloc(&b, IMG, IMG), 0);
			ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &a), 0);
			sc->render.smoothing_adaptive = 0;
			sc->render.smoothing = hs[t];
			ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &b), 0);
			ck_assert_uint_gt(nonzero_pixels(&a), 4);
			ck_assert_int_eq(memcmp(a.rgb, b.rgb, (size_t)IMG * IMG * 3 * sizeof *a.rgb), 0);
			render_image_free(&a);
			render_image_free(&b);
			free(sc);
		}
	}
	sim_state_free(&st);
}
END_TEST

/* A single body has no neighbour: h falls back to render.smoothing. */
START_TEST(single_body_uses_fallback)
{
	struct scene *sc = scene_new(8);
	sc->render.smoothing = 0.7;
	struct sim_state st;
	state_new(&st, 1);
	set_body(&st, 0, 0.3, 0.2, -0.1, 2.0);
	struct render_image a, b;
	ck_assert_int_eq(render_image_alloc(&a, IMG, IMG), 0);
	ck_assert_int_eq(render_image_alloc(&b, IMG, IMG), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &a), 0);
	ck_assert_int_eq(render_splat_h(sc, &cam_std, &st, &u_test, NULL, &b), 0);
	ck_assert_uint_gt(nonzero_pixels(&a), 100);
	ck_assert_int_eq(memcmp(a.rgb, b.rgb, (size_t)IMG * IMG * 3 * sizeof *a.rgb), 0);
	render_image_free(&a);
	render_image_free(&b);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* A clumpy cloud of 20000 bodies: render_splat(adaptive) is render_splat_h
 * with render_adaptive_h's h, for 1 and 2 threads, bit for bit; and it is
 * not the fixed-smoothing picture. */
START_TEST(splat_uses_render_adaptive_h)
{
	const size_t n = 20000;
	struct scene *sc = scene_new(16);
	struct sim_state st;
	state_new(&st, n);
	unsigned long long s = 777;
	for (size_t i = 0; i < n; i++) {
		/* Half in a dense core of radius ~0.2, half spread over ~3. */
		double sc_r = i % 2 ? 0.2 : 3.0;
		double x = sc_r * (urand(&s) - 0.5), y = sc_r * (urand(&s) - 0.5),
		       z = sc_r * (urand(&s) - 0.5);
		set_body(&st, i, x, y, z, 1.0 / n);
	}
	double *p = malloc(3 * n * sizeof *p), *h = malloc(n * sizeof *h);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(h);
	for (size_t i = 0; i < 3 * n; i++)
		p[i] = st.pos[i] / u_test.length;
	ck_assert_int_eq(render_adaptive_h(p, NULL, n, 16, sc->render.smoothing, h), 0);

	struct render_image ref, img, fixed;
	ck_assert_int_eq(render_image_alloc(&ref, IMG, IMG), 0);
	ck_assert_int_eq(render_image_alloc(&img, IMG, IMG), 0);
	ck_assert_int_eq(render_image_alloc(&fixed, IMG, IMG), 0);
	ck_assert_int_eq(render_splat_h(sc, &cam_std, &st, &u_test, h, &ref), 0);
	ck_assert_int_eq(render_splat_h(sc, &cam_std, &st, &u_test, NULL, &fixed), 0);
	size_t bytes = (size_t)IMG * IMG * 3 * sizeof *img.rgb;
	ck_assert_int_ne(memcmp(ref.rgb, fixed.rgb, bytes), 0);
	int nt0 = omp_get_max_threads();
	for (int nt = 1; nt <= 2; nt++) {
		omp_set_num_threads(nt);
		render_image_clear(&img);
		ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u_test, &img), 0);
		ck_assert_int_eq(memcmp(ref.rgb, img.rgb, bytes), 0);
	}
	omp_set_num_threads(nt0);
	render_image_free(&ref);
	render_image_free(&img);
	render_image_free(&fixed);
	free(p);
	free(h);
	sim_state_free(&st);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_adaptive");
	TCase *tc = tcase_create("render_adaptive");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, mass_conserved_adaptive);
	tcase_add_test(tc, cluster_footprint_smaller_than_isolated);
	tcase_add_test(tc, known_h_renders_like_fixed);
	tcase_add_test(tc, single_body_uses_fallback);
	tcase_add_test(tc, splat_uses_render_adaptive_h);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
