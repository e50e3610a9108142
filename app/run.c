/* run.c - one render run: scene -> bodies -> steps -> frames -> files,
 * filmed through one or several views (app_run_views; app_run is one view).
 *
 * Frame 0 shows the initial state; each later frame follows
 * simulation.steps_per_frame leapfrog steps. One simulation drives every
 * view (struct run_view, run_view.h): each has its own camera, renderer,
 * writer thread, statistics file and state CSVs, and fails alone. The one
 * frame loop (app/frames.c) drives the simulation and every view on either
 * backend, through the renderer interface (app/renderer.h); on the GPU
 * simulation, rendering and encoding overlap. Every output appears
 * under its final name only when complete; each view's resolved scene is
 * written last, so it marks a finished view. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dist/dist.h"
#include "../output/output.h"
#include "app.h"
#include "progress.h"
#include "run_view.h"

/* Emit the resolved scene to PATH via a temp name (sim/outfile.c). */
static int write_resolved_scene(const struct scene *sc, const char *path)
{
	char tmp[SCENE_PATH_MAX + 64];
	int rc = out_mkdirs_for(path);
	if (rc)
		return rc;
	FILE *f = sim_outfile_fopen(path, tmp, sizeof tmp);
	if (!f)
		return NB_ERUNTIME;
	rc = scene_emit(sc, f);
	int werr = rc ? errno : 0;
	if (fclose(f) != 0 && !rc) {
		werr = errno;
		rc = NB_ERUNTIME;
	}
	if (rc)
		log_error("%s (output.resolved_scene): cannot write it: %s", path,
			  werr ? strerror(werr) : "the scene could not be emitted");
	return sim_outfile_commit(tmp, path, rc == 0) ? NB_ERUNTIME : rc;
}

/* Open view v's outputs before any frame: the writer thread, the
 * statistics file. */
static int view_open(struct run_view *v)
{
	const struct scene *sc = v->sc;
	int rc = 0;
	if (v->mute) { /* rank 0 writes; this rank renders its bodies for it */
		v->frames = app_outputs_want_frames(sc);
		return 0;
	}
	struct out_video_meta meta;
	app_video_meta(sc, &meta);
	if (app_outputs_want_frames(sc) && (rc = out_writer_open_meta(sc, 4, &meta, &v->w)))
		return rc;
	if (sc->output.stats[0])
		rc = sim_stats_open(sc->output.stats, &v->stats);
	return rc;
}

/* Remove what view v put in place, after it failed or was interrupted:
 * every row of the outputs table it marked (app_view_placed), except,
 * after an interrupt, the rows whose fate keeps them (the MP4 with the
 * frames so far, the statistics up to the last frame, the snapshots that
 * --restart continues from). Regular files only (app_out_remove_owned). */
static void view_remove_outputs(struct run_view *v)
{
	char path[SCENE_PATH_MAX + 64];
	for (int i = 0; i < app_outputs_n; i++) {
		const struct app_out_kind *k = &app_outputs[i];
		struct run_placed *p = &v->out[i];
		if (!p->placed || (v->rc == NB_EINTR && k->fate == APP_OUT_KEEP_ON_INTR))
			continue;
		if (!app_out_path(v->sc, i, path)[0])
			continue;
		if (k->shape == APP_OUT_FILE)
			app_out_remove_owned(path, "removing the outputs of this failed run");
		else if (p->first >= 0)
			app_out_remove_members(k, path, p->first, p->last + 1);
		*p = (struct run_placed){0, -1, -1};
	}
}

/* A time as text: tenths of a second, one significant digit below 0.05 s
 * (what ran is not "0.0 s"; always plain seconds, so that
 * tools/same-frames.sh's pattern for times reads every one alike). */
static void stage_time(double s, char *buf, size_t len)
{
	int decimals = 1;
	for (double lim = 0.05; decimals < 9 && s < lim; lim /= 10)
		decimals++;
	snprintf(buf, len, "%.*f s", decimals, s);
}

/* "done: N frames in X s (...)": the stages this view ran, each with its
 * time; a stage it had no output for (no video: no encoding; no PNG
 * frames) is not named. N and the steps are this run's: after --restart
 * (first > 0) the snapshot's frames are the earlier run's. */
static void view_say_done(const struct run_view *v, const char *who, int first)
{
	const struct app_result *res = v->res;
	const struct scene *sc = v->sc;
	char stages[512], t[32];
	size_t n = 0;
	const int frames = res->frames_done > first ? res->frames_done - first : 0;
	const long steps =
		app_progress_steps(res->frames_done, first, sc->simulation.steps_per_frame);
	stage_time(res->sim_s, t, sizeof t);
	n += (size_t)snprintf(stages + n, sizeof stages - n, "simulation %s: %ld step%s", t, steps,
			      steps == 1 ? "" : "s");
	if (steps > 0 && res->sim_s > 0)
		n += (size_t)snprintf(stages + n, sizeof stages - n, ", %.3g steps/s",
				      steps / res->sim_s);
	if (app_outputs_want_frames(sc)) {
		stage_time(res->render_s, t, sizeof t);
		n += (size_t)snprintf(stages + n, sizeof stages - n, ", rendering %s", t);
	}
	if (sc->output.video[0]) {
		stage_time(res->encode_s, t, sizeof t);
		n += (size_t)snprintf(stages + n, sizeof stages - n, ", encoding %s on its own thread", t);
	}
	if (sc->output.png_dir[0]) {
		stage_time(res->png_s, t, sizeof t);
		snprintf(stages + n, sizeof stages - n, ", PNG frames %s of CPU on the PNG threads", t);
	}
	if (first > 0)
		n += (size_t)snprintf(stages + n, sizeof stages - n,
				      "; restarted: frames %d-%d, the %d before were the snapshot's run's",
				      first, res->frames_done - 1, first);
	stage_time(res->wall_s, t, sizeof t);
	log_info("%sdone: %d frames in %s (%s)", who, frames, t, stages);
}

/* The end of a run: every row of the outputs table this view put in place
 * (after an interrupt: what it keeps), each with its path and size as it
 * is on disk now, and their total. */
static void view_list_outputs(const struct run_view *v, const char *who)
{
	char line[APP_OUTPUTS_MAX][2 * SCENE_PATH_MAX + 64], size[32];
	long long total = 0, bytes;
	int count = 0;
	for (int i = 0; i < app_outputs_n; i++) {
		const struct run_placed *p = &v->out[i];
		int there = app_outputs[i].shape == APP_OUT_FILE
				    ? p->placed
				    : p->first >= 0 && p->last >= p->first;
		if (there && app_out_written(v->sc, i, p->first, p->last, line[count],
					     sizeof line[count], &bytes)) {
			total += bytes;
			count++;
		}
	}
	if (!count)
		return;
	app_out_size_text(total, size, sizeof size);
	log_info("%s%s %d output%s, %s in all:", who, v->rc == NB_EINTR ? "kept" : "wrote", count,
		 count == 1 ? "" : "s", size);
	for (int i = 0; i < count; i++)
		log_info("%s  %s", who, line[i]);
}

/* Finish view v after the frames (rc: how the simulation ended): close its
 * outputs, keep them when all went well, store its resolved scene last;
 * when anything failed, remove what it put in place. */
static void view_close(struct run_view *v, int rc, int nv, int k, double t_start, int first)
{
	struct app_result *res = v->res;
	if (v->rc == 0)
		v->rc = rc;
	if (v->w) {
		res->encode_s = out_writer_busy_seconds(v->w);
		res->png_s = out_writer_png_seconds(v->w);
		int wrc = out_writer_close(&v->w, v->rc == 0, v->rc == NB_EINTR);
		if (v->rc == 0)
			v->rc = wrc;
		/* interrupted, the writer finishes the video with the frames so far */
		if (v->rc == NB_EINTR && wrc == 0 && res->frames_done > 0)
			app_view_placed(v, APP_OUT_VIDEO, -1);
		if (v->rc == 0) { /* the writer closed well: its files are in place */
			app_view_placed(v, APP_OUT_VIDEO, -1);
			app_view_placed(v, APP_OUT_PREVIEW, -1);
			app_view_placed(v, APP_OUT_PNG, 0);
			app_view_placed(v, APP_OUT_PNG, v->sc->output.frames - 1);
		}
	}
	if (v->stats) {
		/* An interrupted run keeps its statistics up to the last frame. */
		int src = sim_stats_close(v->stats, v->sc->output.stats, v->rc == 0 || v->rc == NB_EINTR);
		v->stats = NULL;
		if (v->rc == 0)
			v->rc = src;
		if (v->rc == 0)
			app_view_placed(v, APP_OUT_STATS, -1);
	}
	if (v->mute) { /* rank 0's files are rank 0's to keep or remove */
		renderer_free(&v->r);
		return;
	}
	/* the sequences in their directories are this run's: an earlier,
	 * longer run's higher numbers go (a failure to remove one is a
	 * warning: this run's own files are complete) */
	for (int i = 0; v->rc == 0 && i < app_outputs_n; i++) {
		const struct app_out_kind *ok = &app_outputs[i];
		char dir[SCENE_PATH_MAX];
		if (ok->shape == APP_OUT_SEQ && app_out_path(v->sc, i, dir)[0])
			app_out_remove_members(ok, dir, app_out_member_end(ok, v->sc), -1);
	}
	if (v->rc == 0) {
		app_resolved_scene_path(v->sc, res->resolved_scene);
		if (res->resolved_scene[0])
			v->rc = write_resolved_scene(v->sc, res->resolved_scene);
		if (res->resolved_scene[0] && v->rc == 0)
			app_view_placed(v, APP_OUT_RESOLVED, -1);
	}
	if (v->rc != 0)
		view_remove_outputs(v);
	res->wall_s = log_clock_s() - t_start;
	char who[SCENE_PATH_MAX + 32] = "";
	if (nv > 1) {
		char where[SCENE_PATH_MAX];
		app_resolved_scene_path(v->sc, where);
		char *slash = strrchr(where, '/'); /* the view's directory names it */
		if (slash && slash > where)
			*slash = '\0';
		snprintf(who, sizeof who, "view %d (%s): ", k + 1, where);
	}
	if (v->rc == NB_EINTR)
		log_info("%sinterrupted after %d of %d frames; the video holds the frames made so far", who,
			 res->frames_done, res->frames_total);
	if (v->rc == 0 || v->rc == NB_EINTR) {
		view_say_done(v, who, first);
		view_list_outputs(v, who);
	}
	renderer_free(&v->r);
}

int app_run(const struct scene *sc, int backend_cli, struct app_result *res)
{
	return app_run_restart(sc, backend_cli, NULL, -1, res);
}

int app_run_restart(const struct scene *sc, int backend_cli, const char *restart,
		    int restart_frame, struct app_result *res)
{
	/* nbody-render SCENE under mpirun: one simulation over the ranks */
	struct app_view view = {.sc = sc, .restart = restart, .restart_frame = restart_frame,
				.over_ranks = 1};
	int rc = app_run_views(&view, 1, backend_cli);
	*res = view.res;
	return rc;
}

/* Before any work: every view's results reset, the views' frame counts
 * agree (NB_EINPUT), and each view's outputs neither collide nor replace a
 * special file (app/outputs_check.c) and have their directories; a view
 * that fails that is failed alone. */
static int views_prepare(struct app_view *views, struct run_view *v, int nviews)
{
	const struct scene *sc = views[0].sc;
	int rc = 0, i;
	for (i = 0; i < nviews; i++) {
		v[i] = (struct run_view){.sc = views[i].sc, .res = &views[i].res, .mute = v[i].mute};
		for (int r = 0; r < app_outputs_n; r++)
			v[i].out[r] = (struct run_placed){0, -1, -1};
		if (v[i].sc->output.frames != sc->output.frames) {
			log_error("views of one simulation need the same output.frames (view 1: %d, view %d: %d)",
				  sc->output.frames, i + 1, v[i].sc->output.frames);
			rc = NB_EINPUT;
		}
	}
	for (i = 0; rc == 0 && i < nviews; i++) {
		if (v[i].mute)
			continue; /* rank 0 checks and makes them */
		int vrc = app_outputs_check(views, i);
		if (vrc == 0)
			vrc = app_outputs_make_dirs(v[i].sc);
		if (vrc == 0) /* what a killed earlier run left beside them */
			app_outputs_sweep_partials(v[i].sc, 60);
		if (vrc)
			app_view_fail(&v[i], vrc);
	}
	return rc;
}

/* Film mode (docs/snapshots.md): the entry whose bodies.K.snapshots names a
 * series, -1 none, -2 a bad combination (logged): a series needs
 * simulation.solver: none and is the scene's only entry. */
static int film_entry(const struct scene *sc)
{
	int k = -1;
	for (int i = 0; i < sc->nbodies; i++)
		if (sc->bodies[i].model == SCENE_MODEL_SNAPSHOT && sc->bodies[i].snap.series[0])
			k = i;
	if (k < 0)
		return -1;
	if (sc->simulation.solver != SCENE_SOLVER_NONE) {
		log_error("bodies.%d.snapshots: a series is filmed, not simulated: it needs "
			  "simulation.solver: none", k);
		return -2;
	}
	if (sc->nbodies != 1) {
		log_error("bodies.%d.snapshots: a filmed series must be the scene's only bodies "
			  "entry (got %d entries)", k, sc->nbodies);
		return -2;
	}
	return k;
}

/* Shared steps much longer than the softening crossing time of the
 * initial state (sim_diag_crossing_time) leave encounters at the softening
 * scale unresolved: the energy drifts. A warning, once, with the figure;
 * --dry-run prints it for every scene. Individual steps pick their own. */
static void run_check_step(const struct scene *sc, const struct sim_state *st,
			   const struct sim_units *u)
{
	if (sc->simulation.solver == SCENE_SOLVER_NONE ||
	    sc->simulation.timesteps != SCENE_TIMESTEPS_SHARED || st->n < 2)
		return;
	double v = 0;
	const double tc = sim_diag_crossing_time(st, scene_softening(sc), &v) / u->time;
	if (!(sc->simulation.dt > 2 * tc))
		return;
	const int gal = sc->units == SCENE_UNITS_GALACTIC;
	log_warn("simulation.dt %g%s is %.2g softening crossing times (softening %g / rms speed %.3g%s "
		 "= %.3g%s): encounters at the softening scale go unresolved and the energy will "
		 "drift (the default collision: |dE/E0| 3.4e-4 at 1.2 crossing times, 4.8e-3 at "
		 "2.4, 1.7e-2 at 3.6; docs/PHYSICS.md); a dt of at most %.2g%s keeps it near 1",
		 sc->simulation.dt, gal ? " Myr" : "", sc->simulation.dt / tc, sc->simulation.softening,
		 v / u->velocity, gal ? " km/s" : "", tc, gal ? " Myr" : "", tc, gal ? " Myr" : "");
}

/* The engine over MPI ranks: GPU ranks (replicated: every rank steps
 * every body on its GPU), or the CPU engine with dist/'s forces (CPU ranks;
 * or domains, whose forces may run on each rank's GPU while the steps stay
 * on the host). own: st holds this rank's bodies of total already. */
static int ranks_engine(const struct scene *sc, struct sim_state *st, int own, size_t total,
			int backend_cli, struct dist_sim **ds, struct engine **eng)
{
	const int domains = sc->simulation.ranks == SCENE_RANKS_DOMAINS;
	/* domains: auto takes the GPUs only for what they do (backend cuda
	 * asking for more is refused before, by preflight) */
	const int gpu = (!domains || dist_domains_gpu(sc)) && dist_use_gpus(sc, backend_cli);
	int rc = own ? dist_domains_create_own(sc, st, total, gpu, ds)
		 : domains ? dist_domains_create(sc, st, gpu, ds)
			   : dist_sim_create(sc, st, gpu, ds);
	if (rc)
		return rc;
	struct engine_split split;
	dist_sim_split(*ds, &split);
	if (gpu && !domains)
		return engine_create_ranks(sc, st, backend_cli, dist_sim_gpu_ranks(*ds), eng);
	return engine_create_split(sc, st, domains ? SCENE_BACKEND_CPU : backend_cli, &split, eng);
}

/* The bodies (restart: the scene's bodies with the snapshot's state;
 * *start its frame), each view's initial-state CSV, the engine, each
 * view's open outputs. *sim_s gets the time the bodies and the engine
 * took. */
static int views_start(struct run_view *v, int nviews, struct sim_state *st,
		       const struct sim_units *u, int backend_cli, const char *restart,
		       int *start, struct engine **eng, struct dist_sim **ds, double *sim_s)
{
	const struct scene *sc = v[0].sc;
	double t = log_clock_s();
	int rc, i;
	*start = 0;
	struct sim_snap_series *film = NULL;
	int film_k = film_entry(sc);
	if (film_k == -2 || (film_k >= 0 && (restart || ds))) {
		if (film_k >= 0)
			log_error("bodies.%d.snapshots: a filmed series takes neither --restart nor MPI "
				  "ranks", film_k);
		return NB_EINPUT;
	}
	/* domains: each rank reads (dist/snapin.c) or makes (dist/create.c) only its own bodies */
	const int dom = ds && !restart && sc->simulation.ranks == SCENE_RANKS_DOMAINS;
	const int snapin = dom && dist_snapin_takes(sc);
	const int own = snapin || (dom && dist_create_takes(sc));
	size_t total = 0;
	if (film_k >= 0)
		rc = sim_snap_series_open(sc, film_k, u, st, &film);
	else if (own)
		rc = snapin ? dist_snapin_build(sc, st, &total) : dist_create_build(sc, st, &total);
	else
		rc = sim_ic_build(sc, st);
	if (rc)
		return rc;
	total = own ? total : st->n; /* domains: st becomes this rank's own bodies */
	if (restart && (rc = sim_snap_restart(restart, sc, st, start)))
		return rc;
	if (restart)
		log_info("restart from %s: frame %d, t = %g, step %ld", restart, *start,
			 st->time / u->time, st->step);
	run_check_step(sc, st, u);
	for (i = 0; i < nviews; i++) {
		v[i].res->bodies = (long)total;
		const char *init = v[i].mute ? "" : v[i].sc->output.initial_state;
		int vrc = init[0] ? sim_state_write_csv(init, st, u) : 0;
		if (vrc)
			app_view_fail(&v[i], vrc);
		if (init[0] && !vrc)
			app_view_placed(&v[i], APP_OUT_INITIAL_STATE, -1);
	}
	if (!app_views_live(v, nviews))
		return rc;
	if (ds) { /* over MPI ranks */
		if ((rc = ranks_engine(sc, st, own, total, backend_cli, ds, eng)))
			return rc;
	} else if ((rc = engine_create(sc, st, backend_cli, eng))) {
		sim_snap_series_free(&film);
		return rc;
	}
	if (sc->simulation.solver == SCENE_SOLVER_NONE)
		engine_set_film(*eng, film); /* owned by the engine from here */
	*sim_s += log_clock_s() - t;
	log_info("%zu bodies, %d frames, %s", total, sc->output.frames, engine_describe(*eng));
	if (nviews > 1)
		log_info("one simulation filmed through %d views", nviews);
	for (i = 0; i < nviews; i++) {
		int vrc = v[i].rc ? 0 : view_open(&v[i]);
		if (vrc)
			app_view_fail(&v[i], vrc);
	}
	return 0;
}

int app_run_views(struct app_view *views, int nviews, int backend_cli)
{
	const struct scene *sc = views[0].sc; /* the simulation's keys: the same in every view */
	struct run_view *v = calloc((size_t)nviews, sizeof *v);
	struct sim_units u;
	struct sim_state st = {0};
	struct engine *eng = NULL;
	struct dist_sim *ds = NULL;
	/* NB_DIST_ONE=1: one rank through dist/ too (its per-step figures, the
	 * baseline of the scaling runs in docs/BENCHMARKS.md) */
	const char *one = getenv("NB_DIST_ONE");
	const int over_ranks = views[0].over_ranks &&
			       (dist_size() > 1 || (one && atoi(one) > 0) ||
				sc->simulation.ranks == SCENE_RANKS_DOMAINS);
	struct app_progress prog;
	int rc = 0, i, start = 0;
	double sim_s = 0, t_start = log_clock_s();

	for (i = 0; i < nviews; i++) {
		memset(&views[i].res, 0, sizeof views[i].res);
		views[i].res.frames_total = sc->output.frames;
		views[i].rc = 0;
	}
	if (!v) {
		log_error("out of memory for %d views", nviews);
		rc = NB_ERUNTIME;
		goto done;
	}
	scene_units(sc, &u);
	for (i = 0; i < nviews; i++)
		v[i].mute = over_ranks && dist_rank() != 0;
	if ((rc = views_prepare(views, v, nviews)) || !app_views_live(v, nviews))
		goto end;
	if ((rc = views_start(v, nviews, &st, &u, backend_cli, views[0].restart, &start, &eng,
			      over_ranks ? &ds : NULL, &sim_s)) ||
	    !app_views_live(v, nviews))
		goto end;

	const int first = views[0].restart ? start + 1 : 0;
	app_progress_start(&prog, sc->output.frames, sc->simulation.steps_per_frame, first);
	rc = app_run_frames(v, nviews, &st, eng, &u, first, &prog, &sim_s);
	app_progress_end(&prog);
	/* over MPI ranks, stopped by a signal: an interrupt when every rank
	 * still answers, else a failed run (a rank died; dist.h) */
	if (ds && rc == NB_EINTR)
		rc = dist_stop_status();
	if (ds && rc == 0 && dist_sim_domains(ds)) /* no replicas to compare */
		dist_domains_report(ds);
	else if (ds && rc == 0) {
		dist_sim_report(ds);
		/* every rank stepped the whole state: they must agree */
		if ((rc = engine_sync(eng)) == 0)
			rc = dist_sim_check_replicas(ds, &st);
	}
	for (i = 0; rc == 0 && i < nviews; i++) {
		const char *fin = v[i].mute ? "" : v[i].sc->output.final_state;
		int vrc = v[i].rc == 0 && fin[0] ? sim_state_write_csv(fin, &st, &u) : 0;
		if (vrc)
			app_view_fail(&v[i], vrc);
		if (v[i].rc == 0 && fin[0])
			app_view_placed(&v[i], APP_OUT_FINAL_STATE, -1);
	}

end:
	for (i = 0; i < nviews; i++) {
		v[i].res->sim_s = sim_s;
		view_close(&v[i], rc, nviews, i, t_start, views[0].restart ? start + 1 : 0);
	}
done:
	for (i = 0, rc = 0; i < nviews; i++) {
		views[i].rc = v ? v[i].rc : NB_ERUNTIME;
		if (rc == 0)
			rc = views[i].rc;
	}
	free(v);
	engine_free(&eng);
	dist_sim_free(&ds);
	sim_state_free(&st);
	return rc;
}
