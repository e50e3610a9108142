/* batch_expand.c - a parsed batch file becomes a list of runs: each entry's
 * sweep is expanded into its cartesian product (first key slowest, so the
 * order is the order of the file), every run gets its overrides in the
 * order they apply, and its name from the entry's template. Names are then
 * checked for clashes before anything runs. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"

const char *batch_status_name(enum batch_status s)
{
	switch (s) {
	case BATCH_PENDING: return "pending";
	case BATCH_OK: return "ok";
	case BATCH_FAILED: return "failed";
	case BATCH_BAD_INPUT: return "bad input";
	case BATCH_SKIPPED: return "skipped";
	case BATCH_INTERRUPTED: return "interrupted";
	case BATCH_NOT_RUN: return "not run";
	case BATCH_OTHER_SHARD: return "other shard";
	}
	return "?";
}

static int ov_copy(struct batch_override *dst, const char *key, const char *value, const char *label,
		   const char *from)
{
	dst->key = strdup(key);
	dst->value = strdup(value);
	dst->label = strdup(label);
	dst->from = from ? strdup(from) : NULL;
	if (!dst->key || !dst->value || !dst->label || (from && !dst->from)) {
		log_error("out of memory expanding the batch");
		return NB_ERUNTIME;
	}
	return 0;
}

/* A command-line value's label: outer quotes dropped; [a, b] -> a,b. */
static void cli_label(const char *v, char *out, size_t len)
{
	size_t n = strlen(v), o = 0;
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		snprintf(out, len, "%.*s", (int)(n - 2), v + 1);
		return;
	}
	int list = n >= 2 && v[0] == '[' && v[n - 1] == ']';
	for (size_t i = list; i < n - list && o + 1 < len; i++)
		if (!list || v[i] != ' ')
			out[o++] = v[i];
	out[o] = '\0';
}

/* "dir/name.yaml" -> "name" */
static void scene_stem(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(out, len, "%s", base);
	char *dot = strrchr(out, '.');
	if (dot && dot != out)
		*dot = '\0';
}

int batch_name_fill(const char *tmpl, const char *scene_path, const struct batch_override *ov,
		    int nov, batch_lookup_fn lookup, void *ctx, char *out, size_t outlen,
		    char *missing, size_t missinglen)
{
	size_t o = 0;
	for (const char *s = tmpl; *s;) {
		char val[SCENE_PATH_MAX];
		if (*s != '{') {
			val[0] = *s++;
			val[1] = '\0';
		} else {
			const char *close = strchr(s, '}');
			char key[SCENE_PATH_MAX];
			if (!close || close == s + 1 || (size_t)(close - s) >= sizeof key)
				return NB_EINPUT;
			snprintf(key, sizeof key, "%.*s", (int)(close - s - 1), s + 1);
			s = close + 1;
			int found = 0;
			if (!strcmp(key, "scene")) {
				scene_stem(scene_path, val, sizeof val);
				found = 1;
			}
			for (int i = nov - 1; !found && i >= 0; i--) /* the last override wins */
				if (!strcmp(ov[i].key, key)) {
					snprintf(val, sizeof val, "%s", ov[i].label);
					found = 1;
				}
			if (!found && lookup && lookup(ctx, key, val, sizeof val) == 0)
				found = 1;
			if (!found) {
				snprintf(missing, missinglen, "%s", key);
				return 1;
			}
		}
		size_t n = strlen(val);
		if (o + n >= outlen)
			return NB_EINPUT;
		memcpy(out + o, val, n + 1);
		o += n;
	}
	if (o == 0)
		out[0] = '\0';
	return 0;
}

static int expand_entry(const struct batch_file *bf, int ei, const char *const *cli_set, int ncli,
			struct batch_run *runs, int *nruns, long combos)
{
	const struct batch_entry *e = &bf->entries[ei];
	int nov = bf->nset + e->nset + e->nsweep + ncli;
	for (long c = 0; c < combos; c++) {
		struct batch_run *r = &runs[(*nruns)++];
		int pick[64] = {0}, k = 0;
		long rem = c;
		for (int s = e->nsweep - 1; s >= 0; s--) { /* last key fastest */
			pick[s] = (int)(rem % e->sweep[s].nvalues);
			rem /= e->sweep[s].nvalues;
		}
		memset(r, 0, sizeof *r);
		r->entry = ei;
		r->index = *nruns - 1;
		r->exit_code = -1;
		r->status = BATCH_PENDING;
		snprintf(r->scene_path, sizeof r->scene_path, "%s", e->scene_path);
		r->overrides = calloc((size_t)(nov > 0 ? nov : 1), sizeof *r->overrides);
		if (!r->overrides)
			return NB_ERUNTIME;
		r->noverrides = nov;
		for (int i = 0; i < bf->nset; i++, k++)
			if (ov_copy(&r->overrides[k], bf->set[i].key, bf->set[i].value, bf->set[i].label,
				    bf->set[i].from))
				return NB_ERUNTIME;
		for (int i = 0; i < e->nset; i++, k++)
			if (ov_copy(&r->overrides[k], e->set[i].key, e->set[i].value, e->set[i].label,
				    e->set[i].from))
				return NB_ERUNTIME;
		for (int s = 0; s < e->nsweep; s++, k++) {
			const struct batch_override *v = &e->sweep[s].values[pick[s]];
			if (ov_copy(&r->overrides[k], v->key, v->value, v->label, v->from))
				return NB_ERUNTIME;
		}
		for (int i = 0; i < ncli; i++, k++) {
			char key[SCENE_PATH_MAX], label[SCENE_PATH_MAX];
			const char *eq = strchr(cli_set[i], '=');
			snprintf(key, sizeof key, "%.*s", (int)(eq - cli_set[i]), cli_set[i]);
			cli_label(eq + 1, label, sizeof label);
			if (ov_copy(&r->overrides[k], key, eq + 1, label, NULL))
				return NB_ERUNTIME;
		}
		char missing[SCENE_PATH_MAX];
		int rc = batch_name_fill(e->name_tmpl, r->scene_path, r->overrides, r->noverrides, NULL, NULL,
					 r->name, sizeof r->name, missing, sizeof missing);
		if (rc < 0) {
			log_error("%s:%d:%d: runs.%d.name: expected a template like \"{scene}-{seed}\" "
				  "(every '{' closed, shorter than %d characters), got '%s'",
				  bf->path, e->name_line, e->name_col, ei, SCENE_PATH_MAX / 2, e->name_tmpl);
			return NB_EINPUT;
		}
		if (rc == 1) {
			r->name_pending = 1;
			snprintf(r->name, sizeof r->name, "%s", e->name_tmpl);
		}
	}
	return 0;
}

int batch_expand(const struct batch_file *bf, const char *const *cli_set, int ncli,
		 struct batch_run **runs_out, int *nruns_out)
{
	long total = 0;
	int rc = 0;
	*runs_out = NULL;
	*nruns_out = 0;
	for (int i = 0; i < ncli; i++) {
		const char *eq = strchr(cli_set[i], '=');
		if (!eq || eq == cli_set[i]) {
			log_error("--set %s: expected KEY=VALUE, e.g. --set render.width=640", cli_set[i]);
			return NB_EINPUT;
		}
	}
	long combos[bf->nentries > 0 ? bf->nentries : 1];
	for (int i = 0; i < bf->nentries; i++) {
		const struct batch_entry *e = &bf->entries[i];
		combos[i] = 1;
		if (e->nsweep > 64) {
			log_error("%s:%d:%d: runs.%d.sweep: expected at most 64 keys, got %d", bf->path,
				  e->line, e->col, i, e->nsweep);
			return NB_EINPUT;
		}
		double count = 1; /* in double: 5 keys of 100 values are 1e10 runs, past a long on some machines */
		char factors[256] = "";
		for (int s = 0; s < e->nsweep; s++) {
			size_t used = strlen(factors);
			count *= e->sweep[s].nvalues;
			snprintf(factors + used, sizeof factors - used, "%s%d", s ? " x " : "", e->sweep[s].nvalues);
		}
		if (count + (double)total > BATCH_MAX_RUNS) {
			if (e->nsweep)
				log_error("%s:%d:%d: runs.%d.sweep: expands to %.0f runs (%s values; %.0f in the "
					  "whole batch), more than the %d runs a batch may have: split it, or sweep "
					  "fewer values", bf->path, e->line, e->col, i, count, factors,
					  count + (double)total, BATCH_MAX_RUNS);
			else
				log_error("%s:%d:%d: runs.%d: the batch would have %.0f runs, more than the %d a batch may have",
					  bf->path, e->line, e->col, i, count + (double)total, BATCH_MAX_RUNS);
			return NB_EINPUT;
		}
		combos[i] = (long)count;
		total += combos[i];
	}
	struct batch_run *runs = calloc((size_t)(total > 0 ? total : 1), sizeof *runs);
	if (!runs) {
		log_error("out of memory for %ld runs", total);
		return NB_ERUNTIME;
	}
	int n = 0;
	for (int i = 0; !rc && i < bf->nentries; i++)
		rc = expand_entry(bf, i, cli_set, ncli, runs, &n, combos[i]);
	if (rc) {
		batch_runs_free(runs, n);
		return rc;
	}
	*runs_out = runs;
	*nruns_out = n;
	return 0;
}

void batch_runs_free(struct batch_run *runs, int nruns)
{
	if (!runs)
		return;
	for (int i = 0; i < nruns; i++) {
		for (int k = 0; k < runs[i].noverrides; k++)
			free(runs[i].overrides[k].key), free(runs[i].overrides[k].value),
				free(runs[i].overrides[k].label), free(runs[i].overrides[k].from);
		free(runs[i].overrides);
	}
	free(runs);
}

/* ---- names --------------------------------------------------------------- */

/* NULL if NAME is a usable relative directory name, else why not. */
static const char *name_problem(const char *name)
{
	if (!*name)
		return "it is empty";
	if (name[0] == '/')
		return "it is an absolute path";
	if (!strcmp(name, "batch-report.json"))
		return "batch-report.json is the batch's report";
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "it contains a control character";
	for (const char *s = name; *s;) {
		size_t len = strcspn(s, "/");
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return "it has an empty, '.' or '..' path component";
		s += len;
		if (*s == '/')
			s++;
		if (!*s && s[-1] == '/')
			return "it ends with '/'";
	}
	return NULL;
}

static const struct batch_run *g_sort_runs; /* qsort has no context argument */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(g_sort_runs[*(const int *)a].name, g_sort_runs[*(const int *)b].name);
}

static int name_error(const struct batch_file *bf, const struct batch_run *r, const char *fmt,
		      const char *a, const char *b)
{
	const struct batch_entry *e = &bf->entries[r->entry];
	char msg[SCENE_PATH_MAX * 3];
	snprintf(msg, sizeof msg, fmt, a, b);
	log_error("%s:%d:%d: runs.%d.name: %s", bf->path, e->name_line, e->name_col, r->entry, msg);
	return NB_EINPUT;
}

int batch_check_names(const struct batch_file *bf, const struct batch_run *runs, int nruns)
{
	for (int i = 0; i < nruns; i++) {
		if (runs[i].name_pending)
			continue; /* its scene did not load: it writes nothing */
		const char *why = name_problem(runs[i].name);
		if (why)
			return name_error(bf, &runs[i], "expected a relative directory name, got '%s': %s",
					  runs[i].name, why);
	}
	int *order = malloc((size_t)(nruns > 0 ? nruns : 1) * sizeof *order);
	if (!order)
		return NB_ERUNTIME;
	int nnamed = 0;
	for (int i = 0; i < nruns; i++)
		if (!runs[i].name_pending)
			order[nnamed++] = i;
	g_sort_runs = runs;
	qsort(order, (size_t)nnamed, sizeof *order, cmp_name);
	int rc = 0;
	for (int i = 0; !rc && i + 1 < nnamed; i++) {
		const struct batch_run *a = &runs[order[i]], *b = &runs[order[i + 1]];
		if (a->index > b->index) {
			const struct batch_run *t = a;
			a = b, b = t;
		}
		char which[96];
		snprintf(which, sizeof which, "runs %d and %d", a->index + 1, b->index + 1);
		if (!strcmp(a->name, b->name))
			rc = name_error(bf, b, "%s both get the name '%s' (put a placeholder such as {seed} "
				       "in the name, or give each run its own)", which, a->name);
	}
	/* "a" and "a/b": one run's directory inside another's. */
	for (int i = 0; !rc && i < nruns; i++) {
		if (runs[i].name_pending)
			continue;
		char prefix[SCENE_PATH_MAX];
		snprintf(prefix, sizeof prefix, "%s", runs[i].name);
		for (char *slash = strchr(prefix, '/'); !rc && slash; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			int lo = 0, hi = nnamed - 1;
			while (lo <= hi) {
				int mid = (lo + hi) / 2, c = strcmp(prefix, runs[order[mid]].name);
				if (c == 0) {
					rc = name_error(bf, &runs[i], "'%s' would be written inside run '%s'",
							runs[i].name, prefix);
					break;
				}
				if (c < 0)
					hi = mid - 1;
				else
					lo = mid + 1;
			}
			*slash = '/';
		}
	}
	free(order);
	return rc;
}
