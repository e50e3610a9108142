/* test_snapshot_read.c - the snapshot readers (sim/snap*.c, model: snapshot).
 * The test writes its own files: GADGET binary with a small writer of its
 * own below (format 1 and 2, both byte orders, 4- and 8-byte values), and
 * HDF5 through libhdf5 (and once through python3-h5py, SKIP without it).
 * Values read must equal what was written; units, the scale factor and h
 * are checked against the arithmetic; every kind of bad file is NB_EINPUT
 * with one message naming the file and the block or dataset. The real
 * GADGET-2 example ICs are read in place from ../shared/data/gadget2-ics
 * (SKIP when absent).
 *
 * Run: make CUDA_ARCH=sm_90 build/tests/test_snapshot_read && build/tests/test_snapshot_read */
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "scene/scene_schema.h"
#include "sim/sim.h"

#define GADGET_ICS "../shared/data/gadget2-ics"
#define KPC_CM 3.0856775814913673e21
#define MSUN_G (1.3271244e26 / 6.67430e-8)

static char tmpdir[64];
static char msg[8192];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-snap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static FILE *cap_file;
static int cap_saved;

static void cap_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	ck_assert_ptr_nonnull(cap_file);
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

static void cap_end(void)
{
	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(msg, 1, sizeof msg - 1, cap_file);
	msg[n] = '\0';
	fclose(cap_file);
}

static const char *tpath(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

/* ---- a GADGET binary writer of the test's own ---------------------------- */

struct gw {
	FILE *f;
	int swap, fmt, dbl; /* byte-swapped, format 1 or 2, 8-byte values */
};

static void gw_bytes(struct gw *w, const void *p, size_t n)
{
	ck_assert_uint_eq(fwrite(p, 1, n, w->f), n);
}

static void gw_u32(struct gw *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	gw_bytes(w, &v, 4);
}

static void gw_u64(struct gw *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	gw_bytes(w, &v, 8);
}

static void gw_f64(struct gw *w, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	gw_u64(w, v);
}

static void gw_f32(struct gw *w, float x)
{
	uint32_t v;
	memcpy(&v, &x, 4);
	gw_u32(w, v);
}

static void gw_real(struct gw *w, double x)
{
	if (w->dbl)
		gw_f64(w, x);
	else
		gw_f32(w, (float)x);
}

/* A record's opening: format 2's label record, then the length marker. */
static void gw_open(struct gw *w, const char *label, uint32_t len)
{
	if (w->fmt == 2) {
		char l[4] = {' ', ' ', ' ', ' '};
		memcpy(l, label, strlen(label));
		gw_u32(w, 8);
		gw_bytes(w, l, 4);
		gw_u32(w, len + 8);
		gw_u32(w, 8);
	}
	gw_u32(w, len);
}

/* The bodies of one test file: type t holds np[t] particles, in type order;
 * particle k (over all types) has id ids[k], position p[3k..], velocity
 * v[3k..], mass m[k] (written for types with mt[t] == 0). */
struct gfile {
	int np[6];
	double mt[6];
	uint64_t tot[6]; /* npartTotal (0: np) */
	int nfiles;
	double time, z, h;
	const double *p, *v, *m;
	const uint64_t *ids;
};

static void gw_write(const char *path, int fmt, int swap, int dbl, const struct gfile *g)
{
	struct gw w = {fopen(path, "wb"), swap, fmt, dbl};
	ck_assert_ptr_nonnull(w.f);
	int n = 0, nm = 0;
	for (int t = 0; t < 6; t++) {
		n += g->np[t];
		if (g->mt[t] == 0)
			nm += g->np[t];
	}
	const int es = dbl ? 8 : 4;
	gw_open(&w, "HEAD", 256);
	long at = ftell(w.f);
	for (int t = 0; t < 6; t++)
		gw_u32(&w, (uint32_t)g->np[t]);
	for (int t = 0; t < 6; t++)
		gw_f64(&w, g->mt[t]);
	gw_f64(&w, g->time);
	gw_f64(&w, g->z);
	gw_u32(&w, 0);
	gw_u32(&w, 0);
	for (int t = 0; t < 6; t++)
		gw_u32(&w, (uint32_t)(g->tot[t] ? g->tot[t] : (uint64_t)g->np[t]));
	gw_u32(&w, 0);
	gw_u32(&w, (uint32_t)g->nfiles);
	gw_f64(&w, 0);   /* BoxSize */
	gw_f64(&w, 0);   /* Omega0 */
	gw_f64(&w, 0);   /* OmegaLambda */
	gw_f64(&w, g->h); /* HubbleParam */
	while (ftell(w.f) < at + 256)
		gw_bytes(&w, "", 1);
	gw_u32(&w, 256);
	gw_open(&w, "POS", (uint32_t)(3 * n * es));
	for (int k = 0; k < 3 * n; k++)
		gw_real(&w, g->p[k]);
	gw_u32(&w, (uint32_t)(3 * n * es));
	gw_open(&w, "VEL", (uint32_t)(3 * n * es));
	for (int k = 0; k < 3 * n; k++)
		gw_real(&w, g->v[k]);
	gw_u32(&w, (uint32_t)(3 * n * es));
	gw_open(&w, "ID", (uint32_t)(n * es));
	for (int k = 0; k < n; k++)
		dbl ? gw_u64(&w, g->ids[k]) : gw_u32(&w, (uint32_t)g->ids[k]);
	gw_u32(&w, (uint32_t)(n * es));
	if (nm > 0) {
		gw_open(&w, "MASS", (uint32_t)(nm * es));
		for (int t = 0, k = 0; t < 6; t++)
			for (int i = 0; i < g->np[t]; i++, k++)
				if (g->mt[t] == 0)
					gw_real(&w, g->m[k]);
		gw_u32(&w, (uint32_t)(nm * es));
	}
	ck_assert_int_eq(fclose(w.f), 0);
}

/* Six bodies: three of type 1 (MassTable 0.5), two of type 2 and one of
 * type 4 (masses in the MASS block). Values exact in float. */
static const double six_p[18] = {1, 2, 3, -4, 5.5, 6, 7, -8, 9.25, 10, 11, -12, 0.5, 0.25, 0.125, -1, -2, -3};
static const double six_v[18] = {100, -50, 25, 1, 2, 3, -7, 8, 9, 0.5, 0, -0.5, 12, 13, 14, -15, 16, 17};
static const double six_m[6] = {0.5, 0.5, 0.5, 0.75, 1.25, 2};
static const uint64_t six_id[6] = {10, 11, 12, 20, 21, 30};

static struct gfile six(void)
{
	struct gfile g = {.np = {0, 3, 2, 0, 1, 0}, .mt = {0, 0.5, 0, 0, 0, 0}, .nfiles = 1,
			  .p = six_p, .v = six_v, .m = six_m, .ids = six_id};
	return g;
}

/* Open path, with stderr in msg; the handle or NULL and the code in *err. */
static struct sim_snap *snap_open_msg(const char *path, const struct sim_snap_format *f, int *err)
{
	struct sim_snap *s = NULL;
	cap_begin();
	*err = sim_snap_open(path, f, &s);
	cap_end();
	return s;
}

static void check_six(struct sim_snap *s)
{
	const struct sim_snap_header *h = sim_snap_header(s);
	ck_assert_uint_eq(h->npart[1], 3);
	ck_assert_uint_eq(h->npart[2], 2);
	ck_assert_uint_eq(h->npart[4], 1);
	ck_assert_uint_eq(h->npart_total[1], 3);
	int k = 0;
	for (int t = 0; t < 6; t++) {
		size_t n = (size_t)h->npart[t];
		uint64_t id[4];
		double p[12], v[12], m[4], hs[4];
		ck_assert_int_eq(sim_snap_read(s, t, 0, n, id, p, v, m, hs), 0);
		for (size_t i = 0; i < n; i++, k++) {
			ck_assert_uint_eq(id[i], six_id[k]);
			ck_assert_msg(m[i] == six_m[k], "mass %zu of type %d: %g, expected %g", i, t,
				      m[i], six_m[k]);
			for (int a = 0; a < 3; a++) {
				ck_assert(p[3 * i + a] == six_p[3 * k + a]);
				ck_assert(v[3 * i + a] == six_v[3 * k + a]);
			}
			ck_assert(isnan(hs[i]));
		}
	}
	ck_assert_int_eq(k, 6);
	/* a range in the middle of a type */
	double p[3];
	uint64_t id;
	ck_assert_int_eq(sim_snap_read(s, 1, 2, 1, &id, p, NULL, NULL, NULL), 0);
	ck_assert_uint_eq(id, 12);
	ck_assert(p[0] == 7 && p[1] == -8 && p[2] == 9.25);
}

START_TEST(binary_formats_byte_orders_and_widths_read_exact_values)
{
	struct gfile g = six();
	for (int fmt = 1; fmt <= 2; fmt++)
		for (int swap = 0; swap <= 1; swap++)
			for (int dbl = 0; dbl <= 1; dbl++) {
				char name[64];
				snprintf(name, sizeof name, "six-f%d-s%d-d%d.dat", fmt, swap, dbl);
				const char *path = tpath(name);
				gw_write(path, fmt, swap, dbl, &g);
				int err;
				struct sim_snap *s = snap_open_msg(path, NULL, &err);
				ck_assert_msg(err == 0, "%s: %s", name, msg);
				ck_assert_ptr_eq(sim_snap_header(s)->format,
						 sim_snap_format_find(fmt == 1 ? "gadget1" : "gadget2"));
				ck_assert_int_eq(sim_snap_header(s)->swapped, swap);
				check_six(s);
				sim_snap_close(&s);
				ck_assert_ptr_null(s);
				/* the other format asked for: refused, naming both */
				s = snap_open_msg(path, sim_snap_format_find(fmt == 1 ? "gadget2" : "gadget1"), &err);
				ck_assert_int_eq(err, NB_EINPUT);
				ck_assert_ptr_null(s);
				ck_assert_msg(strstr(msg, path) && strstr(msg, "format"), "%s", msg);
			}
}
END_TEST

START_TEST(mass_table_gives_masses_without_a_mass_block)
{
	/* every type with particles has a MassTable entry: no MASS block */
	struct gfile g = six();
	g.mt[2] = 3.5;
	g.mt[4] = 0.125;
	const char *path = tpath("mt.dat");
	gw_write(path, 1, 0, 0, &g);
	int err;
	struct sim_snap *s = snap_open_msg(path, sim_snap_format_find("gadget1"), &err);
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert(!sim_snap_header(s)->has_mass[1] && !sim_snap_header(s)->has_mass[2]);
	double m[3];
	ck_assert_int_eq(sim_snap_read(s, 2, 0, 2, NULL, NULL, NULL, m, NULL), 0);
	ck_assert(m[0] == 3.5 && m[1] == 3.5);
	ck_assert_int_eq(sim_snap_read(s, 4, 0, 1, NULL, NULL, NULL, m, NULL), 0);
	ck_assert(m[0] == 0.125);
	sim_snap_close(&s);
}
END_TEST

/* ---- scenes -------------------------------------------------------------- */

/* Load a scene text (dir tmpdir) and build its bodies; messages in msg. */
static int build(const char *text, struct scene *sc, struct sim_state *st)
{
	memset(st, 0, sizeof *st);
	cap_begin();
	int rc = scene_load_string(text, "t.yaml", tmpdir, NULL, 0, sc);
	if (rc == 0)
		rc = sim_ic_build(sc, st);
	cap_end();
	return rc;
}

START_TEST(multi_file_binary_snapshot_reads_every_part)
{
	/* the six bodies split 4 + 2 over two files */
	struct gfile a = six(), b = six();
	a.np[1] = 3, a.np[2] = 1, a.np[4] = 0;
	b.np[1] = 0, b.np[2] = 1, b.np[4] = 1;
	a.tot[1] = b.tot[1] = 3, a.tot[2] = b.tot[2] = 2, a.tot[4] = b.tot[4] = 1;
	a.nfiles = b.nfiles = 2;
	b.p = six_p + 12, b.v = six_v + 12, b.m = six_m + 4, b.ids = six_id + 4;
	gw_write(tpath("snap_007.0"), 2, 1, 0, &a);
	gw_write(tpath("snap_007.1"), 2, 1, 0, &b);
	struct scene sc;
	struct sim_state st;
	int rc = build("bodies: [{name: s, model: snapshot, file: snap_007.0, types: {halo: "
		       "{draw: true}}}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 6);
	ck_assert_int_eq(st.ncomp, 3);
	ck_assert_str_eq(st.comps[0].name, "s.halo");
	ck_assert_str_eq(st.comps[1].name, "s.disk");
	ck_assert_str_eq(st.comps[2].name, "s.stars");
	ck_assert_uint_eq(st.comps[1].first, 3);
	ck_assert_uint_eq(st.comps[1].count, 2);
	/* nbody scene: code values as they are, types in order over the files */
	for (size_t i = 0; i < 6; i++) {
		ck_assert(st.mass[i] == six_m[i]);
		for (int a3 = 0; a3 < 3; a3++)
			ck_assert(st.pos[3 * i + a3] == six_p[3 * i + a3]);
	}
	sim_state_free(&st);
	/* a missing part is an error naming it */
	ck_assert_int_eq(unlink(tpath("snap_007.1")), 0);
	rc = build("bodies: [{name: s, model: snapshot, file: snap_007.0}]\n", &sc, &st);
	ck_assert_int_eq(rc, NB_EINPUT);
	ck_assert_msg(strstr(msg, "snap_007.1"), "%s", msg);
	/* part names */
	char out[64];
	ck_assert_int_eq(sim_snap_part_path("a/snap_012.0.hdf5", 3, out, sizeof out), 0);
	ck_assert_str_eq(out, "a/snap_012.3.hdf5");
	ck_assert_int_eq(sim_snap_part_path("snap.0", 11, out, sizeof out), 0);
	ck_assert_str_eq(out, "snap.11");
	ck_assert_int_eq(sim_snap_part_path("snap.hdf5", 1, out, sizeof out), NB_EINPUT);
}
END_TEST

/* ---- HDF5 through libhdf5 ------------------------------------------------ */

static void h5_attr(hid_t loc, const char *name, const double *v, int n)
{
	hsize_t d = (hsize_t)n;
	hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &d, NULL);
	hid_t a = H5Acreate2(loc, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Awrite(a, H5T_NATIVE_DOUBLE, v), 0);
	H5Aclose(a);
	H5Sclose(sp);
}

static void h5_attr_counts(hid_t loc, const char *name, const unsigned *v)
{
	hsize_t d = 6;
	hid_t sp = H5Screate_simple(1, &d, NULL);
	hid_t a = H5Acreate2(loc, name, H5T_NATIVE_UINT, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Awrite(a, H5T_NATIVE_UINT, v), 0);
	H5Aclose(a);
	H5Sclose(sp);
}

/* dataset name in loc: rows x cols of ty (file) from mem (memty) */
static hid_t h5_dset(hid_t loc, const char *name, hid_t ty, hid_t memty, int rows, int cols,
		     const void *mem)
{
	hsize_t d[2] = {(hsize_t)rows, (hsize_t)cols};
	hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, d, NULL);
	hid_t ds = H5Dcreate2(loc, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(ds, 0);
	ck_assert_int_ge(H5Dwrite(ds, memty, H5S_ALL, H5S_ALL, H5P_DEFAULT, mem), 0);
	H5Sclose(sp);
	return ds;
}

/* What to break in an HDF5 test file. */
enum h5bad {
	H5_OK, H5_NO_HEADER, H5_NO_GROUP, H5_NO_COORDS, H5_COORDS_N2, H5_COORDS_INT, H5_ROWS,
	H5_IDS_FLOAT, H5_TOTAL, H5_NAN, H5_UNITS_PART, H5_NBAD
};
static const char *const h5bad_word[H5_NBAD] = {
	"",	"Header",      "PartType1",    "PartType1/Coordinates", "PartType1/Coordinates",
	"PartType1/Coordinates", "PartType2/Velocities", "PartType1/ParticleIDs", "NumPart_Total",
	"PartType2/Coordinates", "UnitMass_in_g"};

/* Group PartTypeT of f: N of the six bodies from the K-th, spoiled as BAD
 * says. */
static void h5_write_type(hid_t f, int t, int k, int n, enum h5bad bad)
{
	char gn[24];
	snprintf(gn, sizeof gn, "PartType%d", t);
	hid_t g = H5Gcreate2(f, gn, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double p[9] = {0}, v[9] = {0}, m[3] = {0};
	memcpy(p, six_p + 3 * k, sizeof(double) * 3 * (size_t)n);
	memcpy(v, six_v + 3 * k, sizeof(double) * 3 * (size_t)n);
	memcpy(m, six_m + k, sizeof(double) * (size_t)n);
	if (bad == H5_NAN && t == 2)
		p[1] = NAN;
	if (!(t == 1 && bad == H5_NO_COORDS)) {
		int cols = t == 1 && bad == H5_COORDS_N2 ? 2 : 3;
		hid_t ty = t == 1 && bad == H5_COORDS_INT ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
		int ip[9] = {0};
		for (int i = 0; i < 3 * n && ty == H5T_NATIVE_INT; i++)
			ip[i] = (int)p[i];
		H5Dclose(h5_dset(g, "Coordinates", ty, ty == H5T_NATIVE_INT ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE,
				 n, cols, ty == H5T_NATIVE_INT ? (void *)ip : (void *)p));
	}
	H5Dclose(h5_dset(g, "Velocities", H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE,
			 t == 2 && bad == H5_ROWS ? n + 1 : n, 3, v));
	uint64_t id[3];
	double idd[3];
	for (int i = 0; i < n; i++)
		id[i] = six_id[k + i], idd[i] = (double)id[i];
	if (t == 1 && bad == H5_IDS_FLOAT)
		H5Dclose(h5_dset(g, "ParticleIDs", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, n, 1, idd));
	else
		H5Dclose(h5_dset(g, "ParticleIDs", H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, n, 1, id));
	if (t == 2) {
		H5Dclose(h5_dset(g, "Masses", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, n, 1, m));
		double hs[3] = {0.1, 0.2, 0.3};
		H5Dclose(h5_dset(g, "SmoothingLength", H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, n, 1, hs));
	}
	H5Gclose(g);
}

/* Types 1 (3 particles, MassTable 0.5, no Masses), 2 (2, Masses) and 5
 * (one black hole: no Masses, MassTable 0), the six bodies' values; a
 * GADGET-4 style Parameters group when params. */
static void h5_write(const char *path, enum h5bad bad, int params, int nfiles, int part)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	unsigned np[6] = {0, 3, 2, 0, 0, 1}, tot[6] = {0, 3, 2, 0, 0, 1};
	if (nfiles == 2) { /* part 0: types 1 and 2's first; part 1: the rest */
		unsigned a[6] = {0, 3, 1, 0, 0, 0}, b[6] = {0, 0, 1, 0, 0, 1};
		memcpy(np, part ? b : a, sizeof np);
	}
	if (bad == H5_TOTAL)
		tot[1] = 4;
	double mt[6] = {0, 0.5, 0, 0, 0, 0};
	if (bad != H5_NO_HEADER) {
		hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		h5_attr_counts(h, "NumPart_ThisFile", np);
		h5_attr_counts(h, "NumPart_Total", tot);
		unsigned hw[6] = {0};
		h5_attr_counts(h, "NumPart_Total_HighWord", hw);
		h5_attr(h, "MassTable", mt, 6);
		double t = params ? 0.5 : 1, z = params ? 1 : 0, box = 100, nf = nfiles;
		h5_attr(h, "Time", &t, 1);
		h5_attr(h, "Redshift", &z, 1);
		h5_attr(h, "BoxSize", &box, 1);
		h5_attr(h, "NumFilesPerSnapshot", &nf, 1);
		H5Gclose(h);
	}
	if (params) {
		hid_t g = H5Gcreate2(f, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		double L = 3.085678e24, M = 1.989e43, V = 1e5, hh = 0.7, co = 1;
		h5_attr(g, "UnitLength_in_cm", &L, 1);
		if (bad != H5_UNITS_PART)
			h5_attr(g, "UnitMass_in_g", &M, 1);
		h5_attr(g, "UnitVelocity_in_cm_per_s", &V, 1);
		h5_attr(g, "HubbleParam", &hh, 1);
		h5_attr(g, "ComovingIntegrationOn", &co, 1);
		H5Gclose(g);
	}
	for (int t = 0; t < 6; t++) {
		int k = t == 1 ? 0 : t == 2 ? 3 : 5; /* first of the type among the six */
		if (nfiles == 2 && part == 1 && t == 2)
			k = 4;
		if (np[t] == 0 || (bad == H5_NO_GROUP && t == 1))
			continue;
		h5_write_type(f, t, k, (int)np[t], bad);
	}
	H5Fclose(f);
}

START_TEST(hdf5_snapshot_reads_exact_values_and_a_massless_black_hole)
{
	const char *path = tpath("snap.hdf5");
	h5_write(path, H5_OK, 0, 1, 0);
	int err;
	struct sim_snap *s = snap_open_msg(path, NULL, &err);
	ck_assert_msg(err == 0, "%s", msg);
	const struct sim_snap_header *h = sim_snap_header(s);
	ck_assert_ptr_eq(h->format, sim_snap_format_find("gadget-hdf5"));
	ck_assert(h->has_mass[2] && !h->has_mass[1] && !h->has_mass[5]);
	ck_assert(h->has_hsml[2] && !h->has_hsml[1]);
	ck_assert(h->box_size == 100);
	uint64_t id[3];
	double p[9], v[9], m[3], hs[3];
	ck_assert_int_eq(sim_snap_read(s, 1, 0, 3, id, p, v, m, hs), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(id[i], six_id[i]);
		ck_assert(m[i] == 0.5);
		for (int a = 0; a < 3; a++)
			ck_assert(p[3 * i + a] == six_p[3 * i + a] && v[3 * i + a] == six_v[3 * i + a]);
	}
	ck_assert_int_eq(sim_snap_read(s, 2, 1, 1, id, p, NULL, m, hs), 0); /* a hyperslab */
	ck_assert_uint_eq(id[0], 21);
	ck_assert(m[0] == 1.25 && p[0] == 0.5 && p[2] == 0.125);
	ck_assert_close(hs[0], 0.2, 0, 1e-7);
	ck_assert_int_eq(sim_snap_read(s, 5, 0, 1, id, p, NULL, m, NULL), 0);
	ck_assert(m[0] == 0 && id[0] == 30); /* no Masses, MassTable 0: mass 0 */
	sim_snap_close(&s);
}
END_TEST

START_TEST(hdf5_multi_file_snapshot_reads_every_part)
{
	h5_write(tpath("snap_003.0.hdf5"), H5_OK, 0, 2, 0);
	h5_write(tpath("snap_003.1.hdf5"), H5_OK, 0, 2, 1);
	struct scene sc;
	struct sim_state st;
	int rc = build("bodies: [{name: s, model: snapshot, file: snap_003.0.hdf5, types: {bh: "
		       "{draw: true}}}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 6);
	for (size_t i = 0; i < 6; i++) {
		double want = i == 5 ? 0 : six_m[i];
		ck_assert_msg(st.mass[i] == want, "body %zu: mass %g, expected %g", i, st.mass[i], want);
		ck_assert(st.pos[3 * i] == six_p[3 * i]);
	}
	ck_assert_str_eq(st.comps[2].name, "s.bh");
	sim_state_free(&st);
}
END_TEST

/* Body i of st in scene units. */
static void scene_pos(const struct scene *sc, const struct sim_state *st, size_t i, double x[3],
		      double v[3], double *m)
{
	struct sim_units u;
	scene_units_of(sc->units, &u);
	for (int a = 0; a < 3; a++) {
		x[a] = st->pos[3 * i + a] / u.length;
		v[a] = st->vel[3 * i + a] / u.velocity;
	}
	*m = st->mass[i] / u.mass;
}

START_TEST(gadget4_parameters_units_a_and_h_are_applied)
{
	/* Parameters: 1 Mpc/h, 1e10 M_sun/h, 1 km/s, h = 0.7, comoving at a = 0.5 */
	h5_write(tpath("g4.hdf5"), H5_OK, 1, 1, 0);
	struct scene sc;
	struct sim_state st;
	int rc = build("units: galactic\nbodies: [{name: s, model: snapshot, file: g4.hdf5}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_msg(strstr(msg, "Parameters group") && strstr(msg, "a = 0.5") &&
			      strstr(msg, "h = 0.7"),
		      "%s", msg);
	ck_assert_uint_eq(st.n, 6); /* the black hole loads too (mass 0, not drawn) */
	const double lf = 3.085678e24 / KPC_CM * 0.5 / 0.7, vf = sqrt(0.5),
		     mf = 1.989e43 / MSUN_G / 0.7;
	for (size_t i = 0; i < 5; i++) {
		double x[3], v[3], m;
		scene_pos(&sc, &st, i, x, v, &m);
		for (int a = 0; a < 3; a++) {
			ck_assert_close(x[a], six_p[3 * i + a] * lf, 0, 1e-12);
			ck_assert_close(v[a], six_v[3 * i + a] * vf, 1e-12, 1e-6); /* stored as float */
		}
		ck_assert_close(m, six_m[i] * mf, 0, 1e-12);
	}
	sim_state_free(&st);
	/* comoving: false keeps the stored (comoving) positions, still / h */
	rc = build("units: galactic\nbodies: [{name: s, model: snapshot, file: g4.hdf5, comoving: "
		   "false}]\n",
		   &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	double x[3], v[3], m;
	scene_pos(&sc, &st, 0, x, v, &m);
	ck_assert_close(x[0], 3.085678e24 / KPC_CM, 0, 1e-12);
	sim_state_free(&st);
}
END_TEST

START_TEST(gadget4_file_written_by_h5py_loads_with_its_units)
{
	/* Debian's python3 (python3-h5py installs there), else the one on PATH */
	const char *py = system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") == 0 ? "/usr/bin/python3"
			 : system("python3 -c 'import h5py' >/dev/null 2>&1") == 0	   ? "python3"
											   : NULL;
	if (!py) {
		printf("SKIP: gadget4_file_written_by_h5py_loads_with_its_units: python3-h5py absent\n");
		return;
	}
	char cmd[1536];
	snprintf(cmd, sizeof cmd,
		 "%s - <<'EOF'\n"
		 "import h5py\n"
		 "with h5py.File('%s/py.hdf5', 'w') as f:\n"
		 "    h = f.create_group('Header')\n"
		 "    h.attrs['NumPart_ThisFile'] = [0, 0, 0, 0, 2, 0]\n"
		 "    h.attrs['NumPart_Total'] = [0, 0, 0, 0, 2, 0]\n"
		 "    h.attrs['NumPart_Total_HighWord'] = [0] * 6\n"
		 "    h.attrs['MassTable'] = [0.0] * 6\n"
		 "    h.attrs['Time'] = 1.0\n"
		 "    h.attrs['Redshift'] = 0.0\n"
		 "    h.attrs['BoxSize'] = 50.0\n"
		 "    h.attrs['NumFilesPerSnapshot'] = 1\n"
		 "    p = f.create_group('Parameters')\n"
		 "    p.attrs['UnitLength_in_cm'] = 3.085678e21\n"
		 "    p.attrs['UnitMass_in_g'] = 1.989e33\n"
		 "    p.attrs['UnitVelocity_in_cm_per_s'] = 1e5\n"
		 "    p.attrs['HubbleParam'] = 0.7\n"
		 "    p.attrs['ComovingIntegrationOn'] = 0\n"
		 "    g = f.create_group('PartType4')\n"
		 "    g['Coordinates'] = [[1.0, 2.0, 3.0], [-4.0, 5.0, -6.0]]\n"
		 "    g['Velocities'] = [[10.0, 0.0, 0.0], [0.0, -20.0, 0.0]]\n"
		 "    g['ParticleIDs'] = [7, 9]\n"
		 "    g['Masses'] = [2.0, 3.0]\n"
		 "EOF",
		 py, tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	struct scene sc;
	struct sim_state st;
	int rc = build("units: galactic\nbodies: [{name: s, model: snapshot, file: py.hdf5}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 2);
	/* not comoving: no a, no h; 1 kpc (GADGET's), 1 M_sun (1.989e33 g) */
	double x[3], v[3], m;
	scene_pos(&sc, &st, 1, x, v, &m);
	ck_assert_close(x[0], -4.0 * 3.085678e21 / KPC_CM, 0, 1e-12);
	ck_assert_close(x[2], -6.0 * 3.085678e21 / KPC_CM, 0, 1e-12);
	ck_assert_close(v[1], -20.0, 0, 1e-12);
	ck_assert_close(m, 3.0 * 1.989e33 / MSUN_G, 0, 1e-12);
	sim_state_free(&st);
}
END_TEST

START_TEST(swift_units_group_and_exponents_are_applied)
{
	hid_t f = H5Fcreate(tpath("swift.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	unsigned np[6] = {0, 1, 0, 0, 0, 0};
	h5_attr_counts(h, "NumPart_ThisFile", np);
	h5_attr_counts(h, "NumPart_Total", np);
	double mt[6] = {0}, t = 0.013, a = 0.25, z = 3, box[3] = {10, 10, 10};
	h5_attr(h, "MassTable", mt, 6);
	h5_attr(h, "Time", &t, 1); /* a time, not a: Scale-factor gives a */
	h5_attr(h, "Scale-factor", &a, 1);
	h5_attr(h, "Redshift", &z, 1);
	h5_attr(h, "BoxSize", box, 3);
	H5Gclose(h);
	hid_t u = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double L = 3.08567758e24, M = 1.98841e43, T = 3.08567758e19; /* Mpc, 1e10 M_sun, Mpc/(km/s)... */
	h5_attr(u, "Unit length in cgs (U_L)", &L, 1);
	h5_attr(u, "Unit mass in cgs (U_M)", &M, 1);
	h5_attr(u, "Unit time in cgs (U_t)", &T, 1);
	H5Gclose(u);
	hid_t c = H5Gcreate2(f, "Cosmology", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double one = 1, hh = 0.6777;
	h5_attr(c, "Cosmological run", &one, 1);
	h5_attr(c, "h", &hh, 1);
	H5Gclose(c);
	hid_t g = H5Gcreate2(f, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double p[3] = {1, 2, 3}, v[3] = {4, 5, 6}, m = 2;
	uint64_t id = 5;
	double ea[3] = {1, 1, 0}; /* SWIFT: positions a^1, velocities a^1 (its convention) */
	const char *dn[3] = {"Coordinates", "Velocities", "Masses"};
	const void *dv[3] = {p, v, &m};
	for (int i = 0; i < 3; i++) {
		hid_t ds = h5_dset(g, dn[i], H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, 1, i < 2 ? 3 : 1, dv[i]);
		double zero = 0;
		h5_attr(ds, "a-scale exponent", &ea[i], 1);
		h5_attr(ds, "h-scale exponent", &zero, 1);
		H5Dclose(ds);
	}
	H5Dclose(h5_dset(g, "ParticleIDs", H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, 1, 1, &id));
	H5Gclose(g);
	H5Fclose(f);
	struct scene sc;
	struct sim_state st;
	int rc = build("units: galactic\nbodies: [{name: s, model: snapshot, file: swift.hdf5, "
		       "types: {halo: {draw: true}}}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_msg(strstr(msg, "Units group") && strstr(msg, "a = 0.25"), "%s", msg);
	double x[3], vv[3], mm;
	scene_pos(&sc, &st, 0, x, vv, &mm);
	ck_assert_close(x[0], 1 * L / KPC_CM * 0.25, 0, 1e-12); /* no h: SWIFT's exponent is 0 */
	ck_assert_close(vv[2], 6 * (L / T) / 1e5 * 0.25, 0, 1e-12);
	ck_assert_close(mm, 2 * M / MSUN_G, 0, 1e-12);
	sim_state_free(&st);
}
END_TEST

/* A SWIFT-like file: gas (type 0) with Masses, and two black holes (type
 * 5) with SWIFT's DynamicalMasses (and SubgridMasses, which are not the
 * gravitating mass) but no Masses; MassTable 0. The black holes' masses
 * are the DynamicalMasses, not 0 (issue 29: they were read as 0). */
START_TEST(swift_black_holes_take_their_dynamical_masses)
{
	hid_t f = H5Fcreate(tpath("swiftbh.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	unsigned np[6] = {1, 0, 0, 0, 0, 2};
	h5_attr_counts(h, "NumPart_ThisFile", np);
	h5_attr_counts(h, "NumPart_Total", np);
	double mt[6] = {0}, t = 0.1, z = 0, box[3] = {10, 10, 10};
	h5_attr(h, "MassTable", mt, 6);
	h5_attr(h, "Time", &t, 1);
	h5_attr(h, "Redshift", &z, 1);
	h5_attr(h, "BoxSize", box, 3);
	H5Gclose(h);
	hid_t u = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double L = KPC_CM, M = 1e10 * MSUN_G, T = KPC_CM / 1e5; /* kpc, 1e10 M_sun, km/s */
	h5_attr(u, "Unit length in cgs (U_L)", &L, 1);
	h5_attr(u, "Unit mass in cgs (U_M)", &M, 1);
	h5_attr(u, "Unit time in cgs (U_t)", &T, 1);
	H5Gclose(u);
	const double p[9] = {1, 2, 3, -1, -2, -3, 4, 5, 6}, v[6] = {0}, gm = 0.25, dyn[2] = {0.5, 0.125},
		     sub[2] = {0.01, 0.02};
	const uint64_t ids[2] = {7, 9}, gid = 3;
	for (int t5 = 0; t5 < 2; t5++) {
		hid_t g = H5Gcreate2(f, t5 ? "PartType5" : "PartType0", H5P_DEFAULT, H5P_DEFAULT,
				     H5P_DEFAULT);
		const int n = t5 ? 2 : 1;
		H5Dclose(h5_dset(g, "Coordinates", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, n, 3,
				 t5 ? p + 3 : p));
		H5Dclose(h5_dset(g, "Velocities", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, n, 3, v));
		H5Dclose(h5_dset(g, "ParticleIDs", H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, n, 1,
				 t5 ? ids : &gid));
		if (t5) {
			H5Dclose(h5_dset(g, "DynamicalMasses", H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, 2,
					 1, dyn));
			H5Dclose(h5_dset(g, "SubgridMasses", H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, 2, 1,
					 sub));
		} else {
			H5Dclose(h5_dset(g, "Masses", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, 1, 1, &gm));
		}
		H5Gclose(g);
	}
	H5Fclose(f);
	int err;
	struct sim_snap *s = snap_open_msg(tpath("swiftbh.hdf5"), NULL, &err);
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert(sim_snap_header(s)->has_mass[5] && sim_snap_header(s)->has_mass[0]);
	uint64_t id[2];
	double m[2] = {-1, -1}, x[6];
	ck_assert_int_eq(sim_snap_read(s, 5, 0, 2, id, x, NULL, m, NULL), 0);
	ck_assert(m[0] == 0.5 && m[1] == 0.125 && id[1] == 9 && x[0] == -1 && x[3] == 4);
	sim_snap_close(&s);
	/* through a scene: 1e10 M_sun units, so 5e9 and 1.25e9 M_sun */
	struct scene sc;
	struct sim_state st;
	int rc = build("units: galactic\nbodies: [{name: s, model: snapshot, file: swiftbh.hdf5}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 3);
	double xx[3], vv[3], mm[3];
	for (size_t i = 0; i < 3; i++)
		scene_pos(&sc, &st, i, xx, vv, &mm[i]);
	ck_assert_close(mm[0], 0.25e10, 0, 1e-12);
	ck_assert_close(mm[1], 0.5e10, 0, 1e-12);
	ck_assert_close(mm[2], 0.125e10, 0, 1e-12);
	sim_state_free(&st);
}
END_TEST

/* ---- region and subsample ------------------------------------------------ */

/* n bodies of type 2 at x = id / 8 (y = z = 0), in the order of perm. */
static void write_line(const char *path, int n, int reverse)
{
	double *p = calloc(3 * (size_t)n, sizeof *p), *v = calloc(3 * (size_t)n, sizeof *v);
	uint64_t *ids = calloc((size_t)n, sizeof *ids);
	for (int k = 0; k < n; k++) {
		uint64_t id = (uint64_t)(reverse ? n - 1 - k : k) * 7 + 1000;
		ids[k] = id;
		p[3 * k] = (double)id / 8;
		v[3 * k + 1] = reverse ? 1 : 2; /* the two files differ in more than order */
	}
	struct gfile g = {.np = {0, 0, n, 0, 0, 0}, .mt = {0, 0, 1, 0, 0, 0}, .nfiles = 1,
			  .p = p, .v = v, .m = NULL, .ids = ids};
	gw_write(path, 1, 0, 1, &g);
	free(p);
	free(v);
	free(ids);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorted x of the bodies the scene keeps. */
static size_t kept_x(const char *file, const char *extra, double *xs, size_t cap)
{
	char text[512];
	snprintf(text, sizeof text,
		 "bodies: [{name: s, model: snapshot, file: %s%s}]\n", file, extra);
	struct scene sc;
	struct sim_state st;
	int rc = build(text, &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_le(st.n, cap);
	for (size_t i = 0; i < st.n; i++)
		xs[i] = st.pos[3 * i];
	size_t n = st.n;
	qsort(xs, n, sizeof *xs, cmp_double);
	sim_state_free(&st);
	return n;
}

START_TEST(subsample_keeps_the_same_ids_in_any_order_and_region_cuts_exactly)
{
	enum { N = 4000 };
	write_line(tpath("a.dat"), N, 0);
	write_line(tpath("b.dat"), N, 1);
	static double xa[N], xb[N];
	size_t na = kept_x("a.dat", ", subsample: 0.3", xa, N);
	size_t nb = kept_x("b.dat", ", subsample: 0.3", xb, N);
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++)
		ck_assert(xa[i] == xb[i]);
	/* which: exactly the IDs the hash keeps; about 30 % of them */
	size_t want = 0;
	for (int k = 0; k < N; k++)
		want += (size_t)sim_snap_keep_id((uint64_t)k * 7 + 1000, 0.3);
	ck_assert_uint_eq(na, want);
	ck_assert_msg(na > 0.27 * N && na < 0.33 * N, "kept %zu of %d", na, N);
	for (size_t i = 0; i < na; i++)
		ck_assert(sim_snap_keep_id((uint64_t)(xa[i] * 8), 0.3));
	/* a sphere about x = 2000 of radius 100 keeps ids with |id/8 - 2000| <= 100 */
	size_t ns = kept_x("b.dat", ", region: {shape: sphere, center: [2000, 0, 0], radius: 100}",
			   xa, N);
	size_t ws = 0;
	for (int k = 0; k < N; k++)
		ws += fabs(((double)k * 7 + 1000) / 8 - 2000) <= 100;
	ck_assert_uint_eq(ns, ws);
	ck_assert(xa[0] >= 1900 && xa[ns - 1] <= 2100);
	/* a box, with a subsample: both rules */
	size_t nbx = kept_x("a.dat",
			    ", subsample: 0.5, region: {shape: box, center: [1000, 0, 0], size: "
			    "[400, 1, 1]}",
			    xa, N);
	size_t wb = 0;
	for (int k = 0; k < N; k++) {
		uint64_t id = (uint64_t)k * 7 + 1000;
		wb += fabs((double)id / 8 - 1000) <= 200 && sim_snap_keep_id(id, 0.5);
	}
	ck_assert_uint_eq(nbx, wb);
}
END_TEST

START_TEST(reads_past_one_chunk_and_skips_types_not_loaded)
{
	/* 70,000 particles: more than one 65,536-particle chunk */
	enum { N = 70000 };
	write_line(tpath("big.dat"), N, 1);
	static double xs[N];
	size_t n = kept_x("big.dat", "", xs, N);
	ck_assert_uint_eq(n, N);
	for (size_t k = 0; k < n; k++)
		ck_assert(xs[k] == ((double)k * 7 + 1000) / 8);
	/* load: false skips a type (no component, no bodies) */
	struct gfile g = six();
	gw_write(tpath("six.dat"), 1, 0, 0, &g);
	struct scene sc;
	struct sim_state st;
	int rc = build("bodies: [{name: s, model: snapshot, file: six.dat, types: {halo: {load: "
		       "false}}}]\n",
		       &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 3);
	ck_assert_int_eq(st.ncomp, 2);
	ck_assert_str_eq(st.comps[0].name, "s.disk");
	ck_assert(st.comps[0].brightness == 1.0f);
	sim_state_free(&st);
	/* the halo drawn false by default: brightness 0 */
	rc = build("bodies: [{name: s, model: snapshot, file: six.dat}]\n", &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_str_eq(st.comps[0].name, "s.halo");
	ck_assert(st.comps[0].brightness == 0.0f);
	sim_state_free(&st);
	/* an encounter cannot place a snapshot entry (its mass is in the file) */
	cap_begin();
	rc = scene_load_string("bodies: [{name: a, model: snapshot, file: six.dat}, {name: b, model: "
			       "plummer}]\nencounter: {pericenter: 1}\n",
			       "t.yaml", tmpdir, NULL, 0, &sc);
	cap_end();
	ck_assert_int_eq(rc, NB_EINPUT);
	ck_assert_msg(strstr(msg, "encounter") && strstr(msg, "model snapshot"), "%s", msg);
}
END_TEST

/* ---- bad input ------------------------------------------------------------ */

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	unsigned char *b = malloc(*len);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	fclose(f);
}

/* Open and read everything; NB_EINPUT expected with msg holding path and word. */
static void expect_bad(const char *path, const char *word)
{
	int err;
	struct sim_snap *s = snap_open_msg(path, NULL, &err);
	if (err == 0) {
		const struct sim_snap_header *h = sim_snap_header(s);
		cap_begin();
		for (int t = 0; t < 6 && !err; t++) {
			size_t n = (size_t)h->npart[t];
			uint64_t *id = malloc(n * 8 + 8);
			double *p = malloc(n * 24 + 24), *v = malloc(n * 24 + 24), *m = malloc(n * 8 + 8);
			err = sim_snap_read(s, t, 0, n, id, p, v, m, NULL);
			free(id), free(p), free(v), free(m);
		}
		cap_end();
		sim_snap_close(&s);
	}
	ck_assert_msg(err == NB_EINPUT, "%s: expected NB_EINPUT, got %d (%s)", path, err, msg);
	ck_assert_msg(strstr(msg, path), "%s: message does not name the file: %s", path, msg);
	ck_assert_msg(strstr(msg, word), "%s: message does not say '%s': %s", path, word, msg);
	ck_assert_msg(strchr(msg, '\n') == strrchr(msg, '\n'), "%s: more than one line: %s", path, msg);
}

START_TEST(bad_binary_files_name_the_file_and_block)
{
	struct gfile g = six();
	const char *good = tpath("good.dat");
	gw_write(good, 1, 0, 0, &g);
	size_t len;
	unsigned char *b = slurp(good, &len), *c = malloc(len + 64);
	/* truncated anywhere: every cut is refused */
	for (size_t cut = 1; cut < len; cut += (cut < 300 ? 37 : 11)) {
		const char *p = tpath("cut.dat");
		spit(p, b, cut);
		int err;
		struct sim_snap *s = snap_open_msg(p, NULL, &err);
		ck_assert_msg(err == NB_EINPUT && !s, "cut at %zu: %d %s", cut, err, msg);
		ck_assert_msg(strstr(msg, p), "%s", msg);
	}
	/* wrong first marker */
	memcpy(c, b, len);
	c[0] = 0x57, c[1] = 0x41;
	spit(tpath("magic.dat"), c, len);
	expect_bad(tpath("magic.dat"), "first record marker");
	/* end marker of the header differs */
	memcpy(c, b, len);
	c[4 + 256] ^= 1;
	spit(tpath("endmark.dat"), c, len);
	expect_bad(tpath("endmark.dat"), "end marker");
	/* npart[1] = -1 */
	memcpy(c, b, len);
	memset(c + 4 + 4, 0xff, 4);
	spit(tpath("negative.dat"), c, len);
	expect_bad(tpath("negative.dat"), "npart[1]");
	/* npart[1] = 4: the POS block no longer fits the counts */
	memcpy(c, b, len);
	c[4 + 4] = 4;
	spit(tpath("count.dat"), c, len);
	expect_bad(tpath("count.dat"), "POS block");
	/* npartTotal[2] = 9 in a one-file snapshot */
	memcpy(c, b, len);
	c[4 + 96 + 8] = 9;
	spit(tpath("total.dat"), c, len);
	expect_bad(tpath("total.dat"), "NumPart_Total[2]");
	/* a NaN coordinate (first float of POS) */
	memcpy(c, b, len);
	float nan = NAN;
	memcpy(c + 4 + 256 + 4 + 4, &nan, 4);
	spit(tpath("nan.dat"), c, len);
	expect_bad(tpath("nan.dat"), "POS block");
	/* the MASS block missing (file cut right before it) */
	size_t mass_at = 4 + 256 + 4 + (8 + 72) * 2 + (8 + 24);
	spit(tpath("nomass.dat"), b, mass_at);
	expect_bad(tpath("nomass.dat"), "MASS block");
	/* a negative mass */
	memcpy(c, b, len);
	float neg = -1;
	memcpy(c + mass_at + 4, &neg, 4);
	spit(tpath("negmass.dat"), c, len);
	expect_bad(tpath("negmass.dat"), "MASS block");
	/* format 2 without its HEAD label first */
	gw_write(tpath("f2.dat"), 2, 0, 0, &g);
	free(b);
	b = slurp(tpath("f2.dat"), &len);
	b[4] = 'X';
	spit(tpath("label.dat"), b, len);
	expect_bad(tpath("label.dat"), "HEAD");
	free(b);
	free(c);
}
END_TEST

START_TEST(bad_hdf5_files_name_the_file_and_dataset)
{
	for (int k = 1; k < H5_NBAD; k++) {
		char name[32];
		snprintf(name, sizeof name, "bad%d.hdf5", k);
		const char *p = tpath(name);
		h5_write(p, (enum h5bad)k, k == H5_UNITS_PART, 1, 0);
		expect_bad(p, h5bad_word[k]);
	}
	/* a good file cut in half */
	h5_write(tpath("whole.hdf5"), H5_OK, 0, 1, 0);
	size_t len;
	unsigned char *b = slurp(tpath("whole.hdf5"), &len);
	for (size_t cut = 8; cut < len; cut = cut * 2 + 5) {
		spit(tpath("half.hdf5"), b, cut);
		int err;
		struct sim_snap *s = snap_open_msg(tpath("half.hdf5"), sim_snap_format_find("gadget-hdf5"), &err);
		if (err == 0) { /* what opens must read or fail cleanly */
			uint64_t id[3];
			double p[9];
			cap_begin();
			err = sim_snap_read(s, 1, 0, 3, id, p, NULL, NULL, NULL);
			cap_end();
			sim_snap_close(&s);
		}
		ck_assert_msg(err == NB_EINPUT, "cut at %zu: %d (%s)", cut, err, msg);
		ck_assert_msg(strstr(msg, "half.hdf5"), "%s", msg);
	}
	free(b);
}
END_TEST

/* The program exits 2 for a scene whose snapshot is bad (run and dry run). */
START_TEST(bad_snapshot_in_a_scene_exits_2)
{
	const char *bad = tpath("bad.dat");
	spit(bad, (const unsigned char *)"not a snapshot at all\n", 22);
	char scene[256], cmd[1024];
	snprintf(scene, sizeof scene, "%s/s.yaml", tmpdir);
	FILE *f = fopen(scene, "w");
	fprintf(f, "bodies: [{name: s, model: snapshot, file: bad.dat}]\noutput: {frames: 1}\n");
	fclose(f);
	for (int dry = 0; dry <= 1; dry++) {
		snprintf(cmd, sizeof cmd, "%s %s %s --backend cpu >%s/out.txt 2>&1", nb_bin(), scene,
			 dry ? "--dry-run" : "--quiet", tmpdir);
		int st = system(cmd);
		ck_assert(WIFEXITED(st));
		ck_assert_int_eq(WEXITSTATUS(st), 2);
	}
	size_t len;
	unsigned char *b = slurp(tpath("out.txt"), &len);
	b[len - 1] = '\0';
	ck_assert_msg(strstr((char *)b, "bad.dat") && strstr((char *)b, "first record marker"), "%s", b);
	free(b);
}
END_TEST

/* What our own writer (output.snapshots, main's output/snap_write.c) writes
 * reads back as the run's final state: the same bodies, positions and
 * velocities (its Units group, SWIFT's names, gives the units). */
START_TEST(snapshots_this_program_writes_read_back_as_its_final_state)
{
	char scene[256], cmd[1024];
	snprintf(scene, sizeof scene, "%s/w.yaml", tmpdir);
	FILE *f = fopen(scene, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "units: galactic\nseed: 3\n"
		   "simulation: {solver: direct, softening: 0.5, dt: 1, steps_per_frame: 3}\n"
		   "bodies: [{name: c, model: plummer, count: 300, mass: 1e10, scale: 2}]\n"
		   "render: {width: 32, height: 32}\n"
		   "output: {frames: 2, snapshots: {every: 1, dir: %s/snaps}, final_state: %s/final.csv}\n",
		tmpdir, tmpdir);
	fclose(f);
	snprintf(cmd, sizeof cmd, "%s %s --backend cpu --quiet >%s/out.txt 2>&1", nb_bin(), scene, tmpdir);
	int rc = system(cmd);
	size_t len;
	ck_assert_msg(rc == 0, "%s failed: %s", cmd, (char *)slurp(tpath("out.txt"), &len));
	struct scene sc;
	struct sim_state st;
	rc = build("units: galactic\nbodies: [{name: r, model: snapshot, file: snaps/snap_001.hdf5, "
		   "types: {halo: {draw: true}}}]\n",
		   &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_msg(strstr(msg, "Units group") && strstr(msg, "not comoving"), "%s", msg);
	ck_assert_uint_eq(st.n, 300);
	FILE *csv = fopen(tpath("final.csv"), "r");
	ck_assert_ptr_nonnull(csv);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof line, csv)); /* header */
	for (size_t i = 0; i < st.n; i++) {
		unsigned id;
		char comp[80];
		double m, x[3], v[3], gx[3], gv[3], gm;
		ck_assert_ptr_nonnull(fgets(line, sizeof line, csv));
		ck_assert_int_eq(sscanf(line, "%u,%79[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf", &id, comp, &m,
					&x[0], &x[1], &x[2], &v[0], &v[1], &v[2]),
				 9);
		scene_pos(&sc, &st, i, gx, gv, &gm);
		ck_assert_close(gm, m, 0, 1e-6);
		for (int a = 0; a < 3; a++) {
			ck_assert_close(gx[a], x[a], 1e-7, 1e-7); /* the CSV has 9 digits */
			ck_assert_close(gv[a], v[a], 1e-7, 1e-7);
		}
	}
	fclose(csv);
	sim_state_free(&st);
}
END_TEST

/* ---- the real GADGET-2 example ICs --------------------------------------- */

static int have_ics(const char *name)
{
	char p[256];
	snprintf(p, sizeof p, GADGET_ICS "/%s", name);
	if (access(p, R_OK) == 0)
		return 1;
	printf("SKIP: %s absent (the GADGET-2 example ICs are read in place)\n", p);
	return 0;
}

START_TEST(real_gadget2_galaxy_ics_load_with_masses_from_the_mass_table)
{
	if (!have_ics("galaxy_littleendian.dat"))
		return;
	char cwd[1024], text[1400];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(text, sizeof text,
		 "units: galactic\nbodies: [{name: g, model: snapshot, file: %s/" GADGET_ICS
		 "/galaxy_littleendian.dat, types: {halo: {draw: true}}}]\n",
		 cwd);
	struct scene sc;
	struct sim_state st;
	int rc = build(text, &sc, &st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(st.n, 60000);
	ck_assert_int_eq(st.ncomp, 2);
	ck_assert_str_eq(st.comps[0].name, "g.halo");
	ck_assert_uint_eq(st.comps[0].count, 40000);
	ck_assert_uint_eq(st.comps[1].count, 20000);
	/* the header's MassTable: 0.0010463387006893754 and 0.00023251971288118511
	 * (1e10 M_sun, GADGET's default mass unit 1.989e43 g) */
	double want = (40000 * 0.0010463387006893754 + 20000 * 0.00023251971288118511) * 1.989e43 /
		      MSUN_G;
	double total = 0;
	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	for (size_t i = 0; i < st.n; i++)
		total += st.mass[i] / u.mass;
	ck_assert_close(total, want, 0, 1e-12);
	ck_assert_close(st.mass[0] / u.mass, 0.0010463387006893754 * 1.989e43 / MSUN_G, 0, 1e-14);
	/* the two galaxies sit ~200 kpc apart, symmetric about the origin */
	double com[3];
	sim_state_com(&st, NULL, com, NULL, NULL);
	for (int a = 0; a < 3; a++)
		ck_assert_msg(fabs(com[a]) < 1, "centre of mass %g", com[a]);
	sim_state_free(&st);
}
END_TEST

START_TEST(real_gadget2_gas_and_cosmological_ics_load)
{
	if (!have_ics("gassphere_littleendian.dat") || !have_ics("lcdm_gas_littleendian.dat"))
		return;
	/* the gas sphere: masses in a MASS block (MassTable 0) */
	int err;
	struct sim_snap *s = snap_open_msg(GADGET_ICS "/gassphere_littleendian.dat", sim_snap_format_find("gadget1"), &err);
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert_uint_eq(sim_snap_header(s)->npart[0], 1472);
	ck_assert(sim_snap_header(s)->has_mass[0]);
	static double m[1472];
	ck_assert_int_eq(sim_snap_read(s, 0, 0, 1472, NULL, NULL, NULL, m, NULL), 0);
	double total = 0;
	for (int i = 0; i < 1472; i++) {
		ck_assert(m[i] > 0);
		total += m[i];
	}
	ck_assert_close(total, 1.0, 0, 1e-5); /* Evrard's sphere: M = 1 in code units */
	sim_snap_close(&s);
	/* the LCDM box: a = 1/11 at z = 10: comoving */
	struct scene sc;
	struct sim_state st;
	char cwd[1024], text[1400];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	snprintf(text, sizeof text,
		 "bodies: [{name: c, model: snapshot, file: %s/" GADGET_ICS "/lcdm_gas_littleendian.dat}]\n",
		 cwd);
	ck_assert_int_eq(build(text, &sc, &st), 0);
	ck_assert_uint_eq(st.n, 65536);
	struct sim_snap_info in;
	ck_assert_int_eq(sim_snap_load(&sc, 0, NULL, NULL, 0, 0, &in), 0);
	ck_assert(in.comoving == 1);
	ck_assert_close(in.a, 1.0 / 11, 0, 1e-12);
	ck_assert_uint_eq(in.in_file[0], 32768);
	ck_assert_uint_eq(in.in_file[1], 32768);
	sim_state_free(&st);
}
END_TEST

/* bodies.*.format's names and the readers' rows are the same set: every
 * name but auto finds its row, and an unknown name none. */
START_TEST(every_format_name_of_the_scene_finds_its_row)
{
	const struct scene_key *key = scene_schema_find("bodies.*.format");
	ck_assert_ptr_nonnull(key);
	ck_assert_str_eq(key->names[0], "auto");
	ck_assert_ptr_null(sim_snap_format_find("auto"));
	ck_assert_ptr_null(sim_snap_format_find("tipsy"));
	int n = 0;
	for (; key->names[n + 1]; n++) {
		const struct sim_snap_format *f = sim_snap_format_find(key->names[n + 1]);
		ck_assert_msg(f != NULL, "%s: no row", key->names[n + 1]);
		ck_assert(sim_snap_format_title(f)[0] != '\0');
	}
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(sim_snap_format_title(sim_snap_format_find("gadget-hdf5")),
			 "GADGET-style HDF5");
	ck_assert_str_eq(sim_snap_format_title(sim_snap_format_find("gadget2")),
			 "GADGET binary format 2");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot_read");
	TCase *tc = tcase_create("readers");
	tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
	tcase_add_test(tc, binary_formats_byte_orders_and_widths_read_exact_values);
	tcase_add_test(tc, mass_table_gives_masses_without_a_mass_block);
	tcase_add_test(tc, multi_file_binary_snapshot_reads_every_part);
	tcase_add_test(tc, hdf5_snapshot_reads_exact_values_and_a_massless_black_hole);
	tcase_add_test(tc, hdf5_multi_file_snapshot_reads_every_part);
	tcase_add_test(tc, gadget4_parameters_units_a_and_h_are_applied);
	tcase_add_test(tc, gadget4_file_written_by_h5py_loads_with_its_units);
	tcase_add_test(tc, swift_units_group_and_exponents_are_applied);
	tcase_add_test(tc, swift_black_holes_take_their_dynamical_masses);
	tcase_add_test(tc, subsample_keeps_the_same_ids_in_any_order_and_region_cuts_exactly);
	tcase_add_test(tc, reads_past_one_chunk_and_skips_types_not_loaded);
	tcase_add_test(tc, bad_binary_files_name_the_file_and_block);
	tcase_add_test(tc, bad_hdf5_files_name_the_file_and_dataset);
	tcase_add_test(tc, bad_snapshot_in_a_scene_exits_2);
	tcase_add_test(tc, snapshots_this_program_writes_read_back_as_its_final_state);
	tcase_add_test(tc, real_gadget2_galaxy_ics_load_with_masses_from_the_mass_table);
	tcase_add_test(tc, real_gadget2_gas_and_cosmological_ics_load);
	tcase_add_test(tc, every_format_name_of_the_scene_finds_its_row);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
