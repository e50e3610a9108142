/* out_internal.h - helpers shared by the files of output/ (and by
 * bench/frame.c, which times the PNG settings). Not part of the public
 * contract in output.h. */
#ifndef NB_OUT_INTERNAL_H
#define NB_OUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Temporary name for PATH: ".BASENAME.partial" in the same directory, so the
 * final rename never crosses a file system. 0, or NB_ERUNTIME when it does
 * not fit in cap bytes (logged). */
int out_temp_name(const char *path, char *out, size_t cap);
/* Rename TMP to PATH (ok != 0) or unlink TMP (ok == 0). 0 or NB_ERUNTIME
 * (rename failed, logged; TMP is removed then). */
int out_finish_temp(const char *tmp, const char *path, int ok);

/* PNG settings: zlib level (0..9) and whether libpng may choose row filters
 * (0: PNG_FILTER_NONE only). out_png_write uses OUT_PNG_LEVEL/OUT_PNG_FILTERS,
 * chosen from the timings in docs/BENCHMARKS.md. */
#define OUT_PNG_LEVEL 1
#define OUT_PNG_FILTERS 0
/* Write one PNG file at PATH (via its temp name) with explicit settings.
 * level -1 and filters 1 give libpng's defaults. 0 or NB_ERUNTIME. */
int out_png_write_file(const char *path, int w, int h, int depth, const uint16_t *rgb16,
		       int level, int filters);

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
