/* out_internal.h - helpers shared by the files of output/ (and by
 * bench/frame.c, which times the PNG settings). Not part of the public
 * contract in output.h. */
#ifndef NB_OUT_INTERNAL_H
#define NB_OUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/sim.h"

/* Temporary names and the final rename: sim_outfile_temp, _fopen and
 * _commit (sim/outfile.c, declared in sim/sim.h): ".NAME.<pid>-<token>.partial"
 * beside NAME, unique to the process, so the rename never crosses a file
 * system and two runs never share one. */

/* Write LEN bytes of BUF as the file PATH: to a new temporary file
 * (sim_outfile_temp), renamed into place when every byte is written and
 * the file closed (sim_outfile_commit). The writers that build a file in
 * memory (HDF5 snapshots, FITS maps) end here, so a full disk is one
 * message: "PATH: cannot write the WHAT (temporary file TMP): REASON".
 * The temporary file never remains. 0 or NB_ERUNTIME (logged). */
int out_save_bytes(const char *path, const void *buf, size_t len, const char *what);
/* out_save_bytes without the rename: the bytes are left in PATH's
 * temporary file (sim_outfile_temp_name's), for sim_outfile_commit later
 * (a part of a snapshot set, published when every part is whole). 0 or
 * NB_ERUNTIME (logged; the temporary file removed). */
int out_stage_bytes(const char *path, const void *buf, size_t len, const char *what);

/* PNG settings: zlib level (0..9) and whether libpng may choose row filters
 * (0: PNG_FILTER_NONE only). out_png_write uses OUT_PNG_LEVEL/OUT_PNG_FILTERS,
 * chosen from the timings in docs/BENCHMARKS.md. */
#define OUT_PNG_LEVEL 1
#define OUT_PNG_FILTERS 0
/* Write one PNG file at PATH (via its temp name) with explicit settings.
 * level -1 and filters 1 give libpng's defaults. 0 or NB_ERUNTIME. */
int out_png_write_file(const char *path, int w, int h, int depth, const uint16_t *rgb16,
		       int level, int filters);

/* The PNG pool (png.c): `threads` worker threads write DIR/frame_%05d.png
 * (depth 8 or 16, OUT_PNG_LEVEL/OUT_PNG_FILTERS, via temp names) for the
 * frames handed to them, at most `jobs` frames (>= threads) held at once;
 * each job keeps one frame buffer per kind, so the pool holds at most
 * jobs * (w*h*3 * 2 or 1 bytes). One submitter thread. Worker threads
 * inherit the caller's signal mask. open: 0, NB_EINPUT (depth) or
 * NB_ERUNTIME (logged). */
struct out_png_pool;
int out_png_pool_open(struct out_png_pool **p, const char *dir, int w, int h, int depth,
		      int threads, int jobs);
/* Hand frame INDEX to the pool without copying it: exactly one of rgb16,
 * rgb8 is non-NULL and points to the caller's buffer pointer (w*h*3 values
 * of that kind; rgb8 only for depth 8); the pool takes that buffer and
 * gives back in its place a spare one of the same size, or NULL (then the
 * caller allocates one when it needs it). Blocks while all jobs are held
 * (back-pressure). NB_ERUNTIME, buffer untouched, once a frame has failed:
 * that failure was logged once, with the file name, by the worker (later
 * failures of frames already in flight are not logged, frames waiting are
 * dropped). */
int out_png_pool_submit(struct out_png_pool *p, int index, uint16_t **rgb16, uint8_t **rgb8);
/* Write every frame submitted (unless one failed), join the threads.
 * Returns the first failure (already logged) or 0. Idempotent. */
int out_png_pool_drain(struct out_png_pool *p);
/* Drain, then keep (keep != 0) or remove (keep == 0) every frame file the
 * pool put in place, free, set *p NULL. Returns the first failure (already
 * logged) or 0. */
int out_png_pool_close(struct out_png_pool **p, int keep);
/* Seconds the workers spent writing PNG files, summed over the threads
 * (CPU-seconds: may exceed the wall time). 0 for NULL. */
double out_png_pool_busy_seconds(const struct out_png_pool *p);

/* mp4_sphere.c: put meta's spherical (AV_PKT_DATA_SPHERICAL) and stereo
 * (AV_PKT_DATA_STEREO3D) side data on video stream st of the mp4 muxer
 * fmt, and lower fmt's strictness to FF_COMPLIANCE_UNOFFICIAL when it
 * adds any (output.h, struct out_video_meta). Before
 * avformat_write_header. meta NULL or flat mono: nothing. path names the
 * file in messages. 0, NB_EINPUT (an unknown value) or NB_ERUNTIME. */
struct AVFormatContext;
struct AVStream;
struct out_video_meta;
int out_mp4_sphere_tag(struct AVFormatContext *fmt, struct AVStream *st,
		       const struct out_video_meta *meta, const char *path);

/* video_formats.c: the video containers, one row per file extension, and
 * the encoders they use (what output.crf and output.preset mean to each,
 * and the options fixed for it). output/mp4.c reads them; output.h has the
 * public side (out_video_choose, out_video_what, out_video_accepted). */
#define OUT_VENC_MAX 3
struct out_vencoder {
	const char *name;  /* libavcodec's: "libx264" */
	const char *label; /* for messages and --dry-run: "H.264" */
	int crf, preset;   /* 1: output.crf / output.preset are its private options */
	const char *opts;  /* fixed options "k=v:k=v" for avcodec_open2, or NULL */
	unsigned tag;      /* the stream's codec tag, 0: the muxer's default */
};
struct out_vformat {
	const char *ext;   /* ".mp4", matched without regard to case */
	const char *muxer; /* libavformat's name: the temporary name has no extension */
	const char *name;  /* "MP4" */
	/* NULL first: output.codec picks (libx264, libx265); else the first
	 * of these that this build has */
	const struct out_vencoder *encoders[OUT_VENC_MAX];
	int rgb8;          /* 1: RGB 3-3-2 frames (a fixed 256-colour palette), not yuv420p */
	const char *header_opts; /* muxer options for avformat_write_header, or NULL */
	int tags;          /* 1: BT.709 colour tags and the spherical/stereo side data */
	/* --resume: NULL when head (the file's first n bytes), its last byte
	 * and its size say the file is whole, else why; NULL here: MP4 boxes,
	 * checked by the caller (out_video_whole) */
	const char *(*problem)(const unsigned char *head, size_t n, unsigned char last,
			       long long size);
};
/* The row of PATH's extension, or NULL. */
const struct out_vformat *out_vformat_of(const char *path);

/* 16-bit to 8-bit with rounding: (v*255 + 32767) / 65535. */
static inline uint8_t out_to8(uint16_t v)
{
	return (uint8_t)(((uint32_t)v * 255u + 32767u) / 65535u);
}

/* Contact sheet of up to OUT_SHEET_MAX evenly spaced frames, downscaled
 * (box filter) into a grid as the frames pass (output/preview.c). */
#define OUT_SHEET_MAX 16
struct out_sheet {
	int frames;              /* frames in the clip */
	int n;                   /* thumbnails: min(frames, OUT_SHEET_MAX) */
	int cols, rows;          /* grid */
	int tw, th;              /* thumbnail size in pixels */
	int sw, sh;              /* sheet size */
	uint8_t *rgb8;           /* sw*sh*3, black where no thumbnail came */
};
/* Plan a sheet for a clip of `frames` frames of w x h. 0 or NB_ERUNTIME. */
int out_sheet_init(struct out_sheet *s, int frames, int w, int h);
/* Slot of frame INDEX in the sheet, or -1 when the frame is not sampled. */
int out_sheet_slot(const struct out_sheet *s, int index);
/* If INDEX is sampled, downscale the frame into its cell. */
void out_sheet_add(struct out_sheet *s, int index, int w, int h, const uint16_t *rgb16);
void out_sheet_free(struct out_sheet *s);

#endif
