/* fuzz_files.h - helpers of the harnesses that drive the whole loader
 * through a scene file (fuzz_snapload.c, fuzz_snapseries.c,
 * fuzz_restart.c): a private directory under $TMPDIR (default /tmp), one
 * per process, that holds the files of one input and is emptied after it;
 * an input cut into files at a separator line; the options of a
 * model: snapshot entry drawn from a few bytes; and the check of a state
 * the loader made. */
#ifndef NB_FUZZ_FILES_H
#define NB_FUZZ_FILES_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/sim.h"
#include "fuzz_util.h"

/* An input holds up to FUZZ_MAX_PARTS files, separated by this line. */
#define FUZZ_SEP "\n=====\n"
#define FUZZ_SEP_LEN 7
#define FUZZ_MAX_PARTS 3
/* Option bytes at the start of an input (missing ones read as 0). */
#define FUZZ_NOPT 8

struct fuzz_parts {
	const uint8_t *p[FUZZ_MAX_PARTS];
	size_t n[FUZZ_MAX_PARTS];
	int count;
};

/* Cut data into files at FUZZ_SEP; the last file takes the rest. */
static inline void fuzz_split(const uint8_t *d, size_t size, struct fuzz_parts *out)
{
	out->count = 0;
	size_t start = 0;
	for (size_t i = 0; out->count < FUZZ_MAX_PARTS - 1 && i + FUZZ_SEP_LEN <= size; i++) {
		if (memcmp(d + i, FUZZ_SEP, FUZZ_SEP_LEN) != 0)
			continue;
		out->p[out->count] = d + start;
		out->n[out->count++] = i - start;
		start = i + FUZZ_SEP_LEN;
		i = start - 1;
	}
	out->p[out->count] = d + start;
	out->n[out->count++] = size - start;
}

static char fuzz_dir_name[256];

/* At exit: the directory, empty by then (each input removes its files). */
static inline void fuzz_dir_remove(void)
{
	if (fuzz_dir_name[0])
		rmdir(fuzz_dir_name);
}

/* The process's own directory (created once, removed at exit). */
static inline const char *fuzz_dir(const char *tag)
{
	char *dir = fuzz_dir_name;
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof fuzz_dir_name, "%s/nb-fuzz-%s-%d.XXXXXX", tmp && *tmp ? tmp : "/tmp", tag,
			 (int)getpid());
		if (!mkdtemp(dir))
			abort();
		atexit(fuzz_dir_remove);
	}
	return dir;
}

static inline void fuzz_path(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static inline void fuzz_write(const char *dir, const char *name, const uint8_t *d, size_t n)
{
	char path[600];
	fuzz_path(path, sizeof path, dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0)
		abort();
}

static inline void fuzz_unlink(const char *dir, const char *name)
{
	char path[600];
	fuzz_path(path, sizeof path, dir, name);
	unlink(path);
}

/* Append to a fixed buffer (the scene text). */
static inline void fuzz_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + at, cap - at, fmt, ap);
	va_end(ap);
}

/* The scene keys of a model: snapshot entry, drawn from option bytes o:
 *   o[0] bits 2-3 format (auto, gadget1, gadget2, gadget-hdf5; raw binary
 *        files never get gadget-hdf5), bits 4-5 comoving (unset, true,
 *        false), bit 6 placement (position, velocity, inclination), bit 7
 *        units keys;
 *   o[1] bits 0-5 types not loaded (load: false), bits 6-7 region (none,
 *        sphere, box);
 *   o[2] subsample; o[3] region centre and radius or size; o[4], o[5]
 *        units.length_cm, mass_g, velocity_cm_s. */
static inline void fuzz_snap_keys(char *buf, size_t cap, const uint8_t *o, int hdf5,
				  int placement)
{
	static const char *const fmt[4] = {"auto", "gadget1", "gadget2", "gadget-hdf5"};
	static const double sub[8] = {1, 0.5, 0.25, 0.1, 1e-6, 0.999, 0.75, 1};
	static const double ctr[8] = {0, 1, -1, 1e3, 1e15, -1e15, 0.5, 10};
	static const double rad[8] = {1, 1e-9, 0.5, 10, 1e3, 1e15, 2, 100};
	static const double unit[8] = {3.085678e21, 1, 1e-30, 1e60, 1.989e43, 1e5, 2.5e-3, 1e30};
	static const char *const tn[6] = {"gas", "halo", "disk", "bulge", "stars", "bh"};
	int f = (o[0] >> 2) & 3;
	if (!hdf5 && f == 3)
		f = 0;
	fuzz_cat(buf, cap, "    format: %s\n", fmt[f]);
	int cm = (o[0] >> 4) & 3;
	if (cm == 1 || cm == 2)
		fuzz_cat(buf, cap, "    comoving: %s\n", cm == 1 ? "true" : "false");
	if (placement && (o[0] & 64))
		fuzz_cat(buf, cap,
			 "    position: [%.17g, 0, 1]\n    velocity: [0, %.17g, 0]\n"
			 "    inclination: 30\n",
			 ctr[o[3] & 7], ctr[(o[3] >> 3) & 7]);
	if (o[0] & 128)
		fuzz_cat(buf, cap,
			 "    units: {length_cm: %.17g, mass_g: %.17g, velocity_cm_s: %.17g}\n",
			 unit[o[4] & 7], unit[(o[4] >> 3) & 7], unit[o[5] & 7]);
	if (o[1] & 63) {
		fuzz_cat(buf, cap, "    types:\n");
		for (int t = 0; t < 6; t++)
			if (o[1] & (1 << t))
				fuzz_cat(buf, cap, "      %s: {load: false}\n", tn[t]);
	}
	const int reg = (o[1] >> 6) & 3;
	const double c = ctr[o[3] & 7], r = rad[(o[3] >> 4) & 7];
	if (reg == 1)
		fuzz_cat(buf, cap, "    region: {shape: sphere, center: [%.17g, %.17g, 0], radius: %.17g}\n",
			 c, -c, r);
	else if (reg == 2)
		fuzz_cat(buf, cap, "    region: {shape: box, center: [0, %.17g, %.17g], size: [%.17g, %.17g, 1]}\n",
			 c, c, r, 2 * r);
	if (sub[o[2] & 7] != 1)
		fuzz_cat(buf, cap, "    subsample: %.17g\n", sub[o[2] & 7]);
}

/* The most bodies N files could hold: a binary file needs 12 bytes of
 * positions a particle; a recipe file holds at most FUZZ_H5_ROWS rows
 * of each of the 6 types. */
static inline size_t fuzz_most_bodies(const struct fuzz_parts *pt, int hdf5, size_t h5_rows)
{
	size_t most = 0;
	for (int i = 0; i < pt->count; i++)
		most += hdf5 ? 6 * h5_rows : pt->n[i] / 12;
	return most;
}

/* A state the loader made: no more than most bodies, each finite in
 * internal units with mass >= 0, components consistent. */
static inline void fuzz_check_state(const struct sim_state *st, size_t most)
{
	if (st->n > most)
		fuzz_fail("more bodies than the files could hold", (int)st->n);
	if (st->n && (!st->pos || !st->vel || !st->mass || !st->comp || !st->comps || st->ncomp < 1))
		fuzz_fail("a state with bodies but no arrays or components", st->ncomp);
	if (!isfinite(st->time))
		fuzz_fail("the state's time is not finite", 0);
	for (size_t i = 0; i < st->n; i++) {
		if (!(isfinite(st->mass[i]) && st->mass[i] >= 0))
			fuzz_fail("a body's mass is not finite and >= 0", (int)i);
		for (int a = 0; a < 3; a++)
			if (!isfinite(st->pos[3 * i + a]) || !isfinite(st->vel[3 * i + a]))
				fuzz_fail("a body's position or velocity is not finite", (int)i);
		if (st->comp[i] >= st->ncomp)
			fuzz_fail("a body's component is out of range", (int)i);
	}
	for (int c = 0; c < st->ncomp && st->n; c++)
		if (st->comps[c].first > st->n || st->comps[c].count > st->n - st->comps[c].first)
			fuzz_fail("a component's range is outside the state", c);
}

static inline void fuzz_rc(const char *what, int rc)
{
	if (rc != 0 && rc != NB_EINPUT)
		fuzz_fail(what, rc);
}
/* The scene of TEXT (as fuzz.yaml in dir), loaded as the program loads
 * one; *err 0 or NB_EINPUT (anything else breaks the contract). The caller
 * frees the scene (plain free), whatever *err. */
static inline struct scene *fuzz_scene_load(const char *text, const char *dir, int *err)
{
	struct scene *sc = calloc(1, sizeof *sc);
	if (!sc)
		abort();
	*err = scene_load_string(text, "fuzz.yaml", dir, NULL, 0, sc);
	fuzz_rc("scene_load_string returned neither 0 nor NB_EINPUT", *err);
	return sc;
}

#endif
