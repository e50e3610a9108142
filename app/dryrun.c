/* dryrun.c - --dry-run: the resolved scene as YAML (loadable again), then
 * an estimate of memory and work as YAML comments, so the whole output can
 * be saved and rerun, ending with the expected wall time per stage on this
 * machine (app/estimate.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/cuda/gpu.h"
#include "../engine/engine.h"
#include "../output/output.h"
#include "../scene/scene_accuracy.h"
#include "app.h"
#include "estimate.h"
#include "outputs.h"

/* output.snapshots and output.fits_dir: how many files and how large. */
static void report_files(const struct scene *sc, long n, int gpu, FILE *f)
{
	char b[32], all[32];
	if (sc->output.snapshots.dir[0]) {
		int count = 0;
		for (int fr = 0; fr < sc->output.frames; fr++)
			count += out_snap_number(sc, fr) >= 0;
		double one = out_snap_bytes((size_t)n, sc->units);
		app_human_bytes(one, b, sizeof b);
		app_human_bytes(one * count, all, sizeof all);
		fprintf(f, "# snapshots: %d HDF5 files in %s (every %d frames and the last), %s each, %s in all\n",
			count, sc->output.snapshots.dir, sc->output.snapshots.every, b, all);
	}
	if (sc->output.fits_dir[0]) {
		double one = (double)sc->render.width * sc->render.height * 3 * 4 + 2880 * 2;
		app_human_bytes(one, b, sizeof b);
		app_human_bytes(one * sc->output.frames, all, sizeof all);
		fprintf(f, "# FITS maps: %d files in %s (float32, %dx%dx3), %s each, %s in all%s\n",
			sc->output.frames, sc->output.fits_dir, sc->render.width, sc->render.height, b,
			all, gpu ? " (GPU: one HDR download per frame)" : "");
	}
}

/* The galaxy report is a plain table; print it as YAML comments so the
 * dry-run output stays loadable. */
static void comment_galaxy_report(const struct scene *sc, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	sim_galaxy_report(sc, m);
	fclose(m);
	fprintf(f, "\n# --- disk galaxies ---\n");
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		fprintf(f, "# %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
}

/* Individual time steps: the levels the initial accelerations ask for,
 * from a sample of at most ~20000 bodies (every k-th) walked through the
 * whole tree on the CPU (the initial state is built for it), and the
 * force evaluations per body per frame they imply. The levels drift as
 * the scene evolves (a collision deepens the potential wells), so this is
 * the start's figure, not the run's. */
static void report_levels(const struct scene *sc, long n, FILE *f)
{
	struct app_levels lv;
	int rc = app_estimate_levels(sc, n, &lv);
	if (rc) {
		fprintf(f, "# individual time steps: no estimate (%s)\n", rc == NB_EINPUT
			? "the initial state was not built" : "the initial forces failed");
		return;
	}
	const int bpf = sc->simulation.blocks_per_frame, spf = sc->simulation.steps_per_frame;
	char h[512];
	sim_ts_format_hist(lv.hist, h, sizeof h);
	fprintf(f, "# individual time steps: dt_max %g (scene time units), eta %g; initial levels "
		"of %zu sampled bodies: %s\n",
		sc->simulation.dt * spf / bpf, sc->simulation.eta, lv.sampled, h);
	fprintf(f, "# individual time steps: %.2f force evaluations per body per frame at the "
		"start (shared steps: %d), %ld ticks (tree builds or refits) per frame\n",
		lv.evals_per_body * bpf, spf, lv.ticks * bpf);
}

/* The step against the softening crossing time of the initial state
 * (sim_diag_crossing_time; the same figure app_run warns on). */
static void report_crossing(const struct scene *sc, long n, FILE *f)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	if (n <= 0 || sim_ic_build(sc, &st) != 0) {
		fprintf(f, "# time step: no estimate (the initial state was not built)\n");
		return;
	}
	struct sim_units u;
	scene_units(sc, &u);
	double v = 0;
	const double tc = sim_diag_crossing_time(&st, scene_softening(sc), &v) / u.time;
	const int gal = sc->units == SCENE_UNITS_GALACTIC;
	fprintf(f, "# time step: dt %g%s is %.2g softening crossing times (softening / rms speed = %.3g%s, "
		"rms speed %.3g%s)%s\n",
		sc->simulation.dt, gal ? " Myr" : "", sc->simulation.dt / tc, tc, gal ? " Myr" : "",
		v / u.velocity, gal ? " km/s" : "",
		sc->simulation.timesteps == SCENE_TIMESTEPS_SHARED && sc->simulation.dt > 2 * tc
			? "; the energy will drift (docs/PHYSICS.md, Individual time steps)"
			: "");
	sim_state_free(&st);
}

/* Each snapshot entry: its format, units and what it keeps (a count pass). */
/* simulation.accuracy's row and what it measured on the default scene,
 * beside the other presets' (scene/scene_accuracy.h). */
static void report_accuracy(const struct scene *sc, FILE *f)
{
	const struct scene_accuracy_row *me = scene_accuracy_row(sc->simulation.accuracy);
	if (!me)
		return;
	fprintf(f, "# accuracy: %s (theta %g, softening x%g, step x%g); measured on "
		"scenes/galaxy-collision.yaml on an H200 (docs/BENCHMARKS.md):", me->name,
		sc->simulation.theta, me->soft_x, me->dt_x);
	const struct scene_accuracy_row *r;
	for (int a = 0; (r = scene_accuracy_row((enum scene_accuracy)a)) != NULL; a++)
		fprintf(f, "%s %s %.1f s at |dE/E0| %.1e%s", a ? "," : "", r->name, r->movie_s,
			r->max_de, r == me ? " (this one)" : "");
	fprintf(f, "\n");
}

static void comment_snapshots(const struct scene *sc, FILE *f)
{
	struct sim_units u;
	scene_units(sc, &u);
	for (int k = 0; k < sc->nbodies; k++) {
		struct sim_snap_info in;
		if (sc->bodies[k].model != SCENE_MODEL_SNAPSHOT || sim_snap_load(sc, k, &u, NULL, 0, 0, &in))
			continue;
		fprintf(f, "\n# --- snapshot bodies.%d (%s) ---\n", k, sc->bodies[k].name);
		fprintf(f, "# format: %s, %d file%s\n", sim_snap_format_title(in.format),
			in.num_files, in.num_files == 1 ? "" : "s");
		fprintf(f, "# units: %s\n", in.units);
		fprintf(f, "# stored -> scene units: length x %.7g, velocity x %.7g, mass x %.7g\n",
			in.length, in.velocity, in.mass);
		static const char *const tn[SIM_SNAP_NTYPES] = {"gas", "halo", "disk", "bulge", "stars", "bh"};
		for (int t = 0; t < SIM_SNAP_NTYPES; t++)
			if (in.in_file[t] > 0)
				fprintf(f, "# type %d (%s): %llu in the snapshot, %zu kept%s\n", t, tn[t],
					(unsigned long long)in.in_file[t], in.kept[t],
					sc->bodies[k].snap.types[t].draw ? "" : " (not drawn)");
	}
}

int app_dry_run(const struct scene *sc, int backend_cli, FILE *f)
{
	int rc = scene_emit(sc, f);
	if (rc) {
		log_error("--dry-run: cannot write the resolved scene to standard output: %s",
			  strerror(errno));
		return rc;
	}
	long n = sim_scene_body_count(sc);
	if (n < 0)
		return NB_EINPUT;
	double steps = (double)(sc->output.frames - 1) * sc->simulation.steps_per_frame;
	double px = (double)sc->render.width * sc->render.height;
	double host = app_host_bytes(sc, n);
	char hb[32], gb[32], ab[32] = "unknown";
	app_human_bytes(host, hb, sizeof hb);
	if (sim_mem_available() >= 0)
		app_human_bytes((double)sim_mem_available(), ab, sizeof ab);
	fprintf(f, "\n# --- estimate ---\n");
	fprintf(f, "# bodies: %ld\n", n);
	fprintf(f, "# steps: %.0f (%d frames x %d steps/frame)\n", steps, sc->output.frames,
		sc->simulation.steps_per_frame);
	fprintf(f, "# force interactions: %.3g per step, %.3g in all%s\n", app_estimate_interactions(sc, (double)n),
		app_estimate_interactions(sc, (double)n) * (steps + 1),
		sc->simulation.solver == SCENE_SOLVER_DIRECT ? " (each pair once)" : " (rough tree model)");
	fprintf(f, "# host memory: %s needed (bodies, tree, frame buffers, a snapshot or map built in memory), %s available\n", hb, ab);
	fprintf(f, "# pixels splatted: %.3g (%d frames of %dx%d)\n", px * sc->output.frames, sc->output.frames,
		sc->render.width, sc->render.height);
	int backend = backend_cli >= 0 ? backend_cli : (int)sc->simulation.backend;
	report_files(sc, n, backend != SCENE_BACKEND_CPU, f);
	app_outputs_list(sc, f);
	if (backend != SCENE_BACKEND_CPU) {
		char why[256], name[128];
		app_human_bytes((double)engine_gpu_bytes_needed(sc, (size_t)n), gb, sizeof gb);
		size_t fr = 0, tot = 0;
		if (gpu_probe(why, sizeof why) && gpu_device_info(name, sizeof name, &fr, &tot) == 0) {
			char fb[32];
			app_human_bytes((double)fr, fb, sizeof fb);
			fprintf(f, "# GPU memory: %s needed, %s free on %s\n", gb, fb, name);
		} else {
			fprintf(f, "# GPU memory: %s needed; no GPU here (%s): the CPU would run it\n", gb, why);
		}
	}
	if (sc->simulation.solver != SCENE_SOLVER_NONE) {
		report_crossing(sc, n, f);
		report_accuracy(sc, f);
	}
	if (sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL)
		report_levels(sc, n, f);
	comment_snapshots(sc, f);
	for (int k = 0; k < sc->nbodies; k++) {
		if (sc->bodies[k].model == SCENE_MODEL_DISK_GALAXY) {
			comment_galaxy_report(sc, f);
			break;
		}
	}
	return app_estimate_print(sc, n, backend_cli, f);
}
