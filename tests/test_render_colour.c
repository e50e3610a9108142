/* test_render_colour.c - colour: populations keep their hues through the
 * filmic tone map (the measure), young stars (bodies.*.disk.
 * young_*), render.color_by (los_velocity, speed), the named colormaps
 * against matplotlib's published tables and Green's cubehelix formula, and
 * render.colormap_file. Bad colour input is in test_scene_errors.c.
 *
 *   make CUDA=0 BUILD=/tmp/b /tmp/b/tests/test_render_colour && /tmp/b/tests/test_render_colour
 * (run from the repository root). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "render/render.h"
#include "sim/sim.h"
#include "test_render_util.h"

static struct scene g_sc; /* large: keep off the stack */

/* ---- colormaps ---- */

/* matplotlib's published values (lib/matplotlib/_cm_listed.py): entries
 * 0, 128 and 255 of the 256-entry tables (t = k / 255). */
static const struct {
	enum scene_colormap map;
	const char *name;
	float v[3][3];
} published[] = {
	{SCENE_CMAP_MAGMA, "magma",
	 {{0.001462f, 0.000466f, 0.013866f}, {0.716387f, 0.214982f, 0.47529f}, {0.987053f, 0.991438f, 0.749504f}}},
	{SCENE_CMAP_INFERNO, "inferno",
	 {{0.001462f, 0.000466f, 0.013866f}, {0.735683f, 0.215906f, 0.330245f}, {0.988362f, 0.998364f, 0.644924f}}},
	{SCENE_CMAP_VIRIDIS, "viridis",
	 {{0.267004f, 0.004874f, 0.329415f}, {0.127568f, 0.566949f, 0.550556f}, {0.993248f, 0.906157f, 0.143936f}}},
	{SCENE_CMAP_PLASMA, "plasma",
	 {{0.050383f, 0.029803f, 0.527975f}, {0.798216f, 0.280197f, 0.469538f}, {0.940015f, 0.975158f, 0.131326f}}},
	{SCENE_CMAP_CIVIDIS, "cividis",
	 {{0.0f, 0.135112f, 0.304751f}, {0.488697f, 0.485318f, 0.471008f}, {0.995737f, 0.909344f, 0.217772f}}},
};

START_TEST(colormaps_match_published_values)
{
	const double ts[3] = {0.0, 128.0 / 255.0, 1.0};
	for (size_t m = 0; m < sizeof published / sizeof published[0]; m++)
		for (int k = 0; k < 3; k++) {
			float rgb[3];
			render_colormap(published[m].map, ts[k], rgb);
			for (int c = 0; c < 3; c++)
				ck_assert_msg(fabs(rgb[c] - published[m].v[k][c]) <= 1.0 / 255,
					      "%s at t %g channel %d: %g, published %g", published[m].name,
					      ts[k], c, rgb[c], published[m].v[k][c]);
		}
	/* twilight (510 entries, t = k / 509): its ends, and t = 1/2 between
	 * entries 254 and 255 (their mean). */
	const float tw[3][3] = {{0.885750f, 0.850009f, 0.887974f},
				{0.186136f, 0.078264f, 0.214633f},
				{0.885712f, 0.850022f, 0.885725f}};
	for (int k = 0; k < 3; k++) {
		float rgb[3];
		render_colormap(SCENE_CMAP_TWILIGHT, 0.5 * k, rgb);
		for (int c = 0; c < 3; c++)
			ck_assert_msg(fabs(rgb[c] - tw[k][c]) <= 1.0 / 255, "twilight at %g: %g vs %g",
				      0.5 * k, rgb[c], tw[k][c]);
	}
	/* grey is the identity, and t is clamped */
	float g[3];
	render_colormap(SCENE_CMAP_GREY, 0.25, g);
	ck_assert_float_eq(g[1], 0.25f);
	render_colormap(SCENE_CMAP_VIRIDIS, 7.0, g);
	ck_assert_float_eq_tol(g[2], 0.143936f, 1e-6);
}
END_TEST

/* Green (2011), eq. 2, written out here again: s = 0.5, r = -1.5, h = 1,
 * gamma = 1, clipped to [0, 1]. */
static void green_cubehelix(double l, double out[3])
{
	const double a = l * (1 - l) / 2, phi = 2 * M_PI * (0.5 / 3 - 1.5 * l);
	out[0] = l + a * (-0.14861 * cos(phi) + 1.78277 * sin(phi));
	out[1] = l + a * (-0.29227 * cos(phi) - 0.90649 * sin(phi));
	out[2] = l + a * (1.97294 * cos(phi));
	for (int c = 0; c < 3; c++)
		out[c] = fmin(1, fmax(0, out[c]));
}

START_TEST(cubehelix_equals_greens_formula)
{
	for (int k = 0; k <= 200; k++) {
		double t = k / 200.0, want[3];
		float got[3];
		green_cubehelix(t, want);
		render_colormap(SCENE_CMAP_CUBEHELIX, t, got);
		for (int c = 0; c < 3; c++)
			ck_assert_close(got[c], want[c], 1e-6, 0);
	}
	float e[3];
	render_colormap(SCENE_CMAP_CUBEHELIX, 0, e);
	ck_assert(e[0] == 0 && e[1] == 0 && e[2] == 0); /* black */
	render_colormap(SCENE_CMAP_CUBEHELIX, 1, e);
	ck_assert(e[0] == 1 && e[1] == 1 && e[2] == 1); /* white */
}
END_TEST

/* A LUT file (integers, then decimals) read back row by row, and the
 * scene's map interpolating between rows. */
START_TEST(colormap_file_round_trip)
{
	char dir[] = "/tmp/nb_lutXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int kind = 0; kind < 2; kind++) {
		char path[300], text[400];
		snprintf(path, sizeof path, "%s/map%d.txt", dir, kind);
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "# a test map\n\n");
		for (int k = 0; k < 256; k++) {
			if (kind == 0)
				fprintf(f, "%d %d %d\n", k, 255 - k, (7 * k) % 256);
			else
				fprintf(f, "%.6f %.6f 0.5\n", k / 255.0, 1 - k / 255.0);
		}
		fclose(f);
		snprintf(text, sizeof text,
			 "bodies: [{name: a, model: plummer}]\nrender: {colormap_file: map%d.txt}\n", kind);
		ck_assert_int_eq(scene_load_string(text, "t.yaml", dir, NULL, 0, &g_sc), 0);
		ck_assert_msg(g_sc.render.colormap_file[0] == '/', "stored absolute: %s",
			      g_sc.render.colormap_file);
		for (int k = 0; k < 256; k++) {
			float rgb[3];
			render_colormap_scene(&g_sc, k / 255.0, rgb);
			double want[3] = {k / 255.0, 1 - k / 255.0, kind ? 0.5 : ((7 * k) % 256) / 255.0};
			for (int c = 0; c < 3; c++)
				ck_assert_close(rgb[c], want[c], 2e-6, 0);
		}
		float mid[3];
		render_colormap_scene(&g_sc, 10.5 / 255.0, mid); /* halfway between rows 10 and 11 */
		ck_assert_close(mid[0], 10.5 / 255.0, 2e-6, 0);
		/* emitted and loaded again: the same table */
		char epath[320];
		snprintf(epath, sizeof epath, "%s/emit.yaml", dir);
		f = fopen(epath, "w");
		ck_assert_int_eq(scene_emit(&g_sc, f), 0);
		fclose(f);
		static struct scene again;
		ck_assert_int_eq(scene_load(epath, NULL, 0, &again), 0);
		ck_assert_int_eq(memcmp(again.render.colormap_lut, g_sc.render.colormap_lut,
					sizeof again.render.colormap_lut), 0);
		unlink(epath);
		unlink(path);
	}
	rmdir(dir);
}
END_TEST

/* ---- galaxies ---- */

/* One disk galaxy, N-body units, bulge/halo as given; face-on camera. */
static void galaxy_text(char *buf, size_t len, long nd, long nb, long nh, const char *extra)
{
	snprintf(buf, len,
		 "seed: 7\n"
		 "simulation: {softening: 0.02}\n"
		 "bodies:\n"
		 "  - name: g\n"
		 "    model: disk-galaxy\n"
		 "    disk: {count: %ld, mass: 1, scale: 1, scale_height: 0.1, color: [0.3, 0.5, 1.0]%s}\n"
		 "    bulge: {count: %ld, mass: 0.3, scale: 0.15, color: [1.0, 0.85, 0.3]}\n"
		 "    halo: {count: %ld, mass: 5, scale: 4, brightness: 0}\n"
		 "camera: {position: [0, -0.001, 9], target: [0, 0, 0], up: [0, 1, 0], fov: 40}\n"
		 "render: {width: 160, height: 120, style: stars, tonemap: filmic, gamma: 2.2}\n",
		 nd, extra, nb, nh);
}

static void galaxy_state(const char *text, struct sim_state *st)
{
	ck_assert_int_eq(scene_load_string(text, "g.yaml", ".", NULL, 0, &g_sc), 0);
	ck_assert_int_eq(sim_ic_build(&g_sc, st), 0);
}

/* rms of coordinate d (0..2) over bodies [first, first + n), about 0. */
static double rms_coord(const struct sim_state *st, size_t first, size_t n, int d, int vel)
{
	double s = 0;
	const double *a = vel ? st->vel : st->pos;
	for (size_t i = first; i < first + n; i++)
		s += a[3 * i + d] * a[3 * i + d];
	return sqrt(s / (double)n);
}

START_TEST(young_stars_split_count_and_mass)
{
	char text[1200];
	galaxy_text(text, sizeof text, 6001, 500, 2000,
		    ", young_fraction: 0.25, young_color: [0.2, 0.4, 1], young_brightness: 6");
	struct sim_state st;
	galaxy_state(text, &st);
	ck_assert_int_eq(st.ncomp, 4);
	const struct sim_component *disk = &st.comps[0], *young = &st.comps[3];
	ck_assert_str_eq(young->name, "g.young");
	ck_assert_str_eq(disk->name, "g.disk");
	/* round(0.25 x 6001) = 1500 young, 4501 old; the total unchanged */
	ck_assert_uint_eq(young->count, 1500);
	ck_assert_uint_eq(disk->count, 4501);
	ck_assert_uint_eq(st.n, 6001 + 500 + 2000);
	ck_assert_uint_eq(young->first, 4501 + 500 + 2000);
	ck_assert_float_eq(young->brightness, 6.0f);
	ck_assert_float_eq(young->color[2], 1.0f);
	ck_assert(sim_component_follows("g", young->name));
	double md = 0, my = 0;
	for (size_t i = 0; i < st.n; i++) {
		if (st.comp[i] == 0)
			md += st.mass[i];
		if (st.comp[i] == 3)
			my += st.mass[i];
	}
	/* disk + young = the disk's mass; each body the disk's body mass */
	ck_assert_close(md + my, 1.0, 0, 1e-12);
	ck_assert_close(my, 1500.0 / 6001.0, 0, 1e-12);
	/* thinner: sech^2 rms height is z0 pi / (2 sqrt 3); the young layer's
	 * scale height is half the disk's */
	double zo = rms_coord(&st, disk->first, disk->count, 2, 0);
	double zy = rms_coord(&st, young->first, young->count, 2, 0);
	printf("rms height: old %.4f (sech^2 z0 0.1: %.4f), young %.4f (ratio %.3f)\n", zo,
	       0.1 * M_PI / (2 * sqrt(3)), zy, zy / zo);
	ck_assert_close(zo, 0.1 * M_PI / (2 * sqrt(3)), 0, 0.08);
	ck_assert_close(zy / zo, 0.5, 0, 0.12);
	/* colder: vertical dispersion well below the disk's */
	double vzo = rms_coord(&st, disk->first, disk->count, 2, 1);
	double vzy = rms_coord(&st, young->first, young->count, 2, 1);
	printf("rms v_z: old %.4f young %.4f (ratio %.3f)\n", vzo, vzy, vzy / vzo);
	ck_assert(vzy < 0.75 * vzo);
	sim_state_free(&st);

	/* young_fraction 0: three components, the disk's bodies as before */
	galaxy_text(text, sizeof text, 6001, 500, 2000, "");
	galaxy_state(text, &st);
	ck_assert_int_eq(st.ncomp, 3);
	ck_assert_uint_eq(st.comps[0].count, 6001);
	sim_state_free(&st);
}
END_TEST

/* HSV hue in degrees of a display RGB (0 for grey). */
static double hue_deg(const double c[3])
{
	double mx = fmax(c[0], fmax(c[1], c[2])), mn = fmin(c[0], fmin(c[1], c[2]));
	double d = mx - mn, h;
	if (!(d > 0))
		return 0;
	if (mx == c[0])
		h = fmod((c[1] - c[2]) / d, 6.0);
	else if (mx == c[1])
		h = (c[2] - c[0]) / d + 2;
	else
		h = (c[0] - c[1]) / d + 4;
	h *= 60;
	return h < 0 ? h + 360 : h;
}

/* Rec. 709 luminance of an HDR pixel. */
static double render_lum_test(const float *p)
{
	return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
}

static double hue_diff(double a, double b)
{
	double d = fabs(a - b);
	return d > 180 ? 360 - d : d;
}

/* The colour measure. A face-on disk galaxy, disk [0.3, 0.5, 1]
 * (blue), bulge [1, 0.85, 0.3] (yellow), halo dark; stars style, filmic
 * tone map, auto exposure, gamma 2.2. Hue: HSV hue of the tone-mapped
 * display RGB. A pixel is bulge-dominated where the bulge alone puts more
 * than 4x the disk's light in it, disk-dominated the other way round (each
 * population rendered alone to tell), lit above 1% of the frame's maximum.
 * The circular mean hue of each set must differ by at least 60% of the hue
 * difference of the set colours, display-encoded (c^(1/2.2)). */
START_TEST(bulge_and_disk_keep_distinct_hues)
{
	char text[1200];
	galaxy_text(text, sizeof text, 20000, 4000, 2000, "");
	struct sim_state st;
	galaxy_state(text, &st);
	g_sc.render.exposure_auto = 1;
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(&g_sc, 0, &st, &cam), 0);
	const int w = g_sc.render.width, h = g_sc.render.height;
	struct render_image all, part[2];
	ck_assert_int_eq(render_image_alloc(&all, w, h), 0);
	ck_assert_int_eq(render_stars_splat(&g_sc, &cam, &st, NULL, &all), 0);
	for (int p = 0; p < 2; p++) { /* 0: disk alone, 1: bulge alone */
		ck_assert_int_eq(render_image_alloc(&part[p], w, h), 0);
		float keep = st.comps[1 - p].brightness;
		st.comps[1 - p].brightness = 0;
		ck_assert_int_eq(render_stars_splat(&g_sc, &cam, &st, NULL, &part[p]), 0);
		st.comps[1 - p].brightness = keep;
	}
	uint16_t *o = malloc((size_t)w * h * 3 * sizeof *o);
	struct render_auto_state as = {0};
	render_auto_exposure(&g_sc, &all, &as);
	render_tonemap_gain(&g_sc, &all, as.gain, o);
	double ymax = 0;
	for (int i = 0; i < w * h; i++)
		ymax = fmax(ymax, render_lum_test(all.rgb + 3 * i));
	double sx[2] = {0, 0}, sy[2] = {0, 0};
	int cnt[2] = {0, 0};
	for (int i = 0; i < w * h; i++) {
		double ld = render_lum_test(part[0].rgb + 3 * i), lb = render_lum_test(part[1].rgb + 3 * i);
		if (!(render_lum_test(all.rgb + 3 * i) > 0.01 * ymax))
			continue;
		int set = lb > 4 * ld ? 1 : ld > 4 * lb ? 0 : -1;
		if (set < 0)
			continue;
		double c[3] = {o[3 * i] / 65535.0, o[3 * i + 1] / 65535.0, o[3 * i + 2] / 65535.0};
		double hh = hue_deg(c) * M_PI / 180;
		sx[set] += cos(hh);
		sy[set] += sin(hh);
		cnt[set]++;
	}
	ck_assert_msg(cnt[0] > 50 && cnt[1] > 20, "too few pixels: disk %d bulge %d", cnt[0], cnt[1]);
	double hd = atan2(sy[0], sx[0]) * 180 / M_PI, hb = atan2(sy[1], sx[1]) * 180 / M_PI;
	const double disk_c[3] = {pow(0.3, 1 / 2.2), pow(0.5, 1 / 2.2), 1};
	const double bulge_c[3] = {1, pow(0.85, 1 / 2.2), pow(0.3, 1 / 2.2)};
	double want = hue_diff(hue_deg(disk_c), hue_deg(bulge_c));
	double got = hue_diff(hd < 0 ? hd + 360 : hd, hb < 0 ? hb + 360 : hb);
	printf("colour measure: disk %d px hue %.1f, bulge %d px hue %.1f: difference %.1f of %.1f "
	       "(%.0f%%, want >= 60%%)\n",
	       cnt[0], hd < 0 ? hd + 360 : hd, cnt[1], hb < 0 ? hb + 360 : hb, got, want,
	       100 * got / want);
	ck_assert(got >= 0.6 * want);
	free(o);
	render_image_free(&all);
	render_image_free(&part[0]);
	render_image_free(&part[1]);
	sim_state_free(&st);
}
END_TEST

/* color_by los_velocity: the disk (no bulge) seen edge-on from -y spins
 * counter-clockwise about +z, so its x > 0 side (the right of the frame)
 * recedes and its left side approaches: B / R > 1 on the left, < 1 on the
 * right, in the HDR light summed over each half. */
START_TEST(los_velocity_blue_approaching_red_receding)
{
	char text[1200];
	galaxy_text(text, sizeof text, 8000, 0, 2000, "");
	struct sim_state st;
	galaxy_state(text, &st);
	g_sc.render.color_by = SCENE_COLOR_BY_LOS_VELOCITY;
	g_sc.render.color_range_auto = 1;
	const struct render_camera cam = {.pos = {0, -9, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 40};
	for (int style = 0; style < 2; style++) {
		g_sc.render.style = style ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
		g_sc.render.smoothing = 0.05;
		struct render_image img;
		ck_assert_int_eq(render_image_alloc(&img, g_sc.render.width, g_sc.render.height), 0);
		ck_assert_int_eq(render_splat(&g_sc, &cam, &st, NULL, &img), 0);
		double r[2] = {0, 0}, b[2] = {0, 0};
		for (int j = 0; j < img.h; j++)
			for (int i = 0; i < img.w; i++) {
				if (2 * i + 1 == img.w)
					continue;
				int side = 2 * i >= img.w;
				r[side] += img.rgb[3 * (j * img.w + i)];
				b[side] += img.rgb[3 * (j * img.w + i) + 2];
			}
		double ll = log(b[0] / r[0]), lr = log(b[1] / r[1]);
		printf("los_velocity %s: log(B/R) left %.3f right %.3f\n", style ? "stars" : "smooth",
		       ll, lr);
		ck_assert_msg(ll > 0.1 && lr < -0.1, "left %g right %g", ll, lr);
		render_image_free(&img);
	}
	sim_state_free(&st);
}
END_TEST

/* color_by speed: one body of speed 128/255 x 10 with color_range [0, 10]
 * sits at t = 128/255, viridis' published entry 128; gamma 2 decodes it
 * to linear light; its weight is mass x brightness (its colour ignored).
 * Stars style: the whole weight lands in the image, so the image total
 * per channel is m b entry^2. */
START_TEST(speed_maps_to_colormap_value_at_t)
{
	struct scene *sc = render_test_scene(64, 48, SCENE_KERNEL_CUBIC, 0.1);
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.psf_fwhm = 1.5;
	sc->render.gamma = 2.0;
	sc->render.color_by = SCENE_COLOR_BY_SPEED;
	sc->render.colormap = SCENE_CMAP_VIRIDIS;
	sc->render.color_range[0] = 0;
	sc->render.color_range[1] = 10;
	const struct sim_units u = {1, 1, 1, 1, 1};
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 1, 1), 0);
	st.mass[0] = 2.0;
	st.comps[0].brightness = 1.5f;
	st.comps[0].color[0] = 1; /* ignored by color_by */
	const double v = 10 * 128.0 / 255.0;
	st.vel[0] = v * 0.6;
	st.vel[1] = -v * 0.8;
	struct render_image img;
	ck_assert_int_eq(render_image_alloc(&img, 64, 48), 0);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u, &img), 0);
	const double entry[3] = {0.127568, 0.566949, 0.550556};
	for (int c = 0; c < 3; c++) {
		double tot = 0;
		for (int p = 0; p < 64 * 48; p++)
			tot += img.rgb[3 * p + c];
		ck_assert_close(tot, 2.0 * 1.5 * entry[c] * entry[c], 1e-6, 1e-5);
	}
	/* the per-body colour itself */
	struct render_color_by cb;
	ck_assert_int_eq(render_color_by_init(sc, &st, &u, &cb), 0);
	double col[3];
	const double campos[3] = {0, -10, 0};
	render_color_by_body(&cb, &st, &u, 0, campos, col);
	for (int c = 0; c < 3; c++)
		ck_assert_close(col[c], entry[c] * entry[c], 1e-6, 1e-5);
	/* a component coloured [0, 0, 0] stays hidden under color_by too */
	st.comps[0].color[0] = 0;
	render_image_clear(&img);
	ck_assert_int_eq(render_splat(sc, &cam_std, &st, &u, &img), 0);
	for (int p = 0; p < 64 * 48 * 3; p++)
		ck_assert(img.rgb[p] == 0.0f);
	render_image_free(&img);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* color_range: auto: los_velocity symmetric about 0, speed 1st..99th
 * percentile (nearest rank), against values worked out by hand: 101
 * bodies at the origin moving along y at k - 30 (k = 0..100), seen from
 * far along -y (so v_los = k - 30). Sorted |k - 30|: 0, 1, 1, ..., 30, 30
 * (indices 0..60), then 31..70 (61..100): rank round(0.01 x 100) = 1 is 1,
 * rank round(0.99 x 100) = 99 is 31 + 38 = 69 (the maximum, 70, is not). */
START_TEST(auto_range_is_the_percentiles)
{
	struct scene *sc = render_test_scene(64, 48, SCENE_KERNEL_CUBIC, 0.1);
	sc->render.color_range_auto = 1;
	sc->render.gamma = 1;
	sc->camera.position[1] = -1e6;
	sc->camera.up[2] = 1;
	sc->camera.fov = 40;
	const struct sim_units u = {1, 1, 1, 1, 1};
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 101, 1), 0);
	st.comps[0].color[0] = st.comps[0].color[1] = st.comps[0].color[2] = 1; /* drawn */
	for (int k = 0; k < 101; k++) {
		st.mass[k] = 1;
		st.vel[3 * k + 1] = k - 30; /* along the line of sight */
	}
	struct render_color_by cb;
	sc->render.color_by = SCENE_COLOR_BY_SPEED;
	ck_assert_int_eq(render_color_by_init(sc, &st, &u, &cb), 0);
	ck_assert_close(cb.lo, 1, 0, 1e-12);
	ck_assert_close(cb.hi, 69, 0, 1e-12);
	sc->render.color_by = SCENE_COLOR_BY_LOS_VELOCITY;
	ck_assert_int_eq(render_color_by_init(sc, &st, &u, &cb), 0);
	ck_assert_close(cb.hi, 69, 0, 1e-9);
	ck_assert_close(cb.lo, -69, 0, 1e-9);
	/* the diverging map: white at 0 */
	float wht[3];
	render_diverging(0.5, wht);
	ck_assert(wht[0] == 1 && wht[1] == 1 && wht[2] == 1);
	sim_state_free(&st);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_colour");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, colormaps_match_published_values);
	tcase_add_test(tc, cubehelix_equals_greens_formula);
	tcase_add_test(tc, colormap_file_round_trip);
	tcase_add_test(tc, young_stars_split_count_and_mass);
	tcase_add_test(tc, bulge_and_disk_keep_distinct_hues);
	tcase_add_test(tc, los_velocity_blue_approaching_red_receding);
	tcase_add_test(tc, speed_maps_to_colormap_value_at_t);
	tcase_add_test(tc, auto_range_is_the_percentiles);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
