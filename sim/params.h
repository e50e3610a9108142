/* params.h - the simulation's parameters for one run, in internal units:
 * built once from the scene (sim_params_of) and read by every back end,
 * the CPU engine (engine/), the device simulation (sim/cuda/gpu.h) and the
 * ranks (dist/), so none of them converts a scene value itself. One flat
 * struct, as rebound's struct reb_simulation holds its integrator's
 * settings. Included by sim/sim.h. */
#ifndef NB_SIM_PARAMS_H
#define NB_SIM_PARAMS_H

#include "../scene/scene.h"

struct sim_params {
	enum scene_solver solver;
	enum scene_direct_kernel direct_kernel;
	double softening;           /* internal units: simulation.softening, every body's
				     * unless soft_mixed */
	enum scene_soft_kernel soft_kernel; /* plummer | spline (sim/soften.h; zero: plummer) */
	int soft_mixed;             /* 1: bodies differ in softening, each body's length is
				     * its component's (sim_component.softening) and a pair
				     * takes the larger (sim_soft_pair); 0: every body has
				     * softening, the path (and the frames) of one length */
	double dt;                  /* internal units */
	double theta;
	int multipoles;
	enum scene_opening opening; /* barnes-hut opening criterion (zero: bmax) */
	enum scene_reorder reorder; /* barnes-hut body order between steps (zero: sort) */
	/* individual time steps (sim/timestep.c, sim/cuda/sim_levels.cu); zero: shared */
	enum scene_timesteps timesteps;
	double dt_max;              /* the longest step, internal units */
	double eta;                 /* dt_i = sqrt(2 eta eps / |a_i|) */
	int max_level;              /* finest level, 0..SIM_TS_LEVELS-1 */
	double coarsen_margin;      /* sim_ts_want_level_from's margin (0 or 1: none) */
	double rebuild_dt;          /* GPU barnes-hut with opening bmax: the tree is rebuilt
				     * at the ticks that end a step of the largest level not
				     * longer than rebuild_dt (and every block end) and
				     * refitted (moments only) at the others; 0: every tick */
	int steps_per_frame;        /* steps of dt between frames */
	int blocks_per_frame;       /* block steps of dt_max between frames (>= 1) */
};

/* The parameters of scene sc, its values converted to internal units. */
void sim_params_of(const struct scene *sc, struct sim_params *p);
/* Individual time steps' longest step, dt steps_per_frame /
 * blocks_per_frame, in scene time units (sim_params' dt_max is this in
 * internal units; messages give the scene's). */
double sim_params_dt_max_scene(const struct scene *sc);

#endif
