/* test_output.c - the low-level writers: MP4 frame count, size, rate and
 * tags (ffprobe), clean decode (ffmpeg), colours and orientation (an
 * asymmetric "F" with distinct channels), PNG round trips read back with
 * libpng, directories. The writer thread is in test_output_writer.c.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_output && /tmp/b/tests/test_output */
#include "test_output_util.h"

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
	ck_assert_int_eq(count_files("/tmp", ".nb-odd.mp4."), 0); /* no temp file */
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
	/* libx264/libav run here: third-party code raises FP flags by design */
	tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
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
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
