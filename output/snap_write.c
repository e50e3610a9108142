/* snap_write.c - output.snapshots: the state of one frame as a GADGET-2
 * style HDF5 file (layout and units: sim/snap_format.h; for users:
 * docs/snapshots.md). yt (its GADGET HDF5 reader), h5py and GADGET-style
 * readers read it as it is; --restart reads it back (sim/snap_restart.c).
 *
 * Values are written in double, as the state holds them (on the GPU the
 * device's float values, widened exactly). Bodies are grouped by GADGET
 * particle type (halo 1, disk 2, bulge 3, other 4), in body order within a
 * type. The file is built in memory (see "the file in memory" below),
 * written under sim_outfile_temp's name and renamed into place when
 * complete (sim_outfile_commit). One file holds bodies [lo, hi) of the
 * state: all of them, or one part of a multi-file set, left under its
 * temporary name until the set is published (output/snap_set.c).
 *
 * Try: --set output.snapshots.dir=out/snaps --set output.snapshots.every=10,
 * then python3 -c "import yt; print(yt.load('out/snaps/snap_000.hdf5'))". */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../render/render.h"
#include "../sim/snap_format.h"
#include "out_internal.h"
#include "output.h"

#ifndef NB_VERSION
#define NB_VERSION "unknown"
#endif

int out_snap_number(const struct scene *sc, int f)
{
	const int every = sc->output.snapshots.every > 0 ? sc->output.snapshots.every : 1;
	if (!sc->output.snapshots.dir[0] || f < 0 || f >= sc->output.frames)
		return -1;
	if (f % every == 0 || f == sc->output.frames - 1)
		return (f + every - 1) / every;
	return -1;
}

int out_snap_path(const char *dir, int k, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s/snap_%03d.hdf5", dir, k);
	if (n < 0 || (size_t)n >= cap) {
		log_error("%s: snapshot path too long", dir);
		return NB_ERUNTIME;
	}
	return 0;
}

int out_snap_part_type(const char *component)
{
	const char *dot = strrchr(component, '.');
	if (dot && strcmp(dot, ".halo") == 0)
		return SNAP_TYPE_HALO;
	if (dot && strcmp(dot, ".disk") == 0)
		return SNAP_TYPE_DISK;
	if (dot && strcmp(dot, ".bulge") == 0)
		return SNAP_TYPE_BULGE;
	return SNAP_TYPE_OTHER;
}

/* ---- attribute helpers: each returns 0 or -1 (HDF5 failed) ---- */

static int attr_write(hid_t loc, const char *name, hid_t type, hid_t space, const void *v)
{
	hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
	int bad = a < 0 || H5Awrite(a, type, v) < 0;
	if (a >= 0)
		H5Aclose(a);
	return bad ? -1 : 0;
}

static int attr_array(hid_t loc, const char *name, hid_t type, const void *v, hsize_t n)
{
	hid_t s = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
	if (s < 0)
		return -1;
	int rc = attr_write(loc, name, type, s, v);
	H5Sclose(s);
	return rc;
}

static int attr_f64(hid_t loc, const char *name, double v)
{
	return attr_array(loc, name, H5T_NATIVE_DOUBLE, &v, 0);
}

static int attr_i32(hid_t loc, const char *name, int v)
{
	return attr_array(loc, name, H5T_NATIVE_INT, &v, 0);
}

static int attr_i64(hid_t loc, const char *name, long long v)
{
	return attr_array(loc, name, H5T_NATIVE_LLONG, &v, 0);
}

/* A fixed-length string (or an array of n of them, each len bytes with
 * NUL padding) */
static int attr_strings(hid_t loc, const char *name, const char *v, size_t len, hsize_t n)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0)
		return -1;
	int rc = H5Tset_size(t, len ? len : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0
			 ? -1
			 : attr_array(loc, name, t, v, n);
	H5Tclose(t);
	return rc;
}

static int attr_str(hid_t loc, const char *name, const char *v)
{
	return attr_strings(loc, name, v, strlen(v), 0);
}

/* A dataset of n rows of k columns (k 1: one dimension), stored as FTYPE
 * from memory of type MTYPE. */
static int dset_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *v,
		      hsize_t n, hsize_t k)
{
	hsize_t dims[2] = {n, k};
	hid_t s = H5Screate_simple(k > 1 ? 2 : 1, dims, NULL);
	if (s < 0)
		return -1;
	hid_t d = H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int bad = d < 0 || H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
	if (d >= 0)
		H5Dclose(d);
	H5Sclose(s);
	return bad ? -1 : 0;
}

static int dset_f64(hid_t loc, const char *name, const double *v, hsize_t n, hsize_t k)
{
	return dset_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n, k);
}

/* ParticleIDs: 32-bit when every ID fits, as GADGET writes them unless
 * built with LONGIDS, else 64-bit */
static int dset_ids(hid_t loc, const char *name, const uint64_t *v, hsize_t n)
{
	uint64_t most = 0;
	for (hsize_t i = 0; i < n; i++)
		most = v[i] > most ? v[i] : most;
	return dset_write(loc, name, most > UINT32_MAX ? H5T_STD_U64LE : H5T_STD_U32LE,
			  H5T_NATIVE_UINT64, v, n, 1);
}

/* ---- the groups ---- */

/* /Header: NumPart_ThisFile this file's counts, NumPart_Total (and
 * _HighWord) the set's, NumFilesPerSnapshot its parts; every other
 * attribute the same in every part of a set. */
static int write_header(hid_t f, const struct sim_state *st, const unsigned *count,
			const struct out_snap_part *p, const struct snap_units *su,
			const struct sim_units *u, double box)
{
	hid_t g = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return -1;
	unsigned low[SNAP_NTYPES], high[SNAP_NTYPES];
	double masstab[SNAP_NTYPES] = {0}; /* 0: every particle has its own mass */
	for (int t = 0; t < SNAP_NTYPES; t++)
		low[t] = (unsigned)(p->total[t] & 0xffffffffu), high[t] = (unsigned)(p->total[t] >> 32);
	int bad = attr_array(g, "NumPart_ThisFile", H5T_NATIVE_UINT, count, SNAP_NTYPES) ||
		  attr_array(g, "NumPart_Total", H5T_NATIVE_UINT, low, SNAP_NTYPES) ||
		  attr_array(g, "NumPart_Total_HighWord", H5T_NATIVE_UINT, high, SNAP_NTYPES) ||
		  attr_array(g, "MassTable", H5T_NATIVE_DOUBLE, masstab, SNAP_NTYPES) ||
		  attr_f64(g, "Time", st->time / su->time) || attr_f64(g, "Redshift", 0.0) ||
		  attr_f64(g, "BoxSize", box) || attr_i32(g, "NumFilesPerSnapshot", p->K) ||
		  attr_f64(g, "Omega0", 0.0) || attr_f64(g, "OmegaLambda", 0.0) ||
		  attr_f64(g, "HubbleParam", 1.0) || attr_i32(g, "Flag_Sfr", 0) ||
		  attr_i32(g, "Flag_Cooling", 0) || attr_i32(g, "Flag_StellarAge", 0) ||
		  attr_i32(g, "Flag_Metals", 0) || attr_i32(g, "Flag_Feedback", 0) ||
		  attr_i32(g, "Flag_DoublePrecision", 1) ||
		  attr_str(g, "Code", "nbody-render " NB_VERSION) ||
		  attr_f64(g, "Time_SceneUnits", st->time / u->time) ||
		  attr_f64(g, "GravitationalConstant", snap_g_stored(su)) ||
		  attr_f64(g, "GravitationalConstant_cgs", SNAP_G_CGS) ||
		  attr_str(g, "SceneTimeUnit", su->time_name);
	H5Gclose(g);
	return bad ? -1 : 0;
}

/* The box of a run that has none (no periodic run exists here): GADGET
 * readers (yt among them) take the domain as [0, BoxSize]^3, and yt can
 * neither plot a BoxSize of 0 nor place bodies outside the box (it wraps
 * them, periodically). So the snapshot is written in a cube about the
 * scene's origin: BoxSize L is the smallest power of two at least 2.5 x
 * the largest |coordinate| of any body (stored unit; a margin of 25 %
 * beyond the farthest body on every side), and every stored coordinate is
 * the scene's plus L / 2 (NbodyRender/CoordinateOffset). A power of two
 * keeps L / 2 exact; the exact positions stay in InternalCoordinates. */
static double snap_box(double extent, const struct snap_units *su)
{
	const double m = extent / su->length;
	double L = 0x1p-20;
	while (L < 2.5 * m && L < 0x1p100)
		L *= 2;
	return L;
}

/* SWIFT's names and the OWLS/GADGET names, in /Units; GADGET-4's in
 * /Parameters. */
static int write_units(hid_t f, const struct snap_units *su)
{
	hid_t g = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return -1;
	int bad = attr_f64(g, "Unit length in cgs (U_L)", su->length_cgs) ||
		  attr_f64(g, "Unit mass in cgs (U_M)", su->mass_cgs) ||
		  attr_f64(g, "Unit time in cgs (U_t)", su->time_cgs) ||
		  attr_f64(g, "Unit current in cgs (U_I)", 1.0) ||
		  attr_f64(g, "Unit temperature in cgs (U_T)", 1.0) ||
		  attr_f64(g, "UnitLength_in_cm", su->length_cgs) ||
		  attr_f64(g, "UnitMass_in_g", su->mass_cgs) ||
		  attr_f64(g, "UnitVelocity_in_cm_per_s", su->velocity_cgs) ||
		  attr_f64(g, "UnitTime_in_s", su->time_cgs);
	H5Gclose(g);
	if (bad || (g = H5Gcreate2(f, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
		return -1;
	bad = attr_f64(g, "UnitLength_in_cm", su->length_cgs) ||
	      attr_f64(g, "UnitMass_in_g", su->mass_cgs) ||
	      attr_f64(g, "UnitVelocity_in_cm_per_s", su->velocity_cgs);
	H5Gclose(g);
	return bad ? -1 : 0;
}

/* PartType t: its bodies in body order, in the stored units. buf holds
 * 3 n doubles. */
static int write_type(hid_t f, const struct sim_state *st, size_t lo, size_t hi,
		      const int *type_of, int t, unsigned count, const struct snap_units *su,
		      double off, double *buf, uint64_t *ids)
{
	char name[16];
	snprintf(name, sizeof name, "PartType%d", t);
	hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return -1;
	/* which components it holds, by name, one per row */
	char *names = calloc((size_t)st->ncomp + 1, SCENE_NAME_MAX + 8);
	int bad = !names;
	hsize_t nn = 0;
	for (int c = 0; !bad && c < st->ncomp; c++)
		if (out_snap_part_type(st->comps[c].name) == t)
			memcpy(names + (SCENE_NAME_MAX + 8) * nn++, st->comps[c].name,
			       strlen(st->comps[c].name));
	bad = bad || attr_strings(g, "ComponentNames", names, SCENE_NAME_MAX + 8, nn);
	free(names);
	const double *src[2] = {st->pos, st->vel};
	const double fac[2] = {su->length, su->velocity}, add[2] = {off, 0};
	const char *dname[2] = {"Coordinates", "Velocities"};
	for (int q = 0; q < 2 && !bad; q++) {
		size_t k = 0;
		for (size_t i = lo; i < hi; i++) {
			if (type_of[st->comp[i]] != t)
				continue;
			for (int d = 0; d < 3; d++)
				buf[3 * k + d] = src[q][3 * i + d] / fac[q] + add[q];
			k++;
		}
		bad = dset_f64(g, dname[q], buf, count, 3);
	}
	size_t k = 0;
	for (size_t i = lo; i < hi && !bad; i++)
		if (type_of[st->comp[i]] == t) {
			buf[k] = st->mass[i] / su->mass;
			ids[k++] = sim_state_pid(st, i);
		}
	bad = bad || dset_f64(g, "Masses", buf, count, 1) || dset_ids(g, "ParticleIDs", ids, count);
	H5Gclose(g);
	return bad ? -1 : 0;
}

/* /Camera: the camera frame `frame` was drawn with, in the stored length
 * unit, in the same frame as Coordinates (CoordinateOffset added), and degrees: Position, Target, Up
 * (3 each), FieldOfView (vertical), Projection ("perspective", "fisheye",
 * "equirectangular"), FisheyeAperture and DomeTilt (as the scene's keys;
 * used by fisheye), Eye (0 mono, -1 / +1 a stereo eye). */
static int write_camera(hid_t f, const struct render_camera *c, const struct sim_units *u,
			const struct snap_units *su, double off)
{
	static const char *const proj[] = {"perspective", "fisheye", "equirectangular"};
	hid_t g = H5Gcreate2(f, "Camera", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return -1;
	double x[3][3];
	const double *src[3] = {c->pos, c->target, c->up};
	for (int q = 0; q < 3; q++)
		for (int a = 0; a < 3; a++) /* scene units -> internal -> stored */
			x[q][a] = q < 2 ? src[q][a] * u->length / su->length + off : src[q][a];
	int bad = attr_array(g, "Position", H5T_NATIVE_DOUBLE, x[0], 3) ||
		  attr_array(g, "Target", H5T_NATIVE_DOUBLE, x[1], 3) ||
		  attr_array(g, "Up", H5T_NATIVE_DOUBLE, x[2], 3) ||
		  attr_f64(g, "FieldOfView", c->fov) ||
		  attr_str(g, "Projection",
			   c->projection >= 0 && c->projection < 3 ? proj[c->projection] : proj[0]) ||
		  attr_f64(g, "FisheyeAperture", c->fisheye_aperture > 0 ? c->fisheye_aperture : 180) ||
		  attr_f64(g, "DomeTilt", c->dome_tilt) || attr_i32(g, "Eye", c->eye);
	H5Gclose(g);
	return bad ? -1 : 0;
}

/* One file to build: bodies [lo, hi) of st, in body order, as part p of
 * its set (a one-file snapshot: part 0 of 1, every body). */
struct snap_job {
	const struct scene *sc;
	const struct sim_state *st;
	size_t lo, hi;
	const struct out_snap_part *p;
	int frame;
	const char *backend;
	const struct render_camera *cam;
};

/* The datasets of /NbodyRender, the file's bodies in body order:
 * InternalCoordinates, and InternalVelocities when the stored velocity
 * unit is not the internal one (km/s are not the internal values bit for
 * bit); a part of a set also says which (SetId, FileIndex). */
static int write_own_data(hid_t g, const struct snap_job *j, const struct snap_units *su)
{
	const size_t n = j->hi - j->lo;
	const unsigned long long id = j->p->set_id;
	if (j->p->K > 1 && (attr_array(g, "SetId", H5T_NATIVE_ULLONG, &id, 0) ||
			    attr_i32(g, "FileIndex", j->p->k)))
		return -1;
	if (su->velocity != 1.0 &&
	    dset_f64(g, "InternalVelocities", j->st->vel + 3 * j->lo, n, 3))
		return -1;
	return dset_f64(g, "InternalCoordinates", j->st->pos + 3 * j->lo, n, 3);
}

/* /NbodyRender: what a restart needs and checks (sim/snap_restart.c);
 * NumBodies and ComponentCounts count this file's bodies. */
static int write_own(hid_t f, const struct snap_job *j, const struct snap_units *su,
		     const char *scene_text, double off)
{
	const struct scene *sc = j->sc;
	const struct sim_state *st = j->st;
	const double offs[3] = {off, off, off};
	struct sim_units u;
	scene_units(sc, &u);
	/* attributes past 64 KiB (a long scene) need dense storage */
	hid_t cpl = H5Pcreate(H5P_GROUP_CREATE);
	if (cpl < 0 || H5Pset_attr_phase_change(cpl, 0, 0) < 0) {
		if (cpl >= 0)
			H5Pclose(cpl);
		return -1;
	}
	hid_t g = H5Gcreate2(f, SNAP_GROUP_OWN, H5P_DEFAULT, cpl, H5P_DEFAULT);
	H5Pclose(cpl);
	if (g < 0)
		return -1;
	const int nc = st->ncomp;
	char *names = calloc((size_t)nc + 1, SCENE_NAME_MAX + 8);
	long long *counts = calloc((size_t)nc + 1, sizeof *counts);
	int *types = calloc((size_t)nc + 1, sizeof *types);
	double *soft = calloc((size_t)nc + 1, sizeof *soft); /* each component's length */
	int bad = !names || !counts || !types || !soft;
	for (int c = 0; !bad && c < nc; c++) {
		memcpy(names + (size_t)c * (SCENE_NAME_MAX + 8), st->comps[c].name,
		       strlen(st->comps[c].name));
		types[c] = out_snap_part_type(st->comps[c].name);
		soft[c] = st->comps[c].softening;
	}
	for (size_t i = j->lo; !bad && i < j->hi; i++)
		if (st->comp[i] < nc)
			counts[st->comp[i]]++;
	bad = bad || attr_i32(g, "FormatVersion", SNAP_FORMAT_VERSION) ||
	      attr_i32(g, "Frame", j->frame) || attr_i64(g, "Step", st->step) ||
	      attr_i32(g, "Frames", sc->output.frames) ||
	      attr_i32(g, "StepsPerFrame", sc->simulation.steps_per_frame) ||
	      attr_f64(g, "TimeInternal", st->time) ||
	      attr_f64(g, "DtInternal", sc->simulation.dt * u.time) ||
	      attr_f64(g, "SofteningInternal", scene_softening(sc)) ||
	      attr_str(g, "SofteningKernel",
		       sc->simulation.softening_kernel == SCENE_SOFT_SPLINE ? "spline" : "plummer") ||
	      attr_str(g, "Solver", scene_solver_name(sc->simulation.solver)) ||
	      attr_f64(g, "Theta", sc->simulation.theta) ||
	      attr_i32(g, "Multipoles", sc->simulation.multipoles) ||
	      attr_str(g, "Opening", scene_opening_name(sc->simulation.opening)) ||
	      attr_str(g, "UnitSystem", su->system) || attr_str(g, "Backend", j->backend) ||
	      attr_i64(g, "NumBodies", (long long)(j->hi - j->lo)) ||
	      attr_strings(g, "ComponentNames", names, SCENE_NAME_MAX + 8, (hsize_t)nc) ||
	      attr_array(g, "ComponentCounts", H5T_NATIVE_LLONG, counts, (hsize_t)nc) ||
	      attr_array(g, "ComponentPartTypes", H5T_NATIVE_INT, types, (hsize_t)nc) ||
	      attr_array(g, "ComponentSoftening", H5T_NATIVE_DOUBLE, soft, (hsize_t)nc) ||
	      attr_str(g, "Scene", scene_text) ||
	      attr_array(g, "CoordinateOffset", H5T_NATIVE_DOUBLE, offs, 3);
	free(names);
	free(counts);
	free(types);
	free(soft);
	/* Coordinates are offset into the box (snap_box): keep the exact ones */
	bad = bad || write_own_data(g, j, su);
	H5Gclose(g);
	return bad ? -1 : 0;
}

/* The resolved scene as YAML text (malloc'd), or NULL. */
static char *scene_text_of(const struct scene *sc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	int rc = scene_emit(sc, f);
	fclose(f);
	if (rc) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- the file in memory ----
 * HDF5 1.10 does not survive a failed H5Fclose: when the flush at close
 * fails (a full disk), the file is freed but its id stays, and the
 * library's exit handler then closes it again and crashes. So no HDF5 call
 * here touches the disk: the file is built in memory (the core driver, no
 * backing store) and written out by out_save_bytes, which reports the
 * path and the OS's reason. The core driver's buffer is not copied: the
 * file image callbacks below keep it at close (FILE_CLOSE) instead of
 * freeing it, and record its size at each resize; the file's length is
 * its superblock's (snap_image_length). The cost is the file's size in
 * memory for the time of one snapshot (about out_snap_bytes). */
struct snap_image {
	void *mem;   /* the driver's buffer; kept when the file closes */
	size_t size; /* its size (whole increments, not the file's length) */
	int kept;    /* 1: the driver closed and left mem to us */
};

static void *snap_image_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
	struct snap_image *im = udata;
	void *p = malloc(size ? size : 1);
	if (p && op == H5FD_FILE_IMAGE_OP_FILE_OPEN) {
		im->mem = p;
		im->size = size;
	}
	return p;
}

static void *snap_image_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op,
			       void *udata)
{
	(void)op;
	(void)udata;
	return memcpy(dest, src, size);
}

static void *snap_image_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata)
{
	struct snap_image *im = udata;
	void *p = realloc(ptr, size ? size : 1);
	if (p && op == H5FD_FILE_IMAGE_OP_FILE_RESIZE) {
		im->mem = p;
		im->size = size;
	}
	return p;
}

static herr_t snap_image_free(void *ptr, H5FD_file_image_op_t op, void *udata)
{
	struct snap_image *im = udata;
	if (ptr && ptr == im->mem && op == H5FD_FILE_IMAGE_OP_FILE_CLOSE) {
		im->kept = 1;
		return 0;
	}
	if (ptr == im->mem)
		im->mem = NULL, im->size = 0;
	free(ptr);
	return 0;
}

/* udata is this call's struct snap_image, shared, never copied */
static void *snap_image_udata_copy(void *udata)
{
	return udata;
}

static herr_t snap_image_udata_free(void *udata)
{
	(void)udata;
	return 0;
}

/* The length of the closed image: its superblock's end-of-file address.
 * The driver's buffer is rounded up to the increment, and the superblock
 * is written at close, so this is the one place that knows. Superblock
 * versions 2 and 3 (H5F_LIBVER_V18 and later, as set here): signature (8
 * bytes), version, size of offsets, size of lengths, flags, then the base
 * address, the extension's address and the end-of-file address, little-
 * endian (HDF5 file format specification, "Superblock"). 0 when the image
 * is not such a file. */
static size_t snap_image_length(const struct snap_image *im)
{
	static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
	const unsigned char *p = im->mem;
	if (!p || im->size < 48 || memcmp(p, sig, 8) != 0 || (p[8] != 2 && p[8] != 3) ||
	    p[9] != 8)
		return 0;
	unsigned long long base = 0, eof = 0;
	for (int b = 7; b >= 0; b--) {
		base = base << 8 | p[12 + b];
		eof = eof << 8 | p[28 + b];
	}
	if (base != 0 || eof < 48 || eof > im->size)
		return 0;
	return (size_t)eof;
}

/* An HDF5 file built in memory into im (named TMP, the in-memory file's
 * name only: nothing is created on disk); *fapl gets its access list
 * (close both). The file, or -1 logged with PATH. */
static hid_t snap_mem_create(const char *path, const char *tmp, struct snap_image *im,
			     hid_t *fapl)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported here, once */
	H5FD_file_image_callbacks_t cb = {snap_image_malloc,	 snap_image_memcpy,
					  snap_image_realloc,	 snap_image_free,
					  snap_image_udata_copy, snap_image_udata_free,
					  im};
	*fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (*fapl < 0 || H5Pset_libver_bounds(*fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
	    H5Pset_fapl_core(*fapl, (size_t)4 << 20, 0) < 0 ||
	    H5Pset_file_image_callbacks(*fapl, &cb) < 0) {
		log_error("%s: cannot set up HDF5 to build the snapshot", path);
		return -1;
	}
	hid_t f = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, *fapl);
	if (f < 0)
		log_error("%s: cannot create the snapshot in memory (HDF5)", path);
	return f;
}

void out_snap_part_counts(const struct sim_state *st, size_t lo, size_t hi,
			  uint64_t count[SNAP_NTYPES], double *extent)
{
	double m = 0;
	uint64_t per_comp[64] = {0}; /* bodies by component; more components: by name each */
	for (int t = 0; t < SNAP_NTYPES; t++)
		count[t] = 0;
	for (size_t i = lo; i < hi && i < st->n; i++) {
		if (st->comp[i] < 64)
			per_comp[st->comp[i]]++;
		else
			count[out_snap_part_type(st->comps[st->comp[i]].name)]++;
		for (int d = 0; d < 3; d++)
			m = fmax(m, fabs(st->pos[3 * i + d]));
	}
	for (int c = 0; c < st->ncomp && c < 64; c++)
		count[out_snap_part_type(st->comps[c].name)] += per_comp[c];
	*extent = m;
}

/* The groups of job j into the in-memory file f. 0 or -1 (HDF5 failed). */
static int snap_fill(hid_t f, const struct snap_job *j, const int *type_of, const char *text,
		     double *buf, uint64_t *ids)
{
	struct snap_units su;
	struct sim_units u;
	unsigned count[SNAP_NTYPES] = {0};
	snap_units_scene(j->sc, &su);
	scene_units(j->sc, &u);
	for (size_t i = j->lo; i < j->hi; i++)
		count[type_of[j->st->comp[i]]]++;
	const double box = snap_box(j->p->extent, &su), off = 0.5 * box;
	int bad = write_header(f, j->st, count, j->p, &su, &u, box) || write_units(f, &su);
	for (int t = 0; t < SNAP_NTYPES && !bad; t++)
		if (count[t])
			bad = write_type(f, j->st, j->lo, j->hi, type_of, t, count[t], &su, off, buf,
					 ids);
	return bad || write_own(f, j, &su, text, off) ||
	       (j->cam && write_camera(f, j->cam, &u, &su, off));
}

/* Build job j's file in memory, then write it to PATH's temporary name:
 * renamed into place (stage 0) or left there for out_snap_part_publish
 * (stage 1). 0 or NB_ERUNTIME (logged; no temporary file left). */
static int snap_file_write(const char *path, const struct snap_job *j, int stage)
{
	char tmp[SCENE_PATH_MAX + 64];
	struct snap_image im = {NULL, 0, 0};
	const size_t n = j->hi - j->lo;
	int *type_of = NULL;
	double *buf = NULL;
	uint64_t *ids = NULL;
	char *text = NULL;
	hid_t fapl = -1, f = -1;
	int rc = NB_ERUNTIME, bad = 1;

	if (sim_outfile_temp_name(path, tmp, sizeof tmp))
		return NB_ERUNTIME;
	type_of = calloc((size_t)j->st->ncomp + 1, sizeof *type_of);
	buf = malloc((3 * n + 1) * sizeof *buf);
	ids = malloc((n + 1) * sizeof *ids);
	text = scene_text_of(j->sc);
	if (!type_of || !buf || !ids || !text) {
		log_error("%s: out of memory for a snapshot of %zu bodies", path, n);
		goto end;
	}
	for (int c = 0; c < j->st->ncomp; c++)
		type_of[c] = out_snap_part_type(j->st->comps[c].name);
	if ((f = snap_mem_create(path, tmp, &im, &fapl)) < 0)
		goto end;
	bad = snap_fill(f, j, type_of, text, buf, ids);
	if (H5Fclose(f) < 0)
		bad = 1;
	f = -1;
	if (bad || !im.kept || !im.mem) {
		log_error("%s: building the snapshot in memory (HDF5) failed (out of memory?)",
			  path);
		goto end;
	}
	/* the copies in the state's order are done with: less memory held
	 * while the file is written */
	free(buf), buf = NULL;
	free(ids), ids = NULL;
	size_t len = snap_image_length(&im);
	if (len == 0) {
		log_error("%s: the snapshot built in memory is not a complete HDF5 file; "
			  "not written", path);
		goto end;
	}
	rc = (stage ? out_stage_bytes : out_save_bytes)(path, im.mem, len, "snapshot") ? NB_ERUNTIME
										       : 0;
end:
	if (f >= 0)
		H5Fclose(f);
	if (fapl >= 0)
		H5Pclose(fapl);
	if (im.kept)
		free(im.mem);
	free(type_of);
	free(buf);
	free(ids);
	free(text);
	return rc;
}

int out_snap_part_write(const char *path, const struct out_snap_part *p, const struct scene *sc,
			const struct sim_state *st, size_t lo, size_t hi, int frame,
			const char *backend, const struct render_camera *cam)
{
	if (lo > hi || hi > st->n || p->K < 1 || p->k < 0 || p->k >= p->K) {
		log_error("%s: bad part %d of %d (bodies %zu..%zu of %zu)", path, p->k, p->K, lo, hi,
			  st->n);
		return NB_ERUNTIME;
	}
	const struct snap_job j = {sc, st, lo, hi, p, frame, backend, cam};
	return snap_file_write(path, &j, p->K > 1);
}

double out_snap_bytes(size_t n, enum scene_units units)
{
	struct snap_units su;
	snap_units_of(units, &su);
	/* Coordinates, Velocities, Masses (double), ParticleIDs (uint32), the
	 * exact positions, the exact velocities when km/s are stored, ~64 KiB
	 * of header and scene */
	double per = 7 * 8 + 4 + 24 + (su.velocity != 1.0 ? 24 : 0);
	return per * (double)n + 65536.0;
}
