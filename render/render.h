/* render.h - what a frame means: camera, splatting, tone mapping (CPU
 * reference; the GPU renderer must match it within a stated tolerance).
 *
 * Image convention everywhere: row 0 is the TOP of the picture, pixels are
 * row-major, channels R, G, B interleaved. Camera space: the camera looks
 * along +forward = normalize(target - position); screen x grows to the right
 * (forward x up), screen y grows upward in the world and downward in rows. */
#ifndef NB_RENDER_H
#define NB_RENDER_H

#include <stdint.h>

#include "../sim/sim.h"
#include "projection_shared.h"

#ifdef __cplusplus
extern "C" {
#endif

struct render_color_by; /* render.color_by's state (below) */

struct render_camera {
	double pos[3], target[3], up[3]; /* scene length units, as the scene file */
	double fov;                      /* vertical field of view, degrees */
	/* camera.projection and camera.stereo (render_camera_at copies them
	 * from the scene; a camera written as {pos, target, up, fov} leaves
	 * them 0: the perspective pinhole, mono). render/projection_shared.h. */
	int projection;          /* enum scene_projection */
	double fisheye_aperture; /* degrees; 0 taken as 180 */
	double dome_tilt;        /* degrees */
	int eye;                 /* 0 mono (the camera itself), -1 left eye, +1 right eye */
	double eye_separation;   /* scene units; with eye != 0, the eyes are this far apart */
	double convergence;      /* scene units; perspective: distance of zero parallax */
};

/* Camera for FRAME: keys interpolated with a centripetal-free uniform
 * Catmull-Rom spline on position and target (C1: no velocity jump at a key;
 * exactly the key's values on a key frame), linear on up and fov; plus
 * follow (target and position shifted by the followed centre of mass,
 * computed from st, in scene units) and orbit (rotation of position about
 * target around up by orbit * frame / (frames - 1) degrees). st may be NULL
 * when follow is off and frame is keys. follow light and frame auto give
 * their values from st unsmoothed (render_framing_light_com,
 * render_framing_auto): a run's frame 0, to rounding; a run smooths the
 * later frames (app/framing.c). 0 or NB_EINPUT (follow names no
 * component, or st is NULL where it is needed). */
int render_camera_at(const struct scene *sc, int frame, const struct sim_state *st,
		     struct render_camera *cam);
/* The same with the followed centre of mass given (scene units; ignored
 * when follow is off): the frame loop takes it from the engine
 * (engine_com), whatever the backend. */
void render_camera_at_com(const struct scene *sc, int frame, const double com[3],
			  struct render_camera *cam);

/* Exposure keys (camera.keys.*.exposure; render/camera.c): 1 if any key
 * gives one. Then the whole clip is exposed by hand (render_exposure_mode
 * below, the rule every renderer reads). */
int render_camera_has_exposure(const struct scene *sc);
/* Frame f's exposure from the keys: geometric between the keys that give
 * one, in the earlier key's ease (render/camera.c), held outside them; 0
 * when no key gives one. */
double render_camera_exposure(const struct scene *sc, int frame);

/* HDR image: w*h*3 floats, linear light, additive. */
struct render_image {
	int w, h;
	float *rgb;
};
int render_image_alloc(struct render_image *img, int w, int h); /* zeroed; 0 or NB_ERUNTIME */
void render_image_free(struct render_image *img);
void render_image_clear(struct render_image *img);

/* Stereo: the frame of a scene with camera.stereo.mode holds two eye images
 * (side-by-side: left eye in the left half; top-bottom: left eye on top),
 * each rendered on its own through the whole look (splat, diffuse layer,
 * wing, glow, fisheye mask: nothing crosses the split), then tone mapped
 * together (one exposure for both eyes); the overlay is laid out per eye
 * and drawn in both (render_overlay_build). render_eye_size: an eye's image
 * size (the frame's when mono); render_eye_origin: its top-left pixel in
 * the frame (eye -1 left, +1 right). render_eye_camera: cam for that eye
 * (eye 0: the camera itself, mono), separation and convergence resolved
 * (auto: convergence = |target - pos|, separation = convergence / 30). */
void render_eye_size(const struct scene *sc, int *w, int *h);
void render_eye_origin(const struct scene *sc, int eye, int *x0, int *y0);
void render_eye_camera(const struct render_camera *cam, int eye, struct render_camera *out);
/* Copy eye image src into frame dst at (x0, y0) (it must fit). */
void render_image_blit(const struct render_image *src, struct render_image *dst, int x0, int y0);
/* camera.projection: fisheye: set every pixel of img whose centre lies
 * outside the domemaster circle to 0 (render_proj_inside); else nothing. */
void render_projection_mask(const struct render_camera *cam, struct render_image *img);

/* Splat every body of st (internal units, converted with u to scene units)
 * into img. Each body deposits mass * color (density mode: mass into all
 * three channels equally) spread by a normalised 2D kernel (cubic spline or
 * Gaussian) whose projected radius is smoothing / depth * focal_px; a
 * footprint under one pixel deposits exactly its weight into the pixel it
 * lands in. Bodies behind the near plane or whose footprint misses the image
 * are culled. The image total therefore equals the visible mass (times
 * colour). Pixel values are mass per pixel, unscaled: render_tonemap sets
 * the level (render_tonemap_reference). Details: render/splat.c. */
/* With render.smoothing: adaptive, each body i uses its own h_i
 * (render/adaptive.h, k = render.neighbours, computed here on every call)
 * in place of smoothing. With render.style: stars, render_splat is
 * render_stars_splat (below); with a dust component as well,
 * render_dust_frame ("Dust" below, buffers and h made here). */
int render_splat(const struct scene *sc, const struct render_camera *cam,
		 const struct sim_state *st, const struct sim_units *u, struct render_image *img);
/* Same with given per-body smoothing lengths (additive): body b uses
 * h_by_body[b] (scene length units, st->n values, e.g. from
 * render_adaptive_h_state, so a caller may recompute them only every few
 * frames) whatever render.smoothing says; h_by_body NULL: the fixed
 * render.smoothing value for every body. render_splat(adaptive) equals
 * render_splat_h with render_adaptive_h_state's h, bit for bit. */
int render_splat_h(const struct scene *sc, const struct render_camera *cam,
		   const struct sim_state *st, const struct sim_units *u, const double *h_by_body,
		   struct render_image *img);

/* The light per unit mass of component c, per channel (render/light.c): its colour times
 * its brightness, in float (exactly the colour when brightness is 1).
 * Mode components weighs each body by mass * this (both styles; the GPU
 * uploads these values as its colours); mode density uses mass alone. */
void render_comp_light(const struct sim_component *c, float light[3]);

/* render.style: stars (render/stars.c; the GPU: render/cuda/render_stars.cu).
 * Each body (weight as render_splat) deposits its light through a Gaussian
 * PSF of FWHM render.psf_fwhm PIXELS (clamped to [RENDER_STARS_FWHM_MIN,
 * RENDER_STARS_FWHM_MAX]), whatever its distance: pixel (i, j) gets W *
 * wx[i] * wy[j], wx the Gaussian integrated over the pixel's extent
 * [i, i+1) (a difference of erf), over the 2R + 1 pixels from floor(x) - R,
 * R = render_stars_radius(sigma) = ceil(3 sigma) + 1, divided by their sum:
 * a body whose footprint lies inside the image deposits exactly W. No
 * smoothing length is used (render.smoothing, adaptive included, is
 * ignored). Bodies behind the near plane deposit nothing; footprints are
 * clipped to the image. Bit-identical for any thread count. 0 or
 * NB_ERUNTIME. */
#define RENDER_STARS_FWHM_MIN 0.5
#define RENDER_STARS_FWHM_MAX 8.0
#define RENDER_STARS_MAX_WIDTH 32 /* >= 2 render_stars_radius(sigma(8 px)) + 1 = 25 */
int render_stars_splat(const struct scene *sc, const struct render_camera *cam,
		       const struct sim_state *st, const struct sim_units *u,
		       struct render_image *img);
/* render.diffuse > 0 with render.style: stars (render/diffuse.c; the GPU:
 * render/cuda/render.cu): a smooth layer under the stars. smooth (same size as
 * img) gets render_splat_h(h_by_body) of the same bodies, same weights;
 * img gets render_stars_splat; then every value of img becomes, in double,
 * (float)(stars * (1 / (1 + d)) + smooth * (d / (1 + d))), d =
 * render.diffuse: the total light stays the stars' light (both splats
 * conserve it for footprints inside the image). h_by_body: adaptive h
 * (render_adaptive_h_state, capped by render.h_cap), whatever
 * render.smoothing says. render_splat computes that h itself. 0 or
 * NB_ERUNTIME. */
int render_stars_diffuse(const struct scene *sc, const struct render_camera *cam,
			 const struct sim_state *st, const struct sim_units *u,
			 const double *h_by_body, struct render_image *img,
			 struct render_image *smooth);
/* img = (float)(img * (1 / (1 + d)) + smooth * (d / (1 + d))), in double,
 * value by value (render_stars_diffuse's mix; same sizes). */
void render_diffuse_mix(double d, struct render_image *img, const struct render_image *smooth);
/* render.diffuse > 0 with style stars and render.diffuse_smoothing: screen
 * (render/diffuse_screen.c; the GPU: render/cuda/render_diffuse.cu), the rule
 * written in render/pyramid_shared.h: the stars' own light smoothed on an
 * image pyramid, per pixel over the area that holds render.neighbours
 * projected drawn bodies, the layer's total equal to the stars' total.
 * render_diffuse_counts: c1 (render_lod_dim(w, 1) x render_lod_dim(h, 1)
 * floats, w x h = render_eye_size: the frame, or one stereo eye; zeroed here) gets the count of drawn bodies (light not black)
 * whose projection floor(x), floor(y) lies in the frame, per level-1 cell
 * (floor(x) / 2, floor(y) / 2). render_diffuse_layer: the effective
 * layer E = L + (1 - w_p) stars into layer (same size; all zero when stars
 * holds no light), w_p in [0, 1] the rule's weight (1 where a level holds
 * render.neighbours bodies, n_Lmax / k where none does), L the smoothed
 * light times w_p, scaled to sum_p w_p stars_p: sum E = sum stars, and the mix
 * (stars + d E) / (1 + d) = stars (1 - alpha w_p) + alpha L, alpha = d /
 * (1 + d) (sparse stars keep their light). render_stars_diffuse_screen: img gets
 * render_stars_splat, smooth the layer, then render_diffuse_mix with d =
 * render.diffuse. No smoothing lengths. 0 or NB_ERUNTIME (out of memory,
 * sizes). */
void render_diffuse_counts(const struct scene *sc, const struct render_camera *cam,
			   const struct sim_state *st, const struct sim_units *u, float *c1);
int render_diffuse_layer(const struct scene *sc, const struct render_image *stars, const float *c1,
			 struct render_image *layer);
int render_stars_diffuse_screen(const struct scene *sc, const struct render_camera *cam,
				const struct sim_state *st, const struct sim_units *u,
				struct render_image *img, struct render_image *smooth);
/* The screen layer's counts, layer and mix applied to img as it is (the
 * stars image, or with dust the composited visible light: the layer is
 * made from the light that reaches the camera), smooth its scratch.
 * render_stars_diffuse_screen = render_stars_splat + this. 0 or
 * NB_ERUNTIME. */
int render_diffuse_screen_apply(const struct scene *sc, const struct render_camera *cam,
				const struct sim_state *st, const struct sim_units *u,
				struct render_image *img, struct render_image *smooth);
/* ---- Dust (render/dust.c; the GPU: render/cuda/render_dust.cu) ----
 * A component with kappa > 0 (sim_component; bodies.*.dust makes one per
 * dusty disk, "NAME.dust") emits nothing and absorbs: its body of mass m
 * (scene units) at depth d adds to pixel p the optical depth
 * kappa m W(p) / A(d), W its normalised footprint (an M4 cubic spline of
 * radius r = h / d * focal_px pixels, h = RENDER_DUST_H_RATIO x the
 * component's dust_z, capped at RENDER_DUST_MAX_RADIUS_PX, sampled at the
 * pixel centres and divided by the samples' sum; r < 0.5 px or no centre
 * inside: all into the pixel it lands in) and A(d) = (d / focal_px)^2 the
 * area one pixel covers at depth d (scene length^2). So a body's optical
 * depth integrated over the image area it covers is its cross-section
 * kappa m.
 * Depth slabs. [d0, d1] = the smallest and largest depth > near of the
 * dust bodies (all of them, on screen or not); K = render.dust_slabs
 * slabs of equal depth split it; slab index 1 + floor((d - d0) / (d1 - d0)
 * K), clamped to [1, K] (all dust in slab 1 when d1 = d0). An emitting body
 * nearer than d0 goes to slab 0, one beyond d1 to slab K + 1 (no dust in
 * either). render_dust_slab says it. Emitting bodies deposit their light
 * (render_stars_splat's footprint, with render.diffuse the smooth layer's
 * too, mixed per slab as render_stars_diffuse) into E_k, dust into tau_k;
 * then front to back, per pixel and channel, in double,
 *   I = sum_k E_k exp(-sum_{j<k} tau_j) f(tau_k),  f(t) = (1 - e^-t) / t
 * (1 - t/2 below 1e-6): f is the mean transmission of light emitted
 * uniformly through a slab of optical depth t, emitters and dust being
 * mixed inside a slab. With no dust component the renderer never comes
 * here (frames are the old ones, bit for bit). */
#define RENDER_DUST_H_RATIO 3.0
#define RENDER_DUST_MAX_RADIUS_PX 64.0
#define RENDER_DUST_NO_SLAB 255 /* slab of a body that emits nothing (dust, culled) */
/* 1 if some component with bodies has kappa > 0. */
int render_dust_present(const struct sim_state *st);
/* Slab of a body at depth d (dust: is_dust 1) for bounds [d0, d1] and K
 * slabs, as above: 0 .. K + 1. */
int render_dust_slab(double d, double d0, double d1, int K, int is_dust);
/* f(t) above, in double. */
double render_dust_mix(double t);
/* The K + 2 emission images (w*h*3) and optical-depth images (w*h) of a
 * frame, allocated once by a renderer. Memory: (K + 2) * 16 bytes a pixel
 * (1080p, K = 16: 600 MB; 4K: 2.4 GB). */
struct render_dust_buf {
	int K, w, h;
	struct render_image *emit; /* K + 2 */
	float *tau;                /* (K + 2) * w * h */
	struct render_image scratch; /* the diffuse layer of one slab */
	unsigned char *slab;         /* n: each body's slab */
	size_t n;
	/* Ranks that each draw their own bodies (NULL, as render_dust_alloc
	 * leaves them: one process): bounds makes d0d1 = [d0, d1] the
	 * minimum and maximum over the ranks, on every rank, before the slabs
	 * are assigned; sum adds n floats over the ranks into rank 0's buf,
	 * for each slab's images before the composite (emission and optical
	 * depth within a slab are additive, the order between slabs is the
	 * composite's), so rank 0's frame is one process's; the other ranks'
	 * img is then theirs alone. */
	void (*bounds)(void *ctx, double d0d1[2]);
	void (*sum)(void *ctx, float *buf, size_t n);
	void *ctx;
};
int render_dust_alloc(struct render_dust_buf *b, int K, int w, int h, size_t n); /* 0 or NB_ERUNTIME */
void render_dust_free(struct render_dust_buf *b);
/* The frame with dust into img (overwritten; glow and tone map follow as
 * usual): bounds, slabs, stars (render_stars_splat_slabs), with
 * h_by_body != NULL and render.diffuse > 0 the smooth layer per slab
 * (render_splat_h of that slab's emitting bodies, h_by_body[b] each),
 * dust, composite. d0d1 (may be NULL) gets the bounds. 0 or NB_ERUNTIME. */
int render_dust_frame(const struct scene *sc, const struct render_camera *cam,
		      const struct sim_state *st, const struct sim_units *u,
		      const double *h_by_body, struct render_dust_buf *b,
		      struct render_image *img, double d0d1[2]);
/* render_stars_splat with body b deposited into imgs[slab[b]] (slab
 * RENDER_DUST_NO_SLAB: nothing). */
int render_stars_splat_slabs(const struct scene *sc, const struct render_camera *cam,
			     const struct sim_state *st, const struct sim_units *u,
			     const struct render_color_by *cb, const unsigned char *slab,
			     struct render_image *imgs);
/* render.motion_blur (render/blur.c, the rule in render/blur_shared.h):
 * with samples S > 1 the stars splat (render_stars_splat and the _c forms
 * above; the GPU: render/cuda/render_stars.cu) draws each body S times, at
 * x + v t_k (internal units), t_k = ((k + 1/2) / S - 1/2) x span, each
 * with weight W / S (W as above, its colour from the body at the frame's
 * time): the frame's total light is the unblurred one, up to float
 * rounding, for footprints inside the image. The screen diffuse layer's
 * body counts (render_diffuse_counts) stay at the frame's positions; the
 * layer is made from the blurred stars image. Not for the dust slabs
 * (render_stars_splat_slabs ignores it) nor the smooth splat: the scene
 * loader refuses those with samples > 1. S = 1: the splat is the unblurred
 * one, bit for bit (velocities are not read). */
int render_blur_samples(const struct scene *sc); /* render.motion_blur.samples, >= 1 */
/* The shutter's open time, internal time units: shutter x simulation.dt x
 * steps_per_frame x u->time. */
double render_blur_span(const struct scene *sc, const struct sim_units *u);

double render_stars_sigma(double fwhm_px); /* fwhm / (2 sqrt(2 ln 2)), fwhm clamped */
int render_stars_radius(double sigma_px);  /* ceil(3 sigma) + 1 */

/* ---- Exposure: render.exposure's precedence, the one rule (render/exposure.c) ----
 * Camera keys with an exposure win (frame f exposed by hand at
 * render_camera_exposure(sc, f)); else render.exposure: auto (the moving
 * average of render_auto_exposure); else the number render.exposure. A
 * manual exposure e is the gain e / render_tonemap_reference(img). Both
 * renderers, the glow's threshold and render_tonemap read it here. */
struct render_auto_state; /* below */
enum render_exposure_mode { RENDER_EXPOSURE_NUMBER, RENDER_EXPOSURE_AUTO, RENDER_EXPOSURE_KEYS };
enum render_exposure_mode render_exposure_mode(const struct scene *sc);
/* Frame f's manual exposure: the keys' (KEYS) or render.exposure (NUMBER);
 * 0 under AUTO. */
double render_exposure_at(const struct scene *sc, int frame);
/* The exposure a threshold is written against (render_glow_threshold_abs):
 * render.exposure under NUMBER, else 1 (it does not follow auto or keys). */
double render_exposure_fixed(const struct scene *sc);
/* Frame f's gain for render_tonemap_gain: under AUTO one step of st (the
 * renderer's, kept from frame to frame; zeroed to start) and its gain;
 * else render_exposure_at / render_tonemap_reference(img) (0 when img is
 * black). */
double render_exposure_gain(const struct scene *sc, int frame, const struct render_image *img,
			    struct render_auto_state *st);
/* Tone map frame f of img by the rule: render_tonemap_gain with
 * render_exposure_gain(sc, frame, img, st). */
void render_tonemap_frame(const struct scene *sc, int frame, const struct render_image *img,
			  struct render_auto_state *st, uint16_t *out16);

/* Tone map img into 16-bit RGB (w*h*3, row 0 top): exposure, curve
 * (linear, log, asinh, filmic), colormap in density mode, gamma, background.
 * out16 must hold w*h*3 values. The exposure is the rule's for frame 0 of
 * an image alone (render_tonemap_frame with a zeroed auto state:
 * render/exposure.c). */
void render_tonemap(const struct scene *sc, const struct render_image *img, uint16_t *out16);
/* The same with the level given: v = gain * value in step 1
 * (render/tonemap.c). */
void render_tonemap_gain(const struct scene *sc, const struct render_image *img, double gain,
			 uint16_t *out16);

/* Glow (render.glow > 0; render/glow.c, rule in render/glow_shared.h):
 * in place on the HDR img before tone mapping, light above
 * render_glow_threshold_abs moves (fraction render.glow of the excess)
 * into a halo built on a pyramid of 2x-downsampled levels (cells of 2, 4,
 * 8, 16 px; rms spread ~16 px about a point); the image total
 * is kept up to float rounding. render.glow 0, or no pixel above the
 * threshold: img untouched. 0 or NB_ERUNTIME (out of memory). */
int render_glow(const struct scene *sc, struct render_image *img);
/* The threshold in pixel values: render.glow_threshold * ref / exposure
 * (ref = render_tonemap_reference of the image; exposure 1 when auto). */
double render_glow_threshold_abs(const struct scene *sc, double ref);
/* The PSF's wide wing (render.psf_wing > 0; render/glow.c, rule in
 * render/glow_shared.h "Wing"): in place on the HDR img, before the glow,
 * the fraction render.psf_wing of every pixel's light moves into the same
 * pyramid halo as the glow's, its levels weighted by
 * render_wing_level_weight (psf_wing_beta), so each star gets a faint
 * Moffat-like wing (splatting is linear: a wing on the frame is a wing on
 * every star). Total light kept up to float rounding. psf_wing 0: img
 * untouched. 0 or NB_ERUNTIME (out of memory). */
int render_wing(const struct scene *sc, struct render_image *img);

/* Auto exposure (render.exposure: auto); the rule is written in
 * render/tone_shared.h, which the GPU shares. A renderer keeps one state
 * from frame to frame; zero it to start (the first lit frame is taken as it
 * is, later ones are averaged in). */
struct render_auto_state {
	double log_gain; /* natural log of gain */
	double gain;     /* factor on pixel values; 0 until a frame is lit */
	int frames;      /* lit frames seen */
};
/* Histogram of log2(Y / a) of img's lit pixels into hist
 * (RENDER_AUTO_BINS entries, zeroed here); a > 0 the frame's mean value. */
void render_auto_histogram(const struct render_image *img, double a, uint32_t *hist);
/* Linear level that sc's tone curve maps to RENDER_AUTO_TARGET. */
double render_auto_target(const struct scene *sc);
/* Weight of a new frame in the moving average: 1 - exp(-1 / auto_smoothing). */
double render_auto_alpha(const struct scene *sc);
/* Histogram, percentile and one step of st for img (st->gain is then the
 * gain for render_tonemap_gain). */
void render_auto_exposure(const struct scene *sc, const struct render_image *img,
			  struct render_auto_state *st);

/* Overlays (the overlay.* keys; render/overlay.c, the font render/font.c,
 * the per-pixel rule render/overlay_shared.h, which the GPU shares). The
 * CPU rasterises a frame's overlay into codes over at most
 * RENDER_OVERLAY_KINDS boxes per eye (title top-left, time top-right,
 * scale bar bottom-right), laid out in one eye's picture (the frame when
 * mono, its half with camera.stereo: render_eye_size); a stereo frame gets
 * them in each eye, the right eye's boxes the left eye's moved by the
 * eye's origin (render_eye_origin), sharing their codes, so both eyes show
 * the same overlay at the same place. Both renderers composite the same
 * codes into the
 * tone-mapped 16-bit RGB before any conversion: RENDER_OVERLAY_INK sets the
 * pixel to ink (overlay.color), RENDER_OVERLAY_SHADE (the dark outline,
 * render_overlay_outline px wide around the ink) keeps a quarter of it
 * (value >> 2), 0 leaves it. Pixels outside the boxes are never touched;
 * a scene with no overlay draws nothing (nbox 0). */
#define RENDER_FONT_W 5       /* glyph columns */
#define RENDER_FONT_H 9       /* glyph rows: 7 above the baseline, 2 of descender */
#define RENDER_FONT_ADVANCE 6 /* columns from one glyph to the next */
#define RENDER_OVERLAY_KINDS 3                        /* boxes per eye */
#define RENDER_OVERLAY_BOXES (2 * RENDER_OVERLAY_KINDS) /* per frame: two eyes at most */
#define RENDER_OVERLAY_SHADE 1
#define RENDER_OVERLAY_INK 2
struct render_overlay_box {
	int x, y, w, h; /* frame pixels: columns x..x+w-1, rows y..y+h-1 (inside the frame) */
	size_t off;     /* its codes: code[off + row * w + col] */
};
struct render_overlay {
	int nbox;
	struct render_overlay_box box[RENDER_OVERLAY_BOXES];
	uint16_t ink[3]; /* overlay.color in 16-bit display values */
	uint8_t *code;   /* owned; grown by render_overlay_build */
	size_t ncode, cap;
};
/* 1 when sc asks for any overlay (time, a scale bar or a title). */
int render_overlay_on(const struct scene *sc);
/* Codes of frame FRAME seen through cam into ov (zeroed before the first
 * call; nbox 0 when render_overlay_on is 0). 0 or NB_ERUNTIME (memory). */
int render_overlay_build(const struct scene *sc, const struct render_camera *cam, int frame,
			 struct render_overlay *ov);
void render_overlay_free(struct render_overlay *ov);
/* Composite ov into a w x h tone-mapped frame (render_tonemap's layout). */
void render_overlay_apply(const struct render_overlay *ov, int w, int h, uint16_t *rgb16);
/* Font scale of sc: overlay.size, or when 0, max(1, (height + 150) / 300),
 * height the eye's (render_eye_size: the frame's when mono). */
int render_overlay_size(const struct scene *sc);
/* Outline width in pixels for font scale size: max(1, size / 3). */
int render_overlay_outline(int size);
/* Margin from the eye's edges to the boxes: max(4, height / 40) px,
 * height the eye's (the frame's when mono). */
int render_overlay_margin(const struct scene *sc);
/* "t = 450 Myr" (galactic) or "t = 12.5" (nbody): the elapsed time of
 * frame f, f x steps_per_frame x dt in the scene's units, with as many
 * decimals as resolve one frame's interval (0 when it is >= 1, at most 6). */
void render_overlay_time_text(const struct scene *sc, int frame, char *buf, size_t n);
/* The scale bar of an eye's picture w pixels wide (the frame when mono)
 * through cam: its length *len
 * (scene length units; overlay.scale_bar, or with auto the 1-2-5 value
 * whose pixel length is nearest 20% of w in log, so 12.6..31.6% of w) and
 * pixel length *px = focal_px * len / |target - pos| (the length seen at
 * the camera's target distance). Returns 0 when there is no bar
 * (scale_bar: none, the camera on its target). */
int render_overlay_scale_bar(const struct scene *sc, const struct render_camera *cam, double *len,
			     double *px);
/* "10 kpc" (galactic; "500 pc" under 1 kpc) or "0.5" (nbody). */
void render_overlay_length_text(const struct scene *sc, double len, char *buf, size_t n);
/* Font: 1 when c (a byte) has a glyph (printable ASCII 32..126). */
int render_font_has(int c);
/* 1 when glyph c has ink at (col, row) (c without a glyph: '?'). */
int render_font_bit(int c, int col, int row);
/* strlen(s) * RENDER_FONT_ADVANCE * size: the text's width in pixels. */
int render_text_width(const char *s, int size);
/* Set code[] of a bw x bh box to value under the ink of s, its top-left
 * corner at (x, y), each font pixel a size x size block; clipped to the box. */
void render_text_draw(uint8_t *code, int bw, int bh, int x, int y, const char *s, int size,
		      uint8_t value);

/* ---- shared pieces (additive; used by splat/tonemap, the tests, and as the
 * specification the GPU renderer mirrors) ---- */

/* A camera made ready to project onto a w x h image. */
struct render_view {
	int w, h;
	double pos[3];                   /* the eye's position, scene units */
	double fwd[3], right[3], upv[3]; /* orthonormal: right = fwd x up, upv = right x fwd;
					  * fisheye: fwd and upv turned by camera.dome_tilt */
	double focal_px;                 /* perspective: (h/2) / tan(fov/2), pixels per unit of
					  * slope; fisheye, equirect: pixels per radian */
	double near;                     /* depth <= near is culled: 1e-6 |target - pos| */
	struct render_proj pj;           /* the projection (w, h, focal, near repeated) */
};
/* Basis and focal length for cam on a w x h image. A degenerate up (zero or
 * parallel to forward) is replaced by +z, or +y when forward is along z;
 * position == target looks along +y. Never produces NaN for finite input.
 * cam->projection picks the projection (render/projection_shared.h);
 * cam->eye != 0 moves the eye along right by eye x eye_separation / 2
 * (perspective: parallel eyes, image shifted by eye x (separation / 2) x
 * focal / convergence pixels, so zero parallax lies at the convergence
 * distance; equirect: omni-directional stereo, the eye circle of radius
 * separation / 2 about the camera). */
void render_view_make(const struct render_camera *cam, int w, int h, struct render_view *v);
/* ---- camera.projection: the projection table (render/projection.c) ----
 * One const row per projection, indexed by enum scene_projection (the one
 * enum for the choice). The per-body formulas, shared with the GPU, are
 * render/projection_shared.h's; every other question a stage asks of a
 * projection is a field of its row, zero when it does not apply. */
struct render_projection {
	/* the x axis is the whole circle: footprints are drawn as
	 * RENDER_PROJ_COPIES copies (render_proj_copies), the glow's, the
	 * wing's and the screen diffuse layer's pyramids wrap in x */
	int wrap;
	int circle; /* pixels beyond the circle of radius w/2 stay 0 (render_projection_mask) */
	int ods;    /* stereo eyes on a circle (render_proj's ods); else shifted pinholes */
	int framed; /* the pinhole's frame: the framing measure (app/framing.c) works in it */
	/* its part of render_view_make on the basis made there: the focal
	 * length (fisheye: the dome's tilt too); NULL: the pinhole's */
	void (*view)(const struct render_camera *cam, struct render_view *v);
	/* FITS maps (output/fits.c): NULL a plane (a pixel scale at the
	 * target's distance); else the celestial WCS code, CTYPE CMLN-code /
	 * CMLT-code, CRVAL2 = wcs_lat0 at the image centre, and pixel_sr: 1 /
	 * each pixel's solid angle in steradians (w x h, row 0 the top) for
	 * px_per_rad pixels per radian (> 0) */
	const char *wcs;
	double wcs_lat0;
	void (*pixel_sr)(int w, int h, double px_per_rad, float *inv_sr);
	int mp4_equirect; /* MP4: the Spherical Video V2 sv3d box, equirectangular */
};
/* The row of kind (enum scene_projection); NULL when kind is no row. */
const struct render_projection *render_projection_of(int kind);

/* Projection of P (scene units) onto continuous pixel coordinates: pixel
 * (col i, row j) covers [i, i+1) x [j, j+1), so the image centre is
 * (w/2, h/2). Perspective (the pinhole): x = w/2 + focal_px
 * (d.right)/(d.fwd), y = h/2 - focal_px (d.upv)/(d.fwd), d = P - pos,
 * depth = d.fwd; fisheye and equirect: render_proj_map, depth = the
 * distance. Returns 1 when depth > near (x, y, depth set), 0 when culled
 * (only depth set). */
int render_view_project(const struct render_view *v, const double p[3], double *x, double *y,
			double *depth);

/* Splat kernel radius cap, pixels (render_splat, splat.c): a body nearer
 * than smoothing * focal_px / RENDER_MAX_RADIUS_PX is spread over this
 * radius only (its mass still fully deposited), to bound the work. */
#define RENDER_MAX_RADIUS_PX 256.0

/* Level of detail (render_splat, splat.c; the GPU splat means the same).
 * A footprint of radius r > RENDER_LOD_RADIUS_PX pixels is deposited on
 * level L = render_lod_level(r), the smallest L with r <= 2^L *
 * RENDER_LOD_RADIUS_PX: a grid of render_lod_dim(w, L) x render_lod_dim(h, L)
 * cells of 2^L x 2^L pixels (the image rounded up to whole cells), the body
 * at (x / 2^L, y / 2^L) with radius r / 2^L, its kernel sampled at the cell
 * centres and normalised over them exactly as a level-0 footprint over
 * pixel centres. Each level is then upsampled bilinearly to full
 * resolution (cell centres at pixel (2^L (I + 1/2)), clamped to the edge
 * cell beyond the outermost centres, values divided by 4^L) and added to
 * the level-0 image, levels in increasing order, before tone mapping.
 * Mass: a cell's content reaches the image exactly when the cell lies
 * inside it (the clamp keeps the left and top edges exact); a cell that
 * hangs over the right or bottom edge (w or h not a multiple of 2^L) loses
 * its outside share, as a clipped level-0 footprint does. Accuracy: for one
 * body, max |LOD image - exact level-0 splat| <= RENDER_LOD_ERROR_CUBIC
 * (cubic) or RENDER_LOD_ERROR_GAUSS (gaussian) times the exact image's
 * peak (tests/test_render_lod.c). The error is the bilinear interpolation
 * of the kernel's curvature, ~3 / (r / 2^L)^2 at its centre for the cubic,
 * worst just past a threshold where r / 2^L is RENDER_LOD_RADIUS_PX / 2
 * (measured worst over sub-cell positions: 4.2 % cubic, 1.6 % gaussian);
 * RENDER_LOD_RADIUS_PX 24 would give 2 % and 1.1 % for ~40 % more GPU
 * splat time (H100, adaptive galaxies). Cost per body: at most ~(2
 * RENDER_LOD_RADIUS_PX + 1)^2 samples (x 2.25 gaussian) instead of up to
 * (2 r + 1)^2. r <= RENDER_LOD_RADIUS_PX is level 0: the picture is then
 * exactly the plain splat. */
#define RENDER_LOD_RADIUS_PX 16.0
#define RENDER_LOD_LEVELS 5 /* levels 0..4: RENDER_MAX_RADIUS_PX / 2^4 <= RENDER_LOD_RADIUS_PX */
#define RENDER_LOD_ERROR_CUBIC 0.045
#define RENDER_LOD_ERROR_GAUSS 0.017
int render_lod_level(double r_px);     /* 0 .. RENDER_LOD_LEVELS - 1 */

/* Analytic normalisation of large cubic footprints (render_splat, splat.c;
 * the GPU splat means the same). A cubic footprint whose radius on its
 * level is r >= RENDER_NORM_ANALYTIC_R cells is normalised by the integral
 * of its shape, RENDER_CUBIC_SHAPE_AREA * r^2 (= 7 pi r^2 / 40, the shape
 * being 1 - 6q^2 + 6q^3 / 2 (1 - q)^3 without the 40 / (7 pi r^2)),
 * instead of the sum of its samples over the cell centres: the sum is then
 * ~1000 samples (every level >= 1 footprint has r in (8, 16]) and the two
 * agree within RENDER_NORM_ANALYTIC_ERROR relative (measured worst over r
 * and sub-cell positions: 2.6e-5 for r in [8, 10), 1.0e-5 in [10, 12),
 * 5e-6 beyond; the M4 spline is C2, so the cell-centre sum converges
 * fast). Such a body deposits its weight times (1 +- that error) in total
 * instead of exactly its weight. Smaller cubic footprints and every
 * gaussian one (whose cut at 1.5 r leaves a ~1e-3 discrete-sum wobble)
 * keep the discrete normalisation. */
#define RENDER_NORM_ANALYTIC_R 8.0
#define RENDER_NORM_ANALYTIC_ERROR 3e-5
#define RENDER_CUBIC_SHAPE_AREA 0.54977871437821381673 /* 7 pi / 40 */
int render_lod_dim(int n, int level);  /* ceil(n / 2^level) */

/* The level render_tonemap calls "1" at exposure 1: RENDER_REF_SCALE times the
 * mean pixel value over all pixels and channels (0 for an empty image). */
#define RENDER_REF_SCALE 50.0
/* Strength k of the log and asinh curves (render_tonemap, tonemap.c). */
#define RENDER_CURVE_K 100.0
double render_tonemap_reference(const struct render_image *img);
/* Colour of map at t in [0, 1] (clamped), display-encoded RGB in [0, 1]:
 * linear interpolation between matplotlib's published tables
 * (render/colormap_data.h: magma, inferno, viridis, plasma, cividis, all
 * 256 entries; twilight resampled from 510), cubehelix from Green's (2011)
 * formula with matplotlib's parameters (start 0.5, rotations -1.5, hue 1,
 * gamma 1) clipped to [0, 1], grey the identity. */
void render_colormap(enum scene_colormap map, double t, float rgb[3]);
/* The scene's map: render.colormap_file's rows (t = k / 255, linear
 * between them) when one is given, else render_colormap(render.colormap). */
void render_colormap_scene(const struct scene *sc, double t, float rgb[3]);
/* color_by los_velocity's diverging map, display RGB: blue (t = 0,
 * approaching) through white (t = 1/2, exactly [1, 1, 1]) to red (t = 1,
 * receding); linear between 5 control points (render/color_by.c). */
void render_diverging(double t, float rgb[3]);

/* ---- render.color_by (render/color_by.c, rule in color_by_shared.h) ---- */
#define RENDER_COLOR_LUT_N 1021 /* 255 * 4 + 1: every t = k / 255 is a sample */
struct render_color_by {
	enum scene_color_by by; /* component: nothing else is used */
	double lo, hi;          /* the range, scene velocity units, lo < hi */
	float lut[RENDER_COLOR_LUT_N * 3]; /* linear RGB: map(t)^gamma, t = k / (N - 1) */
};
/* The light per unit mass of component c as a body's weight uses it (render/light.c):
 * render_comp_light with color_by component; else its brightness in all
 * three channels (the colour then comes from the quantity), or 0 for a
 * component coloured [0, 0, 0] (hidden, as with color_by component). */
void render_body_light(const struct scene *sc, const struct sim_component *c, float light[3]);
/* Fill cb for sc: the map (los_velocity: render_diverging; speed:
 * render_colormap_scene) decoded to linear light with render.gamma, so a
 * body shows the map's display colour where the tone map is linear; and
 * the range: render.color_range, or with auto, from st (internal units,
 * converted with u; NULL: sc's) seen by frame 0's camera
 * (render_camera_at(sc, 0, st)): over the drawn bodies (render_body_light
 * > 0) with finite values, los_velocity [-P, P] with P the 99th
 * percentile of |q|, speed [1st, 99th percentile] (nearest rank: sorted
 * q[floor(p (m - 1) + 1/2)]), an empty or one-valued range widened to lo +
 * max(|lo|, 1). The renderers call it once, at create, from the initial
 * state, so a clip's colours do not flicker and the CPU and the GPU agree.
 * 0, NB_EINPUT (camera.follow names nothing) or NB_ERUNTIME (memory). */
int render_color_by_init(const struct scene *sc, const struct sim_state *st,
			 const struct sim_units *u, struct render_color_by *cb);
/* The colour (linear RGB) body b of st takes under cb through the camera
 * at cam_pos (scene units); [1, 1, 1] with color_by component. */
void render_color_by_body(const struct render_color_by *cb, const struct sim_state *st,
			  const struct sim_units *u, size_t b, const double cam_pos[3],
			  double col[3]);
/* *use = cb; or, when cb is NULL and sc colours by a quantity (mode
 * components), one made here by render_color_by_init from st, also in
 * *own for the caller to free (else *own = NULL). 0 or its error. */
int render_color_by_resolve(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, const struct render_color_by *cb,
			    const struct render_color_by **use, struct render_color_by **own);
/* render_splat_h, render_stars_splat and render_stars_diffuse with the
 * color_by state given (cb NULL: made by render_color_by_init from st
 * itself when render.color_by is not component). The renderers pass the
 * one made at create. */
int render_splat_hc(const struct scene *sc, const struct render_camera *cam,
		    const struct sim_state *st, const struct sim_units *u, const double *h_by_body,
		    const struct render_color_by *cb, struct render_image *img);
int render_stars_splat_c(const struct scene *sc, const struct render_camera *cam,
			 const struct sim_state *st, const struct sim_units *u,
			 const struct render_color_by *cb, struct render_image *img);
int render_stars_diffuse_c(const struct scene *sc, const struct render_camera *cam,
			   const struct sim_state *st, const struct sim_units *u,
			   const double *h_by_body, const struct render_color_by *cb,
			   struct render_image *img, struct render_image *smooth);
int render_stars_diffuse_screen_c(const struct scene *sc, const struct render_camera *cam,
				  const struct sim_state *st, const struct sim_units *u,
				  const struct render_color_by *cb, struct render_image *img,
				  struct render_image *smooth);

/* ---- framing: camera.follow: light, camera.frame: auto (render/framing.c;
 * the rules in render/framing_shared.h, the GPU twin render/cuda/framing.cu,
 * docs/scenes.md "Framing") ---- */

/* The view seen from a target, for the distance each body needs: target
 * (internal units), the view's orthonormal basis, and the tangents of the
 * frame's half-width and half-height less the margin. */
struct render_frame_geom {
	double target[3];
	double right[3], up[3], fwd[3];
	double tx, ty; /* (1 - margin) tan(fov/2) w/h, (1 - margin) tan(fov/2) */
};
/* The geometry of cam (scene units; target converted to internal units by
 * multiplying with length, u->length) on a w x h frame with margin (share
 * of each half-extent). The basis is render_view_make's. */
void render_frame_geom_make(const struct render_camera *cam, int w, int h, double margin,
			    double length, struct render_frame_geom *g);
/* The luminance per unit mass of each component as the renderer draws it
 * (Rec. 709 Y of render_body_light; 1 in mode density; 0 for dust, kappa
 * > 0, and for hidden components): w_by_comp[0 .. st->ncomp - 1]. A body's
 * weight is its mass times its component's value; 0 is not drawn. */
void render_framing_weights(const struct scene *sc, const struct sim_state *st, float *w_by_comp);

/* The light centre of st's drawn bodies (internal units): per axis the
 * trimmed mean of the central 90% of the light (framing_shared.h).
 * Deterministic: bit-identical for any number of threads. *light gets the
 * drawn light (sum of weights), *count the drawn bodies; with none, c is
 * 0 and the caller keeps what it had. 0 or NB_ERUNTIME (memory). */
struct render_light_centre {
	double c[3];
	double light;
	size_t count;
};
int render_light_centre(const struct sim_state *st, const float *w_by_comp,
			struct render_light_centre *out);
/* Sums and maxima over ranks that each hold a part of the bodies
 * (simulation.ranks: domains), each a collective call that leaves the
 * result on every rank: sum_u64 exact, sum_f64 in rank order. With one,
 * the framing functions below (the _over forms) measure every rank's
 * bodies: the ranges and the quantised histograms reduce exactly, so the
 * quantiles' steps are one process's; the trimmed sums and shares are
 * sums of doubles, one process's to rounding. Every rank must call them
 * alike. */
struct render_reduce {
	void (*sum_u64)(void *ctx, uint64_t *v, int n);
	void (*sum_f64)(void *ctx, double *v, int n);
	void (*max_f64)(void *ctx, double *v, int n);
	void *ctx;
};
int render_light_centre_over(const struct sim_state *st, const float *w_by_comp,
			     const struct render_reduce *red, struct render_light_centre *out);
int render_frame_need_over(const struct sim_state *st, const float *w_by_comp,
			   const struct render_frame_geom *g, double fraction,
			   const struct render_reduce *red, double *dist);
double render_frame_inside_over(const struct sim_state *st, const float *w_by_comp,
				const struct render_frame_geom *g, double dist,
				const struct render_reduce *red);
/* The smallest distance from g->target (internal units) at which the
 * share `fraction` of the drawn light is inside the frame less the
 * margin, to 2^-19 of the range of the bodies' needs (rounded up): the
 * fraction-quantile of render_framing_need. No drawn body: *dist = -1.
 * 0 or NB_ERUNTIME. */
int render_frame_need(const struct sim_state *st, const float *w_by_comp,
		      const struct render_frame_geom *g, double fraction, double *dist);
/* The share of the drawn light inside the frame of g (margin as g was
 * made) seen from distance dist (internal units) along -g->fwd: the
 * weighted share of bodies whose need is <= dist. No drawn body: 1. */
double render_frame_inside(const struct sim_state *st, const float *w_by_comp,
			   const struct render_frame_geom *g, double dist);

/* follow light's centre of st's drawn light (scene units; none drawn: 0),
 * and frame auto's eye put on the line from cam's target at the distance
 * render_frame_need gives for sc's frame_fraction and frame_margin,
 * clamped to frame_range x cam's distance (unchanged when nothing is
 * drawn): both unsmoothed, for render_camera_at. NB_EINPUT when st is
 * NULL, NB_ERUNTIME out of memory. */
int render_framing_light_com(const struct scene *sc, const struct sim_state *st, double com[3]);
int render_framing_auto(const struct scene *sc, const struct sim_state *st,
			struct render_camera *cam);

/* frame auto's rule (render/framing.c), one for both framings: the
 * unsmoothed one above (render_camera_at) and a run's (app/framing.c),
 * which smooths the log of the scale with a spring.
 * render_framing_geom: cam's frame geometry as frame auto measures it (an
 * eye's picture in stereo, camera.frame_margin; target times length).
 * render_framing_dist: |pos - target| of cam (before frame auto moves
 * the eye: the keys' distance d0).
 * render_framing_range: need (scene units, >= 0) clamped to
 * camera.frame_range x d0, returned; *scale gets need / d0 clamped to
 * camera.frame_range (the same bound, the ratio a run smooths).
 * render_framing_place: the eye on the line from cam's target, dist
 * (scene units) back along g->fwd. */
void render_framing_geom(const struct scene *sc, const struct render_camera *cam, double length,
			 struct render_frame_geom *g);
double render_framing_dist(const struct render_camera *cam);
double render_framing_range(const struct scene *sc, double need, double d0, double *scale);
void render_framing_place(struct render_camera *cam, const struct render_frame_geom *g,
			  double dist);

/* A critically damped spring (render/spring.c): x'' = (g - x) / tau^2 -
 * 2 x' / tau toward the goal g, advanced one frame at a time by the exact
 * solution with g held over the frame. A step of the goal from 0 to 1 is
 * then at 1 - (1 + k / tau) exp(-k / tau) after k frames, never beyond 1. */
struct render_spring {
	double x, v; /* value, and its change per frame */
	int started;
};
/* The first call puts x at g with v 0; later calls advance one frame
 * toward g. tau <= 0: x = g. Returns x. */
double render_spring_step(struct render_spring *s, double g, double tau);

/* ---- out of core (render/ooc.c; the GPU: render/cuda/render_ooc.cu) ----
 * A frame drawn from host bodies in chunks that stream through the GPU
 * under a memory budget (render.gpu_memory; docs/snapshots.md, "Bigger
 * than the GPU"). */
#define RENDER_OOC_MIN_CHUNK 4096 /* the smallest chunk a budget may give (fewer bodies: all) */
struct render_ooc_plan {
	size_t n;       /* bodies */
	size_t chunk;   /* bodies per chunk: the device buffers' capacity */
	size_t nchunks; /* ceil(n / chunk); 1 when n is 0 */
	size_t last;    /* bodies in the last chunk (n - (nchunks - 1) chunk) */
	size_t bytes;   /* fixed + chunk x per_body: the device memory the plan takes */
};
/* n bodies through budget bytes of device memory of which fixed go to the
 * frame's buffers and per_body to each body slot of a chunk: chunk =
 * min(n, (budget - fixed) / per_body, max_chunk (0: no limit)). NB_EINPUT
 * (logged with the numbers) when the budget leaves room for fewer than
 * min(n, RENDER_OOC_MIN_CHUNK) bodies, or per_body is 0. */
int render_ooc_plan(size_t n, size_t budget, size_t fixed, size_t per_body, size_t max_chunk,
		    struct render_ooc_plan *p);
/* Chunk k of p: bodies [*first, *first + *count) (k >= nchunks: count 0). */
void render_ooc_chunk(const struct render_ooc_plan *p, size_t k, size_t *first, size_t *count);
/* Bodies [first, first + count) of st into float4 rows, internal units:
 * pos4 (x, y, z, mass), vel4 (vx, vy, vz, 0) when not NULL, comp (st's, 0
 * when st has none) when not NULL. Row k is body first + k. OpenMP. */
void render_ooc_pack(const struct sim_state *st, size_t first, size_t count, float *pos4,
		     float *vel4, uint16_t *comp);

#ifdef __cplusplus
}
#endif
#endif
