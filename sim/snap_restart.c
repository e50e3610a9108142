/* snap_restart.c - --restart: read back a snapshot this program wrote
 * (output/snap_write.c; layout sim/snap_format.h) and put its state into
 * the bodies a scene builds. It reads exactly that format and nothing
 * else (GADGET files of other codes are model: snapshot's business); it
 * may later share code with that general reader.
 *
 * What must match (docs/snapshots.md): the format version; the units;
 * simulation.dt and steps_per_frame (a frame's time); the force keys
 * (solver, softening, theta, multipoles, opening); the bodies: their
 * number, the components by name and count in order, and every mass bit
 * for bit as the scene makes it; and the snapshot's frame must leave
 * frames to render (frame < output.frames - 1). Camera, render, overlay
 * and output keys, simulation.backend, direct_kernel and max_energy_error
 * may differ.
 *
 * Exactness: positions, velocities and the time come back as the internal
 * doubles the run held (positions and nbody velocities are stored in
 * internal units; galactic velocities, stored in km/s, come from
 * NbodyRender/InternalVelocities). Accelerations are not stored: the
 * engine recomputes them from the positions with the same force code, as
 * the run did at the end of that frame's last step. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snap_format.h"
#include "snap_internal.h"

/* Close ID with CLOSE when it is open (>= 0). */
static void close_if(hid_t id, herr_t (*close)(hid_t))
{
	if (id >= 0)
		close(id);
}

/* An attribute of loc read as type (n values). 0 or -1. */
static int attr_read(hid_t loc, const char *name, hid_t type, void *v, size_t n)
{
	if (H5Aexists(loc, name) <= 0)
		return -1;
	hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
	if (a < 0)
		return -1;
	hid_t s = H5Aget_space(a);
	hssize_t have = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	int bad = have != (hssize_t)n || H5Aread(a, type, v) < 0;
	close_if(s, H5Sclose);
	H5Aclose(a);
	return bad ? -1 : 0;
}

/* A string attribute (fixed length) into buf (cap bytes), or -1. With
 * n > 1: n strings of len bytes each (buf holds n * len). */
static int attr_strs(hid_t loc, const char *name, char *buf, size_t len, size_t n)
{
	if (H5Aexists(loc, name) <= 0)
		return -1;
	hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
	if (a < 0)
		return -1;
	hid_t ft = H5Aget_type(a), s = H5Aget_space(a), mt = H5Tcopy(H5T_C_S1);
	hssize_t have = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	int bad = ft < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) > 0 ||
		  H5Tget_size(ft) > len || have != (hssize_t)n || mt < 0 || H5Tset_size(mt, len) < 0 ||
		  H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0;
	memset(buf, 0, len * n);
	if (!bad)
		bad = H5Aread(a, mt, buf) < 0;
	close_if(mt, H5Tclose);
	close_if(ft, H5Tclose);
	close_if(s, H5Sclose);
	H5Aclose(a);
	return bad ? -1 : 0;
}

/* The scalar string attribute name of g into out (cap), "" when absent. */
static void attr_str(hid_t g, const char *name, char *out, size_t cap)
{
	if (attr_strs(g, name, out, cap - 1, 1))
		out[0] = '\0';
	out[cap - 1] = '\0';
}

/* Dataset path of rows x cols (cols 1: one dimension) into v as MEMTYPE. */
static int dset_read_as(hid_t f, const char *path, hid_t memtype, void *v, size_t rows,
			size_t cols)
{
	if (H5Lexists(f, path, H5P_DEFAULT) <= 0)
		return -1;
	hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
	if (d < 0)
		return -1;
	hid_t s = H5Dget_space(d);
	hsize_t dims[2] = {0, 0};
	int nd = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
	if (nd >= 1 && nd <= 2)
		H5Sget_simple_extent_dims(s, dims, NULL);
	int bad = nd != (cols > 1 ? 2 : 1) || dims[0] != rows || (cols > 1 && dims[1] != cols) ||
		  H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
	close_if(s, H5Sclose);
	H5Dclose(d);
	return bad ? -1 : 0;
}

static int dset_read(hid_t f, const char *path, double *v, size_t rows, size_t cols)
{
	return dset_read_as(f, path, H5T_NATIVE_DOUBLE, v, rows, cols);
}

static int dset_read_u64(hid_t f, const char *path, uint64_t *v, size_t rows)
{
	return dset_read_as(f, path, H5T_NATIVE_UINT64, v, rows, 1);
}

/* Dataset DN of f: rows x cols doubles (cols 1: one dimension; integer:
 * integer values), stored in full (sim_snap_h5_stored). Checked before
 * anything is allocated for it. 0 or NB_EINPUT, logged. */
static int dset_layout(hid_t f, const char *path, int64_t fsize, const char *dn, size_t rows,
		       size_t cols, int integer)
{
	if (H5Lexists(f, dn, H5P_DEFAULT) <= 0) {
		log_error("%s: --restart: /%s is missing (the header says %zu bodies there)", path, dn,
			  rows);
		return NB_EINPUT;
	}
	hid_t d = H5Dopen2(f, dn, H5P_DEFAULT);
	if (d < 0) {
		log_error("%s: --restart: /%s cannot be opened as a dataset", path, dn);
		return NB_EINPUT;
	}
	hid_t sp = H5Dget_space(d), ty = H5Dget_type(d);
	hsize_t dims[2] = {0, 0};
	int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
	if (nd >= 1 && nd <= 2)
		H5Sget_simple_extent_dims(sp, dims, NULL);
	H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
	int rc = 0;
	if (nd != (cols > 1 ? 2 : 1) || dims[0] != rows || (cols > 1 && dims[1] != cols)) {
		log_error("%s: --restart: /%s has shape [%llu, %llu] (rank %d), expected [%zu%s] "
			  "from the header's counts",
			  path, dn, (unsigned long long)dims[0], (unsigned long long)dims[1], nd, rows,
			  cols > 1 ? ", 3" : "");
		rc = NB_EINPUT;
	} else if (cl != (integer ? H5T_INTEGER : H5T_FLOAT)) {
		log_error("%s: --restart: /%s holds %s, expected %s", path, dn,
			  integer ? "non-integers" : "non-floats", integer ? "integer IDs" : "floats");
		rc = NB_EINPUT;
	} else {
		char what[96];
		snprintf(what, sizeof what, "--restart: /%s", dn);
		rc = sim_snap_h5_stored((int64_t)d, (int64_t)ty, path, what,
					(uint64_t)rows * (uint64_t)cols, fsize);
	}
	if (ty >= 0)
		H5Tclose(ty);
	if (sp >= 0)
		H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

/* What the header says, read once. */
struct snap_head {
	int version, frame, spf;
	long long step, nbodies;
	double time, dt, eps, theta;
	int multipoles;
	char solver[32], opening[16], units[16], kernel[16];
	unsigned count[SNAP_NTYPES];
};

static int read_head(hid_t f, const char *path, struct snap_head *h)
{
	memset(h, 0, sizeof *h);
	if (H5Lexists(f, SNAP_GROUP_OWN, H5P_DEFAULT) <= 0) {
		log_error("%s: no group /%s: not a snapshot written by nbody-render (--restart reads "
			  "only those)",
			  path, SNAP_GROUP_OWN);
		return NB_EINPUT;
	}
	hid_t g = H5Gopen2(f, SNAP_GROUP_OWN, H5P_DEFAULT), hd = -1;
	int bad = g < 0 || attr_read(g, "FormatVersion", H5T_NATIVE_INT, &h->version, 1);
	if (!bad && h->version != SNAP_FORMAT_VERSION) {
		log_error("%s: /%s/FormatVersion is %d; this program reads version %d", path,
			  SNAP_GROUP_OWN, h->version, SNAP_FORMAT_VERSION);
		H5Gclose(g);
		return NB_EINPUT;
	}
	bad = bad || attr_read(g, "Frame", H5T_NATIVE_INT, &h->frame, 1) ||
	      attr_read(g, "Step", H5T_NATIVE_LLONG, &h->step, 1) ||
	      attr_read(g, "StepsPerFrame", H5T_NATIVE_INT, &h->spf, 1) ||
	      attr_read(g, "TimeInternal", H5T_NATIVE_DOUBLE, &h->time, 1) ||
	      attr_read(g, "DtInternal", H5T_NATIVE_DOUBLE, &h->dt, 1) ||
	      attr_read(g, "SofteningInternal", H5T_NATIVE_DOUBLE, &h->eps, 1) ||
	      attr_read(g, "Theta", H5T_NATIVE_DOUBLE, &h->theta, 1) ||
	      attr_read(g, "Multipoles", H5T_NATIVE_INT, &h->multipoles, 1) ||
	      attr_read(g, "NumBodies", H5T_NATIVE_LLONG, &h->nbodies, 1);
	if (!bad) {
		attr_str(g, "Solver", h->solver, sizeof h->solver);
		attr_str(g, "Opening", h->opening, sizeof h->opening);
		attr_str(g, "UnitSystem", h->units, sizeof h->units);
		attr_str(g, "SofteningKernel", h->kernel, sizeof h->kernel);
		if (!h->kernel[0]) /* written before the spline existed */
			snprintf(h->kernel, sizeof h->kernel, "plummer");
	}
	if (g >= 0)
		H5Gclose(g);
	int nfiles = 1;
	bad = bad || (hd = H5Gopen2(f, "Header", H5P_DEFAULT)) < 0 ||
	      attr_read(hd, "NumPart_ThisFile", H5T_NATIVE_UINT, h->count, SNAP_NTYPES) ||
	      attr_read(hd, "NumFilesPerSnapshot", H5T_NATIVE_INT, &nfiles, 1);
	if (hd >= 0)
		H5Gclose(hd);
	if (!bad && nfiles != 1) {
		log_error("%s: --restart: a part of a %d-file snapshot set (output.snapshots.files); "
			  "a restart continues from a one-file snapshot: write the snapshots to "
			  "continue from with output.snapshots.files: 1 (over MPI ranks, with "
			  "simulation.ranks: replicate: domains write a part a rank)",
			  path, nfiles);
		return NB_EINPUT;
	}
	if (bad) {
		log_error("%s: a /%s or /Header attribute is missing or of the wrong shape "
			  "(a damaged or foreign file)",
			  path, SNAP_GROUP_OWN);
		return NB_EINPUT;
	}
	return 0;
}

/* The counts and datasets the header promises, before any allocation:
 * NumPart_ThisFile adds up to NumBodies, and each type's datasets (and
 * InternalVelocities where km/s are stored) have those rows, stored. */
static int check_layout(hid_t f, const char *path, const struct snap_head *h,
			const struct snap_units *su)
{
	struct stat sb;
	const int64_t fsize = stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
	unsigned long long total = 0;
	for (int t = 0; t < SNAP_NTYPES; t++)
		total += h->count[t];
	if (h->nbodies < 0 || total != (unsigned long long)h->nbodies) {
		log_error("%s: --restart: /Header/NumPart_ThisFile adds up to %llu, but /%s/NumBodies "
			  "says %lld (a damaged file)",
			  path, total, SNAP_GROUP_OWN, h->nbodies);
		return NB_EINPUT;
	}
	static const char *const names[4] = {"Coordinates", "Velocities", "Masses", "ParticleIDs"};
	for (int t = 0; t < SNAP_NTYPES; t++) {
		for (int i = 0; i < 4 && h->count[t]; i++) {
			char dn[64];
			snprintf(dn, sizeof dn, "PartType%d/%s", t, names[i]);
			int rc = dset_layout(f, path, fsize, dn, h->count[t], i < 2 ? 3 : 1, i == 3);
			if (rc)
				return rc;
		}
	}
	/* exact positions, where the writer offset Coordinates into a box */
	if (H5Lexists(f, SNAP_GROUP_OWN "/InternalCoordinates", H5P_DEFAULT) > 0) {
		int rc = dset_layout(f, path, fsize, SNAP_GROUP_OWN "/InternalCoordinates",
				     (size_t)h->nbodies, 3, 0);
		if (rc)
			return rc;
	}
	if (su->velocity != 1.0)
		return dset_layout(f, path, fsize, SNAP_GROUP_OWN "/InternalVelocities",
				   (size_t)h->nbodies, 3, 0);
	return 0;
}

/* Rows of dataset DN (cols 3) in [-lim, lim], read in chunks of
 * RESTART_CHUNK rows: what read_type and the InternalVelocities pass refuse,
 * found by --dry-run too. The layout is checked first (check_layout). */
#define RESTART_CHUNK 65536
static int check_range(hid_t f, const char *path, const char *dn, size_t rows, double lim)
{
	double *buf = malloc(3 * RESTART_CHUNK * sizeof *buf);
	hid_t d = H5Dopen2(f, dn, H5P_DEFAULT), fs = d >= 0 ? H5Dget_space(d) : -1;
	int rc = buf && d >= 0 && fs >= 0 ? 0 : NB_ERUNTIME;
	if (rc)
		log_error("%s: --restart: /%s cannot be read (out of memory?)", path, dn);
	for (size_t r = 0; r < rows && rc == 0; r += RESTART_CHUNK) {
		hsize_t start[2] = {r, 0},
			count[2] = {rows - r < RESTART_CHUNK ? rows - r : RESTART_CHUNK, 3};
		hid_t ms = H5Screate_simple(2, count, NULL);
		if (ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
		    H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) < 0) {
			log_error("%s: --restart: /%s rows %zu.. cannot be read (a damaged file)", path,
				  dn, r);
			rc = NB_EINPUT;
		}
		for (size_t i = 0; rc == 0 && i < 3 * count[0]; i++) {
			if (!(fabs(buf[i]) <= lim)) {
				log_error("%s: --restart: /%s row %zu holds %g: a position or velocity "
					  "that is not finite or beyond 1e15 (a damaged file)",
					  path, dn, r + i / 3, buf[i]);
				rc = NB_EINPUT;
			}
		}
		close_if(ms, H5Sclose);
	}
	close_if(fs, H5Sclose);
	close_if(d, H5Dclose);
	free(buf);
	return rc;
}

/* Every position and velocity the run would read, in range (as read_type
 * and sim_snap_restart check them). */
static int check_values(hid_t f, const char *path, const struct snap_head *h,
			const struct snap_units *su)
{
	int rc = 0;
	for (int t = 0; t < SNAP_NTYPES && rc == 0; t++) {
		char dn[64];
		if (!h->count[t])
			continue;
		snprintf(dn, sizeof dn, "PartType%d/Coordinates", t);
		rc = check_range(f, path, dn, h->count[t], SIM_CSV_XMAX);
		snprintf(dn, sizeof dn, "PartType%d/Velocities", t);
		if (rc == 0)
			rc = check_range(f, path, dn, h->count[t], SIM_CSV_XMAX);
	}
	if (rc == 0 && su->velocity != 1.0)
		rc = check_range(f, path, SNAP_GROUP_OWN "/InternalVelocities", (size_t)h->nbodies,
				 SIM_CSV_XMAX * su->velocity);
	if (rc == 0 && H5Lexists(f, SNAP_GROUP_OWN "/InternalCoordinates", H5P_DEFAULT) > 0)
		rc = check_range(f, path, SNAP_GROUP_OWN "/InternalCoordinates", (size_t)h->nbodies,
				 SIM_CSV_XMAX * su->length);
	return rc;
}

/* The scene against the header: one message for the first difference. */
static int check_head(const char *path, const struct snap_head *h, const struct scene *sc)
{
	struct sim_units u;
	struct snap_units su;
	scene_units(sc, &u);
	snap_units_scene(sc, &su);
	const char *solver = scene_solver_name(sc->simulation.solver);
	const char *opening = scene_opening_name(sc->simulation.opening);
	const int bh = sc->simulation.solver == SCENE_SOLVER_BARNES_HUT;
	const char *what = NULL;
	char a[96] = "", b[96] = "";
	if (strcmp(h->units, su.system) != 0)
		what = "units", snprintf(a, sizeof a, "%s", h->units), snprintf(b, sizeof b, "%s", su.system);
	else if (h->dt != sc->simulation.dt * u.time)
		what = "simulation.dt", snprintf(a, sizeof a, "%.17g", h->dt / u.time),
		snprintf(b, sizeof b, "%.17g", sc->simulation.dt);
	else if (h->spf != sc->simulation.steps_per_frame)
		what = "simulation.steps_per_frame", snprintf(a, sizeof a, "%d", h->spf),
		snprintf(b, sizeof b, "%d", sc->simulation.steps_per_frame);
	else if (strcmp(h->solver, solver) != 0)
		what = "simulation.solver", snprintf(a, sizeof a, "%s", h->solver),
		snprintf(b, sizeof b, "%s", solver);
	else if (h->eps != scene_softening(sc))
		what = "simulation.softening", snprintf(a, sizeof a, "%.17g", h->eps / u.length),
		snprintf(b, sizeof b, "%.17g", sc->simulation.softening);
	else if (strcmp(h->kernel, sc->simulation.softening_kernel == SCENE_SOFT_SPLINE ? "spline"
										       : "plummer") != 0)
		what = "simulation.softening_kernel", snprintf(a, sizeof a, "%s", h->kernel),
		snprintf(b, sizeof b, "%s",
			 sc->simulation.softening_kernel == SCENE_SOFT_SPLINE ? "spline" : "plummer");
	else if (bh && h->theta != sc->simulation.theta)
		what = "simulation.theta", snprintf(a, sizeof a, "%.17g", h->theta),
		snprintf(b, sizeof b, "%.17g", sc->simulation.theta);
	else if (bh && h->multipoles != sc->simulation.multipoles)
		what = "simulation.multipoles", snprintf(a, sizeof a, "%d", h->multipoles),
		snprintf(b, sizeof b, "%d", sc->simulation.multipoles);
	else if (bh && strcmp(h->opening, opening) != 0)
		what = "simulation.opening", snprintf(a, sizeof a, "%s", h->opening),
		snprintf(b, sizeof b, "%s", opening);
	if (what) {
		log_error("%s: --restart: the snapshot was written with %s %s, the scene says %s; a "
			  "restart continues the same simulation (docs/snapshots.md)",
			  path, what, a, b);
		return NB_EINPUT;
	}
	if (!isfinite(h->time)) {
		log_error("%s: --restart: /%s/TimeInternal is %g, expected a finite time (a damaged "
			  "file)",
			  path, SNAP_GROUP_OWN, h->time);
		return NB_EINPUT;
	}
	if (h->step != (long long)h->frame * h->spf || h->frame < 0) {
		log_error("%s: --restart: frame %d at step %lld is not a frame boundary of %d steps "
			  "(a damaged file)",
			  path, h->frame, h->step, h->spf);
		return NB_EINPUT;
	}
	if (h->frame >= sc->output.frames - 1) {
		log_error("%s: --restart: the snapshot is frame %d; output.frames is %d, so no frame "
			  "is left to render (set output.frames above %d)",
			  path, h->frame, sc->output.frames, h->frame + 1);
		return NB_EINPUT;
	}
	return 0;
}

/* Open PATH read-only with HDF5's own messages off. */
static hid_t snap_open(const char *path)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	char why[256];
	int fd = scene_infile_open(path, why, sizeof why);
	if (fd < 0) {
		log_error("%s: --restart: %s; expected a snapshot (snap_NNN.hdf5)", path, why);
		return H5I_INVALID_HID;
	}
	close(fd);
	htri_t is = H5Fis_hdf5(path);
	hid_t f = is > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
	if (f < 0)
		log_error("%s: --restart: not an HDF5 file (or a damaged one)", path);
	return f;
}

int sim_snap_restart_check(const char *path, const struct scene *sc, int *frame)
{
	struct snap_head h;
	for (int k = 0; k < sc->nbodies; k++) {
		if (sc->bodies[k].model == SCENE_MODEL_SNAPSHOT && sc->bodies[k].snap.series[0]) {
			log_error("%s: --restart: bodies.%d.snapshots: a filmed series is played from "
				  "its files, not restarted (the run refuses it too)",
				  path, k);
			return NB_EINPUT;
		}
	}
	hid_t f = snap_open(path);
	if (f < 0)
		return NB_EINPUT;
	struct snap_units su;
	snap_units_scene(sc, &su);
	int rc = read_head(f, path, &h);
	if (rc == 0)
		rc = check_head(path, &h, sc);
	if (rc == 0)
		rc = check_layout(f, path, &h, &su);
	if (rc == 0)
		rc = check_values(f, path, &h, &su);
	long want = rc == 0 ? sim_scene_body_count(sc) : 0;
	if (rc == 0 && want != h.nbodies) {
		log_error("%s: --restart: the snapshot holds %lld bodies, the scene makes %ld", path,
			  h.nbodies, want);
		rc = NB_EINPUT;
	}
	H5Fclose(f);
	if (rc == 0 && frame)
		*frame = h.frame;
	return rc;
}

/* Each component's softening length (NbodyRender/ComponentSoftening,
 * internal units) against st's: lengths per entry, part or type that
 * differ are a different simulation. A file without it (written before
 * lengths per type) had one length, checked by check_head. */
static int check_soft(hid_t g, const char *path, const struct sim_state *st)
{
	const size_t nc = (size_t)st->ncomp;
	if (H5Aexists(g, "ComponentSoftening") <= 0)
		return 0;
	double *soft = calloc(nc + 1, sizeof *soft);
	int rc = 0;
	if (!soft)
		return NB_ERUNTIME;
	if (attr_read(g, "ComponentSoftening", H5T_NATIVE_DOUBLE, soft, nc)) {
		log_error("%s: --restart: /%s/ComponentSoftening is not %zu values", path,
			  SNAP_GROUP_OWN, nc);
		rc = NB_EINPUT;
	}
	for (size_t c = 0; c < nc && rc == 0; c++)
		if (soft[c] != st->comps[c].softening) {
			log_error("%s: --restart: component '%s' was softened with %.17g (internal "
				  "length units), the scene gives it %.17g (bodies.*.softening, a part's "
				  "or a type's); a restart continues the same simulation",
				  path, st->comps[c].name, soft[c], st->comps[c].softening);
			rc = NB_EINPUT;
		}
	free(soft);
	return rc;
}

/* The components of the file against st's (names and counts, in order). */
static int check_components(hid_t f, const char *path, const struct sim_state *st)
{
	const size_t len = SCENE_NAME_MAX + 8, nc = (size_t)st->ncomp;
	char *names = calloc(nc + 1, len);
	long long *counts = calloc(nc + 1, sizeof *counts), *mine = calloc(nc + 1, sizeof *mine);
	hid_t g = H5Gopen2(f, SNAP_GROUP_OWN, H5P_DEFAULT);
	int rc = 0;
	if (!names || !counts || !mine || g < 0) {
		rc = NB_ERUNTIME;
		log_error("%s: --restart: out of memory or unreadable /%s", path, SNAP_GROUP_OWN);
		goto end;
	}
	if (attr_strs(g, "ComponentNames", names, len, nc) ||
	    attr_read(g, "ComponentCounts", H5T_NATIVE_LLONG, counts, nc)) {
		log_error("%s: --restart: the snapshot's components are not the scene's %d "
			  "(a different number of them)",
			  path, st->ncomp);
		rc = NB_EINPUT;
		goto end;
	}
	for (size_t i = 0; i < st->n; i++)
		mine[st->comp[i]]++;
	for (size_t c = 0; c < nc && rc == 0; c++) {
		char *nm = names + c * len;
		nm[len - 1] = '\0';
		if (strcmp(nm, st->comps[c].name) != 0 || counts[c] != mine[c]) {
			log_error("%s: --restart: component %zu is '%s' with %lld bodies in the snapshot, "
				  "'%s' with %lld in the scene",
				  path, c, nm, counts[c], st->comps[c].name, mine[c]);
			rc = NB_EINPUT;
		}
	}
	if (rc == 0)
		rc = check_soft(g, path, st);
end:
	if (g >= 0)
		H5Gclose(g);
	free(names);
	free(counts);
	free(mine);
	return rc;
}

/* NbodyRender/ComponentPartTypes: the PartType the writer gave each of
 * st's components (checked against st's by check_components first) into
 * *out (malloc'd). 0 or NB_EINPUT / NB_ERUNTIME, logged. */
static int read_part_types(hid_t f, const char *path, const struct sim_state *st, int **out)
{
	const size_t nc = (size_t)st->ncomp;
	int *types = calloc(nc + 1, sizeof *types);
	hid_t g = H5Gopen2(f, SNAP_GROUP_OWN, H5P_DEFAULT);
	int rc = 0;
	if (!types || g < 0) {
		log_error("%s: --restart: out of memory or unreadable /%s", path, SNAP_GROUP_OWN);
		rc = NB_ERUNTIME;
	} else if (attr_read(g, "ComponentPartTypes", H5T_NATIVE_INT, types, nc)) {
		log_error("%s: --restart: /%s/ComponentPartTypes is missing or not %zu values", path,
			  SNAP_GROUP_OWN, nc);
		rc = NB_EINPUT;
	}
	for (size_t c = 0; c < nc && rc == 0; c++) {
		if (types[c] < 0 || types[c] >= SNAP_NTYPES) {
			log_error("%s: --restart: /%s/ComponentPartTypes[%zu] is %d, not a PartType "
				  "0..%d",
				  path, SNAP_GROUP_OWN, c, types[c], SNAP_NTYPES - 1);
			rc = NB_EINPUT;
		}
	}
	close_if(g, H5Gclose);
	if (rc)
		free(types), types = NULL;
	*out = types;
	return rc;
}

/* PartType t's rows into st: row k is the k-th body (in body order) of a
 * component the writer put in type t (NbodyRender/ComponentPartTypes,
 * TYPE_OF), and its ParticleID must be that body's (sim_state_pid: the
 * file's ID of a snapshot entry's body, else its id); masses compared.
 * seen marks the bodies found. */
static int read_type(hid_t f, const char *path, int t, size_t cnt, const struct snap_units *su,
		     const int *type_of, struct sim_state *st, unsigned char *seen)
{
	char p[64];
	double *x = malloc((3 * cnt + 1) * sizeof *x), *v = malloc((3 * cnt + 1) * sizeof *v);
	double *m = malloc((cnt + 1) * sizeof *m);
	uint64_t *id = malloc((cnt + 1) * sizeof *id);
	int rc = 0;
	const char *bad = NULL;
	if (!x || !v || !m || !id) {
		log_error("%s: --restart: out of memory for %zu bodies", path, cnt);
		rc = NB_ERUNTIME;
		goto end;
	}
	snprintf(p, sizeof p, "PartType%d/Coordinates", t);
	if (dset_read(f, p, x, cnt, 3))
		bad = "Coordinates";
	snprintf(p, sizeof p, "PartType%d/Velocities", t);
	if (!bad && dset_read(f, p, v, cnt, 3))
		bad = "Velocities";
	snprintf(p, sizeof p, "PartType%d/Masses", t);
	if (!bad && dset_read(f, p, m, cnt, 1))
		bad = "Masses";
	snprintf(p, sizeof p, "PartType%d/ParticleIDs", t);
	if (!bad && dset_read_u64(f, p, id, cnt))
		bad = "ParticleIDs";
	if (bad) {
		log_error("%s: --restart: /PartType%d/%s is missing or not %zu rows of the expected "
			  "shape",
			  path, t, bad, cnt);
		rc = NB_EINPUT;
		goto end;
	}
	size_t i = 0;
	for (size_t k = 0; k < cnt && rc == 0; k++, i++) {
		while (i < st->n && type_of[st->comp[i]] != t)
			i++;
		if (i >= st->n || seen[i] || sim_state_pid(st, i) != id[k]) {
			log_error("%s: --restart: /PartType%d/ParticleIDs row %zu holds ID %llu, not the "
				  "ID of the scene's body there (%s)",
				  path, t, k, (unsigned long long)id[k],
				  i >= st->n ? "none: more rows than bodies of this type" : "another body");
			rc = NB_EINPUT;
			break;
		}
		/* the same conversion the writer made, so the same bits */
		if (m[k] != st->mass[i] / su->mass) {
			log_error("%s: --restart: body %zu has mass %.17g in the snapshot and %.17g in "
				  "the scene (stored units): not the same bodies",
				  path, i, m[k], st->mass[i] / su->mass);
			rc = NB_EINPUT;
			break;
		}
		seen[i] = 1;
		for (int d = 0; d < 3; d++) {
			st->pos[3 * i + d] = x[3 * k + d] * su->length;
			st->vel[3 * i + d] = v[3 * k + d] * su->velocity;
			/* the same range as any snapshot or state CSV (fuzz/fuzz_restart.c) */
			if (!(fabs(x[3 * k + d]) <= SIM_CSV_XMAX && fabs(v[3 * k + d]) <= SIM_CSV_XMAX) &&
			    rc == 0) {
				log_error("%s: --restart: /PartType%d row %zu (body %zu): a position or "
					  "velocity that is not finite or beyond 1e15 (a damaged file)",
					  path, t, k, i);
				rc = NB_EINPUT;
			}
		}
	}
end:
	free(x);
	free(v);
	free(m);
	free(id);
	return rc;
}

/* The exact internal values, in body order: velocities where km/s were
 * stored, positions where Coordinates were offset into a box
 * (output/snap_write.c; checked by check_layout and check_values). */
static int read_exact(hid_t f, const char *path, const struct snap_units *su,
		      struct sim_state *st)
{
	if (su->velocity != 1.0 &&
	    dset_read(f, SNAP_GROUP_OWN "/InternalVelocities", st->vel, st->n, 3)) {
		log_error("%s: --restart: /%s/InternalVelocities is missing or not %zu x 3", path,
			  SNAP_GROUP_OWN, st->n);
		return NB_EINPUT;
	}
	if (H5Lexists(f, SNAP_GROUP_OWN "/InternalCoordinates", H5P_DEFAULT) > 0 &&
	    dset_read(f, SNAP_GROUP_OWN "/InternalCoordinates", st->pos, st->n, 3)) {
		log_error("%s: --restart: /%s/InternalCoordinates is not %zu x 3", path,
			  SNAP_GROUP_OWN, st->n);
		return NB_EINPUT;
	}
	for (size_t i = 0; i < 3 * st->n; i++) {
		if (!(fabs(st->vel[i]) <= SIM_CSV_XMAX * su->velocity)) {
			log_error("%s: --restart: /%s/InternalVelocities: body %zu's velocity is not "
				  "finite or beyond 1e15 (a damaged file)",
				  path, SNAP_GROUP_OWN, i / 3);
			return NB_EINPUT;
		}
	}
	return 0;
}

int sim_snap_restart(const char *path, const struct scene *sc, struct sim_state *st, int *frame)
{
	struct snap_head h;
	struct snap_units su;
	unsigned char *seen = NULL;
	int *type_of = NULL;
	snap_units_scene(sc, &su);
	hid_t f = snap_open(path);
	if (f < 0)
		return NB_EINPUT;
	int rc = read_head(f, path, &h);
	if (rc == 0)
		rc = check_head(path, &h, sc);
	if (rc == 0)
		rc = check_layout(f, path, &h, &su);
	if (rc == 0 && (size_t)h.nbodies != st->n) {
		log_error("%s: --restart: the snapshot holds %lld bodies, the scene makes %zu", path,
			  h.nbodies, st->n);
		rc = NB_EINPUT;
	}
	if (rc == 0)
		rc = check_components(f, path, st);
	if (rc == 0 && !(seen = calloc(st->n + 1, 1))) {
		log_error("%s: --restart: out of memory", path);
		rc = NB_ERUNTIME;
	}
	if (rc == 0)
		rc = read_part_types(f, path, st, &type_of);
	size_t total = 0;
	for (int t = 0; t < SNAP_NTYPES && rc == 0; t++) {
		total += h.count[t];
		if (total > st->n) { /* before any allocation of the claimed rows */
			log_error("%s: --restart: /Header/NumPart_ThisFile sums to more than the %zu "
				  "bodies of the snapshot",
				  path, st->n);
			rc = NB_EINPUT;
		} else if (h.count[t]) {
			rc = read_type(f, path, t, h.count[t], &su, type_of, st, seen);
		}
	}
	if (rc == 0 && total != st->n) {
		log_error("%s: --restart: /Header/NumPart_ThisFile sums to %zu, not %zu bodies", path,
			  total, st->n);
		rc = NB_EINPUT;
	}
	if (rc == 0)
		rc = read_exact(f, path, &su, st);
	if (rc == 0 && !isfinite(h.time)) {
		log_error("%s: --restart: /%s/TimeInternal is not finite (a damaged file)", path,
			  SNAP_GROUP_OWN);
		rc = NB_EINPUT;
	}
	H5Fclose(f);
	free(seen);
	free(type_of);
	if (rc == 0) {
		st->time = h.time;
		st->step = (long)h.step;
		*frame = h.frame;
	}
	return rc;
}
