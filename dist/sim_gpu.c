/* sim_gpu.c - GPU ranks' side of dist/ (docs/PHYSICS.md, "GPU ranks"):
 * whether the ranks take their GPUs, and the callbacks the device code
 * (sim/cuda/sim_ranks.cu, through struct gpu_ranks) calls each force
 * evaluation: the host allgather and broadcast over MPI, and the balance,
 * which gathers every rank's force time and moves the cuts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_internal.h"

int dist_use_gpus(const struct scene *sc, int backend_cli)
{
	const int backend = backend_cli != -1 ? backend_cli : (int)sc->simulation.backend;
	if (sc->simulation.solver == SCENE_SOLVER_NONE || backend == SCENE_BACKEND_CPU)
		return 0;
	if (backend == SCENE_BACKEND_CUDA) /* a rank without a GPU says so itself */
		return 1;
	char why[160];
	double lacks = gpu_probe(why, sizeof why) ? 0 : 1;
	dist_max_doubles(&lacks, 1, "GPU probe");
	if (lacks > 0 && dist_rank() == 0)
		log_info("MPI ranks: not every rank has a usable GPU: the ranks run on the CPU");
	return lacks == 0;
}

/* ---- GPU ranks: the callbacks of struct gpu_ranks (sim/cuda/gpu.h) ---- */
static int sim_gpu_allgather(void *ctx, void *buf, const size_t *bytes, const size_t *off)
{
	struct dist_sim *ds = ctx;
	dist_allgatherv((char *)buf + off[ds->rank], buf, bytes, off, "GPU accelerations");
	return dist_broken(); /* rank 0: the ranks can no longer exchange (logged) */
}

static int sim_gpu_bcast(void *ctx, void *buf, size_t bytes)
{
	struct dist_sim *ds = ctx;
	size_t *b = calloc(2 * (size_t)ds->P, sizeof *b);
	if (!b)
		dist_fail("out of memory");
	b[0] = bytes; /* rank 0's block to everyone, at offset 0 */
	dist_allgatherv(buf, buf, b, b + ds->P, "NCCL id");
	free(b);
	return 0;
}

static void sim_gpu_balance(void *ctx, const struct gpu_ranks_step *st, size_t *cut)
{
	struct dist_sim *ds = ctx;
	const int P = ds->P;
	if (ds->rank == ds->die_rank && ds->calls == ds->die_call)
		_exit(1); /* NB_DIST_DIE: a rank that dies without a word */
	dist_sim_add_times(ds, 1e-3 * st->force_ms, 1e-3 * st->exchange_ms);
	ds->stats.bytes_sent += st->sent;
	ds->stats.bytes_received += st->received;
	memcpy(ds->gcut, cut, (size_t)(P + 1) * sizeof *cut);
	double t = dist_sim_now();
	ds->gtime[ds->rank] = st->force_ms;
	dist_allgatherv(&ds->gtime[ds->rank], ds->gtime, ds->bytes, ds->off, "force times");
	ds->stats.work_imbalance = dist_imbalance(ds->gtime, P);
	if (ds->calls > 0 && ds->stats.work_imbalance > ds->stats.work_imbalance_max)
		ds->stats.work_imbalance_max = ds->stats.work_imbalance;
	/* the first evaluation (with the potential, and the tree's first
	 * build) is no measure of the steps; recut from the second on */
	if (ds->calls > 0 && ((ds->calls + 1) % ds->every == 0 ||
			      ds->stats.work_imbalance > 1 + ds->threshold)) {
		/* half way to the cuts the times ask for: the times of one step
		 * are noisy (ranks sharing a GPU time-slice it), and a full move
		 * on noise swings the cuts back and forth */
		dist_cut_by_time(cut, ds->gtime, P, ds->gnext);
		for (int q = 1; q < P; q++)
			cut[q] = (cut[q] + ds->gnext[q] + 1) / 2;
		ds->stats.rebalances++;
		if (getenv("NB_DIST_DEBUG"))
			fprintf(stderr, "rank %d: recut at call %ld: [%zu, %zu)\n", ds->rank, ds->calls,
				cut[ds->rank], cut[ds->rank + 1]);
	}
	ds->stats.t_rebalance += dist_sim_now() - t;
	ds->calls++;
	ds->stats.steps = ds->calls - 1;
}

int dist_sim_gpu_setup(struct dist_sim *ds)
{
	const int P = ds->P;
	ds->gcut = calloc((size_t)P + 1, sizeof *ds->gcut);
	ds->gnext = calloc((size_t)P + 1, sizeof *ds->gnext);
	ds->gtime = calloc((size_t)P, sizeof *ds->gtime);
	ds->bytes = malloc(2 * (size_t)P * sizeof *ds->bytes);
	if (!ds->gcut || !ds->gnext || !ds->gtime || !ds->bytes)
		return NB_ERUNTIME;
	ds->off = ds->bytes + P;
	for (int r = 0; r < P; r++) { /* the force times' allgather: a double a rank */
		ds->bytes[r] = sizeof(double);
		ds->off[r] = (size_t)r * sizeof(double);
	}
	for (int q = 0; q <= P; q++)
		ds->gcut[q] = (size_t)((unsigned long long)ds->n * (unsigned)q / (unsigned)P);
	const char *nc = getenv("NB_DIST_NCCL");
	ds->ranks = (struct gpu_ranks){
		.P = P,
		.rank = ds->rank,
		/* NCCL needs a GPU for each rank of a host */
		.nccl = nc && *nc ? atoi(nc) != 0 : 1,
		.ctx = ds,
		.allgather = sim_gpu_allgather,
		.bcast = sim_gpu_bcast,
		.balance = sim_gpu_balance,
	};
	int dev = 0, count = 0;
	if (!(nc && *nc) && gpu_bind_local(dist_local_rank(), &dev, &count) == 0 &&
	    dist_local_size() > count)
		ds->ranks.nccl = 0; /* ranks share a GPU: NCCL refuses that */
	if (P == 1)
		ds->ranks.nccl = 0; /* nothing to swap */
	double no = ds->ranks.nccl ? 0 : 1; /* all ranks the same way */
	dist_max_doubles(&no, 1, "NCCL choice");
	ds->ranks.nccl = no == 0;
	return 0;
}
