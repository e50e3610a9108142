/* render.cu - the GPU frame renderer's public side (render/cuda/gpu_render.h):
 * device buffers, the two streams, the pinned host ring, frame sequencing.
 *
 * Per frame, on gr->stream: [wait for the producer's event] -> adaptive h
 * (when due) -> splat (records ev_consumed once positions are read) ->
 * reference level, tone map and conversions into the slot's device buffer
 * (after that buffer's previous copy, ev_done[slot]) -> ev_planes[slot].
 * On gr->copy_stream: wait ev_planes[slot] -> cudaMemcpyAsync into the
 * slot's pinned host buffer -> ev_done[slot]. So the copy of frame i
 * overlaps the splat of frame i+1, and the caller's simulation stream can
 * run as soon as ev_consumed has fired.
 *
 * Timing events (ev_t, ev_c) are recorded every frame; they cost a few
 * microseconds and give gpu_render_last_timing. */
#include "render_internal.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gpu_render_default_params(struct gpu_render_params *p)
{
	memset(p, 0, sizeof *p);
	p->outputs = GPU_RENDER_OUT_YUV420P;
	p->slots = 3;
	p->adaptive_every = 1;
	p->method = GPU_RENDER_TILED;
	p->chunk = 0;
}

int gr_temp_reserve(struct gpu_render *gr, size_t bytes)
{
	if (bytes <= gr->temp_bytes)
		return 0;
	cudaFree(gr->d_temp); /* implicit device synchronisation: rare (growth only) */
	gr->d_temp = NULL;
	gr->temp_bytes = 0;
	size_t want = bytes + bytes / 4;
	CUDA_CHECK(cudaMalloc(&gr->d_temp, want));
	gr->temp_bytes = want;
	return 0;
}

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
	const size_t C = sc->camera.projection == SCENE_PROJ_EQUIRECT ? 4 : 1;
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

static int gr_alloc_outputs(struct gpu_render *gr)
{
	size_t npix = (size_t)gr->fw * gr->fh, o = 0;
	if (gr->outputs & GPU_RENDER_OUT_YUV420P) {
		gr->off_y = o;
		o += npix;
		gr->off_u = o;
		o += npix / 4;
		gr->off_v = o;
		o += npix / 4;
	}
	o = (o + 15) & ~(size_t)15;
	if (gr->outputs & GPU_RENDER_OUT_RGB8) {
		gr->off_rgb8 = o;
		o += 3 * npix;
	}
	o = (o + 15) & ~(size_t)15;
	if (gr->outputs & GPU_RENDER_OUT_RGB16) {
		gr->off_rgb16 = o;
		o += 6 * npix;
	}
	gr->out_bytes = o;
	for (int s = 0; s < gr->nslots; s++) {
		CUDA_CHECK(cudaMalloc(&gr->d_out[s], o));
		CUDA_CHECK(cudaMallocHost(&gr->h_out[s], o));
		CUDA_CHECK(cudaEventCreateWithFlags(&gr->ev_planes[s], cudaEventDisableTiming));
		CUDA_CHECK(cudaEventCreateWithFlags(&gr->ev_done[s], cudaEventDisableTiming));
		gr->slot_frame[s] = -1;
	}
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
	gr->fw = sc->render.width;
	gr->fh = sc->render.height;
	render_eye_size(sc, &gr->w, &gr->h); /* the frame's when mono */
	gr->stereo = (int)sc->camera.stereo.mode;
	gr->projection = (int)sc->camera.projection;
	gr->nc = sc->camera.projection == SCENE_PROJ_EQUIRECT ? RENDER_PROJ_COPIES : 1;
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
		scene_units_of(sc->units, &gr->u);
	gr->kernel = sc->render.kernel;
	gr->mode = sc->render.mode;
	gr->cmap = sc->render.colormap;
	gr->tonemap = sc->render.tonemap;
	gr->exposure = sc->render.exposure;
	gr->exposure_keys = render_camera_has_exposure(sc);
	gr->exposure_auto = sc->render.exposure_auto && !gr->exposure_keys;
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
	gr->ntx = (gr->w + GR_TILE - 1) / GR_TILE;
	gr->nty = (gr->h + GR_TILE - 1) / GR_TILE;
	gr->ntiles = gr->ntx * gr->nty;
	gr->key_bits = 1;
	while ((1l << gr->key_bits) < gr->ntiles)
		gr->key_bits++;

	if ((rc = gr_color_by(gr, sc, st))) {
		gpu_render_free(&gr);
		return rc;
	}
	if (gr_create_streams(gr) || gr_upload_components(gr, sc, st) || gr_splat_alloc(gr) ||
	    gr_tone_alloc(gr, sc) || gr_glow_alloc(gr) || gr_alloc_outputs(gr) || gr_alloc_smooth(gr) ||
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
	for (int s = 0; s < gr->nslots; s++) {
		cudaFree(gr->d_out[s]);
		cudaFreeHost(gr->h_out[s]);
		if (gr->ev_planes[s])
			cudaEventDestroy(gr->ev_planes[s]);
		if (gr->ev_done[s])
			cudaEventDestroy(gr->ev_done[s]);
	}
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

int gpu_render_upload(struct gpu_render *gr, const struct sim_state *st, struct gpu_render_input *in)
{
	if (gr->ooc_chunk && st->n > gr->nmax) {
		log_error("GPU render: %zu bodies do not fit the out-of-core renderer's chunk of %zu: "
			  "draw them with gpu_render_frame_state (internal)", st->n, gr->nmax);
		return NB_EINPUT;
	}
	if (st->n > gr->nmax) {
		log_error("GPU render: %zu bodies, created for at most %zu", st->n, gr->nmax);
		return NB_EINPUT;
	}
	size_t n = gr->nmax ? gr->nmax : 1;
	if (!gr->d_upload) {
		CUDA_CHECK(cudaMalloc(&gr->d_upload, n * sizeof(float4)));
		CUDA_CHECK(cudaMallocHost(&gr->h_stage, n * sizeof(float4)));
	}
	const int vel = gr->color_by || gr->blur_samples > 1; /* the kernels read velocities */
	if (vel && !gr->d_upload_vel) {
		CUDA_CHECK(cudaMalloc(&gr->d_upload_vel, n * sizeof(float4)));
		CUDA_CHECK(cudaMallocHost(&gr->h_stage_vel, n * sizeof(float4)));
	}
	/* The staging buffer is free once the previous upload has landed. */
	CUDA_CHECK(cudaEventSynchronize(gr->ev_upload));
	for (size_t i = 0; i < st->n; i++)
		gr->h_stage[i] = make_float4((float)st->pos[3 * i], (float)st->pos[3 * i + 1],
					     (float)st->pos[3 * i + 2], (float)st->mass[i]);
	CUDA_CHECK(cudaMemcpyAsync(gr->d_upload, gr->h_stage, st->n * sizeof(float4),
				   cudaMemcpyHostToDevice, gr->stream));
	if (vel) {
		for (size_t i = 0; i < st->n; i++)
			gr->h_stage_vel[i] = make_float4((float)st->vel[3 * i], (float)st->vel[3 * i + 1],
							 (float)st->vel[3 * i + 2], 0.0f);
		CUDA_CHECK(cudaMemcpyAsync(gr->d_upload_vel, gr->h_stage_vel, st->n * sizeof(float4),
					   cudaMemcpyHostToDevice, gr->stream));
	}
	CUDA_CHECK(cudaEventRecord(gr->ev_upload, gr->stream));
	in->pos4 = gr->d_upload;
	in->vel4 = vel ? gr->d_upload_vel : NULL;
	in->id = NULL;
	in->n = st->n;
	in->ready_event = NULL;
	return 0;
}

void gr_view_of(const struct gpu_render *gr, const struct render_camera *cam, struct gr_view *g)
{
	struct render_view v;
	render_view_make(cam, gr->w, gr->h, &v);
	for (int k = 0; k < 3; k++) {
		g->pos[k] = v.pos[k];
		g->fwd[k] = v.fwd[k];
		g->right[k] = v.right[k];
		g->upv[k] = v.upv[k];
	}
	g->focal = v.focal_px;
	g->near = v.near;
	g->w = v.w;
	g->h = v.h;
	g->pj = v.pj;
}

/* camera.projection: fisheye: pixels whose centre lies beyond the circle
 * set to 0 (render_projection_mask's rule, render_proj_inside). One thread
 * per pixel: 2 int-to-double, ~6 flops, 12 bytes written outside. */
__global__ void gr_mask(float *hdr, struct render_proj p)
{
	const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= (size_t)p.w * p.h)
		return;
	const int i = (int)(k % (size_t)p.w), j = (int)(k / (size_t)p.w);
	if (!render_proj_inside(&p, i, j)) {
		hdr[3 * k + 0] = 0.0f;
		hdr[3 * k + 1] = 0.0f;
		hdr[3 * k + 2] = 0.0f;
	}
}

/* The look after the splat on d_pic (one eye's picture, or the frame's):
 * wing, glow, fisheye mask. */
int gr_eye_finish(struct gpu_render *gr)
{
	if (gr_wing(gr) != 0 || gr_glow(gr) != 0)
		return NB_ERUNTIME;
	if (gr->projection == SCENE_PROJ_FISHEYE) {
		struct render_proj p;
		memset(&p, 0, sizeof p);
		p.kind = RENDER_PROJ_FISHEYE;
		p.w = gr->w;
		p.h = gr->h;
		gr_mask<<<gr_blocks((size_t)gr->w * gr->h), GR_THREADS, 0, gr->stream>>>(gr->d_pic, p);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* Where eye's picture is drawn (gr->d_pic). Top-bottom: straight into its
 * half of d_frame (top for the left eye, -1), whose w*h*3 floats are
 * contiguous; the scratch (level-of-detail grids, pyramids, layers) stays
 * in buffers of its own. Side-by-side and mono: d_hdr (a half of a
 * side-by-side frame is strided: gr_eye_store copies it in). */
static float *gr_eye_picture(const struct gpu_render *gr, int eye)
{
	if (gr->stereo == SCENE_STEREO_TOP_BOTTOM)
		return gr->d_frame + (eye > 0 ? (size_t)gr->w * gr->h * 3 : 0);
	return gr->d_hdr;
}

/* Stereo: copy d_hdr (eye -1 left, +1 right) into its half of d_frame
 * (side-by-side: left half for the left eye; top-bottom: top). In-core
 * top-bottom eyes are drawn in place (gr_eye_picture) and skip it; the
 * out-of-core path (render_ooc.cu) draws into d_hdr and stores. */
int gr_eye_store(struct gpu_render *gr, int eye)
{
	const int x0 = eye > 0 && gr->stereo == SCENE_STEREO_SIDE_BY_SIDE ? gr->w : 0;
	const int y0 = eye > 0 && gr->stereo == SCENE_STEREO_TOP_BOTTOM ? gr->h : 0;
	const size_t row = 3 * (size_t)gr->w * sizeof(float);
	CUDA_CHECK(cudaMemcpy2DAsync(gr->d_frame + 3 * ((size_t)y0 * gr->fw + x0),
				     3 * (size_t)gr->fw * sizeof(float), gr->d_hdr, row, row, gr->h,
				     cudaMemcpyDeviceToDevice, gr->stream));
	return 0;
}

/* Glow (render.glow), tone map + conversions of d_hdr into slot, then its
 * copy to the host. */
int gr_finish(struct gpu_render *gr, int frame, int slot)
{
	if (!gr->stereo && gr_eye_finish(gr) != 0) /* stereo: done per eye */
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_x[1], gr->stream));
	if (gr_tone(gr, slot) != 0) /* records ev_x[2] after the auto exposure */
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_t[3], gr->stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_planes[slot], gr->stream));
	CUDA_CHECK(cudaStreamWaitEvent(gr->copy_stream, gr->ev_planes[slot], 0));
	CUDA_CHECK(cudaEventRecord(gr->ev_c[0], gr->copy_stream));
	CUDA_CHECK(cudaMemcpyAsync(gr->h_out[slot], gr->d_out[slot], gr->out_bytes,
				   cudaMemcpyDeviceToHost, gr->copy_stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_c[1], gr->copy_stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_done[slot], gr->copy_stream));
	gr->slot_frame[slot] = frame;
	gr->timed = 1;
	return 0;
}

int gr_check_slot(const struct gpu_render *gr, int slot)
{
	if (slot < 0 || slot >= gr->nslots) {
		log_error("GPU render: slot %d out of range [0, %d)", slot, gr->nslots);
		return NB_EINPUT;
	}
	return 0;
}

/* render.diffuse: the smooth layer, just splat into d_hdr, moves to
 * d_smooth (unless the stars go elsewhere: top-bottom stereo); the stars
 * are drawn into d_pic; then every value becomes, in
 * double as render_stars_diffuse (render/diffuse.c), stars * a + smooth * b.
 * Cost per pixel: one copy and one pass of 2 float loads, 1 store. */
__global__ void gr_diffuse_mix(float *hdr, const float *smooth, size_t nv, double a, double b)
{
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nv)
		hdr[i] = (float)__dadd_rn(__dmul_rn((double)hdr[i], a),
					  __dmul_rn((double)smooth[i], b));
}

static int gr_diffuse_stars(struct gpu_render *gr, const struct gpu_render_input *in,
			    const struct gr_view *v)
{
	const size_t nv = (size_t)gr->w * gr->h * 3;
	const float *smooth = gr->d_hdr; /* stays there when the stars go elsewhere */
	if (gr->d_pic == gr->d_hdr) {
		CUDA_CHECK(cudaMemcpyAsync(gr->d_smooth, gr->d_hdr, nv * sizeof(float),
					   cudaMemcpyDeviceToDevice, gr->stream));
		smooth = gr->d_smooth;
	}
	if (gr_stars(gr, in, v) != 0)
		return NB_ERUNTIME;
	const double d = gr->diffuse;
	gr_diffuse_mix<<<gr_blocks(nv), GR_THREADS, 0, gr->stream>>>(gr->d_pic, smooth, nv,
								      1.0 / (1.0 + d), d / (1.0 + d));
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

/* One picture (the frame's, or one stereo eye's) of in through cam into
 * d_pic, up to and without the wing and glow: adaptive h when due, the
 * splat, the diffuse layer. */
static int gr_picture(struct gpu_render *gr, const struct gpu_render_input *in, int frame,
		      const struct render_camera *cam)
{
	cudaStream_t st = gr->stream;
	if (cam->projection != gr->projection) {
		log_error("GPU render: the camera's projection (%d) is not the scene's (%d) "
			  "(internal)", cam->projection, gr->projection);
		return NB_EINPUT;
	}
	if (gr->stars && (!(gr->diffuse > 0) || gr->diffuse_screen) && !gr->dust_K) {
		struct gr_view v;
		gr_view_of(gr, cam, &v);
		CUDA_CHECK(cudaEventRecord(gr->ev_t[1], st));
		gr->last_pairs = 0;
		if (gr_stars(gr, in, &v) != 0)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaEventRecord(gr->ev_x[0], st));
		if (gr->diffuse_screen && gr_diffuse_screen(gr) != 0)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaEventRecord(gr->ev_t[2], st));
		return 0;
	}
	if (gr->adaptive && !gr->h_given &&
	    (!gr->h_valid || frame - gr->h_frame >= gr->adaptive_every || frame < gr->h_frame)) {
		if (gr_adaptive_h(gr, in) != 0 || gr_adaptive_cap(gr, in) != 0)
			return NB_ERUNTIME;
		gr->h_valid = 1;
		gr->h_frame = frame;
		gr->last_adaptive = 1;
	}
	CUDA_CHECK(cudaEventRecord(gr->ev_t[1], st));
	struct gr_view v;
	gr_view_of(gr, cam, &v);
	const float *d_h = (gr->h_given || (gr->adaptive && gr->h_valid)) ? gr->d_h : NULL;
	if (gr->dust_K) { /* dust: depth slabs (render_dust.cu), stars style only */
		if (gr_dust_frame(gr, in, &v, gr->diffuse > 0 && !gr->diffuse_screen ? d_h : NULL) != 0)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaEventRecord(gr->ev_x[0], st)); /* timing: slabs and composite as 'stars' */
		/* screen diffuse: the layer from the composited (visible) light */
		if (gr->diffuse_screen && gr_diffuse_screen(gr) != 0)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaEventRecord(gr->ev_t[2], st));
		return 0;
	}
	if (gr_splat(gr, in, &v, d_h) != 0)
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_x[0], st));
	if (gr->diffuse > 0) {
		if (gr_diffuse_stars(gr, in, &v) != 0)
			return NB_ERUNTIME;
	} else if (gr->d_pic != gr->d_hdr) { /* the splat's level of detail lives in d_hdr */
		CUDA_CHECK(cudaMemcpyAsync(gr->d_pic, gr->d_hdr,
					   (size_t)gr->w * gr->h * 3 * sizeof(float),
					   cudaMemcpyDeviceToDevice, st));
	}
	CUDA_CHECK(cudaEventRecord(gr->ev_t[2], st));
	return 0;
}

/* Mono: the picture, then gr_finish. Stereo (camera.stereo): each eye's
 * picture in turn (render_eye_camera: left, then right), each through the
 * wing, glow and mask on its own: top-bottom drawn in place in its half of
 * d_frame, side-by-side in d_hdr and then copied into its half;
 * gr_finish then tone maps d_frame as one frame. The bodies' own copy of
 * the stars splat is made once for both eyes. The stage timings
 * (gpu_render_last_timing) are then the right eye's; total_ms is the
 * whole frame. */
int gpu_render_frame(struct gpu_render *gr, const struct gpu_render_input *in, int frame,
		     const struct render_camera *cam, int slot)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	if (gr->ooc_chunk) {
		log_error("GPU render: an out-of-core renderer draws host bodies "
			  "(gpu_render_frame_host, gpu_render_frame_state) (internal)");
		return NB_EINPUT;
	}
	if (in->n > gr->nmax) {
		log_error("GPU render: %zu bodies, created for at most %zu", in->n, gr->nmax);
		return NB_EINPUT;
	}
	if (gr->color_by && !in->vel4) {
		log_error("GPU render: render.color_by needs the bodies' velocities (internal)");
		return NB_EINPUT;
	}
	if (gr->blur_samples > 1 && !in->vel4) {
		log_error("GPU render: render.motion_blur needs the bodies' velocities (internal)");
		return NB_EINPUT;
	}
	cudaStream_t st = gr->stream;
	if (in->ready_event)
		CUDA_CHECK(cudaStreamWaitEvent(st, (cudaEvent_t)in->ready_event, 0));
	CUDA_CHECK(cudaEventRecord(gr->ev_t[0], st));
	gr->last_adaptive = 0;
	gr->own_ready = 0; /* this frame's bodies are not copied yet */
	gr->d_pic = gr->d_hdr; /* every entry sets it: an error may have left an eye's */
	if (!gr->stereo) {
		int rc = gr_picture(gr, in, frame, cam);
		return rc ? rc : gr_finish(gr, frame, slot);
	}
	for (int eye = -1; eye <= 1; eye += 2) {
		struct render_camera ec;
		render_eye_camera(cam, eye, &ec);
		gr->d_pic = gr_eye_picture(gr, eye);
		int rc = gr_picture(gr, in, frame, &ec);
		if (rc)
			return rc;
		if (gr_eye_finish(gr) != 0 || (gr->d_pic == gr->d_hdr && gr_eye_store(gr, eye) != 0))
			return NB_ERUNTIME;
	}
	gr->d_pic = gr->d_hdr;
	return gr_finish(gr, frame, slot);
}

void *gpu_render_consumed_event(struct gpu_render *gr)
{
	return (void *)gr->ev_consumed;
}

int gpu_render_wait(struct gpu_render *gr, int slot)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	CUDA_CHECK(cudaEventSynchronize(gr->ev_done[slot]));
	return 0;
}

int gpu_render_query(struct gpu_render *gr, int slot)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	cudaError_t e = cudaEventQuery(gr->ev_done[slot]);
	if (e == cudaErrorNotReady)
		return 0;
	CUDA_CHECK(e);
	return 1;
}

int gpu_render_host_frame(const struct gpu_render *gr, int slot, struct gpu_render_host_frame *f)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	const uint8_t *b = gr->h_out[slot];
	memset(f, 0, sizeof *f);
	f->frame = gr->slot_frame[slot];
	f->w = gr->fw;
	f->h = gr->fh;
	if (gr->outputs & GPU_RENDER_OUT_YUV420P) {
		f->y = b + gr->off_y;
		f->u = b + gr->off_u;
		f->v = b + gr->off_v;
	}
	if (gr->outputs & GPU_RENDER_OUT_RGB8)
		f->rgb8 = b + gr->off_rgb8;
	if (gr->outputs & GPU_RENDER_OUT_RGB16)
		f->rgb16 = (const uint16_t *)(b + gr->off_rgb16);
	return 0;
}

int gpu_render_last_timing(struct gpu_render *gr, struct gpu_render_timing *t)
{
	memset(t, 0, sizeof *t);
	if (!gr->timed)
		return 0;
	CUDA_CHECK(cudaEventSynchronize(gr->ev_c[1]));
	float ms[5], mx[4];
	CUDA_CHECK(cudaEventElapsedTime(&ms[0], gr->ev_t[0], gr->ev_t[1]));
	CUDA_CHECK(cudaEventElapsedTime(&ms[1], gr->ev_t[1], gr->ev_t[2]));
	CUDA_CHECK(cudaEventElapsedTime(&ms[2], gr->ev_t[2], gr->ev_t[3]));
	CUDA_CHECK(cudaEventElapsedTime(&ms[3], gr->ev_c[0], gr->ev_c[1]));
	CUDA_CHECK(cudaEventElapsedTime(&ms[4], gr->ev_t[0], gr->ev_c[1]));
	CUDA_CHECK(cudaEventElapsedTime(&mx[0], gr->ev_t[1], gr->ev_x[0]));
	CUDA_CHECK(cudaEventElapsedTime(&mx[1], gr->ev_x[0], gr->ev_t[2]));
	CUDA_CHECK(cudaEventElapsedTime(&mx[2], gr->ev_t[2], gr->ev_x[1]));
	CUDA_CHECK(cudaEventElapsedTime(&mx[3], gr->ev_x[3], gr->ev_x[2]));
	t->adaptive_ms = ms[0];
	t->splat_ms = ms[1];
	t->tonemap_ms = ms[2];
	t->copy_ms = ms[3];
	t->total_ms = ms[4];
	t->stars_ms = mx[0];
	t->diffuse_ms = mx[1];
	t->glow_ms = mx[2];
	t->exposure_ms = mx[3];
	t->tone_only_ms = ms[2] - mx[2] - mx[3];
	t->pairs = gr->last_pairs;
	t->adaptive_done = gr->last_adaptive;
	return 0;
}

void gpu_render_set_method(struct gpu_render *gr, enum gpu_render_method m)
{
	gr->method = m;
}

void gpu_render_set_exposure(struct gpu_render *gr, double e)
{
	if (e > 0)
		gr->exposure = e;
}

int gpu_render_set_smoothing(struct gpu_render *gr, const float *h_by_id, size_t n)
{
	if (n > gr->nmax) {
		log_error("GPU render: %zu smoothing lengths, created for at most %zu bodies", n, gr->nmax);
		return NB_EINPUT;
	}
	if (!gr->d_h) {
		log_error("GPU render: per-body smoothing lengths cannot be drawn out of core");
		return NB_EINPUT;
	}
	CUDA_CHECK(cudaStreamSynchronize(gr->stream));
	CUDA_CHECK(cudaMemcpy(gr->d_h, h_by_id, n * sizeof(float), cudaMemcpyHostToDevice));
	gr->h_given = 1;
	return 0;
}

int gpu_render_download_hdr(struct gpu_render *gr, float *rgb)
{
	CUDA_CHECK(cudaStreamSynchronize(gr->stream));
	const float *src = gr->d_frame ? gr->d_frame : gr->d_hdr; /* the frame */
	CUDA_CHECK(cudaMemcpy(rgb, src, (size_t)gr->fw * gr->fh * 3 * sizeof(float),
			      cudaMemcpyDeviceToHost));
	return 0;
}

int gpu_render_tonemap_hdr(struct gpu_render *gr, const float *rgb, int frame, int slot)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	CUDA_CHECK(cudaStreamSynchronize(gr->stream));
	gr->d_pic = gr->d_hdr; /* every entry sets it: an error may have left an eye's */
	if (gr->stereo) { /* each half as an eye: wing, glow, mask, in its place in the frame */
		const size_t row = 3 * (size_t)gr->w * sizeof(float);
		for (int eye = -1; eye <= 1; eye += 2) {
			const int x0 = eye > 0 && gr->stereo == SCENE_STEREO_SIDE_BY_SIDE ? gr->w : 0;
			const int y0 = eye > 0 && gr->stereo == SCENE_STEREO_TOP_BOTTOM ? gr->h : 0;
			gr->d_pic = gr_eye_picture(gr, eye);
			/* on the stream: after the previous eye's finish (side-by-side:
			 * the same d_hdr) */
			CUDA_CHECK(cudaMemcpy2DAsync(gr->d_pic, row,
						     rgb + 3 * ((size_t)y0 * gr->fw + x0),
						     3 * (size_t)gr->fw * sizeof(float), row, gr->h,
						     cudaMemcpyHostToDevice, gr->stream));
			if (gr_eye_finish(gr) != 0 ||
			    (gr->d_pic == gr->d_hdr && gr_eye_store(gr, eye) != 0))
				return NB_ERUNTIME;
		}
		gr->d_pic = gr->d_hdr;
	} else {
		CUDA_CHECK(cudaMemcpy(gr->d_hdr, rgb, (size_t)gr->w * gr->h * 3 * sizeof(float),
				      cudaMemcpyHostToDevice));
	}
	CUDA_CHECK(cudaEventRecord(gr->ev_t[0], gr->stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_t[1], gr->stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_x[0], gr->stream));
	CUDA_CHECK(cudaEventRecord(gr->ev_t[2], gr->stream));
	return gr_finish(gr, frame, slot);
}

int gpu_render_auto_exposure(struct gpu_render *gr, struct render_auto_state *st)
{
	CUDA_CHECK(cudaStreamSynchronize(gr->stream));
	CUDA_CHECK(cudaMemcpy(st, gr->d_auto, sizeof *st, cudaMemcpyDeviceToHost));
	return 0;
}

int gpu_render_download_h(struct gpu_render *gr, float *h_by_id, size_t n)
{
	if (n > gr->nmax) {
		log_error("GPU render: %zu smoothing lengths asked, %zu bodies", n, gr->nmax);
		return NB_EINPUT;
	}
	if (!gr->d_h) {
		log_error("GPU render: no smoothing lengths out of core");
		return NB_EINPUT;
	}
	CUDA_CHECK(cudaStreamSynchronize(gr->stream));
	CUDA_CHECK(cudaMemcpy(h_by_id, gr->d_h, n * sizeof(float), cudaMemcpyDeviceToHost));
	return 0;
}
