/* snap_load.c - a scene's snapshot entry as bodies (sim_snap_load): every
 * file of the snapshot, type by type, in chunks of SNAP_CHUNK particles;
 * units converted into the scene's, comoving coordinates made physical;
 * bodies.*.region and bodies.*.subsample decide which particles are kept
 * (a subsample's bodies carry 1/subsample of their mass, so that the total
 * mass, the dynamics at large and the light stay as in the full file).
 *
 * Units (docs/snapshots.md): the file's own (SWIFT Units group, GADGET-4
 * Parameters group, Header attributes), else the entry's units.* keys, else
 * GADGET's defaults (1 kpc/h, 1e10 M_sun/h, 1 km/s). A galactic scene gets
 * them in kpc, M_sun and km/s; an nbody scene takes the code values as
 * they are (G = 1 is the file's business).
 *
 * Comoving (GADGET convention, Springel 2005 sec. 4): stored positions are
 * comoving x, stored velocities are u = a^(-1/2) * peculiar velocity
 * (a dx/dt), lengths and masses carry 1/h. So physical r = a x / h,
 * v = sqrt(a) u, m = M / h. SWIFT writes its own exponents on each
 * dataset ("a-scale exponent", "h-scale exponent"), which win when present.
 * The file is comoving when it says so (GADGET-4 ComovingIntegrationOn,
 * SWIFT "Cosmological run"), else when Time = 1/(1 + Redshift) < 1 (a
 * scale factor, not a time: a non-cosmological run has Redshift 0), unless
 * bodies.*.comoving says otherwise. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../scene/scene_schema.h"
#include "snap_internal.h"
#include "soften_assign.h"

#define SNAP_CHUNK 65536
#define SNAP_GADGET_L_CM 3.085678e21 /* GADGET's default code units */
#define SNAP_GADGET_M_G 1.989e43
#define SNAP_GADGET_V_CM_S 1e5
#define SNAP_FACTOR_MAX 1e60 /* a unit factor (stored -> scene) in [1e-60, 1e60] */
#define SNAP_ACC_MAX 1e30    /* G M / softening^2 at most this (scene/scene.c's SCENE_ACC_MAX) */
#define SNAP_MASS_MAX 1e60   /* a body's mass, internal units: at most this (its square stays finite) */

/* One pass over the entry's files. */
struct snap_pass {
	const struct scene *sc;
	int k;
	const struct scene_snapshot *opt;
	char path[SCENE_PATH_MAX + 64];
	double lf, vf, mf;        /* stored -> scene units */
	const char *from;         /* where the units came from (for messages) */
	uint64_t ids_cap;          /* count pass with ids_out: its room */
	int heads_only;            /* the headers, units and parts only: no count */
	const struct sim_units *u; /* scene -> internal (read pass) */
	struct sim_state *st;      /* NULL: count pass */
	size_t at;                 /* next body index (read pass) */
	uint64_t *id;
	double *pos, *vel, *mass;
	uint64_t *ids_out;         /* read pass: each kept body's ParticleID (NULL: not kept) */
	/* a share (sim_snap_load_share): share of nshares (0: the whole
	 * entry); [lo, hi): its stretch of the loaded particles, type by type
	 * and file by file (set by snap_run) */
	int share, nshares;
	uint64_t lo, hi;
	uint64_t (*counts)[SIM_SNAP_NTYPES]; /* each part's NumPart_ThisFile (snap_parts_check) */
};

void sim_snap_entry_path(const struct scene *sc, int k, char *out, size_t len)
{
	const struct scene_body *b = &sc->bodies[k];
	if (b->file[0] == '/' || sc->dir[0] == '\0')
		snprintf(out, len, "%s", b->file);
	else
		snprintf(out, len, "%s/%s", sc->dir, b->file);
}

/* The row bodies.K.format names (the scene keeps the index of its name in
 * the key's list), NULL for auto: probe each file. */
static const struct sim_snap_format *snap_format_of(const struct scene_snapshot *o)
{
	const struct scene_key *key = scene_schema_find("bodies.*.format");
	return sim_snap_format_find(key->names[o->format]);
}

/* The file's code units in cgs: the file's own, else the entry's
 * units.* keys, else GADGET's. Returns where they came from; GIVEN gets a
 * note when the entry's keys are overruled by the file. */
static const char *snap_code_units(const struct snap_pass *p, const struct sim_snap_header *h,
				   double *L, double *M, double *V, char *given, size_t len)
{
	const struct scene_snapshot *o = p->opt;
	if (h->units_from[0]) {
		*L = h->unit_length_cm, *M = h->unit_mass_g, *V = h->unit_velocity_cm_s;
		if (o->length_cm > 0 || o->mass_g > 0 || o->velocity_cm_s > 0)
			snprintf(given, len, "; bodies.%d.units ignored", p->k);
		return h->units_from;
	}
	if (o->length_cm > 0 || o->mass_g > 0 || o->velocity_cm_s > 0) {
		*L = o->length_cm > 0 ? o->length_cm : SNAP_GADGET_L_CM;
		*M = o->mass_g > 0 ? o->mass_g : SNAP_GADGET_M_G;
		*V = o->velocity_cm_s > 0 ? o->velocity_cm_s : SNAP_GADGET_V_CM_S;
		return "the scene (the file gives none; GADGET's for any not given)";
	}
	*L = SNAP_GADGET_L_CM, *M = SNAP_GADGET_M_G, *V = SNAP_GADGET_V_CM_S;
	return "GADGET's defaults (the file gives none)";
}

/* Conversion factors and the words that say where they came from. */
static int snap_units(struct snap_pass *p, const struct sim_snap_header *h,
		      struct sim_snap_info *info)
{
	const struct scene_snapshot *o = p->opt;
	double a = 1, hh = 1;
	/* the scale factor: SWIFT's Scale-factor, else GADGET's Time */
	const double sf = h->scale_factor > 0 ? h->scale_factor : h->time;
	int comoving = o->comoving == SCENE_TRUE    ? 1
		       : o->comoving == SCENE_FALSE ? 0
		       : h->cosmo_flag >= 0	    ? h->cosmo_flag
						    : sf > 0 && sf < 1 && h->redshift > 0 &&
							 fabs(sf * (1 + h->redshift) - 1) < 1e-3;
	if (comoving) {
		if (!(sf > 0 && sf <= 1)) {
			log_error("%s: comoving coordinates need the scale factor a in (0, 1] (Header "
				  "Time, or Scale-factor), got %g (set bodies.%d.comoving: false?)",
				  p->path, sf, p->k);
			return NB_EINPUT;
		}
		a = sf;
		hh = h->hubble > 0 ? h->hubble : 1;
	}
	double L, M, V;
	char given[64] = "";
	const char *from = snap_code_units(p, h, &L, &M, &V, given, sizeof given);
	double sl, sm, sv;
	int physical = scene_units_cgs(p->sc, &sl, &sm, &sv) == 0;
	if (!physical)
		sl = L, sm = M, sv = V; /* nbody: code values as they are */
	double ea[3] = {1, 0.5, 0}, eh[3] = {-1, 0, -1};
	if (h->has_exponents)
		for (int i = 0; i < 3; i++)
			ea[i] = h->a_exp[i], eh[i] = h->h_exp[i];
	p->lf = L / sl * pow(a, ea[0]) * pow(hh, eh[0]);
	p->vf = V / sv * pow(a, ea[1]) * pow(hh, eh[1]);
	p->mf = M / sm * pow(a, ea[2]) * pow(hh, eh[2]);
	/* each factor within SNAP_FACTOR_MAX of 1: a unit that makes one code
	 * unit more than 1e60 scene units (or less than 1e-60) is a bad unit,
	 * not a file to simulate (its values would overflow, or vanish, in
	 * internal units) */
	const char *const fname[3] = {"length", "mass", "velocity"};
	const double fval[3] = {p->lf, p->mf, p->vf}, fcgs[3] = {L, M, V};
	const char *const fkey[3] = {"length_cm", "mass_g", "velocity_cm_s"};
	for (int i = 0; i < 3; i++) {
		if (isfinite(fval[i]) && fval[i] >= 1 / SNAP_FACTOR_MAX && fval[i] <= SNAP_FACTOR_MAX)
			continue;
		log_error("%s: bad %s unit: %.7g (cgs, from %s) makes one stored %s unit %.4g scene "
			  "units%s, outside [1e-60, 1e60]; check the file's units (or bodies.%d.units.%s "
			  "when the file gives none)",
			  p->path, fname[i], fcgs[i], from, fname[i], fval[i],
			  comoving ? " (with the comoving a and h)" : "", p->k, fkey[i]);
		return NB_EINPUT;
	}
	p->from = from;
	info->length = p->lf, info->velocity = p->vf, info->mass = p->mf;
	info->a = a, info->h = hh, info->comoving = comoving;
	char cm[96];
	if (comoving)
		snprintf(cm, sizeof cm, "comoving, a = %.6g, h = %.6g%s", a, hh,
			 h->has_exponents ? " (the file's exponents)" : "");
	else
		snprintf(cm, sizeof cm, "not comoving");
	snprintf(info->units, sizeof info->units,
		 "%.7g cm, %.7g g, %.7g cm/s from %s%s; %s%s", L, M, V, from, given, cm,
		 physical ? "" : "; units: nbody takes code values as they are");
	return 0;
}

static int snap_keep(const struct snap_pass *p, const double x[3], uint64_t id)
{
	const struct scene_snapshot *o = p->opt;
	if (o->region == SCENE_REGION_SPHERE) {
		double r2 = 0;
		for (int a = 0; a < 3; a++)
			r2 += (x[a] - o->region_center[a]) * (x[a] - o->region_center[a]);
		if (!(r2 <= o->region_radius * o->region_radius))
			return 0;
	} else if (o->region == SCENE_REGION_BOX) {
		for (int a = 0; a < 3; a++)
			if (!(fabs(x[a] - o->region_center[a]) <= 0.5 * o->region_size[a]))
				return 0;
	}
	return sim_snap_keep_id(id, o->subsample);
}

/* The read pass: particle i of the chunk (index idx of type t in its
 * file), kept at scene position x, becomes the next body. */
static int snap_store(struct snap_pass *p, int t, uint64_t idx, size_t i, const double x[3])
{
	double v[3];
	for (int a = 0; a < 3; a++)
		v[a] = p->vel[3 * i + a] * p->vf;
	for (int a = 0; a < 3; a++) {
		const int bad_x = !(fabs(x[a]) <= SIM_CSV_XMAX);
		if (bad_x || !(fabs(v[a]) <= SIM_CSV_XMAX)) {
			log_error("%s: type %d particle %llu (ID %llu): %s %g stored, %g scene units "
				  "after conversion (x %g from the %s unit, from %s): beyond 1e15 scene "
				  "units or not finite; a bad %s unit or a bad value",
				  p->path, t, (unsigned long long)idx, (unsigned long long)p->id[i],
				  bad_x ? "position" : "velocity",
				  bad_x ? p->pos[3 * i + a] : p->vel[3 * i + a], bad_x ? x[a] : v[a],
				  bad_x ? p->lf : p->vf, bad_x ? "length" : "velocity", p->from,
				  bad_x ? "length" : "velocity");
			return NB_EINPUT;
		}
	}
	const double m = p->mass[i] * p->mf / p->opt->subsample * p->u->mass;
	if (!(isfinite(m) && m >= 0 && m <= SNAP_MASS_MAX)) {
		log_error("%s: type %d particle %llu (ID %llu): mass %g stored, %g internal units "
			  "after conversion (x %g from the mass unit, from %s%s): not finite or beyond "
			  "%g; a bad mass unit or a bad value",
			  p->path, t, (unsigned long long)idx, (unsigned long long)p->id[i], p->mass[i],
			  m, p->mf, p->from, p->opt->subsample < 1 ? ", / subsample" : "",
			  SNAP_MASS_MAX);
		return NB_EINPUT;
	}
	if (p->at >= p->st->n) {
		log_error("%s: holds more particles than when it was counted (changed while "
			  "reading?)",
			  p->path);
		return NB_ERUNTIME;
	}
	const size_t b = p->at++;
	if (p->ids_out)
		p->ids_out[b] = p->id[i];
	if (p->st->pid) /* the file's ID, written back to our snapshots */
		p->st->pid[p->st->id[b]] = p->id[i];
	for (int a = 0; a < 3; a++) {
		p->st->pos[3 * b + a] = x[a] * p->u->length;
		p->st->vel[3 * b + a] = v[a] * p->u->velocity;
	}
	p->st->mass[b] = m;
	return 0;
}

/* Particles [from, n) of type t of one open file: keep what the region
 * and subsample keep. */
static int snap_file_type(struct snap_pass *p, struct sim_snap *s, int t, uint64_t from,
			  uint64_t n, size_t *kept)
{
	const int need_pos = p->st || p->opt->region != SCENE_REGION_NONE;
	const int need_id = p->st || p->ids_out || p->opt->subsample < 1;
	if (!need_pos && !need_id) { /* the count pass keeps them all: nothing to read */
		*kept += (size_t)(n - from);
		return 0;
	}
	for (uint64_t f = from; f < n;) {
		size_t m = n - f < SNAP_CHUNK ? (size_t)(n - f) : SNAP_CHUNK;
		int err = sim_snap_read(s, t, f, m, need_id ? p->id : NULL, need_pos ? p->pos : NULL,
					p->st ? p->vel : NULL, p->st ? p->mass : NULL, NULL);
		if (err)
			return err;
		for (size_t i = 0; i < m; i++) {
			double x[3] = {0, 0, 0};
			for (int a = 0; a < 3 && need_pos; a++)
				x[a] = p->pos[3 * i + a] * p->lf;
			if (!snap_keep(p, x, need_id ? p->id[i] : 0))
				continue;
			if (!p->st && p->ids_out) { /* the count pass collecting IDs */
				if (p->at >= p->ids_cap) {
					log_error("%s: holds more particles than when it was counted "
						  "(changed while reading?)",
						  p->path);
					return NB_ERUNTIME;
				}
				p->ids_out[p->at++] = p->id[i];
			}
			if (p->st && (err = snap_store(p, t, f + i, i, x)))
				return err;
			(*kept)++;
		}
		f += m;
	}
	return 0;
}

/* Open part i of the snapshot; check it belongs with part 0 (h0). */
static int snap_open_part(struct snap_pass *p, int i, const struct sim_snap_header *h0,
			  struct sim_snap **s)
{
	char name[SCENE_PATH_MAX + 64];
	if (sim_snap_part_path(p->path, i, name, sizeof name)) {
		if (!h0) {
			log_error("%s: path too long", p->path);
			return NB_EINPUT;
		}
		log_error("%s: the header says the snapshot has %d files, but the name has no '.0' "
			  "to number the others by (name its first file, snap_012.0.hdf5)",
			  p->path, h0->num_files);
		return NB_EINPUT;
	}
	struct stat sb;
	if (i > 0 && stat(name, &sb) != 0 && errno == ENOENT) {
		log_error("%s: part %d of the %d-file snapshot %s is missing (its header says "
			  "NumFilesPerSnapshot %d)",
			  name, i, h0->num_files, p->path, h0->num_files);
		return NB_EINPUT;
	}
	int err = sim_snap_open(name, snap_format_of(p->opt), s);
	if (err)
		return err;
	const struct sim_snap_header *h = sim_snap_header(*s);
	if (i > 0 && (h->num_files != h0->num_files || h->format != h0->format)) {
		log_error("%s: expected part %d of %d files in %s, like %s; its header says %d files",
			  name, i, h0->num_files, sim_snap_format_title(h0->format), p->path, h->num_files);
		sim_snap_close(s);
		return NB_EINPUT;
	}
	return 0;
}

/* Part i (header h) says what part 0 (h0) says of the whole snapshot:
 * NumPart_Total of every type, Time, and for a set this program wrote its
 * SetId (a part left by another run of another set is refused, even when
 * its counts fit). 0 or NB_EINPUT (logged, naming the part). */
static int snap_part_agrees(const struct snap_pass *p, int i, const struct sim_snap_header *h,
			    const struct sim_snap_header *h0)
{
	char name[SCENE_PATH_MAX + 64];
	if (sim_snap_part_path(p->path, i, name, sizeof name))
		snprintf(name, sizeof name, "%s", p->path);
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		/* a total equal to the part's own count may be a 0 the file left
		 * unknown (sim_snap_open): the sum below judges it */
		if (h->npart_total[t] == h0->npart_total[t] || h->npart_total[t] == h->npart[t])
			continue;
		log_error("%s: Header: NumPart_Total[%d] is %llu, but part 0 (%s) says %llu: the "
			  "parts of one snapshot must say the same totals of type %d (a part of "
			  "another snapshot, or a header that lies)",
			  name, t, (unsigned long long)h->npart_total[t], p->path,
			  (unsigned long long)h0->npart_total[t], t);
		return NB_EINPUT;
	}
	if (h->time != h0->time) {
		log_error("%s: Header: Time is %.17g, but part 0 (%s) says %.17g: a part of another "
			  "snapshot",
			  name, h->time, p->path, h0->time);
		return NB_EINPUT;
	}
	if (h->set_id != h0->set_id) {
		log_error("%s: NbodyRender/SetId is %llu, but part 0 (%s) says %llu: a part of "
			  "another set of snapshot files (left by another run?), not of this one",
			  name, (unsigned long long)h->set_id, p->path,
			  (unsigned long long)h0->set_id);
		return NB_EINPUT;
	}
	return 0;
}

/* Every part's header before any particle is read: each part opens and
 * says the same number of files and format, and for every type (loaded or
 * not) the parts' counts add up to part 0's NumPart_Total. So a type
 * present in some part but missing from the totals, or totals that claim
 * more than the parts hold, are refused before the count or the read. */
static int snap_parts_check(struct snap_pass *p, const struct sim_snap_header *h0)
{
	uint64_t sum[SIM_SNAP_NTYPES];
	int first_in[SIM_SNAP_NTYPES];
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		sum[t] = h0->npart[t], first_in[t] = h0->npart[t] > 0 ? 0 : -1;
		p->counts[0][t] = h0->npart[t];
	}
	for (int i = 1; i < h0->num_files; i++) {
		struct sim_snap *s = NULL;
		int err = snap_open_part(p, i, h0, &s);
		if (err)
			return err;
		const struct sim_snap_header *h = sim_snap_header(s);
		if ((err = snap_part_agrees(p, i, h, h0))) {
			sim_snap_close(&s);
			return err;
		}
		for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
			sum[t] += h->npart[t];
			p->counts[i][t] = h->npart[t];
			if (first_in[t] < 0 && h->npart[t] > 0)
				first_in[t] = i;
		}
		sim_snap_close(&s);
	}
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (sum[t] == h0->npart_total[t])
			continue;
		if (h0->npart_total[t] == 0)
			log_error("%s: type %d (%s): part %d holds %llu of its particles, but the first "
				  "file's NumPart_Total[%d] says none (types present in any part must be "
				  "in the totals)",
				  p->path, t, sim_snap_type_names[t], first_in[t],
				  (unsigned long long)sum[t], t);
		else
			log_error("%s: type %d (%s): the %d file%s hold %llu particles, but "
				  "NumPart_Total[%d] says %llu (a missing, truncated or foreign part, or "
				  "a header that claims more than the files hold)",
				  p->path, t, sim_snap_type_names[t], h0->num_files,
				  h0->num_files == 1 ? "" : "s", (unsigned long long)sum[t], t,
				  (unsigned long long)h0->npart_total[t]);
		return NB_EINPUT;
	}
	return 0;
}

/* The types to read: loaded, with particles in the snapshot. */
static int snap_wanted(const struct snap_pass *p, const struct sim_snap_header *h0, int t)
{
	return p->opt->types[t].load && h0->npart_total[t] > 0;
}

/* The count pass: the mass the kept particles of MassTable types carry
 * (known from the header, without reading a value) against the softening,
 * as the read pass checks every mass: so --dry-run refuses a MassTable or
 * a mass unit whose forces overflow. 0 or NB_EINPUT. */
static int snap_masstable_check(const struct snap_pass *p, const struct sim_snap_header *h0,
				const struct sim_snap_info *info)
{
	long double total = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		if (h0->npart[t] > 0 && !h0->has_mass[t] && h0->mass_table[t] > 0)
			total += (long double)info->kept[t] * h0->mass_table[t] * p->mf /
				 p->opt->subsample * p->u->mass;
	if (!(total > 0) || p->sc->simulation.solver == SCENE_SOLVER_NONE) /* film: no forces */
		return 0;
	const double lgm = (double)log10l(total);
	const double lg = lgm - 2 * log10(scene_softening(p->sc));
	if (lg <= log10(SNAP_ACC_MAX))
		return 0;
	log_error("%s: bodies.%d: the MassTable masses (x %g from the mass unit, from %s) of the "
		  "particles kept add up to 1e%.1f internal units: with simulation.softening %g "
		  "accelerations reach about 1e%.0f (G M / softening^2), beyond %g where they "
		  "overflow; a bad mass unit or MassTable, or raise simulation.softening",
		  p->path, p->k, p->mf, p->from, lgm, p->sc->simulation.softening, lg, SNAP_ACC_MAX);
	return NB_EINPUT;
}

/* The share's stretch [p->lo, p->hi) of the W particles of the loaded
 * types: share r of P is [floor(W r / P), floor(W (r + 1) / P)), so the
 * shares in order cover each particle once (the whole entry: [0, W)). */
static void snap_share_range(struct snap_pass *p, const struct sim_snap_header *h0)
{
	uint64_t w = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		if (snap_wanted(p, h0, t))
			w += h0->npart_total[t];
	p->lo = 0, p->hi = w;
	if (p->nshares < 1)
		return;
	/* floor(w r / P) without overflow: (w / P) r + floor((w % P) r / P) */
	const uint64_t P = (uint64_t)p->nshares, q = w / P, m = w % P;
	const uint64_t r0 = (uint64_t)p->share, r1 = r0 + 1;
	p->lo = q * r0 + m * r0 / P;
	p->hi = q * r1 + m * r1 / P;
}

/* Type t over the files: the particles of the share's stretch, which
 * starts the type at *base (advanced past the type). Files the stretch
 * does not reach are not opened again (snap_parts_check read their
 * headers). 0 or an error (logged). */
static int snap_type(struct snap_pass *p, struct sim_snap *s0, int t, uint64_t *base,
		     struct sim_snap_info *info)
{
	const struct sim_snap_header *h0 = sim_snap_header(s0);
	uint64_t in_files = 0;
	int err = 0;
	for (int i = 0; i < h0->num_files && !err; i++) {
		const uint64_t n = p->counts[i][t], at = *base + in_files;
		in_files += n;
		const uint64_t a = p->lo > at ? p->lo - at : 0;
		const uint64_t b = p->hi < at + n ? (p->hi > at ? p->hi - at : 0) : n;
		if (a >= b)
			continue;
		struct sim_snap *s = s0;
		if (i > 0 && (err = snap_open_part(p, i, h0, &s)))
			break;
		if (sim_snap_header(s)->npart[t] != n) {
			log_error("%s: part %d holds %llu particles of type %d now, %llu when its "
				  "header was first read (changed while reading?)",
				  p->path, i, (unsigned long long)sim_snap_header(s)->npart[t], t,
				  (unsigned long long)n);
			err = NB_ERUNTIME;
		}
		err = err ? err : snap_file_type(p, s, t, a, b, &info->kept[t]);
		if (s != s0)
			sim_snap_close(&s);
	}
	*base += in_files;
	if (!err && in_files != h0->npart_total[t]) {
		log_error("%s: type %d: the %d files hold %llu particles, but NumPart_Total[%d] "
			  "says %llu",
			  p->path, t, h0->num_files, (unsigned long long)in_files, t,
			  (unsigned long long)h0->npart_total[t]);
		err = NB_EINPUT;
	}
	info->in_file[t] = in_files;
	return err;
}

/* Component c: the bodies of type t read into [first, p->at). */
static void snap_component(struct snap_pass *p, int t, int c, size_t first)
{
	const struct scene_snap_type *ty = &p->opt->types[t];
	struct sim_component *cp = &p->st->comps[c];
	snprintf(cp->name, sizeof cp->name, "%s.%s", p->sc->bodies[p->k].name,
		 sim_snap_type_names[t]);
	memcpy(cp->color, ty->color, sizeof cp->color);
	cp->brightness = ty->draw ? (float)ty->brightness : 0.0f;
	cp->softening = sim_soft_length(p->sc, &p->sc->bodies[p->k], ty->softening);
	cp->first = first;
	cp->count = p->at - first;
	for (size_t b = first; b < p->at; b++)
		p->st->comp[b] = (uint16_t)c;
}

static int snap_run(struct snap_pass *p, int comp0, struct sim_snap_info *info)
{
	struct sim_snap *s0 = NULL;
	int err = snap_open_part(p, 0, NULL, &s0);
	if (err)
		return err;
	const struct sim_snap_header *h0 = sim_snap_header(s0);
	info->format = h0->format;
	info->num_files = h0->num_files;
	info->time = h0->time;
	if ((err = snap_units(p, h0, info)))
		goto end;
	p->counts = calloc((size_t)(h0->num_files > 0 ? h0->num_files : 1), sizeof *p->counts);
	if (!p->counts) {
		log_error("%s: out of memory for the counts of %d files", p->path, h0->num_files);
		err = NB_ERUNTIME;
		goto end;
	}
	if ((err = snap_parts_check(p, h0)) || p->heads_only)
		goto end;
	snap_share_range(p, h0);
	int c = comp0;
	uint64_t base = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (!snap_wanted(p, h0, t))
			continue;
		const size_t first = p->at;
		if ((err = snap_type(p, s0, t, &base, info)))
			goto end;
		if (p->st)
			snap_component(p, t, c, first);
		c++;
	}
	info->ncomp = c - comp0;
	if (!p->st && p->u && p->nshares < 1)
		err = snap_masstable_check(p, h0, info);
end:
	free(p->counts);
	p->counts = NULL;
	sim_snap_close(&s0);
	return err;
}

int sim_snap_entry_check(const struct scene *sc, int k, double total, size_t kept,
			 const struct sim_snap_info *info)
{
	const struct scene_body *b = &sc->bodies[k];
	char path[SCENE_PATH_MAX + 64];
	sim_snap_entry_path(sc, k, path, sizeof path);
	if (kept > 0 && sc->simulation.solver != SCENE_SOLVER_NONE) {
		/* the masses read, against the softening as scene_load checks the
		 * scene's own: the largest acceleration G M / softening^2 (internal
		 * units, G = 1) must stay below SNAP_ACC_MAX */
		const double lgm = total > 0 ? log10(total) : -HUGE_VAL;
		const double lg = lgm - 2 * log10(scene_softening(sc));
		if (lg > log10(SNAP_ACC_MAX) || total != total) {
			log_error("%s: bodies.%d (%s): the particles' masses (Masses or MassTable, x "
				  "%g from the mass unit, %s) add up to 1e%.1f internal units: with "
				  "simulation.softening %g accelerations reach about 1e%.0f (G M / "
				  "softening^2), beyond %g where they overflow; a bad mass unit or "
				  "bad masses, or raise simulation.softening",
				  path, k, b->name, info->mass, info->units, lgm,
				  sc->simulation.softening, lg, SNAP_ACC_MAX);
			return NB_EINPUT;
		}
	}
	if (kept > 0 || b->snap.series[0])
		return 0;
	/* an entry that makes no body: refused by the count pass, so that
	 * --dry-run and the run refuse it alike; say which selection left
	 * nothing (a series' first file may: bodies come later) */
	int loaded = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		loaded += b->snap.types[t].load && info->in_file[t] > 0;
	log_error("%s: bodies.%d (%s) gives no body: %s", path, k, b->name,
		  loaded == 0 ? "no type with particles is loaded (bodies.*.types.*.load: false, "
				"or a file without particles)"
		  : b->snap.region != SCENE_REGION_NONE
			  ? "bodies.*.region holds none of the loaded particles"
			  : "bodies.*.subsample keeps none of the loaded particles");
	return NB_EINPUT;
}

/* The kept bodies' count and, read into st at first, their mass. */
static size_t snap_kept(const struct sim_state *st, size_t first,
			const struct sim_snap_info *info, double *total)
{
	size_t kept = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		kept += info->kept[t];
	long double m = 0;
	for (size_t i = first; st && i < first + kept && i < st->n; i++)
		m += (long double)st->mass[i];
	*total = (double)m;
	return kept;
}

int sim_snap_load(const struct scene *sc, int k, const struct sim_units *u,
		  struct sim_state *st, size_t first, int comp0, struct sim_snap_info *info)
{
	int err = sim_snap_load_path(sc, k, NULL, u, st, first, comp0, NULL, info);
	double total;
	const size_t kept = snap_kept(st, first, info, &total);
	return err ? err : sim_snap_entry_check(sc, k, st ? total : 0, kept, info);
}

/* The count or read pass p (its path, entry, state set), with the read
 * buffers. 0 or an error (logged). */
static int snap_pass_run(struct snap_pass *p, int comp0, struct sim_snap_info *info)
{
	memset(info, 0, sizeof *info);
	p->id = malloc(SNAP_CHUNK * sizeof *p->id);
	p->pos = malloc(3 * SNAP_CHUNK * sizeof *p->pos);
	p->vel = malloc(3 * SNAP_CHUNK * sizeof *p->vel);
	p->mass = malloc(SNAP_CHUNK * sizeof *p->mass);
	int err = 0;
	if (!p->id || !p->pos || !p->vel || !p->mass) {
		log_error("%s: out of memory for the read buffers", p->path);
		err = NB_ERUNTIME;
	}
	/* a scene's bodies keep the file's ParticleIDs (not a share's: a rank
	 * holds no table of every body) */
	if (!err && p->st && !p->ids_out && p->nshares < 1)
		err = sim_state_pid_init(p->st);
	if (!err)
		err = snap_run(p, comp0, info);
	free(p->id);
	free(p->pos);
	free(p->vel);
	free(p->mass);
	return err;
}

int sim_snap_load_path(const struct scene *sc, int k, const char *path,
		       const struct sim_units *u, struct sim_state *st, size_t first, int comp0,
		       uint64_t *ids, struct sim_snap_info *info)
{
	struct snap_pass p = {.sc = sc, .k = k, .opt = &sc->bodies[k].snap, .u = u, .st = st,
			      .at = first, .ids_out = ids};
	if (path)
		snprintf(p.path, sizeof p.path, "%s", path);
	else
		sim_snap_entry_path(sc, k, p.path, sizeof p.path);
	int err = snap_pass_run(&p, comp0, info);
	if (!err && st && !ids) {
		size_t kept = 0;
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			kept += info->kept[t];
		log_info("bodies.%d (%s): %zu bodies from %s (%s, %d file%s); units %s", k,
			 sc->bodies[k].name, kept, p.path, sim_snap_format_title(info->format),
			 info->num_files, info->num_files == 1 ? "" : "s", info->units);
	}
	return err;
}

int sim_snap_load_share(const struct scene *sc, int k, const struct sim_units *u,
			struct sim_state *st, size_t first, int comp0, int share, int nshares,
			uint64_t *ids, struct sim_snap_info *info)
{
	struct snap_pass p = {.sc = sc, .k = k, .opt = &sc->bodies[k].snap, .u = u, .st = st,
			      .at = first, .ids_out = st ? ids : NULL,
			      .share = share, .nshares = nshares};
	sim_snap_entry_path(sc, k, p.path, sizeof p.path);
	if (nshares < 1 || share < 0 || share >= nshares) {
		memset(info, 0, sizeof *info);
		log_error("%s: share %d of %d (internal)", p.path, share, nshares);
		return NB_ERUNTIME;
	}
	return snap_pass_run(&p, comp0, info);
}

int sim_snap_check_path(const struct scene *sc, int k, const char *path,
			struct sim_snap_info *info)
{
	struct snap_pass p = {.sc = sc, .k = k, .opt = &sc->bodies[k].snap, .heads_only = 1};
	memset(info, 0, sizeof *info);
	if (path)
		snprintf(p.path, sizeof p.path, "%s", path);
	else
		sim_snap_entry_path(sc, k, p.path, sizeof p.path);
	return snap_run(&p, 0, info);
}

int sim_snap_ids_path(const struct scene *sc, int k, const char *path, uint64_t *ids,
		      size_t cap, struct sim_snap_info *info)
{
	struct snap_pass p = {.sc = sc, .k = k, .opt = &sc->bodies[k].snap, .ids_out = ids,
			      .ids_cap = cap};
	memset(info, 0, sizeof *info);
	snprintf(p.path, sizeof p.path, "%s", path);
	p.id = malloc(SNAP_CHUNK * sizeof *p.id);
	p.pos = malloc(3 * SNAP_CHUNK * sizeof *p.pos);
	int err = 0;
	if (!p.id || !p.pos) {
		log_error("%s: out of memory for the read buffers", p.path);
		err = NB_ERUNTIME;
	}
	if (!err)
		err = snap_run(&p, 0, info);
	free(p.id);
	free(p.pos);
	return err;
}
