/* png.c - one frame as a PNG file (libpng), 8 or 16 bits per channel, RGB,
 * written under a temp name and renamed into place when complete.
 *
 * Speed: a 1080p frame at zlib level 1 without row filters writes several
 * times faster than libpng's defaults for a modest size cost (measured by
 * `nbody-bench frame`, see docs/BENCHMARKS.md); out_png_write uses that. */
#include <png.h>

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/log.h"
#include "out_internal.h"
#include "output.h"

/* libpng reports errors through this callback; it must not return. */
static void png_fail(png_structp png, png_const_charp msg)
{
	const char *path = png_get_error_ptr(png);
	log_error("%s: cannot write PNG: %s%s%s", path, msg, errno ? ": " : "",
		  errno ? strerror(errno) : "");
	png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
	log_warn("%s: libpng: %s", (const char *)png_get_error_ptr(png), msg);
}

/* Everything that touches libpng, so that the setjmp frame holds no
 * variable that changes after setjmp. rows8 is w*3 bytes scratch (8-bit). */
static int write_png_stream(FILE *f, const char *path, int w, int h, int depth,
			    const uint16_t *rgb16, int level, int filters, uint8_t *row8)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, (void *)path,
						  png_fail, png_warn);
	if (!png) {
		log_error("%s: cannot create the PNG writer", path);
		return NB_ERUNTIME;
	}
	png_infop info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		log_error("%s: cannot create the PNG writer", path);
		return NB_ERUNTIME;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return NB_ERUNTIME; /* logged by png_fail */
	}
	png_init_io(png, f);
	if (level >= 0)
		png_set_compression_level(png, level);
	if (!filters)
		png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
	png_write_info(png, info);
	if (depth == 16) {
		/* PNG stores 16-bit samples big-endian; swap on little-endian hosts. */
		const uint16_t one = 1;
		if (*(const uint8_t *)&one == 1)
			png_set_swap(png);
		for (int y = 0; y < h; y++)
			png_write_row(png, (png_const_bytep)(rgb16 + (size_t)y * w * 3));
	} else {
		for (int y = 0; y < h; y++) {
			const uint16_t *src = rgb16 + (size_t)y * w * 3;
			for (int i = 0; i < w * 3; i++)
				row8[i] = out_to8(src[i]);
			png_write_row(png, row8);
		}
	}
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return 0;
}

int out_png_write_file(const char *path, int w, int h, int depth, const uint16_t *rgb16,
		       int level, int filters)
{
	char tmp[4096];
	int err = out_temp_name(path, tmp, sizeof tmp);
	if (err)
		return err;
	if (depth != 8 && depth != 16) {
		log_error("%s: output.png_depth must be 8 or 16, got %d", path, depth);
		return NB_EINPUT;
	}
	uint8_t *row8 = malloc((size_t)w * 3);
	if (!row8) {
		log_error("%s: out of memory", path);
		return NB_ERUNTIME;
	}
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		log_error("%s: cannot open %s for writing: %s", path, tmp, strerror(errno));
		free(row8);
		return NB_ERUNTIME;
	}
	errno = 0;
	err = write_png_stream(f, path, w, h, depth, rgb16, level, filters, row8);
	/* A full disk may only show at the final flush. */
	if (fflush(f) != 0 && !err) {
		log_error("%s: cannot write PNG: %s", path, strerror(errno));
		err = NB_ERUNTIME;
	}
	if (fclose(f) != 0 && !err) {
		log_error("%s: cannot write PNG: %s", path, strerror(errno));
		err = NB_ERUNTIME;
	}
	free(row8);
	int ferr = out_finish_temp(tmp, path, err == 0);
	return err ? err : ferr;
}

int out_png_write(const char *dir, int index, int w, int h, int depth, const uint16_t *rgb16)
{
	char path[4096];
	int n = snprintf(path, sizeof path, "%s/frame_%05d.png", dir, index);
	if (n < 0 || (size_t)n >= sizeof path) {
		log_error("%s: output.png_dir: path too long", dir);
		return NB_ERUNTIME;
	}
	return out_png_write_file(path, w, h, depth, rgb16, OUT_PNG_LEVEL, OUT_PNG_FILTERS);
}
