/* outputs_check.c - before any work, the outputs of a run (each view of
 * app_run_views) are checked against each other, against the scene file
 * and the body files it reads (model: file), and against the outputs of
 * the views before it: outputs are owned,
 * complete or absent, which two outputs on one file (or an output on the
 * scene) cannot be, and a device or FIFO named as an output is never
 * replaced (sim/outfile.c checks again at the final rename). Paths are
 * compared resolved: the real path of the deepest existing directory, the
 * rest appended with "." and ".." applied (directories still to be made
 * hold no links), the last component as given (a symbolic link there is
 * replaced, not followed), except output.png_dir, followed as the
 * directory the frames go into. Lives in app/, beside app_run_views, which
 * calls it for every run, single or from a batch (batch_scene_place keeps
 * runs apart from each other; this keeps a run's outputs apart). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../output/output.h"
#include "app.h"

enum entry_kind { ENTRY_FILE, ENTRY_DIR, ENTRY_INPUT };

struct entry {
	char key[80];            /* "output.video", "view 2 output.stats", ... */
	const char *given;       /* the path as the scene says it */
	char real[PATH_MAX + 1]; /* resolved */
	enum entry_kind kind;
};

/* Append component c to the resolved directory path r (cap PATH_MAX+1). */
static void append(char *r, const char *c, size_t n)
{
	size_t len = strlen(r);
	if (n == 1 && c[0] == '.')
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		char *slash = strrchr(r, '/');
		if (slash)
			slash[slash == r] = '\0'; /* "/a" -> "/", "/" stays */
		return;
	}
	if (len + 1 + n > PATH_MAX)
		n = 0; /* too long to matter: the open will say so */
	if (len > 1)
		r[len++] = '/';
	memcpy(r + len, c, n);
	r[len + n] = '\0';
}

/* PATH resolved into out (PATH_MAX+1 bytes); follow_last: the last
 * component too. Every directory prefix is passed through realpath while
 * it exists. 0, or -1 when the working directory is unknown. */
static int resolve(const char *path, int follow_last, char *out)
{
	char buf[PATH_MAX + 1];
	if (path[0] == '/')
		snprintf(out, PATH_MAX + 1, "/");
	else if (!getcwd(out, PATH_MAX + 1))
		return -1;
	int exists = 1;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		int last = p[n] == '\0' || p[n + strspn(p + n, "/")] == '\0';
		int dots = (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.');
		append(out, p, n);
		if (exists && (!last || follow_last || dots)) {
			if (realpath(out, buf))
				memcpy(out, buf, strlen(buf) + 1);
			else
				exists = 0;
		}
		p += n;
	}
	return 0;
}

static void add(struct entry *e, int *n, int view, int nviews, const char *key, const char *path,
		enum entry_kind kind)
{
	if (!path[0])
		return;
	struct entry *x = &e[(*n)++];
	if (nviews > 1 && kind != ENTRY_INPUT)
		snprintf(x->key, sizeof x->key, "view %d %s", view + 1, key);
	else
		snprintf(x->key, sizeof x->key, "%s", key);
	x->given = path;
	x->kind = kind;
	if (resolve(path, kind == ENTRY_DIR, x->real))
		snprintf(x->real, sizeof x->real, "%s", path);
}

/* The outputs of scene sc (view `view`) into e; the scene file first when
 * with_input. The resolved-scene path is kept in rs. */
static void collect(const struct scene *sc, int view, int nviews, int with_input,
		    char rs[SCENE_PATH_MAX], struct entry *e, int *n)
{
	if (with_input) {
		add(e, n, view, nviews, "the scene file", sc->path, ENTRY_INPUT);
		for (int b = 0; b < sc->nbodies; b++) {
			if (sc->bodies[b].model != SCENE_MODEL_FILE &&
			    sc->bodies[b].model != SCENE_MODEL_SNAPSHOT)
				continue;
			char key[48];
			snprintf(key, sizeof key, "bodies.%d.file", b);
			add(e, n, view, nviews, key, sc->bodies[b].file, ENTRY_INPUT);
		}
	}
	add(e, n, view, nviews, "output.video", sc->output.video, ENTRY_FILE);
	add(e, n, view, nviews, "output.png_dir", sc->output.png_dir, ENTRY_DIR);
	add(e, n, view, nviews, "output.stats", sc->output.stats, ENTRY_FILE);
	add(e, n, view, nviews, "output.initial_state", sc->output.initial_state, ENTRY_FILE);
	add(e, n, view, nviews, "output.final_state", sc->output.final_state, ENTRY_FILE);
	add(e, n, view, nviews, "output.preview", sc->output.preview, ENTRY_FILE);
	add(e, n, view, nviews, "output.snapshots.dir", sc->output.snapshots.dir, ENTRY_DIR);
	add(e, n, view, nviews, "output.fits_dir", sc->output.fits_dir, ENTRY_DIR);
	app_resolved_scene_path(sc, rs);
	add(e, n, view, nviews,
	    sc->output.resolved_scene[0] ? "output.resolved_scene"
					 : "the resolved scene (output.resolved_scene, derived)",
	    rs, ENTRY_FILE);
}

/* b lies directly inside directory a under a frame name of the sequence. */
static int is_frame_of(const struct entry *a, const struct entry *b)
{
	size_t n = strlen(a->real);
	const char *rest = b->real + n;
	if (a->kind != ENTRY_DIR || strncmp(a->real, b->real, n) != 0)
		return 0;
	if (n > 1) {
		if (*rest != '/')
			return 0;
		rest++;
	}
	return !strchr(rest, '/') && out_png_frame_index(rest) >= 0;
}

/* a is a file and b lies below it, as if a were a directory. */
static int is_below_file(const struct entry *a, const struct entry *b)
{
	size_t n = strlen(a->real);
	return a->kind != ENTRY_DIR && strncmp(a->real, b->real, n) == 0 && b->real[n] == '/';
}

/* One message for a colliding pair, or 0. */
static int pair_check(const struct entry *a, const struct entry *b)
{
	if (a->kind == ENTRY_INPUT && b->kind == ENTRY_INPUT)
		return 0;
	if (strcmp(a->real, b->real) == 0 && (a->kind == ENTRY_INPUT || b->kind == ENTRY_INPUT)) {
		const struct entry *in = a->kind == ENTRY_INPUT ? a : b, *out = in == a ? b : a;
		log_error("%s (%s) is %s (%s), %s: an output never replaces an input of its run",
			  out->key, out->given, in->key, in->given, in->real);
		return NB_EINPUT;
	}
	if (strcmp(a->real, b->real) == 0) {
		log_error("%s (%s) and %s (%s) are the same path, %s: each output needs its own file",
			  a->key, a->given, b->key, b->given, a->real);
		return NB_EINPUT;
	}
	for (int swap = 0; swap < 2; swap++) {
		const struct entry *x = swap ? b : a, *y = swap ? a : b;
		if (is_below_file(x, y)) {
			log_error("%s (%s) is the file %s, where %s (%s) needs a directory", x->key,
				  x->given, x->real, y->key, y->given);
			return NB_EINPUT;
		}
		if (is_frame_of(x, y)) {
			log_error("%s (%s) is %s, a frame name of %s (%s): the PNG sequence owns those names",
				  y->key, y->given, y->real, x->key, x->given);
			return NB_EINPUT;
		}
	}
	return 0;
}

/* Frame names in DIR (png_dir of a run of `frames` frames) that the run
 * would replace must be regular files. */
static int frames_check(const struct entry *e, int frames)
{
	DIR *d = opendir(e->given);
	if (!d)
		return 0; /* absent (made later) or unreadable (the writer says so) */
	int rc = 0;
	struct dirent *de;
	char path[PATH_MAX + 300];
	while (rc == 0 && (de = readdir(d))) {
		int idx = out_png_frame_index(de->d_name);
		if (idx < 0 || idx >= frames)
			continue;
		snprintf(path, sizeof path, "%s/%s", e->given, de->d_name);
		const char *what = sim_outfile_special(path);
		if (what) {
			log_error("%s: %s is %s; a frame is never written over one", e->key, path, what);
			rc = NB_EINPUT;
		}
	}
	closedir(d);
	return rc;
}

/* An output path that exists as something it must not replace. */
static int special_check(const struct entry *e, int frames)
{
	if (e->kind == ENTRY_INPUT)
		return 0;
	if (e->kind == ENTRY_FILE) {
		const char *what = sim_outfile_special(e->given);
		if (what) {
			log_error("%s: %s is %s; outputs are written as new regular files and never replace one",
				  e->key, e->given, what);
			return NB_EINPUT;
		}
		return 0;
	}
	/* A regular file there is left to the writer (a runtime failure, as
	 * batches expect: nothing is replaced, mkdir just fails). */
	struct stat sb;
	if (stat(e->given, &sb) == 0 && !S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode)) {
		const char *what = sim_outfile_special(e->given);
		log_error("%s: %s is %s, not a directory", e->key, e->given,
			  what ? what : "not a directory");
		return NB_EINPUT;
	}
	return frames_check(e, frames);
}

int app_outputs_check(const struct app_view *views, int k)
{
	enum { PER_VIEW = 10 + SCENE_MAX_BODIES }; /* outputs, scene file, body files */
	struct entry *e = calloc((size_t)(k + 1) * PER_VIEW, sizeof *e);
	char(*rs)[SCENE_PATH_MAX] = calloc((size_t)(k + 1), sizeof *rs);
	int n = 0, mine, rc = 0, nviews = k + 1;
	if (!e || !rs) {
		log_error("out of memory checking the outputs");
		free(e);
		free(rs);
		return NB_ERUNTIME;
	}
	/* This view's outputs and the scene file first, then the earlier
	 * views' outputs (pairs among those were checked before). */
	collect(views[k].sc, k, nviews, 1, rs[k], e, &n);
	mine = n;
	for (int i = 0; i < k; i++)
		collect(views[i].sc, i, nviews, 0, rs[i], e, &n);
	for (int i = 0; rc == 0 && i < mine; i++)
		rc = special_check(&e[i], views[k].sc->output.frames);
	for (int i = 0; rc == 0 && i < mine; i++)
		for (int j = i + 1; rc == 0 && j < n; j++)
			rc = pair_check(&e[i], &e[j]);
	free(e);
	free(rs);
	return rc;
}
