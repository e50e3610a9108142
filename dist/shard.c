/* shard.c - a batch's share for one job of a Slurm array or one
 * --shard K/N (dist.h): which share this process is. Which runs a share
 * holds is app/batch_share.c's; no MPI is needed. */
#include <errno.h>
#include <stdlib.h>

#include "dist.h"

#define SHARD_MAX 100000

/* A whole number in [lo, hi] from s (all of it); -1 when not. */
static long shard_num(const char *s, const char **end, long lo, long hi)
{
	char *e = NULL;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	long v = strtol(s, &e, 10);
	if (errno || v < lo || v > hi)
		return -1;
	*end = e;
	return v;
}

int dist_shard_parse(const char *s, int *k, int *n)
{
	const char *e = s;
	long a = shard_num(s, &e, 0, SHARD_MAX - 1), b = -1;
	if (a >= 0 && *e == '/')
		b = shard_num(e + 1, &e, 1, SHARD_MAX);
	if (a < 0 || b < 0 || *e || a >= b) {
		log_error("--shard: expected K/N with 0 <= K < N <= %d (share K of N, counted from 0), "
			  "got '%s'",
			  SHARD_MAX, s ? s : "");
		return NB_EINPUT;
	}
	*k = (int)a;
	*n = (int)b;
	return 0;
}

int dist_shard_from_env(int *k, int *n)
{
	const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
	const char *min = getenv("SLURM_ARRAY_TASK_MIN");
	if (!id || !*id || !count || !*count)
		return 0;
	const char *e;
	long i = shard_num(id, &e, 0, 1L << 30), c = shard_num(count, &e, 1, SHARD_MAX);
	long m = min && *min ? shard_num(min, &e, 0, 1L << 30) : 0;
	if (i < 0 || c < 0 || m < 0 || i - m < 0 || i - m >= c) {
		log_error("SLURM_ARRAY_TASK_ID=%s, SLURM_ARRAY_TASK_COUNT=%s, SLURM_ARRAY_TASK_MIN=%s: "
			  "expected MIN <= ID < MIN + COUNT (a job array with step 1)",
			  id, count, min ? min : "(unset)");
		return NB_EINPUT;
	}
	*k = (int)(i - m);
	*n = (int)c;
	return 1;
}
