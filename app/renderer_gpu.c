/* renderer_gpu.c - the GPU renderer (renderer.h): kernels/gpu_render.h on
 * the engine's device positions. Queueing frame f puts its splat, tone map
 * and YUV on the renderer's streams, writing into slot f % RENDERER_RING of
 * a ring of pinned host slots, and returns; pushing frame f waits for that
 * slot and hands the 8-bit planes (or 16-bit RGB for PNG frames) to the
 * writer, which copies them. The renderer waits once per frame for a
 * scalar (the splat pair count, kernels/render_splat.cu) inside
 * gpu_render_frame: the engine's next steps cannot start before the
 * positions are read anyway (renderer_release), so that costs one host
 * round trip per frame. The overlay (overlay.*) is rasterised here on the
 * host, per frame, and composited by the GPU's tone map
 * (gpu_render_overlay). */
#include <stdlib.h>

#include "../kernels/gpu.h"
#include "../kernels/gpu_render.h"
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
};

static int gpu_queue(struct renderer *base, int f, const struct render_camera *cam)
{
	struct renderer_gpu *r = (struct renderer_gpu *)base;
	struct gpu_render_input in;
	/* film mode: the engine is on the host; upload its state (synchronous
	 * staging: ~16 MB a frame at 1M bodies) */
	int rc = r->g ? gpu_sim_render_input(r->g, &in) : gpu_render_upload(r->gr, r->st, &in);
	double ek = render_camera_exposure(r->sc, f); /* exposure keys: 0 none */
	if (ek > 0)
		gpu_render_set_exposure(r->gr, ek);
	if (rc == 0 && render_overlay_on(r->sc) &&
	    ((rc = render_overlay_build(r->sc, cam, f, &r->ov)) == 0))
		rc = gpu_render_overlay(r->gr, &r->ov, f % RENDERER_RING);
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
	int rc = ok ? gpu_render_create(sc, st, u, &p, &r->gr) : NB_ERUNTIME;
	if (rc) {
		if (!ok)
			log_error("renderer_gpu_create: the frames are not drawn on the GPU (internal)");
		gpu_free(&r->base);
		return rc;
	}
	*out = &r->base;
	return 0;
}
