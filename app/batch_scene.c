/* batch_scene.c - each run's scene: loaded with the run's overrides, its
 * outputs moved into OUTPUT_DIR/NAME/ (app_outputs_place: every row of the
 * outputs table, app/outputs.h), names that need the resolved scene
 * filled in, and the --resume test (every output whole: app_outputs_whole;
 * resolved-scene file byte-equal to what this run would write now). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"

/* Append LINE and a newline to the malloc'd text *all (NULL: empty). On
 * out of memory the line is lost (a warning, never the run's outcome). */
static void append_line(char **all, const char *line)
{
	size_t have = *all ? strlen(*all) : 0, n = strlen(line);
	char *grown = realloc(*all, have + n + 2);
	if (!grown)
		return;
	memcpy(grown + have, line, n);
	grown[have + n] = '\n';
	grown[have + n + 1] = '\0';
	*all = grown;
}

/* Run fn(arg) with stderr going to a temporary file; the first error line
 * (without "nbody-render: error: ") ends up in msg, and with warn the
 * warning lines (without "nbody-render: warning: ") in *warn, one a line
 * (malloc'd, NULL when none; the caller frees it). The loader logs its
 * messages itself; the batch reports them per run instead. Warnings are
 * kept under --quiet too (--strict needs them): the level is raised to
 * normal while fn runs. */
static int captured(int (*fn)(void *), void *arg, char *msg, size_t msglen, char **warn)
{
	FILE *tmp = tmpfile();
	int saved = -1, rc;
	const enum log_level level = log_get_level();
	if (msg && msglen)
		msg[0] = '\0';
	fflush(stderr);
	if (tmp)
		saved = dup(2);
	if (saved < 0 || dup2(fileno(tmp), 2) < 0) { /* cannot capture: let it print */
		if (saved >= 0)
			close(saved);
		if (tmp)
			fclose(tmp);
		return fn(arg);
	}
	if (level == LOG_QUIET)
		log_set_level(LOG_NORMAL);
	rc = fn(arg);
	log_set_level(level);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	char line[4096], first[1024] = "";
	int have_error = 0;
	while (fgets(line, sizeof line, tmp)) {
		line[strcspn(line, "\n")] = '\0';
		const char *e = strstr(line, "error: ");
		const char *w = strncmp(line, "nbody-render: warning: ", 23) ? NULL : line + 23;
		if (w && warn)
			append_line(warn, w);
		else if (e && !have_error) {
			snprintf(first, sizeof first, "%s", e + 7);
			have_error = 1;
		} else if (!first[0] && !w) {
			snprintf(first, sizeof first, "%.1000s", line);
		}
	}
	fclose(tmp);
	if (msg && msglen)
		snprintf(msg, msglen, "%s", first);
	return rc;
}

struct load_args {
	const struct batch_run *run;
	struct scene *sc;
	long bodies;
};

static int load_fn(void *p)
{
	struct load_args *a = p;
	const struct batch_run *r = a->run;
	char **ov = calloc((size_t)(r->noverrides > 0 ? r->noverrides : 1), sizeof *ov);
	const char **from = calloc((size_t)(r->noverrides > 0 ? r->noverrides : 1), sizeof *from);
	int rc = NB_ERUNTIME;
	if (!ov || !from)
		goto end;
	for (int i = 0; i < r->noverrides; i++)
		from[i] = r->overrides[i].from; /* NULL: a --set of the command line */
	for (int i = 0; i < r->noverrides; i++) {
		size_t len = strlen(r->overrides[i].key) + strlen(r->overrides[i].value) + 2;
		ov[i] = malloc(len);
		if (!ov[i])
			goto end;
		snprintf(ov[i], len, "%s=%s", r->overrides[i].key, r->overrides[i].value);
	}
	rc = scene_load_from(r->scene_path, (const char *const *)ov, from, r->noverrides, a->sc);
	if (rc == 0) /* units: snapshot: the file's units (sim.h) */
		rc = sim_scene_units_resolve(a->sc);
end:
	free(from);
	if (rc == NB_ERUNTIME && (!ov || !from))
		log_error("out of memory loading %s", r->scene_path);
	for (int i = 0; ov && i < r->noverrides; i++)
		free(ov[i]);
	free(ov);
	return rc;
}

int batch_scene_load(const struct batch_run *run, struct scene *sc, char *msg, size_t msglen)
{
	struct load_args a = {run, sc, 0};
	return captured(load_fn, &a, msg, msglen, NULL);
}

static char *emit_to_memory(const struct scene *sc, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	int rc = scene_emit(sc, f);
	fclose(f);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int is_file(const char *path, int dir)
{
	struct stat st;
	return stat(path, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int batch_scene_complete(const struct scene *sc, char *why, size_t len)
{
	char path[SCENE_PATH_MAX];
	app_resolved_scene_path(sc, path);
	snprintf(why, len, "%s (written last, when a run is complete) is missing", path);
	if (!path[0] || !is_file(path, 0))
		return 0;
	if (!app_outputs_whole(sc, why, len))
		return 0;
	snprintf(why, len, "%s differs from this run's scene (changed settings)", path);

	size_t want_len = 0;
	char *want = emit_to_memory(sc, &want_len);
	FILE *f = fopen(path, "rb");
	int same = want && f;
	for (size_t i = 0; same && i < want_len; i++)
		same = fgetc(f) == (unsigned char)want[i];
	if (same)
		same = fgetc(f) == EOF;
	if (f)
		fclose(f);
	free(want);
	return same;
}

/* batch_lookup_fn over a resolved scene: KEY's value in its emitted YAML. */
static int scene_lookup(void *ctx, const char *key, char *out, size_t outlen)
{
	size_t len = 0;
	char *text = emit_to_memory(ctx, &len);
	int rc = text ? batch_yaml_lookup(text, key, out, outlen) : -1;
	free(text);
	return rc;
}

static int body_count_fn(void *p)
{
	struct load_args *a = p;
	a->bodies = sim_scene_body_count(a->sc);
	return a->bodies < 0 ? NB_EINPUT : 0;
}

static void plan_one(const struct batch_file *bf, struct batch_run *r, struct scene *sc, int resume,
		     int *bad_name, char **warn)
{
	struct load_args la = {r, sc, 0};
	int rc = captured(load_fn, &la, r->message, sizeof r->message, warn);
	if (rc) {
		r->status = BATCH_BAD_INPUT;
		r->exit_code = log_exit_status(rc);
		return;
	}
	if (r->name_pending) {
		const struct batch_entry *e = &bf->entries[r->entry];
		char missing[SCENE_PATH_MAX];
		rc = batch_name_fill(e->name_tmpl, r->scene_path, r->overrides, r->noverrides, scene_lookup,
				     sc, r->name, sizeof r->name, missing, sizeof missing);
		if (rc) {
			log_error("%s:%d:%d: runs.%d.name: unknown placeholder {%s}: expected {scene}, or a "
				  "dotted key of the scene (e.g. {seed}, {render.width})",
				  bf->path, e->name_line, e->name_col, r->entry, missing);
			*bad_name = 1;
			return;
		}
		r->name_pending = 0;
	}
	if ((size_t)snprintf(r->dir, sizeof r->dir, "%s/%s", bf->output_dir, r->name) >= sizeof r->dir / 2) {
		snprintf(r->message, sizeof r->message, "output directory %.200s... is too long", r->dir);
		r->status = BATCH_BAD_INPUT;
		return;
	}
	if (app_outputs_place(sc, r->dir, r->message, sizeof r->message)) {
		r->status = BATCH_BAD_INPUT;
		r->exit_code = 2;
		return;
	}
	struct load_args a = {r, sc, 0};
	if (captured(body_count_fn, &a, r->message, sizeof r->message, NULL)) {
		r->status = BATCH_BAD_INPUT;
		r->exit_code = 2;
		return;
	}
	r->message[0] = '\0';
	r->loaded = 1;
	r->seed = sc->seed;
	r->bodies = a.bodies;
	r->frames = sc->output.frames;
	r->steps = (long)sc->output.frames * sc->simulation.steps_per_frame;
	r->uses_gpu_backend = sc->simulation.backend != SCENE_BACKEND_CPU;
	for (int i = 0; i < app_outputs_n; i++) {
		const char *f = app_out_field(sc, i);
		snprintf(r->outputs[i], sizeof r->outputs[i], "%s", f ? f : "");
	}
	app_resolved_scene_path(sc, r->resolved);
	if (batch_sim_key(sc, r->sim_key)) { /* out of memory: let it simulate alone */
		r->sim_key[0] = (uint64_t)r->index;
		r->sim_key[1] = 0x5ca1ab1eull;
	}
	char why[SCENE_PATH_MAX + 128];
	if (resume && batch_scene_complete(sc, why, sizeof why)) {
		r->status = BATCH_SKIPPED;
		r->frames_done = r->frames;
	} else if (resume) {
		log_info("run %s: incomplete, runs again: %s", r->name, why);
	}
}

int batch_plan(const struct batch_file *bf, struct batch_run *runs, int nruns, int resume,
	       char **warn)
{
	struct scene *sc = malloc(sizeof *sc);
	int bad_name = 0;
	if (!sc) {
		log_error("out of memory planning the batch");
		return NB_ERUNTIME;
	}
	for (int i = 0; i < nruns && !bad_name; i++)
		plan_one(bf, &runs[i], sc, resume, &bad_name, warn ? &warn[i] : NULL);
	free(sc);
	if (bad_name)
		return NB_EINPUT;
	return batch_check_names(bf, runs, nruns);
}
