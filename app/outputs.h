/* outputs.h - every kind of output a run can write, one row of one table
 * (app/outputs.c). Preflight and the same-path checks (app/outputs_check.c),
 * the directories made before any work, the batch's per-run placement
 * (app/batch_scene.c), --resume's completeness test (app/batch_verify.c),
 * the cleanup after a failed or interrupted run and the removal of an
 * earlier run's stale numbers (app/run.c), restart's protection of its
 * input, and --dry-run's list of what a run writes all read this table.
 * Adding an output kind is adding a row (and its cases in
 * tests/test_hostile.c, which fails for a row it does not know).
 *
 * Ownership (docs/PROMISES.md): only regular files written under a row's
 * own name (its path; for a sequence, DIR/PREFIX%0*dSUFFIX) are removed or
 * replaced, never a device, FIFO, socket, directory or symbolic link's
 * target; two rows of one run, or of two runs of a batch, never name the
 * same file or overlapping sequences (refused before any work, exit 2); a
 * failed run leaves each row complete or absent. */
#ifndef NB_APP_OUTPUTS_H
#define NB_APP_OUTPUTS_H

#include <stddef.h>
#include <stdio.h>

#include "../scene/scene.h"

/* The rows, in the order outputs are checked and listed. */
enum app_out_row {
	APP_OUT_VIDEO,
	APP_OUT_PNG,
	APP_OUT_PREVIEW,
	APP_OUT_STATS,
	APP_OUT_INITIAL_STATE,
	APP_OUT_FINAL_STATE,
	APP_OUT_SNAPSHOTS,
	APP_OUT_FITS,
	APP_OUT_RESOLVED, /* the resolved scene: written last, it marks a complete run */
	APP_OUTPUTS_MAX
};

enum app_out_shape {
	APP_OUT_FILE, /* one file at the key's path */
	APP_OUT_SEQ,  /* numbered files PREFIX%0*dSUFFIX in the directory at the key's path */
};

/* What a failed or interrupted run does with what a row put in place. */
enum app_out_fate {
	APP_OUT_REMOVE,        /* removed after any failure or interrupt */
	APP_OUT_KEEP_ON_INTR,  /* kept after an interrupt (complete up to the stop), removed on failure */
};

struct app_out_kind {
	const char *key;          /* the scene key: "output.video" */
	enum app_out_shape shape;
	size_t field;             /* offsetof(struct scene, output...): the path, "" = off */
	/* the name a batch gives it in the run's directory when the path
	 * has no last component of its own ("png_dir" for "out/") */
	const char *batch_name;
	/* APP_OUT_SEQ: member k is DIR/prefix%0*dsuffix */
	const char *prefix, *suffix;
	int width;
	/* APP_OUT_SEQ: NULL, or the number of parts of each member in sc
	 * (multi-file snapshots, output.snapshots.files): a member of K > 1
	 * parts is the files DIR/prefix%0*d.Jsuffix, J < K, and such names are
	 * the row's whatever sc says (an earlier run's) */
	int (*parts)(const struct scene *sc);
	/* APP_OUT_SEQ: the member that frame f writes, -1: none; the members
	 * written are non-decreasing in f */
	int (*member_of_frame)(const struct scene *sc, int f);
	enum app_out_fate fate;
	int from_frames;          /* 1: made from rendered frames (the view needs a renderer) */
	/* --resume: NULL when path (FILE: the file; SEQ: the directory)
	 * holds this output of sc whole; else why, with the file in which */
	const char *(*problem)(const struct app_out_kind *k, const struct scene *sc,
			       const char *path, char *which, size_t n);
	const char *what;         /* for --dry-run and messages: "the video (MP4)" */
};

/* The table: app_outputs[row], app_outputs_n (= APP_OUTPUTS_MAX) rows. */
extern const struct app_out_kind app_outputs[APP_OUTPUTS_MAX];
extern const int app_outputs_n;

/* Row i's path in sc into buf (SCENE_PATH_MAX bytes): the key's value,
 * or for the resolved scene the derived one (app_resolved_scene_path);
 * "" when the row is off (preview: also off with preview_kind none). */
const char *app_out_path(const struct scene *sc, int i, char *buf);
/* Row i's key value in sc, writable (the batch places it); NULL for a row
 * whose value is derived when empty and is empty. */
char *app_out_field(struct scene *sc, int i);

/* (app/outputs_member.c) APP_OUT_SEQ row k: the member number of file NAME (a name without '/'),
 * exactly as the writer makes it (a row with parts: a part's name too), or -1 for any other name. */
int app_out_member(const struct app_out_kind *k, const char *name);
/* DIR/member n of row k into buf. 0, or -1 when too long. */
int app_out_member_path(const struct app_out_kind *k, const char *dir, int n, char *buf,
			size_t cap);
/* DIR/part j of member n of row k (a row with parts) into buf:
 * DIR/prefix%0*d.jsuffix. 0, or -1 when too long. */
int app_out_part_path(const struct app_out_kind *k, const char *dir, int n, int j, char *buf,
		      size_t cap);
/* The lowest member number a run of sc over frames [first, frames) never
 * writes and above which nothing is written: members >= it are an earlier,
 * longer run's (stale). */
int app_out_member_end(const struct app_out_kind *k, const struct scene *sc);
/* 1 when frames [first, output.frames) of sc write member n of row k. */
int app_out_writes_member(const struct app_out_kind *k, const struct scene *sc, int first, int n);

/* Remove PATH if it is a regular file (lstat: never a device, FIFO,
 * socket, directory or a link's target; a symbolic link itself is left
 * too). 0 when removed or absent; 1 when left because it is not a regular
 * file (warned: why says what the run was doing); -1 on an error (warned). */
int app_out_remove_owned(const char *path, const char *why);
/* Remove from DIR the members of row k numbered [from, to) (to < 0: every
 * member from `from` on), regular files only. 0, or -1 after a warning. */
int app_out_remove_members(const struct app_out_kind *k, const char *dir, int from, int to);

/* Remove the temporary files (".NAME.<pid>-<token>.partial", sim/outfile.c)
 * that a process killed outright (kill -9, a power cut) left beside sc's
 * outputs: NAME one of a row's names, the pid no live process of this
 * host, the file regular and untouched for min_age_s seconds (a live
 * writer on another host sharing the directory keeps touching its own).
 * Returns how many it removed (each logged as a note). */
int app_outputs_sweep_partials(const struct scene *sc, double min_age_s);
/* 1 when sc writes a row made from rendered frames (video, PNG, preview,
 * FITS maps): its view needs a renderer and a writer. */
int app_outputs_want_frames(const struct scene *sc);
/* Make the directories every row of sc writes into: the parent of a FILE,
 * the directory of a SEQ. 0 or NB_ERUNTIME (logged with the path). */
int app_outputs_make_dirs(const struct scene *sc);
/* Every row of sc whole on disk (the --resume test, before the resolved
 * scene's bytes are compared): 1, or 0 with why. */
int app_outputs_whole(const struct scene *sc, char *why, size_t len);
/* Move every set row of sc into directory dir (a batch run's own): DIR/the
 * last component of its path (or the row's batch_name). NB_EINPUT with msg
 * when two rows would land on one name. A scene that writes nothing gets
 * DIR/scene.yaml as its resolved scene. */
int app_outputs_place(struct scene *sc, const char *dir, char *msg, size_t msglen);
/* --dry-run: one comment line per row that sc writes (key, path, shape,
 * the member range for sequences) on f. */
void app_outputs_list(const struct scene *sc, FILE *f);
/* The end of a run: what row i of sc holds now, as one line into buf
 * (len > 0): a FILE's path and size ("o/v.mp4, 8.9 KiB"), or the members
 * first..last of a SEQ that are regular files ("o/png/frame_00000.png ..
 * frame_00004.png, 5 files, 56.0 KiB"). *bytes gets the size. 1 when
 * something of it is there, else 0 (buf ""). */
int app_out_written(const struct scene *sc, int i, int first, int last, char *buf, size_t len,
		    long long *bytes);
/* bytes as text: "750 bytes", "8.9 KiB", "412.3 MiB", "1.2 GiB" (1024s). */
void app_out_size_text(long long bytes, char *buf, size_t len);

#endif
