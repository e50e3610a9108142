/* renderer_cpu.c - the CPU renderer (renderer.h): splat and tone map on
 * this thread when a frame is queued (render/), from the host state; the
 * writer thread converts and encodes the 16-bit frame. Adaptive smoothing
 * lengths are kept between frames and recomputed every
 * render.adaptive_every frames, as the GPU renderer does; so is the auto
 * exposure's moving average (render.exposure: auto), from this frame's own
 * histogram, as on the GPU (no lag on either). With render.style: stars
 * there are no smoothing lengths: render_stars_splat draws each body
 * through a PSF fixed in pixels; with render.diffuse > 0 as well, adaptive
 * h are kept as above for the smooth layer under the stars
 * (render_stars_diffuse) with render.diffuse_smoothing: adaptive; with
 * screen (the default) the layer is made from the stars image itself on
 * every frame (render_stars_diffuse_screen), no h. render.glow
 * (render_glow) acts on the HDR image before the exposure and the tone
 * map. The overlay (overlay.*) is composited into the tone-mapped 16-bit
 * frame (render_overlay_apply). With dust in the scene
 * (render_dust_present) the frame is render_dust_frame's depth slabs
 * instead (the adaptive layer per slab; the screen layer made from the
 * composited light). render.color_by's state (its colours and range) is
 * made once here, from the initial state (render_color_by_init), as the
 * GPU renderer does. camera.stereo: each eye is that whole picture, up to
 * the glow and the fisheye mask, in an image of its own, copied into its
 * half of the frame; the frame is then tone mapped as one, and the
 * overlay drawn in each eye. */
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "../render/adaptive.h"
#include "app.h"
#include "progress.h"
#include "renderer.h"

struct renderer_cpu {
	struct renderer base;
	const struct scene *sc;
	const struct sim_state *st;
	struct engine *eng;      /* split over ranks: this rank's bodies, the frame sum */
	const struct sim_units *u;
	struct render_image img; /* HDR, the frame */
	struct render_image eye; /* camera.stereo: one eye's picture (w 0 when mono) */
	struct render_image smooth; /* render.diffuse's layer; w 0 when off */
	uint16_t *rgb16;         /* the tone-mapped frame last queued */
	double *h;               /* n, scene units; NULL with fixed smoothing */
	size_t h_cap;            /* bodies h (and h_id, h_now) can hold */
	int h_frame;             /* frame of the last recompute of h, -1 none */
	/* over ranks whose bodies move between them (engine_split_h_moves): the
	 * ids h was computed for (h_n of them), and h for this frame's bodies */
	uint32_t *h_id;
	size_t h_n;
	double *h_now;
	int frame;               /* frame in rgb16, -1 none */
	double render_s;         /* its rendering time */
	struct render_auto_state autoexp; /* render.exposure: auto */
	struct render_overlay ov;         /* overlay.*: this frame's codes */
	struct render_dust_buf dust; /* dust slabs; K 0 when the scene has no dust */
	struct render_color_by *cb;       /* render.color_by; NULL: by component */
	struct app_rank_splat *gsplat;    /* GPU ranks: the stars splat there; NULL: here */
};

/* The stars splat of st into img: on this rank's GPU when it takes it
 * (GPU ranks, renderer_rank_gpu.c), else render_stars_splat_c. */
static int cpu_stars(struct renderer_cpu *r, const struct render_camera *cam,
		     const struct sim_state *st, struct render_image *img)
{
	if (r->gsplat)
		return app_rank_splat(r->gsplat, cam, st, img);
	return render_stars_splat_c(r->sc, cam, st, r->u, r->cb, img);
}

/* Dust over ranks that hold their own bodies (render_dust_buf's
 * callbacks, ctx r): the slabs' depth bounds over every rank's dust, and
 * each slab's images summed on rank 0, which composites them in depth
 * order; its frame is then one process's. */
static void cpu_dust_bounds(void *ctx, double d0d1[2])
{
	(void)ctx;
	double v[2] = {-d0d1[0], d0d1[1]}; /* the minimum as a maximum */
	dist_max_doubles(v, 2, "dust depth bounds");
	d0d1[0] = -v[0];
	d0d1[1] = v[1];
}

static void cpu_dust_sum(void *ctx, float *buf, size_t n)
{
	engine_split_sum(((struct renderer_cpu *)ctx)->eng, buf, n);
}

/* The dust slabs' per-body buffer for n bodies (a rank's count changes as
 * bodies move between ranks). 0 or NB_ERUNTIME (logged). */
static int cpu_dust_room(struct renderer_cpu *r, size_t n)
{
	if (n <= r->dust.n)
		return 0;
	unsigned char *s = realloc(r->dust.slab, n);
	if (!s) {
		log_error("out of memory for the dust slabs of %zu bodies", n);
		return NB_ERUNTIME;
	}
	r->dust.slab = s;
	r->dust.n = n;
	return 0;
}

/* render.diffuse_smoothing: screen over ranks that hold their own bodies
 * (engine_split_h_moves): the layer is made from the whole picture and
 * the whole image of body counts, so both are summed on rank 0 (the
 * picture only when not yet: dust's composite is rank 0's already), which
 * makes the layer and mixes it in as one process does; the other ranks'
 * picture is cleared (the frame sum that follows adds nothing). */
static int cpu_screen_ranks(struct renderer_cpu *r, const struct render_camera *cam,
			    const struct sim_state *st, struct render_image *img, int summed)
{
	const size_t nc = (size_t)render_lod_dim(img->w, 1) * (size_t)render_lod_dim(img->h, 1);
	float *c1 = malloc(nc * sizeof *c1);
	if (!c1) {
		log_error("out of memory for the diffuse layer's counts");
		return NB_ERUNTIME;
	}
	render_diffuse_counts(r->sc, cam, st, r->u, c1);
	engine_split_sum(r->eng, c1, nc);
	if (!summed)
		engine_split_sum(r->eng, img->rgb, (size_t)img->w * (size_t)img->h * 3);
	int rc = 0;
	if (dist_rank() != 0)
		render_image_clear(img);
	else if ((rc = render_diffuse_layer(r->sc, img, c1, &r->smooth)) == 0)
		render_diffuse_mix(r->sc->render.diffuse, img, &r->smooth);
	free(c1);
	return rc;
}

/* One eye's picture (the frame's when mono) through cam into img (eye
 * size): splat, diffuse layer, wing, glow, fisheye mask. */
static int cpu_eye(struct renderer_cpu *r, const struct sim_state *st, const double *h,
		   const struct render_camera *cam, struct render_image *img)
{
	const struct scene *sc = r->sc;
	int rc = 0;
	render_image_clear(img);
	int screen = sc->render.diffuse_smoothing == SCENE_DIFFUSE_SCREEN;
	const int moves = engine_split_h_moves(r->eng); /* ranks hold their own bodies */
	if (r->dust.K) {
		if ((rc = cpu_dust_room(r, st->n)))
			return rc;
		rc = render_dust_frame(sc, cam, st, r->u, r->smooth.rgb && !screen ? h : NULL,
				       &r->dust, img, NULL);
		if (rc == 0 && r->dust.sum && dist_rank() != 0)
			render_image_clear(img); /* rank 0 composited every rank's slabs */
		if (rc == 0 && r->smooth.rgb && screen)
			rc = moves ? cpu_screen_ranks(r, cam, st, img, 1)
				   : render_diffuse_screen_apply(sc, cam, st, r->u, img, &r->smooth);
	} else if (r->smooth.rgb && screen && moves) {
		if ((rc = cpu_stars(r, cam, st, img)) == 0)
			rc = cpu_screen_ranks(r, cam, st, img, 0);
	} else if (r->smooth.rgb && screen)
		rc = render_stars_diffuse_screen_c(sc, cam, st, r->u, r->cb, img, &r->smooth);
	else if (r->smooth.rgb)
		rc = render_stars_diffuse_c(sc, cam, st, r->u, h, r->cb, img, &r->smooth);
	else if (sc->render.style == SCENE_STYLE_STARS)
		rc = cpu_stars(r, cam, st, img);
	else
		rc = render_splat_hc(sc, cam, st, r->u, h, r->cb, img);
	if (rc)
		return rc;
	/* over MPI ranks st is this rank's bodies: splatting is additive, so
	 * rank 0 gets the whole picture as the sum of the ranks' (dist/) */
	engine_split_sum(r->eng, img->rgb, (size_t)img->w * (size_t)img->h * 3);
	if ((rc = render_wing(sc, img))) /* render.psf_wing 0: untouched */
		return rc;
	if ((rc = render_glow(sc, img))) /* render.glow 0: untouched */
		return rc;
	render_projection_mask(cam, img); /* fisheye: black beyond the circle */
	return 0;
}

/* r's length buffers for n bodies (a rank's count changes as bodies move
 * between ranks; h_id and h_now only then). 0 or NB_ERUNTIME (logged). */
static int cpu_h_room(struct renderer_cpu *r, size_t n)
{
	if (n <= r->h_cap)
		return 0;
	const int moves = engine_split_h_moves(r->eng);
	double *h = realloc(r->h, n * sizeof *h), *now = NULL;
	r->h = h ? h : r->h;
	if (h && moves && (now = realloc(r->h_now, n * sizeof *now)))
		r->h_now = now;
	uint32_t *id = now ? realloc(r->h_id, n * sizeof *id) : NULL;
	r->h_id = id ? id : r->h_id;
	if (!h || (moves && !id)) {
		log_error("out of memory for %zu smoothing lengths", n);
		return NB_ERUNTIME;
	}
	r->h_cap = n;
	return 0;
}

/* The adaptive lengths of frame f's bodies into *h: recomputed every
 * render.adaptive_every frames (over ranks that hold their own bodies:
 * with a halo of the others', dist/), kept in between; where bodies move
 * between ranks the kept lengths follow them by id. */
static int cpu_lengths(struct renderer_cpu *r, int f, const double **h)
{
	const struct sim_state *st = r->st;
	const int moves = engine_split_h_moves(r->eng);
	int rc = cpu_h_room(r, st->n);
	if (rc)
		return rc;
	*h = r->h;
	if (r->h_frame < 0 || f - r->h_frame >= r->sc->render.adaptive_every || f < r->h_frame) {
		if ((rc = engine_split_h(r->eng, r->sc, st, r->u, r->h)))
			return rc;
		r->h_frame = f;
		if (moves)
			memcpy(r->h_id, st->id, st->n * sizeof *st->id);
		r->h_n = st->n;
	} else if (moves) {
		rc = engine_split_h_follow(r->eng, r->h_id, r->h, r->h_n, st, r->h_now);
		*h = r->h_now;
	}
	return rc;
}

static int cpu_queue(struct renderer *base, int f, const struct render_camera *cam)
{
	struct renderer_cpu *r = (struct renderer_cpu *)base;
	const struct scene *sc = r->sc;
	double t = log_clock_s();
	int rc = 0;
	/* over MPI ranks: this rank's bodies (the smoothing lengths are one
	 * process's: of the whole state replicated, or of this rank's own
	 * bodies with their neighbours on the other ranks) */
	const struct sim_state *st = r->st;
	const double *h = NULL;
	if (r->h && (rc = cpu_lengths(r, f, &h)))
		return rc;
	struct sim_state sub;
	const int split = engine_is_split(r->eng);
	if (split && (rc = engine_split_bodies(r->eng, r->st, h, &sub, &h)))
		return rc;
	if (split)
		st = &sub;
	if (sc->camera.stereo.mode == SCENE_STEREO_NONE) {
		if ((rc = cpu_eye(r, st, h, cam, &r->img)))
			return rc;
	} else {
		for (int eye = -1; eye <= 1; eye += 2) { /* left, then right */
			struct render_camera ec;
			int x0, y0;
			render_eye_camera(cam, eye, &ec);
			if ((rc = cpu_eye(r, st, h, &ec, &r->eye)))
				return rc;
			render_eye_origin(sc, eye, &x0, &y0);
			render_image_blit(&r->eye, &r->img, x0, y0);
		}
	}
	if (split && dist_rank() != 0) { /* rank 0 tone maps and writes the sum */
		r->frame = f;
		r->render_s = log_clock_s() - t;
		return 0;
	}
	render_tonemap_frame(sc, f, &r->img, &r->autoexp, r->rgb16); /* render/exposure.c's rule */
	if (render_overlay_on(sc)) { /* into the 16-bit frame, before any conversion */
		if ((rc = render_overlay_build(sc, cam, f, &r->ov)))
			return rc;
		render_overlay_apply(&r->ov, r->img.w, r->img.h, r->rgb16);
	}
	r->frame = f;
	r->render_s = log_clock_s() - t;
	return 0;
}

static int cpu_push(struct renderer *base, int f, struct out_writer *w, double *render_s)
{
	struct renderer_cpu *r = (struct renderer_cpu *)base;
	if (r->frame != f) {
		log_error("CPU renderer: holds frame %d, expected %d (internal)", r->frame, f);
		return NB_ERUNTIME;
	}
	*render_s += r->render_s;
	struct out_frame fr = {.index = f, .w = r->img.w, .h = r->img.h, .rgb16 = r->rgb16};
	return out_writer_push(w, &fr);
}

static int cpu_release(struct renderer *base)
{
	(void)base;
	return 0;
}

static void cpu_free(struct renderer *base)
{
	struct renderer_cpu *r = (struct renderer_cpu *)base;
	render_image_free(&r->img);
	render_image_free(&r->eye);
	render_image_free(&r->smooth);
	render_dust_free(&r->dust);
	free(r->rgb16);
	free(r->h);
	free(r->h_id);
	free(r->h_now);
	render_overlay_free(&r->ov);
	free(r->cb);
	app_rank_splat_free(&r->gsplat);
	free(r);
}

static int cpu_hdr(struct renderer *base, int f, const float **rgb, int *w, int *h)
{
	struct renderer_cpu *r = (struct renderer_cpu *)base;
	if (r->frame != f) {
		log_error("CPU renderer: holds frame %d, expected %d (internal)", r->frame, f);
		return NB_ERUNTIME;
	}
	*rgb = r->img.rgb;
	*w = r->img.w;
	*h = r->img.h;
	return 0;
}

static const struct renderer_ops cpu_ops = {cpu_queue, cpu_push, cpu_release, cpu_free, cpu_hdr};

int renderer_cpu_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
			const struct sim_units *u, struct renderer **out)
{
	struct renderer_cpu *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r) {
		log_error("out of memory for a renderer");
		return NB_ERUNTIME;
	}
	*r = (struct renderer_cpu){.base = {&cpu_ops}, .sc = sc, .st = st, .eng = eng, .u = u,
				   .h_frame = -1, .frame = -1};
	size_t px = (size_t)sc->render.width * (size_t)sc->render.height * 3;
	if (render_image_alloc(&r->img, sc->render.width, sc->render.height))
		goto fail;
	if (!(r->rgb16 = malloc(px * sizeof *r->rgb16))) {
		log_error("out of memory for a %dx%d frame", sc->render.width, sc->render.height);
		goto fail;
	}
	int stars = sc->render.style == SCENE_STYLE_STARS, diffuse = stars && sc->render.diffuse > 0;
	int ew, eh; /* an eye's picture: the frame, or its half with camera.stereo */
	render_eye_size(sc, &ew, &eh);
	if (sc->camera.stereo.mode != SCENE_STEREO_NONE && render_image_alloc(&r->eye, ew, eh))
		goto fail;
	if (diffuse && render_image_alloc(&r->smooth, ew, eh))
		goto fail;
	if (stars && render_dust_present(st) &&
	    render_dust_alloc(&r->dust, sc->render.dust_slabs, ew, eh, st->n))
		goto fail;
	if (r->dust.K && engine_split_h_moves(eng)) { /* bodies move between ranks: domains */
		r->dust.bounds = cpu_dust_bounds;
		r->dust.sum = cpu_dust_sum;
		r->dust.ctx = r;
	}
	if (render_needs_h(sc) && cpu_h_room(r, st->n ? st->n : 1))
		goto fail;
	const struct render_color_by *use; /* = r->cb, made here when color_by needs it */
	int rc = render_color_by_resolve(sc, st, u, NULL, &use, &r->cb);
	if (rc == 0 && engine_split_gpu(eng)) /* every rank: a collective call */
		rc = app_rank_splat_create(sc, st, u, ew, eh, &r->gsplat);
	if (rc) {
		cpu_free(&r->base);
		return rc;
	}
	*out = &r->base;
	return 0;
fail:
	cpu_free(&r->base);
	return NB_ERUNTIME;
}
