/* tree_internal.h - the CPU Barnes-Hut tree's cells, build and walk
 * (sim/tree.c), shared with the locally essential trees (sim/let.c) and
 * nothing else: sim/sim.h stays the public face of the tree.
 *
 * A struct tree is either built over bodies (sim_tree_build) or imported
 * from another rank's export (sim/let.c fills the same fields: cells,
 * bodies in tree order, foreign = 1, order and the input pointers NULL).
 * A foreign tree's cells never hold a body of the walking group, and a
 * pruned cell (its subtree not sent) is always taken as its moments. */
#ifndef NB_SIM_TREE_INTERNAL_H
#define NB_SIM_TREE_INTERNAL_H

#include <stddef.h>

#include "sim.h"

/* The GPU's keys stop at depth 21 (a leaf there holds what it holds); the
 * CPU goes on, so far outliers do not leave thousands of bodies in one
 * leaf. Both agree wherever depth 21 is not reached. The walk's stack is
 * sized for it: no tree, built or imported, is deeper. */
#define TREE_MAX_DEPTH 60
/* Walk groups (the GPU's: groups of 32 cut from nodes of at most 16
 * groups' worth of bodies): runs of TREE_GROUP_SIZE tree-order bodies cut
 * from the largest cells of at most TREE_GROUP_NODE_MAX bodies, or from
 * leaves, so a group never spans two such cells. */
#define TREE_GROUP_SIZE 32
#define TREE_GROUP_NODE_MAX (16 * TREE_GROUP_SIZE)
/* Accepted near leaves of at most this many bodies are listed body by body
 * (exact, and cheaper on the GPU than a quadrupole; its leaf_p2p). */
#define TREE_LEAF_P2P 2

struct tree_node {
	double com[3], mass;
	double q[6];           /* Qxx Qyy Qzz Qxy Qxz Qyz (traceless) */
	double tr;             /* T = sum m |y|^2 about the com */
	double bmax;           /* bound on |x - com| over the cell's bodies */
	double center[3], half; /* geometric cube: centre and half side */
	double eps_max;        /* lengths per body only: the largest of its bodies' */
	double eps2_mean;      /* and the mass-weighted mean of their eps^2 */
	int first, count;      /* bodies [first, first+count) in tree order */
	int child[8];          /* -1 where the octant is empty; all -1 for a leaf */
	int leaf;
	int pruned;            /* imported only: moments without their subtree */
};

struct tree {
	struct tree_node *nodes;
	int nnodes, cap;
	size_t n;
	int *order;   /* order[k] = original index of the k-th body in tree order */
	int *tmp;     /* scratch for partitioning */
	double *pos;  /* 3n, tree order */
	double *mass; /* n, tree order */
	const double *pos_in;  /* caller's positions (original order) */
	const double *mass_in; /* caller's masses (original order) */
	const double *eps_in;  /* caller's lengths per body (original order), or NULL */
	double *eps;           /* n, tree order, when eps_in (imported: when sent) */
	int multipoles;
	int foreign;           /* imported: its bodies are never the walking body */
};

/* The softening of one walk. plain: Plummer with one length (eps2), the
 * path of one length, unchanged; else the kernel and, per group, the
 * smallest and largest length of its bodies (docs/PHYSICS.md
 * "Softening"). */
struct tree_soft {
	int plain, spline;
	double eps, eps2;
	double gmin, gmax; /* the group's lengths (set per group) */
};

/* Build t over n >= 1 bodies (eps: lengths per body or NULL; the arrays
 * stay the caller's and must outlive t). 0 or NB_ERUNTIME (logged; t is
 * then freed). */
int sim_tree_build(struct tree *t, const double *pos, const double *mass, const double *eps,
		   size_t n, int multipoles);
/* sim_tree_build over the bounding box of the bodies and box (lo[3],
 * hi[3]) together (NULL: the bodies' alone): ranks that build over one
 * box share their cells (simulation.ranks: domains, sim_let_build_in). */
int sim_tree_build_in(struct tree *t, const double *pos, const double *mass, const double *eps,
		      size_t n, int multipoles, const double *box);
/* Frees what t owns and zeroes it (built or imported). */
void sim_tree_free(struct tree *t);

/* The walk's softening for tree t under s (gmin, gmax unset). */
struct tree_soft sim_tree_soft_of(const struct tree *t, const struct sim_soft *s);

/* The mass criterion's scale (SCENE_OPENING_MASS; Dehnen 2002, J. Comput.
 * Phys. 179, 27, and falcON's GravMAC theta_of_M): a cell of
 * mass m in a tree of mass mtot (the root's) opens at theta(m), the root
 * of theta^5 / (1 - theta)^2 = C,
 *   C = theta0^5 / (1 - theta0)^2 (m / mtot)^(-1/3),
 * so theta(mtot) = theta0 and lighter cells are accepted at wider angles.
 * Returns C: 0 when theta0 <= 0 (every cell opens: exact), INFINITY when
 * theta0 >= 1 or m <= 0 (accepted whenever bmax < d). At bmax 0.5's
 * median force error it makes 28 % fewer interactions on a 1M-body Plummer
 * sphere and 15 % fewer on the default scene's 1M bodies (less at fewer
 * bodies: 15 % and 1 % at 200k); docs/PHYSICS.md "Opening by mass",
 * tests/test_tree_opening.c prints the table. The GPU solves the same
 * equation for theta(m) (sim/cuda/tree_build.cu). */
double sim_tree_mass_scale(double theta0, double m, double mtot);

/* 1 when cell nd of t is accepted for every point of the box [lo, hi]: the
 * opening criterion with d the distance from its centre of mass to the box,
 * then the soft paths' extra opening with ws's gmin, gmax. */
int sim_tree_cell_accepted(const struct tree *t, const struct tree_node *nd, const double lo[3],
			   const double hi[3], double theta, enum scene_opening opening,
			   const struct tree_soft *ws);

/* acc (pot, work) of t's active bodies as sim_tree_accel_sel documents,
 * each group walking t and then more[0..nmore-1] (foreign trees, their
 * multipoles and lengths per body alike t's) into one interaction list.
 * nmore = 0: sim_tree_accel_soft's result bit for bit. Frees nothing. */
int sim_tree_accel_walk(const struct tree *t, const struct sim_soft *s, double theta,
			int multipoles, enum scene_opening opening, const unsigned char *active, double *acc,
			double *pot, double *work, const struct tree *more, int nmore);

#endif
