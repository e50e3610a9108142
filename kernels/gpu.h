/* gpu.h - everything the GPU does, behind one C interface (the kernels/ .cu files).
 *
 * With CUDA=0 the build links kernels/gpu_none.c instead, whose functions
 * report that the program was built without CUDA. Every function returns 0 or
 * a negative NB_* code (log.h) after logging the failing CUDA call's text,
 * file and line.
 *
 * Device state is float4 (x, y, z, m) positions plus float4 velocities and
 * accelerations (w unused / potential): 16-byte coalesced loads. The host
 * state (sim_state, double) is uploaded once and downloaded only when output
 * needs it. */
#ifndef NB_GPU_H
#define NB_GPU_H

#include <stddef.h>

#include "../sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if a CUDA device is usable, 0 if not (why gets the reason: built
 * without CUDA, no driver, no device). Never logs; cheap after first call. */
int gpu_probe(char *why, size_t whylen);
/* Device name and free/total memory of device 0. 0 or NB_ERUNTIME. */
int gpu_device_info(char *name, size_t namelen, size_t *free_bytes, size_t *total_bytes);

struct gpu_sim_params {
	enum scene_solver solver;
	enum scene_direct_kernel direct_kernel;
	double softening; /* internal units */
	double dt;        /* internal units */
	double theta;
	int multipoles;
};

struct gpu_sim; /* device-resident simulation; owns all device memory */

/* Estimate device bytes for n bodies with these params. */
size_t gpu_sim_bytes_needed(size_t n, const struct gpu_sim_params *p);
/* Upload st (positions, masses, velocities), compute first accelerations.
 * Too large a scene for the card: NB_EINPUT naming bytes needed and free. */
int gpu_sim_create(const struct sim_state *st, const struct gpu_sim_params *p,
		   struct gpu_sim **out);
/* nsteps kick-drift-kick steps on the device; potential computed on the
 * last force evaluation when need_potential. No host round trip. */
int gpu_sim_advance(struct gpu_sim *g, int nsteps, int need_potential);
/* Copy pos, vel, acc (and pot if computed) back into st (double). */
int gpu_sim_download(struct gpu_sim *g, struct sim_state *st);
/* Benchmark hook (bench/): nsteps steps as gpu_sim_advance takes them (no
 * potential, no finiteness check), each timed with CUDA events: force_ms[k]
 * around the force computation alone, step_ms[k] around the whole step.
 * 0 or NB_ERUNTIME. Added by the GPU direct solver (kernels/sim.cu). */
int gpu_sim_time_steps(struct gpu_sim *g, int nsteps, double *force_ms, double *step_ms);
/* "direct/pairwise" etc. for messages. */
const char *gpu_sim_describe(const struct gpu_sim *g);
void gpu_sim_free(struct gpu_sim **g);

/* One-shot direct accelerations for tests and benchmarks (float on device,
 * returned as double). kernel: pairwise or gather (auto picks). pot may be NULL. */
int gpu_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     enum scene_direct_kernel kernel, double *acc, double *pot);

#ifdef __cplusplus
}
#endif
#endif
