/* sim_times.c - the clock and the force-time accounting that the CPU
 * ranks (dist/sim.c) and the GPU ranks' callbacks (dist/sim_gpu.c) share
 * (sim_internal.h). A file of its own so that neither of those two calls
 * the other back. */
#include <time.h>

#include "sim_internal.h"

double dist_sim_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void dist_sim_add_times(struct dist_sim *ds, double force_s, double exchange_s)
{
	if (ds->calls == 0) {
		ds->stats.t_first_force = force_s;
		ds->stats.t_first_exchange = exchange_s;
	} else {
		ds->stats.t_force += force_s;
		ds->stats.t_exchange += exchange_s;
	}
}
