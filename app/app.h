/* app.h - the program layer: command line, one render run, batches.
 *
 * Data flow of one run:
 *   app/main.c: command line -> scene_load (--set applied) -> app_preflight
 *     and the --restart snapshot's checks -> --dry-run: app_dry_run, stop;
 *     else app_run_restart
 *   app/run.c (app_run_views): the outputs check and directories -> the
 *     bodies (sim_ic_build, a filmed snapshot series, or the --restart
 *     snapshot's state) and the initial-state CSV -> the engine
 *     (engine/engine.h: CPU, GPU or MPI ranks) -> app_run_frames
 *   app/frames.c (app_run_frames), per frame: the engine's steps, the
 *     stats row and energy check, snapshots and FITS maps on the main
 *     thread; each view's renderer (app/renderer.h: render/ on the CPU,
 *     render/cuda/ on the GPU) queues the frame and pushes it to the
 *     view's writer thread (output/: MP4, PNG, preview)
 *   app/run.c again: the final-state CSV, then the resolved scene, last.
 * With several views of one simulation (app_run_views), everything after
 * the steps runs once per view; a batch (app/batch*.c) runs many scenes. */
#ifndef NB_APP_H
#define NB_APP_H

#include <stdio.h>

#include "../sim/sim.h"

/* What one run did (filled also on failure, as far as it got). */
struct app_result {
	int frames_done;      /* frames rendered and queued */
	int frames_total;
	long bodies;
	double wall_s;        /* whole run */
	double sim_s, render_s, encode_s; /* per stage (encode: writer thread busy time) */
	double png_s;         /* CPU-seconds of the PNG pool (0: no PNG frames) */
	char resolved_scene[SCENE_PATH_MAX]; /* path written, "" if none */
};

/* Run the whole scene: initial conditions, frames, outputs. backend_cli is
 * -1 (use the scene's) or an enum scene_backend. Progress goes to stderr
 * (a live line on a terminal, a plain line every few seconds otherwise,
 * nothing when quiet). On success the resolved scene is stored beside the
 * outputs (app_resolved_scene_path) - it is written last, so its presence
 * marks a complete run. Returns 0, NB_EINPUT, NB_ERUNTIME or NB_EINTR
 * (SIGINT/SIGTERM: the current frame is finished, the MP4 is finalised with
 * the frames so far, other partial outputs removed). */
int app_run(const struct scene *sc, int backend_cli, struct app_result *res);
/* app_run continued from snapshot RESTART (NULL: app_run): the scene's
 * bodies take the snapshot's state, and the run renders frames
 * snapshot frame + 1 .. output.frames - 1 (docs/snapshots.md). */
/* restart_frame: its frame, as sim_snap_restart_check found it (the
 * caller has checked the snapshot; it is not read again to check it). */
int app_run_restart(const struct scene *sc, int backend_cli, const char *restart,
		    int restart_frame, struct app_result *res);

/* One view of a shared simulation (app_run_views): its scene and outcome. */
struct app_view {
	const struct scene *sc; /* its camera, render and output keys are its own */
	/* views[0] only: a snapshot this program wrote to continue from
	 * (--restart; sim_snap_restart), NULL: start at frame 0 */
	const char *restart;
	int restart_frame;      /* with restart: its frame (sim_snap_restart_check) */
	/* views[0] only: simulate over the MPI ranks (dist/: every rank calls
	 * app_run_views alike; rank 0 writes every output, the others none) */
	int over_ranks;
	struct app_result res;  /* filled by app_run_views */
	int rc;                 /* this view's outcome: 0, NB_EINPUT, NB_ERUNTIME, NB_EINTR */
};

/* Simulate once, film several views: the bodies, simulation and frames of
 * views[0].sc, rendered and written through every view's own camera,
 * render and output keys (video, PNG frames, preview, statistics - the
 * same rows for every view -, state CSVs, resolved scene), each view's
 * directory as if it had run alone. The caller guarantees that the scenes
 * differ only in camera.*, render.* and output.* other than output.frames
 * (docs/batch.md, "Simulating once for several views"); output.frames is
 * checked here (NB_EINPUT for every view otherwise).
 * A view whose outputs fail (a directory it cannot create, a write error)
 * stops alone, its partial outputs removed,
 * and the others go on; a failure of the simulation itself fails every
 * view still running. app_run is the one-view case. Returns 0 when every
 * view succeeded, else the first failing view's rc; each view's own
 * outcome is in views[i].rc and views[i].res. */
int app_run_views(struct app_view *views, int nviews, int backend_cli);

/* Where the resolved scene of sc is stored: output.resolved_scene if set,
 * else beside the first output that is set (video, stats, final_state,
 * initial_state, preview: NAME with its extension replaced by
 * ".scene.yaml"; png_dir: DIR/scene.yaml). "" when the scene writes nothing.
 * buf has SCENE_PATH_MAX bytes. */
void app_resolved_scene_path(const struct scene *sc, char *buf);

/* The outputs check, before any work (app/outputs_check.c): view k's
 * outputs (every row of the outputs table, app/outputs.h, the resolved
 * scene set or derived) against each other, against its inputs (the scene
 * file, its body files, and views[k].restart: a member of a sequence the
 * run writes or removes as stale is refused) and against the outputs of
 * views 0..k-1. Paths are compared resolved (the
 * real path of the deepest existing directory, the rest appended), so
 * "a.mp4", "./a.mp4" and "d/../a.mp4" are one file. Bad input, NB_EINPUT
 * with one message naming both keys and the path: two outputs on one
 * path; a file output where another needs a directory; a file output
 * named as a frame of output.png_dir (frame_%05d.png directly inside it);
 * an output on the scene file. Also NB_EINPUT, naming the key, the path
 * and what it is: an output path that exists as a device, FIFO, socket or
 * directory (png_dir: a device, FIFO or socket - a regular file there
 * fails at run time, exit 1 -; and a frame name in it that is not a
 * regular file): those are never replaced. 0 when fine. */
int app_outputs_check(const struct app_view *views, int k);

/* The projection and stereo tags of sc's video (app/video_meta.c; output.h,
 * struct out_video_meta), from camera.projection and camera.stereo.mode,
 * which the MP4 writer turns into spherical video metadata
 * (output/mp4_sphere.c). */
struct out_video_meta;
void app_video_meta(const struct scene *sc, struct out_video_meta *meta);

/* --list-keys: every scene key of the schema table with its type,
 * default and meaning (app/keys.c), as plain text or, with markdown, as
 * the tables of docs/scenes.md's "Every key" section (tools/check-keys.sh
 * compares the two). Write errors show in ferror(f). */
void app_list_keys(FILE *f, int markdown);

/* --dry-run: the resolved scene (YAML, loadable again) on f, then, as YAML
 * comments, the estimate of memory and work and the galaxy report. */
int app_dry_run(const struct scene *sc, int backend_cli, FILE *f);

/* The checks made before anything is allocated or written, for the real
 * run and --dry-run alike (app/preflight.c): output paths that cannot be
 * created, simulation.backend cuda without a GPU, and the memory the scene
 * needs against what the machine has (host: MemAvailable; GPU: free device
 * memory when the CUDA backend will run). 0, or NB_EINPUT after one message
 * naming the key's file:line:col (or --set) and both figures. */
int app_preflight(const struct scene *sc, int backend_cli);
/* Estimated host bytes of a run of sc with n bodies (state, tree, frame,
 * and the in-memory image of one snapshot or FITS map when it writes them). */
double app_host_bytes(const struct scene *sc, long n);
/* "1.5 GiB" */
void app_human_bytes(double b, char *buf, size_t n);

/* Install SIGINT/SIGTERM/SIGHUP handlers that set a flag (second signal:
 * default action) and make the simulation poll it between steps
 * (sim_set_stop_check). app_interrupted() reads it. Call before the first
 * output is opened. */
void app_signals_install(void);
int app_interrupted(void);

/* nbody-render batch BATCH.yaml [--set K=V]... [--jobs N] [--dry-run] [--resume] [--no-share]
 * argv[0] is "batch". Returns the exit status (0 all ok, 1 any run failed,
 * 2 bad batch file or command line). app/batch*.c. */
int app_batch_main(int argc, char **argv);
/* Under mpirun, before app_batch_main: the ranks of one host split its GPUs
 * (every local_size-th from local_rank; more ranks than GPUs: one each,
 * shared) through CUDA_VISIBLE_DEVICES, read by the batch's GPU runs. No
 * CUDA call: the batch forks its runs. One GPU or one rank: nothing. */
void app_batch_share_gpus(int local_rank, int local_size);

#endif
