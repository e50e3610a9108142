/* render_ooc.cu - the GPU renderer out of core (gpu_render.h, "out of
 * core"; docs/snapshots.md, "Bigger than the GPU"): host bodies streamed
 * through two device buffers in chunks, each chunk splat into the same HDR
 * image, then the look once on the sum.
 *
 * Per chunk k (buffer b = k % 2), queued in order:
 *   host     [staging only] wait until staging b's last copy is done
 *            (ev_up[b]), pack chunk k into it (render_ooc_pack or memcpy)
 *   up       wait ev_free[b] (the splat of chunk k - 2 is done with device
 *            buffer b) -> copy rows to buffer b -> record ev_up[b]
 *   stream   wait ev_up[b] -> splat (stars: added into d_hdr; smooth: into
 *            d_hdr, then added into d_acc) -> record ev_free[b]
 * so the copy of chunk k + 1 (and with staging its packing on the host)
 * overlaps the splat of chunk k. With page-locked rows the host queues all
 * chunks at once and never waits, except style smooth's per-chunk pair
 * count (render_splat.cu's one host wait).
 *
 * Cost per body on the bus: 16 bytes (x, y, z, m), +16 with velocities
 * (render.color_by, motion blur), +2 with components: at ~50 GB/s (PCIe 5
 * x16, pinned) 1e9 bodies take ~0.32 s a frame, the splat's own cost
 * (render_stars.cu) on top where it is not overlapped.
 * CPU twin: none (the CPU renderer holds every body); the chunk plan and the
 * packing of the rows are render/ooc.c, the picture is render.cu's (in core). */
#include "render_internal.cuh"

#include <stdlib.h>
#include <string.h>

#include "../../scene/log.h"

struct gr_ooc {
	cudaStream_t up;              /* host -> device copies */
	float4 *d_pos[2], *d_vel[2];  /* chunk rows on the device (vel: only when read) */
	uint16_t *d_comp[2];          /* their components */
	float *h_pos[2], *h_vel[2];   /* pinned staging, made on first need */
	uint16_t *h_comp[2];
	cudaEvent_t ev_up[2];         /* buffer b's copy has landed (staging b is free) */
	cudaEvent_t ev_free[2];       /* buffer b's splat is done */
	cudaEvent_t *ev;              /* timing: 4 per chunk drawn (copy start, end; splat
				       * start, end) */
	int nev;                      /* chunks the events cover */
	float *d_acc;                 /* style smooth: the frame's sum, w*h*3 */
	int vel;                      /* the splats read velocities */
	/* the frame being queued / last queued */
	int k;                        /* chunks drawn so far this frame (all eyes) */
	size_t bytes;                 /* bytes copied */
	double stage_ms;              /* host packing */
	int timed;
};

int gr_ooc_check(const struct scene *sc, const struct sim_state *st)
{
	if (sc->render.style != SCENE_STYLE_STARS && sc->render.smoothing_adaptive) {
		log_error("GPU render out of core: render.smoothing: adaptive cannot be drawn in chunks "
			  "(its neighbour search needs every body on the GPU at once); give "
			  "render.smoothing a number or use render.style: stars");
		return NB_EINPUT;
	}
	if (sc->render.style == SCENE_STYLE_STARS && sc->render.diffuse > 0 &&
	    sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE) {
		log_error("GPU render out of core: render.diffuse_smoothing: adaptive cannot be drawn "
			  "in chunks (its neighbour search needs every body on the GPU at once); use "
			  "render.diffuse_smoothing: screen");
		return NB_EINPUT;
	}
	for (int c = 0; st->comps && c < st->ncomp; c++)
		if (st->comps[c].kappa > 0) {
			log_error("GPU render out of core: component '%s' is dust, which cannot be drawn "
				  "in chunks (its depth slabs span every dust body at once)",
				  st->comps[c].name);
			return NB_EINPUT;
		}
	return 0;
}

size_t gpu_render_chunk(const struct gpu_render *gr)
{
	return gr->ooc_chunk;
}

void gpu_render_memory(const struct scene *sc, const struct gpu_render_params *p, int out_of_core,
		       size_t *fixed, size_t *per_body, size_t *max_chunk)
{
	int w = 0, h = 0;
	render_eye_size(sc, &w, &h);
	const size_t npix = (size_t)w * h, fpix = (size_t)sc->render.width * sc->render.height;
	const int stars = sc->render.style == SCENE_STYLE_STARS;
	const double diffuse = stars ? sc->render.diffuse : 0.0;
	const int screen = diffuse > 0 && sc->render.diffuse_smoothing == SCENE_DIFFUSE_SCREEN;
	const int adaptive = (!stars && sc->render.smoothing_adaptive) || (diffuse > 0 && !screen);
	const size_t S = (size_t)render_blur_samples(sc);
	const size_t C = render_projection_of(sc->camera.projection)->wrap ? RENDER_PROJ_COPIES : 1;
	const int vel = sc->render.color_by != SCENE_COLOR_BY_COMPONENT || S > 1;
	const size_t img = 12 * npix; /* one float RGB picture */

	/* the frame: HDR with its coarser levels (<= 1/3 more), the glow's
	 * pyramid and scratch, the diffuse layer and its pyramid, the stereo
	 * frame, the output slots (YUV 1.5, RGB8 3, RGB16 6 bytes a pixel),
	 * smooth out of core its accumulator; 16 MiB for the small buffers
	 * (tiles, LUTs, partials, CUB's scratch; the estimate above is already
	 * ~60 MiB high at 1080p: tests/test_gpu_ooc.c) */
	size_t f = img + img / 3 + img; /* HDR + levels, glow */
	if (diffuse > 0)
		f += img + (screen ? img : 0);
	if (sc->camera.stereo.mode != SCENE_STEREO_NONE)
		f += 12 * fpix;
	double out = 0;
	if (p->outputs & GPU_RENDER_OUT_YUV420P)
		out += 1.5;
	if (p->outputs & GPU_RENDER_OUT_RGB8)
		out += 3;
	if (p->outputs & GPU_RENDER_OUT_RGB16)
		out += 6;
	f += (size_t)((double)p->slots * out * (double)fpix) + 16 * (size_t)p->slots;
	if (out_of_core && !stars)
		f += img;
	f += (size_t)16 << 20;
	*fixed = f;

	/* per body slot: the stars' keys and values (double-buffered, 4 bytes,
	 * per blur sample and footprint copy); the smooth splat's footprint
	 * records (56 + 1 + 3 x 4 bytes per copy) and pair lists (2 x 2 x 4
	 * bytes a pair, 4 pairs per footprint, + 1/4 growth room) */
	size_t b = 2; /* d_comp */
	const size_t splat = (69 + 80) * C;
	if (stars)
		b += 16 * S * C + 1;
	if (!stars || !out_of_core)
		b += stars ? 69 * C : splat; /* in core the stars keep the records too */
	if (out_of_core) {
		b += 2 * (16 + 2 + (vel ? 16 : 0)); /* the two chunk buffers */
	} else {
		b += 16 + (vel ? 16 : 0) + 4; /* the upload, its velocities, h */
		if (stars)
			b += 16 + 4 + (vel ? 16 : 0); /* gr_stars' own copy */
		if (adaptive)
			b += 64; /* the neighbour search's tree and lists (approximate) */
	}
	*per_body = b;
	*max_chunk = (size_t)INT32_MAX / (S * C);
}

static void gr_ooc_staging_free(struct gr_ooc *o)
{
	for (int b = 0; b < 2; b++) {
		cudaFreeHost(o->h_pos[b]);
		cudaFreeHost(o->h_vel[b]);
		cudaFreeHost(o->h_comp[b]);
		o->h_pos[b] = o->h_vel[b] = NULL;
		o->h_comp[b] = NULL;
	}
}

void gr_ooc_free(struct gpu_render *gr)
{
	struct gr_ooc *o = gr->ooc;
	if (!o)
		return;
	if (o->up)
		cudaStreamSynchronize(o->up);
	for (int b = 0; b < 2; b++) {
		cudaFree(o->d_pos[b]);
		cudaFree(o->d_vel[b]);
		cudaFree(o->d_comp[b]);
		if (o->ev_up[b])
			cudaEventDestroy(o->ev_up[b]);
		if (o->ev_free[b])
			cudaEventDestroy(o->ev_free[b]);
	}
	gr_ooc_staging_free(o);
	for (int k = 0; k < 4 * o->nev; k++)
		cudaEventDestroy(o->ev[k]);
	free(o->ev);
	cudaFree(o->d_acc);
	if (o->up)
		cudaStreamDestroy(o->up);
	free(o);
	gr->ooc = NULL;
}

int gr_ooc_alloc(struct gpu_render *gr)
{
	struct gr_ooc *o = (struct gr_ooc *)calloc(1, sizeof *o);
	if (!o) {
		log_error("GPU render: out of memory");
		return NB_ERUNTIME;
	}
	gr->ooc = o;
	const size_t n = gr->ooc_chunk;
	o->vel = gr->color_by || gr->blur_samples > 1;
	int prio_low = 0, prio_high = 0;
	if (gpu_stream_priorities(&prio_low, &prio_high))
		prio_low = 0;
	CUDA_CHECK(cudaStreamCreateWithPriority(&o->up, cudaStreamNonBlocking, prio_low));
	for (int b = 0; b < 2; b++) {
		CUDA_CHECK(cudaMalloc(&o->d_pos[b], n * sizeof(float4)));
		CUDA_CHECK(cudaMalloc(&o->d_comp[b], n * sizeof(uint16_t)));
		if (o->vel)
			CUDA_CHECK(cudaMalloc(&o->d_vel[b], n * sizeof(float4)));
		CUDA_CHECK(cudaEventCreateWithFlags(&o->ev_up[b], cudaEventDisableTiming));
		CUDA_CHECK(cudaEventCreateWithFlags(&o->ev_free[b], cudaEventDisableTiming));
	}
	if (!gr->stars)
		CUDA_CHECK(cudaMalloc(&o->d_acc, (size_t)gr->w * gr->h * 3 * sizeof(float)));
	return 0;
}

/* Timing events for at least n chunks a frame. */
static int gr_ooc_events(struct gr_ooc *o, int n)
{
	if (n <= o->nev)
		return 0;
	cudaEvent_t *ev = (cudaEvent_t *)realloc(o->ev, 4 * (size_t)n * sizeof *ev);
	if (!ev) {
		log_error("GPU render: out of memory (events)");
		return NB_ERUNTIME;
	}
	o->ev = ev;
	for (int k = o->nev; k < n; k++) {
		for (int j = 0; j < 4; j++)
			if (cudaEventCreate(&o->ev[4 * k + j]) != cudaSuccess) {
				for (int i = 0; i < j; i++) /* keep only whole chunks' events */
					cudaEventDestroy(o->ev[4 * k + i]);
				CUDA_CHECK(cudaGetLastError());
				return NB_ERUNTIME;
			}
		o->nev = k + 1;
	}
	return 0;
}

static int gr_ooc_staging(struct gpu_render *gr)
{
	struct gr_ooc *o = gr->ooc;
	if (o->h_pos[0])
		return 0;
	const size_t n = gr->ooc_chunk;
	for (int b = 0; b < 2; b++) {
		CUDA_CHECK(cudaMallocHost(&o->h_pos[b], 4 * n * sizeof(float)));
		CUDA_CHECK(cudaMallocHost(&o->h_comp[b], n * sizeof(uint16_t)));
		if (o->vel)
			CUDA_CHECK(cudaMallocHost(&o->h_vel[b], 4 * n * sizeof(float)));
	}
	return 0;
}

/* Where a frame's bodies come from: st (packed per chunk), or hb's rows
 * (copied directly when all of them are page-locked, else staged). */
struct gr_src {
	const struct sim_state *st;
	const struct gpu_render_host *hb;
	int direct;
};

static int gr_pinned(const void *p)
{
	if (!p)
		return 1;
	cudaPointerAttributes a;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError(); /* pageable memory on old drivers: not an error */
		return 0;
	}
	return a.type == cudaMemoryTypeHost;
}

/* Chunk k's rows [first, first + count) into device buffer b, queued on
 * the copy stream; ev_up[b] recorded after. */
static int gr_ooc_upload(struct gpu_render *gr, const struct gr_src *src, size_t first,
			 size_t count, int b, int k)
{
	struct gr_ooc *o = gr->ooc;
	const float *pos = NULL, *vel = NULL;
	const uint16_t *comp = NULL;
	const int has_comp = src->st ? src->st->comp != NULL : src->hb->comp != NULL;
	if (src->direct) {
		pos = src->hb->pos4 + 4 * first;
		vel = o->vel ? src->hb->vel4 + 4 * first : NULL;
		comp = has_comp ? src->hb->comp + first : NULL;
	} else {
		CUDA_CHECK(cudaEventSynchronize(o->ev_up[b])); /* staging b is free */
		const double t0 = log_clock_s();
		if (src->st) {
			render_ooc_pack(src->st, first, count, o->h_pos[b], o->vel ? o->h_vel[b] : NULL,
					has_comp ? o->h_comp[b] : NULL);
		} else {
			memcpy(o->h_pos[b], src->hb->pos4 + 4 * first, count * 4 * sizeof(float));
			if (o->vel)
				memcpy(o->h_vel[b], src->hb->vel4 + 4 * first, count * 4 * sizeof(float));
			if (has_comp)
				memcpy(o->h_comp[b], src->hb->comp + first, count * sizeof(uint16_t));
		}
		o->stage_ms += 1e3 * (log_clock_s() - t0);
		pos = o->h_pos[b];
		vel = o->vel ? o->h_vel[b] : NULL;
		comp = has_comp ? o->h_comp[b] : NULL;
	}
	CUDA_CHECK(cudaStreamWaitEvent(o->up, o->ev_free[b], 0)); /* buffer b is free */
	CUDA_CHECK(cudaEventRecord(o->ev[4 * k], o->up));
	CUDA_CHECK(cudaMemcpyAsync(o->d_pos[b], pos, count * sizeof(float4), cudaMemcpyHostToDevice,
				   o->up));
	o->bytes += count * sizeof(float4);
	if (vel) {
		CUDA_CHECK(cudaMemcpyAsync(o->d_vel[b], vel, count * sizeof(float4),
					   cudaMemcpyHostToDevice, o->up));
		o->bytes += count * sizeof(float4);
	}
	if (comp) {
		CUDA_CHECK(cudaMemcpyAsync(o->d_comp[b], comp, count * sizeof(uint16_t),
					   cudaMemcpyHostToDevice, o->up));
		o->bytes += count * sizeof(uint16_t);
	}
	CUDA_CHECK(cudaEventRecord(o->ev[4 * k + 1], o->up));
	CUDA_CHECK(cudaEventRecord(o->ev_up[b], o->up));
	return 0;
}

/* Style smooth: acc += the chunk's picture (level 0 of d_hdr). One thread
 * per float: 8 bytes read, 4 written. */
__global__ void gr_ooc_add(float *acc, const float *hdr, size_t nv)
{
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nv)
		acc[i] += hdr[i];
}

/* One picture (the frame's, or a stereo eye's) of every chunk of src into
 * d_hdr, with the screen diffuse layer; gr_picture's out-of-core twin. */
static int gr_ooc_picture(struct gpu_render *gr, const struct gr_src *src, size_t n,
			  const struct render_camera *cam)
{
	struct gr_ooc *o = gr->ooc;
	cudaStream_t st = gr->stream;
	if (cam->projection != gr->projection) {
		log_error("GPU render: the camera's projection (%d) is not the scene's (%d) "
			  "(internal)", cam->projection, gr->projection);
		return NB_EINPUT;
	}
	struct gr_view v;
	gr_view_of(gr, cam, &v);
	const size_t nv = (size_t)gr->w * gr->h * 3;
	CUDA_CHECK(cudaEventRecord(gr->ev_t[1], st));
	if (gr->stars) {
		if (gr_stars_begin(gr) != 0)
			return NB_ERUNTIME;
	} else {
		CUDA_CHECK(cudaMemsetAsync(o->d_acc, 0, nv * sizeof(float), st));
	}
	const int has_comp = src->st ? src->st->comp != NULL : src->hb->comp != NULL;
	gr->last_pairs = 0;
	for (size_t first = 0; first < n; first += gr->ooc_chunk) {
		const size_t count = n - first < gr->ooc_chunk ? n - first : gr->ooc_chunk;
		const int k = o->k++, b = k & 1;
		if (gr_ooc_upload(gr, src, first, count, b, k) != 0)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaStreamWaitEvent(st, o->ev_up[b], 0));
		CUDA_CHECK(cudaEventRecord(o->ev[4 * k + 2], st));
		struct gpu_render_input in;
		memset(&in, 0, sizeof in);
		in.pos4 = o->d_pos[b];
		in.vel4 = o->vel ? o->d_vel[b] : NULL;
		in.n = count;
		gr->comp_slot = has_comp ? o->d_comp[b] : gr->d_comp; /* d_comp: zeros */
		int rc = 0;
		if (gr->stars) {
			rc = gr_stars_add(gr, &in, &v);
		} else if ((rc = gr_splat(gr, &in, &v, NULL)) == 0) {
			gr_ooc_add<<<gr_blocks(nv), GR_THREADS, 0, st>>>(o->d_acc, gr->d_hdr, nv);
			rc = cudaGetLastError() == cudaSuccess ? 0 : NB_ERUNTIME;
		}
		gr->comp_slot = NULL;
		if (rc)
			return NB_ERUNTIME;
		CUDA_CHECK(cudaEventRecord(o->ev[4 * k + 3], st));
		CUDA_CHECK(cudaEventRecord(o->ev_free[b], st));
	}
	if (!gr->stars)
		CUDA_CHECK(cudaMemcpyAsync(gr->d_hdr, o->d_acc, nv * sizeof(float),
					   cudaMemcpyDeviceToDevice, st));
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	CUDA_CHECK(cudaEventRecord(gr->ev_x[0], st));
	if (gr->diffuse_screen && gr_diffuse_screen(gr) != 0)
		return NB_ERUNTIME;
	CUDA_CHECK(cudaEventRecord(gr->ev_t[2], st));
	return 0;
}

/* gpu_render_frame's sequence (mono, or each stereo eye) over src. */
static int gr_ooc_frame(struct gpu_render *gr, const struct gr_src *src, size_t n, int frame,
			const struct render_camera *cam, int slot)
{
	if (gr_check_slot(gr, slot))
		return NB_EINPUT;
	if (!gr->ooc_chunk) {
		log_error("GPU render: host bodies are drawn only by an out-of-core renderer "
			  "(params.chunk > 0) (internal)");
		return NB_EINPUT;
	}
	if (n > gr->ntotal) {
		log_error("GPU render: %zu bodies, created for at most %zu", n, gr->ntotal);
		return NB_EINPUT;
	}
	struct gr_ooc *o = gr->ooc;
	const int eyes = gr->stereo ? 2 : 1;
	const size_t nch = n ? (n + gr->ooc_chunk - 1) / gr->ooc_chunk : 0;
	if (nch > (size_t)INT32_MAX / 8 || gr_ooc_events(o, (int)nch * eyes) != 0)
		return NB_ERUNTIME;
	if (!src->direct && gr_ooc_staging(gr) != 0)
		return NB_ERUNTIME;
	o->k = 0;
	o->bytes = 0;
	o->stage_ms = 0;
	o->timed = 0;
	CUDA_CHECK(cudaEventRecord(gr->ev_t[0], gr->stream));
	gr->last_adaptive = 0;
	if (!gr->stereo) {
		int rc = gr_ooc_picture(gr, src, n, cam);
		if (rc)
			return rc;
	} else {
		for (int eye = -1; eye <= 1; eye += 2) {
			struct render_camera ec;
			render_eye_camera(cam, eye, &ec);
			int rc = gr_ooc_picture(gr, src, n, &ec);
			if (rc)
				return rc;
			if (gr_eye_finish(gr) != 0 || gr_eye_store(gr, eye) != 0)
				return NB_ERUNTIME;
		}
	}
	int rc = gr_finish(gr, frame, slot);
	o->timed = rc == 0;
	return rc;
}

int gpu_render_frame_host(struct gpu_render *gr, const struct gpu_render_host *hb, int frame,
			  const struct render_camera *cam, int slot)
{
	struct gr_src src = {NULL, hb, 0};
	if (gr->ooc && gr->ooc->vel && hb->n && !hb->vel4) {
		log_error("GPU render: render.color_by and motion blur need the bodies' velocities "
			  "(gpu_render_host.vel4) (internal)");
		return NB_EINPUT;
	}
	src.direct = gr_pinned(hb->pos4) && gr_pinned(hb->comp) &&
		     (!gr->ooc || !gr->ooc->vel || gr_pinned(hb->vel4));
	return gr_ooc_frame(gr, &src, hb->n, frame, cam, slot);
}

int gpu_render_frame_state(struct gpu_render *gr, const struct sim_state *st, int frame,
			   const struct render_camera *cam, int slot)
{
	struct gr_src src = {st, NULL, 0};
	return gr_ooc_frame(gr, &src, st->n, frame, cam, slot);
}

void *gpu_render_host_alloc(size_t bytes)
{
	void *p = NULL;
	cudaError_t e = cudaMallocHost(&p, bytes ? bytes : 1);
	if (e != cudaSuccess) {
		log_error("GPU render: cannot page-lock %zu bytes (%.1f GiB) of host memory: %s", bytes,
			  bytes / 1073741824.0, cudaGetErrorString(e));
		cudaGetLastError();
		return NULL;
	}
	return p;
}

void gpu_render_host_free(void *p)
{
	if (p)
		cudaFreeHost(p);
}

int gpu_render_mirror(const struct gpu_render *gr, const struct sim_state *st,
		      struct gpu_render_host *hb)
{
	memset(hb, 0, sizeof *hb);
	const int vel = gr->color_by || gr->blur_samples > 1;
	const size_t n = st->n, rows = (n ? n : 1) * 4 * sizeof(float);
	const size_t bytes = rows * (vel ? 2 : 1) + (st->comp ? (n ? n : 1) * sizeof(uint16_t) : 0);
	char *p = (char *)gpu_render_host_alloc(bytes);
	if (!p)
		return NB_ERUNTIME;
	float *pos = (float *)p, *v = vel ? (float *)(p + rows) : NULL;
	uint16_t *comp = st->comp ? (uint16_t *)(p + rows * (vel ? 2 : 1)) : NULL;
	render_ooc_pack(st, 0, n, pos, v, comp);
	hb->pos4 = pos;
	hb->vel4 = v;
	hb->comp = comp;
	hb->n = n;
	hb->owned = p;
	return 0;
}

void gpu_render_mirror_free(struct gpu_render_host *hb)
{
	if (!hb)
		return;
	gpu_render_host_free(hb->owned);
	memset(hb, 0, sizeof *hb);
}

int gpu_render_ooc_last_timing(struct gpu_render *gr, struct gpu_render_ooc_timing *t)
{
	memset(t, 0, sizeof *t);
	struct gr_ooc *o = gr->ooc;
	if (!o || !o->timed)
		return 0;
	CUDA_CHECK(cudaEventSynchronize(gr->ev_c[1]));
	float ms = 0;
	for (int k = 0; k < o->k; k++) {
		CUDA_CHECK(cudaEventElapsedTime(&ms, o->ev[4 * k], o->ev[4 * k + 1]));
		t->upload_ms += ms;
		CUDA_CHECK(cudaEventElapsedTime(&ms, o->ev[4 * k + 2], o->ev[4 * k + 3]));
		t->splat_ms += ms;
	}
	if (o->k > 0) {
		CUDA_CHECK(cudaEventElapsedTime(&ms, o->ev[4 * (o->k - 1) + 3], gr->ev_t[3]));
		t->look_ms = ms;
		CUDA_CHECK(cudaEventElapsedTime(&ms, o->ev[0], gr->ev_c[1]));
		t->frame_ms = ms;
	} else {
		CUDA_CHECK(cudaEventElapsedTime(&ms, gr->ev_t[0], gr->ev_t[3]));
		t->look_ms = ms;
		CUDA_CHECK(cudaEventElapsedTime(&ms, gr->ev_t[0], gr->ev_c[1]));
		t->frame_ms = ms;
	}
	t->chunks = o->k;
	t->bytes = o->bytes;
	t->stage_ms = o->stage_ms;
	return 0;
}
