/* tree.c - Barnes-Hut octree gravity on the CPU (Barnes & Hut 1986), the
 * twin of sim/cuda/tree*.cu and the fallback for large scenes without a GPU.
 * It builds the GPU tree's cells, groups and moments and applies the same
 * opening criteria, in double, so the two differ by float rounding (and
 * bodies that rounding puts in another cell), not by method.
 *
 * Build (serial, O(N log N)): the cube of the GPU's Morton keys (lower
 * corner at the bodies' lower bound, side their largest extent, plus a
 * little slack) is split recursively into octants; a cell with at most
 * TREE_LEAF_MAX bodies, or at depth TREE_MAX_DEPTH (coincident bodies), is
 * a leaf. Bodies are sorted into tree order (Morton order, as on the GPU) so
 * every cell owns a contiguous range, and each cell's moments are summed
 * straight from its bodies: mass, centre of mass, traceless quadrupole
 * Q_ab = sum m (3 y_a y_b - |y|^2 delta_ab) and its trace part
 * T = sum m |y|^2, y = x - com. bmax bounds the bodies' distance from the
 * com as the GPU tree bounds it: exact over a leaf's bodies, and
 * max_c (|com_c - com| + bmax_c) over an internal cell's children. (A cell
 * with one occupied octant has the same bodies, moments and bmax as that
 * octant's cell, which is the node the GPU's compressed octree keeps.)
 *
 * Walk (Barnes 1990 grouping; parallel over groups, dynamic schedule):
 * groups are runs of TREE_GROUP_SIZE consecutive tree-order bodies, cut
 * from the largest cells of at most TREE_GROUP_NODE_MAX bodies (the GPU's
 * walk groups); a group's bodies share one walk and one interaction list.
 * d is the distance from a cell's centre of mass to the nearest point of
 * the group's bounding box (so every body gets the per-body criterion or a
 * stricter one). Opening criteria (enum scene_opening; sim/cuda/tree_build.cu
 * sets the GPU's alike):
 *   bmax (Salmon & Warren 1994): accept when bmax < theta d and bmax < d.
 *     A cell holding a group body has d <= bmax, so it is never accepted.
 *   com (Barnes & Hut 1986): accept when l < theta d, l the cell's side,
 *     and the cell's box does not overlap the group's box (without that,
 *     for theta > 1/sqrt(3) a cell could pass the test while holding the
 *     body itself).
 *   mass (Dehnen 2002; not yet a scene value): as bmax with theta(M) in
 *     place of theta, M the cell's mass, M_tot the root's: theta(M_tot) =
 *     theta, wider for lighter cells (tree_internal.h, sim_tree_mass_scale;
 *     measured against bmax in tests/test_tree_opening.c).
 * theta = 0 opens every cell, so the sum is over exact pairs, as
 * sim_direct_accel. Opened leaves (the group's own among them) interact
 * body by body, skipping j = i, and so do accepted leaves of at most
 * TREE_LEAF_P2P bodies. An accepted cell that is far for the group's size
 * (rho < ratio R, sim_tree_local_ratio: 0.1, 0.15 under mass) goes into one local expansion of
 * the group about its box's centre (tree_local.c), evaluated per body: the
 * GPU's walk does the same (sim/cuda/tree_far.cuh).
 *
 * Accepted cell, with r = x_i - com, s^2 = |r|^2 + eps^2: the Taylor
 * expansion of the softened potential -sum m / |x_i - com - y|_eps to
 * second order in y (d_a d_b (1/s) = (3 r_a r_b - s^2 delta_ab) / s^5),
 *   phi = -M/s - (1/2) (r.Q.r - T eps^2) / s^5
 *   a   = -M r/s^3 + Q.r / s^5 - (5/2) (r.Q.r - T eps^2) r / s^7,
 * the same terms as the GPU walk (sim/cuda/tree_walk.cu). The T eps^2 term
 * matters for cells within a few eps of the body. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "soften.h"
#include "tree_internal.h"
#include "tree_local.h"

/* the GPU tree's defaults (sim/cuda/tree.cu: leaf 16; the groups' sizes
 * are in tree_internal.h) */
#define TREE_LEAF_MAX 16
/* Far cells (sim_tree_local_ratio, the GPU's too): an accepted
 * cell with rho < ratio R, rho the half diagonal of the group's
 * box and R the distance from the box's centre to the cell's centre of
 * mass, goes into the group's local expansion (tree_local.c). */
/* Fewer bodies than this: walk on one thread (a team costs more). */
#define TREE_SERIAL_N 2000

static int tree_new_node(struct tree *t)
{
	if (t->nnodes == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		struct tree_node *p = realloc(t->nodes, (size_t)cap * sizeof *p);
		if (!p)
			return -1;
		t->nodes = p;
		t->cap = cap;
	}
	return t->nnodes++;
}

/* A node's eps_max and eps2_mean from its bodies (lengths per body; a
 * massless node: the plain mean). */
static void tree_moments_eps(struct tree *t, struct tree_node *nd)
{
	double emax = 0, me2 = 0, e2 = 0;
	for (int k = nd->first; k < nd->first + nd->count; k++) {
		const int i = t->order[k];
		const double e = t->eps_in[i];
		emax = fmax(emax, e);
		me2 += t->mass_in[i] * e * e;
		e2 += e * e;
	}
	nd->eps_max = emax;
	nd->eps2_mean = nd->mass > 0 ? me2 / nd->mass : (nd->count > 0 ? e2 / nd->count : 0);
}

/* Moments of a node from its bodies (its range of t->order is final, and
 * its children's moments are done). */
static void tree_moments(struct tree *t, struct tree_node *nd)
{
	const double *x = t->pos_in;
	double m = 0, c[3] = {0, 0, 0};
	for (int k = nd->first; k < nd->first + nd->count; k++) {
		int i = t->order[k];
		double mi = t->mass_in[i];
		m += mi;
		for (int a = 0; a < 3; a++)
			c[a] += mi * x[3 * i + a];
	}
	for (int a = 0; a < 3; a++) {
		/* massless cells keep their geometric centre */
		nd->com[a] = m > 0 ? c[a] / m : nd->center[a];
	}
	nd->mass = m;
	if (t->eps_in)
		tree_moments_eps(t, nd);
	memset(nd->q, 0, sizeof nd->q);
	nd->tr = 0;
	nd->bmax = 0;
	if (!nd->leaf) {
		for (int o = 0; o < 8; o++) {
			if (nd->child[o] < 0)
				continue;
			const struct tree_node *c = &t->nodes[nd->child[o]];
			double s0 = c->com[0] - nd->com[0], s1 = c->com[1] - nd->com[1],
			       s2 = c->com[2] - nd->com[2];
			nd->bmax = fmax(nd->bmax, sqrt(s0 * s0 + s1 * s1 + s2 * s2) + c->bmax);
		}
		if (t->multipoles < 2)
			return;
	}
	for (int k = nd->first; k < nd->first + nd->count; k++) {
		int i = t->order[k];
		double mi = t->mass_in[i];
		double y0 = x[3 * i] - nd->com[0], y1 = x[3 * i + 1] - nd->com[1],
		       y2 = x[3 * i + 2] - nd->com[2];
		double yy = y0 * y0 + y1 * y1 + y2 * y2;
		if (nd->leaf)
			nd->bmax = fmax(nd->bmax, sqrt(yy));
		if (t->multipoles < 2)
			continue;
		nd->tr += mi * yy;
		nd->q[0] += mi * (3 * y0 * y0 - yy);
		nd->q[1] += mi * (3 * y1 * y1 - yy);
		nd->q[2] += mi * (3 * y2 * y2 - yy);
		nd->q[3] += mi * 3 * y0 * y1;
		nd->q[4] += mi * 3 * y0 * y2;
		nd->q[5] += mi * 3 * y1 * y2;
	}
}

/* Fill node k (range [first, first+count) of t->order, cube given) and its
 * subtree. Returns 0 or -1 (out of memory). */
static int tree_build_node(struct tree *t, int k, int first, int count, const double center[3],
			   double half, int depth)
{
	struct tree_node *nd = &t->nodes[k];
	nd->first = first;
	nd->count = count;
	memcpy(nd->center, center, sizeof nd->center);
	nd->half = half;
	for (int o = 0; o < 8; o++)
		nd->child[o] = -1;
	nd->leaf = count <= TREE_LEAF_MAX || depth >= TREE_MAX_DEPTH;
	nd->pruned = 0;
	if (nd->leaf) {
		tree_moments(t, nd);
		return 0;
	}
	/* counting sort of the range into octants */
	const double *x = t->pos_in;
	int cnt[8] = {0}, start[8];
	int *ord = t->order + first, *tmp = t->tmp + first;
	for (int q = 0; q < count; q++) {
		int i = ord[q];
		int o = (x[3 * i] >= center[0]) | (x[3 * i + 1] >= center[1]) << 1 |
			(x[3 * i + 2] >= center[2]) << 2;
		cnt[o]++;
	}
	start[0] = 0;
	for (int o = 1; o < 8; o++)
		start[o] = start[o - 1] + cnt[o - 1];
	int pos[8];
	memcpy(pos, start, sizeof pos);
	for (int q = 0; q < count; q++) {
		int i = ord[q];
		int o = (x[3 * i] >= center[0]) | (x[3 * i + 1] >= center[1]) << 1 |
			(x[3 * i + 2] >= center[2]) << 2;
		tmp[pos[o]++] = i;
	}
	memcpy(ord, tmp, (size_t)count * sizeof *ord);

	for (int o = 0; o < 8; o++) {
		if (!cnt[o])
			continue;
		int c = tree_new_node(t); /* may move t->nodes: re-derive pointers */
		if (c < 0)
			return -1;
		t->nodes[k].child[o] = c;
		double h = 0.5 * half, cc[3];
		cc[0] = center[0] + (o & 1 ? h : -h);
		cc[1] = center[1] + (o & 2 ? h : -h);
		cc[2] = center[2] + (o & 4 ? h : -h);
		if (tree_build_node(t, c, first + start[o], cnt[o], cc, h, depth + 1))
			return -1;
	}
	tree_moments(t, &t->nodes[k]);
	return 0;
}

void sim_tree_free(struct tree *t)
{
	free(t->nodes);
	free(t->order);
	free(t->tmp);
	free(t->pos);
	free(t->mass);
	free(t->eps);
	memset(t, 0, sizeof *t);
}

int sim_tree_build(struct tree *t, const double *pos, const double *mass, const double *eps,
		   size_t n, int multipoles)
{
	return sim_tree_build_in(t, pos, mass, eps, n, multipoles, NULL);
}

int sim_tree_build_in(struct tree *t, const double *pos, const double *mass, const double *eps,
		      size_t n, int multipoles, const double *box)
{
	memset(t, 0, sizeof *t);
	t->n = n;
	t->pos_in = pos;
	t->mass_in = mass;
	t->eps_in = eps;
	t->multipoles = multipoles;
	t->order = malloc(n * sizeof *t->order);
	t->tmp = malloc(n * sizeof *t->tmp);
	t->pos = malloc(3 * n * sizeof *t->pos);
	t->mass = malloc(n * sizeof *t->mass);
	if (eps && !(t->eps = malloc(n * sizeof *t->eps)))
		goto oom;
	if (!t->order || !t->tmp || !t->pos || !t->mass)
		goto oom;
	double lo[3] = {pos[0], pos[1], pos[2]}, hi[3] = {pos[0], pos[1], pos[2]};
	for (size_t i = 0; i < n; i++) {
		t->order[i] = (int)i;
		for (int a = 0; a < 3; a++) {
			lo[a] = fmin(lo[a], pos[3 * i + a]);
			hi[a] = fmax(hi[a], pos[3 * i + a]);
		}
	}
	for (int a = 0; box && a < 3; a++) { /* the box given holds the bodies' */
		lo[a] = fmin(lo[a], box[a]);
		hi[a] = fmax(hi[a], box[3 + a]);
	}
	/* the GPU's key cube (sim/cuda/tree_internal.cuh, tree_cube_of): lower
	 * corner lo, side the largest extent with slack so the top face maps
	 * inside; any side will do when every body is at one point */
	double ext = 0, center[3];
	for (int a = 0; a < 3; a++)
		ext = fmax(ext, hi[a] - lo[a]);
	const double half = ext > 0 ? 0.5 * ext * (1 + 1e-6) : 0.5;
	for (int a = 0; a < 3; a++)
		center[a] = lo[a] + half;
	int root = tree_new_node(t);
	if (root < 0)
		goto oom;
	if (tree_build_node(t, root, 0, (int)n, center, half, 0))
		goto oom;
	for (size_t k = 0; k < n; k++) {
		int i = t->order[k];
		t->mass[k] = mass[i];
		if (eps)
			t->eps[k] = eps[i];
		for (int a = 0; a < 3; a++)
			t->pos[3 * k + a] = pos[3 * i + a];
	}
	return 0;
oom:
	log_error("barnes-hut: out of memory building the tree for %zu bodies", n);
	sim_tree_free(t);
	return NB_ERUNTIME;
}

/* One thread's interaction list for a group, as structure of arrays so the
 * evaluation loops vectorise (omp simd). */
/* cell arrays: x y z m, T eps^2 (the soft paths: T), q0..q5, eps2_mean */
enum { IL_X, IL_Y, IL_Z, IL_M, IL_T, IL_Q0, IL_E2 = IL_Q0 + 6 };
#define IL_CELL_ARRAYS (IL_E2 + 1)
#define IL_BODY_ARRAYS 6 /* x y z m, tree index, eps (lengths per body) */
struct tree_ilist {
	double *cell[IL_CELL_ARRAYS]; /* accepted near cells: multipoles */
	double *body[IL_BODY_ARRAYS]; /* bodies of opened leaves */
	size_t ncell, capcell, nbody, capbody;
	double g[3];                  /* centre of the group's box */
	double local[SIM_TREE_LOCAL_NC]; /* far cells' expansion about g */
	int nlocal;                   /* far cells in it */
};

/* Make room for `need` entries in each of the k arrays a[]. 0 or -1. */
static int tree_ilist_reserve(double **a, int k, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	for (int j = 0; j < k; j++) {
		double *q = realloc(a[j], c * sizeof *q);
		if (!q)
			return -1; /* arrays already grown stay valid; cap unchanged */
		a[j] = q;
	}
	*cap = c;
	return 0;
}

static void tree_ilist_free(struct tree_ilist *il)
{
	for (int j = 0; j < IL_CELL_ARRAYS; j++)
		free(il->cell[j]);
	for (int j = 0; j < IL_BODY_ARRAYS; j++)
		free(il->body[j]);
}

/* Squared distance from point x to the box [lo, hi] (0 inside). */
static double tree_box_dist2(const double x[3], const double lo[3], const double hi[3])
{
	double d2 = 0;
	for (int a = 0; a < 3; a++) {
		double d = x[a] < lo[a] ? lo[a] - x[a] : (x[a] > hi[a] ? x[a] - hi[a] : 0);
		d2 += d * d;
	}
	return d2;
}

/* List the bodies of leaf nd (body by body). 0 or -1 (out of memory). */
static int tree_list_bodies(const struct tree *t, const struct tree_node *nd, struct tree_ilist *il)
{
	if (tree_ilist_reserve(il->body, IL_BODY_ARRAYS, &il->capbody,
			       il->nbody + (size_t)nd->count))
		return -1;
	for (int j = nd->first; j < nd->first + nd->count; j++) {
		const size_t b = il->nbody++;
		il->body[0][b] = t->pos[3 * j];
		il->body[1][b] = t->pos[3 * j + 1];
		il->body[2][b] = t->pos[3 * j + 2];
		il->body[3][b] = t->mass[j];
		il->body[4][b] = t->foreign ? -1.0 : (double)j; /* never the walking body */
		if (t->eps)
			il->body[5][b] = t->eps[j];
	}
	return 0;
}

/* The soft paths' extra opening for an accepted cell nd at squared
 * distance d2 from the group's box: spline: open when a pair could lie
 * within h = 2.8 max(eps_i, eps_max) (sqrt(d2) - bmax < h), so every
 * accepted pair is Newtonian and the plain expansion is exact; Plummer
 * with lengths per body: open when some body of the group has a smaller
 * length than the cell's largest and d < 5 eps_max. 1: open. */
static int tree_soft_opens(const struct tree *t, const struct tree_node *nd, double d2,
			   const struct tree_soft *ws)
{
	const double emax = t->eps ? nd->eps_max : ws->eps;
	if (ws->spline) {
		const double h = SIM_SOFT_SPLINE_H * fmax(emax, ws->gmax), gap = sqrt(d2) - nd->bmax;
		return gap < h;
	}
	return ws->gmin < emax && d2 < 25 * emax * emax;
}

/* List accepted cell nd for the evaluation (r = g - com, r2 = |r|^2): far
 * ones into the local expansion, leaves of at most TREE_LEAF_P2P bodies
 * body by body, others as multipoles. On the soft paths the expansion is
 * Newtonian (spline: every pair is beyond h) or carries T and eps2_mean
 * so that each body takes eps_c^2 = max(eps_i^2, eps2_mean) (Plummer with
 * lengths per body; a far cell joins the group's one local expansion only
 * when the group's bodies share one length). 0 or -1 (out of memory). */
static int tree_take_cell(const struct tree *t, const struct tree_node *nd, const double r[3],
			  double r2, double rho2, double local2, const struct tree_soft *ws,
			  struct tree_ilist *il)
{
	const double *q = t->multipoles >= 2 ? nd->q : NULL;
	const int far = rho2 < local2 * r2;
	if (far && (ws->plain || ws->spline)) {
		const double e2 = ws->plain ? ws->eps2 : 0;
		sim_tree_local_add(il->local, r, nd->mass, q, nd->tr * e2, e2);
		il->nlocal++;
		return 0;
	}
	if (far && ws->gmin == ws->gmax) {
		const double e2 = fmax(ws->gmin * ws->gmin, nd->eps2_mean);
		sim_tree_local_add(il->local, r, nd->mass, q, nd->tr * e2, e2);
		il->nlocal++;
		return 0;
	}
	if (nd->leaf && nd->count <= TREE_LEAF_P2P)
		return tree_list_bodies(t, nd, il);
	if (tree_ilist_reserve(il->cell, IL_CELL_ARRAYS, &il->capcell, il->ncell + 1))
		return -1;
	const size_t c = il->ncell++;
	il->cell[IL_X][c] = nd->com[0];
	il->cell[IL_Y][c] = nd->com[1];
	il->cell[IL_Z][c] = nd->com[2];
	il->cell[IL_M][c] = nd->mass;
	il->cell[IL_T][c] = ws->plain ? nd->tr * ws->eps2 : nd->tr;
	il->cell[IL_E2][c] = t->eps && !ws->spline ? nd->eps2_mean : 0;
	for (int j = 0; j < 6; j++)
		il->cell[IL_Q0 + j][c] = nd->q[j];
	return 0;
}

double sim_tree_mass_scale(double theta0, double m, double mtot)
{
	if (!(theta0 > 0))
		return 0;
	if (theta0 >= 1 || !(m > 0) || !(mtot > 0))
		return INFINITY;
	const double t5 = theta0 * theta0 * theta0 * theta0 * theta0;
	return t5 / ((1 - theta0) * (1 - theta0)) / cbrt(fmin(m / mtot, 1.0));
}

/* The mass criterion (Dehnen 2002) for a cell of bmax b and mass m in a
 * tree of mass mtot at squared distance d2: accepted when x = b/d is below
 * theta(m), i.e. x < 1 and x^5 < C (1 - x)^2, C = sim_tree_mass_scale (the
 * left side grows with x on [0, 1), so this is d > b / theta(m) without
 * solving for theta). */
static int tree_mass_accepts(double b, double m, double mtot, double d2, double theta0)
{
	const double c = sim_tree_mass_scale(theta0, m, mtot), d = sqrt(d2);
	if (!(c > 0) || !(b < d))
		return 0;
	const double x = b / d;
	return x * x * x * x * x < c * (1 - x) * (1 - x);
}

int sim_tree_cell_accepted(const struct tree *t, const struct tree_node *nd, const double lo[3],
			   const double hi[3], double theta, enum scene_opening opening,
			   const struct tree_soft *ws)
{
	const double d2 = tree_box_dist2(nd->com, lo, hi);
	int accept;
	if (opening == SCENE_OPENING_BMAX) {
		const double b = nd->bmax;
		accept = theta > 0 && b * b < theta * theta * d2 && b * b < d2;
	} else if (opening == SCENE_OPENING_MASS) {
		accept = tree_mass_accepts(nd->bmax, nd->mass, t->nodes[0].mass, d2, theta);
	} else {
		int overlap = 1;
		for (int a = 0; a < 3; a++) {
			if (nd->center[a] + nd->half < lo[a] || nd->center[a] - nd->half > hi[a])
				overlap = 0;
		}
		const double l = 2 * nd->half;
		accept = !overlap && l * l < theta * theta * d2;
	}
	if (accept && !ws->plain && tree_soft_opens(t, nd, d2, ws))
		accept = 0;
	return accept;
}

/* The bounding box [lo, hi] of the group of tree-order bodies [gb, ge),
 * its centre into il->g and its squared half diagonal into *rho2; il's
 * lists emptied for the group's walks. */
static void tree_group_box(const struct tree *t, int gb, int ge, double lo[3], double hi[3],
			   double *rho2, struct tree_ilist *il)
{
	*rho2 = 0;
	for (int a = 0; a < 3; a++) {
		lo[a] = hi[a] = t->pos[3 * gb + a];
		for (int k = gb + 1; k < ge; k++) {
			lo[a] = fmin(lo[a], t->pos[3 * k + a]);
			hi[a] = fmax(hi[a], t->pos[3 * k + a]);
		}
		il->g[a] = 0.5 * (lo[a] + hi[a]);
		*rho2 += 0.25 * (hi[a] - lo[a]) * (hi[a] - lo[a]);
	}
	il->ncell = il->nbody = 0;
	memset(il->local, 0, sizeof il->local);
	il->nlocal = 0;
}

/* Walk tree t once for a group of box [lo, hi] (tree_group_box) and add
 * to il what its bodies interact with. A cell is accepted only if it
 * passes the opening test for every point of the group's box (the
 * per-body test applied conservatively; see the top of the file); the
 * cells holding the group's bodies never pass, so their leaves are listed
 * body by body. Accepted cells far from the group for its size go into
 * the group's local expansion, near leaves of at most TREE_LEAF_P2P bodies
 * are listed body by body, other accepted cells as multipoles; a pruned
 * cell (foreign trees) is taken as accepted. Returns 0 or -1 (out of
 * memory). */
static int tree_walk_tree(const struct tree *t, const double lo[3], const double hi[3],
			  double rho2, double theta, enum scene_opening opening,
			  const struct tree_soft *ws, struct tree_ilist *il)
{
	int stack[8 * TREE_MAX_DEPTH + 8];
	int sp = 0;
	const double lr = sim_tree_local_ratio(opening), local2 = lr * lr;
	if (t->nnodes > 0)
		stack[sp++] = 0;
	while (sp > 0) {
		const struct tree_node *nd = &t->nodes[stack[--sp]];
		const int accept = sim_tree_cell_accepted(t, nd, lo, hi, theta, opening, ws);
		double r[3], r2 = 0;
		for (int a = 0; a < 3; a++) {
			r[a] = il->g[a] - nd->com[a];
			r2 += r[a] * r[a];
		}
		if (accept || nd->pruned) {
			if (tree_take_cell(t, nd, r, r2, rho2, local2, ws, il))
				return -1;
		} else if (nd->leaf) {
			if (tree_list_bodies(t, nd, il))
				return -1;
		} else {
			for (int o = 0; o < 8; o++) {
				if (nd->child[o] >= 0)
					stack[sp++] = nd->child[o];
			}
		}
	}
	return 0;
}

/* Acceleration and potential of tree-order body k from the listed bodies
 * (all but itself) and the listed cells. */
static void tree_eval_body(const struct tree *t, size_t k, int multipoles,
			   const struct tree_ilist *il, double eps2, double out_a[3],
			   double *out_phi)
{
	const double xi = t->pos[3 * k], yi = t->pos[3 * k + 1], zi = t->pos[3 * k + 2];
	const double self = (double)k;
	double ax = 0, ay = 0, az = 0, phi = 0;
	const double *bx = il->body[0], *by = il->body[1], *bz = il->body[2], *bm = il->body[3],
		     *bi = il->body[4];
#pragma omp simd reduction(+ : ax, ay, az, phi)
	for (size_t j = 0; j < il->nbody; j++) {
		const int is_self = bi[j] == self;
		const double dx = bx[j] - xi, dy = by[j] - yi, dz = bz[j] - zi;
		/* body k itself: no term (and no 1/0 when eps = 0) */
		const double r2 = is_self ? 1.0 : dx * dx + dy * dy + dz * dz + eps2;
		const double m = is_self ? 0.0 : bm[j];
		const double sinv = 1.0 / sqrt(r2);
		const double ms3 = m * sinv * sinv * sinv;
		ax += dx * ms3;
		ay += dy * ms3;
		az += dz * ms3;
		phi -= m * sinv;
	}
	/* accepted cells: r = x_i - com (see the formulas at the top) */
	const double *cx = il->cell[IL_X], *cy = il->cell[IL_Y], *cz = il->cell[IL_Z],
		     *cm = il->cell[IL_M];
	if (multipoles < 2) {
#pragma omp simd reduction(+ : ax, ay, az, phi)
		for (size_t c = 0; c < il->ncell; c++) {
			const double rx = xi - cx[c], ry = yi - cy[c], rz = zi - cz[c];
			const double sinv = 1.0 / sqrt(rx * rx + ry * ry + rz * rz + eps2);
			const double ms3 = cm[c] * sinv * sinv * sinv;
			ax -= rx * ms3;
			ay -= ry * ms3;
			az -= rz * ms3;
			phi -= cm[c] * sinv;
		}
	} else {
		const double *te = il->cell[IL_T];
		const double *q0 = il->cell[IL_Q0], *q1 = il->cell[IL_Q0 + 1],
			     *q2 = il->cell[IL_Q0 + 2], *q3 = il->cell[IL_Q0 + 3],
			     *q4 = il->cell[IL_Q0 + 4], *q5 = il->cell[IL_Q0 + 5];
#pragma omp simd reduction(+ : ax, ay, az, phi)
		for (size_t c = 0; c < il->ncell; c++) {
			const double rx = xi - cx[c], ry = yi - cy[c], rz = zi - cz[c];
			const double sinv = 1.0 / sqrt(rx * rx + ry * ry + rz * rz + eps2);
			const double sinv2 = sinv * sinv;
			const double sinv3 = sinv * sinv2;
			const double sinv5 = sinv3 * sinv2;
			/* Q.r with Q = [q0 q3 q4; q3 q1 q5; q4 q5 q2] */
			const double qx = q0[c] * rx + q3[c] * ry + q4[c] * rz;
			const double qy = q3[c] * rx + q1[c] * ry + q5[c] * rz;
			const double qz = q4[c] * rx + q5[c] * ry + q2[c] * rz;
			/* r.Q.r - T eps^2 */
			const double rqr = rx * qx + ry * qy + rz * qz - te[c];
			const double f = cm[c] * sinv3 + 2.5 * rqr * sinv5 * sinv2;
			ax += qx * sinv5 - f * rx;
			ay += qy * sinv5 - f * ry;
			az += qz * sinv5 - f * rz;
			phi -= cm[c] * sinv + 0.5 * rqr * sinv5;
		}
	}
	out_a[0] = ax;
	out_a[1] = ay;
	out_a[2] = az;
	if (il->nlocal > 0) {
		const double y[3] = {xi - il->g[0], yi - il->g[1], zi - il->g[2]};
		sim_tree_local_eval(il->local, y, out_a, &phi);
	}
	*out_phi = phi;
}

/* The soft paths' body-body sum for tree-order body k of length ei: each
 * listed body j (but k itself) with e = sim_soft_pair(ei, eps_j) (ei for
 * every j without lengths per body) and the kernel, added to a and *phi.
 * Plummer vectorises as tree_eval_body's loop (body k masked, not
 * skipped); the spline branches per pair. */
static void tree_eval_bodies_soft(const struct tree *t, size_t k, const struct tree_ilist *il,
				  double ei, int spline, double a[3], double *phi)
{
	const double xi = t->pos[3 * k], yi = t->pos[3 * k + 1], zi = t->pos[3 * k + 2];
	const double self = (double)k;
	const double *bx = il->body[0], *by = il->body[1], *bz = il->body[2], *bm = il->body[3],
		     *bi = il->body[4], *be = t->eps ? il->body[5] : NULL;
	double ax = 0, ay = 0, az = 0, ph = 0;
	if (!spline) {
#pragma omp simd reduction(+ : ax, ay, az, ph)
		for (size_t j = 0; j < il->nbody; j++) {
			const int is_self = bi[j] == self;
			const double dx = bx[j] - xi, dy = by[j] - yi, dz = bz[j] - zi;
			const double e = be ? fmax(ei, be[j]) : ei;
			const double r2 = is_self ? 1.0 : dx * dx + dy * dy + dz * dz + e * e;
			const double m = is_self ? 0.0 : bm[j];
			const double sinv = 1.0 / sqrt(r2), ms3 = m * sinv * sinv * sinv;
			ax += dx * ms3;
			ay += dy * ms3;
			az += dz * ms3;
			ph -= m * sinv;
		}
	} else {
		for (size_t j = 0; j < il->nbody; j++) {
			if (bi[j] == self)
				continue;
			const double dx = bx[j] - xi, dy = by[j] - yi, dz = bz[j] - zi;
			const double r2 = dx * dx + dy * dy + dz * dz;
			const double e = be ? sim_soft_pair(ei, be[j]) : ei;
			const double f = bm[j] * sim_soft_spline(r2, e);
			ax += f * dx;
			ay += f * dy;
			az += f * dz;
			ph += bm[j] * sim_soft_spline_phi(r2, e);
		}
	}
	a[0] += ax;
	a[1] += ay;
	a[2] += az;
	*phi += ph;
}

/* The listed cells seen from body k with eps_c^2 = max(ei2, eps2_mean)
 * (ei2 = eps_i^2: Plummer with lengths per body; the spline passes 0 and
 * its cells carry 0: every accepted pair is beyond h, so Newtonian), in
 * the softened quadrupole of the top of the file (T eps_c^2 its trace
 * term), added to a and *phi. */
static void tree_eval_cells_soft(const double x[3], int multipoles, const struct tree_ilist *il,
				 double ei2, double a[3], double *phi)
{
	double *const *cl = il->cell;
	const double *cx = cl[IL_X], *cy = cl[IL_Y], *cz = cl[IL_Z], *cm = cl[IL_M],
		     *te = cl[IL_T], *e2m = cl[IL_E2];
	const double *q0 = cl[IL_Q0], *q1 = cl[IL_Q0 + 1], *q2 = cl[IL_Q0 + 2],
		     *q3 = cl[IL_Q0 + 3], *q4 = cl[IL_Q0 + 4], *q5 = cl[IL_Q0 + 5];
	double ax = 0, ay = 0, az = 0, ph = 0;
	if (multipoles < 2) {
#pragma omp simd reduction(+ : ax, ay, az, ph)
		for (size_t c = 0; c < il->ncell; c++) {
			const double rx = x[0] - cx[c], ry = x[1] - cy[c], rz = x[2] - cz[c];
			const double e2 = e2m[c] > ei2 ? e2m[c] : ei2;
			const double sinv = 1.0 / sqrt(rx * rx + ry * ry + rz * rz + e2);
			const double ms3 = cm[c] * sinv * sinv * sinv;
			ax -= rx * ms3;
			ay -= ry * ms3;
			az -= rz * ms3;
			ph -= cm[c] * sinv;
		}
	} else {
#pragma omp simd reduction(+ : ax, ay, az, ph)
		for (size_t c = 0; c < il->ncell; c++) {
			const double rx = x[0] - cx[c], ry = x[1] - cy[c], rz = x[2] - cz[c];
			const double e2 = e2m[c] > ei2 ? e2m[c] : ei2;
			const double sinv = 1.0 / sqrt(rx * rx + ry * ry + rz * rz + e2);
			const double sinv2 = sinv * sinv, sinv3 = sinv * sinv2, sinv5 = sinv3 * sinv2;
			/* Q.r with Q = [q0 q3 q4; q3 q1 q5; q4 q5 q2] */
			const double qx = q0[c] * rx + q3[c] * ry + q4[c] * rz;
			const double qy = q3[c] * rx + q1[c] * ry + q5[c] * rz;
			const double qz = q4[c] * rx + q5[c] * ry + q2[c] * rz;
			const double rqr = rx * qx + ry * qy + rz * qz - te[c] * e2;
			const double f = cm[c] * sinv3 + 2.5 * rqr * sinv5 * sinv2;
			ax += qx * sinv5 - f * rx;
			ay += qy * sinv5 - f * ry;
			az += qz * sinv5 - f * rz;
			ph -= cm[c] * sinv + 0.5 * rqr * sinv5;
		}
	}
	a[0] += ax;
	a[1] += ay;
	a[2] += az;
	*phi += ph;
}

/* tree_eval_body on the soft paths: the bodies (tree_eval_bodies_soft),
 * the cells (tree_eval_cells_soft), the local expansion as there. */
static void tree_eval_body_soft(const struct tree *t, size_t k, int multipoles,
				const struct tree_ilist *il, const struct tree_soft *ws,
				double out_a[3], double *out_phi)
{
	const double *x = t->pos + 3 * k;
	const double ei = t->eps ? t->eps[k] : ws->eps;
	double phi = 0;
	out_a[0] = out_a[1] = out_a[2] = 0;
	tree_eval_bodies_soft(t, k, il, ei, ws->spline, out_a, &phi);
	tree_eval_cells_soft(x, multipoles, il, ws->spline ? 0 : ei * ei, out_a, &phi);
	if (il->nlocal > 0) {
		const double y[3] = {x[0] - il->g[0], x[1] - il->g[1], x[2] - il->g[2]};
		sim_tree_local_eval(il->local, y, out_a, &phi);
	}
	*out_phi = phi;
}

int sim_tree_accel(const double *pos, const double *mass, size_t n, double eps,
		   double theta, int multipoles, double *acc, double *pot)
{
	/* the scene's default (scene/scene_schema.c: simulation.opening) */
	return sim_tree_accel_ex(pos, mass, n, eps, theta, multipoles, SCENE_OPENING_BMAX, acc,
				 pot);
}

/* Groups: runs of TREE_GROUP_SIZE bodies cut from the largest cells of
 * at most TREE_GROUP_NODE_MAX bodies (or from leaves), in depth-first
 * order, so neighbours in space. At most n / TREE_GROUP_SIZE plus one
 * partial run per cell. Returns [begin, end) pairs (*NGROUP of them; the
 * caller frees), or NULL when out of memory (logged). */
static int *tree_groups(const struct tree *t, size_t n, int *ngroup_out)
{
	size_t gcap = n / TREE_GROUP_SIZE + (size_t)t->nnodes + 1;
	int ngroup = 0;
	int *groups = malloc(2 * gcap * sizeof *groups); /* [begin, end) pairs */
	int *stack = malloc((size_t)t->nnodes * sizeof *stack);
	if (!groups || !stack) {
		log_error("barnes-hut: out of memory for the group list (%d cells)", t->nnodes);
		free(groups);
		free(stack);
		return NULL;
	}
	int sp = 0;
	stack[sp++] = 0;
	while (sp > 0) {
		const struct tree_node *nd = &t->nodes[stack[--sp]];
		if (nd->leaf || nd->count <= TREE_GROUP_NODE_MAX) {
			for (int b = nd->first; b < nd->first + nd->count; b += TREE_GROUP_SIZE) {
				int e = b + TREE_GROUP_SIZE;
				groups[2 * ngroup] = b;
				groups[2 * ngroup + 1] = e < nd->first + nd->count ? e : nd->first + nd->count;
				ngroup++;
			}
			continue;
		}
		for (int o = 7; o >= 0; o--) {
			if (nd->child[o] >= 0)
				stack[sp++] = nd->child[o];
		}
	}
	free(stack);
	*ngroup_out = ngroup;
	return groups;
}

int sim_tree_accel_ex(const double *pos, const double *mass, size_t n, double eps,
		      double theta, int multipoles, enum scene_opening opening, double *acc,
		      double *pot)
{
	return sim_tree_accel_active(pos, mass, n, eps, theta, multipoles, opening, NULL, acc, pot);
}

int sim_tree_accel_active(const double *pos, const double *mass, size_t n, double eps,
			  double theta, int multipoles, enum scene_opening opening,
			  const unsigned char *active, double *acc, double *pot)
{
	return sim_tree_accel_sel(pos, mass, n, eps, theta, multipoles, opening, active, acc, pot,
				  NULL);
}

/* The group [gb, ge)'s smallest and largest length into ws (lengths per
 * body; else both the one length). */
static void tree_group_eps(const struct tree *t, int gb, int ge, struct tree_soft *ws)
{
	ws->gmin = ws->gmax = t->eps ? t->eps[gb] : ws->eps;
	for (int k = gb + 1; t->eps && k < ge; k++) {
		ws->gmin = fmin(ws->gmin, t->eps[k]);
		ws->gmax = fmax(ws->gmax, t->eps[k]);
	}
}

/* Group G's walks (t, then each of more[0..nmore-1]) and its active
 * bodies' acc (pot, work). 0 or -1 (out of memory). */
static int tree_walk_eval(const struct tree *t, const struct tree *more, int nmore, int gb,
			  int ge, double theta, int multipoles, enum scene_opening opening,
			  struct tree_soft *ws, const unsigned char *active, struct tree_ilist *il,
			  double *acc, double *pot, double *work)
{
	double lo[3], hi[3], rho2;
	tree_group_eps(t, gb, ge, ws);
	tree_group_box(t, gb, ge, lo, hi, &rho2, il);
	if (tree_walk_tree(t, lo, hi, rho2, theta, opening, ws, il))
		return -1;
	for (int j = 0; j < nmore; j++) {
		if (tree_walk_tree(&more[j], lo, hi, rho2, theta, opening, ws, il))
			return -1;
	}
	for (int k = gb; k < ge; k++) {
		double a[3], phi;
		size_t i = (size_t)t->order[k];
		if (active && !active[i])
			continue;
		if (ws->plain)
			tree_eval_body(t, (size_t)k, multipoles, il, ws->eps2, a, &phi);
		else
			tree_eval_body_soft(t, (size_t)k, multipoles, il, ws, a, &phi);
		if (work)
			work[i] = (double)(il->nbody + il->ncell) + (il->nlocal > 0);
		acc[3 * i] = a[0];
		acc[3 * i + 1] = a[1];
		acc[3 * i + 2] = a[2];
		if (pot)
			pot[i] = phi;
	}
	return 0;
}

struct tree_soft sim_tree_soft_of(const struct tree *t, const struct sim_soft *s)
{
	const struct tree_soft ws = {.plain = !t->eps && s->kernel == SCENE_SOFT_PLUMMER,
				     .spline = s->kernel == SCENE_SOFT_SPLINE,
				     .eps = s->eps,
				     .eps2 = s->eps * s->eps};
	return ws;
}

/* The walk and evaluation over a built (or refitted) tree: the active
 * bodies' acc (pot, work) as sim_tree_accel_sel documents, with the
 * softening s (its lengths per body are t's), and the foreign trees more
 * (tree_internal.h). Frees nothing. */
int sim_tree_accel_walk(const struct tree *t, const struct sim_soft *s, double theta,
			int multipoles, enum scene_opening opening, const unsigned char *active, double *acc,
			double *pot, double *work, const struct tree *more, int nmore)
{
	const size_t n = t->n;
	int ngroup, *groups = tree_groups(t, n, &ngroup);
	if (!groups)
		return NB_ERUNTIME;
	const struct tree_soft ws0 = sim_tree_soft_of(t, s);
	int failed = 0;
#pragma omp parallel if (n >= TREE_SERIAL_N)
	{
		struct tree_ilist il = {0};
		struct tree_soft ws = ws0;
#pragma omp for schedule(dynamic, 4)
		for (int G = 0; G < ngroup; G++) {
			if (failed)
				continue;
			const int gb = groups[2 * G], ge = groups[2 * G + 1];
			int any = !active;
			for (int k = gb; k < ge && !any; k++)
				any = active[t->order[k]] != 0;
			if (!any)
				continue; /* as the GPU walk: no active body, no walk */
			if (tree_walk_eval(t, more, nmore, gb, ge, theta, multipoles, opening, &ws,
					   active, &il, acc, pot, work)) {
#pragma omp atomic write
				failed = 1;
			}
		}
		tree_ilist_free(&il);
	}
	free(groups);
	if (failed) {
		log_error("barnes-hut: out of memory for interaction lists (%zu bodies)", n);
		return NB_ERUNTIME;
	}
	return 0;
}

int sim_tree_accel_sel(const double *pos, const double *mass, size_t n, double eps,
		       double theta, int multipoles, enum scene_opening opening,
		       const unsigned char *active, double *acc, double *pot, double *work)
{
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = eps, .each = NULL};
	return sim_tree_accel_soft(pos, mass, n, &s, theta, multipoles, opening, active, acc, pot,
				   work);
}

int sim_tree_accel_soft(const double *pos, const double *mass, size_t n,
			const struct sim_soft *s, double theta, int multipoles,
			enum scene_opening opening, const unsigned char *active, double *acc,
			double *pot, double *work)
{
	if (n == 0)
		return 0;
	if (n > (size_t)1 << 30) {
		log_error("barnes-hut: %zu bodies is more than the CPU tree supports (2^30)", n);
		return NB_ERUNTIME;
	}
	struct tree t;
	int err = sim_tree_build(&t, pos, mass, s->each, n, multipoles);
	if (err)
		return err;
	err = sim_tree_accel_walk(&t, s, theta, multipoles, opening, active, acc, pot, work, NULL,
				  0);
	sim_tree_free(&t);
	return err;
}

/* The GPU's refit (sim/cuda/tree.cu, gpu_tree_compute_ex with refit): the
 * cells, body order and groups of a build over pos_build, the moments and
 * bmax recomputed from pos. Children have larger indices than their
 * parent (tree_build_node), so a pass from the last node back is
 * bottom-up. */
int sim_tree_accel_refit(const double *pos_build, const double *pos, const double *mass,
			 size_t n, double eps, double theta, int multipoles,
			 const unsigned char *active, double *acc, double *pot, double *work)
{
	if (n == 0)
		return 0;
	if (n > (size_t)1 << 30) {
		log_error("barnes-hut: %zu bodies is more than the CPU tree supports (2^30)", n);
		return NB_ERUNTIME;
	}
	struct tree t;
	int err = sim_tree_build(&t, pos_build, mass, NULL, n, multipoles);
	if (err)
		return err;
	t.pos_in = pos;
	for (size_t k = 0; k < n; k++) {
		int i = t.order[k];
		for (int a = 0; a < 3; a++)
			t.pos[3 * k + a] = pos[3 * i + a];
	}
	for (int k = t.nnodes - 1; k >= 0; k--)
		tree_moments(&t, &t.nodes[k]);
	const struct sim_soft s = {.kernel = SCENE_SOFT_PLUMMER, .eps = eps, .each = NULL};
	err = sim_tree_accel_walk(&t, &s, theta, multipoles, SCENE_OPENING_BMAX, active, acc, pot,
				  work, NULL, 0);
	sim_tree_free(&t);
	return err;
}
