/* preview.c - the preview JPEG (stb_image_write, quality 90) and the
 * contact sheet: up to OUT_SHEET_MAX evenly spaced frames, box-filtered down
 * into a grid as the frames pass, so no frame has to be kept. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC /* keep stb's names out of libnbody.a; we write through
                                * our own callback, which sees write errors */
/* stb's JPEG bit writer shifts bits out of the top of a signed int
 * (stbiw__jpg_writeBits, v1.16): harmless with GCC, but undefined behaviour
 * that halts `make check-sanitize`. Its functions are static with no hook,
 * so while the header is read `static` carries no_sanitize("shift") (GCC),
 * or every function gets it through a clang attribute pragma (clang). */
#if defined(__clang__)
/* clang refuses the attribute on stb's static tables: apply it to functions. */
#pragma clang attribute push(__attribute__((no_sanitize("shift"))), apply_to = function)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma clang diagnostic pop
#pragma clang attribute pop
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
#pragma GCC diagnostic ignored "-Wunused-function"
#define static static __attribute__((no_sanitize("shift")))
#include <stb_image_write.h>
#undef static
#pragma GCC diagnostic pop
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

struct jpg_sink {
	FILE *f;
	int failed; /* a short fwrite: errno kept in err */
	int err;
};

/* stb calls this with each chunk of encoded bytes; stb ignores write
 * errors, so we record them here. */
static void jpg_put(void *ctx, void *data, int size)
{
	struct jpg_sink *s = ctx;
	if (s->failed || size <= 0)
		return;
	if (fwrite(data, 1, (size_t)size, s->f) != (size_t)size) {
		s->failed = 1;
		s->err = errno;
	}
}

int out_preview_write(const char *path, int w, int h, const uint8_t *rgb8)
{
	char tmp[4096];
	int err = 0;
	struct jpg_sink s = {0};
	s.f = sim_outfile_fopen(path, tmp, sizeof tmp); /* logs its failure */
	if (!s.f)
		return NB_ERUNTIME;
	if (!stbi_write_jpg_to_func(jpg_put, &s, w, h, 3, rgb8, 90)) {
		log_error("%s: cannot encode the preview JPEG (%dx%d)", path, w, h);
		err = NB_ERUNTIME;
	}
	if (!err && s.failed) {
		log_error("%s: cannot write the preview: %s", path, strerror(s.err));
		err = NB_ERUNTIME;
	}
	if (fclose(s.f) != 0 && !err) {
		log_error("%s: cannot write the preview: %s", path, strerror(errno));
		err = NB_ERUNTIME;
	}
	int ferr = sim_outfile_commit(tmp, path, err == 0);
	return err ? err : ferr;
}

int out_sheet_init(struct out_sheet *s, int frames, int w, int h)
{
	memset(s, 0, sizeof *s);
	s->frames = frames < 1 ? 1 : frames;
	s->n = s->frames < OUT_SHEET_MAX ? s->frames : OUT_SHEET_MAX;
	s->cols = (int)ceil(sqrt((double)s->n));
	s->rows = (s->n + s->cols - 1) / s->cols;
	/* Thumbnails keep the frame's aspect; the sheet is about as wide as
	 * one frame (never wider than 4096 pixels: JPEG readers cope better). */
	int sheet_w = w < 4096 ? w : 4096;
	s->tw = sheet_w / s->cols;
	if (s->tw < 1)
		s->tw = 1;
	s->th = (int)((double)s->tw * h / w + 0.5);
	if (s->th < 1)
		s->th = 1;
	s->sw = s->tw * s->cols;
	s->sh = s->th * s->rows;
	s->rgb8 = calloc((size_t)s->sw * s->sh * 3, 1);
	if (!s->rgb8) {
		log_error("contact sheet: out of memory (%dx%d)", s->sw, s->sh);
		return NB_ERUNTIME;
	}
	return 0;
}

/* Thumbnail k shows frame round(k * (frames-1) / (n-1)): first and last
 * frame always, the rest evenly between. */
int out_sheet_slot(const struct out_sheet *s, int index)
{
	if (index < 0 || index >= s->frames)
		return -1;
	if (s->n == 1)
		return index == s->frames - 1 ? 0 : -1;
	/* The k whose sample is nearest INDEX, then check it is exact. */
	long long num = (long long)index * (s->n - 1);
	int k = (int)((num + (s->frames - 1) / 2) / (s->frames - 1));
	for (int kk = k - 1; kk <= k + 1; kk++) {
		if (kk < 0 || kk >= s->n)
			continue;
		long long f = ((long long)kk * (s->frames - 1) * 2 + (s->n - 1)) / (2LL * (s->n - 1));
		if (f == index)
			return kk;
	}
	return -1;
}

void out_sheet_add(struct out_sheet *s, int index, int w, int h, const uint16_t *rgb16)
{
	int k = out_sheet_slot(s, index);
	if (k < 0 || !s->rgb8)
		return;
	int cx = (k % s->cols) * s->tw, cy = (k / s->cols) * s->th;
	/* Box filter: thumbnail pixel (tx, ty) averages the source pixels
	 * whose index maps to it (x in [tx*w/tw, (tx+1)*w/tw)). */
	for (int ty = 0; ty < s->th; ty++) {
		int y0 = (int)((long long)ty * h / s->th), y1 = (int)((long long)(ty + 1) * h / s->th);
		if (y1 <= y0)
			y1 = y0 + 1;
		for (int tx = 0; tx < s->tw; tx++) {
			int x0 = (int)((long long)tx * w / s->tw), x1 = (int)((long long)(tx + 1) * w / s->tw);
			if (x1 <= x0)
				x1 = x0 + 1;
			uint64_t sum[3] = {0, 0, 0};
			for (int y = y0; y < y1; y++) {
				const uint16_t *p = rgb16 + ((size_t)y * w + x0) * 3;
				for (int x = x0; x < x1; x++, p += 3)
					sum[0] += p[0], sum[1] += p[1], sum[2] += p[2];
			}
			uint64_t cnt = (uint64_t)(y1 - y0) * (x1 - x0);
			uint8_t *d = s->rgb8 + ((size_t)(cy + ty) * s->sw + cx + tx) * 3;
			for (int c = 0; c < 3; c++)
				d[c] = out_to8((uint16_t)((sum[c] + cnt / 2) / cnt));
		}
	}
}

void out_sheet_free(struct out_sheet *s)
{
	free(s->rgb8);
	s->rgb8 = NULL;
}
