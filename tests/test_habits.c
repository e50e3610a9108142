/* test_habits.c - options users bring from ffmpeg and other programs
 * (app/habits.c): each refused one exits 2 before any work, naming the
 * exact --set that does what it did; the aliases (--frames, --fps) act as
 * their --set. Runs the program (NB_BIN) with --dry-run only.
 *
 *   make CUDA=0 BUILD=/tmp/b /tmp/b/nbody-render /tmp/b/tests/test_habits
 *   NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_habits   (from the repository root) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check_main.h"

static char g_out[16384], g_err[8192];

/* Run the program on scenes/plummer.yaml with ARGS and --dry-run; stdout
 * in g_out, stderr in g_err; the exit status. */
static int run(const char *args)
{
	char cmd[1024], of[] = "/tmp/nb_habits_outXXXXXX", ef[] = "/tmp/nb_habits_errXXXXXX";
	int fo = mkstemp(of), fe = mkstemp(ef);
	ck_assert(fo >= 0 && fe >= 0);
	close(fo);
	close(fe);
	snprintf(cmd, sizeof cmd, "'%s' scenes/plummer.yaml %s --dry-run >'%s' 2>'%s'", nb_bin(),
		 args, of, ef);
	int ws = system(cmd);
	char *bufs[2] = {g_out, g_err};
	const char *names[2] = {of, ef};
	size_t lens[2] = {sizeof g_out, sizeof g_err};
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(names[i], "rb");
		ck_assert_ptr_nonnull(f);
		size_t n = fread(bufs[i], 1, lens[i] - 1, f);
		bufs[i][n] = '\0';
		fclose(f);
		remove(names[i]);
	}
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

START_TEST(each_refused_habit_names_its_set)
{
	static const struct {
		const char *args, *hint;
	} cases[] = {
		{"-o out.mp4", "unknown option '-o': use --set output.video=out.mp4"},
		{"--output=clip.webm", "unknown option '--output': use --set output.video=clip.webm"},
		{"-o frames", "use --set output.png_dir=frames"},
		{"-o still.jpg", "use --set output.preview=still.jpg"},
		{"-r 24", "'-r' (as in ffmpeg): use --set output.fps=24"},
		{"-framerate 25", "use --set output.fps=25"},
		{"-s 1920x1080", "use --set render.width=1920 --set render.height=1080"},
		{"--size 640x480", "use --set render.width=640 --set render.height=480"},
		{"-s big", "use --set render.width=W --set render.height=H"},
		{"-frames:v 10", "'-frames:v' (as in ffmpeg): use --set output.frames=10"},
		{"-vframes 12", "use --set output.frames=12"},
		{"-t 4", "use --set output.frames=N, N = 4 x output.fps (120 at the default 30 fps)"},
		{"-crf 18", "use --set output.crf=18"},
		{"-preset slow", "use --set output.preset=slow"},
		{"-c:v h265", "use --set output.codec=h265"},
		{"--seed 7", "use --set seed=7"},
		{"-y", "not needed"},
		{"--render.width=640", "unknown option '--render.width=640': use --set render.width=640"},
		{"--bogus", "unknown option '--bogus' (see --help)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = run(cases[i].args);
		ck_assert_msg(rc == 2, "%s: exit %d, expected 2; stderr: %s", cases[i].args, rc, g_err);
		ck_assert_msg(strstr(g_err, cases[i].hint), "%s: stderr lacks '%s': %s", cases[i].args,
			      cases[i].hint, g_err);
		ck_assert_msg(g_out[0] == '\0', "%s: did work (stdout: %.200s)", cases[i].args, g_out);
	}
}
END_TEST

/* --frames N and --fps N are --set output.frames=N / output.fps=N: the
 * resolved scene says so, in command-line order with the --set options. */
START_TEST(aliases_act_as_their_set)
{
	ck_assert_int_eq(run("--frames 7"), 0);
	ck_assert_msg(strstr(g_out, "\n  frames: 7\n"), "frames not 7: %.3000s", g_out);
	ck_assert_int_eq(run("--frames=9 --fps 12"), 0);
	ck_assert_msg(strstr(g_out, "\n  frames: 9\n") && strstr(g_out, "\n  fps: 12\n"),
		      "frames 9, fps 12 not in: %.3000s", g_out);
	ck_assert_int_eq(run("--frames 7 --set output.frames=5"), 0); /* the later one wins */
	ck_assert_msg(strstr(g_out, "\n  frames: 5\n"), "frames not 5: %.3000s", g_out);
	ck_assert_int_eq(run("--set output.frames=5 --frames 8"), 0);
	ck_assert_msg(strstr(g_out, "\n  frames: 8\n"), "frames not 8: %.3000s", g_out);
	/* a bad value is refused as the --set would be, naming the alias */
	ck_assert_int_eq(run("--frames abc"), 2);
	ck_assert_msg(strstr(g_err, "--frames abc: output.frames=abc: output.frames:"),
		      "message: %s", g_err);
	ck_assert_int_eq(run("--fps"), 2);
	ck_assert_msg(strstr(g_err, "--fps needs a value: --fps N is --set output.fps=N"), "message: %s",
		      g_err);
}
END_TEST

static Suite *habits_suite(void)
{
	Suite *s = suite_create("habits");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, each_refused_habit_names_its_set);
	tcase_add_test(tc, aliases_act_as_their_set);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(habits_suite)
