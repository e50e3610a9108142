/* let.h - locally essential trees (Salmon & Warren 1994; Bedorf et al.
 * 2012): the part of one rank's Barnes-Hut tree that another rank's bodies
 * need, packed into bytes to send, and the forces on this rank's bodies
 * from its own tree plus the trees it received (issue 31).
 *
 * A rank owns the bodies of one domain (dist/, a stretch of the Morton
 * curve). It builds a tree over them (sim_let_build: the cells, moments and
 * opening rule of sim/tree.c's tree, so one rank's result is
 * sim_tree_accel_soft's within rounding). For another rank whose bodies lie
 * in the box [lo, hi] it exports (sim_let_export) every cell that some point
 * of that box would open, and for each cell no point of the box opens (by
 * the walk's own criterion with d the distance from the cell to the box,
 * the most open case) only its moments; bodies of opened leaves go as
 * bodies. Walking that pruned tree with a group anywhere in [lo, hi] makes
 * exactly the interactions the full remote tree would have made, so the
 * force on a body is its single-tree force within the tree's tolerance
 * (the cells differ: each rank's tree is over its own bodies). A cell the
 * box may open is sent with its children even where the receiver's walk
 * then accepts it (the export knows only the receiver's largest length):
 * the receiver's walk decides, on the same cells. One box round a domain
 * of the Morton curve holds much of the others (the curve's pieces are not
 * half-spaces): a rank should describe its bodies by a cover
 * (sim_let_cover, the boxes of its top cells) and the others export to
 * that (sim_let_export_cover). Measured once with these functions (a
 * Plummer sphere, theta 0.5, covers of 1024 boxes; tests/test_let.c
 * prints the smaller cases it runs): a rank of 2 holding 500k of
 * 1M bodies receives about 5.8 MB a step (33k cells, 64k bodies), 12
 * bytes per own body; 8x the bodies send about 3.7x the bytes.
 *
 * The bytes are self-describing and checked on import (a count that
 * disagrees with the length, a child index out of range, a value not
 * finite, another walk's parameters: NB_ERUNTIME, logged), little-endian
 * doubles as this machine writes them (the ranks of one run share a byte
 * order). Volume: a 64-byte header; a cell carries what the walk reads,
 * 5 to 18 doubles and 4 int32 (112 bytes for the default bmax opening
 * with quadrupoles and one length, 128 with lengths per body, 144 with
 * another opening); 32 bytes a body (x y z m; 40 with lengths per body). */
#ifndef NB_SIM_LET_H
#define NB_SIM_LET_H

#include <stddef.h>

#include "params.h"
#include "sim.h"

struct sim_let_tree;

/* A tree over this rank's n bodies (pos 3n, mass n; s: the softening, each
 * length indexed like pos, or NULL each for one length) with the opening,
 * theta and multipoles of p. The arrays must stay valid and unchanged
 * until sim_let_free. 0, or NB_ERUNTIME (logged: out of memory). n may be
 * 0 (a rank with no bodies: exports nothing, accel does nothing). */
int sim_let_build(const double *pos, const double *mass, size_t n, const struct sim_soft *s,
		  const struct sim_params *p, struct sim_let_tree **out);
/* sim_let_build over the bounding box of the bodies and box (lo[3], hi[3];
 * NULL: the bodies' alone) together: ranks that build over the domains'
 * one global box have the global Morton cells for theirs, so no cell (and
 * no cover box round one) reaches round another rank's domain. */
int sim_let_build_in(const double *pos, const double *mass, size_t n, const struct sim_soft *s,
		     const struct sim_params *p, const double *box, struct sim_let_tree **out);

/* The bounding box of the tree's bodies (lo = hi = 0 when it has none):
 * what a rank sends the others so they can export to it. */
void sim_let_bounds(const struct sim_let_tree *t, double lo[3], double hi[3]);

/* The bytes the rank whose bodies lie in [lo, hi] needs (*buf malloc'd,
 * the caller frees; *nbytes its length; an empty tree gives a valid empty
 * buffer). [lo, hi] must hold every body of the receiver (its
 * sim_let_bounds): a group outside it would take moments where its walk
 * opens. eps_max: the largest softening among the receiver's bodies (a
 * cell within reach of the kernel is opened as the walk would; with one
 * length for every body, s->eps of the build, and eps_max is not read).
 * 0 or NB_ERUNTIME (logged). Thread-safe for one t. */
int sim_let_export(const struct sim_let_tree *t, const double lo[3], const double hi[3],
		   double eps_max, void **buf, size_t *nbytes);

/* The receiver's cover: at most max boxes (lo[3], hi[3]: 6 doubles each
 * into boxes, 6 max; *nbox of them) that together hold its bodies, each
 * the bounds of the bodies of one cell near the top of its tree, every walk
 * group inside one box. What a rank may send the others instead of its one
 * box (sim_let_bounds): a box that encloses the whole domain also encloses
 * the space between its clumps, which the walk never visits, and the
 * others would export to it. max 1: the bounds; the finest cover has
 * about n / 512 boxes (cells of walk-group size are not split); on a
 * Plummer sphere of 1M bodies in 2 domains, theta 0.5, a domain's export
 * to the other's 512 boxes is 7.7 MB, to its bounds 35 MB (tests/test_let.c
 * prints such figures). 0 (nbox 0 for a tree of no bodies), or
 * NB_ERUNTIME (logged: out of memory). */
int sim_let_cover(const struct sim_let_tree *t, int max, double *boxes, int *nbox);

/* sim_let_export for a receiver whose bodies lie in the union of the boxes
 * (6 doubles each, a cover): a cell goes as moments only when no box opens
 * it. nbox = 0 (a receiver of no bodies): the valid empty buffer.
 * sim_let_export is this with one box. */
int sim_let_export_cover(const struct sim_let_tree *t, const double *boxes, int nbox,
			 double eps_max, void **buf, size_t *nbytes);

/* acc (3n) and pot (n, or NULL) of the tree's own bodies, in their input
 * order: each walk group walks the own tree, then each received buffer
 * bufs[0..nbuf-1] (lengths nbytes) in that order, into one interaction
 * list, evaluated once (so the result does not depend on the timing of
 * the exchange; with nbuf = 0 it is sim_tree_accel_soft's bit for bit).
 * work (n, or NULL): each body's interaction count, for balancing. 0, or
 * NB_ERUNTIME (logged: a buffer that does not check out or was made by a
 * walk with other parameters - kernel, opening, multipoles, theta, lengths
 * per body or not -, out of memory; acc then undefined). A tree of no
 * bodies: 0 at once, nothing read. */
int sim_let_accel(const struct sim_let_tree *t, const void *const *bufs, const size_t *nbytes,
		  int nbuf, double *acc, double *pot, double *work);

/* sim_let_accel for the bodies with active[i] != 0 only (active indexed
 * like the tree's bodies; NULL: all), as sim_tree_accel_active: a walk
 * group without an active body is not walked, an active body's results
 * are sim_let_accel's bit for bit, the others' acc, pot and work are left
 * as they were (individual time steps). */
int sim_let_accel_active(const struct sim_let_tree *t, const unsigned char *active,
			 const void *const *bufs, const size_t *nbytes, int nbuf, double *acc,
			 double *pot, double *work);

/* Counts of what a buffer holds (for the exchange-volume figures): cells
 * and bodies. 0, or NB_ERUNTIME (logged) when its structure does not
 * check out (the walk's parameters are sim_let_accel's to check). */
int sim_let_count(const void *buf, size_t nbytes, size_t *ncells, size_t *nbodies);

void sim_let_free(struct sim_let_tree **t);

#endif
