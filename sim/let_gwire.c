/* let_gwire.c - the GPU locally essential tree's bytes: the header and
 * the checked reader (let_gwire.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/log.h"
#include "let_gwire.h"

size_t sim_glet_bytes(uint64_t ncells, uint64_t nbodies)
{
	if (ncells >= SIM_GLET_MAX_COUNT || nbodies >= SIM_GLET_MAX_COUNT)
		return 0;
	return sizeof(struct sim_glet_header) + (size_t)ncells * SIM_GLET_CELL_BYTES +
	       (size_t)nbodies * SIM_GLET_BODY_BYTES;
}

void sim_glet_header_make(struct sim_glet_header *h, uint64_t ncells, uint64_t nbodies, int multipoles,
		      int criterion, int leaf_p2p, float theta, float eps)
{
	memset(h, 0, sizeof *h);
	h->magic = SIM_GLET_MAGIC;
	h->version = SIM_GLET_VERSION;
	h->header_bytes = (uint32_t)sizeof *h;
	h->cell_bytes = SIM_GLET_CELL_BYTES;
	h->multipoles = multipoles;
	h->criterion = criterion;
	h->leaf_p2p = leaf_p2p;
	h->theta = theta;
	h->eps = eps;
	h->ncells = ncells;
	h->nbodies = nbodies;
}

static int gw_finite(const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

/* The cells' structure: breadth-first, each internal cell's children the
 * next unclaimed cells, depths bounded, leaves' bodies in range, moments
 * only (0, 0) with the forced acceptance. */
static int gw_cells(const struct sim_glet_view *v, const char *what)
{
	const uint64_t nc = v->h->ncells, nb = v->h->nbodies;
	uint8_t *depth = malloc(nc ? nc : 1);
	if (!depth) {
		log_error("%s: out of memory checking %llu cells", what, (unsigned long long)nc);
		return NB_ERUNTIME;
	}
	uint64_t next = 1; /* the first cell no parent has claimed */
	int rc = 0;
	if (nc)
		depth[0] = 0;
	for (uint64_t c = 0; c < nc && !rc; c++) {
		const int32_t x = v->kids[2 * c], y = v->kids[2 * c + 1];
		const float *op = v->open + 4 * c, *m0 = v->mq0 + 4 * c, *m1 = v->mq1 + 4 * c;
		if (c >= next) {
			log_error("%s: cell %llu is no cell's child", what, (unsigned long long)c);
			rc = NB_EINPUT;
		} else if (!gw_finite(op, 3) || isnan(op[3]) || op[3] < -1.0f || !gw_finite(m0, 4) ||
			   !gw_finite(m1, 4) || m0[0] < 0.0f) {
			log_error("%s: cell %llu has a value that is not finite or a negative mass", what,
				  (unsigned long long)c);
			rc = NB_EINPUT;
		} else if (y > 0) {
			if (y > 8 || (uint64_t)x != next || (uint64_t)x + (uint64_t)y > nc) {
				log_error("%s: cell %llu's children (%d at %d) are not the next %d cells "
					  "of %llu",
					  what, (unsigned long long)c, y, x, y, (unsigned long long)nc);
				rc = NB_EINPUT;
			} else if (depth[c] + 1 >= SIM_GLET_MAX_DEPTH) {
				log_error("%s: cell %llu's children are deeper than %d levels", what,
					  (unsigned long long)c, SIM_GLET_MAX_DEPTH);
				rc = NB_EINPUT;
			} else {
				for (int32_t k = 0; k < y; k++)
					depth[(uint64_t)x + (uint64_t)k] = (uint8_t)(depth[c] + 1);
				next += (uint64_t)y;
			}
		} else if (y < 0) {
			if (x < 0 || (uint64_t)x + (uint64_t)(-(int64_t)y) > nb) {
				log_error("%s: leaf %llu's bodies [%d, %lld) pass the %llu sent", what,
					  (unsigned long long)c, x, (long long)x - (long long)y,
					  (unsigned long long)nb);
				rc = NB_EINPUT;
			}
		} else if (x != 0 || op[3] != -1.0f) {
			log_error("%s: cell %llu is sent as moments only but not marked accepted", what,
				  (unsigned long long)c);
			rc = NB_EINPUT;
		}
	}
	if (!rc && next != (nc ? nc : 1) && nc) {
		log_error("%s: %llu of %llu cells are no cell's children", what,
			  (unsigned long long)(nc - next), (unsigned long long)nc);
		rc = NB_EINPUT;
	}
	free(depth);
	return rc;
}

int sim_glet_check(const void *buf, size_t nbytes, const char *what, struct sim_glet_view *v)
{
	memset(v, 0, sizeof *v);
	const struct sim_glet_header *h = buf;
	if (!buf || nbytes < sizeof *h || ((uintptr_t)buf & 3u)) {
		log_error("%s: %zu bytes: no locally essential tree's header", what, nbytes);
		return NB_EINPUT;
	}
	if (h->magic != SIM_GLET_MAGIC || h->version != SIM_GLET_VERSION ||
	    h->header_bytes != sizeof *h || h->cell_bytes != SIM_GLET_CELL_BYTES) {
		log_error("%s: not a GPU locally essential tree of version %u", what, SIM_GLET_VERSION);
		return NB_EINPUT;
	}
	const size_t want = sim_glet_bytes(h->ncells, h->nbodies);
	if (!want || want != nbytes) {
		log_error("%s: the header says %llu cells and %llu bodies (%zu bytes), the buffer has "
			  "%zu bytes",
			  what, (unsigned long long)h->ncells, (unsigned long long)h->nbodies, want,
			  nbytes);
		return NB_EINPUT;
	}
	if (h->ncells == 0 && h->nbodies != 0) {
		log_error("%s: %llu bodies and no cells", what, (unsigned long long)h->nbodies);
		return NB_EINPUT;
	}
	const char *p = (const char *)buf + sizeof *h;
	const size_t nc = (size_t)h->ncells;
	v->h = h;
	v->kids = (const int32_t *)p;
	v->open = (const float *)(p + nc * 8);
	v->mq0 = v->open + 4 * nc;
	v->mq1 = v->mq0 + 4 * nc;
	v->body = v->mq1 + 4 * nc;
	const size_t nb = (size_t)h->nbodies;
	for (size_t i = 0; i < nb; i++)
		if (!gw_finite(v->body + 4 * i, 4) || v->body[4 * i + 3] < 0.0f) {
			log_error("%s: body %zu has a value that is not finite or a negative mass", what,
				  i);
			return NB_EINPUT;
		}
	return gw_cells(v, what);
}

int sim_glet_same_walk(const struct sim_glet_header *h, int multipoles, int criterion, int leaf_p2p,
		   float theta, float eps, const char *what)
{
	if (h->multipoles == multipoles && h->criterion == criterion && h->leaf_p2p == leaf_p2p &&
	    h->theta == theta && h->eps == eps)
		return 1;
	log_error("%s: made by a walk of multipoles %d, criterion %d, leaf_p2p %d, theta %g, "
		  "softening %g; this rank walks with %d, %d, %d, %g, %g",
		  what, h->multipoles, h->criterion, h->leaf_p2p, h->theta, h->eps, multipoles,
		  criterion, leaf_p2p, theta, eps);
	return 0;
}
