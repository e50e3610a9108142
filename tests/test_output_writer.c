/* test_output_writer.c - the writer thread: frames come out complete and in
 * order through a small queue (PNG contents, MP4 frame means), previews
 * (last frame, contact sheet; read back with stb_image), interrupted,
 * cancelled and failed runs (unwritable paths, a full disk simulated with a
 * file size limit).
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_output_writer && /tmp/b/tests/test_output_writer */
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stb_image.h>
#pragma GCC diagnostic pop

#include <signal.h>
#include <sys/resource.h>

#include "test_output_util.h"

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

static Suite *make_suite(void)
{
	Suite *s = suite_create("output_writer");
	TCase *tc = tcase_create("writer");
	/* libx264/libav run here: third-party code raises FP flags by design */
	tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	log_set_level(LOG_QUIET);
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
