/* estimate.h - the expected wall time of a run on this machine, per stage,
 * from rates this machine has measured (issue 29).
 *
 * The pieces: app/calibrate.c measures the CPU's rates (a few seconds of
 * real work in memory: initial conditions, forces, a splat and tone map),
 * app/calibrate_gpu.c a GPU's (--calibrate, app/calibrate_fresh.c);
 * app/rates.c keeps the CPU's in a cache file keyed by machine and reads an
 * injected rates file (NB_RATES_FILE), app/estimate_gpu.c the GPU's per
 * device name (NB_GPU_RATES_FILE); app/estimate_levels.c gives individual
 * time steps' levels; app/estimate.c turns a scene and the rates into
 * seconds per stage and prints them (--dry-run, the batch dry run, the
 * start-of-run line).
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
	/* Optional in an injected file (absent: the defaults named). */
	double tree_disk;   /* per modelled tree interaction among disk-galaxy bodies
			     * (denser centres: more per modelled one); absent: tree_inter */
	double tree_build;  /* per body per tree build alone (individual steps: each
			     * tick builds or refits); absent: 0 */
	double frame_track; /* per body per frame: camera.follow light and camera.frame
			     * auto's statistics of the drawn light; absent: 0 */
	double tree_group;  /* the share of a body's tree walk that its group's walk
			     * costs whatever the group's active bodies (individual
			     * steps: a tick's walks cost the groups with an active
			     * body); absent: 0 */
	double create_fixed; /* per disk-galaxy entry: the model's set-up (potential
			      * tables, the distribution function) whatever its bodies,
			      * from two sizes; absent: 0 (all of it in create_disk) */
	double tree_small;  /* the tree's rate at APP_CAL_SMALL bodies over its rate at
			     * APP_CAL_N (the interaction model drifts with n); below
			     * APP_CAL_N the rates scale as a power of n through both;
			     * absent: 1 */
	double frame_h;     /* per body per computation of the adaptive smoothing lengths
			     * (render_needs_h: every render.adaptive_every frames);
			     * absent: 0 */
	/* Not a machine's rate, never cached: set for the scene at hand. */
	double soft_x;      /* the CPU tree's step with the scene's softening (the spline
			     * kernel or lengths per body) over the same step with one
			     * Plummer length (app_estimate_soft_x); 0: 1 */
};

/* The calibration's sphere: the tree's rates hold at APP_CAL_N bodies; its
 * first APP_CAL_SMALL bodies give tree_small. */
#define APP_CAL_N 20000
#define APP_CAL_SMALL 5000

/* A GPU's rates (app/calibrate_gpu.c), one set per device name, cached
 * beside the CPU's ("rates-gpu-NAME") or injected (NB_GPU_RATES_FILE).
 * Seconds. A step or a frame: fixed + per unit x units. */
struct app_gpu_rates {
	char device[128];   /* gpu_device_info's name */
	double measured_at; /* time(NULL) of the measurement */
	double calib_s;     /* the GPU calibration's wall time */
	int source;         /* enum app_rates_source */
	char path[512];     /* the file read or written */
	double tree_step;   /* per tree step: the part that does not scale */
	double tree_inter;  /* per modelled tree interaction (app_estimate_interactions) */
	double direct_pair; /* per pair of the direct sum (each pair once) */
	double frame_fixed; /* per frame: launches, copies to the host */
	double frame_px;    /* per pixel per frame */
	double frame_body;  /* per body per frame */
};

/* Individual time steps (simulation.timesteps: individual): the levels the
 * bodies start on (sim/timestep.c's rule, sim_ts_want_level, from the
 * accelerations of a subsample of the initial state: real forces from
 * every body), and what a block step of dt_max costs with them. */
struct app_levels {
	long hist[SIM_TS_LEVELS]; /* sampled bodies per level */
	size_t sampled;           /* bodies sampled */
	double evals_per_body;    /* force evaluations per body per block: mean 2^L */
	long ticks;               /* ticks per block: 2^(finest level occupied) */
	double group_walks;       /* per block, the sum over ticks of the share of walk
				   * groups with an active body (APP_TREE_GROUP bodies
				   * each, the active ones placed at random) */
};

/* The CPU and GPU trees' walk groups: bodies that share one walk and one
 * interaction list (sim/tree.c TREE_GROUP_SIZE, sim/cuda/tree.cu). */
#define APP_TREE_GROUP 32

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
 * sim_scene_body_count). Deterministic; no I/O. Shared steps (an
 * individual-step scene as if shared). */
void app_estimate_compute(const struct scene *sc, long n, const struct app_rates *r,
			  struct app_estimate *e);
/* The same with a GPU's rates for the simulation and the frames (g NULL:
 * the CPU runs them; creation, encoding, PNG and files stay the CPU's) and
 * the levels of individual time steps (lv NULL: as shared steps). On the
 * GPU the encoder (a host thread) overlaps the GPU's work: the total
 * takes the larger of the two. */
void app_estimate_model(const struct scene *sc, long n, const struct app_rates *r,
			const struct app_gpu_rates *g, const struct app_levels *lv,
			struct app_estimate *e);

/* The levels of sc's individual time steps (struct app_levels): builds the
 * initial state and computes the forces of at most ~20,000 bodies of it
 * (the scene's solver). 0, or NB_EINPUT / NB_ERUNTIME (not logged: the
 * dry run says there is no estimate). */
int app_estimate_levels(const struct scene *sc, long n, struct app_levels *lv);

/* *x: struct app_rates' soft_x for sc on the CPU: 1 unless its solver
 * is barnes-hut with the spline kernel or lengths per body; then the
 * ratio of two timed tree evaluations of its initial state (its softening
 * against one Plummer length; a subsample's walks), in [0.5, 50]. Builds
 * the initial state (as --dry-run's levels do). 0, or NB_EINPUT /
 * NB_ERUNTIME (not logged; *x stays 1). */
int app_estimate_soft_x(const struct scene *sc, double *x);

/* This machine's rates: NB_RATES_FILE when set (read, never written), else
 * the cache (app_rates_cache_path) when its key matches this machine, else
 * app_calibrate, cached (written whole: temp + rename) when the cache
 * directory can be made and written - else measured, not cached, and
 * info->why says so. 0, NB_EINPUT (NB_RATES_FILE unreadable or malformed,
 * logged) or NB_ERUNTIME (the calibration failed, logged). */
int app_rates_get(struct app_rates *r, struct app_rates_info *info);

/* Measure them now (app_calibrate) and cache them, whatever the cache
 * holds (--calibrate). 0 or NB_ERUNTIME (logged). */
int app_rates_measure(struct app_rates *r, struct app_rates_info *info);

/* The cached rates only (no calibration): 0 when the cache holds this
 * machine's (or NB_RATES_FILE is set and good), else -1. */
int app_rates_peek(struct app_rates *r, struct app_rates_info *info);

/* $XDG_CACHE_HOME/nbody-render/rates (or $HOME/.cache/...) into buf;
 * 0, or -1 when neither variable is set. */
int app_rates_cache_path(char *buf, size_t len);

/* The rates files' reader: each "name: value" line of f (comments and
 * blank lines skipped) whose name is rows[i].name stores its number
 * (>= 0) at base + rows[i].off and sets bit i of *seen; any other name
 * goes to other(ctx, name, value): 0 taken, 1 ignored, -1 bad. 0, or -1
 * with why naming the line of a bad value. app_rates_string copies a value
 * without its newline. */
struct app_rates_field {
	const char *name;
	size_t off;
};
int app_rates_parse(FILE *f, const struct app_rates_field *rows, size_t n, void *base,
		    unsigned *seen, int (*other)(void *ctx, const char *name, const char *val),
		    void *ctx, char *why, size_t whylen);
void app_rates_string(const char *val, char *dst, size_t len);

/* Write path whole: emit(f, arg) into PATH.tmp.PID, then renamed over
 * path (its directory made). 0, or -1 with why. */
int app_rates_save(const char *path, int (*emit)(FILE *f, const void *arg), const void *arg,
		   char *why, size_t whylen);

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

/* Measure the GPU's rates (app/calibrate_gpu.c): tree steps at 2^17 and
 * 2^20 bodies, a direct sum at 2^16, frames at two sizes and body counts,
 * through gpu_sim_* and gpu_render_*; ~5-10 s on an H200, most of it the
 * 2^20 bodies' initial conditions on the host. Writes nothing. 0, or
 * NB_ERUNTIME (no GPU, logged). */
int app_calibrate_gpu(struct app_gpu_rates *g);

/* The GPU's cached rates: NB_GPU_RATES_FILE when set (its device: line
 * must name device), else $CACHE/nbody-render/rates-gpu-NAME when its key
 * is this device and program version. 0, -1 (none for this device; why
 * says so), or NB_EINPUT (NB_GPU_RATES_FILE unreadable or malformed; why
 * names the line; not logged). */
int app_gpu_rates_peek(const char *device, struct app_gpu_rates *g, char *why, size_t whylen);
/* Measure (app_calibrate_gpu) and cache them. 0, or NB_ERUNTIME (logged). */
int app_gpu_rates_measure(struct app_gpu_rates *g);
/* The GPU rates as text, and back (0, or -1 with why naming the line). */
int app_gpu_rates_write(FILE *f, const struct app_gpu_rates *g);
int app_gpu_rates_read(FILE *f, struct app_gpu_rates *g, char *key, size_t keylen, char *why,
		       size_t whylen);
/* The device the run would use: 1 and its name when the backend resolves
 * to cuda (backend_cli or the scene's; a GPU is there), else 0.
 * NB_ESTIMATE_GPU=NAME (tests) says a GPU named NAME is there. */
int app_estimate_gpu_device(const struct scene *sc, int backend_cli, char *name, size_t len);

/* --calibrate: measure this machine's CPU rates again (the cache
 * replaced), and the GPU's when the scene would run on one; prints what it
 * measured on f. 0, or the calibration's error (logged). */
int app_calibrate_fresh(const struct scene *sc, int backend_cli, FILE *f);
/* main's --calibrate and --dry-run: app_calibrate_fresh when calibrate,
 * then app_dry_run when dry_run (and the calibration succeeded). */
int app_calibrate_dry_run(const struct scene *sc, int backend_cli, int calibrate, int dry_run,
			  FILE *f);

/* "rates measured 3 min ago on this machine (calibration, 2.1 s)" */
void app_rates_describe(const struct app_rates_info *info, char *buf, size_t len);

/* --dry-run's estimate section: one line per stage, the total, and where
 * the rates came from, as YAML comments on f. backend_cli: --backend or -1;
 * a GPU run uses the GPU's cached rates (or says it has none and uses the
 * CPU's); individual time steps: app_estimate_levels. 0, the error of
 * app_rates_get, or NB_EINPUT for a malformed NB_GPU_RATES_FILE (logged). */
int app_estimate_print(const struct scene *sc, long n, int backend_cli, FILE *f);

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
