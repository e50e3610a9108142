/* render_lod.cu - the level-of-detail grids of the GPU splat (render.h,
 * RENDER_LOD_*; render/splat.c's pass 4 is the CPU twin): their sizes, tile
 * keys and place in d_hdr, and the upsampling of the coarse levels into
 * the picture.
 *
 * Upsampling, per picture pixel (i, j) and level L = 1, 2, ... in that
 * order, cell = 2^L: u = (i + 0.5) / cell - 0.5 (exact in float), I0 =
 * floor(u), fx = u - I0, I1 = I0 + 1, both clamped to [0, w_L - 1]; the
 * same for rows; the bilinear mix of the four cells divided by cell^2 is
 * added to the pixel. One thread per pixel, the level images (1/3 of the
 * picture in all) stay in L2.
 * CPU twin: render/splat.c (its pass 4). */
#include "render_internal.cuh"

void gr_lod_init(struct gpu_render *gr)
{
	struct gr_levels *lv = &gr->lev;
	uint32_t tiles = 0;
	size_t floats = 0;
	for (int L = 0; L < RENDER_LOD_LEVELS; L++) {
		lv->w[L] = render_lod_dim(gr->w, L);
		lv->h[L] = render_lod_dim(gr->h, L);
		lv->ntx[L] = (lv->w[L] + GR_TILE - 1) / GR_TILE;
		lv->toff[L] = tiles;
		tiles += (uint32_t)(lv->ntx[L] * ((lv->h[L] + GR_TILE - 1) / GR_TILE));
		lv->off[L] = floats;
		floats += (size_t)lv->w[L] * lv->h[L] * 3;
	}
	lv->toff[RENDER_LOD_LEVELS] = tiles;
	lv->floats = floats;
	gr->ntiles = (int)tiles;
	gr->key_bits = 1;
	while ((1l << gr->key_bits) < gr->ntiles)
		gr->key_bits++;
}

__global__ void gr_lod_add(float *hdr, struct gr_levels lev, unsigned mask, int nch)
{
	const int w = lev.w[0];
	const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (p >= (size_t)w * lev.h[0])
		return;
	const int i = (int)(p % w), j = (int)(p / w);
	float *px = hdr + 3 * p;
	float v0 = px[0], v1 = px[1], v2 = px[2];
	for (int L = 1; L < RENDER_LOD_LEVELS; L++) {
		if (!((mask >> L) & 1u))
			continue;
		const int lw = lev.w[L], lh = lev.h[L];
		const float inv_cell = 1.0f / (float)(1 << L), inv_area = inv_cell * inv_cell;
		const float u = (i + 0.5f) * inv_cell - 0.5f, v = (j + 0.5f) * inv_cell - 0.5f;
		int i0 = (int)floorf(u), j0 = (int)floorf(v);
		const float fx = u - (float)i0, fy = v - (float)j0;
		const int i1 = min(i0 + 1, lw - 1), j1 = min(j0 + 1, lh - 1);
		i0 = max(i0, 0);
		j0 = max(j0, 0);
		const float *img = hdr + lev.off[L];
		const float *a = img + 3 * ((size_t)j0 * lw + i0), *b = img + 3 * ((size_t)j0 * lw + i1);
		const float *c = img + 3 * ((size_t)j1 * lw + i0), *d = img + 3 * ((size_t)j1 * lw + i1);
		const float wa = (1.0f - fx) * (1.0f - fy), wb = fx * (1.0f - fy);
		const float wc = (1.0f - fx) * fy, wd = fx * fy;
		v0 += (wa * a[0] + wb * b[0] + wc * c[0] + wd * d[0]) * inv_area;
		if (nch == 3) {
			v1 += (wa * a[1] + wb * b[1] + wc * c[1] + wd * d[1]) * inv_area;
			v2 += (wa * a[2] + wb * b[2] + wc * c[2] + wd * d[2]) * inv_area;
		}
	}
	if (nch == 1)
		v1 = v2 = v0;
	px[0] = v0;
	px[1] = v1;
	px[2] = v2;
}

int gr_lod_upsample(struct gpu_render *gr, unsigned mask, int nch)
{
	if (!(mask & ~1u) && nch == 3)
		return 0;
	const size_t npix = (size_t)gr->w * gr->h;
	gr_lod_add<<<gr_blocks(npix), GR_THREADS, 0, gr->stream>>>(gr->d_hdr, gr->lev, mask, nch);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
