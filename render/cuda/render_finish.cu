/* render_finish.cu - the end of a GPU frame and the ring of output slots
 * (render/cuda/gpu_render.h): the look after the splat on one picture
 * (wing, glow, fisheye mask), a stereo eye's place in the frame, the tone
 * map into a slot's device buffer and its copy to the slot's pinned host
 * buffer on the copy stream; the slots' buffers and events, and the
 * caller's wait, query and view of a finished slot. Called by both frame
 * drivers, render.cu (bodies on the device) and render_ooc.cu (host
 * bodies in chunks).
 * CPU twin: render/stereo.c (the eyes' places, the fisheye mask); the tone
 * map's is render/tonemap.c (render_tone.cu). */
#include "render_internal.cuh"

#include <string.h>

int gr_slots_alloc(struct gpu_render *gr)
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

void gr_slots_free(struct gpu_render *gr)
{
	for (int s = 0; s < gr->nslots; s++) {
		cudaFree(gr->d_out[s]);
		cudaFreeHost(gr->h_out[s]);
		if (gr->ev_planes[s])
			cudaEventDestroy(gr->ev_planes[s]);
		if (gr->ev_done[s])
			cudaEventDestroy(gr->ev_done[s]);
	}
}

int gr_check_slot(const struct gpu_render *gr, int slot)
{
	if (slot < 0 || slot >= gr->nslots) {
		log_error("GPU render: slot %d out of range [0, %d)", slot, gr->nslots);
		return NB_EINPUT;
	}
	return 0;
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
	if (render_projection_of(gr->projection)->circle) {
		struct render_proj p;
		memset(&p, 0, sizeof p);
		p.kind = gr->projection;
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
float *gr_eye_picture(const struct gpu_render *gr, int eye)
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
