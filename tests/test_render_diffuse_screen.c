/* test_render_diffuse_screen.c - render.diffuse_smoothing: screen (the
 * diffuse layer made from the stars' own light on an image pyramid,
 * render/diffuse_screen.c, rule in render/pyramid_shared.h).
 *
 * Expectations are independent of the code: the layer's total equals the
 * stars' total (the rule's normalisation); a random field of bodies of
 * density p gives a layer whose relative scatter stays under the noise of
 * a smoothing that holds k bodies (sqrt((1 - p) / n), n the bodies under
 * the coarser-but-one level's kernel, derived below) and whose mean does
 * not depend on the position inside a coarse cell (no blocks or seams);
 * one body's light on such a field spreads with an rms radius of about
 * 0.71 r_k, r_k = sqrt(k / (pi p)) the radius of the disc holding k
 * bodies, halving when the density is 4 times higher; the counts are the
 * drawn bodies that project into the frame, projected here by hand.
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_diffuse_screen &&
 *   build-cpu/tests/test_render_diffuse_screen */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/pyramid_shared.h"
#include "render/render.h"
#include "test_render_util.h"

static double hash01(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 32;
	return (double)(x >> 11) / 9007199254740992.0;
}

static double sum_img(const struct render_image *img)
{
	double s = 0;
	for (size_t k = 0; k < (size_t)img->w * img->h * 3; k++)
		s += img->rgb[k];
	return s;
}

/* A field of bodies: each pixel holds one with probability p (light
 * (1, 1, 1) in S, 1 in its level-1 count cell). */
static void field(struct render_image *s, float *c1, double p, uint64_t seed)
{
	int gw = render_lod_dim(s->w, 1);
	memset(s->rgb, 0, (size_t)s->w * s->h * 3 * sizeof(float));
	memset(c1, 0, (size_t)gw * render_lod_dim(s->h, 1) * sizeof(float));
	for (int j = 0; j < s->h; j++)
		for (int i = 0; i < s->w; i++)
			if (hash01(seed, (uint64_t)j * s->w + i) < p) {
				for (int c = 0; c < 3; c++)
					s->rgb[3 * ((size_t)j * s->w + i) + c] = 1.0f;
				c1[(size_t)(j / 2) * gw + i / 2] += 1.0f;
			}
}

/* Random light and counts, even and odd sizes, k 4 and 200: the layer's
 * total is the stars' total; an empty image gives an empty layer. */
START_TEST(layer_keeps_the_stars_light)
{
	const int sizes[2][2] = {{200, 120}, {201, 131}}, ks[2] = {4, 200};
	for (int z = 0; z < 2; z++)
		for (int q = 0; q < 2; q++) {
			int w = sizes[z][0], h = sizes[z][1];
			struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1);
			sc->render.neighbours = ks[q];
			struct render_image s, layer;
			ck_assert_int_eq(render_image_alloc(&s, w, h), 0);
			ck_assert_int_eq(render_image_alloc(&layer, w, h), 0);
			size_t ncell = (size_t)render_lod_dim(w, 1) * render_lod_dim(h, 1);
			float *c1 = calloc(ncell, sizeof *c1);
			ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
			ck_assert_double_eq(sum_img(&layer), 0.0);
			for (size_t k = 0; k < (size_t)w * h * 3; k++)
				s.rgb[k] = (float)(hash01(7 + z, k) < 0.02 ? 100 * hash01(9, k) : hash01(8, k));
			for (size_t k = 0; k < ncell; k++)
				c1[k] = (float)(int)(4 * hash01(11 + q, k));
			ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
			double t0 = sum_img(&s), t1 = sum_img(&layer);
			printf("layer %dx%d k %d: stars %.9g layer %.9g\n", w, h, ks[q], t0, t1);
			ck_assert_close(t1, t0, 0, 1e-5);
			free(c1);
			render_image_free(&s);
			render_image_free(&layer);
			free(sc);
		}
}
END_TEST

#define FW 768
#define FH 512 /* render_diffuse_lmax: 3 (cells up to 8 px) */

/* Bodies on a fraction p = 0.05 of the pixels, k = 32. The level-l kernel
 * (cell c = 2^l) has a per-axis variance of 1.25 c^2, so an effective area
 * 1 / int K^2 = 4 pi 1.25 c^2 = 5 pi c^2 (Gaussian) holding n_l = 5 pi 4^l
 * p bodies: n = 3.1, 12.6, 50.3 at l = 1, 2, 3; the layer blends levels 2
 * and 3, and the relative scatter of a Bernoulli field smoothed over n
 * bodies is sqrt((1 - p) / n): at most sqrt(0.95 / 12.6) = 0.27 (level 2
 * alone), 0.14 at level 3; the flatter binomial and tent kernels only
 * lower it. Interior: 3 coarsest cells (48 px) from the edges. */
START_TEST(uniform_field_gives_uniform_layer)
{
	const double p = 0.05;
	struct scene *sc = render_test_scene(FW, FH, SCENE_KERNEL_CUBIC, 1);
	sc->render.neighbours = 32;
	struct render_image s, layer;
	ck_assert_int_eq(render_image_alloc(&s, FW, FH), 0);
	ck_assert_int_eq(render_image_alloc(&layer, FW, FH), 0);
	float *c1 = malloc((size_t)(FW / 2) * (FH / 2) * sizeof *c1);
	field(&s, c1, p, 21);
	ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
	double n2 = 5 * M_PI * 16 * p, bound = sqrt((1 - p) / n2);
	double sum = 0, sum2 = 0, phase[8][8] = {{0}};
	long cnt = 0, pc[8][8] = {{0}};
	for (int j = 48; j < FH - 48; j++)
		for (int i = 48; i < FW - 48; i++) {
			double v = layer.rgb[3 * ((size_t)j * FW + i)];
			sum += v;
			sum2 += v * v;
			cnt++;
			phase[j % 8][i % 8] += v;
			pc[j % 8][i % 8]++;
		}
	double mean = sum / cnt, rstd = sqrt(sum2 / cnt - mean * mean) / mean;
	printf("uniform field: mean %.5f (p %.3f), relative std %.4f (bound %.4f)\n", mean, p, rstd, bound);
	ck_assert_close(mean, p, 0, 0.05);
	ck_assert_double_lt(rstd, bound);
	/* No blocks: the mean at each position inside an 8 px cell is the
	 * overall mean within a few standard errors. A phase mean averages the
	 * interior's ~280000 / 64 pixels, but the layer is correlated over one
	 * kernel area (5 pi 4^2.5 ~ 500 px), so it holds ~560 independent
	 * values: standard error rstd / 24; bound rstd / 4 (6 errors: the
	 * phase means are not independent either). */
	double worst = 0;
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			worst = fmax(worst, fabs(phase[a][b] / pc[a][b] / mean - 1));
	printf("uniform field: worst phase deviation %.4f (bound %.4f)\n", worst, rstd / 4);
	ck_assert_double_lt(worst, rstd / 4);
	free(c1);
	render_image_free(&s);
	render_image_free(&layer);
	free(sc);
}
END_TEST

/* rms radius of the layer of one body of light 1 at pixel (384, 256) on a
 * field of density p (the body's own light as the stars image, the field's
 * counts, the body counted too). */
static double lone_rms(double p)
{
	struct scene *sc = render_test_scene(FW, FH, SCENE_KERNEL_CUBIC, 1);
	sc->render.neighbours = 32;
	struct render_image s, layer;
	ck_assert_int_eq(render_image_alloc(&s, FW, FH), 0);
	ck_assert_int_eq(render_image_alloc(&layer, FW, FH), 0);
	float *c1 = malloc((size_t)(FW / 2) * (FH / 2) * sizeof *c1);
	field(&s, c1, p, 33);
	memset(s.rgb, 0, (size_t)FW * FH * 3 * sizeof(float));
	const int ci = FW / 2, cj = FH / 2;
	for (int c = 0; c < 3; c++)
		s.rgb[3 * ((size_t)cj * FW + ci) + c] = 1.0f;
	c1[(size_t)(cj / 2) * (FW / 2) + ci / 2] += 1.0f;
	ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
	double tot = 0, r2 = 0;
	for (int j = 0; j < FH; j++)
		for (int i = 0; i < FW; i++) {
			double v = layer.rgb[3 * ((size_t)j * FW + i)];
			double dx = i - ci, dy = j - cj;
			tot += v;
			r2 += v * (dx * dx + dy * dy);
		}
	ck_assert_close(tot, 1.0, 0, 1e-5);
	free(c1);
	render_image_free(&s);
	render_image_free(&layer);
	free(sc);
	return sqrt(r2 / tot);
}

/* Expected rms: sqrt(2 x 1.25) c at the level where 5 pi c^2 p = k, i.e.
 * sqrt(2.5 k / (5 pi p)) = 0.71 r_k; accepted within [0.5, 1.0] r_k (the
 * level is interpolated between two, and the counts are noisy). */
START_TEST(lone_body_spreads_over_the_k_radius)
{
	const double ps[2] = {0.05, 0.2};
	double rms[2];
	for (int q = 0; q < 2; q++) {
		rms[q] = lone_rms(ps[q]);
		double rk = sqrt(32 / (M_PI * ps[q]));
		printf("lone body, p %.2f: rms radius %.2f px, r_k %.2f px (ratio %.3f)\n", ps[q], rms[q],
		       rk, rms[q] / rk);
		ck_assert_double_gt(rms[q], 0.5 * rk);
		ck_assert_double_lt(rms[q], 1.0 * rk);
	}
	ck_assert_close(rms[0] / rms[1], 2.0, 0, 0.25); /* r_k ~ p^-1/2 */
}
END_TEST

/* The scene of lone_star_stays_a_star into s and c1: the dense field in
 * x < 200, and the star's 5 x 5 footprint at (ci, cj) counted as one body;
 * *e gets the star's light, *t0 the field's. */
static void lone_star_input(struct render_image *s, float *c1, int ci, int cj, int R, double *e,
			    double *t0)
{
	field(s, c1, 0.2, 57);
	for (int j = 0; j < FH; j++)
		for (int i = 200; i < FW; i++) {
			for (int c = 0; c < 3; c++)
				s->rgb[3 * ((size_t)j * FW + i) + c] = 0.0f;
			c1[(size_t)(j / 2) * (FW / 2) + i / 2] = 0.0f;
		}
	*e = 0;
	*t0 = sum_img(s);
	for (int dy = -R; dy <= R; dy++)
		for (int dx = -R; dx <= R; dx++) {
			double v = exp(-(dx * dx + dy * dy) / 2.0);
			for (int c = 0; c < 3; c++)
				s->rgb[3 * ((size_t)(cj + dy) * FW + ci + dx) + c] = (float)v;
			*e += 3 * (float)v;
		}
	c1[(size_t)(cj / 2) * (FW / 2) + ci / 2] = 1.0f;
}

/* The light of s in the star's footprint (m[0]), around it (m[1], its
 * peak pixel m[2]) and the brightest pixel beyond reach at x >= 260 (m[3]). */
static void lone_star_measure(const struct render_image *s, int ci, int cj, int R, int cell,
			      double m[4])
{
	m[0] = m[1] = m[2] = m[3] = 0;
	for (int j = 0; j < FH; j++)
		for (int i = 0; i < FW; i++) {
			double v = 0;
			for (int c = 0; c < 3; c++)
				v += s->rgb[3 * ((size_t)j * FW + i) + c];
			int ax = abs(i - ci), ay = abs(j - cj);
			if (ax <= R && ay <= R) {
				m[0] += v;
			} else if (ax > 5 * cell + R || ay > 5 * cell + R) {
				if (i >= 260)
					m[3] = fmax(m[3], v);
			} else {
				m[1] += v;
				m[2] = fmax(m[2], v);
			}
		}
}

/* A lone star (a 5 x 5 footprint, R = 2 px, light E, one body) near the
 * centre of an FW x FH frame, dark but for a dense field (p = 0.2, w = 1)
 * in x < 200 that holds most of the light (so a global normalisation
 * alone cannot hide a halo), k = 32, d = 0.5 (alpha = 1/3). No
 * level holds k (one body: the count blur peaks at c0^2 per cell, c0 the
 * blur's centre tap, render_pyr_tap(0) = 0.399), so w_p = n_Lmax(p) / k
 * <= w_max = 5 pi c0^2 / k = 0.078 everywhere. The
 * frame out = S (1 - alpha w) + alpha L, sum L = sum w S <= w_max E:
 *  - in the footprint: at least (1 - alpha w_max) E = 0.977 (the old rule,
 *    w = 1: (1 - alpha) E plus alpha's share that the coarsest cells put
 *    back, ~0.67 + 0.02);
 *  - outside it: at most alpha w_max E in all, and per pixel at most
 *    alpha w_max E q^2 / 4^Lmax: L = f w raw, w and raw both the star's
 *    cell blurred at level Lmax, so L's shape is the square of the blur
 *    kernel, whose peak cell holds q^2 of its total, q = c0^2 / sum c_k^2
 *    per axis (0.564 for the 9-tap Gaussian; 36/70 for the binomial 1 4 6
 *    4 1 of before); the bilinear upsampling only flattens it;
 *  - nothing at all beyond 5 coarsest cells + R (the count and the light
 *    of the star reach RENDER_PYR_R = 4 blur cells around its cells, the
 *    bilinear sample one more) but the dense field's own light (x < 260);
 *  - the frame's total is the stars' total. */
START_TEST(lone_star_stays_a_star)
{
	const double d = 0.5, alpha = d / (1 + d), k = 32;
	const int R = 2, ci = FW / 2 + 3, cj = FH / 2 - 5, lmax = render_diffuse_lmax(FH);
	const int cell = 1 << lmax;
	struct scene *sc = render_test_scene(FW, FH, SCENE_KERNEL_CUBIC, 1);
	sc->render.neighbours = (int)k;
	struct render_image s, layer;
	ck_assert_int_eq(render_image_alloc(&s, FW, FH), 0);
	ck_assert_int_eq(render_image_alloc(&layer, FW, FH), 0);
	float *c1 = calloc((size_t)(FW / 2) * (FH / 2), sizeof *c1);
	double e, t0;
	lone_star_input(&s, c1, ci, cj, R, &e, &t0);
	ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
	render_diffuse_mix(d, &s, &layer);
	const double c0 = render_pyr_tap(0); /* the blur's centre tap */
	double c2 = 0;
	for (int j = -RENDER_PYR_R; j <= RENDER_PYR_R; j++)
		c2 += render_pyr_tap(j) * render_pyr_tap(j);
	const double q = c0 * c0 / c2;
	double wmax = RENDER_DIFFUSE_AREA * c0 * c0 / k, m[4];
	lone_star_measure(&s, ci, cj, R, cell, m);
	const double in = m[0], out = m[1], peak = m[2], far = m[3];
	double pk = alpha * wmax * e * q * q / (1 << (2 * lmax));
	printf("lone star: kept %.5f of its light in its footprint (bound %.5f), outside %.2e (bound "
	       "%.2e), peak outside %.2e (bound %.2e), beyond %d px %.1e\n",
	       in / e, 1 - alpha * wmax, out / e, alpha * wmax, peak / e, pk / e, 5 * cell + R, far);
	ck_assert_close(sum_img(&s), t0 + e, 0, 1e-5);
	ck_assert_double_ge(in / e, 1 - alpha * wmax - 1e-6);
	ck_assert_double_le(out / e, alpha * wmax + 1e-6);
	ck_assert_double_le(peak, pk * (1 + 1e-4));
	ck_assert_double_eq(far, 0.0);
	free(c1);
	render_image_free(&s);
	render_image_free(&layer);
	free(sc);
}
END_TEST

/* The old rule, written here from the rule's steps 1-4 (the pyramid cell
 * operations and render_diffuse_pixel's raw layer, w_p ignored): the frame
 * (S + d L) / (1 + d), L = raw * sum S / sum raw. *allw: whether every
 * pixel had w_p = 1. */
static void old_frame(const struct render_image *s, const float *c1, double k, double d, float *o,
		      int *allw)
{
	int w = s->w, h = s->h, lmax = render_diffuse_lmax(h);
	size_t os[RENDER_DIFFUSE_MAX_LEVELS + 2], oc[RENDER_DIFFUSE_MAX_LEVELS + 2];
	size_t ns = render_pyr_layout(w, h, 3, lmax, os), nc = render_pyr_layout(w, h, 1, lmax, oc);
	float *sp = malloc(ns * sizeof *sp), *cp = malloc(nc * sizeof *cp), *tmp = malloc(ns * sizeof *tmp);
	struct render_diffuse_levels L;
	for (int l = 1; l <= lmax; l++) {
		L.gw[l] = render_lod_dim(w, l);
		L.gh[l] = render_lod_dim(h, l);
	}
	for (int J = 0; J < L.gh[1]; J++)
		for (int I = 0; I < L.gw[1]; I++)
			render_pyr_down_cell(s->rgb, w, h, sp, L.gw[1], 3, I, J);
	memcpy(cp, c1, (size_t)L.gw[1] * L.gh[1] * sizeof *cp);
	for (int q = 0; q < 2; q++) {
		float *b = q ? cp : sp;
		const size_t *off = q ? oc : os;
		int nch = q ? 1 : 3;
		for (int l = 2; l <= lmax; l++)
			for (int J = 0; J < L.gh[l]; J++)
				for (int I = 0; I < L.gw[l]; I++)
					render_pyr_down_cell(b + off[l - 1], L.gw[l - 1], L.gh[l - 1], b + off[l],
							     L.gw[l], nch, I, J);
		for (int l = 1; l <= lmax; l++)
			for (int ax = 1; ax >= 0; ax--)
				for (int J = 0; J < L.gh[l]; J++)
					for (int I = 0; I < L.gw[l]; I++)
						render_pyr_blur_cell(ax ? b + off[l] : tmp, ax ? tmp : b + off[l],
								     L.gw[l], L.gh[l], nch, ax, 0, I, J);
	}
	for (int l = 1; l <= lmax; l++) {
		L.sb[l] = sp + os[l];
		L.cb[l] = cp + oc[l];
	}
	L.lmax = lmax;
	L.k = k;
	L.wrap = 0;
	double tot = 0, raw = 0;
	*allw = 1;
	for (size_t p = 0; p < (size_t)w * h; p++) {
		double v[3];
		*allw &= render_diffuse_pixel(&L, (int)(p % w), (int)(p / w), v) == 1.0;
		for (int c = 0; c < 3; c++) {
			o[3 * p + c] = (float)v[c];
			raw += o[3 * p + c];
			tot += s->rgb[3 * p + c];
		}
	}
	for (size_t q = 0; q < (size_t)w * h * 3; q++)
		o[q] = (float)((s->rgb[q] + d * (o[q] * tot / raw)) / (1 + d));
	free(sp);
	free(cp);
	free(tmp);
}

/* A dense field (p = 0.2, k = 32: every level-2 disc holds ~50 bodies, so
 * w = 1 everywhere, checked): the frame is the old rule's, value by value
 * to float rounding. */
START_TEST(dense_field_frame_is_unchanged)
{
	const double d = 0.5;
	struct scene *sc = render_test_scene(FW, FH, SCENE_KERNEL_CUBIC, 1);
	sc->render.neighbours = 32;
	struct render_image s, layer;
	ck_assert_int_eq(render_image_alloc(&s, FW, FH), 0);
	ck_assert_int_eq(render_image_alloc(&layer, FW, FH), 0);
	float *c1 = malloc((size_t)(FW / 2) * (FH / 2) * sizeof *c1);
	float *want = malloc((size_t)FW * FH * 3 * sizeof *want);
	field(&s, c1, 0.2, 45);
	int allw;
	old_frame(&s, c1, 32, d, want, &allw);
	ck_assert_int_eq(allw, 1);
	ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &layer), 0);
	render_diffuse_mix(d, &s, &layer);
	double worst = 0;
	for (size_t q = 0; q < (size_t)FW * FH * 3; q++)
		worst = fmax(worst, fabs(s.rgb[q] - want[q]) / fmax(want[q], 1e-3));
	printf("dense field: worst relative difference to the old rule %.2e\n", worst);
	ck_assert_double_lt(worst, 1e-5);
	free(want);
	free(c1);
	render_image_free(&s);
	render_image_free(&layer);
	free(sc);
}
END_TEST

/* Bodies of two components, one drawn black, at known screen positions
 * through cam_std (x = w/2 + f X / 10, y = h/2 - f Z / 10): the counts sum
 * to the drawn bodies in the frame, each in its own level-1 cell. */
START_TEST(counts_are_the_drawn_bodies_in_the_frame)
{
	const int w = 160, h = 96, n = 3000;
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1);
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 2), 0);
	st.comps[0].color[0] = st.comps[0].color[1] = st.comps[0].color[2] = 1.0f;
	st.comps[0].brightness = st.comps[1].brightness = 1.0f;
	double f = render_test_focal(h, cam_std.fov);
	int gw = render_lod_dim(w, 1), gh = render_lod_dim(h, 1);
	float *want = calloc((size_t)gw * gh, sizeof *want), *c1 = malloc((size_t)gw * gh * sizeof *c1);
	double total = 0;
	for (int b = 0; b < n; b++) {
		double x = -20 + (w + 40) * hash01(1, b) + 0.25, y = -20 + (h + 40) * hash01(2, b) + 0.25;
		x = floor(x) + 0.5;
		y = floor(y) + 0.5; /* pixel centres: no ties with the cell edges */
		st.pos[3 * b] = (x - w / 2.0) * 10 / f;
		st.pos[3 * b + 1] = 0;
		st.pos[3 * b + 2] = (h / 2.0 - y) * 10 / f;
		st.mass[b] = 1;
		st.comp[b] = (uint16_t)(b % 3 == 0);
		if (st.comp[b] == 0 && x >= 0 && x < w && y >= 0 && y < h) {
			want[(size_t)((int)y / 2) * gw + (int)x / 2] += 1;
			total++;
		}
	}
	struct sim_units u = {1, 1, 1, 1, 1};
	render_diffuse_counts(sc, &cam_std, &st, &u, c1);
	double got = 0;
	for (size_t k = 0; k < (size_t)gw * gh; k++) {
		ck_assert_msg(c1[k] == want[k], "cell %zu: %g, expected %g", k, c1[k], want[k]);
		got += c1[k];
	}
	ck_assert_double_eq(got, total);
	ck_assert_double_gt(total, 1000);
	free(want);
	free(c1);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* A cluster of bodies round the pixel corner (cx, cy): each pixel whose
 * centre lies within r holds one with probability p (light (1, 0.5,
 * 0.25), 1 in its count cell); columns taken mod w; when mirror, column
 * w-1-i draws what column i draws (a cluster symmetric about the seam). */
static void cluster(struct render_image *s, float *c1, int cx, int cy, int r, double p, int mirror)
{
	const int w = s->w, gw = render_lod_dim(w, 1);
	memset(s->rgb, 0, (size_t)w * s->h * 3 * sizeof(float));
	memset(c1, 0, (size_t)gw * render_lod_dim(s->h, 1) * sizeof(float));
	for (int j = cy - r; j <= cy + r; j++)
		for (int di = -r; di <= r; di++) {
			const int i = ((cx + di) % w + w) % w;
			const int key = mirror && i >= w / 2 ? w - 1 - i : i;
			const int dx = 2 * di + 1, dy = 2 * (j - cy) + 1; /* from the corner (cx, cy) */
			if (dx * dx + dy * dy > 4 * r * r || hash01(key, j) >= p)
				continue;
			const float col[3] = {1.0f, 0.5f, 0.25f};
			for (int c = 0; c < 3; c++)
				s->rgb[3 * ((size_t)j * w + i) + c] = col[c];
			c1[(size_t)(j / 2) * gw + i / 2] += 1.0f;
		}
}

/* camera.projection: equirectangular: the screen layer's pyramid wraps at
 * the +-180 degree seam (rows: clamped at the poles). 1024 x 512 (levels
 * 1-3: cells up to 8 px), k 32, a cluster of radius 14 px and density 0.3 centred on the
 * seam (x = 0 = w, row 256):
 *  - drawn symmetric about the seam, its layer is the mirror image of
 *    itself (pixel i and w-1-i);
 *  - its layer is the layer of the same cluster drawn in the middle of the
 *    frame (x = w/2) turned by w/2 (a whole number of the coarsest cells):
 *    the seam is no edge;
 *  - a cluster on the right of the seam only (x = 7, radius 6) lights the
 *    last columns of the frame (left of the seam) with wrap, and not at
 *    all with the clamped pyramid (perspective). */
START_TEST(layer_wraps_across_the_equirect_seam)
{
	const int w = 1024, h = 512, gw = render_lod_dim(w, 1), gh = render_lod_dim(h, 1);
	const size_t nv = (size_t)w * h * 3;
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 1);
	sc->render.neighbours = 32;
	sc->camera.projection = SCENE_PROJ_EQUIRECT;
	ck_assert_int_eq(render_diffuse_lmax(h), 3);
	struct render_image s, seam, mid;
	ck_assert_int_eq(render_image_alloc(&s, w, h), 0);
	ck_assert_int_eq(render_image_alloc(&seam, w, h), 0);
	ck_assert_int_eq(render_image_alloc(&mid, w, h), 0);
	float *c1 = calloc((size_t)gw * gh, sizeof *c1);
	ck_assert_ptr_nonnull(c1);
	cluster(&s, c1, 0, 256, 14, 0.3, 1);
	double stars = sum_img(&s);
	ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &seam), 0);
	ck_assert_close(sum_img(&seam), stars, 0, 1e-5);
	/* the same cluster turned by w/2: stars by w/2 columns, counts by gw/2 cells */
	struct render_image s2;
	ck_assert_int_eq(render_image_alloc(&s2, w, h), 0);
	float *c2 = calloc((size_t)gw * gh, sizeof *c2);
	ck_assert_ptr_nonnull(c2);
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++)
			for (int c = 0; c < 3; c++)
				s2.rgb[3 * ((size_t)j * w + (i + w / 2) % w) + c] = s.rgb[3 * ((size_t)j * w + i) + c];
	for (int J = 0; J < gh; J++)
		for (int I = 0; I < gw; I++)
			c2[(size_t)J * gw + (I + gw / 2) % gw] = c1[(size_t)J * gw + I];
	ck_assert_int_eq(render_diffuse_layer(sc, &s2, c2, &mid), 0);
	free(c2);
	render_image_free(&s2);
	double vmax = 0;
	for (size_t k = 0; k < nv; k++)
		vmax = fmax(vmax, seam.rgb[k]);
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++)
			for (int c = 0; c < 3; c++) {
				const float a = seam.rgb[3 * ((size_t)j * w + i) + c];
				const float m = seam.rgb[3 * ((size_t)j * w + (w - 1 - i)) + c];
				const float t = mid.rgb[3 * ((size_t)j * w + (i + w / 2) % w) + c];
				ck_assert_msg(fabs(a - m) <= 1e-6 * vmax + 1e-5 * a,
					      "mirror (%d,%d,%d): %.9g vs %.9g", i, j, c, a, m);
				ck_assert_msg(fabs(a - t) <= 1e-6 * vmax + 1e-5 * t,
					      "turned (%d,%d,%d): %.9g vs %.9g", i, j, c, a, t);
			}
	for (int proj = 0; proj < 2; proj++) {
		sc->camera.projection = proj ? SCENE_PROJ_EQUIRECT : SCENE_PROJ_PERSPECTIVE;
		cluster(&s, c1, 7, 256, 6, 0.5, 0);
		ck_assert_int_eq(render_diffuse_layer(sc, &s, c1, &seam), 0);
		double left = 0; /* columns w-6 .. w-1 of the cluster's rows */
		for (int j = 250; j <= 262; j++)
			for (int i = w - 6; i < w; i++)
				left += seam.rgb[3 * ((size_t)j * w + i)];
		printf("layer %s: light left of the seam %.4g of %.4g\n",
		       proj ? "equirect" : "perspective", left, sum_img(&seam));
		if (proj)
			ck_assert_double_gt(left, 1e-3 * sum_img(&seam));
		else
			ck_assert_double_eq(left, 0.0);
	}
	free(c1);
	render_image_free(&s);
	render_image_free(&seam);
	render_image_free(&mid);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_diffuse_screen");
	TCase *tc = tcase_create("screen");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, layer_keeps_the_stars_light);
	tcase_add_test(tc, uniform_field_gives_uniform_layer);
	tcase_add_test(tc, lone_body_spreads_over_the_k_radius);
	tcase_add_test(tc, lone_star_stays_a_star);
	tcase_add_test(tc, dense_field_frame_is_unchanged);
	tcase_add_test(tc, counts_are_the_drawn_bodies_in_the_frame);
	tcase_add_test(tc, layer_wraps_across_the_equirect_seam);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
