/* test_scene_warn.c - keys that do nothing (scene/scene_warn.c), what
 * issue 29 left: every shipped scene and batch warns nothing; a key set to
 * its row's "off" value (render.diffuse: 0 under style smooth) is silent
 * while any other value warns; the issue-30 keys (softening kernel,
 * accuracy preset, softening per entry, part and snapshot type) warn under
 * film mode (simulation.solver: none) and nowhere else; camera keys after
 * the last frame warn for a clip, not for a still.
 *
 *   make CUDA=0 BUILD=/tmp/b /tmp/b/nbody-render /tmp/b/tests/test_scene_warn
 *   NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_scene_warn   (from the repository root) */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/wait.h>

#include "check_main.h"
#include "scene/scene.h"

static struct scene g_sc; /* large: keep off the stack */
#include "test_scene_util.h"

static const char *MIN = "bodies: [{name: a, model: plummer}]\n";

/* Lines of S that contain NEEDLE. */
static int lines_with(const char *s, const char *needle)
{
	int n = 0;
	for (const char *line = s; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[2048];
		snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
		n += strstr(buf, needle) != NULL;
		line += len + (end != NULL);
	}
	return n;
}

/* 1 when the YAML file PATH is a batch (a top-level runs: key). */
static int is_batch(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	char line[4096];
	int batch = 0;
	while (!batch && fgets(line, sizeof line, f))
		batch = strncmp(line, "runs:", 5) == 0;
	fclose(f);
	return batch;
}

/* `nbody-render batch PATH --dry-run`'s output into g_err; its exit status. */
static int batch_dry_run(const char *path)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' batch '%s' --dry-run 2>&1", nb_bin(), path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(g_err, 1, sizeof g_err - 1, p);
	g_err[n] = '\0';
	while (fgetc(p) != EOF) /* drain a long listing */
		;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every scenes/NAME.yaml: a scene is loaded as a run loads it (the warnings
 * are said at load; its --dry-run adds nothing to them), a batch goes
 * through `batch --dry-run`, which loads each run's scene with the run's
 * overrides. None warns: a shipped scene that meant to show a warning
 * would be listed here with its count and say why in its header. */
START_TEST(shipped_scenes_and_batches_warn_nothing)
{
	DIR *d = opendir("scenes");
	ck_assert_msg(d != NULL, "run from the repository root (no scenes/)");
	int scenes = 0, batches = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		const size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		char path[600];
		snprintf(path, sizeof path, "scenes/%s", e->d_name);
		int err;
		if (is_batch(path)) {
			batches++;
			err = batch_dry_run(path);
		} else {
			scenes++;
			err = load_file(path, NULL, 0, &g_sc);
		}
		if (err && strstr(g_err, "cannot open") && strstr(g_err, "it comes from")) {
			/* example data not in this clone (its header says where from) */
			fprintf(stderr, "%s: skipped, its input is not here:\n%s", path, g_err);
			continue;
		}
		ck_assert_msg(err == 0, "%s: exit/error %d: %.500s", path, err, g_err);
		const int nwarn = lines_with(g_err, "warning:");
		if (nwarn)
			fprintf(stderr, "%s: %d warnings:\n%s", path, nwarn, g_err);
		const char *first = strstr(g_err, "warning:");
		ck_assert_msg(nwarn == 0, "%s: %d warnings, expected 0 (listed above); the first: %.300s",
			      path, nwarn, first ? first : "");
	}
	closedir(d);
	/* the walk saw them all: 11 scenes and 3 batches when this was written */
	ck_assert_int_ge(scenes, 11);
	ck_assert_int_ge(batches, 3);
}
END_TEST

/* The walk's own check can fail: a batch run that sets a key its style
 * ignores is counted (the gallery's smooth runs without diffuse: 0). */
START_TEST(batch_dry_run_counts_a_warning)
{
	char dir[] = "/tmp/nb-swarn-XXXXXX", path[600];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/b.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "output_dir: %s/o\nruns:\n"
		   "  - {scene: '%s/scenes/mice.yaml', name: s, set: {render: {style: smooth}, "
		   "output: {video: \"\", preview: s.jpg}}}\n",
		dir, getenv("PWD") ? getenv("PWD") : ".");
	fclose(f);
	ck_assert_int_eq(batch_dry_run(path), 0);
	ck_assert_msg(lines_with(g_err, "warning:") == 1 &&
			      lines_with(g_err, "render.diffuse: does nothing with render.style: smooth"),
		      "%s", g_err);
	remove(path);
	remove(dir);
}
END_TEST

/* A row's off value is silent; any other value of the same key, under the
 * same choice, warns. Cases from the renderer's and the engine's meaning
 * (0 diffuse: no layer; h_cap 0: no cap; shared steps and the Plummer
 * kernel and the default preset: what an unset key gives). */
START_TEST(off_values_do_not_warn)
{
	static const struct {
		const char *off, *on, *choice, *key;
	} cases[] = {
		{"render.diffuse=0", "render.diffuse=0.5", "render.style=smooth", "render.diffuse"},
		{"render.h_cap=0", "render.h_cap=3", "render.style=stars", "render.h_cap"},
		{"render.diffuse_smoothing=screen", "render.diffuse_smoothing=adaptive",
		 "render.style=smooth", "render.diffuse_smoothing"},
		{"render.diffuse_smoothing=screen", "render.diffuse_smoothing=adaptive", "render.diffuse=0",
		 "render.diffuse_smoothing"},
		{"simulation.timesteps=shared", "simulation.timesteps=individual", "simulation.solver=none",
		 "simulation.timesteps"},
		{"simulation.softening_kernel=plummer", "simulation.softening_kernel=spline",
		 "simulation.solver=none", "simulation.softening_kernel"},
		{"simulation.accuracy=default", "simulation.accuracy=draft", "simulation.solver=none",
		 "simulation.accuracy"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *off[] = {cases[i].off, cases[i].choice}, *on[] = {cases[i].on, cases[i].choice};
		int err = load_str(MIN, off, 2, &g_sc);
		ck_assert_msg(err == 0 && !strstr(g_err, "warning"), "%s with %s: %d %s", cases[i].off,
			      cases[i].choice, err, g_err);
		err = load_str(MIN, on, 2, &g_sc);
		char head[300];
		snprintf(head, sizeof head, "--set %s: %s: does nothing", cases[i].on, cases[i].key);
		ck_assert_msg(err == 0 && lines_with(g_err, "warning:") == 1 && strstr(g_err, head),
			      "%s with %s: expected one warning '%s', got %d: %s", cases[i].on,
			      cases[i].choice, head, err, g_err);
	}
}
END_TEST

/* A snapshot of 50 bodies written by the program: DIR/s/snap_000.hdf5
 * (DIR a new temporary directory) for the snapshot model's type keys. */
static void make_snapshot(char *dir, char *file, size_t n)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[400], cmd[1200 + PATH_MAX];
	snprintf(path, sizeof path, "%s/p.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("bodies: [{name: a, model: plummer, count: 50}]\n"
	      "output: {frames: 1, video: \"\", preview: \"\", snapshots: {dir: s}}\n",
	      f);
	fclose(f);
	char bin[PATH_MAX]; /* the program's path from here, before the cd */
	ck_assert_msg(realpath(nb_bin(), bin), "%s: not found", nb_bin());
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' p.yaml --quiet > log 2>&1", dir, bin);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	snprintf(file, n, "%s/s/snap_000.hdf5", dir);
}

/* Film mode computes no forces: the kernel, the preset and every softening
 * length set below simulation.softening do nothing there, and warn; a
 * solver reads them all, silently. */
START_TEST(softening_keys_warn_in_film_mode_only)
{
	static const struct {
		const char *text, *key;
	} cases[] = {
		{"bodies: [{name: a, model: plummer, softening: 0.1}]\n", "bodies.0.softening"},
		{"bodies:\n  - {name: a, model: plummer}\n  - {name: g, model: disk-galaxy,\n"
		 "     disk: {softening: 0.2}}\n",
		 "bodies.1.disk.softening"},
		{"bodies: [{name: g, model: disk-galaxy, halo: {softening: 0.3}}]\n", "bodies.0.halo.softening"},
		{"bodies: [{name: g, model: disk-galaxy, bulge: {softening: 0.3}}]\n",
		 "bodies.0.bulge.softening"},
		{"bodies: [{name: s, model: snapshot, file: '%s', types: {halo: {softening: 1.0}}}]\n",
		 "bodies.0.types.halo.softening"},
		{"bodies: [{name: s, model: snapshot, file: '%s', types: {stars: {softening: 0.4}}}]\n",
		 "bodies.0.types.stars.softening"},
		{"simulation: {softening_kernel: spline}\nbodies: [{name: a, model: plummer}]\n",
		 "simulation.softening_kernel"},
		{"simulation: {accuracy: fine}\nbodies: [{name: a, model: plummer}]\n", "simulation.accuracy"},
	};
	static const char *const solvers[] = {"simulation.solver=direct", "simulation.solver=barnes-hut"};
	const char *film[] = {"simulation.solver=none"};
	char dir[] = "/tmp/nb-swarn-XXXXXX", snap[300], text[1000];
	make_snapshot(dir, snap, sizeof snap);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, cases[i].text, snap);
		int err = load_str(text, film, 1, &g_sc);
		char head[300];
		snprintf(head, sizeof head, "%s: does nothing with simulation.solver: none: ", cases[i].key);
		ck_assert_msg(err == 0 && lines_with(g_err, "warning:") == 1 &&
				      lines_with(g_err, "warning: t.yaml:") == 1 && strstr(g_err, head),
			      "%s: expected one warning '%s' at t.yaml, got %d: %s", cases[i].key, head, err,
			      g_err);
		for (int s = 0; s < 2; s++) {
			err = load_str(text, &solvers[s], 1, &g_sc);
			ck_assert_msg(err == 0 && !strstr(g_err, "warning"), "%s with %s: %d %s",
				      cases[i].key, solvers[s], err, g_err);
		}
	}
	/* the entry's place: the second entry's count would be on line 2 */
	ck_assert_int_eq(load_str(cases[1].text, film, 1, &g_sc), 0);
	ck_assert_msg(strstr(g_err, "t.yaml:3:"), "not placed at entry 1 (line 3): %s", g_err);
	/* --strict: the first is the error */
	scene_strict_set(1);
	int err = load_str(cases[0].text, film, 1, &g_sc);
	scene_strict_set(0);
	ck_assert_msg(err == NB_EINPUT && lines_with(g_err, "error:") == 1 &&
			      strstr(g_err, "bodies.0.softening: does nothing") &&
			      strstr(g_err, "(an error under --strict)"),
		      "%d %s", err, g_err);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Camera keys after the last frame: a clip (video, PNG frames, a contact
 * sheet; a run with no output at all: test_scene_errors) is cut before
 * them and warns; a still (the last frame's preview alone) picks its
 * moment with output.frames and does not. */
START_TEST(keys_after_the_end_warn_for_a_clip_not_a_still)
{
	const char *text = "bodies: [{name: a, model: plummer}]\n"
			   "output: {frames: 10, video: \"\", preview: /tmp/x.jpg}\n"
			   "camera:\n"
			   "  keys:\n"
			   "    - {frame: 0}\n"
			   "    - {frame: 20}\n";
	static const char *const clips[] = {"output.video=/tmp/x.mp4", "output.png_dir=/tmp/xp",
					    "output.preview_kind=sheet"};
	ck_assert_int_eq(load_str(text, NULL, 0, &g_sc), 0);
	ck_assert_msg(!strstr(g_err, "warning"), "a still warned: %s", g_err);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(load_str(text, &clips[i], 1, &g_sc), 0);
		ck_assert_msg(lines_with(g_err, "warning:") == 1 &&
				      strstr(g_err, "t.yaml:6:15: camera.keys.1.frame: frame 20 is after "
						    "the last frame, 9"),
			      "%s: %s", clips[i], g_err);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("scene_warn");
	TCase *tc = tcase_create("scene_warn");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, shipped_scenes_and_batches_warn_nothing);
	tcase_add_test(tc, batch_dry_run_counts_a_warning);
	tcase_add_test(tc, off_values_do_not_warn);
	tcase_add_test(tc, softening_keys_warn_in_film_mode_only);
	tcase_add_test(tc, keys_after_the_end_warn_for_a_clip_not_a_still);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
