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
#include "outputs.h"

enum entry_kind { ENTRY_FILE, ENTRY_DIR, ENTRY_INPUT };

struct entry {
	char key[80];            /* "output.video", "view 2 output.stats", ... */
	const char *given;       /* the path as the scene says it */
	char real[PATH_MAX + 1]; /* resolved */
	enum entry_kind kind;
	int row;                 /* the outputs table's row (app/outputs.h), -1: an input */
	const struct scene *sc;  /* whose output or input it is */
	int first;               /* an input: the first frame its run writes (a restart: its frame + 1) */
	char path[SCENE_PATH_MAX]; /* the given path when it is derived (the resolved scene) */
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

static struct entry *add(struct entry *e, int *n, int view, int nviews, const char *key,
			 const char *path, enum entry_kind kind, int row, const struct scene *sc)
{
	if (!path[0])
		return NULL;
	struct entry *x = &e[(*n)++];
	if (nviews > 1 && kind != ENTRY_INPUT)
		snprintf(x->key, sizeof x->key, "view %d %s", view + 1, key);
	else
		snprintf(x->key, sizeof x->key, "%s", key);
	snprintf(x->path, sizeof x->path, "%s", path);
	x->given = x->path;
	x->kind = kind;
	x->row = row;
	x->sc = sc;
	x->first = 0;
	if (resolve(path, kind == ENTRY_DIR, x->real))
		snprintf(x->real, sizeof x->real, "%s", path);
	return x;
}

/* The inputs of view `view` (its scene file, the body files it reads, and
 * the snapshot a restart starts from, at v->restart_frame) into e. */
static void collect_inputs(const struct app_view *v, int view, int nviews, struct entry *e, int *n)
{
	const struct scene *sc = v->sc;
	add(e, n, view, nviews, "the scene file", sc->path, ENTRY_INPUT, -1, sc);
	for (int b = 0; b < sc->nbodies; b++) {
		if (sc->bodies[b].model != SCENE_MODEL_FILE &&
		    sc->bodies[b].model != SCENE_MODEL_SNAPSHOT)
			continue;
		char key[48];
		snprintf(key, sizeof key, "bodies.%d.file", b);
		add(e, n, view, nviews, key, sc->bodies[b].file, ENTRY_INPUT, -1, sc);
	}
	if (v->restart) {
		struct entry *x = add(e, n, view, nviews, "--restart", v->restart, ENTRY_INPUT, -1, sc);
		if (x)
			x->first = v->restart_frame + 1;
	}
}

/* The outputs of view `view` (every row of the outputs table) into e. */
static void collect(const struct scene *sc, int view, int nviews, struct entry *e, int *n)
{
	char path[SCENE_PATH_MAX];
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		const char *key = k->key;
		if (i == APP_OUT_RESOLVED && !sc->output.resolved_scene[0])
			key = "the resolved scene (output.resolved_scene, derived)";
		add(e, n, view, nviews, key, app_out_path(sc, i, path),
		    k->shape == APP_OUT_SEQ ? ENTRY_DIR : ENTRY_FILE, i, sc);
	}
}

/* b lies directly inside a's directory under a member name of a's
 * sequence: its member number, else -1. */
static int member_of(const struct entry *a, const struct entry *b)
{
	size_t n = strlen(a->real);
	const char *rest = b->real + n;
	if (a->kind != ENTRY_DIR || a->row < 0 || strncmp(a->real, b->real, n) != 0)
		return -1;
	if (n > 1) {
		if (*rest != '/')
			return -1;
		rest++;
	}
	return strchr(rest, '/') ? -1 : app_out_member(&app_outputs[a->row], rest);
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
		int m = member_of(x, y);
		if (m < 0)
			continue;
		const struct app_out_kind *k = &app_outputs[x->row];
		if (y->kind != ENTRY_INPUT) {
			log_error("%s (%s) is %s, a file name of %s (%s): that sequence owns the names "
				  "%s%0*d%s", y->key, y->given, y->real, x->key, x->given, k->prefix,
				  k->width, 0, k->suffix);
			return NB_EINPUT;
		}
		/* an input in a sequence's directory: safe unless this run
		 * writes its number or removes it as an earlier run's */
		const int end = app_out_member_end(k, x->sc);
		if (app_out_writes_member(k, x->sc, y->first, m) || m >= end) {
			log_error("%s (%s) is number %d of %s (%s), which this run %s: an input is never "
				  "written over or removed; read it from elsewhere, or give %s another "
				  "directory", y->key, y->given, m, x->key, x->given,
				  m >= end ? "removes as an earlier, longer run's" : "writes again",
				  x->key);
			return NB_EINPUT;
		}
	}
	return 0;
}

/* The member names in DIR (a sequence row) that the run would write over
 * must be regular files (or absent). */
static int members_check(const struct entry *e)
{
	const struct app_out_kind *k = &app_outputs[e->row];
	DIR *d = opendir(e->given);
	if (!d)
		return 0; /* absent (made later) or unreadable (the writer says so) */
	int rc = 0;
	struct dirent *de;
	char path[PATH_MAX + 300];
	while (rc == 0 && (de = readdir(d))) {
		int idx = app_out_member(k, de->d_name);
		if (idx < 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", e->given, de->d_name);
		const char *what = sim_outfile_special(path);
		if (what) {
			log_error("%s: %s is %s; a file of the sequence is never written over one, nor "
				  "removed", e->key, path, what);
			rc = NB_EINPUT;
		}
	}
	closedir(d);
	return rc;
}

/* An output path that exists as something it must not replace. */
static int special_check(const struct entry *e)
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
	return members_check(e);
}

int app_outputs_check(const struct app_view *views, int k)
{
	enum { PER_VIEW = APP_OUTPUTS_MAX + 2 + SCENE_MAX_BODIES }; /* outputs, scene, restart, body files */
	struct entry *e = calloc((size_t)(k + 1) * PER_VIEW, sizeof *e);
	int n = 0, mine, rc = 0, nviews = k + 1;
	if (!e) {
		log_error("out of memory checking the outputs");
		return NB_ERUNTIME;
	}
	/* This view's inputs and outputs first, then the earlier views'
	 * outputs (pairs among those were checked before). */
	collect_inputs(&views[k], k, nviews, e, &n);
	collect(views[k].sc, k, nviews, e, &n);
	mine = n;
	for (int i = 0; i < k; i++)
		collect(views[i].sc, i, nviews, e, &n);
	for (int i = 0; rc == 0 && i < mine; i++)
		rc = special_check(&e[i]);
	for (int i = 0; rc == 0 && i < mine; i++)
		for (int j = i + 1; rc == 0 && j < n; j++)
			rc = pair_check(&e[i], &e[j]);
	free(e);
	return rc;
}
