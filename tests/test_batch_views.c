/* test_batch_views.c - simulating once for several views (app/batch_group.c,
 * app_run_views in app/run.c, the groups in app/batch_exec.c).
 *
 * Unit level: the grouping rule. Runs whose scenes differ only in camera.*,
 * render.* or output.* (not output.frames) get one group; a different
 * seed, output.frames, simulation key, body key or scene file splits them;
 * share off gives every run its own; a group holds at most
 * BATCH_MAX_VIEWS runs; share_simulation: in the batch file.
 * Program level (NB_BIN, CPU, in a temporary directory): a two-view group
 * against the same runs done separately with --no-share - every PNG frame
 * and statistics file byte for byte equal (300 bodies: below the direct
 * sum's serial threshold, so the CPU simulation is bit-reproducible at any
 * thread count), both views' statistics rows identical, the report saying
 * one simulation and two; a view whose frame directory is blocked fails
 * alone; --resume after one view's completion mark is removed redoes only
 * that view (its frames equal to the first time's), and --dry-run shows
 * the groups.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/nbody-render /tmp/b/tests/test_batch_views && NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_batch_views */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../app/batch_expand.c"
#include "../app/batch_file.c"
#include "../app/batch_group.c"
#include "../app/batch_report.c"
#include "../app/batch_verify.c"
#include "../app/outputs.c"
#include "../app/outputs_member.c"
#include "check_main.h"
#include "test_batch_util.h"

/* ---- the grouping rule ---- */

static const char base_scene[] =
	"seed: 3\n"
	"simulation: {dt: 0.001, steps_per_frame: 2, backend: cpu}\n"
	"bodies:\n  - {name: c, model: plummer, count: 50, mass: 1, scale: 1}\n"
	"camera: {keys: [{frame: 0, position: [0, -8, 3], target: [0, 0, 0]}]}\n"
	"render: {width: 32, height: 32}\n"
	"output: {frames: 3, stats: s.csv}\n";

/* Key of base_scene loaded as NAME with one override (NULL: none). */
static void key_of(const char *name, const char *override, uint64_t key[2])
{
	static struct scene sc;
	const char *ov[1] = {override};
	ck_assert_int_eq(scene_load_string(base_scene, name, ".", ov, override ? 1 : 0, &sc), 0);
	snprintf(sc.path, sizeof sc.path, "%s", name); /* as scene_load records the file */
	ck_assert_int_eq(batch_sim_key(&sc, key), 0);
}

/* Group runs whose keys come from (name, override) pairs; group[i] gets
 * each run's group leader. */
static int group_of(const char *const *names, const char *const *ovs, int n, int share, int *group)
{
	struct batch_run *runs = calloc((size_t)n, sizeof *runs);
	ck_assert(runs);
	for (int i = 0; i < n; i++) {
		runs[i].index = i;
		runs[i].loaded = 1;
		runs[i].status = BATCH_PENDING;
		key_of(names[i], ovs[i], runs[i].sim_key);
	}
	int groups = batch_group(runs, n, share);
	for (int i = 0; i < n; i++)
		group[i] = runs[i].group;
	free(runs);
	return groups;
}

START_TEST(view_keys_group_and_simulation_keys_split)
{
	const char *names[] = {"t.yaml", "t.yaml", "t.yaml", "t.yaml", "t.yaml", "t.yaml", "t.yaml",
			       "t.yaml", "t.yaml", "u.yaml", "t.yaml", "t.yaml"};
	const char *ovs[] = {
		NULL,                                    /* 0 */
		"camera.keys.0.position=[8, 0, 3]",      /* 1: view key: with 0 */
		"render.width=64",                       /* 2: view key: with 0 */
		"output.png_dir=frames",                 /* 3: view key: with 0 */
		"seed=4",                                /* 4: own */
		"output.frames=4",                       /* 5: own */
		"simulation.dt=0.002",                   /* 6: own */
		"bodies.0.count=51",                     /* 7: own */
		"camera.orbit=90",                       /* 8: view key: with 0 */
		NULL,                                    /* 9: another scene file: own */
		"seed=4",                                /* 10: with 4 */
		"units=galactic",                        /* 11: own */
	};
	const int want[] = {0, 0, 0, 0, 4, 5, 6, 7, 0, 9, 4, 11};
	int group[12];
	int ngroups = group_of(names, ovs, 12, 1, group);
	for (int i = 0; i < 12; i++)
		ck_assert_msg(group[i] == want[i], "run %d (%s): group %d, expected %d", i,
			      ovs[i] ? ovs[i] : "-", group[i], want[i]);
	ck_assert_int_eq(ngroups, 7);
	/* sharing off: each run its own */
	ck_assert_int_eq(group_of(names, ovs, 12, 0, group), 12);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(group[i], i);
}
END_TEST

START_TEST(groups_hold_at_most_max_views_and_skip_runs_not_to_do)
{
	const int n = BATCH_MAX_VIEWS + 3;
	struct batch_run *runs = calloc((size_t)n, sizeof *runs);
	ck_assert(runs);
	for (int i = 0; i < n; i++) {
		runs[i].index = i;
		runs[i].loaded = 1;
		runs[i].status = i == 1 ? BATCH_SKIPPED : BATCH_PENDING;
		runs[i].sim_key[0] = 42;
	}
	/* n - 1 runs to do: BATCH_MAX_VIEWS in the first group, 2 in the next */
	ck_assert_int_eq(batch_group(runs, n, 1), 2);
	ck_assert_int_eq(runs[0].group, 0);
	ck_assert_int_eq(runs[0].group_size, BATCH_MAX_VIEWS);
	ck_assert_int_eq(runs[1].group, -1);
	ck_assert_int_eq(runs[BATCH_MAX_VIEWS].group, 0);
	ck_assert_int_eq(runs[BATCH_MAX_VIEWS + 1].group, BATCH_MAX_VIEWS + 1);
	ck_assert_int_eq(runs[n - 1].group_size, 2);
	int idx[BATCH_MAX_VIEWS];
	ck_assert_int_eq(batch_group_members(runs, n, 0, idx, BATCH_MAX_VIEWS), BATCH_MAX_VIEWS);
	ck_assert_int_eq(idx[0], 0);
	ck_assert_int_eq(idx[1], 2);
	free(runs);
}
END_TEST

START_TEST(share_simulation_key_in_the_batch_file)
{
	struct batch_file bf;
	ck_assert_int_eq(batch_file_load_string("runs: [{scene: s.yaml}]\n", "t.yaml", ".", &bf), 0);
	ck_assert_int_eq(bf.share_simulation, 1);
	batch_file_free(&bf);
	ck_assert_int_eq(batch_file_load_string("share_simulation: false\nruns: [{scene: s.yaml}]\n", "t.yaml",
						".", &bf), 0);
	ck_assert_int_eq(bf.share_simulation, 0);
	batch_file_free(&bf);
	FILE *tmp = tmpfile();
	int saved = dup(2);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	int rc = batch_file_load_string("share_simulation: maybe\nruns: [{scene: s.yaml}]\n", "t.yaml", ".", &bf);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	batch_file_free(&bf);
	char err[1024];
	rewind(tmp);
	err[fread(err, 1, sizeof err - 1, tmp)] = '\0';
	fclose(tmp);
	ck_assert_int_eq(rc, NB_EINPUT);
	ck_assert_msg(strstr(err, "t.yaml:1:") && strstr(err, "share_simulation: expected true or false"), "%s",
		      err);
}
END_TEST

/* ---- the program ---- */

/* DIR/b.yaml: views "a", "b" (another camera) and, with three, "c" (another
 * size and an orbit); every run writes PNG frames and statistics. */
static void write_batch(const char *dir, int three, const char *top)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof path, "%s/b.yaml", dir);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	fprintf(f, "%s"
		   "output_dir: o\n"
		   "set: {output.frames: 4, render.width: 48, render.height: 32, bodies.0.count: 300,\n"
		   "      output.video: \"\", output.initial_state: \"\"}\n"
		   "runs:\n"
		   "  - {scene: '%s/plummer-small.yaml', name: a}\n"
		   "  - {scene: '%s/plummer-small.yaml', name: b,\n"
		   "     set: {camera.keys: [{frame: 0, position: [8, 0, 3], target: [0, 0, 0]}]}}\n",
		top, g_data, g_data);
	if (three)
		fprintf(f, "  - {scene: '%s/plummer-small.yaml', name: c, set: {render.width: 64, camera.orbit: 90}}\n",
			g_data);
	fclose(f);
}

/* 0 if the files REL under DIR/X and DIR/Y are byte-equal. */
static int same_file(const char *dir, const char *x, const char *y, const char *rel)
{
	char a[2 * PATH_MAX];
	snprintf(a, sizeof a, "%s/%s '%s/%s/%s'", x, rel, dir, y, rel);
	return sh("cd '%s' && cmp -s %s", dir, a);
}

/* "simulations name:status:shared ..." from batch-report.json. */
static void check_report(const char *dir, const char *out, const char *want)
{
	batch_check_report(dir, out,
			   "str(d[\"simulations\"])+\" \"+\" \".join(r[\"name\"]+\":\"+r[\"status\"]+\":\"+"
			   "(\"-\" if r[\"simulation\"] is None else str(r[\"simulation\"][\"shared\"])) "
			   "for r in d[\"runs\"])",
			   want);
}

static const char *const frames[] = {"plummer-frames/frame_00000.png", "plummer-frames/frame_00001.png",
				     "plummer-frames/frame_00002.png", "plummer-frames/frame_00003.png"};

START_TEST(two_views_of_one_simulation_equal_the_runs_done_alone)
{
	char dir[] = "/tmp/nb-views-XXXXXX";
	setup_paths();
	ck_assert(mkdtemp(dir));
	write_batch(dir, 0, "");
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 0);
	check_report(dir, "o", "1 a:ok:True b:ok:True");
	ck_assert_int_eq(sh("cd '%s' && mv o shared%s", dir, ""), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --no-share"), 0);
	check_report(dir, "o", "2 a:ok:False b:ok:False");
	/* grep, in case python3 is missing */
	ck_assert_int_eq(sh("cd '%s' && grep -q '\"simulations\": 1,' shared/batch-report.json%s", dir, ""), 0);
	ck_assert_int_eq(sh("cd '%s' && grep -q '\"simulations\": 2,' o/batch-report.json%s", dir, ""), 0);
	const char *views[] = {"a", "b"};
	char x[64], y[64];
	for (int v = 0; v < 2; v++) {
		snprintf(x, sizeof x, "shared/%s", views[v]);
		snprintf(y, sizeof y, "o/%s", views[v]);
		for (int k = 0; k < 4; k++)
			ck_assert_msg(same_file(dir, x, y, frames[k]) == 0, "%s: %s differs from the run alone",
				      views[v], frames[k]);
		ck_assert(same_file(dir, x, y, "plummer-stats.csv") == 0);
		ck_assert(same_file(dir, x, y, "plummer-final.csv") == 0);
	}
	/* the same statistics rows in every view; different cameras, different pictures */
	ck_assert_int_eq(same_file(dir, "shared/a", "shared/b", "plummer-stats.csv"), 0);
	ck_assert_int_ne(same_file(dir, "shared/a", "shared/b", frames[3]), 0);
	/* each view's directory holds its resolved scene, naming its own outputs */
	ck_assert_int_eq(sh("cd '%s' && grep -q 'png_dir: \"o/b/plummer-frames\"' shared/b/plummer-stats.scene.yaml%s",
			    dir, ""), 0);
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}
END_TEST

START_TEST(a_failing_view_does_not_stop_the_others)
{
	char dir[] = "/tmp/nb-views-XXXXXX";
	setup_paths();
	ck_assert(mkdtemp(dir));
	write_batch(dir, 1, "");
	/* b's frame directory is taken by a plain file */
	ck_assert_int_eq(sh("mkdir -p '%s/o/b' && touch '%s/o/b/plummer-frames'", dir, dir), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 1);
	check_report(dir, "o", "1 a:ok:True b:failed:True c:ok:True");
	ck_assert_int_eq(sh("cd '%s' && test -f o/a/plummer-stats.scene.yaml && test -f o/c/plummer-frames/frame_00003.png "
			    "&& ! test -e o/b/plummer-stats.scene.yaml && ! test -e o/b/plummer-stats.csv%s", dir, ""), 0);
	/* b's message is b's own */
	ck_assert_int_eq(sh("cd '%s' && grep -A3 '\"name\": \"b\"' o/batch-report.json >/dev/null && "
			    "python3 -c 'import json; r=json.load(open(\"o/batch-report.json\"))[\"runs\"]; "
			    "assert \"o/b/\" in r[1][\"message\"] and r[0][\"message\"] == \"\", r' 2>/dev/null || "
			    "! command -v python3 >/dev/null%s", dir, ""), 0);
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}
END_TEST

START_TEST(resume_redoes_only_the_incomplete_views)
{
	char dir[] = "/tmp/nb-views-XXXXXX";
	setup_paths();
	ck_assert(mkdtemp(dir));
	write_batch(dir, 1, "");
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 0);
	check_report(dir, "o", "1 a:ok:True b:ok:True c:ok:True");
	ck_assert_int_eq(sh("cd '%s' && cp -r o first && rm o/b/plummer-stats.scene.yaml o/b/plummer-frames/*%s", dir,
			    ""), 0);
	/* the dry run lists one simulation for b alone */
	ck_assert_int_eq(batch_in(dir, "b.yaml --resume --dry-run"), 0);
	ck_assert_int_eq(sh("cd '%s' && grep -q '^# 1 simulation for the 1 run to do' log && "
			    "test $(grep -c 'status: \"complete' log) = 2%s", dir, ""), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --resume"), 0);
	check_report(dir, "o", "1 a:skipped:- b:ok:False c:skipped:-");
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(same_file(dir, "first/b", "o/b", frames[k]), 0);
	/* two incomplete: they share one simulation again */
	ck_assert_int_eq(sh("cd '%s' && rm o/a/plummer-stats.scene.yaml o/c/plummer-stats.scene.yaml%s", dir, ""), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --resume"), 0);
	check_report(dir, "o", "1 a:ok:True b:skipped:- c:ok:True");
	ck_assert_int_eq(same_file(dir, "first/c", "o/c", frames[3]), 0);
	/* share_simulation: false in the file does what --no-share does */
	write_batch(dir, 0, "share_simulation: false\n");
	ck_assert_int_eq(sh("cd '%s' && rm -rf o log%s", dir, ""), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --dry-run"), 0);
	ck_assert_int_eq(sh("cd '%s' && grep -q '^# 2 simulations for the 2 runs to do (sharing off' log%s", dir, ""), 0);
	ck_assert_int_eq(sh("rm -rf '%s'%s", dir, ""), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("batch_views");
	TCase *u = tcase_create("unit");
	tcase_add_test(u, view_keys_group_and_simulation_keys_split);
	tcase_add_test(u, groups_hold_at_most_max_views_and_skip_runs_not_to_do);
	tcase_add_test(u, share_simulation_key_in_the_batch_file);
	suite_add_tcase(s, u);
	TCase *p = tcase_create("program");
	tcase_set_timeout(p, 120);
	tcase_add_test(p, two_views_of_one_simulation_equal_the_runs_done_alone);
	tcase_add_test(p, a_failing_view_does_not_stop_the_others);
	tcase_add_test(p, resume_redoes_only_the_incomplete_views);
	suite_add_tcase(s, p);
	return s;
}

NB_CHECK_MAIN(make_suite)
