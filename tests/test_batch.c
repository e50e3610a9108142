/* test_batch.c - scripted scene batches (app/batch*.c).
 *
 * Unit level: the batch parser and sweep expansion (count, order, names,
 * override order), name clashes, error positions. The test program links
 * only libnbody.a, so it compiles the app files it tests itself.
 * Program level (NB_BIN, in a temporary directory): the contract batch
 * tests/data/batch-small.yaml, --resume, a run that fails at run time
 * between others, a clash that stops the batch before anything runs, and
 * batch-report.json against what ran.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/nbody-render /tmp/b/tests/test_batch && NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_batch */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../app/batch_expand.c"
#include "../app/batch_file.c"
#include "../app/batch_report.c"
#include "../app/batch_verify.c"
#include "../app/outputs.c"
#include "../app/outputs_member.c"
#include "check_main.h"
#include "test_batch_util.h"

/* ---- helpers ---- */

/* Parse TEXT and expand it; the batch must be good. */
static void expand_text(const char *text, const char *const *cli, int ncli, struct batch_file *bf,
			struct batch_run **runs, int *n)
{
	ck_assert_int_eq(batch_file_load_string(text, "t.yaml", "scenes", bf), 0);
	ck_assert_int_eq(batch_expand(bf, cli, ncli, runs, n), 0);
}

/* Run fn-like code with stderr captured into buf (for message checks). */
static int load_capturing(const char *text, char *buf, size_t len)
{
	struct batch_file bf;
	FILE *tmp = tmpfile();
	int saved = dup(2), rc;
	fflush(stderr);
	dup2(fileno(tmp), 2);
	rc = batch_file_load_string(text, "t.yaml", ".", &bf);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t got = fread(buf, 1, len - 1, tmp);
	buf[got] = '\0';
	fclose(tmp);
	batch_file_free(&bf);
	return rc;
}

static const char *find_ov(const struct batch_run *r, const char *key)
{
	for (int i = r->noverrides - 1; i >= 0; i--)
		if (!strcmp(r->overrides[i].key, key))
			return r->overrides[i].value;
	return NULL;
}

/* ---- unit tests ---- */

START_TEST(sweep_is_cartesian_product_first_key_slowest)
{
	static const char text[] =
		"output_dir: o\n"
		"runs:\n"
		"  - scene: s.yaml\n"
		"    name: \"x-{a}-{b}\"\n"
		"    sweep: {a: [1, 2, 3], b: {from: 0.1, to: 0.3, step: 0.1}}\n"
		"  - scene: s.yaml\n"
		"    name: single\n";
	struct batch_file bf;
	struct batch_run *runs;
	int n;
	expand_text(text, NULL, 0, &bf, &runs, &n);
	ck_assert_int_eq(n, 3 * 3 + 1);
	int k = 0;
	for (int a = 1; a <= 3; a++)
		for (int b = 1; b <= 3; b++, k++) {
			char want[64];
			snprintf(want, sizeof want, "x-%d-%g", a, 0.1 * b);
			ck_assert_str_eq(runs[k].name, want);
			ck_assert_int_eq(runs[k].index, k);
			ck_assert_int_eq(runs[k].entry, 0);
			ck_assert_str_eq(runs[k].scene_path, "scenes/s.yaml");
		}
	ck_assert_str_eq(runs[9].name, "single");
	ck_assert_int_eq(runs[9].entry, 1);
	ck_assert_int_eq(runs[9].noverrides, 0);
	ck_assert_int_eq(batch_check_names(&bf, runs, n), 0);
	batch_runs_free(runs, n);
	batch_file_free(&bf);
}
END_TEST

START_TEST(range_has_floor_span_over_step_plus_one_values)
{
	/* from 0 to 1 by 0.25: 0, 0.25, 0.5, 0.75, 1 (endpoint included);
	 * from 10 down to 1 by -4: 10, 6, 2 */
	struct batch_file bf;
	struct batch_run *runs;
	int n;
	expand_text("runs:\n  - scene: s.yaml\n    sweep: {x: {from: 0, to: 1, step: 0.25}, y: {from: 10, to: 1, step: -4}}\n",
		    NULL, 0, &bf, &runs, &n);
	ck_assert_int_eq(bf.entries[0].sweep[0].nvalues, 5);
	ck_assert_int_eq(bf.entries[0].sweep[1].nvalues, 3);
	ck_assert_int_eq(n, 15);
	ck_assert_str_eq(find_ov(&runs[4], "x"), "0.25");
	ck_assert_str_eq(find_ov(&runs[4], "y"), "6");
	ck_assert_str_eq(find_ov(&runs[14], "x"), "1");
	ck_assert_str_eq(find_ov(&runs[14], "y"), "2");
	/* default name: {scene}-{x}-{y} */
	ck_assert_str_eq(runs[0].name, "s-0-10");
	ck_assert_str_eq(runs[14].name, "s-1-2");
	batch_runs_free(runs, n);
	batch_file_free(&bf);
}
END_TEST

START_TEST(overrides_apply_in_order_top_set_entry_set_sweep_cli)
{
	static const char text[] =
		"set: {render.width: 100}\n"
		"runs:\n"
		"  - scene: s.yaml\n"
		"    name: \"v-{camera.position}-{label}\"\n"
		"    set:\n"
		"      render: {width: 200, height: 90}\n"
		"      label: \"yes\"\n"
		"    sweep: {camera.position: [[0, -8, 3], [1, 2, 3]]}\n";
	const char *cli[] = {"render.width=300"};
	struct batch_file bf;
	struct batch_run *runs;
	int n;
	expand_text(text, cli, 1, &bf, &runs, &n);
	ck_assert_int_eq(n, 2);
	const char *keys[] = {"render.width", "render.width", "render.height", "label", "camera.position",
			      "render.width"};
	const char *vals[] = {"100", "200", "90", "\"yes\"", "[0, -8, 3]", "300"};
	ck_assert_int_eq(runs[0].noverrides, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_str_eq(runs[0].overrides[i].key, keys[i]);
		ck_assert_str_eq(runs[0].overrides[i].value, vals[i]);
	}
	/* names take labels: quotes dropped, list items joined with ',' */
	ck_assert_str_eq(runs[0].name, "v-0,-8,3-yes");
	ck_assert_str_eq(runs[1].name, "v-1,2,3-yes");
	batch_runs_free(runs, n);
	batch_file_free(&bf);
}
END_TEST

START_TEST(name_placeholder_missing_from_overrides_is_pending)
{
	struct batch_file bf;
	struct batch_run *runs;
	int n;
	expand_text("runs:\n  - {scene: s.yaml, name: \"p-{encounter.pericenter}\"}\n", NULL, 0, &bf, &runs, &n);
	ck_assert_int_eq(runs[0].name_pending, 1);
	/* batch_name_fill with a lookup: value from there, and an unknown key reported */
	char out[64], missing[64];
	ck_assert_int_eq(batch_name_fill("p-{seed}-{scene}", "a/b.c.yaml", NULL, 0, NULL, NULL, out, sizeof out,
					 missing, sizeof missing), 1);
	ck_assert_str_eq(missing, "seed");
	ck_assert_int_eq(batch_name_fill("p-{unclosed", "s.yaml", NULL, 0, NULL, NULL, out, sizeof out, missing,
					 sizeof missing), NB_EINPUT);
	ck_assert_int_eq(batch_yaml_lookup("seed: 7\nbodies:\n  - {name: a, position: [1, 2, 3]}\n",
					   "bodies.0.position", out, sizeof out), 0);
	ck_assert_str_eq(out, "1,2,3");
	ck_assert_int_eq(batch_yaml_lookup("seed: 7\n", "render.width", out, sizeof out), -1);
	batch_runs_free(runs, n);
	batch_file_free(&bf);
}
END_TEST

static int names_ok(const char *text)
{
	struct batch_file bf;
	struct batch_run *runs;
	int n;
	char err[2048];
	FILE *tmp = tmpfile();
	int saved = dup(2);
	expand_text(text, NULL, 0, &bf, &runs, &n);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	int rc = batch_check_names(&bf, runs, n);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	err[fread(err, 1, sizeof err - 1, tmp)] = '\0';
	fclose(tmp);
	if (rc)
		ck_assert_msg(strstr(err, "t.yaml:") && strstr(err, ".name:"), "message without position: %s", err);
	batch_runs_free(runs, n);
	batch_file_free(&bf);
	return rc;
}

START_TEST(name_clashes_are_caught)
{
	/* a sweep whose name ignores the swept key */
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: same, sweep: {seed: [1, 2]}}\n"), NB_EINPUT);
	/* two entries, the same scene, no names */
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml}\n  - {scene: s.yaml}\n"), NB_EINPUT);
	/* one run's directory inside another's */
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: a}\n  - {scene: s.yaml, name: a/b}\n"), NB_EINPUT);
	/* names that leave the output directory, or are the report */
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: ../x}\n"), NB_EINPUT);
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: /abs}\n"), NB_EINPUT);
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: batch-report.json}\n"), NB_EINPUT);
	/* distinct names, subdirectories included, are fine */
	ck_assert_int_eq(names_ok("runs:\n  - {scene: s.yaml, name: a/b}\n  - {scene: s.yaml, name: a/c}\n"
				  "  - {scene: s.yaml, name: a-b}\n"), 0);
}
END_TEST

START_TEST(batch_file_errors_name_file_line_column_and_key)
{
	char err[2048];
	ck_assert_int_eq(load_capturing("output_dir: o\nruns:\n  - scene: s.yaml\n    sweep: {seed: 5}\n", err,
					sizeof err), NB_EINPUT);
	ck_assert_msg(strstr(err, "t.yaml:4:") && strstr(err, "runs.0.sweep.seed: expected"), "%s", err);
	ck_assert_int_eq(load_capturing("runs:\n  - scene: s.yaml\n  - name: x\n", err, sizeof err), NB_EINPUT);
	ck_assert_msg(strstr(err, "t.yaml:3:") && strstr(err, "runs.1: expected a key 'scene'"), "%s", err);
	ck_assert_int_eq(load_capturing("runs:\n  - {scene: s.yaml, sweep: {x: {from: 0, to: 1, step: -1}}}\n",
					err, sizeof err), NB_EINPUT);
	ck_assert_msg(strstr(err, "runs.0.sweep.x.step"), "%s", err);
	ck_assert_int_eq(load_capturing("runs:\n  - {scene: s.yaml, sweeps: {}}\n", err, sizeof err), NB_EINPUT);
	ck_assert_msg(strstr(err, "runs.0.sweeps: unknown key"), "%s", err);
	ck_assert_int_eq(load_capturing("runs: []\n", err, sizeof err), NB_EINPUT);
	ck_assert_int_eq(load_capturing("runs: [\n", err, sizeof err), NB_EINPUT);
	ck_assert_msg(strstr(err, "t.yaml:") && strstr(err, "YAML syntax"), "%s", err);
}
END_TEST

/* Batch files are read by the scene's YAML reader (scene/yaml_tree.c), so
 * what a scene refuses is refused here too, at its line and column (the
 * libyaml document loader before accepted anchors and aliases, obeyed
 * tags, kept '<<' as a key and ignored a second document). */
START_TEST(batch_file_refuses_anchors_aliases_tags_merge_keys_second_document)
{
	static const struct {
		const char *text, *where, *what;
	} cases[] = {
		{"set: &c {seed: 1}\nruns:\n  - {scene: s.yaml, set: *c}\n", "t.yaml:1:6:", "anchor '&c'"},
		{"runs:\n  - {scene: s.yaml, set: {seed: *c}}\n", "t.yaml:2:33:", "an alias"},
		{"runs:\n  - {scene: s.yaml, set: {seed: !!int 5}}\n", "t.yaml:2:33:", "a tag"},
		{"runs:\n  - scene: s.yaml\n    set:\n      <<: {seed: 1}\n", "t.yaml:4:7:", "merge key"},
		{"runs:\n  - {scene: s.yaml}\n---\nruns: []\n", "t.yaml:3:1:", "second document"},
	};
	char err[2048];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(load_capturing(cases[i].text, err, sizeof err), NB_EINPUT);
		ck_assert_msg(strstr(err, cases[i].where) && strstr(err, cases[i].what), "case %zu: %s", i, err);
	}
}
END_TEST

/* Override values are YAML flow text that loads back to the same value
 * (quoted scalars re-quoted with escapes, maps as {k: v}); labels drop the
 * quotes and join list items with ','. Also the resolved-scene lookup. */
START_TEST(override_values_and_labels_are_flow_text)
{
	static const char text[] =
		"runs:\n"
		"  - scene: s.yaml\n"
		"    name: n\n"
		"    set:\n"
		"      a: 'x\"y\\z'\n"
		"      b: \"t\\tu\\x01\"\n"
		"      c: [1, {d: 'e f', g: [2]}]\n"
		"      h: ~\n"
		"      i: |\n"
		"        two\n";
	static const char *const values[] = {"\"x\\\"y\\\\z\"", "\"t\\tu\\u0001\"",
					     "[1, {d: \"e f\", g: [2]}]", "~", "\"two\\n\""};
	static const char *const labels[] = {"x\"y\\z", "t\tu\x01", "1,{d: \"e f\", g: [2]}", "~", "two\n"};
	struct batch_file bf;
	char err[256];
	ck_assert_int_eq(batch_file_load_string(text, "t.yaml", ".", &bf), 0);
	ck_assert_int_eq(bf.entries[0].nset, 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_str_eq(bf.entries[0].set[i].value, values[i]);
		ck_assert_str_eq(bf.entries[0].set[i].label, labels[i]);
	}
	ck_assert_str_eq(bf.entries[0].set[2].from, "t.yaml:7:10: runs.0.set");
	batch_file_free(&bf);
	ck_assert_int_eq(batch_yaml_lookup("a: {b: [x, 'y z', [1, 2]]}\n", "a.b.2", err, sizeof err), 0);
	ck_assert_str_eq(err, "1,2");
	ck_assert_int_eq(batch_yaml_lookup("a: {b: [x, 'y z']}\n", "a.b.1", err, sizeof err), 0);
	ck_assert_str_eq(err, "y z");
	ck_assert_int_eq(batch_yaml_lookup("a: {b: [x]}\n", "a.b.1", err, sizeof err), -1);
	ck_assert_int_eq(batch_yaml_lookup("a: {b: [x]}\n", "a", err, sizeof err), -1);
}
END_TEST

/* ---- the program ---- */

/* Lines of DIR/REL minus the header, -1 if missing. */
static int data_rows(const char *dir, const char *rel)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	FILE *f = fopen(path, "r");
	int lines = 0, c;
	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		lines += c == '\n';
	fclose(f);
	return lines - 1; /* header */
}

static int exists(const char *dir, const char *rel)
{
	char p[2 * PATH_MAX];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return stat(p, &st) == 0;
}

/* "name:status:frames ..." from batch-report.json. */
static void check_report(const char *dir, const char *outdir, const char *want)
{
	batch_check_report(dir, outdir,
			   "\" \".join(r[\"name\"]+\":\"+r[\"status\"].replace(\" \",\"_\")+\":\"+"
			   "str(r[\"frames_done\"]) for r in d[\"runs\"])",
			   want);
}

START_TEST(contract_batch_runs_two_and_fails_one_then_resume_skips_complete)
{
	char dir[] = "/tmp/nb-batch-XXXXXX", args[2 * PATH_MAX];
	setup_paths();
	ck_assert(mkdtemp(dir));
	snprintf(args, sizeof args, "'%s/batch-small.yaml'", g_data);

	/* three runs: two ok, "broken" bad input; the batch says 1 */
	ck_assert_int_eq(batch_in(dir, args), 1);
	/* one statistics row per frame: output.frames = 5 in the batch */
	ck_assert_int_eq(data_rows(dir, "out/batch/plummer-1/plummer-stats.csv"), 5);
	ck_assert_int_eq(data_rows(dir, "out/batch/plummer-2/plummer-stats.csv"), 5);
	ck_assert(exists(dir, "out/batch/plummer-1/plummer.mp4"));
	ck_assert(exists(dir, "out/batch/plummer-2/plummer-frames/frame_00004.png"));
	ck_assert(!exists(dir, "out/batch/plummer-2/plummer-frames/frame_00005.png"));
	ck_assert(exists(dir, "out/batch/plummer-1/plummer.scene.yaml"));
	ck_assert(!exists(dir, "out/batch/broken"));
	check_report(dir, "out/batch", "plummer-1:ok:5 plummer-2:ok:5 broken:bad_input:0");
	/* the bad value is named where the batch file wrote it, not as a --set */
	char logp[PATH_MAX + 16], logt[8192] = "";
	snprintf(logp, sizeof logp, "%s/log", dir);
	FILE *lf = fopen(logp, "r");
	ck_assert_ptr_nonnull(lf);
	logt[fread(logt, 1, sizeof logt - 1, lf)] = '\0';
	fclose(lf);
	ck_assert_msg(strstr(logt, "batch-small.yaml:9:26: runs.1.set: simulation.dt=-1: simulation.dt: "
				   "expected a number > 0"),
		      "log: %s", logt);
	ck_assert_msg(!strstr(logt, "--set simulation.dt=-1"), "log: %s", logt);

	/* plummer-2 made partial: its resolved scene (written last) removed */
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/out/batch/plummer-2/plummer.scene.yaml", dir);
	ck_assert_int_eq(remove(p), 0);
	ck_assert_int_eq(batch_in(dir, strcat(args, " --resume")), 1);
	check_report(dir, "out/batch", "plummer-1:skipped:5 plummer-2:ok:5 broken:bad_input:0");
	ck_assert(exists(dir, "out/batch/plummer-2/plummer.scene.yaml"));

	/* unchanged, both are complete; with a changed setting neither is */
	snprintf(p, sizeof p, "%s/log", dir);
	remove(p);
	char more[3 * PATH_MAX];
	snprintf(more, sizeof more, "%s --dry-run", args); /* args has --resume */
	ck_assert_int_eq(batch_in(dir, more), 1);
	snprintf(p, sizeof p, "cd '%s' && test $(grep -c 'status: \"complete' log) = 2", dir);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof p, "%s/log", dir);
	remove(p);
	snprintf(more, sizeof more, "%s --set output.frames=2 --dry-run", args);
	ck_assert_int_eq(batch_in(dir, more), 1);
	snprintf(p, sizeof p, "cd '%s' && test $(grep -c 'status: \"to run' log) = 2", dir);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

START_TEST(runtime_failure_does_not_stop_later_runs)
{
	char dir[] = "/tmp/nb-batch-XXXXXX", path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	fprintf(f, "output_dir: o\n"
		   "set: {output.frames: 2, render.width: 32, render.height: 32, bodies.0.count: 100}\n"
		   "runs:\n"
		   "  - {scene: '%s/plummer-small.yaml', name: first}\n"
		   "  - {scene: '%s/plummer-small.yaml', name: second}\n",
		g_data, g_data);
	fclose(f);
	/* first's frame directory is taken by a plain file: it fails while running */
	snprintf(path, sizeof path, "mkdir -p '%s/o/first' && touch '%s/o/first/plummer-frames'", dir, dir);
	ck_assert_int_eq(system(path), 0);
	ck_assert_int_eq(batch_in(dir, "b.yaml --jobs 2"), 1);
	check_report(dir, "o", "first:failed:0 second:ok:2");
	ck_assert(exists(dir, "o/second/plummer.scene.yaml"));
	ck_assert(!exists(dir, "o/first/plummer.scene.yaml"));
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(clash_exits_2_before_anything_runs)
{
	char dir[] = "/tmp/nb-batch-XXXXXX", path[2 * PATH_MAX];
	FILE *f = batch_file_create(dir, path, sizeof path);
	fprintf(f, "output_dir: o\nruns:\n  - {scene: '%s/plummer-small.yaml', name: run, sweep: {seed: [1, 2]}}\n",
		g_data);
	fclose(f);
	ck_assert_int_eq(batch_in(dir, "b.yaml"), 2);
	ck_assert(!exists(dir, "o"));
	snprintf(path, sizeof path, "cd '%s' && grep -q 'b.yaml:3:.*runs.0.name: runs 1 and 2 both' log", dir);
	ck_assert_int_eq(system(path), 0);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("batch");
	TCase *u = tcase_create("unit");
	tcase_add_test(u, sweep_is_cartesian_product_first_key_slowest);
	tcase_add_test(u, range_has_floor_span_over_step_plus_one_values);
	tcase_add_test(u, overrides_apply_in_order_top_set_entry_set_sweep_cli);
	tcase_add_test(u, name_placeholder_missing_from_overrides_is_pending);
	tcase_add_test(u, name_clashes_are_caught);
	tcase_add_test(u, batch_file_errors_name_file_line_column_and_key);
	tcase_add_test(u, batch_file_refuses_anchors_aliases_tags_merge_keys_second_document);
	tcase_add_test(u, override_values_and_labels_are_flow_text);
	suite_add_tcase(s, u);
	TCase *p = tcase_create("program");
	tcase_set_timeout(p, 120);
	tcase_add_test(p, contract_batch_runs_two_and_fails_one_then_resume_skips_complete);
	tcase_add_test(p, runtime_failure_does_not_stop_later_runs);
	tcase_add_test(p, clash_exits_2_before_anything_runs);
	suite_add_tcase(s, p);
	return s;
}

NB_CHECK_MAIN(make_suite)
