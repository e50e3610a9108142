/* sim.h - the simulation layer: scene -> initial conditions -> leapfrog steps
 * -> diagnostics. One public header for sim/ (scene/scene.h and scene/log.h
 * are included: sim/ sees the scene layer below it).
 *
 * Internally G = 1 and all state is in internal units (see scene_units).
 * The CPU code accumulates in double; it is the fallback when there is no GPU
 * and the oracle the GPU tests are held against. */
#ifndef NB_SIM_H
#define NB_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../scene/log.h"
#include "../scene/scene.h"
#include "params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A named group of bodies with its own colour: one per plummer/hernquist/file
 * entry, three per disk galaxy ("NAME.disk", "NAME.bulge", "NAME.halo"),
 * then "NAME.young" when its disk has young stars and "NAME.dust" when it
 * has dust (after the halo, in that order; bodies.*.dust). */
struct sim_component {
	char name[SCENE_NAME_MAX + 8];
	float color[3];
	float brightness;    /* light per unit mass (1 unless the scene sets it; sim_state_alloc: 1) */
	size_t first, count; /* bodies [first, first+count) at creation */
	/* dust (render/dust.c): kappa > 0 marks an absorbing, non-emitting
	 * component; a body of mass m (scene units) blocks area kappa m (scene
	 * length^2); dust_z its layer's sech^2 height (scene length). 0: not dust. */
	double kappa, dust_z;
	/* softening length of the component's bodies, internal units (> 0):
	 * its type's, part's or entry's, else simulation.softening (set at
	 * creation; sim_state_alloc: 0 until then) */
	double softening;
};

/* All bodies. Owns every array (freed by sim_state_free). Vectors are xyz
 * interleaved: pos[3*i+0..2]. Internal units. */
struct sim_state {
	size_t n;
	double *pos, *vel, *acc; /* 3n each */
	double *mass;            /* n */
	double *pot;             /* n, per-body potential phi_i (NULL until computed) */
	uint32_t *id;            /* n, stable ids 0..n-1 in creation order */
	/* NULL: each body's ParticleID (written to snapshots) is its id; else
	 * n entries indexed by id (never reordered with the bodies): the ID the
	 * body had in its snapshot file (model: snapshot), id for bodies the
	 * program made. sim_state_pid reads it. */
	uint64_t *pid;
	uint16_t *comp;          /* n, index into comps */
	int ncomp;
	struct sim_component *comps;
	double time;             /* internal units */
	long step;
};

/* camera.follow's rule: does component name CN belong to follow name F?
 * Exact match, or F is a disk galaxy's body name and CN is "F.disk",
 * "F.bulge", "F.halo", "F.young" or "F.dust" (any "F." prefix). ("all" is handled by
 * the callers.) */
int sim_component_follows(const char *f, const char *cn);
/* Mass-weighted centre (internal units) of the bodies with sel[i] != 0
 * (sel NULL: all), summed in double in body order. Massless bodies only:
 * their plain mean; none: the origin. *mass and *count (either may be
 * NULL) get the selection's total mass and size. */
void sim_state_com(const struct sim_state *st, const unsigned char *sel, double com[3],
		   double *mass, size_t *count);

/* Allocate n bodies (arrays zeroed, pot allocated). 0 or NB_ERUNTIME. */
int sim_state_alloc(struct sim_state *st, size_t n, int ncomp);
/* Host memory the machine can still give, in bytes (MemAvailable of
 * /proc/meminfo), or -1 when unknown. */
long long sim_mem_available(void);
/* Free everything and zero *st. Safe on a zeroed struct. */
void sim_state_free(struct sim_state *st);
/* Body i's ParticleID: pid[id[i]] when the state has pid, else id[i]. */
uint64_t sim_state_pid(const struct sim_state *st, size_t i);
/* Give st a pid table (each entry its id) if it has none, so that a
 * snapshot entry can set its bodies' file IDs. 0 or NB_ERUNTIME. */
int sim_state_pid_init(struct sim_state *st);

/* (sim/scene_count.c) Number of bodies the scene will create (disk-galaxy parts summed; file
 * models counted by reading the file's lines). -1 on error (logged). */
long sim_scene_body_count(const struct scene *sc);
/* (sim/scene_count.c) Every input of the scene checked before any work,
 * the same for --dry-run and the run (app_preflight calls it first): each
 * snapshot entry's files (headers, sizes, totals across parts, unit
 * factors: sim_snap_check_path), each film series (sim_snap_series_check).
 * A refusal is logged by the reader (the file and what is wrong), then
 * placed at the entry's scene file:line:col (scene_fail_key). The CSV
 * files and the snapshots' counts are read by sim_scene_body_count, which
 * places its refusals the same way. 0 or NB_EINPUT / NB_ERUNTIME. */
int sim_inputs_check(const struct scene *sc);

/* ---- random numbers (sim/rng.c) ----
 * Counter-based generator (SplitMix64 finaliser over (seed, stream, counter)):
 * draw k of stream s is a pure function of (seed, s, k), so body i's draws do
 * not depend on thread count or order. */
uint64_t sim_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter);
/* Uniform double in (0, 1): never exactly 0 or 1. */
double sim_rng_uniform(uint64_t seed, uint64_t stream, uint64_t counter);

/* ---- initial conditions (sim/ic_*.c) ----
 * Build every body of the scene in internal units, centred per entry on its
 * position/velocity, with the encounter (if any) applied. Deterministic in
 * scene->seed. Returns 0, NB_EINPUT (bad file model, logged with file:line),
 * or NB_ERUNTIME. */
int sim_ic_build(const struct scene *sc, struct sim_state *st);

/* Sample one model into bodies [first, first+count) of st, centred at the
 * origin with zero mean velocity (internal units, G = 1). stream_base makes
 * the draws of different entries independent. */
void sim_ic_plummer(struct sim_state *st, size_t first, size_t count, double mass,
		    double a, double rmax, uint64_t seed, uint64_t stream_base);
void sim_ic_hernquist(struct sim_state *st, size_t first, size_t count, double mass,
		      double a, double rmax, uint64_t seed, uint64_t stream_base);

/* ---- disk galaxies and encounters (sim/galaxy.c, sim/encounter.c) ----
 * Sample disk-galaxy entry k of the scene into bodies [first, first+n) with
 * n = disk.count + bulge.count + halo.count, in the galaxy's own frame (disk
 * in the xy plane, spinning counter-clockwise about +z, centre of mass at the
 * origin, zero mean velocity), internal units. Parts take component indices
 * comp0 (disk), comp0+1 (bulge), comp0+2 (halo), then, carved out of the
 * disk's count and mass (every disk, young or dust body has mass disk.mass /
 * disk.count) and placed after the halo: the young stars
 * (sim_galaxy_young_count(&disk) bodies, when > 0), then the dust
 * (NAME.dust: scene_dust_count(b) bodies, when > 0), each taking the next
 * component. */
int sim_ic_disk_galaxy(const struct scene *sc, int k, const struct sim_units *u,
		       struct sim_state *st, size_t first, int comp0, uint64_t stream_base);
/* The dust layer's sech^2 height of entry b, scene length units:
 * dust.scale_height, or SCENE_DUST_Z_RATIO x disk.scale_height when 0. */
double sim_dust_height(const struct scene_body *b);
/* Bodies of a disk that are young: round(young_fraction * count), within
 * [0, count] (sim/galaxy_young.c). */
long sim_galaxy_young_count(const struct scene_part *disk);
/* Where entry k goes: rotation R (row-major 3x3, applied to its bodies'
 * positions and velocities; identity for spheres unless an encounter or
 * inclination/position_angle says otherwise), then centre-of-mass position
 * and velocity (internal units). With encounter enabled, entries 0 and 1
 * are placed on the requested orbit and oriented per Toomre & Toomre;
 * otherwise from the entry's own position/velocity/inclination/
 * position_angle. Returns 0 or NB_EINPUT (logged). */
int sim_ic_placement(const struct scene *sc, int k, const struct sim_units *u, double R[9],
		     double pos[3], double vel[3]);
/* Dry-run report: per disk galaxy, Toomre Q, rotation curve and rotation
 * period at 2 scale lengths, as a short table (scene units). */
void sim_galaxy_report(const struct scene *sc, FILE *f);

/* ---- state CSV files (sim/state_csv.c) ----
 * Body files, read for bodies of model: file, written for output.initial_state
 * and output.final_state. Text, one record a line, lines ending in "\n" or
 * "\r\n" (the last may lack it), at most SIM_CSV_LINE_MAX bytes a line:
 *   line 1: the header, exactly id,component,mass,x,y,z,vx,vy,vz
 *   then one body a line, 1 to SIM_CSV_MAX_BODIES of them; blank lines may
 *   follow the last body, nowhere else.
 * Fields (no blanks, no quotes): id a decimal integer in [0, 2^32-1], each
 * id once in a file; component a name of 1 to SCENE_NAME_MAX+7 characters
 * A-Z a-z 0-9 _ . - ; mass, x..vz decimal numbers ([+-]d[.d][e[+-]d]: no
 * hex, nan, inf) that are finite as doubles; mass > 0; x..vz within
 * +-SIM_CSV_XMAX (1e15, as the scene's position and velocity). Values in scene
 * units. The id and component are checked but not kept (see state_csv.c). */
#define SIM_CSV_LINE_MAX 1024
#define SIM_CSV_MAX_BODIES 1000000000 /* as bodies.*.count */
#define SIM_CSV_XMAX 1e15 /* |x|, |v| at most this, as the scene's vectors */

/* Read the state CSV at path. *out_n gets the body count (0 on error);
 * bodies are stored at st->pos + 3*first etc., converted by u, when
 * st != NULL (a count-only pass when st == NULL; u may then be NULL).
 * path must name a non-empty regular file: a directory, FIFO or device is
 * refused without reading it (never blocks). Returns 0, NB_EINPUT for a bad
 * file (one message naming PATH:LINE and the column), or NB_ERUNTIME (read
 * error, allocation, or more bodies than st holds). */
int sim_state_read_csv(const char *path, const struct sim_units *u,
		       struct sim_state *st, size_t first, size_t *out_n);
/* The count pass of sim_state_read_csv (the same checks and messages)
 * that also gives log10 of the bodies' total mass in scene units (computed
 * without overflow), for the check of forces against the softening. */
int sim_state_csv_count(const char *path, size_t *out_n, double *lg_mass);
/* The same rules over the len bytes at buf (any bytes: it never reads past
 * buf + len and never crashes), naming the input name in messages, with at
 * most max_bodies bodies (capped at SIM_CSV_MAX_BODIES). For fuzzing and
 * tests. */
int sim_state_read_csv_mem(const char *name, const void *buf, size_t len, size_t max_bodies,
			   const struct sim_units *u, struct sim_state *st, size_t first,
			   size_t *out_n);
/* 0 when path names a readable, non-empty regular file; else NB_EINPUT
 * and why gets a clause such as "it is a directory", "it is a FIFO (named
 * pipe)", "the file is empty", "it cannot be opened: Permission denied".
 * Logs nothing (the scene loader reports it at the file: key). */
int sim_state_csv_check_file(const char *path, char *why, size_t len);
/* Write a state CSV with %.9g in scene units. Written under
 * sim_outfile_temp's name, renamed on success. 0 or NB_ERUNTIME. */
int sim_state_write_csv(const char *path, const struct sim_state *st,
			const struct sim_units *u);

/* ---- snapshots (sim/snap.c, snap_gadget_bin.c, snap_hdf5.c, snap_load.c) ----
 * Readers of GADGET-style snapshots, one file at a time, for model:
 * snapshot and for anything that plays a series of files (docs/snapshots.md).
 * Formats: GADGET/AREPO/GIZMO/SWIFT HDF5 (through libhdf5) and GADGET-1/2
 * binary, format 1 and 2, either byte order. A snapshot split over files
 * (snap_012.0.hdf5, snap_012.1.hdf5, ...) is read file by file: the header
 * of each says how many particles of each type it holds (npart) and how
 * many files there are (num_files; sim_snap_part_path names them).
 *
 * Use:  sim_snap_open -> sim_snap_header -> sim_snap_read(type, first, n)
 *       repeatedly, in chunks of any size -> sim_snap_close.
 * Values come back in the file's code units, as stored (comoving, /h):
 * sim_snap_load (below) converts them for a scene. No function keeps a
 * pointer to the caller's arrays. Not thread-safe (libhdf5 serial). */
#define SIM_SNAP_NTYPES 6
/* A format: one row of the readers' table (sim/snap_internal.h; rows
 * "gadget-hdf5", "gadget1", "gadget2", the names bodies.*.format takes). */
struct sim_snap_format;
/* The row named NAME, or NULL when none is ("auto": probe the file). */
const struct sim_snap_format *sim_snap_format_find(const char *name);
/* Its title in messages: "GADGET-style HDF5", "GADGET binary format 1". */
const char *sim_snap_format_title(const struct sim_snap_format *f);
struct sim_snap_header {
	const struct sim_snap_format *format; /* the row that read the file (never NULL) */
	int swapped;                  /* binary: the file's byte order is not the host's */
	uint64_t npart[SIM_SNAP_NTYPES];       /* particles of each type in this file */
	uint64_t npart_total[SIM_SNAP_NTYPES]; /* in the whole snapshot (high words applied) */
	double mass_table[SIM_SNAP_NTYPES];    /* mass of every particle of a type; 0: per particle */
	double time, redshift;        /* as stored: Time is a for comoving GADGET runs */
	double scale_factor;          /* SWIFT's Header "Scale-factor" (its Time is a time); 0 absent */
	double box_size;              /* 0 when absent (the largest edge when given per axis) */
	double hubble;                /* HubbleParam (Header, Parameters or Cosmology h); 0 absent */
	int num_files;                /* >= 1 (a 0 in the file counts as 1) */
	int cosmo_flag;               /* 1 / 0 the file says it is (not) comoving; -1 it does not say */
	int has_mass[SIM_SNAP_NTYPES]; /* per-particle masses stored (else mass_table, else 0) */
	int has_hsml[SIM_SNAP_NTYPES]; /* SmoothingLength stored */
	/* code units in cgs, when the file gives them (units_from says where:
	 * "Units group", "Parameters group", "Header"); else 0 and "" */
	double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
	char units_from[32];
	/* SWIFT's per-dataset "a-scale exponent" / "h-scale exponent" of
	 * Coordinates, Velocities and Masses, when every type present has them
	 * (has_exponents); physical = a^a_exp h^h_exp x stored */
	int has_exponents;
	double a_exp[3], h_exp[3]; /* [0] positions, [1] velocities, [2] masses */
	/* a part of a multi-file set this program wrote (output.snapshots.files):
	 * NbodyRender/SetId, the same in every part of one set; else 0 */
	uint64_t set_id;
};
struct sim_snap; /* one open file */

/* Open PATH as FORMAT (NULL: the row its first bytes say) and read its
 * header; *out gets the handle. PATH must be a non-empty regular file
 * (FIFOs and devices refused unread, as body files). Checks the header and
 * the layout against each other (record markers and sizes, groups,
 * dataset shapes and types, counts). Returns 0, NB_EINPUT for a bad file
 * (one message naming the path and the block, group or dataset), or
 * NB_ERUNTIME (read error, memory). */
int sim_snap_open(const char *path, const struct sim_snap_format *format,
		  struct sim_snap **out);
/* The header read by sim_snap_open (owned by the handle). */
const struct sim_snap_header *sim_snap_header(const struct sim_snap *s);
/* Particles [first, first+n) of TYPE in this file (first + n <= npart[type]):
 * any array may be NULL (not read). pos, vel: 3n (xyz interleaved), id: n,
 * mass: n (the stored masses, else mass_table[type], else 0), hsml: n
 * (SmoothingLength, NaN when absent). Reads only that range (hyperslabs,
 * pread). Checks that values are finite. 0, NB_EINPUT (bad values or a
 * short file: the message names path, dataset or block, and particle), or
 * NB_ERUNTIME. */
int sim_snap_read(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		  double *pos, double *vel, double *mass, double *hsml);
/* Close and free; *s becomes NULL. Safe on NULL. */
void sim_snap_close(struct sim_snap **s);
/* Name of part I of the snapshot whose first file is FIRST: "x.0.hdf5" ->
 * "x.I.hdf5", "x.0" -> "x.I" (the last ".0" before an optional extension).
 * I = 0 gives FIRST. 0, or NB_EINPUT when FIRST has no ".0" to replace
 * or the name does not fit (len bytes). */
int sim_snap_part_path(const char *first, int i, char *out, size_t len);
/* 1 when particle ID is kept by a subsample of fraction F in (0, 1]: a
 * fixed hash of the ID below F x 2^64. The same IDs for the same F in any
 * file, order or run. */
int sim_snap_keep_id(uint64_t id, double f);

/* What the scene entry reads, found by the count pass (sim_snap_load). */
struct sim_snap_info {
	const struct sim_snap_format *format;
	int num_files;
	uint64_t in_file[SIM_SNAP_NTYPES]; /* particles in the snapshot (all files) */
	size_t kept[SIM_SNAP_NTYPES];      /* after load, region and subsample */
	int ncomp;                         /* components: loaded types with particles */
	/* conversion applied: scene value = stored x factor */
	double length, velocity, mass;
	double a, h;                       /* scale factor and h applied (1: none) */
	int comoving;
	char units[384];                   /* which units were used and from where */
	double time;                       /* the header's Time, as stored */
};
/* Scene entry k (model: snapshot): with st == NULL, the count pass: fills
 * *info (how many bodies and components it makes, which units). With st,
 * also stores the kept particles at bodies first.. in internal units
 * (before the entry's placement), components comp0.. named NAME.gas,
 * NAME.halo, NAME.disk, NAME.bulge, NAME.stars, NAME.bh (loaded types with
 * particles, in type order; brightness 0 for types not drawn), and logs
 * one line saying the units used. Particles in file order, types in order,
 * files in order. 0, NB_EINPUT (bad file, logged), NB_ERUNTIME. */
int sim_snap_load(const struct scene *sc, int k, const struct sim_units *u,
		  struct sim_state *st, size_t first, int comp0, struct sim_snap_info *info);
/* sim_snap_load of the snapshot at PATH (NULL: the entry's file) with the
 * entry's options; ids (NULL or st->n entries) gets each stored body's
 * ParticleID at the same index. With ids the units line is not logged. */
int sim_snap_load_path(const struct scene *sc, int k, const char *path,
		       const struct sim_units *u, struct sim_state *st, size_t first, int comp0,
		       uint64_t *ids, struct sim_snap_info *info);
/* Share SHARE of NSHARES (0 <= SHARE < NSHARES) of entry k's snapshot, for
 * ranks that each read their own part (issue 31): the particles of the
 * loaded types in sim_snap_load's order (type by type, file by file) cut
 * into NSHARES stretches of about equal count before bodies.*.region and
 * subsample select, share SHARE being stretch SHARE; so the shares' bodies
 * in share order are sim_snap_load's, and every share has the same
 * components (first and count: the share's). Every part's header is read
 * and checked as sim_snap_load checks them; only the share's particles are
 * read, each value checked. st == NULL: the count pass (info->kept: the
 * share's). With st: no file IDs kept in st (st->pid untouched; ids, NULL
 * or indexed like st, gets them) and nothing logged; the checks over the
 * whole entry are the caller's: sim_snap_entry_check with the shares'
 * sums. 0, NB_EINPUT (logged, naming the file), NB_ERUNTIME. */
int sim_snap_load_share(const struct scene *sc, int k, const struct sim_units *u,
			struct sim_state *st, size_t first, int comp0, int share, int nshares,
			uint64_t *ids, struct sim_snap_info *info);
/* What sim_snap_load checks over the whole entry once read: TOTAL, the
 * kept bodies' mass (internal units; 0 for a count pass), against the
 * softening (accelerations that overflow), and KEPT > 0 (an entry that
 * gives no body). info: any share's or the count pass's. 0 or NB_EINPUT
 * (logged, naming the file and bodies.K). */
int sim_snap_entry_check(const struct scene *sc, int k, double total, size_t kept,
			 const struct sim_snap_info *info);

/* The cheap part of the count pass, for --dry-run and the run alike
 * (sim_inputs_check): open every file of the snapshot at PATH (NULL: entry
 * k's file), check each header, the parts against the first file's
 * totals for every type, and the unit factors; read no particle. Fills
 * info's format, num_files, units and factors. 0, NB_EINPUT (logged) or
 * NB_ERUNTIME. */
int sim_snap_check_path(const struct scene *sc, int k, const char *path,
			struct sim_snap_info *info);
/* The count pass of PATH as entry k that also stores the ParticleIDs of
 * the kept particles into ids (room for cap; more: NB_ERUNTIME), in
 * reading order. info as sim_snap_load's count pass. */
int sim_snap_ids_path(const struct scene *sc, int k, const char *path, uint64_t *ids,
		      size_t cap, struct sim_snap_info *info);

/* ---- filming a snapshot series (sim/snap_series.c; docs/snapshots.md) ----
 * simulation.solver: none with bodies.K.snapshots: the files of the
 * pattern (numbered without gaps), each read as entry K (units, types,
 * region, subsample per file), bodies matched by ParticleID across files.
 * Between two snapshots a body present in both moves on the cubic Hermite
 * curve through both positions and velocities; one present at one end only
 * drifts with its velocity and its mass (its light: light is per unit
 * mass) is scaled by s or 1 - s (s in [0, 1] the interpolation parameter);
 * one absent at both ends gets mass 0. Owns two decoded snapshots. */
struct sim_snap_series;
/* Scan and check the series of entry K (a missing number: NB_EINPUT naming
 * the missing file), read every file's IDs, and allocate *st (the
 * union of the IDs, in ID order; st->id the index, components the union
 * of the files' by name) holding the state at the first snapshot's time.
 * *out the series. 0, NB_EINPUT (logged) or NB_ERUNTIME. */
int sim_snap_series_open(const struct scene *sc, int k, const struct sim_units *u,
			 struct sim_state *st, struct sim_snap_series **out);
/* First and last snapshot times (internal units), number of files. */
/* What sim_snap_series_open refuses, found without keeping any state:
 * the numbering (at least 2 files, no gap), every member's headers and
 * units, a comoving member, Times (converted to internal units) finite
 * and increasing, and each member's kept ParticleIDs unique. Reads the
 * members' IDs (and positions for a region), nothing else. 0, NB_EINPUT
 * (logged, naming the file) or NB_ERUNTIME. */
int sim_snap_series_check(const struct scene *sc, int k, const struct sim_units *u);
double sim_snap_series_t0(const struct sim_snap_series *s);
double sim_snap_series_t1(const struct sim_snap_series *s);
int sim_snap_series_count(const struct sim_snap_series *s);
/* Make st (from open) the interpolated state at time T (internal units,
 * clamped to [t0, t1]): pos, vel, mass, time. Reads a file when T leaves
 * the bracketing pair. 0, NB_EINPUT (a file changed: logged), NB_ERUNTIME. */
int sim_snap_series_at(struct sim_snap_series *s, double t, struct sim_state *st);
/* Files read so far (each snapshot counts once per decode; for tests). */
long sim_snap_series_reads(const struct sim_snap_series *s);
void sim_snap_series_free(struct sim_snap_series **s);

/* The entry's file path (the loader stores it absolute; else relative to
 * the scene directory). */
void sim_snap_entry_path(const struct scene *sc, int k, char *out, size_t len);
/* (sim/snap_units.c) units: snapshot: sc->units_cgs from the header of
 * the scene's first snapshot entry (sc->units_entry) when its file gives
 * its units (HDF5 Units or Parameters group, or Header attributes); else
 * the loader's (bodies.*.units.*, else GADGET's defaults) stay. Call once,
 * right after scene_load, before anything converts a value: the program
 * does for the run and --dry-run alike. Says the units it settled on (log
 * info). A file that cannot be opened is left to the input checks (0);
 * a damaged one: NB_EINPUT, logged. Other unit systems: 0, nothing done. */
int sim_scene_units_resolve(struct scene *sc);

/* ---- restart from a snapshot (sim/snap_restart.c; layout sim/snap_format.h) ----
 * Only snapshots this program wrote (output.snapshots). What must match
 * between the scene and the snapshot is listed at the top of
 * sim/snap_restart.c and in docs/snapshots.md. */
/* Before any work: PATH is such a snapshot, its units, dt, steps per
 * frame, force keys and body count match sc, and it leaves frames to
 * render. *frame (may be NULL) gets its frame. 0 or NB_EINPUT (one message
 * naming PATH and the first difference). */
int sim_snap_restart_check(const char *path, const struct scene *sc, int *frame);
/* st holds the bodies sim_ic_build made for sc: check the components
 * (names, counts) and every mass against the snapshot, then replace
 * positions, velocities, time and step by the snapshot's, exactly as the
 * writing run held them. *frame gets its frame. 0, NB_EINPUT (mismatch,
 * damaged file; logged) or NB_ERUNTIME. */
int sim_snap_restart(const char *path, const struct scene *sc, struct sim_state *st, int *frame);

/* ---- forces (sim/direct.c, sim/tree.c) ----
 * Softened gravity, G = 1: a_i = sum_j m_j (x_j - x_i) / (r^2 + eps^2)^{3/2};
 * phi_i = -sum_{j!=i} m_j / sqrt(r^2 + eps^2). acc is 3n, pot is n or NULL.
 * Both return 0 or NB_ERUNTIME (allocation). */

/* Each pair once, accumulated in double, parallel with OpenMP (threads own
 * blocks of i and accumulate reactions privately, then reduce). Asks
 * sim_stop_requested() before each row i: NB_EINTR (acc, pot incomplete)
 * when it says stop. */
int sim_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     double *acc, double *pot);

/* Each active target (active[i] != 0; NULL: all, as sim_direct_accel
 * but one-sided) summed over every source in double, in source order: the
 * individual time steps' force. acc/pot of inactive bodies are untouched.
 * Every pair that is summed is summed from both ends, so momentum is
 * conserved to round-off only when every body is active. 0 or NB_EINTR. */
int sim_direct_accel_active(const double *pos, const double *mass, size_t n, double eps,
			    const unsigned char *active, double *acc, double *pot);

/* The softening of one force call (docs/PHYSICS.md "Softening"): the
 * kernel (sim/soften.h) and each body's Plummer-equivalent length, each[i]
 * (n, the force call's body order) when each != NULL, else eps for every
 * body. A pair takes the larger of its two lengths (sim_soft_pair). With
 * kernel plummer and each == NULL, the _soft functions below give bit for
 * bit the results of the plain ones with eps. */
struct sim_soft {
	enum scene_soft_kernel kernel;
	double eps;
	const double *each;
};
/* (sim/soften_assign.c) each[i] = the softening of body i's component
 * (st->comps[st->comp[i]].softening), i < st->n. */
void sim_soft_each(const struct sim_state *st, double *each);
/* *s for a force call on st's bodies under p: p's kernel and softening,
 * and, when p->soft_mixed, each from sim_soft_each in an array *owned
 * (the caller frees it; NULL otherwise). 0 or NB_ERUNTIME (logged). */
int sim_soft_of(const struct sim_params *p, const struct sim_state *st, struct sim_soft *s,
		double **owned);
/* sim_direct_accel, sim_direct_accel_active and sim_tree_accel_sel with the
 * softening s. */
int sim_direct_accel_soft(const double *pos, const double *mass, size_t n,
			  const struct sim_soft *s, double *acc, double *pot);
int sim_direct_accel_active_soft(const double *pos, const double *mass, size_t n,
				 const struct sim_soft *s, const unsigned char *active,
				 double *acc, double *pot);
int sim_tree_accel_soft(const double *pos, const double *mass, size_t n,
			const struct sim_soft *s, double theta, int multipoles,
			enum scene_opening opening, const unsigned char *active, double *acc,
			double *pot, double *work);

/* The far-cell rule of both trees (sim/tree.c, sim/cuda/tree.cu): an
 * accepted cell with rho < ratio R joins the walk group's local expansion
 * (rho the group box's half diagonal, R the distance from its centre to
 * the cell's centre of mass). 0.1 under bmax and com; 0.15 under mass,
 * whose light far cells carry less of a body's force (measured on the
 * H200 at 1M Plummer bodies, theta0 0.39: 2.95 ms against 3.13 at the same
 * median error 1.75e-4; docs/BENCHMARKS.md "Opening by mass"). */
double sim_tree_local_ratio(enum scene_opening opening);

/* Barnes-Hut octree. d is the distance from a cell's centre of mass to the
 * body (conservatively: to the box of the bodies walking together).
 * opening SCENE_OPENING_BMAX accepts a cell when bmax < theta d and
 * bmax < d, bmax a bound on the distance of its bodies from their centre of
 * mass; SCENE_OPENING_COM accepts a cell of side l when l < theta d.
 * theta = 0: exact, every pair. multipoles: 1 monopole, 2 adds the
 * traceless quadrupole and the softened expansion's trace term (T eps^2,
 * see sim/tree.c). The GPU tree (sim/cuda/tree*.cu) uses the same criteria
 * and moments. */
int sim_tree_accel_ex(const double *pos, const double *mass, size_t n, double eps,
		      double theta, int multipoles, enum scene_opening opening, double *acc,
		      double *pot);
/* sim_tree_accel_ex for the targets with active[i] != 0 (NULL: all): the
 * tree is built over every body, walk groups without an active body are
 * skipped, and only active bodies' acc/pot are written. */
int sim_tree_accel_active(const double *pos, const double *mass, size_t n, double eps,
			  double theta, int multipoles, enum scene_opening opening,
			  const unsigned char *active, double *acc, double *pot);
/* sim_tree_accel_active, and work (n, or NULL) gets each active body's
 * interactions (listed bodies + cells, + 1 for a local expansion): the
 * cost dist/ balances MPI ranks by. An active body's acc and pot are bit
 * for bit sim_tree_accel_ex's (its group, walk and sums do not depend on
 * the selection). */
int sim_tree_accel_sel(const double *pos, const double *mass, size_t n, double eps,
		       double theta, int multipoles, enum scene_opening opening,
		       const unsigned char *active, double *acc, double *pot, double *work);
/* The GPU's refit on the CPU (individual time steps; sim/cuda/tree.cu):
 * the cells, body order and walk groups of a tree built over pos_build,
 * moments and bmax from pos, the bmax criterion, then as
 * sim_tree_accel_sel over pos. Forces stay within the tree's tolerance
 * (bmax is a true bound); the walk's work grows as the drifted cells
 * loosen (docs/BENCHMARKS.md, issue 18). */
int sim_tree_accel_refit(const double *pos_build, const double *pos, const double *mass,
			 size_t n, double eps, double theta, int multipoles,
			 const unsigned char *active, double *acc, double *pot, double *work);
/* sim_tree_accel_ex with the scene's default opening (simulation.opening:
 * bmax). */
int sim_tree_accel(const double *pos, const double *mass, size_t n, double eps,
		   double theta, int multipoles, double *acc, double *pot);

/* ---- the tree's body order between steps (sim/tree_migrate.c) ----
 * The CPU twin of sim/cuda/tree_migrate.cu (simulation.reorder: migrate):
 * bodies stay grouped by branch, branch b the key range [spl[b], spl[b+1])
 * of their 63-bit Morton keys; each step only the bodies whose key left
 * their branch move. Step, in the GPU's order: detect movers and append
 * them to a buffer (their new branch counted), compact each branch's
 * stayers in their old order, insert the movers after them, sort each
 * branch by key (stable). A rebuild (first step, force_rebuild, more than
 * n/4 movers, or a migrating step whose largest branch passed twice the
 * mean, or twice what the last rebuild left) places every body by
 * provisional splitters (every (n/nbr)-th key of the current order,
 * sorted), sorts, then takes exact quantiles of the sorted keys as the
 * splitters (every (n/nbr)-th; branches of at most ceil(n/nbr) bodies but
 * where keys coincide). Result: keys sorted, and for distinct keys the
 * same permutation as a stable sort of the keys (the full re-sort). */
struct sim_tree_mig {
	size_t n;         /* bodies */
	int nbr;          /* branches */
	uint64_t *spl;    /* nbr + 1 splitters (spl[0] = 0, spl[nbr] = UINT64_MAX) */
	int *off;         /* nbr + 1: branch b at positions [off[b], off[b+1]) */
	uint32_t *br;     /* n: branch of each position */
	int primed;       /* spl, off and br describe the current order */
	int rebalance;    /* the next step rebuilds */
	int built_max;    /* largest branch the last rebuild left */
	/* scratch */
	uint32_t *buf;    /* movers' positions, in position order */
	int *stay, *fill, *cnt, *noff;
	uint64_t *key2;
	uint32_t *val2;
};
struct sim_tree_mig_stats {
	size_t moved;     /* bodies that left their branch (n on a rebuild) */
	int rebuilt;      /* every body placed anew */
	int max_branch;   /* largest branch after the step */
};
/* Branch count for n bodies, branch_bodies a branch (0: 1024): n /
 * branch_bodies in [1, 4096] (sim/cuda/tree_migrate.cu's rule). */
int sim_tree_mig_branches(size_t n, int branch_bodies);
/* 0, or NB_ERUNTIME (out of memory, logged; m left freeable). */
int sim_tree_mig_init(struct sim_tree_mig *m, size_t n, int nbr);
void sim_tree_mig_free(struct sim_tree_mig *m);
/* keys[i]: the key of the body at position i of the current order (the
 * order the last step left). Writes perm[k] = position of the body that
 * goes to slot k and keys_out[k] = its key (sorted), and makes that the
 * current order. st may be NULL. 0 or NB_ERUNTIME (out of memory). */
int sim_tree_mig_step(struct sim_tree_mig *m, const uint64_t *keys, int force_rebuild,
		      uint32_t *perm, uint64_t *keys_out, struct sim_tree_mig_stats *st);

/* ---- integration (sim/leapfrog.c, sim/stop.c) ----
 * The engine that picks the backend and owns the solver is engine/engine.h. */
/* The process-wide stop check (e.g. app_interrupted: a signal arrived);
 * NULL (the default) never stops. sim_stop_requested() asks it. */
void sim_set_stop_check(int (*check)(void));
int sim_stop_requested(void);

/* One kick-drift-kick step on the CPU with any force function (used by the
 * engine and by tests). acc must hold a(x) on entry and holds the new a(x)
 * on return. */
typedef int (*sim_force_fn)(const double *pos, const double *mass, size_t n, void *ctx,
			    double *acc, double *pot);
int sim_leapfrog_step(struct sim_state *st, double dt, sim_force_fn force, void *ctx,
		      int need_potential);

/* ---- individual (block) time steps (sim/timestep.c; the level rule,
 * shared with sim/cuda/sim_levels.cu, in sim/timestep_rule.h) ----
 * Bodies on level L step by dt_max / 2^L; kick-drift-kick across levels,
 * only the active bodies' forces computed each tick (docs/PHYSICS.md,
 * Individual time steps). */
#ifndef SIM_TS_LEVELS
#define SIM_TS_LEVELS 21 /* as sim/timestep_rule.h */
#endif
/* The state of the levels across blocks. Owns lev and active. */
struct sim_ts {
	struct sim_params p;         /* read: dt_max, eta, softening, max_level, coarsen_margin */
	unsigned char *lev;          /* n: each body's level */
	unsigned char *active;       /* n: scratch, active this tick */
	long hist[SIM_TS_LEVELS];    /* bodies per level, as of the last block end */
	double evals;                /* force evaluations (active bodies, summed over ticks;
				      * over every rank when sum is set, as are hist and
				      * changes) */
	long ticks;                  /* force calls */
	long blocks;                 /* block steps taken */
	long changes;                /* level changes (a body taking another level) */
	size_t cap;                  /* active's length */
	/* Over ranks that each hold their own bodies (sim_ts_init_over): sums
	 * v[0..n) over every rank, in place, on every rank (a collective call);
	 * NULL: one process. hist and the plan are then the whole system's,
	 * and a tick with no active body on any rank is skipped by all. */
	void (*sum)(void *ctx, double *v, int n);
	void *sum_ctx;
};
/* Forces on the bodies with active[i] != 0 (active NULL: all) from every
 * body; acc and pot of the others are left as they were. 0 or NB_*. */
typedef int (*sim_force_active_fn)(const double *pos, const double *mass, size_t n,
				   const unsigned char *active, void *ctx, double *acc,
				   double *pot);
/* Levels from st->acc (the accelerations at st's positions), for the
 * parameters p (copied; its dt_max, eta, softening, max_level and
 * coarsen_margin are read). 0 or NB_ERUNTIME (out of memory, logged; ts
 * freeable). */
int sim_ts_init(struct sim_ts *ts, const struct sim_params *p, const struct sim_state *st);
/* sim_ts_init over ranks: ts->sum = sum (with ctx) before the first
 * histogram (a collective call). Between block steps the caller may change
 * st's bodies (migration) if it moves ts->lev with them (malloc'd, st->n
 * entries); sim_ts_block_step takes st->n as it finds it. */
int sim_ts_init_over(struct sim_ts *ts, const struct sim_params *p, const struct sim_state *st,
		     void (*sum)(void *ctx, double *v, int n), void *ctx);
void sim_ts_free(struct sim_ts *ts);
/* One block step of dt_max (st->time advances by it; st->step is the
 * caller's). st->acc must hold a(x) on entry and holds it on return, with
 * every velocity synchronised to st->time. need_potential: st->pot too
 * (the block end evaluates every body). 0, NB_EINTR (stop requested
 * between ticks; state between ticks), or the force's error. */
int sim_ts_block_step(struct sim_ts *ts, struct sim_state *st, sim_force_active_fn force,
		      void *ctx, int need_potential);
/* hist[L] = bodies of level L (levels past the table count in the last). */
void sim_ts_histogram(const unsigned char *lev, size_t n, long hist[SIM_TS_LEVELS]);
/* The finest occupied level (0 when none): a block's plan. */
int sim_ts_plan(const long hist[SIM_TS_LEVELS]);
/* "L0 1234, L1 567, ..." of the occupied levels, into buf. */
void sim_ts_format_hist(const long hist[SIM_TS_LEVELS], char *buf, size_t len);

/* ---- diagnostics (sim/diag.c) ---- */
struct sim_diag {
	double kinetic, potential, total; /* internal units; potential needs st->pot */
	double p[3], l[3];                /* total momentum and angular momentum */
	double com[3], comv[3];           /* centre of mass and its velocity */
	double mass;
};
/* From st (pot may be NULL: potential = NaN). */
void sim_diag_compute(const struct sim_state *st, struct sim_diag *d);
/* Index of the first body with a non-finite position, velocity or
 * acceleration, or -1. */
long sim_diag_find_nonfinite(const struct sim_state *st);
/* The softening crossing time eps / v_rms (internal units), v_rms the
 * bodies' rms speed about their mean velocity (each body counted once,
 * whatever its mass: the speed at which a star meets its neighbours),
 * into *v_rms when not NULL. A step much longer than it leaves encounters
 * at the softening scale unresolved and the energy drifts (docs/PHYSICS.md,
 * Individual time steps: on the default collision, 0.413 Myr, |dE/E0|
 * 3.4e-4 at dt = 1.2 of it, 4.8e-3 at 2.4, 1.7e-2 at 3.6). INFINITY when every body
 * moves together (or n = 0). */
double sim_diag_crossing_time(const struct sim_state *st, double eps, double *v_rms);
/* |E - E0| / |E0| (against |K0| + |W0| when E0 is within 1e-3 of zero next
 * to them); NaN when a potential is missing. */
double sim_diag_energy_error(const struct sim_diag *d0, const struct sim_diag *d);
/* A blow-up that stays finite: when the energy error of d against d0
 * exceeds max_error (> 0; simulation.max_energy_error), log the step, the
 * error, the fastest body of st and a hint, and return NB_ERUNTIME; else 0. */
int sim_diag_check_energy(const struct sim_state *st, const struct sim_diag *d0,
			  const struct sim_diag *d, double max_error);
/* Stats CSV: header frame,time,kinetic,potential,total,px,py,pz,lx,ly,lz;
 * values in scene units (galactic: Myr, M_sun (km/s)^2, M_sun km/s,
 * M_sun kpc km/s). Written under sim_outfile_temp's name; sim_stats_close
 * renames it into place when ok, and removes it otherwise. All return 0 or NB_ERUNTIME. */
int sim_stats_open(const char *path, FILE **f);
int sim_stats_row(FILE *f, int frame, const struct sim_state *st, const struct sim_diag *d,
		  const struct sim_units *u);
int sim_stats_close(FILE *f, const char *path, int ok);

/* ---- output files (sim/outfile.c) ----
 * Every output file is written under a temporary name beside PATH,
 * ".NAME.<pid>-<token>.partial" (token: random, drawn once per process),
 * and renamed into place when complete. The name is unique to the process
 * and depends only on PATH within it. */
/* The temporary name of PATH into tmp (cap bytes). 0, or NB_ERUNTIME
 * (logged) for an empty name or one that does not fit. */
int sim_outfile_temp_name(const char *path, char *tmp, size_t cap);
/* Create that file (O_EXCL, mode 0666 less the umask) and return its
 * descriptor, or NB_ERUNTIME (logged with the path and strerror). */
int sim_outfile_temp(const char *path, char *tmp, size_t cap);
/* Same as a FILE opened for writing; NULL on failure (logged). */
FILE *sim_outfile_fopen(const char *path, char *tmp, size_t cap);
/* ok: rename TMP to PATH, unless PATH is a device, FIFO, socket or
 * directory (never replaced: NB_ERUNTIME, logged); !ok: remove TMP.
 * TMP never remains. 0 or NB_ERUNTIME. */
int sim_outfile_commit(const char *tmp, const char *path, int ok);
/* What PATH is when it exists and is neither a regular file nor a
 * symbolic link ("a FIFO", "a directory", "a character device", ...), else
 * NULL. A symbolic link is replaced by the new file, never followed. */
const char *sim_outfile_special(const char *path);

#ifdef __cplusplus
}
#endif
#endif
