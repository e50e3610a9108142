/* render.c - nbody-bench render: milliseconds per frame of the GPU renderer
 * (render/cuda/gpu_render.h), stage by stage, measured with CUDA events:
 *
 *   adaptive   k-th neighbour h for every body (render.neighbours = 32)
 *   splat      projection, footprints, binning/sort, deposit
 *   tone       reference level + tone map + colormap + YUV420P (fused)
 *   copy       YUV planes device -> pinned host (its own stream)
 *   gpu        first event to copy end, host gaps included
 *   wall       host wall time per frame with two frames in flight
 *
 * Scenes (positions only; velocities matter only to --blur):
 *   scene     the default scene's own bodies (scenes/galaxy-collision.yaml
 *             scaled to N: two disk galaxies from sim_ic_build, the dark
 *             halo half of the bodies drawn black), its renderer settings
 *             and frame 0's camera; fixed rows use h = 0.3 kpc; tiled only;
 *   galaxies  two disk galaxies (exponential disk with two arms, Hernquist
 *             bulge, Plummer halo drawn), 30 and 60 degrees inclined, 40 apart,
 *             camera 120 away: the two-galaxy case of the issue;
 *   core      one Plummer sphere (a = 1) seen from 8 with fov 40: its core
 *             fills the frame centre, every body's footprint lands in a few
 *             hundred central tiles (the atomics' worst case).
 *
 *   nbody-bench render [--sizes 1080p,4k] [--n 1000000,10000000] [--repeats 5]
 *                      [--png DIR] [--e2e] [--scenes scene,galaxies,core]
 *                      [--look] [--style stars|smooth] [--tonemap filmic|asinh|log|linear]
 *                      [--exposure auto|X] [--glow X] [--diffuse X]
 *                      [--diffuse-smoothing screen|adaptive] [--h-cap X]
 *                      [--blur S] [--shutter X]
 *                      [--projection perspective|fisheye|equirectangular]
 *                      [--stereo none|side-by-side|top-bottom]
 *
 * Projections (issue 15): --projection and --stereo set camera.projection
 * and camera.stereo.mode on every row (fisheye 180 degrees; eye separation
 * and convergence auto); --sizes also takes one WxH, e.g. --sizes 4096x2048
 * (an equirect frame, 2:1 per eye) or 4096x4096 (a domemaster; top-bottom
 * equirect stereo). Sizes that do not fit the projection are the caller's
 * business (the renderer draws what it is given). Stereo rows: the stage
 * columns are the right eye's, gpu and wall the whole frame.
 *
 * The look (issue 14): --look is --style stars --tonemap filmic --exposure
 * auto --glow 0.3 --diffuse 0.3 --diffuse-smoothing screen (later options
 * override; --h-cap 2 goes with --diffuse-smoothing adaptive). With any
 * look option each scene and size gives one row (tiled), drawn with that
 * look on top of the scene's own settings, every per-frame quantity
 * recomputed every frame (adaptive h included: adaptive_every 1), and the
 * table splits the GPU time by stage:
 *   adaptive  the 3D k-nearest-neighbour h (diffuse-smoothing adaptive only)
 *   stars     the splat (stars PSF; the smooth splat for style smooth or the
 *             adaptive diffuse layer's splat)
 *   diffuse   the diffuse layer after it (screen: counts were made by the
 *             stars splat; pyramid, per-pixel level, mix; adaptive: the
 *             stars splat and the mix)
 *   glow      the glow pyramid (threshold sum, extraction, levels, apply)
 *   expo      auto exposure: luminance histogram and the percentile step
 *   tone      total light, tone curve, conversions (YUV420P)
 *   copy      YUV planes to pinned host memory (own stream, overlaps)
 *
 * --blur S (a look option; it also sets --style stars) draws each body S
 * times (render.motion_blur.samples, render/blur_shared.h) with the shutter
 * open --shutter X (default 0.5) of the frame interval: the scene file's
 * rows use its own velocities, dt and steps_per_frame; the synthetic
 * scenes get dt 0.01 x 10 steps and a solid-body spin v = (-y, x, 0)
 * (internal units), which draws streaks of ~10-20 px at 1080p. Compare
 * with the same command without --blur: the stars column should grow
 * about S-fold (the splat runs over S n points).
 *
 * --e2e then runs `nbody-bench e2e` (bench/e2e.c): the default scene end to
 * end, frames per second, beside the simulation alone and x264 alone.
 *
 * Each figure is the median over --repeats frames after one warm-up frame;
 * the camera turns 0.5 degrees per frame. --png writes the 1080p galaxy
 * frame of the first N, fixed and adaptive h, as DIR/frame_0000{0,1}.png
 * (16-bit). Needs a CUDA build and a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sim/cuda/gpu.h"
#include "../render/cuda/gpu_render.h"
#include "../output/output.h"
#include "../render/render.h"
#include "../sim/sim.h"
#include "bench.h"

#define RB_MAX_LIST 8
#define RB_MAX_REPS 64
#define RB_SCENE "scenes/galaxy-collision.yaml" /* run from the repository root */

static double rb_u(uint64_t seed, size_t i, int d)
{
	return sim_rng_uniform(seed, i, (uint64_t)d);
}

/* Uniform direction times r into p. */
static void rb_sphere(uint64_t seed, size_t i, double r, double *p)
{
	double cz = 2 * rb_u(seed, i, 5) - 1, ph = 2 * M_PI * rb_u(seed, i, 6);
	double sz = sqrt(1 - cz * cz);
	p[0] = r * sz * cos(ph);
	p[1] = r * sz * sin(ph);
	p[2] = r * cz;
}

/* One galaxy into bodies [first, first + n), components comp0..comp0+2:
 * 60% disk (scale 3, height 0.3, half of it on two logarithmic arms), 10%
 * bulge (Hernquist a = 0.6), 30% halo (Plummer a = 12, cut at 5a). Masses
 * 0.6, 0.25, 0.15 of 1 per galaxy. Tilted by incl about x, then moved. */
static void rb_galaxy(struct sim_state *st, size_t first, size_t n, const double c[3],
		      double incl, int comp0, uint64_t seed)
{
	size_t nd = n * 6 / 10, nb = n / 10;
	double ci = cos(incl * M_PI / 180), si = sin(incl * M_PI / 180);
#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < n; k++) {
		size_t i = first + k;
		double p[3], m;
		int part = k < nd ? 0 : k < nd + nb ? 1 : 2;
		if (part == 0) {
			double R = -3.0 * log(rb_u(seed, i, 0) * rb_u(seed, i, 1));
			if (R > 30)
				R = 30 * rb_u(seed, i, 2);
			double ph = 2 * M_PI * rb_u(seed, i, 3);
			if (k % 2) /* arms: phi = arm + 2 ln R, with a spread */
				ph = M_PI * (k / 2 % 2) + 2.0 * log(R + 0.5) +
				     0.35 * (rb_u(seed, i, 4) - 0.5);
			double z = 0.3 * atanh(2 * rb_u(seed, i, 7) - 1);
			p[0] = R * cos(ph);
			p[1] = R * sin(ph);
			p[2] = fmax(-3.0, fmin(3.0, z));
			m = 0.6 / (double)nd;
		} else if (part == 1) {
			double s = sqrt(fmin(rb_u(seed, i, 0), 0.9));
			rb_sphere(seed, i, 0.6 * s / (1 - s), p);
			m = 0.25 / (double)nb;
		} else {
			double u = fmin(rb_u(seed, i, 0), 0.943); /* r <= 5a */
			rb_sphere(seed, i, 12.0 / sqrt(pow(u, -2.0 / 3.0) - 1), p);
			m = 0.15 / (double)(n - nd - nb);
		}
		st->pos[3 * i] = p[0] + c[0];
		st->pos[3 * i + 1] = ci * p[1] - si * p[2] + c[1];
		st->pos[3 * i + 2] = si * p[1] + ci * p[2] + c[2];
		st->mass[i] = m;
		st->comp[i] = (uint16_t)(comp0 + part);
	}
}

static void rb_scene_defaults(struct scene *sc, int w, int h, double smoothing)
{
	memset(sc, 0, sizeof *sc);
	sc->units = SCENE_UNITS_NBODY;
	sc->render.width = w;
	sc->render.height = h;
	sc->render.kernel = SCENE_KERNEL_CUBIC;
	sc->render.smoothing = smoothing;
	sc->render.neighbours = 32;
	sc->render.exposure = 1.0;
	sc->render.gamma = 2.2;
	sc->render.tonemap = SCENE_TONEMAP_ASINH;
	sc->render.mode = SCENE_COLOR_COMPONENTS;
	sc->output.frames = 1;
}

static int rb_make_galaxies(size_t n, struct sim_state *st, struct render_camera *cam)
{
	static const float col[6][3] = {{0.55f, 0.7f, 1.0f}, {1.0f, 0.8f, 0.5f}, {0.5f, 0.3f, 0.6f},
					{1.0f, 0.75f, 0.6f}, {1.0f, 0.85f, 0.45f}, {0.4f, 0.35f, 0.6f}};
	if (sim_state_alloc(st, n, 6) != 0)
		return 1;
	for (int c = 0; c < 6; c++)
		memcpy(st->comps[c].color, col[c], sizeof col[c]);
	const double c0[3] = {-20, 0, 0}, c1[3] = {20, 8, 3};
	rb_galaxy(st, 0, n / 2, c0, 30, 0, 101);
	rb_galaxy(st, n / 2, n - n / 2, c1, 60, 3, 202);
	*cam = (struct render_camera){.pos = {0, -110, 50}, .target = {0, 2, 0}, .up = {0, 0, 1}, .fov = 45};
	return 0;
}

static int rb_make_core(size_t n, struct sim_state *st, struct render_camera *cam)
{
	if (sim_state_alloc(st, n, 1) != 0)
		return 1;
	st->comps[0].color[0] = 1.0f;
	st->comps[0].color[1] = 0.9f;
	st->comps[0].color[2] = 0.7f;
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++) {
		double u = fmin(rb_u(77, i, 0), 0.9985); /* r <= 50 */
		rb_sphere(77, i, 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1), st->pos + 3 * i);
		st->mass[i] = 1.0 / (double)n;
		st->comp[i] = 0;
	}
	*cam = (struct render_camera){.pos = {0, -8, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 40};
	return 0;
}

/* The default scene's own bodies (scenes/galaxy-collision.yaml: two disk
 * galaxies of disk 40 %, bulge 10 %, dark halo 50 % each, the halo drawn
 * black) scaled to n bodies, at t = 0, through the camera of frame `frame`.
 * *sc gets the scene (its colours, tone map, units, adaptive smoothing). */
static int rb_make_scene(size_t n, int frame, struct scene *sc, struct sim_state *st,
			 struct render_camera *cam)
{
	char set[6][64];
	const char *ov[6];
	const long part[3] = {(long)(n * 2 / 10), (long)(n / 20), 0};
	for (int g = 0; g < 2; g++) {
		long halo = (long)(n / 2) - part[0] - part[1];
		snprintf(set[3 * g], sizeof set[0], "bodies.%d.disk.count=%ld", g, part[0]);
		snprintf(set[3 * g + 1], sizeof set[0], "bodies.%d.bulge.count=%ld", g, part[1]);
		snprintf(set[3 * g + 2], sizeof set[0], "bodies.%d.halo.count=%ld", g, halo);
	}
	for (int k = 0; k < 6; k++)
		ov[k] = set[k];
	if (scene_load(RB_SCENE, ov, 6, sc) != 0 || sim_ic_build(sc, st) != 0 ||
	    render_camera_at(sc, frame, st, cam) != 0)
		return 1;
	return 0;
}

/* The camera turned by deg about the target's z axis. */
static struct render_camera rb_turn(const struct render_camera *c, double deg)
{
	struct render_camera r = *c;
	double a = deg * M_PI / 180, dx = c->pos[0] - c->target[0], dy = c->pos[1] - c->target[1];
	r.pos[0] = c->target[0] + cos(a) * dx - sin(a) * dy;
	r.pos[1] = c->target[1] + sin(a) * dx + cos(a) * dy;
	return r;
}

struct rb_row {
	double adaptive, splat, tone, copy, gpu, wall;
	double pairs;
	double stars, diffuse, glow, expo, tone_only; /* the look's stages */
};

/* Time reps frames (after one warm-up) of st through cam. */
static int rb_time(const struct scene *sc, const struct sim_state *st,
		   const struct render_camera *cam, enum gpu_render_method m, int reps,
		   struct rb_row *row)
{
	double v[10][RB_MAX_REPS], pairs = 0;
	struct render_camera cam_p = *cam; /* the scene's projection (--projection) */
	cam_p.projection = (int)sc->camera.projection;
	cam_p.fisheye_aperture = sc->camera.fisheye_aperture;
	cam = &cam_p;
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.slots = 2;
	p.method = m;
	struct gpu_render *gr = NULL;
	struct gpu_render_input in;
	int rc = 1;
	if (gpu_render_create(sc, st, NULL, &p, &gr) != 0 || gpu_render_upload(gr, st, &in) != 0)
		goto cleanup;
	for (int r = -1; r < reps; r++) { /* per-frame stage times, one frame at a time */
		struct render_camera c = rb_turn(cam, 0.5 * (r + 1));
		struct gpu_render_timing t;
		if (gpu_render_frame(gr, &in, r + 1, &c, 0) != 0 || gpu_render_wait(gr, 0) != 0 ||
		    gpu_render_last_timing(gr, &t) != 0)
			goto cleanup;
		if (r < 0)
			continue;
		v[0][r] = t.adaptive_ms;
		v[1][r] = t.splat_ms;
		v[2][r] = t.tonemap_ms;
		v[3][r] = t.copy_ms;
		v[4][r] = t.total_ms;
		v[5][r] = t.stars_ms;
		v[6][r] = t.diffuse_ms;
		v[7][r] = t.glow_ms;
		v[8][r] = t.exposure_ms;
		v[9][r] = t.tone_only_ms;
		pairs = (double)t.pairs;
	}
	/* Wall time with two frames in flight (wait for a slot only before
	 * reusing it), frame numbers continuing so adaptive h stays due. */
	double t0 = log_clock_s();
	for (int r = 0; r < reps; r++) {
		struct render_camera c = rb_turn(cam, 0.5 * (reps + r));
		if ((r >= 2 && gpu_render_wait(gr, r % 2) != 0) ||
		    gpu_render_frame(gr, &in, reps + 1 + r, &c, r % 2) != 0)
			goto cleanup;
	}
	if (gpu_render_wait(gr, 0) != 0 || gpu_render_wait(gr, 1) != 0)
		goto cleanup;
	double wall = (log_clock_s() - t0) * 1e3 / reps;
	row->adaptive = bench_median(v[0], reps);
	row->splat = bench_median(v[1], reps);
	row->tone = bench_median(v[2], reps);
	row->copy = bench_median(v[3], reps);
	row->gpu = bench_median(v[4], reps);
	row->wall = wall;
	row->stars = bench_median(v[5], reps);
	row->diffuse = bench_median(v[6], reps);
	row->glow = bench_median(v[7], reps);
	row->expo = bench_median(v[8], reps);
	row->tone_only = bench_median(v[9], reps);
	row->pairs = pairs;
	rc = 0;
cleanup:
	gpu_render_free(&gr);
	return rc;
}

static void rb_print(const char *scene, const char *size, size_t n, const char *method,
		     const char *h, const struct rb_row *r)
{
	printf("| %-8s | %-5s | %5.1fM | %-6s | %-8s | %8.2f | %7.2f | %6.2f | %5.2f | %7.2f | %7.2f | %7.2f |\n",
	       scene, size, n / 1e6, method, h, r->adaptive, r->splat, r->tone, r->copy, r->gpu,
	       r->wall, r->pairs / 1e6);
	fflush(stdout);
}

static void rb_print_look(const char *scene, const char *size, size_t n, const struct rb_row *r)
{
	printf("| %-8s | %-5s | %5.1fM | %8.2f | %6.2f | %7.2f | %5.2f | %5.2f | %5.2f | %5.2f | %6.2f | %6.2f |\n",
	       scene, size, n / 1e6, r->adaptive, r->stars, r->diffuse, r->glow, r->expo, r->tone_only,
	       r->copy, r->gpu, r->wall);
	fflush(stdout);
}

/* 1080p 1M-ish galaxy frame, fixed and adaptive h, as 16-bit PNGs. */
static int rb_png(const char *dir, const struct sim_state *st, const struct render_camera *cam)
{
	for (int a = 0; a < 2; a++) {
		struct scene sc;
		rb_scene_defaults(&sc, 1920, 1080, 0.15);
		sc.render.smoothing_adaptive = a;
		struct gpu_render_params p;
		gpu_render_default_params(&p);
		p.outputs = GPU_RENDER_OUT_RGB16;
		p.slots = 1;
		struct gpu_render *gr = NULL;
		struct gpu_render_input in;
		struct gpu_render_host_frame f;
		int rc = out_mkdirs(dir);
		if (!rc)
			rc = gpu_render_create(&sc, st, NULL, &p, &gr);
		if (!rc)
			rc = gpu_render_upload(gr, st, &in);
		if (!rc)
			rc = gpu_render_frame(gr, &in, 0, cam, 0);
		if (!rc)
			rc = gpu_render_wait(gr, 0);
		if (!rc)
			rc = gpu_render_host_frame(gr, 0, &f);
		if (!rc)
			rc = out_png_write(dir, a, f.w, f.h, 16, f.rgb16);
		gpu_render_free(&gr);
		if (rc)
			return 1;
		fprintf(stderr, "render: wrote %s/frame_%05d.png (%s h)\n", dir, a, a ? "adaptive" : "fixed");
	}
	return 0;
}

/* nbody-bench render's options. */
struct rb_opts {
	size_t ns[RB_MAX_LIST];
	int nn, reps, s1080, s4k, e2e;
	const char *png;
	int scenes[3]; /* scene, galaxies, core: rows wanted */
	/* the look: look set when any option below was given */
	int look, style, tonemap, exposure_auto, diffuse_smoothing;
	double exposure, glow, diffuse, h_cap;
	int blur;       /* render.motion_blur.samples; 0 or 1: off */
	double shutter; /* its shutter; 0: 0.5 */
	/* camera.projection and camera.stereo of every row (issue 15), and
	 * a frame size given as WxH in --sizes (cw 0: none) */
	int projection, stereo, cw, ch;
};

/* --blur on a synthetic scene: a solid-body spin about the z axis
 * (internal units), so the sub-frame samples spread as moving stars'. */
static void rb_spin(struct sim_state *st)
{
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < st->n; i++) {
		st->vel[3 * i] = -st->pos[3 * i + 1];
		st->vel[3 * i + 1] = st->pos[3 * i];
		st->vel[3 * i + 2] = 0;
	}
}

/* The rows' projection and stereo (--projection, --stereo) on sc. */
static void rb_apply_projection(const struct rb_opts *o, struct scene *sc)
{
	sc->camera.projection = (enum scene_projection)o->projection;
	sc->camera.fisheye_aperture = 180;
	sc->camera.stereo.mode = (enum scene_stereo)o->stereo;
	sc->camera.stereo.eye_separation_auto = 1;
	sc->camera.stereo.convergence_auto = 1;
}

/* The look's options on top of sc's own render block. */
static void rb_apply_look(const struct rb_opts *o, struct scene *sc)
{
	sc->render.style = (enum scene_style)o->style;
	sc->render.tonemap = (enum scene_tonemap)o->tonemap;
	sc->render.exposure_auto = o->exposure_auto;
	if (!o->exposure_auto && o->exposure > 0)
		sc->render.exposure = o->exposure;
	sc->render.glow = o->glow;
	sc->render.diffuse = o->diffuse;
	sc->render.diffuse_smoothing = (enum scene_diffuse_smoothing)o->diffuse_smoothing;
	sc->render.h_cap = o->h_cap;
	if (!(sc->render.psf_fwhm > 0)) /* the schema's defaults, for the synthetic scenes */
		sc->render.psf_fwhm = 1.5;
	if (!(sc->render.white > 0))
		sc->render.white = 8;
	if (!(sc->render.glow_threshold > 0))
		sc->render.glow_threshold = 1;
	if (!(sc->render.auto_percentile > 0))
		sc->render.auto_percentile = 99.5;
	if (!(sc->render.auto_smoothing > 0))
		sc->render.auto_smoothing = 10;
	if (o->blur > 1) {
		sc->render.motion_blur.samples = o->blur;
		sc->render.motion_blur.shutter = o->shutter > 0 ? o->shutter : 0.5;
		if (!(sc->simulation.dt > 0)) { /* a synthetic scene */
			sc->simulation.dt = 0.01;
			sc->simulation.steps_per_frame = 10;
		}
	}
}

/* One look option at argv[i] (value in argv[i + 1]); 1 if taken. */
static int rb_parse_look(int argc, char **argv, int *i, struct rb_opts *o)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	if (!strcmp(a, "--look")) {
		o->look = 1;
		o->style = SCENE_STYLE_STARS;
		o->tonemap = SCENE_TONEMAP_FILMIC;
		o->exposure_auto = 1;
		o->glow = 0.3;
		o->diffuse = 0.3;
		o->diffuse_smoothing = SCENE_DIFFUSE_SCREEN;
		return 1;
	}
	if (!v)
		return 0;
	if (!strcmp(a, "--style"))
		o->style = !strcmp(v, "stars") ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
	else if (!strcmp(a, "--tonemap"))
		o->tonemap = !strcmp(v, "filmic") ? SCENE_TONEMAP_FILMIC
			     : !strcmp(v, "log")  ? SCENE_TONEMAP_LOG
			     : !strcmp(v, "linear") ? SCENE_TONEMAP_LINEAR
						    : SCENE_TONEMAP_ASINH;
	else if (!strcmp(a, "--exposure")) {
		o->exposure_auto = !strcmp(v, "auto");
		o->exposure = o->exposure_auto ? 0 : atof(v);
	} else if (!strcmp(a, "--glow"))
		o->glow = atof(v);
	else if (!strcmp(a, "--diffuse"))
		o->diffuse = atof(v);
	else if (!strcmp(a, "--diffuse-smoothing"))
		o->diffuse_smoothing = !strcmp(v, "adaptive") ? SCENE_DIFFUSE_ADAPTIVE : SCENE_DIFFUSE_SCREEN;
	else if (!strcmp(a, "--h-cap"))
		o->h_cap = atof(v);
	else if (!strcmp(a, "--blur")) {
		o->blur = atoi(v);
		o->style = SCENE_STYLE_STARS; /* the stars splat is the one that blurs */
	} else if (!strcmp(a, "--shutter"))
		o->shutter = atof(v);
	else
		return 0;
	o->look = 1;
	(*i)++;
	return 1;
}

/* Parse ARGV into O. 0, or 2 (bad usage, reported). */
static int rb_parse_args(int argc, char **argv, struct rb_opts *o)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			o->nn = bench_parse_sizes(argv[++i], o->ns, RB_MAX_LIST, 1e9);
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			o->reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			const char *s = argv[++i];
			o->s1080 = strstr(s, "1080p") != NULL;
			o->s4k = strstr(s, "4k") != NULL;
			for (const char *t = s; t && *t; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL)
				if (sscanf(t, "%dx%d", &o->cw, &o->ch) == 2)
					break; /* one WxH size, e.g. 4096x2048 */
			if (o->cw < 16 || o->ch < 16 || o->cw % 2 || o->ch % 2)
				o->cw = o->ch = 0;
		} else if (!strcmp(argv[i], "--projection") && i + 1 < argc) {
			const char *v = argv[++i];
			o->projection = !strcmp(v, "fisheye")	      ? SCENE_PROJ_FISHEYE
					: !strcmp(v, "equirectangular") ? SCENE_PROJ_EQUIRECT
									: SCENE_PROJ_PERSPECTIVE;
		} else if (!strcmp(argv[i], "--stereo") && i + 1 < argc) {
			const char *v = argv[++i];
			o->stereo = !strcmp(v, "side-by-side") ? SCENE_STEREO_SIDE_BY_SIDE
				    : !strcmp(v, "top-bottom") ? SCENE_STEREO_TOP_BOTTOM
							       : SCENE_STEREO_NONE;
		} else if (!strcmp(argv[i], "--png") && i + 1 < argc)
			o->png = argv[++i];
		else if (!strcmp(argv[i], "--e2e"))
			o->e2e = 1;
		else if (!strcmp(argv[i], "--scenes") && i + 1 < argc) {
			const char *s = argv[++i];
			o->scenes[0] = strstr(s, "scene") != NULL;
			o->scenes[1] = strstr(s, "galaxies") != NULL;
			o->scenes[2] = strstr(s, "core") != NULL;
		} else if (rb_parse_look(argc, argv, &i, o))
			continue;
		else {
			bench_usage(stderr, "render");
			return 2;
		}
	}
	if (o->nn < 1 || o->reps < 1 || o->reps > RB_MAX_REPS) {
		fprintf(stderr, "render: bad --n or --repeats (1..%d)\n", RB_MAX_REPS);
		return 2;
	}
	if (o->blur < 0 || o->blur > 64 || o->shutter < 0 || o->shutter > 1 ||
	    (o->blur > 1 && (o->style != SCENE_STYLE_STARS ||
			     (o->diffuse > 0 && o->diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE)))) {
		fprintf(stderr, "render: --blur needs 1..64, --shutter (0, 1], style stars and no "
				"adaptive diffuse layer (as the scene loader)\n");
		return 2;
	}
	return 0;
}

/* One picture size of the rows (bench_render's --size list). */
struct rb_size {
	const char *name;
	int w, h, on;
};

static const char *const rb_scene_name[3] = {"scene", "galaxies", "core"};

/* The scene of a row at size z: the scene file's (SCENEID 0, file_sc) or
 * the synthetic one's defaults (smoothing 0.02 for the core, else 0.15). */
static void rb_row_scene(const struct scene *file_sc, int sceneid, const struct rb_size *z,
			 struct scene *sc)
{
	if (sceneid == 0) {
		*sc = *file_sc;
		sc->render.width = z->w;
		sc->render.height = z->h;
	} else {
		rb_scene_defaults(sc, z->w, z->h, sceneid == 2 ? 0.02 : 0.15);
	}
}

/* --look: one row at size z, the look on the scene's own settings. 0, or
 * 1 (reported). */
static int rb_look_row(const struct rb_opts *o, int sceneid, const struct scene *file_sc,
		       const struct rb_size *z, size_t n, const struct sim_state *st,
		       const struct render_camera *cam)
{
	struct scene sc;
	rb_row_scene(file_sc, sceneid, z, &sc);
	if (sceneid != 0)
		sc.render.smoothing_adaptive = 1;
	rb_apply_look(o, &sc);
	rb_apply_projection(o, &sc);
	struct rb_row row;
	if (rb_time(&sc, st, cam, GPU_RENDER_TILED, o->reps, &row) != 0)
		return 1;
	rb_print_look(rb_scene_name[sceneid], z->name, n, &row);
	return 0;
}

/* The method rows at size z: fixed and adaptive h (the core: fixed only,
 * it is about deposit contention), tiled and atomic (the scene file:
 * tiled only, on its own renderer settings but the smooth splat). 0, or 1
 * (reported). */
static int rb_method_rows(const struct rb_opts *o, int sceneid, const struct scene *file_sc,
			  const struct rb_size *z, size_t n, const struct sim_state *st,
			  const struct render_camera *cam)
{
	const char *mname[2] = {"tiled", "atomic"};
	for (int a = 0; a < 2; a++) {
		if (sceneid == 2 && a == 1)
			continue; /* the core case is about deposit contention */
		/* The scene's rows: its own renderer settings, tiled only. */
		for (int m = 0; m < (sceneid == 0 ? 1 : 2); m++) {
			struct scene sc;
			rb_row_scene(file_sc, sceneid, z, &sc);
			if (sceneid == 0) {
				sc.render.smoothing = 0.3; /* kpc, fixed rows */
				/* these rows time the smooth splat (the look before
				 * issue 14), whatever the scene file now says */
				sc.render.style = SCENE_STYLE_SMOOTH;
				sc.render.tonemap = SCENE_TONEMAP_ASINH;
				sc.render.exposure_auto = 0;
				sc.render.exposure = 1.0;
				sc.render.glow = 0;
				sc.render.diffuse = 0;
			}
			sc.render.smoothing_adaptive = a;
			rb_apply_projection(o, &sc);
			struct rb_row row;
			if (rb_time(&sc, st, cam, (enum gpu_render_method)m, o->reps, &row) != 0)
				return 1;
			rb_print(rb_scene_name[sceneid], z->name, n, mname[m],
				 a ? "adaptive" : "fixed", &row);
		}
	}
	return 0;
}

/* The rows of scene SCENEID (0: the scene file, 1: galaxies, 2: core) with
 * N bodies, the K-th size of the list. 0, or 1 (reported). */
static int rb_scene_rows(const struct rb_opts *o, int k, int sceneid)
{
	char custom[32];
	snprintf(custom, sizeof custom, "%dx%d", o->cw, o->ch);
	const struct rb_size sizes[3] = {{"1080p", 1920, 1080, o->s1080},
					 {"4k", 3840, 2160, o->s4k},
					 {custom, o->cw, o->ch, o->cw > 0}};
	size_t n = o->ns[k];
	struct sim_state st;
	struct render_camera cam;
	struct scene file_sc;
	int rc = 0;
	memset(&st, 0, sizeof st);
	int bad = sceneid == 0   ? rb_make_scene(n, 0, &file_sc, &st, &cam)
		  : sceneid == 1 ? rb_make_galaxies(n, &st, &cam)
				 : rb_make_core(n, &st, &cam);
	if (bad) {
		fprintf(stderr, "render: cannot make the %s bodies (n = %zu)\n",
			rb_scene_name[sceneid], n);
		sim_state_free(&st);
		return 1;
	}
	if (o->blur > 1 && sceneid != 0)
		rb_spin(&st);
	if (o->png && sceneid == 1 && k == 0 && rb_png(o->png, &st, &cam) != 0)
		rc = 1;
	for (int s = 0; s < 3 && !rc; s++) {
		if (!sizes[s].on)
			continue;
		rc = o->look ? rb_look_row(o, sceneid, &file_sc, &sizes[s], n, &st, &cam)
			     : rb_method_rows(o, sceneid, &file_sc, &sizes[s], n, &st, &cam);
	}
	sim_state_free(&st);
	return rc;
}

int bench_render(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--out-of-core")) /* bench/render_ooc.c */
			return bench_render_ooc(argc, argv);
	struct rb_opts o = {.ns = {1000000, 10000000}, .nn = 2, .reps = 5, .s1080 = 1, .s4k = 1,
			    .scenes = {1, 1, 1}, .tonemap = SCENE_TONEMAP_ASINH};
	int rc = rb_parse_args(argc, argv, &o);
	if (rc)
		return rc;
	char why[256], name[128] = "?";
	if (!gpu_probe(why, sizeof why)) {
		printf("SKIP: %s\n", why);
		return 0;
	}
	gpu_device_info(name, sizeof name, NULL, NULL);
	printf("GPU renderer on %s: ms per frame, median of %d after a warm-up\n\n", name, o.reps);
	if (o.projection || o.stereo)
		printf("projection %s, stereo %s\n\n",
		       o.projection == SCENE_PROJ_FISHEYE	? "fisheye"
		       : o.projection == SCENE_PROJ_EQUIRECT ? "equirectangular"
							     : "perspective",
		       o.stereo == SCENE_STEREO_SIDE_BY_SIDE ? "side-by-side"
		       : o.stereo == SCENE_STEREO_TOP_BOTTOM ? "top-bottom"
							     : "none");
	if (o.look) {
		printf("look: style %s, tonemap %d, exposure %s, glow %g, diffuse %g (%s), h_cap %g, "
		       "motion blur %d samples, shutter %g\n\n",
		       o.style == SCENE_STYLE_STARS ? "stars" : "smooth", o.tonemap,
		       o.exposure_auto ? "auto" : "fixed", o.glow, o.diffuse,
		       o.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE ? "adaptive" : "screen", o.h_cap,
		       o.blur > 1 ? o.blur : 1, o.blur > 1 ? (o.shutter > 0 ? o.shutter : 0.5) : 0.0);
		printf("| scene    | size  |     N  | adaptive |  stars | diffuse |  glow |  expo |  tone |  copy |    gpu |   wall |\n");
		printf("|----------|-------|--------|---------:|-------:|--------:|------:|------:|------:|------:|-------:|-------:|\n");
	} else {
		printf("| scene    | size  |     N  | method | h        | adaptive |   splat |   tone |  copy |     gpu |    wall | pairs M |\n");
		printf("|----------|-------|--------|--------|----------|---------:|--------:|-------:|------:|--------:|--------:|--------:|\n");
	}
	for (int k = 0; k < o.nn && !rc; k++)
		for (int sceneid = 0; sceneid < 3 && !rc; sceneid++)
			if (o.scenes[sceneid])
				rc = rb_scene_rows(&o, k, sceneid);
	if (!rc && o.e2e) {
		printf("\n");
		fflush(stdout);
		rc = bench_e2e(0, NULL);
	}
	return rc;
}
