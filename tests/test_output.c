/* test_output.c - the output layer: MP4 frame count, size, rate and tags
 * (ffprobe), clean decode (ffmpeg), colours and orientation (an asymmetric
 * "F" with distinct channels), PNG round trips read back with libpng, the
 * writer thread (order, bounded queue, interrupted and failed runs), the
 * preview JPEG and contact sheet (read back with stb_image).
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_output && /tmp/b/tests/test_output */
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stb_image.h>
#pragma GCC diagnostic pop

#include <dirent.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../output/output.h"
#include "../sim/log.h"
#include "check_main.h"

static char g_dir[256];

static void make_tmpdir(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/nb-test-output-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void rm_tree(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* Files in DIR whose name contains SUB. */
static int count_files(const char *dir, const char *sub)
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
static struct rect f_bar(int w, int h) { return (struct rect){w * 2 / 16, h * 2 / 16, w * 5 / 16, h * 14 / 16}; }
static struct rect f_top(int w, int h) { return (struct rect){w * 5 / 16, h * 2 / 16, w * 13 / 16, h * 6 / 16}; }
static struct rect f_mid(int w, int h) { return (struct rect){w * 5 / 16, h * 8 / 16, w * 10 / 16, h * 11 / 16}; }

static int in_rect(struct rect r, int x, int y) { return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1; }

static uint16_t *make_f(int w, int h)
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
static uint16_t *make_f_textured(int w, int h)
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

static uint16_t *make_gray(int w, int h, uint16_t v)
{
	uint16_t *p = malloc((size_t)w * h * 3 * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < (size_t)w * h * 3; i++)
		p[i] = v;
	return p;
}

/* ---- readers (independent of the code under test) ---- */

/* Read a PNG with libpng into 16-bit values (8-bit files keep 0..255). */
static uint16_t *read_png(const char *path, int *w, int *h, int *depth)
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

static void ffprobe(const char *path, struct probe *p)
{
	char cmd[1024], line[256];
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
static void assert_decodes_clean(const char *path)
{
	char cmd[1024], buf[512];
	snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -v error -i '%s' -f null - 2>&1", path);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_msg(n == 0, "ffmpeg printed: %s", buf);
}

/* Decode the first `frames` frames as PIX_FMT (rgb24 or gray) raw bytes. */
static uint8_t *decode_raw(const char *path, int frames, const char *pix_fmt, size_t bytes)
{
	char cmd[1024];
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

static void region_mean(const uint8_t *rgb, int w, struct rect r, double m[3])
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

static void assert_colour(const uint8_t *rgb, int w, struct rect r, double er, double eg,
			  double eb, const char *name)
{
	double m[3];
	region_mean(rgb, w, r, m);
	ck_assert_msg(NB_CLOSE(m[0], er, 10, 0) && NB_CLOSE(m[1], eg, 10, 0) &&
			      NB_CLOSE(m[2], eb, 10, 0),
		      "%s: mean (%.1f, %.1f, %.1f), expected (%.0f, %.0f, %.0f)", name, m[0],
		      m[1], m[2], er, eg, eb);
}

static void scene_for(struct scene *sc, int w, int h, int frames)
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

START_TEST(mp4_has_all_frames)
{
	make_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/a.mp4", g_dir);
	struct out_mp4 *m = NULL;
	ck_assert_int_eq(out_mp4_open(&m, path, 160, 90, 30, SCENE_CODEC_H264, 23, "veryfast"), 0);
	uint16_t *img = make_f(160, 90);
	for (int i = 0; i < 30; i++)
		ck_assert_int_eq(out_mp4_write(m, img), 0);
	ck_assert_int_eq(out_mp4_close(&m, 1), 0);
	ck_assert_ptr_null(m);
	struct probe p;
	ffprobe(path, &p);
	ck_assert_int_eq(p.frames, 30);
	ck_assert_int_eq(p.width, 160);
	ck_assert_int_eq(p.height, 90);
	ck_assert_int_eq(p.fps_num, 30);
	ck_assert_int_eq(p.fps_den, 1);
	ck_assert_str_eq(p.pix_fmt, "yuv420p");
	ck_assert_str_eq(p.primaries, "bt709");
	ck_assert_str_eq(p.range, "tv");
	ck_assert_str_eq(p.codec, "h264");
	assert_decodes_clean(path);
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	free(img);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_colours_and_orientation)
{
	make_tmpdir();
	char path[512];
	const int w = 160, h = 96;
	snprintf(path, sizeof path, "%s/f.mp4", g_dir);
	struct out_mp4 *m = NULL;
	ck_assert_int_eq(out_mp4_open(&m, path, w, h, 25, SCENE_CODEC_H264, 12, "veryfast"), 0);
	uint16_t *img = make_f(w, h);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(out_mp4_write(m, img), 0);
	ck_assert_int_eq(out_mp4_close(&m, 1), 0);
	uint8_t *rgb = decode_raw(path, 1, "rgb24", (size_t)w * h * 3);
	assert_colour(rgb, w, f_bar(w, h), 255, 0, 0, "red bar");
	assert_colour(rgb, w, f_top(w, h), 0, 255, 0, "green arm");
	assert_colour(rgb, w, f_mid(w, h), 0, 0, 255, "blue arm");
	/* right of the middle arm and the lower right: background */
	assert_colour(rgb, w, (struct rect){w * 11 / 16, h * 7 / 16, w * 15 / 16, h * 15 / 16}, 0,
		      0, 0, "background");
	free(rgb);
	free(img);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_odd_size_is_input_error)
{
	struct out_mp4 *m = (struct out_mp4 *)1;
	ck_assert_int_eq(out_mp4_open(&m, "/tmp/nb-odd.mp4", 161, 90, 30, SCENE_CODEC_H264, 23,
				      "veryfast"),
			 NB_EINPUT);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(out_mp4_open(&m, "/tmp/nb-odd.mp4", 160, 91, 30, SCENE_CODEC_H264, 23,
				      "veryfast"),
			 NB_EINPUT);
	ck_assert(!file_exists("/tmp/nb-odd.mp4"));
	ck_assert(!file_exists("/tmp/.nb-odd.mp4.partial"));
}
END_TEST

START_TEST(mp4_h265_when_available)
{
	make_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/h.mp4", g_dir);
	struct out_mp4 *m = NULL;
	int err = out_mp4_open(&m, path, 64, 64, 24, SCENE_CODEC_H265, 28, "ultrafast");
	if (err == NB_EINPUT) { /* no libx265 in this FFmpeg: the documented answer */
		rm_tree(g_dir);
		return;
	}
	ck_assert_int_eq(err, 0);
	uint16_t *img = make_f(64, 64);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(out_mp4_write(m, img), 0);
	ck_assert_int_eq(out_mp4_close(&m, 1), 0);
	struct probe p;
	ffprobe(path, &p);
	ck_assert_str_eq(p.codec, "hevc");
	ck_assert_int_eq(p.frames, 5);
	ck_assert_int_eq(p.fps_num, 24);
	free(img);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_unwritable_path_fails_cleanly)
{
	struct out_mp4 *m = NULL;
	ck_assert_int_eq(out_mp4_open(&m, "/proc/nope/x.mp4", 64, 64, 30, SCENE_CODEC_H264, 23,
				      "veryfast"),
			 NB_ERUNTIME);
	ck_assert_ptr_null(m);
	ck_assert(!file_exists("/proc/nope/x.mp4"));
}
END_TEST

/* ---- PNG ---- */

static void png_round_trip(int depth)
{
	make_tmpdir();
	const int w = 37, h = 22; /* odd sizes are fine for PNG */
	uint16_t *img = make_f_textured(w, h);
	ck_assert_int_eq(out_png_write(g_dir, 7, w, h, depth, img), 0);
	char path[512];
	snprintf(path, sizeof path, "%s/frame_00007.png", g_dir);
	int rw, rh, rd;
	uint16_t *back = read_png(path, &rw, &rh, &rd);
	ck_assert_int_eq(rw, w);
	ck_assert_int_eq(rh, h);
	ck_assert_int_eq(rd, depth);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < 3; c++) {
				size_t i = ((size_t)y * w + x) * 3 + c;
				/* 8-bit: nearest of 0..255 to v/65535*255 */
				long want = depth == 16 ? img[i]
							: (long)(img[i] * 255.0 / 65535.0 + 0.5);
				ck_assert_msg(back[i] == want, "(%d,%d) ch %d: got %u want %ld", x,
					      y, c, back[i], want);
			}
	/* The F itself, by position: red bar left, green arm top, blue middle. */
	int top = depth == 16 ? 65535 - 20000 : 255 - 78;
	const uint16_t *p = back + ((size_t)(h / 2) * w + w * 3 / 16) * 3;
	ck_assert(p[0] > top && p[1] < 90 * (depth == 16 ? 257 : 1) && p[2] < 90 * (depth == 16 ? 257 : 1));
	p = back + ((size_t)(h * 3 / 16) * w + w * 10 / 16) * 3;
	ck_assert(p[1] > top && p[0] < p[1] / 2 && p[2] < p[1] / 2);
	p = back + ((size_t)(h * 9 / 16) * w + w * 7 / 16) * 3;
	ck_assert(p[2] > top && p[0] < p[2] / 2 && p[1] < p[2] / 2);
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	free(back);
	free(img);
	rm_tree(g_dir);
}

START_TEST(png_8bit_round_trip) { png_round_trip(8); }
END_TEST
START_TEST(png_16bit_round_trip) { png_round_trip(16); }
END_TEST

START_TEST(png_unwritable_dir_fails)
{
	uint16_t *img = make_gray(4, 4, 0);
	ck_assert_int_eq(out_png_write("/proc/nope", 0, 4, 4, 8, img), NB_ERUNTIME);
	free(img);
}
END_TEST

/* ---- writer thread ---- */

START_TEST(writer_keeps_order_with_small_queue)
{
	make_tmpdir();
	struct scene sc;
	const int w = 64, h = 32, n = 50;
	scene_for(&sc, w, h, n);
	snprintf(sc.output.video, sizeof sc.output.video, "%s/v/out.mp4", g_dir);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/frames", g_dir);
	snprintf(sc.output.preview, sizeof sc.output.preview, "%s/p/sheet.jpg", g_dir);
	sc.output.preview_kind = SCENE_PREVIEW_SHEET;
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), 0);
	/* Frame k is flat grey 4k/255. */
	for (int k = 0; k < n; k++) {
		uint16_t *img = make_gray(w, h, (uint16_t)(4 * k * 257));
		struct out_frame f = {k, w, h, img};
		ck_assert_int_eq(out_writer_push(wr, &f), 0);
		free(img); /* push copied it */
	}
	ck_assert(out_writer_busy_seconds(wr) >= 0);
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	ck_assert_ptr_null(wr);

	ck_assert_int_eq(count_files(sc.output.png_dir, ".png"), n);
	ck_assert_int_eq(count_files(sc.output.png_dir, "partial"), 0);
	for (int k = 0; k < n; k++) {
		char path[SCENE_PATH_MAX + 32];
		int rw, rh, rd;
		snprintf(path, sizeof path, "%s/frame_%05d.png", sc.output.png_dir, k);
		uint16_t *b = read_png(path, &rw, &rh, &rd);
		ck_assert_int_eq(b[0], 4 * k);
		ck_assert_int_eq(b[(size_t)w * h * 3 - 1], 4 * k);
		free(b);
	}
	/* The MP4's frames come out in the order pushed. */
	struct probe p;
	ffprobe(sc.output.video, &p);
	ck_assert_int_eq(p.frames, n);
	uint8_t *y = decode_raw(sc.output.video, n, "gray", (size_t)w * h * n);
	for (int k = 0; k < n; k++) {
		double s = 0;
		for (int i = 0; i < w * h; i++)
			s += y[(size_t)k * w * h + i];
		ck_assert_msg(NB_CLOSE(s / (w * h), 4.0 * k, 3, 0), "frame %d: mean %.2f", k,
			      s / (w * h));
	}
	free(y);

	/* Contact sheet: 16 thumbnails in a 4x4 grid, thumbnail j showing
	 * frame round(j * 49 / 15). */
	int sw, sh, sc_n;
	unsigned char *sheet = stbi_load(sc.output.preview, &sw, &sh, &sc_n, 3);
	ck_assert_ptr_nonnull(sheet);
	ck_assert_int_eq(sw, w / 4 * 4);
	ck_assert_int_eq(sh, h / 4 * 4);
	int tw = w / 4, th = h / 4;
	for (int j = 0; j < 16; j++) {
		int frame = (int)(j * 49.0 / 15.0 + 0.5);
		int cx = (j % 4) * tw + tw / 2, cy = (j / 4) * th + th / 2;
		int v = sheet[((size_t)cy * sw + cx) * 3 + 1];
		ck_assert_msg(abs(v - 4 * frame) <= 4, "thumb %d: %d, expected %d", j, v, 4 * frame);
	}
	stbi_image_free(sheet);
	rm_tree(g_dir);
}
END_TEST

START_TEST(writer_preview_last_is_last_frame)
{
	make_tmpdir();
	struct scene sc;
	const int w = 96, h = 64;
	scene_for(&sc, w, h, 3);
	snprintf(sc.output.preview, sizeof sc.output.preview, "%s/last.jpg", g_dir);
	sc.output.preview_kind = SCENE_PREVIEW_LAST;
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 1, &wr), 0);
	for (int k = 0; k < 3; k++) {
		uint16_t *img = k == 2 ? make_f(w, h) : make_gray(w, h, 30000);
		struct out_frame f = {k, w, h, img};
		ck_assert_int_eq(out_writer_push(wr, &f), 0);
		free(img);
	}
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	int rw, rh, rn;
	unsigned char *rgb = stbi_load(sc.output.preview, &rw, &rh, &rn, 3);
	ck_assert_ptr_nonnull(rgb);
	ck_assert_int_eq(rw, w);
	ck_assert_int_eq(rh, h);
	assert_colour(rgb, w, f_bar(w, h), 255, 0, 0, "preview red bar");
	assert_colour(rgb, w, f_top(w, h), 0, 255, 0, "preview green arm");
	assert_colour(rgb, w, f_mid(w, h), 0, 0, 255, "preview blue arm");
	stbi_image_free(rgb);
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	rm_tree(g_dir);
}
END_TEST

static void push_n(struct out_writer *wr, int n, int w, int h)
{
	uint16_t *img = make_f(w, h);
	for (int k = 0; k < n; k++) {
		struct out_frame f = {k, w, h, img};
		ck_assert_int_eq(out_writer_push(wr, &f), 0);
	}
	free(img);
}

START_TEST(writer_interrupted_keeps_playable_video)
{
	make_tmpdir();
	struct scene sc;
	scene_for(&sc, 64, 48, 100);
	snprintf(sc.output.video, sizeof sc.output.video, "%s/cut.mp4", g_dir);
	snprintf(sc.output.preview, sizeof sc.output.preview, "%s/cut.jpg", g_dir);
	sc.output.preview_kind = SCENE_PREVIEW_LAST;
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 4, &wr), 0);
	push_n(wr, 10, 64, 48);
	ck_assert_int_eq(out_writer_close(&wr, 0, 1), 0);
	struct probe p;
	ffprobe(sc.output.video, &p);
	ck_assert_int_eq(p.frames, 10);
	assert_decodes_clean(sc.output.video);
	ck_assert(!file_exists(sc.output.preview)); /* a cancelled run has no preview */
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	rm_tree(g_dir);
}
END_TEST

START_TEST(writer_cancelled_leaves_nothing)
{
	make_tmpdir();
	struct scene sc;
	scene_for(&sc, 64, 48, 100);
	snprintf(sc.output.video, sizeof sc.output.video, "%s/gone.mp4", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 4, &wr), 0);
	push_n(wr, 10, 64, 48);
	ck_assert_int_eq(out_writer_close(&wr, 0, 0), 0);
	ck_assert(!file_exists(sc.output.video));
	ck_assert_int_eq(count_files(g_dir, ""), 2); /* only . and .. */
	rm_tree(g_dir);
}
END_TEST

START_TEST(writer_unwritable_path_fails_at_open)
{
	make_tmpdir();
	char file[512];
	snprintf(file, sizeof file, "%s/plain", g_dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	struct scene sc;
	scene_for(&sc, 64, 48, 10);
	/* a directory that would have to live under a regular file */
	snprintf(sc.output.video, sizeof sc.output.video, "%s/plain/sub/x.mp4", g_dir);
	struct out_writer *wr = (struct out_writer *)1;
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), NB_ERUNTIME);
	ck_assert_ptr_null(wr);
	sc.output.video[0] = '\0';
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/plain/frames", g_dir);
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), NB_ERUNTIME);
	/* odd frame size with a video is the user's error */
	scene_for(&sc, 65, 48, 10);
	snprintf(sc.output.video, sizeof sc.output.video, "%s/odd.mp4", g_dir);
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), NB_EINPUT);
	ck_assert_int_eq(count_files(g_dir, ""), 3); /* ., .., plain */
	rm_tree(g_dir);
	/* /proc refuses new files */
	scene_for(&sc, 64, 48, 10);
	snprintf(sc.output.video, sizeof sc.output.video, "/proc/nope/x.mp4");
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), NB_ERUNTIME);
	ck_assert(!file_exists("/proc/nope/x.mp4"));
}
END_TEST

/* Incompressible frames, so files grow fast. */
static uint16_t *make_noise(int w, int h, uint32_t seed)
{
	uint16_t *p = malloc((size_t)w * h * 3 * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < (size_t)w * h * 3; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (uint16_t)(seed >> 16);
	}
	return p;
}

/* A full disk, simulated with a file size limit (writes then fail with
 * EFBIG): push reports the failure, close returns it, nothing that looks
 * complete is left. Runs in Check's forked child, so the limit stays there. */
static void disk_full_case(int with_video, int with_png)
{
	make_tmpdir();
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {60000, 60000};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	struct scene sc;
	const int w = 160, h = 96; /* 92 KB of noise per 16-bit PNG */
	scene_for(&sc, w, h, 200);
	sc.output.png_depth = 16;
	sc.output.crf = 0;
	if (with_video)
		snprintf(sc.output.video, sizeof sc.output.video, "%s/full.mp4", g_dir);
	if (with_png)
		snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/fr", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 2, &wr), 0);
	int err = 0, k;
	for (k = 0; k < 200 && !err; k++) {
		uint16_t *img = make_noise(w, h, (uint32_t)k + 1);
		struct out_frame f = {k, w, h, img};
		err = out_writer_push(wr, &f);
		free(img);
	}
	ck_assert_int_eq(err, NB_ERUNTIME);
	ck_assert_int_eq(out_writer_close(&wr, 1, 1), NB_ERUNTIME);
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	ck_assert(!file_exists(sc.output.video) || !with_video);
	if (with_png) {
		ck_assert_int_eq(count_files(sc.output.png_dir, "partial"), 0);
		ck_assert_int_eq(count_files(sc.output.png_dir, ".png"), 0);
	}
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &rl);
	rm_tree(g_dir);
}

START_TEST(writer_reports_full_disk_png) { disk_full_case(0, 1); }
END_TEST
START_TEST(writer_reports_full_disk_mp4) { disk_full_case(1, 0); }
END_TEST

START_TEST(mkdirs_creates_parents)
{
	make_tmpdir();
	char d[512], p[512];
	snprintf(d, sizeof d, "%s/a/b//c/", g_dir);
	ck_assert_int_eq(out_mkdirs(d), 0);
	ck_assert_int_eq(out_mkdirs(d), 0); /* existing is fine */
	snprintf(p, sizeof p, "%s/x/y/file.mp4", g_dir);
	ck_assert_int_eq(out_mkdirs_for(p), 0);
	snprintf(d, sizeof d, "%s/a/b/c", g_dir);
	struct stat sb;
	ck_assert(stat(d, &sb) == 0 && S_ISDIR(sb.st_mode));
	snprintf(d, sizeof d, "%s/x/y", g_dir);
	ck_assert(stat(d, &sb) == 0 && S_ISDIR(sb.st_mode));
	ck_assert_int_eq(out_mkdirs_for("plainname.mp4"), 0);
	rm_tree(g_dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");
	tcase_set_timeout(tc, 120);
	log_set_level(LOG_QUIET);
	tcase_add_test(tc, mkdirs_creates_parents);
	tcase_add_test(tc, mp4_has_all_frames);
	tcase_add_test(tc, mp4_colours_and_orientation);
	tcase_add_test(tc, mp4_odd_size_is_input_error);
	tcase_add_test(tc, mp4_h265_when_available);
	tcase_add_test(tc, mp4_unwritable_path_fails_cleanly);
	tcase_add_test(tc, png_8bit_round_trip);
	tcase_add_test(tc, png_16bit_round_trip);
	tcase_add_test(tc, png_unwritable_dir_fails);
	tcase_add_test(tc, writer_keeps_order_with_small_queue);
	tcase_add_test(tc, writer_preview_last_is_last_frame);
	tcase_add_test(tc, writer_interrupted_keeps_playable_video);
	tcase_add_test(tc, writer_cancelled_leaves_nothing);
	tcase_add_test(tc, writer_unwritable_path_fails_at_open);
	tcase_add_test(tc, writer_reports_full_disk_png);
	tcase_add_test(tc, writer_reports_full_disk_mp4);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
