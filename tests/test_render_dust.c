/* test_render_dust.c - dust (bodies.*.dust, render/dust.c): absorption in
 * depth slabs composited front to back.
 *
 * Expectations are formulas: a screen of dust whose cross-section per unit
 * area is tau transmits exp(-tau) of the light behind it (Beer-Lambert),
 * and nothing of the light in front of it is lost; emitters and dust mixed
 * uniformly through optical depth tau transmit (1 - e^-tau) / tau (the
 * slab solution of the transfer equation); the generated dust component
 * has round(f N) bodies, the fraction f of the disk's mass, a sech^2 layer
 * of rms height pi z_d / sqrt(12), and kappa with kappa M_d / (2 pi h^2) =
 * tau0; the measure: an edge-on dusty disk's midplane band is at
 * least 30% darker (median) than the bands above and below, and the same
 * disk without dust shows no such dip (< 10%). Scenes without dust take
 * the old code (bit for bit). Bad dust keys fail with file:line.
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_dust &&
 *   build-cpu/tests/test_render_dust */
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

#define W 160
#define H 120
#define MARGIN 24 /* pixels left out at the edges of the screen tests */

static const struct sim_units u_one = {1.0, 1.0, 1.0, 1.0, 1.0};

/* World half-width (x) and half-height (z) that the image covers at depth z, plus a margin. */
static void extent(double z, double *hx, double *hz)
{
	double f = render_test_focal(H, cam_std.fov);
	*hx = z * (0.5 * W + 8) / f;
	*hz = z * (0.5 * H + 8) / f;
}

/* A square grid of spacing s (world units) filling the view at depth z
 * (layer index ignored): count only when st is NULL, else bodies from
 * *at on as component comp with mass m. */
static size_t grid(struct sim_state *st, size_t at, double z, double s, int comp, double m)
{
	double hx, hz;
	extent(z, &hx, &hz);
	int nx = (int)ceil(hx / s), nz = (int)ceil(hz / s);
	size_t k = 0;
	for (int a = -nx; a <= nx; a++)
		for (int b = -nz; b <= nz; b++, k++) {
			if (!st)
				continue;
			size_t i = at + k;
			st->pos[3 * i + 0] = a * s;
			st->pos[3 * i + 1] = cam_std.pos[1] + z;
			st->pos[3 * i + 2] = b * s;
			st->mass[i] = m;
			st->comp[i] = (uint16_t)comp;
		}
	return k;
}

/* Component 0: white emitters; component 1: dust (dark) with kappa, dust_z. */
static void comps_init(struct sim_state *st, double kappa, double dust_z)
{
	for (int c = 0; c < 2; c++)
		snprintf(st->comps[c].name, sizeof st->comps[c].name, c ? "d" : "e");
	for (int k = 0; k < 3; k++) {
		st->comps[0].color[k] = 1.0f;
		st->comps[1].color[k] = 0.0f;
	}
	st->comps[1].brightness = 0.0f;
	st->comps[1].kappa = kappa;
	st->comps[1].dust_z = dust_z;
	st->comps[1].count = 1;
}

static struct scene *dust_scene(int K)
{
	struct scene *sc = render_test_scene(W, H, SCENE_KERNEL_CUBIC, 0.1);
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.psf_fwhm = 1.5;
	sc->render.dust_slabs = K;
	return sc;
}

/* Emitter layers at depths ze[0..ne), spacing se; dust layers at zd[0..nd),
 * spacing sd, each body of mass 1 with cross-section kappa (so a layer's
 * optical depth is kappa / sd^2). */
static void build(struct sim_state *st, const double *ze, int ne, double se, const double *zd,
		  int nd, double sd, double kappa)
{
	size_t n = 0;
	for (int l = 0; l < ne; l++)
		n += grid(NULL, 0, ze[l], se * ze[l] / ze[0], 0, 0);
	for (int l = 0; l < nd; l++)
		n += grid(NULL, 0, zd[l], sd, 1, 0);
	ck_assert_int_eq(sim_state_alloc(st, n, 2), 0);
	/* footprint radius 3 z_d = 2.5 grid steps: the layers are smooth */
	comps_init(st, kappa, 2.5 * sd / RENDER_DUST_H_RATIO);
	size_t at = 0;
	for (int l = 0; l < ne; l++) /* spacing ~ depth: equal light per pixel from each layer */
		at += grid(st, at, ze[l], se * ze[l] / ze[0], 0, 1.0);
	for (int l = 0; l < nd; l++)
		at += grid(st, at, zd[l], sd, 1, 1.0);
}

/* Mean and worst of dusty / clear over the image's interior. */
static void ratio_stats(const struct render_image *a, const struct render_image *b, double *mean,
			double *lo, double *hi)
{
	double s = 0;
	size_t n = 0;
	*lo = INFINITY;
	*hi = -INFINITY;
	for (int j = MARGIN; j < H - MARGIN; j++)
		for (int i = MARGIN; i < W - MARGIN; i++) {
			size_t p = 3 * ((size_t)j * W + i);
			ck_assert(b->rgb[p] > 0);
			double r = a->rgb[p] / b->rgb[p];
			s += r;
			n++;
			*lo = fmin(*lo, r);
			*hi = fmax(*hi, r);
		}
	*mean = s / n;
}

/* The same state with dust (kappa) and without (kappa 0: no dust at all). */
static void render_pair(struct scene *sc, struct sim_state *st, struct render_image *dusty,
			struct render_image *clear)
{
	double kappa = st->comps[1].kappa;
	ck_assert_int_eq(render_image_alloc(dusty, W, H), 0);
	ck_assert_int_eq(render_image_alloc(clear, W, H), 0);
	ck_assert(render_dust_present(st));
	ck_assert_int_eq(render_splat(sc, &cam_std, st, &u_one, dusty), 0);
	st->comps[1].kappa = 0;
	ck_assert(!render_dust_present(st));
	ck_assert_int_eq(render_splat(sc, &cam_std, st, &u_one, clear), 0);
	st->comps[1].kappa = kappa;
}

/* Beer-Lambert: a dust screen at depth 5 in front of emitters at depth
 * 10. The screen's optical depth is kappa m / s^2 wherever the footprints
 * overlap evenly; its pixel-sampled sum ripples by < 0.5% (footprint
 * radius 2.5 grid steps), so exp(-tau) per pixel within 1.5% tau + 1e-3. */
START_TEST(screen_transmits_exp_minus_tau)
{
	static const double taus[] = {0.1, 1.0, 3.0};
	for (int t = 0; t < 3; t++) {
		struct scene *sc = dust_scene(16);
		struct sim_state st;
		const double ze = 10, zd = 5, sd = 0.1;
		build(&st, &ze, 1, 0.05, &zd, 1, sd, taus[t] * sd * sd);
		struct render_image a, b;
		render_pair(sc, &st, &a, &b);
		double mean, lo, hi, want = exp(-taus[t]);
		ratio_stats(&a, &b, &mean, &lo, &hi);
		printf("tau %.1f: transmitted / unobscured mean %.6f, range [%.6f, %.6f], exp(-tau) %.6f\n",
		       taus[t], mean, lo, hi, want);
		double tol = want * (0.015 * taus[t]) + 1e-3;
		ck_assert_close(mean, want, tol, 0);
		ck_assert_close(lo, want, tol, 0);
		ck_assert_close(hi, want, tol, 0);
		render_image_free(&a);
		render_image_free(&b);
		sim_state_free(&st);
		free(sc);
	}
}
END_TEST

/* The same screen BEHIND the emitters absorbs nothing: their slab is in
 * front of all dust, transmission exactly 1 (the image is the clear one,
 * bit for bit). */
START_TEST(dust_behind_absorbs_nothing)
{
	struct scene *sc = dust_scene(16);
	struct sim_state st;
	const double ze = 4, zd = 8, sd = 0.15;
	build(&st, &ze, 1, 0.05, &zd, 1, sd, 3.0 * sd * sd);
	struct render_image a, b;
	render_pair(sc, &st, &a, &b);
	ck_assert_mem_eq(a.rgb, b.rgb, (size_t)W * H * 3 * sizeof(float));
	render_image_free(&a);
	render_image_free(&b);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Emitters and dust mixed evenly in depth: 16 dust layers of tau / 16 and
 * 16 emitter layers of equal light per pixel, one of each in each slab
 * (depths 5 + 2 l / 15). Continuous transfer
 * through a uniform emitting and absorbing medium of total optical depth
 * tau gives (1 - e^-tau) / tau; the slabs must give it too (each slab's
 * emitters see the slabs before it and half-mix with their own). */
START_TEST(mixed_medium_transmits_slab_solution)
{
	struct scene *sc = dust_scene(16);
	struct sim_state st;
	const double tau = 3.0, sd = 0.12;
	double ze[16], zd[16];
	for (int l = 0; l < 16; l++) {
		zd[l] = 5.0 + 2.0 * l / 15.0;
		ze[l] = zd[l]; /* the same slab as its dust layer (slab l + 1) */
	}
	build(&st, ze, 16, 0.04, zd, 16, sd, tau / 16 * sd * sd);
	struct render_image a, b;
	render_pair(sc, &st, &a, &b);
	double mean, lo, hi, want = -expm1(-tau) / tau;
	ratio_stats(&a, &b, &mean, &lo, &hi);
	printf("mixed tau %.1f: mean %.6f, range [%.6f, %.6f], (1 - e^-tau) / tau %.6f\n", tau, mean,
	       lo, hi, want);
	ck_assert_close(mean, want, 0.015 * want, 0);
	render_image_free(&a);
	render_image_free(&b);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Slab rule (render.h): front 0, back K + 1, dust 1..K, bounds included. */
START_TEST(slab_rule)
{
	ck_assert_int_eq(render_dust_slab(0.5, 1, 2, 4, 0), 0);
	ck_assert_int_eq(render_dust_slab(2.5, 1, 2, 4, 0), 5);
	ck_assert_int_eq(render_dust_slab(1.0, 1, 2, 4, 1), 1);
	ck_assert_int_eq(render_dust_slab(2.0, 1, 2, 4, 1), 4);
	ck_assert_int_eq(render_dust_slab(1.6, 1, 2, 4, 0), 3);
	ck_assert_int_eq(render_dust_slab(3.0, 3, 3, 4, 1), 1);
	ck_assert_close(render_dust_mix(0), 1.0, 0, 0);
	ck_assert_close(render_dust_mix(1e-3), (1 - exp(-1e-3)) / 1e-3, 0, 1e-12);
	ck_assert_close(render_dust_mix(2.0), (1 - exp(-2.0)) / 2.0, 0, 1e-14);
}
END_TEST

/* A small galaxy, with or without dust (override strings). */
static const char *galaxy_text =
	"units: galactic\n"
	"seed: 7\n"
	"bodies:\n"
	"  - name: g\n"
	"    model: disk-galaxy\n"
	"    disk: {count: 14000, mass: 5e10, scale: 3.5, scale_height: 0.35, color: [0.6, 0.75, 1]}\n"
	"    bulge: {count: 2000, mass: 1e10, scale: 0.7, color: [1, 0.8, 0.55]}\n"
	"    halo: {count: 4000, mass: 4e11, scale: 15, color: [0, 0, 0]}\n"
	"camera: {position: [0, -22, 0], target: [0, 0, 0], up: [0, 0, 1], fov: 40}\n"
	"render: {width: 640, height: 360, style: stars}\n";

static void galaxy(const char *dust, struct scene *sc, struct sim_state *st)
{
	const char *ov[1] = {dust};
	int err = load_str(galaxy_text, ov, dust ? 1 : 0, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sim_ic_build(sc, st), 0);
}

/* The generated dust: count, mass, kappa, thickness, name, no light. */
START_TEST(dust_component_as_specified)
{
	static struct scene sc;
	struct sim_state st;
	galaxy("bodies.0.dust={mass_fraction: 0.15, opacity: 2.5}", &sc, &st);
	ck_assert_int_eq(st.ncomp, 4);
	ck_assert_uint_eq(st.n, 20000); /* taken from the disk's count */
	const struct sim_component *d = &st.comps[3], *disk = &st.comps[0];
	ck_assert_str_eq(d->name, "g.dust");
	ck_assert_uint_eq(d->count, 2100); /* round(0.15 x 14000) */
	ck_assert_uint_eq(disk->count, 11900);
	ck_assert(sim_component_follows("g", d->name));
	struct sim_units u;
	scene_units_of(sc.units, &u);
	double md = 0, mall = 0, z2 = 0, zs2 = 0;
	for (size_t i = d->first; i < d->first + d->count; i++) {
		ck_assert_int_eq(st.comp[i], 3);
		md += st.mass[i] / u.mass;
		double z = st.pos[3 * i + 2] / u.length;
		z2 += z * z;
	}
	for (size_t i = disk->first; i < disk->first + disk->count; i++) {
		double z = st.pos[3 * i + 2] / u.length;
		zs2 += z * z;
	}
	for (size_t i = 0; i < st.n; i++)
		mall += st.mass[i] / u.mass;
	ck_assert_close(md, 0.15 * 5e10, 0, 1e-9);
	ck_assert_close(mall, 5e10 + 1e10 + 4e11, 0, 1e-9); /* total mass unchanged */
	ck_assert_close(d->kappa * md / (2 * M_PI * 3.5 * 3.5), 2.5, 0, 1e-12);
	ck_assert_close(d->dust_z, SCENE_DUST_Z_RATIO * 0.35, 0, 1e-12);
	/* sech^2(z / z0) has variance pi^2 z0^2 / 12; 2100 samples: ~3% */
	ck_assert_close(sqrt(z2 / d->count), M_PI * d->dust_z / sqrt(12.0), 0, 0.08);
	ck_assert_close(sqrt(zs2 / disk->count), M_PI * 0.35 / sqrt(12.0), 0, 0.08);
	float light[3];
	render_comp_light(d, light);
	ck_assert(light[0] == 0 && light[1] == 0 && light[2] == 0);
	sim_state_free(&st);
}
END_TEST

/* Young stars and dust together: both carved out of the disk's bodies, the
 * young component first (3), then the dust (4); counts by rounding, the
 * total mass and body count as given. */
START_TEST(young_and_dust_share_the_disk)
{
	static struct scene sc;
	struct sim_state st;
	const char *ov[2] = {"bodies.0.disk.young_fraction=0.2", "bodies.0.dust.mass_fraction=0.1"};
	int err = load_str(galaxy_text, ov, 2, &sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	ck_assert_int_eq(st.ncomp, 5);
	ck_assert_uint_eq(st.n, 20000);
	const struct sim_component *disk = &st.comps[0], *y = &st.comps[3], *d = &st.comps[4];
	ck_assert_str_eq(y->name, "g.young");
	ck_assert_str_eq(d->name, "g.dust");
	ck_assert_uint_eq(y->count, 2800); /* round(0.2 x 14000) */
	ck_assert_uint_eq(d->count, 1400); /* round(0.1 x 14000) */
	ck_assert_uint_eq(disk->count, 14000 - 2800 - 1400);
	ck_assert_uint_eq(y->first, st.comps[2].first + st.comps[2].count); /* after the halo */
	ck_assert_uint_eq(d->first, y->first + y->count);
	ck_assert(d->kappa > 0 && y->kappa == 0);
	struct sim_units u;
	scene_units_of(sc.units, &u);
	double mall = 0, mdisk = 0;
	for (size_t i = 0; i < st.n; i++) {
		mall += st.mass[i] / u.mass;
		if (st.comp[i] == 0 || st.comp[i] == 3 || st.comp[i] == 4)
			mdisk += st.mass[i] / u.mass;
	}
	ck_assert_close(mdisk, 5e10, 0, 1e-9);
	ck_assert_close(mall, 5e10 + 1e10 + 4e11, 0, 1e-9);
	for (size_t i = d->first; i < d->first + d->count; i++)
		ck_assert_int_eq(st.comp[i], 4);
	sim_state_free(&st);
}
END_TEST

/* Median luminance of rows [j0, j1] over columns [i0, i1]. */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double band_median(const struct render_image *img, int j0, int j1, int i0, int i1)
{
	size_t n = 0, cap = (size_t)(j1 - j0 + 1) * (i1 - i0 + 1);
	double *v = malloc(cap * sizeof *v);
	ck_assert_ptr_nonnull(v);
	for (int j = j0; j <= j1; j++)
		for (int i = i0; i <= i1; i++) {
			const float *p = img->rgb + 3 * ((size_t)j * img->w + i);
			v[n++] = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
		}
	qsort(v, n, sizeof *v, cmp_d);
	double m = v[n / 2];
	free(v);
	return m;
}

/* Midplane band / the mean of the bands just above and below. The disk is
 * seen edge-on from 22 kpc: z0 = 0.35 kpc is 7.9 px, the dust's z_d =
 * 0.14 kpc 3.1 px. Bands of 2 z_d (7 rows): the midplane rows 177..183,
 * above 169..175, below 185..191; columns within 1.5 disk scale lengths
 * of the centre (|i - 320| <= 118). */
static double midplane_dip(const char *dust)
{
	static struct scene sc;
	struct sim_state st;
	struct render_camera cam;
	galaxy(dust, &sc, &st);
	ck_assert_int_eq(render_camera_at(&sc, 0, &st, &cam), 0);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 640, 360), 0);
	ck_assert_int_eq(render_splat(&sc, &cam, &st, NULL, &img), 0);
	double mid = band_median(&img, 177, 183, 202, 438);
	double above = band_median(&img, 169, 175, 202, 438);
	double below = band_median(&img, 185, 191, 202, 438);
	double ratio = mid / (0.5 * (above + below));
	printf("%s: midplane median %.4g, above %.4g, below %.4g: ratio %.3f\n",
	       dust ? dust : "no dust", mid, above, below, ratio);
	render_image_free(&img);
	sim_state_free(&st);
	return ratio;
}

START_TEST(edge_on_disk_shows_a_lane)
{
	double with = midplane_dip("bodies.0.dust={mass_fraction: 0.1}");
	double without = midplane_dip(NULL);
	ck_assert_msg(with <= 0.7, "dusty midplane / neighbours = %.3f, want <= 0.7", with);
	ck_assert_msg(without >= 0.9, "clear midplane / neighbours = %.3f, want >= 0.9", without);
}
END_TEST

/* The same measure end to end, on the program's 16-bit PNG (NB_BIN, the
 * CPU renderer: stars + diffuse 1 + glow + filmic + auto exposure, as
 * scenes/dusty-disk.yaml), shrunk to 20k bodies and seen edge-on from
 * 22 kpc: the look's tone curve compresses the dip, the 30% must
 * still hold on the displayed values. */
static double program_dip(const char *dust)
{
	make_tmpdir();
	char cmd[2000], path[400];
	snprintf(cmd, sizeof cmd,
		 "'%s' scenes/dusty-disk.yaml --backend cpu -q --set output.frames=1 "
		 "--set output.video= --set output.preview= --set output.png_depth=16 "
		 "--set output.png_dir=%s/frames --set render.width=640 --set render.height=360 "
		 "--set bodies.0.disk.count=14000 --set bodies.0.bulge.count=2000 "
		 "--set bodies.0.halo.count=4000 --set bodies.0.dust.mass_fraction=%s "
		 "--set 'camera.keys=[{frame: 0, position: [0, -22, 0], target: [0, 0, 0]}]'",
		 nb_bin(), g_dir, dust);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	snprintf(path, sizeof path, "%s/frames/frame_00000.png", g_dir);
	int w, h, depth;
	uint16_t *px = read_png(path, &w, &h, &depth);
	ck_assert_int_eq(w, 640);
	ck_assert_int_eq(h, 360);
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, w, h), 0);
	for (size_t k = 0; k < (size_t)w * h * 3; k++)
		img.rgb[k] = px[k];
	double mid = band_median(&img, 177, 183, 202, 438);
	double above = band_median(&img, 169, 175, 202, 438);
	double below = band_median(&img, 185, 191, 202, 438);
	double ratio = mid / (0.5 * (above + below));
	printf("program, dust.mass_fraction %s: midplane %.0f, above %.0f, below %.0f (of 65535): "
	       "ratio %.3f\n", dust, mid, above, below, ratio);
	render_image_free(&img);
	free(px);
	rm_tree(g_dir);
	return ratio;
}

START_TEST(program_frame_shows_the_lane)
{
	double with = program_dip("0.1"), without = program_dip("0");
	ck_assert_msg(with <= 0.7, "dusty midplane / neighbours = %.3f, want <= 0.7", with);
	ck_assert_msg(without >= 0.9, "clear midplane / neighbours = %.3f, want >= 0.9", without);
}
END_TEST

/* No dust: mass_fraction 0 builds the very state of a scene without the
 * key, 3 components, and the frame is render_stars_splat's, bit for bit
 * (the renderer never enters render/dust.c). */
START_TEST(no_dust_is_the_old_path)
{
	static struct scene sa, sb;
	struct sim_state a, b;
	galaxy(NULL, &sa, &a);
	galaxy("bodies.0.dust={mass_fraction: 0, opacity: 5}", &sb, &b);
	ck_assert_int_eq(a.ncomp, 3);
	ck_assert_int_eq(b.ncomp, 3);
	ck_assert_mem_eq(a.pos, b.pos, 3 * a.n * sizeof *a.pos);
	ck_assert_mem_eq(a.vel, b.vel, 3 * a.n * sizeof *a.vel);
	ck_assert_mem_eq(a.mass, b.mass, a.n * sizeof *a.mass);
	ck_assert(!render_dust_present(&a));
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(&sa, 0, &a, &cam), 0);
	struct render_image x, y;
	ck_assert_int_eq(render_image_alloc(&x, 640, 360), 0);
	ck_assert_int_eq(render_image_alloc(&y, 640, 360), 0);
	ck_assert_int_eq(render_splat(&sa, &cam, &a, NULL, &x), 0);
	ck_assert_int_eq(render_stars_splat(&sa, &cam, &a, NULL, &y), 0);
	ck_assert_mem_eq(x.rgb, y.rgb, (size_t)640 * 360 * 3 * sizeof(float));
	/* the disk's first bodies do not move when dust takes the last ones */
	struct sim_state c;
	static struct scene scc;
	galaxy("bodies.0.dust={mass_fraction: 0.1}", &scc, &c);
	ck_assert_mem_eq(a.pos, c.pos, 3 * 12600 * sizeof *a.pos);
	render_image_free(&x);
	render_image_free(&y);
	sim_state_free(&a);
	sim_state_free(&b);
	sim_state_free(&c);
}
END_TEST

/* Bad input: each message names the place (t.yaml:LINE:COL) and the key. */
START_TEST(bad_dust_keys_fail_with_file_line)
{
	static const struct {
		const char *text, *where, *key, *what;
	} cases[] = {
		{"bodies:\n  - name: g\n    model: disk-galaxy\n    dust: {mass_fraction: -0.1}\n",
		 "t.yaml:4:27:", "bodies.0.dust.mass_fraction", "[0, 0.9]"},
		{"bodies:\n  - name: g\n    model: disk-galaxy\n    dust: {mass_fraction: 0.95}\n",
		 "t.yaml:4:27:", "bodies.0.dust.mass_fraction", "[0, 0.9]"},
		{"bodies:\n  - name: g\n    model: disk-galaxy\n    dust: {opacity: -1}\n",
		 "t.yaml:4:21:", "bodies.0.dust.opacity", "[0, 10000]"},
		{"bodies:\n  - name: g\n    model: disk-galaxy\n    dust: {scale_height: -1}\n",
		 "t.yaml:4:26:", "bodies.0.dust.scale_height", ">= 0"},
		{"bodies:\n  - name: g\n    model: disk-galaxy\n    dust: {opacty: 2}\n",
		 "t.yaml:4:12:", "bodies.0.dust.opacty", "opacity"},
		{"bodies:\n  - name: g\n    model: plummer\n    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:4:5:", "bodies.0.dust", "unknown key for model plummer"},
		{"render: {style: smooth}\nbodies:\n  - name: g\n    model: disk-galaxy\n"
		 "    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:5:27:", "bodies.0.dust.mass_fraction", "render.style: stars"},
		{"render: {style: stars}\nbodies:\n  - name: g\n    model: disk-galaxy\n"
		 "    disk: {young_fraction: 0.95}\n    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:6:27:", "bodies.0.dust.mass_fraction", "leaves no room"},
		{"render: {style: stars, color_by: speed}\nbodies:\n  - name: g\n    model: disk-galaxy\n"
		 "    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:5:27:", "bodies.0.dust.mass_fraction", "color_by: component"},
		{"render: {style: stars, mode: density}\nbodies:\n  - name: g\n    model: disk-galaxy\n"
		 "    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:5:27:", "bodies.0.dust.mass_fraction", "render.mode: components"},
		{"render: {style: stars}\nbodies:\n  - name: g\n    model: disk-galaxy\n"
		 "    disk: {count: 4}\n    dust: {mass_fraction: 0.1}\n",
		 "t.yaml:6:27:", "bodies.0.dust.mass_fraction", "rounds to 0"},
		{"render: {style: stars, dust_slabs: 0}\nbodies:\n  - name: g\n    model: disk-galaxy\n",
		 "t.yaml:1:36:", "render.dust_slabs", "[1, 64]"},
		{"camera: {follow: g.dust}\nbodies:\n  - name: g\n    model: disk-galaxy\n",
		 "t.yaml:1:18:", "camera.follow", "g.dust"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		static struct scene sc;
		int err = load_str(cases[i].text, NULL, 0, &sc);
		ck_assert_msg(err == NB_EINPUT, "case %zu loaded", i);
		ck_assert_msg(strstr(g_err, cases[i].where) && strstr(g_err, cases[i].key) &&
				      strstr(g_err, cases[i].what),
			      "case %zu: message '%s' lacks '%s' / '%s' / '%s'", i, g_err,
			      cases[i].where, cases[i].key, cases[i].what);
	}
	/* good: dust with stars loads, and follow g.dust is then a component */
	static struct scene sc;
	int err = load_str("render: {style: stars}\ncamera: {follow: g.dust}\nbodies:\n  - name: g\n"
			   "    model: disk-galaxy\n    dust: {mass_fraction: 0.1}\n",
			   NULL, 0, &sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(scene_dust_count(&sc.bodies[0]), 1000);
	ck_assert_int_eq(sc.render.dust_slabs, 16);
	ck_assert_close(sc.bodies[0].dust.opacity, 3.0, 0, 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_dust");
	TCase *tc = tcase_create("dust");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, slab_rule);
	tcase_add_test(tc, screen_transmits_exp_minus_tau);
	tcase_add_test(tc, dust_behind_absorbs_nothing);
	tcase_add_test(tc, mixed_medium_transmits_slab_solution);
	tcase_add_test(tc, dust_component_as_specified);
	tcase_add_test(tc, young_and_dust_share_the_disk);
	tcase_add_test(tc, edge_on_disk_shows_a_lane);
	tcase_add_test(tc, program_frame_shows_the_lane);
	tcase_add_test(tc, no_dust_is_the_old_path);
	tcase_add_test(tc, bad_dust_keys_fail_with_file_line);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
