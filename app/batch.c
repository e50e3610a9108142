/* batch.c - `nbody-render batch BATCH.yaml [--set K=V]... [--jobs N]
 * [--dry-run] [--resume] [--no-share] [--strict] [--quiet]`: many scenes
 * in one command.
 *
 *   parse batch file -> expand sweeps -> plan (load scenes, names, resume)
 *   -> each run's warnings said once (--strict: errors, exit 2) -> group (runs differing only in view keys share a simulation)
 *   -> dry-run listing, or run (forked children) -> table + batch-report.json
 *
 * Exit status: 0 every run ok (or skipped), 1 a run failed, 2 the batch file
 * or the command line is bad (nothing has run), 130 interrupted.
 * Try: build/nbody-render batch tests/data/batch-small.yaml --dry-run */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "../output/output.h"
#include "batch.h"
#include "estimate.h"
#include "progress.h"

static void usage(FILE *f)
{
	fputs("usage: nbody-render batch BATCH.yaml [--set KEY=VALUE]... [--jobs N] [--dry-run] [--resume]\n"
	      "                          [--no-share] [--backend auto|cuda|cpu] [--strict] [--quiet]\n"
	      "  --set KEY=VALUE  override a scene key in every run (applied last)\n"
	      "  --jobs N         run N runs at a time, 1 to 256 (default 1; GPU runs one per device)\n"
	      "  --dry-run        list every run with its overrides and work; run nothing\n"
	      "  --resume         skip runs whose outputs are complete\n"
	      "  --no-share       simulate every run on its own (default: runs that differ only in\n"
	      "                   camera, render and output keys share one simulation)\n"
	      "  --backend B      auto, cuda or cpu for every run (overrides simulation.backend)\n"
	      "  --shard K/N      run share K of N (0 <= K < N; default: a Slurm job array's\n"
	      "                   SLURM_ARRAY_TASK_ID - _MIN of SLURM_ARRAY_TASK_COUNT, else all)\n"
	      "  under mpirun     the runs are spread over the ranks, one at a time each (--jobs\n"
	      "                   per rank); rank 0 writes the table and the report\n"
	      "  --strict         a run's warnings about its scene are errors (exit 2 before any\n"
	      "                   run starts; the dry run too)\n"
	      "  --quiet          only errors and the final table\n"
	      "See docs/batch.md for the batch file.\n",
	      f);
}

struct batch_args {
	const char *file;
	const char **set;
	int nset;
	int jobs, dry_run, resume, quiet, no_share, strict;
	int shard_k, shard_n; /* share shard_k of shard_n (1: the whole batch) */
	int shard_cli;        /* --shard given */
	int backend; /* -1: each scene's own */
};

/* "--opt VALUE" or "--opt=VALUE": the value, advancing *i; NULL if none. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len))
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static int is_opt(const char *arg, const char *name)
{
	size_t len = strlen(name);
	return !strncmp(arg, name, len) && (arg[len] == '\0' || arg[len] == '=');
}

static int parse_args(int argc, char **argv, struct batch_args *a)
{
	a->jobs = 1;
	a->backend = -1;
	a->shard_n = 1;
	a->set = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->set);
	if (!a->set)
		return NB_ERUNTIME;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			return 1;
		} else if (is_opt(arg, "--set") || !strcmp(arg, "-s")) {
			v = !strcmp(arg, "-s") ? (i + 1 < argc ? argv[++i] : NULL) : opt_value(argc, argv, &i, "--set");
			if (!v) {
				log_error("--set needs KEY=VALUE");
				return NB_EINPUT;
			}
			a->set[a->nset++] = v;
		} else if (is_opt(arg, "--jobs") || !strcmp(arg, "-j")) {
			v = !strcmp(arg, "-j") ? (i + 1 < argc ? argv[++i] : NULL) : opt_value(argc, argv, &i, "--jobs");
			char *end = NULL;
			errno = 0;
			long n = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : 0; /* digits only: no " 4", "-1" */
			if (!v || !end || *end || errno || n < 1 || n > BATCH_MAX_JOBS) {
				log_error("--jobs: expected a whole number from 1 to %d, got '%s'", BATCH_MAX_JOBS,
					  v ? v : "");
				return NB_EINPUT;
			}
			a->jobs = (int)n;
		} else if (is_opt(arg, "--backend")) {
			static const char *const names[] = {"auto", "cuda", "cpu"}; /* enum scene_backend order */
			v = opt_value(argc, argv, &i, "--backend");
			a->backend = -1;
			for (int b = 0; v && b < 3; b++)
				if (!strcmp(v, names[b]))
					a->backend = b;
			if (a->backend < 0) {
				log_error("--backend: expected auto, cuda or cpu, got '%s'", v ? v : "");
				return NB_EINPUT;
			}
		} else if (is_opt(arg, "--shard")) {
			v = opt_value(argc, argv, &i, "--shard");
			if (dist_shard_parse(v, &a->shard_k, &a->shard_n))
				return NB_EINPUT;
			a->shard_cli = 1;
		} else if (!strcmp(arg, "--dry-run") || !strcmp(arg, "-n")) {
			a->dry_run = 1;
		} else if (!strcmp(arg, "--resume")) {
			a->resume = 1;
		} else if (!strcmp(arg, "--no-share")) {
			a->no_share = 1;
		} else if (!strcmp(arg, "--strict")) {
			a->strict = 1;
		} else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) {
			a->quiet = 1;
		} else if (arg[0] == '-' && arg[1]) {
			log_error("batch: unknown option '%s'", arg);
			usage(stderr);
			return NB_EINPUT;
		} else if (!a->file) {
			a->file = arg;
		} else {
			log_error("batch: one batch file at a time, got '%s' and '%s'", a->file, arg);
			return NB_EINPUT;
		}
	}
	if (!a->shard_cli) {
		int env = dist_shard_from_env(&a->shard_k, &a->shard_n);
		if (env < 0)
			return NB_EINPUT;
	}
	if (!a->file) {
		log_error("batch: expected a batch file");
		usage(stderr);
		return NB_EINPUT;
	}
	return 0;
}

/* --dry-run: YAML on stdout, one entry per run. */
static int dry_run(const struct batch_file *bf, const struct batch_run *runs, int nruns, int groups,
		   int share)
{
	double total = 0, total_s = 0;
	int bad = 0, todo = 0;
	struct app_rates rates; /* the expected wall time (app/estimate.c) */
	struct app_rates_info rinfo;
	int timed = app_rates_get(&rates, &rinfo) == 0;
	for (int i = 0; i < nruns; i++)
		todo += runs[i].group >= 0;
	printf("# batch %s: %d run%s into %s/\n", bf->path, nruns, nruns == 1 ? "" : "s", bf->output_dir);
	printf("# %d simulation%s for the %d run%s to do (sharing %s: runs that differ only in camera,\n"
	       "# render and output keys other than output.frames simulate once)\nruns:\n",
	       groups, groups == 1 ? "" : "s", todo, todo == 1 ? "" : "s",
	       share ? "on" : "off");
	for (int i = 0; i < nruns; i++) {
		const struct batch_run *r = &runs[i];
		printf("  - name: ");
		batch_json_string(stdout, r->name);
		printf("\n    scene: ");
		batch_json_string(stdout, r->scene_path);
		printf("\n    overrides:%s\n", r->noverrides ? "" : " []");
		for (int k = 0; k < r->noverrides; k++) {
			char kv[2 * SCENE_PATH_MAX];
			snprintf(kv, sizeof kv, "%s=%s", r->overrides[k].key, r->overrides[k].value);
			printf("      - ");
			batch_json_string(stdout, kv);
			printf("\n");
		}
		if (!r->loaded) {
			printf("    status: \"bad input\"\n    message: ");
			batch_json_string(stdout, r->message);
			printf("\n");
			bad = 1;
			continue;
		}
		double work = (double)r->bodies * (double)r->steps;
		total += r->group == r->index ? work : 0; /* a group simulates once */
		printf("    seed: %llu\n    bodies: %ld\n    frames: %d\n    steps: %ld\n"
		       "    work_body_steps: %.4g\n    output: ",
		       (unsigned long long)r->seed, r->bodies, r->frames, r->steps, work);
		batch_json_string(stdout, r->dir);
		printf("\n    status: \"%s\"\n",
		       r->status == BATCH_SKIPPED ? "complete (skipped with --resume)" : "to run");
		if (r->group >= 0)
			printf("    simulation: {group: %d, runs: %d}  # group: the run that simulates for it\n",
			       r->group + 1, r->group_size);
		double s = timed && r->status != BATCH_SKIPPED ? app_estimate_batch_run(r, &rates) : -1;
		if (s >= 0)
			printf("    expected_s: %.1f  # wall time on this machine, alone\n", s), total_s += s;
	}
	if (timed)
		app_estimate_batch_print(total_s, &rinfo, stdout);
	printf("# total work: %.4g body-steps (bodies x steps; a direct-sum step costs ~bodies^2)\n", total);
	fflush(stdout);
	return bad ? 1 : 0;
}

/* A run that fails to load because of the command line's own --set: the
 * command line is bad, as it would be for a single scene. 1 (logged) when
 * one does, else 0. */
static int batch_set_is_bad(const struct batch_args *a, const struct batch_run *runs, int nruns)
{
	for (int i = 0; i < nruns; i++)
		for (int k = 0; runs[i].status == BATCH_BAD_INPUT && k < a->nset; k++) {
			size_t len = strlen(a->set[k]);
			if (!strncmp(runs[i].message, "--set ", 6) && !strncmp(runs[i].message + 6, a->set[k], len) &&
			    runs[i].message[6 + len] == ':') {
				log_error("%s (run %s)", runs[i].message, runs[i].name);
				return 1;
			}
		}
	return 0;
}

/* Say the loader's warnings of each run (warn: batch_plan's) with the
 * run's name, as its errors are: "run k/M NAME: FILE:LINE:COL: KEY: ...".
 * ONLY: the runs of that status (-1: every run). Strict: each is said as
 * an error instead, and the result is NB_EINPUT (the batch is refused
 * before any run starts); else 0. */
static int batch_say_warnings(const struct batch_run *runs, int nruns, char *const *warn, int only,
			      int strict)
{
	int rc = 0;
	for (int i = 0; warn && i < nruns; i++) {
		if (!warn[i] || (only >= 0 && (int)runs[i].status != only))
			continue;
		for (const char *l = warn[i]; *l;) {
			const int len = (int)strcspn(l, "\n");
			if (strict)
				log_error("run %d/%d %s: %.*s (an error under --strict)", i + 1, nruns,
					  runs[i].name, len, l);
			else
				log_warn("run %d/%d %s: %.*s", i + 1, nruns, runs[i].name, len, l);
			l += len + (l[len] == '\n');
		}
		rc = strict ? NB_EINPUT : 0;
	}
	return rc;
}

/* Over MPI ranks: which runs this rank takes (owner: batch_share_select's). */
static void batch_say_owned(const int *owner, int nruns)
{
	char list[1024] = "";
	size_t len = 0;
	int mine = 0;
	for (int i = 0; i < nruns; i++)
		if (owner[i] == dist_rank() && len < sizeof list - 32) {
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", mine ? "," : "", i + 1);
			mine++;
		}
	log_info("batch: rank %d of %d runs %d run%s: %s", dist_rank(), dist_size(), mine,
		 mine == 1 ? "" : "s", mine ? list : "none");
}

/* Rank 0 after the runs (rc: batch_exec's): the exit status (0, 1 when a
 * run failed or the report could not be written, 130 when interrupted),
 * the table on stdout and the JSON report. */
static int batch_finish(const struct batch_file *bf, struct batch_run *runs, int nruns,
			const struct batch_args *a, int rc, double t0)
{
	int status = 0;
	for (int i = 0; i < nruns; i++)
		if (runs[i].status != BATCH_OK && runs[i].status != BATCH_SKIPPED &&
		    runs[i].status != BATCH_OTHER_SHARD)
			status = 1;
	if (rc == NB_EINTR)
		status = 130;

	char report[SCENE_PATH_MAX + 64];
	if (a->shard_n > 1)
		snprintf(report, sizeof report, "%s/batch-report.shard-%d-of-%d.json", bf->output_dir,
			 a->shard_k, a->shard_n);
	else
		snprintf(report, sizeof report, "%s/batch-report.json", bf->output_dir);
	fflush(stderr);
	batch_report_table(runs, nruns, stdout);
	fflush(stdout);
	if (batch_report_json(bf, runs, nruns, log_clock_s() - t0, status, report) == 0)
		log_info("batch: report in %s", report);
	else if (status == 0)
		status = 1;
	return status;
}

/* Read, expand and plan the batch (*warn: each run's loader warnings,
 * batch_plan's; the caller frees them). --strict: a warning of any run (of
 * any shard) refuses the batch, in the dry run as in the run; else the dry
 * run says them all here, and a run says its own shard's once, before they
 * start (app_batch_main). 0, or the exit status: 2 the batch is bad, 1 out
 * of memory. */
static int batch_prepare(const struct batch_args *a, struct batch_file *bf, struct batch_run **runs,
			 int *nruns, char ***warn)
{
	if (batch_file_load(a->file, bf) || batch_expand(bf, a->set, a->nset, runs, nruns))
		return 2;
	*warn = calloc((size_t)(*nruns ? *nruns : 1), sizeof **warn);
	if (!*warn) {
		log_error("out of memory planning the batch");
		return 1;
	}
	if (batch_plan(bf, *runs, *nruns, a->resume, *warn) || batch_set_is_bad(a, *runs, *nruns))
		return 2;
	if (a->strict && batch_say_warnings(*runs, *nruns, *warn, -1, 1))
		return 2;
	if (a->dry_run)
		batch_say_warnings(*runs, *nruns, *warn, -1, 0);
	return 0;
}

int app_batch_main(int argc, char **argv)
{
	struct batch_args a = {0};
	struct batch_file bf;
	struct batch_run *runs = NULL;
	int nruns = 0, status = 2, rc, *owner = NULL, echo = 0;
	char **warn = NULL; /* each run's loader warnings (batch_plan) */
	double t0 = log_clock_s();

	memset(&bf, 0, sizeof bf);
	rc = parse_args(argc, argv, &a);
	if (rc) {
		status = rc == 1 ? 0 : 2;
		goto end;
	}
	if (a.quiet)
		log_set_level(LOG_QUIET);
	/* under mpirun every rank reads the batch alike: rank 0 reports what is
	 * wrong with it, the others hold their copies and drop them */
	echo = dist_size() > 1 && dist_rank() != 0;
	if (echo)
		log_hold();
	if ((status = batch_prepare(&a, &bf, &runs, &nruns, &warn)))
		goto end; /* 2: the batch is bad, nothing ran */
	status = 2;
	int share = bf.share_simulation = bf.share_simulation && !a.no_share; /* the report says which */
	int groups = batch_group(runs, nruns, share);
	if (a.dry_run) {
		status = dist_rank() == 0 ? dry_run(&bf, runs, nruns, groups, share) : 0;
		goto end;
	}
	for (int i = 0; i < nruns; i++)
		if (runs[i].status == BATCH_BAD_INPUT)
			log_error("run %d/%d %s: bad input: %s", i + 1, nruns, runs[i].name, runs[i].message);
		else if (runs[i].status == BATCH_SKIPPED)
			log_info("run %d/%d %s: complete, skipped (--resume)", i + 1, nruns, runs[i].name);
	if (echo)
		log_release(0);

	app_signals_install();
	if (out_mkdirs(bf.output_dir)) {
		status = 1;
		goto end;
	}
	struct batch_opts opts = {.jobs = a.jobs, .backend_cli = a.backend};
	/* this shard's runs, and this rank's among them (batch_share.c) */
	owner = malloc((size_t)(nruns ? nruns : 1) * sizeof *owner);
	if (!owner) {
		log_error("out of memory");
		status = 1;
		goto end;
	}
	batch_share_select(runs, nruns, share, a.shard_k, a.shard_n, dist_rank(), dist_size(), owner);
	if (a.shard_n > 1)
		log_info("batch: shard %d of %d (counted from 0)", a.shard_k, a.shard_n);
	if (dist_size() > 1)
		batch_say_owned(owner, nruns);
	if (dist_rank() == 0) /* rank 0 speaks for the batch */
		batch_say_warnings(runs, nruns, warn, BATCH_PENDING, 0);
	rc = batch_exec(&bf, runs, nruns, &opts);
	batch_share_collect(runs, nruns, owner); /* rank 0 gets the other ranks' outcomes */
	if (dist_rank() != 0) { /* rank 0 reports every run */
		status = rc == NB_EINTR ? 130 : 0;
		goto end;
	}
	status = batch_finish(&bf, runs, nruns, &a, rc, t0);
end:
	if (echo)
		log_release(0);
	free(owner);
	for (int i = 0; warn && i < nruns; i++)
		free(warn[i]);
	free(warn);
	batch_runs_free(runs, nruns);
	batch_file_free(&bf);
	free(a.set);
	return status;
}
