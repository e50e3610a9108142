/* renderer_gpu.c - the GPU renderer (renderer.h): render/cuda/gpu_render.h on
 * the engine's device positions. Queueing frame f puts its splat, tone map
 * and YUV on the renderer's streams, writing into slot f % RENDERER_RING of
 * a ring of pinned host slots, and returns; pushing frame f waits for that
 * slot and hands the 8-bit planes (or 16-bit RGB for PNG frames) to the
 * writer, which copies them. The renderer waits once per frame for a
 * scalar (the splat pair count, render/cuda/render_splat.cu) inside
 * gpu_render_frame: the engine's next steps cannot start before the
 * positions are read anyway (renderer_release), so that costs one host
 * round trip per frame. The overlay (overlay.*) is rasterised here on the
 * host, per frame, and composited by the GPU's tone map
 * (gpu_render_overlay).
 *
 * Film mode out of core (render.gpu_memory; docs/snapshots.md, "Bigger
 * than the GPU"): when the bodies need more device memory than the budget
 * (auto: the free memory less a tenth), the renderer is made with a chunk
 * (render_ooc_plan) and each frame streams the host bodies through it: a
 * still film from a page-locked float4 mirror packed once at the first
 * frame (each frame only copies), a moving one (a snapshot series) packed
 * from the double state chunk by chunk every frame (that packing is part
 * of the frame's cost). */
#include <stdlib.h>

#include "../sim/cuda/gpu.h"
#include "../render/cuda/gpu_render.h"
#include "app.h"
#include "renderer.h"

struct renderer_gpu {
	struct renderer base;
	struct gpu_sim *g;
	struct gpu_render *gr;
	const struct scene *sc;
	const struct sim_state *st; /* film mode (no engine on the GPU): uploaded each frame */
	struct render_overlay ov; /* overlay.*: rasterised here, composited on the GPU */
	float *hdr;               /* output.fits_dir: the last frame's HDR image, host copy */
	int w, h;
	int ooc;                  /* film mode out of core: frames drawn from host rows */
	int still;                /* ... of a still film (engine_film_still): from the mirror */
	struct gpu_render_host mirror; /* its page-locked rows, made at the first frame */
};

/* Film mode out of core: frame f from the mirror (made once; if the host
 * cannot page-lock it, from the state, packed each frame), or from the
 * state of a moving film. */
static int gpu_queue_ooc(struct renderer_gpu *r, int f, const struct render_camera *cam)
{
	const int slot = f % RENDERER_RING;
	if (r->still && !r->mirror.owned) {
		if (gpu_render_mirror(r->gr, r->st, &r->mirror) != 0) {
			log_warn("render: no page-locked copy of the bodies; packing them every frame");
			r->still = 0;
		}
	}
	if (r->still)
		return gpu_render_frame_host(r->gr, &r->mirror, f, cam, slot);
	return gpu_render_frame_state(r->gr, r->st, f, cam, slot);
}

static int gpu_queue(struct renderer *base, int f, const struct render_camera *cam)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	struct gpu_render_input in;
	/* film mode: the engine is on the host; upload its state (synchronous
	 * staging: ~16 MB a frame at 1M bodies), or out of core, in chunks */
	int rc = r->g ? gpu_sim_render_input(r->g, &in)
		 : r->ooc ? 0 : gpu_render_upload(r->gr, r->st, &in);
	if (render_exposure_mode(r->sc) == RENDER_EXPOSURE_KEYS) /* render/exposure.c */
		gpu_render_set_exposure(r->gr, render_exposure_at(r->sc, f));
	if (rc == 0 && render_overlay_on(r->sc) &&
	    ((rc = render_overlay_build(r->sc, cam, f, &r->ov)) == 0))
		rc = gpu_render_overlay(r->gr, &r->ov, f % RENDERER_RING);
	if (rc == 0 && r->ooc)
		return gpu_queue_ooc(r, f, cam);
	return rc ? rc : gpu_render_frame(r->gr, &in, f, cam, f % RENDERER_RING);
}

static int gpu_push(struct renderer *base, int f, struct out_writer *w, double *render_s)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	const int slot = f % RENDERER_RING;
	struct gpu_render_host_frame h;
	struct gpu_render_timing tm;
	int rc = gpu_render_wait(r->gr, slot);
	if (rc == 0)
		rc = gpu_render_host_frame(r->gr, slot, &h);
	if (rc == 0 && h.frame != f) {
		log_error("GPU render: slot %d holds frame %d, expected %d (internal)", slot, h.frame, f);
		rc = NB_ERUNTIME;
	}
	/* Frame f is the renderer's last one and its copy is done: no wait. */
	if (rc == 0 && (rc = gpu_render_last_timing(r->gr, &tm)) == 0)
		*render_s += tm.total_ms * 1e-3;
	if (rc == 0) {
		struct out_frame8 fr = {.index = f, .w = h.w, .h = h.h, .y = h.y, .u = h.u,
					.v = h.v, .rgb8 = h.rgb8, .rgb16 = h.rgb16};
		rc = out_writer_push8(w, &fr);
	}
	return rc;
}

static int gpu_release(struct renderer *base)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	if (!r->g) /* film mode: the renderer reads its own upload, not the engine's buffers */
		return 0;
	return gpu_sim_wait_event(r->g, gpu_render_consumed_event(r->gr));
}

static void gpu_free(struct renderer *base)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	gpu_render_free(&r->gr);
	gpu_render_mirror_free(&r->mirror);
	render_overlay_free(&r->ov);
	free(r->hdr);
	free(r);
}

/* output.fits_dir: the device HDR image of frame f, the last one pushed
 * (gpu_push waited for its slot; the next frame is not queued yet): one
 * synchronous download of w h 12 bytes (24 MB at 1080p), only when FITS
 * maps are asked for. */
static int gpu_hdr(struct renderer *base, int f, const float **rgb, int *w, int *h)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	(void)f;
	if (!r->hdr && !(r->hdr = malloc((size_t)r->w * (size_t)r->h * 3 * sizeof *r->hdr))) {
		log_error("out of memory for a %dx%d HDR image", r->w, r->h);
		return NB_ERUNTIME;
	}
	int rc = gpu_render_download_hdr(r->gr, r->hdr);
	*rgb = r->hdr;
	*w = r->w;
	*h = r->h;
	return rc;
}

static const struct renderer_ops gpu_ops = {gpu_queue, gpu_push, gpu_release, gpu_free, gpu_hdr};

/* The frames the view's outputs need, as planes the renderer makes. */
static int gpu_outputs(const struct scene *sc)
{
	int o = 0;
	if (sc->output.video[0])
		o |= GPU_RENDER_OUT_YUV420P;
	if (sc->output.png_dir[0])
		o |= sc->output.png_depth == 16 ? GPU_RENDER_OUT_RGB16 : GPU_RENDER_OUT_RGB8;
	if (sc->output.preview[0] && sc->output.preview_kind != SCENE_PREVIEW_NONE)
		o |= GPU_RENDER_OUT_RGB8;
	return o ? o : GPU_RENDER_OUT_RGB8; /* a writer with no output: keep it fed */
}

/* What cannot be drawn in chunks, named by its key (auto found that the
 * bodies do not fit; a size in render.gpu_memory was refused at load). */
static int gpu_ooc_refuse(const struct scene *sc, const struct sim_state *st)
{
	const char *why = "needs every body on the GPU at once; give fewer bodies (bodies.*.subsample, "
			  "bodies.*.region) or draw on the CPU (--backend cpu)";
	if (sc->render.style == SCENE_STYLE_SMOOTH && sc->render.smoothing_adaptive)
		return scene_fail_key(sc, "render.smoothing", -1, "the bodies do not fit on the GPU and "
				      "adaptive smoothing cannot be drawn out of core: its neighbour "
				      "search %s", why);
	if (sc->render.style == SCENE_STYLE_STARS && sc->render.diffuse > 0 &&
	    sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE)
		return scene_fail_key(sc, "render.diffuse_smoothing", -1, "the bodies do not fit on the "
				      "GPU and the adaptive diffuse layer cannot be drawn out of core: "
				      "its neighbour search %s", why);
	for (int c = 0; st->comps && c < st->ncomp; c++)
		if (st->comps[c].kappa > 0)
			return scene_fail_key(sc, "render.gpu_memory", -1, "the bodies do not fit on the "
					      "GPU and dust ('%s') cannot be drawn out of core: its "
					      "depth slabs %s", st->comps[c].name, why);
	return 0;
}

/* Film mode: in core when the bodies fit render.gpu_memory (auto: the free
 * device memory less a tenth), else p->chunk from render_ooc_plan. */
static int gpu_plan(const struct scene *sc, const struct sim_state *st, struct gpu_render_params *p)
{
	size_t fixed, per_body, max_chunk, budget, fr = 0, tot = 0;
	char name[128] = "GPU", need_s[32], budget_s[32];
	gpu_render_memory(sc, p, 0, &fixed, &per_body, &max_chunk);
	if (sc->render.gpu_memory_auto) {
		if (gpu_device_info(name, sizeof name, &fr, &tot) != 0)
			return NB_ERUNTIME;
		budget = fr - fr / 10;
	} else {
		budget = (size_t)sc->render.gpu_memory;
	}
	const double need = (double)fixed + (double)per_body * (double)st->n;
	if (need <= (double)budget)
		return 0;
	int rc = gpu_ooc_refuse(sc, st);
	if (rc)
		return rc;
	gpu_render_memory(sc, p, 1, &fixed, &per_body, &max_chunk);
	struct render_ooc_plan plan;
	if ((rc = render_ooc_plan(st->n, budget, fixed, per_body, max_chunk, &plan)) != 0)
		return rc;
	p->chunk = plan.chunk;
	app_human_bytes(need, need_s, sizeof need_s);
	app_human_bytes((double)budget, budget_s, sizeof budget_s);
	log_info("render: %zu bodies need about %s on the GPU, more than %s (render.gpu_memory%s): "
		 "drawing out of core, %zu chunks of %zu bodies a frame", st->n, need_s, budget_s,
		 sc->render.gpu_memory_auto ? ": auto, the free memory less a tenth" : "",
		 plan.nchunks, plan.chunk);
	return 0;
}

int renderer_gpu_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
			const struct sim_units *u, struct renderer **out)
{
	struct renderer_gpu *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r) {
		log_error("out of memory for a renderer");
		return NB_ERUNTIME;
	}
	r->base.ops = &gpu_ops;
	r->g = engine_gpu(eng);
	r->st = st;
	r->sc = sc;
	r->w = sc->render.width;
	r->h = sc->render.height;
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = gpu_outputs(sc);
	p.slots = RENDERER_RING;
	p.adaptive_every = sc->render.adaptive_every;
	const int ok = r->g || engine_draws_on_gpu(eng);
	int rc = ok && !r->g ? gpu_plan(sc, st, &p) : 0;
	r->ooc = p.chunk > 0;
	r->still = r->ooc && engine_film_still(eng);
	if (rc == 0)
		rc = ok ? gpu_render_create(sc, st, u, &p, &r->gr) : NB_ERUNTIME;
	if (rc) {
		if (!ok)
			log_error("renderer_gpu_create: the frames are not drawn on the GPU (internal)");
		gpu_free(&r->base);
		return rc;
	}
	*out = &r->base;
	return 0;
}
