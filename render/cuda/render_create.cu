/* render_create.cu - a GPU renderer made and freed (render/cuda/gpu_render.h):
 * the parameters checked, the scene's render keys read once into struct
 * gpu_render, then every stage's buffers, the two streams and the output
 * slots allocated, each by the file that uses them (its *_alloc), and
 * freed in one place (gpu_render_free). The top of render/cuda's call
 * tree beside the frame drivers (render.cu, render_ooc.cu): nothing there
 * calls back into it.
 * CPU twin: app/renderer_cpu.c (the CPU renderer's state, made from the
 * same scene). */
#include "render_internal.cuh"

#include <stdlib.h>
#include <string.h>

static int gr_check_params(const struct scene *sc, const struct sim_state *st,
			   const struct gpu_render_params *p)
{
	const int known = GPU_RENDER_OUT_YUV420P | GPU_RENDER_OUT_RGB8 | GPU_RENDER_OUT_RGB16;
	if (!p->outputs || (p->outputs & ~known)) {
		log_error("GPU render: outputs must be a nonzero GPU_RENDER_OUT_* mask, got %d", p->outputs);
		return NB_EINPUT;
	}
	if (p->slots < 1 || p->slots > GR_MAX_SLOTS) {
		log_error("GPU render: slots must be in [1, %d], got %d", GR_MAX_SLOTS, p->slots);
		return NB_EINPUT;
	}
	if (p->adaptive_every < 1) {
		log_error("GPU render: adaptive_every must be >= 1, got %d", p->adaptive_every);
		return NB_EINPUT;
	}
	int w = sc->render.width, h = sc->render.height;
	if (w < 1 || h < 1 || ((p->outputs & GPU_RENDER_OUT_YUV420P) && (w % 2 || h % 2))) {
		log_error("render.width x render.height: YUV420P output needs even sizes >= 2, got %dx%d",
			  w, h);
		return NB_EINPUT;
	}
	/* the bodies on the device at once: all of them, or a chunk */
	const size_t n = p->chunk ? p->chunk : st->n;
	if (n > (size_t)INT32_MAX) {
		log_error("GPU render: %zu bodies is more than it supports (%d)", n, INT32_MAX);
		return NB_EINPUT;
	}
	/* the stars splat keys every footprint copy of every blur sample (int) */
	const size_t S = (size_t)render_blur_samples(sc);
	const size_t C = render_projection_of(sc->camera.projection)->wrap ? RENDER_PROJ_COPIES : 1;
	if (n > (size_t)INT32_MAX / (S * C)) {
		log_error("GPU render: %zu bodies x render.motion_blur.samples %zu x %zu footprint "
			  "copies (equirectangular: 4) is more than it supports (%d)", n, S, C,
			  INT32_MAX);
		return NB_EINPUT;
	}
	return p->chunk ? gr_ooc_check(sc, st) : 0;
}

/* Device copies of the component of each body id and the colours. */
static int gr_upload_components(struct gpu_render *gr, const struct scene *sc,
				const struct sim_state *st)
{
	size_t n = gr->nmax ? gr->nmax : 1;
	CUDA_CHECK(cudaMalloc(&gr->d_comp, n * sizeof(uint16_t)));
	if (st->comp && st->n && !gr->ooc_chunk) /* out of core: zeros, each chunk brings its own */
		CUDA_CHECK(cudaMemcpy(gr->d_comp, st->comp, st->n * sizeof(uint16_t),
				      cudaMemcpyHostToDevice));
	else
		CUDA_CHECK(cudaMemset(gr->d_comp, 0, n * sizeof(uint16_t)));
	gr->ncomp = st->comps ? st->ncomp : 0;
	size_t nc = gr->ncomp > 0 ? (size_t)gr->ncomp : 1;
	float *col = (float *)calloc(3 * nc, sizeof(float));
	if (!col) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	for (int c = 0; c < gr->ncomp; c++)
		render_body_light(sc, &st->comps[c], col + 3 * c);
	cudaError_t e = cudaMalloc(&gr->d_colors, 3 * nc * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMemcpy(gr->d_colors, col, 3 * nc * sizeof(float), cudaMemcpyHostToDevice);
	free(col);
	CUDA_CHECK(e);
	if (!gr->ooc_chunk) /* out of core: no per-id h (adaptive refused, gr_ooc_check) */
		CUDA_CHECK(cudaMalloc(&gr->d_h, n * sizeof(float)));
	return 0;
}

/* render.color_by: its range and colour table, made on the host from st
 * as the CPU renderer makes them (render_color_by_init). */
static int gr_color_by(struct gpu_render *gr, const struct scene *sc, const struct sim_state *st)
{
	gr->color_by = sc->render.mode == SCENE_COLOR_DENSITY ? 0 : (int)sc->render.color_by;
	if (gr->color_by == SCENE_COLOR_BY_COMPONENT)
		return 0;
	struct render_color_by *cb = (struct render_color_by *)malloc(sizeof *cb);
	if (!cb) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	int rc = render_color_by_init(sc, st, &gr->u, cb);
	if (rc) {
		free(cb);
		return rc;
	}
	gr->cb_lo = cb->lo;
	gr->cb_hi = cb->hi;
	const size_t bytes = sizeof cb->lut;
	cudaError_t e = cudaMalloc(&gr->d_cblut, bytes);
	if (e == cudaSuccess)
		e = cudaMemcpy(gr->d_cblut, cb->lut, bytes, cudaMemcpyHostToDevice);
	free(cb);
	CUDA_CHECK(e);
	return 0;
}

/* render.diffuse's smooth layer, w*h*3 floats, only when it is on; with
 * stereo the frame's HDR (both eyes), fw*fh*3. */
static int gr_alloc_smooth(struct gpu_render *gr)
{
	if (gr->diffuse > 0)
		CUDA_CHECK(cudaMalloc(&gr->d_smooth, (size_t)gr->w * gr->h * 3 * sizeof(float)));
	if (gr->stereo)
		CUDA_CHECK(cudaMalloc(&gr->d_frame, (size_t)gr->fw * gr->fh * 3 * sizeof(float)));
	return 0;
}

static int gr_create_streams(struct gpu_render *gr)
{
	int prio_low = 0, prio_high = 0; /* lowest: see gpu_stream_priorities */
	if (gpu_stream_priorities(&prio_low, &prio_high))
		prio_low = 0;
	CUDA_CHECK(cudaStreamCreateWithPriority(&gr->stream, cudaStreamNonBlocking, prio_low));
	CUDA_CHECK(cudaStreamCreateWithPriority(&gr->copy_stream, cudaStreamNonBlocking, prio_low));
	CUDA_CHECK(cudaEventCreateWithFlags(&gr->ev_consumed, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&gr->ev_pairs, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&gr->ev_upload, cudaEventDisableTiming));
	for (int k = 0; k < 4; k++)
		CUDA_CHECK(cudaEventCreate(&gr->ev_t[k]));
	for (int k = 0; k < 2; k++)
		CUDA_CHECK(cudaEventCreate(&gr->ev_c[k]));
	for (int k = 0; k < 4; k++)
		CUDA_CHECK(cudaEventCreate(&gr->ev_x[k]));
	return 0;
}

/* The frame's sizes, p's choices and the units (u, or sc's), and the
 * tiles of the eye's picture. */
static void gr_config_frame(struct gpu_render *gr, const struct scene *sc,
			    const struct sim_state *st, const struct sim_units *u,
			    const struct gpu_render_params *p)
{
	gr->fw = sc->render.width;
	gr->fh = sc->render.height;
	render_eye_size(sc, &gr->w, &gr->h); /* the frame's when mono */
	gr->stereo = (int)sc->camera.stereo.mode;
	gr->projection = (int)sc->camera.projection;
	gr->nc = render_projection_of(sc->camera.projection)->wrap ? RENDER_PROJ_COPIES : 1;
	gr->outputs = p->outputs;
	gr->nslots = p->slots;
	gr->adaptive_every = p->adaptive_every;
	gr->method = p->method;
	gr->nmax = p->chunk ? p->chunk : st->n;
	gr->ooc_chunk = p->chunk;
	gr->ntotal = st->n;
	if (u)
		gr->u = *u;
	else
		scene_units(sc, &gr->u);
	gr->ntx = (gr->w + GR_TILE - 1) / GR_TILE;
	gr->nty = (gr->h + GR_TILE - 1) / GR_TILE;
	gr->ntiles = gr->ntx * gr->nty;
	gr->key_bits = 1;
	while ((1l << gr->key_bits) < gr->ntiles)
		gr->key_bits++;
}

/* The scene's look (render.*) as the stages read it; after gr_config_frame
 * (the blur span reads the units). */
static void gr_config_look(struct gpu_render *gr, const struct scene *sc)
{
	gr->kernel = sc->render.kernel;
	gr->mode = sc->render.mode;
	gr->cmap = sc->render.colormap;
	gr->tonemap = sc->render.tonemap;
	gr->exposure = sc->render.exposure;
	gr->exposure_auto = render_exposure_mode(sc) == RENDER_EXPOSURE_AUTO; /* render/exposure.c */
	gr->glow_exposure = render_exposure_fixed(sc);
	gr->white = sc->render.white;
	gr->glow = sc->render.glow;
	gr->glow_threshold = sc->render.glow_threshold;
	gr->wing = sc->render.psf_wing;
	gr->wing_beta = sc->render.psf_wing_beta;
	gr->auto_percentile = sc->render.auto_percentile;
	gr->auto_target = render_auto_target(sc);
	gr->auto_alpha = render_auto_alpha(sc);
	gr->gamma = sc->render.gamma;
	gr->smoothing = sc->render.smoothing;
	for (int c = 0; c < 3; c++) {
		float b = sc->render.background[c];
		gr->bg[c] = b > 0 ? (b < 1 ? b : 1) : 0;
	}
	gr->stars = sc->render.style == SCENE_STYLE_STARS;
	gr->psf_sigma = render_stars_sigma(sc->render.psf_fwhm);
	gr->psf_radius = render_stars_radius(gr->psf_sigma);
	gr->blur_samples = render_blur_samples(sc);
	gr->blur_span = render_blur_span(sc, &gr->u);
	gr->h_cap = sc->render.h_cap;
	gr->diffuse = gr->stars && sc->render.diffuse > 0 ? sc->render.diffuse : 0.0;
	gr->diffuse_screen = gr->diffuse > 0 && sc->render.diffuse_smoothing == SCENE_DIFFUSE_SCREEN;
	/* stars: no h at all, unless for the adaptive diffuse layer */
	gr->adaptive = (sc->render.smoothing_adaptive && !gr->stars) ||
		       (gr->diffuse > 0 && !gr->diffuse_screen);
	gr->neighbours = sc->render.neighbours;
}

int gpu_render_create(const struct scene *sc, const struct sim_state *st,
		      const struct sim_units *u, const struct gpu_render_params *p,
		      struct gpu_render **out)
{
	*out = NULL;
	int rc = gr_check_params(sc, st, p);
	if (rc)
		return rc;
	struct gpu_render *gr = (struct gpu_render *)calloc(1, sizeof *gr);
	if (!gr) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	gr_config_frame(gr, sc, st, u, p);
	gr_config_look(gr, sc);
	if ((rc = gr_color_by(gr, sc, st))) {
		gpu_render_free(&gr);
		return rc;
	}
	if (gr_create_streams(gr) || gr_upload_components(gr, sc, st) || gr_splat_alloc(gr) ||
	    gr_tone_alloc(gr, sc) || gr_glow_alloc(gr) || gr_slots_alloc(gr) || gr_alloc_smooth(gr) ||
	    gr_diffuse_alloc(gr) || gr_dust_alloc(gr, sc, st) || (gr->ooc_chunk && gr_ooc_alloc(gr))) {
		gpu_render_free(&gr);
		return NB_ERUNTIME;
	}
	gr->d_pic = gr->d_hdr;
	*out = gr;
	return 0;
}

void gpu_render_free(struct gpu_render **grp)
{
	struct gpu_render *gr = grp ? *grp : NULL;
	if (!gr)
		return;
	if (gr->stream)
		cudaStreamSynchronize(gr->stream);
	if (gr->copy_stream)
		cudaStreamSynchronize(gr->copy_stream);
	gr_adaptive_free(gr);
	gr_splat_free(gr);
	gr_tone_free(gr);
	gr_glow_free(gr);
	gr_overlay_free(gr);
	gr_diffuse_free(gr);
	gr_dust_free(gr);
	gr_stars_free(gr);
	gr_ooc_free(gr);
	gr_slots_free(gr);
	cudaFree(gr->d_comp);
	cudaFree(gr->d_colors);
	cudaFree(gr->d_h);
	cudaFree(gr->d_smooth);
	cudaFree(gr->d_frame);
	cudaFree(gr->d_upload);
	cudaFreeHost(gr->h_stage);
	cudaFree(gr->d_upload_vel);
	cudaFreeHost(gr->h_stage_vel);
	cudaFree(gr->d_cblut);
	cudaFree(gr->d_temp);
	cudaEvent_t evs[] = {gr->ev_consumed, gr->ev_pairs, gr->ev_upload, gr->ev_t[0], gr->ev_t[1],
			     gr->ev_t[2], gr->ev_t[3], gr->ev_c[0], gr->ev_c[1],
			     gr->ev_x[0], gr->ev_x[1], gr->ev_x[2], gr->ev_x[3]};
	for (size_t k = 0; k < sizeof evs / sizeof evs[0]; k++)
		if (evs[k])
			cudaEventDestroy(evs[k]);
	if (gr->stream)
		cudaStreamDestroy(gr->stream);
	if (gr->copy_stream)
		cudaStreamDestroy(gr->copy_stream);
	free(gr);
	*grp = NULL;
}
