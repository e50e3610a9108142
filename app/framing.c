/* framing.c - the camera of a view that moves by itself (app/framing.h):
 * camera.follow (all, a component, or light) and camera.frame: auto, with
 * the statistics from the bodies where they are: on the GPU from the
 * engine's device positions (render/cuda/gpu_framing.h), on the CPU from the
 * host state (render/framing.c), the same meaning (render/framing_shared.h).
 *
 * Frame f: the keys and orbit give the view (render_camera_at_com); follow
 * light moves it by the light centre through a critically damped spring
 * per axis (render_spring_step, tau = camera.smoothing frames), other
 * follows by the centre of mass as before (not smoothed); frame auto then
 * puts the eye on the view's line at the keys' distance times a scale:
 * the distance that keeps camera.frame_fraction of the drawn light inside
 * the frame less camera.frame_margin, divided by the keys' distance,
 * clamped to camera.frame_range and smoothed by a spring on its logarithm
 * (a zoom by a factor takes as long either way; a scale that stays at a
 * bound leaves the keys' own path exactly as written). The geometry, the
 * range and the eye's placement are render/framing.c's rule (the one
 * render_camera_at applies unsmoothed); this file adds the springs and the
 * GPU's statistics. Frame f's camera depends on frames 0 .. f only. A frame
 * with no drawn light keeps the previous goals. Last, the share of the
 * drawn light inside the frame (no margin) is measured for the report. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "../sim/cuda/gpu.h"
#include "../render/cuda/gpu_framing.h"
#include "framing.h"

struct app_framing {
	const struct scene *sc;
	const struct sim_state *st;
	struct engine *eng;
	struct gpu_sim *g;       /* NULL: the CPU state */
	struct gpu_framing *gf;  /* the GPU statistics; NULL on the CPU */
	double length;           /* u->length: internal = scene x length */
	float *wc;               /* light per unit mass by component */
	struct render_spring centre[3], dist;
	double centre_goal[3], dist_goal; /* the last goals (scene units; dist: log of the scale) */
	int have_centre, have_dist;
	/* the measure */
	int frames, below, min_frame;
	double min_in, sum_in;
	double need_raw, keys_dist; /* this frame's, for the log */
	FILE *log;                  /* NB_CAMERA_LOG: one row per frame; NULL: none */
	int view;
	/* ranks that each hold their own bodies: the measures over all of
	 * them (every rank frames alike, in step); NULL: one process's */
	const struct render_reduce *red;
};

/* The framing's reductions over the ranks (dist/'s exchanges). */
static void fr_sum_u64(void *ctx, uint64_t *v, int n)
{
	(void)ctx;
	dist_sum_u64(v, n, "camera framing");
}

static void fr_sum_f64(void *ctx, double *v, int n)
{
	(void)ctx;
	dist_sum_doubles(v, n, "camera framing");
}

static void fr_max_f64(void *ctx, double *v, int n)
{
	(void)ctx;
	dist_max_doubles(v, n, "camera framing");
}

static const struct render_reduce fr_over_ranks = {fr_sum_u64, fr_sum_f64, fr_max_f64, NULL};

static int light_follow(const struct scene *sc)
{
	return strcmp(sc->camera.follow, "light") == 0;
}

int app_framing_create(const struct scene *sc, const struct sim_state *st, struct engine *eng,
		       const struct sim_units *u, int view, struct app_framing **out)
{
	*out = NULL;
	if (!sc->camera.follow[0] && sc->camera.frame != SCENE_FRAME_AUTO)
		return 0;
	struct app_framing *fr = calloc(1, sizeof *fr);
	if (!fr || !(fr->wc = malloc((st->ncomp > 0 ? st->ncomp : 1) * sizeof *fr->wc))) {
		free(fr);
		log_error("out of memory for the camera framing");
		return NB_ERUNTIME;
	}
	fr->sc = sc;
	fr->st = st;
	fr->eng = eng;
	fr->g = engine_gpu(eng);
	fr->length = u->length;
	fr->min_in = 2;
	fr->view = view;
	fr->red = engine_ranks_own_bodies(eng) ? &fr_over_ranks : NULL;
	render_framing_weights(sc, st, fr->wc);
	const char *log = getenv("NB_CAMERA_LOG");
	if (log && log[0] && dist_rank() == 0) { /* rank 0's view is every rank's */
		if (!(fr->log = fopen(log, view == 0 ? "w" : "a"))) {
			log_error("NB_CAMERA_LOG=%s: %s", log, strerror(errno));
			app_framing_free(&fr);
			return NB_ERUNTIME;
		}
		if (view == 0)
			fprintf(fr->log, "view,frame,target_x,target_y,target_z,distance,keys_distance,"
					 "centre_goal_x,centre_goal_y,centre_goal_z,need,inside\n");
	}
	int rc = fr->g ? gpu_framing_create(st, fr->wc, &fr->gf) : 0;
	if (rc) {
		app_framing_free(&fr);
		return rc;
	}
	*out = fr;
	return 0;
}

/* The light centre now, scene units; *found 0 when nothing is drawn. */
static int centre_now(struct app_framing *fr, double c[3], int *found)
{
	struct render_light_centre lc;
	int rc;
	if (fr->g) {
		struct gpu_render_input in;
		if ((rc = gpu_sim_render_input(fr->g, &in)) || (rc = gpu_framing_centre(fr->gf, &in, &lc)))
			return rc;
	} else if ((rc = render_light_centre_over(fr->st, fr->wc, fr->red, &lc))) {
		return rc;
	}
	*found = lc.count > 0;
	for (int d = 0; d < 3; d++)
		c[d] = lc.c[d] / fr->length;
	return 0;
}

/* The distance (scene units) that frames the light from g's target; -1
 * when nothing is drawn. */
static int need_now(struct app_framing *fr, const struct render_frame_geom *g, double *dist)
{
	int rc;
	if (fr->g) {
		struct gpu_render_input in;
		if ((rc = gpu_sim_render_input(fr->g, &in)) ||
		    (rc = gpu_framing_need(fr->gf, &in, g, fr->sc->camera.frame_fraction, dist)))
			return rc;
	} else if ((rc = render_frame_need_over(fr->st, fr->wc, g, fr->sc->camera.frame_fraction,
						fr->red, dist))) {
		return rc;
	}
	if (*dist >= 0)
		*dist /= fr->length;
	return 0;
}

static int inside_now(struct app_framing *fr, const struct render_frame_geom *g, double dist,
		      double *in_share)
{
	if (fr->g) {
		struct gpu_render_input in;
		int rc = gpu_sim_render_input(fr->g, &in);
		return rc ? rc : gpu_framing_inside(fr->gf, &in, g, dist * fr->length, in_share);
	}
	*in_share = render_frame_inside_over(fr->st, fr->wc, g, dist * fr->length, fr->red);
	return 0;
}

/* frame auto (render/framing.c's rule): the eye on the line from the
 * target at the keys' distance times the smoothed scale. */
static int auto_distance(struct app_framing *fr, struct render_camera *cam)
{
	const struct scene *sc = fr->sc;
	const double d0 = render_framing_dist(cam); /* the keys' distance (> 0) */
	fr->keys_dist = d0;
	struct render_frame_geom g;
	render_framing_geom(sc, cam, fr->length, &g);
	double need;
	int rc = need_now(fr, &g, &need);
	if (rc)
		return rc;
	fr->need_raw = need;
	if (need >= 0) {
		double s;
		render_framing_range(sc, need, d0, &s);
		fr->dist_goal = log(s);
		fr->have_dist = 1;
	} else if (!fr->have_dist) {
		fr->dist_goal = 0; /* nothing drawn yet: the keys' distance */
	}
	double d = d0 * exp(render_spring_step(&fr->dist, fr->dist_goal, sc->camera.smoothing));
	render_framing_place(cam, &g, d);
	return 0;
}

int app_framing_camera(struct app_framing *fr, int f, struct render_camera *cam)
{
	const struct scene *sc = fr->sc;
	double c[3] = {0, 0, 0};
	int rc = 0;
	fr->need_raw = -1;
	fr->keys_dist = 0;
	if (light_follow(sc)) {
		double now[3];
		int found = 0;
		if ((rc = centre_now(fr, now, &found)))
			return rc;
		if (found || !fr->have_centre)
			memcpy(fr->centre_goal, now, sizeof now);
		fr->have_centre |= found;
		for (int d = 0; d < 3; d++)
			c[d] = render_spring_step(&fr->centre[d], fr->centre_goal[d], sc->camera.smoothing);
	} else if (sc->camera.follow[0]) {
		double x[3];
		if ((rc = engine_com(fr->eng, sc->camera.follow, x)))
			return rc;
		for (int d = 0; d < 3; d++)
			c[d] = x[d] / fr->length;
	}
	render_camera_at_com(sc, f, c, cam);
	if (sc->camera.frame == SCENE_FRAME_AUTO && (rc = auto_distance(fr, cam)))
		return rc;

	/* the measure: the pinhole's frame (fisheye and equirect views are
	 * not measured) */
	const struct render_projection *row = render_projection_of(sc->camera.projection);
	if (!row || !row->framed)
		return 0;
	struct render_frame_geom g0;
	double in_share;
	int w, h;
	render_eye_size(sc, &w, &h);
	render_frame_geom_make(cam, w, h, 0.0, fr->length, &g0);
	if ((rc = inside_now(fr, &g0, render_framing_dist(cam), &in_share)))
		return rc;
	if (fr->log)
		fprintf(fr->log, "%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", fr->view, f,
			cam->target[0], cam->target[1], cam->target[2], render_framing_dist(cam),
			fr->keys_dist, fr->centre_goal[0], fr->centre_goal[1], fr->centre_goal[2],
			fr->need_raw, in_share);
	fr->frames++;
	fr->sum_in += in_share;
	if (in_share < fr->min_in)
		fr->min_in = in_share, fr->min_frame = f;
	if (in_share < sc->camera.frame_fraction)
		fr->below++;
	return 0;
}

void app_framing_report(const struct app_framing *fr, const char *who)
{
	if (!fr || fr->frames == 0)
		return;
	log_info("%scamera: drawn light inside the frame over %d frames: min %.2f%% (frame %d), "
		 "mean %.2f%%, %d frames below %g%%",
		 who, fr->frames, 100 * fr->min_in, fr->min_frame, 100 * fr->sum_in / fr->frames,
		 fr->below, 100 * fr->sc->camera.frame_fraction);
}

void app_framing_free(struct app_framing **fr)
{
	if (!fr || !*fr)
		return;
	if ((*fr)->log)
		fclose((*fr)->log);
	gpu_framing_free(&(*fr)->gf);
	free((*fr)->wc);
	free(*fr);
	*fr = NULL;
}
