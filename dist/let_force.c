/* let_force.c - the Barnes-Hut forces of ranks that each hold only their
 * own bodies (simulation.ranks: domains; dist.h): locally essential trees
 * (Salmon & Warren 1994; Bedorf et al. 2012, 2014), sim/let.h.
 *
 * Each rank builds a tree over its own bodies, tells every rank the cover
 * of its bodies (at most 32 boxes round the cells near the top of its tree,
 * sim_let_cover: one box round a Morton domain would also hold the space
 * between its pieces) and their largest softening (an allgather of 195
 * doubles a rank), exports to each other rank the part of its tree that
 * rank's cover needs (sim_let_export_cover), exchanges those buffers (one
 * all-to-all), and walks its own tree plus the received ones in rank order
 * (sim_let_accel): the forces of its own bodies only, within the tree's
 * tolerance of the one-process tree (the cells differ: each rank's tree is
 * over its own bodies). No rank holds every body: a rank holds its own
 * bodies, its tree, and what the others' covers need of theirs.
 *
 * The tree is one of two rows of let_impls: the CPU's (sim/let.h, built
 * and freed each evaluation) or the GPU's (gpu.h's gpu_let_*: the own
 * bodies go up to the device each evaluation, the tree is built, selected
 * for export and walked there; the device buffers stay between
 * evaluations in *state). The exchange around them is the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/let.h"
#include "dist.h"
#include "sim_internal.h"

/* A rank's record in the allgather: its bodies, their largest softening,
 * the number of boxes of its cover and the boxes (6 doubles each, at most
 * the row's max_boxes). */
enum { LET_MAXBOX = 256, LET_REC = 3 + 6 * LET_MAXBOX };

/* One way to make, cover, export and walk a rank's own tree. */
struct let_impl {
	/* tree (*tree) of st's bodies; *state the row's between evaluations;
	 * active: the bodies walk will be asked for (NULL: all) */
	int (*build)(void **state, void **tree, const struct sim_state *st, const struct sim_params *p,
		     const double *each, const unsigned char *active);
	int (*cover)(void *tree, int max, double *boxes, int *nbox);
	int (*export_to)(void *tree, const double *boxes, int nbox, double eps_max, void **buf,
			 size_t *nbytes);
	/* st->acc, st->pot and work (n) of the own bodies (the active ones;
	 * NULL: all) */
	int (*walk)(void *tree, const void *const *bufs, const size_t *nbytes, int nbuf,
		    const struct sim_state *st, const unsigned char *active, double *work);
	void (*drop)(void **tree); /* after each evaluation */
	size_t align;              /* a received buffer must start on this many bytes */
	int max_boxes;             /* a cover's boxes, at most LET_MAXBOX */
};

/* Every rank's record into all (P x LET_REC), on every rank. 0 or
 * NB_ERUNTIME (logged). */
static int let_covers(const struct let_impl *im, void *t, const struct sim_state *st,
		      const struct sim_params *p, const double *each, double *all)
{
	const int P = dist_size(), me = dist_rank();
	double *mine = calloc(LET_REC, sizeof *mine);
	if (!mine)
		dist_fail("out of memory");
	int nbox = 0;
	int rc = im->cover(t, im->max_boxes, mine + 3, &nbox);
	double e = p->softening;
	for (size_t i = 0; each && i < st->n; i++)
		e = i == 0 || each[i] > e ? each[i] : e;
	mine[0] = (double)st->n;
	mine[1] = e;
	mine[2] = rc ? 0 : nbox;
	const int debug = getenv("NB_DIST_DEBUG") != NULL;
	for (int k = 0; debug && k < nbox; k++)
		fprintf(stderr, "rank %d: cover box %d: [%g %g %g] - [%g %g %g]\n", me, k, mine[3 + 6 * k],
			mine[4 + 6 * k], mine[5 + 6 * k], mine[6 + 6 * k], mine[7 + 6 * k], mine[8 + 6 * k]);
	size_t *b = malloc(2 * (size_t)P * sizeof *b);
	if (!b)
		dist_fail("out of memory");
	const size_t rec = LET_REC * sizeof *mine;
	for (int r = 0; r < P; r++) {
		b[r] = rec;
		b[P + r] = (size_t)r * rec;
	}
	memcpy(all + (size_t)me * LET_REC, mine, rec);
	dist_allgatherv(mine, all, b, b + P, "domains' covers"); /* every rank, even failed */
	free(b);
	free(mine);
	return rc;
}

/* The exports for every other rank with bodies, packed one after the other
 * (*out malloc'd; sz, off: P each, bytes), each appended as it is made so
 * that at most one export is held beside the packed ones. 0 or NB_ERUNTIME
 * (logged). */
static int let_exports(const struct let_impl *im, void *t, const double *box, size_t *sz,
		       size_t *off, char **out)
{
	const int P = dist_size(), me = dist_rank(), debug = getenv("NB_DIST_DEBUG") != NULL;
	size_t total = 0;
	int rc = 0;
	*out = malloc(1);
	for (int r = 0; r < P; r++)
		sz[r] = off[r] = 0;
	for (int r = 0; r < P && *out && !rc; r++) {
		const double *b = box + (size_t)r * LET_REC;
		void *buf = NULL;
		off[r] = total;
		if (r == me || !(b[0] > 0))
			continue;
		if ((rc = im->export_to(t, b + 3, (int)b[2], b[1], &buf, &sz[r])))
			break; /* logged */
		if (debug)
			fprintf(stderr, "rank %d: export to rank %d (%d boxes): %zu bytes\n", me, r,
				(int)b[2], sz[r]);
		char *grown = realloc(*out, total + sz[r] + 1);
		if (grown)
			memcpy(grown + total, buf, sz[r]);
		else
			free(*out);
		*out = grown;
		total += sz[r];
		free(buf);
	}
	if (!rc && !*out) {
		log_error("out of memory for the locally essential trees");
		rc = NB_ERUNTIME;
	}
	return rc;
}

/* The received trees in rank order: pointers into in where a block starts
 * on the row's boundary (malloc aligns in), else a copy of its own; then
 * the own and remote walks. */
static int let_walk(const struct let_impl *im, void *t, const char *in, const size_t *rb,
		    const size_t *ro, const struct sim_state *st, const unsigned char *active,
		    double *work)
{
	const int P = dist_size();
	const void **bufs = calloc((size_t)P, sizeof *bufs);
	void **copies = calloc((size_t)P, sizeof *copies);
	size_t *nb = calloc((size_t)P, sizeof *nb);
	int nbuf = 0, rc = bufs && copies && nb ? 0 : NB_ERUNTIME;
	for (int r = 0; r < P && !rc; r++) {
		if (!rb[r])
			continue;
		if (ro[r] % im->align == 0) {
			bufs[nbuf] = in + ro[r];
		} else if ((copies[nbuf] = malloc(rb[r]))) {
			memcpy(copies[nbuf], in + ro[r], rb[r]);
			bufs[nbuf] = copies[nbuf];
		} else {
			rc = NB_ERUNTIME;
			break;
		}
		nb[nbuf++] = rb[r];
	}
	if (rc)
		log_error("out of memory for the received trees");
	else
		rc = im->walk(t, bufs, nb, nbuf, st, active, work);
	for (int k = 0; copies && k < nbuf; k++)
		free(copies[k]);
	free(copies);
	free((void *)bufs);
	free(nb);
	return rc;
}

/* ---- the CPU's row: sim/let.h, a tree built and freed each evaluation ---- */
/* The domains' global cube (dist_own_box, a collective call) as lo[3],
 * hi[3]: every rank's tree over it has the global Morton cells, so a
 * cover box round one of them holds no other rank's territory but at the
 * cuts themselves. Over each rank's own box, cells straddled the others'
 * domains and their cover boxes opened them whole (a CPU trace, 200k
 * bodies over 2 ranks: one rank exported 5.8 MB whatever theta). */
static void let_cube(const struct sim_state *st, double cube[6])
{
	double lo[3], scale;
	dist_own_box(st->pos, st->n, lo, &scale);
	for (int a = 0; a < 3; a++)
		cube[a] = lo[a], cube[3 + a] = lo[a] + (scale > 0 ? 2097152.0 / scale : 0);
}

static int cpu_build(void **state, void **tree, const struct sim_state *st,
		     const struct sim_params *p, const double *each, const unsigned char *active)
{
	(void)state, (void)active; /* the walk skips the inactive groups */
	const struct sim_soft s = {.kernel = p->soft_kernel, .eps = p->softening, .each = each};
	double cube[6];
	let_cube(st, cube);
	return sim_let_build_in(st->pos, st->mass, st->n, &s, p, cube,
				(struct sim_let_tree **)tree);
}

static int cpu_cover(void *t, int max, double *boxes, int *nbox)
{
	return sim_let_cover(t, max, boxes, nbox);
}

static int cpu_export(void *t, const double *boxes, int nbox, double eps_max, void **buf,
		      size_t *nbytes)
{
	return sim_let_export_cover(t, boxes, nbox, eps_max, buf, nbytes);
}

static int cpu_walk(void *t, const void *const *bufs, const size_t *nbytes, int nbuf,
		    const struct sim_state *st, const unsigned char *active, double *work)
{
	return sim_let_accel_active(t, active, bufs, nbytes, nbuf, st->acc, st->pot, work);
}

static void cpu_drop(void **t)
{
	sim_let_free((struct sim_let_tree **)t);
}

/* ---- the GPU's row: gpu.h's gpu_let_*, kept in *state ------------------- */
struct let_gpu {
	struct gpu_let *g;
	int shared; /* this host's ranks outnumber its GPUs: they share one */
};

static int gpu_build(void **state, void **tree, const struct sim_state *st,
		     const struct sim_params *p, const double *each, const unsigned char *active)
{
	(void)each; /* one length: ranks_refuse.c refuses lengths per body on GPUs */
	struct let_gpu *lg = *state;
	if (!lg) {
		int dev = 0, count = 0, rc;
		if (!(lg = calloc(1, sizeof *lg))) {
			log_error("out of memory");
			return NB_ERUNTIME;
		}
		*state = lg;
		if (gpu_bind_local(dist_local_rank(), &dev, &count))
			return NB_ERUNTIME; /* logged */
		lg->shared = dist_local_size() > count;
		if ((rc = gpu_let_create(p, &lg->g)))
			return rc;
	}
	/* over the global cube (let_cube; on the GPU over each rank's own
	 * box, 16M bodies, 2 ranks: one rank sent 210 MB a step whatever
	 * theta, 60 MB over the cube) */
	double cube[6];
	let_cube(st, cube);
	*tree = lg;
	return gpu_let_build(lg->g, st->pos, st->mass, st->n, active, cube);
}

static int gpu_cover(void *t, int max, double *boxes, int *nbox)
{
	return gpu_let_cover(((struct let_gpu *)t)->g, max, boxes, nbox);
}

static int gpu_export(void *t, const double *boxes, int nbox, double eps_max, void **buf,
		      size_t *nbytes)
{
	(void)eps_max; /* one length, the same on every rank */
	return gpu_let_export(((struct let_gpu *)t)->g, boxes, nbox, buf, nbytes);
}

/* work: the rank's device time spread over the bodies it walked (the cuts
 * balance time; the walk's interaction counts stay on the device). Ranks
 * that share a GPU time each other's kernels as well as their own: they
 * balance the walked bodies' counts instead. */
static int gpu_walk(void *t, const void *const *bufs, const size_t *nbytes, int nbuf,
		    const struct sim_state *st, const unsigned char *active, double *work)
{
	const struct let_gpu *lg = t;
	int rc = gpu_let_accel(lg->g, bufs, nbytes, nbuf, active, st->acc, st->pot);
	double own = 0, remote = 0, walked = 0;
	gpu_let_times(lg->g, &own, &remote);
	for (size_t i = 0; i < st->n; i++)
		walked += !active || active[i];
	for (size_t i = 0; !rc && i < st->n; i++)
		if (!active || active[i])
			work[i] = lg->shared ? 1.0 : (own + remote) / walked;
	return rc;
}

static void gpu_drop(void **t)
{
	*t = NULL; /* the state keeps it */
}

static const struct let_impl let_impls[] = {
	{cpu_build, cpu_cover, cpu_export, cpu_walk, cpu_drop, sizeof(double), 32},
	/* the device tests each cell against every box at once: finer covers
	 * (a Morton domain's pieces boxed apart) cost little there */
	{gpu_build, gpu_cover, gpu_export, gpu_walk, gpu_drop, 16, 256},
};

static int let_force(const struct let_impl *im, void **state, const struct sim_state *st,
		     const struct sim_params *p, const double *each, const unsigned char *active,
		     double *work, size_t *held)
{
	const int P = dist_size();
	void *t = NULL;
	int rc = im->build(state, &t, st, p, each, active);
	double *box = malloc((size_t)P * LET_REC * sizeof *box);
	size_t *sz = malloc(4 * (size_t)P * sizeof *sz);
	char *out = NULL, *in = NULL;
	if (rc) /* logged; the rank's failure reaches the others (dist.h) */
		goto end;
	if (!box || !sz) {
		log_error("out of memory for the domains' boxes");
		rc = NB_ERUNTIME;
		goto end;
	}
	rc = let_covers(im, t, st, p, each, box);
	if (rc || (rc = dist_broken()) || (rc = let_exports(im, t, box, sz, sz + P, &out)))
		goto end;
	in = dist_alltoallv(out, sz, sz + P, sz + 2 * P, sz + 3 * P, "locally essential trees");
	if (!in) { /* rank 0: the exchange broke (logged); out stays with it */
		out = NULL;
		rc = NB_ERUNTIME;
		goto end;
	}
	free(out); /* sent: the walk needs only what came in */
	out = NULL;
	size_t sent = 0, got = 0;
	for (int r = 0; r < P; r++)
		sent += sz[r], got += sz[2 * P + r];
	*held = sent + got; /* both, while the exchange runs */
	rc = let_walk(im, t, in, sz + 2 * P, sz + 3 * P, st, active, work);
end:
	free(in);
	free(out);
	free(box);
	free(sz);
	if (t)
		im->drop(&t);
	return rc;
}

int dist_let_force(void **state, const struct sim_state *st, const struct sim_params *p,
		   const double *each, const unsigned char *active, double *work, size_t *held)
{
	return let_force(&let_impls[0], state, st, p, each, active, work, held);
}

int dist_let_force_gpu(void **state, const struct sim_state *st, const struct sim_params *p,
		       const double *each, const unsigned char *active, double *work, size_t *held)
{
	return let_force(&let_impls[1], state, st, p, each, active, work, held);
}

void dist_let_release(void **state)
{
	struct let_gpu *lg = *state;
	if (lg)
		gpu_let_free(&lg->g);
	free(lg);
	*state = NULL;
}

size_t dist_let_device_bytes(void *state)
{
	const struct let_gpu *lg = state;
	return lg ? gpu_let_bytes(lg->g) : 0;
}
