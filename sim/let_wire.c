/* let_wire.c - the bytes of a locally essential tree: the writer and the
 * checked reader (layout and checks: let_wire.h). A hostile or truncated
 * buffer is refused with a message naming the buffer, the cell or body
 * and what is wrong, before anything is walked. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "let.h"
#include "let_wire.h"

/* The fields a walk of multipoles and opening, with lengths per body or
 * not (each), reads of a cell. */
static uint32_t let_fields(int multipoles, int opening, int each)
{
	return (multipoles >= 2 ? LET_F_QUAD : 0) | (opening != SCENE_OPENING_BMAX ? LET_F_CUBE : 0) |
	       (each ? LET_F_EPS : 0);
}

/* The doubles a cell of these fields carries. */
static uint32_t let_cell_doubles(uint32_t f)
{
	return 5 + (f & LET_F_QUAD ? 7 : 0) + (f & LET_F_CUBE ? 4 : 0) + (f & LET_F_EPS ? 2 : 0);
}

struct let_header sim_let_wire_header(const struct let_plan *pl, int kernel, int opening,
				      int multipoles, double theta, int each)
{
	const uint32_t f = let_fields(multipoles, opening, each);
	const struct let_header h = {.magic = LET_MAGIC, .version = LET_VERSION,
				     .header_bytes = sizeof h, .cell_doubles = let_cell_doubles(f),
				     .cell_ints = LET_CELL_I, .body_doubles = each ? 5 : 4,
				     .kernel = kernel, .opening = opening, .multipoles = multipoles,
				     .cell_fields = f, .ncells = (uint64_t)pl->ncell,
				     .nbodies = (uint64_t)pl->nbody, .theta = theta};
	return h;
}

size_t sim_let_wire_size(const struct let_header *h)
{
	return sizeof *h + (size_t)h->ncells * (h->cell_doubles * 8 + LET_CELL_I * 4) +
	       (size_t)h->nbodies * h->body_doubles * 8;
}

/* The doubles of node nd's fields f into d (let_cell_doubles(f) of them). */
static void let_put_cell(const struct tree_node *nd, uint32_t f, double *d)
{
	memcpy(d, nd->com, 3 * sizeof *d);
	d[3] = nd->mass;
	d[4] = nd->bmax;
	d += 5;
	if (f & LET_F_QUAD) {
		memcpy(d, nd->q, 6 * sizeof *d);
		d[6] = nd->tr;
		d += 7;
	}
	if (f & LET_F_CUBE) {
		memcpy(d, nd->center, 3 * sizeof *d);
		d[3] = nd->half;
		d += 4;
	}
	if (f & LET_F_EPS) {
		d[0] = nd->eps_max;
		d[1] = nd->eps2_mean;
	}
}

void sim_let_wire_write(const struct tree *t, const struct let_plan *pl,
			const struct let_header *h, unsigned char *b)
{
	const size_t bd = h->body_doubles, cd = h->cell_doubles;
	memcpy(b, h, sizeof *h);
	unsigned char *cb = b + sizeof *h, *ci = cb + (size_t)pl->ncell * cd * 8,
		      *bb = ci + (size_t)pl->ncell * LET_CELL_I * 4;
	if (pl->ncell > 0) /* an empty export has no plan arrays */
		memcpy(ci, pl->meta, (size_t)pl->ncell * LET_CELL_I * 4);
	for (int c = 0; c < pl->ncell; c++) {
		const struct tree_node *nd = &t->nodes[pl->src[c]];
		double d[LET_CELL_DMAX];
		let_put_cell(nd, h->cell_fields, d);
		memcpy(cb + (size_t)c * cd * 8, d, cd * 8);
		if (!(pl->meta[LET_CELL_I * c + 1] & LET_LEAF))
			continue;
		for (int k = nd->first; k < nd->first + nd->count; k++) {
			double v[5] = {t->pos[3 * k], t->pos[3 * k + 1], t->pos[3 * k + 2], t->mass[k],
				       t->eps ? t->eps[k] : 0};
			const size_t j = (size_t)pl->meta[LET_CELL_I * c + 2] + (size_t)(k - nd->first);
			memcpy(bb + j * bd * 8, v, bd * 8);
		}
	}
}

/* The header of buf, checked against its length: 0, or NB_ERUNTIME
 * (logged, naming what). */
static int let_header_read(const char *what, const void *buf, size_t nbytes,
			   struct let_header *h)
{
	if (!buf || nbytes < sizeof *h) {
		log_error("let: %s: %zu bytes, shorter than the %zu-byte header", what, nbytes,
			  sizeof *h);
		return NB_ERUNTIME;
	}
	memcpy(h, buf, sizeof *h);
	if (h->magic != LET_MAGIC || h->version != LET_VERSION) {
		log_error("let: %s: not a tree export of this version (magic %08x, version %u)",
			  what, (unsigned)h->magic, (unsigned)h->version);
		return NB_ERUNTIME;
	}
	const uint32_t f = let_fields(h->multipoles, h->opening, h->body_doubles == 5);
	if (h->header_bytes != sizeof *h || h->cell_fields != f ||
	    h->cell_doubles != let_cell_doubles(f) || h->cell_ints != LET_CELL_I ||
	    (h->body_doubles != 4 && h->body_doubles != 5)) {
		log_error("let: %s: layout %u/%u/%u/%u/%u is not this program's for its walk "
			  "(%zu/%u/%u/%d/4 or 5)",
			  what, (unsigned)h->header_bytes, (unsigned)h->cell_fields,
			  (unsigned)h->cell_doubles, (unsigned)h->cell_ints,
			  (unsigned)h->body_doubles, sizeof *h, (unsigned)f,
			  (unsigned)let_cell_doubles(f), LET_CELL_I);
		return NB_ERUNTIME;
	}
	if (h->ncells > LET_MAX_COUNT || h->nbodies > LET_MAX_COUNT ||
	    (h->ncells == 0 && h->nbodies > 0)) {
		log_error("let: %s: counts %llu cells, %llu bodies are out of range", what,
			  (unsigned long long)h->ncells, (unsigned long long)h->nbodies);
		return NB_ERUNTIME;
	}
	const uint64_t len = sizeof *h + h->ncells * (h->cell_doubles * 8 + LET_CELL_I * 4) +
			     h->nbodies * h->body_doubles * 8;
	if (len != nbytes) {
		log_error("let: %s: %zu bytes, but its counts (%llu cells, %llu bodies) make %llu",
			  what, nbytes, (unsigned long long)h->ncells,
			  (unsigned long long)h->nbodies, (unsigned long long)len);
		return NB_ERUNTIME;
	}
	if (!isfinite(h->theta)) {
		log_error("let: %s: theta is not finite", what);
		return NB_ERUNTIME;
	}
	return 0;
}

/* 1 when the n values of v are finite and, from index nonneg on, >= 0. */
static int let_finite(const double *v, int n, int nonneg)
{
	for (int j = 0; j < n; j++) {
		if (!isfinite(v[j]) || (j >= nonneg && v[j] < 0))
			return 0;
	}
	return 1;
}

/* Cell c's ints m[LET_CELL_I] into nd, checked (the kinds, the ranges,
 * one parent each: parent[], depth[]). 0 or -1 with *why set. */
static int let_cell_links(const int32_t *m, int c, const struct let_header *h,
			  struct tree_node *nd, int *parent, int *depth, const char **why)
{
	const int32_t mask = m[1] & 0xff, kind = m[1] & ~0xff;
	nd->leaf = kind == LET_LEAF;
	nd->pruned = kind == LET_PRUNED;
	nd->first = nd->count = 0;
	for (int o = 0; o < 8; o++)
		nd->child[o] = -1;
	if ((kind != 0 && kind != LET_LEAF && kind != LET_PRUNED) || (kind != 0 && mask) ||
	    (kind == 0 && !mask)) {
		*why = "flags are not one kind of cell";
		return -1;
	}
	if (nd->leaf) {
		if (m[2] < 0 || m[3] < 0 || (uint64_t)m[2] + (uint64_t)m[3] > h->nbodies) {
			*why = "body range out of range";
			return -1;
		}
		nd->first = m[2];
		nd->count = m[3];
		return 0;
	}
	int k = m[0];
	for (int o = 0; o < 8 && mask; o++) {
		if (!(mask >> o & 1))
			continue;
		if (k <= c || (uint64_t)k >= h->ncells || parent[k] >= 0 ||
		    depth[c] >= TREE_MAX_DEPTH) {
			*why = "child index out of range";
			return -1;
		}
		parent[k] = c;
		depth[k] = depth[c] + 1;
		nd->child[o] = k++;
	}
	return 0;
}

/* Node nd's moments from the doubles d of fields f (let_put_cell's order;
 * a field not sent: 0). 0, or -1 when a value is not finite or a mass,
 * bmax, half side or length is negative. */
static int let_get_cell(const double *d, uint32_t f, struct tree_node *nd)
{
	const int n = (int)let_cell_doubles(f);
	if (!let_finite(d, n, n) || d[3] < 0 || d[4] < 0)
		return -1;
	memcpy(nd->com, d, sizeof nd->com);
	nd->mass = d[3];
	nd->bmax = d[4];
	memset(nd->q, 0, sizeof nd->q);
	memset(nd->center, 0, sizeof nd->center);
	nd->tr = nd->half = nd->eps_max = nd->eps2_mean = 0;
	d += 5;
	if (f & LET_F_QUAD) {
		memcpy(nd->q, d, sizeof nd->q);
		nd->tr = d[6];
		d += 7;
	}
	if (f & LET_F_CUBE) {
		memcpy(nd->center, d, sizeof nd->center);
		nd->half = d[3];
		d += 4;
		if (nd->half < 0)
			return -1;
	}
	if (f & LET_F_EPS) {
		nd->eps_max = d[0];
		nd->eps2_mean = d[1];
		if (d[0] < 0 || d[1] < 0)
			return -1;
	}
	return 0;
}

/* The cells of buf (header h) into t->nodes. 0 or NB_ERUNTIME (logged). */
static int let_read_cells(const char *what, const unsigned char *buf, const struct let_header *h,
			  struct tree *t)
{
	const int nc = (int)h->ncells;
	const size_t nd8 = (size_t)h->cell_doubles * 8;
	const unsigned char *cb = buf + sizeof *h, *ci = cb + (size_t)nc * nd8;
	int *parent = malloc((size_t)nc * sizeof *parent), *depth = malloc((size_t)nc * sizeof *depth);
	int err = NB_ERUNTIME, c = 0;
	const char *why = "out of memory";
	if (!parent || !depth)
		goto fail;
	for (int j = 0; j < nc; j++)
		parent[j] = -1;
	depth[0] = 0;
	for (c = 0; c < nc; c++) {
		struct tree_node *nd = &t->nodes[c];
		double d[LET_CELL_DMAX];
		int32_t m[LET_CELL_I];
		memcpy(d, cb + (size_t)c * nd8, nd8);
		memcpy(m, ci + (size_t)c * sizeof m, sizeof m);
		if (c > 0 && parent[c] < 0) {
			why = "cell is nobody's child";
			goto fail;
		}
		if (let_get_cell(d, h->cell_fields, nd)) {
			why = "a value is not finite, or a mass, bmax, side or length is negative";
			goto fail;
		}
		if (let_cell_links(m, c, h, nd, parent, depth, &why))
			goto fail;
	}
	err = 0;
fail:
	if (err)
		log_error("let: %s: cell %d: %s", what, c, why);
	free(parent);
	free(depth);
	return err;
}

/* The bodies of buf (header h) into t's arrays. 0 or NB_ERUNTIME (logged). */
static int let_read_bodies(const char *what, const unsigned char *buf,
			   const struct let_header *h, struct tree *t)
{
	const int bd = (int)h->body_doubles;
	const unsigned char *bb = buf + sizeof *h + h->ncells * (h->cell_doubles * 8 + LET_CELL_I * 4);
	for (size_t k = 0; k < t->n; k++) {
		double v[5];
		memcpy(v, bb + k * (size_t)bd * 8, (size_t)bd * 8);
		if (!let_finite(v, bd, 3)) {
			log_error("let: %s: body %zu: a value is not finite, or its mass or "
				  "softening is negative", what, k);
			return NB_ERUNTIME;
		}
		memcpy(t->pos + 3 * k, v, 3 * sizeof *v);
		t->mass[k] = v[3];
		if (t->eps)
			t->eps[k] = v[4];
	}
	return 0;
}

int sim_let_wire_read(const char *what, const void *buf, size_t nbytes, int multipoles,
		      struct let_header *h, struct tree *t)
{
	memset(t, 0, sizeof *t);
	int err = let_header_read(what, buf, nbytes, h);
	if (err)
		return err;
	t->foreign = 1;
	t->multipoles = multipoles;
	t->n = (size_t)h->nbodies;
	t->nnodes = t->cap = (int)h->ncells;
	t->nodes = malloc((h->ncells ? h->ncells : 1) * sizeof *t->nodes);
	t->pos = malloc((t->n ? t->n : 1) * 3 * sizeof *t->pos);
	t->mass = malloc((t->n ? t->n : 1) * sizeof *t->mass);
	if (h->body_doubles == 5)
		t->eps = malloc((t->n ? t->n : 1) * sizeof *t->eps);
	if (!t->nodes || !t->pos || !t->mass || (h->body_doubles == 5 && !t->eps)) {
		log_error("let: %s: out of memory for %llu cells", what,
			  (unsigned long long)h->ncells);
		err = NB_ERUNTIME;
	}
	if (!err && h->ncells)
		err = let_read_cells(what, buf, h, t);
	if (!err)
		err = let_read_bodies(what, buf, h, t);
	if (err)
		sim_tree_free(t);
	return err;
}

int sim_let_count(const void *buf, size_t nbytes, size_t *ncells, size_t *nbodies)
{
	struct let_header h;
	struct tree t;
	int err = sim_let_wire_read("buffer", buf, nbytes, 2, &h, &t);
	if (err)
		return err;
	*ncells = (size_t)h.ncells;
	*nbodies = (size_t)h.nbodies;
	sim_tree_free(&t);
	return 0;
}
