/* dust_shared.h - the dust rules the CPU (render/dust.c) and the GPU
 * (render/cuda/render_dust.cu) both run, written once (render/render.h states
 * them): a body's depth slab, the mean transmission of a slab, and the M4
 * cubic footprint of a dust body. Plain double arithmetic with no multiply
 * followed by an add in the slab rule, so no compiler can fuse it and both
 * sides get the same slab bit for bit. */
#ifndef NB_RENDER_DUST_SHARED_H
#define NB_RENDER_DUST_SHARED_H

#include <math.h>

#ifdef __CUDACC__
#define RENDER_DUST_HD __host__ __device__
#else
#define RENDER_DUST_HD
#endif

/* Slab of a body at depth d (dust: is_dust 1) for bounds [d0, d1] and K
 * slabs: 0 .. K + 1 (render_dust_slab). */
static inline RENDER_DUST_HD int render_dust_slab_of(double d, double d0, double d1, int K,
						    int is_dust)
{
	if (!is_dust) {
		if (d < d0)
			return 0;
		if (d > d1)
			return K + 1;
	}
	if (!(d1 > d0))
		return 1;
	double k = floor((d - d0) / (d1 - d0) * K);
	if (!(k >= 0))
		k = 0;
	if (k > K - 1)
		k = K - 1;
	return 1 + (int)k;
}

/* f(t) = (1 - e^-t) / t, 1 - t/2 below 1e-6 (render_dust_mix). */
static inline RENDER_DUST_HD double render_dust_mix_of(double t)
{
	return t < 1e-6 ? 1.0 - 0.5 * t : -expm1(-t) / t;
}

/* M4 cubic shape without its constant, q^2 = d^2 / r^2 (splat.c's). */
static inline RENDER_DUST_HD double render_dust_shape(double q2)
{
	if (q2 >= 1.0)
		return 0.0;
	const double q = sqrt(q2);
	if (q <= 0.5)
		return 1.0 - 6.0 * q2 + 6.0 * q2 * q;
	const double t = 1.0 - q;
	return 2.0 * t * t * t;
}

#endif
