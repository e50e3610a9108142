/* scene_warn.c - keys that do nothing (scene_warn.h): ONE table of rows
 * {key, ignored when, why}, each row a key the renderer, the engine or the
 * projection reads only under some choice (read from render/, engine/,
 * sim/params.c and render/projection.c), and a test of the scene that
 * says the choice is another. Only keys the file or a --set gave warn
 * (struct scene's where[]), never defaults, and never a key set to its
 * row's "off" value (render.diffuse: 0 under style smooth loses nothing);
 * bodies.* keys (their softening under film mode) keep no place of their
 * own: a value other than the row's off value warns, placed at the entry.
 * Camera keys at or after output.frames warn too, unless the run is a
 * still (a last-frame preview alone: its output.frames picks the moment,
 * as in scenes/gallery.yaml). A batch loads each run's scene once in the run's
 * process, so each warning is said once per run. */
#include "scene_warn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "scene_schema.h"

static int strict_on;

void scene_strict_set(int strict) { strict_on = strict != 0; }

static int stars(const struct scene *sc) { return sc->render.style == SCENE_STYLE_STARS; }
static int smooth(const struct scene *sc) { return sc->render.style == SCENE_STYLE_SMOOTH; }
/* the adaptive diffuse layer: a smooth splat with 3D k-nearest h under stars */
static int knn_layer(const struct scene *sc)
{
	return stars(sc) && sc->render.diffuse > 0 &&
	       sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE;
}
static int no_splat_h(const struct scene *sc) { return stars(sc) && !knn_layer(sc); }
static int no_adaptive_h(const struct scene *sc)
{
	return !(smooth(sc) && sc->render.smoothing_adaptive) && !knn_layer(sc);
}
static int no_neighbours(const struct scene *sc)
{
	return (smooth(sc) && !sc->render.smoothing_adaptive) || (stars(sc) && !(sc->render.diffuse > 0));
}
static int no_diffuse(const struct scene *sc) { return stars(sc) && !(sc->render.diffuse > 0); }
static int no_dust(const struct scene *sc)
{
	for (int i = 0; i < sc->nbodies; i++)
		if (scene_dust_count(&sc->bodies[i]) > 0)
			return 0;
	return 1;
}
static int no_blur(const struct scene *sc) { return sc->render.motion_blur.samples <= 1; }
static int no_wing(const struct scene *sc) { return !(sc->render.psf_wing > 0); }
static int no_glow(const struct scene *sc) { return !(sc->render.glow > 0); }
static int not_filmic(const struct scene *sc) { return sc->render.tonemap != SCENE_TONEMAP_FILMIC; }
static int fixed_exposure(const struct scene *sc)
{
	for (int i = 0; i < sc->camera.nkeys; i++)
		if (sc->camera.keys[i].has_exposure)
			return 1;
	return !sc->render.exposure_auto;
}
static int by_component(const struct scene *sc) { return sc->render.color_by == SCENE_COLOR_BY_COMPONENT; }
static int not_tree(const struct scene *sc) { return sc->simulation.solver != SCENE_SOLVER_BARNES_HUT; }
static int not_direct(const struct scene *sc) { return sc->simulation.solver != SCENE_SOLVER_DIRECT; }
static int film(const struct scene *sc) { return sc->simulation.solver == SCENE_SOLVER_NONE; }
static int shared_steps(const struct scene *sc)
{
	return sc->simulation.timesteps == SCENE_TIMESTEPS_SHARED;
}
static int not_fisheye(const struct scene *sc) { return sc->camera.projection != SCENE_PROJ_FISHEYE; }
static int not_pinhole(const struct scene *sc) { return sc->camera.projection != SCENE_PROJ_PERSPECTIVE; }
static int equirect(const struct scene *sc) { return sc->camera.projection == SCENE_PROJ_EQUIRECT; }
static int mono(const struct scene *sc) { return sc->camera.stereo.mode == SCENE_STEREO_NONE; }
static int frame_keys(const struct scene *sc) { return sc->camera.frame == SCENE_FRAME_KEYS; }
static int no_video(const struct scene *sc) { return !sc->output.video[0]; }
static int no_png(const struct scene *sc) { return !sc->output.png_dir[0]; }
static int no_snaps(const struct scene *sc) { return !sc->output.snapshots.dir[0]; }

struct unused_row {
	const char *key;                     /* a scene-level key, or a bodies.* key */
	int (*idle)(const struct scene *sc); /* 1: the scene's choice leaves it unused */
	const char *choice;                  /* the enum key whose value decides, or NULL */
	const char *when;                    /* without a choice: the condition in words */
	const char *why;                     /* why, and what would use it */
	/* the value, in the key's own words, that means "off" or "as if not
	 * given" (render.diffuse: 0): set to it, the key loses nothing and does
	 * not warn. NULL: every value warns. A bodies.* key keeps no place of
	 * its own, so for it this value is also what "not given" means. */
	const char *off;
};

#define STARS_H "each body is a point of light through the PSF of render.psf_fwhm pixels, with no " \
		"smoothing length; render.style: smooth (or the adaptive diffuse layer) would use it"
#define TREE_ONLY "only the barnes-hut tree reads it (simulation.solver: barnes-hut)"
#define BLOCKS_ONLY "only individual time steps read it (simulation.timesteps: individual)"
#define NO_FORCES "film mode computes no forces; a solver (direct or barnes-hut) would use it"
#define TYPE_SOFT(t) {"bodies.*.types." t ".softening", film, "simulation.solver", NULL, NO_FORCES, "0"}

static const struct unused_row unused_rows[] = {
	{"render.smoothing", no_splat_h, "render.style", NULL, STARS_H, NULL},
	{"render.kernel", no_splat_h, "render.style", NULL, STARS_H, NULL},
	{"render.neighbours", no_neighbours, NULL, "no neighbour count is used",
	 "render.smoothing: adaptive under style smooth, or render.diffuse > 0 under style stars, "
	 "would use it", NULL},
	{"render.adaptive_every", no_adaptive_h, NULL, "no adaptive smoothing lengths are made",
	 "render.smoothing: adaptive under style smooth, or render.diffuse with "
	 "diffuse_smoothing: adaptive under style stars, would make them", NULL},
	{"render.h_cap", no_adaptive_h, NULL, "no adaptive smoothing lengths are made",
	 "render.smoothing: adaptive under style smooth, or render.diffuse with "
	 "diffuse_smoothing: adaptive under style stars, would make them", "0"},
	{"render.psf_fwhm", smooth, "render.style", NULL,
	 "each body is spread over its smoothing length; render.style: stars would use it", NULL},
	{"render.diffuse", smooth, "render.style", NULL,
	 "the diffuse layer lies under the stars; render.style: stars would use it", "0"},
	{"render.diffuse_smoothing", smooth, "render.style", NULL,
	 "the diffuse layer lies under the stars; render.style: stars would use it", "screen"},
	{"render.diffuse_smoothing", no_diffuse, NULL, "render.diffuse is 0",
	 "there is no diffuse layer to smooth; render.diffuse > 0 would use it", "screen"},
	{"render.dust_slabs", no_dust, NULL, "no body entry has dust",
	 "the slabs hold dust; bodies.*.dust.mass_fraction > 0 would use it", NULL},
	{"render.motion_blur.shutter", no_blur, NULL, "render.motion_blur.samples is 1",
	 "one sample per frame has no shutter; samples > 1 would use it", NULL},
	{"render.psf_wing_beta", no_wing, NULL, "render.psf_wing is 0",
	 "there is no wing to shape; render.psf_wing > 0 would use it", NULL},
	{"render.glow_threshold", no_glow, NULL, "render.glow is 0",
	 "nothing glows; render.glow > 0 would use it", NULL},
	{"render.white", not_filmic, "render.tonemap", NULL,
	 "it is the filmic curve's shoulder; render.tonemap: filmic would use it", NULL},
	{"render.auto_percentile", fixed_exposure, NULL,
	 "the exposure is fixed (render.exposure a number, or camera.keys.*.exposure)",
	 "render.exposure: auto without key exposures would use it", NULL},
	{"render.auto_smoothing", fixed_exposure, NULL,
	 "the exposure is fixed (render.exposure a number, or camera.keys.*.exposure)",
	 "render.exposure: auto without key exposures would use it", NULL},
	{"render.color_range", by_component, "render.color_by", NULL,
	 "colours come from the components; color_by los_velocity or speed would use it", NULL},
	{"simulation.theta", not_tree, "simulation.solver", NULL, TREE_ONLY, NULL},
	{"simulation.multipoles", not_tree, "simulation.solver", NULL, TREE_ONLY, NULL},
	{"simulation.opening", not_tree, "simulation.solver", NULL, TREE_ONLY, NULL},
	{"simulation.reorder", not_tree, "simulation.solver", NULL, TREE_ONLY " on the GPU", NULL},
	{"simulation.direct_kernel", not_direct, "simulation.solver", NULL,
	 "only the direct sum on the GPU reads it (simulation.solver: direct)", NULL},
	{"simulation.timesteps", film, "simulation.solver", NULL,
	 "film mode takes no steps; a solver (direct or barnes-hut) would use it", "shared"},
	{"simulation.softening_kernel", film, "simulation.solver", NULL, NO_FORCES, "plummer"},
	{"simulation.accuracy", film, "simulation.solver", NULL,
	 "film mode takes no steps and computes no forces; a solver (direct or barnes-hut) "
	 "would use it", "default"},
	{"bodies.*.softening", film, "simulation.solver", NULL, NO_FORCES, "0"},
	{"bodies.*.disk.softening", film, "simulation.solver", NULL, NO_FORCES, "0"},
	{"bodies.*.bulge.softening", film, "simulation.solver", NULL, NO_FORCES, "0"},
	{"bodies.*.halo.softening", film, "simulation.solver", NULL, NO_FORCES, "0"},
	TYPE_SOFT("gas"), TYPE_SOFT("halo"), TYPE_SOFT("disk"), TYPE_SOFT("bulge"),
	TYPE_SOFT("stars"), TYPE_SOFT("bh"),
	{"simulation.eta", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY, NULL},
	{"simulation.blocks_per_frame", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY, NULL},
	{"simulation.max_level", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY, NULL},
	{"simulation.coarsen_margin", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY, NULL},
	{"camera.fov", not_pinhole, "camera.projection", NULL,
	 "the projection's own angles fix the field (camera.fisheye_aperture, or 360 x 180 "
	 "degrees); camera.projection: perspective would use it", NULL},
	{"camera.fisheye_aperture", not_fisheye, "camera.projection", NULL,
	 "only the fisheye reads it (camera.projection: fisheye)", NULL},
	{"camera.dome_tilt", not_fisheye, "camera.projection", NULL,
	 "only the fisheye reads it (camera.projection: fisheye)", NULL},
	{"camera.stereo.convergence", mono, "camera.stereo.mode", NULL,
	 "one eye has no parallax; side-by-side or top-bottom would use it", NULL},
	{"camera.stereo.eye_separation", mono, "camera.stereo.mode", NULL,
	 "one eye has no parallax; side-by-side or top-bottom would use it", NULL},
	{"camera.stereo.convergence", equirect, "camera.projection", NULL,
	 "omni-directional stereo has its zero parallax at infinity; perspective would use it", NULL},
	{"camera.frame_fraction", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it", NULL},
	{"camera.frame_margin", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it", NULL},
	{"camera.frame_range", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it", NULL},
	{"output.codec", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it", NULL},
	{"output.crf", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it", NULL},
	{"output.preset", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it", NULL},
	{"output.png_depth", no_png, NULL, "output.png_dir is \"\"",
	 "no PNG frames are written; output.png_dir would use it", NULL},
	{"output.snapshots.every", no_snaps, NULL, "output.snapshots.dir is \"\"",
	 "no snapshots are written; output.snapshots.dir would use it", NULL},
	{"output.snapshots.files", no_snaps, NULL, "output.snapshots.dir is \"\"",
	 "no snapshots are written; output.snapshots.dir would use it", "1"},
};

/* Say one warning (or, strict, the error) placed at FILE:LINE:COL or at
 * an override's label ORIGIN. NB_EINPUT when strict, else 0. */
static int say(const char *name, const char *origin, int line, int col, const char *key,
	       const char *msg)
{
	char at[600];
	if (origin && origin[0])
		snprintf(at, sizeof at, "%s", origin);
	else
		snprintf(at, sizeof at, "%s:%d:%d", name, line, col);
	if (!strict_on) {
		log_warn("%s: %s: %s", at, key, msg);
		return 0;
	}
	log_error("%s: %s: %s (an error under --strict)", at, key, msg);
	return NB_EINPUT;
}

/* The word of enum key CHOICE's value in SC ("stars"). */
static const char *choice_word(const struct scene *sc, const char *choice)
{
	const struct scene_key *k = scene_schema_find(choice);
	if (!k || k->type != SKEY_ENUM || k->base != SBASE_SCENE)
		return "?";
	const int v = *(const int *)((const char *)sc + k->off);
	int n = 0;
	while (k->names[n])
		n++;
	return v >= 0 && v < n ? k->names[v] : "?";
}

/* 1 when the value of key K at BASE (the scene, or a body entry) is
 * OFF, written in the key's own words: an enum's name, or a number. */
static int at_off(const struct scene_key *k, const void *base, const char *off)
{
	const char *at = (const char *)base + k->off;
	if (!off)
		return 0;
	switch (k->type) {
	case SKEY_ENUM: {
		const int v = *(const int *)at;
		for (int n = 0; k->names[n]; n++)
			if (n == v)
				return strcmp(k->names[n], off) == 0;
		return 0;
	}
	case SKEY_DOUBLE:
		return *(const double *)at == strtod(off, NULL);
	case SKEY_INT:
		return *(const int *)at == (int)strtol(off, NULL, 10);
	default:
		return 0;
	}
}

/* The message of row R: "does nothing with CHOICE: VALUE: why". */
static void row_message(const struct scene *sc, const struct unused_row *r, char *msg, size_t n)
{
	if (r->choice)
		snprintf(msg, n, "does nothing with %s: %s: %s", r->choice, choice_word(sc, r->choice),
			 r->why);
	else
		snprintf(msg, n, "does nothing: %s: %s", r->when, r->why);
}

/* Row R of a bodies.* key K: each entry whose model has the key and whose
 * value is not the row's off value (for these keys: not given) warns,
 * placed at the entry (struct scene's where_body, as scene_fail_key). */
static int warn_body_row(const struct scene *sc, const char *name, const struct unused_row *r,
			 const struct scene_key *k)
{
	char key[160], msg[700];
	for (int b = 0; b < sc->nbodies; b++) {
		const struct scene_body *body = &sc->bodies[b];
		if ((k->models && !(k->models & SMODEL(body->model))) || at_off(k, body, r->off))
			continue;
		snprintf(key, sizeof key, "bodies.%d.%s", b, r->key + strlen("bodies.*."));
		row_message(sc, r, msg, sizeof msg);
		const struct scene_where *w = &sc->where_body[b];
		if (say(name, w->origin, w->line, w->col, key, msg))
			return NB_EINPUT;
	}
	return 0;
}

/* Row I of a scene-level key: warns when the file or a --set gave the key
 * a value other than the row's off value, once per key (an earlier row
 * that fired said it). */
static int warn_scene_row(const struct scene *sc, const char *name, int i, const struct scene_key *k)
{
	const struct unused_row *r = &unused_rows[i];
	const int idx = (int)(k - scene_schema);
	if (idx < 0 || idx >= SCENE_WHERE_MAX || at_off(k, sc, r->off))
		return 0;
	const struct scene_where *w = &sc->where[idx];
	if (!w->origin[0] && w->line <= 0) /* a default: the user said nothing */
		return 0;
	for (int j = 0; j < i; j++)
		if (strcmp(unused_rows[j].key, r->key) == 0 && unused_rows[j].idle(sc) &&
		    !at_off(k, sc, unused_rows[j].off))
			return 0;
	char msg[700];
	row_message(sc, r, msg, sizeof msg);
	return say(name, w->origin, w->line, w->col, r->key, msg);
}

static int warn_rows(const struct scene *sc, const char *name)
{
	const int nrows = (int)(sizeof unused_rows / sizeof unused_rows[0]);
	for (int i = 0; i < nrows; i++) {
		const struct unused_row *r = &unused_rows[i];
		const struct scene_key *k = scene_schema_find(r->key);
		if (!k || !r->idle(sc))
			continue;
		int err = k->base == SBASE_BODY ? warn_body_row(sc, name, r, k)
						: k->base == SBASE_SCENE ? warn_scene_row(sc, name, i, k)
									 : 0;
		if (err)
			return err;
	}
	return 0;
}

/* 0 when the run is a still: its one picture is the preview of its last
 * frame (output.preview_kind: last), and nothing shows frames as a
 * sequence (a video, PNG or FITS frames, snapshots, which record the
 * camera): output.frames then picks the moment, and the keys after it are
 * the path beyond that moment, not a clip cut short. 1 otherwise (a run
 * with no output at all keeps the warning: its clip is what it would
 * show). */
static int has_clip(const struct scene *sc)
{
	const int seq = sc->output.video[0] || sc->output.png_dir[0] || sc->output.fits_dir[0] ||
			sc->output.snapshots.dir[0];
	return seq || !sc->output.preview[0] || sc->output.preview_kind != SCENE_PREVIEW_LAST;
}

/* Camera keys a clip never reaches, and key fovs the projection ignores. */
static int warn_keys(const struct scene *sc, const char *name, const struct ynode *const *key_frame,
		     const struct ynode *const *key_fov)
{
	char key[64], msg[300];
	const int last = sc->output.frames - 1, clip = has_clip(sc);
	for (int i = 0; i < sc->camera.nkeys; i++) {
		const struct ynode *n = key_frame[i];
		if (n && clip && sc->camera.keys[i].frame > last) {
			snprintf(key, sizeof key, "camera.keys.%d.frame", i);
			snprintf(msg, sizeof msg,
				 "frame %d is after the last frame, %d (output.frames: %d): the clip "
				 "ends before this key; more output.frames would reach it",
				 sc->camera.keys[i].frame, last, sc->output.frames);
			if (say(name, n->origin, n->line, n->col, key, msg))
				return NB_EINPUT;
		}
		n = key_fov[i];
		if (n && not_pinhole(sc)) {
			snprintf(key, sizeof key, "camera.keys.%d.fov", i);
			snprintf(msg, sizeof msg,
				 "does nothing with camera.projection: %s: the projection's own angles "
				 "fix the field; camera.projection: perspective would use it",
				 choice_word(sc, "camera.projection"));
			if (say(name, n->origin, n->line, n->col, key, msg))
				return NB_EINPUT;
		}
	}
	return 0;
}

int scene_warn_unused(const struct scene *sc, const char *name,
		      const struct ynode *const *key_frame, const struct ynode *const *key_fov)
{
	if (warn_rows(sc, name))
		return NB_EINPUT;
	return warn_keys(sc, name, key_frame, key_fov);
}
