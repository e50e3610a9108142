/* test_dist_snapin.c - ranks that each read their own part of a snapshot
 * (issue 31; sim_snap_load_share in sim/snap_load.c, dist/snapin.c).
 *
 * In process (every build): for P = 1..4 the shares 0..P-1 of a snapshot
 * entry, read one by one and put end to end, are sim_snap_load's bodies of
 * the whole entry: the same positions, velocities and masses bit for bit,
 * the same ParticleIDs and components, in the same order; each share holds
 * about 1/P of the particles. On GADGET-2's example (skipped when
 * ../shared/data/gadget2-ics is absent), on an HDF5 snapshot this program
 * writes (one file) and on a 3-part set of the same run, with and without
 * a subsample. A part whose header lies (NumPart_Total, NumPart_ThisFile)
 * or a part of another set is refused by every share, naming the part.
 * Over MPI (NB_MPI_BIN and mpirun, as tests/test_dist_domains.c; skipped
 * without): a snapshot scene in simulation.ranks: domains over 1, 2 and 3
 * ranks matches one process's statistics within the tree's tolerance, every
 * body owned once.
 *   NB_BIN=build/nbody-render NB_MPI_BIN=build-mpi/nbody-render build/tests/test_dist_snapin */
#include <math.h>

#include "../scene/scene.h"
#include "test_mpi_util.h"
#include "test_snapshot_util.h"

#define NB 460 /* bodies of g_scene: halo 200, disk 150, bulge 40, cluster 70 */
#define GADGET2 "../shared/data/gadget2-ics/galaxy_littleendian.dat"

/* stderr into g_dir/err.log while *saved >= 0 (capture_end restores it) */
static void capture_begin(int *saved)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/err.log", g_dir);
	fflush(stderr);
	*saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert(*saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	close(fd);
}

static void capture_end(int saved)
{
	fflush(stderr);
	ck_assert(dup2(saved, 2) == 2);
	close(saved);
}

/* The whole entry k of sc as sim_snap_load reads it, into w (pid set). */
static size_t load_whole(const struct scene *sc, int k, struct sim_state *w,
			 struct sim_snap_info *info)
{
	struct sim_units u;
	scene_units(sc, &u);
	ck_assert_int_eq(sim_snap_load(sc, k, &u, NULL, 0, 0, info), 0);
	size_t n = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		n += info->kept[t];
	ck_assert_int_eq(sim_state_alloc(w, n, info->ncomp), 0);
	ck_assert_int_eq(sim_snap_load(sc, k, &u, w, 0, 0, info), 0);
	ck_assert_ptr_nonnull(w->pid);
	return n;
}

/* Share r of P of entry k against w's bodies from *at on; *at advanced.
 * Returns the particles the share spans before selection (its stretch). */
static void share_matches(const struct scene *sc, int k, int r, int P, const struct sim_state *w,
			  size_t *at, size_t *comp_count, double *mass)
{
	struct sim_units u;
	scene_units(sc, &u);
	struct sim_snap_info ci, ri;
	ck_assert_int_eq(sim_snap_load_share(sc, k, &u, NULL, 0, 0, r, P, NULL, &ci), 0);
	size_t m = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		m += ci.kept[t];
	ck_assert_int_eq(ci.ncomp, w->ncomp);
	struct sim_state s;
	ck_assert_int_eq(sim_state_alloc(&s, m, ci.ncomp), 0);
	uint64_t *ids = calloc(m ? m : 1, sizeof *ids);
	ck_assert_ptr_nonnull(ids);
	ck_assert_int_eq(sim_snap_load_share(sc, k, &u, &s, 0, 0, r, P, ids, &ri), 0);
	ck_assert_ptr_null(s.pid); /* no table of every body on a rank */
	ck_assert_msg(*at + m <= w->n, "P %d share %d: %zu + %zu bodies of %zu", P, r, *at, m, w->n);
	ck_assert(memcmp(s.pos, w->pos + 3 * *at, 3 * m * sizeof *s.pos) == 0);
	ck_assert(memcmp(s.vel, w->vel + 3 * *at, 3 * m * sizeof *s.vel) == 0);
	ck_assert(memcmp(s.mass, w->mass + *at, m * sizeof *s.mass) == 0);
	ck_assert(memcmp(s.comp, w->comp + *at, m * sizeof *s.comp) == 0);
	for (size_t i = 0; i < m; i++) {
		ck_assert_msg(ids[i] == w->pid[*at + i], "P %d share %d body %zu: ID %llu, one "
			      "process %llu", P, r, i, (unsigned long long)ids[i],
			      (unsigned long long)w->pid[*at + i]);
		*mass += s.mass[i];
	}
	for (int c = 0; c < s.ncomp; c++) {
		const struct sim_component *a = &s.comps[c], *b = &w->comps[c];
		ck_assert_str_eq(a->name, b->name);
		ck_assert(a->softening == b->softening && a->brightness == b->brightness);
		ck_assert(memcmp(a->color, b->color, sizeof a->color) == 0);
		ck_assert_uint_eq(a->first, c == 0 ? 0 : s.comps[c - 1].first + s.comps[c - 1].count);
		comp_count[c] += a->count;
	}
	*at += m;
	free(ids);
	sim_state_free(&s);
}

/* Shares 0..P-1 of entry 0 of sc, P = 1..4, end to end, are its whole
 * load; without a selection each share spans floor/ceil of n/P bodies. */
static void shares_are_the_whole(const struct scene *sc, int selected)
{
	struct sim_state w;
	struct sim_snap_info info;
	const size_t n = load_whole(sc, 0, &w, &info);
	ck_assert_uint_gt(n, 0);
	for (int P = 1; P <= 4; P++) {
		size_t at = 0, count[64] = {0};
		double mass = 0;
		for (int r = 0; r < P; r++) {
			const size_t before = at;
			share_matches(sc, 0, r, P, &w, &at, count, &mass);
			if (!selected)
				ck_assert_msg(at - before == n * (size_t)(r + 1) / (size_t)P -
								 n * (size_t)r / (size_t)P,
					      "P %d share %d: %zu bodies of %zu", P, r, at - before, n);
		}
		ck_assert_uint_eq(at, n);
		for (int c = 0; c < w.ncomp; c++)
			ck_assert_uint_eq(count[c], w.comps[c].count);
		ck_assert_int_eq(sim_snap_entry_check(sc, 0, mass, at, &info), 0);
	}
	printf("shares: %s: %zu bodies in %d components, P = 1..4 end to end equal the whole%s\n",
	       sc->bodies[0].file, n, w.ncomp, selected ? " (subsample)" : "");
	sim_state_free(&w);
}

/* Entry r reading FILE (in g_dir), with the extra YAML in the entry. */
static void load_entry(const char *file, const char *extra, struct scene *sc)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "units: galactic\n"
		 "simulation: {solver: barnes-hut, softening: 0.1, dt: 0.5}\n"
		 "bodies:\n"
		 "  - {name: r, model: snapshot, file: %s%s}\n"
		 "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		 "render: {width: 32, height: 24}\n"
		 "output: {frames: 1}\n",
		 file, extra);
	ck_assert_int_eq(scene_load_string(text, "snapin.yaml", g_dir, NULL, 0, sc), 0);
}

/* The set (3 parts) of frame 7 into s3/, the one file into s1/. */
static void write_both(void)
{
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	ck_assert_int_eq(run("output.snapshots.dir=s1", "output.snapshots.every=4", NULL), 0);
}

START_TEST(shares_of_gadget2_example_are_its_whole_load)
{
	if (access("scenes/" "../" GADGET2, R_OK) != 0) {
		printf("SKIP: %s absent\n", GADGET2);
		return;
	}
	struct scene sc;
	ck_assert_int_eq(scene_load("scenes/gadget2-galaxy.yaml", NULL, 0, &sc), 0);
	shares_are_the_whole(&sc, 0);
	const char *sub[] = {"bodies.0.subsample=0.3"};
	ck_assert_int_eq(scene_load("scenes/gadget2-galaxy.yaml", sub, 1, &sc), 0);
	shares_are_the_whole(&sc, 1);
}
END_TEST

START_TEST(shares_of_a_written_file_and_set_are_their_whole_load)
{
	write_both();
	const char *files[2] = {"s1/snap_002.hdf5", "s3/snap_002.0.hdf5"};
	for (int f = 0; f < 2; f++) {
		struct scene sc;
		load_entry(files[f], "", &sc);
		shares_are_the_whole(&sc, 0);
		load_entry(files[f], ", subsample: 0.5", &sc);
		shares_are_the_whole(&sc, 1);
	}
}
END_TEST

/* Header attribute NAME (6 unsigned) of g_dir/FILE: entry t + 1. */
static void lie(const char *file, const char *name, int t)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, file);
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t a = H5Aopen_by_name(f, "Header", name, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	unsigned v[SIM_SNAP_NTYPES];
	ck_assert_int_ge(H5Aread(a, H5T_NATIVE_UINT, v), 0);
	H5Aclose(a);
	v[t]++;
	ck_assert_int_ge(H5Adelete_by_name(f, "Header", name, H5P_DEFAULT), 0);
	hsize_t n = SIM_SNAP_NTYPES;
	hid_t sp = H5Screate_simple(1, &n, NULL), g = H5Gopen2(f, "Header", H5P_DEFAULT);
	a = H5Acreate2(g, name, H5T_STD_U32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Awrite(a, H5T_NATIVE_UINT, v), 0);
	H5Aclose(a);
	H5Gclose(g);
	H5Sclose(sp);
	H5Fclose(f);
}

/* Every share r of 3, count pass and read, refuses FIRST's set (NB_EINPUT)
 * with a message naming PART and saying WHAT. */
static void every_share_refuses(const char *first, const char *part, const char *what)
{
	struct scene sc;
	load_entry(first, "", &sc);
	struct sim_units u;
	scene_units(&sc, &u);
	struct sim_state s;
	ck_assert_int_eq(sim_state_alloc(&s, NB, 8), 0);
	for (int r = 0; r < 3; r++)
		for (int pass = 0; pass < 2; pass++) {
			struct sim_snap_info info;
			int saved;
			capture_begin(&saved);
			int rc = sim_snap_load_share(&sc, 0, &u, pass ? &s : NULL, 0, 0, r, 3, NULL,
						     &info);
			capture_end(saved);
			const char *log = slurp("err.log");
			ck_assert_msg(rc == NB_EINPUT, "share %d: %d: %s", r, rc, log);
			ck_assert_msg(strstr(log, part) && strstr(log, what),
				      "share %d: not naming %s with '%s': %s", r, part, what, log);
		}
	sim_state_free(&s);
}

/* Coordinates[0] of the last particle of PartType4 in g_dir/FILE: NaN. */
static void poison_last(const char *file)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, file);
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t d = H5Dopen2(f, "PartType4/Coordinates", H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	hid_t sp = H5Dget_space(d);
	hsize_t dims[2];
	ck_assert_int_eq(H5Sget_simple_extent_dims(sp, dims, NULL), 2);
	hsize_t start[2] = {dims[0] - 1, 0}, count[2] = {1, 1};
	ck_assert_int_ge(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL), 0);
	hid_t ms = H5Screate_simple(1, count, NULL);
	const double nan = NAN;
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, sp, H5P_DEFAULT, &nan), 0);
	H5Sclose(ms);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
}

START_TEST(a_part_that_lies_is_refused_by_every_share_naming_it)
{
	write_both();
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && cp -r s3 t3 && cp -r s3 c3", g_dir);
	ck_assert_int_eq(system(cmd), 0);
	lie("s3/snap_002.2.hdf5", "NumPart_Total", 1);
	every_share_refuses("s3/snap_002.0.hdf5", "snap_002.2.hdf5", "NumPart_Total[1] is 201");
	/* a count the part does not hold: the parts' sum against the totals */
	lie("t3/snap_002.1.hdf5", "NumPart_ThisFile", 2);
	every_share_refuses("t3/snap_002.0.hdf5", "snap_002.1.hdf5", "PartType2");
	/* a part of another run's set of the same counts and time */
	ck_assert_int_eq(run("output.snapshots.dir=s3b", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	snprintf(cmd, sizeof cmd, "cd '%s' && cp s3b/snap_002.1.hdf5 c3/", g_dir);
	ck_assert_int_eq(system(cmd), 0);
	every_share_refuses("c3/snap_002.0.hdf5", "snap_002.1.hdf5", "SetId");
}
END_TEST

/* ---- over MPI ranks ----------------------------------------------------- */

#define MPIENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
#define MPIRUN MPIENV "mpirun --oversubscribe --bind-to none"
/* snprintf into the array BUF, asserting that it fit */
#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)

static char g_mpi[PATH_MAX];

static int have_mpi(void)
{
	if (!nb_mpi_usable(g_mpi)) {
		printf("SKIP: no MPI build (NB_MPI_BIN) or no mpirun\n");
		return 0;
	}
	return 1;
}

static int sh(const char *cmd)
{
	int ws = system(cmd);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* The statistics CSV g_dir/NAME: up to 8 rows of its 10 values after the
 * frame. Returns the rows. */
static int stats_of(const char *name, double v[8][10])
{
	char path[PATH_MAX];
	FMT(path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	char line[1024];
	int rows = 0;
	ck_assert(fgets(line, sizeof line, f));
	while (rows < 8 && fgets(line, sizeof line, f)) {
		char *p = strchr(line, ',');
		for (int k = 0; k < 10 && p; k++)
			v[rows][k] = strtod(p + 1, &p);
		rows++;
	}
	fclose(f);
	return rows;
}

/* Bodies owned in all (the domains report's "owns X of N bodies" summed
 * over its P lines) in g_dir/LOG; *n gets N. */
static double owned_in(const char *log, double *n)
{
	char path[PATH_MAX], line[2048];
	FMT(path, "%s/%s", g_dir, log);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	double sum = 0;
	*n = -1;
	while (fgets(line, sizeof line, f)) {
		const char *p = strstr(line, ": owns ");
		double x, all;
		if (p && sscanf(p, ": owns %lf of %lf bodies", &x, &all) == 2)
			sum += x, *n = all;
	}
	fclose(f);
	return sum;
}

/* SCENE (with ARGS) over 1, 2 and 3 ranks in domains mode against one
 * process: N bodies, every one owned once; frame 0's kinetic energy,
 * momentum and angular momentum those of the same bodies (summed in
 * another order); later frames within the tree's tolerance (energies and
 * |L| rtol 1e-4 as test_dist_domains' tree, momentum PATOL). */
static void snapin_matches_one_process(const char *scene, const char *args, size_t n,
				       int frames, double patol, int exact0)
{
	char cmd[8192];
	FMT(cmd, "cd '%s' && '%s' %s %s --set output.stats=one.csv -q > one.log 2>&1", g_dir, g_bin,
	    scene, args);
	ck_assert_msg(sh(cmd) == 0, "%s", cmd);
	double ref[8][10], got[8][10];
	ck_assert_int_eq(stats_of("one.csv", ref), frames);
	for (int P = 1; P <= 3; P++) {
		FMT(cmd, "cd '%s' && " MPIRUN " -np %d '%s' %s %s --set simulation.ranks=domains "
			 "--set output.stats=np%d.csv > np%d.log 2>&1",
		    g_dir, P, g_mpi, scene, args, P, P);
		ck_assert_msg(sh(cmd) == 0, "%s: %s", cmd, slurp("np1.log"));
		char csv[32], log[32];
		FMT(csv, "np%d.csv", P);
		FMT(log, "np%d.log", P);
		ck_assert_int_eq(stats_of(csv, got), frames);
		double all, owned = owned_in(log, &all);
		ck_assert_msg(owned == (double)n && all == (double)n, "%d ranks: %g owned of %g, %zu "
			      "read by one process", P, owned, all, n);
		ck_assert_msg(P == 1 || !exact0 || strstr(slurp(log), "each of") != NULL,
			      "%d ranks: not read in shares: %s", P, slurp(log));
		for (int f = 0; f < frames; f++)
			for (int k = 0; k < 9; k++) { /* K W E (rtol), p (atol), L (|L| rtol) */
				const double *l = ref[f] + 7, lmag = sqrt(l[0] * l[0] + l[1] * l[1] +
									  l[2] * l[2]);
				const double rtol = k >= 3 ? 0 : f == 0 && k == 0 && exact0 ? 1e-12 : 1e-4;
				const double atol = k < 3 ? 0 : k < 6 ? patol : 1e-4 * lmag;
				ck_assert_msg(NB_CLOSE(got[f][k + 1], ref[f][k + 1], atol, rtol),
					      "%d ranks, frame %d, column %d: %.12g vs one process %.12g",
					      P, f, k + 2, got[f][k + 1], ref[f][k + 1]);
			}
		printf("snapin: %s over %d ranks: %zu bodies owned once, statistics within the "
		       "tree's tolerance\n", scene, P, n);
	}
}

START_TEST(gadget2_example_over_1_2_3_ranks_matches_one_process)
{
	if (!have_mpi())
		return;
	char scene[PATH_MAX];
	ck_assert(realpath("scenes/gadget2-galaxy.yaml", scene));
	if (access("scenes/" "../" GADGET2, R_OK) != 0) {
		printf("SKIP: %s absent\n", GADGET2);
		return;
	}
	/* 5988 bodies (a subsample of 0.1 of 60000), 2 steps a frame */
	snapin_matches_one_process(scene,
				   "--set render.diffuse=0 --set bodies.0.subsample=0.1 --set "
				   "output.frames=2 --set simulation.steps_per_frame=2 --set "
				   "output.video= --set output.preview= --set render.width=96 --set "
				   "render.height=64 --set simulation.backend=cpu",
				   5988, 2, 0.05, 1);
}
END_TEST

/* snapin.yaml in g_dir: the barnes-hut scene of load_entry on FILE */
static void write_entry_scene(const char *file)
{
	char path[PATH_MAX];
	FMT(path, "%s/snapin.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: galactic\n"
		   "simulation: {solver: barnes-hut, theta: 0.3, softening: 0.1, dt: 0.5, "
		   "steps_per_frame: 2, backend: cpu}\n"
		   "bodies:\n"
		   "  - {name: r, model: snapshot, file: %s}\n"
		   "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		   "render: {width: 32, height: 24}\n"
		   "output: {frames: 3, video: \"\"}\n",
		   file);
	fclose(f);
}

START_TEST(a_written_set_over_1_2_3_ranks_matches_one_process)
{
	if (!have_mpi())
		return;
	write_both();
	write_entry_scene("s3/snap_002.0.hdf5");
	snapin_matches_one_process("snapin.yaml", "", NB, 3, 1e8, 1); /* 1e-6 of sum m|v| */
}
END_TEST

/* --restart over ranks of a scene of snapshots: read whole on every rank
 * (the restart replaces every body's state), the file IDs dropped (only
 * snapshot output writes them, refused here), then domains as usual */
START_TEST(a_restart_of_a_snapshot_scene_over_1_2_3_ranks_matches_one_process)
{
	if (!have_mpi())
		return;
	write_both();
	write_entry_scene("s1/snap_002.hdf5");
	char cmd[4096];
	FMT(cmd, "cd '%s' && '%s' snapin.yaml -q --set output.frames=4 --set "
		 "output.snapshots.dir=r1 --set output.snapshots.every=1 > r1.log 2>&1",
	    g_dir, g_bin);
	ck_assert_msg(sh(cmd) == 0, "%s", slurp("r1.log"));
	/* frames 2 and 3 from frame 1's snapshot */
	snapin_matches_one_process("snapin.yaml",
				   "--set output.frames=4 --restart r1/snap_001.hdf5", NB, 2, 1e8, 0);
}
END_TEST

/* Lines of g_dir/LOG holding WHAT (a fixed string). */
static int lines_with(const char *log, const char *what)
{
	char cmd[PATH_MAX + 512];
	FMT(cmd, "grep -c -F -- '%s' '%s/%s'", what, g_dir, log);
	FILE *p = popen(cmd, "r");
	int c = 0;
	if (p) {
		if (fscanf(p, "%d", &c) != 1)
			c = 0;
		pclose(p);
	}
	return c;
}

START_TEST(refusals_over_ranks_exit_2_with_one_message)
{
	if (!have_mpi())
		return;
	write_both();
	char cmd[4096];
	FMT(cmd, "cd '%s' && cp -r s3 t3 && cp -r s3 b3", g_dir);
	ck_assert_int_eq(sh(cmd), 0);
	lie("t3/snap_002.2.hdf5", "NumPart_Total", 1);
	poison_last("b3/snap_002.2.hdf5"); /* read by the last rank only */
	struct {
		const char *file, *args, *what;
		int dry; /* --dry-run refuses it too */
	} cases[] = {
		{"t3/snap_002.0.hdf5", "", "snap_002.2.hdf5: Header: NumPart_Total[1] is 201", 1},
		{"s3/snap_002.0.hdf5", "--set output.snapshots.dir=out --set output.snapshots.files=3",
		 "output.snapshots.dir: simulation.ranks: domains does not write snapshots of bodies "
		 "read", 1},
		{"b3/snap_002.0.hdf5", "",
		 "snap_002.2.hdf5: PartType4/Coordinates: particle 69 of type 4 has a value that is not "
		 "finite", 0},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int dry = 0; dry <= cases[c].dry; dry++) {
			write_entry_scene(cases[c].file);
			FMT(cmd, "cd '%s' && " MPIRUN " -np 3 '%s' snapin.yaml %s %s --set "
				 "simulation.ranks=domains --set output.png_dir=png > ref.log 2>&1",
			    g_dir, g_mpi, cases[c].args, dry ? "--dry-run" : "");
			const int rc = sh(cmd);
			const char *log = slurp("ref.log");
			ck_assert_msg(rc == 2, "case %zu%s: exit %d: %s", c, dry ? " (dry run)" : "", rc,
				      log);
			ck_assert_msg(lines_with("ref.log", cases[c].what) == 1,
				      "case %zu%s: not once '%s': %s", c, dry ? " (dry run)" : "",
				      cases[c].what, log);
			/* (one process leaves png/ made and empty too when a value is
			 * refused while the bodies are read) */
			ck_assert_msg(count("png", ".png") == 0, "case %zu: frames made", c);
		}
}
END_TEST

/* A share reads its own stretch only: a NaN in the last particle of the
 * set (the last type-4 row of part 2) is refused by share 2 of 3 alone,
 * naming part 2, though shares 0 and 1 read rows of part 2 too. */
START_TEST(a_bad_value_is_refused_by_the_share_that_reads_it_only)
{
	write_both();
	poison_last("s3/snap_002.2.hdf5");
	struct scene sc;
	load_entry("s3/snap_002.0.hdf5", "", &sc);
	struct sim_units u;
	scene_units(&sc, &u);
	for (int r = 0; r < 3; r++) {
		struct sim_snap_info info;
		ck_assert_int_eq(sim_snap_load_share(&sc, 0, &u, NULL, 0, 0, r, 3, NULL, &info), 0);
		size_t m = 0;
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			m += info.kept[t];
		struct sim_state s;
		ck_assert_int_eq(sim_state_alloc(&s, m, info.ncomp), 0);
		int saved;
		capture_begin(&saved);
		const int rc = sim_snap_load_share(&sc, 0, &u, &s, 0, 0, r, 3, NULL, &info);
		capture_end(saved);
		const char *log = slurp("err.log");
		if (r < 2) {
			ck_assert_msg(rc == 0, "share %d: %d: %s", r, rc, log);
		} else {
			ck_assert_msg(rc == NB_EINPUT && strstr(log, "snap_002.2.hdf5") &&
					      strstr(log, "not finite"),
				      "share 2: %d: %s", rc, log);
		}
		sim_state_free(&s);
	}
	/* share 0's stretch [0, 153) is type 1's first rows, and parts 0 and 1
	 * hold fewer: it reads rows of part 2 too */
	uint64_t before2 = 0;
	for (int i = 0; i < 2; i++) {
		char part[PATH_MAX];
		struct sim_snap *h = NULL;
		snprintf(part, sizeof part, "%s/s3/snap_002.%d.hdf5", g_dir, i);
		ck_assert_int_eq(sim_snap_open(part, NULL, &h), 0);
		ck_assert_uint_eq(sim_snap_header(h)->npart_total[1], 200);
		before2 += sim_snap_header(h)->npart[1];
		sim_snap_close(&h);
	}
	ck_assert_msg(before2 < NB / 3, "parts 0 and 1 hold %llu of type 1",
		      (unsigned long long)before2);
}
END_TEST

/* A set written over 2 ranks in domains mode (a part a rank) is not
 * restarted from: the run and --dry-run over 2 ranks exit 2 with one
 * message naming the part and what works, before any frame. */
START_TEST(a_restart_from_a_domains_set_is_refused_saying_what_works)
{
	if (!have_mpi())
		return;
	char cmd[4096];
	FMT(cmd, "cd '%s' && " MPIRUN " -np 2 '%s' scene.yaml -q --set simulation.ranks=domains "
		 "--set simulation.backend=cpu --set output.frames=3 --set output.snapshots.dir=d2 "
		 "--set output.snapshots.files=2 --set output.snapshots.every=1 > d2.log 2>&1",
	    g_dir, g_mpi);
	ck_assert_msg(sh(cmd) == 0 && exists("d2/snap_001.1.hdf5"), "%s", slurp("d2.log"));
	for (int dry = 0; dry <= 1; dry++) {
		FMT(cmd, "cd '%s' && " MPIRUN " -np 2 '%s' scene.yaml %s --set simulation.ranks=domains "
			 "--set simulation.backend=cpu --set output.frames=3 --set output.png_dir=png "
			 "--restart d2/snap_001.0.hdf5 > rs.log 2>&1",
		    g_dir, g_mpi, dry ? "--dry-run" : "");
		const int rc = sh(cmd);
		ck_assert_msg(rc == 2, "%s: exit %d: %s", dry ? "--dry-run" : "run", rc, slurp("rs.log"));
		ck_assert_msg(lines_with("rs.log", "snap_001.0.hdf5: --restart: a part of a 2-file "
						   "snapshot set") == 1 &&
				      lines_with("rs.log", "simulation.ranks: replicate") == 1,
			      "%s", slurp("rs.log"));
		ck_assert(count("png", ".png") == 0);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dist_snapin");
	TCase *tc = tcase_create("shares");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, shares_of_gadget2_example_are_its_whole_load);
	tcase_add_test(tc, shares_of_a_written_file_and_set_are_their_whole_load);
	tcase_add_test(tc, a_part_that_lies_is_refused_by_every_share_naming_it);
	tcase_add_test(tc, a_bad_value_is_refused_by_the_share_that_reads_it_only);
	suite_add_tcase(s, tc);
	TCase *mp = tcase_create("mpi");
	tcase_add_checked_fixture(mp, setup, teardown);
	tcase_set_timeout(mp, 300);
	tcase_add_test(mp, gadget2_example_over_1_2_3_ranks_matches_one_process);
	tcase_add_test(mp, a_written_set_over_1_2_3_ranks_matches_one_process);
	tcase_add_test(mp, refusals_over_ranks_exit_2_with_one_message);
	tcase_add_test(mp, a_restart_of_a_snapshot_scene_over_1_2_3_ranks_matches_one_process);
	tcase_add_test(mp, a_restart_from_a_domains_set_is_refused_saying_what_works);
	suite_add_tcase(s, mp);
	return s;
}

NB_CHECK_MAIN(make_suite)
