/* rates.c - this machine's rates (estimate.h): read from NB_RATES_FILE, or
 * from the cache when its key is this machine's, or measured
 * (app/calibrate.c) and cached. The cache is one small text file of
 * "name: value" lines, written whole (a temporary file renamed over it), so
 * a reader never sees half of it; when its directory cannot be made or
 * written the rates are used and not cached.
 *
 * Try: XDG_CACHE_HOME=/tmp/c nbody-render scenes/plummer.yaml --dry-run;
 *      cat /tmp/c/nbody-render/rates */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <omp.h>

#include "../output/output.h"
#include "app.h"
#include "estimate.h"

#ifndef NB_VERSION
#define NB_VERSION "unknown"
#endif

/* The rates' names in the file, in struct order; the optional ones last
 * (an injected file written before they were measured may lack them:
 * defaults_of fills them). */
#define RATE(x) {#x, offsetof(struct app_rates, x)}
static const struct app_rates_field rate_rows[] = {
	RATE(create_body), RATE(create_disk), RATE(direct_pair), RATE(tree_inter),
	RATE(frame_px),    RATE(frame_body),  RATE(encode_px),   RATE(png_px),
	RATE(file_byte),   RATE(tree_disk),   RATE(tree_build),  RATE(frame_track),
	RATE(tree_small),  RATE(tree_group),  RATE(create_fixed), RATE(frame_h),
};
#define NRATES (sizeof rate_rows / sizeof rate_rows[0])
#define NREQUIRED 9 /* create_body .. file_byte */

/* The optional rates a file did not give (seen: bit i for row i). */
static void defaults_of(struct app_rates *r, unsigned seen)
{
	if (!(seen & 1u << 9))
		r->tree_disk = r->tree_inter;
	if (!(seen & 1u << 10))
		r->tree_build = 0;
	if (!(seen & 1u << 11))
		r->frame_track = 0;
	if (!(seen & 1u << 12))
		r->tree_small = 1;
	if (!(seen & 1u << 13))
		r->tree_group = 0;
	if (!(seen & 1u << 14))
		r->create_fixed = 0;
	if (!(seen & 1u << 15))
		r->frame_h = 0;
}

int app_rates_cache_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && x[0] == '/')
		snprintf(buf, len, "%s/nbody-render/rates", x);
	else if (h && h[0])
		snprintf(buf, len, "%s/.cache/nbody-render/rates", h);
	else
		return -1;
	return 0;
}

void app_rates_key(char *buf, size_t len)
{
	char model[256] = "unknown CPU", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && c) {
			snprintf(model, sizeof model, "%s", c + 1 + (c[1] == ' '));
			model[strcspn(model, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	snprintf(buf, len, "%s | %d threads | cpu | nbody-render %s", model, omp_get_max_threads(),
		 NB_VERSION);
}

int app_rates_write(FILE *f, const struct app_rates *r, const struct app_rates_info *info,
		    const char *key)
{
	fprintf(f, "# nbody-render's rates on this machine (app/rates.c): seconds per unit of "
		   "work.\n# Delete this file to measure again.\nkey: %s\nmeasured: %.0f\n"
		   "calibration_s: %.3f\n", key, info->measured_at, info->calib_s);
	for (size_t i = 0; i < NRATES; i++)
		fprintf(f, "%s: %.6g\n", rate_rows[i].name,
			*(const double *)((const char *)r + rate_rows[i].off));
	return ferror(f) ? -1 : 0;
}

/* A number >= 0 into *v: 0, or -1. */
static int number(const char *val, double *v)
{
	char *end;
	*v = strtod(val, &end);
	return end != val && (*end == 0 || *end == '\n') && *v >= 0 && *v < 1e30 ? 0 : -1;
}

int app_rates_parse(FILE *f, const struct app_rates_field *rows, size_t n, void *base,
		    unsigned *seen, int (*other)(void *ctx, const char *name, const char *val),
		    void *ctx, char *why, size_t whylen)
{
	char line[1024];
	int ln = 0;
	*seen = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		char *c = strchr(line, ':');
		if (line[0] == '#' || line[0] == '\n' || !c)
			continue;
		*c = 0;
		const char *val = c + 1 + (c[1] == ' ');
		int rc = 1;
		for (size_t i = 0; rc == 1 && i < n; i++)
			if (!strcmp(line, rows[i].name)) {
				rc = number(val, (double *)((char *)base + rows[i].off));
				*seen |= rc == 0 ? 1u << i : 0;
			}
		if (rc == 1)
			rc = other(ctx, line, val);
		if (rc < 0) {
			snprintf(why, whylen, "line %d: %s: expected a number >= 0", ln, line);
			return -1;
		}
	}
	return 0;
}

void app_rates_string(const char *val, char *dst, size_t len)
{
	snprintf(dst, len, "%s", val);
	dst[strcspn(dst, "\n")] = 0;
}

struct cpu_read {
	struct app_rates_info *info;
	char *key;
	size_t keylen;
};

/* The CPU file's lines that are not rates: 0, 1 (not ours), -1 bad. */
static int cpu_other(void *ctx, const char *name, const char *val)
{
	struct cpu_read *c = ctx;
	if (!strcmp(name, "key")) {
		app_rates_string(val, c->key, c->keylen);
		return 0;
	}
	if (!strcmp(name, "measured"))
		return number(val, &c->info->measured_at);
	if (!strcmp(name, "calibration_s"))
		return number(val, &c->info->calib_s);
	return 1;
}

int app_rates_read(FILE *f, struct app_rates *r, struct app_rates_info *info, char *key,
		   size_t keylen, char *why, size_t whylen)
{
	unsigned seen;
	struct cpu_read c = {info, key, keylen};
	key[0] = 0;
	if (app_rates_parse(f, rate_rows, NRATES, r, &seen, cpu_other, &c, why, whylen))
		return -1;
	for (size_t i = 0; i < NREQUIRED; i++)
		if (!(seen & 1u << i)) {
			snprintf(why, whylen, "%s: missing", rate_rows[i].name);
			return -1;
		}
	defaults_of(r, seen);
	return 0;
}

/* Read path into r; 0, or -1 with why. With want_key, the file's key must
 * be it. */
static int read_file(const char *path, const char *want_key, struct app_rates *r,
		     struct app_rates_info *info, char *why, size_t whylen)
{
	char key[512];
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return -1;
	}
	int rc = app_rates_read(f, r, info, key, sizeof key, why, whylen);
	fclose(f);
	if (rc == 0 && want_key && strcmp(key, want_key)) {
		snprintf(why, whylen, "measured on another machine or version");
		rc = -1;
	}
	return rc;
}

int app_rates_peek(struct app_rates *r, struct app_rates_info *info)
{
	char key[512], why[1280];
	memset(info, 0, sizeof *info);
	const char *inj = getenv("NB_RATES_FILE");
	if (inj && inj[0]) {
		info->source = APP_RATES_FILE;
		snprintf(info->path, sizeof info->path, "%s", inj);
		return read_file(inj, NULL, r, info, why, sizeof why);
	}
	if (app_rates_cache_path(info->path, sizeof info->path))
		return -1;
	info->source = APP_RATES_CACHED;
	app_rates_key(key, sizeof key);
	return read_file(info->path, key, r, info, why, sizeof why);
}

int app_rates_save(const char *path, int (*emit)(FILE *f, const void *arg), const void *arg,
		   char *why, size_t whylen)
{
	char dir[512], tmp[600];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = 0;
	if (out_mkdirs(dir)) {
		snprintf(why, whylen, "cannot create %s", dir);
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	int bad = emit(f, arg);
	if (fclose(f) || bad || rename(tmp, path)) {
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

struct cpu_cache {
	const struct app_rates *r;
	const struct app_rates_info *info;
};

static int emit_cpu(FILE *f, const void *arg)
{
	const struct cpu_cache *c = arg;
	char key[512];
	app_rates_key(key, sizeof key);
	return app_rates_write(f, c->r, c->info, key);
}

int app_rates_measure(struct app_rates *r, struct app_rates_info *info)
{
	char path[512] = "";
	app_rates_cache_path(path, sizeof path);
	memset(info, 0, sizeof *info);
	info->source = APP_RATES_MEASURED;
	int rc = app_calibrate(r, &info->calib_s);
	if (rc)
		return rc;
	info->measured_at = (double)time(NULL);
	snprintf(info->path, sizeof info->path, "%s", path);
	if (!path[0])
		snprintf(info->why, sizeof info->why, "neither XDG_CACHE_HOME nor HOME is set");
	else
		info->cached = app_rates_save(path, emit_cpu, &(struct cpu_cache){r, info}, info->why,
					      sizeof info->why) == 0;
	return 0;
}

int app_rates_get(struct app_rates *r, struct app_rates_info *info)
{
	if (app_rates_peek(r, info) == 0)
		return 0;
	if (info->source == APP_RATES_FILE) {
		char why[1280];
		read_file(info->path, NULL, r, info, why, sizeof why);
		log_error("NB_RATES_FILE=%s: %s", info->path, why);
		return NB_EINPUT;
	}
	return app_rates_measure(r, info);
}
