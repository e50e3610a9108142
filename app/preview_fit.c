/* preview_fit.c - --preview TIME: the overrides that shrink a scene to fit
 * a time budget (preview_fit.h).
 *
 * Two factors: g for the frames and the pixels (frames x g, pixels x
 * g^1.5, so each side x g^0.75: a frame needs its bodies more than its
 * pixels) and b for the bodies (each shrinkable count x b, a dark part's
 * x b PREVIEW_DARK_SHARE).
 * The split starts at g = s^(1/3), s = budget / estimate: then b takes the
 * rest through the simulation's N^2 or N log N term. When bodies alone
 * cannot take it (b at its floor is still over) g is lowered; when the
 * bodies need no shrinking at g = s^(1/3), g is raised again. Each factor
 * is found by bisection on the estimate of the shrunk scene itself
 * (app_estimate_compute), so the rounding of counts, sizes and frames is
 * in the answer. The floors: PREVIEW_MIN_BODIES bodies per component, 2
 * frames, PREVIEW_MIN_SIDE pixels on the short side (or the scene's own,
 * when smaller).
 *
 * A scene over budget at the default accuracy is fitted at the draft
 * preset (simulation.accuracy: draft, scene/scene_accuracy.h): a step
 * three times longer is a third of the simulation's cost, so the bodies,
 * which the frames' look needs most, keep three times more of the budget
 * (docs/BENCHMARKS.md: at 60 s on 2 cores the default scene kept 2 x 2.4k
 * bodies at the scene's step). The fit models the preset as the loader
 * applies it: the scene loaded again with the draft (its theta and
 * softening), its step scaled by scene_accuracy_steps after the frames
 * are shrunk, so the printed steps_per_frame is the one before the preset,
 * which the loader then divides. A user's own --set simulation.accuracy
 * keeps the fit from choosing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/scene_accuracy.h"
#include "app.h"
#include "estimate.h"
#include "preview_fit.h"

/* The softening's cost (app_estimate_soft_x) changes with the bodies'
 * spacing, so with the fit's size: measured again at the fitted size and
 * the fit made again, this many times (the lengths against the spacing
 * settle in two: on gadget2-galaxy 2.1x at the draft's full size, then
 * less at a quarter of its bodies). */
#define PREVIEW_SOFT_ROUNDS 2
#define PREVIEW_MIN_BODIES 100
#define PREVIEW_MIN_SIDE 64
/* A disk-galaxy part that draws no light (colour black or brightness 0:
 * a dark halo) keeps this much of the drawn parts' share of its bodies:
 * its mass is kept, carried by fewer, heavier bodies, and the budget goes
 * to the bodies the frames show (make demo's recipe kept 3,000 halo
 * bodies to 4,500 drawn, against the scene's 250k to 250k). */
#define PREVIEW_DARK_SHARE 0.5

int app_preview_parse(const char *text, double *budget_s)
{
	static const struct { const char *unit; double s; } units[] = {
		{"", 1}, {"s", 1}, {"sec", 1}, {"m", 60}, {"min", 60}, {"h", 3600},
	};
	char *end = NULL;
	double v = text ? strtod(text, &end) : NAN;
	if (text && end != text && isfinite(v) && v > 0) {
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
			if (strcmp(end, units[i].unit) == 0) {
				*budget_s = v * units[i].s;
				return 0;
			}
		}
	}
	log_error("--preview: expected a time such as 60s, 2m or 90 (seconds), got '%s'",
		  text ? text : "");
	return NB_EINPUT;
}

/* The fit's working state: the scene as loaded, a copy shrunk by (g, b). */
struct fit {
	const struct scene *o;  /* the scene as loaded; at draft, with its own step */
	struct scene *w;
	double step_x;          /* the preset's step factor the loader will apply (1: none) */
	const struct app_rates *r;
	long n_fixed; /* bodies no factor changes (files) */
	long snap_n[SCENE_MAX_BODIES]; /* a snapshot entry's bodies at its own subsample */
};

static long scaled_count(long c, double b)
{
	if (c <= 0)
		return c;
	long lo = c < PREVIEW_MIN_BODIES ? c : PREVIEW_MIN_BODIES;
	long v = lround((double)c * b);
	return v < lo ? lo : v > c ? c : v;
}

/* A side of at least 16 pixels, x l, never above the scene's, and a
 * multiple of 4: even for YUV 4:2:0, and two even halves for a stereo
 * pair (top-bottom: the height, side-by-side: the width), which the scene
 * loader requires (a 786 x 786 top-bottom frame is refused). */
static int scaled_side(int side, double l)
{
	int v = 4 * (int)lround(side * l / 4);
	return v < 16 ? 16 : v > side ? side : v;
}

/* Bodies of the entries whose counts the fit can change, in o. */
static long shrinkable(const struct scene *sc)
{
	long n = 0;
	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model == SCENE_MODEL_PLUMMER || b->model == SCENE_MODEL_HERNQUIST)
			n += b->count;
		else if (b->model == SCENE_MODEL_DISK_GALAXY)
			n += b->disk.count + b->bulge.count + b->halo.count;
	}
	return n;
}

static void shrink_frames(struct fit *f, double g)
{
	const struct scene *o = f->o;
	struct scene *w = f->w;
	int F = o->output.frames, lo = F < 2 ? F : 2;
	int fr = (int)lround(F * g);
	fr = fr < lo ? lo : fr > F ? F : fr;
	w->output.frames = fr;
	w->simulation.steps_per_frame = o->simulation.steps_per_frame;
	if (fr > 1 && fr < F) {
		long spf = lround((double)o->simulation.steps_per_frame * (F - 1) / (fr - 1));
		w->simulation.steps_per_frame = spf < 1 ? 1 : spf > 1000000000L ? 1000000000 : (int)spf;
	}
	int side = o->render.width < o->render.height ? o->render.width : o->render.height;
	double l = pow(g, 0.75), lmin = side > PREVIEW_MIN_SIDE ? (double)PREVIEW_MIN_SIDE / side : 1;
	l = l < lmin ? lmin : l > 1 ? 1 : l;
	w->render.width = scaled_side(o->render.width, l);
	w->render.height = scaled_side(o->render.height, l);
}

/* A snapshot entry: subsample x b, at least PREVIEW_MIN_BODIES of its
 * bodies kept (its particles carry 1/subsample of their mass: the totals
 * are kept). Its expected bodies. */
static double shrink_snapshot(struct fit *f, int k, double b)
{
	double n = (double)f->snap_n[k], lo = n > PREVIEW_MIN_BODIES ? PREVIEW_MIN_BODIES / n : 1;
	b = b < lo ? lo : b > 1 ? 1 : b;
	f->w->bodies[k].snap.subsample = f->o->bodies[k].snap.subsample * b;
	return n * b;
}

/* A part's share of the body factor: PREVIEW_DARK_SHARE when it draws no
 * light, else 1. */
static double part_share(const struct scene_part *pt)
{
	const int dark = pt->brightness <= 0 ||
			 (pt->color[0] <= 0 && pt->color[1] <= 0 && pt->color[2] <= 0);
	return dark ? PREVIEW_DARK_SHARE : 1;
}

/* The estimate of o shrunk by (g, b), in seconds. */
static double fit_total(struct fit *f, double g, double b)
{
	double snap = 0;
	shrink_frames(f, g);
	for (int k = 0; k < f->o->nbodies; k++) {
		const struct scene_body *ob = &f->o->bodies[k];
		struct scene_body *wb = &f->w->bodies[k];
		if (ob->model == SCENE_MODEL_PLUMMER || ob->model == SCENE_MODEL_HERNQUIST)
			wb->count = scaled_count(ob->count, b);
		if (ob->model == SCENE_MODEL_SNAPSHOT)
			snap += shrink_snapshot(f, k, b);
		wb->disk.count = scaled_count(ob->disk.count, b * part_share(&ob->disk));
		wb->bulge.count = scaled_count(ob->bulge.count, b * part_share(&ob->bulge));
		wb->halo.count = scaled_count(ob->halo.count, b * part_share(&ob->halo));
	}
	f->w->simulation.dt = f->o->simulation.dt;
	f->w->simulation.blocks_per_frame = f->o->simulation.blocks_per_frame;
	if (f->step_x != 1)
		scene_accuracy_steps(f->w, f->step_x);
	struct app_estimate e;
	app_estimate_compute(f->w, f->n_fixed + shrinkable(f->w) + lround(snap), f->r, &e);
	return e.total_s;
}

/* The largest x in [lo, hi] whose estimate (x as g when is_g, else as b,
 * the other factor fixed) is within budget; lo when none. */
static double bisect(struct fit *f, int is_g, double lo, double hi, double other, double budget)
{
	for (int i = 0; i < 50; i++) {
		double mid = 0.5 * (lo + hi);
		double t = is_g ? fit_total(f, mid, other) : fit_total(f, other, mid);
		if (t <= budget)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int add_set(struct app_preview *p, const char *key, const char *value)
{
	size_t len = strlen(key) + strlen(value) + 2;
	char *s = malloc(len);
	if (!s)
		return NB_ERUNTIME;
	snprintf(s, len, "%s=%s", key, value);
	p->mine[p->nmine++] = s;
	return 0;
}

/* key=N when the shrunk value differs from the scene's. */
static int add_long(struct app_preview *p, const char *key, long was, long now)
{
	char v[32];
	snprintf(v, sizeof v, "%ld", now);
	return was == now ? 0 : add_set(p, key, v);
}

static int emit_bodies(const struct scene *o, const struct scene *w, struct app_preview *p)
{
	static const char *const part[3] = {"disk", "bulge", "halo"};
	char key[96];
	int rc = 0;
	for (int k = 0; k < o->nbodies && !rc; k++) {
		const struct scene_body *ob = &o->bodies[k], *wb = &w->bodies[k];
		snprintf(key, sizeof key, "bodies.%d.count", k);
		if (ob->model == SCENE_MODEL_PLUMMER || ob->model == SCENE_MODEL_HERNQUIST)
			rc = add_long(p, key, ob->count, wb->count);
		if (ob->model == SCENE_MODEL_SNAPSHOT && wb->snap.subsample != ob->snap.subsample) {
			char v[32];
			snprintf(key, sizeof key, "bodies.%d.subsample", k);
			snprintf(v, sizeof v, "%.6g", wb->snap.subsample);
			rc = add_set(p, key, v);
		}
		const long was[3] = {ob->disk.count, ob->bulge.count, ob->halo.count};
		const long now[3] = {wb->disk.count, wb->bulge.count, wb->halo.count};
		for (int i = 0; i < 3 && !rc && ob->model == SCENE_MODEL_DISK_GALAXY; i++) {
			snprintf(key, sizeof key, "bodies.%d.%s.count", k, part[i]);
			rc = add_long(p, key, was[i], now[i]);
		}
	}
	return rc;
}

/* A count of frames x q, at least 1 (output.snapshots.every). */
static long frames_x(double v, double q)
{
	long r = lround(v * q);
	return r < 1 ? 1 : r;
}

/* Camera keys: frame x q (the last frame to the last frame), kept strictly
 * increasing; their exposures go with them. */
static int emit_keys(const struct scene *o, double q, struct app_preview *p)
{
	char key[96];
	long prev = -1;
	int rc = 0;
	for (int i = 0; i < o->camera.nkeys && !rc; i++) {
		long fr = lround(o->camera.keys[i].frame * q);
		fr = fr <= prev ? prev + 1 : fr;
		snprintf(key, sizeof key, "camera.keys.%d.frame", i);
		rc = add_long(p, key, o->camera.keys[i].frame, fr);
		prev = fr;
	}
	return rc;
}

/* The frames, the steps per frame and every key counted in frames. */
static int emit_frames(const struct scene *o, const struct scene *w, struct app_preview *p)
{
	int F = o->output.frames, fr = w->output.frames;
	double q = F > 1 ? (double)(fr - 1) / (F - 1) : 1;
	char v[32];
	int rc = add_long(p, "output.frames", F, fr);
	if (!rc)
		rc = add_long(p, "simulation.steps_per_frame", o->simulation.steps_per_frame,
			      w->simulation.steps_per_frame);
	if (!rc && o->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL) /* dt_max kept */
		rc = add_long(p, "simulation.blocks_per_frame", o->simulation.blocks_per_frame,
			      frames_x(o->simulation.blocks_per_frame,
				       (double)w->simulation.steps_per_frame /
					       o->simulation.steps_per_frame));
	if (!rc)
		rc = emit_keys(o, q, p);
	if (!rc && o->output.snapshots.dir[0])
		rc = add_long(p, "output.snapshots.every", o->output.snapshots.every,
			      frames_x(o->output.snapshots.every, q));
	if (!rc && fr != F && o->camera.frame == SCENE_FRAME_AUTO && o->camera.smoothing > 0) {
		snprintf(v, sizeof v, "%.6g", o->camera.smoothing * q);
		rc = add_set(p, "camera.smoothing", v);
	}
	if (!rc && fr != F && o->render.exposure_auto && o->render.auto_smoothing > 0) {
		snprintf(v, sizeof v, "%.6g", o->render.auto_smoothing * q);
		rc = add_set(p, "render.auto_smoothing", v);
	}
	return rc;
}

static int emit_all(const struct scene *o, const struct scene *w, struct app_preview *p)
{
	int rc = emit_bodies(o, w, p);
	if (!rc)
		rc = emit_frames(o, w, p);
	if (!rc)
		rc = add_long(p, "render.width", o->render.width, w->render.width);
	if (!rc)
		rc = add_long(p, "render.height", o->render.height, w->render.height);
	return rc;
}

/* The user's overrides, then the fit's, with their labels. */
static int join_sets(const char *const *sets, const char *const *froms, int nsets,
		     struct app_preview *p)
{
	p->sets = calloc((size_t)(nsets + p->nmine + 1), sizeof *p->sets);
	p->froms = calloc((size_t)(nsets + p->nmine + 1), sizeof *p->froms);
	if (!p->sets || !p->froms)
		return NB_ERUNTIME;
	for (int i = 0; i < nsets; i++) {
		p->sets[i] = sets[i];
		p->froms[i] = froms ? froms[i] : NULL;
	}
	for (int i = 0; i < p->nmine; i++) {
		p->sets[nsets + i] = p->mine[i];
		p->froms[nsets + i] = p->label;
	}
	p->nsets = nsets + p->nmine;
	return 0;
}

/* "expected 58.2 s here (as given: 7m30s); --set a=1 --set b=2" */
static int say_fit(const struct app_preview *p, double before, double after, int draft)
{
	size_t len = 1;
	for (int i = 0; i < p->nmine; i++)
		len += strlen(p->mine[i]) + 7;
	char *list = malloc(len), *at = list;
	if (!list)
		return NB_ERUNTIME;
	*at = 0;
	for (int i = 0; i < p->nmine; i++)
		at += sprintf(at, "%s--set %s", i ? " " : "", p->mine[i]);
	if (draft)
		log_info("%s: at the draft accuracy (simulation.accuracy: draft: softening and time "
			 "step x3, the frame time kept; docs/PHYSICS.md \"Accuracy presets\"), so that "
			 "more bodies fit", p->label);
	log_info("%s: expected %.1f s on this machine (the scene as given: %.1f s); the same "
		 "overrides, to reuse them:\n  %s", p->label, after, before, list);
	free(list);
	return 0;
}

/* Each snapshot entry's bodies (its file read as the run would count it,
 * through a scene of that entry alone), taken out of n_fixed. */
static int count_snapshots(struct fit *f)
{
	for (int k = 0; k < f->o->nbodies; k++) {
		if (f->o->bodies[k].model != SCENE_MODEL_SNAPSHOT)
			continue;
		f->w->nbodies = 1;
		f->w->bodies[0] = f->o->bodies[k];
		f->snap_n[k] = sim_scene_body_count(f->w);
		if (f->snap_n[k] < 0)
			return NB_EINPUT;
		f->n_fixed -= f->snap_n[k];
	}
	*f->w = *f->o;
	return 0;
}

/* The factors (g, b) that fit budget (preview_fit.c's header). */
static void choose(struct fit *f, double s, double budget, double *g, double *b)
{
	double g0 = cbrt(s);
	*g = g0;
	*b = 1;
	if (fit_total(f, g0, 0) > budget) { /* bodies at their floor are not enough */
		*b = 0;
		*g = bisect(f, 1, 0, g0, 0, budget);
	} else if (fit_total(f, g0, 1) <= budget) { /* no bodies to lose: frames back */
		*g = bisect(f, 1, g0, 1, 1, budget);
	} else {
		*b = bisect(f, 0, 0, 1, g0, budget);
	}
}

/* 1 when the fit may choose the draft preset: a scene file at the default
 * accuracy, and no override of the user's names the key. */
static int draft_allowed(const struct scene *sc, const char *const *sets, int nsets)
{
	if (sc->simulation.accuracy != SCENE_ACCURACY_DEFAULT || !sc->path[0])
		return 0;
	for (int i = 0; i < nsets; i++)
		if (strncmp(sets[i], "simulation.accuracy", 19) == 0 ||
		    strncmp(sets[i], "simulation=", 11) == 0)
			return 0;
	return 1;
}

/* sc loaded again, silently, with the user's overrides and the draft preset
 * (its theta, multipoles and softening, which given keys keep), into base;
 * with sc's own step, which fit_total scales as the loader will. 0, or
 * non-zero when the draft scene is refused: the fit then stays at default. */
static int draft_base(const struct scene *sc, const char *const *sets, const char *const *froms,
		      int nsets, struct scene *base)
{
	const char **s = calloc((size_t)nsets + 1, sizeof *s);
	const char **fr = calloc((size_t)nsets + 1, sizeof *fr);
	int rc = NB_ERUNTIME;
	if (s && fr) {
		for (int i = 0; i < nsets; i++) {
			s[i] = sets[i];
			fr[i] = froms ? froms[i] : NULL;
		}
		s[nsets] = "simulation.accuracy=draft";
		fr[nsets] = "--preview";
		enum log_level level = log_get_level();
		log_set_level(LOG_SILENT);
		rc = scene_load_from(sc->path, s, fr, nsets + 1, base);
		if (rc == 0) /* units: snapshot, as cli_load resolves the run's */
			rc = sim_scene_units_resolve(base);
		log_set_level(level);
	}
	free(s);
	free(fr);
	base->simulation.dt = sc->simulation.dt;
	base->simulation.steps_per_frame = sc->simulation.steps_per_frame;
	base->simulation.blocks_per_frame = sc->simulation.blocks_per_frame;
	return rc;
}

/* The overrides of the fit (g, b) and the line that says them. */
static int fit_emit(struct fit *f, double g, double b, double before, struct app_preview *p)
{
	double after = fit_total(f, g, b);
	shrink_frames(f, g); /* the steps per frame before the preset, which the loader divides */
	int rc = f->step_x != 1 ? add_set(p, "simulation.accuracy", "draft") : 0;
	if (!rc)
		rc = emit_all(f->o, f->w, p);
	if (!rc)
		rc = say_fit(p, before, after, f->step_x != 1);
	return rc;
}

int app_preview_fit(const struct scene *sc, double budget_s, const char *text,
		    const char *const *sets, const char *const *froms, int nsets,
		    struct app_preview *p)
{
	memset(p, 0, sizeof *p);
	snprintf(p->label, sizeof p->label, "--preview %s", text);
	struct app_rates r;
	struct app_rates_info info;
	int rc = app_rates_get(&r, &info);
	long n0 = sim_scene_body_count(sc);
	if (rc || n0 < 0)
		return rc ? rc : NB_EINPUT;
	struct fit f = {.o = sc, .w = malloc(sizeof *sc), .r = &r, .n_fixed = n0 - shrinkable(sc),
			.step_x = 1};
	struct scene *base = malloc(sizeof *sc);
	p->mine = calloc(4 * SCENE_MAX_BODIES + SCENE_MAX_KEYS + 16, sizeof *p->mine);
	if (!f.w || !base || !p->mine) {
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	*f.w = *sc;
	if ((rc = count_snapshots(&f)) != 0)
		goto cleanup;
	(void)app_estimate_soft_x(sc, &r.soft_x); /* the spline or lengths per type, timed */
	double before = fit_total(&f, 1, 1), g = 1, b = 1;
	if (before > budget_s && draft_allowed(sc, sets, nsets) &&
	    draft_base(sc, sets, froms, nsets, base) == 0) {
		f.o = base;
		*f.w = *base;
		f.step_x = scene_accuracy_row(SCENE_ACCURACY_DRAFT)->dt_x;
		(void)app_estimate_soft_x(base, &r.soft_x); /* the draft's lengths */
	}
	double least = fit_total(&f, 0, 0);
	if (before <= budget_s) {
		log_info("%s: the scene already fits (expected %.1f s on this machine): left as it is",
			 p->label, before);
	} else if (least > budget_s) {
		rc = NB_EINPUT;
		log_error("%s: too small a budget: the least this scene shrinks to (%ld bodies, %d "
			  "frames of %dx%d: its bodies' creation and the first frames) is expected to "
			  "take %.1f s on this machine; the minimum is --preview %.0fs", p->label,
			  f.n_fixed + shrinkable(f.w), f.w->output.frames, f.w->render.width,
			  f.w->render.height, least, ceil(least));
	} else {
		if (fit_total(&f, 1, 1) > budget_s) /* the draft alone may be enough */
			choose(&f, budget_s / fit_total(&f, 1, 1), budget_s, &g, &b);
		for (int i = 0; i < PREVIEW_SOFT_ROUNDS && r.soft_x != 1 && g * b < 1; i++) {
			fit_total(&f, g, b); /* the softening's cost at the fitted size */
			(void)app_estimate_soft_x(f.w, &r.soft_x);
			choose(&f, budget_s / fit_total(&f, 1, 1), budget_s, &g, &b);
		}
		rc = fit_emit(&f, g, b, before, p);
	}
	if (!rc)
		rc = join_sets(sets, froms, nsets, p);
cleanup:
	free(f.w);
	free(base);
	return rc;
}

void app_preview_free(struct app_preview *p)
{
	for (int i = 0; i < p->nmine; i++)
		free(p->mine[i]);
	free(p->mine);
	free(p->sets);
	free(p->froms);
	memset(p, 0, sizeof *p);
}
