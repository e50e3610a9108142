/* scene_warn.c - keys that do nothing (scene_warn.h): ONE table of rows
 * {key, ignored when, why}, each row a key the renderer, the engine or the
 * projection reads only under some choice (read from render/, engine/,
 * sim/params.c and render/projection.c), and a test of the scene that
 * says the choice is another. Only keys the file or a --set gave warn
 * (struct scene's where[]), never defaults; camera keys at or after
 * output.frames warn too. A batch loads each run's scene once in the run's
 * process, so each warning is said once per run. */
#include "scene_warn.h"

#include <stdio.h>
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
	const char *key;                     /* a scene-level key */
	int (*idle)(const struct scene *sc); /* 1: the scene's choice leaves it unused */
	const char *choice;                  /* the enum key whose value decides, or NULL */
	const char *when;                    /* without a choice: the condition in words */
	const char *why;                     /* why, and what would use it */
};

#define STARS_H "each body is a point of light through the PSF of render.psf_fwhm pixels, with no " \
		"smoothing length; render.style: smooth (or the adaptive diffuse layer) would use it"
#define TREE_ONLY "only the barnes-hut tree reads it (simulation.solver: barnes-hut)"
#define BLOCKS_ONLY "only individual time steps read it (simulation.timesteps: individual)"

static const struct unused_row unused_rows[] = {
	{"render.smoothing", no_splat_h, "render.style", NULL, STARS_H},
	{"render.kernel", no_splat_h, "render.style", NULL, STARS_H},
	{"render.neighbours", no_neighbours, NULL, "no neighbour count is used",
	 "render.smoothing: adaptive under style smooth, or render.diffuse > 0 under style stars, "
	 "would use it"},
	{"render.adaptive_every", no_adaptive_h, NULL, "no adaptive smoothing lengths are made",
	 "render.smoothing: adaptive under style smooth, or render.diffuse with "
	 "diffuse_smoothing: adaptive under style stars, would make them"},
	{"render.h_cap", no_adaptive_h, NULL, "no adaptive smoothing lengths are made",
	 "render.smoothing: adaptive under style smooth, or render.diffuse with "
	 "diffuse_smoothing: adaptive under style stars, would make them"},
	{"render.psf_fwhm", smooth, "render.style", NULL,
	 "each body is spread over its smoothing length; render.style: stars would use it"},
	{"render.diffuse", smooth, "render.style", NULL,
	 "the diffuse layer lies under the stars; render.style: stars would use it"},
	{"render.diffuse_smoothing", smooth, "render.style", NULL,
	 "the diffuse layer lies under the stars; render.style: stars would use it"},
	{"render.diffuse_smoothing", no_diffuse, NULL, "render.diffuse is 0",
	 "there is no diffuse layer to smooth; render.diffuse > 0 would use it"},
	{"render.dust_slabs", no_dust, NULL, "no body entry has dust",
	 "the slabs hold dust; bodies.*.dust.mass_fraction > 0 would use it"},
	{"render.motion_blur.shutter", no_blur, NULL, "render.motion_blur.samples is 1",
	 "one sample per frame has no shutter; samples > 1 would use it"},
	{"render.psf_wing_beta", no_wing, NULL, "render.psf_wing is 0",
	 "there is no wing to shape; render.psf_wing > 0 would use it"},
	{"render.glow_threshold", no_glow, NULL, "render.glow is 0",
	 "nothing glows; render.glow > 0 would use it"},
	{"render.white", not_filmic, "render.tonemap", NULL,
	 "it is the filmic curve's shoulder; render.tonemap: filmic would use it"},
	{"render.auto_percentile", fixed_exposure, NULL,
	 "the exposure is fixed (render.exposure a number, or camera.keys.*.exposure)",
	 "render.exposure: auto without key exposures would use it"},
	{"render.auto_smoothing", fixed_exposure, NULL,
	 "the exposure is fixed (render.exposure a number, or camera.keys.*.exposure)",
	 "render.exposure: auto without key exposures would use it"},
	{"render.color_range", by_component, "render.color_by", NULL,
	 "colours come from the components; color_by los_velocity or speed would use it"},
	{"simulation.theta", not_tree, "simulation.solver", NULL, TREE_ONLY},
	{"simulation.multipoles", not_tree, "simulation.solver", NULL, TREE_ONLY},
	{"simulation.opening", not_tree, "simulation.solver", NULL, TREE_ONLY},
	{"simulation.reorder", not_tree, "simulation.solver", NULL, TREE_ONLY " on the GPU"},
	{"simulation.direct_kernel", not_direct, "simulation.solver", NULL,
	 "only the direct sum on the GPU reads it (simulation.solver: direct)"},
	{"simulation.timesteps", film, "simulation.solver", NULL,
	 "film mode takes no steps; a solver (direct or barnes-hut) would use it"},
	{"simulation.eta", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY},
	{"simulation.blocks_per_frame", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY},
	{"simulation.max_level", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY},
	{"simulation.coarsen_margin", shared_steps, "simulation.timesteps", NULL, BLOCKS_ONLY},
	{"camera.fov", not_pinhole, "camera.projection", NULL,
	 "the projection's own angles fix the field (camera.fisheye_aperture, or 360 x 180 "
	 "degrees); camera.projection: perspective would use it"},
	{"camera.fisheye_aperture", not_fisheye, "camera.projection", NULL,
	 "only the fisheye reads it (camera.projection: fisheye)"},
	{"camera.dome_tilt", not_fisheye, "camera.projection", NULL,
	 "only the fisheye reads it (camera.projection: fisheye)"},
	{"camera.stereo.convergence", mono, "camera.stereo.mode", NULL,
	 "one eye has no parallax; side-by-side or top-bottom would use it"},
	{"camera.stereo.eye_separation", mono, "camera.stereo.mode", NULL,
	 "one eye has no parallax; side-by-side or top-bottom would use it"},
	{"camera.stereo.convergence", equirect, "camera.projection", NULL,
	 "omni-directional stereo has its zero parallax at infinity; perspective would use it"},
	{"camera.frame_fraction", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it"},
	{"camera.frame_margin", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it"},
	{"camera.frame_range", frame_keys, "camera.frame", NULL,
	 "the keys place the eye; camera.frame: auto would use it"},
	{"output.codec", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it"},
	{"output.crf", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it"},
	{"output.preset", no_video, NULL, "output.video is \"\"",
	 "no video is written; output.video would use it"},
	{"output.png_depth", no_png, NULL, "output.png_dir is \"\"",
	 "no PNG frames are written; output.png_dir would use it"},
	{"output.snapshots.every", no_snaps, NULL, "output.snapshots.dir is \"\"",
	 "no snapshots are written; output.snapshots.dir would use it"},
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

static int warn_rows(const struct scene *sc, const char *name)
{
	const int nrows = (int)(sizeof unused_rows / sizeof unused_rows[0]);
	char msg[700];
	for (int i = 0; i < nrows; i++) {
		const struct unused_row *r = &unused_rows[i];
		const struct scene_key *k = scene_schema_find(r->key);
		const int idx = k ? (int)(k - scene_schema) : -1;
		if (idx < 0 || idx >= SCENE_WHERE_MAX || !r->idle(sc))
			continue;
		const struct scene_where *w = &sc->where[idx];
		if (!w->origin[0] && w->line <= 0) /* a default: the user said nothing */
			continue;
		int said = 0; /* one warning per key: an earlier row said it */
		for (int j = 0; j < i && !said; j++)
			said = strcmp(unused_rows[j].key, r->key) == 0 && unused_rows[j].idle(sc);
		if (said)
			continue;
		if (r->choice)
			snprintf(msg, sizeof msg, "does nothing with %s: %s: %s", r->choice,
				 choice_word(sc, r->choice), r->why);
		else
			snprintf(msg, sizeof msg, "does nothing: %s: %s", r->when, r->why);
		if (say(name, w->origin, w->line, w->col, r->key, msg))
			return NB_EINPUT;
	}
	return 0;
}

/* Camera keys the clip never reaches, and key fovs the projection ignores. */
static int warn_keys(const struct scene *sc, const char *name, const struct ynode *const *key_frame,
		     const struct ynode *const *key_fov)
{
	char key[64], msg[300];
	const int last = sc->output.frames - 1;
	for (int i = 0; i < sc->camera.nkeys; i++) {
		const struct ynode *n = key_frame[i];
		if (n && sc->camera.keys[i].frame > last) {
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
