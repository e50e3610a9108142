/* test_camera.c - render_camera_at: keys, spline continuity, follow, orbit.
 *
 * Scenes are filled by hand (calloc + fields) so these tests do not depend on
 * the scene loader. Run: make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_camera &&
 * /tmp/b/tests/test_camera */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"

static struct scene *scene_new(void)
{
	struct scene *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	sc->units = SCENE_UNITS_NBODY;
	double pos[3] = {0, -10, 2}, up[3] = {0, 0, 1};
	memcpy(sc->camera.position, pos, sizeof pos);
	memcpy(sc->camera.up, up, sizeof up);
	sc->camera.fov = 40;
	sc->output.frames = 100;
	sc->render.width = 64;
	sc->render.height = 48;
	return sc;
}

static void add_key(struct scene *sc, int frame, const double *pos, const double *target,
		    const double *up, double fov)
{
	struct scene_camera_key *k = &sc->camera.keys[sc->camera.nkeys++];
	k->frame = frame;
	if (pos) {
		memcpy(k->position, pos, 3 * sizeof *pos);
		k->has_position = 1;
	}
	if (target) {
		memcpy(k->target, target, 3 * sizeof *target);
		k->has_target = 1;
	}
	if (up) {
		memcpy(k->up, up, 3 * sizeof *up);
		k->has_up = 1;
	}
	if (fov > 0) {
		k->fov = fov;
		k->has_fov = 1;
	}
}

static void assert_v3(const double *a, const double *b, double atol)
{
	for (int d = 0; d < 3; d++)
		ck_assert_close(a[d], b[d], atol, 0.0);
}

START_TEST(no_keys_gives_defaults)
{
	struct scene *sc = scene_new();
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(sc, 17, NULL, &cam), 0);
	assert_v3(cam.pos, sc->camera.position, 0);
	assert_v3(cam.target, sc->camera.target, 0);
	assert_v3(cam.up, sc->camera.up, 0);
	ck_assert_close(cam.fov, 40.0, 0, 0);
	free(sc);
}
END_TEST

START_TEST(keys_hit_exactly)
{
	struct scene *sc = scene_new();
	double p[5][3] = {{1, -9, 2}, {3.3, -7, 1}, {-2, 4.5, 0.25}, {-2.1, 4.4, 0.3}, {8, 1, -3}};
	double t[5][3] = {{0, 0, 0}, {0.5, 0, 0}, {1, 1, 0}, {1, 1.2, 0.1}, {-1, 0, 2}};
	double up[3] = {0, 0.1, 1};
	int frames[5] = {0, 7, 40, 41, 100};
	/* Key 1 leaves out target and fov; key 3 leaves out position and up. */
	add_key(sc, frames[0], p[0], t[0], up, 30);
	add_key(sc, frames[1], p[1], NULL, up, 0);
	add_key(sc, frames[2], p[2], t[2], NULL, 50);
	add_key(sc, frames[3], NULL, t[3], NULL, 55);
	add_key(sc, frames[4], p[4], t[4], up, 20);
	for (int k = 0; k < 5; k++) {
		struct render_camera cam;
		ck_assert_int_eq(render_camera_at(sc, frames[k], NULL, &cam), 0);
		const struct scene_camera_key *key = &sc->camera.keys[k];
		assert_v3(cam.pos, key->has_position ? key->position : sc->camera.position, 1e-12);
		assert_v3(cam.target, key->has_target ? key->target : sc->camera.target, 1e-12);
		assert_v3(cam.up, key->has_up ? key->up : sc->camera.up, 1e-12);
		ck_assert_close(cam.fov, key->has_fov ? key->fov : sc->camera.fov, 1e-12, 0);
	}
	/* Before the first key and after the last one the camera holds. */
	free(sc);
	sc = scene_new();
	add_key(sc, 10, p[0], t[0], up, 30);
	add_key(sc, 20, p[1], t[1], up, 35);
	struct render_camera c0, c1;
	ck_assert_int_eq(render_camera_at(sc, 0, NULL, &c0), 0);
	ck_assert_int_eq(render_camera_at(sc, 90, NULL, &c1), 0);
	assert_v3(c0.pos, p[0], 1e-12);
	assert_v3(c1.pos, p[1], 1e-12);
	ck_assert_close(c1.fov, 35, 1e-12, 0);
	free(sc);
}
END_TEST

/* Two keys: the end tangents are the chord, so the path is the straight line
 * at constant speed; up and fov are linear. */
START_TEST(two_keys_are_a_straight_line)
{
	struct scene *sc = scene_new();
	double p0[3] = {1, 2, 3}, p1[3] = {11, -8, 5}, t0[3] = {0, 0, 0}, t1[3] = {2, 2, 2};
	double u0[3] = {0, 0, 1}, u1[3] = {0, 1, 1};
	add_key(sc, 0, p0, t0, u0, 30);
	add_key(sc, 10, p1, t1, u1, 60);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(sc, 3, NULL, &cam), 0);
	for (int d = 0; d < 3; d++) {
		ck_assert_close(cam.pos[d], p0[d] + 0.3 * (p1[d] - p0[d]), 1e-12, 0);
		ck_assert_close(cam.target[d], t0[d] + 0.3 * (t1[d] - t0[d]), 1e-12, 0);
		ck_assert_close(cam.up[d], u0[d] + 0.3 * (u1[d] - u0[d]), 1e-12, 0);
	}
	ck_assert_close(cam.fov, 39.0, 1e-12, 0);
	free(sc);
}
END_TEST

/* Velocity in frames is continuous at a key even when the neighbouring key
 * intervals differ (2000 vs 600 frames): one-sided finite differences on
 * both sides agree with each other and with the Catmull-Rom tangent
 * (p_{k+1} - p_{k-1}) / (t_{k+1} - t_{k-1}). A spline parameterised by key
 * index would give speeds in the ratio 2000:600 here. */
START_TEST(velocity_continuous_across_key)
{
	struct scene *sc = scene_new();
	double p[4][3] = {{0, -10, 2}, {8, -3, 4}, {6, 5, 1}, {-7, 2, 9}};
	double tg[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 3, 0}, {0, 1, -2}};
	int fr[4] = {0, 2000, 2600, 5000};
	for (int k = 0; k < 4; k++)
		add_key(sc, fr[k], p[k], tg[k], NULL, 0);
	sc->output.frames = 5001;
	for (int k = 1; k <= 2; k++) {
		struct render_camera a, b, c;
		ck_assert_int_eq(render_camera_at(sc, fr[k] - 1, NULL, &a), 0);
		ck_assert_int_eq(render_camera_at(sc, fr[k], NULL, &b), 0);
		ck_assert_int_eq(render_camera_at(sc, fr[k] + 1, NULL, &c), 0);
		double dt = fr[k + 1] - fr[k - 1];
		for (int d = 0; d < 3; d++) {
			double m = (p[k + 1][d] - p[k - 1][d]) / dt;
			double mt = (tg[k + 1][d] - tg[k - 1][d]) / dt;
			double vl = b.pos[d] - a.pos[d], vr = c.pos[d] - b.pos[d];
			double wl = b.target[d] - a.target[d], wr = c.target[d] - b.target[d];
			/* One-sided differences differ from m by |p''|/2 per frame,
			 * ~ 6 |dp| / h^2 ~ 2e-4 here; speeds are ~ 5e-3. */
			ck_assert_close(vl, m, 3e-4, 0);
			ck_assert_close(vr, m, 3e-4, 0);
			ck_assert_close(vr, vl, 5e-4, 0);
			ck_assert_close(wl, mt, 3e-4, 0);
			ck_assert_close(wr, mt, 3e-4, 0);
		}
	}
	free(sc);
}
END_TEST

START_TEST(degenerate_up_gives_finite_basis)
{
	struct render_camera cam = {.pos = {0, 0, 5}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 45};
	struct render_view v;
	render_view_make(&cam, 64, 48, &v);
	double dots[3] = {
		v.fwd[0] * v.right[0] + v.fwd[1] * v.right[1] + v.fwd[2] * v.right[2],
		v.fwd[0] * v.upv[0] + v.fwd[1] * v.upv[1] + v.fwd[2] * v.upv[2],
		v.right[0] * v.upv[0] + v.right[1] * v.upv[1] + v.right[2] * v.upv[2],
	};
	for (int d = 0; d < 3; d++) {
		ck_assert(isfinite(v.right[d]) && isfinite(v.upv[d]));
		ck_assert_close(dots[d], 0.0, 1e-12, 0);
	}
	ck_assert_close(v.right[0] * v.right[0] + v.right[1] * v.right[1] + v.right[2] * v.right[2],
			1.0, 1e-12, 0);
	/* Zero up and position == target: still finite. */
	struct render_camera bad = {.pos = {1, 1, 1}, .target = {1, 1, 1}, .up = {0, 0, 0}, .fov = 45};
	render_view_make(&bad, 64, 48, &v);
	for (int d = 0; d < 3; d++)
		ck_assert(isfinite(v.fwd[d]) && isfinite(v.right[d]) && isfinite(v.upv[d]));
}
END_TEST

/* Three components: "a" (bodies 0-1), "gal.disk" (2-3), "gal.bulge" (4),
 * "gal.halo" (5). */
static void follow_state(struct sim_state *st)
{
	ck_assert_int_eq(sim_state_alloc(st, 6, 4), 0);
	const char *names[4] = {"a", "gal.disk", "gal.bulge", "gal.halo"};
	for (int c = 0; c < 4; c++)
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "%s", names[c]);
	int comp[6] = {0, 0, 1, 1, 2, 3};
	double m[6] = {1, 3, 2, 2, 1, 4};
	double x[6][3] = {{1, 0, 0}, {5, 0, 4}, {-2, 1, 1}, {-4, 3, 1}, {0, 0, 9}, {-1, -1, -1}};
	for (int i = 0; i < 6; i++) {
		st->comp[i] = (uint16_t)comp[i];
		st->mass[i] = m[i];
		for (int d = 0; d < 3; d++)
			st->pos[3 * i + d] = x[i][d];
	}
}

static void com_of(const struct sim_state *st, int first, int last, double out[3])
{
	double m = 0;
	out[0] = out[1] = out[2] = 0;
	for (int i = first; i <= last; i++) {
		m += st->mass[i];
		for (int d = 0; d < 3; d++)
			out[d] += st->mass[i] * st->pos[3 * i + d];
	}
	for (int d = 0; d < 3; d++)
		out[d] /= m;
}

START_TEST(follow_shifts_by_com)
{
	struct scene *sc = scene_new();
	double p0[3] = {0, -10, 2}, t0[3] = {0.5, 0, 0};
	add_key(sc, 0, p0, t0, NULL, 0);
	struct sim_state st;
	follow_state(&st);
	struct {
		const char *name;
		int first, last;
	} cases[] = {{"a", 0, 1}, {"gal", 2, 5}, {"gal.disk", 2, 3}, {"all", 0, 5}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		snprintf(sc->camera.follow, sizeof sc->camera.follow, "%s", cases[c].name);
		double com[3];
		com_of(&st, cases[c].first, cases[c].last, com);
		struct render_camera cam;
		ck_assert_int_eq(render_camera_at(sc, 0, &st, &cam), 0);
		for (int d = 0; d < 3; d++) {
			ck_assert_close(cam.pos[d], p0[d] + com[d], 1e-12, 1e-12);
			ck_assert_close(cam.target[d], t0[d] + com[d], 1e-12, 1e-12);
		}
	}
	/* Unknown names, including a bare prefix of a component name. */
	const char *bad[2] = {"nope", "ga"};
	for (int b = 0; b < 2; b++) {
		snprintf(sc->camera.follow, sizeof sc->camera.follow, "%s", bad[b]);
		struct render_camera cam;
		ck_assert_int_eq(render_camera_at(sc, 0, &st, &cam), NB_EINPUT);
	}
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* Position in scene units: internal / u.length. Galactic scenes have 1 kpc
 * as the internal length, so the factor there is 1; the conversion is still
 * what scene_units_of says. */
START_TEST(follow_uses_scene_units)
{
	struct scene *sc = scene_new();
	sc->units = SCENE_UNITS_GALACTIC;
	snprintf(sc->camera.follow, sizeof sc->camera.follow, "a");
	struct sim_state st;
	follow_state(&st);
	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	double com[3];
	com_of(&st, 0, 1, com);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(sc, 3, &st, &cam), 0);
	for (int d = 0; d < 3; d++)
		ck_assert_close(cam.target[d], sc->camera.target[d] + com[d] / u.length, 1e-12, 1e-12);
	sim_state_free(&st);
	free(sc);
}
END_TEST

/* orbit: 90 degrees over an 11-frame clip; frame f turns position about the
 * target by 9 f degrees around up (right-handed). */
START_TEST(orbit_rotates_about_up)
{
	struct scene *sc = scene_new();
	sc->output.frames = 11;
	sc->camera.orbit = 90;
	double target[3] = {1, 2, 3}, rel[3] = {5, 0, 1};
	double pos[3] = {target[0] + rel[0], target[1] + rel[1], target[2] + rel[2]};
	double up[3] = {0, 0, 2};
	add_key(sc, 0, pos, target, up, 0);
	for (int f = 0; f <= 10; f += 5) {
		double a = 9.0 * f * M_PI / 180.0, c = cos(a), s = sin(a);
		double rz[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}};
		struct render_camera cam;
		ck_assert_int_eq(render_camera_at(sc, f, NULL, &cam), 0);
		for (int d = 0; d < 3; d++) {
			double want = target[d] + rz[d][0] * rel[0] + rz[d][1] * rel[1] + rz[d][2] * rel[2];
			ck_assert_close(cam.pos[d], want, 1e-12, 0);
			ck_assert_close(cam.target[d], target[d], 1e-12, 0);
		}
	}
	/* Around +x instead: R_x(90 deg) takes (0, 5, 1) to (0, -1, 5). */
	double upx[3] = {1, 0, 0}, posx[3] = {1, 7, 4};
	sc->camera.nkeys = 0;
	add_key(sc, 0, posx, target, upx, 0);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(sc, 10, NULL, &cam), 0);
	double want[3] = {1, 2 - 1, 3 + 5};
	assert_v3(cam.pos, want, 1e-12);
	free(sc);
}
END_TEST

/* Ease: two keys make a straight line, p(f) = p0 + g(s) (p1 - p0), with
 * g the key's curve written out here: s, s^2, 2s - s^2, 3s^2 - 2s^3; the
 * keys themselves are still hit exactly, and fov follows the same g. */
START_TEST(eased_keys_retime_a_straight_line)
{
	static const enum scene_ease eases[4] = {SCENE_EASE_LINEAR, SCENE_EASE_IN, SCENE_EASE_OUT,
						 SCENE_EASE_IN_OUT};
	for (int e = 0; e < 4; e++) {
		struct scene *sc = scene_new();
		double p0[3] = {0, -10, 0}, p1[3] = {20, -10, 0}, t[3] = {0, 0, 0};
		add_key(sc, 10, p0, t, NULL, 20);
		add_key(sc, 30, p1, t, NULL, 60);
		sc->camera.keys[0].ease = eases[e];
		sc->camera.keys[0].has_ease = 1;
		for (int f = 10; f <= 30; f++) {
			double s = (f - 10) / 20.0;
			double g = e == 0 ? s : e == 1 ? s * s : e == 2 ? 2 * s - s * s
							   : 3 * s * s - 2 * s * s * s;
			struct render_camera cam;
			ck_assert_int_eq(render_camera_at(sc, f, NULL, &cam), 0);
			ck_assert_close(cam.pos[0], 20.0 * g, 1e-12, 0);
			ck_assert_close(cam.pos[1], -10.0, 1e-12, 0);
			ck_assert_close(cam.fov, 20.0 + 40.0 * g, 1e-12, 0);
		}
		free(sc);
	}
}
END_TEST

/* Exposure keys: geometric between the keys that give one, keys without
 * one skipped, held outside, in the earlier key's ease; 0 without any. */
START_TEST(exposure_keys_geometric_and_held)
{
	struct scene *sc = scene_new();
	ck_assert(render_camera_exposure(sc, 5) == 0.0 && !render_camera_has_exposure(sc));
	double p[3] = {0, -10, 0};
	add_key(sc, 10, p, NULL, NULL, 0);
	add_key(sc, 20, p, NULL, NULL, 0);
	add_key(sc, 30, p, NULL, NULL, 0);
	add_key(sc, 50, p, NULL, NULL, 0);
	ck_assert(!render_camera_has_exposure(sc) && render_camera_exposure(sc, 25) == 0.0);
	sc->camera.keys[1].exposure = 1.0; /* frame 20 */
	sc->camera.keys[1].has_exposure = 1;
	sc->camera.keys[3].exposure = 16.0; /* frame 50; frame 30 gives none */
	sc->camera.keys[3].has_exposure = 1;
	ck_assert(render_camera_has_exposure(sc));
	ck_assert_close(render_camera_exposure(sc, 0), 1.0, 0, 1e-15);   /* held before */
	ck_assert_close(render_camera_exposure(sc, 20), 1.0, 0, 1e-15);
	ck_assert_close(render_camera_exposure(sc, 35), 4.0, 0, 1e-14);  /* 16^(1/2) */
	ck_assert_close(render_camera_exposure(sc, 30), pow(16.0, 1.0 / 3), 0, 1e-14);
	ck_assert_close(render_camera_exposure(sc, 50), 16.0, 0, 1e-15);
	ck_assert_close(render_camera_exposure(sc, 99), 16.0, 0, 1e-15); /* held after */
	sc->camera.keys[1].ease = SCENE_EASE_IN; /* s = 1/2 -> 1/4 */
	ck_assert_close(render_camera_exposure(sc, 35), 2.0, 0, 1e-14);
	free(sc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("camera");
	TCase *tc = tcase_create("camera");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, no_keys_gives_defaults);
	tcase_add_test(tc, keys_hit_exactly);
	tcase_add_test(tc, two_keys_are_a_straight_line);
	tcase_add_test(tc, velocity_continuous_across_key);
	tcase_add_test(tc, degenerate_up_gives_finite_basis);
	tcase_add_test(tc, follow_shifts_by_com);
	tcase_add_test(tc, follow_uses_scene_units);
	tcase_add_test(tc, orbit_rotates_about_up);
	tcase_add_test(tc, eased_keys_retime_a_straight_line);
	tcase_add_test(tc, exposure_keys_geometric_and_held);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
