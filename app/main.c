/* main.c - nbody-render: a scene file in, a movie of gravitating stars out.
 *
 *   nbody-render SCENE.yaml [--set KEY=VALUE]... [--backend auto|cuda|cpu]
 *                [--restart SNAPSHOT] [--dry-run] [--strict] [--frames N] [--fps N]
 *                [--preview TIME] [--quiet] [--version] [--help]
 *   nbody-render --list-keys [--markdown]
 *   nbody-render batch BATCH.yaml [--set ...] [--jobs N] [--dry-run] [--resume] [--no-share]
 *
 * The data flow is: parse the command line -> load and check the scene ->
 * (dry run: print it and stop) -> app_run (initial conditions, steps,
 * frames, outputs; app/run.c). Exit codes: 0 ok, 2 bad input, 1 runtime
 * failure, 130 interrupted. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dist/dist.h"
#include "../sim/cuda/gpu.h"
#include "app.h"
#include "estimate.h"
#include "habits.h"
#include "preview_fit.h"

#ifndef NB_VERSION
#define NB_VERSION "unknown"
#endif

static const char usage[] =
	"usage: nbody-render SCENE.yaml [--set KEY=VALUE]... [--backend auto|cuda|cpu]\n"
	"                    [--restart SNAPSHOT] [--dry-run] [--strict] [--frames N] [--fps N]\n"
	"                    [--preview TIME] [--quiet] [--version] [--help]\n"
	"       nbody-render batch BATCH.yaml [--set KEY=VALUE]... [--jobs N] [--dry-run] [--resume]\n"
	"                          [--no-share]\n";

static const char help[] =
	"\n"
	"Simulate the gravitating bodies a scene file describes and film them:\n"
	"an MP4 video, a PNG frame sequence, a preview JPEG, statistics and state\n"
	"CSVs, as the scene's output: keys say. Runs on an NVIDIA GPU when there\n"
	"is one, otherwise on the CPU (OpenMP).\n"
	"\n"
	"options:\n"
	"  --set KEY=VALUE   override any scene key by its dotted path; the value is\n"
	"                    checked exactly as in the file. Lists are indexed:\n"
	"                      --set simulation.dt=0.002\n"
	"                      --set bodies.0.count=5000\n"
	"                      --set camera.keys.0.position=[0,-5,2]\n"
	"  --backend B       auto (GPU if usable, else CPU), cuda, or cpu;\n"
	"                    overrides simulation.backend\n"
	"  --restart SNAP    continue the run that wrote snapshot SNAP\n"
	"                    (output.snapshots: snap_NNN.hdf5): the scene's bodies take\n"
	"                    its state, and frames SNAP's frame + 1 .. output.frames - 1\n"
	"                    are rendered. The scene must describe the same simulation\n"
	"                    (units, dt, steps_per_frame, solver keys, bodies and\n"
	"                    masses); a mismatch is refused (exit 2). On the CPU the\n"
	"                    result is bit for bit that of one uninterrupted run\n"
	"                    (docs/snapshots.md)\n"
	"  --dry-run         print the resolved scene (every key, defaults included,\n"
	"                    as YAML you can save and rerun) with an estimate of\n"
	"                    memory and work, then exit\n"
	"  --calibrate       measure this machine's rates for --dry-run's time estimate\n"
	"                    again (the CPU's, and the GPU's when the scene would run\n"
	"                    on one), cache them and print them; with --dry-run, then\n"
	"                    the dry run\n"
	"  --strict          warnings about the scene are errors (exit 2 before any work,\n"
	"                    --dry-run too): keys that do nothing with the chosen\n"
	"                    render.style, simulation.solver or camera.projection, and\n"
	"                    camera keys after the last frame; each warning names the key\n"
	"  --frames N        the same as --set output.frames=N\n"
	"  --fps N           the same as --set output.fps=N\n"
	"                    (options of ffmpeg and other programs, such as -o FILE,\n"
	"                    -r N, -s WxH, -frames:v N, -crf N, are refused with the\n"
	"                    exact --set that does what they do)\n"
	"  --preview TIME    shrink the scene to fit TIME on this machine (60s, 2m, 90):\n"
	"                    fewer bodies (each component's mass kept), a smaller frame,\n"
	"                    fewer frames (the simulated time kept), camera keys and\n"
	"                    snapshot times rescaled; prints the --set list it applied;\n"
	"                    refused (exit 2) under the least it can shrink to. With\n"
	"                    --dry-run: the shrunk scene and its estimate. Not for batch\n"
	"                    runs or --restart\n"
	"  --quiet           print nothing but errors\n"
	"  --version         print the version and exit\n"
	"  --list-keys       print every scene key with its type, default and meaning,\n"
	"                    then exit; with --markdown, as the tables of docs/scenes.md\n"
	"  --help            this text\n"
	"\n"
	"examples:\n"
	"  nbody-render scenes/plummer.yaml\n"
	"  nbody-render scenes/galaxy-collision.yaml --set bodies.0.disk.count=20000 --dry-run\n"
	"  nbody-render batch scenes/sweep-pericenter.yaml --jobs 2\n"
	"\n"
	"exit status: 0 success, 2 bad input (scene or command line; checked before\n"
	"any work, --dry-run included), 1 runtime failure (the run's partial outputs\n"
	"are removed), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP: the MP4 and the\n"
	"statistics are finished with the frames made).\n"
	"Scene reference: docs/scenes.md. Each run stores its resolved scene beside\n"
	"its outputs (NAME.scene.yaml), so any output can be reproduced.\n";

struct cli {
	const char *scene;
	const char **sets;
	const char **froms; /* froms[i]: the alias that made sets[i] ("--frames 10"), or NULL */
	char **owned;       /* the alias strings made here, freed by cli_free */
	int nsets, nowned;
	int strict;         /* --strict: warnings about the scene are errors */
	int backend; /* -1: scene's */
	int dry_run, quiet, calibrate;
	int list_keys, markdown; /* --list-keys [--markdown] */
	const char *restart; /* --restart SNAPSHOT, or NULL */
	const char *preview; /* --preview TIME, or NULL; its seconds: */
	double budget_s;
};

/* After the options: --list-keys prints the key reference (1: handled,
 * exit 0); without it a scene is needed. 0, 1 or NB_EINPUT. */
static int cli_finish(const struct cli *c)
{
	if (c->markdown && !c->list_keys) {
		log_error("--markdown goes with --list-keys");
		return NB_EINPUT;
	}
	if (c->list_keys) {
		if (dist_rank() == 0) /* under mpirun: once */
			app_list_keys(stdout, c->markdown);
		return 1;
	}
	if (!c->scene) {
		if (dist_rank() == 0) /* under mpirun: once (the others hold log_error) */
			fputs(usage, stderr);
		log_error("no scene file given (try scenes/plummer.yaml, or --help)");
		return NB_EINPUT;
	}
	return 0;
}

/* argv[*i] is an option this program does not have. A habit of another
 * tool (app/habits.h) that is an alias becomes its --set (its value taken,
 * *i moved past it); any other is refused, with the exact --set that does
 * what it does where the table knows it. 0 or NB_EINPUT. */
static int cli_habit(int argc, char **argv, int *i, struct cli *c)
{
	const char *a = argv[*i], *v = NULL;
	const struct app_habit *h = app_habit_find(a, &v);
	if (!h) {
		if (a[1] == '-' && strchr(a, '.') && strchr(a, '=')) /* --render.width=1920 */
			log_error("unknown option '%s': use --set %s", a, a + 2);
		else
			log_error("unknown option '%s' (see --help)", a);
		return NB_EINPUT;
	}
	if (h->value && !v && *i + 1 < argc && (argv[*i + 1][0] != '-' || !h->alias))
		v = argv[++*i];
	if (!h->alias)
		return app_habit_refuse(h, v);
	char kv[SCENE_PATH_MAX + 64], from[SCENE_PATH_MAX + 64];
	if (app_habit_set(h, v, kv, sizeof kv))
		return NB_EINPUT;
	snprintf(from, sizeof from, "%s %s", h->opt, v);
	char *own = malloc(strlen(kv) + strlen(from) + 2);
	if (!own)
		return NB_ERUNTIME;
	strcpy(own, kv);
	strcpy(own + strlen(kv) + 1, from);
	c->owned[c->nowned++] = own;
	c->froms[c->nsets] = own + strlen(kv) + 1;
	c->sets[c->nsets++] = own;
	return 0;
}

static void cli_free(struct cli *c)
{
	for (int i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	free(c->owned);
	free(c->froms);
	free(c->sets);
}

/* Returns 0, 1 (handled: --help/--version/--list-keys, exit 0) or NB_EINPUT. */
static int cli_parse(int argc, char **argv, struct cli *c)
{
	c->sets = calloc((size_t)argc, sizeof *c->sets);
	c->froms = calloc((size_t)argc, sizeof *c->froms);
	c->owned = calloc((size_t)argc, sizeof *c->owned);
	c->backend = -1;
	if (!c->sets || !c->froms || !c->owned)
		return NB_ERUNTIME;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			if (dist_rank() == 0) { /* under mpirun: once */
				fputs(usage, stdout);
				fputs(help, stdout);
			}
			return 1;
		} else if (strcmp(a, "--version") == 0) {
			if (dist_rank() == 0)
				printf("nbody-render %s\n", NB_VERSION);
			return 1;
		} else if (strcmp(a, "--list-keys") == 0) {
			c->list_keys = 1;
		} else if (strcmp(a, "--markdown") == 0) {
			c->markdown = 1;
		} else if (strcmp(a, "--dry-run") == 0) {
			c->dry_run = 1;
		} else if (strcmp(a, "--calibrate") == 0) {
			c->calibrate = 1;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			c->quiet = 1;
		} else if (strcmp(a, "--set") == 0 || strncmp(a, "--set=", 6) == 0) {
			const char *kv = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
			if (!kv || !strchr(kv, '=')) {
				log_error("--set needs KEY=VALUE, e.g. --set simulation.dt=0.002");
				return NB_EINPUT;
			}
			c->sets[c->nsets++] = kv;
		} else if (strcmp(a, "--backend") == 0 || strncmp(a, "--backend=", 10) == 0) {
			const char *b = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");
			if (strcmp(b, "auto") == 0)
				c->backend = SCENE_BACKEND_AUTO;
			else if (strcmp(b, "cuda") == 0)
				c->backend = SCENE_BACKEND_CUDA;
			else if (strcmp(b, "cpu") == 0)
				c->backend = SCENE_BACKEND_CPU;
			else {
				log_error("--backend: expected auto, cuda or cpu, got '%s'", b);
				return NB_EINPUT;
			}
		} else if (strcmp(a, "--restart") == 0 || strncmp(a, "--restart=", 10) == 0) {
			const char *p = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
			if (!p || !p[0]) {
				log_error("--restart needs a snapshot path, e.g. --restart out/snaps/snap_003.hdf5");
				return NB_EINPUT;
			}
			c->restart = p;
		} else if (strcmp(a, "--preview") == 0 || strncmp(a, "--preview=", 10) == 0) {
			c->preview = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");
			if (app_preview_parse(c->preview, &c->budget_s))
				return NB_EINPUT;
		} else if (strcmp(a, "--strict") == 0) {
			c->strict = 1;
		} else if (a[0] == '-' && a[1]) {
			int rc = cli_habit(argc, argv, &i, c);
			if (rc)
				return rc;
		} else if (!c->scene) {
			c->scene = a;
		} else {
			log_error("more than one scene file given ('%s' and '%s'); use `nbody-render batch` for several runs",
				  c->scene, a);
			return NB_EINPUT;
		}
	}
	return cli_finish(c);
}

/* Before anything opens a file: a closed stdin, stdout or stderr (`2>&-`)
 * gets a stand-in on /dev/null opened the wrong way round (writes fail
 * with EBADF, as they would on the closed descriptor), so no output file
 * is ever opened as descriptor 1 or 2 and then written into by a
 * message. A closed pipe on stdout or stderr is a failed write (EPIPE),
 * not SIGPIPE's death mid-write: the logger then gives stderr up
 * (scene/log.h), and stdout's failure is checked at the end. Forked batch
 * runs inherit both. */
static void stdio_guard(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd) { /* cannot happen: fd is the lowest free one */
			dup2(nfd, fd);
			close(nfd);
		}
	}
	signal(SIGPIPE, SIG_IGN);
}

/* Over MPI ranks every rank makes the input checks, and the ranks other
 * than 0 hold their messages (held): rank 0 reports. The verdict is
 * agreed (dist_agree); a rank that failed where rank 0 did not prints
 * what it held. On one rank: rc. */
static int checks_agreed(int rc, int held)
{
	if (dist_size() < 2)
		return rc;
	int who = -1, all = dist_agree(rc, &who);
	if (held)
		log_release(rc != 0 && who == dist_rank());
	return all;
}

/* The scene with the user's overrides; with --preview, loaded again with
 * the fit's after them (app/preview_fit.h). 0 or the error (logged). */
static int cli_load(const struct cli *c, struct scene *sc)
{
	struct app_preview p;
	enum log_level level = log_get_level();
	if (c->preview) /* its warnings are said by the second load */
		log_set_level(LOG_QUIET);
	int rc = scene_load_from(c->scene, c->sets, c->froms, c->nsets, sc);
	if (rc == 0) /* units: snapshot: the file's units, for the run and --dry-run alike */
		rc = sim_scene_units_resolve(sc);
	log_set_level(level);
	if (rc || !c->preview)
		return rc;
	if (c->restart) {
		log_error("--preview changes the simulation, --restart needs the same one: use one of them");
		return NB_EINPUT;
	}
	rc = app_preview_fit(sc, c->budget_s, c->preview, c->sets, c->froms, c->nsets, &p);
	if (rc == 0)
		rc = scene_load_from(c->scene, p.sets, p.froms, p.nsets, sc);
	if (rc == 0)
		rc = sim_scene_units_resolve(sc);
	app_preview_free(&p);
	return rc;
}

int main(int argc, char **argv)
{
	stdio_guard();
	/* under mpirun (an MPI build): a single scene is one simulation over
	 * the ranks, a batch spreads its runs over them (dist/) */
	if (dist_init(&argc, &argv))
		return 1;
	/* a host's ranks spread over its GPUs, before any CUDA call; a batch
	 * forks its runs, so it only says which GPUs (CUDA_VISIBLE_DEVICES) */
	const int batch = argc >= 2 && strcmp(argv[1], "batch") == 0;
	if (dist_size() > 1 && batch)
		app_batch_share_gpus(dist_local_rank(), dist_local_size());
	if (batch)
		return dist_finish(app_batch_main(argc - 1, argv + 1));
	if (dist_size() > 1) {
		int dev = 0, count = 0;
		(void)gpu_bind_local(dist_local_rank(), &dev, &count);
	}

	struct cli cli = {0};
	static struct scene sc; /* large: keep it off the stack */
	struct app_result res = {0};
	const int held = dist_size() > 1 && dist_rank() != 0;
	int checking = 1; /* until checks_agreed */
	if (held)
		log_hold();
	int rc = cli_parse(argc, argv, &cli);
	if (rc == 1) {
		rc = 0;
		goto end;
	}
	if (rc)
		goto end;
	/* rank 0 speaks for the run; the others only report errors */
	log_set_level(cli.quiet || dist_rank() != 0 ? LOG_QUIET : LOG_NORMAL);
	scene_strict_set(cli.strict);
	rc = cli_load(&cli, &sc);
	if (rc)
		goto end;
	rc = app_preflight(&sc, cli.backend); /* the same refusals in both modes */
	int restart_frame = -1;
	if (rc == 0 && cli.restart)
		rc = sim_snap_restart_check(cli.restart, &sc, &restart_frame);
	if (rc == 0 && cli.restart) { /* its snapshot is an input: never written over or removed */
		struct app_view rv = {.sc = &sc, .restart = cli.restart, .restart_frame = restart_frame};
		rc = app_outputs_check(&rv, 0);
	}
	if (rc)
		goto end;
	checking = 0;
	if ((rc = checks_agreed(rc, held)))
		goto end;
	if ((cli.dry_run || cli.calibrate) && dist_rank() != 0)
		goto end;
	if (cli.dry_run || cli.calibrate) { /* --calibrate: app/calibrate_fresh.c */
		rc = app_calibrate_dry_run(&sc, cli.backend, cli.calibrate, cli.dry_run, stdout);
		if (rc == 0 && cli.restart && cli.dry_run)
			printf("# restart: from %s, frame %d: renders frames %d .. %d\n", cli.restart,
			       restart_frame, restart_frame + 1, sc.output.frames - 1);
		goto end;
	}
	dist_run_over_ranks(); /* over MPI ranks: rank 0 ends the run (dist.h) */
	app_estimate_warn(&sc, cli.backend); /* "expected about 12 min": over 3 min */
	app_signals_install();
	rc = app_run_restart(&sc, cli.backend, cli.restart, restart_frame, &res);
end:
	if (checking) /* this rank failed a check (or said --help): agree */
		rc = checks_agreed(rc, held);
	/* --dry-run, --help and --version write to stdout: a closed pipe or
	 * a full disk there fails the command (exit 1), said on stderr */
	errno = 0;
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
		log_error("standard output: cannot write: %s",
			  errno ? strerror(errno) : "write error");
		rc = NB_ERUNTIME;
	}
	cli_free(&cli);
	return dist_finish(log_exit_status(rc));
}
