/* render.cu - the GPU frame driver (render/cuda/gpu_render.h) for bodies on
 * the device: the upload of host bodies, the picture of a frame (adaptive
 * h, the splat the look picks, the diffuse layer), the stereo eyes, the
 * HDR read back and tone mapped again, the stage timings. The top of
 * render/cuda's call tree with render_create.cu (made, freed) and
 * render_ooc.cu (host bodies in chunks); it calls the stages and
 * render_finish.cu, and nothing calls back into it.
 * CPU twin: render/splat_style.c (the splat a scene's look picks; the
 * frame as a whole: app/renderer_cpu.c).
 *
 * Per frame, on gr->stream: [wait for the producer's event] -> adaptive h
 * (when due) -> splat (records ev_consumed once positions are read) ->
 * reference level, tone map and conversions into the slot's device buffer
 * (after that buffer's previous copy, ev_done[slot]) -> ev_planes[slot].
 * On gr->copy_stream: wait ev_planes[slot] -> cudaMemcpyAsync into the
 * slot's pinned host buffer -> ev_done[slot] (render_finish.cu). So the
 * copy of frame i overlaps the splat of frame i+1, and the caller's
 * simulation stream can run as soon as ev_consumed has fired.
 *
 * Timing events (ev_t, ev_c) are recorded every frame; they cost a few
 * microseconds and give gpu_render_last_timing. */
#include "render_internal.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
