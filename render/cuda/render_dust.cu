/* render_dust.cu - dust on the GPU, render/dust.c's meaning (render.h,
 * "Dust"): the dust's depth bounds, each slot's slab, the dust's optical
 * depth per slab, the stars (and the diffuse layer) per slab, and the
 * front-to-back composite into d_pic (d_hdr: the diffuse layer's splat).
 *
 * Exactness. Depths and pixel positions in double with the CPU's
 * operations, unfused (as render_stars.cu), so bounds and slabs are the
 * CPU's bit for bit for the same float positions: the bounds are a
 * min/max over the depths' bit patterns (positive doubles order as their
 * bits). The dust footprints sum in a different order (atomics) and the
 * device exp differs by an ulp: the image matches the CPU within
 * gpu_render.h's HDR tolerance. The diffuse layer is gr_splat of each
 * slab's bodies regrouped (order within a slab free: the splat's sum does
 * not depend on it beyond rounding).
 *
 * Memory: (K + 2) * 16 bytes a pixel (K = 16: 600 MB at 1080p, 2.4 GB at
 * 4K), a byte per body, and with render.diffuse 20 bytes per body.
 *
 * Cost: bounds and slabs ~80 double flops a body each (two passes, the
 * second needs the first's bounds); a dust body's footprint 2 (2r + 1)^2
 * samples (r <= 64 px) of ~10 flops and one float atomicAdd each; the
 * composite (K + 2) x (4 loads, one exp) per pixel. The diffuse layer
 * costs K + 2 splats of the regrouped bodies and one host wait for the
 * per-slab counts.
 * CPU twin: render/dust.c (render_dust_frame; the slabs' stars:
 * render_stars_splat_slabs, render/stars.c). */
#include "render_internal.cuh"
#include "../../render/dust_shared.h"

#include <math.h>
#include <stdlib.h>

struct gr_dust_args {
	struct gr_view v;
	double length, mass; /* internal = scene * factor */
	const uint16_t *comp;
	const double *dust; /* kappa, h per component */
	int ncomp, K;
};

/* Depth of slot s as render_view_project; 1 when it is in front. */
__device__ static int gr_dust_depth(const struct gr_dust_args &a, float4 pf, double *z, double *x,
				    double *y)
{
	const struct gr_view &v = a.v;
	const double p0 = (double)pf.x / a.length, p1 = (double)pf.y / a.length,
		     p2 = (double)pf.z / a.length;
	const double d0 = p0 - v.pos[0], d1 = p1 - v.pos[1], d2 = p2 - v.pos[2];
	/* render_proj_map (perspective or fisheye: the loader refuses dust with
	 * equirect); x, y may be non-finite only for non-finite input. */
	const double cx = gr_dot(v.right, d0, d1, d2), cy = gr_dot(v.upv, d0, d1, d2),
		     cz = gr_dot(v.fwd, d0, d1, d2);
	return render_proj_map(&v.pj, cx, cy, cz, x, y, z);
}

__device__ static double gr_dust_kappa(const struct gr_dust_args &a, uint32_t b, int *c)
{
	*c = a.comp ? a.comp[b] : 0;
	return *c < a.ncomp ? a.dust[2 * *c] : 0.0;
}

/* Bounds before pass 1: min +inf, max +0 (every depth counted is > 0). */
__global__ void gr_dust_init(unsigned long long *bounds)
{
	bounds[0] = 0x7ff0000000000000ull;
	bounds[1] = 0ull;
}

/* Pass 1: min and max depth of the dust in front of the camera. */
__global__ void gr_dust_bounds(struct gr_dust_args a, const float4 *pos4, const uint32_t *id,
			       int n, unsigned long long *bounds)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	int c;
	if (!(gr_dust_kappa(a, id ? id[s] : (uint32_t)s, &c) > 0))
		return;
	double z, x, y;
	if (!gr_dust_depth(a, pos4[s], &z, &x, &y))
		return;
	const unsigned long long bits = (unsigned long long)__double_as_longlong(z);
	atomicMin(&bounds[0], bits);
	atomicMax(&bounds[1], bits);
}

/* Pass 2, one thread per slot: an emitter's slab (and count, for the
 * diffuse layer); a dust body deposits its optical depth into its slab's
 * image (dust.c's dust_deposit) and keeps RENDER_DUST_NO_SLAB. */
__global__ void gr_dust_classify(struct gr_dust_args a, const float4 *pos4, const uint32_t *id,
				 int n, const unsigned long long *bounds, uint8_t *slab,
				 uint32_t *count, float *tau)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	const float4 pf = pos4[s];
	int c;
	const double kap = gr_dust_kappa(a, id ? id[s] : (uint32_t)s, &c);
	double z, x, y;
	slab[s] = RENDER_DUST_NO_SLAB;
	if (!gr_dust_depth(a, pf, &z, &x, &y))
		return;
	const double d0 = __longlong_as_double((long long)bounds[0]);
	const double d1 = __longlong_as_double((long long)bounds[1]);
	const int k = render_dust_slab_of(z, d0, d1, a.K, kap > 0);
	if (!(kap > 0)) {
		slab[s] = (uint8_t)k;
		if (count)
			atomicAdd(&count[k], 1u);
		return;
	}
	/* dust: emits nothing (its slot stays RENDER_DUST_NO_SLAB for the stars
	 * and the regrouping); its optical depth goes into slab k */
	const struct gr_view &v = a.v;
	double r = __dmul_rn(a.dust[2 * c + 1] / z, v.focal);
	if (!(r <= RENDER_DUST_MAX_RADIUS_PX))
		r = RENDER_DUST_MAX_RADIUS_PX;
	const double ar = z / v.focal;
	const double t = kap * ((double)pf.w / a.mass) / (ar * ar);
	if (!isfinite(x) || !isfinite(y) || x + r + 1 < 0 || x - r - 1 >= v.w || y + r + 1 < 0 ||
	    y - r - 1 >= v.h || !(t > 0))
		return;
	float *img = tau + (size_t)k * v.w * v.h;
	double sum = 0.0, inv_r2 = 0.0;
	int i0 = 0, i1 = -1, j0 = 0, j1 = -1;
	if (r >= 0.5) {
		i0 = (int)floor(x - r);
		i1 = (int)floor(x + r);
		j0 = (int)floor(y - r);
		j1 = (int)floor(y + r);
		inv_r2 = 1.0 / (r * r);
		for (int j = j0; j <= j1; j++) {
			const double dy = j + 0.5 - y;
			for (int i = i0; i <= i1; i++) {
				const double dx = i + 0.5 - x;
				sum += render_dust_shape((dx * dx + dy * dy) * inv_r2);
			}
		}
	}
	if (!(sum > 0.0)) {
		const int i = (int)floor(x), j = (int)floor(y);
		if (i >= 0 && i < v.w && j >= 0 && j < v.h)
			atomicAdd(img + (size_t)j * v.w + i, (float)t);
		return;
	}
	const double f = t / sum;
	for (int j = max(j0, 0); j <= j1 && j < v.h; j++) {
		const double dy = j + 0.5 - y;
		for (int i = max(i0, 0); i <= i1 && i < v.w; i++) {
			const double dx = i + 0.5 - x;
			const double w = render_dust_shape((dx * dx + dy * dy) * inv_r2);
			if (w > 0.0)
				atomicAdd(img + (size_t)j * v.w + i, (float)(f * w));
		}
	}
}

/* Diffuse: slots regrouped by slab (cursor: each slab's next free place). */
__global__ void gr_dust_regroup(const float4 *pos4, const uint32_t *id, int n, const uint8_t *slab,
				uint32_t *cursor, float4 *dpos, uint32_t *dids)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n)
		return;
	const uint8_t k = slab[s];
	if (k == RENDER_DUST_NO_SLAB)
		return;
	const uint32_t at = atomicAdd(&cursor[k], 1u);
	dpos[at] = pos4[s];
	dids[at] = id ? id[s] : (uint32_t)s;
}

/* emit = emit a + smooth b in double (render_stars_diffuse's mix per
 * slab); smooth NULL: an empty slab's layer. */
__global__ void gr_dust_mixk(float *emit, const float *smooth, size_t nv, double a, double b)
{
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nv)
		emit[i] = (float)__dadd_rn(__dmul_rn((double)emit[i], a),
					   __dmul_rn(smooth ? (double)smooth[i] : 0.0, b));
}

/* Front to back per pixel (render_dust_frame's composite). */
__global__ void gr_dust_composite(const float *emit, const float *tau, int K, size_t npix,
				  float *hdr)
{
	const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (p >= npix)
		return;
	double cum = 0.0, out[3] = {0, 0, 0};
	for (int k = 0; k < K + 2; k++) {
		const double t = tau[(size_t)k * npix + p];
		const float *e = emit + 3 * ((size_t)k * npix + p);
		const double mix = render_dust_mix_of(t);
		const double tr = exp(-cum) * mix;
		for (int c = 0; c < 3; c++)
			out[c] += (double)e[c] * tr;
		cum += t;
	}
	for (int c = 0; c < 3; c++)
		hdr[3 * p + c] = (float)out[c];
}

int gr_dust_alloc(struct gpu_render *gr, const struct scene *sc, const struct sim_state *st)
{
	gr->dust_K = 0;
	if (!gr->stars || !render_dust_present(st))
		return 0;
	const int K = sc->render.dust_slabs > 0 ? sc->render.dust_slabs : 1;
	const size_t npix = (size_t)gr->w * gr->h, n = gr->nmax ? gr->nmax : 1;
	const size_t nc = gr->ncomp > 0 ? (size_t)gr->ncomp : 1;
	double *dd = (double *)calloc(2 * nc, sizeof(double));
	if (!dd) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	for (int c = 0; c < gr->ncomp; c++) {
		dd[2 * c] = st->comps[c].kappa;
		dd[2 * c + 1] = RENDER_DUST_H_RATIO * st->comps[c].dust_z;
	}
	cudaError_t e = cudaMalloc(&gr->d_dust, 2 * nc * sizeof(double));
	if (e == cudaSuccess)
		e = cudaMemcpy(gr->d_dust, dd, 2 * nc * sizeof(double), cudaMemcpyHostToDevice);
	free(dd);
	CUDA_CHECK(e);
	CUDA_CHECK(cudaMalloc(&gr->d_emit, (size_t)(K + 2) * npix * 3 * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&gr->d_tau, (size_t)(K + 2) * npix * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&gr->d_slab, n));
	CUDA_CHECK(cudaMalloc(&gr->d_dbounds, 2 * sizeof(unsigned long long)));
	CUDA_CHECK(cudaMalloc(&gr->d_dcount, (size_t)(K + 2) * sizeof(uint32_t)));
	CUDA_CHECK(cudaMallocHost(&gr->h_dcount, (size_t)(K + 2) * sizeof(uint32_t)));
	if (gr->diffuse > 0) {
		CUDA_CHECK(cudaMalloc(&gr->d_dpos, n * sizeof(float4)));
		CUDA_CHECK(cudaMalloc(&gr->d_dids, n * sizeof(uint32_t)));
	}
	gr->dust_K = K;
	return 0;
}

void gr_dust_free(struct gpu_render *gr)
{
	cudaFree(gr->d_dust);
	cudaFree(gr->d_emit);
	cudaFree(gr->d_tau);
	cudaFree(gr->d_slab);
	cudaFree(gr->d_dbounds);
	cudaFree(gr->d_dcount);
	cudaFreeHost(gr->h_dcount);
	cudaFree(gr->d_dpos);
	cudaFree(gr->d_dids);
}

/* render.diffuse: each slab's bodies through gr_splat, mixed into E_k. */
static int gr_dust_diffuse(struct gpu_render *gr, const struct gpu_render_input *in,
			   const struct gr_view *v, const float *d_h)
{
	cudaStream_t st = gr->stream;
	const int K = gr->dust_K, n = (int)in->n;
	const size_t npix = (size_t)gr->w * gr->h, nv = 3 * npix;
	CUDA_CHECK(cudaMemcpyAsync(gr->h_dcount, gr->d_dcount, (size_t)(K + 2) * sizeof(uint32_t),
				   cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaStreamSynchronize(st));
	uint32_t off[RENDER_DUST_NO_SLAB + 1], at = 0;
	for (int k = 0; k < K + 2; k++) {
		off[k] = at;
		at += gr->h_dcount[k];
	}
	/* the counts become the cursors of the regrouping */
	for (int k = 0; k < K + 2; k++)
		gr->h_dcount[k] = off[k];
	CUDA_CHECK(cudaMemcpyAsync(gr->d_dcount, gr->h_dcount, (size_t)(K + 2) * sizeof(uint32_t),
				   cudaMemcpyHostToDevice, st));
	gr_dust_regroup<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
		(const float4 *)in->pos4, in->id, n, gr->d_slab, gr->d_dcount, gr->d_dpos, gr->d_dids);
	CUDA_CHECK(cudaGetLastError());
	const double d = gr->diffuse, a = 1.0 / (1.0 + d), b = d / (1.0 + d);
	for (int k = 0; k < K + 2; k++) {
		const uint32_t cnt = (k + 1 < K + 2 ? off[k + 1] : at) - off[k];
		float *ek = gr->d_emit + (size_t)k * nv;
		if (cnt > 0) {
			struct gpu_render_input sub = {gr->d_dpos + off[k], NULL, gr->d_dids + off[k], cnt, NULL};
			if (gr_splat(gr, &sub, v, d_h) != 0)
				return NB_ERUNTIME;
		}
		gr_dust_mixk<<<gr_blocks(nv), GR_THREADS, 0, st>>>(ek, cnt > 0 ? gr->d_hdr : NULL, nv,
								    a, b);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

int gr_dust_frame(struct gpu_render *gr, const struct gpu_render_input *in,
		  const struct gr_view *v, const float *d_h)
{
	cudaStream_t st = gr->stream;
	const int K = gr->dust_K, n = (int)in->n;
	const size_t npix = (size_t)gr->w * gr->h;
	const int diffuse = gr->diffuse > 0 && d_h;
	CUDA_CHECK(cudaMemsetAsync(gr->d_emit, 0, (size_t)(K + 2) * npix * 3 * sizeof(float), st));
	CUDA_CHECK(cudaMemsetAsync(gr->d_tau, 0, (size_t)(K + 2) * npix * sizeof(float), st));
	CUDA_CHECK(cudaMemsetAsync(gr->d_dcount, 0, (size_t)(K + 2) * sizeof(uint32_t), st));
	gr_dust_init<<<1, 1, 0, st>>>(gr->d_dbounds);
	CUDA_CHECK(cudaGetLastError());
	if (n > 0) {
		struct gr_dust_args a;
		a.v = *v;
		a.length = gr->u.length;
		a.mass = gr->u.mass;
		a.comp = gr->d_comp;
		a.dust = gr->d_dust;
		a.ncomp = gr->ncomp;
		a.K = K;
		gr_dust_bounds<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
			a, (const float4 *)in->pos4, in->id, n, gr->d_dbounds);
		CUDA_CHECK(cudaGetLastError());
		gr_dust_classify<<<gr_blocks((size_t)n), GR_THREADS, 0, st>>>(
			a, (const float4 *)in->pos4, in->id, n, gr->d_dbounds, gr->d_slab,
			diffuse ? gr->d_dcount : NULL, gr->d_tau);
		CUDA_CHECK(cudaGetLastError());
		if (gr_stars_slabs(gr, in, v, gr->d_slab, gr->d_emit, npix * 3) != 0)
			return NB_ERUNTIME;
		if (diffuse && gr_dust_diffuse(gr, in, v, d_h) != 0)
			return NB_ERUNTIME;
	}
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	gr_dust_composite<<<gr_blocks(npix), GR_THREADS, 0, st>>>(gr->d_emit, gr->d_tau, K, npix,
								   gr->d_pic);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
