/* framing.cu - the framing statistics on the device (gpu_framing.h): the
 * light centre (camera.follow: light), the distance that keeps a share of
 * the light in the frame (camera.frame: auto) and the share inside a
 * frame. CPU twin: render/framing.c; the rules, shared:
 * render/framing_shared.h.
 *
 * One call queues, on fr's stream after the positions' ready event:
 *   fr_init     one thread: the range keys reset
 *   fr_range    per body: weight, values; min / max per value (ordered
 *               64-bit keys, atomicMin/Max: exact), count, light
 *   fr_setup    one thread: lo, B1 / (hi - lo), wmax
 *   fr_hist     level 1: per block, shared uint64 bins (nch x 1024), then
 *               added to the global bins (exact: integers)
 *   fr_select   one block per value and quantile: a scan of the bins
 *               (Hillis-Steele in shared memory), the first bin that
 *               reaches the rank
 *   fr_hist, fr_select   levels 2 and 3: the bodies that share the bits
 *               chosen so far (nch x nq x 512 bins)
 *   fr_trim     (centre) the trimmed sums per axis in double: warp
 *               shuffles, one atomicAdd per warp
 * then one copy of the result struct to pinned memory and a wait: five
 * body passes (four for the distance) and four one-block kernels. Each
 * body pass reads 16 (position) + 4 (id) + 4 (weight by id) bytes and does
 * ~30 flops in double: memory-bound, estimated ~10 us per 1M bodies on an
 * H100 (not measured yet: tests/test_gpu_framing.c times a frame). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../render/framing_shared.h"
#include "gpu_framing.h"
#include "../../sim/cuda/gpu_internal.h"

#define FR_THREADS 256
#define FR_BLOCKS 264 /* 2 per SM on an H100; grid-stride loops cover any n */
#define FR_MAXCH 3
#define FR_MAXQ 2

/* Device-side state of one call. */
struct fr_dev {
	unsigned long long lo_key[FR_MAXCH], hi_key[FR_MAXCH], wmax_key;
	unsigned long long count;
	double light;
	double lo[FR_MAXCH], inv[FR_MAXCH], wmax;
	unsigned long long rank[FR_MAXCH][FR_MAXQ];
	int step[FR_MAXCH][FR_MAXQ]; /* the bits of each quantile's step chosen so far */
	double sw[FR_MAXCH], swx[FR_MAXCH]; /* trimmed sums; inside: sw[0] in, swx[0] all */
};

struct gpu_framing {
	size_t nmax;
	float *d_w;                 /* weight per unit mass, by body id */
	unsigned long long *d_h;    /* histogram bins (level 1 or 2) */
	struct fr_dev *d_s, *h_s;   /* device state; its pinned copy */
	float4 *d_up;               /* gpu_framing_upload's bodies */
	uint32_t *d_upid;
	cudaStream_t stream;
};

#define FR_HBINS (FR_MAXCH * RENDER_FRAMING_B1) /* >= FR_MAXCH * FR_MAXQ * B2 */

/* Ordered keys: a < b as doubles iff key(a) < key(b) as unsigned. */
__device__ static unsigned long long fr_key(double v)
{
	unsigned long long b = (unsigned long long)__double_as_longlong(v);
	return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

__device__ static double fr_unkey(unsigned long long k)
{
	unsigned long long b = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
	return __longlong_as_double((long long)b);
}

/* Weight and values of slot s; 0 when the body does not count. MODE 0:
 * the position (3 values); 1: the distance it needs (1 value). */
template <int MODE>
__device__ static int fr_body(const float4 *pos, const uint32_t *id, const float *wid, int s,
			      const struct render_frame_geom &g, double *w, double v[FR_MAXCH])
{
	const float4 p = pos[s];
	const uint32_t b = id ? id[s] : (uint32_t)s;
	*w = (double)p.w * (double)wid[b];
	if (!(*w > 0) || !isfinite(*w))
		return 0;
	double x[3] = {p.x, p.y, p.z};
	if constexpr (MODE == 1) {
		v[0] = render_framing_need(x, &g);
		return isfinite(v[0]);
	} else {
		v[0] = x[0], v[1] = x[1], v[2] = x[2];
		return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
	}
}

__global__ void fr_init(struct fr_dev *s)
{
	memset(s, 0, sizeof *s);
	for (int d = 0; d < FR_MAXCH; d++)
		s->lo_key[d] = ~0ull;
}

template <int MODE>
__global__ void fr_range(const float4 *pos, const uint32_t *id, const float *wid, int n,
			 struct render_frame_geom g, struct fr_dev *s)
{
	const int nch = MODE == 1 ? 1 : 3;
	double lo[FR_MAXCH], hi[FR_MAXCH], wmax = 0, light = 0;
	double cnt = 0;
	for (int d = 0; d < FR_MAXCH; d++)
		lo[d] = INFINITY, hi[d] = -INFINITY;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		double w, v[FR_MAXCH];
		if (!fr_body<MODE>(pos, id, wid, i, g, &w, v))
			continue;
		cnt += 1, light += w;
		wmax = fmax(wmax, w);
		for (int d = 0; d < nch; d++)
			lo[d] = fmin(lo[d], v[d]), hi[d] = fmax(hi[d], v[d]);
	}
	for (int off = 16; off > 0; off >>= 1) {
		cnt += __shfl_down_sync(0xffffffffu, cnt, off);
		light += __shfl_down_sync(0xffffffffu, light, off);
		wmax = fmax(wmax, __shfl_down_sync(0xffffffffu, wmax, off));
		for (int d = 0; d < nch; d++) {
			lo[d] = fmin(lo[d], __shfl_down_sync(0xffffffffu, lo[d], off));
			hi[d] = fmax(hi[d], __shfl_down_sync(0xffffffffu, hi[d], off));
		}
	}
	if ((threadIdx.x & 31) != 0 || cnt == 0)
		return;
	atomicAdd(&s->count, (unsigned long long)cnt);
	atomicAdd(&s->light, light);
	atomicMax(&s->wmax_key, fr_key(wmax));
	for (int d = 0; d < nch; d++) {
		atomicMin(&s->lo_key[d], fr_key(lo[d]));
		atomicMax(&s->hi_key[d], fr_key(hi[d]));
	}
}

__global__ void fr_setup(struct fr_dev *s, int nch)
{
	if (s->count == 0)
		return;
	s->wmax = fr_unkey(s->wmax_key);
	for (int d = 0; d < nch; d++) {
		s->lo[d] = fr_unkey(s->lo_key[d]);
		s->inv[d] = render_framing_inv(s->lo[d], fr_unkey(s->hi_key[d]));
	}
}

/* LEVEL 1: bins [d][bin]; LEVEL 2, 3: bins [d][e][bin] of the bodies whose
 * step shares the bits chosen so far for quantile e. */
template <int MODE, int LEVEL>
__global__ void fr_hist(const float4 *pos, const uint32_t *id, const float *wid, int n,
			struct render_frame_geom g, int nq, const struct fr_dev *s,
			unsigned long long *out)
{
	extern __shared__ unsigned long long sh[];
	const int nch = MODE == 1 ? 1 : 3;
	const int nb = LEVEL == 1 ? nch * RENDER_FRAMING_B1 : nch * nq * RENDER_FRAMING_B2;
	if (s->count == 0)
		return;
	for (int x = threadIdx.x; x < nb; x += blockDim.x)
		sh[x] = 0;
	__syncthreads();
	const double wmax = s->wmax;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		double w, v[FR_MAXCH];
		if (!fr_body<MODE>(pos, id, wid, i, g, &w, v))
			continue;
		const unsigned long long q = render_framing_q(w, wmax);
		for (int d = 0; d < nch; d++) {
			const int sp = render_framing_step(v[d], s->lo[d], s->inv[d]);
			const int bin = render_framing_bin(sp, LEVEL);
			if constexpr (LEVEL == 1) {
				atomicAdd(&sh[d * RENDER_FRAMING_B1 + bin], q);
			} else {
				for (int e = 0; e < nq; e++)
					if (render_framing_prefix(sp, LEVEL) == s->step[d][e])
						atomicAdd(&sh[(d * nq + e) * RENDER_FRAMING_B2 + bin], q);
			}
		}
	}
	__syncthreads();
	for (int x = threadIdx.x; x < nb; x += blockDim.x)
		if (sh[x])
			atomicAdd(&out[x], sh[x]);
}

/* Block (d, e) of LEVEL: blockDim.x = the bins of one histogram (1024 or
 * 512). Level 1 sets the rank from p[e] and the total; levels 2 and 3 use
 * the rank left inside the bins chosen above. The chosen bin is appended
 * to the step's bits. */
template <int LEVEL>
__global__ void fr_select(const unsigned long long *h, int nq, double p0, double p1,
			  struct fr_dev *s)
{
	__shared__ unsigned long long c[RENDER_FRAMING_B1];
	const int d = blockIdx.x / nq, e = blockIdx.x % nq, nb = blockDim.x, t = threadIdx.x;
	if (s->count == 0)
		return;
	const unsigned long long *hh =
		LEVEL == 1 ? h + d * RENDER_FRAMING_B1 : h + (d * nq + e) * RENDER_FRAMING_B2;
	c[t] = hh[t];
	__syncthreads();
	for (int off = 1; off < nb; off <<= 1) { /* inclusive scan */
		unsigned long long add = t >= off ? c[t - off] : 0;
		__syncthreads();
		c[t] += add;
		__syncthreads();
	}
	const unsigned long long R =
		LEVEL == 1 ? render_framing_rank(e == 0 ? p0 : p1, c[nb - 1]) : s->rank[d][e];
	const unsigned long long before = t > 0 ? c[t - 1] : 0;
	__syncthreads(); /* every thread has read the rank before one replaces it */
	if (c[t] >= R && before < R) {
		s->rank[d][e] = R - before;
		s->step[d][e] = LEVEL == 1 ? t : (s->step[d][e] << 9) | t;
	}
}

/* The trimmed sums per axis (MODE 0) or the inside sums (MODE 1, dist). */
template <int MODE>
__global__ void fr_sums(const float4 *pos, const uint32_t *id, const float *wid, int n,
			struct render_frame_geom g, double dist, struct fr_dev *s)
{
	const int nch = MODE == 1 ? 1 : 3;
	double a[FR_MAXCH] = {0, 0, 0}, b[FR_MAXCH] = {0, 0, 0};
	if (MODE == 0 && s->count == 0)
		return;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		double w, v[FR_MAXCH];
		if (!fr_body<MODE>(pos, id, wid, i, g, &w, v))
			continue;
		if constexpr (MODE == 1) {
			b[0] += w;
			if (v[0] <= dist)
				a[0] += w;
		} else {
			for (int d = 0; d < 3; d++) {
				const int sp = render_framing_step(v[d], s->lo[d], s->inv[d]);
				if (sp >= s->step[d][0] && sp <= s->step[d][1])
					a[d] += w, b[d] += w * v[d];
			}
		}
	}
	for (int off = 16; off > 0; off >>= 1)
		for (int d = 0; d < nch; d++) {
			a[d] += __shfl_down_sync(0xffffffffu, a[d], off);
			b[d] += __shfl_down_sync(0xffffffffu, b[d], off);
		}
	if ((threadIdx.x & 31) != 0)
		return;
	for (int d = 0; d < nch; d++) {
		if (a[d] != 0)
			atomicAdd(&s->sw[d], a[d]);
		if (b[d] != 0)
			atomicAdd(&s->swx[d], b[d]);
	}
}

static unsigned fr_blocks(size_t n)
{
	size_t b = (n + FR_THREADS - 1) / FR_THREADS;
	return b < 1 ? 1 : (b > FR_BLOCKS ? FR_BLOCKS : (unsigned)b);
}

/* The quantiles (nq of them, p0, p1) of the MODE values of in's bodies,
 * into fr->d_s. */
template <int MODE>
static int fr_quantiles(struct gpu_framing *fr, const struct gpu_render_input *in,
			const struct render_frame_geom &g, int nq, double p0, double p1)
{
	const int nch = MODE == 1 ? 1 : 3, n = (int)in->n;
	const float4 *pos = (const float4 *)in->pos4;
	const unsigned blocks = fr_blocks(in->n);
	if (in->ready_event)
		CUDA_CHECK(cudaStreamWaitEvent(fr->stream, (cudaEvent_t)in->ready_event, 0));
	fr_init<<<1, 1, 0, fr->stream>>>(fr->d_s);
	CUDA_CHECK(cudaGetLastError());
	if (n > 0) {
		fr_range<MODE><<<blocks, FR_THREADS, 0, fr->stream>>>(pos, in->id, fr->d_w, n, g, fr->d_s);
		CUDA_CHECK(cudaGetLastError());
	}
	fr_setup<<<1, 1, 0, fr->stream>>>(fr->d_s, nch);
	CUDA_CHECK(cudaGetLastError());
	if (n == 0)
		return 0;
	const size_t sh1 = (size_t)nch * RENDER_FRAMING_B1 * sizeof(unsigned long long);
	const size_t sh2 = (size_t)nch * nq * RENDER_FRAMING_B2 * sizeof(unsigned long long);
	CUDA_CHECK(cudaMemsetAsync(fr->d_h, 0, sh1, fr->stream));
	fr_hist<MODE, 1><<<blocks, FR_THREADS, sh1, fr->stream>>>(pos, in->id, fr->d_w, n, g, nq,
								   fr->d_s, fr->d_h);
	CUDA_CHECK(cudaGetLastError());
	fr_select<1><<<nch * nq, RENDER_FRAMING_B1, 0, fr->stream>>>(fr->d_h, nq, p0, p1, fr->d_s);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemsetAsync(fr->d_h, 0, sh2, fr->stream));
	fr_hist<MODE, 2><<<blocks, FR_THREADS, sh2, fr->stream>>>(pos, in->id, fr->d_w, n, g, nq,
								   fr->d_s, fr->d_h);
	CUDA_CHECK(cudaGetLastError());
	fr_select<2><<<nch * nq, RENDER_FRAMING_B2, 0, fr->stream>>>(fr->d_h, nq, p0, p1, fr->d_s);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemsetAsync(fr->d_h, 0, sh2, fr->stream));
	fr_hist<MODE, 3><<<blocks, FR_THREADS, sh2, fr->stream>>>(pos, in->id, fr->d_w, n, g, nq,
								   fr->d_s, fr->d_h);
	CUDA_CHECK(cudaGetLastError());
	fr_select<3><<<nch * nq, RENDER_FRAMING_B2, 0, fr->stream>>>(fr->d_h, nq, p0, p1, fr->d_s);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

static int fr_fetch(struct gpu_framing *fr)
{
	CUDA_CHECK(cudaMemcpyAsync(fr->h_s, fr->d_s, sizeof *fr->h_s, cudaMemcpyDeviceToHost,
				   fr->stream));
	CUDA_CHECK(cudaStreamSynchronize(fr->stream));
	return 0;
}

extern "C" int gpu_framing_centre(struct gpu_framing *fr, const struct gpu_render_input *in,
				  struct render_light_centre *out)
{
	struct render_frame_geom g;
	memset(&g, 0, sizeof g);
	memset(out, 0, sizeof *out);
	int rc = fr_quantiles<0>(fr, in, g, 2, RENDER_FRAMING_TRIM, 1.0 - RENDER_FRAMING_TRIM);
	if (rc)
		return rc;
	if (in->n > 0) {
		fr_sums<0><<<fr_blocks(in->n), FR_THREADS, 0, fr->stream>>>(
			(const float4 *)in->pos4, in->id, fr->d_w, (int)in->n, g, 0.0, fr->d_s);
		CUDA_CHECK(cudaGetLastError());
	}
	if ((rc = fr_fetch(fr)))
		return rc;
	const struct fr_dev *s = fr->h_s;
	if (s->count == 0)
		return 0;
	out->count = (size_t)s->count;
	out->light = s->light;
	for (int d = 0; d < 3; d++)
		out->c[d] = s->sw[d] > 0 ? s->swx[d] / s->sw[d] : s->lo[d];
	return 0;
}

extern "C" int gpu_framing_need(struct gpu_framing *fr, const struct gpu_render_input *in,
				const struct render_frame_geom *g, double fraction, double *dist)
{
	*dist = -1;
	int rc = fr_quantiles<1>(fr, in, *g, 1, fraction, fraction);
	if (rc || (rc = fr_fetch(fr)))
		return rc;
	const struct fr_dev *s = fr->h_s;
	if (s->count > 0)
		*dist = render_framing_upper(s->lo[0], s->inv[0], s->step[0][0]);
	return 0;
}

extern "C" int gpu_framing_inside(struct gpu_framing *fr, const struct gpu_render_input *in,
				  const struct render_frame_geom *g, double dist, double *fraction)
{
	*fraction = 1.0;
	if (in->ready_event)
		CUDA_CHECK(cudaStreamWaitEvent(fr->stream, (cudaEvent_t)in->ready_event, 0));
	fr_init<<<1, 1, 0, fr->stream>>>(fr->d_s);
	CUDA_CHECK(cudaGetLastError());
	if (in->n > 0) {
		fr_sums<1><<<fr_blocks(in->n), FR_THREADS, 0, fr->stream>>>(
			(const float4 *)in->pos4, in->id, fr->d_w, (int)in->n, *g, dist, fr->d_s);
		CUDA_CHECK(cudaGetLastError());
	}
	int rc = fr_fetch(fr);
	if (rc)
		return rc;
	if (fr->h_s->swx[0] > 0)
		*fraction = fr->h_s->sw[0] / fr->h_s->swx[0];
	return 0;
}

extern "C" int gpu_framing_create(const struct sim_state *st, const float *w_by_comp,
				  struct gpu_framing **out)
{
	int rc = 0;
	struct gpu_framing *fr = (struct gpu_framing *)calloc(1, sizeof *fr);
	float *w = NULL;
	*out = NULL;
	if (!fr || !(w = (float *)malloc((st->n ? st->n : 1) * sizeof *w))) {
		log_error("out of memory for the GPU framing");
		free(fr);
		return NB_ERUNTIME;
	}
	fr->nmax = st->n;
	for (size_t i = 0; i < st->n; i++) {
		int c = st->comp ? st->comp[i] : 0;
		size_t b = st->id ? st->id[i] : i;
		if (b < st->n)
			w[b] = c < st->ncomp ? w_by_comp[c] : 0.0f;
	}
	CUDA_GOTO(cudaStreamCreateWithFlags(&fr->stream, cudaStreamNonBlocking), rc, fail);
	CUDA_GOTO(cudaMalloc((void **)&fr->d_w, (st->n ? st->n : 1) * sizeof(float)), rc, fail);
	CUDA_GOTO(cudaMemcpy(fr->d_w, w, st->n * sizeof(float), cudaMemcpyHostToDevice), rc, fail);
	CUDA_GOTO(cudaMalloc((void **)&fr->d_h, FR_HBINS * sizeof(unsigned long long)), rc, fail);
	CUDA_GOTO(cudaMalloc((void **)&fr->d_s, sizeof(struct fr_dev)), rc, fail);
	CUDA_GOTO(cudaMallocHost((void **)&fr->h_s, sizeof(struct fr_dev)), rc, fail);
	free(w);
	*out = fr;
	return 0;
fail:
	free(w);
	gpu_framing_free(&fr);
	return rc;
}

extern "C" void gpu_framing_free(struct gpu_framing **frp)
{
	if (!frp || !*frp)
		return;
	struct gpu_framing *fr = *frp;
	cudaFree(fr->d_w);
	cudaFree(fr->d_h);
	cudaFree(fr->d_s);
	cudaFree(fr->d_up);
	cudaFree(fr->d_upid);
	cudaFreeHost(fr->h_s);
	if (fr->stream)
		cudaStreamDestroy(fr->stream);
	free(fr);
	*frp = NULL;
}

extern "C" int gpu_framing_upload(struct gpu_framing *fr, const struct sim_state *st,
				  struct gpu_render_input *in)
{
	if (st->n > fr->nmax) {
		log_error("GPU framing: %zu bodies, created for at most %zu", st->n, fr->nmax);
		return NB_ERUNTIME;
	}
	size_t n = fr->nmax ? fr->nmax : 1;
	if (!fr->d_up) {
		CUDA_CHECK(cudaMalloc((void **)&fr->d_up, n * sizeof(float4)));
		CUDA_CHECK(cudaMalloc((void **)&fr->d_upid, n * sizeof(uint32_t)));
	}
	float4 *h = (float4 *)malloc(n * sizeof(float4));
	uint32_t *hid = (uint32_t *)malloc(n * sizeof(uint32_t));
	if (!h || !hid) {
		free(h);
		free(hid);
		log_error("out of memory for the GPU framing upload");
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < st->n; i++) {
		h[i] = make_float4((float)st->pos[3 * i], (float)st->pos[3 * i + 1],
				   (float)st->pos[3 * i + 2], (float)st->mass[i]);
		hid[i] = st->id ? st->id[i] : (uint32_t)i;
	}
	cudaError_t e1 = cudaMemcpy(fr->d_up, h, st->n * sizeof(float4), cudaMemcpyHostToDevice);
	cudaError_t e2 = cudaMemcpy(fr->d_upid, hid, st->n * sizeof(uint32_t), cudaMemcpyHostToDevice);
	free(h);
	free(hid);
	CUDA_CHECK(e1);
	CUDA_CHECK(e2);
	memset(in, 0, sizeof *in);
	in->pos4 = fr->d_up;
	in->id = fr->d_upid;
	in->n = st->n;
	return 0;
}
