/* test_tree_migrate.c - the CPU twin of the tree's body migration
 * (sim/tree_migrate.c, simulation.reorder: migrate): after every step every
 * body is in its branch, none is lost or duplicated, the branch ranges tile
 * the bodies, the keys are sorted, and the permutation is the full re-sort's
 * (a stable sort of the keys); the forces over the migrated order equal
 * those over the re-sorted order. Adversarial steps: every body crossing at
 * once, one branch receiving everything, empty branches (coincident keys),
 * a body leaving to the far corner of the key cube.
 * Run: make CUDA_ARCH=sm_90 build/tests/test_tree_migrate && build/tests/test_tree_migrate */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/sim.h"

/* 63-bit Morton key of a point of the cube [-half, half)^3 (clamped), as
 * the GPU's keys (21 bits an axis). */
static uint64_t spread(uint32_t v)
{
	uint64_t x = v & 0x1fffff, r = 0;
	for (int b = 0; b < 21; b++)
		r |= (x >> b & 1) << (3 * b);
	return r;
}

static uint64_t key_of(const double *p, double half)
{
	uint64_t k = 0;
	for (int a = 0; a < 3; a++) {
		double f = (p[a] + half) / (2 * half) * 2097152.0;
		f = f < 0 ? 0 : f > 2097151.0 ? 2097151.0 : f;
		k |= spread((uint32_t)f) << a;
	}
	return k;
}

/* A cloud in the order the migration keeps it: pos[3 p] is the body at
 * position p, id[p] its identity. */
struct cloud {
	size_t n;
	double *pos, *vel;
	uint32_t *id;
	uint64_t *keys, *keys_out;
	uint32_t *perm;
};

static double urand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static void cloud_make(struct cloud *c, size_t n, uint64_t seed)
{
	c->n = n;
	c->pos = malloc(3 * n * sizeof *c->pos);
	c->vel = malloc(3 * n * sizeof *c->vel);
	c->id = malloc(n * sizeof *c->id);
	c->keys = malloc(n * sizeof *c->keys);
	c->keys_out = malloc(n * sizeof *c->keys_out);
	c->perm = malloc(n * sizeof *c->perm);
	ck_assert(c->pos && c->vel && c->id && c->keys && c->keys_out && c->perm);
	for (size_t i = 0; i < n; i++) {
		/* centrally concentrated (a branch near the centre is small in
		 * space), random velocities */
		double r = 0.9 * pow(urand(&seed), 2.0), ct = 2 * urand(&seed) - 1,
		       ph = 6.283185307179586 * urand(&seed), st = sqrt(1 - ct * ct);
		c->pos[3 * i] = r * st * cos(ph);
		c->pos[3 * i + 1] = r * st * sin(ph);
		c->pos[3 * i + 2] = r * ct;
		for (int a = 0; a < 3; a++)
			c->vel[3 * i + a] = 2 * urand(&seed) - 1;
		c->id[i] = (uint32_t)i;
	}
}

static void cloud_free(struct cloud *c)
{
	free(c->pos);
	free(c->vel);
	free(c->id);
	free(c->keys);
	free(c->keys_out);
	free(c->perm);
}

/* Reference: positions sorted by (key, position), as a stable radix sort. */
static const uint64_t *g_keys;
static int cmp_ref(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (g_keys[i] != g_keys[j])
		return g_keys[i] < g_keys[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* One migration step over c (keys from its positions), every invariant
 * checked, then the bodies moved into the new order. Returns the stats. */
static struct sim_tree_mig_stats step_and_check(struct sim_tree_mig *m, struct cloud *c,
						int force_rebuild)
{
	const size_t n = c->n;
	for (size_t p = 0; p < n; p++)
		c->keys[p] = key_of(c->pos + 3 * p, 1.0);
	struct sim_tree_mig_stats st;
	ck_assert_int_eq(sim_tree_mig_step(m, c->keys, force_rebuild, c->perm, c->keys_out, &st), 0);
	/* a permutation: none lost, none duplicated */
	unsigned char *seen = calloc(n, 1);
	ck_assert_ptr_nonnull(seen);
	for (size_t k = 0; k < n; k++) {
		ck_assert_uint_lt(c->perm[k], n);
		ck_assert_msg(!seen[c->perm[k]], "position %u placed twice", c->perm[k]);
		seen[c->perm[k]] = 1;
		ck_assert(c->keys_out[k] == c->keys[c->perm[k]]);
		if (k > 0)
			ck_assert_msg(c->keys_out[k - 1] <= c->keys_out[k], "keys unsorted at %zu", k);
	}
	free(seen);
	/* branch ranges tile [0, n); every body's key in its branch's range */
	ck_assert_int_eq(m->off[0], 0);
	ck_assert_int_eq(m->off[m->nbr], (int)n);
	ck_assert(m->spl[0] == 0 && m->spl[m->nbr] == UINT64_MAX);
	for (int b = 0; b < m->nbr; b++) {
		ck_assert_int_le(m->off[b], m->off[b + 1]);
		ck_assert(m->spl[b] <= m->spl[b + 1]);
		for (int p = m->off[b]; p < m->off[b + 1]; p++) {
			ck_assert_uint_eq(m->br[p], (uint32_t)b);
			ck_assert(m->spl[b] <= c->keys_out[p] && c->keys_out[p] < m->spl[b + 1]);
		}
	}
	/* the full re-sort's permutation (keys here are distinct but for the
	 * coincident case, where the stable order is asked of both) */
	uint32_t *ref = malloc(n * sizeof *ref);
	ck_assert_ptr_nonnull(ref);
	for (size_t p = 0; p < n; p++)
		ref[p] = (uint32_t)p;
	g_keys = c->keys;
	qsort(ref, n, sizeof *ref, cmp_ref);
	size_t differ = 0;
	for (size_t k = 0; k < n; k++)
		differ += ref[k] != c->perm[k];
	free(ref);
	ck_assert_msg(differ == 0, "%zu slots differ from the full re-sort", differ);
	/* bodies into the new order */
	double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
	uint32_t *id = malloc(n * sizeof *id);
	ck_assert(pos && vel && id);
	for (size_t k = 0; k < n; k++) {
		memcpy(pos + 3 * k, c->pos + 3 * (size_t)c->perm[k], 3 * sizeof *pos);
		memcpy(vel + 3 * k, c->vel + 3 * (size_t)c->perm[k], 3 * sizeof *vel);
		id[k] = c->id[c->perm[k]];
	}
	memcpy(c->pos, pos, 3 * n * sizeof *pos);
	memcpy(c->vel, vel, 3 * n * sizeof *vel);
	memcpy(c->id, id, n * sizeof *id);
	free(pos);
	free(vel);
	free(id);
	return st;
}

static void drift(struct cloud *c, double dt)
{
	for (size_t i = 0; i < 3 * c->n; i++)
		c->pos[i] += c->vel[i] * dt;
}

START_TEST(migration_matches_full_sort_over_steps)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 40000;
	cloud_make(&c, n, 7);
	int nbr = sim_tree_mig_branches(n, 1024);
	ck_assert_int_eq(nbr, 39);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, nbr), 0);
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 1); /* first step */
	ck_assert_int_eq(m.rebalance, 0); /* exact quantiles of the sorted keys */
	st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 0);
	int rebuilds = 0;
	double moved = 0;
	for (int s = 0; s < 20; s++) {
		drift(&c, 0.002);
		st = step_and_check(&m, &c, 0);
		rebuilds += st.rebuilt;
		moved += (double)st.moved;
	}
	/* a few bodies cross each step, few enough to migrate */
	ck_assert_int_eq(rebuilds, 0);
	ck_assert_msg(moved > 20 * 0.001 * n && moved < 20 * 0.1 * n, "moved %g over 20 steps",
		      moved);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

START_TEST(migration_all_bodies_cross_at_once)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 20000;
	cloud_make(&c, n, 11);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, sim_tree_mig_branches(n, 512)), 0);
	step_and_check(&m, &c, 0);
	/* point reflection: every body's key moves to the opposite end */
	for (size_t i = 0; i < 3 * n; i++)
		c.pos[i] = -c.pos[i];
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 1); /* more than n/4 movers */
	ck_assert_uint_eq(st.moved, n);
	drift(&c, 0.001);
	st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 0);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

START_TEST(migration_one_branch_receives_everything)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 20000;
	cloud_make(&c, n, 13);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, sim_tree_mig_branches(n, 512)), 0);
	step_and_check(&m, &c, 0);
	step_and_check(&m, &c, 0); /* migrates: the first step's branches are balanced */
	ck_assert_int_eq(m.rebalance, 0);
	/* a fifth of the bodies (under the n/4 rebuild) collapse into a tiny
	 * ball in one corner: one branch receives them all */
	for (size_t i = 0; i < n; i += 5)
		for (int a = 0; a < 3; a++)
			c.pos[3 * i + a] = -0.95 + 1e-3 * c.pos[3 * i + a];
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 0);
	ck_assert_int_ge(st.max_branch, (int)(n / 5));
	ck_assert_int_eq(m.rebalance, 1); /* over twice the mean */
	st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 1); /* rebalanced */
	ck_assert_int_le(st.max_branch, 2 * (int)(n / (size_t)m.nbr) + 2);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

START_TEST(migration_empty_branches_and_coincident_keys)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 12000;
	cloud_make(&c, n, 17);
	/* half the bodies at one point: equal splitters, empty branches */
	for (size_t i = 0; i < n; i += 2)
		c.pos[3 * i] = c.pos[3 * i + 1] = c.pos[3 * i + 2] = 0.25;
	ck_assert_int_eq(sim_tree_mig_init(&m, n, sim_tree_mig_branches(n, 256)), 0);
	step_and_check(&m, &c, 0);
	int empty = 0;
	for (int b = 0; b < m.nbr; b++)
		empty += m.off[b + 1] == m.off[b];
	ck_assert_int_gt(empty, 0);
	for (int s = 0; s < 3; s++) {
		for (size_t i = 1; i < 3 * n; i += 2) /* the others move, coincident stay */
			c.pos[i] += 0.003 * c.vel[i];
		step_and_check(&m, &c, 0);
	}
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

START_TEST(migration_body_leaves_to_the_far_corner)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 8000;
	cloud_make(&c, n, 19);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, sim_tree_mig_branches(n, 1024)), 0);
	step_and_check(&m, &c, 0);
	step_and_check(&m, &c, 0); /* migrates: the first step's branches are balanced */
	ck_assert_int_eq(m.rebalance, 0);
	/* one body flung out of the key cube: its key clamps to the last cell */
	c.pos[3 * 100] = c.pos[3 * 100 + 1] = c.pos[3 * 100 + 2] = 50.0;
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 0);
	ck_assert_uint_ge(st.moved, 1);
	ck_assert(c.keys_out[n - 1] == 0x7fffffffffffffffull);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

/* A rebuild's splitters are exact quantiles of the keys it sorted, whatever
 * the order handed in: from a random order (the first step: sampling that
 * order gave random splitters, branches up to ~mean x ln(nbr)), every
 * branch is within twice the mean at once and no rebalance is asked. */
START_TEST(migration_rebuild_from_unsorted_order_is_balanced)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 100000;
	cloud_make(&c, n, 29); /* id order: random in space, keys unsorted */
	int nbr = sim_tree_mig_branches(n, 256);
	ck_assert_int_eq(nbr, 390);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, nbr), 0);
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 0);
	int mean = (int)((n + (size_t)nbr - 1) / (size_t)nbr);
	printf("rebuild from a random order: %d branches, largest %d, mean %d\n", nbr, st.max_branch,
	       mean);
	ck_assert_int_eq(st.rebuilt, 1);
	ck_assert_int_le(st.max_branch, 2 * mean);
	ck_assert_int_eq(m.rebalance, 0);
	/* the next steps migrate */
	drift(&c, 0.001);
	st = step_and_check(&m, &c, 0);
	ck_assert_int_eq(st.rebuilt, 0);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

/* The benchmark's steady state (nbody-bench migrate, 1M bodies: every step
 * rebuilt): a rebuild from the last step's order, which is out of key
 * order exactly where bodies crossed. Sampling every (n/nbr)-th key of
 * that order put each crossed body's key among the splitters in the wrong
 * place, so the gap it left became a branch of twice the mean: the
 * rebalance fired again at once. Exact quantiles: balanced, and the next
 * steps migrate. */
START_TEST(migration_rebuild_from_last_order_is_balanced)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 200000;
	cloud_make(&c, n, 31);
	/* uniform in the ball (cloud_make's cusp would disperse within a few
	 * steps, free streaming, and overfill its neighbours' branches) */
	uint64_t seed = 37;
	for (size_t i = 0; i < n; i++) {
		double *q = c.pos + 3 * i, r = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
		double f = r > 0 ? 0.9 * cbrt(urand(&seed)) / r : 0;
		for (int a = 0; a < 3; a++)
			q[a] *= f;
	}
	int nbr = sim_tree_mig_branches(n, 256);
	int mean = (int)((n + (size_t)nbr - 1) / (size_t)nbr);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, nbr), 0);
	step_and_check(&m, &c, 0);
	drift(&c, 0.002); /* about a tenth of the bodies leave their branch */
	struct sim_tree_mig_stats st = step_and_check(&m, &c, 1); /* rebuild, forced */
	printf("rebuild from the last step's order: %d branches, largest %d, mean %d\n", nbr,
	       st.max_branch, mean);
	ck_assert_int_eq(st.rebuilt, 1);
	ck_assert_int_le(st.max_branch, 2 * mean);
	ck_assert_int_eq(m.rebalance, 0);
	int rebuilds = 0, largest = 0;
	double moved = 0;
	for (int s = 0; s < 10; s++) {
		drift(&c, 0.0005); /* a few percent cross a step */
		st = step_and_check(&m, &c, 0);
		rebuilds += st.rebuilt;
		moved += (double)st.moved;
		largest = st.max_branch > largest ? st.max_branch : largest;
	}
	printf("then 10 steps: %d rebuilds, moved %.4f of the bodies a step, largest branch %d\n",
	       rebuilds, moved / (10.0 * (double)n), largest);
	ck_assert_int_eq(rebuilds, 0);
	ck_assert_msg(moved > 0, "nothing moved");
	ck_assert_int_le(largest, 2 * mean);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

/* The forces over the migrated order equal those over the full re-sort's
 * order bit for bit (step_and_check asserts the two orders are the same,
 * so the tree gets the same input), and those over the original order
 * within the tree's tolerance (walk groups are runs of tree-order bodies,
 * so another input order may group a leaf's bodies differently). */
START_TEST(migration_forces_equal_full_sort)
{
	struct cloud c;
	struct sim_tree_mig m;
	const size_t n = 6000;
	cloud_make(&c, n, 23);
	ck_assert_int_eq(sim_tree_mig_init(&m, n, sim_tree_mig_branches(n, 512)), 0);
	step_and_check(&m, &c, 0);
	for (int s = 0; s < 3; s++) {
		drift(&c, 0.002);
		step_and_check(&m, &c, 0); /* asserts the full re-sort's order */
	}
	double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc),
	       *acc1 = malloc(3 * n * sizeof *acc1), *acc0 = malloc(3 * n * sizeof *acc0),
	       *pos0 = malloc(3 * n * sizeof *pos0), *pos1 = malloc(3 * n * sizeof *pos1);
	uint32_t *ref = malloc(n * sizeof *ref);
	ck_assert(mass && acc && acc1 && acc0 && pos0 && pos1 && ref);
	for (size_t i = 0; i < n; i++) {
		mass[i] = 1.0 / (double)n;
		memcpy(pos0 + 3 * (size_t)c.id[i], c.pos + 3 * i, 3 * sizeof *pos0);
	}
	/* the full re-sort of the migrated bodies' keys: the same order */
	for (size_t p = 0; p < n; p++) {
		c.keys[p] = key_of(c.pos + 3 * p, 1.0);
		ref[p] = (uint32_t)p;
	}
	g_keys = c.keys;
	qsort(ref, n, sizeof *ref, cmp_ref);
	for (size_t k = 0; k < n; k++)
		memcpy(pos1 + 3 * k, c.pos + 3 * (size_t)ref[k], 3 * sizeof *pos1);
	ck_assert_int_eq(sim_tree_accel(c.pos, mass, n, 0.01, 0.5, 2, acc, NULL), 0);
	ck_assert_int_eq(sim_tree_accel(pos1, mass, n, 0.01, 0.5, 2, acc1, NULL), 0);
	ck_assert_int_eq(sim_tree_accel(pos0, mass, n, 0.01, 0.5, 2, acc0, NULL), 0);
	size_t same = 0;
	for (size_t k = 0; k < n; k++)
		same += ref[k] == k;
	ck_assert_uint_eq(same, n);
	ck_assert(memcmp(acc, acc1, 3 * n * sizeof *acc) == 0);
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d2 = 0, r2 = 0;
		for (int a = 0; a < 3; a++) {
			double r = acc0[3 * (size_t)c.id[i] + a], d = acc[3 * i + a] - r;
			d2 += d * d;
			r2 += r * r;
		}
		worst = fmax(worst, sqrt(d2 / r2));
	}
	ck_assert_msg(worst < 1e-2, "worst relative difference %g", worst);
	free(mass);
	free(acc);
	free(acc1);
	free(acc0);
	free(pos0);
	free(pos1);
	free(ref);
	sim_tree_mig_free(&m);
	cloud_free(&c);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("tree_migrate");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, migration_matches_full_sort_over_steps);
	tcase_add_test(tc, migration_all_bodies_cross_at_once);
	tcase_add_test(tc, migration_one_branch_receives_everything);
	tcase_add_test(tc, migration_empty_branches_and_coincident_keys);
	tcase_add_test(tc, migration_body_leaves_to_the_far_corner);
	tcase_add_test(tc, migration_forces_equal_full_sort);
	tcase_add_test(tc, migration_rebuild_from_unsorted_order_is_balanced);
	tcase_add_test(tc, migration_rebuild_from_last_order_is_balanced);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
