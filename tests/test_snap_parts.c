/* test_snap_parts.c - issue 31, "output in parallel": snapshots as GADGET
 * multi-file sets (output.snapshots.files: K; output/snap_set.c):
 *   - a 3-part set reads back through the project's reader (sim_snap_*)
 *     as the one-file snapshot of the same run: positions, velocities,
 *     IDs and masses equal bit for bit, the Header's totals and
 *     NumFilesPerSnapshot those of a set;
 *   - the rank protocol of output/output.h, run by three "ranks" in one
 *     process (uneven shares, one empty), gives a set that reads as the
 *     one file; a set given up leaves nothing; out_snap_write_ranks over
 *     three forked "ranks" does the same, and a rank that fails (a file
 *     size limit, a directory at its part's name) fails every rank and
 *     leaves no part;
 *   - yt loads part 0 as the whole set and projects it (skipped without
 *     yt);
 *   - a missing part, a part whose NumPart_Total lies, a part of another
 *     set: refused naming the part, by the run and by --dry-run alike;
 *   - an earlier run's one-file snapshot and extra parts under the set's
 *     names are replaced, a FIFO at a part's name is refused before work,
 *     a failed run removes the sets it placed, a write that fails (a file
 *     size limit, as a full disk) leaves neither a part nor a temporary; a batch's --resume takes
 *     whole sets as whole and redoes a run that lost a part;
 *   - --restart from a part is refused before work (run and --dry-run);
 *   - a writer killed outright (kill -9) leaves no partial set visible:
 *     every set whose part 0 is there reads whole; the next run sweeps
 *     the dead writer's temporary parts.
 * Run:
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_snap_parts
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_snap_parts */
#include <hdf5.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../output/output.h"
#include "../scene/scene.h"
#include "test_snapshot_util.h"

#define NB 460 /* bodies of g_scene: halo 200, disk 150, bulge 40, cluster 70 */

/* A film of g_dir/FILE (a snapshot or a set's part 0) as film.yaml. */
static void write_film(const char *file)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/film.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: galactic\n"
		   "simulation: {solver: none, dt: 0.5, steps_per_frame: 1}\n"
		   "bodies:\n"
		   "  - {name: r, model: snapshot, file: %s}\n"
		   "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		   "render: {width: 32, height: 24}\n"
		   "output: {frames: 1}\n",
		   file);
	fclose(f);
}

/* The film of FILE run, then dry-run: both exit 2 and say WHAT naming
 * PART (the run's log first, then the dry run's). */
static void film_refused(const char *file, const char *part, const char *what)
{
	write_film(file);
	g_file = "film.yaml";
	const char *mode[2] = {NULL, "--dry-run"};
	for (int m = 0; m < 2; m++) {
		int rc = run(mode[m], NULL);
		const char *log = slurp("run.log");
		const char *how = m ? "--dry-run" : "the run";
		ck_assert_msg(rc == 2, "%s: exit %d, expected 2: %s", how, rc, log);
		ck_assert_msg(strstr(log, part) && strstr(log, what),
			      "%s: the message does not name %s with '%s': %s", how, part, what, log);
	}
	g_file = "scene.yaml";
}

/* Writes the set (3 parts) of frame 7 into s3/ and the one-file
 * snapshot of the same run into s1/. */
static void write_both(void)
{
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	ck_assert_int_eq(run("output.snapshots.dir=s1", "output.snapshots.every=4", NULL), 0);
}

/* Every particle of type t of the snapshot whose first file is g_dir/NAME,
 * files in order, through the project's reader: n rows of id, pos (3),
 * vel (3), mass appended to the arrays at *n. Returns the files read. */
static int read_type(const char *name, int t, uint64_t *id, double *pos, double *vel,
		     double *mass, size_t *n)
{
	char first[PATH_MAX], part[PATH_MAX];
	snprintf(first, sizeof first, "%s/%s", g_dir, name);
	int files = 1;
	for (int i = 0; i < files; i++) {
		struct sim_snap *s = NULL;
		ck_assert_int_eq(sim_snap_part_path(first, i, part, sizeof part), 0);
		ck_assert_msg(sim_snap_open(part, NULL, &s) == 0, "%s: not read", part);
		const struct sim_snap_header *h = sim_snap_header(s);
		files = h->num_files;
		const size_t m = h->npart[t];
		if (m)
			ck_assert_int_eq(sim_snap_read(s, t, 0, m, id + *n, pos + 3 * *n, vel + 3 * *n,
						       mass + *n, NULL),
					 0);
		*n += m;
		sim_snap_close(&s);
	}
	return files;
}

START_TEST(set_reads_back_as_the_one_file_snapshot)
{
	write_both();
	/* frame 7 is snapshot 2: the set's parts and no one-file form */
	ck_assert(exists("s3/snap_002.0.hdf5") && exists("s3/snap_002.1.hdf5") &&
		  exists("s3/snap_002.2.hdf5") && !exists("s3/snap_002.3.hdf5") &&
		  !exists("s3/snap_002.hdf5") && exists("s1/snap_002.hdf5"));
	static uint64_t id[2][NB];
	static double pos[2][3 * NB], vel[2][3 * NB], mass[2][NB];
	size_t n[2] = {0, 0}, total = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		size_t at[2] = {n[0], n[1]};
		ck_assert_int_eq(read_type("s1/snap_002.hdf5", t, id[0], pos[0], vel[0], mass[0], &n[0]), 1);
		ck_assert_int_eq(read_type("s3/snap_002.0.hdf5", t, id[1], pos[1], vel[1], mass[1], &n[1]),
				 3);
		ck_assert_uint_eq(n[1] - at[1], n[0] - at[0]);
		total += n[0] - at[0];
	}
	ck_assert_uint_eq(total, NB);
	/* bit for bit: the same doubles, the same IDs, in the same order */
	ck_assert(memcmp(id[0], id[1], sizeof id[0]) == 0);
	ck_assert(memcmp(pos[0], pos[1], sizeof pos[0]) == 0);
	ck_assert(memcmp(vel[0], vel[1], sizeof vel[0]) == 0);
	ck_assert(memcmp(mass[0], mass[1], sizeof mass[0]) == 0);
	/* part 1's header: its own bodies (153 of them: [460/3, 2 460/3) of
	 * the index order), the set's totals 0 200 150 40 70 0, 3 files */
	char p1[PATH_MAX];
	snprintf(p1, sizeof p1, "%s/s3/snap_002.1.hdf5", g_dir);
	struct sim_snap *s = NULL;
	ck_assert_int_eq(sim_snap_open(p1, NULL, &s), 0);
	const struct sim_snap_header *h = sim_snap_header(s);
	const uint64_t want[SIM_SNAP_NTYPES] = {0, 200, 150, 40, 70, 0};
	uint64_t in1 = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		ck_assert_uint_eq(h->npart_total[t], want[t]);
		in1 += h->npart[t];
	}
	ck_assert_uint_eq(in1, 2 * NB / 3 - NB / 3); /* [153, 306) */
	ck_assert_int_eq(h->num_files, 3);
	ck_assert(h->set_id != 0);
	sim_snap_close(&s);
}
END_TEST

START_TEST(yt_loads_the_set)
{
	if (!has_module("yt")) {
		printf("SKIP: yt_loads_the_set: no yt for %s\n", python());
		return;
	}
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	char out[4096];
	int rc = py("import yt\n"
		    "yt.set_log_level(50)\n"
		    "ds = yt.load('s3/snap_002.0.hdf5')\n"
		    "ad = ds.all_data()\n"
		    "m = ad['all', 'particle_mass']\n"
		    "p = yt.ParticleProjectionPlot(ds, 'z', ('all', 'particle_mass'))\n"
		    "p.save('proj.png')\n"
		    "print(type(ds).__name__, m.size, '%.6e' % float(m.sum().to('Msun')))\n",
		    out, sizeof out);
	ck_assert_msg(rc == 0, "yt failed: %s", out);
	/* 460 particles, the run's 5.61e11 M_sun (as the one-file snapshot) */
	ck_assert_msg(strstr(out, "GadgetHDF5Dataset 460 5.610000e+11"), "yt says: %s", out);
	struct stat sb;
	char png[PATH_MAX];
	snprintf(png, sizeof png, "%s/proj.png", g_dir);
	ck_assert(stat(png, &sb) == 0 && sb.st_size > 1000);
}
END_TEST

START_TEST(a_missing_part_is_refused_naming_it)
{
	write_both();
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/s3/snap_001.1.hdf5", g_dir);
	ck_assert_int_eq(unlink(path), 0);
	film_refused("s3/snap_001.0.hdf5", "snap_001.1.hdf5", "is missing");
}
END_TEST

/* Attribute Header/NumPart_Total of g_dir/NAME: type t's entry + 1. */
static void lie_about_total(const char *name, int t)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t a = H5Aopen_by_name(f, "Header", "NumPart_Total", H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	unsigned v[SIM_SNAP_NTYPES];
	ck_assert_int_ge(H5Aread(a, H5T_NATIVE_UINT, v), 0);
	H5Aclose(a);
	v[t]++;
	/* written anew (as h5py does): HDF5 1.10 will not rewrite it in place */
	ck_assert_int_ge(H5Adelete_by_name(f, "Header", "NumPart_Total", H5P_DEFAULT), 0);
	hsize_t n = SIM_SNAP_NTYPES;
	hid_t sp = H5Screate_simple(1, &n, NULL), g = H5Gopen2(f, "Header", H5P_DEFAULT);
	a = H5Acreate2(g, "NumPart_Total", H5T_STD_U32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Awrite(a, H5T_NATIVE_UINT, v), 0);
	H5Aclose(a);
	H5Gclose(g);
	H5Sclose(sp);
	H5Fclose(f);
}

START_TEST(a_part_whose_total_lies_is_refused_naming_it)
{
	write_both();
	lie_about_total("s3/snap_001.2.hdf5", 1);
	film_refused("s3/snap_001.0.hdf5", "snap_001.2.hdf5", "NumPart_Total[1] is 201");
}
END_TEST

START_TEST(a_part_of_another_set_is_refused_naming_it)
{
	/* two runs of one scene: the same counts and times, other sets */
	write_both();
	ck_assert_int_eq(run("output.snapshots.dir=s3b", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cp '%s/s3b/snap_001.1.hdf5' '%s/s3/snap_001.1.hdf5'", g_dir, g_dir);
	ck_assert_int_eq(system(cmd), 0);
	film_refused("s3/snap_001.0.hdf5", "snap_001.1.hdf5", "a part of another set");
}
END_TEST

START_TEST(earlier_names_are_replaced_and_special_files_refused)
{
	/* an earlier run's one-file snapshot 1 and a part 5 of snapshot 2 */
	char path[PATH_MAX];
	mkdir(strcat(strcpy(path, g_dir), "/s3"), 0755);
	const char *old[2] = {"s3/snap_001.hdf5", "s3/snap_002.5.hdf5"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", g_dir, old[i]);
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("old", f);
		fclose(f);
	}
	/* a FIFO at a part's name: refused before any work, by both */
	snprintf(path, sizeof path, "%s/s3/snap_000.2.hdf5", g_dir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	const char *mode[2] = {"--strict", "--dry-run"};
	for (int m = 0; m < 2; m++) {
		int rc = run(mode[m], "output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL);
		ck_assert_msg(rc == 2 && strstr(slurp("run.log"), "snap_000.2.hdf5 is a FIFO"),
			      "%s: exit %d: %s", mode[m], rc, slurp("run.log"));
	}
	ck_assert(!exists("s3/snap_000.0.hdf5") && exists("s3/snap_001.hdf5"));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	ck_assert(!exists("s3/snap_001.hdf5") && !exists("s3/snap_002.5.hdf5"));
	ck_assert_int_eq(count("s3", "hdf5"), 9);
	/* and back to one file: the sets' parts go */
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4", NULL), 0);
	ck_assert_int_eq(count("s3", "hdf5"), 3);
	ck_assert(exists("s3/snap_000.hdf5") && !exists("s3/snap_000.0.hdf5"));
}
END_TEST

/* Every set in g_dir/s3 whose part 0 is there (numbers below 400) reads
 * whole: a dry run of a film of it exits 0 (every part there, each a
 * whole file, the counts adding up, one SetId). How many it read. */
static int visible_sets_whole(void)
{
	int sets = 0;
	char name[64];
	for (int k = 0; k < 400; k++) {
		snprintf(name, sizeof name, "s3/snap_%03d.0.hdf5", k);
		if (!exists(name))
			continue;
		write_film(name);
		g_file = "film.yaml";
		int rc = run("--dry-run", NULL);
		g_file = "scene.yaml";
		ck_assert_msg(rc == 0, "%s after kill -9: exit %d: %s", name, rc, slurp("run.log"));
		sets++;
	}
	return sets;
}

START_TEST(restart_from_a_part_is_refused_before_work)
{
	write_both();
	const char *mode[2] = {NULL, "--dry-run"};
	for (int m = 0; m < 2; m++) {
		int rc = run("--restart", "s3/snap_001.0.hdf5", "output.snapshots.dir=r", mode[m], NULL);
		ck_assert_msg(rc == 2 && strstr(slurp("run.log"), "a part of a 3-file snapshot set"),
			      "%s: exit %d: %s", m ? "--dry-run" : "the run", rc, slurp("run.log"));
	}
	ck_assert(!exists("r"));
	/* the one-file snapshot of the same frame continues */
	ck_assert_int_eq(run("--restart", "s1/snap_001.hdf5", "output.snapshots.dir=r", NULL), 0);
}
END_TEST

/* The program on g_file with the --set values given (NULL-terminated)
 * under a file size limit of LIMIT bytes (SIGXFSZ ignored: a write past
 * it fails with EFBIG, "File too large", as a full disk fails with
 * ENOSPC); stderr into run.log. Its exit status. */
static int run_limited(long limit, const char *first, ...)
{
	const char *argv[32] = {g_bin, g_file, "--quiet", "--backend", "cpu"};
	int n = 5;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 28; a = va_arg(ap, const char *))
		argv[n++] = "--set", argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = chdir(g_dir) == 0 ? open("run.log", O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
		struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
		signal(SIGXFSZ, SIG_IGN);
		if (fd < 0 || dup2(fd, 2) < 0 || setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(99);
		execv(g_bin, (char *const *)argv);
		_exit(98);
	}
	return wait_exit(pid);
}

/* Size of g_dir/NAME in bytes. */
static long file_bytes(const char *name)
{
	char path[PATH_MAX];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	ck_assert_int_eq(stat(path, &sb), 0);
	return (long)sb.st_size;
}

START_TEST(a_full_disk_leaves_no_part)
{
	/* the parts' sizes, then a limit that the first part larger than all
	 * before it passes (so earlier parts are already written, under their
	 * temporary names, when it fails) */
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	long size[3], most = 0, limit = 0;
	for (int k = 0; k < 3; k++) {
		char name[64];
		snprintf(name, sizeof name, "s3/snap_000.%d.hdf5", k);
		size[k] = file_bytes(name);
	}
	for (int k = 0; k < 3 && !limit; k++) {
		if (size[k] > most && k > 0)
			limit = most + (size[k] - most) / 2;
		most = size[k] > most ? size[k] : most;
	}
	if (!limit)
		limit = size[0] - 1; /* part 0 the largest: it fails first */
	int rc = run_limited(limit, "output.snapshots.dir=s4", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL);
	const char *log = slurp("run.log");
	ck_assert_msg(rc == 1 && strstr(log, "File too large") && strstr(log, "s4/snap_000."),
		      "limit %ld (parts %ld %ld %ld): exit %d: %s", limit, size[0], size[1], size[2],
		      rc, log);
	ck_assert_int_eq(count("s4", "snap_"), 0); /* no part, no temporary file */
}
END_TEST

START_TEST(a_failed_run_removes_its_sets)
{
	/* the energy check stops the run at frame 1 (exit 1), after the set
	 * of frame 0 was placed: the run's cleanup removes every part */
	int rc = run("output.snapshots.dir=s3", "output.snapshots.every=1", "output.snapshots.files=3",
		     "simulation.max_energy_error=1e-12", NULL);
	ck_assert_msg(rc == 1, "exit %d: %s", rc, slurp("run.log"));
	ck_assert_msg(strstr(slurp("run.log"), "max_energy_error"), "%s", slurp("run.log"));
	ck_assert_int_eq(count("s3", "hdf5"), 0);
}
END_TEST

/* `nbody-render batch b.yaml -q ARGS` in g_dir: exit status; the runs'
 * "name:status" list from the batch's report into out. */
static int batch(const char *args, char *out, size_t cap)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' batch b.yaml -q %s > batch.log 2>&1", g_dir,
		 g_bin, args);
	int rc = system(cmd);
	ck_assert_int_eq(py("import json\n"
			    "d = json.load(open('o/batch-report.json'))\n"
			    "print(' '.join(r['name'] + ':' + r['status'] for r in d['runs']))\n",
			    out, cap),
			 0);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(resume_knows_a_whole_set)
{
	char path[PATH_MAX], out[512];
	snprintf(path, sizeof path, "%s/b.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("output_dir: o\n"
	      "set: {output.frames: 3, output.snapshots.dir: snaps, output.snapshots.every: 1,\n"
	      "      output.snapshots.files: 3}\n"
	      "runs:\n"
	      "  - {scene: scene.yaml, name: 'r-{seed}', sweep: {seed: {from: 1, to: 2, step: 1}}}\n",
	      f);
	fclose(f);
	ck_assert_int_eq(batch("", out, sizeof out), 0);
	ck_assert_str_eq(out, "r-1:ok r-2:ok\n");
	ck_assert_int_eq(count("o/r-1/snaps", "hdf5"), 9);
	/* whole sets: nothing to redo; a part gone: that run again */
	ck_assert_int_eq(batch("--resume", out, sizeof out), 0);
	ck_assert_str_eq(out, "r-1:skipped r-2:skipped\n");
	snprintf(path, sizeof path, "%s/o/r-1/snaps/snap_001.2.hdf5", g_dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(batch("--resume", out, sizeof out), 0);
	ck_assert_str_eq(out, "r-1:ok r-2:skipped\n");
	ck_assert(exists("o/r-1/snaps/snap_001.2.hdf5"));
}
END_TEST

/* Every body of the snapshot whose first file is g_dir/NAME, types in
 * order, files in order: ids, positions, velocities, masses (room for
 * NB). The files read. */
static int read_all(const char *name, uint64_t *id, double *pos, double *vel, double *mass)
{
	size_t n = 0;
	int files = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		files = read_type(name, t, id, pos, vel, mass, &n);
	ck_assert_uint_eq(n, NB);
	return files;
}

/* The protocol of output.h run by three "ranks" in one process, the way
 * dist/ will call it: uneven shares, one of them empty, the totals and
 * the extent reduced by hand; publish 2, 1, then 0. The set reads back as
 * out_snap_write's one file of the same state; a set whose ranks do not
 * all succeed is discarded without a trace. */
START_TEST(rank_protocol_writes_a_set_a_reader_takes)
{
	static struct scene sc; /* large: not on the stack */
	struct sim_state st = {0};
	ck_assert_int_eq(scene_load_string(g_scene, "scene.yaml", g_dir, NULL, 0, &sc), 0);
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	ck_assert_uint_eq(st.n, NB);
	char dir[512], one[PATH_MAX], set[PATH_MAX], part[3][PATH_MAX];
	snprintf(dir, sizeof dir, "%s/u", g_dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(one, sizeof one, "%s/one.hdf5", dir);
	snprintf(set, sizeof set, "%s/snap_000.hdf5", dir);
	ck_assert_int_eq(out_snap_write(one, &sc, &st, 0, "cpu", NULL), 0);

	const size_t cut[4] = {0, 100, 100, NB}; /* rank 1 holds no body */
	struct out_snap_part p[3];
	uint64_t total[6] = {0};
	double extent = 0;
	for (int k = 0; k < 3; k++) {
		p[k] = (struct out_snap_part){.k = k, .K = 3};
		out_snap_part_counts(&st, cut[k], cut[k + 1], p[k].total, &p[k].extent);
		for (int t = 0; t < 6; t++)
			total[t] += p[k].total[t];
		extent = fmax(extent, p[k].extent);
		ck_assert_int_eq(out_snap_part_path(set, k, part[k], sizeof part[k]), 0);
	}
	const uint64_t id = out_snap_set_id();
	for (int k = 0; k < 3; k++) { /* "the reduction" */
		memcpy(p[k].total, total, sizeof total);
		p[k].extent = extent, p[k].set_id = id;
	}
	/* a set given up at step 3: every rank discards its part, nothing stays */
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(out_snap_part_write(part[k], &p[k], &sc, &st, cut[k], cut[k + 1], 0,
						     "cpu", NULL),
				 0);
	for (int k = 0; k < 3; k++)
		out_snap_part_discard(part[k], 0);
	ck_assert_int_eq(count("u", "snap_"), 0);
	/* the whole protocol */
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(out_snap_part_write(part[k], &p[k], &sc, &st, cut[k], cut[k + 1], 0,
						     "cpu", NULL),
				 0);
	ck_assert_int_eq(count("u", "snap_000."), 3); /* the temporary parts only */
	ck_assert(!exists("u/snap_000.0.hdf5"));
	ck_assert_int_eq(out_snap_set_retire(set, 3), 0);
	for (int k = 2; k >= 0; k--)
		ck_assert_int_eq(out_snap_part_publish(part[k]), 0);
	ck_assert_int_eq(count("u", "partial"), 0);

	static uint64_t ids[2][NB];
	static double pos[2][3 * NB], vel[2][3 * NB], mass[2][NB];
	ck_assert_int_eq(read_all("u/one.hdf5", ids[0], pos[0], vel[0], mass[0]), 1);
	ck_assert_int_eq(read_all("u/snap_000.0.hdf5", ids[1], pos[1], vel[1], mass[1]), 3);
	ck_assert(memcmp(ids[0], ids[1], sizeof ids[0]) == 0);
	ck_assert(memcmp(pos[0], pos[1], sizeof pos[0]) == 0);
	ck_assert(memcmp(vel[0], vel[1], sizeof vel[0]) == 0);
	ck_assert(memcmp(mass[0], mass[1], sizeof mass[0]) == 0);
	sim_state_free(&st);
}
END_TEST

/* ---- ranks as forked processes, for out_snap_write_ranks ----
 * Each collective: every rank puts its values in its slot of shared
 * memory, a process-shared barrier, every rank computes the result from
 * all the slots, a barrier. What an MPI allreduce does, without MPI. */
#define RANKS 3
struct shm_comm {
	pthread_barrier_t bar;
	uint64_t u[RANKS][8];
	double d[RANKS][8];
};
struct rank_ctx {
	struct shm_comm *m;
	int rank;
};

static void shm_wait(struct shm_comm *m)
{
	int rc = pthread_barrier_wait(&m->bar);
	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		_exit(97);
}

static int shm_sum_u64(void *ctx, uint64_t *v, int n)
{
	struct rank_ctx *c = ctx;
	memcpy(c->m->u[c->rank], v, (size_t)n * sizeof *v);
	shm_wait(c->m);
	for (int i = 0; i < n; i++) {
		v[i] = 0;
		for (int r = 0; r < RANKS; r++)
			v[i] += c->m->u[r][i];
	}
	shm_wait(c->m);
	return 0;
}

static int shm_max_f64(void *ctx, double *v, int n)
{
	struct rank_ctx *c = ctx;
	memcpy(c->m->d[c->rank], v, (size_t)n * sizeof *v);
	shm_wait(c->m);
	for (int i = 0; i < n; i++)
		for (int r = 0; r < RANKS; r++)
			v[i] = fmax(v[i], c->m->d[r][i]);
	shm_wait(c->m);
	return 0;
}

static int shm_bcast_u64(void *ctx, uint64_t *v, int n)
{
	struct rank_ctx *c = ctx;
	if (c->rank == 0)
		memcpy(c->m->u[0], v, (size_t)n * sizeof *v);
	shm_wait(c->m);
	memcpy(v, c->m->u[0], (size_t)n * sizeof *v);
	shm_wait(c->m);
	return 0;
}

static int shm_min_int(void *ctx, int *v)
{
	struct rank_ctx *c = ctx;
	c->m->u[c->rank][0] = (uint64_t)(int64_t)*v;
	shm_wait(c->m);
	for (int r = 0; r < RANKS; r++)
		*v = (int)(int64_t)c->m->u[r][0] < *v ? (int)(int64_t)c->m->u[r][0] : *v;
	shm_wait(c->m);
	return 0;
}

/* RANKS processes, rank r writing bodies [cut[r], cut[r+1]) of st as its
 * part of g_dir/u/snap_000.hdf5 through out_snap_write_ranks; rank
 * `limited` (or -1) under a file size limit of 4 KiB. How many ranks
 * returned 0 (the others returned NB_ERUNTIME). */
static int write_by_ranks(const struct scene *sc, const struct sim_state *st, const size_t *cut,
			  int limited)
{
	struct shm_comm *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	ck_assert(m != MAP_FAILED);
	pthread_barrierattr_t a;
	pthread_barrierattr_init(&a);
	pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	ck_assert_int_eq(pthread_barrier_init(&m->bar, &a, RANKS), 0);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/u/snap_000.hdf5", g_dir);
	pid_t pid[RANKS];
	fflush(NULL);
	for (int r = 0; r < RANKS; r++) {
		pid[r] = fork();
		ck_assert_int_ge(pid[r], 0);
		if (pid[r] > 0)
			continue;
		if (r == limited) {
			struct rlimit rl = {4096, 4096};
			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		struct sim_state own = *st; /* a view of this rank's bodies */
		const size_t lo = cut[r];
		own.n = cut[r + 1] - lo;
		own.pos += 3 * lo, own.vel += 3 * lo, own.mass += lo, own.id += lo, own.comp += lo;
		struct rank_ctx ctx = {m, r};
		const struct out_snap_comm c = {r, RANKS, &ctx, shm_sum_u64, shm_max_f64,
						shm_bcast_u64, shm_min_int};
		_exit(out_snap_write_ranks(path, &c, sc, &own, 0, "cpu", NULL) == 0 ? 0 : 1);
	}
	int ok = 0;
	for (int r = 0; r < RANKS; r++) {
		int stt;
		ck_assert_int_eq(waitpid(pid[r], &stt, 0), pid[r]);
		ck_assert_msg(WIFEXITED(stt) && WEXITSTATUS(stt) <= 1, "rank %d died", r);
		ok += WEXITSTATUS(stt) == 0;
	}
	pthread_barrier_destroy(&m->bar);
	munmap(m, sizeof *m);
	return ok;
}

/* out_snap_write_ranks over three forked "ranks" (shares 200, 0 and 260
 * bodies): the set reads back as the one file of the same state; a rank
 * whose part cannot be written (a file size limit), or whose part's name
 * is a directory, fails on every rank and leaves no set, no part and no
 * temporary file (the directory untouched). */
START_TEST(ranks_write_a_set_together_or_not_at_all)
{
	static struct scene sc; /* large: not on the stack */
	struct sim_state st = {0};
	ck_assert_int_eq(scene_load_string(g_scene, "scene.yaml", g_dir, NULL, 0, &sc), 0);
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/u", g_dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	const size_t cut[RANKS + 1] = {0, 200, 200, NB};

	ck_assert_int_eq(write_by_ranks(&sc, &st, cut, 1), 0);
	ck_assert_int_eq(count("u", "snap_"), 0);
	snprintf(path, sizeof path, "%s/u/snap_000.1.hdf5", g_dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(write_by_ranks(&sc, &st, cut, -1), 0);
	ck_assert_int_eq(count("u", "snap_"), 1); /* the directory, alone */
	ck_assert_int_eq(rmdir(path), 0);

	ck_assert_int_eq(write_by_ranks(&sc, &st, cut, -1), RANKS);
	ck_assert_int_eq(count("u", "snap_"), 3);
	snprintf(path, sizeof path, "%s/u/one.hdf5", g_dir);
	ck_assert_int_eq(out_snap_write(path, &sc, &st, 0, "cpu", NULL), 0);
	static uint64_t ids[2][NB];
	static double pos[2][3 * NB], vel[2][3 * NB], mass[2][NB];
	ck_assert_int_eq(read_all("u/one.hdf5", ids[0], pos[0], vel[0], mass[0]), 1);
	ck_assert_int_eq(read_all("u/snap_000.0.hdf5", ids[1], pos[1], vel[1], mass[1]), 3);
	ck_assert(memcmp(ids[0], ids[1], sizeof ids[0]) == 0);
	ck_assert(memcmp(pos[0], pos[1], sizeof pos[0]) == 0);
	ck_assert(memcmp(vel[0], vel[1], sizeof vel[0]) == 0);
	ck_assert(memcmp(mass[0], mass[1], sizeof mass[0]) == 0);
	sim_state_free(&st);
}
END_TEST

/* g_dir/NAME is there and was written after t0 (this run's, not the
 * previous one's). */
static int newer_than(const char *name, struct timespec t0)
{
	char path[PATH_MAX];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	if (stat(path, &sb) != 0)
		return 0;
	return sb.st_mtim.tv_sec > t0.tv_sec ||
	       (sb.st_mtim.tv_sec == t0.tv_sec && sb.st_mtim.tv_nsec >= t0.tv_nsec);
}

START_TEST(killed_writer_leaves_no_partial_set)
{
	/* a set of 28,000 bodies in 3 parts every frame, no forces: about
	 * half of a frame's 23 ms here is the set's writing, so the kills, at
	 * five offsets over two frames, land in it and out of it; each run
	 * after the first overwrites the sets the one before left */
	for (int trial = 0; trial < 5; trial++) {
		struct timespec t0;
		clock_gettime(CLOCK_REALTIME, &t0);
		pid_t pid = spawn("simulation.solver=none", "bodies.0.disk.count=20000",
				  "bodies.0.halo.count=8000", "output.frames=400",
				  "output.snapshots.dir=s3", "output.snapshots.every=1",
				  "output.snapshots.files=3", NULL);
		for (int w = 0; w < 2000 && !newer_than("s3/snap_002.0.hdf5", t0); w++)
			usleep(5000);
		struct timespec ts = {0, (long)(2 + 9 * trial) * 1000000L};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFSIGNALED(st));
		ck_assert_int_ge(visible_sets_whole(), 2);
	}
	/* the next run over the same outputs removes the dead writers'
	 * temporary parts once they are a minute old (made so here) */
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "find '%s/s3' -name '*.partial' -exec touch -d '-2 minutes' {} +",
		 g_dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(run("output.snapshots.dir=s3", "output.snapshots.every=4",
			     "output.snapshots.files=3", NULL),
			 0);
	ck_assert_int_eq(count("s3", "partial"), 0);
	ck_assert_int_eq(count("s3", "hdf5"), 9);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snap_parts");
	TCase *tc = tcase_create("sets");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, set_reads_back_as_the_one_file_snapshot);
	tcase_add_test(tc, rank_protocol_writes_a_set_a_reader_takes);
	tcase_add_test(tc, ranks_write_a_set_together_or_not_at_all);
	tcase_add_test(tc, a_missing_part_is_refused_naming_it);
	tcase_add_test(tc, a_part_whose_total_lies_is_refused_naming_it);
	tcase_add_test(tc, a_part_of_another_set_is_refused_naming_it);
	tcase_add_test(tc, earlier_names_are_replaced_and_special_files_refused);
	tcase_add_test(tc, restart_from_a_part_is_refused_before_work);
	tcase_add_test(tc, a_full_disk_leaves_no_part);
	tcase_add_test(tc, a_failed_run_removes_its_sets);
	tcase_add_test(tc, resume_knows_a_whole_set);
	tcase_add_test(tc, killed_writer_leaves_no_partial_set);
	suite_add_tcase(s, tc);
	/* yt's own code raises floating-point flags */
	TCase *ty = tcase_create("yt");
	tcase_add_checked_fixture(ty, setup, teardown);
	tcase_add_checked_fixture(ty, nb_untrap_fpe, NULL);
	tcase_set_timeout(ty, 120);
	tcase_add_test(ty, yt_loads_the_set);
	suite_add_tcase(s, ty);
	return s;
}

NB_CHECK_MAIN(make_suite)
