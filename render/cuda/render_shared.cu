/* render_shared.cu - services every stage of the GPU renderer may call, at
 * the bottom of render/cuda's call tree (it calls no other file there):
 * the temporary device memory the CUB sorts and scans share (gr->d_temp)
 * and a camera's view in the form the kernels read (struct gr_view).
 * CPU twin: none (device memory; the view is render_view_make's, render/camera.c). */
#include "render_internal.cuh"

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
