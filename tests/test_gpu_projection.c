/* test_gpu_projection.c - camera.projection and camera.stereo on the GPU
 * (render/cuda/render*.cu through render/projection_shared.h) against the CPU
 * twins (render/stars.c, render/splat.c, render/stereo.c, render/glow.c),
 * within the HDR tolerance of render/cuda/gpu_render.h (TWIN_TOL_HDR):
 * equirectangular frames with bodies on the seam and at the poles (the
 * footprints' wrap-around copies), domemasters (the circle mask after the
 * glow), and stereo frames (each eye its own picture, the glow per eye;
 * and against the same eyes rendered as mono pictures on the GPU); the
 * full look (screen diffuse layer, wing, glow) wrapped at the equirect
 * seam as on the CPU (render/pyramid_shared.h).
 * Positions are float-representable, as the GPU stores them. Without a
 * usable GPU the cases print SKIP and are neither run nor counted.
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_projection && build/tests/test_gpu_projection */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "twin.h"
#include "sim/cuda/gpu.h"
#include "render/cuda/gpu_render.h"
#include "render/render.h"
#include "test_render_util.h"

#define DEG (M_PI / 180.0)

static const struct sim_units u_one = {1.0, 1.0, 1.0, 1.0, 1.0};

/* w x h scene of the projection, style stars (psf fwhm) or smooth
 * (cubic, smoothing sm), stereo mode. */
static struct scene *proj_scene(int w, int h, int projection, int stereo, int stars, double sm)
{
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, sm);
	sc->render.style = stars ? SCENE_STYLE_STARS : SCENE_STYLE_SMOOTH;
	sc->render.psf_fwhm = 2.0;
	sc->camera.projection = (enum scene_projection)projection;
	sc->camera.fisheye_aperture = 180;
	sc->camera.stereo.mode = (enum scene_stereo)stereo;
	return sc;
}

/* The camera at (0.25, -0.5, 0.125) looking along +y, z up. */
static struct render_camera proj_cam(int projection)
{
	struct render_camera c = {.pos = {0.25, -0.5, 0.125}, .target = {0.25, 9.5, 0.125},
				  .up = {0, 0, 1}, .fov = 50};
	c.projection = projection;
	c.fisheye_aperture = 180;
	c.eye_separation = 0.3;
	c.convergence = 6;
	return c;
}

/* n bodies in every direction from the camera (distance 1.5 .. 12), three
 * components, plus bodies right behind (the equirect seam), straight up
 * and down (the poles), near the fisheye's rim. Float-representable. */
static void state_around(struct sim_state *st, size_t n, uint64_t seed)
{
	const struct render_camera c = proj_cam(0);
	const size_t extra = 8;
	ck_assert_int_eq(sim_state_alloc(st, n + extra, 3), 0);
	for (int k = 0; k < 3; k++) {
		st->comps[k].color[0] = 1.0f;
		st->comps[k].color[1] = 0.3f + 0.3f * k;
		st->comps[k].color[2] = 0.9f - 0.2f * k;
	}
	for (size_t i = 0; i < n + extra; i++) {
		double u = sim_rng_uniform(seed, i, 0), v = sim_rng_uniform(seed, i, 1);
		double r = 1.5 + 10.5 * sim_rng_uniform(seed, i, 2);
		double t = acos(1 - 2 * u), f = 2 * M_PI * v;
		double d[3] = {sin(t) * cos(f), sin(t) * sin(f), cos(t)};
		if (i >= n) { /* behind, behind a hair either side, up, down, rim */
			static const double dirs[8][3] = {{0, -1, 0},      {1e-4, -1, 0.2}, {-1e-4, -1, -0.1},
							  {0, 0, 1},       {0.01, 0, -1},   {1, 0.02, 0},
							  {-0.7, 0.01, 0.7}, {0, 1, 0}};
			memcpy(d, dirs[i - n], sizeof d);
			r = 4.0;
		}
		for (int k = 0; k < 3; k++)
			st->pos[3 * i + k] = (float)(c.pos[k] + r * d[k]);
		st->mass[i] = (float)(0.5 + sim_rng_uniform(seed, i, 3));
		st->comp[i] = (uint16_t)(i % 3);
	}
}

static struct gpu_render *gr_make(const struct scene *sc, const struct sim_state *st,
				  enum gpu_render_method m)
{
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_YUV420P | GPU_RENDER_OUT_RGB16;
	p.slots = 2;
	p.method = m;
	struct gpu_render *gr = NULL;
	ck_assert_int_eq(gpu_render_create(sc, st, &u_one, &p, &gr), 0);
	return gr;
}

/* The GPU frame's HDR (after the glow and the mask; stereo: both eyes). */
static void gpu_frame_hdr(struct gpu_render *gr, const struct sim_state *st,
			  const struct render_camera *cam, float *rgb)
{
	struct gpu_render_input in;
	ck_assert_int_eq(gpu_render_upload(gr, st, &in), 0);
	ck_assert_int_eq(gpu_render_frame(gr, &in, 0, cam, 0), 0);
	ck_assert_int_eq(gpu_render_wait(gr, 0), 0);
	ck_assert_int_eq(gpu_render_download_hdr(gr, rgb), 0);
}

/* The CPU twin of that HDR: renderer_cpu's order (app/renderer_cpu.c):
 * per eye the splat (look: the stars with the screen diffuse layer, then
 * the wing), the glow, the mask, copied into its place. */
static void cpu_frame_hdr(const struct scene *sc, const struct sim_state *st,
			  const struct render_camera *cam, int look, struct render_image *frame)
{
	ck_assert_int_eq(render_image_alloc(frame, sc->render.width, sc->render.height), 0);
	int ew, eh;
	render_eye_size(sc, &ew, &eh);
	int stereo = sc->camera.stereo.mode != SCENE_STEREO_NONE;
	for (int eye = stereo ? -1 : 0; eye <= (stereo ? 1 : 0); eye += stereo ? 2 : 1) {
		struct render_camera ec = *cam;
		if (stereo)
			render_eye_camera(cam, eye, &ec);
		struct render_image img, smooth;
		ck_assert_int_eq(render_image_alloc(&img, ew, eh), 0);
		ck_assert_int_eq(render_image_alloc(&smooth, ew, eh), 0);
		if (look) {
			ck_assert_int_eq(render_stars_diffuse_screen(sc, &ec, st, &u_one, &img, &smooth), 0);
			ck_assert_int_eq(render_wing(sc, &img), 0);
		} else {
			ck_assert_int_eq(render_splat(sc, &ec, st, &u_one, &img), 0);
		}
		ck_assert_int_eq(render_glow(sc, &img), 0);
		render_projection_mask(&ec, &img);
		int x0, y0;
		render_eye_origin(sc, eye, &x0, &y0);
		render_image_blit(&img, frame, x0, y0);
		render_image_free(&img);
		render_image_free(&smooth);
	}
}

/* A projection case: the scene (size, projection, stereo mode, stars or
 * smooth with smoothing sm, PSF fwhm (0: proj_scene's), glow (< 0:
 * proj_scene's; else with threshold 0.5), fisheye aperture (0:
 * proj_scene's) and tilt,
 * the full look), state_around(n, seed) with the seam clump or not, and
 * how many GPU methods (views: tiled, then atomic) are held against the
 * one CPU frame. */
struct proj_arg {
	const char *what;
	int w, h, proj, stereo, stars;
	double sm, fwhm, glow, aperture, tilt;
	int look; /* the full look (look_on) */
	size_t n;
	uint64_t seed;
	int methods;
	int clump; /* seam_look_wraps_as_on_cpu's clump behind the camera */
};

struct pfix {
	struct scene *sc;
	struct sim_state st;
	struct render_camera cam;
	struct render_image ref;
	float *g;
	size_t nv;
};

static void look_on(struct scene *sc);
static void add_clump(struct sim_state *st);

static void proj_setup(struct twin_run *r)
{
	const struct proj_arg *a = r->arg;
	struct pfix *f = calloc(1, sizeof *f);
	ck_assert_ptr_nonnull(f);
	f->sc = proj_scene(a->w, a->h, a->proj, a->stereo, a->stars, a->sm);
	if (a->fwhm > 0)
		f->sc->render.psf_fwhm = a->fwhm;
	if (a->look)
		look_on(f->sc);
	if (a->glow >= 0) {
		f->sc->render.glow = a->glow;
		f->sc->render.glow_threshold = 0.5;
	}
	if (a->aperture > 0)
		f->sc->camera.fisheye_aperture = a->aperture;
	f->sc->camera.dome_tilt = a->tilt;
	/* proj_cam is built from the scene's values */
	f->cam = proj_cam(a->proj);
	f->cam.fisheye_aperture = f->sc->camera.fisheye_aperture;
	f->cam.dome_tilt = f->sc->camera.dome_tilt;
	state_around(&f->st, a->n, a->seed);
	if (a->clump)
		add_clump(&f->st);
	f->nv = (size_t)a->w * a->h * 3;
	f->g = malloc(f->nv * sizeof *f->g);
	ck_assert_ptr_nonnull(f->g);
	r->fix = f;
	r->views = a->methods;
}

static void proj_teardown(struct twin_run *r)
{
	struct pfix *f = r->fix;
	render_image_free(&f->ref);
	sim_state_free(&f->st);
	free(f->g);
	free(f->sc);
	free(f);
}

/* The CPU frame, once: every view (GPU method) is held against it. */
static void proj_cpu(struct twin_run *r)
{
	const struct proj_arg *a = r->arg;
	struct pfix *f = r->fix;
	if (r->view == 0)
		cpu_frame_hdr(f->sc, &f->st, &f->cam, a->look, &f->ref);
	twin_out(r, 0, NULL);
	r->out[0].ref = twin_f32(f->ref.rgb, f->nv, a->w, 3);
}

static void proj_gpu(struct twin_run *r)
{
	const struct proj_arg *a = r->arg;
	struct pfix *f = r->fix;
	struct gpu_render *gr = gr_make(f->sc, &f->st, (enum gpu_render_method)r->view);
	gpu_frame_hdr(gr, &f->st, &f->cam, f->g);
	gpu_render_free(&gr);
	twin_out(r, 0, NULL);
	r->out[0].got = twin_f32(f->g, f->nv, a->w, 3);
	if (a->methods > 1)
		snprintf(r->what, sizeof r->what, "%s, %s", a->what, r->view ? "atomic" : "tiled");
	else
		snprintf(r->what, sizeof r->what, "%s", a->what);
}

/* A fisheye frame is black outside its circle (the mask after the glow). */
static void expect_fisheye_mask(const struct proj_arg *a, const float *g)
{
	const double c = 0.5 * a->w;
	for (int j = 0; j < a->h; j++)
		for (int i = 0; i < a->w; i++) {
			double dx = i + 0.5 - c, dy = j + 0.5 - c;
			if (dx * dx + dy * dy > c * c)
				ck_assert(g[3 * (j * a->w + i)] == 0.0f);
		}
}

static void expect_seam_lit(const struct proj_arg *a, const float *g);

static void proj_compare(struct twin_run *r)
{
	const struct proj_arg *a = r->arg;
	const struct pfix *f = r->fix;
	twin_compare_all(r);
	if (a->proj == SCENE_PROJ_FISHEYE)
		expect_fisheye_mask(a, f->g);
	if (a->clump)
		expect_seam_lit(a, f->g);
}

static const struct twin_row proj_row = {
	"projection", proj_setup, proj_cpu, proj_gpu, proj_compare, proj_teardown, TWIN_TOL_HDR, 1};

#define EQ SCENE_PROJ_EQUIRECT
#define FISH SCENE_PROJ_FISHEYE
#define PERSP SCENE_PROJ_PERSPECTIVE
#define MONO SCENE_STEREO_NONE

/* Equirectangular, stars: bodies all around, on the seam and at the
 * poles; two PSF widths. */
static const struct proj_arg equirect_stars_cases[] = {
	{"equirect stars", 256, 128, EQ, MONO, 1, 0, 1.5, -1, 0, 0, 0, 20000, 21, 2, 0},
	{"equirect stars", 256, 128, EQ, MONO, 1, 0, 6.0, -1, 0, 0, 0, 20000, 21, 2, 0},
};
TWIN_TEST(equirect_stars_match_cpu, &proj_row, equirect_stars_cases)

/* Equirectangular, smooth: footprints from ~1 px to the level-of-detail
 * levels (near bodies), wrapped across the seam and over the poles. */
static const struct proj_arg equirect_smooth_cases[] = {
	{"equirect smooth", 256, 128, EQ, MONO, 0, 0.02, 0, -1, 0, 0, 0, 5000, 22, 2, 0},
	{"equirect smooth", 256, 128, EQ, MONO, 0, 0.3, 0, -1, 0, 0, 0, 5000, 22, 2, 0},
};
TWIN_TEST(equirect_splat_matches_cpu, &proj_row, equirect_smooth_cases)

/* Domemaster: stars and smooth, 180 and 220 degrees, a tilted dome; the
 * mask after the glow. */
static const struct proj_arg fisheye_cases[] = {
	{"fisheye stars", 160, 160, FISH, MONO, 1, 0.1, 0, 0, 180, 0, 0, 8000, 23, 1, 0},
	{"fisheye smooth", 160, 160, FISH, MONO, 0, 0.1, 0, 0, 180, 0, 0, 8000, 23, 1, 0},
	{"fisheye stars", 160, 160, FISH, MONO, 1, 0.1, 0, 0.3, 220, 20, 0, 8000, 23, 1, 0},
};
TWIN_TEST(fisheye_matches_cpu_with_mask, &proj_row, fisheye_cases)

/* Stereo: the frame holds both eyes (top-bottom equirect ODS,
 * side-by-side perspective), each with its own glow: the GPU frame
 * against the CPU's eyes rendered, glowed and placed one by one. */
static const struct proj_arg stereo_cases[] = {
	{"stereo top-bottom equirect", 256, 256, EQ, SCENE_STEREO_TOP_BOTTOM, 1, 0, 0, 0.3, 0, 0, 0,
	 8000, 24, 2, 0},
	{"stereo side-by-side perspective", 320, 120, PERSP, SCENE_STEREO_SIDE_BY_SIDE, 1, 0, 0, 0.3,
	 0, 0, 0, 8000, 24, 2, 0},
};
TWIN_TEST(stereo_frames_match_cpu_eyes, &proj_row, stereo_cases)

/* The look of issue 14 on sc: stars, the screen diffuse layer 0.3, the
 * wing 0.05 (beta 3) and the glow 0.3 above 0.5 of the reference level. */
static void look_on(struct scene *sc)
{
	sc->render.style = SCENE_STYLE_STARS;
	sc->render.diffuse = 0.3;
	sc->render.diffuse_smoothing = SCENE_DIFFUSE_SCREEN;
	sc->render.psf_wing = 0.05;
	sc->render.psf_wing_beta = 3.0;
	sc->render.glow = 0.3;
	sc->render.glow_threshold = 0.5;
}

/* The GPU's HDR of one eye rendered on its own: a mono scene of the eye's
 * size seen through render_eye_camera(cam, eye). */
static void gpu_mono_eye_hdr(const struct scene *sc, const struct sim_state *st,
			     const struct render_camera *cam, int eye, float *rgb)
{
	struct scene *m = malloc(sizeof *m);
	ck_assert_ptr_nonnull(m);
	*m = *sc;
	render_eye_size(sc, &m->render.width, &m->render.height);
	m->camera.stereo.mode = SCENE_STEREO_NONE;
	struct render_camera ec;
	render_eye_camera(cam, eye, &ec);
	struct gpu_render *gr = gr_make(m, st, GPU_RENDER_TILED);
	gpu_frame_hdr(gr, st, &ec, rgb);
	gpu_render_free(&gr);
	free(m);
}

/* A stereo frame is its two eyes, each rendered as a mono picture: the
 * GPU's stereo frame (top-bottom: each eye drawn in place in its half of
 * the frame; side-by-side: drawn apart and copied in), cut into halves,
 * against the GPU's mono renders of render_eye_camera(cam, -1) and (cam,
 * +1) at the eye's size, within the HDR tolerance (the atomics' order is
 * all that differs). Looks: equirect top-bottom with the full look (stars,
 * screen diffuse layer, wing, glow: all wrapped at the seam), equirect
 * top-bottom smooth with the glow (the splat's copy into the half),
 * perspective top-bottom stars with the adaptive diffuse layer (its layer
 * left in d_hdr while the stars go into the half), and perspective
 * side-by-side with the full look. */
START_TEST(stereo_frame_is_two_mono_eyes)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	state_around(&st, 8000, 25);
	const struct {
		int w, h, proj, stereo, look;
		const char *what;
	} cases[] = {{256, 256, SCENE_PROJ_EQUIRECT, SCENE_STEREO_TOP_BOTTOM, 0, "top-bottom equirect look"},
		     {256, 256, SCENE_PROJ_EQUIRECT, SCENE_STEREO_TOP_BOTTOM, 1, "top-bottom equirect smooth"},
		     {192, 160, SCENE_PROJ_PERSPECTIVE, SCENE_STEREO_TOP_BOTTOM, 2,
		      "top-bottom perspective adaptive diffuse"},
		     {320, 120, SCENE_PROJ_PERSPECTIVE, SCENE_STEREO_SIDE_BY_SIDE, 0,
		      "side-by-side perspective look"}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct scene *sc = proj_scene(cases[k].w, cases[k].h, cases[k].proj, cases[k].stereo,
					      cases[k].look != 1, 0.1);
		if (cases[k].look == 0)
			look_on(sc);
		sc->render.glow = 0.3;
		sc->render.glow_threshold = 0.5;
		if (cases[k].look == 2) {
			sc->render.diffuse = 0.3;
			sc->render.diffuse_smoothing = SCENE_DIFFUSE_ADAPTIVE;
		}
		const struct render_camera cam = proj_cam(cases[k].proj);
		const int fw = cases[k].w, fh = cases[k].h;
		int ew, eh;
		render_eye_size(sc, &ew, &eh);
		float *frame = malloc((size_t)fw * fh * 3 * sizeof *frame);
		float *mono = malloc((size_t)ew * eh * 3 * sizeof *mono);
		float *half = malloc((size_t)ew * eh * 3 * sizeof *half);
		ck_assert(frame && mono && half);
		struct gpu_render *gr = gr_make(sc, &st, GPU_RENDER_TILED);
		gpu_frame_hdr(gr, &st, &cam, frame);
		gpu_render_free(&gr);
		for (int eye = -1; eye <= 1; eye += 2) {
			int x0, y0;
			render_eye_origin(sc, eye, &x0, &y0);
			for (int j = 0; j < eh; j++)
				memcpy(half + 3 * (size_t)j * ew, frame + 3 * ((size_t)(y0 + j) * fw + x0),
				       3 * (size_t)ew * sizeof *half);
			gpu_mono_eye_hdr(sc, &st, &cam, eye, mono);
			char label[160];
			snprintf(label, sizeof label, "%s, %s eye vs mono", cases[k].what,
				 eye < 0 ? "left" : "right");
			twin_expect_hdr(half, mono, ew, eh, label);
		}
		free(frame);
		free(mono);
		free(half);
		free(sc);
	}
	sim_state_free(&st);
}
END_TEST

/* The clump of seam_look_wraps_as_on_cpu: 200 heavy bodies 4 away, right
 * behind the camera. */
static void add_clump(struct sim_state *st)
{
	const struct render_camera c = proj_cam(SCENE_PROJ_EQUIRECT);
	for (size_t i = 0; i < 200; i++) {
		double dx = 0.02 * (sim_rng_uniform(27, i, 0) - 0.5);
		double dz = 0.1 * (sim_rng_uniform(27, i, 1) - 0.5);
		st->pos[3 * i + 0] = (float)(c.pos[0] + dx);
		st->pos[3 * i + 1] = (float)(c.pos[1] - 4.0);
		st->pos[3 * i + 2] = (float)(c.pos[2] + dz);
		st->mass[i] = 40.0f;
	}
}

/* The clump's row (the middle of the top eye): both edges lit, alike. */
static void expect_seam_lit(const struct proj_arg *a, const float *g)
{
	const int stereo = a->stereo != SCENE_STEREO_NONE, w = a->w, h = a->h;
	const int j = (stereo ? h / 2 : h) / 2;
	double left = 0, right = 0;
	for (int i = 8; i < 16; i++) {
		left += g[3 * ((size_t)j * w + i)];
		right += g[3 * ((size_t)j * w + (w - 1 - i))];
	}
	printf("seam look %s: columns 8-15 %.4g, w-16..w-9 %.4g\n", stereo ? "top-bottom" : "mono", left,
	       right);
	/* mono: the clump sits on the seam; the top (left) eye sees it ~1.5 px
	 * off (ODS disparity), so its edges differ more */
	ck_assert_double_gt(left, 0.0);
	if (!stereo)
		ck_assert_close(left, right, 0, 0.2);
	else
		ck_assert_double_gt(fmin(left, right), 0.3 * fmax(left, right));
}

/* Light on the equirectangular seam: a bright clump right behind the
 * camera (longitude +-180 degrees, split by the seam) on the bodies all
 * around, with the full look (screen diffuse layer, wing and glow, all
 * wrapped round the seam on both sides): the GPU frame against the CPU's,
 * mono 512 x 256 and top-bottom stereo 256 x 256; and the wrap is there:
 * the clump's halo lights 8-15 px in from both edges of its row alike
 * (CPU: 10.7 and 11.3 mono). */
static const struct proj_arg seam_cases[] = {
	{"seam look, mono", 512, 256, EQ, MONO, 1, 0, 0, -1, 0, 0, 1, 6000, 26, 1, 1},
	{"seam look, top-bottom", 256, 256, EQ, SCENE_STEREO_TOP_BOTTOM, 1, 0, 0, -1, 0, 0, 1, 6000,
	 26, 1, 1},
};
TWIN_TEST(seam_look_wraps_as_on_cpu, &proj_row, seam_cases)

/* A body at a known direction lands where the formula says on the GPU
 * too: its light's centroid (a symmetric PSF away from the edges) is at
 * the expected pixel position (equirect x = w/2 + lon w / 360, y = h/2 -
 * lat h / 180; fisheye radius theta / 90 x w/2). */
START_TEST(gpu_body_lands_at_formula_pixel)
{
	const struct {
		int proj, w, h;
		double a, b; /* equirect: lon, lat; fisheye: theta, phi (degrees) */
	} cases[] = {{SCENE_PROJ_EQUIRECT, 512, 256, 60, 20},
		     {SCENE_PROJ_EQUIRECT, 512, 256, -150, -45},
		     {SCENE_PROJ_FISHEYE, 256, 256, 50, 30},
		     {SCENE_PROJ_FISHEYE, 256, 256, 80, -120}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct sim_state st;
		memset(&st, 0, sizeof st);
		ck_assert_int_eq(sim_state_alloc(&st, 1, 1), 0);
		for (int c = 0; c < 3; c++)
			st.comps[0].color[c] = 1.0f;
		st.mass[0] = 1.0;
		st.comp[0] = 0;
		const struct render_camera cam = proj_cam(cases[k].proj);
		double a = cases[k].a * DEG, b = cases[k].b * DEG, d[3], ex, ey;
		if (cases[k].proj == SCENE_PROJ_EQUIRECT) {
			d[0] = cos(b) * sin(a);
			d[1] = cos(b) * cos(a);
			d[2] = sin(b);
			ex = 0.5 * cases[k].w + cases[k].a / 360.0 * cases[k].w;
			ey = 0.5 * cases[k].h - cases[k].b / 180.0 * cases[k].h;
		} else {
			d[0] = sin(a) * cos(b);
			d[1] = cos(a);
			d[2] = sin(a) * sin(b);
			double rho = cases[k].a / 90.0 * 0.5 * cases[k].w;
			ex = 0.5 * cases[k].w + rho * cos(b);
			ey = 0.5 * cases[k].h - rho * sin(b);
		}
		for (int c = 0; c < 3; c++)
			st.pos[c] = (double)(float)(cam.pos[c] + 5.0 * d[c]);
		struct scene *sc = proj_scene(cases[k].w, cases[k].h, cases[k].proj, SCENE_STEREO_NONE, 1,
					      0);
		float *g = malloc((size_t)cases[k].w * cases[k].h * 3 * sizeof *g);
		struct gpu_render *gr = gr_make(sc, &st, GPU_RENDER_TILED);
		gpu_frame_hdr(gr, &st, &cam, g);
		double s = 0, sx = 0, sy = 0;
		for (int j = 0; j < cases[k].h; j++)
			for (int i = 0; i < cases[k].w; i++) {
				double v = g[3 * ((size_t)j * cases[k].w + i)];
				s += v;
				sx += v * (i + 0.5);
				sy += v * (j + 0.5);
			}
		ck_assert_close(s, 1.0, 0, 1e-5);
		/* float positions: the direction moves by ~1e-7 rad, < 1e-4 px */
		ck_assert_close(sx / s, ex, 0.02, 0);
		ck_assert_close(sy / s, ey, 0.02, 0);
		gpu_render_free(&gr);
		free(g);
		free(sc);
		sim_state_free(&st);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_projection");
	TCase *tc = tcase_create("gpu");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, equirect_stars_match_cpu);
	tcase_add_test(tc, equirect_splat_matches_cpu);
	tcase_add_test(tc, fisheye_matches_cpu_with_mask);
	tcase_add_test(tc, stereo_frames_match_cpu_eyes);
	tcase_add_test(tc, gpu_body_lands_at_formula_pixel);
	tcase_add_test(tc, stereo_frame_is_two_mono_eyes);
	tcase_add_test(tc, seam_look_wraps_as_on_cpu);
	NB_GPU_TCASE(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
