/* test_accuracy.c - simulation.accuracy (scene/scene_accuracy.c): each
 * preset's values on a loaded scene, keys given in the file or by --set
 * win, default leaves every value bit for bit, the frame time dt x
 * steps_per_frame is kept (shared and individual steps), every softening
 * length is scaled, the line the loader logs, and a resolved scene loads
 * back to the same values (the preset is not applied twice).
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_accuracy &&
 *   build-cpu/tests/test_accuracy */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "scene/scene.h"
#include "scene/scene_accuracy.h"
#include "test_scene_util.h"

/* softening 0.1, dt 0.5, 6 steps per frame: the default scene's */
#define BASE "simulation: {solver: barnes-hut, softening: 0.1, dt: 0.5, steps_per_frame: 6%s}\n" \
	     "bodies: [{name: a, model: plummer, count: 100}]\n"

static struct scene g_sc, g_sc2;

static int load_with(const char *sim_extra, const char *const *ov, int nov, struct scene *sc)
{
	char text[1024];
	snprintf(text, sizeof text, BASE, sim_extra);
	return load_str(text, ov, nov, sc);
}

START_TEST(draft_scales_softening_and_step_and_sets_theta)
{
	ck_assert_msg(load_with(", accuracy: draft", NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_close(g_sc.simulation.softening, 0.3, 0, 1e-12);
	ck_assert_int_eq(g_sc.simulation.steps_per_frame, 2);
	ck_assert_close(g_sc.simulation.dt, 1.5, 0, 1e-15);
	ck_assert_double_eq(g_sc.simulation.theta, 0.6);
	ck_assert_int_eq(g_sc.simulation.multipoles, 2);
	ck_assert_int_eq(g_sc.simulation.accuracy, SCENE_ACCURACY_DRAFT);
}
END_TEST

START_TEST(fine_halves_the_step_and_narrows_theta)
{
	ck_assert_msg(load_with(", accuracy: fine", NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.softening, 0.1); /* x1: exact */
	ck_assert_int_eq(g_sc.simulation.steps_per_frame, 12);
	ck_assert_close(g_sc.simulation.dt, 0.25, 0, 1e-15);
	ck_assert_double_eq(g_sc.simulation.theta, 0.4);
}
END_TEST

/* theta and multipoles given in the file, or by --set, win; softening and
 * dt given in the file are the scene's scale and are scaled */
START_TEST(keys_given_explicitly_win)
{
	ck_assert_msg(load_with(", accuracy: draft, theta: 0.45, multipoles: 1", NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.theta, 0.45);
	ck_assert_int_eq(g_sc.simulation.multipoles, 1);
	ck_assert_close(g_sc.simulation.softening, 0.3, 0, 1e-12);
	ck_assert_ptr_nonnull(strstr(g_err, "given, so kept: simulation.theta 0.45 "
					    "simulation.multipoles 1"));
	const char *ov[] = {"simulation.accuracy=fine", "simulation.theta=0.7"};
	ck_assert_msg(load_with("", ov, 2, &g_sc) == 0, "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.theta, 0.7);
	ck_assert_int_eq(g_sc.simulation.steps_per_frame, 12);
	const char *whole[] = {"simulation={theta: 0.9, accuracy: draft}"};
	ck_assert_msg(load_str("bodies: [{name: a, model: plummer, count: 100}]\n", whole, 1, &g_sc) == 0, "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.theta, 0.9);
}
END_TEST

/* default: every value as given, bit for bit, and the same scene as with
 * no accuracy key at all; nothing logged about it */
START_TEST(default_is_the_identity)
{
	const char *odd = "simulation: {softening: 0.123, dt: 0.37, steps_per_frame: 7, theta: 0.77%s}\n"
			  "bodies: [{name: a, model: plummer, count: 100, softening: 0.011}]\n";
	char text[512];
	snprintf(text, sizeof text, odd, ", accuracy: default");
	ck_assert_msg(load_str(text, NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_ptr_null(strstr(g_err, "simulation.accuracy"));
	snprintf(text, sizeof text, odd, "");
	ck_assert_msg(load_str(text, NULL, 0, &g_sc2) == 0, "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.softening, 0.123);
	ck_assert_double_eq(g_sc.bodies[0].softening, 0.011);
	ck_assert_double_eq(g_sc.simulation.dt, 0.37);
	ck_assert_int_eq(g_sc.simulation.steps_per_frame, 7);
	ck_assert_double_eq(g_sc.simulation.theta, 0.77);
	ck_assert_int_eq(memcmp(&g_sc.simulation, &g_sc2.simulation, sizeof g_sc.simulation), 0);
	ck_assert_int_eq(memcmp(g_sc.bodies, g_sc2.bodies, sizeof g_sc.bodies), 0);
	/* and without the keys the default theta and multipoles stay */
	ck_assert_msg(load_str("bodies: [{name: a, model: plummer, count: 100}]\n", NULL, 0, &g_sc) == 0,
		      "%s", g_err);
	ck_assert_double_eq(g_sc.simulation.theta, 0.5);
	ck_assert_int_eq(g_sc.simulation.multipoles, 2);
}
END_TEST

/* dt x steps_per_frame is the same for every steps_per_frame 1..25 under
 * draft (steps / 3 rounded up: the step grows by at most 3) and fine */
START_TEST(frame_time_is_kept)
{
	for (int spf = 1; spf <= 25; spf++) {
		char extra[96];
		snprintf(extra, sizeof extra, ", steps_per_frame: %d, accuracy: draft", spf);
		char text[512];
		snprintf(text, sizeof text,
			 "simulation: {softening: 0.1, dt: 0.35%s}\nbodies: [{name: a, model: plummer, count: 10}]\n",
			 extra);
		ck_assert_msg(load_str(text, NULL, 0, &g_sc) == 0, "%s", g_err);
		ck_assert_int_eq(g_sc.simulation.steps_per_frame, (spf + 2) / 3);
		ck_assert_close(g_sc.simulation.dt * g_sc.simulation.steps_per_frame, 0.35 * spf, 0, 1e-15);
		ck_assert_msg(g_sc.simulation.dt <= 3 * 0.35 * (1 + 1e-15), "spf %d: dt %g", spf,
			      g_sc.simulation.dt);
		if (spf == 1) { /* nothing to divide: the step is left exactly */
			ck_assert_double_eq(g_sc.simulation.dt, 0.35);
			ck_assert_ptr_nonnull(strstr(g_err, "step kept (steps_per_frame 1 cannot be "
							    "divided by 3)"));
		}
		snprintf(text, sizeof text,
			 "simulation: {dt: 0.35, steps_per_frame: %d, accuracy: fine}\n"
			 "bodies: [{name: a, model: plummer, count: 10}]\n", spf);
		ck_assert_msg(load_str(text, NULL, 0, &g_sc) == 0, "%s", g_err);
		ck_assert_int_eq(g_sc.simulation.steps_per_frame, 2 * spf);
		ck_assert_close(g_sc.simulation.dt * g_sc.simulation.steps_per_frame, 0.35 * spf, 0, 1e-15);
	}
}
END_TEST

/* individual steps: dt_max = dt x steps_per_frame / blocks_per_frame is
 * scaled through blocks_per_frame; dt and steps_per_frame are left */
START_TEST(individual_steps_scale_dt_max)
{
	const char *ind = ", timesteps: individual, blocks_per_frame: 6, accuracy: draft";
	ck_assert_msg(load_with(ind, NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_int_eq(g_sc.simulation.blocks_per_frame, 2);
	ck_assert_double_eq(g_sc.simulation.dt, 0.5);
	ck_assert_int_eq(g_sc.simulation.steps_per_frame, 6);
	ck_assert_ptr_nonnull(strstr(g_err, "dt_max x3 (blocks_per_frame 6 -> 2"));
	ck_assert_msg(load_with(", timesteps: individual, blocks_per_frame: 3, accuracy: fine",
				   NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_int_eq(g_sc.simulation.blocks_per_frame, 6);
}
END_TEST

/* every length above 0 x3; 0 (the level above) stays 0 */
START_TEST(every_softening_length_is_scaled)
{
	ck_assert_msg(load_str("units: galactic\nsimulation: {softening: 0.1, accuracy: draft}\n"
				  "bodies: [{name: g, model: disk-galaxy, softening: 0.2,\n"
				  "  disk: {count: 100, softening: 0.05}, bulge: {count: 10},\n"
				  "  halo: {count: 100, softening: 0.7}}]\n", NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_close(g_sc.simulation.softening, 0.3, 0, 1e-12);
	ck_assert_close(g_sc.bodies[0].softening, 0.6, 0, 1e-12);
	ck_assert_close(g_sc.bodies[0].disk.softening, 0.15, 0, 1e-12);
	ck_assert_double_eq(g_sc.bodies[0].bulge.softening, 0);
	ck_assert_close(g_sc.bodies[0].halo.softening, 2.1, 0, 1e-12);
	/* a snapshot type's length, through the function itself (no file to read) */
	ck_assert_msg(load_with("", NULL, 0, &g_sc) == 0, "%s", g_err);
	g_sc.bodies[0].snap.types[1].softening = 0.25;
	g_sc.bodies[0].snap.types[2].softening = 0;
	g_sc.simulation.accuracy = SCENE_ACCURACY_DRAFT;
	ck_assert_int_eq(scene_accuracy_apply(&g_sc, NULL, "t"), 0);
	ck_assert_close(g_sc.bodies[0].snap.types[1].softening, 0.75, 0, 1e-12);
	ck_assert_double_eq(g_sc.bodies[0].snap.types[2].softening, 0);
}
END_TEST

/* the line the loader logs names the preset and each value it set */
START_TEST(the_load_says_what_the_preset_set)
{
	ck_assert_msg(load_with(", accuracy: draft", NULL, 0, &g_sc) == 0, "%s", g_err);
	ck_assert_ptr_nonnull(strstr(g_err, "t.yaml: simulation.accuracy: draft: softening x3 "
					    "(simulation.softening 0.3), step x3 (dt 1.5 with "
					    "steps_per_frame 6 -> 2; 3 per frame kept), theta 0.6, "
					    "multipoles 2"));
}
END_TEST

/* the resolved scene (--dry-run, output.resolved_scene) loads back to the
 * same values: it says default, with the preset's values written out */
START_TEST(resolved_scene_loads_back_the_same)
{
	ck_assert_msg(load_with(", accuracy: draft", NULL, 0, &g_sc) == 0, "%s", g_err);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(scene_emit(&g_sc, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "accuracy: default  # draft applied"));
	ck_assert_msg(load_str(text, NULL, 0, &g_sc2) == 0, "%s", g_err);
	free(text);
	ck_assert_double_eq(g_sc2.simulation.softening, g_sc.simulation.softening);
	ck_assert_double_eq(g_sc2.simulation.dt, g_sc.simulation.dt);
	ck_assert_int_eq(g_sc2.simulation.steps_per_frame, 2);
	ck_assert_double_eq(g_sc2.simulation.theta, 0.6);
}
END_TEST

/* Each row's measured figures are docs/BENCHMARKS.md's "Accuracy presets"
 * table's (| name | ... | **S s** | evaluations | dE |), which --dry-run
 * quotes: a re-measured table and stale rows disagree here. */
START_TEST(measured_figures_are_the_benchmarks_table)
{
	FILE *f = fopen("docs/BENCHMARKS.md", "r");
	ck_assert_msg(f != NULL, "docs/BENCHMARKS.md (run from the repository's root)");
	char line[2048];
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		for (int a = 0; a < 3; a++) {
			const struct scene_accuracy_row *r = scene_accuracy_row((enum scene_accuracy)a);
			char head[64];
			snprintf(head, sizeof head, "| %s | ", r->name);
			if (strncmp(line, head, strlen(head)) != 0)
				continue;
			const char *b = strstr(line, "| **");
			ck_assert_msg(b != NULL, "%s", line);
			double secs = strtod(b + 4, NULL);
			const char *e = strrchr(line, '|'), *p = e - 1;
			while (p > line && *p != '|')
				p--;
			double de = strtod(p + 1, NULL);
			ck_assert_msg(fabs(secs - r->movie_s) < 0.005 && fabs(de / r->max_de - 1) < 0.005,
				      "%s: table %g s %g, row %g s %g", r->name, secs, de, r->movie_s,
				      r->max_de);
			found |= 1 << a;
		}
	}
	fclose(f);
	ck_assert_int_eq(found, 7);
}
END_TEST

static Suite *make_suite(void)
{
	(void)load_file;
	Suite *s = suite_create("accuracy");
	TCase *tc = tcase_create("presets");
	tcase_add_test(tc, draft_scales_softening_and_step_and_sets_theta);
	tcase_add_test(tc, fine_halves_the_step_and_narrows_theta);
	tcase_add_test(tc, keys_given_explicitly_win);
	tcase_add_test(tc, default_is_the_identity);
	tcase_add_test(tc, frame_time_is_kept);
	tcase_add_test(tc, individual_steps_scale_dt_max);
	tcase_add_test(tc, every_softening_length_is_scaled);
	tcase_add_test(tc, the_load_says_what_the_preset_set);
	tcase_add_test(tc, resolved_scene_loads_back_the_same);
	tcase_add_test(tc, measured_figures_are_the_benchmarks_table);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
