/* let.c - locally essential trees (see let.h; Salmon & Warren 1994,
 * Bedorf et al. 2012): a rank's tree is sim/tree.c's (tree_internal.h),
 * the export a pruned copy of it, the import a struct tree that the same
 * group walk visits after the own one.
 *
 * Export (let_plan): a breadth-first walk of the own tree from the root.
 * A cell is accepted when sim_tree_cell_accepted passes for the receiver's
 * whole box [lo, hi] (d the distance from its centre of mass to the box,
 * the most open case of the walk's criterion; the soft paths' extra
 * opening with the group's largest length the receiver's eps_max and its
 * smallest 0, so the kernel's reach is never under-estimated). Any group
 * of the receiver lies in the box, so its d is no smaller, its cell
 * accepted if the box's is (both comparisons are monotone in d, also in
 * floating point: the group's box is inside the receiver's). An accepted
 * cell goes as its moments (pruned), except a leaf of at most
 * TREE_LEAF_P2P bodies, which the walk lists body by body, so it goes
 * with its bodies; a rejected leaf goes with its bodies; a rejected
 * internal cell goes with its children, which are sent contiguously after
 * it (breadth-first order: every child index exceeds its parent's).
 *
 * Cover (sim_let_cover): one box round a domain of the Morton curve also
 * holds the space between its pieces (the curve's first half is not a
 * half-space), often much of the other domains: to such a box they would
 * export nearly everything. A cover is the bounds of the bodies of each
 * cell of a frontier near the top of the receiver's tree (its most
 * populous cells split while the boxes fit, never a cell of walk-group
 * size), so every group lies in one box; a cell goes as moments when
 * every box accepts it. The export to a cover is no larger than to the
 * bounds, and the receiver's walk makes the same decisions on either.
 *
 * The buffer: a 64-byte header (magic, version, the sizes of what follows,
 * the sender's kernel, opening, multipoles and theta, the counts), then
 * LET_CELL_D doubles per cell (com, mass, q[6], T, bmax, centre, half,
 * eps_max, eps2_mean), LET_CELL_I int32 per cell (first child, flags:
 * children mask | leaf | pruned, first body, body count), and 4 or 5
 * doubles per body (x y z m, and eps with lengths per body). The import
 * (let_import) checks the length against the counts before reading, every
 * value finite, every index in range and every cell but the root the child
 * of exactly one earlier cell, no deeper than TREE_MAX_DEPTH (the walk's
 * stack), and that the sender walked with this rank's parameters. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "let.h"
#include "tree_internal.h"

#define LET_MAGIC 0x544c424eu /* "NBLT" little-endian */
#define LET_VERSION 1u
#define LET_CELL_D 18
#define LET_CELL_I 4
#define LET_LEAF 0x100
#define LET_PRUNED 0x200
#define LET_MAX_COUNT ((uint64_t)1 << 30) /* the CPU tree's limit */

struct let_header {
	uint32_t magic, version;
	uint32_t header_bytes, cell_doubles, cell_ints, body_doubles;
	int32_t kernel, opening, multipoles;
	uint32_t reserved;
	uint64_t ncells, nbodies;
	double theta;
};
_Static_assert(sizeof(struct let_header) == 64, "the header's layout is 64 bytes");

struct sim_let_tree {
	struct tree t; /* over the own bodies; unbuilt (nnodes 0) when n = 0 */
	struct sim_soft s;
	double theta;
	int multipoles;
	enum scene_opening opening;
	double lo[3], hi[3];
};

int sim_let_build(const double *pos, const double *mass, size_t n, const struct sim_soft *s,
		  const struct sim_params *p, struct sim_let_tree **out)
{
	*out = NULL;
	if (n > LET_MAX_COUNT) {
		log_error("let: %zu bodies is more than the CPU tree supports (2^30)", n);
		return NB_ERUNTIME;
	}
	struct sim_let_tree *lt = calloc(1, sizeof *lt);
	if (!lt) {
		log_error("let: out of memory");
		return NB_ERUNTIME;
	}
	lt->s = *s;
	lt->theta = p->theta;
	lt->multipoles = p->multipoles;
	lt->opening = p->opening;
	if (n > 0) {
		int err = sim_tree_build(&lt->t, pos, mass, s->each, n, p->multipoles);
		if (err) {
			free(lt);
			return err;
		}
		for (int a = 0; a < 3; a++)
			lt->lo[a] = lt->hi[a] = pos[a];
		for (size_t i = 1; i < n; i++)
			for (int a = 0; a < 3; a++) {
				lt->lo[a] = fmin(lt->lo[a], pos[3 * i + a]);
				lt->hi[a] = fmax(lt->hi[a], pos[3 * i + a]);
			}
	}
	*out = lt;
	return 0;
}

void sim_let_bounds(const struct sim_let_tree *t, double lo[3], double hi[3])
{
	memcpy(lo, t->lo, sizeof t->lo);
	memcpy(hi, t->hi, sizeof t->hi);
}

void sim_let_free(struct sim_let_tree **t)
{
	if (!*t)
		return;
	sim_tree_free(&(*t)->t);
	free(*t);
	*t = NULL;
}

/* ---- the receiver's cover ---- */

/* The frontier's cell j of the largest count that may still be split (an
 * internal cell above the walk groups' cells), or -1. */
static int let_cover_pick(const struct tree *t, const int *front, int nf)
{
	int best = -1;
	for (int j = 0; j < nf; j++) {
		const struct tree_node *nd = &t->nodes[front[j]];
		if (nd->leaf || nd->count <= TREE_GROUP_NODE_MAX)
			continue;
		if (best < 0 || nd->count > t->nodes[front[best]].count)
			best = j;
	}
	return best;
}

/* The frontier (top of the tree, splitting its most populous cell while
 * the children fit in max) starts at the root; a cell of at most
 * TREE_GROUP_NODE_MAX bodies or a leaf is never split, so every walk group
 * lies in one frontier cell; each box is its cell's bodies' bounds. */
int sim_let_cover(const struct sim_let_tree *lt, int max, double *boxes, int *nbox)
{
	const struct tree *t = &lt->t;
	*nbox = 0;
	if (t->nnodes == 0 || max < 1)
		return 0;
	int *front = malloc((size_t)max * sizeof *front), nf = 1;
	if (!front) {
		log_error("let: out of memory for a cover of %d boxes", max);
		return NB_ERUNTIME;
	}
	front[0] = 0;
	for (int j; (j = let_cover_pick(t, front, nf)) >= 0;) {
		const struct tree_node *nd = &t->nodes[front[j]];
		int nchild = 0, c[8];
		for (int o = 0; o < 8; o++)
			if (nd->child[o] >= 0)
				c[nchild++] = nd->child[o];
		if (nf - 1 + nchild > max)
			break;
		front[j] = c[0];
		for (int k = 1; k < nchild; k++)
			front[nf++] = c[k];
	}
	for (int j = 0; j < nf; j++) {
		const struct tree_node *nd = &t->nodes[front[j]];
		double *b = boxes + 6 * j;
		for (int a = 0; a < 3; a++) {
			b[a] = b[3 + a] = t->pos[3 * nd->first + a];
			for (int k = nd->first + 1; k < nd->first + nd->count; k++) {
				b[a] = fmin(b[a], t->pos[3 * k + a]);
				b[3 + a] = fmax(b[3 + a], t->pos[3 * k + a]);
			}
		}
	}
	free(front);
	*nbox = nf;
	return 0;
}

/* ---- export ---- */

/* What goes: src[c] the own cell sent as cell c, meta[LET_CELL_I c] its
 * ints; nbody the bodies sent. */
struct let_plan {
	int *src;
	int32_t *meta;
	int ncell, nbody;
};

/* The receiver: its boxes (lo, hi: 6 doubles each), their union, and the
 * walk's softening with its lengths (top of the file). */
struct let_recv {
	const double *box;
	int nbox;
	double lo[3], hi[3];
	struct tree_soft ws;
};

/* 1 when cell nd is accepted for every box of the receiver: for their
 * union first (then for each, as d to a box is no smaller), else for each
 * box alone. */
static int let_accepted(const struct sim_let_tree *lt, const struct tree_node *nd,
			const struct let_recv *rv)
{
	const struct tree *t = &lt->t;
	if (sim_tree_cell_accepted(t, nd, rv->lo, rv->hi, lt->theta, lt->opening, &rv->ws))
		return 1;
	for (int b = 0; b < rv->nbox; b++) {
		const double *x = rv->box + 6 * b;
		if (!sim_tree_cell_accepted(t, nd, x, x + 3, lt->theta, lt->opening, &rv->ws))
			return 0;
	}
	return 1;
}

/* The breadth-first walk of the top of the file into pl (its arrays sized
 * for every cell of the tree). */
static void let_plan(const struct sim_let_tree *lt, const struct let_recv *rv,
		     struct let_plan *pl)
{
	const struct tree *t = &lt->t;
	pl->src[0] = 0;
	pl->ncell = 1;
	pl->nbody = 0;
	for (int c = 0; c < pl->ncell; c++) {
		const struct tree_node *nd = &t->nodes[pl->src[c]];
		int32_t *m = pl->meta + LET_CELL_I * c;
		const int accept = let_accepted(lt, nd, rv);
		m[0] = -1;
		m[2] = m[3] = 0;
		if (nd->leaf && (!accept || nd->count <= TREE_LEAF_P2P)) {
			m[1] = LET_LEAF;
			m[2] = pl->nbody;
			m[3] = nd->count;
			pl->nbody += nd->count;
		} else if (accept) {
			m[1] = LET_PRUNED;
		} else {
			m[0] = pl->ncell;
			m[1] = 0;
			for (int o = 0; o < 8; o++) {
				if (nd->child[o] < 0)
					continue;
				m[1] |= 1 << o;
				pl->src[pl->ncell++] = nd->child[o];
			}
		}
	}
}

/* The cells' doubles of node nd into d[LET_CELL_D] (each: lengths per
 * body; without, the tree never sets the cells' eps fields: zeros go). */
static void let_put_cell(const struct tree_node *nd, int each, double *d)
{
	memcpy(d, nd->com, 3 * sizeof *d);
	d[3] = nd->mass;
	memcpy(d + 4, nd->q, 6 * sizeof *d);
	d[10] = nd->tr;
	d[11] = nd->bmax;
	memcpy(d + 12, nd->center, 3 * sizeof *d);
	d[15] = nd->half;
	d[16] = each ? nd->eps_max : 0;
	d[17] = each ? nd->eps2_mean : 0;
}

/* The buffer of plan pl into b (its length from the plan). */
static void let_write(const struct sim_let_tree *lt, const struct let_plan *pl, int bd,
		      unsigned char *b)
{
	const struct tree *t = &lt->t;
	const struct let_header h = {.magic = LET_MAGIC, .version = LET_VERSION,
				     .header_bytes = sizeof h, .cell_doubles = LET_CELL_D,
				     .cell_ints = LET_CELL_I, .body_doubles = (uint32_t)bd,
				     .kernel = (int32_t)lt->s.kernel, .opening = (int32_t)lt->opening,
				     .multipoles = lt->multipoles, .ncells = (uint64_t)pl->ncell,
				     .nbodies = (uint64_t)pl->nbody, .theta = lt->theta};
	memcpy(b, &h, sizeof h);
	unsigned char *cd = b + sizeof h, *ci = cd + (size_t)pl->ncell * LET_CELL_D * 8,
		      *bb = ci + (size_t)pl->ncell * LET_CELL_I * 4;
	memcpy(ci, pl->meta, (size_t)pl->ncell * LET_CELL_I * 4);
	for (int c = 0; c < pl->ncell; c++) {
		const struct tree_node *nd = &t->nodes[pl->src[c]];
		double d[LET_CELL_D];
		let_put_cell(nd, t->eps != NULL, d);
		memcpy(cd + (size_t)c * sizeof d, d, sizeof d);
		if (!(pl->meta[LET_CELL_I * c + 1] & LET_LEAF))
			continue;
		for (int k = nd->first; k < nd->first + nd->count; k++) {
			double v[5] = {t->pos[3 * k], t->pos[3 * k + 1], t->pos[3 * k + 2], t->mass[k],
				       t->eps ? t->eps[k] : 0};
			const size_t j = (size_t)pl->meta[LET_CELL_I * c + 2] + (size_t)(k - nd->first);
			memcpy(bb + j * (size_t)bd * 8, v, (size_t)bd * 8);
		}
	}
}

int sim_let_export(const struct sim_let_tree *t, const double lo[3], const double hi[3],
		   double eps_max, void **buf, size_t *nbytes)
{
	const double box[6] = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
	return sim_let_export_cover(t, box, 1, eps_max, buf, nbytes);
}

int sim_let_export_cover(const struct sim_let_tree *t, const double *boxes, int nbox,
			 double eps_max, void **buf, size_t *nbytes)
{
	struct let_plan pl = {0};
	const int bd = t->s.each ? 5 : 4;
	*buf = NULL;
	*nbytes = 0;
	if (t->t.nnodes > 0 && nbox > 0) {
		struct let_recv rv = {.box = boxes, .nbox = nbox, .ws = sim_tree_soft_of(&t->t, &t->s)};
		rv.ws.gmin = 0;
		rv.ws.gmax = t->t.eps ? eps_max : rv.ws.eps;
		memcpy(rv.lo, boxes, sizeof rv.lo);
		memcpy(rv.hi, boxes + 3, sizeof rv.hi);
		for (int b = 1; b < nbox; b++)
			for (int a = 0; a < 3; a++) {
				rv.lo[a] = fmin(rv.lo[a], boxes[6 * b + a]);
				rv.hi[a] = fmax(rv.hi[a], boxes[6 * b + 3 + a]);
			}
		pl.src = malloc((size_t)t->t.nnodes * sizeof *pl.src);
		pl.meta = malloc((size_t)t->t.nnodes * LET_CELL_I * sizeof *pl.meta);
		if (!pl.src || !pl.meta)
			goto oom;
		let_plan(t, &rv, &pl);
	}
	const size_t len = sizeof(struct let_header) +
			   (size_t)pl.ncell * (LET_CELL_D * 8 + LET_CELL_I * 4) +
			   (size_t)pl.nbody * (size_t)bd * 8;
	unsigned char *b = malloc(len);
	if (!b)
		goto oom;
	let_write(t, &pl, bd, b);
	free(pl.src);
	free(pl.meta);
	*buf = b;
	*nbytes = len;
	return 0;
oom:
	log_error("let: out of memory exporting %d cells", t->t.nnodes);
	free(pl.src);
	free(pl.meta);
	return NB_ERUNTIME;
}

/* ---- import ---- */

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
	if (h->header_bytes != sizeof *h || h->cell_doubles != LET_CELL_D ||
	    h->cell_ints != LET_CELL_I || (h->body_doubles != 4 && h->body_doubles != 5)) {
		log_error("let: %s: layout %u/%u/%u/%u is not this program's (%zu/%d/%d/4 or 5)",
			  what, (unsigned)h->header_bytes, (unsigned)h->cell_doubles,
			  (unsigned)h->cell_ints, (unsigned)h->body_doubles, sizeof *h, LET_CELL_D,
			  LET_CELL_I);
		return NB_ERUNTIME;
	}
	if (h->ncells > LET_MAX_COUNT || h->nbodies > LET_MAX_COUNT ||
	    (h->ncells == 0 && h->nbodies > 0)) {
		log_error("let: %s: counts %llu cells, %llu bodies are out of range", what,
			  (unsigned long long)h->ncells, (unsigned long long)h->nbodies);
		return NB_ERUNTIME;
	}
	const uint64_t len = sizeof *h + h->ncells * (LET_CELL_D * 8 + LET_CELL_I * 4) +
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

/* The cells of buf (header h) into t->nodes. 0 or NB_ERUNTIME (logged). */
static int let_read_cells(const char *what, const unsigned char *buf, const struct let_header *h,
			  struct tree *t)
{
	const int nc = (int)h->ncells;
	const unsigned char *cd = buf + sizeof *h, *ci = cd + (size_t)nc * LET_CELL_D * 8;
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
		double d[LET_CELL_D];
		int32_t m[LET_CELL_I];
		memcpy(d, cd + (size_t)c * sizeof d, sizeof d);
		memcpy(m, ci + (size_t)c * sizeof m, sizeof m);
		if (c > 0 && parent[c] < 0) {
			why = "cell is nobody's child";
			goto fail;
		}
		/* all finite; mass, bmax, half and the lengths not negative */
		if (!let_finite(d, LET_CELL_D, LET_CELL_D) || d[3] < 0 || d[11] < 0 || d[15] < 0 ||
		    d[16] < 0 || d[17] < 0) {
			why = "a value is not finite or is negative";
			goto fail;
		}
		memcpy(nd->com, d, sizeof nd->com);
		nd->mass = d[3];
		memcpy(nd->q, d + 4, sizeof nd->q);
		nd->tr = d[10];
		nd->bmax = d[11];
		memcpy(nd->center, d + 12, sizeof nd->center);
		nd->half = d[15];
		nd->eps_max = d[16];
		nd->eps2_mean = d[17];
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
	const unsigned char *bb = buf + sizeof *h + h->ncells * (LET_CELL_D * 8 + LET_CELL_I * 4);
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

/* Buffer buf (nbytes) as a foreign tree *t (multipoles: the walk's), every
 * part checked (top of the file). 0 or NB_ERUNTIME (logged; t zeroed). */
static int let_import(const char *what, const void *buf, size_t nbytes, int multipoles,
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
	int err = let_import("buffer", buf, nbytes, 2, &h, &t);
	if (err)
		return err;
	*ncells = (size_t)h.ncells;
	*nbodies = (size_t)h.nbodies;
	sim_tree_free(&t);
	return 0;
}

/* 0 when h was made with lt's parameters, else NB_ERUNTIME (logged). */
static int let_same_walk(const char *what, const struct let_header *h,
			 const struct sim_let_tree *lt)
{
	/* an empty export's layout says nothing (an empty rank's lengths may be NULL) */
	const int empty = h->ncells == 0,
		  each = (h->body_doubles == 5) == (lt->s.each != NULL) || empty;
	if (h->kernel == (int32_t)lt->s.kernel && h->opening == (int32_t)lt->opening &&
	    h->multipoles == lt->multipoles && h->theta == lt->theta && each)
		return 0;
	log_error("let: %s: made for kernel %d, opening %d, multipoles %d, theta %g, %s; this "
		  "rank walks kernel %d, opening %d, multipoles %d, theta %g, %s",
		  what, (int)h->kernel, (int)h->opening, (int)h->multipoles, h->theta,
		  h->body_doubles == 5 ? "lengths per body" : "one length", (int)lt->s.kernel,
		  (int)lt->opening, lt->multipoles, lt->theta,
		  lt->s.each ? "lengths per body" : "one length");
	return NB_ERUNTIME;
}

int sim_let_accel(const struct sim_let_tree *t, const void *const *bufs, const size_t *nbytes,
		  int nbuf, double *acc, double *pot, double *work)
{
	if (t->t.nnodes == 0)
		return 0;
	struct tree *more = calloc(nbuf > 0 ? (size_t)nbuf : 1, sizeof *more);
	int err = more ? 0 : NB_ERUNTIME, got = 0;
	if (!more)
		log_error("let: out of memory for %d received trees", nbuf);
	for (; !err && got < nbuf; got++) {
		char what[32];
		struct let_header h;
		snprintf(what, sizeof what, "received tree %d", got);
		err = let_import(what, bufs[got], nbytes[got], t->multipoles, &h, &more[got]);
		if (!err && (err = let_same_walk(what, &h, t)))
			sim_tree_free(&more[got]);
	}
	if (!err)
		err = sim_tree_accel_walk(&t->t, &t->s, t->theta, t->multipoles,
					  t->opening, NULL, acc, pot, work, more, nbuf);
	for (int j = 0; more && j < nbuf; j++)
		sim_tree_free(&more[j]);
	free(more);
	return err;
}
