/* test_snapshot.c - the writing side of snapshots (output.snapshots,
 * --restart, output.fits_dir), through the program (nb_bin()), every run
 * tiny and in a mkdtemp directory:
 *   - restart identity on the CPU: N frames in one run, and K frames plus
 *     a restart from the snapshot of frame K-1 for the rest, give the same
 *     final state CSV byte for byte and the same last snapshot's positions
 *     and velocities bit for bit (direct and Barnes-Hut);
 *   - a restart whose scene differs, a file that is not our snapshot, and
 *     a snapshot that leaves no frame are refused before any work (exit 2);
 *   - h5py and yt (Debian's python3-h5py, python3-yt) read the snapshot of
 *     the last frame: counts, total mass, a body's position and velocity
 *     and the time, with units, against the final state CSV of the same run;
 *   - astropy (python3-astropy) reads a FITS map: shape, dtype, keywords,
 *     and the map's integral = the mass in view;
 *   - a bad output.snapshots.dir is bad input naming the key, and a run that
 *     fails leaves no snapshot.
 * Cases needing a Python module are registered only when it imports
 * (/usr/bin/python3, or NB_PYTHON); otherwise SKIP is printed.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_snapshot
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_snapshot */
#include <hdf5.h>

#include "../sim/sim.h"
#include "check_main.h"
#include "test_snapshot_util.h"

/* ---- restart ---- */

/* Snapshots A and B hold the same positions and velocities, bit for bit
 * (the CSV's 9 digits would hide a last-bit difference). */
static void snaps_bit_identical(const char *a, const char *b)
{
	const char *sets[] = {"PartType1/Coordinates", "PartType2/Coordinates",
			      "PartType3/Coordinates", "PartType4/Coordinates",
			      "NbodyRender/InternalVelocities", "NbodyRender/InternalCoordinates"};
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		size_t na, nb;
		double *x = h5_doubles(a, sets[i], &na), *y = h5_doubles(b, sets[i], &nb);
		ck_assert_uint_eq(na, nb);
		ck_assert_msg(memcmp(x, y, na * sizeof *x) == 0, "%s differs between %s and %s",
			      sets[i], a, b);
		free(x);
		free(y);
	}
}

/* N = 8 frames at once, and 5 frames (snapshots every 4: frames 0, 4 and
 * the last, 4) plus a restart from snap_001 (frame 4) for frames 5..7:
 * the same final state, byte for byte. */
static void restart_identity(const char *solver)
{
	ck_assert_int_eq(run(solver, "output.final_state=full.csv", "output.snapshots.dir=fs",
			     "output.snapshots.every=7", NULL),
			 0);
	ck_assert_int_eq(run(solver, "output.frames=5", "output.final_state=k.csv",
			     "output.snapshots.dir=snaps", "output.snapshots.every=4", NULL),
			 0);
	ck_assert(exists("snaps/snap_000.hdf5") && exists("snaps/snap_001.hdf5"));
	ck_assert_int_eq(count("snaps", "snap_"), 2);
	ck_assert_int_eq(run(solver, "output.final_state=r.csv", "output.stats=r-stats.csv",
			     "output.snapshots.dir=rs", "output.snapshots.every=7", "--restart",
			     "snaps/snap_001.hdf5", NULL),
			 0);
	/* frame 7 (the last) is snapshot 1 of both: the same bits */
	ck_assert_int_eq(count("rs", "snap_"), 1);
	snaps_bit_identical("fs/snap_001.hdf5", "rs/snap_001.hdf5");
	char a[256 * 1024], b[256 * 1024];
	snprintf(a, sizeof a, "%s", slurp("full.csv"));
	snprintf(b, sizeof b, "%s", slurp("r.csv"));
	ck_assert_msg(strlen(a) > 1000, "full.csv is short: %zu bytes", strlen(a));
	ck_assert_msg(strcmp(a, b) == 0, "the restarted run's final state differs (%s)", solver);
	ck_assert_msg(strcmp(a, slurp("k.csv")) != 0, "K frames already gave the final state?");
	/* the restart rendered frames 5, 6, 7: three statistics rows */
	const char *st = slurp("r-stats.csv");
	int rows = 0;
	for (const char *p = st; *p; p++)
		rows += *p == '\n';
	ck_assert_int_eq(rows, 1 + 3);
	ck_assert_msg(strncmp(strchr(st, '\n') + 1, "5,", 2) == 0, "first row: %s", st);
}

START_TEST(restart_is_bit_identical_direct)
{
	restart_identity("simulation.solver=direct");
}
END_TEST

START_TEST(restart_is_bit_identical_barnes_hut)
{
	restart_identity("simulation.solver=barnes-hut");
}
END_TEST

/* A run of one frame has one snapshot, frame 0; its restart renders
 * frames 1..7 and ends where one run of 8 frames does. */
START_TEST(restart_from_frame_zero)
{
	ck_assert_int_eq(run("output.final_state=full.csv", NULL), 0);
	ck_assert_int_eq(run("output.frames=1", "output.snapshots.dir=snaps", NULL), 0);
	ck_assert_int_eq(count("snaps", "snap_"), 1);
	ck_assert_int_eq(run("output.final_state=r.csv", "output.png_dir=png", "--restart",
			     "snaps/snap_000.hdf5", NULL),
			 0);
	char a[256 * 1024];
	snprintf(a, sizeof a, "%s", slurp("full.csv"));
	ck_assert_msg(strcmp(a, slurp("r.csv")) == 0, "the restart from frame 0 differs");
	/* frames 1..7 only, numbered as in the whole run */
	ck_assert_int_eq(count("png", "frame_"), 7);
	ck_assert(!exists("png/frame_00000.png") && exists("png/frame_00007.png"));
}
END_TEST

/* simulation.opening: mass is written as its word ("Opening") and checked
 * by --restart like the others: a restart under bmax is refused, one under
 * mass goes on. */
START_TEST(restart_checks_opening_mass)
{
	ck_assert_int_eq(run("simulation.solver=barnes-hut", "simulation.opening=mass",
			     "output.frames=5", "output.snapshots.dir=snaps",
			     "output.snapshots.every=4", NULL),
			 0);
	ck_assert_int_eq(run("simulation.solver=barnes-hut", "--restart", "snaps/snap_001.hdf5",
			     NULL),
			 2);
	ck_assert_msg(strstr(slurp("run.log"), "simulation.opening mass, the scene says bmax"),
		      "%s", slurp("run.log"));
	ck_assert_int_eq(run("simulation.solver=barnes-hut", "simulation.opening=mass",
			     "--restart", "snaps/snap_001.hdf5", NULL),
			 0);
}
END_TEST

START_TEST(restart_mismatch_is_bad_input)
{
	ck_assert_int_eq(run("output.frames=5", "output.snapshots.dir=snaps",
			     "output.snapshots.every=4", "output.final_state=k.csv", NULL),
			 0);
	ck_assert_int_eq(run("simulation.dt=0.25", "output.final_state=r.csv", "--restart",
			     "snaps/snap_001.hdf5", NULL),
			 2);
	ck_assert_msg(strstr(slurp("run.log"), "simulation.dt 0.5, the scene says 0.25"), "%s",
		      slurp("run.log"));
	ck_assert(!exists("r.csv"));
	ck_assert_int_eq(run("bodies.1.count=71", "--restart", "snaps/snap_001.hdf5", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "bodies"), "%s", slurp("run.log"));
	ck_assert_int_eq(run("bodies.1.mass=2e9", "--restart", "snaps/snap_001.hdf5", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "mass"), "%s", slurp("run.log"));
	ck_assert_int_eq(run("output.frames=5", "--restart", "snaps/snap_001.hdf5", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "no frame is left"), "%s", slurp("run.log"));
	ck_assert_int_eq(run("--restart", "k.csv", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "not an HDF5 file"), "%s", slurp("run.log"));
	ck_assert_int_eq(run("--restart", "absent.hdf5", NULL), 2);
	/* --dry-run says what a restart would render */
	ck_assert_int_eq(run("--dry-run", "--restart", "snaps/snap_001.hdf5", NULL), 0);
}
END_TEST

/* ---- ownership ---- */

START_TEST(snapshot_dir_collision_is_bad_input)
{
	ck_assert_int_eq(run("output.snapshots.dir=same", "output.png_dir=same", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "output.snapshots.dir"), "%s", slurp("run.log"));
	ck_assert_int_eq(run("output.fits_dir=v.mp4", "output.video=v.mp4", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "output.fits_dir"), "%s", slurp("run.log"));
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s/pipe", g_dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_int_eq(run("output.snapshots.dir=pipe", NULL), 2);
	ck_assert_msg(strstr(slurp("run.log"), "output.snapshots.dir: pipe is a FIFO"), "%s",
		      slurp("run.log"));
}
END_TEST

/* Interrupted (SIGINT, exit 130) after its third snapshot, a run keeps its
 * snapshots, none partial, and a restart from the last one ends where one
 * uninterrupted run does. */
START_TEST(interrupted_run_keeps_snapshots_for_restart)
{
	ck_assert_int_eq(run("output.frames=60", "output.final_state=full.csv", NULL), 0);
	pid_t pid = spawn("output.frames=60", "output.snapshots.dir=snaps",
			  "output.snapshots.every=2", "output.final_state=never.csv", NULL);
	for (int i = 0; i < 3000 && !exists("snaps/snap_002.hdf5"); i++)
		usleep(10000);
	ck_assert_msg(exists("snaps/snap_002.hdf5"), "no third snapshot after 30 s");
	ck_assert_int_eq(kill(pid, SIGINT), 0);
	int rc = wait_exit(pid);
	if (rc == 0) { /* it finished first: nothing to test on this machine */
		printf("interrupted_run_keeps_snapshots_for_restart: the run ended before SIGINT\n");
		return;
	}
	ck_assert_int_eq(rc, 130);
	int n = count("snaps", "snap_");
	ck_assert_int_ge(n, 3);
	ck_assert_int_eq(count("snaps", "partial"), 0);
	ck_assert(!exists("never.csv"));
	char last[64];
	snprintf(last, sizeof last, "snaps/snap_%03d.hdf5", n - 1);
	ck_assert_int_eq(run("output.frames=60", "output.final_state=r.csv", "--restart", last, NULL),
			 0);
	char a[256 * 1024];
	snprintf(a, sizeof a, "%s", slurp("full.csv"));
	ck_assert_msg(strcmp(a, slurp("r.csv")) == 0, "restart from %s differs", last);
}
END_TEST

/* The directories hold this run's files: a run of 8 frames, then one of
 * 4 in the same directories; other names stay. */
START_TEST(dirs_hold_exactly_this_runs_files)
{
	ck_assert_int_eq(run("output.snapshots.dir=snaps", "output.snapshots.every=3",
			     "output.fits_dir=fits", NULL),
			 0);
	ck_assert_int_eq(count("snaps", "snap_"), 4); /* frames 0, 3, 6, 7 */
	ck_assert_int_eq(count("fits", "frame_"), 8);
	char keep[PATH_MAX];
	snprintf(keep, sizeof keep, "%s/snaps/snap_7.hdf5", g_dir); /* not our name */
	FILE *f = fopen(keep, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(run("output.frames=4", "output.snapshots.dir=snaps",
			     "output.snapshots.every=3", "output.fits_dir=fits", NULL),
			 0);
	ck_assert_int_eq(count("snaps", "snap_0"), 2); /* frames 0, 3 */
	ck_assert(exists("snaps/snap_000.hdf5") && exists("snaps/snap_001.hdf5"));
	ck_assert(exists("snaps/snap_7.hdf5"));
	ck_assert_int_eq(count("fits", "frame_"), 4);
	ck_assert(!exists("fits/frame_00004.fits"));
}
END_TEST

/* The energy check stops the run at frame 1 (exit 1): the snapshot of
 * frame 0 and the FITS map of frame 0 were in place, and are removed. */
START_TEST(failed_run_leaves_no_snapshot)
{
	ck_assert_int_eq(run("simulation.max_energy_error=1e-15", "output.snapshots.dir=snaps",
			     "output.snapshots.every=1", "output.fits_dir=fits", NULL),
			 1);
	ck_assert_int_eq(count("snaps", "snap_"), 0);
	ck_assert_int_eq(count("snaps", "partial"), 0);
	ck_assert_int_eq(count("fits", "frame_"), 0);
	ck_assert_int_eq(count("fits", "partial"), 0);
}
END_TEST

/* ---- readers ---- */

START_TEST(h5py_reads_the_state)
{
	ck_assert_int_eq(run("output.final_state=fin.csv", "output.snapshots.dir=snaps",
			     "output.snapshots.every=3", NULL),
			 0);
	/* frames 0, 3, 6 and the last, 7: snap_003 is the final state */
	ck_assert_int_eq(count("snaps", "snap_"), 4);
	double mass, x[3], v[3];
	ck_assert_int_eq(csv_body("fin.csv", 217, &mass, x, v), 460);
	char out[4096];
	ck_assert_int_eq(
		py("import h5py, numpy as np\n"
		   "f = h5py.File('snaps/snap_003.hdf5', 'r')\n"
		   "h = f['Header'].attrs\n"
		   "n = [int(c) for c in h['NumPart_ThisFile']]\n"
		   "m = sum(f['PartType%d/Masses' % t][:].sum() for t in range(6) if n[t])\n"
		   "t = [t for t in range(6) if n[t] and 217 in f['PartType%d/ParticleIDs' % t][:]][0]\n"
		   "k = list(f['PartType%d/ParticleIDs' % t][:]).index(217)\n"
		   "x = f['PartType%d/Coordinates' % t][k] - f['NbodyRender'].attrs['CoordinateOffset']\n"
		   "v = f['PartType%d/Velocities' % t][k]\n"
		   "u = f['Units'].attrs\n"
		   "print(*n, m, t, *x, *v, h['Time'], h['Time_SceneUnits'],\n"
		   "      u['Unit length in cgs (U_L)'], u['Unit mass in cgs (U_M)'],\n"
		   "      f['PartType2/Coordinates'].dtype == np.float64,\n"
		   "      f['NbodyRender'].attrs['Frame'], f['NbodyRender'].attrs['ComponentNames'][0].decode(),\n"
		   "      f['PartType2'].attrs['ComponentNames'][0].decode())\n",
		   out, sizeof out),
		0);
	int n[6], type, frame;
	double m, px[3], pv[3], time, tscene, ul, um;
	char comp[64], comp2[64];
	char tf[8];
	ck_assert_msg(sscanf(out, "%d %d %d %d %d %d %lf %d %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %5s %d %63s %63s",
			     &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &m, &type, &px[0], &px[1],
			     &px[2], &pv[0], &pv[1], &pv[2], &time, &tscene, &ul, &um, tf, &frame,
			     comp, comp2) == 22,
		      "h5py printed: %s (%s)", out, slurp("py.log"));
	printf("h5py: %s", out);
	/* halo 200, disk 150, bulge 40, the cluster 70 as "other" */
	ck_assert_int_eq(n[0], 0);
	ck_assert_int_eq(n[1], 200);
	ck_assert_int_eq(n[2], 150);
	ck_assert_int_eq(n[3], 40);
	ck_assert_int_eq(n[4], 70);
	ck_assert_close(m * 1e10, mass, 0, 1e-8); /* 1e10 M_sun, against %.9g sums */
	for (int d = 0; d < 3; d++) {
		ck_assert_close(px[d], x[d], 1e-7, 1e-8); /* kpc */
		ck_assert_close(pv[d], v[d], 1e-6, 1e-8); /* km/s */
	}
	ck_assert_close(tscene, 7 * 3 * 0.5, 1e-12, 1e-12); /* Myr */
	ck_assert_close(time * 977.792221, tscene, 0, 1e-6); /* kpc/(km/s) in Myr */
	ck_assert_close(ul, 3.0856775814913673e21, 0, 1e-15);
	ck_assert_close(um, 1.98841e43, 0, 1e-15);
	ck_assert_str_eq(tf, "True");
	ck_assert_int_eq(frame, 7);
	ck_assert_str_eq(comp, "g.disk");
	ck_assert_str_eq(comp2, "g.disk");
}
END_TEST

START_TEST(yt_reads_the_state_with_units)
{
	ck_assert_int_eq(run("output.final_state=fin.csv", "output.snapshots.dir=snaps",
			     "output.snapshots.every=3", NULL),
			 0);
	double mass, x[3], v[3];
	ck_assert_int_eq(csv_body("fin.csv", 5, &mass, x, v), 460);
	char out[4096];
	int rc = py("import yt, numpy as np\n"
		    "yt.set_log_level(50)\n"
		    "ds = yt.load('snaps/snap_003.hdf5')\n"
		    "ad = ds.all_data()\n"
		    "ids = ad['all', 'particle_index'].v\n"
		    "k = int(np.where(ids == 5)[0][0])\n"
		    "off = ds.arr(ds.parameters['BoxSize'] / 2, 'code_length')\n"
		    "x = (ad['all', 'particle_position'][k] - off).to('kpc').v\n"
		    "v = ad['all', 'particle_velocity'][k].to('km/s').v\n"
		    "print(type(ds).__name__, len(ids), ad['all', 'particle_mass'].sum().to('Msun').v,\n"
		    "      *x, *v, ds.current_time.to('Myr').v)\n",
		    out, sizeof out);
	ck_assert_msg(rc == 0, "yt failed: %s", slurp("py.log"));
	char cls[64];
	int n;
	double m, px[3], pv[3], t;
	ck_assert_msg(sscanf(out, "%63s %d %lf %lf %lf %lf %lf %lf %lf %lf", cls, &n, &m, &px[0],
			     &px[1], &px[2], &pv[0], &pv[1], &pv[2], &t) == 10,
		      "yt printed: %s", out);
	printf("yt: %s", out);
	ck_assert_str_eq(cls, "GadgetHDF5Dataset");
	ck_assert_int_eq(n, 460);
	ck_assert_close(m, mass, 0, 1e-8);
	for (int d = 0; d < 3; d++) {
		ck_assert_close(px[d], x[d], 1e-7, 1e-8);
		ck_assert_close(pv[d], v[d], 1e-6, 1e-8);
	}
	ck_assert_close(t, 7 * 3 * 0.5, 0, 1e-6); /* yt's kpc/(km/s) against our Myr */
}
END_TEST

/* Every body of a Plummer sphere in view, render.mode density, no glow or
 * wing: each plane's integral is the mass. */
START_TEST(astropy_reads_the_fits_map)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/fits.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("units: galactic\n"
	      "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 3}\n"
	      "bodies: [{name: c, model: plummer, count: 300, mass: 1e9, scale: 1, rmax: 5}]\n"
	      "camera: {fov: 45, keys: [{frame: 0, position: [0, -200, 0], target: [0, 0, 0]}]}\n"
	      "render: {width: 64, height: 48, mode: density, glow: 0, psf_wing: 0, diffuse: 0}\n"
	      "output: {frames: 3, fits_dir: fits}\n",
	      f);
	fclose(f);
	g_file = "fits.yaml";
	ck_assert_int_eq(run(NULL), 0);
	ck_assert_int_eq(count("fits", "frame_"), 3);
	char out[4096];
	int rc = py("from astropy.io import fits\n"
		    "h = fits.open('fits/frame_00002.fits')\n"
		    "d = h[0].data; H = h[0].header\n"
		    "print(*d.shape, d.dtype.name, H['BUNIT'].replace(' ', '_'), H['CUNIT1'], H['CDELT1'],\n"
		    "      H['CDELT2'], H['SIMTIME'], H['TIMEUNIT'], H['FRAME'],\n"
		    "      *(d.astype('f8').sum(axis=(1, 2)) * H['CDELT1'] * H['CDELT2']))\n",
		    out, sizeof out);
	ck_assert_msg(rc == 0, "astropy failed: %s", slurp("py.log"));
	printf("astropy: %s", out);
	int z, y, xx, frame;
	char dt[32], bunit[64], cunit[16], tunit[16];
	double c1, c2, t, s[3];
	ck_assert_msg(sscanf(out, "%d %d %d %31s %63s %15s %lf %lf %lf %15s %d %lf %lf %lf", &z, &y,
			     &xx, dt, bunit, cunit, &c1, &c2, &t, tunit, &frame, &s[0], &s[1],
			     &s[2]) == 14,
		      "astropy printed: %s", out);
	ck_assert_int_eq(z, 3);
	ck_assert_int_eq(y, 48);
	ck_assert_int_eq(xx, 64);
	ck_assert_str_eq(dt, "float32");
	ck_assert_str_eq(bunit, "solMass_kpc-2");
	ck_assert_str_eq(cunit, "kpc");
	/* 200 kpc away, fov 45 degrees (the default) over 48 rows */
	double pix = 200.0 * tan(0.5 * 45.0 * M_PI / 180.0) / 24.0;
	ck_assert_close(c1, pix, 0, 1e-9);
	ck_assert_close(c2, pix, 0, 1e-9);
	ck_assert_close(t, 2 * 3 * 0.5, 0, 1e-12);
	ck_assert_str_eq(tunit, "Myr");
	ck_assert_int_eq(frame, 2);
	for (int c = 0; c < 3; c++)
		ck_assert_close(s[c], 1e9, 0, 1e-5); /* float pixels */
}
END_TEST

/* Angular maps: the scene of a Plummer sphere (1e9 M_sun) and one body of
 * 1e9 M_sun at (10, 5, 3) kpc, the camera at the origin looking along +y
 * with +z up, in density mode, so the light is mass. astropy maps pixels
 * to the camera's longitude and latitude through the header's WCS alone;
 * the check script computes each pixel's solid angle from the WCS (CAR:
 * dlon x (sin lat_top - sin lat_bottom) at the pixel's edges; ARC: the
 * spherical quadrilateral of its four corners, as two triangles by the
 * Van Oosterom-Strackee formula) and prints the map's integral and the
 * light-weighted direction of the body (the centroid of the 7 x 7 pixels
 * round the brightest, in unit vectors). Independent expectations: the
 * integral is all the mass in view, 2e9; the body's direction follows from
 * its offset (right = x, up = z, forward = y): equirectangular lon =
 * atan2(10, 5) = 63.43, lat = atan2(3, sqrt(125)) = 15.02; fisheye
 * (docs/snapshots.md: longitude 0 at the top, 90 at the left) theta =
 * acos(5 / sqrt(134)) = 64.41 from the axis, so lat 25.59, and it lies
 * right 10 and up 3 of the centre: lon 360 - atan2(10, 3) = 286.70. */
static void angular_map(const char *camera, const char *size, const char *sphere_at, double *sum,
			double *lon, double *lat, char *ctype, char *bunit)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/ang.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f,
		"units: galactic\n"
		"simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 1}\n"
		"bodies:\n"
		"  - {name: c, model: plummer, count: 300, mass: 1e9, scale: 1, rmax: 5, position: %s}\n"
		"  - {name: b, model: plummer, count: 1, mass: 1e9, position: [10, 5, 3]}\n"
		"camera: {%s, keys: [{frame: 0, position: [0, 0, 0], target: [0, 10, 0]}], up: [0, 0, 1]}\n"
		"render: {%s, mode: density, glow: 0, psf_wing: 0, diffuse: 0}\n"
		"output: {frames: 2, fits_dir: fits}\n",
		sphere_at, camera, size);
	fclose(f);
	g_file = "ang.yaml";
	ck_assert_int_eq(run(NULL), 0);
	char out[4096];
	int rc = py("import numpy as np, warnings\n"
		    "from astropy.io import fits\n"
		    "from astropy.wcs import WCS\n"
		    "warnings.simplefilter('ignore')\n"
		    "h = fits.open('fits/frame_00000.fits'); H = h[0].header\n"
		    "d = h[0].data.astype('f8')[0]\n"
		    "w = WCS(H, naxis=2); ny, nx = d.shape\n"
		    "def vec(px, py):\n"
		    "    lo, la = w.wcs_pix2world(px, py, 0)\n"
		    "    lo, la = np.radians(lo), np.radians(la)\n"
		    "    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], -1)\n"
		    "def tri(a, b, c):\n"
		    "    n = np.abs(np.einsum('...i,...i', a, np.cross(b, c)))\n"
		    "    dd = 1 + np.einsum('...i,...i', a, b) + np.einsum('...i,...i', b, c) + np.einsum('...i,...i', c, a)\n"
		    "    return 2 * np.arctan2(n, dd)\n"
		    "X, Y = np.meshgrid(np.arange(nx, dtype='f8'), np.arange(ny, dtype='f8'))\n"
		    "if H['CTYPE1'].endswith('CAR'):\n"
		    "    la_t = np.radians(w.wcs_pix2world(X, Y + 0.5, 0)[1]); la_b = np.radians(w.wcs_pix2world(X, Y - 0.5, 0)[1])\n"
		    "    om = np.radians(abs(H['CDELT1'])) * (np.sin(la_t) - np.sin(la_b))\n"
		    "else:\n"
		    "    a = vec(X - .5, Y - .5); b = vec(X + .5, Y - .5); c = vec(X + .5, Y + .5); e = vec(X - .5, Y + .5)\n"
		    "    om = tri(a, b, c) + tri(a, c, e)\n"
		    "    om[~np.isfinite(om)] = 0\n"
		    "L = d * om; j, i = np.unravel_index(np.argmax(L), L.shape)\n"
		    "sl = (slice(j - 3, j + 4), slice(i - 3, i + 4))\n"
		    "v = (L[sl][..., None] * vec(X[sl], Y[sl])).sum((0, 1)); v /= np.linalg.norm(v)\n"
		    "print(L.sum(), np.degrees(np.arctan2(v[1], v[0])) % 360, np.degrees(np.arcsin(v[2])),\n"
		    "      H['CTYPE1'], H['BUNIT'].replace(' ', '_'))\n",
		    out, sizeof out);
	ck_assert_msg(rc == 0, "astropy failed: %s", slurp("py.log"));
	printf("astropy (%s): %s", camera, out);
	ck_assert_msg(sscanf(out, "%lf %lf %lf %31s %63s", sum, lon, lat, ctype, bunit) == 5,
		      "astropy printed: %s", out);
}

START_TEST(astropy_reads_angular_fits_maps)
{
	double sum, lon, lat;
	char ctype[32], bunit[64];
	/* equirectangular, the camera inside the sphere: every body in view */
	angular_map("projection: equirectangular", "width: 512, height: 256", "[0, 0, 0]", &sum, &lon,
		    &lat, ctype, bunit);
	ck_assert_str_eq(ctype, "CMLN-CAR");
	ck_assert_str_eq(bunit, "solMass_sr-1");
	ck_assert_close(sum, 2e9, 0, 1e-4);
	/* 0.7 degree pixels (512 x 256): the centroid within a fifth of one */
	ck_assert_close(lon, atan2(10, 5) * 180 / M_PI, 0.15, 0);
	ck_assert_close(lat, atan2(3, sqrt(125.0)) * 180 / M_PI, 0.15, 0);
	/* fisheye, 180 degrees, the sphere 50 kpc ahead: every body in view */
	angular_map("projection: fisheye", "width: 512, height: 512", "[0, 50, 0]", &sum, &lon, &lat,
		    ctype, bunit);
	ck_assert_str_eq(ctype, "CMLN-ARC");
	ck_assert_close(sum, 2e9, 0, 1e-3);
	ck_assert_close(lon, 360 - atan2(10, 3) * 180 / M_PI, 0.15, 0);
	ck_assert_close(lat, 90 - acos(5 / sqrt(134.0)) * 180 / M_PI, 0.15, 0);
}
END_TEST

/* yt plots a snapshot as it is (issue 29): BoxSize holds every body (the
 * positions offset by BoxSize / 2 into the box), and ParticleProjectionPlot
 * with no options draws all the mass, centred where the bodies are: the
 * plot's buffer (mass per pixel; empty pixels NaN) holds the total mass, and its
 * mass-weighted centre is the bodies' centre of mass projected on the
 * domain (from the final state CSV, independent of yt), within a pixel. */
START_TEST(yt_plots_the_snapshot_without_options)
{
	ck_assert_int_eq(run("output.final_state=fin.csv", "output.snapshots.dir=snaps",
			     "output.snapshots.every=3", NULL),
			 0);
	double com[3] = {0}, mtot = 0;
	char path[PATH_MAX], line[1024];
	snprintf(path, sizeof path, "%s/fin.csv", g_dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
	int n = 0;
	for (double m, x[3]; fgets(line, sizeof line, f); n++) {
		ck_assert(sscanf(line, "%*u,%*[^,],%lf,%lf,%lf,%lf", &m, &x[0], &x[1], &x[2]) == 4);
		mtot += m;
		for (int d = 0; d < 3; d++)
			com[d] += m * x[d];
	}
	fclose(f);
	ck_assert_int_eq(n, 460);
	char out[4096];
	int rc = py("import yt, numpy as np\n"
		    "yt.set_log_level(50)\n"
		    "ds = yt.load('snaps/snap_003.hdf5')\n"
		    "p = yt.ParticleProjectionPlot(ds, 'z', ('all', 'particle_mass'))\n"
		    "p.save('proj.png')\n"
		    "b = p.frb[('all', 'particle_mass')]\n"
		    "a = np.nan_to_num(np.asarray(b.to('Msun').v, 'f8')); ny, nx = a.shape\n"
		    "(x0, x1), (y0, y1) = [(float(e[0].to('kpc')), float(e[1].to('kpc'))) for e in (p.xlim, p.ylim)]\n"
		    "j, i = np.mgrid[0:ny, 0:nx]\n"
		    "cx = x0 + (i + 0.5).ravel() @ a.ravel() / a.sum() * (x1 - x0) / nx\n"
		    "cy = y0 + (j + 0.5).ravel() @ a.ravel() / a.sum() * (y1 - y0) / ny\n"
		    "print(ds.parameters['BoxSize'], a.sum(), cx, cy, (x1 - x0) / nx,\n"
		    "      float(ds.domain_left_edge[0]), float(ds.domain_right_edge[0]))\n",
		    out, sizeof out);
	ck_assert_msg(rc == 0, "yt failed: %s", slurp("py.log"));
	printf("yt plot: %s", out);
	double box, msum, cx, cy, pix, le, re;
	ck_assert_msg(sscanf(out, "%lf %lf %lf %lf %lf %lf %lf", &box, &msum, &cx, &cy, &pix, &le,
			     &re) == 7,
		      "yt printed: %s", out);
	ck_assert(exists("proj.png"));
	ck_assert_msg(box > 0 && le == 0 && re == box, "BoxSize %g, domain [%g, %g]", box, le, re);
	ck_assert_close(msum, mtot, 0, 1e-3); /* all the mass in the plot */
	ck_assert_close(cx, com[0] / mtot + box / 2, pix, 0);
	ck_assert_close(cy, com[1] / mtot + box / 2, pix, 0);
}
END_TEST

/* ---- what FITS maps and snapshots say (issue 29) ---- */

/* A camera that moves: keys at frames 0 and 2 (a key frame holds exactly
 * its key's values), fov 30, up +z. Maps and snapshots of frame 2. */
static void cam_scene(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/cam.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("units: galactic\n"
	      "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 1}\n"
	      "bodies: [{name: c, model: plummer, count: 200, mass: 1e9, scale: 1, rmax: 5}]\n"
	      "camera: {fov: 30, up: [0, 0, 1], keys: [{frame: 0, position: [0, -200, 0], target: [0, 0, 0]},\n"
	      "  {frame: 2, position: [50, -150, 20], target: [1, 2, 3]}]}\n"
	      "render: {width: 64, height: 48, glow: 0, psf_wing: 0, diffuse: 0}\n"
	      "output: {frames: 3}\n",
	      f);
	fclose(f);
	g_file = "cam.yaml";
}

/* FITS map DIR/frame_00002.fits read by astropy: BUNIT ('-' when absent),
 * BTYPE, CAMPOS, CAMTGT, CAMUP, CAMFOV, CAMPROJ; into out. */
static void fits_says(const char *dir, char *out, size_t cap)
{
	char script[2048];
	snprintf(script, sizeof script,
		 "from astropy.io import fits\n"
		 "H = fits.open('%s/frame_00002.fits')[0].header\n"
		 "w = lambda s: str(s).replace(' ', '_')\n"
		 "print(w(H.get('BUNIT', '-')), w(H['BTYPE']),\n"
		 "      *[H['CAM%%s%%s' %% (q, a)] for q in ('POS', 'TGT', 'UP') for a in 'XYZ'],\n"
		 "      H['CAMFOV'], H['CAMPROJ'])\n",
		 dir);
	int rc = py(script, out, cap);
	ck_assert_msg(rc == 0, "astropy failed: %s", slurp("py.log"));
	printf("astropy %s: %s", dir, out);
}

/* The camera keys of cam_scene's frame 2, as printed by fits_says or
 * h5py (9 numbers, fov, projection) after two words. */
static void camera_is_frame_2(const char *out, int words)
{
	double v[10];
	char w[3][64], proj[32];
	const char *fmt = words ? "%63s %63s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %31s"
				: "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %31s";
	int n = words ? sscanf(out, fmt, w[0], w[1], &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			       &v[6], &v[7], &v[8], &v[9], proj)
		      : sscanf(out, fmt, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
			       &v[8], &v[9], proj);
	ck_assert_msg(n == (words ? 13 : 11), "printed: %s", out);
	const double want[10] = {50, -150, 20, 1, 2, 3, 0, 0, 1, 30};
	for (int i = 0; i < 10; i++)
		ck_assert_close(v[i], want[i], 0, 1e-12);
	ck_assert_str_eq(proj, "perspective");
}

START_TEST(fits_bunit_and_camera_tell_the_truth)
{
	cam_scene();
	ck_assert_int_eq(run("output.fits_dir=light", "output.snapshots.dir=snaps",
			     "output.snapshots.every=2", NULL),
			 0);
	ck_assert_int_eq(run("output.fits_dir=mass", "render.mode=density", NULL), 0);
	ck_assert_int_eq(run("output.fits_dir=speed", "render.color_by=speed", NULL), 0);
	char out[4096], a[64], b[64];
	/* components (the default): light, not a mass surface density */
	fits_says("light", out, sizeof out);
	ck_assert(sscanf(out, "%63s %63s", a, b) == 2);
	ck_assert_str_eq(a, "relative");
	ck_assert_str_eq(b, "light");
	camera_is_frame_2(out, 1);
	fits_says("speed", out, sizeof out);
	ck_assert(sscanf(out, "%63s %63s", a, b) == 2);
	ck_assert_str_eq(a, "relative");
	ck_assert_str_eq(b, "light");
	fits_says("mass", out, sizeof out);
	ck_assert(sscanf(out, "%63s %63s", a, b) == 2);
	ck_assert_str_eq(a, "solMass_kpc-2");
	ck_assert_str_eq(b, "mass_surface_density");
	camera_is_frame_2(out, 1);
}
END_TEST

/* /Camera of snapshot 1 (frame 2), by h5py: Position, Target, Up (in the
 * snapshot's frame: minus CoordinateOffset), FieldOfView, Projection;
 * also from a run that draws nothing (the camera computed for the
 * snapshot alone). */
START_TEST(snapshot_camera_is_the_frames)
{
	cam_scene();
	ck_assert_int_eq(run("output.fits_dir=light", "output.snapshots.dir=snaps",
			     "output.snapshots.every=2", NULL),
			 0);
	ck_assert_int_eq(run("output.snapshots.dir=bare", "output.snapshots.every=2", NULL), 0);
	const char *dirs[2] = {"snaps", "bare"};
	for (int k = 0; k < 2; k++) {
		char script[2048], out[4096];
		snprintf(script, sizeof script,
			 "import h5py, numpy as np\n"
			 "f = h5py.File('%s/snap_001.hdf5', 'r')\n"
			 "c = f['Camera'].attrs\n"
			 "o = f['NbodyRender'].attrs.get('CoordinateOffset', np.zeros(3))\n"
			 "print(*(c['Position'] - o), *(c['Target'] - o), *c['Up'], c['FieldOfView'],\n"
			 "      c['Projection'].decode(), f['NbodyRender'].attrs['Frame'])\n",
			 dirs[k]);
		ck_assert_msg(py(script, out, sizeof out) == 0, "h5py failed: %s", slurp("py.log"));
		printf("h5py %s: %s", dirs[k], out);
		camera_is_frame_2(out, 0);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("cpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, restart_is_bit_identical_direct);
	tcase_add_test(tc, restart_is_bit_identical_barnes_hut);
	tcase_add_test(tc, restart_from_frame_zero);
	tcase_add_test(tc, restart_mismatch_is_bad_input);
	tcase_add_test(tc, restart_checks_opening_mass);
	tcase_add_test(tc, snapshot_dir_collision_is_bad_input);
	tcase_add_test(tc, failed_run_leaves_no_snapshot);
	tcase_add_test(tc, dirs_hold_exactly_this_runs_files);
	tcase_add_test(tc, interrupted_run_keeps_snapshots_for_restart);
	suite_add_tcase(s, tc);
	const char *mods[] = {"h5py", "yt", "astropy", "astropy", "astropy", "h5py", "yt"};
	const TTest *tests[] = {h5py_reads_the_state, yt_reads_the_state_with_units,
				astropy_reads_the_fits_map, astropy_reads_angular_fits_maps,
				fits_bunit_and_camera_tell_the_truth, snapshot_camera_is_the_frames,
				yt_plots_the_snapshot_without_options};
	for (int i = 0; i < 7; i++) {
		if (!has_module(mods[i])) {
			printf("SKIP: %s: %s does not import %s (Debian: python3-%s; not run, not "
			       "counted)\n",
			       __FILE__, python(), mods[i], mods[i]);
			continue;
		}
		TCase *t = tcase_create(mods[i]);
		tcase_add_checked_fixture(t, setup, teardown);
		/* third-party numerical code runs in the child: no FP traps */
		tcase_add_checked_fixture(t, nb_untrap_fpe, NULL);
		tcase_set_timeout(t, 300);
		tcase_add_test(t, tests[i]);
		suite_add_tcase(s, t);
	}
	return s;
}

NB_CHECK_MAIN(make_suite)
