/* test_dist_domains.c - ranks that each hold only their own bodies
 * (simulation.ranks: domains, dist/own.c, dist/migrate.c, dist/ring.c,
 * dist/domains.c; issue 31).
 *
 * In process (every build): the cuts found from histograms equal the cuts of
 * a sort of every key (dist_domain_cut's rule) and balance the weight; a
 * migration on one rank keeps every body and sorts them by key; the
 * all-to-all on one rank returns the own block. Program level (NB_BIN): what
 * domains does not do yet is refused by --dry-run and by the run, exit 2,
 * naming the key, nothing written. Over MPI (NB_MPI_BIN and mpirun, as
 * tests/test_dist.c; SKIP without): a Plummer sphere (direct sum and
 * Barnes-Hut over locally essential trees) and two colliding
 * spheres on 1, 2 and 3 ranks against one process: statistics and frames,
 * bodies and mass conserved through the migrations, each rank owning about
 * N / P; snapshots as multi-file sets, one part a rank, read back by the
 * project's reader as one process's; a dead rank.
 *   NB_BIN=build/nbody-render NB_MPI_BIN=build-mpi/nbody-render build/tests/test_dist_domains */
#include <limits.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "../sim/cuda/gpu.h"
#include "test_mpi_util.h"
#include "dist/dist.h"
#include "sim/sim.h"
#include "test_output_util.h"

/* snprintf into the array BUF, asserting that it fit */
#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)

/* ---- in process -------------------------------------------------------- */

static double unit(uint64_t seed, size_t i, uint64_t k)
{
	return sim_rng_uniform(seed, i, k);
}

/* n bodies: a dense clump in one corner and a sparse rest (a skewed curve) */
static void clumpy_bodies(size_t n, double *pos, double *w)
{
	for (size_t i = 0; i < n; i++) {
		const double s = i % 3 == 0 ? 1.0 : 0.05;
		for (int a = 0; a < 3; a++)
			pos[3 * i + a] = s * (2 * unit(5, i, (uint64_t)a) - 1) + (s < 1 ? 0.7 : 0);
		w[i] = 1 + 9 * unit(5, i, 9); /* work 1 .. 10 */
	}
}

struct kw {
	uint64_t key;
	double w;
};

static int kw_cmp(const void *a, const void *b)
{
	const struct kw *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

START_TEST(histogram_cuts_equal_the_cuts_of_a_full_sort)
{
	const size_t n = 6000;
	double *pos = malloc(3 * n * sizeof *pos), *w = malloc(n * sizeof *w);
	clumpy_bodies(n, pos, w);
	double lo[3], scale;
	dist_own_box(pos, n, lo, &scale); /* one rank: the bodies' own cube */
	struct kw *kw = malloc(n * sizeof *kw);
	for (size_t i = 0; i < n; i++)
		kw[i] = (struct kw){dist_morton_key(pos + 3 * i, lo, scale), w[i]};
	qsort(kw, n, sizeof *kw, kw_cmp);
	uint64_t *key = malloc(n * sizeof *key);
	double *ws = malloc(n * sizeof *ws);
	for (size_t i = 0; i < n; i++)
		key[i] = kw[i].key, ws[i] = kw[i].w;
	for (size_t i = 1; i < n; i++) /* distinct keys: the two rules then agree exactly */
		ck_assert(key[i] != key[i - 1]);
	const int Ps[] = {2, 3, 4, 7};
	for (size_t t = 0; t < sizeof Ps / sizeof Ps[0]; t++) {
		const int P = Ps[t];
		uint64_t bound[8];
		dist_own_cut(key, ws, n, P, bound);
		struct dist_domain d; /* the reference: every key sorted in one place */
		ck_assert_int_eq(dist_domain_init(&d, n, P), 0);
		ck_assert_int_eq(dist_domain_cut(&d, pos, w), 0);
		double total = 0, part[8] = {0};
		for (size_t i = 0; i < n; i++) {
			const int r = dist_own_owner(bound, P, key[i]);
			ck_assert(r >= 0 && r < P);
			part[r] += ws[i];
			total += ws[i];
		}
		for (int r = 0; r < P; r++) {
			size_t mine = 0;
			for (size_t i = 0; i < n; i++)
				mine += dist_own_owner(bound, P, key[i]) == r;
			ck_assert_msg(mine == d.cut[r + 1] - d.cut[r], "P %d rank %d: %zu bodies, the full "
				      "sort gives %zu", P, r, mine, d.cut[r + 1] - d.cut[r]);
			/* within one body's work (at most 10) of W / P */
			ck_assert_msg(fabs(part[r] - total / P) <= 10.0, "P %d rank %d: work %g of %g", P, r,
				      part[r], total);
		}
		dist_domain_free(&d);
	}
	free(pos), free(w), free(kw), free(key), free(ws);
}
END_TEST

START_TEST(migration_on_one_rank_keeps_every_body_in_key_order)
{
	const size_t n = 500;
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	struct dist_owned o = {malloc(n * sizeof *o.key), malloc(n * sizeof *o.work), NULL};
	double mass = 0;
	for (size_t i = 0; i < n; i++) {
		for (int a = 0; a < 3; a++) {
			st.pos[3 * i + a] = 2 * unit(3, i, (uint64_t)a) - 1;
			st.vel[3 * i + a] = (double)i + a;
		}
		st.mass[i] = unit(3, i, 4);
		mass += st.mass[i];
		o.key[i] = (uint64_t)(unit(3, i, 5) * 1e6) % 1000; /* ties: ordered by id */
		o.work[i] = (double)i;
	}
	uint64_t bound[2] = {0, DIST_KEY_END};
	size_t sent = 99;
	ck_assert_int_eq(dist_migrate(&st, &o, bound, 1, &sent), 0);
	ck_assert_uint_eq(sent, 0);
	ck_assert_uint_eq(st.n, n);
	unsigned char *seen = calloc(n, 1);
	double m2 = 0;
	for (size_t i = 0; i < n; i++) {
		const uint32_t id = st.id[i];
		ck_assert(id < n && !seen[id]);
		seen[id] = 1;
		ck_assert(i == 0 || o.key[i - 1] < o.key[i] ||
			  (o.key[i - 1] == o.key[i] && st.id[i - 1] < id));
		ck_assert_double_eq(st.vel[3 * i + 2], (double)id + 2); /* each body whole */
		ck_assert_double_eq(o.work[i], (double)id);
		ck_assert_uint_eq(o.key[i], (uint64_t)(unit(3, id, 5) * 1e6) % 1000);
		m2 += st.mass[i];
	}
	ck_assert_double_eq_tol(m2, mass, 1e-12);
	free(seen), free(o.key), free(o.work);
	sim_state_free(&st);
}
END_TEST

START_TEST(alltoallv_on_one_rank_returns_the_own_block)
{
	const char msg[] = "abcdefgh";
	size_t sb[1] = {5}, so[1] = {2}, rb[1], ro[1];
	char *got = dist_alltoallv(msg, sb, so, rb, ro, "test");
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(rb[0], 5);
	ck_assert_uint_eq(ro[0], 0);
	ck_assert(memcmp(got, "cdefg", 5) == 0);
	free(got);
}
END_TEST

/* ---- program level ------------------------------------------------------ */

static char g_bin[PATH_MAX], g_mpi[PATH_MAX], g_data[PATH_MAX];

static int run_sh(const char *cmd)
{
	int ws = system(cmd);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void paths(void)
{
	ck_assert(realpath(nb_bin(), g_bin));
	ck_assert(realpath("tests/data", g_data));
}

START_TEST(what_domains_does_not_do_yet_is_refused_with_exit_2)
{
	paths();
	char dir[] = "/tmp/nb-dom-XXXXXX", cmd[8192];
	ck_assert(mkdtemp(dir));
	static const char *const cases[][2] = {
		{"simulation.solver=none", "simulation.solver"},
		/* on GPU ranks: plummer-small's direct sum, the spline kernel */
		{"simulation.backend=cuda", "simulation.solver"},
		{"simulation.backend=cuda' --set 'simulation.solver=barnes-hut' --set "
		 "'simulation.softening_kernel=spline",
		 "simulation.softening_kernel"},
		/* two keys through the one --set '%s' below */
		{"simulation.solver=barnes-hut' --set 'simulation.opening=mass", "simulation.opening"},
		{"output.snapshots.files=2", "output.snapshots.files"}, /* one rank here */
		{"output.final_state=FINAL.csv", "output.final_state"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int dry = 0; dry <= 1; dry++) {
			char set[256];
			FMT(set, "%s", cases[c][0]);
			if (strstr(set, "FINAL")) /* inside the test's directory */
				FMT(set, "output.final_state=%s/final.csv", dir);
			FMT(cmd, "cd %s && '%s' %s/plummer-small.yaml %s --set simulation.ranks=domains "
				 "--set output.png_dir=%s/png --set output.video=%s/v.mp4 --set "
				 "output.snapshots.dir=%s/snap --set output.initial_state= --set "
				 "output.final_state= --set '%s' > log 2>&1",
			    dir, g_bin, g_data, dry ? "--dry-run" : "", dir, dir, dir, set);
			ck_assert_msg(run_sh(cmd) == 2, "%s: not exit 2", set);
			FMT(cmd, "grep -q 'error: .*%s: simulation.ranks: domains ' %s/log",
			    cases[c][1], dir);
			ck_assert_msg(run_sh(cmd) == 0, "%s%s: no message naming %s in %s/log", set,
				      dry ? " (dry run)" : "", cases[c][1], dir);
			FMT(cmd, "test ! -e %s/png && test ! -e %s/v.mp4 && test ! -e %s/snap", dir, dir,
			    dir);
			ck_assert_msg(run_sh(cmd) == 0, "%s: an output was made before the refusal", set);
		}
	printf("domains: %zu refusals, dry run and run: exit 2 naming the key, nothing written\n",
	       sizeof cases / sizeof cases[0]);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* ---- over MPI ranks ---------------------------------------------------- */

/* 1 when an MPI build and mpirun are there. */
static int have_mpi(void)
{
	if (!nb_mpi_usable(g_mpi))
		return 0;
	paths();
	return 1;
}

#define MPIENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
#define MPIRUN MPIENV "mpirun --oversubscribe --bind-to none"

/* Two Plummer spheres of 300 bodies that fall through each other within
 * the run: the domains' box shrinks and grows, bodies keep crossing. The
 * camera follows sphere a (its centre of mass, summed over the ranks); the
 * spheres' softening lengths differ, under the spline kernel (each body's
 * length travels round the ring with it). */
static void write_collision(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: nbody\nseed: 11\n"
		   "simulation: {solver: direct, softening: 0.05, softening_kernel: spline, "
		   "dt: 0.01, backend: cpu}\n"
		   "bodies:\n"
		   "  - {name: a, model: plummer, count: 300, mass: 0.5, scale: 0.3, "
		   "position: [-1.2, 0, 0], velocity: [1.0, 0.1, 0], softening: 0.02}\n"
		   "  - {name: b, model: plummer, count: 300, mass: 0.5, scale: 0.3, "
		   "position: [1.2, 0, 0], velocity: [-1.0, -0.1, 0]}\n"
		   "camera:\n  fov: 50\n  follow: a\n  keys:\n"
		   "    - {frame: 0, position: [0, -6, 2], target: [0, 0, 0]}\n"
		   "render: {width: 96, height: 64, exposure: 1.0}\n"
		   "output: {frames: 5, fps: 10, video: \"\"}\n");
	fclose(f);
}

/* The common --set of a run TAG in DIR (stats and PNG frames only). */
static void sets_of(const char *dir, const char *tag, int spf, char *out, size_t len)
{
	ck_assert((size_t)snprintf(out, len,
				   "--set simulation.steps_per_frame=%d --set output.video= "
				   "--set output.stats=%s/%s.csv --set output.initial_state= "
				   "--set output.final_state= --set output.png_dir=%s/%s",
				   spf, dir, tag, dir, tag) < len);
}

/* The statistics CSV: up to 8 rows of its 10 values after the frame. */
static int read_stats(const char *path, double v[8][10])
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	char line[1024];
	int rows = 0;
	ck_assert(fgets(line, sizeof line, f)); /* the header */
	while (rows < 8 && fgets(line, sizeof line, f)) {
		char *p = strchr(line, ',');
		for (int k = 0; k < 10 && p; k++) {
			v[rows][k] = strtod(p + 1, &p);
		}
		rows++;
	}
	fclose(f);
	return rows;
}

/* Pixel differences of run b's PNG frames against run a's: the largest, and
 * the largest relative difference of a frame's mean. */
static void frames_diff(const char *dir, const char *a, const char *b, int frames, int *maxd,
			double *mean_rel)
{
	*maxd = 0;
	*mean_rel = 0;
	for (int f = 0; f < frames; f++) {
		char pa[PATH_MAX], pb[PATH_MAX];
		FMT(pa, "%s/%s/frame_%05d.png", dir, a, f);
		FMT(pb, "%s/%s/frame_%05d.png", dir, b, f);
		int w, h, d, w2, h2, d2;
		uint16_t *x = read_png(pa, &w, &h, &d), *y = read_png(pb, &w2, &h2, &d2);
		ck_assert(w == w2 && h == h2 && d == d2);
		double sa = 0, sb = 0;
		for (size_t i = 0; i < (size_t)w * h * 3; i++) {
			int e = abs((int)x[i] - (int)y[i]);
			*maxd = e > *maxd ? e : *maxd;
			sa += x[i], sb += y[i];
		}
		ck_assert(sa > 0); /* something was drawn */
		*mean_rel = fmax(*mean_rel, fabs(sb - sa) / sa);
		free(x);
		free(y);
	}
}

/* From rank 0's report in LOG: the bodies and mass each rank owns, the
 * bodies migrated in all, the worst work imbalance (max / mean) and, when
 * sent is not NULL, the bytes each rank's tree lent the others per
 * evaluation ("sent N B"). */
static void owned_of(const char *log, int P, double *count, double *mass, double *migrated,
		     double *worst, double *sent)
{
	FILE *f = fopen(log, "r");
	ck_assert(f);
	char line[2048];
	int seen = 0;
	*migrated = 0;
	while (fgets(line, sizeof line, f)) {
		int r;
		double c, m, g;
		const char *p = strstr(line, "rank "), *q = strstr(line, "bodies migrated away");
		if (!p || !q || sscanf(p, "rank %d: owns %lf of", &r, &c) != 2)
			continue;
		const char *pm = strstr(line, "mass "), *pw = strstr(line, "max/mean worst ");
		ck_assert(pm && sscanf(pm, "mass %lf", &m) == 1);
		ck_assert(pw && sscanf(pw, "max/mean worst %lf", worst) == 1);
		while (q > line && q[-1] == ' ')
			q--;
		while (q > line && q[-1] != ' ')
			q--;
		g = atof(q);
		ck_assert(r >= 0 && r < P);
		count[r] = c, mass[r] = m;
		*migrated += g;
		if (sent) {
			const char *ps = strstr(line, ", sent ");
			ck_assert(ps);
			sent[r] = atof(ps + 7);
		}
		seen++;
	}
	fclose(f);
	ck_assert_msg(seen == P, "%s: %d rank lines, expected %d", log, seen, P);
}

/* How close a run over domains must come to one process: energies (and
 * |L|) within rtol, momentum within atol; each rank's bodies within
 * count_tol x N of N / P. */
struct dom_tol {
	double rtol, atol, count_tol;
	double work_max; /* the worst max / mean of the ranks' work, over the steps */
};

/* The direct sum in another order (own block, then the visitors round the
 * ring) than one process's each-pair-once sum: equal to rounding, which a
 * few dozen steps of a softened system amplify to ~1e-12; equal work per
 * body, so equal counts at each cut (within 1 %: bodies of one key are
 * never split); between cuts the bodies move (the colliding spheres: the
 * work drifts to 1.14 of the mean before the recut that a step over 10 %
 * brings): within 25 %. */
static const struct dom_tol dom_direct = {1e-9, 1e-12, 0.01, 1.25};
/* Barnes-Hut over locally essential trees: each rank's tree is over its own
 * bodies, so the cells, and the force errors, differ from the one
 * process's tree by the tree's own error (theta 0.5, quadrupoles: about
 * 1e-3 of a force, sim/tree tests). Over 12 steps that moves the energies
 * by far less than 1e-4 (here: the one-process tree is 1.9e-6 from the
 * direct sum, the domains within 8e-6 of it) and the total momentum, which
 * a tree does not conserve exactly (1.4e-7 here), by less than 1e-6. The
 * cuts balance measured work, not bodies: counts within 15 %, and the work
 * within 25 % of the mean (a recut follows any step over 10 %; the worst
 * seen here 1.10). */
static const struct dom_tol dom_tree = {1e-4, 1e-6, 0.15, 1.25};

/* SCENE (a path and --sets) on 1 .. 3 ranks in domains mode against one
 * process (replicate): n bodies of total mass 1. */
static void domains_match_one_process(const char *scene, int n, int frames, int spf,
				      const char *dir, const struct dom_tol *tol)
{
	char sets[4096], cmd[8192];
	sets_of(dir, "one", spf, sets, sizeof sets);
	FMT(cmd, "'%s' %s %s > %s/one.log 2>&1", g_bin, scene, sets, dir);
	ck_assert_int_eq(run_sh(cmd), 0);
	double ref[8][10], got[8][10];
	char csv[PATH_MAX];
	FMT(csv, "%s/one.csv", dir);
	ck_assert_int_eq(read_stats(csv, ref), frames);
	for (int P = 1; P <= 3; P++) {
		char tag[16], log[PATH_MAX];
		FMT(tag, "np%d", P);
		FMT(log, "%s/%s.log", dir, tag);
		sets_of(dir, tag, spf, sets, sizeof sets);
		FMT(cmd, MPIRUN " -np %d '%s' %s %s --set simulation.ranks=domains > %s 2>&1", P, g_mpi,
		    scene, sets, log);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		FMT(csv, "%s/%s.csv", dir, tag);
		ck_assert_int_eq(read_stats(csv, got), frames);
		for (int f = 0; f < frames; f++)
			for (int k = 0; k < 9; k++) /* K W E (rtol), p (atol), L (both) */
				ck_assert_msg(NB_CLOSE(got[f][k + 1], ref[f][k + 1],
						       k < 3 ? 0 : tol->atol, k >= 3 && k < 6 ? 0 : tol->rtol),
					      "%d ranks, frame %d, column %d: %.12g vs one process %.12g", P,
					      f, k + 2, got[f][k + 1], ref[f][k + 1]);
		double count[3] = {0}, mass[3] = {0}, migrated, worst, nsum = 0, msum = 0;
		owned_of(log, P, count, mass, &migrated, &worst, NULL);
		ck_assert_msg(worst <= tol->work_max, "%d ranks: work max/mean %g", P, worst);
		for (int r = 0; r < P; r++) {
			nsum += count[r], msum += mass[r];
			ck_assert_msg(fabs(count[r] - (double)n / P) <= tol->count_tol * n,
				      "%d ranks: rank %d owns %g of %d", P, r, count[r], n);
		}
		ck_assert_msg(nsum == n, "%d ranks: %g bodies owned, %d made", P, nsum, n);
		ck_assert_msg(fabs(msum - 1.0) <= 1e-12, "%d ranks: mass %.17g", P, msum);
		ck_assert_msg(P == 1 || migrated > 0, "%d ranks: nothing migrated", P);
		int maxd;
		double mrel;
		frames_diff(dir, "one", tag, frames, &maxd, &mrel);
		/* additive splats summed in another order: float rounding */
		ck_assert_msg(maxd <= 1 && mrel <= 1e-3, "%d ranks: frames differ by %d (mean %g)", P,
			      maxd, mrel);
		printf("domains: %s, %d ranks: statistics within %g, frames within %d, owned %g %g "
		       "%g, %g migrated\n", strrchr(scene, '/') + 1, P, tol->rtol, maxd, count[0],
		       count[1], count[2], migrated);
	}
}

START_TEST(plummer_over_1_2_3_ranks_matches_one_process)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", scene[PATH_MAX + 32], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(scene, "%s/plummer-small.yaml --set bodies.0.count=600 --set output.frames=3", g_data);
	domains_match_one_process(scene, 600, 3, 6, dir, &dom_direct);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

START_TEST(barnes_hut_over_1_2_3_ranks_matches_one_process_tree)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", scene[PATH_MAX + 128], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(scene, "%s/plummer-small.yaml --set simulation.solver=barnes-hut --set "
		   "bodies.0.count=2500 --set output.frames=3", g_data);
	domains_match_one_process(scene, 2500, 3, 6, dir, &dom_tree);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* Individual time steps over ranks that each hold their own bodies: every
 * rank steps its own bodies' levels, the block plan and the ticks agreed
 * over the ranks, and the levels migrate with their bodies between block
 * steps. The cuts balance each body's work summed over a block step, and a
 * body on level L is evaluated 2^L times in it: the counts then differ
 * more than with shared steps (seen: 57.7 % of the colliding spheres on
 * one of 2 ranks, 39.7 % on one of 3), within 10 % of n; the work swings
 * as bodies change levels between recuts (worst seen 1.39 of the mean). */
static const struct dom_tol dom_direct_blocks = {1e-9, 1e-12, 0.10, 1.5};
static const struct dom_tol dom_tree_blocks = {1e-4, 1e-6, 0.15, 1.5};

/* The "levels at the end" of log dir/tag.log into out. */
static void levels_of(const char *dir, const char *tag, char *out, size_t len)
{
	char path[PATH_MAX], line[1024];
	FMT(path, "%s/%s.log", dir, tag);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	out[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		const char *p = strstr(line, "levels at the end");
		if (p)
			snprintf(out, len, "%s", p);
	}
	fclose(f);
	ck_assert_msg(out[0], "%s: no levels line", path);
}

/* SCENE with individual time steps over 1 .. 3 ranks against one process,
 * and the levels at the end: one process's (direct: exactly, the forces
 * agree to rounding), with bodies on at least 3 levels. */
static void blocks_match_one_process(const char *scene, int n, int spf, const char *dir,
				     const struct dom_tol *tol, int exact_levels)
{
	domains_match_one_process(scene, n, 5, spf, dir, tol);
	char one[512], got[512];
	levels_of(dir, "one", one, sizeof one);
	int levels = 0; /* the occupied levels, "L0 15, L1 18, ..." after "(dt_max / 2^L): " */
	for (const char *p = strstr(one, "): "); p && (p = strstr(p + 1, " L")); )
		levels += p[2] >= '0' && p[2] <= '9';
	ck_assert_msg(levels >= 3, "one process: %s (too few levels to test)", one);
	for (int P = 1; P <= 3 && exact_levels; P++) {
		char tag[16];
		FMT(tag, "np%d", P);
		levels_of(dir, tag, got, sizeof got);
		ck_assert_msg(strcmp(one, got) == 0, "%d ranks: %s, one process: %s", P, got, one);
	}
	printf("domains, individual time steps: %s", one);
}

START_TEST(individual_steps_over_1_2_3_ranks_match_one_process)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", path[PATH_MAX], scene[PATH_MAX + 256],
	     cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(path, "%s/collide.yaml", dir);
	write_collision(path);
	/* dt_max 0.1: the spheres' cores on levels 2 and 3 as they meet */
	FMT(scene, "%s --set simulation.timesteps=individual --set simulation.blocks_per_frame=3",
	    path);
	blocks_match_one_process(scene, 600, 30, dir, &dom_direct_blocks, 1);
	/* Barnes-Hut: the levels follow forces within the tree's tolerance */
	FMT(scene, "%s/plummer-small.yaml --set simulation.solver=barnes-hut --set "
		   "bodies.0.count=2500 --set output.frames=5 --set simulation.dt=0.004 --set "
		   "simulation.timesteps=individual", g_data);
	blocks_match_one_process(scene, 2500, 10, dir, &dom_tree_blocks, 0);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* GPU ranks that own their bodies (--backend cuda, two ranks sharing this
 * machine's GPU): the forces from the locally essential trees on each
 * rank's GPU, each rank's stars splatted on its GPU (renderer_rank_gpu.c;
 * the log says so) and summed, the frame finished on rank 0. Against one
 * GPU process: the statistics within the tree's tolerance (dom_tree) and
 * the frames within 1 of 255, with shared and with individual time steps.
 * Made only with a usable GPU (make_suite prints SKIP without one). */
START_TEST(gpu_ranks_give_one_gpus_statistics_and_frames)
{
	if (!have_mpi())
		return;
	static const char *const modes[] = {"", "--set simulation.timesteps=individual "
						 "--set simulation.dt=0.004"};
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		char dir[] = "/tmp/nb-dom-XXXXXX", scene[PATH_MAX + 256], sets[4096], cmd[8192];
		ck_assert(mkdtemp(dir));
		FMT(scene, "%s/plummer-small.yaml --set simulation.solver=barnes-hut --set "
			   "bodies.0.count=20000 --set output.frames=3 %s", g_data, modes[m]);
		sets_of(dir, "one", 6, sets, sizeof sets);
		FMT(cmd, "'%s' %s %s --backend cuda > %s/one.log 2>&1", g_mpi, scene, sets, dir);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		sets_of(dir, "np2", 6, sets, sizeof sets);
		FMT(cmd, MPIRUN " -np 2 '%s' %s %s --set simulation.ranks=domains --backend cuda > "
			 "%s/np2.log 2>&1", g_mpi, scene, sets, dir);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		FMT(cmd, "grep -q 'each rank splats its own bodies on its GPU' %s/np2.log", dir);
		ck_assert_msg(run_sh(cmd) == 0, "no GPU splat on the ranks: %s/np2.log", dir);
		double ref[8][10], got[8][10];
		char csv[PATH_MAX];
		FMT(csv, "%s/one.csv", dir);
		ck_assert_int_eq(read_stats(csv, ref), 3);
		FMT(csv, "%s/np2.csv", dir);
		ck_assert_int_eq(read_stats(csv, got), 3);
		for (int f = 0; f < 3; f++)
			for (int k = 0; k < 3; k++) /* K W E */
				ck_assert_msg(NB_CLOSE(got[f][k + 1], ref[f][k + 1], 0, dom_tree.rtol),
					      "%s frame %d column %d: %.12g vs one GPU %.12g", modes[m], f,
					      k + 2, got[f][k + 1], ref[f][k + 1]);
		int maxd;
		double mrel;
		frames_diff(dir, "one", "np2", 3, &maxd, &mrel);
		ck_assert_msg(maxd <= 1 && mrel <= 1e-3, "%s: frames differ by %d (mean %g)", modes[m],
			      maxd, mrel);
		printf("domains on 2 GPU ranks%s: statistics within %g of one GPU, frames within %d\n",
		       m ? " (individual time steps)" : "", dom_tree.rtol, maxd);
		FMT(cmd, "rm -rf '%s'", dir);
		run_sh(cmd);
	}
}
END_TEST

START_TEST(colliding_spheres_over_1_2_3_ranks_keep_every_body)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", scene[PATH_MAX], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(scene, "%s/collide.yaml", dir);
	write_collision(scene);
	domains_match_one_process(scene, 600, 5, 30, dir, &dom_direct);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* camera.follow: light and camera.frame: auto over ranks that each hold
 * their own bodies: the light centre's and the frame's quantiles come
 * from histograms summed over the ranks (integers, exactly one process's),
 * the trimmed sums from doubles summed in rank order: the same camera to
 * rounding, so the same frames (the spheres fly apart and through each
 * other, the camera pans and zooms all the way). */
START_TEST(follow_light_and_frame_auto_over_ranks_match_one_process)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", scene[PATH_MAX + 96], path[PATH_MAX], cmd[PATH_MAX + 16];
	ck_assert(mkdtemp(dir));
	FMT(path, "%s/collide.yaml", dir);
	write_collision(path);
	FMT(scene, "%s --set camera.follow=light --set camera.frame=auto", path);
	domains_match_one_process(scene, 600, 5, 30, dir, &dom_direct);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* The locally essential trees shrink as theta grows on every rank: each
 * rank's tree is built over the domains' one cube, so no cell of one rank
 * reaches round another's domain (over each rank's own box one rank of
 * this mix sent its whole tree whatever theta: 200k bodies, 5.87 MB at
 * theta 0.3 and 5.81 MB at 0.9). The default collision's mix, 20k bodies,
 * 2 ranks, one step. */
START_TEST(let_bytes_fall_with_theta_on_every_rank)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", cmd[8192], scene[PATH_MAX], log[2][PATH_MAX];
	ck_assert(mkdtemp(dir));
	ck_assert(realpath("scenes/galaxy-collision.yaml", scene));
	const double theta[2] = {0.3, 0.9};
	double sent[2][2] = {{0}};
	for (int k = 0; k < 2; k++) {
		FMT(log[k], "%s/theta-%d.log", dir, k);
		FMT(cmd, MPIRUN " -np 2 '%s' '%s' --set simulation.ranks=domains --backend cpu "
			 "--set output.frames=1 --set simulation.steps_per_frame=1 --set output.video= "
			 "--set output.png_dir= --set output.stats= --set output.preview= "
			 "--set render.width=96 --set render.height=64 --set simulation.theta=%g "
			 "--set bodies.0.disk.count=8000 --set bodies.0.bulge.count=2000 "
			 "--set bodies.0.halo.count=10000 --set bodies.1.disk.count=8000 "
			 "--set bodies.1.bulge.count=2000 --set bodies.1.halo.count=10000 > %s 2>&1",
		    g_mpi, scene, theta[k], log[k]);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		double count[2], mass[2], migrated, worst;
		owned_of(log[k], 2, count, mass, &migrated, &worst, sent[k]);
	}
	for (int r = 0; r < 2; r++) {
		printf("domains: rank %d lends %.0f B at theta 0.3, %.0f B at 0.9\n", r, sent[0][r],
		       sent[1][r]);
		ck_assert_msg(sent[1][r] > 0 && sent[0][r] > 1.3 * sent[1][r],
			      "rank %d: %.0f B at theta 0.3, %.0f B at 0.9", r, sent[0][r], sent[1][r]);
	}
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

START_TEST(a_refusal_under_mpirun_is_said_once_with_exit_2)
{
	if (!have_mpi())
		return;
	char dir[] = "/tmp/nb-dom-XXXXXX", cmd[8192];
	ck_assert(mkdtemp(dir));
	for (int dry = 0; dry <= 1; dry++) {
		FMT(cmd, MPIRUN " -np 2 '%s' %s/plummer-small.yaml %s --set simulation.ranks=domains "
			 "--set simulation.solver=barnes-hut --set simulation.opening=mass "
			 "--set output.png_dir=%s/png > %s/log 2>&1",
		    g_mpi, g_data, dry ? "--dry-run" : "", dir, dir);
		ck_assert_msg(run_sh(cmd) == 2, "%s: not exit 2", cmd);
		FMT(cmd, "test $(grep -c 'error: .*simulation.opening: simulation.ranks: domains' %s/log) "
			 "= 1 && test ! -e %s/png",
		    dir, dir);
		ck_assert_msg(run_sh(cmd) == 0, "not one message, or outputs made: %s/log", dir);
		/* replicate refuses individual time steps (domains take them) */
		FMT(cmd, MPIRUN " -np 2 '%s' %s/plummer-small.yaml %s --set "
			 "simulation.timesteps=individual --set output.png_dir=%s/png > %s/log 2>&1",
		    g_mpi, g_data, dry ? "--dry-run" : "", dir, dir);
		ck_assert_msg(run_sh(cmd) == 2, "%s: not exit 2", cmd);
		FMT(cmd, "test $(grep -c 'error: .*simulation.timesteps: individual time steps over MPI "
			 "ranks take simulation.ranks: domains' %s/log) = 1 && test ! -e %s/png",
		    dir, dir);
		ck_assert_msg(run_sh(cmd) == 0, "replicate: not one message, or outputs: %s/log", dir);
	}
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

/* Snapshot NAME (a one-file snapshot, or part 0 of a set) through the
 * project's reader: its type-4 bodies (a Plummer entry's) sorted by ID
 * into id and pos (n each, 3n); *files gets the set's parts, parts[k] each
 * part's bodies (at most 8). */
static void read_set(const char *name, size_t n, uint64_t *id, double *pos, int *files,
		     size_t *parts)
{
	uint64_t *fid = malloc(n * sizeof *fid);
	double *fpos = malloc(3 * n * sizeof *fpos);
	size_t got = 0;
	*files = 1;
	for (int i = 0; i < *files; i++) {
		char part[PATH_MAX];
		struct sim_snap *s = NULL;
		ck_assert_int_eq(sim_snap_part_path(name, i, part, sizeof part), 0);
		ck_assert_msg(sim_snap_open(part, NULL, &s) == 0, "%s: not read", part);
		const struct sim_snap_header *h = sim_snap_header(s);
		*files = h->num_files;
		ck_assert(*files >= 1 && *files <= 8);
		ck_assert_uint_eq(h->npart_total[4], n);
		const size_t m = h->npart[4];
		ck_assert(got + m <= n);
		ck_assert_int_eq(sim_snap_read(s, 4, 0, m, fid + got, fpos + 3 * got, NULL, NULL, NULL),
				 0);
		parts[i] = m;
		got += m;
		sim_snap_close(&s);
	}
	ck_assert_uint_eq(got, n);
	for (size_t k = 0; k < n; k++) { /* by ID: ids are 0 .. n-1 */
		ck_assert(fid[k] < n);
		id[fid[k]] = fid[k];
		memcpy(pos + 3 * fid[k], fpos + 3 * k, 3 * sizeof *pos);
	}
	free(fid), free(fpos);
}

START_TEST(snapshot_sets_over_2_3_ranks_read_back_as_one_process)
{
	if (!have_mpi())
		return;
	enum { N = 600 };
	char dir[] = "/tmp/nb-dom-XXXXXX", sets[4096], cmd[8192];
	ck_assert(mkdtemp(dir));
	static uint64_t id0[N], id1[N];
	static double p0[3 * N], p1[3 * N];
	const char *common = "--set bodies.0.count=600 --set output.frames=3 --set "
			     "output.snapshots.every=1";
	sets_of(dir, "one", 6, sets, sizeof sets);
	FMT(cmd, "'%s' %s/plummer-small.yaml %s %s --set output.snapshots.dir=%s/one-snap -q", g_bin,
	    g_data, sets, common, dir);
	ck_assert_int_eq(run_sh(cmd), 0);
	for (int P = 2; P <= 3; P++) {
		sets_of(dir, "np", 6, sets, sizeof sets);
		FMT(cmd, MPIRUN " -np %d '%s' %s/plummer-small.yaml %s %s --set simulation.ranks=domains "
			 "--set output.snapshots.dir=%s/np%d-snap --set output.snapshots.files=%d -q",
		    P, g_mpi, g_data, sets, common, dir, P, P);
		ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
		for (int f = 0; f < 3; f++) {
			char a[PATH_MAX], b[PATH_MAX];
			size_t parts[8], one[8];
			int files, ones;
			FMT(a, "%s/one-snap/snap_%03d.hdf5", dir, f);
			FMT(b, "%s/np%d-snap/snap_%03d.0.hdf5", dir, P, f);
			read_set(a, N, id0, p0, &ones, one);
			read_set(b, N, id1, p1, &files, parts);
			ck_assert_int_eq(ones, 1);
			ck_assert_int_eq(files, P); /* one part a rank, each its own bodies */
			for (int k = 0; k < P; k++)
				ck_assert_msg(parts[k] + 6 >= (size_t)(N / P) && parts[k] <= (size_t)(N / P + 6),
					      "%d ranks, snapshot %d: part %d holds %zu", P, f, k, parts[k]);
			/* every body once (by ID), where one process has it: frame 0
			 * exactly (the initial state), later frames to the direct sum's
			 * rounding (its order differs) */
			for (size_t i = 0; i < 3 * N; i++)
				ck_assert_msg(NB_CLOSE(p1[i], p0[i], f == 0 ? 0 : 1e-12, f == 0 ? 0 : 1e-9),
					      "%d ranks, snapshot %d, value %zu: %.17g vs %.17g", P, f, i,
					      p1[i], p0[i]);
		}
		printf("domains: %d ranks: snapshots as sets of %d parts, every body where one "
		       "process has it\n", P, P);
	}
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}
END_TEST

START_TEST(a_dead_rank_ends_a_domains_run_with_exit_1_and_no_outputs)
{
	if (!have_mpi())
		return;
	/* shared steps, then individual ones (dt_max 0.12, 16 ticks a block
	 * step: call 5 is a tick inside the first, the active bodies' forces
	 * with no migration before) */
	static const char *const modes[] = {"", "--set simulation.timesteps=individual --set "
						 "simulation.dt=0.02"};
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		char dir[] = "/tmp/nb-dom-XXXXXX", sets[4096], cmd[8192];
		ck_assert(mkdtemp(dir));
		sets_of(dir, "die", 6, sets, sizeof sets);
		/* rank 1 _exit(1)s at force call 5 without a word, mpirun told not
		 * to end the job for it: the others' exchanges (the domains' box,
		 * the migration, the ring) must name it within NB_DIST_TIMEOUT */
		FMT(cmd, MPIENV "NB_DIST_DIE=1:5 NB_DIST_TIMEOUT=5 timeout 120 mpirun --oversubscribe"
			 " --bind-to none --mca orte_abort_on_non_zero_status 0 -x NB_DIST_DIE -x "
			 "NB_DIST_TIMEOUT -np 3 '%s' %s/plummer-small.yaml %s %s --set "
			 "simulation.ranks=domains --set bodies.0.count=600 --set output.frames=3 "
			 "--set output.snapshots.dir=%s/snap --set output.snapshots.files=3 --set "
			 "output.snapshots.every=1 > %s/log 2>&1",
		    g_mpi, g_data, sets, modes[m], dir, dir);
		const int rc = run_sh(cmd);
		ck_assert_msg(rc == 1, "%s: exit status %d (124: it hung)", modes[m], rc);
		/* named by the deadline, or by the MPI error its closed connection
		 * gives first (dist/comm.c's two messages; either is the promise) */
		FMT(cmd, "grep -q 'nothing from rank 1 for 5 s\\|rank 1: .*(rank 1 died?)' %s/log",
		    dir);
		ck_assert_msg(run_sh(cmd) == 0, "no message naming rank 1 in %s/log", dir);
		/* rank 0 removed the frames it had written and the statistics; the
		 * snapshot set written before (frame 0, each rank its part) is gone
		 * too, and no part of a later one is left half-made */
		FMT(cmd, "test -z \"$(ls -A %s/die 2>/dev/null)\" && test ! -e %s/die.csv && "
			 "test -z \"$(ls -A %s/snap 2>/dev/null)\"",
		    dir, dir, dir);
		ck_assert_msg(run_sh(cmd) == 0, "outputs of the failed run left in %s", dir);
		printf("domains: a dead rank%s: exit 1, named, no outputs\n",
		       m ? " (individual time steps)" : "");
		FMT(cmd, "rm -rf '%s'", dir);
		run_sh(cmd);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dist_domains");
	TCase *tc = tcase_create("in process");
	tcase_add_test(tc, histogram_cuts_equal_the_cuts_of_a_full_sort);
	tcase_add_test(tc, migration_on_one_rank_keeps_every_body_in_key_order);
	tcase_add_test(tc, alltoallv_on_one_rank_returns_the_own_block);
	tcase_add_test(tc, what_domains_does_not_do_yet_is_refused_with_exit_2);
	suite_add_tcase(s, tc);
	if (!nb_mpi_usable(NULL)) {
		printf("SKIP: MPI cases: no MPI build (NB_MPI_BIN) or no mpirun\n");
		return s;
	}
	TCase *mp = tcase_create("mpi");
	tcase_set_timeout(mp, 600);
	tcase_add_test(mp, plummer_over_1_2_3_ranks_matches_one_process);
	tcase_add_test(mp, colliding_spheres_over_1_2_3_ranks_keep_every_body);
	tcase_add_test(mp, individual_steps_over_1_2_3_ranks_match_one_process);
	tcase_add_test(mp, follow_light_and_frame_auto_over_ranks_match_one_process);
	tcase_add_test(mp, let_bytes_fall_with_theta_on_every_rank);
	tcase_add_test(mp, barnes_hut_over_1_2_3_ranks_matches_one_process_tree);
	tcase_add_test(mp, a_refusal_under_mpirun_is_said_once_with_exit_2);
	tcase_add_test(mp, a_dead_rank_ends_a_domains_run_with_exit_1_and_no_outputs);
	tcase_add_test(mp, snapshot_sets_over_2_3_ranks_read_back_as_one_process);
	suite_add_tcase(s, mp);
	char why[160];
	if (!gpu_probe(why, sizeof why)) { /* no case made, none counted */
		printf("SKIP: GPU domains: %s\n", why);
		return s;
	}
	TCase *gp = tcase_create("gpu ranks");
	tcase_set_timeout(gp, 600);
	tcase_add_test(gp, gpu_ranks_give_one_gpus_statistics_and_frames);
	suite_add_tcase(s, gp);
	return s;
}

NB_CHECK_MAIN(make_suite)
