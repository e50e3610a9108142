/* test_preflight.c - the program refuses at start, in the real run and in
 * --dry-run alike, what it cannot do: more memory than the machine has,
 * output paths it cannot create, the CUDA backend without a GPU; and a run
 * whose energy is grossly not conserved stops with an error.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_preflight &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_preflight
 * (run from the repository root: it reads tests/data/). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

static char g_dir[64];
static char g_err[16384];

static void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-preflight-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
}

/* Run the program with ARGS (already quoted), stderr into g_err; exit status. */
static int run(const char *args)
{
	char cmd[4096], errf[128];
	snprintf(errf, sizeof errf, "%s/stderr.txt", g_dir);
	snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", nb_bin(), args, errf);
	int ws = system(cmd);
	FILE *f = fopen(errf, "r");
	size_t n = f ? fread(g_err, 1, sizeof g_err - 1, f) : 0;
	g_err[n] = '\0';
	if (f)
		fclose(f);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Small, writes nothing unless told. */
#define QUIET_OUTPUTS                                                                     \
	"--quiet --set output.frames=2 --set render.width=32 --set render.height=32 "     \
	"--set output.video= --set output.png_dir= --set output.stats= "                  \
	"--set output.initial_state= --set output.final_state= --set bodies.0.count=100"

/* 4e9 bodies need ~350 GiB, more than any machine these tests run on. */
START_TEST(memory_beyond_the_machine_refused_in_both_modes)
{
	char scene[128], args[1024];
	snprintf(scene, sizeof scene, "%s/big.yaml", g_dir);
	write_file(scene, "simulation: {backend: cpu}\n"
			  "bodies:\n"
			  "  - {name: a, model: plummer, count: 1000000000}\n"
			  "  - {name: b, model: plummer, count: 1000000000}\n"
			  "  - {name: c, model: plummer, count: 1000000000}\n"
			  "  - {name: d, model: plummer, count: 1000000000}\n"
			  "output: {frames: 2}\n");
	for (int dry = 0; dry < 2; dry++) {
		snprintf(args, sizeof args, "'%s' --quiet%s", scene, dry ? " --dry-run" : "");
		int rc = run(args);
		ck_assert_msg(rc == 2, "%s: exit %d, stderr: %s", args, rc, g_err);
		ck_assert_msg(strstr(g_err, ":3:38: bodies.0.count") && strstr(g_err, "GiB of host memory") &&
				      strstr(g_err, "available (MemAvailable"),
			      "%s: message lacks place or figures: %s", args, g_err);
		/* the same through --set names the override */
		snprintf(args, sizeof args, "'%s' --quiet --set bodies.1.count=1e9 --set bodies.0.count=5%s",
			 scene, dry ? " --dry-run" : "");
		rc = run(args);
		ck_assert_msg(rc == 2, "%s: exit %d, stderr: %s", args, rc, g_err);
		ck_assert_msg(strstr(g_err, "--set bodies.1.count=1e9: bodies.1.count:") &&
				      strstr(g_err, "available"),
			      "%s: %s", args, g_err);
	}
}
END_TEST

/* What the run refuses at start, the dry run refuses the same way. */
START_TEST(dry_run_refuses_what_the_run_refuses)
{
	char file[128], args[2048];
	static char msg_run[sizeof g_err];
	snprintf(file, sizeof file, "%s/afile", g_dir);
	write_file(file, "x\n");
	const char *cases[][2] = {
		{"output.video=%s/x.mp4", "output.video: cannot create"},
		{"output.stats=%s/s.csv", "output.stats: cannot create"},
		{"output.png_dir=%s", "output.png_dir: expected a directory"},
		{"output.final_state=%s/sub/f.csv", "output.final_state: cannot create"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char set[512];
		snprintf(set, sizeof set, cases[i][0], file);
		for (int dry = 0; dry < 2; dry++) {
			snprintf(args, sizeof args, "tests/data/plummer-small.yaml " QUIET_OUTPUTS " --set '%s'%s",
				 set, dry ? " --dry-run" : "");
			int rc = run(args);
			ck_assert_msg(rc == 2, "%s: exit %d, stderr: %s", args, rc, g_err);
			char want[700];
			snprintf(want, sizeof want, "--set %s: %s", set, cases[i][1]);
			ck_assert_msg(strstr(g_err, want), "%s: message lacks '%s': %s", args, want, g_err);
			if (!dry)
				snprintf(msg_run, sizeof msg_run, "%s", g_err);
			else
				ck_assert_str_eq(g_err, msg_run);
		}
	}
	/* simulation.backend: cuda: both modes agree (refused without a GPU) */
	int rc[2];
	for (int dry = 0; dry < 2; dry++) {
		snprintf(args, sizeof args, "tests/data/plummer-small.yaml " QUIET_OUTPUTS
			 " --set simulation.backend=cuda%s", dry ? " --dry-run" : "");
		rc[dry] = run(args);
		ck_assert_msg(rc[dry] == 0 || (rc[dry] == 2 && strstr(g_err, "--set simulation.backend=cuda: "
										"simulation.backend: cuda was requested")),
			      "%s: exit %d: %s", args, rc[dry], g_err);
	}
	ck_assert_int_eq(rc[0], rc[1]);
}
END_TEST

/* A huge step with tiny softening: the bodies stay finite but the energy
 * is not conserved at all; the run stops with exit 1 naming the step, the
 * fastest body and the cure, unless the check is off. */
START_TEST(energy_blowup_stops_the_run)
{
	const char *args = "tests/data/plummer-small.yaml " QUIET_OUTPUTS
			   " --set bodies.0.count=200 --set output.frames=4"
			   " --set simulation.dt=0.5 --set simulation.softening=1e-4";
	int rc = run(args);
	ck_assert_msg(rc == 1, "exit %d: %s", rc, g_err);
	ck_assert_msg(strstr(g_err, "step 10 ") && strstr(g_err, "simulation.max_energy_error = 1") &&
			      strstr(g_err, "fastest body") && strstr(g_err, "simulation.dt smaller"),
		      "message lacks step, threshold, body or hint: %s", g_err);
	char off[1024];
	snprintf(off, sizeof off, "%s --set simulation.max_energy_error=0", args);
	rc = run(off);
	ck_assert_msg(rc == 0, "with the check off: exit %d: %s", rc, g_err);
	/* a sane step passes */
	rc = run("tests/data/plummer-small.yaml " QUIET_OUTPUTS " --set output.frames=3");
	ck_assert_msg(rc == 0, "a sane run: exit %d: %s", rc, g_err);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("preflight");
	TCase *tc = tcase_create("preflight");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, memory_beyond_the_machine_refused_in_both_modes);
	tcase_add_test(tc, dry_run_refuses_what_the_run_refuses);
	tcase_add_test(tc, energy_blowup_stops_the_run);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
