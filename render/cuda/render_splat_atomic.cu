/* render_splat_atomic.cu - the atomic deposit (GPU_RENDER_ATOMIC, and the
 * tiled method's fallback past GR_PAIR_LIMIT pairs): every footprint that
 * render_splat.cu's prepare made is added to its level's image with global
 * atomicAdd, one thread per small footprint (<= GR_NORM_INLINE cells), the
 * large ones of each warp's bodies by the whole warp in turn (normalised by
 * gr_norm_big or by render.h's analytic rule); then every level is
 * upsampled into the picture (render_lod.cu), since without a read-back
 * the levels used are not known on the host. The summation order varies
 * from run to run: the picture agrees with the CPU within the rounding
 * tolerance of gpu_render.h, not bit for bit.
 * CPU twin: render/splat.c. */
#include "render_internal.cuh"

/* Add f * w of footprint r at cell (i, j) of a level image of width w;
 * (xl, yl) = centre - box corner and a2 = 1/r^2 in float (gr_sample). */
__device__ __forceinline__ void gr_add(const struct gr_rec &r, float xl, float yl, float a2,
				       int gauss, int nch, int i, int j, int w, float *img)
{
	const float smp = gr_sample(gauss, (float)(i - r.i0) + 0.5f - xl,
				    (float)(j - r.j0) + 0.5f - yl, a2, r, i, j);
	if (smp == 0.0f)
		return;
	const float f = smp * r.inv_norm;
	float *px = img + 3 * ((size_t)j * w + i);
	atomicAdd(px, r.w[0] * f);
	if (nch == 3) {
		atomicAdd(px + 1, r.w[1] * f);
		atomicAdd(px + 2, r.w[2] * f);
	}
}

/* One thread per small footprint (<= GR_NORM_INLINE cells, or a single
 * cell); the large ones of the warp's 32 bodies (normalised by
 * gr_norm_big or analytically, render.h) one after the other by the
 * whole warp, 32 cells at a time (<= (2 * 1.5 * 16 + 1)^2 cells: 32 bits). */
__global__ void gr_deposit_atomic_all(const struct gr_rec *rec, const uint8_t *level,
				      const uint32_t *count, int n, struct gr_levels lev, int gauss,
				      int nch, float *hdr)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
	bool large = false;
	if (s < n && count[s] != 0) {
		const struct gr_rec r = rec[s];
		large = r.inv_r != 0.0 && (long)(r.i1 - r.i0 + 1) * (r.j1 - r.j0 + 1) > GR_NORM_INLINE;
		if (!large) {
			const int L = level[s], w = lev.w[L], h = lev.h[L];
			float *img = hdr + lev.off[L];
			const float xl = (float)(r.x - r.i0), yl = (float)(r.y - r.j0), a2 = gr_a2(r);
			for (int j = max(r.j0, 0); j <= min(r.j1, h - 1); j++)
				for (int i = max(r.i0, 0); i <= min(r.i1, w - 1); i++)
					gr_add(r, xl, yl, a2, gauss, nch, i, j, w, img);
		}
	}
	unsigned m = __ballot_sync(0xffffffffu, large);
	while (m) {
		const int b = s - lane + __ffs(m) - 1;
		m &= m - 1;
		const struct gr_rec r = rec[b];
		const int L = level[b], w = lev.w[L], h = lev.h[L];
		float *img = hdr + lev.off[L];
		const float xl = (float)(r.x - r.i0), yl = (float)(r.y - r.j0), a2 = gr_a2(r);
		const int i0 = max(r.i0, 0), j0 = max(r.j0, 0);
		const int bw = min(r.i1, w - 1) - i0 + 1, area = bw * (min(r.j1, h - 1) - j0 + 1);
		for (int e = lane; e < area; e += 32)
			gr_add(r, xl, yl, a2, gauss, nch, i0 + e % bw, j0 + e / bw, w, img);
	}
}

int gr_deposit_atomic(struct gpu_render *gr, int n, int nch)
{
	const int gauss = gr->kernel == SCENE_KERNEL_GAUSSIAN;
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, gr->lev.floats * sizeof(float), gr->stream));
	gr_deposit_atomic_all<<<gr_blocks(n), GR_THREADS, 0, gr->stream>>>(
		gr->d_rec, gr->d_level, gr->d_count, n, gr->lev, gauss, nch, gr->d_hdr);
	CUDA_CHECK(cudaGetLastError());
	/* Every level (bit 0 is the picture itself); density: channel 0 to all. */
	return gr_lod_upsample(gr, (1u << RENDER_LOD_LEVELS) - 1u, nch);
}
