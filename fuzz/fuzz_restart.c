/* fuzz_restart.c - libFuzzer harness for --restart: app/run.c's
 * views_start builds a fixed small scene's bodies (sim_ic_build: a
 * plummer entry "a" of 3 bodies and a hernquist entry "b" of 2), then
 * sim_snap_restart puts a fuzzed snapshot's state into them; the
 * preflight's sim_snap_restart_check is called on the same file first.
 *
 * Structured: the input is a recipe from which libhdf5 writes a snapshot
 * laid out as output/snap_write.c writes one (sim/snap_format.h), each
 * item right or perturbed. Byte 0 picks the scene: bit 0 nbody units
 * (else galactic), bit 1 barnes-hut (else direct). Then flags (bit 0: no
 * /NbodyRender group, bit 1: no /Header, bit 2: bodies in reverse order,
 * bit 3: each body's particle type from the recipe, else type 4), the
 * frame (0..11), each /NbodyRender attribute (modes: right, absent,
 * another value, another shape or class), NumPart_ThisFile (right or
 * recipe counts, huge ones included), and per type group its datasets
 * (right values, recipe values with NaN, infinities and huge numbers,
 * absent, or a wrong shape), and /NbodyRender/InternalVelocities. The
 * file goes to a private directory under $TMPDIR, removed after each input.
 *
 * Contract: sim_snap_restart_check and sim_snap_restart return 0 or
 * NB_EINPUT; a restart that succeeds passed the check with the same frame,
 * left frames to render, kept every mass, and holds positions, velocities
 * and time finite in internal units; the snapshot it read is still there,
 * unchanged in size (a restart never destroys its input). */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../scene/scene.h"
#include "../sim/sim.h"
#include "../sim/snap_format.h"
#include "fuzz_files.h"
#include "fuzz_h5.h"
#include "fuzz_util.h"

#define NB 5 /* bodies of the scene */
#define FRAMES 10
#define NAMELEN (SCENE_NAME_MAX + 8)

struct fixed {
	struct scene sc;
	struct sim_state st; /* as sim_ic_build made it */
};

static struct fixed *fixed_scene(int which)
{
	static struct fixed *cache[4];
	if (cache[which])
		return cache[which];
	struct fixed *f = calloc(1, sizeof *f);
	if (!f)
		abort();
	char text[1024];
	snprintf(text, sizeof text,
		 "units: %s\nseed: 3\n"
		 "simulation: {solver: %s, softening: 0.1, dt: 0.5, steps_per_frame: 2, theta: 0.6}\n"
		 "bodies:\n"
		 "  - {name: a, model: plummer, count: 3, mass: 1, scale: 1}\n"
		 "  - {name: b, model: hernquist, count: 2, mass: 2, scale: 1, position: [5, 0, 0]}\n"
		 "output: {frames: %d}\n",
		 which & 1 ? "nbody" : "galactic", which & 2 ? "barnes-hut" : "direct", FRAMES);
	if (scene_load_string(text, "restart.yaml", "/", NULL, 0, &f->sc) ||
	    sim_ic_build(&f->sc, &f->st) || f->st.n != NB)
		fuzz_fail("the fixed scene does not build", 0);
	cache[which] = f;
	return f;
}

static void attr(hid_t loc, const char *name, hid_t type, const void *v, hsize_t n)
{
	hid_t s = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
	hid_t a = s >= 0 ? H5Acreate2(loc, name, type, s, H5P_DEFAULT, H5P_DEFAULT) : -1;
	if (a >= 0) {
		H5Awrite(a, type, v);
		H5Aclose(a);
	}
	if (s >= 0)
		H5Sclose(s);
}

/* n fixed-length strings of len bytes (n 0: one, scalar). */
static void attr_strs(hid_t loc, const char *name, const char *v, size_t len, hsize_t n)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0)
		return;
	H5Tset_size(t, len ? len : 1);
	H5Tset_strpad(t, H5T_STR_NULLPAD);
	attr(loc, name, t, v, n);
	H5Tclose(t);
}

/* One attribute: mode 0-3 the right value (int, long long, double or a
 * string), 4 absent, 5 another value of the same class, 6 a list of 2,
 * 7 a string where a number is expected (a number where a string is). */
enum kind { K_INT, K_LL, K_DBL, K_STR };

static void put(struct recipe *r, hid_t g, const char *name, enum kind k, double right,
		const char *sright)
{
	const unsigned mode = rb(r) % 8;
	if (mode == 4)
		return;
	double d = mode == 5 ? rval(r) : right;
	int iv[2] = {(int)(isfinite(d) && fabs(d) < 2e9 ? d : -1), 3};
	long long lv[2] = {(long long)(isfinite(d) && fabs(d) < 9e18 ? d : -1), 3};
	double dv[2] = {d, d};
	hsize_t n = mode == 6 ? 2 : 0;
	if (mode == 7) {
		if (k == K_STR)
			attr(g, name, H5T_NATIVE_DOUBLE, dv, 0);
		else
			attr_strs(g, name, "12", 2, 0);
		return;
	}
	if (k == K_INT)
		attr(g, name, H5T_NATIVE_INT, iv, n);
	else if (k == K_LL)
		attr(g, name, H5T_NATIVE_LLONG, lv, n);
	else if (k == K_DBL)
		attr(g, name, H5T_NATIVE_DOUBLE, dv, n);
	else {
		const char *sv = mode == 5 ? "abc" : sright;
		const size_t len = strlen(sv);
		char sb[64] = ""; /* the string once, or twice for a list of 2 */
		memcpy(sb, sv, len);
		memcpy(sb + len, sv, len);
		attr_strs(g, name, sb, len, n);
	}
}

/* A double dataset of rows x cols (cols 1: one dimension) or a wrong one:
 * mode 0-3 v as given, 4-5 recipe values, 6 absent, 7 one row more. */
static void dset(struct recipe *r, hid_t g, const char *name, const double *v, size_t rows,
		 size_t cols)
{
	const unsigned mode = rb(r) % 8;
	if (mode == 6)
		return;
	const size_t rw = rows + (mode == 7);
	double *buf = calloc(rw * cols + 1, sizeof *buf);
	if (!buf)
		abort();
	for (size_t i = 0; i < rw * cols; i++)
		buf[i] = mode <= 3 && i < rows * cols ? v[i] : rval(r);
	hsize_t dims[2] = {rw, cols};
	hid_t s = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
	hid_t d = H5Dcreate2(g, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d >= 0) {
		H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		H5Dclose(d);
	}
	H5Sclose(s);
	free(buf);
}

static void dset_ids(struct recipe *r, hid_t g, const uint32_t *v, size_t rows)
{
	const unsigned mode = rb(r) % 8;
	if (mode == 6)
		return;
	const size_t rw = rows + (mode == 7);
	uint32_t buf[2 * NB + 2];
	for (size_t i = 0; i < rw; i++)
		buf[i] = mode <= 3 && i < rows ? v[i] : rb(r) < 250 ? rb(r) % 8 : 4294967295u;
	hsize_t n = rw;
	hid_t s = H5Screate_simple(1, &n, NULL);
	hid_t d = H5Dcreate2(g, "ParticleIDs", H5T_STD_U32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d >= 0) {
		H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		H5Dclose(d);
	}
	H5Sclose(s);
}

/* The program's own group (NbodyRender), each attribute right or hostile
 * as the recipe says. */
static void write_own(hid_t f, struct recipe *r, const struct fixed *fx, int frame,
		      const struct snap_units *su, const struct sim_units *u)
{
	const struct scene *sc = &fx->sc;
	hid_t g = H5Gcreate2(f, SNAP_GROUP_OWN, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	const int bh = sc->simulation.solver == SCENE_SOLVER_BARNES_HUT;
	char names[2][NAMELEN];
	long long cc[2] = {3, 2};
	memset(names, 0, sizeof names);
	strcpy(names[0], "a");
	strcpy(names[1], "b");
	put(r, g, "FormatVersion", K_INT, SNAP_FORMAT_VERSION, NULL);
	put(r, g, "Frame", K_INT, frame, NULL);
	put(r, g, "Step", K_LL, (double)frame * sc->simulation.steps_per_frame, NULL);
	put(r, g, "Frames", K_INT, FRAMES, NULL);
	put(r, g, "StepsPerFrame", K_INT, sc->simulation.steps_per_frame, NULL);
	put(r, g, "TimeInternal", K_DBL,
	    frame * sc->simulation.steps_per_frame * sc->simulation.dt * u->time, NULL);
	put(r, g, "DtInternal", K_DBL, sc->simulation.dt * u->time, NULL);
	put(r, g, "SofteningInternal", K_DBL, scene_softening(sc), NULL);
	put(r, g, "Solver", K_STR, 0, bh ? "barnes-hut" : "direct");
	put(r, g, "Theta", K_DBL, sc->simulation.theta, NULL);
	put(r, g, "Multipoles", K_INT, sc->simulation.multipoles, NULL);
	put(r, g, "Opening", K_STR, 0, scene_opening_name(sc->simulation.opening));
	put(r, g, "UnitSystem", K_STR, 0, su->system);
	put(r, g, "NumBodies", K_LL, NB, NULL);
	const unsigned m = rb(r) % 8; /* components: right, 1 or 3 of them, absent */
	if (m < 5)
		attr_strs(g, "ComponentNames", names[0], NAMELEN, 2);
	else if (m == 5)
		attr_strs(g, "ComponentNames", names[1], NAMELEN, 1);
	const unsigned m2 = rb(r) % 8;
	if (m2 < 5)
		attr(g, "ComponentCounts", H5T_NATIVE_LLONG, cc, 2);
	else if (m2 == 5) {
		long long bad[3] = {(long long)rb(r) - 128, 4000000000LL, 1};
		attr(g, "ComponentCounts", H5T_NATIVE_LLONG, bad, 2 + (rb(r) & 1));
	}
	if (su->velocity != 1.0 || (rb(r) & 1)) {
		double v[3 * NB];
		for (int i = 0; i < 3 * NB; i++)
			v[i] = fx->st.vel[i];
		dset(r, g, "InternalVelocities", v, NB, 3);
	}
	H5Gclose(g);
}

/* Group PartTypeT: the bodies of type t (in reverse order with flags & 4),
 * each dataset right or hostile as the recipe says. */
static void write_type(hid_t f, struct recipe *r, const struct fixed *fx, int t,
		       const int *type_of, unsigned flags, const struct snap_units *su)
{
	const struct sim_state *st = &fx->st;
	char gn[16];
	snprintf(gn, sizeof gn, "PartType%d", t);
	hid_t g = H5Gcreate2(f, gn, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double x[3 * NB], v[3 * NB], m[NB];
	uint32_t id[NB];
	size_t k = 0;
	for (int j = 0; j < NB; j++) {
		const int i = flags & 4 ? NB - 1 - j : j;
		if (type_of[i] != t)
			continue;
		for (int a = 0; a < 3; a++) {
			x[3 * k + a] = st->pos[3 * i + a] / su->length;
			v[3 * k + a] = st->vel[3 * i + a] / su->velocity;
		}
		m[k] = st->mass[i] / su->mass;
		id[k++] = st->id[i];
	}
	dset(r, g, "Coordinates", x, k, 3);
	dset(r, g, "Velocities", v, k, 3);
	const unsigned mm = rb(r) % 8; /* masses: right unless 7 */
	if (mm == 7)
		dset(r, g, "Masses", m, k, 1);
	else {
		hsize_t n = k;
		hid_t s = H5Screate_simple(1, &n, NULL);
		hid_t d = H5Dcreate2(g, "Masses", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		if (d >= 0) {
			if (k)
				H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m);
			H5Dclose(d);
		}
		H5Sclose(s);
	}
	dset_ids(r, g, id, k);
	H5Gclose(g);
}

static void write_restart(const char *path, struct recipe *r, const struct fixed *fx)
{
	struct sim_units u;
	struct snap_units su;
	scene_units_of(fx->sc.units, &u);
	snap_units_of(fx->sc.units, &su);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0)
		abort();
	const unsigned flags = rb(r);
	const int frame = (int)(rb(r) % 12);
	/* which type each body goes to, in which order */
	int type_of[NB];
	for (int i = 0; i < NB; i++)
		type_of[i] = flags & 8 ? (int)(rb(r) % SNAP_NTYPES) : SNAP_TYPE_OTHER;
	unsigned count[SNAP_NTYPES] = {0};
	for (int i = 0; i < NB; i++)
		count[type_of[i]]++;
	if (!(flags & 1))
		write_own(f, r, fx, frame, &su, &u);
	if (!(flags & 2)) {
		hid_t g = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		unsigned c[SNAP_NTYPES];
		static const unsigned big[8] = {0, 1, 2, 5, 6, 4294967295u, 2147483648u, 1000000000u};
		const int right = rb(r) % 4 != 3;
		for (int t = 0; t < SNAP_NTYPES; t++)
			c[t] = right ? count[t] : big[rb(r) % 8];
		attr(g, "NumPart_ThisFile", H5T_NATIVE_UINT, c, SNAP_NTYPES);
		H5Gclose(g);
	}
	for (int t = 0; t < SNAP_NTYPES; t++)
		if (count[t] || rb(r) % 8 == 7)
			write_type(f, r, fx, t, type_of, flags, &su);
	H5Fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	static char path[600];
	if (!path[0]) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		fuzz_path(path, sizeof path, fuzz_dir("restart"), "snap_003.hdf5");
	}
	struct recipe r = {data, size, 0};
	struct fixed *fx = fixed_scene((int)(rb(&r) & 3));
	write_restart(path, &r, fx);
	struct stat before, after;
	if (stat(path, &before) != 0)
		abort();

	int frame1 = -1, frame2 = -1;
	int err1 = sim_snap_restart_check(path, &fx->sc, &frame1);
	fuzz_rc("sim_snap_restart_check returned neither 0 nor NB_EINPUT", err1);
	/* views_start: the scene's bodies, then the snapshot's state */
	struct sim_state st = {0};
	if (sim_ic_build(&fx->sc, &st) || st.n != NB)
		fuzz_fail("the fixed scene does not build again", 0);
	int err2 = sim_snap_restart(path, &fx->sc, &st, &frame2);
	fuzz_rc("sim_snap_restart returned neither 0 nor NB_EINPUT", err2);
	log_info("fuzz_restart: check %d, restart %d at frame %d", err1, err2, frame2);
	if (err2 == 0) {
		if (err1 != 0 || frame1 != frame2)
			fuzz_fail("a restart the preflight refused, or at another frame", err1);
		if (frame2 < 0 || frame2 >= FRAMES - 1)
			fuzz_fail("a restart with no frame left to render", frame2);
		for (size_t i = 0; i < NB; i++)
			if (st.mass[i] != fx->st.mass[i])
				fuzz_fail("a restart changed a mass", (int)i);
		fuzz_check_state(&st, NB);
	}
	sim_state_free(&st);
	if (stat(path, &after) != 0 || after.st_size != before.st_size ||
	    after.st_ino != before.st_ino)
		fuzz_fail("the restart changed or removed the snapshot it read", 0);
	unlink(path);
	return 0;
}
