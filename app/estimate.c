/* estimate.c - the model of a run's wall time: the scene's work per stage
 * times this machine's rates (estimate.h), and the lines that print it.
 *
 * The work per stage (each scales as below; the rates carry the rest):
 *   creation  bodies (a disk galaxy's bodies at their own rate: the disk's
 *             distribution function and potential tables cost more)
 *   forces    (steps + 1) evaluations (shared steps, kick-drift-kick with
 *             the first force at the start) x interactions per step:
 *             n (n - 1) / 2 for the direct sum, n 60 log2(n) / theta^2
 *             for the tree (app_estimate_interactions)
 *   render    frames x (pixels x rate + bodies x motion-blur samples x rate)
 *   encode    frames x pixels; PNG frames x pixels
 *   files     bytes of the snapshots and FITS maps
 * The stages are added: on a small machine the writer thread's encoding
 * competes with the simulation's threads for the same cores.
 *
 * Try: nbody-render scenes/plummer.yaml --dry-run | tail -12 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../output/output.h"
#include "../render/render.h"
#include "app.h"
#include "batch.h"
#include "estimate.h"

/* Bodies of disk galaxies (created at create_disk), at most n. */
static double disk_bodies(const struct scene *sc, long n)
{
	double d = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model == SCENE_MODEL_DISK_GALAXY)
			d += (double)(b->disk.count + b->bulge.count + b->halo.count);
	}
	return d < (double)n ? d : (double)n;
}

/* Bytes of the snapshots and FITS maps the run writes. */
static double file_bytes(const struct scene *sc, long n)
{
	double bytes = 0;
	if (sc->output.snapshots.dir[0]) {
		int count = 0;
		for (int fr = 0; fr < sc->output.frames; fr++)
			count += out_snap_number(sc, fr) >= 0;
		bytes += out_snap_bytes((size_t)n, sc->units) * count;
	}
	if (sc->output.fits_dir[0])
		bytes += ((double)sc->render.width * sc->render.height * 12 + 5760) * sc->output.frames;
	return bytes;
}

void app_estimate_compute(const struct scene *sc, long n, const struct app_rates *r,
			  struct app_estimate *e)
{
	memset(e, 0, sizeof *e);
	const double N = n > 0 ? (double)n : 0, frames = sc->output.frames;
	const double px = (double)sc->render.width * sc->render.height;
	const double dn = disk_bodies(sc, n);
	e->stage_s[APP_STAGE_CREATE] = dn * r->create_disk + (N - dn) * r->create_body;
	if (sc->simulation.solver != SCENE_SOLVER_NONE) {
		double evals = (frames - 1) * sc->simulation.steps_per_frame + 1;
		double per = app_estimate_interactions(sc, N);
		e->stage_s[APP_STAGE_SIM] = evals * per *
			(sc->simulation.solver == SCENE_SOLVER_DIRECT ? r->direct_pair : r->tree_inter);
	}
	e->stage_s[APP_STAGE_RENDER] =
		frames * (px * r->frame_px + N * render_blur_samples(sc) * r->frame_body);
	if (sc->output.video[0])
		e->stage_s[APP_STAGE_ENCODE] = frames * px * r->encode_px;
	if (sc->output.png_dir[0])
		e->stage_s[APP_STAGE_PNG] = frames * px * r->png_px;
	e->stage_s[APP_STAGE_FILES] = file_bytes(sc, n) * r->file_byte;
	for (int s = 0; s < APP_NSTAGES; s++)
		e->total_s += e->stage_s[s];
}

void app_rates_describe(const struct app_rates_info *info, char *buf, size_t len)
{
	char age[32] = "at an unknown time";
	double a = info->measured_at > 0 ? difftime(time(NULL), (time_t)info->measured_at) : -1;
	if (a >= 0 && a < 90)
		snprintf(age, sizeof age, "%.0f s ago", a);
	else if (a >= 0 && a < 5400)
		snprintf(age, sizeof age, "%.0f min ago", a / 60);
	else if (a >= 0 && a < 172800)
		snprintf(age, sizeof age, "%.0f h ago", a / 3600);
	else if (a >= 0)
		snprintf(age, sizeof age, "%.0f days ago", a / 86400);
	switch (info->source) {
	case APP_RATES_FILE:
		snprintf(buf, len, "rates read from %s (NB_RATES_FILE), measured %s", info->path, age);
		break;
	case APP_RATES_CACHED:
		snprintf(buf, len, "rates measured %s on this machine (calibration, %.1f s; cached in %s)",
			 age, info->calib_s, info->path);
		break;
	default:
		if (info->cached)
			snprintf(buf, len, "rates measured now on this machine (calibration, %.1f s; cached "
				 "in %s)", info->calib_s, info->path);
		else
			snprintf(buf, len, "rates measured now on this machine (calibration, %.1f s; not "
				 "cached: %s)", info->calib_s, info->why);
	}
}

int app_estimate_print(const struct scene *sc, long n, int gpu, FILE *f)
{
	static const char *const name[APP_NSTAGES] = {
		"creation of the bodies", "simulation", "rendering", "encoding (output.video)",
		"PNG frames (output.png_dir)", "snapshots and FITS maps"};
	struct app_rates r;
	struct app_rates_info info;
	int rc = app_rates_get(&r, &info);
	if (rc)
		return rc;
	struct app_estimate e;
	app_estimate_compute(sc, n, &r, &e);
	char b[32], line[1024];
	fprintf(f, "\n# --- expected wall time on this machine ---\n");
	for (int s = 0; s < APP_NSTAGES; s++) {
		batch_format_duration(e.stage_s[s], b, sizeof b);
		fprintf(f, "# time %-28s %9s\n", name[s], b);
	}
	batch_format_duration(e.total_s, b, sizeof b);
	fprintf(f, "# time %-28s %9s (%.4g s)\n", "in all", b, e.total_s);
	app_rates_describe(&info, line, sizeof line);
	fprintf(f, "# time: %s; encoding, PNG and files: reference rates scaled by this machine's "
		"rendering speed\n", line);
	if (gpu)
		fprintf(f, "# time: the GPU's rates are not measured yet: these are the CPU's\n");
	return 0;
}

void app_estimate_warn(const struct scene *sc, int backend_cli)
{
	int backend = backend_cli >= 0 ? backend_cli : (int)sc->simulation.backend;
	long n = sim_scene_body_count(sc);
	if (backend != SCENE_BACKEND_CPU || n < 0)
		return; /* the GPU's rates are not measured: no claim */
	struct app_rates r;
	struct app_rates_info info;
	int have = app_rates_peek(&r, &info) == 0;
	if (!have)
		r = app_rates_reference;
	struct app_estimate e;
	app_estimate_compute(sc, n, &r, &e);
	if (e.total_s <= APP_ESTIMATE_WARN_S)
		return;
	char b[32];
	if (e.total_s < 3600)
		snprintf(b, sizeof b, "%.0f min", e.total_s / 60);
	else
		snprintf(b, sizeof b, "%.1f h", e.total_s / 3600);
	log_info("expected about %s on this machine%s; --dry-run for the stages", b,
		 have ? "" : " (reference rates: --dry-run measures this machine's)");
}

double app_estimate_batch_run(const struct batch_run *r, const struct app_rates *rates)
{
	struct scene *sc = malloc(sizeof *sc);
	char msg[1024];
	if (!sc || !r->loaded || batch_scene_load(r, sc, msg, sizeof msg)) {
		free(sc);
		return -1;
	}
	struct app_estimate e;
	app_estimate_compute(sc, r->bodies, rates, &e);
	free(sc);
	if (r->group >= 0 && r->group != r->index) /* simulated by its group's run */
		e.total_s -= e.stage_s[APP_STAGE_CREATE] + e.stage_s[APP_STAGE_SIM];
	return e.total_s;
}

void app_estimate_batch_print(double total_s, const struct app_rates_info *info, FILE *f)
{
	char b[32], line[1600];
	batch_format_duration(total_s, b, sizeof b);
	app_rates_describe(info, line, sizeof line);
	fprintf(f, "# expected wall time: %s in all (%.4g s; the runs one at a time, each run's "
		"expected_s above)\n# time: %s\n", b, total_s, line);
}
