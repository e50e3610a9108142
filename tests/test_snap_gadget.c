/* test_snap_gadget.c - issue 30, "a GADGET run repeated as it was made":
 *   - snapshots written from a snapshot scene keep the input's ParticleIDs
 *     (32- and 64-bit), bodies the program made keep their ids, and
 *     --restart reads them back (and refuses a file whose IDs are not the
 *     scene's);
 *   - after --restart, the closing line counts only the restarted run's
 *     frames and steps;
 *   - every snapshot states G (GravitationalConstant, in the stored units
 *     and in cgs; read with h5py);
 *   - units: snapshot: the scene's keys in the code units of its first
 *     snapshot entry (the file's, else GADGET's): a run equals the galactic
 *     scene with the values converted by hand; the file's own units win;
 *     a scene without a snapshot entry is refused at the key;
 *   - GADGET-2's own galaxy example keeps its IDs 1..60000, each with its
 *     own particle (when ../shared/data/gadget2-ics holds it).
 * Run:
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_snap_gadget
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_snap_gadget */
#include <hdf5.h>
#include <math.h>

#include "test_snapshot_util.h"

#define N1 40 /* PartType1 (halo) particles of the input */
#define N2 24 /* PartType2 (disk) */
#define NP 30 /* the scene's Plummer sphere, listed after the snapshot */

/* The input's IDs: 32-bit for the halo, beyond 2^32 for the disk (a
 * GADGET run built with LONGIDS). */
static uint64_t id1(int i)
{
	return 1000 + 7 * (uint64_t)i;
}

static uint64_t id2(int i)
{
	return 5000000000ull + 11 * (uint64_t)i;
}

/* Attribute NAME of g: n values of TYPE (native, stored as it is). */
static void attr(hid_t g, const char *name, hid_t type, const void *v, hsize_t n)
{
	hid_t s = H5Screate_simple(1, &n, NULL);
	hid_t a = H5Acreate2(g, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Awrite(a, type, v), 0);
	H5Aclose(a);
	H5Sclose(s);
}

static void attr_d(hid_t g, const char *name, const double *v, hsize_t n)
{
	attr(g, name, H5T_NATIVE_DOUBLE, v, n);
}

static void attr_u(hid_t g, const char *name, const unsigned *v, hsize_t n)
{
	attr(g, name, H5T_NATIVE_UINT, v, n);
}

/* g_dir/NAME holds TEXT. */
static void write_text(const char *name, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void dset(hid_t g, const char *name, hid_t ftype, hid_t mtype, const void *v, hsize_t n,
		 hsize_t k)
{
	hsize_t dims[2] = {n, k};
	hid_t s = H5Screate_simple(k > 1 ? 2 : 1, dims, NULL);
	hid_t d = H5Dcreate2(g, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	H5Dclose(d);
	H5Sclose(s);
}

/* g_dir/NAME: a GADGET HDF5 file, two types, bodies on a ring of radius
 * 3-8 length units. LENGTH_CM > 0: a SWIFT-style Units group gives that
 * length unit (1e10 M_sun and km/s); else none (GADGET's defaults: kpc,
 * 1e10 M_sun, km/s). */
static void write_input(const char *name, double length_cm)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	unsigned np[6] = {0, N1, N2, 0, 0, 0}, zero[6] = {0};
	double mt[6] = {0}, t = 0, z = 0, box = 0, nf = 1;
	attr_u(h, "NumPart_ThisFile", np, 6);
	attr_u(h, "NumPart_Total", np, 6);
	attr_u(h, "NumPart_Total_HighWord", zero, 6);
	attr_d(h, "MassTable", mt, 6);
	attr_d(h, "Time", &t, 1);
	attr_d(h, "Redshift", &z, 1);
	attr_d(h, "BoxSize", &box, 1);
	attr_d(h, "NumFilesPerSnapshot", &nf, 1);
	H5Gclose(h);
	if (length_cm > 0) {
		hid_t g = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		double M = 1.989e43, V = 1e5, T = length_cm / V, one = 1;
		attr_d(g, "Unit length in cgs (U_L)", &length_cm, 1);
		attr_d(g, "Unit mass in cgs (U_M)", &M, 1);
		attr_d(g, "Unit time in cgs (U_t)", &T, 1);
		attr_d(g, "Unit current in cgs (U_I)", &one, 1);
		attr_d(g, "Unit temperature in cgs (U_T)", &one, 1);
		H5Gclose(g);
	}
	for (int ty = 1; ty <= 2; ty++) {
		const int n = ty == 1 ? N1 : N2;
		double x[3 * N1], v[3 * N1], m[N1];
		uint64_t id[N1];
		for (int i = 0; i < n; i++) {
			double r = 3 + 5.0 * i / n, a = 2.4 * i + ty;
			x[3 * i] = r * cos(a), x[3 * i + 1] = r * sin(a), x[3 * i + 2] = 0.1 * ty;
			v[3 * i] = -30 * sin(a), v[3 * i + 1] = 30 * cos(a), v[3 * i + 2] = 0;
			m[i] = ty == 1 ? 4e-3 : 1e-3; /* 4e7 and 1e7 M_sun */
			id[i] = ty == 1 ? id1(i) : id2(i);
		}
		char name[16];
		snprintf(name, sizeof name, "PartType%d", ty);
		hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		dset(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x, n, 3);
		dset(g, "Velocities", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n, 3);
		dset(g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m, n, 1);
		dset(g, "ParticleIDs", ty == 1 ? H5T_STD_U32LE : H5T_STD_U64LE, H5T_NATIVE_UINT64, id,
		     n, 1);
		H5Gclose(g);
	}
	H5Fclose(f);
}

/* The snapshot entry first, then a Plummer sphere the program makes. */
static const char ids_scene[] =
	"units: galactic\n"
	"simulation: {solver: direct, softening: 0.3, dt: 0.5, steps_per_frame: 3}\n"
	"bodies:\n"
	"  - {name: gad, model: snapshot, file: in.hdf5}\n"
	"  - {name: c, model: plummer, count: 30, mass: 1e8, scale: 1, position: [20, 0, 0]}\n"
	"camera: {keys: [{frame: 0, position: [0, -80, 30], target: [0, 0, 0]}]}\n"
	"render: {width: 32, height: 24}\n"
	"output: {frames: 8}\n";

static void ids_setup(void)
{
	setup();
	write_text("ids.yaml", ids_scene);
	write_input("in.hdf5", 0);
	g_file = "ids.yaml";
}

static void ids_teardown(void)
{
	g_file = "scene.yaml";
	teardown();
}

/* PartType T's ParticleIDs of g_dir/FILE into ids (cap), their count;
 * *bytes the stored integer size. */
static size_t read_ids(const char *file, int t, uint64_t *ids, size_t cap, size_t *bytes)
{
	char full[PATH_MAX], dn[64];
	snprintf(full, sizeof full, "%s/%s", g_dir, file);
	snprintf(dn, sizeof dn, "PartType%d/ParticleIDs", t);
	hid_t f = H5Fopen(full, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_msg(f >= 0, "%s does not open", file);
	hid_t d = H5Dopen2(f, dn, H5P_DEFAULT);
	ck_assert_msg(d >= 0, "%s: no %s", file, dn);
	hid_t s = H5Dget_space(d), ty = H5Dget_type(d);
	size_t n = (size_t)H5Sget_simple_extent_npoints(s);
	ck_assert_uint_le(n, cap);
	*bytes = H5Tget_size(ty);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids), 0);
	H5Tclose(ty);
	H5Sclose(s);
	H5Dclose(d);
	H5Fclose(f);
	return n;
}

/* The snapshot's IDs are the input's, type by type and in the input's
 * order; the Plummer sphere's are its bodies' ids 64..93. */
static void check_ids(const char *file)
{
	uint64_t ids[64];
	size_t bytes;
	ck_assert_uint_eq(read_ids(file, 1, ids, 64, &bytes), N1);
	ck_assert_uint_eq(bytes, 4); /* every halo ID fits 32 bits: stored as GADGET does */
	for (int i = 0; i < N1; i++)
		ck_assert_msg(ids[i] == id1(i), "%s: halo row %d: ID %llu, the input's %llu", file, i,
			      (unsigned long long)ids[i], (unsigned long long)id1(i));
	ck_assert_uint_eq(read_ids(file, 2, ids, 64, &bytes), N2);
	ck_assert_uint_eq(bytes, 8);
	for (int i = 0; i < N2; i++)
		ck_assert_msg(ids[i] == id2(i), "%s: disk row %d: ID %llu, the input's %llu", file, i,
			      (unsigned long long)ids[i], (unsigned long long)id2(i));
	ck_assert_uint_eq(read_ids(file, 4, ids, 64, &bytes), NP);
	for (int i = 0; i < NP; i++)
		ck_assert_uint_eq(ids[i], (uint64_t)(N1 + N2 + i));
}

START_TEST(snapshot_scene_keeps_the_input_ids)
{
	ck_assert_int_eq(run("output.snapshots.dir=snaps", "output.snapshots.every=4", NULL), 0);
	ck_assert_int_eq(count("snaps", "snap_"), 3); /* frames 0, 4, 7 */
	check_ids("snaps/snap_000.hdf5");
	check_ids("snaps/snap_002.hdf5");
}
END_TEST

/* Row 3 of PartType2/ParticleIDs of g_dir/FILE set to ID. */
static void set_id(const char *file, uint64_t id)
{
	char full[PATH_MAX];
	snprintf(full, sizeof full, "%s/%s", g_dir, file);
	hid_t f = H5Fopen(full, H5F_ACC_RDWR, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t d = H5Dopen2(f, "PartType2/ParticleIDs", H5P_DEFAULT);
	hid_t s = H5Dget_space(d);
	hsize_t at = 3, one = 1;
	hid_t ms = H5Screate_simple(1, &one, NULL);
	ck_assert_int_ge(H5Sselect_hyperslab(s, H5S_SELECT_SET, &at, NULL, &one, NULL), 0);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT64, ms, s, H5P_DEFAULT, &id), 0);
	H5Sclose(ms);
	H5Sclose(s);
	H5Dclose(d);
	H5Fclose(f);
}

START_TEST(restart_reads_the_kept_ids_back)
{
	ck_assert_int_eq(run("output.final_state=full.csv", NULL), 0);
	ck_assert_int_eq(run("output.frames=5", "output.snapshots.dir=snaps",
			     "output.snapshots.every=4", NULL),
			 0);
	ck_assert_int_eq(run("output.final_state=r.csv", "output.snapshots.dir=rs",
			     "output.snapshots.every=7", "--restart", "snaps/snap_001.hdf5", NULL),
			 0);
	char a[64 * 1024];
	snprintf(a, sizeof a, "%s", slurp("full.csv"));
	ck_assert_msg(strlen(a) > 1000, "full.csv is short");
	ck_assert_msg(strcmp(a, slurp("r.csv")) == 0, "the restarted run's final state differs");
	check_ids("rs/snap_001.hdf5");
	/* an ID that is not the scene's body's there: refused, and nothing
	 * written (the IDs are compared once the scene's bodies are built) */
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cp '%s/snaps/snap_001.hdf5' '%s/bad.hdf5'", g_dir, g_dir);
	ck_assert_int_eq(system(cmd), 0);
	set_id("bad.hdf5", id2(4));
	ck_assert_int_eq(run("output.snapshots.dir=rb", "output.final_state=rb.csv", "--restart",
			     "bad.hdf5", NULL),
			 2);
	const char *log = slurp("run.log");
	ck_assert_msg(strstr(log, "bad.hdf5: --restart: /PartType2/ParticleIDs row 3 holds ID "
				  "5000000044, not the ID of the scene's body there"),
		      "run.log: %s", log);
	ck_assert(!exists("rb.csv"));
	ck_assert_int_eq(count("rb", "snap_"), 0);
}
END_TEST

/* The program in g_dir, not quiet (the closing line is info), stderr into
 * LOG; the arguments after the scene as one shell string. Exit status. */
static int run_loud(const char *args, const char *log)
{
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s --backend cpu %s 2>%s >/dev/null", g_dir, g_bin,
		 g_file, args, log);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "done: N frames in ... simulation T s: S steps, R steps/s": N, S and R
 * against S / T (T as printed, rounded). */
static void check_done(const char *log, int frames, long steps)
{
	const char *text = slurp(log);
	const char *d = strstr(text, "done: ");
	ck_assert_msg(d, "%s: no closing line: %s", log, text);
	int n;
	long s;
	double t, r;
	char unit[8];
	ck_assert_msg(sscanf(d, "done: %d frames in", &n) == 1, "%s", d);
	ck_assert_int_eq(n, frames);
	const char *sim = strstr(d, "(simulation ");
	ck_assert_msg(sim && sscanf(sim, "(simulation %lf %7s %ld steps, %lf steps/s", &t, unit, &s,
				    &r) == 4,
		      "%s", d);
	ck_assert_int_eq(s, steps);
	ck_assert_str_eq(unit, "s:");
	/* T is printed in tenths of a second (finer below 0.05 s), R to 3
	 * digits: the time the rate implies is T within the rounding */
	ck_assert_msg(r > 0 && fabs(steps / r - t) <= 0.05 + 0.01 * t, "rate %g, %ld steps in %g s",
		      r, steps, t);
}

START_TEST(restart_counts_only_its_own_frames_and_steps)
{
	g_file = "scene.yaml"; /* 460 bodies, 8 frames of 3 steps */
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=snaps --set output.snapshots.every=4",
				  "full.log"),
			 0);
	check_done("full.log", 8, 7 * 3);
	/* from snap_001 (frame 4): frames 5, 6, 7 are this run's, 9 steps */
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=rs --restart snaps/snap_001.hdf5",
				  "restart.log"),
			 0);
	check_done("restart.log", 3, 3 * 3);
	const char *text = slurp("restart.log");
	ck_assert_msg(strstr(text, "restarted: frames 5-7, the 5 before were the snapshot's run's"),
		      "%s", text);
	/* the progress line (not a terminal: plain lines) ends at frame 8 of 8 */
	ck_assert_msg(strstr(text, "frame 8/8"), "%s", text);
}
END_TEST

/* A restart under another softening kernel, or with an entry's own length
 * changed, continues a different simulation: refused (exit 2), naming the
 * kernel or the component, and nothing written. The same keys restart. */
START_TEST(restart_refuses_other_softening)
{
	g_file = "scene.yaml";
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=snaps --set output.snapshots.every=4 "
				  "--set bodies.0.softening=0.05",
				  "full.log"),
			 0);
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=r1 --set bodies.0.softening=0.05 "
				  "--set simulation.softening_kernel=spline --restart snaps/snap_001.hdf5",
				  "k.log"),
			 2);
	ck_assert_msg(strstr(slurp("k.log"), "written with simulation.softening_kernel plummer, the "
					     "scene says spline"),
		      "%s", slurp("k.log"));
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=r2 --restart snaps/snap_001.hdf5",
				  "e.log"),
			 2);
	ck_assert_msg(strstr(slurp("e.log"), "was softened with") &&
			      strstr(slurp("e.log"), "a restart continues the same simulation"),
		      "%s", slurp("e.log"));
	ck_assert_int_eq(count("r1", "snap_") + count("r2", "snap_"), 0);
	ck_assert_int_eq(run_loud("--set output.snapshots.dir=r3 --set bodies.0.softening=0.05 "
				  "--restart snaps/snap_001.hdf5",
				  "ok.log"),
			 0);
}
END_TEST

/* G in the stored units from the file's own /Units (h5py), against the
 * GravitationalConstant attributes: galactic kpc, 1e10 M_sun, km/s give
 * 43009.1 (GADGET-2's own constants give 43007.1); nbody 1. */
START_TEST(every_snapshot_states_g)
{
	g_file = "scene.yaml";
	ck_assert_int_eq(run("output.snapshots.dir=gal", "output.snapshots.every=7",
			     "output.frames=2", NULL),
			 0);
	ck_assert_int_eq(run("units=nbody", "bodies.1.mass=0.1", "bodies.1.position=[3,0,0]",
			     "bodies.1.velocity=[0,0.5,0]", "output.snapshots.dir=nb",
			     "output.snapshots.every=7", "output.frames=2", NULL),
			 0);
	char out[1024];
	ck_assert_int_eq(
		py("import h5py\n"
		   "for d in ('gal', 'nb'):\n"
		   "    f = h5py.File(d + '/snap_000.hdf5', 'r')\n"
		   "    u, h = f['Units'].attrs, f['Header'].attrs\n"
		   "    L, M, T = u['UnitLength_in_cm'], u['UnitMass_in_g'], u['UnitTime_in_s']\n"
		   "    print(h['GravitationalConstant'], h['GravitationalConstant_cgs'] * M * T**2 / L**3,"
		   " h['GravitationalConstant_cgs'])\n",
		   out, sizeof out),
		0);
	double g[2], gu[2], gc[2];
	ck_assert_msg(sscanf(out, "%lf %lf %lf %lf %lf %lf", &g[0], &gu[0], &gc[0], &g[1], &gu[1],
			     &gc[1]) == 6,
		      "h5py printed: %s (%s)", out, slurp("py.log"));
	for (int i = 0; i < 2; i++) {
		ck_assert_double_eq_tol(gc[i], 6.6743e-8, 1e-13); /* CODATA 2018 */
		ck_assert_double_eq_tol(g[i], gu[i], 1e-12 * gu[i]);
	}
	ck_assert_double_eq_tol(g[0], 43009.1, 0.1);
	ck_assert_double_eq_tol(g[0], 43007.1, 43007.1 * 1e-4); /* GADGET-2's, within its constants */
	ck_assert_double_eq_tol(g[1], 1.0, 1e-12);
}
END_TEST

#define GADGET_IC "../shared/data/gadget2-ics/galaxy_littleendian.dat"

/* GADGET-2's galaxy example, 1 in 50 particles kept: every written ID is
 * one of the file's 1..60000 (halo 1..40000 in PartType1, disk in
 * PartType2), in increasing order, and its position is the file's
 * particle with that ID (read by numpy from the binary itself). */
START_TEST(gadget2_example_keeps_its_ids)
{
	char ic[PATH_MAX];
	if (!realpath(GADGET_IC, ic)) {
		printf("SKIP: %s: %s is not here (see scenes/gadget2-galaxy.yaml)\n", __FILE__,
		       GADGET_IC);
		return;
	}
	char text[2 * PATH_MAX];
	snprintf(text, sizeof text,
		 "units: galactic\n"
		 "simulation: {softening: 0.4, dt: 1}\n"
		 "bodies: [{name: g, model: snapshot, file: '%s', format: gadget1, subsample: 0.02}]\n"
		 "camera: {keys: [{frame: 0, position: [0, -200, 190], target: [0, 0, 0]}]}\n"
		 "render: {width: 32, height: 24}\n"
		 "output: {frames: 1}\n",
		 ic);
	write_text("g2.yaml", text);
	g_file = "g2.yaml";
	ck_assert_int_eq(run("output.snapshots.dir=s", "output.snapshots.every=1", NULL), 0);
	char script[PATH_MAX + 2048], out[1024];
	snprintf(script, sizeof script,
		 "import h5py, numpy as np, struct\n"
		 "d = open('%s', 'rb').read()\n"
		 "n = struct.unpack_from('<6i', d, 4); N = sum(n); o = 4 + 256 + 4\n"
		 "pos = np.frombuffer(d, '<f4', 3 * N, o + 4).reshape(N, 3)\n"
		 "o += 8 + 12 * N + 8 + 12 * N\n"
		 "ids = np.frombuffer(d, '<u4', N, o + 4)\n"
		 "at = {int(i): k for k, i in enumerate(ids)}\n"
		 "f = h5py.File('s/snap_000.hdf5', 'r')\n"
		 "off = f['NbodyRender'].attrs['CoordinateOffset']\n"
		 "bad = 0; kept = 0\n"
		 "for t, lo, hi in ((1, 1, 40000), (2, 40001, 60000)):\n"
		 "    w = f['PartType%%d/ParticleIDs' %% t][:]\n"
		 "    x = f['PartType%%d/Coordinates' %% t][:] - off\n"
		 "    bad += int(w.min() < lo or w.max() > hi or np.any(np.diff(w.astype(np.int64)) <= 0))\n"
		 "    err = max(np.abs(x[k] - pos[at[int(i)]]).max() for k, i in enumerate(w))\n"
		 "    bad += int(err > 1e-4)\n"
		 "    kept += len(w)\n"
		 "print(bad, kept)\n",
		 ic);
	ck_assert_int_eq(py(script, out, sizeof out), 0);
	int bad, kept;
	ck_assert_msg(sscanf(out, "%d %d", &bad, &kept) == 2, "python printed: %s (%s)", out,
		      slurp("py.log"));
	ck_assert_int_eq(bad, 0);
	ck_assert_msg(kept > 600 && kept < 1800, "kept %d of 60000 at 1 in 50", kept);
}
END_TEST

/* ---- units: snapshot ---- */

/* GADGET's time unit, kpc / (km/s) in its own constants, in Myr (Julian) */
#define GADGET_T_MYR (3.085678e21 / 1e5 / 3.15576e13)

START_TEST(units_snapshot_needs_a_snapshot_entry)
{
	write_text("nosnap.yaml", "units: snapshot\n"
				  "bodies: [{name: p, model: plummer, count: 10}]\n"
				  "output: {frames: 2}\n");
	g_file = "nosnap.yaml";
	const char *want = "nosnap.yaml:1:8: units: expected a scene with a bodies entry of "
			   "model: snapshot for units: snapshot";
	ck_assert_int_eq(run("--dry-run", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), want), "dry run: %s", slurp("run.log"));
	ck_assert_int_eq(run("output.video=v.mp4", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), want), "run: %s", slurp("run.log"));
	ck_assert(!exists("v.mp4"));
}
END_TEST

/* The ring of in.hdf5 and a Plummer sphere, as a units: snapshot scene
 * (dt 5e-4 and the sphere's mass 0.01 in GADGET's units) and as the
 * galactic scene a user would write by hand (dt in Myr, mass in M_sun,
 * with GADGET's own constants): the same run. */
START_TEST(units_snapshot_keys_are_the_files_code_units)
{
	const char *rest = "bodies:\n"
			   "  - {name: gad, model: snapshot, file: in.hdf5}\n"
			   "  - {name: c, model: plummer, count: 30, mass: %.17g, scale: 1, "
			   "position: [20, 0, 0], velocity: [0, 40, 0]}\n"
			   "render: {width: 32, height: 24}\n"
			   "output: {frames: 6, final_state: %s}\n";
	char text[1024], fmt[1024];
	snprintf(fmt, sizeof fmt,
		 "units: snapshot\nsimulation: {solver: direct, softening: 0.3, dt: 5e-4, "
		 "steps_per_frame: 4}\n%s",
		 rest);
	snprintf(text, sizeof text, fmt, 0.01, "snap.csv");
	write_text("snap.yaml", text);
	const double msun_unit = 1.989e43 / (1.3271244e26 / 6.6743e-8); /* 1e10 M_sun, GADGET's */
	snprintf(fmt, sizeof fmt,
		 "units: galactic\nsimulation: {solver: direct, softening: 0.3, dt: %.17g, "
		 "steps_per_frame: 4}\n%s",
		 5e-4 * GADGET_T_MYR, rest);
	snprintf(text, sizeof text, fmt, 0.01 * msun_unit, "gal.csv");
	write_text("gal.yaml", text);
	g_file = "snap.yaml";
	ck_assert_int_eq(run(NULL), 0);
	g_file = "gal.yaml";
	ck_assert_int_eq(run(NULL), 0);
	double ms, mg, xs[3], xg[3], vs[3], vg[3];
	for (int i = 0; i < N1 + N2 + NP; i += 7) {
		ck_assert_int_eq(csv_body("snap.csv", i, &ms, xs, vs), N1 + N2 + NP);
		ck_assert_int_eq(csv_body("gal.csv", i, &mg, xg, vg), N1 + N2 + NP);
		ck_assert_double_eq_tol(ms * msun_unit, mg, 1e-7 * mg); /* code mass unit */
		for (int d = 0; d < 3; d++) {
			ck_assert_double_eq_tol(xs[d], xg[d], 1e-6 * (1 + fabs(xg[d]))); /* kpc */
			ck_assert_double_eq_tol(vs[d], vg[d], 1e-5 * (1 + fabs(vg[d]))); /* km/s */
		}
	}
	/* the bodies moved: the comparison is not of the initial state */
	ck_assert_int_eq(csv_body("gal.csv", N1 + N2, &mg, xg, vg), N1 + N2 + NP);
	ck_assert_msg(fabs(xg[1]) > 0.1, "the sphere's body 0 did not move: y = %g", xg[1]);
}
END_TEST

/* A file that gives its units (a length unit of 1 Mpc): they are the
 * scene's, in the dry run as in the run (the same line), and the
 * snapshots this scene writes are in them. */
START_TEST(the_files_own_units_rule_units_snapshot)
{
	write_input("mpc.hdf5", 3.085678e24);
	write_text("mpc.yaml", "units: snapshot\n"
			       "simulation: {solver: direct, softening: 3e-4, dt: 1e-6}\n"
			       "bodies: [{name: gad, model: snapshot, file: mpc.hdf5}]\n"
			       "render: {width: 32, height: 24}\n"
			       "output: {frames: 2}\n");
	g_file = "mpc.yaml";
	const char *line = "units: snapshot: the code units of bodies.0 (gad, from its Units "
			   "group): length 3.085678e+24 cm, mass 1.989e+43 g, velocity 100000 cm/s; "
			   "time unit 977792 Myr";
	char cmd[2 * PATH_MAX];
	for (int dry = 0; dry < 2; dry++) {
		snprintf(cmd, sizeof cmd,
			 "cd '%s' && '%s' mpc.yaml --backend cpu %s 2>%s.log >/dev/null", g_dir,
			 g_bin,
			 dry ? "--dry-run"
			     : "--set output.snapshots.dir=s --set output.snapshots.every=1 "
			       "--set output.final_state=full.csv",
			 dry ? "dry" : "run");
		ck_assert_int_eq(system(cmd), 0);
		const char *log = slurp(dry ? "dry.log" : "run.log");
		ck_assert_msg(strstr(log, line), "%s: %s", dry ? "dry run" : "run", log);
	}
	/* stored in the file's units: positions as in mpc.hdf5 (Mpc), and G
	 * in them */
	char full[PATH_MAX];
	snprintf(full, sizeof full, "%s/s/snap_000.hdf5", g_dir);
	hid_t f = H5Fopen(full, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	double L = 0, G = 0;
	hid_t a = H5Aopen_by_name(f, "Units", "UnitLength_in_cm", H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Aread(a, H5T_NATIVE_DOUBLE, &L), 0);
	H5Aclose(a);
	a = H5Aopen_by_name(f, "Header", "GravitationalConstant", H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Aread(a, H5T_NATIVE_DOUBLE, &G), 0);
	H5Aclose(a);
	H5Fclose(f);
	ck_assert_double_eq_tol(L, 3.085678e24, 1e9);
	/* G M T^2 / L^3 with M 1.989e43 g, T = L / V */
	const double T = 3.085678e24 / 1e5;
	ck_assert_double_eq_tol(G, 6.6743e-8 * 1.989e43 * T * T / (L * L * L), 1e-9 * G);
	ck_assert_double_eq_tol(G, 43.0220, 1e-3);
	size_t n;
	double *x = h5_doubles("s/snap_000.hdf5", "NbodyRender/InternalCoordinates", &n);
	ck_assert_uint_eq(n, 3 * (N1 + N2));
	/* body 0 at r = 3 Mpc: 3000 internal (kpc) units */
	ck_assert_double_eq_tol(hypot(x[0], x[1]), 3000 * 3.085678e24 / 3.0856775814913673e24, 1e-6);
	free(x);
	/* restarted from frame 0 in these units: the same final state */
	ck_assert_int_eq(run("output.final_state=r.csv", "--restart", "s/snap_000.hdf5", NULL), 0);
	char full_csv[64 * 1024];
	snprintf(full_csv, sizeof full_csv, "%s", slurp("full.csv"));
	ck_assert_msg(strlen(full_csv) > 1000, "full.csv is short");
	ck_assert_msg(strcmp(full_csv, slurp("r.csv")) == 0, "the restart's final state differs");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snap_gadget");
	TCase *tc = tcase_create("ids");
	tcase_add_checked_fixture(tc, ids_setup, ids_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, snapshot_scene_keeps_the_input_ids);
	tcase_add_test(tc, restart_reads_the_kept_ids_back);
	tcase_add_test(tc, restart_counts_only_its_own_frames_and_steps);
	tcase_add_test(tc, restart_refuses_other_softening);
	tcase_add_test(tc, units_snapshot_needs_a_snapshot_entry);
	tcase_add_test(tc, units_snapshot_keys_are_the_files_code_units);
	tcase_add_test(tc, the_files_own_units_rule_units_snapshot);
	suite_add_tcase(s, tc);
	if (!has_module("h5py") || !has_module("numpy")) {
		printf("SKIP: %s: %s does not import h5py and numpy (not run, not counted)\n",
		       __FILE__, python());
		return s;
	}
	TCase *tp = tcase_create("h5py");
	tcase_add_checked_fixture(tp, ids_setup, ids_teardown);
	tcase_add_checked_fixture(tp, nb_untrap_fpe, NULL);
	tcase_set_timeout(tp, 120);
	tcase_add_test(tp, every_snapshot_states_g);
	tcase_add_test(tp, gadget2_example_keeps_its_ids);
	suite_add_tcase(s, tp);
	return s;
}

NB_CHECK_MAIN(make_suite)
