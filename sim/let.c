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
	const size_t len = sim_let_wire_size(&pl, bd);
	unsigned char *b = malloc(len);
	if (!b)
		goto oom;
	const struct let_header h = {.body_doubles = (uint32_t)bd,
				     .kernel = (int32_t)t->s.kernel,
				     .opening = (int32_t)t->opening,
				     .multipoles = t->multipoles,
				     .theta = t->theta};
	sim_let_wire_write(&t->t, &pl, h, b);
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
