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
 * every box accepts it, tested down a hierarchy of the boxes (struct
 * let_bvh: a cell far from a node's union is accepted for all its boxes at
 * once), so the cost grows with the log of the boxes. The export to a
 * cover is no larger than to the bounds, and the receiver's walk makes the
 * same decisions on either.
 *
 * The bytes (let_wire.h, let_wire.c): a header, the cells, the bodies,
 * checked on import; a received tree is then walked only if it was made
 * with this rank's kernel, opening, multipoles, theta and lengths. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "let.h"
#include "let_wire.h"
#include "tree_internal.h"

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
	return sim_let_build_in(pos, mass, n, s, p, NULL, out);
}

int sim_let_build_in(const double *pos, const double *mass, size_t n, const struct sim_soft *s,
		     const struct sim_params *p, const double *box, struct sim_let_tree **out)
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
		int err = sim_tree_build_in(&lt->t, pos, mass, s->each, n, p->multipoles, box);
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

/* A cell the cover may still split: internal, above walk-group size. */
static int let_splittable(const struct tree_node *nd)
{
	return !nd->leaf && nd->count > TREE_GROUP_NODE_MAX;
}

/* Push cell c on the max-heap h[0..*n) keyed by the cells' counts. */
static void let_heap_push(const struct tree *t, int *h, int *n, int c)
{
	int k = (*n)++;
	while (k > 0 && t->nodes[h[(k - 1) / 2]].count < t->nodes[c].count) {
		h[k] = h[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	h[k] = c;
}

/* Pop the heap's most populous cell. */
static int let_heap_pop(const struct tree *t, int *h, int *n)
{
	const int top = h[0], last = h[--*n];
	int k = 0;
	for (int c; (c = 2 * k + 1) < *n; k = c) {
		if (c + 1 < *n && t->nodes[h[c + 1]].count > t->nodes[h[c]].count)
			c++;
		if (t->nodes[h[c]].count <= t->nodes[last].count)
			break;
		h[k] = h[c];
	}
	h[k] = last;
	return top;
}

/* The frontier (top of the tree, splitting its most populous cell while
 * the children fit in max) starts at the root; a cell of at most
 * TREE_GROUP_NODE_MAX bodies or a leaf is never split, so every walk group
 * lies in one frontier cell. The splittable cells wait in a heap (*heap),
 * the others in done[]: O(max log max). Each box is its cell's bodies'
 * bounds. */
int sim_let_cover(const struct sim_let_tree *lt, int max, double *boxes, int *nbox)
{
	const struct tree *t = &lt->t;
	*nbox = 0;
	if (t->nnodes == 0 || max < 1)
		return 0;
	int *heap = malloc(2 * (size_t)max * sizeof *heap), nh = 0, nd = 0;
	if (!heap) {
		log_error("let: out of memory for a cover of %d boxes", max);
		return NB_ERUNTIME;
	}
	int *done = heap + max;
	if (let_splittable(&t->nodes[0]))
		let_heap_push(t, heap, &nh, 0);
	else
		done[nd++] = 0;
	while (nh > 0) {
		const struct tree_node *c = &t->nodes[heap[0]];
		int nchild = 0;
		for (int o = 0; o < 8; o++)
			nchild += c->child[o] >= 0;
		if (nh + nd - 1 + nchild > max)
			break;
		let_heap_pop(t, heap, &nh);
		for (int o = 0; o < 8; o++) {
			const int k = c->child[o];
			if (k >= 0 && let_splittable(&t->nodes[k]))
				let_heap_push(t, heap, &nh, k);
			else if (k >= 0)
				done[nd++] = k;
		}
	}
	for (int j = 0; j < nh; j++)
		done[nd++] = heap[j];
	for (int j = 0; j < nd; j++) {
		const struct tree_node *c = &t->nodes[done[j]];
		double *b = boxes + 6 * j;
		for (int a = 0; a < 3; a++) {
			b[a] = b[3 + a] = t->pos[3 * c->first + a];
			for (int k = c->first + 1; k < c->first + c->count; k++) {
				b[a] = fmin(b[a], t->pos[3 * k + a]);
				b[3 + a] = fmax(b[3 + a], t->pos[3 * k + a]);
			}
		}
	}
	free(heap);
	*nbox = nd;
	return 0;
}

/* ---- export ---- */

/* The receiver's boxes as a binary hierarchy (node 0 the root, 2 nbox - 1
 * nodes): each node the union of its boxes, split at the median of their
 * centres along its longest side; a leaf is one box. A cell accepted for
 * a node's union is accepted for each of its boxes (d to a box inside is
 * no smaller), so the test of a cell descends only where some box is near. */
struct let_bvh {
	double lo[3], hi[3];
	int kid; /* children kid and kid + 1, or -1: a leaf */
};

/* The receiver: its hierarchy of boxes and the walk's softening with its
 * lengths (top of the file). */
struct let_recv {
	struct let_bvh *node;
	struct tree_soft ws;
};

static double let_centre(const double *box, int i, int axis)
{
	return box[6 * i + axis] + box[6 * i + 3 + axis];
}

/* Reorder idx[0..n) so that idx[k] holds the box of the k-th centre along
 * axis, none before it larger, none after it smaller (Hoare's select). */
static void let_select(int *idx, int n, int k, const double *box, int axis)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		const double pv = let_centre(box, idx[(lo + hi) / 2], axis);
		int i = lo, j = hi;
		while (i <= j) {
			while (let_centre(box, idx[i], axis) < pv)
				i++;
			while (let_centre(box, idx[j], axis) > pv)
				j--;
			if (i <= j) {
				const int x = idx[i];
				idx[i++] = idx[j];
				idx[j--] = x;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* Node k over the boxes idx[0..n) and its subtree; *next: the first free
 * node. */
static void let_bvh_fill(struct let_bvh *node, int k, int *idx, int n, const double *box,
			 int *next)
{
	struct let_bvh *nd = &node[k];
	memcpy(nd->lo, box + 6 * idx[0], sizeof nd->lo);
	memcpy(nd->hi, box + 6 * idx[0] + 3, sizeof nd->hi);
	for (int j = 1; j < n; j++)
		for (int a = 0; a < 3; a++) {
			nd->lo[a] = fmin(nd->lo[a], box[6 * idx[j] + a]);
			nd->hi[a] = fmax(nd->hi[a], box[6 * idx[j] + 3 + a]);
		}
	nd->kid = -1;
	if (n == 1)
		return;
	int axis = 0;
	for (int a = 1; a < 3; a++)
		if (nd->hi[a] - nd->lo[a] > nd->hi[axis] - nd->lo[axis])
			axis = a;
	let_select(idx, n, n / 2, box, axis);
	const int kid = *next;
	nd->kid = kid;
	*next += 2;
	let_bvh_fill(node, kid, idx, n / 2, box, next);
	let_bvh_fill(node, kid + 1, idx + n / 2, n - n / 2, box, next);
}

/* 1 when cell nd is accepted for every box under hierarchy node k. */
static int let_accepted(const struct sim_let_tree *lt, const struct tree_node *nd,
			const struct let_recv *rv, int k)
{
	const struct let_bvh *b = &rv->node[k];
	if (sim_tree_cell_accepted(&lt->t, nd, b->lo, b->hi, lt->theta, lt->opening, &rv->ws))
		return 1;
	return b->kid >= 0 && let_accepted(lt, nd, rv, b->kid) &&
	       let_accepted(lt, nd, rv, b->kid + 1);
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
		const int accept = let_accepted(lt, nd, rv, 0);
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
	struct let_recv rv = {0};
	int *idx = NULL, err = NB_ERUNTIME;
	*buf = NULL;
	*nbytes = 0;
	if (t->t.nnodes > 0 && nbox > 0) {
		rv.ws = sim_tree_soft_of(&t->t, &t->s);
		rv.ws.gmin = 0;
		rv.ws.gmax = t->t.eps ? eps_max : rv.ws.eps;
		rv.node = malloc((2 * (size_t)nbox - 1) * sizeof *rv.node);
		idx = malloc((size_t)nbox * sizeof *idx);
		pl.src = malloc((size_t)t->t.nnodes * sizeof *pl.src);
		pl.meta = malloc((size_t)t->t.nnodes * LET_CELL_I * sizeof *pl.meta);
		if (!rv.node || !idx || !pl.src || !pl.meta)
			goto oom;
		int next = 1;
		for (int b = 0; b < nbox; b++)
			idx[b] = b;
		let_bvh_fill(rv.node, 0, idx, nbox, boxes, &next);
		let_plan(t, &rv, &pl);
	}
	const struct let_header h = sim_let_wire_header(&pl, (int)t->s.kernel, (int)t->opening,
							t->multipoles, t->theta, t->s.each != NULL);
	const size_t len = sim_let_wire_size(&h);
	unsigned char *b = malloc(len);
	if (!b)
		goto oom;
	sim_let_wire_write(&t->t, &pl, &h, b);
	*buf = b;
	*nbytes = len;
	err = 0;
oom:
	if (err)
		log_error("let: out of memory exporting %d cells to %d boxes", t->t.nnodes, nbox);
	free(pl.src);
	free(pl.meta);
	free(rv.node);
	free(idx);
	return err;
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
	return sim_let_accel_active(t, NULL, bufs, nbytes, nbuf, acc, pot, work);
}

int sim_let_accel_active(const struct sim_let_tree *t, const unsigned char *active,
			 const void *const *bufs, const size_t *nbytes, int nbuf, double *acc,
			 double *pot, double *work)
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
		err = sim_let_wire_read(what, bufs[got], nbytes[got], t->multipoles, &h, &more[got]);
		if (!err && (err = let_same_walk(what, &h, t)))
			sim_tree_free(&more[got]);
	}
	if (!err)
		err = sim_tree_accel_walk(&t->t, &t->s, t->theta, t->multipoles,
					  t->opening, active, acc, pot, work, more, nbuf);
	for (int j = 0; more && j < nbuf; j++)
		sim_tree_free(&more[j]);
	free(more);
	return err;
}
