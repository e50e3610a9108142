/* estimate_gpu.c - a GPU's rates (estimate.h, struct app_gpu_rates): one
 * small text file per device name beside the CPU's rates
 * ($CACHE/nbody-render/rates-gpu-NAME, its key the device and the program
 * version), written whole; or injected (NB_GPU_RATES_FILE, tests and other
 * machines). Measured only when asked (--calibrate, app/calibrate_fresh.c):
 * a dry run without them says so and uses the CPU's.
 *
 * Try: nbody-render scenes/galaxy-collision.yaml --calibrate;
 *      cat ~/.cache/nbody-render/rates-gpu-* */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "estimate.h"

#ifndef NB_VERSION
#define NB_VERSION "unknown"
#endif

#define GRATE(x) {#x, offsetof(struct app_gpu_rates, x)}
static const struct app_rates_field gpu_rows[] = {
	GRATE(measured_at), GRATE(calib_s),  GRATE(tree_step),  GRATE(tree_inter),
	GRATE(direct_pair), GRATE(frame_fixed), GRATE(frame_px), GRATE(frame_body),
};
#define NGPU (sizeof gpu_rows / sizeof gpu_rows[0])

int app_gpu_rates_write(FILE *f, const struct app_gpu_rates *g)
{
	fprintf(f, "# nbody-render's rates on this GPU (app/estimate_gpu.c): seconds.\n"
		   "# Delete this file or run --calibrate to measure again.\n"
		   "key: %s | nbody-render %s\ndevice: %s\n", g->device, NB_VERSION, g->device);
	for (size_t i = 0; i < NGPU; i++)
		fprintf(f, "%s: %.6g\n", gpu_rows[i].name,
			*(const double *)((const char *)g + gpu_rows[i].off));
	return ferror(f) ? -1 : 0;
}

struct gpu_read {
	struct app_gpu_rates *g;
	char *key;
	size_t keylen;
};

/* key: and device: lines; 0, or 1 (not ours). */
static int gpu_other(void *ctx, const char *name, const char *val)
{
	struct gpu_read *c = ctx;
	if (!strcmp(name, "key"))
		app_rates_string(val, c->key, c->keylen);
	else if (!strcmp(name, "device"))
		app_rates_string(val, c->g->device, sizeof c->g->device);
	else
		return 1;
	return 0;
}

int app_gpu_rates_read(FILE *f, struct app_gpu_rates *g, char *key, size_t keylen, char *why,
		       size_t whylen)
{
	unsigned seen;
	struct gpu_read c = {g, key, keylen};
	memset(g, 0, sizeof *g);
	key[0] = 0;
	if (app_rates_parse(f, gpu_rows, NGPU, g, &seen, gpu_other, &c, why, whylen))
		return -1;
	for (size_t i = 0; i < NGPU; i++)
		if (!(seen & 1u << i)) {
			snprintf(why, whylen, "%s: missing", gpu_rows[i].name);
			return -1;
		}
	if (!g->device[0]) {
		snprintf(why, whylen, "device: missing");
		return -1;
	}
	return 0;
}

/* $CACHE/nbody-render/rates-gpu-NAME, NAME's characters other than
 * letters and digits as '-'. 0, or -1 without a cache directory. */
static int gpu_cache_path(const char *device, char *buf, size_t len)
{
	char dir[400], name[100];
	if (app_rates_cache_path(dir, sizeof dir))
		return -1;
	*strrchr(dir, '/') = 0;
	size_t k = 0;
	for (const char *p = device; *p && k + 1 < sizeof name; p++)
		name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9') ? *p : '-';
	name[k] = 0;
	snprintf(buf, len, "%s/rates-gpu-%s", dir, name);
	return 0;
}

int app_gpu_rates_peek(const char *device, struct app_gpu_rates *g, char *why, size_t whylen)
{
	char path[512], key[512], want[512];
	const char *inj = getenv("NB_GPU_RATES_FILE");
	int injected = inj && inj[0];
	if (injected)
		snprintf(path, sizeof path, "%s", inj);
	else if (gpu_cache_path(device, path, sizeof path)) {
		snprintf(why, whylen, "neither XDG_CACHE_HOME nor HOME is set");
		return -1;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, errno == ENOENT && !injected ?
			 "not measured yet" : strerror(errno));
		return injected ? NB_EINPUT : -1;
	}
	int rc = app_gpu_rates_read(f, g, key, sizeof key, why, whylen);
	fclose(f);
	if (rc && injected)
		return NB_EINPUT; /* an injected file must be whole, as NB_RATES_FILE */
	snprintf(want, sizeof want, "%s | nbody-render %s", device, NB_VERSION);
	if (!rc && strcmp(g->device, device)) {
		snprintf(why, whylen, "%s holds %s's", path, g->device);
		rc = -1;
	} else if (!rc && !injected && strcmp(key, want)) {
		snprintf(why, whylen, "%s: measured by another program version", path);
		rc = -1;
	}
	g->source = injected ? APP_RATES_FILE : APP_RATES_CACHED;
	snprintf(g->path, sizeof g->path, "%s", path);
	return rc;
}

static int emit_gpu(FILE *f, const void *arg)
{
	return app_gpu_rates_write(f, arg);
}

int app_gpu_rates_measure(struct app_gpu_rates *g)
{
	char why[1280];
	memset(g, 0, sizeof *g);
	int rc = app_calibrate_gpu(g);
	if (rc)
		return rc;
	g->measured_at = (double)time(NULL);
	g->source = APP_RATES_MEASURED;
	if (gpu_cache_path(g->device, g->path, sizeof g->path) ||
	    app_rates_save(g->path, emit_gpu, g, why, sizeof why)) {
		log_warn("the GPU's rates are measured but not cached: %s",
			 g->path[0] ? why : "neither XDG_CACHE_HOME nor HOME is set");
		g->path[0] = 0;
	}
	return 0;
}
