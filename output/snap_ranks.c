/* snap_ranks.c - a multi-file snapshot written by the ranks of a run,
 * each rank its own part from its own bodies (issue 31, "output in
 * parallel"): the protocol of output.h ("multi-file snapshot sets") in one
 * call, the collective steps through the caller's callbacks
 * (struct out_snap_comm), so output/ needs no MPI and dist/ no HDF5.
 * Every rank makes the same collective calls in the same order whatever
 * fails, so a failure on one rank never leaves another waiting; the set
 * is complete or absent (docs/snapshots.md, "Multi-file sets"). */

#include "out_internal.h"
#include "output.h"

/* The agreement: 1 when ok is 1 on every rank. A failed collective
 * counts as a failure. */
static int all_ok(const struct out_snap_comm *c, int ok)
{
	int v = ok ? 1 : 0;
	return c->min_int(c->ctx, &v) == 0 && v == 1;
}

/* Step 1: the set's header - totals summed, extent the largest, rank 0's
 * set id - into p. 0 or NB_ERUNTIME. */
static int reduce_header(const struct out_snap_comm *c, const struct sim_state *st,
			 struct out_snap_part *p)
{
	*p = (struct out_snap_part){.k = c->rank, .K = c->size};
	out_snap_part_counts(st, 0, st->n, p->total, &p->extent);
	uint64_t id = c->rank == 0 ? out_snap_set_id() : 0;
	int bad = c->sum_u64(c->ctx, p->total, 6) != 0;
	bad |= c->max_f64(c->ctx, &p->extent, 1) != 0;
	bad |= c->bcast_u64(c->ctx, &id, 1) != 0;
	p->set_id = id;
	return bad ? NB_ERUNTIME : 0;
}

int out_snap_write_ranks(const char *path, const struct out_snap_comm *c,
			 const struct scene *sc, const struct sim_state *st, int frame,
			 const char *backend, const struct render_camera *cam)
{
	char part[SCENE_PATH_MAX + 32];
	struct out_snap_part p;
	int ok = reduce_header(c, st, &p) == 0;
	if (!all_ok(c, ok))
		return NB_ERUNTIME;
	if (c->size == 1) /* one part: the one-file snapshot */
		return out_snap_part_write(path, &p, sc, st, 0, st->n, frame, backend, cam);
	ok = out_snap_part_path(path, c->rank, part, sizeof part) == 0 &&
	     out_snap_part_write(part, &p, sc, st, 0, st->n, frame, backend, cam) == 0;
	if (!all_ok(c, ok)) { /* some rank's part is not whole: none is kept */
		if (ok)
			out_snap_part_discard(part, 0);
		if (ok && c->rank == 0)
			log_error("%s: a part of the snapshot failed on another rank; the set is not "
				  "written", path);
		return NB_ERUNTIME;
	}
	ok = c->rank != 0 || out_snap_set_retire(path, c->size) == 0;
	if (!all_ok(c, ok)) {
		out_snap_part_discard(part, 0);
		return NB_ERUNTIME;
	}
	/* parts 1 .. K-1, then part 0: a reader opens the set by part 0 */
	ok = c->rank == 0 || out_snap_part_publish(part) == 0;
	if (!all_ok(c, ok)) {
		out_snap_part_discard(part, 1);
		return NB_ERUNTIME;
	}
	ok = c->rank != 0 || out_snap_part_publish(part) == 0;
	if (!all_ok(c, ok)) {
		out_snap_part_discard(part, 1);
		return NB_ERUNTIME;
	}
	return 0;
}
