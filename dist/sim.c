/* sim.c - one simulation over the ranks: the force function the engine
 * calls once per step (struct engine_split, dist_sim_split), the domains it keeps
 * balanced, and the rank's own bodies for the renderer (dist.h).
 *
 * Per force call, on every rank:
 *   1. every NB_DIST_REBALANCE calls (default 8), or after a call whose
 *      work was more than NB_DIST_IMBALANCE (default 0.10) over the mean:
 *      recut the domains along the Morton curve by the last measured work
 *      of each body (identical on every rank, so the cuts are too);
 *   2. the forces of the rank's own bodies: the direct sum in body order
 *      (dist_direct_rows), or the replicated tree's walk of the groups
 *      holding an own body (sim_tree_accel_sel); each body's work counted
 *      (direct: n - 1 pairs; tree: its interactions);
 *   3. exchange: each rank's (ax, ay, az, phi, work) per own body, 40
 *      bytes a body, to every rank (dist_allgatherv), unpacked by index.
 * The state the engine then kicks is the same on every rank.
 *
 * GPU ranks (the state and the forces on each rank's GPU) keep their
 * figures in the same struct; their callbacks are dist/sim_gpu.c's.
 *
 * NB_DIST_DIE=R:S (a test hook) makes rank R _exit(1) at force call S
 * (call 0 is the first accelerations, call s the s-th step);
 * NB_DIST_DEBUG=1 prints each rank's domain at every cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist.h"
#include "sim_internal.h"

void dist_sim_stats(const struct dist_sim *ds, struct dist_stats *s)
{
	*s = ds->stats;
	if (ds->domains) {
		s->owned = ds->st->n;
		return;
	}
	const size_t *cut = ds->gpu ? ds->gcut : ds->dom.cut;
	s->owned = cut[ds->rank + 1] - cut[ds->rank];
}

int dist_sim_on_gpus(const struct dist_sim *ds)
{
	return ds && ds->gpu;
}

const struct gpu_ranks *dist_sim_gpu_ranks(struct dist_sim *ds)
{
	return ds->gpu ? &ds->ranks : NULL;
}

void dist_sim_free(struct dist_sim **pds)
{
	struct dist_sim *ds = pds ? *pds : NULL;
	if (!ds)
		return;
	if (ds->solver && ds->solver->release) /* domains: the forces' own state */
		ds->solver->release(&ds->solver_state);
	dist_domain_free(&ds->dom);
	free(ds->w);
	free(ds->packed);
	free(ds->eps);
	free(ds->pot);
	free(ds->rowout);
	free(ds->mine);
	free(ds->bytes);
	free(ds->sub.pos);
	free(ds->sub.vel);
	free(ds->sub.mass);
	free(ds->sub.id);
	free(ds->sub.comp);
	free(ds->sub_h);
	free(ds->gcut);
	free(ds->gnext);
	free(ds->gtime);
	free(ds->own.key);
	free(ds->own.work);
	free(ds->tick_work);
	free(ds->bound);
	free(ds);
	*pds = NULL;
}

long dist_sim_env_long(const char *name, long def)
{
	const char *s = getenv(name);
	return s && *s ? atol(s) : def;
}

/* What CPU or GPU ranks refuse (every rank alike, rank 0 says it once):
 * NB_EINPUT, or 0. */
static int sim_refuse(const struct scene *sc, const struct sim_state *st, int gpu)
{
	/* GPU ranks: rank 0 holds every body and draws them all, so dust and
	 * the diffuse layer work there; CPU ranks each splat their own */
	if (!gpu && render_dust_present(st)) {
		if (dist_rank() == 0) /* every rank refuses alike: one message */
			log_error("dust (bodies.*.dust) over %d MPI ranks is not written yet: its depth slabs "
				  "must be global (bounds from an MPI_Allreduce of each rank's min/max depth); "
				  "run it on one rank",
				  dist_size());
		return NB_EINPUT;
	}
	if (!gpu && sc->render.style == SCENE_STYLE_STARS && sc->render.diffuse > 0) {
		if (dist_rank() == 0) /* every rank refuses alike: one message */
			log_error("render.diffuse over %d MPI ranks is not written yet (its layer is made from "
				  "the whole picture); set render.diffuse: 0 or run on one rank",
				  dist_size());
		return NB_EINPUT;
	}
	if (sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL) {
		/* dist_ranks_refuse said so before any work (app_preflight) */
		log_error("simulation.timesteps: individual over replicated ranks (internal)");
		return NB_EINPUT;
	}
	if (st->n > UINT32_MAX) {
		if (dist_rank() == 0) /* every rank refuses alike: one message */
			log_error("%zu bodies: more than dist/ indexes (2^32)", st->n);
		return NB_EINPUT;
	}
	return 0;
}

/* CPU ranks: ds's buffers (its domains made) and description. 0, or
 * NB_ERUNTIME (out of memory; not logged, the caller frees ds). */
static int sim_cpu_setup(struct dist_sim *ds, const struct scene *sc)
{
	const size_t n = ds->n;
	const size_t n1 = n ? n : 1;
	ds->w = malloc(n1 * sizeof *ds->w);
	ds->packed = malloc(DIST_VALS * n1 * sizeof *ds->packed);
	ds->pot = malloc(n1 * sizeof *ds->pot);
	ds->rowout = malloc(4 * n1 * sizeof *ds->rowout);
	ds->mine = malloc(n1);
	ds->bytes = malloc(2 * (size_t)ds->P * sizeof *ds->bytes);
	if (!ds->w || !ds->packed || !ds->pot || !ds->rowout || !ds->mine || !ds->bytes)
		return NB_ERUNTIME;
	ds->off = ds->bytes + ds->P;
	for (size_t i = 0; i < n; i++)
		ds->w[i] = 1.0;
	int nt = 1;
#ifdef _OPENMP
	nt = omp_get_max_threads();
#endif
	if (sc->simulation.solver == SCENE_SOLVER_BARNES_HUT)
		snprintf(ds->desc, sizeof ds->desc,
			 "cpu over %d MPI ranks (%d thread%s each, barnes-hut theta %g, replicated tree, "
			 "Morton domains)",
			 ds->P, nt, nt == 1 ? "" : "s", sc->simulation.theta);
	else
		snprintf(ds->desc, sizeof ds->desc,
			 "cpu over %d MPI ranks (%d thread%s each, direct in body order, Morton domains)",
			 ds->P, nt, nt == 1 ? "" : "s");
	return 0;
}

int dist_sim_create(const struct scene *sc, const struct sim_state *st, int gpu,
		    struct dist_sim **out)
{
	*out = NULL;
	int rc = sim_refuse(sc, st, gpu);
	if (rc)
		return rc;
	struct dist_sim *ds = calloc(1, sizeof *ds);
	if (!ds)
		goto oom;
	const size_t n = st->n;
	ds->n = n;
	ds->P = dist_size();
	ds->rank = dist_rank();
	ds->gpu = gpu;
	ds->every = (int)dist_sim_env_long("NB_DIST_REBALANCE", 8);
	if (ds->every < 1)
		ds->every = 1;
	const char *th = getenv("NB_DIST_IMBALANCE");
	ds->threshold = th && *th ? atof(th) : 0.10;
	ds->recut = 1;
	ds->die_rank = -1;
	const char *die = getenv("NB_DIST_DIE");
	if (die && sscanf(die, "%d:%ld", &ds->die_rank, &ds->die_call) != 2)
		ds->die_rank = -1;
	if (gpu) {
		if (dist_sim_gpu_setup(ds)) {
			dist_sim_free(&ds);
			goto oom;
		}
		snprintf(ds->desc, sizeof ds->desc, "cuda over %d MPI ranks", ds->P);
		goto done;
	}
	if (dist_domain_init(&ds->dom, n, ds->P)) {
		free(ds);
		return NB_ERUNTIME;
	}
	if (sim_cpu_setup(ds, sc)) {
		dist_sim_free(&ds);
		goto oom;
	}
	struct sim_params p;
	sim_params_of(sc, &p);
	if (p.soft_mixed) { /* body order is fixed: every rank holds every body */
		if (!(ds->eps = malloc((n ? n : 1) * sizeof *ds->eps))) {
			dist_sim_free(&ds);
			goto oom;
		}
		sim_soft_each(st, ds->eps);
	}
done:
	*out = ds;
	return 0;
oom:
	log_error("out of memory for a simulation of %zu bodies over %d ranks", st->n, dist_size());
	return NB_ERUNTIME;
}

/* Step 1: new domains from pos and the last work. */
static void sim_recut(struct dist_sim *ds, const double *pos)
{
	double t = dist_sim_now();
	dist_domain_cut(&ds->dom, pos, ds->calls > 0 ? ds->w : NULL);
	memset(ds->mine, 0, ds->n);
	for (size_t k = ds->dom.cut[ds->rank]; k < ds->dom.cut[ds->rank + 1]; k++)
		ds->mine[ds->dom.order[k]] = 1;
	for (int r = 0; r < ds->P; r++) {
		ds->bytes[r] = (ds->dom.cut[r + 1] - ds->dom.cut[r]) * DIST_VALS * sizeof(double);
		ds->off[r] = ds->dom.cut[r] * DIST_VALS * sizeof(double);
	}
	ds->recut = 0;
	ds->stats.rebalances++;
	if (getenv("NB_DIST_DEBUG"))
		fprintf(stderr, "rank %d: recut at call %ld: [%zu, %zu)\n", ds->rank, ds->calls,
			ds->dom.cut[ds->rank], ds->dom.cut[ds->rank + 1]);
	ds->stats.t_rebalance += dist_sim_now() - t;
}

/* Step 2: the forces of this rank's bodies rows[0..nrows) (their work
 * too) into mine_out, DIST_VALS each, with the scene's softening (each
 * body's length when they differ: ds->eps). */
static void sim_own_forces(struct dist_sim *ds, const struct sim_params *p, const double *pos,
			   const double *mass, double *acc, const uint32_t *rows, size_t nrows,
			   double *mine_out)
{
	const size_t n = ds->n;
	const struct sim_soft soft = {.kernel = p->soft_kernel, .eps = p->softening, .each = ds->eps};
	if (p->solver == SCENE_SOLVER_BARNES_HUT) {
		int err = sim_tree_accel_soft(pos, mass, n, &soft, p->theta, p->multipoles,
					      p->opening, ds->mine, acc, ds->pot, ds->w);
		if (err)
			dist_fail("barnes-hut forces failed (out of memory)");
		for (size_t k = 0; k < nrows; k++) {
			const size_t i = rows[k];
			double *o = mine_out + DIST_VALS * k;
			o[0] = acc[3 * i];
			o[1] = acc[3 * i + 1];
			o[2] = acc[3 * i + 2];
			o[3] = ds->pot[i];
			o[4] = ds->w[i];
		}
	} else {
		dist_direct_rows_soft(pos, mass, n, &soft, rows, nrows, ds->rowout);
		for (size_t k = 0; k < nrows; k++) {
			double *o = mine_out + DIST_VALS * k;
			memcpy(o, ds->rowout + 4 * k, 4 * sizeof *o);
			o[4] = n > 0 ? (double)(n - 1) : 0;
		}
	}
}

int dist_sim_force(void *ctx, const struct sim_params *p, const double *pos, const double *mass,
		   size_t n, double *acc, double *pot)
{
	struct dist_sim *ds = ctx;
	if (n != ds->n) {
		log_error("dist: force for %zu bodies, the domains hold %zu (internal)", n, ds->n);
		return NB_ERUNTIME;
	}
	if (dist_broken())
		return NB_ERUNTIME; /* rank 0: the ranks can no longer exchange (logged) */
	if (ds->rank == ds->die_rank && ds->calls == ds->die_call)
		_exit(1); /* NB_DIST_DIE: a rank that dies without a word */
	if (ds->recut || ds->calls % ds->every == 0)
		sim_recut(ds, pos);
	const size_t c0 = ds->dom.cut[ds->rank], c1 = ds->dom.cut[ds->rank + 1];
	const uint32_t *rows = ds->dom.order + c0;
	double *mine_out = ds->packed + DIST_VALS * c0;
	double t = dist_sim_now();
	sim_own_forces(ds, p, pos, mass, acc, rows, c1 - c0, mine_out);
	double t1 = dist_sim_now();
	/* stopped (rank 0 only: the others leave it to rank 0, dist_defers_stop):
	 * this step is not finished; the run's end is decided by rank 0 */
	if (sim_stop_requested())
		return NB_EINTR;

	uint64_t s0, r0, s1, r1;
	dist_bytes(&s0, &r0);
	dist_allgatherv(mine_out, ds->packed, ds->bytes, ds->off, "force exchange");
	dist_bytes(&s1, &r1);
	if (dist_broken())
		return NB_ERUNTIME;
	ds->stats.bytes_sent += s1 - s0;
	ds->stats.bytes_received += r1 - r0;
	dist_sim_add_times(ds, t1 - t, dist_sim_now() - t1);
	double *work = calloc((size_t)ds->P, sizeof *work);
	if (!work)
		dist_fail("out of memory");
	for (int r = 0; r < ds->P; r++)
		for (size_t k = ds->dom.cut[r]; k < ds->dom.cut[r + 1]; k++) {
			const size_t i = ds->dom.order[k];
			const double *o = ds->packed + DIST_VALS * k;
			acc[3 * i] = o[0];
			acc[3 * i + 1] = o[1];
			acc[3 * i + 2] = o[2];
			if (pot)
				pot[i] = o[3];
			ds->w[i] = o[4];
			work[r] += o[4];
		}
	ds->stats.work_imbalance = dist_imbalance(work, ds->P);
	if (ds->calls > 0 && ds->stats.work_imbalance > ds->stats.work_imbalance_max)
		ds->stats.work_imbalance_max = ds->stats.work_imbalance;
	if (ds->stats.work_imbalance > 1 + ds->threshold)
		ds->recut = 1;
	free(work);
	ds->calls++;
	ds->stats.steps = ds->calls - 1;
	return 0;
}

int dist_sim_subset(struct dist_sim *ds, const struct sim_state *st, const double *h,
		    struct sim_state *sub, const double **sub_h)
{
	const size_t m = ds->dom.cut[ds->rank + 1] - ds->dom.cut[ds->rank];
	struct sim_state *s = &ds->sub;
	if (s->n < m || !s->pos) {
		free(s->pos);
		free(s->vel);
		free(s->mass);
		free(s->id);
		free(s->comp);
		free(ds->sub_h);
		s->pos = malloc(3 * (m + 1) * sizeof *s->pos);
		s->vel = malloc(3 * (m + 1) * sizeof *s->vel);
		s->mass = malloc((m + 1) * sizeof *s->mass);
		s->id = malloc((m + 1) * sizeof *s->id);
		s->comp = malloc((m + 1) * sizeof *s->comp);
		ds->sub_h = malloc((m + 1) * sizeof *ds->sub_h);
		if (!s->pos || !s->vel || !s->mass || !s->id || !s->comp || !ds->sub_h) {
			log_error("out of memory for this rank's %zu bodies to render", m);
			return NB_ERUNTIME;
		}
	}
	/* in body order, as one process splats them */
	size_t k = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (!ds->mine[i])
			continue;
		memcpy(s->pos + 3 * k, st->pos + 3 * i, 3 * sizeof *s->pos);
		memcpy(s->vel + 3 * k, st->vel + 3 * i, 3 * sizeof *s->vel);
		s->mass[k] = st->mass[i];
		s->id[k] = st->id[i];
		s->comp[k] = st->comp[i];
		if (h)
			ds->sub_h[k] = h[i];
		k++;
	}
	*sub = *s;
	sub->n = k;
	sub->acc = NULL;
	sub->pot = NULL;
	sub->ncomp = st->ncomp;
	sub->comps = st->comps;
	sub->time = st->time;
	sub->step = st->step;
	s->n = s->n > m ? s->n : m; /* capacity */
	*sub_h = h ? ds->sub_h : NULL;
	return 0;
}

/* struct engine_split's bodies and sum (ctx: the dist_sim) */
static int sim_split_bodies(void *ctx, const struct sim_state *st, const double *h,
			    struct sim_state *sub, const double **sub_h)
{
	return dist_sim_subset(ctx, st, h, sub, sub_h);
}

static void sim_split_sum(void *ctx, float *buf, size_t n)
{
	(void)ctx;
	dist_sum_floats(buf, n, "frame sum");
}

int dist_sim_domains(const struct dist_sim *ds)
{
	return ds && ds->domains;
}

size_t dist_sim_total(const struct dist_sim *ds)
{
	return ds->n;
}

void dist_sim_split(struct dist_sim *ds, struct engine_split *out)
{
	if (ds->domains) { /* dist/domains.c's, made by dist_domains_create */
		*out = ds->dsplit;
		return;
	}
	*out = (struct engine_split){.force = dist_sim_force, .bodies = sim_split_bodies,
				     .sum = sim_split_sum, .ctx = ds, .desc = ds->desc};
}

double *dist_sim_gather_figures(const struct dist_sim *ds, const double *mine, int nv)
{
	const size_t bytes = (size_t)nv * sizeof *mine;
	double *all = ds->rank == 0 ? malloc((size_t)ds->P * bytes) : NULL;
	if (ds->rank == 0 && !all)
		dist_fail("out of memory");
	dist_gather(mine, bytes, all, "run report");
	if (ds->rank != 0 || dist_broken()) {
		free(all);
		return NULL;
	}
	return all;
}

void dist_sim_report(const struct dist_sim *ds)
{
	enum { NV = 12 };
	struct dist_stats s;
	dist_sim_stats(ds, &s);
	double mine[NV] = {(double)s.owned, s.t_force, s.t_exchange, s.t_rebalance,
			   (double)s.bytes_sent, (double)s.bytes_received, (double)s.steps,
			   (double)s.rebalances, s.work_imbalance, s.work_imbalance_max,
			   s.t_first_force, s.t_first_exchange};
	double *all = dist_sim_gather_figures(ds, mine, NV);
	for (int r = 0; all && r < ds->P; r++) {
		const double *v = all + (size_t)r * NV;
		/* force and exchange: the steps' mean (the first evaluation apart);
		 * rebalance and bytes: every evaluation's, per evaluation */
		const double steps = v[6] > 0 ? v[6] : 1, calls = v[6] + 1;
		log_info("rank %d: %.0f bodies, per step: force %.3g ms, exchange %.3g ms, rebalance "
			 "%.3g ms, sent %.0f B, received %.0f B; %.0f recuts in %.0f steps, work "
			 "max/mean %.3f (worst %.3f); first evaluation: force %.3g ms, exchange %.3g ms",
			 r, v[0], 1e3 * v[1] / steps, 1e3 * v[2] / steps, 1e3 * v[3] / calls,
			 v[4] / calls, v[5] / calls, v[7], steps, v[8], v[9], 1e3 * v[10],
			 1e3 * v[11]);
	}
	free(all);
}

/* FNV-1a over n bytes taken 8 at a time (the rest byte by byte),
 * continuing from h: a word a multiply, ~8x the bytewise hash's speed, for
 * states of many GB; enough to tell replicas apart, not a cryptographic
 * check. */
static uint64_t sim_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t k = 0;
	for (; k + 8 <= n; k += 8) {
		uint64_t w;
		memcpy(&w, b + k, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	for (; k < n; k++)
		h = (h ^ b[k]) * 1099511628211ull;
	return h;
}

int dist_sim_check_replicas(const struct dist_sim *ds, const struct sim_state *st)
{
	uint64_t h = 1469598103934665603ull;
	h = sim_fnv(h, st->pos, 3 * st->n * sizeof *st->pos);
	h = sim_fnv(h, st->vel, 3 * st->n * sizeof *st->vel);
	h = sim_fnv(h, &st->time, sizeof st->time);
	/* NB_DIST_PERTURB=R (a test hook): rank R's hash as if one bit of its
	 * state differed, so the check is seen to fail */
	const char *pert = getenv("NB_DIST_PERTURB");
	if (pert && *pert && atoi(pert) == ds->rank)
		h ^= 1;
	uint64_t *all = ds->rank == 0 ? malloc((size_t)ds->P * sizeof *all) : NULL;
	if (ds->rank == 0 && !all)
		dist_fail("out of memory");
	dist_gather(&h, sizeof h, all, "state hashes");
	if (ds->rank != 0)
		return 0;
	if (dist_broken()) {
		free(all);
		return NB_ERUNTIME;
	}
	int rc = 0;
	for (int r = 1; r < ds->P; r++)
		if (all[r] != all[0]) {
			log_error("MPI ranks: rank %d's state differs from rank 0's after step %ld (hash "
				  "%016llx, rank 0 %016llx): the replicas diverged",
				  r, st->step, (unsigned long long)all[r], (unsigned long long)all[0]);
			rc = NB_ERUNTIME;
		}
	if (rc == 0)
		log_info("MPI ranks: all %d ranks hold the same state after step %ld (hash %016llx)",
			 ds->P, st->step, (unsigned long long)all[0]);
	free(all);
	return rc;
}
