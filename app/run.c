/* run.c - one render run: scene -> bodies -> steps -> frames -> files.
 *
 * Frame 0 shows the initial state; each later frame follows
 * simulation.steps_per_frame leapfrog steps. On the CPU the main thread
 * simulates and renders; the writer thread (output/) encodes while the next
 * frame is computed. When the engine runs on the GPU, app/run_gpu.c takes
 * the frame loop: simulation, rendering and encoding overlap there. Every
 * output appears under its final name only when complete; the resolved
 * scene is written last, so it marks a finished run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../output/output.h"
#include "../render/adaptive.h"
#include "../render/render.h"
#include "app.h"
#include "progress.h"
#include "run_gpu.h"

void app_resolved_scene_path(const struct scene *sc, char *buf)
{
	const char *from[] = {sc->output.video, sc->output.stats, sc->output.final_state,
			      sc->output.initial_state, sc->output.preview};
	buf[0] = '\0';
	if (sc->output.resolved_scene[0]) {
		snprintf(buf, SCENE_PATH_MAX, "%s", sc->output.resolved_scene);
		return;
	}
	for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
		if (!from[i][0])
			continue;
		const char *slash = strrchr(from[i], '/');
		const char *dot = strrchr(from[i], '.');
		size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - from[i]) : strlen(from[i]);
		snprintf(buf, SCENE_PATH_MAX, "%.*s.scene.yaml", (int)stem, from[i]);
		return;
	}
	if (sc->output.png_dir[0] &&
	    snprintf(buf, SCENE_PATH_MAX, "%s/scene.yaml", sc->output.png_dir) >= SCENE_PATH_MAX)
		buf[0] = '\0'; /* too long to store: skip rather than truncate */
}

/* Emit the resolved scene to PATH via a temp name. */
static int write_resolved_scene(const struct scene *sc, const char *path)
{
	char tmp[SCENE_PATH_MAX + 16];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int rc = out_mkdirs_for(path);
	if (rc)
		return rc;
	FILE *f = fopen(tmp, "w");
	if (!f) {
		log_error("%s: cannot write the resolved scene: %s", tmp, strerror(errno));
		return NB_ERUNTIME;
	}
	rc = sim_scene_emit(sc, f);
	if (fclose(f) != 0 && rc == 0) {
		log_error("%s: write failed: %s", tmp, strerror(errno));
		rc = NB_ERUNTIME;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		log_error("%s: cannot rename into place: %s", path, strerror(errno));
		rc = NB_ERUNTIME;
	}
	if (rc)
		remove(tmp);
	return rc;
}

/* Create the directories the CSV outputs go into, before any work, so an
 * unwritable path fails at once (the writer thread does the same for
 * video, frames and preview). */
static int make_output_dirs(const struct scene *sc)
{
	const char *files[] = {sc->output.stats, sc->output.initial_state, sc->output.final_state};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		int rc = files[i][0] ? out_mkdirs_for(files[i]) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int wants_frames(const struct scene *sc)
{
	return sc->output.video[0] || sc->output.png_dir[0] || sc->output.preview[0];
}

/* Per-body adaptive smoothing lengths, kept between frames and recomputed
 * every render.adaptive_every frames, exactly as the GPU renderer does. */
struct cpu_smoothing {
	double *h; /* n, scene units; NULL with fixed smoothing */
	int frame; /* frame of the last recompute, -1 none */
};

/* Render the current state as frame f and queue it for the writer. */
static int render_frame(const struct scene *sc, int f, const struct sim_state *st,
			const struct sim_units *u, struct cpu_smoothing *sm, struct render_image *img,
			uint16_t *rgb16, struct out_writer *w)
{
	struct render_camera cam;
	int rc = render_camera_at(sc, f, st, &cam);
	if (rc)
		return rc;
	if (sm->h && (sm->frame < 0 || f - sm->frame >= sc->render.adaptive_every || f < sm->frame)) {
		if ((rc = render_adaptive_h_state(sc, st, u, sm->h)))
			return rc;
		sm->frame = f;
	}
	render_image_clear(img);
	rc = render_splat_h(sc, &cam, st, u, sm->h, img);
	if (rc)
		return rc;
	render_tonemap(sc, img, rgb16);
	struct out_frame fr = {.index = f, .w = img->w, .h = img->h, .rgb16 = rgb16};
	return out_writer_push(w, &fr);
}

/* The frame loop on the CPU engine: simulate, sync, statistics, render
 * and queue each frame in turn (the writer thread encodes meanwhile). */
static int run_cpu_frames(const struct scene *sc, struct sim_state *st, struct sim_engine *eng,
			  const struct sim_units *u, FILE *stats, struct out_writer *w,
			  struct render_image *img, uint16_t *rgb16, struct app_progress *prog,
			  struct app_result *res)
{
	struct sim_diag d;
	struct cpu_smoothing sm = {NULL, -1};
	int rc = 0;
	double t;
	if (w && sc->render.smoothing_adaptive && !(sm.h = malloc(st->n * sizeof *sm.h))) {
		log_error("out of memory for %zu smoothing lengths", st->n);
		return NB_ERUNTIME;
	}
	for (int f = 0; f < sc->output.frames; f++) {
		t = app_now();
		if (f > 0 && (rc = sim_engine_advance(eng, sc->simulation.steps_per_frame, stats != NULL)))
			break;
		if ((rc = sim_engine_sync(eng)))
			break;
		if (stats) {
			sim_diag_compute(st, &d);
			if ((rc = sim_stats_row(stats, f, st, &d, u)))
				break;
		}
		res->sim_s += app_now() - t;
		if (w) {
			t = app_now();
			rc = render_frame(sc, f, st, u, &sm, img, rgb16, w);
			res->render_s += app_now() - t;
			if (rc)
				break;
		}
		res->frames_done = f + 1;
		app_progress_update(prog, f + 1);
		if (app_interrupted() && f + 1 < sc->output.frames) {
			rc = NB_EINTR;
			break;
		}
	}
	free(sm.h);
	return rc;
}

int app_run(const struct scene *sc, int backend_cli, struct app_result *res)
{
	struct sim_units u;
	struct sim_state st = {0};
	struct sim_engine *eng = NULL;
	struct out_writer *w = NULL;
	struct render_image img = {0};
	uint16_t *rgb16 = NULL;
	FILE *stats = NULL;
	struct app_progress prog;
	int rc, on_gpu = 0;
	double t, t_start = app_now();

	memset(res, 0, sizeof *res);
	res->frames_total = sc->output.frames;
	sim_units_of(sc->units, &u);

	if ((rc = make_output_dirs(sc)))
		goto end;
	t = app_now();
	rc = sim_ic_build(sc, &st);
	if (rc)
		goto end;
	res->bodies = (long)st.n;
	if (sc->output.initial_state[0] &&
	    (rc = sim_state_write_csv(sc->output.initial_state, &st, &u)))
		goto end;
	rc = sim_engine_create(sc, &st, backend_cli, &eng);
	if (rc)
		goto end;
	res->sim_s += app_now() - t;
	log_info("%zu bodies, %d frames, %s", st.n, sc->output.frames, sim_engine_describe(eng));

	on_gpu = sim_engine_gpu(eng) != NULL;
	if (wants_frames(sc) && on_gpu) {
		if ((rc = out_writer_open(sc, 4, &w)))
			goto end;
	} else if (wants_frames(sc)) {
		size_t px = (size_t)sc->render.width * (size_t)sc->render.height * 3;
		if ((rc = render_image_alloc(&img, sc->render.width, sc->render.height)))
			goto end;
		rgb16 = malloc(px * sizeof *rgb16);
		if (!rgb16) {
			log_error("out of memory for a %dx%d frame", sc->render.width, sc->render.height);
			rc = NB_ERUNTIME;
			goto end;
		}
		if ((rc = out_writer_open(sc, 4, &w)))
			goto end;
	}
	if (sc->output.stats[0] && (rc = sim_stats_open(sc->output.stats, &stats)))
		goto end;

	app_progress_start(&prog, sc->output.frames, sc->simulation.steps_per_frame);
	if (on_gpu)
		rc = app_run_gpu_frames(sc, &st, eng, &u, stats, w, &prog, res);
	else
		rc = run_cpu_frames(sc, &st, eng, &u, stats, w, &img, rgb16, &prog, res);
	app_progress_end(&prog);
	if (rc == 0 && sc->output.final_state[0])
		rc = sim_state_write_csv(sc->output.final_state, &st, &u);

end:
	if (w) {
		res->encode_s = out_writer_busy_seconds(w);
		int wrc = out_writer_close(&w, rc == 0, rc == NB_EINTR);
		if (rc == 0)
			rc = wrc;
	}
	if (stats) {
		/* An interrupted run keeps its statistics up to the last frame. */
		int src = sim_stats_close(stats, sc->output.stats, rc == 0 || rc == NB_EINTR);
		if (rc == 0)
			rc = src;
	}
	if (rc == 0) {
		app_resolved_scene_path(sc, res->resolved_scene);
		if (res->resolved_scene[0])
			rc = write_resolved_scene(sc, res->resolved_scene);
	}
	res->wall_s = app_now() - t_start;
	if (rc == NB_EINTR)
		log_info("interrupted after %d of %d frames; the video holds the frames made so far",
			 res->frames_done, res->frames_total);
	if (rc == 0 || rc == NB_EINTR)
		log_info("done: %d frames in %.1f s (simulation %.1f s, rendering %.1f s, encoding %.1f s on its own thread)",
			 res->frames_done, res->wall_s, res->sim_s, res->render_s, res->encode_s);
	render_image_free(&img);
	free(rgb16);
	sim_engine_free(&eng);
	sim_state_free(&st);
	return rc;
}
