/* soften_assign.c - each body's softening length (soften_assign.h, and
 * sim.h's sim_soft_each and sim_soft_of): the most specific key that is
 * set of a snapshot type's bodies.*.types.NAME.softening, a disk-galaxy
 * part's bodies.*.{disk,bulge,halo}.softening (the young stars and the
 * dust carved out of the disk take the disk's), the entry's
 * bodies.*.softening and simulation.softening. A key of 0 means the level
 * above. The rule for a pair of lengths is sim/soften.h's sim_soft_pair. */
#include <stdlib.h>

#include "soften_assign.h"

double sim_soft_length(const struct scene *sc, const struct scene_body *b, double own)
{
	struct sim_units u;
	scene_units(sc, &u);
	if (own > 0)
		return own * u.length;
	if (b && b->softening > 0)
		return b->softening * u.length;
	return scene_softening(sc);
}

/* 1 when one of entry b's components has a length other than eps0 */
static int soft_entry_mixed(const struct scene *sc, const struct scene_body *b, double eps0)
{
	if (b->model == SCENE_MODEL_DISK_GALAXY) {
		const struct scene_part *parts[3] = {&b->disk, &b->bulge, &b->halo};
		for (int j = 0; j < 3; j++)
			if (parts[j]->count > 0 && sim_soft_length(sc, b, parts[j]->softening) != eps0)
				return 1;
		return 0;
	}
	if (b->model == SCENE_MODEL_SNAPSHOT) {
		for (int t = 0; t < SCENE_SNAP_NTYPES; t++)
			if (b->snap.types[t].load &&
			    sim_soft_length(sc, b, b->snap.types[t].softening) != eps0)
				return 1;
		return 0;
	}
	return sim_soft_length(sc, b, 0) != eps0;
}

int sim_soft_scene_mixed(const struct scene *sc)
{
	const double eps0 = scene_softening(sc);
	for (int k = 0; k < sc->nbodies; k++)
		if (soft_entry_mixed(sc, &sc->bodies[k], eps0))
			return 1;
	return 0;
}

void sim_soft_each(const struct sim_state *st, double *each)
{
	for (size_t i = 0; i < st->n; i++)
		each[i] = st->comps[st->comp[i]].softening;
}

int sim_soft_of(const struct sim_params *p, const struct sim_state *st, struct sim_soft *s,
		double **owned)
{
	*s = (struct sim_soft){.kernel = p->soft_kernel, .eps = p->softening, .each = NULL};
	*owned = NULL;
	if (!p->soft_mixed)
		return 0;
	double *e = malloc((st->n ? st->n : 1) * sizeof *e);
	if (!e) {
		log_error("softening: out of memory for the lengths of %zu bodies", st->n);
		return NB_ERUNTIME;
	}
	sim_soft_each(st, e);
	s->each = e;
	*owned = e;
	return 0;
}
