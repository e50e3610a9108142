/* calibrate.c - measure this machine's rates (estimate.h) with a few
 * seconds of the program's own work, in memory: the initial conditions of a
 * Plummer sphere and of a disk galaxy, one tree force evaluation, one
 * direct sum, and frames splatted, glowed and tone mapped at two sizes
 * (their difference parts the cost per pixel from the cost per body).
 * Nothing is written. Each timing is the best of a few, so a busy machine
 * reads closer to its idle speed; the estimate is a floor on a busy one.
 *
 * Try: rm -f ~/.cache/nbody-render/rates; nbody-render scenes/plummer.yaml --dry-run */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../render/adaptive.h"
#include "../render/render.h"
#include "app.h"
#include "estimate.h"

#define CAL_N APP_CAL_N /* bodies of the sphere */
#define CAL_DIRECT 2500 /* bodies of the direct sum */
/* A run's frame costs more than the calibration's splat, glow and tone
 * map (auto exposure's histogram, the PSF wing, the 16-bit frame handed to
 * the writer, the caches a real run shares with the simulation): twice,
 * measured on the development machine (docs/BENCHMARKS.md, issue 29). */
#define CAL_FRAME_FACTOR 2.0
#define CAL_DISK "{count: 8000, mass: 5e10, scale: 3.5, scale_height: 0.35, toomre_q: 1.5}"

static const char cal_sphere[] =
	"units: nbody\nseed: 1\n"
	"simulation: {solver: barnes-hut, theta: 0.5, multipoles: 2, softening: 0.02, dt: 0.005}\n"
	"bodies:\n  - {name: c, model: plummer, count: 20000, mass: 1, scale: 1}\n"
	"camera: {fov: 35, keys: [{frame: 0, position: [0, -9, 3.5], target: [0, 0, 0]}]}\n"
	"output: {frames: 2}\n";
static const char cal_disk[] =
	"units: galactic\nseed: 1\nsimulation: {softening: 0.1, dt: 0.5}\n"
	"bodies:\n  - name: g\n    model: disk-galaxy\n    disk: " CAL_DISK "\n"
	"    bulge: {count: 2000, mass: 1e10, scale: 0.7}\n"
	"    halo: {count: 8000, mass: 4e11, scale: 15}\n"
	"output: {frames: 2}\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A timing's start: wall and process CPU clocks. since() gives the
 * smaller of the two intervals: on an idle machine the wall time (a
 * parallel section's CPU time is larger), on a busy one at most the CPU
 * time the work took (a serial section's cost without the waits for a
 * core; a parallel one's nearer its idle wall time). */
struct tick {
	double wall, cpu;
};

static struct tick tick(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (struct tick){now(), (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec};
}

static double since(struct tick t0)
{
	struct tick t = tick();
	double w = t.wall - t0.wall, c = t.cpu - t0.cpu;
	return c > 0 && c < w ? c : w;
}

/* Seconds per body to build sc's bodies (best of reps). */
static int time_build(const struct scene *sc, int reps, struct sim_state *keep, double *per)
{
	double best = 1e30;
	for (int i = 0; i < reps; i++) {
		struct sim_state st;
		memset(&st, 0, sizeof st);
		struct tick t0 = tick();
		if (sim_ic_build(sc, &st))
			return NB_ERUNTIME;
		double t = since(t0);
		best = t < best ? t : best;
		*per = best / (double)st.n;
		if (keep && i == reps - 1)
			*keep = st;
		else
			sim_state_free(&st);
	}
	return 0;
}

/* A disk galaxy's creation as a fixed set-up (create_fixed: its potential
 * tables and distribution function, whatever the count) plus a cost per
 * body (create_disk), from the galaxy at its size and at a quarter of it,
 * best of two each (one size's quotient charged the set-up to every body:
 * 8.5 s predicted for the default scene's 1M bodies, made in under 1 s on
 * a 16-core H200 host). keep: the full-size galaxy. */
static int time_disk_build(const struct scene *sc, struct sim_state *keep, struct app_rates *r)
{
	struct scene q = *sc;
	struct scene_body *b = &q.bodies[0];
	b->disk.count /= 4, b->bulge.count /= 4, b->halo.count /= 4;
	double per_full, per_q;
	int rc = time_build(sc, 2, keep, &per_full);
	struct sim_state small;
	memset(&small, 0, sizeof small);
	rc = rc ? rc : time_build(&q, 2, &small, &per_q);
	if (rc)
		return rc;
	const double n1 = (double)keep->n, n0 = (double)small.n;
	const double t1 = per_full * n1, t0 = per_q * n0;
	sim_state_free(&small);
	r->create_disk = t1 > t0 ? (t1 - t0) / (n1 - n0) : per_full;
	r->create_fixed = t1 - n1 * r->create_disk > 0 ? t1 - n1 * r->create_disk : 0;
	return 0;
}

/* One frame of sc at w x h: clear, splat (the default look: stars with the
 * screen diffuse layer when render.diffuse > 0), glow, tone map. Best of 3. */
static int time_frame(const struct scene *sc, const struct sim_state *st, int w, int h, double *s)
{
	struct scene c = *sc;
	c.render.width = w, c.render.height = h;
	struct render_image img = {0}, smooth = {0};
	struct render_camera cam;
	struct sim_units u;
	scene_units_of(c.units, &u);
	uint16_t *out = malloc((size_t)w * h * 3 * sizeof *out);
	int rc = !out || render_image_alloc(&img, w, h) || render_image_alloc(&smooth, w, h) ||
		 render_camera_at(&c, 0, st, &cam) ? NB_ERUNTIME : 0;
	*s = 1e30;
	for (int i = 0; !rc && i < 3; i++) {
		struct render_auto_state as = {0};
		struct tick t0 = tick();
		render_image_clear(&img);
		rc = c.render.diffuse > 0
			? render_stars_diffuse_screen_c(&c, &cam, st, &u, NULL, &img, &smooth)
			: render_stars_splat_c(&c, &cam, st, &u, NULL, &img);
		rc = rc ? rc : render_glow(&c, &img);
		if (!rc)
			render_tonemap_frame(&c, 0, &img, &as, out);
		double t = since(t0);
		*s = t < *s ? t : *s;
	}
	free(out);
	render_image_free(&img);
	render_image_free(&smooth);
	return rc;
}

/* Seconds of the tree over st (best of 2): every body active (every 0),
 * one (every 1: the build alone, nearly), or every every-th body. */
static int time_tree(const struct scene *sc, const struct sim_state *st, int every, double *s)
{
	unsigned char *act = every ? calloc(st->n, 1) : NULL;
	if (every && !act)
		return NB_ERUNTIME;
	if (every == 1)
		act[st->n / 2] = 1;
	for (size_t i = 0; every > 1 && i < st->n; i += (size_t)every)
		act[i] = 1;
	*s = 1e30;
	for (int i = 0; i < 2; i++) {
		struct tick t0 = tick();
		if (sim_tree_accel_active(st->pos, st->mass, st->n, scene_softening(sc),
					  sc->simulation.theta, sc->simulation.multipoles,
					  sc->simulation.opening, act, st->acc, NULL)) {
			free(act);
			return NB_ERUNTIME;
		}
		double t = since(t0);
		*s = t < *s ? t : *s;
	}
	free(act);
	return 0;
}

/* The share a of a body's walk that its group pays whatever its active
 * bodies, from the tree with all (t_all), one (t_one: the build) and every
 * APP_TREE_GROUP-th body active (t_some: the Plummer sphere's bodies are
 * in no spatial order, so a fraction f = 1 / G of them lands in 1 - (1 -
 * f)^G of the groups): t_some = build + walk (a h + (1 - a) f). */
static double group_share(double t_all, double t_one, double t_some)
{
	const double f = 1.0 / APP_TREE_GROUP, h = 1 - pow(1 - f, APP_TREE_GROUP);
	double walk = t_all - t_one;
	if (walk <= 0)
		return 0;
	double a = ((t_some - t_one) / walk - f) / (h - f);
	return a < 0 ? 0 : a > 1 ? 1 : a;
}

/* Forces: the tree over the sphere and over the disk galaxy (per modelled
 * interaction; the disk's at the sphere's theta and multipoles), the
 * build alone, the direct sum over the sphere's first CAL_DIRECT bodies
 * (per pair). Best of 2 each. */
static int time_forces(const struct scene *sc, const struct sim_state *st,
		       const struct sim_state *disk, struct app_rates *r)
{
	double bd = 1e30, tt, tdisk, tb, tsmall, tsome;
	struct sim_state small = *st;
	small.n = APP_CAL_SMALL; /* a Plummer sphere's first bodies are one too */
	int rc = time_tree(sc, st, 0, &tt);
	rc = rc ? rc : time_tree(sc, &small, 0, &tsmall);
	rc = rc ? rc : time_tree(sc, disk, 0, &tdisk);
	rc = rc ? rc : time_tree(sc, st, 1, &tb);
	rc = rc ? rc : time_tree(sc, st, APP_TREE_GROUP, &tsome);
	for (int i = 0; !rc && i < 2; i++) {
		struct tick t0 = tick();
		if (sim_direct_accel(st->pos, st->mass, CAL_DIRECT, scene_softening(sc), st->acc, NULL))
			return NB_ERUNTIME;
		double t = since(t0);
		bd = t < bd ? t : bd;
	}
	if (rc)
		return rc;
	r->tree_inter = tt / app_estimate_interactions(sc, (double)st->n);
	r->tree_disk = tdisk / app_estimate_interactions(sc, (double)disk->n);
	r->tree_build = tb / (double)st->n;
	double rs = tsmall / app_estimate_interactions(sc, APP_CAL_SMALL);
	r->tree_small = rs / r->tree_inter;
	r->tree_group = group_share(tt, tb, tsome);
	r->direct_pair = bd / (CAL_DIRECT * (CAL_DIRECT - 1) / 2.0);
	return 0;
}

/* camera.follow: light and camera.frame: auto's statistics of the drawn
 * light over st, per body (best of 2). */
static int time_track(const struct scene *sc, const struct sim_state *st, struct app_rates *r)
{
	struct scene c = *sc;
	snprintf(c.camera.follow, sizeof c.camera.follow, "light");
	c.camera.frame = SCENE_FRAME_AUTO;
	double best = 1e30, com[3];
	struct render_camera cam;
	for (int i = 0; i < 2; i++) {
		struct tick t0 = tick();
		if (render_framing_light_com(&c, st, com) || render_camera_at(sc, 0, st, &cam) ||
		    render_framing_auto(&c, st, &cam))
			return NB_ERUNTIME;
		double t = since(t0);
		best = t < best ? t : best;
	}
	r->frame_track = best / (double)st->n;
	return 0;
}

/* render_needs_h's smoothing lengths over st, per body (best of 2). */
static int time_h(const struct scene *sc, const struct sim_state *st, struct app_rates *r)
{
	double *h = malloc(st->n * sizeof *h), best = 1e30;
	for (int i = 0; h && i < 2; i++) {
		struct tick t0 = tick();
		if (render_adaptive_h_state(sc, st, NULL, h))
			break;
		double t = since(t0);
		best = t < best ? t : best;
	}
	free(h);
	if (best >= 1e30)
		return NB_ERUNTIME;
	r->frame_h = best / (double)st->n;
	return 0;
}

/* The frame rates from two sizes: t = px a + n b at 320x180 and 1280x720. */
static int time_frames(const struct scene *sc, const struct sim_state *st, struct app_rates *r)
{
	double ts, tl;
	const double ps = 320.0 * 180, pl = 1280.0 * 720, n = (double)st->n;
	int rc = time_frame(sc, st, 320, 180, &ts);
	rc = rc ? rc : time_frame(sc, st, 1280, 720, &tl);
	if (rc)
		return rc;
	r->frame_px = (tl - ts) / (pl - ps);
	if (r->frame_px < 1e-10)
		r->frame_px = 1e-10;
	r->frame_body = (ts - ps * r->frame_px) / n;
	if (r->frame_body < 0.05 * ts / n) /* the small frame is mostly bodies */
		r->frame_body = 0.05 * ts / n;
	r->frame_px *= CAL_FRAME_FACTOR;
	r->frame_body *= CAL_FRAME_FACTOR;
	return 0;
}

int app_calibrate(struct app_rates *r, double *wall_s)
{
	struct scene *sc = calloc(2, sizeof *sc);
	struct sim_state st, disk;
	memset(&st, 0, sizeof st);
	memset(&disk, 0, sizeof disk);
	const struct tick t0 = tick();
	const struct app_rates *ref = &app_rates_reference;
	int rc = sc ? 0 : NB_ERUNTIME;
	rc = rc ? rc : scene_load_string(cal_sphere, "calibration", ".", NULL, 0, &sc[0]);
	rc = rc ? rc : scene_load_string(cal_disk, "calibration", ".", NULL, 0, &sc[1]);
	rc = rc ? rc : time_disk_build(&sc[1], &disk, r);
	rc = rc ? rc : time_build(&sc[0], 2, &st, &r->create_body);
	rc = rc ? rc : time_forces(&sc[0], &st, &disk, r);
	rc = rc ? rc : time_frames(&sc[0], &st, r);
	rc = rc ? rc : time_track(&sc[0], &st, r);
	rc = rc ? rc : time_h(&sc[0], &st, r);
	if (rc) {
		log_error("calibration of this machine's rates failed: %s",
			  rc == NB_EINPUT ? "its scene was refused" : "out of memory");
		goto end;
	}
	/* the rates not measured: the reference's, scaled by this machine's
	 * speed on a standard frame (640x360, CAL_N bodies) against the reference's */
	const double px = 640.0 * 360, speed = (r->frame_px * px + r->frame_body * CAL_N) /
					      (ref->frame_px * px + ref->frame_body * CAL_N);
	r->encode_px = ref->encode_px * speed;
	r->png_px = ref->png_px * speed;
	r->file_byte = ref->file_byte * speed;
	*wall_s = now() - t0.wall;
end:
	sim_state_free(&st);
	sim_state_free(&disk);
	free(sc);
	return rc;
}
