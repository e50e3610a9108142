/* test_snapshot_util.h - what tests/test_snapshot.c and
 * tests/test_gpu_snapshot.c share: a temporary directory with a small
 * galactic scene, the program run in it, and the final state CSV read
 * back. Static functions: each test program includes it once. */
#ifndef NB_TEST_SNAPSHOT_UTIL_H
#define NB_TEST_SNAPSHOT_UTIL_H

#include <errno.h>
#include <hdf5.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/sim.h"
#include "check_main.h"

static char g_dir[256];
static char g_bin[PATH_MAX];
static const char *g_file = "scene.yaml"; /* the scene run() runs */
static const char *g_backend = "cpu";     /* its --backend */

/* Galactic units, a small disk galaxy (halo, disk, bulge: PartType1-3)
 * and a Plummer cluster (PartType4): 460 bodies, serial direct sums. */
static const char g_scene[] =
	"units: galactic\n"
	"seed: 3\n"
	"simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 3}\n"
	"bodies:\n"
	"  - {name: g, model: disk-galaxy, disk: {count: 150}, bulge: {count: 40}, halo: {count: 200}}\n"
	"  - {name: c, model: plummer, count: 70, mass: 1e9, scale: 1, position: [30, 0, 0], velocity: [0, 50, 0]}\n"
	"camera: {keys: [{frame: 0, position: [0, -150, 40], target: [0, 0, 0]}]}\n"
	"render: {width: 64, height: 48}\n"
	"output: {frames: 8}\n";

static inline void setup(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-snapshot-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	ck_assert_ptr_nonnull(realpath(nb_bin(), g_bin));
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/scene.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(g_scene, f);
	fclose(f);
}

static inline void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Start the program in g_dir on g_file --quiet --backend g_backend with
 * the arguments given (first and ap, NULL-terminated: "K=V" become --set
 * K=V, "--x" pass as they are, and the argument after --restart too);
 * stderr to run.log, stdout to run.out. Its pid. */
static inline pid_t spawn_v(const char *first, va_list ap)
{
	const char *argv[64] = {g_bin, g_file, "--quiet", "--backend", g_backend};
	int n = 5;
	for (const char *a = first; a && n < 60; a = va_arg(ap, const char *)) {
		if (strncmp(a, "--", 2) == 0) {
			argv[n++] = a;
			if (strcmp(a, "--restart") == 0)
				argv[n++] = va_arg(ap, const char *);
		} else {
			argv[n++] = "--set", argv[n++] = a;
		}
	}
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(g_dir) != 0)
			_exit(99);
		int fd = open("run.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fo = open("run.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0 || fo < 0 || dup2(fo, 1) < 0)
			_exit(99);
		execv(g_bin, (char *const *)argv);
		_exit(98);
	}
	return pid;
}

static inline pid_t spawn(const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	pid_t pid = spawn_v(first, ap);
	va_end(ap);
	return pid;
}

/* The exit status of pid (it must exit, not die of a signal). */
static inline int wait_exit(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* spawn and wait: the exit status. */
static inline int run(const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	pid_t pid = spawn_v(first, ap);
	va_end(ap);
	return wait_exit(pid);
}

static inline const char *slurp(const char *name)
{
	static char buf[16384];
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (f) {
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

static inline int exists(const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	return access(path, F_OK) == 0;
}

/* Files in g_dir/SUB whose name contains PART. */
static inline int count(const char *sub, const char *part)
{
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof cmd, "ls -A '%s/%s' 2>/dev/null | grep -c -- '%s'", g_dir, sub, part);
	FILE *p = popen(cmd, "r");
	int c = 0;
	if (p) {
		if (fscanf(p, "%d", &c) != 1)
			c = 0;
		pclose(p);
	}
	return c;
}

/* The final state CSV of g_dir/NAME: the total mass (M_sun), and body
 * ID's position (kpc) and velocity (km/s). The count of bodies. */
static inline int csv_body(const char *name, unsigned id, double *mass, double x[3], double v[3])
{
	char path[PATH_MAX], line[1024];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	*mass = 0;
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
	while (fgets(line, sizeof line, f)) {
		unsigned i;
		char comp[128];
		double m, p[3], w[3];
		ck_assert_int_eq(sscanf(line, "%u,%127[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf", &i, comp, &m,
					&p[0], &p[1], &p[2], &w[0], &w[1], &w[2]),
				 9);
		*mass += m;
		if (i == id)
			for (int d = 0; d < 3; d++)
				x[d] = p[d], v[d] = w[d];
		n++;
	}
	fclose(f);
	return n;
}

/* Every body of the state CSV g_dir/NAME: xv[6 id + 0..5] = x, y, z,
 * vx, vy, vz (ids below max). The count of bodies. */
static inline int csv_all(const char *name, double *xv, int max)
{
	char path[PATH_MAX], line[1024];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
	while (fgets(line, sizeof line, f)) {
		unsigned i;
		char comp[128];
		double m, w[6];
		ck_assert_int_eq(sscanf(line, "%u,%127[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf", &i, comp, &m,
					&w[0], &w[1], &w[2], &w[3], &w[4], &w[5]),
				 9);
		ck_assert_int_lt((int)i, max);
		for (int d = 0; d < 6; d++)
			xv[6 * i + d] = w[d];
		n++;
	}
	fclose(f);
	return n;
}

/* Dataset PATH of g_dir/FILE as doubles (malloc'd), *n values. */
static inline double *h5_doubles(const char *file, const char *path, size_t *n)
{
	char full[PATH_MAX];
	snprintf(full, sizeof full, "%s/%s", g_dir, file);
	hid_t f = H5Fopen(full, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
	ck_assert_msg(d >= 0, "%s: no dataset %s", file, path);
	hid_t sp = H5Dget_space(d);
	*n = (size_t)H5Sget_simple_extent_npoints(sp);
	double *v = malloc((*n + 1) * sizeof *v);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return v;
}

/* ---- Python (Debian's /usr/bin/python3, or NB_PYTHON) ---- */

static inline const char *python(void)
{
	const char *s = getenv("NB_PYTHON");
	if (s && *s)
		return s;
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

static inline int has_module(const char *m)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "%s -c 'import %s' >/dev/null 2>&1", python(), m);
	return system(cmd) == 0;
}

/* Run SCRIPT (Python source) in g_dir; its stdout into out (cap bytes).
 * The exit status. */
static inline int py(const char *script, char *out, size_t cap)
{
	char path[PATH_MAX], cmd[2 * PATH_MAX];
	snprintf(path, sizeof path, "%s/check.py", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cd '%s' && %s check.py 2>py.log", g_dir, python());
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	return WEXITSTATUS(pclose(p));
}

#endif
