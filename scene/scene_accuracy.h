/* scene_accuracy.h - simulation.accuracy: the presets (default | draft |
 * fine), one row each, applied by the scene loader after the scene is read
 * and before it is checked (issue 30; docs/PHYSICS.md "Accuracy presets",
 * their measured cost in docs/BENCHMARKS.md).
 *
 * A row SETS theta and multipoles, unless the file or a --set gives the
 * key: a given key wins. It SCALES the scene's softening lengths
 * (simulation.softening, and every bodies.*.softening, part and snapshot
 * type softening above 0) and its time step, whatever gave them: a length
 * and a step belong to the scene's own scales, so a preset can only be
 * relative to them. The step is scaled with the frame time kept exactly:
 * steps_per_frame / k rounded (at least 1), dt = frame time / the new
 * steps_per_frame; under individual time steps dt_max the same way,
 * through blocks_per_frame. The default row is the identity.
 *
 * Try: nbody-render scenes/galaxy-collision.yaml --set simulation.accuracy=draft --dry-run */
#ifndef NB_SCENE_ACCURACY_H
#define NB_SCENE_ACCURACY_H

#include "scene.h"
#include "yaml_tree.h"

struct scene_accuracy_row {
	enum scene_accuracy id;
	const char *name;  /* the key's word */
	double theta;      /* simulation.theta, unless given */
	int multipoles;    /* simulation.multipoles, unless given */
	double soft_x;     /* every softening length x this */
	double dt_x;       /* the step x this (approximately: the frame time is kept) */
	/* Measured, not computed: the default scene (scenes/galaxy-collision.yaml
	 * as shipped, shared steps) under this preset on one H200, the
	 * figures of docs/BENCHMARKS.md "Accuracy presets" (commit a1d9a69),
	 * which --dry-run quotes beside the scene at hand. */
	double movie_s;    /* the movie's wall time, s */
	double max_de;     /* its largest |dE/E0| over the run */
};

/* The row of preset A (never NULL for a value of the enum; NULL otherwise). */
const struct scene_accuracy_row *scene_accuracy_row(enum scene_accuracy a);

/* Apply sc->simulation.accuracy's row to SC as read from ROOT (the tree
 * with the overrides spliced in: a key present there was given). NAME is
 * the scene's name for the line it logs (log_info), which says the preset,
 * the values it set and the given keys that won; nothing is logged for
 * default. Returns 0: every value it writes is within its key's range. */
int scene_accuracy_apply(struct scene *sc, const struct ynode *root, const char *name);

/* The step alone x K (K > 0), the frame time dt x steps_per_frame kept:
 * shared steps: steps_per_frame / K rounded, clamped to [1, 1e6], and dt =
 * frame time / that, left bit-for-bit when steps_per_frame is unchanged;
 * individual steps: blocks_per_frame / K rounded, in [1, 1e6] (dt_max =
 * frame time / blocks_per_frame). Returns the factor the step really took
 * (1 when rounding left it). The --preview fit models a preset with it. */
double scene_accuracy_steps(struct scene *sc, double k);

#endif
