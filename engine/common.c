/* common.c - what the back ends share (engine_internal.h): the message
 * for a non-finite value, individual steps' block count, and the ops of a
 * state on the host that a row leaves NULL. Apart from engine.c, which
 * picks the rows, so that no row calls back into it. */
#include "engine_internal.h"

int engine_report_nonfinite(const struct engine *e, long i)
{
	const struct sim_state *st = e->st;
	const char *comp = "?";
	if (st->comp[i] < st->ncomp)
		comp = st->comps[st->comp[i]].name;
	log_error("step %ld (t = %g internal units): body %u of component '%s' has a non-finite "
		  "position, velocity or acceleration: time step too large or softening too "
		  "small: try simulation.dt smaller or simulation.softening larger",
		  st->step, st->time, (unsigned)st->id[i], comp);
	return NB_ERUNTIME;
}

int engine_blocks_of(const struct engine *e, int steps, int *blocks)
{
	const int spf = e->p.steps_per_frame, bpf = e->p.blocks_per_frame;
	long num = (long)steps * bpf;
	if (num % spf != 0) {
		log_error("individual time steps advance by whole block steps: %d steps of dt is not "
			  "a multiple of steps_per_frame / blocks_per_frame = %d / %d (internal)",
			  steps, spf, bpf);
		return NB_ERUNTIME;
	}
	*blocks = (int)(num / spf);
	return 0;
}

int engine_host_diag_queue(struct engine *e)
{
	sim_diag_compute(e->st, &e->diag);
	e->diag_time = e->st->time;
	return 0;
}

int engine_host_diag_take(struct engine *e, struct sim_diag *d)
{
	*d = e->diag;
	return 0;
}

int engine_host_com(struct engine *e, double com[3])
{
	sim_state_com(e->st, e->sel, com, NULL, NULL);
	return 0;
}
