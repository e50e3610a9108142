/* overlay_shared.h - how one pixel of a tone-mapped frame takes the
 * overlay (render.h, render_overlay_*): written once, compiled for the CPU
 * (render_overlay_apply, render/overlay.c) and the GPU (the fused tone map
 * of render/cuda/render_tone.cu), so both frames agree bit for bit in the
 * overlay's pixels. Integer only: no rounding to differ. */
#ifndef NB_RENDER_OVERLAY_SHARED_H
#define NB_RENDER_OVERLAY_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "render.h"

#ifndef RENDER_HD
#ifdef __CUDACC__
#define RENDER_HD __host__ __device__
#else
#define RENDER_HD
#endif
#endif

/* Pixel (i, j) with 16-bit value o: the first box holding a nonzero code
 * there decides: INK sets o to ink, SHADE keeps o >> 2 (a dark outline
 * that still shows what lies under it). */
static inline RENDER_HD void render_overlay_pixel(const struct render_overlay_box *box, int nbox,
						  const uint8_t *code, const uint16_t ink[3],
						  int i, int j, uint16_t o[3])
{
	/* a constant trip count: the GPU unrolls it and reads the boxes from
	 * the kernel's parameters, no local copy */
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
	for (int b = 0; b < RENDER_OVERLAY_BOXES; b++) {
		if (b >= nbox)
			break;
		const int x = i - box[b].x, y = j - box[b].y;
		if (x < 0 || y < 0 || x >= box[b].w || y >= box[b].h)
			continue;
		const uint8_t c = code[box[b].off + (size_t)y * (size_t)box[b].w + (size_t)x];
		if (c == RENDER_OVERLAY_INK) {
			o[0] = ink[0], o[1] = ink[1], o[2] = ink[2];
			return;
		}
		if (c == RENDER_OVERLAY_SHADE) {
			o[0] >>= 2, o[1] >>= 2, o[2] >>= 2;
			return;
		}
	}
}

#endif
