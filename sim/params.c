/* params.c - struct sim_params from the scene (params.h). */
#include "sim.h"
#include "soften_assign.h"

double sim_params_dt_max_scene(const struct scene *sc)
{
	int bpf = sc->simulation.blocks_per_frame > 0 ? sc->simulation.blocks_per_frame : 1;
	return sc->simulation.dt * sc->simulation.steps_per_frame / bpf;
}

void sim_params_of(const struct scene *sc, struct sim_params *p)
{
	struct sim_units u;
	scene_units(sc, &u);
	*p = (struct sim_params){
		.solver = sc->simulation.solver,
		.direct_kernel = sc->simulation.direct_kernel,
		.softening = scene_softening(sc),
		.soft_kernel = sc->simulation.softening_kernel,
		.soft_mixed = sim_soft_scene_mixed(sc),
		.dt = sc->simulation.dt * u.time,
		.theta = sc->simulation.theta,
		.multipoles = sc->simulation.multipoles,
		.opening = sc->simulation.opening,
		.reorder = sc->simulation.reorder,
		.timesteps = sc->simulation.timesteps,
		.dt_max = sim_params_dt_max_scene(sc) * u.time,
		.eta = sc->simulation.eta,
		.max_level = sc->simulation.max_level,
		.coarsen_margin = sc->simulation.coarsen_margin,
		.rebuild_dt = sc->simulation.dt * u.time,
		.steps_per_frame = sc->simulation.steps_per_frame,
		.blocks_per_frame = sc->simulation.blocks_per_frame > 0
					    ? sc->simulation.blocks_per_frame : 1,
	};
}
