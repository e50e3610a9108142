/* batch_share.c - which runs of a batch this process runs: its shard's
 * (--shard K/N, or a Slurm job array's task) and, under mpirun, its
 * rank's among them; and the outcomes gathered back to rank 0, which
 * writes the one report (batch.h, docs/batch.md). */
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "batch.h"

/* The shard slot of run i: the order in which its simulation key first
 * appears among the loaded runs (share), or its index. */
static int share_slot(const struct batch_run *runs, int i, int share)
{
	if (!share)
		return i;
	int slot = 0;
	for (int j = 0; j < i; j++) {
		if (!runs[j].loaded)
			continue;
		int first = 1; /* j is the first run with its key */
		for (int m = 0; m < j && first; m++)
			first = !(runs[m].loaded && !memcmp(runs[m].sim_key, runs[j].sim_key,
							    sizeof runs[j].sim_key));
		if (!first)
			continue;
		if (!memcmp(runs[j].sim_key, runs[i].sim_key, sizeof runs[i].sim_key))
			return slot;
		slot++;
	}
	return slot;
}

void batch_share_select(struct batch_run *runs, int nruns, int share, int k, int n, int rank,
			int P, int *owner)
{
	int ordinal = 0; /* the shard's pending groups, in batch order */
	for (int i = 0; i < nruns; i++)
		owner[i] = -1;
	for (int i = 0; i < nruns; i++) {
		struct batch_run *r = &runs[i];
		if (r->group < 0)
			continue; /* not to run (bad input, skipped) */
		if (r->loaded && share_slot(runs, i, share) % n != k) {
			r->status = BATCH_OTHER_SHARD;
			continue;
		}
		if (r->group == i)
			owner[i] = ordinal++ % P;
	}
	for (int i = 0; i < nruns; i++) {
		struct batch_run *r = &runs[i];
		if (r->group < 0 || r->status == BATCH_OTHER_SHARD)
			continue;
		owner[i] = owner[r->group];
		if (owner[i] != rank)
			r->status = BATCH_OTHER_SHARD; /* another rank's: collected later */
	}
}

/* What rank 0 needs of a run another rank ran. */
struct share_outcome {
	int status, exit_code, frames_done;
	double wall_s;
	char message[512];
};

void batch_share_collect(struct batch_run *runs, int nruns, const int *owner)
{
	const int P = dist_size(), me = dist_rank();
	if (P == 1 || nruns == 0)
		return;
	const size_t bytes = (size_t)nruns * sizeof(struct share_outcome);
	struct share_outcome *mine = calloc((size_t)nruns, sizeof *mine);
	struct share_outcome *all = me == 0 ? malloc(bytes * (size_t)P) : NULL;
	if (!mine || (me == 0 && !all))
		dist_fail("out of memory for the batch's outcomes");
	for (int i = 0; i < nruns; i++) {
		mine[i].status = runs[i].status;
		mine[i].exit_code = runs[i].exit_code;
		mine[i].frames_done = runs[i].frames_done;
		mine[i].wall_s = runs[i].wall_s;
		memcpy(mine[i].message, runs[i].message, sizeof mine[i].message);
	}
	dist_gather(mine, bytes, all, "batch outcomes");
	for (int i = 0; me == 0 && i < nruns; i++) {
		if (owner[i] <= 0)
			continue;
		const struct share_outcome *o = &all[(size_t)owner[i] * (size_t)nruns + (size_t)i];
		runs[i].status = (enum batch_status)o->status;
		runs[i].exit_code = o->exit_code;
		runs[i].frames_done = o->frames_done;
		runs[i].wall_s = o->wall_s;
		memcpy(runs[i].message, o->message, sizeof runs[i].message);
	}
	free(mine);
	free(all);
}
