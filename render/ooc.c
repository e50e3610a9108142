/* ooc.c - out-of-core drawing's host side (render.h, "out of core"): the
 * chunk plan under a device memory budget, and the packing of a state's
 * bodies into the float4 rows the GPU renderer uploads
 * (render/cuda/render_ooc.cu; docs/snapshots.md, "Bigger than the GPU"). */
#include <string.h>

#include "../scene/log.h"
#include "render.h"

int render_ooc_plan(size_t n, size_t budget, size_t fixed, size_t per_body, size_t max_chunk,
		    struct render_ooc_plan *p)
{
	memset(p, 0, sizeof *p);
	if (per_body == 0) {
		log_error("out-of-core plan: 0 bytes per body (internal)");
		return NB_EINPUT;
	}
	const size_t least = n < RENDER_OOC_MIN_CHUNK ? (n ? n : 1) : RENDER_OOC_MIN_CHUNK;
	if (budget < fixed || (budget - fixed) / per_body < least) {
		log_error("render.gpu_memory: a budget of %zu bytes (%.1f MiB) is too small: the frame's "
			  "buffers take %zu bytes (%.1f MiB) and a chunk of %zu bodies %zu more "
			  "(%zu bytes per body)",
			  budget, budget / 1048576.0, fixed, fixed / 1048576.0, least, least * per_body,
			  per_body);
		return NB_EINPUT;
	}
	size_t chunk = (budget - fixed) / per_body;
	if (max_chunk && chunk > max_chunk)
		chunk = max_chunk;
	if (chunk > n)
		chunk = n ? n : 1;
	p->n = n;
	p->chunk = chunk;
	p->nchunks = n ? (n + chunk - 1) / chunk : 1;
	p->last = n ? n - (p->nchunks - 1) * chunk : 0;
	p->bytes = fixed + chunk * per_body;
	return 0;
}

void render_ooc_chunk(const struct render_ooc_plan *p, size_t k, size_t *first, size_t *count)
{
	*first = k * p->chunk;
	*count = k + 1 < p->nchunks ? p->chunk : p->last;
	if (*first > p->n) { /* past the end: nothing */
		*first = p->n;
		*count = 0;
	}
}

void render_ooc_pack(const struct sim_state *st, size_t first, size_t count, float *pos4,
		     float *vel4, uint16_t *comp)
{
	const long long m = (long long)count;
#pragma omp parallel for schedule(static)
	for (long long k = 0; k < m; k++) {
		const size_t i = first + (size_t)k;
		float *p = pos4 + 4 * k;
		p[0] = (float)st->pos[3 * i];
		p[1] = (float)st->pos[3 * i + 1];
		p[2] = (float)st->pos[3 * i + 2];
		p[3] = (float)st->mass[i];
		if (vel4) {
			float *v = vel4 + 4 * k;
			v[0] = (float)st->vel[3 * i];
			v[1] = (float)st->vel[3 * i + 1];
			v[2] = (float)st->vel[3 * i + 2];
			v[3] = 0.0f;
		}
		if (comp)
			comp[k] = st->comp ? st->comp[i] : 0;
	}
}
