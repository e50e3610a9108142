/* test_scene.c - the scene loader (sim/scene*.c): the contract file loads as
 * written, documented defaults, --set overrides, emit round trip, galactic
 * unit factors against physical constants, body counts, docs coverage. Bad
 * input and its messages: test_scene_errors.c.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_scene && /tmp/b/tests/test_scene
 * (run from the repository root: it reads tests/data/ and docs/scenes.md). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "scene/log.h"
#include "scene/scene.h"
#include "scene/scene_schema.h"
#include "sim/sim.h"

static struct scene g_sc, g_sc2; /* large: keep off the stack */
#include "test_scene_util.h"

static void assert_vec(const double *v, double x, double y, double z)
{
	ck_assert_msg(v[0] == x && v[1] == y && v[2] == z, "got [%g, %g, %g], expected [%g, %g, %g]",
		      v[0], v[1], v[2], x, y, z);
}

static void assert_color(const float *v, float x, float y, float z)
{
	ck_assert_msg(v[0] == x && v[1] == y && v[2] == z, "got [%g, %g, %g], expected [%g, %g, %g]",
		      v[0], v[1], v[2], x, y, z);
}

static const char *MIN = "bodies: [{name: a, model: plummer}]\n";

/* ---- the contract file ---- */

START_TEST(contract_file_loads_as_written)
{
	struct scene *sc = &g_sc;
	int err = load_file("tests/data/plummer-small.yaml", NULL, 0, sc);
	ck_assert_msg(err == 0, "load failed: %s", g_err);
	ck_assert_str_eq(g_err, "");
	ck_assert_str_eq(sc->path, "tests/data/plummer-small.yaml");
	ck_assert_str_eq(sc->dir, "tests/data");
	ck_assert_int_eq(sc->units, SCENE_UNITS_NBODY);
	ck_assert(sc->seed == 7);
	ck_assert_int_eq(sc->simulation.solver, SCENE_SOLVER_DIRECT);
	ck_assert(sc->simulation.theta == 0.5);
	ck_assert(sc->simulation.softening == 0.01);
	ck_assert(sc->simulation.dt == 0.001);
	ck_assert_int_eq(sc->simulation.steps_per_frame, 10);
	ck_assert_int_eq(sc->simulation.backend, SCENE_BACKEND_CPU);
	ck_assert_int_eq(sc->nbodies, 1);
	const struct scene_body *b = &sc->bodies[0];
	ck_assert_str_eq(b->name, "cluster");
	ck_assert_int_eq(b->model, SCENE_MODEL_PLUMMER);
	ck_assert_int_eq(b->count, 2000);
	ck_assert(b->mass == 1.0 && b->scale == 1.0);
	ck_assert(b->rmax == 20.0);
	assert_vec(b->position, 0, 0, 0);
	assert_vec(b->velocity, 0, 0, 0);
	assert_color(b->color, 1.0f, 0.85f, 0.6f);
	ck_assert(sc->camera.fov == 40);
	ck_assert_int_eq(sc->camera.nkeys, 1);
	const struct scene_camera_key *k = &sc->camera.keys[0];
	ck_assert_int_eq(k->frame, 0);
	assert_vec(k->position, 0, -8, 3);
	assert_vec(k->target, 0, 0, 0);
	ck_assert(k->has_position && k->has_target && !k->has_up && !k->has_fov);
	assert_vec(k->up, 0, 0, 1); /* from the camera default */
	ck_assert(k->fov == 40);
	ck_assert_int_eq(sc->render.width, 320);
	ck_assert_int_eq(sc->render.height, 180);
	ck_assert(sc->render.exposure == 1.0);
	ck_assert_int_eq(sc->output.frames, 30);
	ck_assert_int_eq(sc->output.fps, 30);
	ck_assert_str_eq(sc->output.video, "out/plummer.mp4");
	ck_assert_str_eq(sc->output.png_dir, "out/plummer-frames");
	ck_assert_str_eq(sc->output.stats, "out/plummer-stats.csv");
	ck_assert_str_eq(sc->output.initial_state, "out/plummer-initial.csv");
	ck_assert_str_eq(sc->output.final_state, "out/plummer-final.csv");
	ck_assert_str_eq(sc->output.preview, "");
	ck_assert_int_eq(sc->output.preview_kind, SCENE_PREVIEW_NONE);
	ck_assert_int_eq(sc->encounter.enabled, 0);
	ck_assert_int_eq(scene_find_body(sc, "cluster"), 0);
	ck_assert_int_eq(scene_find_body(sc, "nope"), -1);
}
END_TEST

/* The defaults promised in docs/scenes.md. */
START_TEST(defaults_fill_every_key)
{
	struct scene *sc = &g_sc;
	int err = load_str("bodies: [{name: p, model: plummer}, {name: h, model: hernquist},\n"
			   "         {name: g, model: disk-galaxy}]\n",
			   NULL, 0, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sc->units, SCENE_UNITS_NBODY);
	ck_assert(sc->seed == 1);
	ck_assert_int_eq(sc->simulation.solver, SCENE_SOLVER_DIRECT);
	ck_assert(sc->simulation.theta == 0.5);
	ck_assert_int_eq(sc->simulation.multipoles, 2);
	ck_assert(sc->simulation.softening == 0.01);
	ck_assert(sc->simulation.dt == 0.001);
	ck_assert_int_eq(sc->simulation.steps_per_frame, 10);
	ck_assert_int_eq(sc->simulation.backend, SCENE_BACKEND_AUTO);
	ck_assert_int_eq(sc->simulation.direct_kernel, SCENE_DIRECT_AUTO);
	ck_assert_int_eq(sc->bodies[0].count, 1000);
	ck_assert(sc->bodies[0].rmax == 20 && sc->bodies[1].rmax == 50);
	ck_assert(sc->bodies[0].mass == 1 && sc->bodies[0].scale == 1);
	assert_color(sc->bodies[0].color, 1, 1, 1);
	ck_assert(sc->bodies[2].disk.count > 0 && sc->bodies[2].bulge.count > 0 &&
		  sc->bodies[2].halo.count > 0);
	ck_assert(sc->bodies[2].disk.toomre_q > 0 && sc->bodies[2].disk.scale_height > 0);
	assert_vec(sc->camera.position, 0, -10, 4);
	assert_vec(sc->camera.target, 0, 0, 0);
	assert_vec(sc->camera.up, 0, 0, 1);
	ck_assert(sc->camera.fov == 40);
	ck_assert_str_eq(sc->camera.follow, "");
	ck_assert(sc->camera.orbit == 0);
	ck_assert_int_eq(sc->camera.nkeys, 1); /* one key with the defaults */
	ck_assert_int_eq(sc->camera.keys[0].frame, 0);
	assert_vec(sc->camera.keys[0].position, 0, -10, 4);
	ck_assert_int_eq(sc->render.width, 1280);
	ck_assert_int_eq(sc->render.height, 720);
	ck_assert(sc->render.exposure_auto == 1 && sc->render.gamma == 2.2); /* the default look */
	ck_assert_int_eq(sc->render.tonemap, SCENE_TONEMAP_FILMIC);
	ck_assert_int_eq(sc->render.style, SCENE_STYLE_STARS);
	ck_assert(sc->render.glow == 0.3 && sc->render.diffuse == 0);
	ck_assert_int_eq(sc->render.kernel, SCENE_KERNEL_CUBIC);
	ck_assert_int_eq(sc->render.mode, SCENE_COLOR_COMPONENTS);
	ck_assert_int_eq(sc->render.colormap, SCENE_CMAP_MAGMA);
	ck_assert(sc->render.smoothing == 0.05 && !sc->render.smoothing_adaptive);
	ck_assert_int_eq(sc->render.neighbours, 32);
	assert_color(sc->render.background, 0, 0, 0);
	ck_assert_int_eq(sc->output.frames, 60);
	ck_assert_int_eq(sc->output.fps, 30);
	ck_assert_int_eq(sc->output.crf, 20);
	ck_assert_str_eq(sc->output.preset, "veryfast");
	ck_assert_int_eq(sc->output.codec, SCENE_CODEC_H264);
	ck_assert_int_eq(sc->output.png_depth, 8);
	ck_assert_str_eq(sc->output.video, "");
	ck_assert_str_eq(sc->output.resolved_scene, "");
	ck_assert_int_eq(sc->output.preview_kind, SCENE_PREVIEW_NONE);
	ck_assert_int_eq(sc->encounter.enabled, 0);

	/* galactic units: lengths in kpc, so the length-like defaults grow */
	err = load_str("units: galactic\nbodies: [{name: p, model: plummer}]\n", NULL, 0, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sc->units, SCENE_UNITS_GALACTIC);
	ck_assert(sc->simulation.softening == 0.1);
	assert_vec(sc->camera.position, 0, -60, 25);
}
END_TEST

START_TEST(galaxy_scene_loads)
{
	struct scene *sc = &g_sc;
	int err = load_file("tests/data/good-galaxies.yaml", NULL, 0, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sc->units, SCENE_UNITS_GALACTIC);
	ck_assert_int_eq(sc->simulation.solver, SCENE_SOLVER_BARNES_HUT);
	ck_assert_int_eq(sc->simulation.multipoles, 1);
	ck_assert_int_eq(sc->nbodies, 2);
	const struct scene_body *mw = &sc->bodies[0], *m31 = &sc->bodies[1];
	ck_assert_int_eq(mw->model, SCENE_MODEL_DISK_GALAXY);
	ck_assert_int_eq(mw->disk.count, 3000);
	ck_assert(mw->disk.mass == 5e10 && mw->disk.scale == 3 && mw->disk.scale_height == 0.3);
	ck_assert(mw->disk.toomre_q == 1.2);
	assert_color(mw->disk.color, 0.6f, 0.7f, 1.0f);
	ck_assert_int_eq(mw->bulge.count, 500);
	ck_assert(mw->bulge.mass == 1e10 && mw->bulge.scale == 0.7);
	ck_assert(mw->halo.mass == 4e11 && mw->halo.scale == 25);
	ck_assert(m31->inclination == 30 && m31->position_angle == -45);
	ck_assert_int_eq(m31->disk.count, 2000);
	ck_assert_int_eq(m31->halo.count, 0);
	ck_assert_int_eq(sc->encounter.enabled, 1);
	ck_assert(sc->encounter.pericenter == 12 && sc->encounter.separation == 80);
	ck_assert(sc->encounter.eccentricity == 1);
	ck_assert_int_eq(sc->encounter.spin[0], SCENE_SPIN_PROGRADE);
	ck_assert_int_eq(sc->encounter.spin[1], SCENE_SPIN_RETROGRADE);
	ck_assert(sc->encounter.inclination[0] == 15 && sc->encounter.inclination[1] == 60);
	ck_assert(sc->encounter.omega[0] == -30 && sc->encounter.omega[1] == 90);
	ck_assert_str_eq(sc->camera.follow, "milky-way.disk");
	ck_assert_int_eq(sc->camera.nkeys, 3);
	ck_assert(sc->camera.keys[0].fov == 50 && sc->camera.keys[1].fov == 40);
	assert_vec(sc->camera.keys[1].target, 10, 0, 0);
	assert_vec(sc->camera.keys[1].position, 0, -60, 25); /* galactic default */
	assert_vec(sc->camera.keys[2].up, 0, 1, 1);
	ck_assert_int_eq(sc->render.smoothing_adaptive, 1);
	ck_assert_int_eq(sc->render.mode, SCENE_COLOR_DENSITY);
	ck_assert_int_eq(sc->render.colormap, SCENE_CMAP_VIRIDIS);
	ck_assert_int_eq(sc->render.tonemap, SCENE_TONEMAP_LOG);
	ck_assert_int_eq(sc->render.kernel, SCENE_KERNEL_GAUSSIAN);
	ck_assert_str_eq(sc->output.preview, "out/galaxies.JPG");
	ck_assert_int_eq(sc->output.preview_kind, SCENE_PREVIEW_SHEET);
	ck_assert_int_eq(sc->output.codec, SCENE_CODEC_H265);
	ck_assert_str_eq(sc->output.preset, "slow");
	ck_assert_int_eq(sc->output.png_depth, 16);
	ck_assert_int_eq(scene_find_body(sc, "andromeda"), 1);
}
END_TEST





/* Never crash: junk of every shape is NB_EINPUT with one message. */

/* ---- --set ---- */

START_TEST(overrides_set_values)
{
	struct scene *sc = &g_sc;
	const char *ov[] = {"simulation.dt=0.0025", "bodies.0.count=500",
			    "camera.keys.0.position=[0,-5,2]", "render.smoothing=adaptive",
			    "bodies.0.color=[0.5, 0.25, 1]", "camera.keys.1={frame: 20, fov: 30}",
			    "output.video=", "seed=18446744073709551615", "bodies.0.count=1e4"};
	int err = load_file("tests/data/plummer-small.yaml", ov, 9, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert(sc->simulation.dt == 0.0025);
	ck_assert_int_eq(sc->bodies[0].count, 10000); /* the later --set wins */
	assert_vec(sc->camera.keys[0].position, 0, -5, 2);
	assert_vec(sc->camera.keys[0].target, 0, 0, 0); /* the rest of the key is kept */
	ck_assert_int_eq(sc->render.smoothing_adaptive, 1);
	assert_color(sc->bodies[0].color, 0.5f, 0.25f, 1.0f);
	ck_assert_int_eq(sc->camera.nkeys, 2);
	ck_assert_int_eq(sc->camera.keys[1].frame, 20);
	ck_assert(sc->camera.keys[1].fov == 30 && sc->camera.keys[1].has_fov);
	ck_assert_str_eq(sc->output.video, "");
	ck_assert(sc->seed == UINT64_MAX);
	ck_assert_str_eq(sc->bodies[0].name, "cluster"); /* untouched */

	/* a new body entry, and --set on a scene without the section */
	const char *ov2[] = {"bodies.1={name: b, model: hernquist}", "bodies.1.count=7",
			     "encounter.pericenter=2", "render.smoothing=0.125"};
	err = load_str(MIN, ov2, 4, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_int_eq(sc->nbodies, 2);
	ck_assert_int_eq(sc->bodies[1].model, SCENE_MODEL_HERNQUIST);
	ck_assert_int_eq(sc->bodies[1].count, 7);
	ck_assert(sc->bodies[1].rmax == 50);
	ck_assert_int_eq(sc->encounter.enabled, 1);
	ck_assert(sc->encounter.pericenter == 2);
	ck_assert(sc->render.smoothing == 0.125 && !sc->render.smoothing_adaptive);

	/* units switch picks the galactic defaults */
	const char *ov3[] = {"units=galactic"};
	err = load_str(MIN, ov3, 1, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert(sc->simulation.softening == 0.1);
}
END_TEST


/* ---- emit ---- */

static char *emit_to_string(const struct scene *sc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(scene_emit(sc, f), 0);
	fclose(f);
	return buf;
}

/* Field-by-field equality of one bodies entry. */
static void assert_same_body(const struct scene_body *x, const struct scene_body *y)
{
	ck_assert_str_eq(x->name, y->name);
	ck_assert_int_eq(x->model, y->model);
	ck_assert_int_eq(x->count, y->count);
	ck_assert(x->mass == y->mass && x->scale == y->scale && x->rmax == y->rmax);
	for (int j = 0; j < 3; j++)
		ck_assert(x->position[j] == y->position[j] && x->velocity[j] == y->velocity[j] &&
			  x->color[j] == y->color[j]);
	ck_assert_str_eq(x->file, y->file);
	ck_assert(x->inclination == y->inclination && x->position_angle == y->position_angle);
	const struct scene_part *px[3] = {&x->disk, &x->bulge, &x->halo};
	const struct scene_part *py[3] = {&y->disk, &y->bulge, &y->halo};
	for (int p = 0; p < 3; p++) {
		ck_assert_int_eq(px[p]->count, py[p]->count);
		ck_assert(px[p]->mass == py[p]->mass && px[p]->scale == py[p]->scale &&
			  px[p]->scale_height == py[p]->scale_height &&
			  px[p]->toomre_q == py[p]->toomre_q);
		for (int j = 0; j < 3; j++)
			ck_assert(px[p]->color[j] == py[p]->color[j]);
	}
}

/* Field-by-field equality of the parts emit must preserve. */
static void assert_same_scene(const struct scene *a, const struct scene *b)
{
	ck_assert_int_eq(a->units, b->units);
	ck_assert(a->seed == b->seed);
	ck_assert(memcmp(&a->simulation, &b->simulation, sizeof(a->simulation)) == 0 ||
		  (a->simulation.solver == b->simulation.solver &&
		   a->simulation.theta == b->simulation.theta &&
		   a->simulation.multipoles == b->simulation.multipoles &&
		   a->simulation.softening == b->simulation.softening &&
		   a->simulation.dt == b->simulation.dt &&
		   a->simulation.steps_per_frame == b->simulation.steps_per_frame &&
		   a->simulation.backend == b->simulation.backend &&
		   a->simulation.direct_kernel == b->simulation.direct_kernel));
	ck_assert_int_eq(a->nbodies, b->nbodies);
	for (int i = 0; i < a->nbodies; i++)
		assert_same_body(&a->bodies[i], &b->bodies[i]);
	ck_assert_int_eq(a->encounter.enabled, b->encounter.enabled);
	ck_assert(a->encounter.pericenter == b->encounter.pericenter &&
		  a->encounter.separation == b->encounter.separation &&
		  a->encounter.eccentricity == b->encounter.eccentricity);
	for (int j = 0; j < 2; j++)
		ck_assert(a->encounter.spin[j] == b->encounter.spin[j] &&
			  a->encounter.inclination[j] == b->encounter.inclination[j] &&
			  a->encounter.omega[j] == b->encounter.omega[j]);
	for (int j = 0; j < 3; j++)
		ck_assert(a->camera.position[j] == b->camera.position[j] &&
			  a->camera.target[j] == b->camera.target[j] && a->camera.up[j] == b->camera.up[j]);
	ck_assert(a->camera.fov == b->camera.fov && a->camera.orbit == b->camera.orbit);
	ck_assert_str_eq(a->camera.follow, b->camera.follow);
	ck_assert_int_eq(a->camera.nkeys, b->camera.nkeys);
	for (int i = 0; i < a->camera.nkeys; i++) {
		const struct scene_camera_key *x = &a->camera.keys[i], *y = &b->camera.keys[i];
		ck_assert_int_eq(x->frame, y->frame);
		ck_assert(x->fov == y->fov && x->has_position == y->has_position &&
			  x->has_target == y->has_target && x->has_up == y->has_up &&
			  x->has_fov == y->has_fov);
		for (int j = 0; j < 3; j++)
			ck_assert(x->position[j] == y->position[j] && x->target[j] == y->target[j] &&
				  x->up[j] == y->up[j]);
	}
	ck_assert(a->render.width == b->render.width && a->render.height == b->render.height);
	ck_assert(a->render.exposure == b->render.exposure && a->render.gamma == b->render.gamma);
	ck_assert(a->render.tonemap == b->render.tonemap && a->render.mode == b->render.mode &&
		  a->render.colormap == b->render.colormap && a->render.kernel == b->render.kernel);
	ck_assert(a->render.smoothing == b->render.smoothing &&
		  a->render.smoothing_adaptive == b->render.smoothing_adaptive &&
		  a->render.neighbours == b->render.neighbours);
	for (int j = 0; j < 3; j++)
		ck_assert(a->render.background[j] == b->render.background[j]);
	ck_assert(a->output.frames == b->output.frames && a->output.fps == b->output.fps);
	ck_assert_str_eq(a->output.video, b->output.video);
	ck_assert_str_eq(a->output.png_dir, b->output.png_dir);
	ck_assert_str_eq(a->output.stats, b->output.stats);
	ck_assert_str_eq(a->output.initial_state, b->output.initial_state);
	ck_assert_str_eq(a->output.final_state, b->output.final_state);
	ck_assert_str_eq(a->output.preview, b->output.preview);
	ck_assert_int_eq(a->output.preview_kind, b->output.preview_kind);
	ck_assert_int_eq(a->output.codec, b->output.codec);
	ck_assert_int_eq(a->output.crf, b->output.crf);
	ck_assert_str_eq(a->output.preset, b->output.preset);
	ck_assert_int_eq(a->output.png_depth, b->output.png_depth);
	ck_assert_str_eq(a->output.resolved_scene, b->output.resolved_scene);
}

static void round_trip(const struct scene *a)
{
	char *t1 = emit_to_string(a);
	int err = load_str(t1, NULL, 0, &g_sc2);
	ck_assert_msg(err == 0, "emitted scene does not load: %s\n%s", g_err, t1);
	assert_same_scene(a, &g_sc2);
	char *t2 = emit_to_string(&g_sc2);
	/* the first line names the source file; the rest must match exactly */
	ck_assert_str_eq(strchr(t1, '\n'), strchr(t2, '\n'));
	free(t1);
	free(t2);
}

START_TEST(emit_round_trips)
{
	ck_assert_int_eq(load_file("tests/data/plummer-small.yaml", NULL, 0, &g_sc), 0);
	round_trip(&g_sc);
	ck_assert_int_eq(load_file("tests/data/good-galaxies.yaml", NULL, 0, &g_sc), 0);
	round_trip(&g_sc);
	/* awkward values: 0.1-style decimals, tiny and huge numbers, quotes in paths */
	const char *ov[] = {"simulation.dt=0.1", "simulation.softening=3.0000000000000004e-7",
			    "bodies.0.mass=1.0000000000000002e-200", "bodies.0.color=[0.1, 0.2, 0.3]",
			    "output.video=\"we\\\"ird \\\\ name: #1.mp4\"", "camera.orbit=-0.30000000000000004",
			    "render.background=[1e-7, 3.4e5, 0.7]"};
	int err = load_file("tests/data/plummer-small.yaml", ov, 7, &g_sc);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_str_eq(g_sc.output.video, "we\"ird \\ name: #1.mp4");
	round_trip(&g_sc);
}
END_TEST

/* ---- units ---- */

START_TEST(galactic_units_match_physical_constants)
{
	/* Independent constants (SI): IAU 2015 nominal GM_sun, IAU 2012 au,
	 * parsec = 648000/pi au, Julian year. */
	const double GM_sun = 1.3271244e20;            /* m^3 s^-2 */
	const double au = 1.495978707e11;              /* m */
	const double kpc = 1e3 * 648000.0 / M_PI * au; /* m */
	const double myr = 1e6 * 365.25 * 86400.0;    /* s */
	const double v = 1e5;                          /* 100 km/s in m/s */
	double mass_unit = v * v * kpc / GM_sun;       /* M_sun per internal mass unit */
	double time_unit = kpc / v / myr;              /* Myr per internal time unit */
	double G_kpc = GM_sun / (kpc * 1e6);           /* kpc (km/s)^2 / M_sun */

	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	ck_assert_close(1.0 / u.mass, mass_unit, 0, 1e-3);
	ck_assert_close(1.0 / u.mass, 2.325e9, 0, 1e-3);
	ck_assert_close(1.0 / u.time, time_unit, 0, 1e-3);
	ck_assert_close(1.0 / u.time, 9.78, 0, 1e-3);
	ck_assert_close(u.length, 1.0, 0, 1e-12);
	ck_assert_close(u.velocity, 0.01, 0, 1e-12);
	ck_assert_close(u.G_scene, G_kpc, 0, 1e-4);
	/* G = 1 internally: G_scene * L V^2 / M factors */
	ck_assert_close(u.G_scene * u.length * u.velocity * u.velocity / u.mass, 1.0, 0, 1e-12);
	/* a circular orbit: v = sqrt(G M / r) and period 2 pi r / v agree in both systems */
	double M = 1e11, r = 8; /* M_sun, kpc */
	double v_kms = sqrt(u.G_scene * M / r);
	double v_int = sqrt(M * u.mass / (r * u.length));
	ck_assert_close(v_kms * u.velocity, v_int, 0, 1e-12);

	scene_units_of(SCENE_UNITS_NBODY, &u);
	ck_assert(u.length == 1 && u.velocity == 1 && u.mass == 1 && u.time == 1 && u.G_scene == 1);
}
END_TEST

/* ---- body count and docs ---- */

START_TEST(body_count_sums_entries)
{
	struct scene *sc = &g_sc;
	int err = load_file("tests/data/good-galaxies.yaml", NULL, 0, sc);
	ck_assert_msg(err == 0, "%s", g_err);
	/* milky-way 3000 + 500 + 4000; andromeda 2000 + bulge default + 0 */
	long bulge_default = sc->bodies[1].bulge.count;
	ck_assert_int_eq(sim_scene_body_count(sc), 7500 + 2000 + bulge_default);

	char dir[] = "/tmp/nb-scene-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char csv[256];
	snprintf(csv, sizeof(csv), "%s/three.csv", dir);
	FILE *f = fopen(csv, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n1,a,1,1,0,0,0,0,0\n"
		   "2,a,1,0,1,0,0,0,0\n");
	fclose(f);
	FILE *tmp;
	int saved;
	cap_begin(&tmp, &saved);
	err = scene_load_string("bodies: [{name: f, model: file, file: three.csv},\n"
				    "         {name: p, model: plummer, count: 10}]\n",
				    "t.yaml", dir, NULL, 0, sc);
	cap_end(tmp, saved);
	ck_assert_msg(err == 0, "%s", g_err);
	ck_assert_msg(sc->bodies[0].file[0] == '/', "file model path stored absolute: %s",
		      sc->bodies[0].file);
	ck_assert_int_eq(sim_scene_body_count(sc), 13);
	remove(csv);
	rmdir(dir);
}
END_TEST

START_TEST(docs_list_every_key)
{
	FILE *f = fopen("docs/scenes.md", "r");
	ck_assert_msg(f != NULL, "docs/scenes.md is missing");
	static char doc[200000];
	size_t n = fread(doc, 1, sizeof(doc) - 1, f);
	doc[n] = '\0';
	fclose(f);
	for (int i = 0; i < scene_schema_count; i++) {
		char want[160];
		snprintf(want, sizeof(want), "`%s`", scene_schema[i].path);
		ck_assert_msg(strstr(doc, want), "docs/scenes.md does not document %s", want);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("scene");
	TCase *tc = tcase_create("scene");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, contract_file_loads_as_written);
	tcase_add_test(tc, defaults_fill_every_key);
	tcase_add_test(tc, galaxy_scene_loads);
	tcase_add_test(tc, overrides_set_values);
	tcase_add_test(tc, emit_round_trips);
	tcase_add_test(tc, galactic_units_match_physical_constants);
	tcase_add_test(tc, body_count_sums_entries);
	tcase_add_test(tc, docs_list_every_key);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
