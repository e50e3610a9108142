/* morton.h - the 63-bit Morton key (21 bits an axis) that orders bodies
 * along the Z curve: the GPU tree's body order (sim/cuda/tree_build.cu),
 * the ranks' domains (dist/domain.c) and the
 * adaptive smoothing grid (render/adaptive_tree.c,
 * render/cuda/render_adaptive.cu) all use this one. Host and device
 * inline: a .cu file includes it as a C file does. */
#ifndef NB_SIM_MORTON_H
#define NB_SIM_MORTON_H

#include <stdint.h>

#ifdef __CUDACC__
#define SIM_MORTON_FN static __host__ __device__ __forceinline__
#else
#define SIM_MORTON_FN static inline
#endif

/* The 21 low bits of v spread to every third bit of a 63-bit word: one
 * axis of a Morton key (bit b of v lands on bit 3 b). */
SIM_MORTON_FN uint64_t sim_morton_spread(uint64_t v)
{
	v &= 0x1fffff;
	v = (v | v << 32) & 0x1f00000000ffffULL;
	v = (v | v << 16) & 0x1f0000ff0000ffULL;
	v = (v | v << 8) & 0x100f00f00f00f00fULL;
	v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
	v = (v | v << 2) & 0x1249249249249249ULL;
	return v;
}

/* The Morton key of cell (x, y, z), each 0 .. 2^21 - 1: x on bits 0, 3,
 * 6, ..., y one above, z two above. */
SIM_MORTON_FN uint64_t sim_morton_key(uint64_t x, uint64_t y, uint64_t z)
{
	return sim_morton_spread(x) | sim_morton_spread(y) << 1 | sim_morton_spread(z) << 2;
}

#undef SIM_MORTON_FN
#endif
