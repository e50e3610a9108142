/* test_scene_errors.c - bad scenes: every kind of mistake in a file, in
 * text or in a --set gives NB_EINPUT and exactly one message naming the file
 * (or the override), line:col and the key path; junk never crashes.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_scene_errors && /tmp/b/tests/test_scene_errors
 * (run from the repository root: it reads tests/data/). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "scene/log.h"
#include "scene/scene.h"
#include "scene/scene_schema.h"

static struct scene g_sc; /* large: keep off the stack */
#include "test_scene_util.h"

static int count_lines_with(const char *s, const char *needle)
{
	int n = 0;
	for (const char *line = s; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[2048];
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1), line);
		if (strstr(buf, needle))
			n++;
		line += len + (end ? 1 : 0);
	}
	return n;
}

/* The load failed with NB_EINPUT and exactly one error line holding every
 * one of the given fragments. */
static void expect_error(int err, const char *const *frags)
{
	ck_assert_msg(err == NB_EINPUT, "expected NB_EINPUT, got %d; stderr: %s", err, g_err);
	ck_assert_msg(count_lines_with(g_err, "error:") == 1, "expected one error line, got: %s", g_err);
	ck_assert_msg(count_lines_with(g_err, "\n") <= 1, "expected a single line, got: %s", g_err);
	for (int i = 0; frags[i]; i++)
		ck_assert_msg(strstr(g_err, frags[i]), "message lacks '%s': %s", frags[i], g_err);
}
#define EXPECT_ERROR(err, ...) expect_error(err, (const char *const[]){__VA_ARGS__, NULL})

static const char *MIN = "bodies: [{name: a, model: plummer}]\n";

START_TEST(bad_files_name_place_and_key)
{
	static const struct {
		const char *file, *where, *key, *extra;
	} cases[] = {
		{"bad-typo-key.yaml", ":5:3:", "render.widht", "did you mean 'width'?"},
		{"bad-odd-width.yaml", ":4:10:", "render.width", "must be an even number >= 16, got 1919"},
		{"bad-syntax.yaml", ":3:7:", "expected valid YAML", "flow mapping"},
		{"bad-duplicate-name.yaml", ":4:11:", "bodies.1.name", "'a'"},
		{"bad-keys-order.yaml", ":6:15:", "camera.keys.2.frame", "strictly increasing"},
		{"bad-negative-dt.yaml", ":3:7:", "simulation.dt", "expected a number > 0, got '-0.01'"},
		{"bad-model-key.yaml", ":4:5:", "bodies.0.count", "model disk-galaxy"},
		{"bad-encounter-bodies.yaml", ":8:12:", "encounter", "exactly 2"},
		{"bad-enum.yaml", ":3:11:", "simulation.solver", "did you mean 'barnes-hut'?"},
		{"bad-duplicate-key.yaml", ":4:1:", "simulation", "duplicate key (first given at line 2)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "tests/data/%s", cases[i].file);
		int err = load_file(path, NULL, 0, &g_sc);
		EXPECT_ERROR(err, path, cases[i].where, cases[i].key, cases[i].extra);
	}
}
END_TEST

START_TEST(missing_file_is_input_error)
{
	int err = load_file("tests/data/no-such-scene.yaml", NULL, 0, &g_sc);
	EXPECT_ERROR(err, "cannot open tests/data/no-such-scene.yaml", "No such file");
	err = load_file("tests/data", NULL, 0, &g_sc);
	EXPECT_ERROR(err, "tests/data");
}
END_TEST

/* Scene texts with one bad value each, and the fragments its one message
 * must hold: file:line:col, the key's path, what was expected and got. */
static const struct {
	const char *text;
	const char *frag[4];
} bad_values[] = {
	{"", {"t.yaml:1:1:", "bodies", "missing required key"}},
	{"hello\n", {"t.yaml:1:1:", "expected a map of scene keys", "'hello'"}},
	{"- 1\n- 2\n", {"t.yaml:1:1:", "got a list of 2"}},
	{"bodies: [{name: a, model: plummer}]\nsimulaton: {dt: 1}\n",
	 {"t.yaml:2:1:", "simulaton", "did you mean 'simulation'?"}},
	{"bodies: [{name: a, model: plummer, colour: [1, 1, 1]}]\n",
	 {"t.yaml:1:36:", "bodies.0.colour", "did you mean 'color'?"}},
	{"bodies: [{name: a, model: plummer}]\ncamera:\n  keys:\n    - {frame: 0, positon: [1, 2, 3]}\n",
	 {"t.yaml:4:18:", "camera.keys.0.positon", "did you mean 'position'?"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {height: 7}\n",
	 {"t.yaml:2:18:", "render.height", "must be an even number >= 16, got 7"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {width: 20000}\n",
	 {"t.yaml:2:17:", "render.width", "[16, 16384]", "20000"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {exposure: 1e999}\n",
	 {"t.yaml:2:20:", "render.exposure", "too large"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {gamma: .nan}\n",
	 {"t.yaml:2:17:", "render.gamma", "not a finite number"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {exposure: inf}\n",
	 {"t.yaml:2:20:", "render.exposure", "not a finite number"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {tonemap: aces}\n",
	 {"t.yaml:2:19:", "render.tonemap", "expected one of linear, log, asinh", "'aces'"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {diffuse_smoothing: knn}\n",
	 {"t.yaml:2:29:", "render.diffuse_smoothing", "expected one of screen, adaptive", "'knn'"}},
	{"bodies: [{name: a, model: plummer}]\nrender: {smoothing: big}\n",
	 {"t.yaml:2:21:", "render.smoothing", "adaptive", "'big'"}},
	{"bodies: [{name: a, model: plummer}]\nrender: [1, 2]\n",
	 {"t.yaml:2:9:", "render", "expected a map", "a list of 2"}},
	{"bodies: [{name: a, model: plummer}]\nseed: -1\n", {"t.yaml:2:7:", "seed", "negative"}},
	{"bodies: [{name: a, model: plummer, count: 0}]\n", {"t.yaml:1:43:", "bodies.0.count", "[1, "}},
	{"bodies: [{name: a, model: plummer, count: 2.5}]\n",
	 {"t.yaml:1:43:", "bodies.0.count", "not a whole number"}},
	{"bodies: [{name: a, model: plummer, mass: \"1\"}]\n",
	 {"t.yaml:1:42:", "bodies.0.mass", "quoted string"}},
	{"bodies: [{name: 'a b', model: plummer}]\n", {"t.yaml:1:17:", "bodies.0.name", "letters"}},
	{"bodies: [{name: a}]\n", {"t.yaml:1:10:", "bodies.0.model", "missing required key"}},
	{"bodies: [{model: plummer}]\n", {"t.yaml:1:10:", "bodies.0.name", "missing required key"}},
	{"bodies: []\n", {"t.yaml:1:9:", "bodies", "at least one"}},
	{"bodies: [5]\n", {"t.yaml:1:10:", "bodies.0", "expected a map", "'5'"}},
	{"bodies: [{name: a, model: file}]\n", {"t.yaml:1:10:", "bodies.0.file", "missing required key"}},
	{"bodies: [{name: a, model: file, file: none.csv}]\n",
	 {"t.yaml:1:39:", "bodies.0.file", "cannot open", "none.csv"}},
	{"bodies: [{name: g, model: disk-galaxy, disk: {count: 0}, bulge: {count: 0}, halo: {count: 0}}]\n",
	 {"t.yaml:1:10:", "bodies.0", "at least one of disk, bulge, halo"}},
	{"bodies: [{name: g, model: disk-galaxy, disk: {toomre_q: 0}}]\n",
	 {"t.yaml:1:57:", "bodies.0.disk.toomre_q", "expected a number in (0, 100]"}},
	{"bodies: [{name: g, model: disk-galaxy, bulge: {scale_height: 1}}]\n",
	 {"t.yaml:1:48:", "bodies.0.bulge.scale_height", "did you mean 'scale'?"}},
	{"bodies: [{name: a, model: plummer, position: [1, 2, x]}]\n",
	 {"t.yaml:1:53:", "bodies.0.position.2", "'x'"}},
	{"bodies: [{name: a, model: plummer, color: [1, -1, 1]}]\n",
	 {"t.yaml:1:47:", "bodies.0.color.1", "[0, 1e+06]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {fov: 180}\n",
	 {"t.yaml:2:15:", "camera.fov", "(0, 180)"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {up: [0, 0, 0]}\n",
	 {"t.yaml:2:14:", "camera", "up vector that is not zero"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {keys: [{frame: 0, position: [0, 0, 5]}]}\n",
	 {"t.yaml:2:25:", "camera.keys.0", "parallel"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {keys: [{position: [1, 2, 3]}]}\n",
	 {"t.yaml:2:17:", "camera.keys.0.frame", "missing required key"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {follow: b}\n",
	 {"t.yaml:2:18:", "camera.follow", "'b'"}},
	/* framing (docs/scenes.md "Framing") */
	{"bodies: [{name: a, model: plummer}]\ncamera: {follow: lights}\n",
	 {"t.yaml:2:18:", "camera.follow", "light", "'lights'"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame: automatic}\n",
	 {"t.yaml:2:17:", "camera.frame", "keys, auto"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame: auto, frame_fraction: 0}\n",
	 {"t.yaml:2:39:", "camera.frame_fraction", "(0, 1]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame_fraction: 1.5}\n",
	 {"t.yaml:2:26:", "camera.frame_fraction", "(0, 1]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame_margin: 0.6}\n",
	 {"t.yaml:2:24:", "camera.frame_margin", "[0, 0.5]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {smoothing: -2}\n",
	 {"t.yaml:2:21:", "camera.smoothing", "[0, 1e+06]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame_range: [3, 0.5]}\n",
	 {"t.yaml:2:23:", "camera.frame_range", "lo <= hi", "[3, 0.5]"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {projection: fisheye, frame: auto}\n"
	 "render: {width: 64, height: 64}\n",
	 {"t.yaml:2:38:", "camera.frame", "fisheye", "perspective"}},
	{"bodies: [{name: a, model: plummer}]\ncamera: {frame_range: [0, 2]}\n",
	 {"t.yaml:2:24:", "camera.frame_range.0", "[1e-06, 1e+06]"}},
	{"bodies: [{name: a, model: plummer}]\noutput: {preview: x.png}\n",
	 {"t.yaml:2:19:", "output.preview", ".jpg"}},
	{"bodies: [{name: a, model: plummer}]\noutput: {png_depth: 12}\n",
	 {"t.yaml:2:21:", "output.png_depth", "8, 16"}},
	{"bodies: [{name: a, model: plummer}]\noutput: {preset: quick}\n",
	 {"t.yaml:2:18:", "output.preset", "veryfast"}},
	{"bodies: [{name: a, model: plummer}, {name: b, model: plummer}]\n"
	 "encounter: {pericenter: 5, separation: 2}\n",
	 {"t.yaml:2:40:", "encounter.separation", "pericenter"}},
	{"bodies: [{name: a, model: plummer}, {name: b, model: plummer}]\n"
	 "encounter: {pericenter: 1, separation: 10, eccentricity: 0.5}\n",
	 {"t.yaml:2:40:", "encounter.separation", "apocentre"}},
	{"bodies: [{name: a, model: plummer}, {name: b, model: plummer}]\n"
	 "encounter: {spin: [prograde]}\n",
	 {"t.yaml:2:19:", "encounter.spin", "list of 2"}},
	{"bodies: [{name: a, model: plummer}]\nunits: metric\n", {"t.yaml:2:8:", "units", "nbody, galactic"}},
	{"bodies: &b [{name: a, model: plummer}]\nx: *b\n", {"t.yaml:1:9:", "anchor '&b'"}},
	{"bodies: [{name: a, model: plummer}]\n---\nseed: 2\n", {"t.yaml:2:1:", "second document"}},
	{"bodies: [{name: a, model: plummer}]\n? [1, 2]\n: 3\n", {"t.yaml:2:3:", "used as a key"}},
	{"bodies: [{name: a, model: plummer}]\nseed: 1\n\tseed: 2\n", {"t.yaml:", "expected valid YAML"}},
};

START_TEST(bad_values_name_line_col_and_path)
{
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		int err = load_str(bad_values[i].text, NULL, 0, &g_sc);
		const char *const *f = bad_values[i].frag;
		int n = 0;
		while (n < 4 && f[n])
			n++;
		const char *frags[5] = {NULL};
		for (int j = 0; j < n; j++)
			frags[j] = f[j];
		ck_assert_msg(err == NB_EINPUT, "case %zu (%s): expected NB_EINPUT, got %d: %s", i,
			      bad_values[i].text, err, g_err);
		expect_error(err, frags);
	}
}
END_TEST

START_TEST(long_strings_are_errors_not_truncated)
{
	static char text[8192];
	char name[100], path[1100];
	memset(name, 'n', 80);
	name[80] = '\0';
	snprintf(text, sizeof(text), "bodies: [{name: %s, model: plummer}]\n", name);
	int err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "bodies.0.name", "at most 63 characters, got 80");
	memset(path, 'p', 1050);
	path[1050] = '\0';
	snprintf(text, sizeof(text), "%soutput: {video: %s}\n", MIN, path);
	err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:17:", "output.video", "at most 1023 characters, got 1050");
	/* a long unknown key: the message stays one sane line */
	memset(path, 'k', 1000);
	path[1000] = '\0';
	snprintf(text, sizeof(text), "%s%s: 1\n", MIN, path);
	err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:1:", "unknown key");
	ck_assert_msg(strlen(g_err) < 1000, "message of %zu chars", strlen(g_err));
	/* longer than libyaml's 1024-character limit on keys: a syntax error */
	memset(path, 'k', 1050);
	path[1050] = '\0';
	snprintf(text, sizeof(text), "%s%s: 1\n", MIN, path);
	err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:", "expected valid YAML");
}
END_TEST

START_TEST(junk_never_crashes)
{
	static char text[70000];
	uint64_t x = 12345;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(round * 37 % 400);
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			unsigned c = (unsigned)(x >> 56);
			/* half the rounds: YAML-ish characters, to get past the scanner */
			text[i] = round % 2 ? (char)(c ? c : 1) : "ab:- [{,}]\n 0.e\"'#&*!|>%@"[c % 26];
		}
		text[n] = '\0';
		int err = load_str(text, NULL, 0, &g_sc);
		if (err == 0)
			continue; /* junk that happens to be a valid scene cannot, lacking bodies */
		ck_assert_msg(err == NB_EINPUT, "round %d: got %d", round, err);
		ck_assert_msg(count_lines_with(g_err, "error:") == 1, "round %d: %s", round, g_err);
	}
	/* deep nesting */
	size_t o = 0;
	for (int i = 0; i < 30000; i++)
		text[o++] = '[';
	text[o] = '\0';
	int err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:1:", "expected valid YAML");
	o = 0;
	for (int i = 0; i < 100; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%*sa:\n", i, "");
	err = load_str(text, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:");
	/* huge numbers and odd scalars in every numeric key kind */
	const char *odd[] = {"1e400", "-1e400", "99999999999999999999999", "0x10", "1_000", ".inf",
			     "NaN", "~", "''", "[]", "{}", "true", "1.5.5", "--1"};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		snprintf(text, sizeof(text),
			 "bodies: [{name: a, model: plummer, count: %s}]\n", odd[i]);
		err = load_str(text, NULL, 0, &g_sc);
		EXPECT_ERROR(err, "bodies.0.count");
		snprintf(text, sizeof(text), "%ssimulation: {dt: %s}\n", MIN, odd[i]);
		err = load_str(text, NULL, 0, &g_sc);
		if (i == 2) /* 1e23 is a fine time step, if a long one */
			ck_assert_msg(err == 0 && g_sc.simulation.dt == 1e23, "%s", g_err);
		else
			EXPECT_ERROR(err, "simulation.dt");
		snprintf(text, sizeof(text), "%sseed: %s\n", MIN, odd[i]);
		err = load_str(text, NULL, 0, &g_sc);
		EXPECT_ERROR(err, "seed");
	}
	err = load_str(NULL, NULL, 0, &g_sc);
	EXPECT_ERROR(err, "bodies");
}
END_TEST

START_TEST(overrides_report_bad_values)
{
	static const struct {
		const char *ov;
		const char *frag[3];
	} cases[] = {
		{"simulation.dt=-1", {"--set simulation.dt=-1: simulation.dt: expected a number > 0, got '-1'"}},
		{"render.widht=640", {"--set render.widht=640: render.widht: unknown key", "did you mean 'width'?"}},
		{"render.width=641", {"--set render.width=641: render.width: must be an even number"}},
		{"bodies.0.cont=5", {"--set bodies.0.cont=5: bodies.0.cont: unknown key", "'count'"}},
		{"bodies.x.count=5", {"--set bodies.x.count=5: bodies: expected a list index", "'x'"}},
		{"bodies.5.count=5", {"--set bodies.5.count=5: bodies.5: expected an index in 0..0", "got 5"}},
		{"bodies.1.count=5", {"--set bodies.1.count=5: bodies.1.name: missing required key"}},
		{"camera.keys.0.position=[0,-5]", {"--set camera.keys.0.position=[0,-5]: camera.keys.0.position",
						   "list of 3 numbers", "got a list of 2"}},
		{"camera.keys.0.position=[0,-5", {"--set camera.keys.0.position=[0,-5: expected a valid YAML value"}},
		{"render.smoothing=auto", {"--set render.smoothing=auto: render.smoothing", "adaptive"}},
		{"render.width.x=3", {"--set render.width.x=3: render.width: expected nothing after"}},
		{"render.psf_wing=0.6", {"--set render.psf_wing=0.6: render.psf_wing", "[0, 0.5]"}},
		{"render.psf_wing_beta=0.5", {"--set render.psf_wing_beta=0.5: render.psf_wing_beta", "[1, 4]"}},
		{"render", {"--set render: expected KEY=VALUE"}},
		{"=5", {"--set =5: expected KEY=VALUE"}},
		{"render..width=5", {"--set render..width=5: expected a key path"}},
		{"render=5", {"--set render=5: render: expected a map"}},
		{"simulation.solver=tree", {"--set simulation.solver=tree: simulation.solver: expected one of direct, barnes-hut"}},
		{"output.preset=\"fast\" x", {"--set output.preset=\"fast\" x:", "expected a valid YAML value"}},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ov[1] = {cases[i].ov};
		int err = load_file("tests/data/plummer-small.yaml", ov, 1, &g_sc);
		const char *frags[4] = {cases[i].frag[0], cases[i].frag[1], cases[i].frag[2], NULL};
		ck_assert_msg(err == NB_EINPUT, "%s: got %d", cases[i].ov, err);
		expect_error(err, frags);
	}
}
END_TEST

/* What docs/scenes.md says is refused (anchors, aliases, merge keys, tags,
 * duplicate keys at any depth, a second document) is refused with its
 * line and column, in a file and in a --set value. */
START_TEST(yaml_extras_refused_with_place)
{
	static const struct {
		const char *text;
		const char *frag[3];
	} cases[] = {
		{"bodies: [{name: a, model: plummer}]\nrender: &r {width: 320}\n", {"t.yaml:2:9:", "anchor '&r'"}},
		{"bodies: [{name: a, model: plummer}]\nseed: &s 5\n", {"t.yaml:2:7:", "anchor '&s'"}},
		{"bodies: [{name: a, model: plummer}]\nseed: *s\n", {"t.yaml:2:7:", "alias"}},
		{"bodies: [{name: a, model: plummer}]\nseed: !!str 5\n", {"t.yaml:2:7:", "a tag", "str"}},
		{"bodies: [{name: a, model: plummer}]\nseed: !!int 5\n", {"t.yaml:2:7:", "a tag", "int"}},
		{"bodies: [{name: a, model: plummer}]\nseed: !custom 5\n", {"t.yaml:2:7:", "a tag '!custom'"}},
		{"bodies: [{name: a, model: plummer}]\nrender: !r {width: 320}\n", {"t.yaml:2:9:", "a tag '!r'"}},
		{"bodies: !!seq [{name: a, model: plummer}]\n", {"t.yaml:1:9:", "a tag"}},
		{"bodies: [{name: a, model: plummer}]\ncamera: {<<: {fov: 30}}\n", {"t.yaml:2:10:", "merge key"}},
		{"bodies:\n  - name: a\n    model: plummer\n  - <<: {model: plummer}\n    name: b\n",
		 {"t.yaml:4:5:", "merge key"}},
		{"bodies: [{name: a, model: plummer}]\nrender:\n  width: 320\n  width: 640\n",
		 {"t.yaml:4:3:", "render.width", "duplicate key"}},
		{"bodies:\n  - name: a\n    model: plummer\n    name: b\n", {"t.yaml:4:5:", "bodies.0.name", "duplicate key"}},
		{"bodies: [{name: a, model: plummer}]\ncamera: {keys: [{frame: 0, fov: 10, fov: 20}]}\n",
		 {"t.yaml:2:37:", "camera.keys.0.fov", "duplicate key"}},
		{"bodies: [{name: a, model: plummer}]\n---\nseed: 3\n", {"t.yaml:2:1:", "second document"}},
		{"bodies: [{name: a, model: plummer}]\n...\n---\n", {"t.yaml:3:1:", "second document"}},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = load_str(cases[i].text, NULL, 0, &g_sc);
		const char *frags[4] = {cases[i].frag[0], cases[i].frag[1], cases[i].frag[2], NULL};
		ck_assert_msg(err == NB_EINPUT, "case %zu: got %d", i, err);
		expect_error(err, frags);
	}
	static const char *const sets[][2] = {
		{"seed=!!int 5", "--set seed=!!int 5: "},
		{"seed=&a 5", "--set seed=&a 5: "},
		{"camera={<<: {fov: 30}}", "--set camera={<<: {fov: 30}}: "},
	};
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *ov[1] = {sets[i][0]};
		int err = load_str(MIN, ov, 1, &g_sc);
		EXPECT_ERROR(err, sets[i][1]);
	}
}
END_TEST

/* Every numeric key of the table, scalar or vector component, refuses
 * non-finite, unrepresentable, subnormal and out-of-range values through
 * --set, naming the override and the key path. */
static void expect_number_refused(const struct scene_key *k, const char *x)
{
	static const char *plain = "bodies: [{name: a, model: plummer, count: 10}]\n"
				   "camera: {keys: [{frame: 0}]}\n";
	static const char *disks = "bodies: [{name: g, model: disk-galaxy}, {name: h, model: disk-galaxy}]\n"
				   "camera: {keys: [{frame: 0}]}\n";
	char path[160], ov[320], want[520];
	snprintf(path, sizeof(path), "%s", k->path);
	for (char *q = strchr(path, '*'); q; q = strchr(q, '*'))
		*q = '0';
	const char *val = x;
	char vec[128];
	if (k->type == SKEY_VEC3 || k->type == SKEY_COLOR) {
		snprintf(vec, sizeof(vec), "[%s, 0, 0]", x);
		val = vec;
	} else if (k->type == SKEY_PAIR || k->type == SKEY_PAIR_OR_WORD) {
		snprintf(vec, sizeof(vec), "[%s, 0]", x);
		val = vec;
	}
	snprintf(ov, sizeof(ov), "%s=%s", path, val);
	int disk_scene = strncmp(k->path, "encounter", 9) == 0 || strstr(k->path, ".disk.") ||
			 strstr(k->path, ".bulge.") || strstr(k->path, ".halo.") ||
			 strstr(k->path, ".dust.");
	/* snapshot keys: the loader only checks that the file is a regular file */
	static const char *snap = "bodies: [{name: s, model: snapshot, file: bad-enum.yaml}]\n"
				  "camera: {keys: [{frame: 0}]}\n";
	int snap_scene = strstr(k->path, ".types.") || strstr(k->path, ".region.") ||
			 strstr(k->path, "bodies.*.units.") || strstr(k->path, ".subsample");
	const char *ovs[1] = {ov};
	int err = load_str(snap_scene ? snap : disk_scene ? disks : plain, ovs, 1, &g_sc);
	snprintf(want, sizeof(want), "--set %s: %s", ov, path);
	ck_assert_msg(err == NB_EINPUT, "%s: accepted (rc %d)", ov, err);
	ck_assert_msg(strstr(g_err, want), "%s: message lacks '%s': %s", ov, want, g_err);
	ck_assert_msg(count_lines_with(g_err, "error:") == 1, "%s: not one error: %s", ov, g_err);
}

START_TEST(every_numeric_key_refuses_bad_numbers)
{
	static const char *const bad[] = {".nan", ".NaN", ".inf", "-.inf", "nan", "inf", "1e400",
					  "-1e400", "-0x1p3", "0x10", "1e-310", "1e-400"};
	int tested = 0;
	for (int i = 0; i < scene_schema_count; i++) {
		const struct scene_key *k = &scene_schema[i];
		int integer = k->type == SKEY_INT || k->type == SKEY_LONG || k->type == SKEY_U64;
		if (!integer && k->type != SKEY_DOUBLE && k->type != SKEY_VEC3 &&
		    k->type != SKEY_COLOR && k->type != SKEY_PAIR && k->type != SKEY_NUM_OR_WORD &&
		    k->type != SKEY_PAIR_OR_WORD)
			continue;
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
			expect_number_refused(k, bad[j]);
		if (integer) {
			expect_number_refused(k, "1.5");
			expect_number_refused(k, "99999999999999999999999");
		}
		char x[64];
		if (isfinite(k->hi)) {
			snprintf(x, sizeof(x), "%.17g", k->hi * 2 + 1);
			expect_number_refused(k, x);
		}
		if (isfinite(k->lo)) {
			snprintf(x, sizeof(x), "%.17g", k->lo - 1 - fabs(k->lo));
			expect_number_refused(k, x);
		}
		tested++;
	}
	ck_assert_int_ge(tested, 40);
}
END_TEST

/* Masses whose forces overflow are bad input, with the cause named. */
START_TEST(overflowing_masses_refused)
{
	const char *ov[1] = {"bodies.0.mass=1e300"};
	int err = load_str("bodies: [{name: a, model: plummer, count: 10}]\n", ov, 1, &g_sc);
	EXPECT_ERROR(err, "--set bodies.0.mass=1e300: bodies.0.mass", "softening", "overflow");
	err = load_str("bodies: [{name: a, model: plummer, count: 10, mass: 1e20}]\n"
		       "simulation: {softening: 1e-10}\n", NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:1:53: bodies.0.mass", "1e+20");
	err = load_str("bodies: [{name: a, model: plummer, count: 10, mass: 1e20}]\n", NULL, 0, &g_sc);
	ck_assert_msg(err == 0, "a large but finite mass was refused: %s", g_err);
	/* an entry's own smaller length counts (issue 30): 1e20 over (1e-10)^2 overflows */
	err = load_str("bodies: [{name: a, model: plummer, count: 10, mass: 1e20, softening: 1e-10}]\n",
		       NULL, 0, &g_sc);
	EXPECT_ERROR(err, "bodies.0.mass", "a softening of 1e-10 (the smallest length given)");
}
END_TEST

/* A check across keys, when the key it names was left at its default,
 * points at the key the user gave (here through --set), not at line 1. */
START_TEST(cross_key_errors_point_at_a_given_key)
{
	static const char *enc = "bodies:\n"
				 "  - {name: a, model: plummer, count: 100}\n"
				 "  - {name: b, model: plummer, count: 100}\n"
				 "encounter: {}\n";
	const char *ov1[1] = {"encounter.pericenter=300"};
	int err = load_str(enc, ov1, 1, &g_sc);
	const char *f1[] = {"--set encounter.pericenter=300: encounter.separation: expected a number >= "
			    "encounter.pericenter (300), got 20", NULL};
	expect_error(err, f1);
	ck_assert_msg(!strstr(g_err, "t.yaml:1:1"), "points at line 1: %s", g_err);
	const char *ov2[2] = {"camera.position=[0,0,0]", "camera.target=[0,0,0]"};
	err = load_str(enc, ov2, 2, &g_sc);
	const char *f2[] = {"--set camera.position=[0,0,0]: camera: expected a position away from the target",
			    NULL};
	expect_error(err, f2);
	/* in the file: the place of the key that was written */
	err = load_str("bodies:\n  - {name: a, model: plummer, count: 100}\n"
		       "  - {name: b, model: plummer, count: 100}\n"
		       "encounter:\n  pericenter: 300\n",
		       NULL, 0, &g_sc);
	const char *f3[] = {"t.yaml:5:15: encounter.separation: expected a number >= encounter.pericenter", NULL};
	expect_error(err, f3);
}
END_TEST

/* render.gpu_memory: sizes in bytes with K, M, G, T (1024-based) or auto;
 * anything else, or a budget where no chunks can be drawn, names the key
 * and its place. */
START_TEST(gpu_memory_key_takes_sizes_and_refuses_the_rest)
{
	static const char *film = "bodies: [{name: a, model: plummer}]\n"
				  "simulation: {solver: none}\n";
	static const struct {
		const char *v;
		double bytes;
	} good[] = {{"8G", 8589934592.0}, {"512M", 536870912.0}, {"1.5g", 1610612736.0},
		    {"16777216", 16777216.0}, {"2T", 2199023255552.0}, {"100000k", 102400000.0}};
	char text[256];
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(text, sizeof text, "%srender: {gpu_memory: %s}\n", film, good[i].v);
		int err = load_str(text, NULL, 0, &g_sc);
		ck_assert_msg(err == 0, "%s refused: %s", good[i].v, g_err);
		ck_assert_msg(!g_sc.render.gpu_memory_auto && g_sc.render.gpu_memory == good[i].bytes,
			      "%s: got %.17g", good[i].v, g_sc.render.gpu_memory);
	}
	ck_assert_int_eq(load_str(film, NULL, 0, &g_sc), 0);
	ck_assert(g_sc.render.gpu_memory_auto); /* the default */
	static const char *bad[] = {"8GB", "-1G", "G", "1.2.3G", "8 G", "1e9", "0x10", "15M", "auto8",
				    "[8G]", "2000T"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, "%srender: {gpu_memory: %s}\n", film, bad[i]);
		int err = load_str(text, NULL, 0, &g_sc);
		EXPECT_ERROR(err, "t.yaml:3:22:", "render.gpu_memory", "expected a size in bytes",
			     "or the word auto");
	}
	/* a budget with a simulation, or with what cannot be drawn in chunks */
	int err = load_str("bodies: [{name: a, model: plummer}]\nrender:\n  gpu_memory: 8G\n", NULL,
			   0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:3:15: render.gpu_memory", "simulation.solver: none",
		     "cannot run out of core");
	snprintf(text, sizeof text, "%srender: {gpu_memory: 8G, style: smooth, smoothing: adaptive}\n",
		 film);
	EXPECT_ERROR(load_str(text, NULL, 0, &g_sc), "t.yaml:3:22: render.gpu_memory",
		     "render.smoothing: adaptive");
	snprintf(text, sizeof text,
		 "%srender: {gpu_memory: 8G, diffuse: 0.3, diffuse_smoothing: adaptive}\n", film);
	EXPECT_ERROR(load_str(text, NULL, 0, &g_sc), "t.yaml:3:22: render.gpu_memory",
		     "diffuse_smoothing: adaptive");
	err = load_str("bodies: [{name: g, model: disk-galaxy, dust: {mass_fraction: 0.05}}]\n"
		       "simulation: {solver: none}\nrender: {gpu_memory: 8G}\n", NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:3:22: render.gpu_memory", "dust (bodies.0.dust)");
	/* auto stays allowed with everything (decided when the renderer is made) */
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {gpu_memory: auto, style: smooth, "
		       "smoothing: adaptive}\n", NULL, 0, &g_sc);
	ck_assert_msg(err == 0, "%s", g_err);
}
END_TEST

/* Colour keys (render.color_by, color_range, colormap_file, the young
 * stars): bad values name the key and its place. */
START_TEST(colour_keys_refuse_bad_input)
{
	int err = load_str("bodies: [{name: a, model: plummer}]\nrender:\n  color_range: [5, 1]\n",
			   NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:3:16:", "render.color_range", "lo < hi", "[5, 1]");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {color_range: fast}\n", NULL, 0,
		       &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:23:", "render.color_range", "[lo, hi] | auto", "'fast'");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {color_range: [1, 2, 3]}\n", NULL,
		       0, &g_sc);
	EXPECT_ERROR(err, "render.color_range", "a list of 2 numbers");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {mode: density, color_by: speed}\n",
		       NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:35:", "render.color_by", "mode components");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {color_by: velocity}\n", NULL, 0,
		       &g_sc);
	EXPECT_ERROR(err, "render.color_by", "component, los_velocity, speed");
	err = load_str("bodies: [{name: g, model: disk-galaxy, disk: {young_fraction: 1.5}}]\n", NULL,
		       0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:1:63:", "bodies.0.disk.young_fraction", "[0, 1]");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {colormap: cubehelx}\n", NULL, 0,
		       &g_sc);
	EXPECT_ERROR(err, "render.colormap", "did you mean 'cubehelix'?");
	err = load_str("bodies: [{name: a, model: plummer}]\nrender: {colormap_file: no-such.lut}\n",
		       NULL, 0, &g_sc);
	EXPECT_ERROR(err, "t.yaml:2:25:", "render.colormap_file", "cannot open", "no-such.lut");
}
END_TEST

/* Write a colour map file of ROWS rows "r 3 4" after one comment line, row
 * BAD_ROW (1-based; 0: none) replaced by TEXT. */
static void write_lut(const char *path, int bad_row, const char *text, int rows)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "# r g b\n");
	for (int r = 1; r <= rows; r++) {
		if (r == bad_row)
			fprintf(f, "%s\n", text);
		else
			fprintf(f, "%d %d %d\n", r % 256, 3, 4);
	}
	fclose(f);
}

/* A bad render.colormap_file: the message names FILE:LINE of the fault. */
START_TEST(bad_colormap_files_name_file_and_line)
{
	int err;
	char dir[] = "/tmp/nb_badlutXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	static const struct {
		int bad_row;           /* 1-based data row replaced by text, or 0 */
		const char *text;      /* the bad row */
		int rows;              /* rows written in all */
		int line;              /* line of the error (1 comment line first) */
		const char *frag;
	} cases[] = {
		{10, "0 0.5 1", 256, 11, "mixes integers"},
		{20, "0.1 0.2 0.3", 256, 21, "expected integers in [0, 255] like line 2, got decimals"},
		{30, "1 2", 256, 31, "expected 3 numbers"},
		{40, "1 2 3 4", 256, 41, "a 4th"},
		{50, "1 2 x", 256, 51, "expected a number, got 'x'"},
		{60, "1 256 3", 256, 61, "an integer in [0, 255], got 256"},
		{70, "nan 1 2", 256, 71, "expected a number, got 'nan'"},
		{0, NULL, 255, 256, "expected 256 rows \"r g b\", got 255"},
		{0, NULL, 257, 258, "expected 256 rows, got more"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[300], text[400];
		snprintf(path, sizeof path, "%s/bad%zu.lut", dir, i);
		write_lut(path, cases[i].bad_row, cases[i].text, cases[i].rows);
		snprintf(text, sizeof text,
			 "bodies: [{name: a, model: plummer}]\nrender: {colormap_file: %s}\n", path);
		err = load_str(text, NULL, 0, &g_sc);
		char where[340];
		snprintf(where, sizeof where, "%s:%d: ", path, cases[i].line);
		EXPECT_ERROR(err, where, cases[i].frag);
		unlink(path);
	}
	/* decimals first: then an integer row is the odd one */
	char path[300], text[400];
	snprintf(path, sizeof path, "%s/dec.lut", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int r = 0; r < 256; r++)
		fprintf(f, r == 5 ? "1 1 1\n" : "0.5 1.5e-1 1.0\n");
	fclose(f);
	snprintf(text, sizeof text, "bodies: [{name: a, model: plummer}]\nrender: {colormap_file: %s}\n",
		 path);
	err = load_str(text, NULL, 0, &g_sc);
	char where[340];
	snprintf(where, sizeof where, "%s:6: ", path);
	EXPECT_ERROR(err, where, "expected decimals in [0, 1] like line 1, got integers");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* ---- keys that do nothing (scene/scene_warn.c) ---- */

/* The load succeeded with exactly one warning line, naming PLACE and KEY
 * and holding FRAG. */
static void expect_warning(int err, const char *place, const char *key, const char *frag)
{
	ck_assert_msg(err == 0, "expected a load, got %d; stderr: %s", err, g_err);
	ck_assert_msg(count_lines_with(g_err, "warning:") == 1, "expected one warning, got: %s", g_err);
	char head[300];
	snprintf(head, sizeof head, "%s: %s: ", place, key);
	ck_assert_msg(strstr(g_err, head), "warning lacks '%s': %s", head, g_err);
	ck_assert_msg(strstr(g_err, frag), "warning lacks '%s': %s", frag, g_err);
}

/* Each row of the table fires on a --set of its key where the scene's
 * choice leaves it unused, and names the choice. The cases are written
 * from the renderer's and the engine's code, not from the table. */
START_TEST(keys_that_do_nothing_warn)
{
	static const struct {
		const char *set, *extra, *key, *frag;
	} cases[] = {
		{"render.smoothing=adaptive", NULL, "render.smoothing", "with render.style: stars"},
		{"render.kernel=gaussian", NULL, "render.kernel", "with render.style: stars"},
		{"render.neighbours=16", NULL, "render.neighbours", "no neighbour count is used"},
		{"render.adaptive_every=2", NULL, "render.adaptive_every", "no adaptive smoothing"},
		{"render.h_cap=3", NULL, "render.h_cap", "no adaptive smoothing"},
		{"render.psf_fwhm=2", "render.style=smooth", "render.psf_fwhm", "with render.style: smooth"},
		{"render.diffuse=0.5", "render.style=smooth", "render.diffuse", "with render.style: smooth"},
		{"render.diffuse_smoothing=adaptive", NULL, "render.diffuse_smoothing", "render.diffuse is 0"},
		{"render.dust_slabs=8", NULL, "render.dust_slabs", "no body entry has dust"},
		{"render.motion_blur.shutter=0.3", NULL, "render.motion_blur.shutter", "samples is 1"},
		{"render.psf_wing_beta=2", NULL, "render.psf_wing_beta", "render.psf_wing is 0"},
		{"render.glow_threshold=2", "render.glow=0", "render.glow_threshold", "render.glow is 0"},
		{"render.white=4", "render.tonemap=asinh", "render.white", "with render.tonemap: asinh"},
		{"render.auto_percentile=90", "render.exposure=2", "render.auto_percentile", "fixed"},
		{"render.auto_smoothing=3", "render.exposure=2", "render.auto_smoothing", "fixed"},
		{"render.color_range=[0,1]", NULL, "render.color_range", "with render.color_by: component"},
		{"simulation.theta=0.3", NULL, "simulation.theta", "with simulation.solver: direct"},
		{"simulation.multipoles=1", NULL, "simulation.multipoles", "with simulation.solver: direct"},
		{"simulation.opening=com", NULL, "simulation.opening", "with simulation.solver: direct"},
		{"simulation.reorder=migrate", "simulation.solver=none", "simulation.reorder",
		 "with simulation.solver: none"},
		{"simulation.direct_kernel=gather", "simulation.solver=barnes-hut",
		 "simulation.direct_kernel", "with simulation.solver: barnes-hut"},
		{"simulation.timesteps=individual", "simulation.solver=none", "simulation.timesteps",
		 "film mode takes no steps"},
		{"simulation.eta=0.1", NULL, "simulation.eta", "with simulation.timesteps: shared"},
		{"simulation.blocks_per_frame=2", NULL, "simulation.blocks_per_frame", "shared"},
		{"simulation.max_level=4", NULL, "simulation.max_level", "shared"},
		{"simulation.coarsen_margin=2", NULL, "simulation.coarsen_margin", "shared"},
		{"camera.fisheye_aperture=200", NULL, "camera.fisheye_aperture",
		 "with camera.projection: perspective"},
		{"camera.dome_tilt=20", NULL, "camera.dome_tilt", "with camera.projection: perspective"},
		{"camera.stereo.convergence=5", NULL, "camera.stereo.convergence",
		 "with camera.stereo.mode: none"},
		{"camera.stereo.eye_separation=0.1", NULL, "camera.stereo.eye_separation",
		 "with camera.stereo.mode: none"},
		{"camera.frame_fraction=0.9", NULL, "camera.frame_fraction", "with camera.frame: keys"},
		{"camera.frame_margin=0.1", NULL, "camera.frame_margin", "with camera.frame: keys"},
		{"camera.frame_range=[1,4]", NULL, "camera.frame_range", "with camera.frame: keys"},
		{"output.crf=18", NULL, "output.crf", "output.video is \"\""},
		{"output.codec=h265", NULL, "output.codec", "output.video is \"\""},
		{"output.preset=slow", NULL, "output.preset", "output.video is \"\""},
		{"output.png_depth=16", NULL, "output.png_depth", "output.png_dir is \"\""},
		{"output.snapshots.every=3", NULL, "output.snapshots.every", "snapshots.dir is \"\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *ov[2] = {cases[i].set, cases[i].extra};
		int err = load_str(MIN, ov, cases[i].extra ? 2 : 1, &g_sc);
		char place[200];
		snprintf(place, sizeof place, "--set %s", cases[i].set);
		expect_warning(err, place, cases[i].key, cases[i].frag);
		ck_assert_msg(strstr(g_err, "does nothing"), "%s: %s", cases[i].set, g_err);
	}
	/* the same keys where their choice uses them: silent */
	static const char *const used[][2] = {
		{"render.smoothing=adaptive", "render.style=smooth"},
		{"render.neighbours=16", "render.diffuse=0.5"},
		{"render.kernel=gaussian", "render.style=smooth"},
		{"render.psf_fwhm=2", "render.style=stars"},
		{"simulation.theta=0.3", "simulation.solver=barnes-hut"},
		{"camera.stereo.convergence=5", "camera.stereo.mode=side-by-side"},
		{"render.white=4", "render.tonemap=filmic"},
		{"output.crf=18", "output.video=/tmp/x.mp4"},
	};
	for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
		int err = load_str(MIN, used[i], 2, &g_sc);
		ck_assert_msg(err == 0 && !strstr(g_err, "warning"), "%s with %s: %d %s", used[i][0],
			      used[i][1], err, g_err);
	}
}
END_TEST

/* A key from the file is placed at its line:col; a fisheye or
 * equirectangular camera ignores fov, a key's too; keys at or after
 * output.frames warn, the others do not; defaults never warn. */
START_TEST(unused_keys_name_file_line_col)
{
	const char *text = "bodies: [{name: a, model: plummer}]\n"
			   "render: {width: 64, height: 64, style: smooth, psf_fwhm: 2}\n";
	expect_warning(load_str(text, NULL, 0, &g_sc), "t.yaml:2:58", "render.psf_fwhm", "style: smooth");
	text = "bodies: [{name: a, model: plummer}]\n"
	       "render: {width: 64, height: 64}\n"
	       "camera:\n"
	       "  projection: fisheye\n"
	       "  keys:\n"
	       "    - {frame: 0, fov: 30}\n";
	expect_warning(load_str(text, NULL, 0, &g_sc), "t.yaml:6:23", "camera.keys.0.fov",
		       "with camera.projection: fisheye");
	text = "bodies: [{name: a, model: plummer}]\n"
	       "output: {frames: 10}\n"
	       "camera:\n"
	       "  keys:\n"
	       "    - {frame: 0}\n"
	       "    - {frame: 9}\n"
	       "    - {frame: 10}\n";
	expect_warning(load_str(text, NULL, 0, &g_sc), "t.yaml:7:15", "camera.keys.2.frame",
		       "frame 10 is after the last frame, 9 (output.frames: 10)");
	const char *ov[] = {"output.frames=20"};
	ck_assert_int_eq(load_str(text, ov, 1, &g_sc), 0);
	ck_assert_msg(!strstr(g_err, "warning"), "20 frames reach frame 10: %s", g_err);
	ck_assert_int_eq(load_str(MIN, NULL, 0, &g_sc), 0);
	ck_assert_msg(!strstr(g_err, "warning"), "defaults warned: %s", g_err);
}
END_TEST

/* Under --strict (scene_strict_set) the first warning is the one error
 * message and the load fails with NB_EINPUT. */
START_TEST(strict_makes_unused_keys_errors)
{
	const char *ov[] = {"render.kernel=gaussian", "simulation.theta=0.3"};
	scene_strict_set(1);
	int err = load_str(MIN, ov, 2, &g_sc);
	scene_strict_set(0);
	EXPECT_ERROR(err, "--set render.kernel=gaussian: render.kernel: does nothing",
		     "(an error under --strict)");
	ck_assert_msg(!strstr(g_err, "warning"), "%s", g_err);
	ck_assert_int_eq(load_str(MIN, ov, 2, &g_sc), 0);
	ck_assert_int_eq(count_lines_with(g_err, "warning:"), 2);
}
END_TEST

/* The shipped scenes set no key that does nothing. */
START_TEST(shipped_scenes_set_no_unused_key)
{
	static const char *const files[] = {
		"scenes/antennae.yaml", "scenes/dome-collision.yaml", "scenes/dusty-disk.yaml",
		"scenes/galaxy-collision.yaml", "scenes/isolated-disk.yaml", "scenes/mice.yaml",
		"scenes/minor-merger.yaml", "scenes/plummer.yaml", "scenes/two-clusters.yaml",
		"scenes/vr-collision.yaml",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		int err = load_file(files[i], NULL, 0, &g_sc);
		ck_assert_msg(err == 0, "%s: %s", files[i], g_err);
		ck_assert_msg(!strstr(g_err, "warning"), "%s: %s", files[i], g_err);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("scene_errors");
	TCase *tc = tcase_create("scene_errors");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, bad_files_name_place_and_key);
	tcase_add_test(tc, missing_file_is_input_error);
	tcase_add_test(tc, bad_values_name_line_col_and_path);
	tcase_add_test(tc, long_strings_are_errors_not_truncated);
	tcase_add_test(tc, junk_never_crashes);
	tcase_add_test(tc, overrides_report_bad_values);
	tcase_add_test(tc, yaml_extras_refused_with_place);
	tcase_add_test(tc, every_numeric_key_refuses_bad_numbers);
	tcase_add_test(tc, overflowing_masses_refused);
	tcase_add_test(tc, cross_key_errors_point_at_a_given_key);
	tcase_add_test(tc, colour_keys_refuse_bad_input);
	tcase_add_test(tc, bad_colormap_files_name_file_and_line);
	tcase_add_test(tc, gpu_memory_key_takes_sizes_and_refuses_the_rest);
	tcase_add_test(tc, keys_that_do_nothing_warn);
	tcase_add_test(tc, unused_keys_name_file_line_col);
	tcase_add_test(tc, strict_makes_unused_keys_errors);
	tcase_add_test(tc, shipped_scenes_set_no_unused_key);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
