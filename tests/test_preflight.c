/* test_preflight.c - the program refuses at start, in the real run and in
 * --dry-run alike, what it cannot do: more memory than the machine has,
 * output paths it cannot create, the CUDA backend without a GPU; and a run
 * whose energy is grossly not conserved stops with an error.
 *
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_preflight &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_preflight
 * (run from the repository root: it reads tests/data/). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "../sim/sim.h"

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

/* The softening crossing time eps / v_rms by hand (v_rms about the mean
 * velocity, each body once): speeds 1, 1, 3, 3 about a bulk motion of 10
 * give v_rms = sqrt(5). A shared step of more than two of them is warned
 * about (with the figure and the dt that keeps it near one), in the run
 * and in --dry-run; plummer-small.yaml's own step (0.053 of one) is not. */
START_TEST(step_longer_than_crossing_time_is_warned)
{
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, 4, 1), 0);
	const double v[4][3] = {{11, 0, 0}, {9, 0, 0}, {10, 3, 0}, {10, -3, 0}};
	for (int i = 0; i < 4; i++)
		for (int a = 0; a < 3; a++)
			st.vel[3 * i + a] = v[i][a];
	double vr = 0;
	ck_assert_double_eq_tol(sim_diag_crossing_time(&st, 0.1, &vr), 0.1 / sqrt(5.0), 1e-15);
	ck_assert_double_eq_tol(vr, sqrt(5.0), 1e-14);
	sim_state_free(&st);

	/* not --quiet, which keeps warnings back */
	const char *base = "tests/data/plummer-small.yaml --set output.frames=2 --set render.width=32 "
			   "--set render.height=32 --set output.video= --set output.png_dir= "
			   "--set output.stats= --set output.initial_state= --set output.final_state= "
			   "--set bodies.0.count=100 --set simulation.max_energy_error=0";
	char args[1024];
	ck_assert_int_eq(run(base), 0);
	ck_assert_msg(!strstr(g_err, "crossing"), "a short step warned: %s", g_err);
	/* 0.1 / 0.0189: about 5 crossing times */
	snprintf(args, sizeof args, "%s --set simulation.dt=0.1", base);
	ck_assert_int_eq(run(args), 0);
	ck_assert_msg(strstr(g_err, "simulation.dt 0.1 is") && strstr(g_err, "softening crossing times") &&
			      strstr(g_err, "a dt of at most"),
		      "no warning: %s", g_err);
	/* individual steps pick their own: no warning */
	snprintf(args, sizeof args, "%s --set simulation.dt=0.1 --set simulation.timesteps=individual",
		 base);
	ck_assert_int_eq(run(args), 0);
	ck_assert_msg(!strstr(g_err, "crossing"), "individual steps warned: %s", g_err);
	/* --dry-run says it for every scene */
	snprintf(args, sizeof args, "%s --set simulation.dt=0.1 --dry-run >'%s/dry.txt'", base, g_dir);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' %s", nb_bin(), args);
	ck_assert_int_eq(system(cmd), 0);
	char path[128], buf[8192];
	snprintf(path, sizeof path, "%s/dry.txt", g_dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_msg(strstr(buf, "# time step: dt 0.1 is") && strstr(buf, "the energy will drift"),
		      "dry run: %s", buf);
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
	tcase_add_test(tc, step_longer_than_crossing_time_is_warned);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
