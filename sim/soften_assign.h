/* soften_assign.h - which softening length each body has (docs/PHYSICS.md
 * "Softening"), for the sim/ files that make components (sim/ic.c,
 * sim/galaxy.c, sim/snap_load.c) and for sim_params_of. Not for use
 * outside sim/; the force calls' side (struct sim_soft) is in sim.h. */
#ifndef NB_SIM_SOFTEN_ASSIGN_H
#define NB_SIM_SOFTEN_ASSIGN_H

#include "sim.h"

/* The length, internal units, of a component of entry b whose own key
 * (a snapshot type's or a disk-galaxy part's softening; 0 for an entry
 * that is one component) is own: own when > 0, else the entry's
 * bodies.*.softening when > 0, else simulation.softening. */
double sim_soft_length(const struct scene *sc, const struct scene_body *b, double own);
/* 1 when some component of the scene has a length other than
 * simulation.softening (sim_params.soft_mixed), else 0. Decided from the
 * keys alone: a snapshot type that is loaded counts, present in the file
 * or not; a disk-galaxy part that has bodies counts. */
int sim_soft_scene_mixed(const struct scene *sc);

#endif
