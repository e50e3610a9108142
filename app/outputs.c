/* outputs.c - the table of a run's outputs (outputs.h) and what every
 * stage does with a row: its path, its members, its directories, its
 * cleanup, its place in a batch, its completeness for --resume, its line
 * in --dry-run. The writers themselves (output/: MP4, PNG, preview, HDF5
 * snapshots, FITS maps; sim/: statistics and state CSVs; app/run.c: the
 * resolved scene) each write one row's files under a temporary name
 * (sim/outfile.c) and rename them into place when complete. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../output/output.h"
#include "app.h"
#include "batch.h"
#include "outputs.h"

/* Frame f of a sequence with one member per frame (PNG frames, FITS maps). */
static int member_per_frame(const struct scene *sc, int f)
{
	return f >= 0 && f < sc->output.frames ? f : -1;
}

/* The parts of each snapshot (output.snapshots.files; output/snap_set.c). */
static int snap_parts(const struct scene *sc)
{
	return sc->output.snapshots.files > 1 ? sc->output.snapshots.files : 1;
}

#define FIELD(f) offsetof(struct scene, output.f)

/* The rows. Columns: key, shape, field (the path), batch name; for a
 * sequence its member names and the member of each frame; the fate after
 * an interrupt; made from frames; the --resume check; what it is. */
const struct app_out_kind app_outputs[APP_OUTPUTS_MAX] = {
	[APP_OUT_VIDEO] = {.key = "output.video", .shape = APP_OUT_FILE, .field = FIELD(video),
			   .batch_name = "video.mp4", .fate = APP_OUT_KEEP_ON_INTR, .from_frames = 1,
			   .problem = batch_whole_video,
			   /* the dry run names the container and codec: out_video_what */
			   .what = "the video (MP4, Matroska, QuickTime, WebM or GIF, by its name)"},
	[APP_OUT_PNG] = {.key = "output.png_dir", .shape = APP_OUT_SEQ, .field = FIELD(png_dir),
			 .batch_name = "png_dir", .prefix = "frame_", .suffix = ".png", .width = 5,
			 .member_of_frame = member_per_frame, .fate = APP_OUT_REMOVE, .from_frames = 1,
			 .problem = batch_whole_png, .what = "PNG frames"},
	[APP_OUT_PREVIEW] = {.key = "output.preview", .shape = APP_OUT_FILE, .field = FIELD(preview),
			     .batch_name = "preview.jpg", .fate = APP_OUT_REMOVE, .from_frames = 1,
			     .problem = batch_whole_jpeg, .what = "the preview (JPEG)"},
	[APP_OUT_STATS] = {.key = "output.stats", .shape = APP_OUT_FILE, .field = FIELD(stats),
			   .batch_name = "stats.csv", .fate = APP_OUT_KEEP_ON_INTR,
			   .problem = batch_whole_stats, .what = "statistics (CSV, a row per frame)"},
	[APP_OUT_INITIAL_STATE] = {.key = "output.initial_state", .shape = APP_OUT_FILE,
				   .field = FIELD(initial_state), .batch_name = "initial.csv",
				   .fate = APP_OUT_REMOVE, .problem = batch_whole_text,
				   .what = "the initial state (CSV)"},
	[APP_OUT_FINAL_STATE] = {.key = "output.final_state", .shape = APP_OUT_FILE,
				 .field = FIELD(final_state), .batch_name = "final.csv",
				 .fate = APP_OUT_REMOVE, .problem = batch_whole_text,
				 .what = "the final state (CSV)"},
	[APP_OUT_SNAPSHOTS] = {.key = "output.snapshots.dir", .shape = APP_OUT_SEQ,
			       .field = FIELD(snapshots.dir), .batch_name = "snapshots", .prefix = "snap_",
			       .suffix = ".hdf5", .width = 3, .parts = snap_parts, .member_of_frame = out_snap_number,
			       .fate = APP_OUT_KEEP_ON_INTR, .problem = batch_whole_snapshots,
			       .what = "snapshots (HDF5; what --restart continues from)"},
	[APP_OUT_FITS] = {.key = "output.fits_dir", .shape = APP_OUT_SEQ, .field = FIELD(fits_dir),
			  .batch_name = "fits", .prefix = "frame_", .suffix = ".fits", .width = 5,
			  .member_of_frame = member_per_frame, .fate = APP_OUT_REMOVE, .from_frames = 1,
			  .problem = batch_whole_fits, .what = "FITS maps"},
	/* no --resume check of its own: batch_scene_complete compares its bytes */
	[APP_OUT_RESOLVED] = {.key = "output.resolved_scene", .shape = APP_OUT_FILE,
			      .field = FIELD(resolved_scene), .batch_name = "scene.yaml",
			      .fate = APP_OUT_REMOVE,
			      .what = "the resolved scene (written last: marks a complete run)"},
};
const int app_outputs_n = APP_OUTPUTS_MAX;

void app_resolved_scene_path(const struct scene *sc, char *buf)
{
	const char *from[] = {sc->output.video, sc->output.stats, sc->output.final_state,
			      sc->output.initial_state, sc->output.preview};
	buf[0] = '\0';
	if (sc->output.resolved_scene[0]) {
		snprintf(buf, SCENE_PATH_MAX, "%s", sc->output.resolved_scene);
		return;
	}
	for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
		if (!from[i][0])
			continue;
		const char *slash = strrchr(from[i], '/');
		const char *dot = strrchr(from[i], '.');
		size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - from[i]) : strlen(from[i]);
		snprintf(buf, SCENE_PATH_MAX, "%.*s.scene.yaml", (int)stem, from[i]);
		return;
	}
	if (sc->output.png_dir[0] &&
	    snprintf(buf, SCENE_PATH_MAX, "%s/scene.yaml", sc->output.png_dir) >= SCENE_PATH_MAX)
		buf[0] = '\0'; /* too long to store: skip rather than truncate */
}

const char *app_out_path(const struct scene *sc, int i, char *buf)
{
	const char *v = (const char *)sc + app_outputs[i].field;
	buf[0] = '\0';
	if (i == APP_OUT_RESOLVED)
		app_resolved_scene_path(sc, buf);
	else if (i == APP_OUT_PREVIEW &&
		 sc->output.preview_kind == SCENE_PREVIEW_NONE)
		buf[0] = '\0';
	else
		snprintf(buf, SCENE_PATH_MAX, "%s", v);
	return buf;
}

char *app_out_field(struct scene *sc, int i)
{
	char *v = (char *)sc + app_outputs[i].field;
	return v[0] || i != APP_OUT_RESOLVED ? v : NULL;
}

int app_out_member_end(const struct app_out_kind *k, const struct scene *sc)
{
	int end = 0;
	for (int f = 0; f < sc->output.frames; f++) {
		int n = k->member_of_frame(sc, f);
		if (n >= end)
			end = n + 1;
	}
	return end;
}

int app_out_writes_member(const struct app_out_kind *k, const struct scene *sc, int first, int n)
{
	for (int f = first > 0 ? first : 0; f < sc->output.frames; f++)
		if (k->member_of_frame(sc, f) == n)
			return 1;
	return 0;
}

int app_out_remove_owned(const char *path, const char *why)
{
	int rc = out_remove_regular(path);
	if (rc < 0) {
		log_warn("%s: cannot remove it while %s: %s", path, why, strerror(errno));
	} else if (rc > 0) {
		struct stat sb;
		const char *what = lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) ? "a symbolic link"
										: sim_outfile_special(path);
		log_warn("%s: not removed while %s: it is %s, not a file this program wrote", path,
			 why, what ? what : "not a regular file");
	}
	return rc;
}

int app_out_remove_members(const struct app_out_kind *k, const char *dir, int from, int to)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s: cannot read the directory to remove %s: %s", dir, k->key, strerror(errno));
		return -1;
	}
	int rc = 0;
	char path[SCENE_PATH_MAX + 128];
	for (struct dirent *e; (e = readdir(d));) {
		int n = app_out_member(k, e->d_name);
		if (n < from || (to >= 0 && n >= to))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (app_out_remove_owned(path, "removing a run's numbered files") < 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

/* NAME is ".BASE.<pid>-<8 hex>.partial": BASE into base, the pid. */
static int partial_name(const char *name, char *base, size_t cap, long *pid)
{
	size_t len = strlen(name), suffix = strlen(".partial");
	if (name[0] != '.' || len < 1 + 1 + 1 + 1 + 1 + 8 + suffix ||
	    strcmp(name + len - suffix, ".partial") != 0)
		return 0;
	const char *end = name + len - suffix; /* ".partial" */
	const char *tok = end - 8;             /* 8 hex digits */
	if (tok[-1] != '-')
		return 0;
	for (int i = 0; i < 8; i++)
		if (!strchr("0123456789abcdef", tok[i]))
			return 0;
	const char *p = tok - 1; /* the '-' */
	const char *q = p;
	while (q > name + 1 && q[-1] >= '0' && q[-1] <= '9')
		q--;
	if (q == p || q[-1] != '.' || q - 1 <= name + 1)
		return 0;
	size_t nb = (size_t)(q - 1 - (name + 1));
	if (nb >= cap)
		return 0;
	memcpy(base, name + 1, nb);
	base[nb] = '\0';
	*pid = strtol(q, NULL, 10);
	return *pid > 0;
}

/* Sweep DIR for partials of row k (file: its base name; sequence: any member). */
static int sweep_dir(const struct app_out_kind *k, const char *dir, const char *file_base,
		     double min_age_s)
{
	DIR *d = opendir(dir[0] ? dir : ".");
	int removed = 0;
	if (!d)
		return 0;
	const time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		char base[256], path[SCENE_PATH_MAX + 300];
		long pid = 0;
		if (!partial_name(e->d_name, base, sizeof base, &pid))
			continue;
		if (file_base ? strcmp(base, file_base) != 0 : app_out_member(k, base) < 0)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* a live process (or one we may not signal) owns it */
		snprintf(path, sizeof path, "%s%s%s", dir[0] ? dir : "", dir[0] ? "/" : "", e->d_name);
		struct stat sb;
		if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    difftime(now, sb.st_mtime) < min_age_s)
			continue;
		if (out_remove_regular(path) == 0) {
			log_info("%s: removed, a temporary file of %s left by process %ld, which "
				 "no longer runs", path, k->key, pid);
			removed++;
		}
	}
	closedir(d);
	return removed;
}

int app_outputs_sweep_partials(const struct scene *sc, double min_age_s)
{
	char path[SCENE_PATH_MAX];
	int removed = 0;
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		if (!app_out_path(sc, i, path)[0])
			continue;
		if (k->shape == APP_OUT_SEQ) {
			removed += sweep_dir(k, path, NULL, min_age_s);
			continue;
		}
		char *slash = strrchr(path, '/');
		if (!slash) {
			removed += sweep_dir(k, "", path, min_age_s);
		} else if (slash[1]) {
			*slash = '\0';
			removed += sweep_dir(k, slash == path ? "/" : path, slash + 1, min_age_s);
		}
	}
	return removed;
}

int app_outputs_want_frames(const struct scene *sc)
{
	char path[SCENE_PATH_MAX];
	for (int i = 0; i < app_outputs_n; i++)
		if (app_outputs[i].from_frames && app_out_path(sc, i, path)[0])
			return 1;
	return 0;
}

int app_outputs_make_dirs(const struct scene *sc)
{
	char path[SCENE_PATH_MAX];
	for (int i = 0; i < app_outputs_n; i++) {
		if (!app_out_path(sc, i, path)[0])
			continue;
		int rc = app_outputs[i].shape == APP_OUT_SEQ ? out_mkdirs(path) : out_mkdirs_for(path);
		if (rc)
			return rc;
	}
	return 0;
}

int app_outputs_whole(const struct scene *sc, char *why, size_t len)
{
	char path[SCENE_PATH_MAX], which[SCENE_PATH_MAX + 64];
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		if (!k->problem || !app_out_path(sc, i, path)[0])
			continue;
		snprintf(which, sizeof which, "%s", path);
		const char *problem = k->problem(k, sc, path, which, sizeof which);
		if (problem) {
			snprintf(why, len, "%s %s (%s)", which, problem, k->key);
			return 0;
		}
	}
	return 1;
}

int app_outputs_place(struct scene *sc, const char *dir, char *msg, size_t msglen)
{
	for (int i = 0; i < app_outputs_n; i++) {
		char *f = app_out_field(sc, i);
		if (!f || !f[0])
			continue;
		char base[SCENE_PATH_MAX], placed[SCENE_PATH_MAX];
		snprintf(base, sizeof base, "%s", f);
		size_t len = strlen(base);
		while (len > 1 && base[len - 1] == '/')
			base[--len] = '\0';
		const char *b = strrchr(base, '/');
		b = b ? b + 1 : base;
		if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
			b = app_outputs[i].batch_name;
		if ((size_t)snprintf(placed, sizeof placed, "%s/%s", dir, b) >= sizeof placed) {
			snprintf(msg, msglen, "%s: the path in %s is too long", app_outputs[i].key, dir);
			return NB_EINPUT;
		}
		for (int j = 0; j < i; j++) {
			const char *g = app_out_field(sc, j);
			if (g && !strcmp(g, placed)) {
				snprintf(msg, msglen, "%s and %s would both be %s in the batch (give them "
					 "different file names)", app_outputs[j].key, app_outputs[i].key, placed);
				return NB_EINPUT;
			}
		}
		memcpy(f, placed, strlen(placed) + 1);
	}
	/* A scene that writes nothing still records that it ran (for --resume). */
	char resolved[SCENE_PATH_MAX];
	app_resolved_scene_path(sc, resolved);
	if (!resolved[0])
		snprintf(sc->output.resolved_scene, sizeof sc->output.resolved_scene, "%s/scene.yaml", dir);
	return 0;
}

void app_outputs_list(const struct scene *sc, FILE *f)
{
	char path[SCENE_PATH_MAX];
	fprintf(f, "# outputs (complete or absent; only regular files under these names are replaced):\n");
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		if (!app_out_path(sc, i, path)[0])
			continue;
		if (k->shape == APP_OUT_FILE) {
			char what[96];
			fprintf(f, "#   %-22s %s: %s\n", k->key, path,
				i == APP_OUT_VIDEO ? out_video_what(path, sc->output.codec, what, sizeof what)
						   : k->what);
			continue;
		}
		int count = 0, parts = k->parts ? k->parts(sc) : 1;
		for (int fr = 0; fr < sc->output.frames; fr++)
			count += k->member_of_frame(sc, fr) >= 0;
		if (parts > 1) {
			fprintf(f, "#   %-22s %s/%s%0*d.0%s .. %s%0*d.%d%s: %s, %d sets of %d files\n",
				k->key, path, k->prefix, k->width, 0, k->suffix, k->prefix, k->width,
				app_out_member_end(k, sc) - 1, parts - 1, k->suffix, k->what, count, parts);
			continue;
		}
		fprintf(f, "#   %-22s %s/%s%0*d%s .. %s%0*d%s: %s, %d files\n", k->key, path, k->prefix,
			k->width, 0, k->suffix, k->prefix, k->width, app_out_member_end(k, sc) - 1,
			k->suffix, k->what, count);
	}
}

void app_out_size_text(long long bytes, char *buf, size_t len)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	if (bytes < 1024) {
		snprintf(buf, len, "%lld byte%s", bytes, bytes == 1 ? "" : "s");
		return;
	}
	double v = (double)bytes / 1024;
	int u = 0;
	while (v >= 1024 && u < 3)
		v /= 1024, u++;
	snprintf(buf, len, "%.1f %s", v, unit[u]);
}

/* Size of PATH when it is a regular file, else -1. */
static long long regular_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1;
}

/* Bytes of member n of row k in DIR (a set of parts: all its parts, when
 * part 0 is there), or -1 when it is not there. */
static long long member_size(const struct app_out_kind *k, const struct scene *sc,
			     const char *dir, int n)
{
	char path[SCENE_PATH_MAX + 64];
	const int parts = k->parts ? k->parts(sc) : 1;
	if (parts <= 1) {
		snprintf(path, sizeof path, "%s/%s%0*d%s", dir, k->prefix, k->width, n, k->suffix);
		return regular_size(path);
	}
	long long sum = 0;
	for (int j = 0; j < parts; j++) {
		long long b = app_out_part_path(k, dir, n, j, path, sizeof path) ? -1
										 : regular_size(path);
		if (b < 0 && j == 0)
			return -1;
		sum += b > 0 ? b : 0;
	}
	return sum;
}

int app_out_written(const struct scene *sc, int i, int first, int last, char *buf, size_t len,
		    long long *bytes)
{
	const struct app_out_kind *k = &app_outputs[i];
	char path[SCENE_PATH_MAX], size[32], sfx[48], files[32] = "files";
	buf[0] = '\0';
	*bytes = 0;
	if (!app_out_path(sc, i, path)[0])
		return 0;
	if (k->shape == APP_OUT_FILE) {
		long long b = regular_size(path);
		if (b < 0)
			return 0;
		*bytes = b;
		app_out_size_text(b, size, sizeof size);
		snprintf(buf, len, "%s, %s", path, size);
		return 1;
	}
	int count = 0, lo = -1, hi = -1;
	for (int n = first; n >= 0 && n <= last; n++) {
		long long b = member_size(k, sc, path, n);
		if (b < 0)
			continue;
		*bytes += b;
		count++;
		hi = n;
		if (lo < 0)
			lo = n;
	}
	if (!count)
		return 0;
	/* sets of parts: snap_000.[0-2].hdf5 .. snap_004.[0-2].hdf5, 5 sets of 3 files */
	const int parts = k->parts ? k->parts(sc) : 1;
	snprintf(sfx, sizeof sfx, "%s", k->suffix);
	if (parts > 1) {
		snprintf(sfx, sizeof sfx, ".[0-%d]%s", parts - 1, k->suffix);
		snprintf(files, sizeof files, "sets of %d files", parts);
	}
	app_out_size_text(*bytes, size, sizeof size);
	if (count == 1)
		snprintf(buf, len, "%s/%s%0*d%s, %s", path, k->prefix, k->width, lo, sfx, size);
	else
		snprintf(buf, len, "%s/%s%0*d%s .. %s%0*d%s, %d %s, %s", path, k->prefix, k->width,
			 lo, sfx, k->prefix, k->width, hi, sfx, count, files, size);
	return 1;
}
