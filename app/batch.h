/* batch.h - scripted scene batches (nbody-render batch BATCH.yaml ...):
 * the batch file, its expansion into runs, and how each run is placed,
 * executed and reported. Private to app/batch*.c (and tests/test_batch.c).
 *
 * Flow: batch_file_load (batch_file.c) -> batch_expand (batch_expand.c:
 * set + sweep product + command line --set, names from templates) ->
 * batch_plan (batch_scene.c: load each run's scene, resolve names, move its
 * outputs to OUTPUT_DIR/NAME/, resume check) -> batch_group (batch_group.c:
 * runs that differ only in view keys share one simulation) -> batch_exec
 * (batch_exec.c: forked children, one per group, --jobs) -> batch_report_*
 * (batch_report.c: table, JSON). */
#ifndef NB_BATCH_H
#define NB_BATCH_H

#include <stdio.h>

#include "../sim/sim.h"
#include "app.h"
#include "outputs.h"

/* Runs after expansion. Each run is a whole movie, and before anything runs
 * its scene is loaded and it takes ~12 KB of the run table: a 100,000-run
 * --dry-run took 2m21s and 1.2 GB (2-core box, 2026-11); 10,000 take ~1/10. */
#define BATCH_MAX_RUNS 10000
#define BATCH_MAX_JOBS 256 /* --jobs: each running run holds 2 pipes in the batch process,
			    * so 256 stay well inside the usual 1024 open files */
#define BATCH_MAX_VIEWS 64    /* runs sharing one simulation (a larger group splits) */

/* One "key=value" override. value is YAML flow text, loadable as the file's
 * own value would be (plain scalars as written, quoted ones re-quoted,
 * sequences as [a, b]); label is the same value as it goes into a run name
 * (quotes dropped, sequence items joined with ','). */
struct batch_override {
	char *key;
	char *value;
	char *label;
	char *from; /* where it was written, "FILE:LINE:COL: runs.0.sweep"; NULL: --set */
};

/* One key of sweep: the values it takes, in order. */
struct batch_sweep {
	struct batch_override *values; /* nvalues entries, all with this key */
	int nvalues;
};

/* One entry of runs: in the batch file. */
struct batch_entry {
	char scene[SCENE_PATH_MAX];     /* as written */
	char scene_path[SCENE_PATH_MAX];/* relative to the batch file's directory */
	char name_tmpl[SCENE_PATH_MAX]; /* name: or the default template */
	int line, col;                  /* of the entry (1-based) */
	int name_line, name_col;        /* of name: (or of the entry) */
	struct batch_override *set;     /* set: flattened to dotted keys, in order */
	int nset;
	struct batch_sweep *sweep;      /* sweep: keys in order, first = slowest */
	int nsweep;
};

struct batch_file {
	char path[SCENE_PATH_MAX];       /* as given (messages) */
	char dir[SCENE_PATH_MAX];        /* its directory ("." if none) */
	char output_dir[SCENE_PATH_MAX]; /* relative to the current directory */
	struct batch_override *set;      /* top-level set:, applied to every run first */
	int nset;
	struct batch_entry *entries;
	int nentries;
	int share_simulation;            /* share_simulation: (default true) */
};

/* Parse a batch file (scene/yaml_tree.h). Keys: output_dir (default "out/batch"),
 * set (optional map), share_simulation (true/false, default true), runs (REQUIRED, non-empty list of {scene (REQUIRED),
 * name, set, sweep}). Returns 0 or NB_EINPUT after logging one message
 * "FILE:LINE:COL: runs.N.key: expected X, got Y". bf is zeroed first and
 * must be freed with batch_file_free even on error. */
int batch_file_load(const char *path, struct batch_file *bf);
/* Same from TEXT (NAME in messages, DIR base for scene paths). */
int batch_file_load_string(const char *text, const char *name, const char *dir,
			   struct batch_file *bf);
void batch_file_free(struct batch_file *bf);
/* The value at dotted KEY (list indices as numbers) in the YAML TEXT, as a
 * name label (see batch_override). 0, or -1 if absent or a mapping. */
int batch_yaml_lookup(const char *text, const char *key, char *out, size_t outlen);

enum batch_status {
	BATCH_PENDING,     /* not run yet */
	BATCH_OK,
	BATCH_FAILED,      /* runtime error, crash */
	BATCH_BAD_INPUT,   /* scene did not load, or the run said NB_EINPUT */
	BATCH_SKIPPED,     /* --resume: complete outputs found */
	BATCH_INTERRUPTED, /* stopped by SIGINT/SIGTERM while running */
	BATCH_NOT_RUN,     /* never started because the batch was interrupted */
	BATCH_OTHER_SHARD, /* another share's (--shard K/N, a Slurm array job) */
};
const char *batch_status_name(enum batch_status s);

/* One run after expansion. */
struct batch_run {
	int entry;                 /* index into batch_file.entries */
	int index;                 /* 0-based position in the batch */
	char scene_path[SCENE_PATH_MAX];
	struct batch_override *overrides; /* top set, entry set, sweep combination, --set */
	int noverrides;
	char name[SCENE_PATH_MAX]; /* filled by batch_expand (overrides only) or batch_plan */
	int name_pending;          /* a placeholder needs the resolved scene */
	char dir[SCENE_PATH_MAX];  /* OUTPUT_DIR/NAME */

	/* from the resolved scene (batch_plan) */
	int loaded;                /* scene loaded and placed */
	uint64_t seed;
	long bodies;
	int frames;
	long steps;
	int uses_gpu_backend;      /* backend is not cpu */
	char resolved[SCENE_PATH_MAX]; /* resolved-scene path ("" if none) */
	/* each row of the outputs table (app/outputs.h), placed; "" off */
	char outputs[APP_OUTPUTS_MAX][SCENE_PATH_MAX];
	uint64_t sim_key[2];       /* batch_sim_key of the resolved scene */

	/* simulation sharing (batch_group) */
	int group;                 /* index of the run whose job simulates for this one
				      (itself when it leads or runs alone); -1 not grouped */
	int group_size;            /* runs in that group (1: a simulation of its own) */

	/* outcome */
	enum batch_status status;
	int exit_code;             /* child's exit status (-1 not run; 128+sig if killed) */
	double wall_s;
	int frames_done;
	char message[512];         /* first error message, "" if none */
};

/* Expand every entry: cartesian product of its sweep (first key slowest),
 * overrides = bf->set, entry set, combination, cli_set ("key=value").
 * Names are filled from the templates where the overrides give every
 * placeholder ({scene} = scene file stem; {KEY} = the run's value for KEY);
 * other runs get name_pending = 1. *runs is malloc'd (batch_runs_free).
 * NB_EINPUT (logged) for a bad --set or too many runs. */
int batch_expand(const struct batch_file *bf, const char *const *cli_set, int ncli,
		 struct batch_run **runs, int *nruns);
void batch_runs_free(struct batch_run *runs, int nruns);

/* Fill a name from TMPL. lookup(ctx, key, out, outlen) supplies keys missing
 * from the overrides (NULL: none); it returns 0, or -1 if KEY is unknown.
 * Returns 0, 1 if a placeholder is missing (*missing gets its key), or
 * NB_EINPUT for a malformed template (unclosed '{'). */
typedef int (*batch_lookup_fn)(void *ctx, const char *key, char *out, size_t outlen);
int batch_name_fill(const char *tmpl, const char *scene_path, const struct batch_override *ov,
		    int nov, batch_lookup_fn lookup, void *ctx, char *out, size_t outlen,
		    char *missing, size_t missinglen);

/* Check every name: non-empty, relative, no empty/"."/".." component, no
 * control characters, not "batch-report.json", and no two runs where one's
 * name equals or contains the other's as a directory. NB_EINPUT (logged at
 * the name's file:line:col) on the first problem. */
int batch_check_names(const struct batch_file *bf, const struct batch_run *runs, int nruns);

/* ---- batch_scene.c ---- */
/* Load RUN's scene with its overrides into *sc. On failure returns NB_EINPUT
 * or NB_ERUNTIME with the loader's message in msg (not printed; nor are
 * its warnings: batch_plan's are the ones said). */
int batch_scene_load(const struct batch_run *run, struct scene *sc, char *msg, size_t msglen);
/* Plan every run: load its scene, fill pending names, place outputs, fill
 * the resolved-scene facts; a run whose scene does not load gets
 * BATCH_BAD_INPUT with the message. With resume, a run whose outputs are
 * complete (all present and the resolved-scene file equal to what it would
 * write now) gets BATCH_SKIPPED. warn: NULL, or nruns pointers, each NULL
 * on entry: run i's loader warnings (keys that do nothing, scene_warn.c)
 * go to warn[i], one a line without "nbody-render: warning: ", malloc'd
 * (NULL: none); the caller frees them. Nothing is printed for them here:
 * the planning is the one place a run's scene warns (the run's own process
 * reloads it silently), and batch.c says them once. Returns 0 or
 * NB_EINPUT (bad name: the batch itself is bad; logged). */
int batch_plan(const struct batch_file *bf, struct batch_run *runs, int nruns, int resume,
	       char **warn);
/* 1 if sc's outputs are complete on disk: its resolved-scene file (the
 * run's completion mark, written last) is present and byte-equal to what
 * this run would write now, and every output is whole (app_outputs_whole).
 * Else 0, with the first reason in why ("PATH is missing" etc.). */
int batch_scene_complete(const struct scene *sc, char *why, size_t len);

/* ---- batch_verify.c ---- */
/* The --resume test of each row of the outputs table (app/outputs.h,
 * its `problem` column; k: the row): NULL when PATH holds that output of sc whole,
 * else why ("is truncated ..."), with the file it found wanting in which.
 * They read structure only, no decoder:
 *   video      non-empty; MP4 top-level boxes that tile the file, with ftyp, moov, mdat
 *   png        frame_00000.png ... one per frame and no other member; each
 *              with the PNG signature and ending in IEND
 *   jpeg       SOI .. EOI
 *   stats      a header line and one line per frame, ending in '\n'
 *   text       non-empty, ending in '\n' (state CSVs)
 *   snapshots  every number the run writes: the HDF5 signature, and no other member
 *   fits       every frame: a FITS primary header ("SIMPLE  =") and a
 *              whole number of 2880-byte records; no other member */
const char *batch_whole_video(const struct app_out_kind *k, const struct scene *sc,
			      const char *path, char *which, size_t n);
const char *batch_whole_png(const struct app_out_kind *k, const struct scene *sc,
			    const char *path, char *which, size_t n);
const char *batch_whole_jpeg(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n);
const char *batch_whole_stats(const struct app_out_kind *k, const struct scene *sc,
			      const char *path, char *which, size_t n);
const char *batch_whole_text(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n);
const char *batch_whole_snapshots(const struct app_out_kind *k, const struct scene *sc,
				  const char *path, char *which, size_t n);
const char *batch_whole_fits(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n);

/* ---- batch_group.c ---- */
/* The simulation key of a resolved, placed scene: two 64-bit hashes (FNV-1a
 * and a second, independent one) of sc->path, sc->dir and scene_emit's
 * text of sc with camera.*, render.* and output.* except output.frames set
 * to zero. Runs with equal keys show the same simulation. 0 or NB_ERUNTIME (out of memory). */
int batch_sim_key(const struct scene *sc, uint64_t key[2]);
/* Group the BATCH_PENDING, loaded runs: with share, runs with equal
 * sim_key form one group led by the first of them in batch order; without,
 * every run is its own group; a group holds at most BATCH_MAX_VIEWS runs
 * (the next one with the same key starts a new group). Sets group and group_size of every run (-1
 * and 0 for runs that will not run). Returns the number of groups. */
int batch_group(struct batch_run *runs, int nruns, int share);
/* The runs of the group led by runs[lead] that are still BATCH_PENDING,
 * in batch order, into idx (up to max); returns how many. */
int batch_group_members(const struct batch_run *runs, int nruns, int lead, int *idx, int max);

/* ---- batch_exec.c ---- */
struct batch_opts {
	int jobs;       /* >= 1 */
	int backend_cli;/* -1: the scenes' own */
};
/* Run every BATCH_PENDING run, at most opts->jobs at once, each group
 * (batch_group: one run alone, or runs sharing a simulation) in a forked
 * child that simulates once and films each of its runs (app_run_views).
 * Progress on stderr. Returns 0, or NB_EINTR if interrupted (runs not
 * started get BATCH_NOT_RUN). */
int batch_exec(const struct batch_file *bf, struct batch_run *runs, int nruns,
	       const struct batch_opts *opts);

/* ---- batch_share.c (shards and MPI ranks; docs/batch.md) ---- */
/* Keep this process's share of the BATCH_PENDING runs and mark the rest
 * BATCH_OTHER_SHARD. Shard k of n (n 1: all) takes the simulations whose
 * slot % n == k, slot the order of first appearance of the run's
 * simulation key among the loaded runs (share) or the run's index (no
 * share): a rule of the batch alone, so shares are disjoint and complete
 * whatever --resume finds done. Then MPI rank `rank` of P takes every P-th
 * of the shard's pending groups; owner[i] (nruns) gets the rank that runs
 * run i (-1: none). */
void batch_share_select(struct batch_run *runs, int nruns, int share, int k, int n, int rank,
			int P, int *owner);
/* After batch_exec on every rank: rank 0 gets each run's outcome from the
 * rank that ran it (owner). */
void batch_share_collect(struct batch_run *runs, int nruns, const int *owner);

/* ---- batch_report.c ---- */
/* Human table of every run on f. */
void batch_report_table(const struct batch_run *runs, int nruns, FILE *f);
/* OUTPUT_DIR/batch-report.json (tmp + rename). 0 or NB_ERUNTIME (logged). */
int batch_report_json(const struct batch_file *bf, const struct batch_run *runs, int nruns,
		      double wall_s, int exit_status, const char *path);
/* JSON string with escapes (also a valid YAML double-quoted scalar). */
void batch_json_string(FILE *f, const char *s);
/* "12.3 s", "4m05s", "2h03m". */
void batch_format_duration(double s, char *buf, size_t len);

#endif
