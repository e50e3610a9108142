/* render_overlay.cu - the overlay (overlay.* keys) on the GPU: the CPU
 * rasterises a frame's text and scale bar into codes (render_overlay_build,
 * render/overlay.c: a few thousand bytes to ~100 KB at 4K, the time changes
 * every frame); gpu_render_overlay stages them in the slot's pinned buffer,
 * and the frame's tone map uploads them to gr->d_ov and composites them in
 * its fused kernel (render/cuda/render_tone.cu, render/overlay_shared.h), so no
 * pass of its own: per pixel, a test against at most 3 boxes, and one byte
 * read inside them. One device buffer suffices: each frame's upload is
 * queued on gr->stream after the previous frame's tone map.
 * CPU twin: render/overlay.c (render_overlay_apply). */
#include "render_internal.cuh"

#include <string.h>

int gpu_render_overlay(struct gpu_render *gr, const struct render_overlay *ov, int slot)
{
	if (slot < 0 || slot >= gr->nslots) {
		log_error("GPU render: slot %d out of range [0, %d)", slot, gr->nslots);
		return NB_EINPUT;
	}
	struct gr_overlay *m = &gr->ov_meta[slot];
	m->nbox = 0;
	gr->ov_ncode[slot] = 0;
	if (ov->nbox <= 0 || ov->ncode == 0)
		return 0;
	if (ov->nbox > RENDER_OVERLAY_BOXES) {
		log_error("GPU render: %d overlay boxes, at most %d", ov->nbox, RENDER_OVERLAY_BOXES);
		return NB_EINPUT;
	}
	/* The staging may still feed the upload of the slot's last frame. */
	CUDA_CHECK(cudaEventSynchronize(gr->ev_done[slot]));
	if (ov->ncode > gr->h_ov_cap[slot]) {
		cudaFreeHost(gr->h_ov[slot]);
		gr->h_ov[slot] = NULL;
		gr->h_ov_cap[slot] = 0;
		size_t want = ov->ncode + ov->ncode / 2;
		CUDA_CHECK(cudaMallocHost(&gr->h_ov[slot], want));
		gr->h_ov_cap[slot] = want;
	}
	memcpy(gr->h_ov[slot], ov->code, ov->ncode);
	gr->ov_ncode[slot] = ov->ncode;
	m->nbox = ov->nbox;
	for (int b = 0; b < ov->nbox; b++)
		m->box[b] = ov->box[b];
	for (int c = 0; c < 3; c++)
		m->ink[c] = ov->ink[c];
	return 0;
}

int gr_overlay_take(struct gpu_render *gr, int slot, struct gr_overlay *ov)
{
	*ov = gr->ov_meta[slot];
	const size_t n = gr->ov_ncode[slot];
	gr->ov_meta[slot].nbox = 0;
	gr->ov_ncode[slot] = 0;
	if (ov->nbox == 0)
		return 0;
	if (n > gr->d_ov_cap) {
		cudaFree(gr->d_ov); /* implicit device synchronisation: rare (growth only) */
		gr->d_ov = NULL;
		gr->d_ov_cap = 0;
		size_t want = n + n / 2;
		CUDA_CHECK(cudaMalloc(&gr->d_ov, want));
		gr->d_ov_cap = want;
	}
	CUDA_CHECK(cudaMemcpyAsync(gr->d_ov, gr->h_ov[slot], n, cudaMemcpyHostToDevice, gr->stream));
	return 0;
}

void gr_overlay_free(struct gpu_render *gr)
{
	for (int s = 0; s < GR_MAX_SLOTS; s++)
		cudaFreeHost(gr->h_ov[s]);
	cudaFree(gr->d_ov);
}
