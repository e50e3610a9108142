/* batch_report.c - what a batch did: the table for people (stdout) and
 * OUTPUT_DIR/batch-report.json for programs, both saying which runs shared
 * a simulation. The JSON writer is ours and small: strings escaped per
 * RFC 8259, numbers finite or null. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "../scene/yaml_tree.h"
#include "batch.h"

#ifndef NB_VERSION
#define NB_VERSION "unknown"
#endif

void batch_format_duration(double s, char *buf, size_t len)
{
	if (!isfinite(s) || s < 0)
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void batch_json_string(FILE *f, const char *s)
{
	yaml_tree_write_quoted(f, s); /* its escapes are JSON's too */
}

static void json_number(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.6g", x);
	else
		fputs("null", f);
}

/* Did r's group start (so its simulation ran, or was meant to)? */
static int ran(const struct batch_run *r)
{
	return r->group >= 0 && r->exit_code >= 0 && r->status != BATCH_NOT_RUN &&
	       r->status != BATCH_PENDING && r->status != BATCH_SKIPPED;
}

/* Simulations the batch ran: the groups that started. */
static int simulations_run(const struct batch_run *runs, int nruns)
{
	int n = 0;
	for (int i = 0; i < nruns; i++)
		n += ran(&runs[i]) && runs[i].group == i;
	return n;
}

void batch_report_table(const struct batch_run *runs, int nruns, FILE *f)
{
	int wname = 3, wout = 6;
	for (int i = 0; i < nruns; i++) {
		int n = (int)strlen(runs[i].name), o = (int)strlen(runs[i].dir) + 1;
		wname = n > wname ? n : wname;
		wout = o > wout ? o : wout;
	}
	fprintf(f, "%-*s  %-11s  %-10s  %9s  %9s  %s\n", wname, "run", "status", "simulation", "wall",
		"frames", "output");
	for (int i = 0; i < nruns; i++) {
		const struct batch_run *r = &runs[i];
		char wall[32] = "-", frames[32] = "-", out[SCENE_PATH_MAX + 2] = "-", sim[32] = "-";
		if (ran(r) && r->group_size > 1)
			snprintf(sim, sizeof sim, "shared #%d", r->group + 1);
		else if (ran(r))
			snprintf(sim, sizeof sim, "own");
		if (r->exit_code >= 0 && r->status != BATCH_SKIPPED &&
		    !(r->status == BATCH_BAD_INPUT && !r->loaded))
			batch_format_duration(r->wall_s, wall, sizeof wall);
		if (r->loaded)
			snprintf(frames, sizeof frames, "%d/%d", r->frames_done, r->frames);
		if (r->dir[0])
			snprintf(out, sizeof out, "%s/", r->dir);
		fprintf(f, "%-*s  %-11s  %-10s  %9s  %9s  %s\n", wname, r->name, batch_status_name(r->status),
			sim, wall, frames, out);
	}
	int sims = simulations_run(runs, nruns);
	for (int i = 0, shared = 0; i < nruns; i++)
		if (ran(&runs[i]) && runs[i].group_size > 1 && !shared++)
			fprintf(f, "%d simulation%s; \"shared #k\": simulated once with run k and the others "
				"marked #k\n", sims, sims == 1 ? "" : "s");
	for (int i = 0; i < nruns; i++)
		if (runs[i].message[0] && runs[i].status != BATCH_OK && runs[i].status != BATCH_SKIPPED)
			fprintf(f, "%s: %s\n", runs[i].name, runs[i].message);
}

static void write_run(FILE *f, const struct batch_run *r, const struct batch_file *bf, int last)
{
	fprintf(f, "    {\n      \"index\": %d,\n      \"name\": ", r->index + 1);
	batch_json_string(f, r->name);
	fputs(",\n      \"scene\": ", f);
	batch_json_string(f, r->scene_path);
	fputs(",\n      \"scene_as_written\": ", f);
	batch_json_string(f, bf->entries[r->entry].scene);
	fputs(",\n      \"overrides\": [", f);
	for (int k = 0; k < r->noverrides; k++) {
		fputs(k ? ", " : "", f);
		char kv[2 * SCENE_PATH_MAX];
		snprintf(kv, sizeof kv, "%s=%s", r->overrides[k].key, r->overrides[k].value);
		batch_json_string(f, kv);
	}
	fputs("],\n      \"seed\": ", f);
	if (r->loaded)
		fprintf(f, "%llu", (unsigned long long)r->seed);
	else
		fputs("null", f);
	fputs(",\n      \"status\": ", f);
	batch_json_string(f, batch_status_name(r->status));
	fputs(",\n      \"exit_code\": ", f);
	if (r->exit_code >= 0)
		fprintf(f, "%d", r->exit_code);
	else
		fputs("null", f);
	fputs(",\n      \"wall_s\": ", f);
	json_number(f, r->wall_s);
	fprintf(f, ",\n      \"frames_done\": %d,\n      \"frames\": %d,\n      \"bodies\": %ld,\n"
		   "      \"steps\": %ld,\n      \"output_dir\": ",
		r->frames_done, r->frames, r->bodies, r->steps);
	batch_json_string(f, r->dir);
	fputs(",\n      \"outputs\": {", f);
	int first = 1;
	for (int k = 0; k < app_outputs_n; k++) {
		if (!r->outputs[k][0])
			continue;
		fputs(first ? "" : ", ", f);
		first = 0;
		batch_json_string(f, strchr(app_outputs[k].key, '.') + 1);
		fputs(": ", f);
		batch_json_string(f, r->outputs[k]);
	}
	fputs("},\n      \"simulation\": ", f);
	if (ran(r))
		fprintf(f, "{\"shared\": %s, \"group\": %d, \"runs\": %d}",
			r->group_size > 1 ? "true" : "false", r->group + 1, r->group_size);
	else
		fputs("null", f);
	fputs(",\n      \"resolved_scene\": ", f);
	batch_json_string(f, r->resolved);
	fputs(",\n      \"message\": ", f);
	batch_json_string(f, r->message);
	fprintf(f, "\n    }%s\n", last ? "" : ",");
}

int batch_report_json(const struct batch_file *bf, const struct batch_run *runs, int nruns,
		      double wall_s, int exit_status, const char *path)
{
	char tmp[SCENE_PATH_MAX + 16], started[64];
	time_t t0 = time(NULL) - (time_t)wall_s;
	struct tm tm;
	int counts[BATCH_OTHER_SHARD + 1] = {0};

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));
	FILE *f = fopen(tmp, "w");
	if (!f) {
		log_error("%s: cannot write the batch report: %s", tmp, strerror(errno));
		return NB_ERUNTIME;
	}
	for (int i = 0; i < nruns; i++)
		counts[runs[i].status]++;
	fputs("{\n  \"program\": \"nbody-render\",\n  \"version\": ", f);
	batch_json_string(f, NB_VERSION);
	fputs(",\n  \"batch_file\": ", f);
	batch_json_string(f, bf->path);
	fputs(",\n  \"output_dir\": ", f);
	batch_json_string(f, bf->output_dir);
	fputs(",\n  \"started\": ", f);
	batch_json_string(f, started);
	fputs(",\n  \"wall_s\": ", f);
	json_number(f, wall_s);
	fprintf(f, ",\n  \"exit_status\": %d,\n  \"share_simulation\": %s,\n  \"simulations\": %d,"
		   "\n  \"counts\": {", exit_status, bf->share_simulation ? "true" : "false",
		simulations_run(runs, nruns));
	for (int s = BATCH_OK; s <= BATCH_OTHER_SHARD; s++) {
		fputs(s == BATCH_OK ? "" : ", ", f);
		batch_json_string(f, batch_status_name((enum batch_status)s));
		fprintf(f, ": %d", counts[s]);
	}
	fputs("},\n  \"runs\": [\n", f);
	for (int i = 0; i < nruns; i++)
		write_run(f, &runs[i], bf, i == nruns - 1);
	fputs("  ]\n}\n", f);
	int bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path)) {
		log_error("%s: cannot write the batch report: %s", path, strerror(errno));
		remove(tmp);
		return NB_ERUNTIME;
	}
	return 0;
}
