/* test_reader_hostile.c - every input kind, tried as a hostile user would
 * (issue 27, "Inputs checked before work"): snapshot files (HDF5 and
 * GADGET binary), multi-file snapshots, film series, restart files and body
 * CSVs; each truncated, with a header that lies about sizes or counts
 * (10^12 particles in a file of a few kilobytes among them), with values
 * that stop being finite only after unit conversion, with a special file
 * (FIFO, directory, /dev/null) at the input's path, and with selections
 * that keep nothing.
 *
 * Each case runs the program twice on the same scene, with --dry-run and
 * without, and expects the same refusal from both: exit status 2, a
 * message naming the file and the cause, and, where the input comes from
 * a scene key, the scene's file:line:col of that entry (computed here from
 * the scene's own text, not from the program). The runs get a limit on
 * address space and on time: a header that claims 10^12 particles must be
 * refused at once, without a large allocation or a long loop.
 *
 * The files are written here: HDF5 through libhdf5, GADGET binary by a few
 * lines below, restart snapshots by the program itself (output.snapshots)
 * and then damaged through libhdf5.
 *
 * Run: make CUDA=0 build/tests/test_reader_hostile &&
 *      NB_BIN=build/nbody-render build/tests/test_reader_hostile */
#include <hdf5.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/sim.h"

static char g_dir[64];
static char g_bin[PATH_MAX];
static char g_err[16384]; /* the last run's stderr */

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-hostile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	ck_assert_ptr_nonnull(realpath(nb_bin(), g_bin));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *tpath(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", g_dir, name);
	return p[k];
}

static void write_text(const char *name, const char *text)
{
	FILE *f = fopen(tpath(name), "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* ---- running the program -------------------------------------------------- */

#define RUN_LIMIT_S 60                  /* wall-clock limit of one run */
#define RUN_AS_BYTES (4ull << 30)       /* address space of one run: 4 GiB */

/* Run the program in g_dir on SCENE with ARGS (NULL-terminated) plus
 * --quiet --backend cpu; stderr into g_err; *secs its wall time. The exit
 * status, or -SIGNAL, or -1000 when it ran past RUN_LIMIT_S. */
static int run_argv(const char *scene, const char *const *args, double *secs)
{
	const char *argv[32] = {g_bin, scene, "--quiet", "--backend", "cpu"};
	int n = 5;
	for (int i = 0; args && args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char errf[256];
	snprintf(errf, sizeof errf, "%s/stderr.txt", g_dir);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = {RUN_AS_BYTES, RUN_AS_BYTES};
		setrlimit(RLIMIT_AS, &rl);
		if (chdir(g_dir) != 0 || !freopen(errf, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(99);
		nb_untrap_fpe();
		execv(g_bin, (char *const *)argv);
		_exit(98);
	}
	int status = 0, waited = 0;
	for (int i = 0; i < RUN_LIMIT_S * 20; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			waited = 1;
			break;
		}
		usleep(50000);
	}
	if (!waited) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (secs)
		*secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	FILE *f = fopen(errf, "r");
	size_t got = f ? fread(g_err, 1, sizeof g_err - 1, f) : 0;
	g_err[got] = '\0';
	if (f)
		fclose(f);
	if (!waited)
		return -1000;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static void expect_in(const char *what, const char *needle)
{
	ck_assert_msg(strstr(g_err, needle) != NULL, "%s: the message lacks '%s':\n%s", what, needle,
		      g_err);
}

/* The dry run and the run of SCENE (with ARGS) both refuse: exit 2 and
 * every one of NEEDLES (NULL-terminated) in the message. The run writes
 * its outputs (if it got that far) under g_dir. */
static void expect_both_refuse(const char *scene, const char *const *args,
			       const char *const *needles)
{
	const char *dry[32] = {"--dry-run"}, *run[32] = {"--set", "output.video=out.mp4"};
	int nd = 1, nr = 2;
	for (int i = 0; args && args[i] && nd < 30; i++)
		dry[nd++] = args[i], run[nr++] = args[i];
	dry[nd] = run[nr] = NULL;
	const char *const *modes[2] = {dry, run};
	const char *names[2] = {"--dry-run", "the run"};
	for (int m = 0; m < 2; m++) {
		double secs = 0;
		int rc = run_argv(scene, modes[m], &secs);
		ck_assert_msg(rc == 2, "%s of %s: exit %d, expected 2 (bad input), in %.1f s:\n%s",
			      names[m], scene, rc, secs, g_err);
		ck_assert_msg(secs < RUN_LIMIT_S / 2, "%s of %s: refused after %.1f s, expected at once",
			      names[m], scene, secs);
		for (int i = 0; needles && needles[i]; i++)
			expect_in(names[m], needles[i]);
	}
}

/* "NAME:LINE:COL" of the first occurrence of NEEDLE in the text of scene
 * NAME (line and column 1-based): where the program must place an entry's
 * refusal. */
static const char *where_in(const char *name, const char *text, const char *needle)
{
	static char out[4][128];
	static int k;
	k = (k + 1) % 4;
	const char *at = strstr(text, needle);
	ck_assert_ptr_nonnull(at);
	int line = 1, col = 1;
	for (const char *p = text; p < at; p++) {
		if (*p == '\n')
			line++, col = 1;
		else
			col++;
	}
	snprintf(out[k], sizeof out[k], "%s:%d:%d:", name, line, col);
	return out[k];
}

/* ---- HDF5 snapshots through libhdf5 ---------------------------------------- */

struct h5spec {
	uint64_t np[6];    /* NumPart_ThisFile */
	uint64_t tot[6];   /* NumPart_Total (all 0: np) */
	int nfiles;        /* NumFilesPerSnapshot (0: 1) */
	double time;       /* Header Time */
	double unit[3];    /* UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s (0: none) */
	int unwritten;     /* datasets created with their shape, never written */
	uint64_t id0;      /* first ParticleID */
	int dup_id;        /* the last particle of each type takes the first's ID */
	double xmul;       /* positions multiplied by this (0: 1) */
	double mt1;        /* MassTable[1] (0: 1) */
};

static void h5_attr(hid_t loc, const char *name, hid_t type, const void *v, hsize_t n)
{
	hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
	hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Awrite(a, type, v), 0);
	H5Aclose(a);
	H5Sclose(sp);
}

static void h5_dset(hid_t g, const char *name, hid_t type, hsize_t rows, int cols,
		    const void *data)
{
	hsize_t dims[2] = {rows, (hsize_t)cols};
	hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
	hid_t d = H5Dcreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	if (data)
		ck_assert_int_ge(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
	H5Dclose(d);
	H5Sclose(sp);
}

/* An HDF5 snapshot NAME (in g_dir) as SP says: positions i, 2i, 3i (kpc/h
 * scale), velocities 1, masses from MassTable (1 for every type). */
static void h5_write(const char *name, const struct h5spec *sp)
{
	hid_t f = H5Fcreate(tpath(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	uint64_t tot[6];
	int any_tot = 0;
	for (int t = 0; t < 6; t++)
		any_tot |= sp->tot[t] != 0;
	for (int t = 0; t < 6; t++)
		tot[t] = any_tot ? sp->tot[t] : sp->np[t];
	const double mt[6] = {1, sp->mt1 > 0 ? sp->mt1 : 1, 1, 1, 1, 1}, z = 0;
	const int nf = sp->nfiles > 0 ? sp->nfiles : 1;
	h5_attr(h, "NumPart_ThisFile", H5T_NATIVE_UINT64, sp->np, 6);
	h5_attr(h, "NumPart_Total", H5T_NATIVE_UINT64, tot, 6);
	h5_attr(h, "MassTable", H5T_NATIVE_DOUBLE, mt, 6);
	h5_attr(h, "Time", H5T_NATIVE_DOUBLE, &sp->time, 1);
	h5_attr(h, "Redshift", H5T_NATIVE_DOUBLE, &z, 1);
	h5_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT, &nf, 1);
	static const char *const un[3] = {"UnitLength_in_cm", "UnitMass_in_g",
					  "UnitVelocity_in_cm_per_s"};
	for (int i = 0; i < 3; i++)
		if (sp->unit[i] > 0)
			h5_attr(h, un[i], H5T_NATIVE_DOUBLE, &sp->unit[i], 1);
	H5Gclose(h);
	for (int t = 0; t < 6; t++) {
		const uint64_t n = sp->np[t];
		if (n == 0)
			continue;
		char gn[16];
		snprintf(gn, sizeof gn, "PartType%d", t);
		hid_t g = H5Gcreate2(f, gn, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		double *x = NULL, *v = NULL;
		uint64_t *id = NULL;
		if (!sp->unwritten) {
			x = malloc(3 * n * sizeof *x), v = malloc(3 * n * sizeof *v);
			id = malloc(n * sizeof *id);
			ck_assert(x && v && id);
			for (uint64_t i = 0; i < n; i++) {
				for (int a = 0; a < 3; a++)
					x[3 * i + a] = (double)(i * (uint64_t)(a + 1)) *
						       (sp->xmul != 0 ? sp->xmul : 1),
					v[3 * i + a] = 1;
				id[i] = sp->id0 + 1000 * (uint64_t)t + i;
			}
			if (sp->dup_id && n > 1)
				id[n - 1] = id[0];
		}
		h5_dset(g, "Coordinates", H5T_NATIVE_DOUBLE, n, 3, x);
		h5_dset(g, "Velocities", H5T_NATIVE_DOUBLE, n, 3, v);
		h5_dset(g, "ParticleIDs", H5T_NATIVE_UINT64, n, 1, id);
		free(x), free(v), free(id);
		H5Gclose(g);
	}
	H5Fclose(f);
}

static struct h5spec h5_small(void)
{
	struct h5spec sp = {.np = {0, 5, 0, 0, 0, 0}};
	return sp;
}

static off_t file_size(const char *name)
{
	struct stat st;
	ck_assert_int_eq(stat(tpath(name), &st), 0);
	return st.st_size;
}

/* A galactic scene with one snapshot entry on line 4 reading FILE; extra
 * text (more keys of the entry, without braces) after the file. */
static const char *snap_scene(const char *name, const char *file, const char *extra)
{
	static char text[2048];
	snprintf(text, sizeof text,
		 "units: galactic\n"
		 "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 1}\n"
		 "bodies:\n"
		 "  - {name: r, model: snapshot, file: %s%s%s}\n"
		 "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		 "render: {width: 32, height: 24}\n"
		 "output: {frames: 2}\n",
		 file, extra ? ", " : "", extra ? extra : "");
	write_text(name, text);
	return text;
}

/* ---- snapshot files ---------------------------------------------------------- */

/* A 4 KB HDF5 file whose header and datasets claim 10^12 particles of type
 * 1: refused at once (before: the count pass looped over 10^12 particles
 * of fill values, and the run would have allocated them). */
START_TEST(hdf5_claiming_1e12_particles_in_4kb_is_refused_at_once)
{
	struct h5spec sp = {.np = {0, 1000000000000ull, 0, 0, 0, 0}, .unwritten = 1};
	h5_write("big.hdf5", &sp);
	ck_assert_int_lt(file_size("big.hdf5"), 16384);
	const char *text = snap_scene("s.yaml", "big.hdf5", NULL);
	const char *const needles[] = {"big.hdf5", "claim", "PartType1/Coordinates",
				       where_in("s.yaml", text, "{name: r"), "bodies.0.file", NULL};
	expect_both_refuse("s.yaml", NULL, needles);
}
END_TEST

static const char *const vz_names[3] = {"Coordinates", "Velocities", "ParticleIDs"};

/* virt.hdf5: 5 particles of type 1 whose datasets are virtual, mapped onto
 * src.hdf5's. */
static void write_virtual_file(void)
{
	hid_t f = H5Fcreate(tpath("virt.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	const uint64_t np[6] = {0, 5, 0, 0, 0, 0};
	const double mt[6] = {1, 1, 1, 1, 1, 1}, zero = 0;
	const int one = 1;
	h5_attr(h, "NumPart_ThisFile", H5T_NATIVE_UINT64, np, 6);
	h5_attr(h, "NumPart_Total", H5T_NATIVE_UINT64, np, 6);
	h5_attr(h, "MassTable", H5T_NATIVE_DOUBLE, mt, 6);
	h5_attr(h, "Time", H5T_NATIVE_DOUBLE, &zero, 1);
	h5_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT, &one, 1);
	H5Gclose(h);
	hid_t g = H5Gcreate2(f, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	for (int i = 0; i < 3; i++) {
		hsize_t dims[2] = {5, 3};
		const int rank = i < 2 ? 2 : 1;
		hid_t type = i < 2 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT64;
		hid_t vs = H5Screate_simple(rank, dims, NULL), ss = H5Screate_simple(rank, dims, NULL);
		hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
		char src[64];
		snprintf(src, sizeof src, "PartType1/%s", vz_names[i]);
		ck_assert_int_ge(H5Pset_virtual(dcpl, vs, "src.hdf5", src, ss), 0);
		hid_t d = H5Dcreate2(g, vz_names[i], type, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
		ck_assert_int_ge(d, 0);
		H5Dclose(d);
		H5Pclose(dcpl);
		H5Sclose(vs);
		H5Sclose(ss);
	}
	H5Gclose(g);
	H5Fclose(f);
}

/* zip.hdf5: 200,000 particles at the origin, deflated. */
static void write_zip_file(void)
{
	const int one = 1;
	hid_t f = H5Fcreate(tpath("zip.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	const uint64_t nz[6] = {0, 200000, 0, 0, 0, 0};
	const double tiny[6] = {0, 1e-6, 0, 0, 0, 0};
	h5_attr(h, "NumPart_ThisFile", H5T_NATIVE_UINT64, nz, 6);
	h5_attr(h, "NumPart_Total", H5T_NATIVE_UINT64, nz, 6);
	h5_attr(h, "MassTable", H5T_NATIVE_DOUBLE, tiny, 6);
	h5_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT, &one, 1);
	H5Gclose(h);
	hid_t g = H5Gcreate2(f, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double *x = calloc(3 * 200000, sizeof *x);
	uint64_t *id = malloc(200000 * sizeof *id);
	ck_assert(x && id);
	for (uint64_t i = 0; i < 200000; i++)
		id[i] = i;
	for (int i = 0; i < 3; i++) {
		hsize_t dims[2] = {200000, 3}, chunk[2] = {65536, 3};
		const int rank = i < 2 ? 2 : 1;
		hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
		H5Pset_chunk(dcpl, rank, chunk);
		H5Pset_deflate(dcpl, 9);
		hid_t type = i < 2 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT64;
		hid_t sp2 = H5Screate_simple(rank, dims, NULL);
		hid_t d = H5Dcreate2(g, vz_names[i], type, sp2, H5P_DEFAULT, dcpl, H5P_DEFAULT);
		ck_assert_int_ge(d, 0);
		ck_assert_int_ge(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, i < 2 ? (void *)x : (void *)id), 0);
		H5Dclose(d);
		H5Sclose(sp2);
		H5Pclose(dcpl);
	}
	free(x), free(id);
	H5Gclose(g);
	H5Fclose(f);
}

/* The other side of the storage check: a virtual file (SWIFT stitches a
 * snapshot's parts so) stores no bytes of its own and is taken, as is a
 * compressed file of zeros (a ratio near 1000:1). Guards: they passed
 * before this work, and a first form of the storage check refused the
 * virtual file. */
START_TEST(virtual_and_compressed_snapshots_are_taken)
{
	struct h5spec sp = h5_small();
	h5_write("src.hdf5", &sp);
	write_virtual_file();
	const char *const dry[] = {"--dry-run", NULL};
	snap_scene("s.yaml", "virt.hdf5", NULL);
	ck_assert_msg(run_argv("s.yaml", dry, NULL) == 0, "a virtual file refused:\n%s", g_err);
	write_zip_file();
	snap_scene("s.yaml", "zip.hdf5", NULL);
	ck_assert_msg(run_argv("s.yaml", dry, NULL) == 0, "a compressed file refused:\n%s", g_err);
}
END_TEST

/* The reader's API on the same file, in this process under a 1 GiB limit
 * of address space: sim_snap_open refuses it (NB_EINPUT) in well under a
 * second, having allocated nothing for the particles. */
START_TEST(api_open_of_a_1e12_claim_fails_fast_without_allocating)
{
	struct h5spec sp = {.np = {0, 1000000000000ull, 0, 0, 0, 0}, .unwritten = 1};
	h5_write("big.hdf5", &sp);
	struct rlimit rl = {1ull << 30, 1ull << 30};
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct sim_snap *s = NULL;
	log_set_level(LOG_SILENT); /* the refusal's words are checked by the cases above */
	int err = sim_snap_open(tpath("big.hdf5"), NULL, &s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	ck_assert_int_eq(err, NB_EINPUT);
	ck_assert_ptr_null(s);
	ck_assert_msg(secs < 1.0, "refused after %.2f s", secs);
}
END_TEST

/* A file cut in half: HDF5 and GADGET binary. */
START_TEST(truncated_snapshots_are_refused)
{
	struct h5spec sp = {.np = {0, 3000, 0, 0, 0, 0}};
	h5_write("cut.hdf5", &sp);
	ck_assert_int_eq(truncate(tpath("cut.hdf5"), file_size("cut.hdf5") / 2), 0);
	const char *text = snap_scene("s.yaml", "cut.hdf5", NULL);
	const char *const n1[] = {"cut.hdf5", where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n1);

	/* GADGET format 1: HEAD, POS, VEL, ID of 100 type-1 particles (float),
	 * MassTable 1; cut inside POS */
	FILE *f = fopen(tpath("cut.g1"), "wb");
	ck_assert_ptr_nonnull(f);
	unsigned char head[256] = {0};
	uint32_t np1 = 100, m = 256, nf = 1;
	double mt1 = 1;
	memcpy(head + 4, &np1, 4);
	memcpy(head + 24 + 8, &mt1, 8);
	memcpy(head + 96 + 4, &np1, 4);
	memcpy(head + 124, &nf, 4);
	fwrite(&m, 4, 1, f), fwrite(head, 1, 256, f), fwrite(&m, 4, 1, f);
	uint32_t len = 3 * 100 * 4;
	float zero[300] = {0};
	fwrite(&len, 4, 1, f), fwrite(zero, 4, 300, f), fwrite(&len, 4, 1, f);
	fwrite(&len, 4, 1, f), fwrite(zero, 4, 300, f), fwrite(&len, 4, 1, f);
	len = 100 * 4;
	uint32_t ids[100];
	for (int i = 0; i < 100; i++)
		ids[i] = (uint32_t)i;
	fwrite(&len, 4, 1, f), fwrite(ids, 4, 100, f), fwrite(&len, 4, 1, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(truncate(tpath("cut.g1"), 264 + 600), 0);
	text = snap_scene("s.yaml", "cut.g1", NULL);
	const char *const n2[] = {"cut.g1", "POS", "truncated", where_in("s.yaml", text, "{name: r"),
				  NULL};
	expect_both_refuse("s.yaml", NULL, n2);
}
END_TEST

/* A GADGET binary header that claims 2^31 - 1 particles over blocks that
 * hold 10: refused by the block lengths, naming the block. */
START_TEST(binary_header_lying_about_counts_is_refused)
{
	FILE *f = fopen(tpath("lie.g1"), "wb");
	ck_assert_ptr_nonnull(f);
	unsigned char head[256] = {0};
	uint32_t np1 = 0x7fffffff, m = 256, nf = 1;
	double mt1 = 1;
	memcpy(head + 4, &np1, 4);
	memcpy(head + 24 + 8, &mt1, 8);
	memcpy(head + 96 + 4, &np1, 4);
	memcpy(head + 124, &nf, 4);
	fwrite(&m, 4, 1, f), fwrite(head, 1, 256, f), fwrite(&m, 4, 1, f);
	float zero[30] = {0};
	uint32_t len = 120, ids[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, idl = 40;
	fwrite(&len, 4, 1, f), fwrite(zero, 4, 30, f), fwrite(&len, 4, 1, f);
	fwrite(&len, 4, 1, f), fwrite(zero, 4, 30, f), fwrite(&len, 4, 1, f);
	fwrite(&idl, 4, 1, f), fwrite(ids, 4, 10, f), fwrite(&idl, 4, 1, f);
	ck_assert_int_eq(fclose(f), 0);
	const char *text = snap_scene("s.yaml", "lie.g1", NULL);
	const char *const needles[] = {"lie.g1", "POS block", "header's particle counts",
				       where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, needles);
}
END_TEST

/* Two parts: the stars (type 4) are only in part 1, and part 0's totals
 * do not list them. Before: the reader took the totals of part 0 as the
 * list of types and dropped the stars without a word (exit 0). */
START_TEST(multi_file_type_present_only_in_a_later_part_is_refused)
{
	struct h5spec p0 = {.np = {0, 5, 0, 0, 0, 0}, .tot = {0, 10, 0, 0, 0, 0}, .nfiles = 2};
	struct h5spec p1 = {.np = {0, 5, 0, 0, 3, 0}, .tot = {0, 10, 0, 0, 0, 0}, .nfiles = 2,
			    .id0 = 100};
	h5_write("m.0.hdf5", &p0);
	h5_write("m.1.hdf5", &p1);
	const char *text = snap_scene("s.yaml", "m.0.hdf5", NULL);
	const char *const needles[] = {"m.0.hdf5", "type 4", "NumPart_Total[4]",
				       where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, needles);
}
END_TEST

/* Two parts of 5 whose totals claim 10^12: refused before the count or
 * the read, at the scene entry. */
START_TEST(multi_file_totals_claiming_1e12_are_refused)
{
	struct h5spec p = {.np = {0, 5, 0, 0, 0, 0}, .tot = {0, 1000000000000ull, 0, 0, 0, 0},
			   .nfiles = 2};
	h5_write("t.0.hdf5", &p);
	p.id0 = 100;
	h5_write("t.1.hdf5", &p);
	const char *text = snap_scene("s.yaml", "t.0.hdf5", NULL);
	const char *const needles[] = {"t.0.hdf5", "NumPart_Total[1] says 1000000000000",
				       where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, needles);
}
END_TEST

/* Units that make finite stored values overflow in internal units: a
 * length unit of 1e300 cm (before: --dry-run passed, the run refused), a
 * mass unit of 1e308 g (before: --dry-run passed, the run failed at its
 * first step with exit 1 and a hint about the time step). The hint names
 * the unit. */
START_TEST(units_that_overflow_after_conversion_are_refused_naming_the_unit)
{
	struct h5spec sp = h5_small();
	sp.unit[0] = 1e300, sp.unit[1] = 1.989e43, sp.unit[2] = 1e5;
	h5_write("ul.hdf5", &sp);
	const char *text = snap_scene("s.yaml", "ul.hdf5", NULL);
	const char *const n1[] = {"ul.hdf5", "bad length unit", "1e+300",
				  where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n1);

	sp.unit[0] = 3.085678e21, sp.unit[1] = 1e308;
	h5_write("um.hdf5", &sp);
	text = snap_scene("s.yaml", "um.hdf5", NULL);
	const char *const n2[] = {"um.hdf5", "bad mass unit", "1e+308",
				  where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n2);
	ck_assert_msg(strstr(g_err, "time step") == NULL, "a bad mass unit blamed on the time step:\n%s",
		      g_err);

	/* a MassTable whose masses, in internal units, make forces overflow
	 * with the scene's softening: known from the header, refused by
	 * --dry-run too (before: the run failed at its first step, exit 1,
	 * blaming the time step) */
	sp.unit[1] = 1.989e43, sp.mt1 = 1e40;
	h5_write("mt.hdf5", &sp);
	sp.mt1 = 0;
	text = snap_scene("s.yaml", "mt.hdf5", NULL);
	const char *const n3[] = {"mt.hdf5", "MassTable masses", "mass unit", "softening",
				  where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n3);
	ck_assert_msg(strstr(g_err, "time step") == NULL, "a bad MassTable blamed on the time step:\n%s",
		      g_err);

	/* the entry's own units key (the file gives none), with factors in
	 * range but a stored value that overflows once converted: values are
	 * read by the run, not by --dry-run (docs/snapshots.md, "Bad files"),
	 * and the run refuses them before the first frame naming the unit
	 * (before: the run took the infinite position into the simulation) */
	sp.unit[0] = sp.unit[1] = sp.unit[2] = 0;
	sp.xmul = 1e280;
	h5_write("plain.hdf5", &sp);
	snap_scene("s.yaml", "plain.hdf5", "units: {length_cm: 1e60}");
	const char *const run[] = {"--set", "output.video=out.mp4", NULL};
	ck_assert_int_eq(run_argv("s.yaml", run, NULL), 2);
	expect_in("the run", "plain.hdf5");
	expect_in("the run", "position");
	expect_in("the run", "length unit");
	ck_assert_int_ne(access(tpath("out.mp4"), F_OK), 0);
}
END_TEST

/* A FIFO, a directory and /dev/null where a snapshot or a body CSV should be. */
START_TEST(special_files_at_an_input_path_are_refused)
{
	ck_assert_int_eq(mkfifo(tpath("fifo.hdf5"), 0600), 0);
	ck_assert_int_eq(mkdir(tpath("dir.hdf5"), 0700), 0);
	const char *paths[3] = {"fifo.hdf5", "dir.hdf5", "/dev/null"};
	const char *what[3] = {"FIFO", "directory", "device"};
	for (int i = 0; i < 3; i++) {
		const char *text = snap_scene("s.yaml", paths[i], NULL);
		const char *const needles[] = {what[i], where_in("s.yaml", text, paths[i]), NULL};
		expect_both_refuse("s.yaml", NULL, needles);
	}
	for (int i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "bodies:\n"
			 "  - {name: b, model: file, file: %s}\n"
			 "camera: {keys: [{frame: 0, position: [0, -10, 4], target: [0, 0, 0]}]}\n"
			 "render: {width: 32, height: 24}\n"
			 "output: {frames: 2}\n",
			 paths[i]);
		write_text("c.yaml", text);
		const char *const needles[] = {what[i], where_in("c.yaml", text, paths[i]), NULL};
		expect_both_refuse("c.yaml", NULL, needles);
	}
}
END_TEST

/* Selections that keep nothing: every type with particles not loaded, a
 * region away from all particles. Before: --dry-run passed and the run
 * said "the scene creates no bodies" without a place. */
START_TEST(empty_selections_are_refused_at_the_entry)
{
	struct h5spec sp = h5_small();
	h5_write("ok.hdf5", &sp);
	const char *text = snap_scene("s.yaml", "ok.hdf5", "types: {halo: {load: false}}");
	const char *const n1[] = {"ok.hdf5", "no type with particles is loaded",
				  where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n1);
	text = snap_scene("s.yaml", "ok.hdf5",
			  "region: {shape: sphere, center: [1000, 0, 0], radius: 1}");
	const char *const n2[] = {"ok.hdf5", "region holds none",
				  where_in("s.yaml", text, "{name: r"), NULL};
	expect_both_refuse("s.yaml", NULL, n2);
	/* the same file with nothing left out is taken */
	snap_scene("s.yaml", "ok.hdf5", NULL);
	const char *const dry[] = {"--dry-run", NULL};
	ck_assert_msg(run_argv("s.yaml", dry, NULL) == 0, "a good file refused:\n%s", g_err);
}
END_TEST

/* ---- body CSV files ------------------------------------------------------------ */

/* A CSV cut inside a line, one with a value that is not finite, one with
 * a value beyond the range of positions, one whose masses make forces
 * overflow: refused with file:line (or the file) by the reader and at the
 * scene entry (before: --dry-run's refusal had no scene place; the masses
 * passed --dry-run, and the run failed at step 1 with exit 1 blaming the
 * time step). */
START_TEST(csv_truncated_and_nonfinite_are_refused_at_the_entry)
{
	static const char *const bodies[4] = {
		"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n1,a,1,1,0",
		"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n1,a,1,nan,0,0,0,0,0\n",
		"id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n1,a,1,1e300,0,0,0,0,0\n",
		"id,component,mass,x,y,z,vx,vy,vz\n0,a,1e300,0,0,0,0,0,0\n1,a,1,1,0,0,0,0,0\n",
	};
	static const char *const cause[4] = {"b.csv:3: expected 9 columns", "b.csv:3: column 'x'",
					     "b.csv:3: column 'x'", "total mass of 1e300"};
	for (int i = 0; i < 4; i++) {
		write_text("b.csv", bodies[i]);
		const char *text = "bodies:\n"
				   "  - {name: b, model: file, file: b.csv}\n"
				   "camera: {keys: [{frame: 0, position: [0, -10, 4], target: [0, 0, 0]}]}\n"
				   "render: {width: 32, height: 24}\n"
				   "output: {frames: 2}\n";
		write_text("c.yaml", text);
		const char *const needles[] = {cause[i], where_in("c.yaml", text, "{name: b"),
					       "bodies.0.file", NULL};
		expect_both_refuse("c.yaml", NULL, needles);
	}
}
END_TEST

/* ---- film series -------------------------------------------------------------------- */

static const char *film_scene(const char *pattern, const char *first)
{
	static char text[1024];
	snprintf(text, sizeof text,
		 "units: galactic\n"
		 "simulation: {solver: none, dt: 0.5, steps_per_frame: 1}\n"
		 "bodies:\n"
		 "  - {name: r, model: snapshot, file: %s, snapshots: \"%s\"}\n"
		 "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		 "render: {width: 32, height: 24}\n"
		 "output: {frames: 3}\n",
		 first, pattern);
	write_text("f.yaml", text);
	return text;
}

/* Members KIND_000 .. KIND_(n-1) (skipping number SKIP), Time i. */
static void series_write(const char *kind, int n, int skip)
{
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		char name[64];
		snprintf(name, sizeof name, "%s_%03d.hdf5", kind, i);
		struct h5spec sp = h5_small();
		sp.time = i;
		h5_write(name, &sp);
	}
}

/* Series KIND of 3 members, the last one (KIND_002) written from sp: refused
 * by --dry-run and the run, naming that member, WHAT (and WHAT2) and the
 * entry's place. */
static void refuse_last_member(const char *kind, struct h5spec sp, const char *what,
			       const char *what2)
{
	char pattern[64], first[64], last[64];
	snprintf(pattern, sizeof pattern, "%s_%%03d.hdf5", kind);
	snprintf(first, sizeof first, "%s_000.hdf5", kind);
	snprintf(last, sizeof last, "%s_002.hdf5", kind);
	series_write(kind, 3, -1);
	h5_write(last, &sp);
	const char *text = film_scene(pattern, first);
	const char *const needles[] = {last, what, what2 ? what2 : what,
				       where_in("f.yaml", text, "{name: r"), NULL};
	expect_both_refuse("f.yaml", NULL, needles);
}

/* A series whose every member keeps nothing: an empty selection. */
static void refuse_empty_series(void)
{
	series_write("none", 3, -1);
	char own[1024];
	const char *text = own;
	snprintf(own, sizeof own,
		 "units: galactic\n"
		 "simulation: {solver: none, dt: 0.5, steps_per_frame: 1}\n"
		 "bodies:\n"
		 "  - {name: r, model: snapshot, file: none_000.hdf5, snapshots: \"none_%%03d.hdf5\", "
		 "region: {shape: sphere, center: [1000, 0, 0], radius: 1}}\n"
		 "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
		 "render: {width: 32, height: 24}\n"
		 "output: {frames: 3}\n");
	write_text("f.yaml", text);
	const char *const n6[] = {"no member keeps any particle", where_in("f.yaml", text, "{name: r"),
				  NULL};
	expect_both_refuse("f.yaml", NULL, n6);
}

/* A good series is taken; one with a gap, a duplicate ParticleID in its
 * last member, a Time that does not increase, a Time that overflows in
 * internal units, or a FIFO as a member is refused when the series is
 * opened, by --dry-run too (before: --dry-run looked at no member; the
 * duplicate in a later member was found mid-run, the infinite Time not at
 * all). */
START_TEST(film_series_defects_are_found_before_the_first_frame)
{
	const char *const dry[] = {"--dry-run", NULL};
	series_write("ok", 3, -1);
	film_scene("ok_%03d.hdf5", "ok_000.hdf5");
	ck_assert_msg(run_argv("f.yaml", dry, NULL) == 0, "a good series refused:\n%s", g_err);

	series_write("gap", 4, 2);
	const char *text = film_scene("gap_%03d.hdf5", "gap_000.hdf5");
	const char *const n1[] = {"gap_002.hdf5 does not exist", where_in("f.yaml", text, "{name: r"),
				  "bodies.0.snapshots", NULL};
	expect_both_refuse("f.yaml", NULL, n1);

	struct h5spec sp = h5_small();
	sp.time = 2, sp.dup_id = 1;
	refuse_last_member("dup", sp, "ParticleID 1000 appears more than once", NULL);
	sp = h5_small();
	sp.time = 1;
	refuse_last_member("back", sp, "not after the previous file", NULL);
	/* 1e307 stored, times the time unit (about 100 internal units): inf */
	sp = h5_small();
	sp.time = 1e307;
	refuse_last_member("inf", sp, "not finite", "unit");

	series_write("pipe", 3, 1);
	ck_assert_int_eq(mkfifo(tpath("pipe_001.hdf5"), 0600), 0);
	text = film_scene("pipe_%03d.hdf5", "pipe_000.hdf5");
	const char *const n5[] = {"pipe_001.hdf5", "FIFO", where_in("f.yaml", text, "{name: r"),
				  NULL};
	expect_both_refuse("f.yaml", NULL, n5);

	/* a series with a solver, or beside another entry: the run plays
	 * neither (before: --dry-run passed both, the run refused them without
	 * a place) */
	text = film_scene("ok_%03d.hdf5", "ok_000.hdf5");
	const char *const solver[] = {"--set", "simulation.solver=direct", NULL};
	const char *const n7[] = {where_in("f.yaml", text, "\"ok_"), "bodies.0.snapshots",
				  "solver: none", NULL};
	expect_both_refuse("f.yaml", solver, n7);
	char two[1024];
	snprintf(two, sizeof two, "%s", text);
	char *at = strstr(two, "bodies:\n");
	ck_assert_ptr_nonnull(at);
	static const char other[] = "  - {name: c, model: plummer, count: 20, mass: 1e9, scale: 1}\n";
	memmove(at + 8 + strlen(other), at + 8, strlen(at + 8) + 1);
	memcpy(at + 8, other, strlen(other));
	write_text("f.yaml", two);
	const char *const n8[] = {where_in("f.yaml", two, "\"ok_"), "bodies.1.snapshots",
				  "only bodies entry", NULL};
	expect_both_refuse("f.yaml", NULL, n8);

	refuse_empty_series();
}
END_TEST


/* ---- restart files -------------------------------------------------------------------------- */

static const char restart_scene[] =
	"units: galactic\n"
	"seed: 3\n"
	"simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 2}\n"
	"bodies:\n"
	"  - {name: c, model: plummer, count: 20, mass: 1e9, scale: 1}\n"
	"camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
	"render: {width: 32, height: 24}\n"
	"output: {frames: 4, snapshots: {dir: snaps, every: 1}}\n";

/* snaps/snap_001.hdf5 from a run of restart_scene; then r.yaml writes its
 * snapshots elsewhere, so that a restart never meets its own input. */
static void restart_prepare(void)
{
	write_text("w.yaml", restart_scene);
	const char *const args[] = {"--set", "output.video=w.mp4", NULL};
	ck_assert_msg(run_argv("w.yaml", args, NULL) == 0, "the writing run failed:\n%s", g_err);
	char text[sizeof restart_scene + 64];
	snprintf(text, sizeof text, "%s", restart_scene);
	char *at = strstr(text, "dir: snaps");
	ck_assert_ptr_nonnull(at);
	memcpy(at, "dir: snap2", 10);
	write_text("r.yaml", text);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tpath(from), tpath(to));
	ck_assert_int_eq(system(cmd), 0);
}

static hid_t h5_rw(const char *name)
{
	hid_t f = H5Fopen(tpath(name), H5F_ACC_RDWR, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	return f;
}

/* Attribute NAME of OBJ rewritten as V (memory type TYPE): deleted and
 * made again with its file type and shape (libhdf5 1.10 cannot write in
 * place into the attribute messages the program's own writer lays out). */
static void h5_set_attr(hid_t f, const char *obj, const char *name, hid_t type, const void *v)
{
	hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
	H5Aclose(a);
	ck_assert_int_ge(H5Adelete_by_name(f, obj, name, H5P_DEFAULT), 0);
	a = H5Acreate_by_name(f, obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Awrite(a, type, v), 0);
	H5Aclose(a);
	H5Tclose(ft);
	H5Sclose(sp);
}

/* Row 3 column 1 of dataset DN (n x 3 doubles) set to V. */
static void h5_poke(hid_t f, const char *dn, double v)
{
	hid_t d = H5Dopen2(f, dn, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	double buf[20 * 3];
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
	buf[3 * 3 + 1] = v;
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
	H5Dclose(d);
}

static void restart_refused(const char *name, const char *cause)
{
	const char *const args[] = {"--restart", name, NULL};
	const char *const needles[] = {name, "--restart", cause, NULL};
	expect_both_refuse("r.yaml", args, needles);
}

/* Damaged restart snapshots: refused by --dry-run --restart as by the run
 * (before: --dry-run read only the NbodyRender attributes and passed all
 * of these; the run allocated the 4e9 rows NumPart_ThisFile claimed, took
 * an infinite time, and stopped at step 1 on the NaN blaming the time
 * step). */
START_TEST(damaged_restart_files_are_refused_by_the_dry_run_too)
{
	restart_prepare();
	const char *const good[] = {"--dry-run", "--restart", "snaps/snap_001.hdf5", NULL};
	ck_assert_msg(run_argv("r.yaml", good, NULL) == 0, "the good restart refused:\n%s", g_err);

	copy_file("snaps/snap_001.hdf5", "count.hdf5");
	hid_t f = h5_rw("count.hdf5");
	unsigned cnt[6] = {0, 0, 0, 0, 4000000000u, 0};
	h5_set_attr(f, "Header", "NumPart_ThisFile", H5T_NATIVE_UINT, cnt);
	H5Fclose(f);
	restart_refused("count.hdf5", "adds up to 4000000000");

	copy_file("snaps/snap_001.hdf5", "time.hdf5");
	f = h5_rw("time.hdf5");
	double inf = HUGE_VAL;
	h5_set_attr(f, "NbodyRender", "TimeInternal", H5T_NATIVE_DOUBLE, &inf);
	H5Fclose(f);
	restart_refused("time.hdf5", "TimeInternal");

	copy_file("snaps/snap_001.hdf5", "nan.hdf5");
	f = h5_rw("nan.hdf5");
	h5_poke(f, "PartType4/Coordinates", nan(""));
	H5Fclose(f);
	restart_refused("nan.hdf5", "PartType4");

	copy_file("snaps/snap_001.hdf5", "vinf.hdf5");
	f = h5_rw("vinf.hdf5");
	h5_poke(f, "NbodyRender/InternalVelocities", HUGE_VAL);
	H5Fclose(f);
	restart_refused("vinf.hdf5", "InternalVelocities");

	copy_file("snaps/snap_001.hdf5", "gone.hdf5");
	f = h5_rw("gone.hdf5");
	ck_assert_int_ge(H5Ldelete(f, "PartType4/Velocities", H5P_DEFAULT), 0);
	H5Fclose(f);
	restart_refused("gone.hdf5", "PartType4/Velocities is missing");

	/* a dataset of the right shape that was never written: fill values */
	copy_file("snaps/snap_001.hdf5", "blank.hdf5");
	f = h5_rw("blank.hdf5");
	ck_assert_int_ge(H5Ldelete(f, "PartType4/Coordinates", H5P_DEFAULT), 0);
	h5_dset(f, "PartType4/Coordinates", H5T_NATIVE_DOUBLE, 20, 3, NULL);
	H5Fclose(f);
	restart_refused("blank.hdf5", "never written");

	copy_file("snaps/snap_001.hdf5", "half.hdf5");
	ck_assert_int_eq(truncate(tpath("half.hdf5"), file_size("half.hdf5") / 2), 0);
	restart_refused("half.hdf5", "HDF5");

	/* a film series is played from its files, never restarted (before:
	 * only the run refused it) */
	struct h5spec sp = h5_small();
	h5_write("f_000.hdf5", &sp);
	sp.time = 1;
	h5_write("f_001.hdf5", &sp);
	write_text("film.yaml", "units: galactic\n"
				"simulation: {solver: none, dt: 0.5, steps_per_frame: 2}\n"
				"bodies:\n"
				"  - {name: r, model: snapshot, file: f_000.hdf5, snapshots: \"f_%03d.hdf5\"}\n"
				"camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
				"render: {width: 32, height: 24}\n"
				"output: {frames: 4}\n");
	const char *const args[] = {"--restart", "snaps/snap_001.hdf5", NULL};
	const char *const needles[] = {"snap_001.hdf5", "--restart", "filmed series", NULL};
	expect_both_refuse("film.yaml", args, needles);
}
END_TEST

START_TEST(special_files_as_restart_are_refused)
{
	restart_prepare();
	ck_assert_int_eq(mkfifo(tpath("fifo.hdf5"), 0600), 0);
	ck_assert_int_eq(mkdir(tpath("dir.hdf5"), 0700), 0);
	restart_refused("fifo.hdf5", "FIFO");
	restart_refused("dir.hdf5", "directory");
	restart_refused("/dev/null", "device");
}
END_TEST

/* ---- body models: what the run refuses, the dry run refuses at the key --------------------- */

/* A disk galaxy whose disk has bodies and mass 0 (before: --dry-run passed,
 * the run refused without a file, line and column), a Plummer sphere of
 * scale 1e-300 (before: --dry-run passed, the run failed at step 0 with
 * exit 1 blaming the time step). */
START_TEST(body_models_refused_by_the_run_are_refused_by_the_dry_run)
{
	const char *text = "units: galactic\n"
			   "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 1}\n"
			   "bodies:\n"
			   "  - {name: g, model: disk-galaxy, disk: {count: 50, mass: 0}, halo: {count: 20}}\n"
			   "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
			   "render: {width: 32, height: 24}\n"
			   "output: {frames: 2}\n";
	write_text("g.yaml", text);
	const char *const n1[] = {where_in("g.yaml", text, "0}"), "bodies.0.disk.mass", "mass > 0",
				  NULL};
	expect_both_refuse("g.yaml", NULL, n1);

	text = "units: galactic\n"
	       "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 1}\n"
	       "bodies:\n"
	       "  - {name: c, model: plummer, count: 20, mass: 1e9, scale: 1e-300}\n"
	       "camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
	       "render: {width: 32, height: 24}\n"
	       "output: {frames: 2}\n";
	write_text("p.yaml", text);
	const char *const n2[] = {where_in("p.yaml", text, "1e-300"), "bodies.0.scale", NULL};
	expect_both_refuse("p.yaml", NULL, n2);
	ck_assert_msg(strstr(g_err, "time step") == NULL, "a bad scale blamed on the time step:\n%s",
		      g_err);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("reader_hostile");
	TCase *tc = tcase_create("inputs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, hdf5_claiming_1e12_particles_in_4kb_is_refused_at_once);
	tcase_add_test(tc, api_open_of_a_1e12_claim_fails_fast_without_allocating);
	tcase_add_test(tc, virtual_and_compressed_snapshots_are_taken);
	tcase_add_test(tc, truncated_snapshots_are_refused);
	tcase_add_test(tc, binary_header_lying_about_counts_is_refused);
	tcase_add_test(tc, multi_file_type_present_only_in_a_later_part_is_refused);
	tcase_add_test(tc, multi_file_totals_claiming_1e12_are_refused);
	tcase_add_test(tc, units_that_overflow_after_conversion_are_refused_naming_the_unit);
	tcase_add_test(tc, special_files_at_an_input_path_are_refused);
	tcase_add_test(tc, empty_selections_are_refused_at_the_entry);
	tcase_add_test(tc, csv_truncated_and_nonfinite_are_refused_at_the_entry);
	tcase_add_test(tc, film_series_defects_are_found_before_the_first_frame);
	tcase_add_test(tc, damaged_restart_files_are_refused_by_the_dry_run_too);
	tcase_add_test(tc, special_files_as_restart_are_refused);
	tcase_add_test(tc, body_models_refused_by_the_run_are_refused_by_the_dry_run);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
