/* domains.c - one simulation over ranks that each hold only their own
 * bodies (simulation.ranks: domains; dist.h, issue 31): the engine's state
 * on a rank is its domain's bodies, and the split's callbacks (struct
 * engine_split) serve it.
 *
 * Per force call (the engine calls it after each drift, and once for the
 * first accelerations), on every rank (individual time steps: steps 1-3
 * between block steps, dom_regroup, which carries each body's level, and
 * step 4 at every tick for the active bodies, dom_force_active, each
 * body's work summed over the block step for the next cuts):
 *   1. the global bounding cube (a maximum over the ranks) and each own
 *      body's Morton key in it;
 *   2. every NB_DIST_REBALANCE calls (default 8), or after a call whose
 *      work was more than NB_DIST_IMBALANCE (0.10) over the mean: new cuts
 *      from the work each body took at the last call (dist/own.c);
 *   3. migration: bodies whose key left the domain go to its owner
 *      (dist/migrate.c); the state is then this rank's, in key order;
 *   4. the forces of the own bodies and their work: dist/ring.c's direct
 *      sum, or dist/let_force.c's locally essential trees (Barnes-Hut).
 * The renderer draws st itself (the rank's bodies; adaptive smoothing
 * lengths with a halo of the other ranks' bodies, dist/halo.c) and the
 * frames are summed on rank 0; the statistics and camera.follow's centre
 * of mass are sums over the ranks (the split's sums, engine/ranks.c).
 *
 * Creation: each rank makes only its own bodies, the indices [r n / P,
 * (r+1) n / P) of one process's (dist/create.c, bit for bit), or reads its
 * share of a scene of snapshots (dist/snapin.c), and the first force call
 * migrates them to their owners (dist_domains_create_own). Only --restart
 * builds every body on every rank and keeps that slice (dist_domains_create):
 * the restart snapshot is read whole. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "sim_internal.h"

/* Keep bodies [a, b) of st (in place; the first migration replaces the
 * arrays with ones of this rank's size). */
static void dom_keep(struct sim_state *st, size_t a, size_t b)
{
	const size_t m = b - a;
	memmove(st->pos, st->pos + 3 * a, 3 * m * sizeof *st->pos);
	memmove(st->vel, st->vel + 3 * a, 3 * m * sizeof *st->vel);
	memmove(st->acc, st->acc + 3 * a, 3 * m * sizeof *st->acc);
	memmove(st->mass, st->mass + a, m * sizeof *st->mass);
	memmove(st->pot, st->pot + a, m * sizeof *st->pot);
	memmove(st->id, st->id + a, m * sizeof *st->id);
	memmove(st->comp, st->comp + a, m * sizeof *st->comp);
	st->n = m;
}

struct dom_kw {
	uint64_t key;
	double w;
};

static int dom_kw_cmp(const void *a, const void *b)
{
	const struct dom_kw *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* The domains' forces, one row a solver (dist.h: the same contract). */
static const struct dist_dom_solver dom_solvers[] = {
	{SCENE_SOLVER_DIRECT, 0, dist_ring_direct, NULL, NULL,
	 "direct sum passed round a ring of the ranks", NULL},
	{SCENE_SOLVER_BARNES_HUT, 0, dist_let_force, NULL, NULL, "barnes-hut theta ",
	 ", locally essential trees"},
	{SCENE_SOLVER_BARNES_HUT, 1, dist_let_force_gpu, dist_let_release, dist_let_device_bytes,
	 "barnes-hut theta ", ", locally essential trees built, exchanged and walked on each GPU"},
};

/* Step 2: new cuts from the keys and the last work, over the ranks. */
static void dom_recut(struct dist_sim *ds)
{
	struct sim_state *st = ds->st;
	const size_t n = st->n;
	uint64_t *k = malloc((n ? n : 1) * sizeof *k);
	double *w = malloc((n ? n : 1) * sizeof *w);
	struct dom_kw *kw = malloc((n ? n : 1) * sizeof *kw);
	if (!k || !w || !kw)
		dist_fail("out of memory for the cuts of %zu bodies", n);
	for (size_t i = 0; i < n; i++)
		kw[i] = (struct dom_kw){ds->own.key[i], ds->calls > 0 ? ds->own.work[i] : 1.0};
	dist_psort(kw, n, sizeof *kw, dom_kw_cmp);
	for (size_t i = 0; i < n; i++) {
		k[i] = kw[i].key;
		w[i] = kw[i].w;
	}
	dist_own_cut(k, w, n, ds->P, ds->bound);
	free(k), free(w), free(kw);
	ds->recut = 0;
	ds->stats.rebalances++;
	if (getenv("NB_DIST_DEBUG"))
		fprintf(stderr, "rank %d: recut at call %ld: keys [%llu, %llu)\n", ds->rank, ds->calls,
			(unsigned long long)ds->bound[ds->rank],
			(unsigned long long)ds->bound[ds->rank + 1]);
}

/* Steps 1-3. 0 or NB_ERUNTIME. */
static int dom_place(struct dist_sim *ds)
{
	struct sim_state *st = ds->st;
	double lo[3], scale;
	dist_own_box(st->pos, st->n, lo, &scale);
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < st->n; i++)
		ds->own.key[i] = dist_morton_key(st->pos + 3 * i, lo, scale);
	const double t0 = dist_sim_now();
	const int due = ds->places++ % ds->every == 0;
	if (ds->recut || due)
		dom_recut(ds);
	const double t1 = dist_sim_now();
	ds->stats.t_rebalance += t1 - t0;
	size_t sent = 0;
	int rc = dist_migrate(st, &ds->own, ds->bound, ds->P, &sent);
	ds->stats.migrated += sent;
	ds->stats.t_migrate += dist_sim_now() - t1;
	return rc ? rc : dist_broken();
}

/* The work's imbalance over the ranks (max / mean), on every rank. */
static double dom_imbalance(const struct dist_sim *ds)
{
	double w = 0;
	for (size_t i = 0; i < ds->st->n; i++)
		w += ds->own.work[i];
	double sum = w, max = w;
	dist_sum_doubles(&sum, 1, "work");
	dist_max_doubles(&max, 1, "work");
	return sum > 0 ? max / (sum / ds->P) : 1.0;
}

/* Step 4 and its figures: the forces of the own bodies (the active ones;
 * NULL: all) into st, each one's work into work. 0 or an error. */
static int dom_evaluate(struct dist_sim *ds, const struct sim_params *p,
			const unsigned char *active, double *work)
{
	const double t1 = dist_sim_now(), w1 = dist_wait_seconds();
	struct sim_state *st = ds->st;
	double *each = NULL;
	if (p->soft_mixed && !(each = malloc((st->n ? st->n : 1) * sizeof *each))) {
		log_error("out of memory for %zu softening lengths", st->n);
		return NB_ERUNTIME;
	}
	if (each)
		sim_soft_each(st, each);
	uint64_t s0, r0, s1, r1;
	dist_bytes(&s0, &r0);
	int rc = ds->solver->force(&ds->solver_state, st, p, each, active, work, &ds->force_held);
	dist_bytes(&s1, &r1);
	free(each);
	if (rc || (rc = dist_broken()))
		return rc;
	ds->stats.bytes_sent += s1 - s0;
	ds->stats.bytes_received += r1 - r0;
	/* the force's exchanges (boxes, trees, the ring's blocks) apart */
	const double wait = dist_wait_seconds() - w1;
	dist_sim_add_times(ds, dist_sim_now() - t1 - wait, wait);
	ds->calls++;
	ds->stats.steps = ds->calls - 1;
	return 0;
}

/* The work's imbalance (own.work's: the last call's, or the last block
 * step's) into the figures, and a recut asked for when it is over the
 * threshold. count: into the worst seen (not the first evaluation's). */
static void dom_balance(struct dist_sim *ds, int count)
{
	ds->stats.work_imbalance = dom_imbalance(ds);
	if (count && ds->stats.work_imbalance > ds->stats.work_imbalance_max)
		ds->stats.work_imbalance_max = ds->stats.work_imbalance;
	if (ds->stats.work_imbalance > 1 + ds->threshold)
		ds->recut = 1;
}

/* A rank that dies without a word (NB_DIST_DIE), then the exchanges' state:
 * 0 or NB_ERUNTIME. */
static int dom_alive(const struct dist_sim *ds)
{
	if (ds->rank == ds->die_rank && ds->calls == ds->die_call)
		_exit(1);
	return dist_broken() ? NB_ERUNTIME : 0;
}

static int dom_force(void *ctx, const struct sim_params *p, const double *pos, const double *mass,
		     size_t n, double *acc, double *pot)
{
	struct dist_sim *ds = ctx;
	(void)pos, (void)mass, (void)n, (void)acc, (void)pot; /* st's, before the migration */
	int rc = dom_alive(ds);
	if (rc || (rc = dom_place(ds)))
		return rc;
	const int first = ds->calls == 0;
	if ((rc = dom_evaluate(ds, p, NULL, ds->own.work)))
		return rc;
	dom_balance(ds, !first);
	return 0;
}

/* struct engine_split's force_active: step 4 for the active bodies, their
 * works added to the block step's */
static int dom_force_active(void *ctx, const struct sim_params *p, const unsigned char *active)
{
	struct dist_sim *ds = ctx;
	const size_t n = ds->st->n;
	int rc = dom_alive(ds);
	if (rc)
		return rc;
	if (n > ds->tick_cap) {
		double *w = realloc(ds->tick_work, n * sizeof *w);
		if (!w) {
			log_error("out of memory for the works of %zu bodies", n);
			return NB_ERUNTIME;
		}
		ds->tick_work = w;
		ds->tick_cap = n;
	}
	for (size_t i = 0; i < n; i++)
		ds->tick_work[i] = 0;
	if ((rc = dom_evaluate(ds, p, active, ds->tick_work)))
		return rc;
	for (size_t i = 0; i < n; i++)
		ds->own.work[i] += ds->tick_work[i];
	return 0;
}

/* struct engine_split's regroup: steps 1-3 between block steps, the
 * levels moving with their bodies; the cuts from the last block step's
 * summed works, which start again from 0. */
static int dom_regroup(void *ctx, unsigned char **lev)
{
	struct dist_sim *ds = ctx;
	int rc = dom_alive(ds);
	if (rc)
		return rc;
	if (ds->regroups++ > 0) /* the first follows the first evaluation's cuts */
		dom_balance(ds, 1);
	ds->own.lev = *lev;
	rc = dom_place(ds);
	*lev = ds->own.lev; /* the migration's (NULL when it broke) */
	ds->own.lev = NULL;
	for (size_t i = 0; !rc && i < ds->st->n; i++)
		ds->own.work[i] = 0;
	return rc;
}

/* struct engine_split's bodies: this rank's state is its own bodies */
static int dom_bodies(void *ctx, const struct sim_state *st, const double *h,
		      struct sim_state *sub, const double **sub_h)
{
	(void)ctx;
	*sub = *st;
	*sub_h = h;
	return 0;
}

/* struct engine_split's h: neighbours across the domains' faces */
static int dom_h(void *ctx, const struct scene *sc, const struct sim_state *st,
		 const struct sim_units *u, double *h)
{
	(void)ctx;
	return dist_halo_h(sc, st, u, h);
}

/* struct engine_split's h_follow: the lengths move with their bodies */
static int dom_h_follow(void *ctx, const uint32_t *id_then, const double *h_then, size_t n_then,
			const struct sim_state *st, double *out)
{
	(void)ctx;
	return dist_halo_follow(id_then, h_then, n_then, st, out);
}

static void dom_sum(void *ctx, float *buf, size_t n)
{
	(void)ctx;
	dist_sum_floats(buf, n, "frame sum");
}

/* struct engine_split's sums: over the ranks, on every rank */
static void dom_sums(void *ctx, double *v, int n)
{
	(void)ctx;
	dist_sum_doubles(v, n, "statistics");
}

/* keep: st holds every body (keep this rank's slice by index); else st
 * holds this rank's own TOTAL-body share already. */
static int dom_create(const struct scene *sc, struct sim_state *st, size_t total, int keep, int gpu,
		      struct dist_sim **out)
{
	*out = NULL;
	struct dist_sim *ds = calloc(1, sizeof *ds);
	const int P = dist_size(), r = dist_rank();
	if (!ds) {
		log_error("out of memory");
		return NB_ERUNTIME;
	}
	/* the file IDs of a scene of snapshots read whole (--restart): no rank
	 * could keep them as bodies migrate, and only snapshot output writes
	 * them, which domains refuses with snapshot input (ranks_refuse.c) */
	free(st->pid);
	st->pid = NULL;
	*ds = (struct dist_sim){.n = total, .P = P, .rank = r, .domains = 1, .st = st,
				.recut = 1, .die_rank = -1, .threshold = 0.10};
	ds->every = (int)dist_sim_env_long("NB_DIST_REBALANCE", 8);
	ds->every = ds->every < 1 ? 1 : ds->every;
	const char *th = getenv("NB_DIST_IMBALANCE"), *die = getenv("NB_DIST_DIE");
	if (th && *th)
		ds->threshold = atof(th);
	if (die && sscanf(die, "%d:%ld", &ds->die_rank, &ds->die_call) != 2)
		ds->die_rank = -1;
	const size_t a = st->n * (size_t)r / (size_t)P, b = st->n * (size_t)(r + 1) / (size_t)P;
	if (keep)
		dom_keep(st, a, b);
	const size_t m1 = st->n ? st->n : 1;
	ds->own.key = calloc(m1, sizeof *ds->own.key);
	ds->own.work = malloc(m1 * sizeof *ds->own.work);
	ds->bound = calloc((size_t)P + 1, sizeof *ds->bound);
	if (!ds->own.key || !ds->own.work || !ds->bound) {
		log_error("out of memory for the domains of %zu bodies", st->n);
		dist_sim_free(&ds);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < st->n; i++)
		ds->own.work[i] = 1.0;
	for (size_t k = 0; k < sizeof dom_solvers / sizeof dom_solvers[0]; k++)
		if (dom_solvers[k].solver == sc->simulation.solver && dom_solvers[k].gpu == gpu)
			ds->solver = &dom_solvers[k];
	if (!ds->solver) { /* dist_ranks_refuse let it through */
		log_error("simulation.ranks: domains: no forces for this solver (internal)");
		dist_sim_free(&ds);
		return NB_ERUNTIME;
	}
	int k = snprintf(ds->desc, sizeof ds->desc,
			 "%s over %d MPI ranks, each holding its own bodies (Morton domains, %s",
			 gpu ? "gpu" : "cpu", P, ds->solver->desc);
	if (ds->solver->after && k > 0 && (size_t)k < sizeof ds->desc)
		k += snprintf(ds->desc + k, sizeof ds->desc - (size_t)k, "%g%s", sc->simulation.theta,
			      ds->solver->after);
	if (k > 0 && (size_t)k < sizeof ds->desc)
		snprintf(ds->desc + k, sizeof ds->desc - (size_t)k, ")");
	ds->dsplit = (struct engine_split){.force = dom_force, .force_active = dom_force_active,
					   .regroup = dom_regroup, .bodies = dom_bodies,
					   .sum = dom_sum, .sums = dom_sums, .h = dom_h,
					   .h_follow = dom_h_follow, .ctx = ds, .desc = ds->desc,
					   .gpu = gpu};
	*out = ds;
	return 0;
}

int dist_domains_create(const struct scene *sc, struct sim_state *st, int gpu,
			struct dist_sim **out)
{
	return dom_create(sc, st, st->n, 1, gpu, out);
}

int dist_domains_create_own(const struct scene *sc, struct sim_state *st, size_t total, int gpu,
			    struct dist_sim **out)
{
	return dom_create(sc, st, total, 0, gpu, out);
}


/* Device bytes this rank's forces hold a body (0: no GPU). */
static double dom_device_bytes_per_body(const struct dist_sim *ds)
{
	const size_t n = ds->st->n;
	if (!n || !ds->solver->device_bytes)
		return 0;
	return (double)ds->solver->device_bytes(ds->solver_state) / (double)n;
}

/* Bytes this rank holds a body: the state (pos vel acc, mass, pot, id,
 * comp: 94) and the key and work (16), and the force's buffers over its
 * bodies. */
static double dom_bytes_per_body(const struct dist_sim *ds)
{
	const size_t n = ds->st->n;
	const double state = 9 * 8 + 8 + 8 + 4 + 2 + 16;
	return n ? state + (double)ds->force_held / (double)n : 0;
}

static const char *dom_device_words(double per_body, char *buf, size_t len)
{
	if (per_body > 0)
		snprintf(buf, len, "; device %.0f bytes a body", per_body);
	else
		buf[0] = '\0';
	return buf;
}

void dist_domains_report(const struct dist_sim *ds)
{
	enum { NV = 14 };
	struct dist_stats s;
	dist_sim_stats(ds, &s);
	double mass = 0;
	for (size_t i = 0; i < ds->st->n; i++)
		mass += ds->st->mass[i];
	double mine[NV] = {(double)s.owned, dom_bytes_per_body(ds), s.t_force, s.t_migrate,
			   (double)s.migrated, (double)s.bytes_sent, (double)s.steps,
			   (double)s.rebalances, s.work_imbalance_max, s.t_first_force, mass,
			   s.t_exchange, s.t_rebalance, dom_device_bytes_per_body(ds)};
	double *all = dist_sim_gather_figures(ds, mine, NV);
	for (int r = 0; all && r < ds->P; r++) {
		const double *v = all + (size_t)r * NV;
		char dev[64];
		/* force and exchange: the steps' mean (the first evaluation apart);
		 * migration, cuts and bytes: every evaluation's, per evaluation */
		const double steps = v[6] > 0 ? v[6] : 1, calls = v[6] + 1;
		log_info("rank %d: owns %.0f of %zu bodies (%.1f %%, mass %.17g), %.0f bytes a body; "
			 "per step: force %.3g ms, its exchanges %.3g ms, migration %.3g ms, cuts %.3g "
			 "ms, sent %.0f B; %.0f bodies migrated away in all; %.0f recuts in %.0f steps, "
			 "work max/mean worst %.3f; first force %.3g ms%s",
			 r, v[0], ds->n, 100.0 * v[0] / (double)(ds->n ? ds->n : 1), v[10], v[1],
			 1e3 * v[2] / steps, 1e3 * v[11] / steps, 1e3 * v[3] / calls,
			 1e3 * v[12] / calls, v[5] / calls, v[4], v[7], v[6], v[8], 1e3 * v[9],
			 dom_device_words(v[13], dev, sizeof dev));
	}
	free(all);
}
