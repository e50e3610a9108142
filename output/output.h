/* output.h - frames leave the program here: MP4 (libav*), PNG sequence
 * (libpng), preview JPEG (stb_image_write), on a writer thread fed through a
 * bounded queue. Every file is written under a temporary name unique to the
 * process (".NAME.<pid>-<token>.partial" beside it, sim/outfile.c) and
 * renamed into place only when complete, never over a device, FIFO or
 * directory; a failed or cancelled run leaves none of its files (PNG frames
 * included), except that an interrupted MP4 is finished (flushed, trailer
 * written) with the frames made so far and renamed, so it plays. */
#ifndef NB_OUTPUT_H
#define NB_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "../scene/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A finished frame: 16-bit RGB, row 0 top, w*h*3 values. */
struct out_frame {
	int index; /* frame number, 0-based */
	int w, h;
	uint16_t *rgb16;
};

/* Additive (for the GPU renderer, render/cuda/gpu_render.h): a frame whose
 * 8-bit data was made elsewhere. Any pointer may be NULL:
 *   y, u, v: YUV420P planes, BT.709 limited range as render_rgb16_to_yuv420p
 *            (render/yuv.h) defines them; strides w, w/2, w/2; all three or
 *            none. The MP4 takes them as they are (no swscale).
 *   rgb8:    w*h*3 bytes, out_to8 of the 16-bit values (PNG depth 8, preview).
 *   rgb16:   as in out_frame, for outputs that find no 8-bit data they can
 *            use (PNG depth 16 always needs it).
 * A separate struct rather than more fields in out_frame, so that positional
 * initialisers of out_frame stay complete. */
struct out_frame8 {
	int index;
	int w, h;
	const uint8_t *y, *u, *v;
	const uint8_t *rgb8;
	const uint16_t *rgb16;
};

/* What a video's picture is, for players: its projection and its stereo
 * layout. The app layer fills it (app_video_meta, app/video_meta.c); this
 * layer knows no scene key for it. Zeroed: a flat mono picture (the
 * perspective projection), the MP4 carries nothing new. In an MP4
 * (output/mp4_sphere.c) it becomes Google's Spherical Video V2 boxes,
 * which YouTube and VR players read:
 *   a projection whose row says mp4_equirect (render/projection.c:
 *                            equirectangular): sv3d (proj/equi, yaw =
 *                            pitch = roll = 0, no crop): 360 x 180
 *                            degrees, longitude across the width,
 *                            latitude +90 at row 0;
 *   OUT_STEREO_TOP_BOTTOM    st3d mode 1: left eye in the top half;
 *   OUT_STEREO_SIDE_BY_SIDE  st3d mode 2: left eye in the left half;
 *   any other projection     nothing: a fisheye domemaster has no box in
 *                            that scheme (sv3d knows equirectangular and
 *                            cubemap; libavformat 59 writes only those), and
 *                            dome players take the projection from their
 *                            own settings. Its stereo layout, if any, is
 *                            still written (st3d is independent of sv3d).
 * A stereo layout with a flat picture writes st3d alone (a 3D film). */
enum out_stereo {
	OUT_STEREO_MONO = 0,
	OUT_STEREO_SIDE_BY_SIDE,
	OUT_STEREO_TOP_BOTTOM,
};
struct out_video_meta {
	enum scene_projection projection; /* its row: render_projection_of */
	enum out_stereo stereo;
};

/* ---- video containers (output/video_formats.c) ----
 * output.video's extension picks the container: .mp4 (MP4), .mkv
 * (Matroska), .mov (QuickTime): H.264 or H.265 as output.codec says;
 * .webm (WebM): VP9 (libvpx-vp9), else AV1 (libsvtav1, then libaom-av1),
 * whichever this build of FFmpeg has first, output.crf as that encoder's
 * crf, output.preset not used; .gif: 256 fixed colours (RGB 3-3-2 through
 * swscale's dither), output.crf and output.preset not used. output.codec
 * h265 with .webm or .gif is refused. Case does not matter (".MP4").
 * A refusal for a missing encoder lists the containers that would work in
 * this build, with their codecs. For tests, the environment variable
 * NB_HIDE_ENCODERS ("libvpx-vp9,libsvtav1": libavcodec names, comma-
 * separated) hides encoders as if this build lacked them. */
struct out_vformat;
struct out_vencoder;
struct out_video_choice {
	const struct out_vformat *format;  /* NULL: no container has the extension */
	const struct out_vencoder *enc;    /* the encoder (NULL when refused) */
	const char *key;                   /* refused: the key to blame ("output.video", "output.codec") */
	char why[512];                     /* refused: why, with the accepted names or the missing encoders */
};
/* Choose PATH's container and encoder for CODEC in this build: 0, or
 * NB_EINPUT with ch->key and ch->why set (nothing logged). */
int out_video_choose(const char *path, enum scene_codec codec, struct out_video_choice *ch);
/* "the video (WebM, VP9)" for PATH and CODEC into buf; returns buf. */
const char *out_video_what(const char *path, enum scene_codec codec, char *buf, size_t n);
/* The accepted extensions: ".mp4, .mkv, .mov, .webm, .gif". */
const char *out_video_accepted(void);
/* --resume: does PATH hold a whole video of its container? 1 when the
 * container has a check of its own (Matroska and WebM: the Segment ends at
 * the end of the file; GIF: signature and trailer), with *why NULL (whole)
 * or the reason ("is truncated ..."); 0 for MP4 and QuickTime, whose boxes
 * the caller walks (app/batch_verify.c). Reads only the file structure. */
int out_video_whole(const char *path, const char **why);

/* ---- low-level writers (each usable alone; used by tests and bench) ---- */
struct out_mp4;
/* Open PATH (written to a temp name) for w x h at fps, in the container
 * its extension names (out_video_choose: an unknown one, or a missing
 * encoder, is NB_EINPUT saying so). MP4: codec h264 (libx264) or h265
 * (libx265); crf, preset; yuv420p, BT.709 tags, +faststart. Odd w or h:
 * NB_EINPUT. The names out_mp4_* stay: MP4 was the first container. */
int out_mp4_open(struct out_mp4 **m, const char *path, int w, int h, int fps,
		 enum scene_codec codec, int crf, const char *preset);
/* The same, tagged with meta (NULL or zeroed: exactly out_mp4_open).
 * A spherical or stereo tag makes the muxer run at strictness
 * FF_COMPLIANCE_UNOFFICIAL: libavformat's mov muxer writes sv3d and st3d
 * only then. An unknown enum value: NB_EINPUT. */
int out_mp4_open_meta(struct out_mp4 **m, const char *path, int w, int h, int fps,
		      enum scene_codec codec, int crf, const char *preset,
		      const struct out_video_meta *meta);
/* Encode one frame (pts = frames written so far). 0 or NB_ERUNTIME. */
int out_mp4_write(struct out_mp4 *m, const uint16_t *rgb16);
/* Encode one frame given as YUV420P planes (BT.709 limited, strides w, w/2,
 * w/2), copied once into the encoder's frame: no conversion. 0 or
 * NB_ERUNTIME. */
int out_mp4_write_yuv(struct out_mp4 *m, const uint8_t *y, const uint8_t *u, const uint8_t *v);
/* Flush the encoder, write the trailer, rename into place (ok != 0) or
 * delete the temp file (ok == 0). Frees *m and sets it NULL. */
int out_mp4_close(struct out_mp4 **m, int ok);

/* Write DIR/frame_%05d.png (8 or 16 bit RGB) via a temp name. 0 or NB_ERUNTIME. */
int out_png_write(const char *dir, int index, int w, int h, int depth, const uint16_t *rgb16);
/* Write a JPEG (quality 90) of an RGB8 image to PATH via a temp name. */
int out_preview_write(const char *path, int w, int h, const uint8_t *rgb8);

/* ---- the writer thread ---- */
struct out_writer;
/* The PNG pool's worker threads when the caller leaves it to the writer:
 * NB_PNG_THREADS (1..64) when set, else the online CPUs less two, 1..8
 * (the time estimate divides the PNG stage by it). */
int out_png_threads_default(void);
/* Start the thread for the scene's outputs (video, png_dir, preview). Opens
 * (creates directories, checks codecs) before returning, so a bad path fails
 * here. queue_depth frames may wait. */
int out_writer_open(const struct scene *sc, int queue_depth, struct out_writer **w);
/* The same with the video tagged by meta (out_mp4_open_meta; NULL: none). */
int out_writer_open_meta(const struct scene *sc, int queue_depth,
			 const struct out_video_meta *meta, struct out_writer **w);
/* Queue a copy of the frame. Blocks while the queue is full (never drops).
 * Returns NB_ERUNTIME if the writer thread has failed (already logged). */
int out_writer_push(struct out_writer *w, const struct out_frame *f);
/* Same for a frame of 8-bit data (additive). Only what the outputs use is
 * copied, each kind once: the YUV planes (1.5 bytes/px) for the video when
 * the frame has them, rgb8 (3 bytes/px) for PNG depth 8 and the preview
 * when it has it, rgb16 for the rest. NB_ERUNTIME (logged) also when an
 * output finds nothing in f it can use. */
int out_writer_push8(struct out_writer *w, const struct out_frame8 *f);
/* Drain the queue, finish every output (ok: rename into place; !ok: remove
 * temps, except a started MP4 is still finished and kept when
 * keep_partial_video), join the thread, free. Returns the first error.
 * The PNG sequence is the run's own: unless all went well, every frame
 * file this writer put in place is removed (an earlier, longer run's
 * higher numbers are removed by app/run.c, through the outputs table). Either way, or when a later output fails after
 * the MP4 was renamed into place, nothing of a failed close remains but an
 * interrupted MP4 (keep_partial_video). */
int out_writer_close(struct out_writer **w, int ok, int keep_partial_video);
/* Seconds the writer thread was busy so far: MP4 encoding, preview work,
 * handing PNG frames to the PNG pool including the time it waited for the
 * pool to take one (back-pressure), and at close the MP4's flush and the
 * wait for the last PNGs. Comparable with the run's wall time: close to it
 * means the outputs limit the run. The PNG compression itself runs on the
 * pool's threads: see out_writer_png_seconds. */
double out_writer_busy_seconds(const struct out_writer *w);

/* Additive: the PNG sequence is written by a pool of worker threads (PNG
 * files are independent per frame), while the MP4 stays on the writer
 * thread. out_writer_open sizes the pool itself: NB_PNG_THREADS threads
 * when that variable is set (1..64), else the online CPUs less two, 1..8;
 * png_threads + 1 frames in flight. out_writer_open_png is out_writer_open
 * with the pool's size given: png_threads workers (< 1: that default) and
 * png_jobs frames held by the pool at most (< 1: png_threads + 1; raised
 * to png_threads), each one frame buffer (w*h*3 values: 16-bit, or 8-bit
 * for depth 8 from RGB8 frames). Files are written as before (temp name,
 * renamed when complete), in any order; the first PNG failure is logged
 * once with the file's name, frames after it are not written, and push
 * then returns NB_ERUNTIME. close waits for every PNG handed over. */
int out_writer_open_png(const struct scene *sc, int queue_depth, int png_threads, int png_jobs,
			struct out_writer **w);
/* Seconds the PNG workers spent compressing and writing so far, summed
 * over the threads (CPU-seconds; may exceed the wall time). */
double out_writer_png_seconds(const struct out_writer *w);

/* ---- snapshots (output/snap_write.c; layout: sim/snap_format.h) ---- */
/* The snapshot number of frame f of sc (output.snapshots: frames 0, every,
 * 2 every, ... and the last frame, numbered ceil(f / every)), or -1 when
 * frame f gets none or snapshots are off. */
int out_snap_number(const struct scene *sc, int f);
/* DIR/snap_%03d.hdf5 of number k into buf. 0 or NB_ERUNTIME (too long). */
int out_snap_path(const char *dir, int k, char *buf, size_t cap);
/* GADGET particle type of a component by its name: NAME.halo 1,
 * NAME.disk 2, NAME.bulge 3, any other 4. */
int out_snap_part_type(const char *component);
/* (output/snap_set.c) Write st (internal units, host values current) as
 * frame `frame` of sc to PATH (a GADGET-style HDF5 snapshot, double
 * precision; sim/snap_format.h), under a temporary name renamed into place
 * when complete; backend names who computed it ("cpu", "cuda"); cam, frame
 * `frame`'s camera (scene units), is written as the /Camera group (NULL:
 * none). With output.snapshots.files K > 1 the snapshot is a set of K parts
 * (out_snap_part_path), bodies split in index order, written as the ranks
 * of a run would (out_snap_part_write, out_snap_set_retire, publish). A
 * one-file snapshot removes the parts of an earlier set of its number, a
 * set the one file. 0 or NB_ERUNTIME (logged; nothing left at PATH, at any
 * part's name or at a temporary name). */
struct sim_state;
struct render_camera;
int out_snap_write(const char *path, const struct scene *sc, const struct sim_state *st,
		   int frame, const char *backend, const struct render_camera *cam);

/* ---- multi-file snapshot sets (output/snap_set.c, output/snap_write.c) ----
 * GADGET's multi-file snapshots (NumFilesPerSnapshot): part k of K of
 * DIR/snap_NNN.hdf5 is DIR/snap_NNN.k.hdf5; NumPart_ThisFile counts its own
 * bodies, NumPart_Total (and _HighWord) the set's, and every other Header
 * attribute is the same in every part (BoxSize from the set's extent);
 * NbodyRender/SetId, the same in every part, tells a part of another set.
 *
 * A set is complete or absent. Over ranks (each writes its own part):
 *   1. every rank: out_snap_part_counts over its bodies; the ranks sum the
 *      counts and take the largest extent (a reduction), rank 0 draws a
 *      set id (out_snap_set_id) and sends it to all;
 *   2. every rank: out_snap_part_write (its part, under a temporary name);
 *   3. the ranks agree that every part is written (a reduction of the
 *      results); if not, every rank: out_snap_part_discard, and stop;
 *   4. rank 0: out_snap_set_retire (no earlier snapshot of this number is
 *      visible from here on); a barrier;
 *   5. ranks k > 0: out_snap_part_publish; a barrier; rank 0 publishes
 *      part 0 last. A reader opens a set by its part 0, so a set whose
 *      writer dies before step 5 ends is not there to be read.
 * On a failure at step 5 every rank removes its published part
 * (out_snap_part_discard). */
struct out_snap_part {
	int k, K;           /* this part and the set's number of parts, 0 <= k < K */
	uint64_t total[6];  /* the set's bodies of each GADGET type (PartType0..5) */
	double extent;      /* the largest |coordinate| of the set's bodies (internal units) */
	uint64_t set_id;    /* the same in every part (written when K > 1) */
};
/* Bodies [lo, hi) of st by GADGET type (count[6]) and their largest
 * |coordinate| (internal units): one rank's share of the totals. */
void out_snap_part_counts(const struct sim_state *st, size_t lo, size_t hi, uint64_t count[6],
			  double *extent);
/* A new set id: random, never 0. */
uint64_t out_snap_set_id(void);
/* Part k's name: PATH (DIR/snap_NNN.hdf5) with ".k" before its extension
 * (DIR/snap_NNN.k.hdf5) into buf. 0 or NB_ERUNTIME (too long; logged). */
int out_snap_part_path(const char *path, int k, char *buf, size_t cap);
/* (output/snap_write.c) Bodies [lo, hi) of st (in index order) as part p
 * of the set of PATH, written to the part's temporary name and left there
 * (K > 1; K = 1: renamed into place, a one-file snapshot). PATH: the
 * part's own name (out_snap_part_path). 0 or NB_ERUNTIME (logged; no
 * temporary file left). */
int out_snap_part_write(const char *path, const struct out_snap_part *p, const struct scene *sc,
			const struct sim_state *st, size_t lo, size_t hi, int frame,
			const char *backend, const struct render_camera *cam);
/* Before any part of a set of K parts of snapshot PATH is published:
 * remove what an earlier run left under its names - the one-file
 * snapshot PATH, part 0 (so no earlier set is visible) and parts K and
 * beyond (regular files only). 0 or NB_ERUNTIME (logged: a name that is
 * not a regular file, or an error). */
int out_snap_set_retire(const char *path, int K);
/* Rename part PART (its own name, out_snap_part_path) from this process's
 * temporary name into place. 0 or NB_ERUNTIME (logged; the temporary
 * file removed). */
int out_snap_part_publish(const char *part);
/* Remove this process's temporary file of part PART and, with placed, the
 * part itself (a regular file) once published. */
void out_snap_part_discard(const char *part, int placed);

/* (output/snap_ranks.c) The whole protocol above in one call per rank:
 * the collective steps go through these callbacks (MPI's allreduce and
 * broadcast, say, or one process's identity), which every rank calls in
 * the same order whatever fails; each returns 0 or non-zero (failed). */
struct out_snap_comm {
	int rank, size; /* this rank writes part `rank` of `size` */
	void *ctx;      /* the callbacks' own */
	/* v[0..n-1] summed element by element over the ranks, on every rank */
	int (*sum_u64)(void *ctx, uint64_t *v, int n);
	/* the largest over the ranks, element by element, on every rank */
	int (*max_f64)(void *ctx, double *v, int n);
	/* rank 0's v[0..n-1] on every rank */
	int (*bcast_u64)(void *ctx, uint64_t *v, int n);
	/* the smallest *v over the ranks, on every rank (also the barrier) */
	int (*min_int)(void *ctx, int *v);
};
/* Snapshot PATH (DIR/snap_NNN.hdf5) of this rank's bodies (every body of
 * st) as part c->rank of a set of c->size parts (one rank: the one-file
 * snapshot): the totals, the extent and the set id reduced, every part
 * written, the ranks agreeing, the earlier snapshot retired, the parts
 * published, part 0 last. A collective call. 0 on every rank, or
 * NB_ERUNTIME on every rank (the rank that failed logs why; then no part
 * and no temporary file of this set is left). */
int out_snap_write_ranks(const char *path, const struct out_snap_comm *c,
			 const struct scene *sc, const struct sim_state *st, int frame,
			 const char *backend, const struct render_camera *cam);
/* Bytes of one snapshot of n bodies (estimate, for --dry-run). */
double out_snap_bytes(size_t n, enum scene_units units);

/* ---- FITS maps (output/fits.c) ---- */
/* The map's geometry is its projection's row (render_projection_of,
 * render/projection.c): a perspective frame is a plane (one linear pixel
 * scale at the target's distance); fisheye and equirectangular frames are
 * angular maps, written with the FITS WCS zenithal equidistant (ARC) and
 * plate carree (CAR) projections (Calabretta & Greisen 2002): the row's
 * wcs, wcs_lat0 and pixel_sr. */
/* What goes into a frame's FITS header: the map's physical scale. */
struct out_fits_meta {
	int frame;
	double time;          /* scene time units */
	const char *time_unit;/* "Myr", or "" (nbody) */
	double pixel_scale;   /* LINEAR: scene length per pixel at the camera's target distance */
	const char *length_unit; /* "kpc", or "" (nbody) */
	int density;          /* render.mode: density (the planes hold mass; else light): BUNIT */
	const struct render_camera *cam; /* the frame's camera (scene units): CAM* keys; NULL none */
	const char *units;    /* "galactic", "snapshot" (a snapshot's code units) or "nbody" */
	/* Added: angular maps (zero-initialised: perspective, a plane) */
	enum scene_projection projection;
	double px_per_rad;    /* angular maps: pixels per radian (render_view focal_px) */
};
/* DIR/frame_%05d.fits of frame meta->frame: the w x h HDR image rgb
 * (render_image layout: row 0 the top, RGB interleaved), divided by each
 * pixel's area (a plane: pixel_scale^2; an angular map: the pixel's solid
 * angle in steradians), as a float32 cube NAXIS1 = w, NAXIS2 = h, NAXIS3 = 3 (R, G,
 * B planes), FITS row 1 the BOTTOM of the picture (as image viewers
 * expect). Written under a temporary name, renamed when complete. 0 or
 * NB_ERUNTIME (logged). */
int out_fits_write(const char *dir, const struct out_fits_meta *meta, int w, int h,
		   const float *rgb);
/* DIR/frame_%05d.fits into buf. 0 or NB_ERUNTIME. */
int out_fits_path(const char *dir, int frame, char *buf, size_t cap);

/* Remove PATH only if it is a regular file (lstat: a device, FIFO,
 * socket, directory or symbolic link is never removed; outputs are only
 * ever regular files this program wrote). 0 when removed or absent, 1 when
 * left because it is not a regular file, -1 on an error (errno set). Every
 * removal of an output's final name goes through here (app/outputs.c). */
int out_remove_regular(const char *path);

/* Create DIR and its parents. 0 or NB_ERUNTIME (logged with the path). */
int out_mkdirs(const char *dir);
/* Create the parent directory of PATH. */
int out_mkdirs_for(const char *path);

#ifdef __cplusplus
}
#endif
#endif
