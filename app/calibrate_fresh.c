/* calibrate_fresh.c - --calibrate (estimate.h, app_calibrate_fresh): the
 * rates measured again whatever the caches hold, the CPU's always (the
 * creation of the bodies and the encoder run there on every backend) and
 * the GPU's when the scene would run on one; what was measured printed.
 *
 * Try: nbody-render scenes/plummer.yaml --calibrate */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "estimate.h"

static void print_cpu(const struct app_rates *r, const struct app_rates_info *info, FILE *f)
{
	char line[1600];
	app_rates_describe(info, line, sizeof line);
	fprintf(f, "CPU: %s\n", line);
	fprintf(f, "  tree %.3g s per interaction (disk galaxies %.3g, build %.3g per body), direct "
		"%.3g s per pair; at %d bodies the tree x %.2f\n", r->tree_inter, r->tree_disk,
		r->tree_build, r->direct_pair, APP_CAL_SMALL, r->tree_small);
	fprintf(f, "  frame %.3g s per pixel, %.3g per body (+%.3g following the light); creation "
		"%.3g s per body (disk galaxies %.3g, + %.3g s a galaxy)\n", r->frame_px, r->frame_body,
		r->frame_track, r->create_body, r->create_disk, r->create_fixed);
}

static void print_gpu(const struct app_gpu_rates *g, FILE *f)
{
	fprintf(f, "GPU %s: measured now (%.1f s)%s%s\n", g->device, g->calib_s,
		g->path[0] ? "; cached in " : "; not cached", g->path);
	fprintf(f, "  tree step %.3g ms + %.3g ns per interaction, direct %.3g ns per pair\n",
		g->tree_step * 1e3, g->tree_inter * 1e9, g->direct_pair * 1e9);
	fprintf(f, "  frame %.3g ms + %.3g ns per pixel + %.3g ns per body\n", g->frame_fixed * 1e3,
		g->frame_px * 1e9, g->frame_body * 1e9);
}

int app_calibrate_fresh(const struct scene *sc, int backend_cli, FILE *f)
{
	struct app_rates r;
	struct app_rates_info info;
	char device[128];
	if (getenv("NB_RATES_FILE") && getenv("NB_RATES_FILE")[0])
		log_warn("--calibrate: NB_RATES_FILE is set: the estimate reads it, not what is "
			 "measured now");
	int rc = app_rates_measure(&r, &info);
	if (rc)
		return rc;
	print_cpu(&r, &info, f);
	if (!app_estimate_gpu_device(sc, backend_cli, device, sizeof device) ||
	    getenv("NB_ESTIMATE_GPU")) {
		fprintf(f, "GPU: none for this run (the CPU backend, or no GPU here)\n");
		return 0;
	}
	struct app_gpu_rates g;
	rc = app_gpu_rates_measure(&g);
	if (!rc)
		print_gpu(&g, f);
	return rc;
}

int app_calibrate_dry_run(const struct scene *sc, int backend_cli, int calibrate, int dry_run,
			  FILE *f)
{
	int rc = calibrate ? app_calibrate_fresh(sc, backend_cli, f) : 0;
	return rc == 0 && dry_run ? app_dry_run(sc, backend_cli, f) : rc;
}
