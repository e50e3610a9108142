/* batch_file.c - parse a batch file (see batch.h and docs/batch.md) from
 * the YAML tree of scene/yaml_tree.h, which keeps the line and column of
 * every node for "FILE:LINE:COL: runs.0.sweep: expected ..., got ..."
 * messages and refuses what a scene refuses (anchors, aliases, tags, merge
 * keys, a second document).
 *
 *   output_dir: out/batch
 *   set: {render.width: 640}                 # optional, every run
 *   share_simulation: true                   # optional: view-only runs simulate once
 *   runs:
 *     - scene: plummer-small.yaml            # relative to this file
 *       name: "plummer-{seed}"
 *       set: {output.frames: 5}
 *       sweep: {seed: [1, 2], simulation.dt: {from: 0.001, to: 0.004, step: 0.001}}
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/yaml_tree.h"
#include "batch.h"

#define MAX_DEPTH 32       /* nesting of set: maps and of a value */
#define MAX_SWEEP_VALUES BATCH_MAX_RUNS /* one key alone may not exceed the batch's limit */

struct bparse {
	const char *name;
};

/* "'text'" (shortened), "a list", "a mapping" - for "got ..." */
static void describe(const struct ynode *n, char *buf, size_t len)
{
	if (!n) {
		snprintf(buf, len, "nothing");
	} else if (n->kind == YNODE_SEQ) {
		snprintf(buf, len, "a list");
	} else if (n->kind == YNODE_MAP) {
		snprintf(buf, len, "a mapping");
	} else if (n->len == 0) {
		snprintf(buf, len, "an empty value");
	} else {
		snprintf(buf, len, "'%.60s%s'", n->text, n->len > 60 ? "..." : "");
	}
}

static int fail_at(struct bparse *p, const struct ynode *n, const char *keypath, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(struct bparse *p, const struct ynode *n, const char *keypath, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int line = n ? n->line : 1;
	int col = n ? n->col : 1;
	log_error("%s:%d:%d: %s%s%s", p->name, line, col, keypath, *keypath ? ": " : "", msg);
	return NB_EINPUT;
}

static int expect_got(struct bparse *p, const struct ynode *n, const char *keypath, const char *what)
{
	char got[96];
	describe(n, got, sizeof got);
	return fail_at(p, n, keypath, "expected %s, got %s", what, got);
}

static const char *scalar(const struct ynode *n)
{
	return n && n->kind == YNODE_SCALAR ? n->text : NULL;
}

/* Levels of nesting below n (0 for a scalar; a map's keys count as a level). */
static int nesting(const struct ynode *n)
{
	int deepest = 0;
	for (int i = 0; n->kind != YNODE_SCALAR && i < n->n; i++) {
		int d = 1 + nesting(n->items[i]);
		deepest = d > deepest ? d : deepest;
	}
	return deepest;
}

/* "FILE:LINE:COL: runs.0.sweep" for the value node n of KEY at keypath
 * ("runs.0.sweep.KEY"): where the scene loader's messages say the value
 * came from. malloc'd; NULL when out of memory. */
static char *from_text(struct bparse *p, const struct ynode *n, const char *keypath, const char *key)
{
	size_t kp = strlen(keypath), kl = strlen(key);
	if (kp > kl && keypath[kp - kl - 1] == '.' && strcmp(keypath + kp - kl, key) == 0)
		kp -= kl + 1;
	size_t len = strlen(p->name) + kp + 40;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s:%d:%d: %.*s", p->name, n->line, n->col, (int)kp, keypath);
	return s;
}

static int ov_append(struct batch_override **ov, int *n, const char *key, char *value, char *label,
		     char *from)
{
	struct batch_override *grown = realloc(*ov, (size_t)(*n + 1) * sizeof **ov);
	char *k = strdup(key);
	if (!grown || !k || !value || !label || !from) {
		if (grown)
			*ov = grown;
		free(k), free(value), free(label), free(from);
		log_error("out of memory reading the batch file");
		return NB_ERUNTIME;
	}
	*ov = grown;
	(*ov)[*n] = (struct batch_override){k, value, label, from};
	(*n)++;
	return 0;
}

static int ov_append_node(struct bparse *p, struct batch_override **ov, int *n, const char *key,
			  const struct ynode *v, const char *keypath)
{
	if (nesting(v) > MAX_DEPTH)
		return fail_at(p, v, keypath, "value nested more than %d levels deep", MAX_DEPTH);
	char *value = yaml_tree_flow_text(v, YTREE_FLOW_YAML);
	char *label = yaml_tree_flow_text(v, YTREE_FLOW_LABEL);
	return ov_append(ov, n, key, value, label, from_text(p, v, keypath, key));
}

/* A mapping's keys must be non-empty (the tree has only scalar keys), each once. */
static int check_keys(struct bparse *p, const struct ynode *map, const char *keypath)
{
	for (int a = 0; a < map->n; a++) {
		const struct ynode *k = map->keys[a];
		if (!*k->text)
			return expect_got(p, k, keypath, "a key name");
		for (int b = 0; b < a; b++)
			if (!strcmp(k->text, map->keys[b]->text))
				return fail_at(p, k, keypath, "duplicate key '%s'", k->text);
	}
	return 0;
}

/* set: {a.b: 1, c: {d: 2}} -> "a.b", "c.d" in order. */
static int parse_set(struct bparse *p, const struct ynode *n, const char *prefix, const char *keypath,
		     struct batch_override **ov, int *nov, int depth)
{
	if (n->kind != YNODE_MAP)
		return expect_got(p, n, keypath, "a mapping of dotted keys to values");
	if (depth > MAX_DEPTH)
		return fail_at(p, n, keypath, "nested more than %d levels deep", MAX_DEPTH);
	int rc = check_keys(p, n, keypath);
	for (int i = 0; !rc && i < n->n; i++) {
		char key[SCENE_PATH_MAX], path[SCENE_PATH_MAX + 64];
		snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", n->keys[i]->text);
		snprintf(path, sizeof path, "%s.%s", keypath, key + strlen(prefix) + (*prefix ? 1 : 0));
		const struct ynode *v = n->items[i];
		if (v->kind == YNODE_MAP)
			rc = parse_set(p, v, key, path, ov, nov, depth + 1);
		else
			rc = ov_append_node(p, ov, nov, key, v, path);
	}
	return rc;
}

static int number(struct bparse *p, const struct ynode *n, const char *keypath, double *out)
{
	const char *s = scalar(n);
	char *end;
	if (!s || !*s)
		return expect_got(p, n, keypath, "a number");
	errno = 0;
	*out = strtod(s, &end);
	if (*end || errno || !isfinite(*out))
		return expect_got(p, n, keypath, "a number");
	return 0;
}

/* {from: a, to: b, step: s}: a, a+s, ... up to b (inclusive, to 1e-9 of a step). */
static int parse_range(struct bparse *p, const struct ynode *n, const char *key, const char *keypath,
		       struct batch_sweep *sw)
{
	const struct ynode *nodes[3] = {NULL, NULL, NULL};
	static const char *const names[3] = {"from", "to", "step"};
	double v[3];
	char path[SCENE_PATH_MAX + 64];
	int rc = check_keys(p, n, keypath);
	for (int j = 0; !rc && j < n->n; j++) {
		const char *k = n->keys[j]->text;
		int i = 0;
		while (i < 3 && strcmp(k, names[i]))
			i++;
		if (i == 3)
			return fail_at(p, n->keys[j], keypath,
				       "unknown key '%s' in a range (expected from, to, step)", k);
		nodes[i] = n->items[j];
	}
	for (int i = 0; !rc && i < 3; i++) {
		if ((size_t)snprintf(path, sizeof path, "%s.%s", keypath, names[i]) >= sizeof path)
			return fail_at(p, n, keypath, "key path too long");
		if (!nodes[i])
			return fail_at(p, n, keypath, "a range needs from, to and step; '%s' is missing", names[i]);
		rc = number(p, nodes[i], path, &v[i]);
	}
	if (rc)
		return rc;
	if ((size_t)snprintf(path, sizeof path, "%s.step", keypath) >= sizeof path)
		return fail_at(p, n, keypath, "key path too long");
	if (v[2] == 0 || (v[1] - v[0]) / v[2] < 0)
		return fail_at(p, nodes[2], path, "expected a step that leads from %g to %g, got %g", v[0], v[1], v[2]);
	double count = floor((v[1] - v[0]) / v[2] + 1e-9) + 1;
	if (count > MAX_SWEEP_VALUES)
		return fail_at(p, nodes[2], path, "expected at most %d values, got %.0f", MAX_SWEEP_VALUES, count);
	for (int i = 0; i < (int)count; i++) {
		double x = v[0] + i * v[2];
		if (fabs(x) < 1e-12 * fabs(v[2]))
			x = 0; /* 0.1 - 0.1 is 0, not 1e-17 */
		char txt[64];
		snprintf(txt, sizeof txt, "%.12g", x);
		if (ov_append(&sw->values, &sw->nvalues, key, strdup(txt), strdup(txt),
			      from_text(p, n, keypath, key)))
			return NB_ERUNTIME;
	}
	return 0;
}

static int parse_sweep(struct bparse *p, const struct ynode *n, const char *keypath, struct batch_entry *e)
{
	if (n->kind != YNODE_MAP)
		return expect_got(p, n, keypath, "a mapping of dotted keys to lists of values or ranges");
	int rc = check_keys(p, n, keypath);
	int count = n->n;
	if (rc)
		return rc;
	e->sweep = calloc((size_t)(count > 0 ? count : 1), sizeof *e->sweep);
	if (!e->sweep)
		return NB_ERUNTIME;
	for (int i = 0; !rc && i < n->n; i++) {
		const char *key = n->keys[i]->text;
		const struct ynode *v = n->items[i];
		struct batch_sweep *sw = &e->sweep[e->nsweep++];
		char path[SCENE_PATH_MAX + 64];
		snprintf(path, sizeof path, "%s.%s", keypath, key);
		if (v->kind == YNODE_MAP) {
			rc = parse_range(p, v, key, path, sw);
		} else if (v->kind == YNODE_SEQ && v->n > 0) {
			for (int j = 0; !rc && j < v->n; j++)
				rc = ov_append_node(p, &sw->values, &sw->nvalues, key, v->items[j], path);
		} else {
			rc = expect_got(p, v, path, "a non-empty list of values or a range {from, to, step}");
		}
	}
	return rc;
}

/* 0, or -1 if the result does not fit */
static int join_path(char *out, size_t len, const char *dir, const char *rel)
{
	int n;
	if (rel[0] == '/' || !strcmp(dir, "."))
		n = snprintf(out, len, "%s", rel);
	else
		n = snprintf(out, len, "%s/%s", dir, rel);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int parse_entry(struct bparse *p, const struct ynode *n, int idx, const char *dir, struct batch_entry *e)
{
	char keypath[64];
	snprintf(keypath, sizeof keypath, "runs.%d", idx);
	e->line = e->name_line = n->line;
	e->col = e->name_col = n->col;
	if (n->kind != YNODE_MAP)
		return expect_got(p, n, keypath, "a mapping with scene, name, set, sweep");
	int rc = check_keys(p, n, keypath);
	int have_scene = 0, have_name = 0;
	for (int i = 0; !rc && i < n->n; i++) {
		const char *k = n->keys[i]->text;
		const struct ynode *v = n->items[i];
		char path[128];
		snprintf(path, sizeof path, "%s.%s", keypath, k);
		if (!strcmp(k, "scene") || !strcmp(k, "name")) {
			const char *s = scalar(v);
			if (!s || !*s)
				return expect_got(p, v, path, !strcmp(k, "scene") ? "a scene file path" : "a name template");
			if (strlen(s) >= SCENE_PATH_MAX / 2)
				return fail_at(p, v, path, "expected at most %d characters", SCENE_PATH_MAX / 2 - 1);
			if (!strcmp(k, "scene") && s[strlen(s) - 1] == '/')
				return fail_at(p, v, path, "expected a scene file path, got a directory path '%s' "
					       "(a run's default name is the scene file's stem)", s);
			if (!strcmp(k, "scene")) {
				have_scene = 1;
				snprintf(e->scene, sizeof e->scene, "%s", s);
			} else {
				have_name = 1;
				snprintf(e->name_tmpl, sizeof e->name_tmpl, "%s", s);
				e->name_line = v->line;
				e->name_col = v->col;
			}
		} else if (!strcmp(k, "set")) {
			rc = parse_set(p, v, "", path, &e->set, &e->nset, 0);
		} else if (!strcmp(k, "sweep")) {
			rc = parse_sweep(p, v, path, e);
		} else {
			return fail_at(p, n->keys[i], path, "unknown key (expected scene, name, set or sweep)");
		}
	}
	if (rc)
		return rc;
	if (!have_scene)
		return fail_at(p, n, keypath, "expected a key 'scene' (the scene file), got none");
	if (join_path(e->scene_path, sizeof e->scene_path, dir, e->scene))
		return fail_at(p, n, keypath, "the scene path is too long");
	if (!have_name) { /* {scene}-{key1}-{key2}: unique as long as the sweep is */
		size_t len = (size_t)snprintf(e->name_tmpl, sizeof e->name_tmpl, "{scene}");
		for (int i = 0; i < e->nsweep && len < sizeof e->name_tmpl; i++)
			len += (size_t)snprintf(e->name_tmpl + len, sizeof e->name_tmpl - len, "-{%s}",
						e->sweep[i].values[0].key);
	}
	return 0;
}

static int parse_root(struct bparse *p, const struct ynode *root, const char *dir, struct batch_file *bf)
{
	if (!root || root->kind != YNODE_MAP)
		return expect_got(p, root, "", "a mapping with output_dir and runs");
	int rc = check_keys(p, root, "");
	const struct ynode *runs = NULL;
	for (int i = 0; !rc && i < root->n; i++) {
		const char *k = root->keys[i]->text;
		const struct ynode *v = root->items[i];
		if (!strcmp(k, "output_dir")) {
			const char *s = scalar(v);
			if (!s || !*s)
				return expect_got(p, v, k, "a directory path");
			if (strlen(s) >= SCENE_PATH_MAX / 4)
				return fail_at(p, v, k, "expected at most %d characters", SCENE_PATH_MAX / 4 - 1);
			snprintf(bf->output_dir, sizeof bf->output_dir, "%s", s);
		} else if (!strcmp(k, "set")) {
			rc = parse_set(p, v, "", "set", &bf->set, &bf->nset, 0);
		} else if (!strcmp(k, "runs")) {
			runs = v;
		} else if (!strcmp(k, "share_simulation")) {
			const char *s = scalar(v);
			if (s && (!strcmp(s, "true") || !strcmp(s, "false")))
				bf->share_simulation = !strcmp(s, "true");
			else
				return expect_got(p, v, k, "true or false");
		} else {
			return fail_at(p, root->keys[i], k,
				       "unknown key (expected output_dir, set, share_simulation or runs)");
		}
	}
	if (rc)
		return rc;
	if (!runs)
		return fail_at(p, root, "runs", "expected a list of runs, got none");
	if (runs->kind != YNODE_SEQ || runs->n == 0)
		return expect_got(p, runs, "runs", "a non-empty list of runs");
	int n = runs->n;
	bf->entries = calloc((size_t)n, sizeof *bf->entries);
	if (!bf->entries)
		return NB_ERUNTIME;
	for (int i = 0; !rc && i < n; i++) {
		bf->nentries = i + 1;
		rc = parse_entry(p, runs->items[i], i, dir, &bf->entries[i]);
	}
	return rc;
}

int batch_file_load_string(const char *text, const char *name, const char *dir, struct batch_file *bf)
{
	struct bparse p = {.name = name};
	struct ynode *root = NULL;

	memset(bf, 0, sizeof *bf);
	snprintf(bf->path, sizeof bf->path, "%s", name);
	snprintf(bf->dir, sizeof bf->dir, "%s", dir && *dir ? dir : ".");
	snprintf(bf->output_dir, sizeof bf->output_dir, "out/batch");
	bf->share_simulation = 1;
	int rc = yaml_tree_parse(text, strlen(text), name, NULL, &root);
	if (rc == 0)
		rc = parse_root(&p, root, bf->dir, bf);
	yaml_tree_free(root);
	return rc;
}

int batch_file_load(const char *path, struct batch_file *bf)
{
	char dir[SCENE_PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(bf, 0, sizeof *bf);
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("%s: cannot open the batch file: %s", path, strerror(errno));
		return NB_EINPUT;
	}
	FILE *ms = open_memstream(&text, &len);
	char buf[65536];
	size_t got;
	while (ms && (got = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, got, ms);
	int bad = ferror(f);
	fclose(f);
	if (ms)
		fclose(ms);
	if (!ms || bad) {
		log_error("%s: cannot read the batch file", path);
		free(text);
		return NB_EINPUT;
	}
	if (memchr(text, '\0', len)) {
		log_error("%s: not a text file (contains a NUL byte)", path);
		free(text);
		return NB_EINPUT;
	}
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	rc = batch_file_load_string(text, path, dir, bf);
	free(text);
	return rc;
}

int batch_yaml_lookup(const char *text, const char *key, char *out, size_t outlen)
{
	struct ynode *root = NULL;
	int rc = -1;
	if (yaml_tree_parse(text, strlen(text), "resolved scene", NULL, &root) != 0)
		return -1;
	const struct ynode *n = yaml_tree_lookup(root, key);
	if (n && n->kind != YNODE_MAP) {
		char *label = yaml_tree_flow_text(n, YTREE_FLOW_LABEL);
		if (label && strlen(label) < outlen) {
			memcpy(out, label, strlen(label) + 1);
			rc = 0;
		}
		free(label);
	}
	yaml_tree_free(root);
	return rc;
}

static void free_overrides(struct batch_override *ov, int n)
{
	for (int i = 0; i < n; i++)
		free(ov[i].key), free(ov[i].value), free(ov[i].label), free(ov[i].from);
	free(ov);
}

void batch_file_free(struct batch_file *bf)
{
	free_overrides(bf->set, bf->nset);
	for (int i = 0; i < bf->nentries; i++) {
		struct batch_entry *e = &bf->entries[i];
		free_overrides(e->set, e->nset);
		for (int k = 0; k < e->nsweep; k++)
			free_overrides(e->sweep[k].values, e->sweep[k].nvalues);
		free(e->sweep);
	}
	free(bf->entries);
	memset(bf, 0, sizeof *bf);
}
