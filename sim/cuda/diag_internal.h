/* diag_internal.h - contract between sim/cuda/sim.cu and sim/cuda/diag.cu:
 * the conserved quantities of the device bodies (gpu_sim_diag_* in gpu.h),
 * reduced on the device so that only a dozen doubles reach the host.
 * Not for C callers. */
#ifndef NB_DIAG_INTERNAL_H
#define NB_DIAG_INTERNAL_H

#include "gpu_internal.h"

struct gpu_diag; /* device partials, the pinned result, an event */

/* Queue on stream the sums over b's bodies (sim_diag_compute's meaning,
 * from the float state, accumulated in double): the block reduction, the
 * final pass and the copy of the result to pinned host memory, then an
 * event. has_pot: acc.w holds phi_i (else the potential is NaN at take).
 * *d is created at the first call (freed by gpu_diag_free). One at a time:
 * queue, take, queue again (a second queue before the take is an internal
 * error, logged). 0 or NB_ERUNTIME. */
int gpu_diag_queue(struct gpu_diag **d, const struct gpu_bodies *b, int has_pot,
		   cudaStream_t stream);
/* Wait for the queued sums and turn them into *out (energies, momentum,
 * angular momentum, centre of mass and its velocity, mass). 0 or
 * NB_ERUNTIME (nothing queued: logged). */
int gpu_diag_take(struct gpu_diag *d, struct sim_diag *out);
/* Free everything (waits for a queued reduction); *d = NULL. NULL-safe. */
void gpu_diag_free(struct gpu_diag **d);

#endif
