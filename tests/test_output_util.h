/* test_output_util.h - helpers shared by the output tests
 * (tests/test_output.c, tests/test_output_writer.c): temp directories, the
 * asymmetric "F" test picture with distinct channels, and readers that do
 * not use the code under test (libpng, ffprobe, ffmpeg). */
#ifndef NB_TEST_OUTPUT_UTIL_H
#define NB_TEST_OUTPUT_UTIL_H

#include <dirent.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../output/output.h"
#include "../scene/log.h"
#include "check_main.h"

static char g_dir[256];

static inline void make_tmpdir(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-output-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static inline void rm_tree(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static inline int file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* Files in DIR whose name contains SUB. */
static inline int count_files(const char *dir, const char *sub)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strstr(e->d_name, sub))
			n++;
	closedir(d);
	return n;
}

/* ---- the F test image ----
 * Black, with a red vertical bar on the left, a green arm at the top and a
 * blue arm in the middle: a flip or a channel swap moves a colour. Region
 * bounds are fractions of the size so any frame size works. */
struct rect {
	int x0, y0, x1, y1;
};
static inline struct rect f_bar(int w, int h) { return (struct rect){w * 2 / 16, h * 2 / 16, w * 5 / 16, h * 14 / 16}; }
static inline struct rect f_top(int w, int h) { return (struct rect){w * 5 / 16, h * 2 / 16, w * 13 / 16, h * 6 / 16}; }
static inline struct rect f_mid(int w, int h) { return (struct rect){w * 5 / 16, h * 8 / 16, w * 10 / 16, h * 11 / 16}; }

static inline int in_rect(struct rect r, int x, int y) { return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1; }

static inline uint16_t *make_f(int w, int h)
{
	uint16_t *p = calloc((size_t)w * h * 3, sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint16_t *q = p + ((size_t)y * w + x) * 3;
			if (in_rect(f_bar(w, h), x, y))
				q[0] = 65535;
			else if (in_rect(f_top(w, h), x, y))
				q[1] = 65535;
			else if (in_rect(f_mid(w, h), x, y))
				q[2] = 65535;
		}
	return p;
}

/* F plus a low-amplitude per-pixel texture distinct in every channel, so an
 * exact round trip also proves no pixel moved. */
static inline uint16_t *make_f_textured(int w, int h)
{
	uint16_t *p = make_f(w, h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < 3; c++) {
				uint16_t *q = p + ((size_t)y * w + x) * 3 + c;
				unsigned t = (unsigned)(x * 131 + y * 977 + c * 7919) % 20000u;
				*q = *q ? (uint16_t)(*q - t) : (uint16_t)t;
			}
	return p;
}

static inline uint16_t *make_gray(int w, int h, uint16_t v)
{
	uint16_t *p = malloc((size_t)w * h * 3 * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < (size_t)w * h * 3; i++)
		p[i] = v;
	return p;
}

/* ---- readers (independent of the code under test) ---- */

/* Read a PNG with libpng into 16-bit values (8-bit files keep 0..255). */
static inline uint16_t *read_png(const char *path, int *w, int *h, int *depth)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	ck_assert(png && info);
	if (setjmp(png_jmpbuf(png)))
		ck_abort_msg("libpng could not read %s", path);
	png_init_io(png, f);
	png_read_info(png, info);
	*w = (int)png_get_image_width(png, info);
	*h = (int)png_get_image_height(png, info);
	*depth = png_get_bit_depth(png, info);
	ck_assert_int_eq(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
	if (*depth == 16) {
		const uint16_t one = 1;
		if (*(const uint8_t *)&one == 1)
			png_set_swap(png);
	}
	size_t n = (size_t)*w * *h * 3;
	uint16_t *out = malloc(n * sizeof *out);
	uint8_t *row = malloc((size_t)*w * 6);
	for (int y = 0; y < *h; y++) {
		png_read_row(png, row, NULL);
		for (int i = 0; i < *w * 3; i++)
			out[(size_t)y * *w * 3 + i] =
				*depth == 16 ? ((uint16_t *)row)[i] : row[i];
	}
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(row);
	fclose(f);
	return out;
}

struct probe {
	int width, height, frames, fps_num, fps_den;
	char pix_fmt[32], primaries[32], range[32], codec[32];
};

static inline void ffprobe(const char *path, struct probe *p)
{
	char cmd[2048], line[256];
	memset(p, 0, sizeof *p);
	snprintf(cmd, sizeof cmd,
		 "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
		 "stream=codec_name,nb_read_frames,width,height,r_frame_rate,pix_fmt,"
		 "color_primaries,color_range -of default=noprint_wrappers=1 '%s'",
		 path);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		sscanf(line, "width=%d", &p->width);
		sscanf(line, "height=%d", &p->height);
		sscanf(line, "nb_read_frames=%d", &p->frames);
		sscanf(line, "r_frame_rate=%d/%d", &p->fps_num, &p->fps_den);
		sscanf(line, "pix_fmt=%31s", p->pix_fmt);
		sscanf(line, "color_primaries=%31s", p->primaries);
		sscanf(line, "color_range=%31s", p->range);
		sscanf(line, "codec_name=%31s", p->codec);
	}
	ck_assert_int_eq(pclose(f), 0);
}

/* `ffmpeg -v error -i F -f null -` must exit 0 and print nothing. */
static inline void assert_decodes_clean(const char *path)
{
	char cmd[2048], buf[512];
	snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -v error -i '%s' -f null - 2>&1", path);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_msg(n == 0, "ffmpeg printed: %s", buf);
}

/* Decode the first `frames` frames as PIX_FMT (rgb24 or gray) raw bytes. */
static inline uint8_t *decode_raw(const char *path, int frames, const char *pix_fmt, size_t bytes)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "ffmpeg -nostdin -v error -i '%s' -frames:v %d -f rawvideo -pix_fmt %s -",
		 path, frames, pix_fmt);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	uint8_t *buf = malloc(bytes + 1);
	size_t n = fread(buf, 1, bytes + 1, f);
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_msg(n == bytes, "decoded %zu bytes, expected %zu", n, bytes);
	return buf;
}

static inline void region_mean(const uint8_t *rgb, int w, struct rect r, double m[3])
{
	/* Shrink by 3 pixels: yuv420 subsampling blurs edges. */
	r.x0 += 3, r.y0 += 3, r.x1 -= 3, r.y1 -= 3;
	double s[3] = {0, 0, 0};
	long n = 0;
	for (int y = r.y0; y < r.y1; y++)
		for (int x = r.x0; x < r.x1; x++, n++)
			for (int c = 0; c < 3; c++)
				s[c] += rgb[((size_t)y * w + x) * 3 + c];
	ck_assert_int_gt(n, 20);
	for (int c = 0; c < 3; c++)
		m[c] = s[c] / n;
}

static inline void assert_colour(const uint8_t *rgb, int w, struct rect r, double er, double eg,
			  double eb, const char *name)
{
	double m[3];
	region_mean(rgb, w, r, m);
	ck_assert_msg(NB_CLOSE(m[0], er, 10, 0) && NB_CLOSE(m[1], eg, 10, 0) &&
			      NB_CLOSE(m[2], eb, 10, 0),
		      "%s: mean (%.1f, %.1f, %.1f), expected (%.0f, %.0f, %.0f)", name, m[0],
		      m[1], m[2], er, eg, eb);
}

static inline void scene_for(struct scene *sc, int w, int h, int frames)
{
	memset(sc, 0, sizeof *sc);
	sc->render.width = w;
	sc->render.height = h;
	sc->output.frames = frames;
	sc->output.fps = 30;
	sc->output.codec = SCENE_CODEC_H264;
	sc->output.crf = 18;
	snprintf(sc->output.preset, sizeof sc->output.preset, "veryfast");
	sc->output.png_depth = 8;
}

/* ---- MP4 ---- */

/* The fog measure: the fraction of the pixels of a 16-bit PNG
 * whose brightest channel is above 2% of the frame's brightest value. */
static inline double lit_fraction(const char *path)
{
	int w, h, depth;
	uint16_t *px = read_png(path, &w, &h, &depth);
	ck_assert_int_eq(depth, 16);
	uint16_t top = 0;
	for (int k = 0; k < w * h * 3; k++)
		top = px[k] > top ? px[k] : top;
	ck_assert_int_gt(top, 0);
	int lit = 0;
	for (int p = 0; p < w * h; p++) {
		uint16_t m = px[3 * p];
		m = px[3 * p + 1] > m ? px[3 * p + 1] : m;
		m = px[3 * p + 2] > m ? px[3 * p + 2] : m;
		lit += m > 0.02 * top;
	}
	free(px);
	return (double)lit / (w * h);
}

/* Frame 0 of tests/data/plummer-small.yaml on the CPU (16-bit PNG) with
 * extra --set arguments SETS: its lit_fraction. Uses g_dir. */
static inline double plummer_lit(const char *sets)
{
	make_tmpdir();
	char cmd[1600], path[400];
	snprintf(cmd, sizeof cmd,
		 "'%s' tests/data/plummer-small.yaml --backend cpu -q --set output.frames=1 "
		 "--set output.video= --set output.stats= --set output.initial_state= "
		 "--set output.final_state= --set output.png_depth=16 "
		 "--set output.png_dir=%s/frames %s",
		 nb_bin(), g_dir, sets);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	snprintf(path, sizeof path, "%s/frames/frame_00000.png", g_dir);
	double f = lit_fraction(path);
	rm_tree(g_dir);
	return f;
}

#endif
