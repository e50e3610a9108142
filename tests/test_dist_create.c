/* test_dist_create.c - each rank makes only its own bodies
 * (simulation.ranks: domains; dist/create.c, sim_ic_build_range; issue 31).
 *
 * Over MPI (NB_MPI_BIN and mpirun, as tests/test_dist_domains.c; SKIP
 * without): the encounter of two disk galaxies (disk, bulge and halo each,
 * odd counts) run on 3 ranks in domains mode writes, at frame 0, a
 * snapshot set whose every body (by ID, every type) has the position and
 * velocity one process's snapshot has, bit for bit; rank 0 says it made
 * only its own third; the statistics of every frame match one process's
 * within the tree's tolerance. The same for a Plummer sphere cut across
 * the three ranks and a Hernquist sphere on the last alone (their centres
 * are sums carried from rank to rank), under the direct sum.
 *   NB_BIN=build/nbody-render NB_MPI_BIN=build-mpi/nbody-render build/tests/test_dist_create */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "test_mpi_util.h"
#include "sim/sim.h"

#define FMT(buf, ...) ck_assert((size_t)snprintf(buf, sizeof buf, __VA_ARGS__) < sizeof buf)
#define MPIENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
#define MPIRUN MPIENV "mpirun --oversubscribe --bind-to none"

static int run_sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The bodies of galaxy-collision.yaml made small and odd (each part's
 * centre then holds its unpaired last body), the camera on keys (domains
 * draws no auto framing), no diffuse layer, stars drawn small. */
static const char *const g_sets =
	"--set bodies.0.disk.count=1201 --set bodies.0.bulge.count=201 "
	"--set bodies.0.halo.count=1501 --set bodies.1.disk.count=1200 "
	"--set bodies.1.bulge.count=199 --set bodies.1.halo.count=1500 "
	"--set camera.follow=all --set camera.frame=keys --set render.diffuse=0 "
	"--set render.width=96 --set render.height=64 --set output.frames=2 "
	"--set simulation.steps_per_frame=2 --set output.video= --set output.preview= "
	"--set output.snapshots.every=1";
enum { NB = 1201 + 201 + 1501 + 1200 + 199 + 1500 };

/* Snapshot NAME (one file or part 0 of a set), every type, by ID into pos
 * and vel (3 nb each); *files gets the set's parts. */
static void read_by_id(const char *name, size_t nb, double *pos, double *vel, int *files)
{
	uint64_t *fid = malloc(nb * sizeof *fid);
	double *fp = malloc(3 * nb * sizeof *fp), *fv = malloc(3 * nb * sizeof *fv);
	unsigned char *seen = calloc(nb, 1);
	ck_assert(fid && fp && fv && seen);
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
		for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
			const size_t m = h->npart[t];
			ck_assert(got + m <= nb);
			if (m)
				ck_assert_int_eq(sim_snap_read(s, t, 0, m, fid + got, fp + 3 * got,
							       fv + 3 * got, NULL, NULL), 0);
			got += m;
		}
		sim_snap_close(&s);
	}
	ck_assert_uint_eq(got, nb);
	for (size_t k = 0; k < nb; k++) {
		ck_assert(fid[k] < nb && !seen[fid[k]]);
		seen[fid[k]] = 1;
		memcpy(pos + 3 * fid[k], fp + 3 * k, 3 * sizeof *pos);
		memcpy(vel + 3 * fid[k], fv + 3 * k, 3 * sizeof *vel);
	}
	free(fid), free(fp), free(fv), free(seen);
}

/* Column 2.. of the statistics CSV's row f (K, W, E, ...). */
static void stats_row(const char *path, int f, double v[9])
{
	FILE *fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s", path);
	char line[1024];
	for (int r = 0; r <= f + 1; r++)
		ck_assert_msg(fgets(line, sizeof line, fp), "%s: no row %d", path, f);
	fclose(fp);
	char *p = strchr(line, ',');
	for (int k = 0; k < 9 && p; k++)
		v[k] = strtod(p + 1, &p);
}

/* SCENE with SETS (2 frames, snapshots every frame) in one process and on
 * 3 ranks in domains mode: frame 0's bodies (nb) equal bit for bit, rank 0
 * made [0, nb / 3) only, the energies of both frames within rtol. */
static void made_on_3_ranks(const char *scene, const char *sets, size_t nb, double rtol)
{
	const char *bin = getenv("NB_BIN"), *mpi = getenv("NB_MPI_BIN");
	if (!bin || !nb_mpi_usable(NULL)) {
		printf("SKIP: no MPI build (NB_MPI_BIN) or no mpirun\n");
		return;
	}
	char dir[] = "/tmp/nb-create-XXXXXX", cmd[8192];
	ck_assert(mkdtemp(dir));
	FMT(cmd, "'%s' %s %s --set output.stats=%s/one.csv --set output.png_dir=%s/one "
		 "--set output.snapshots.dir=%s/one-snap -q", bin, scene, sets, dir, dir, dir);
	ck_assert_int_eq(run_sh(cmd), 0);
	FMT(cmd, MPIRUN " -np 3 '%s' %s %s --set simulation.ranks=domains "
		 "--set output.stats=%s/np3.csv --set output.png_dir=%s/np3 "
		 "--set output.snapshots.dir=%s/np3-snap --set output.snapshots.files=3 > %s/log 2>&1",
	    mpi, scene, sets, dir, dir, dir, dir);
	ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
	FMT(cmd, "grep -q 'each of 3 ranks made only its own bodies (rank 0: \\[0, %zu) of %zu)' "
		 "%s/log", nb / 3, nb, dir);
	ck_assert_msg(run_sh(cmd) == 0, "%s", cmd);
	double *p0 = malloc(12 * nb * sizeof *p0);
	ck_assert_ptr_nonnull(p0);
	double *v0 = p0 + 3 * nb, *p1 = p0 + 6 * nb, *v1 = p0 + 9 * nb;
	char a[PATH_MAX], b[PATH_MAX];
	int files;
	FMT(a, "%s/one-snap/snap_000.hdf5", dir);
	FMT(b, "%s/np3-snap/snap_000.0.hdf5", dir);
	read_by_id(a, nb, p0, v0, &files);
	ck_assert_int_eq(files, 1);
	read_by_id(b, nb, p1, v1, &files);
	ck_assert_int_eq(files, 3);
	for (size_t i = 0; i < 3 * nb; i++) {
		ck_assert_msg(p1[i] == p0[i], "body %zu, position %zu: %.17g on 3 ranks, %.17g in one",
			      i / 3, i % 3, p1[i], p0[i]);
		ck_assert_msg(v1[i] == v0[i], "body %zu, velocity %zu: %.17g on 3 ranks, %.17g in one",
			      i / 3, i % 3, v1[i], v0[i]);
	}
	free(p0);
	for (int f = 0; f < 2; f++) {
		double r[9], g[9];
		FMT(a, "%s/one.csv", dir);
		FMT(b, "%s/np3.csv", dir);
		stats_row(a, f, r);
		stats_row(b, f, g);
		for (int k = 0; k < 3; k++)
			ck_assert_msg(NB_CLOSE(g[k], r[k], 0, rtol), "frame %d, column %d: %.12g vs %.12g",
				      f, k + 2, g[k], r[k]);
	}
	printf("create: %s: %zu bodies made on 3 ranks equal one process's bit for bit\n",
	       strrchr(scene, '/') ? strrchr(scene, '/') + 1 : scene, nb);
	FMT(cmd, "rm -rf '%s'", dir);
	run_sh(cmd);
}

START_TEST(galaxies_made_on_3_ranks_are_one_process_bodies)
{
	/* Barnes-Hut over locally essential trees against one process's tree
	 * (test_dist_domains' tolerance: energies 1e-4) */
	made_on_3_ranks("scenes/galaxy-collision.yaml", g_sets, NB, 1e-4);
}
END_TEST

START_TEST(spheres_made_on_3_ranks_are_one_process_bodies)
{
	/* a Plummer sphere cut across all three ranks and a Hernquist sphere on
	 * the last alone: each centre is the ranks' sum carried in rank order;
	 * the direct sum agrees to rounding */
	char dir[] = "/tmp/nb-create-XXXXXX", path[PATH_MAX];
	ck_assert(mkdtemp(dir));
	FMT(path, "%s/spheres.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: nbody\nseed: 7\n"
		   "simulation: {solver: direct, softening: 0.05, dt: 0.01, backend: cpu}\n"
		   "bodies:\n"
		   "  - {name: p, model: plummer, count: 1001, mass: 0.7, scale: 0.3, "
		   "velocity: [0.1, 0, 0]}\n"
		   "  - {name: h, model: hernquist, count: 400, mass: 0.3, scale: 0.2, "
		   "position: [1.5, 0, 0]}\n"
		   "camera:\n  fov: 50\n  keys:\n"
		   "    - {frame: 0, position: [0, -6, 2], target: [0, 0, 0]}\n"
		   "render: {width: 96, height: 64}\n");
	fclose(f);
	made_on_3_ranks(path, "--set output.frames=2 --set simulation.steps_per_frame=2 "
			      "--set output.video= --set output.preview= --set output.snapshots.every=1",
			1401, 1e-9);
	remove(path);
	rmdir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dist_create");
	TCase *tc = tcase_create("mpi");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, galaxies_made_on_3_ranks_are_one_process_bodies);
	tcase_add_test(tc, spheres_made_on_3_ranks_are_one_process_bodies);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
