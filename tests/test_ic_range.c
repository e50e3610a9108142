/* test_ic_range.c - a range of the scene's bodies made alone
 * (sim_ic_build_range, sim/ic_range.h; issue 31: each rank makes only its
 * own bodies).
 *
 * For a Plummer sphere, a Hernquist sphere, two spheres in one scene, disk
 * galaxies (disk, bulge and halo; young stars and dust; odd and even part
 * counts) and an encounter of two galaxies: the ranges [0, a) [a, b)
 * [b, n), for cuts inside parts, at their edges and empty, concatenated
 * equal sim_ic_build's state bit for bit (positions, velocities, masses,
 * ids, component of each body, the component table). A quarter of a
 * 2M-body sphere peaks at well under the resident memory of all of it
 * (each built in a child of its own, getrusage's maxrss printed).
 *   build/tests/test_ic_range   (from the repository root: it reads scenes/) */
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "scene/scene.h"
#include "sim/ic_range.h"
#include "sim/sim.h"

static void load(const char *path, const char *const *ov, int nov, struct scene *sc)
{
	ck_assert_msg(scene_load(path, ov, nov, sc) == 0, "%s does not load", path);
}

/* Range [lo, hi) of sc equals bodies [lo, hi) of all (sim_ic_build's). */
static void check_range(const struct scene *sc, const struct sim_state *all, size_t lo,
			size_t hi)
{
	struct sim_state r;
	ck_assert_int_eq(sim_ic_build_range(sc, lo, hi, &r), 0);
	const size_t m = hi - lo;
	ck_assert_uint_eq(r.n, m);
	ck_assert_ptr_null(r.pid);
	ck_assert_int_eq(r.ncomp, all->ncomp);
	ck_assert_msg(memcmp(r.pos, all->pos + 3 * lo, 3 * m * sizeof *r.pos) == 0,
		      "positions of [%zu, %zu) differ", lo, hi);
	ck_assert_msg(memcmp(r.vel, all->vel + 3 * lo, 3 * m * sizeof *r.vel) == 0,
		      "velocities of [%zu, %zu) differ", lo, hi);
	ck_assert_msg(memcmp(r.mass, all->mass + lo, m * sizeof *r.mass) == 0,
		      "masses of [%zu, %zu) differ", lo, hi);
	ck_assert_msg(memcmp(r.comp, all->comp + lo, m * sizeof *r.comp) == 0,
		      "components of [%zu, %zu) differ", lo, hi);
	for (size_t i = 0; i < m; i++)
		ck_assert_uint_eq(r.id[i], lo + i);
	ck_assert_msg(memcmp(r.comps, all->comps, (size_t)all->ncomp * sizeof *r.comps) == 0,
		      "the component table of [%zu, %zu) differs", lo, hi);
	sim_state_free(&r);
}

/* Every cut (with 0 and n) as ranges of sc: each equals the whole's slice. */
static void check_cuts(const char *path, const char *const *ov, int nov, const size_t *cut,
		       int ncut)
{
	struct scene sc;
	load(path, ov, nov, &sc);
	struct sim_state all;
	ck_assert_int_eq(sim_ic_build(&sc, &all), 0);
	size_t prev = 0;
	for (int k = 0; k <= ncut; k++) {
		const size_t c = k < ncut ? cut[k] : all.n;
		ck_assert_uint_le(c, all.n);
		check_range(&sc, &all, prev, c);
		prev = c;
	}
	if (ncut == 0) /* and the whole as one range */
		check_range(&sc, &all, 0, all.n);
	sim_state_free(&all);
}

START_TEST(plummer_ranges_equal_the_whole)
{
	const char *ov[] = {"bodies.0.count=3001"};
	const size_t cut[] = {1, 1000, 1000, 2500, 3000}; /* one body at each end, one empty */
	check_cuts("scenes/plummer.yaml", ov, 1, cut, 5);
	check_cuts("scenes/plummer.yaml", ov, 1, NULL, 0);
}
END_TEST

START_TEST(hernquist_ranges_equal_the_whole)
{
	const char *ov[] = {"bodies.0.model=hernquist", "bodies.0.count=2000"};
	const size_t cut[] = {1, 777, 1999};
	check_cuts("scenes/plummer.yaml", ov, 2, cut, 3);
}
END_TEST

START_TEST(two_spheres_ranges_cross_the_entries)
{
	const char *ov[] = {"bodies.0.count=1200", "bodies.1.count=801"};
	const size_t cut[] = {600, 1200, 1500}; /* inside, at the edge, inside the second */
	check_cuts("scenes/two-clusters.yaml", ov, 2, cut, 3);
}
END_TEST

START_TEST(disk_galaxy_ranges_equal_the_whole)
{
	/* odd counts: each part's centre holds its unpaired last body */
	const char *odd[] = {"bodies.0.disk.count=2001", "bodies.0.bulge.count=301",
			     "bodies.0.halo.count=3001"};
	const size_t c1[] = {1000, 2150, 4000}; /* inside the disk [0, 2001), bulge, halo */
	check_cuts("scenes/isolated-disk.yaml", odd, 3, c1, 3);
	/* even counts: encounter_ranges_equal_the_whole's second galaxy */
}
END_TEST

START_TEST(young_stars_and_dust_ranges_equal_the_whole)
{
	/* disk, bulge, halo, young, dust: the last two carved from the disk */
	const char *ov[] = {"bodies.0.disk.count=3011", "bodies.0.bulge.count=201",
			    "bodies.0.halo.count=2001", "bodies.0.disk.young_fraction=0.1"};
	struct scene sc;
	load("scenes/dusty-disk.yaml", ov, 4, &sc);
	ck_assert_int_eq(sim_galaxy_young_count(&sc.bodies[0].disk), 301);
	ck_assert_int_eq(scene_dust_count(&sc.bodies[0]), 301);
	/* disk [0, 2409) bulge [.., 2610) halo [.., 4611) young [.., 4912) dust
	 * [.., 5213): a cut inside each of the disk, the young stars and the dust */
	const size_t cut[] = {2000, 4700, 5000};
	check_cuts("scenes/dusty-disk.yaml", ov, 4, cut, 3);
}
END_TEST

START_TEST(encounter_ranges_equal_the_whole)
{
	const char *ov[] = {"bodies.0.disk.count=1501", "bodies.0.bulge.count=201",
			    "bodies.0.halo.count=1001", "bodies.1.disk.count=1500",
			    "bodies.1.bulge.count=200", "bodies.1.halo.count=1000"};
	const size_t cut[] = {700, 3000}; /* the second galaxy starts at 2703 */
	check_cuts("scenes/galaxy-collision.yaml", ov, 6, cut, 2);
}
END_TEST

START_TEST(file_entry_ranges_equal_the_whole)
{
	/* a body file between two spheres: read whole, then sliced */
	char dir[] = "/tmp/nb-icr-XXXXXX", path[64], text[1024];
	ck_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/b.csv", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "id,component,mass,x,y,z,vx,vy,vz\n");
	for (int i = 0; i < 7; i++)
		fprintf(f, "%d,a,%g,%g,%g,%g,%g,%g,%g\n", i, 0.1 + i, 0.5 * i, -1.0 * i, 2.0, 0.25,
			-0.5 * i, 1.0 / (i + 1));
	fclose(f);
	snprintf(text, sizeof text,
		 "bodies:\n"
		 "  - {name: s, model: plummer, count: 101, mass: 1, scale: 0.3}\n"
		 "  - {name: f, model: file, file: %s}\n"
		 "  - {name: h, model: hernquist, count: 51, mass: 1, scale: 0.3, "
		 "position: [3, 0, 0]}\n"
		 "simulation: {backend: cpu}\n", path);
	struct scene sc;
	ck_assert_int_eq(scene_load_string(text, "f.yaml", dir, NULL, 0, &sc), 0);
	struct sim_state all;
	ck_assert_int_eq(sim_ic_build(&sc, &all), 0);
	ck_assert_uint_eq(all.n, 159);
	const size_t cut[] = {0, 50, 103, 106, 108, 130, 159}; /* file bodies [101, 108) */
	for (int k = 0; k + 1 < 7; k++)
		check_range(&sc, &all, cut[k], cut[k + 1]);
	ck_assert_double_eq(all.mass[103], 2.1); /* the file's own value, in place */
	sim_state_free(&all);
	remove(path);
	rmdir(dir);
}
END_TEST

START_TEST(a_range_outside_the_scene_is_refused)
{
	const char *ov[] = {"bodies.0.count=100"};
	struct scene sc;
	load("scenes/plummer.yaml", ov, 1, &sc);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build_range(&sc, 50, 101, &st), NB_ERUNTIME);
	ck_assert_ptr_null(st.pos);
	ck_assert_int_eq(sim_ic_build_range(&sc, 60, 50, &st), NB_ERUNTIME);
	ck_assert_int_eq(sim_ic_build_range(&sc, 100, 100, &st), 0);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_int_eq(st.ncomp, 1);
	ck_assert_uint_eq(st.comps[0].count, 100);
	sim_state_free(&st);
}
END_TEST

/* Peak resident memory (KiB) of a child that builds [lo, hi) of sc
 * (hi == 0: sim_ic_build, all of it). */
static long child_peak_kib(const struct scene *sc, size_t lo, size_t hi)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sim_state st;
		int rc = hi ? sim_ic_build_range(sc, lo, hi, &st) : sim_ic_build(sc, &st);
		_exit(rc == 0 && st.n == (hi ? hi - lo : (size_t)sc->bodies[0].count) ? 0 : 1);
	}
	int status = 0;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the build failed");
	return ru.ru_maxrss;
}

START_TEST(a_quarter_holds_about_a_quarter_of_the_memory)
{
	const char *ov[] = {"bodies.0.count=2000000"};
	struct scene sc;
	load("scenes/plummer.yaml", ov, 1, &sc);
	const size_t n = 2000000;
	const long all = child_peak_kib(&sc, 0, 0);
	const long quarter = child_peak_kib(&sc, n / 4, n / 2);
	printf("resident peak building 2M Plummer bodies: all %.1f MiB, a quarter %.1f MiB "
	       "(the state: %.1f MiB all, %.1f MiB a quarter)\n",
	       all / 1024.0, quarter / 1024.0, n * 94.0 / 1048576, n * 94.0 / 4 / 1048576);
	/* the state is 94 B a body (pos vel acc mass pot id comp): 180 MiB, 45 MiB a
	 * quarter; a range that held every body for a moment would peak at the whole */
	ck_assert_msg(quarter < all / 2, "a quarter peaked at %ld KiB, all at %ld KiB", quarter,
		      all);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ic_range");
	TCase *tc = tcase_create("ranges");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, plummer_ranges_equal_the_whole);
	tcase_add_test(tc, hernquist_ranges_equal_the_whole);
	tcase_add_test(tc, two_spheres_ranges_cross_the_entries);
	tcase_add_test(tc, disk_galaxy_ranges_equal_the_whole);
	tcase_add_test(tc, young_stars_and_dust_ranges_equal_the_whole);
	tcase_add_test(tc, encounter_ranges_equal_the_whole);
	tcase_add_test(tc, file_entry_ranges_equal_the_whole);
	tcase_add_test(tc, a_range_outside_the_scene_is_refused);
	tcase_add_test(tc, a_quarter_holds_about_a_quarter_of_the_memory);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
