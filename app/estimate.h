/* estimate.h - the expected wall time of a run on this machine, per stage,
 * from rates this machine has measured (issue 29).
 *
 * Three pieces: app/calibrate.c measures the rates (a few seconds of real
 * work in memory: initial conditions, forces, a splat and tone map);
 * app/rates.c keeps them in a cache file keyed by machine and reads an
 * injected rates file (NB_RATES_FILE); app/estimate.c turns a scene and the
 * rates into seconds per stage and prints them (--dry-run, the batch dry
 * run, the start-of-run line).
 *
 * Try: nbody-render scenes/plummer.yaml --dry-run | tail -12 */
#ifndef NB_APP_ESTIMATE_H
#define NB_APP_ESTIMATE_H

#include <stdio.h>

#include "../sim/sim.h"

/* Seconds per unit of work. Each is measured by app_calibrate except where
 * noted: those are reference rates measured on the development machine
 * (docs/BENCHMARKS.md, issue 29) scaled by this machine's splat speed
 * against that machine's, since measuring them would write files. */
struct app_rates {
	double create_body; /* per body of a sphere model (plummer, hernquist, ...) */
	double create_disk; /* per body of a disk galaxy (disk, bulge, halo) */
	double direct_pair; /* per pair, each pair once (simulation.solver: direct) */
	double tree_inter;  /* per modelled tree interaction (app_estimate_interactions) */
	double frame_px;    /* per pixel per frame: clear, diffuse layer, glow, tone map */
	double frame_body;  /* per body per frame: projection and splat */
	double encode_px;   /* reference: per pixel per frame of H.264 (writer thread) */
	double png_px;      /* reference: per pixel per frame of 16-bit PNG */
	double file_byte;   /* reference: per byte of a snapshot or FITS map */
};

/* The development machine's rates (docs/BENCHMARKS.md, issue 29): the
 * reference the encode, PNG and file rates scale from, and the start-of-run
 * line's rates before this machine has measured its own. */
extern const struct app_rates app_rates_reference;

/* Where the rates came from, for the line that says so. */
enum app_rates_source {
	APP_RATES_MEASURED, /* calibrated now (and cached when the cache is writable) */
	APP_RATES_CACHED,   /* read from this machine's cache */
	APP_RATES_FILE,     /* read from NB_RATES_FILE (tests, other machines) */
};

struct app_rates_info {
	enum app_rates_source source;
	double measured_at;  /* time(NULL) of the measurement; 0 unknown */
	double calib_s;      /* the calibration's own wall time */
	int cached;          /* MEASURED: 1 when the cache file was written */
	char path[512];      /* cache file or NB_RATES_FILE; "" none */
	char why[1280];      /* MEASURED and not cached: why not */
};

/* The stages of a run, in the order they are printed. */
enum app_stage {
	APP_STAGE_CREATE,   /* the bodies: initial conditions */
	APP_STAGE_SIM,      /* the steps' forces */
	APP_STAGE_RENDER,   /* splat, glow, tone map per frame */
	APP_STAGE_ENCODE,   /* output.video */
	APP_STAGE_PNG,      /* output.png_dir */
	APP_STAGE_FILES,    /* output.snapshots and output.fits_dir */
	APP_NSTAGES
};

struct app_estimate {
	double stage_s[APP_NSTAGES];
	double total_s;
};

/* Modelled force interactions per step of sc with n bodies: exact for the
 * direct sum (each pair once); for the tree ~ n * 60 log2(n) / theta^2. */
double app_estimate_interactions(const struct scene *sc, double n);

/* The model: sc's stages in seconds at rates r, n bodies (from
 * sim_scene_body_count). Deterministic; no I/O. */
void app_estimate_compute(const struct scene *sc, long n, const struct app_rates *r,
			  struct app_estimate *e);

/* This machine's rates: NB_RATES_FILE when set (read, never written), else
 * the cache (app_rates_cache_path) when its key matches this machine, else
 * app_calibrate, cached (written whole: temp + rename) when the cache
 * directory can be made and written - else measured, not cached, and
 * info->why says so. 0, NB_EINPUT (NB_RATES_FILE unreadable or malformed,
 * logged) or NB_ERUNTIME (the calibration failed, logged). */
int app_rates_get(struct app_rates *r, struct app_rates_info *info);

/* The cached rates only (no calibration): 0 when the cache holds this
 * machine's (or NB_RATES_FILE is set and good), else -1. */
int app_rates_peek(struct app_rates *r, struct app_rates_info *info);

/* $XDG_CACHE_HOME/nbody-render/rates (or $HOME/.cache/...) into buf;
 * 0, or -1 when neither variable is set. */
int app_rates_cache_path(char *buf, size_t len);

/* This machine's key: CPU model, threads, backend, program version. */
void app_rates_key(char *buf, size_t len);

/* Rates as the cache's text ("name: value" lines); read them back (0, or -1
 * on a missing or bad value, which names the line in why). */
int app_rates_write(FILE *f, const struct app_rates *r, const struct app_rates_info *info,
		    const char *key);
int app_rates_read(FILE *f, struct app_rates *r, struct app_rates_info *info, char *key,
		   size_t keylen, char *why, size_t whylen);

/* Measure the rates here: about 2-4 s on a 2-core machine; writes nothing.
 * 0 or NB_ERUNTIME (logged). */
int app_calibrate(struct app_rates *r, double *wall_s);

/* "rates measured 3 min ago on this machine (calibration, 2.1 s)" */
void app_rates_describe(const struct app_rates_info *info, char *buf, size_t len);

/* --dry-run's estimate section: one line per stage, the total, and where
 * the rates came from, as YAML comments on f. backend: the one that will
 * run (a GPU run is estimated at the CPU's rates and says so). 0, or the
 * error of app_rates_get (logged). */
int app_estimate_print(const struct scene *sc, long n, int gpu, FILE *f);

/* The start of a real run: when the cached (or injected) rates put the run
 * over APP_ESTIMATE_WARN_S, one info line ("expected about 12 min on this
 * machine; --dry-run for the stages"). Without cached rates it uses
 * app_rates_reference and says so (no calibration delays a run). Never
 * fails. */
#define APP_ESTIMATE_WARN_S 180.0
void app_estimate_warn(const struct scene *sc, int backend_cli);

/* A batch run's expected seconds (its scene loaded again with its
 * overrides): a run whose simulation another run of its group makes
 * (batch_group) costs its frames and outputs only. -1 when it does not
 * load. */
struct batch_run;
double app_estimate_batch_run(const struct batch_run *r, const struct app_rates *rates);
/* The batch dry run's closing lines: the total and where the rates came from. */
void app_estimate_batch_print(double total_s, const struct app_rates_info *info, FILE *f);

#endif
