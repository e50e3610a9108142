/* test_output_pool.c - the PNG pool behind the writer (output/png.c,
 * out_writer_open_png): frames written by several worker threads are byte
 * for byte the files the single-threaded out_png_write makes (8 and 16
 * bit, 16-bit and RGB8 input), every frame index appears exactly once,
 * buffers traded between the ring, the pool and the preview never mix
 * frames up, a tiny queue only slows the producer down, and failures (a
 * full disk mid-run, the directory removed) are reported once with the
 * file's name, without a hang.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_output_pool && /tmp/b/tests/test_output_pool
 *   NB_LONG=1 ... also prints frames/s of the writer, 1080p 8-bit PNG, 1
 *   worker vs 2 vs the default (a benchmark; asserts only completeness). */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include "test_output_util.h"

/* 16 to 8 bits with rounding, written here from the PNG rule of scaling
 * (v * 255 / 65535, rounded), not taken from the code under test. */
static uint8_t to8(uint16_t v) { return (uint8_t)(((uint32_t)v * 255u + 32767u) / 65535u); }

/* Frame k: the textured F, shifted per frame so that no two frames match. */
static uint16_t *frame_k(int w, int h, int k)
{
	uint16_t *p = make_f_textured(w, h);
	for (size_t i = 0; i < (size_t)w * h * 3; i++)
		p[i] = (uint16_t)(p[i] + (uint32_t)k * 977u);
	return p;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)len + 1);
	ck_assert_int_eq(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static void assert_same_file(const char *a, const char *b)
{
	size_t na, nb;
	unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
	ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s (%zu bytes) differs from %s (%zu)", a,
		      na, b, nb);
	free(x);
	free(y);
}

/* frame_00000.png .. frame_{n-1}.png all present, and nothing else. */
static void assert_frames_complete(const char *dir, int n)
{
	for (int k = 0; k < n; k++) {
		char path[SCENE_PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/frame_%05d.png", dir, k);
		ck_assert_msg(file_exists(path), "%s missing", path);
	}
	ck_assert_int_eq(count_files(dir, "frame_"), n);
	ck_assert_int_eq(count_files(dir, ""), n + 2); /* and . and .. */
}

/* n frames through a pool of 3 workers (queue 2, 3 jobs); then the serial
 * path writes the same frames elsewhere and the files must match. as8:
 * push RGB8 (to8 of the 16-bit frame) instead of 16-bit RGB. */
static void pool_matches_serial(int depth, int as8)
{
	make_tmpdir();
	struct scene sc;
	const int w = 97, h = 61, n = 24; /* odd sizes: no row is a multiple of 8 */
	scene_for(&sc, w, h, n);
	sc.output.png_depth = depth;
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/pool", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 2, 3, 3, &wr), 0);
	uint8_t *rgb8 = malloc((size_t)w * h * 3);
	for (int k = 0; k < n; k++) {
		uint16_t *img = frame_k(w, h, k);
		if (as8) {
			for (size_t i = 0; i < (size_t)w * h * 3; i++)
				rgb8[i] = to8(img[i]);
			struct out_frame8 f = {.index = k, .w = w, .h = h, .rgb8 = rgb8};
			ck_assert_int_eq(out_writer_push8(wr, &f), 0);
		} else {
			struct out_frame f = {k, w, h, img};
			ck_assert_int_eq(out_writer_push(wr, &f), 0);
		}
		free(img);
	}
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	assert_frames_complete(sc.output.png_dir, n);

	char ref[SCENE_PATH_MAX];
	snprintf(ref, sizeof ref, "%s/serial", g_dir);
	ck_assert_int_eq(out_mkdirs(ref), 0);
	for (int k = 0; k < n; k++) {
		uint16_t *img = frame_k(w, h, k);
		ck_assert_int_eq(out_png_write(ref, k, w, h, depth, img), 0);
		free(img);
		char a[SCENE_PATH_MAX + 32], b[SCENE_PATH_MAX + 32];
		snprintf(a, sizeof a, "%s/frame_%05d.png", sc.output.png_dir, k);
		snprintf(b, sizeof b, "%s/frame_%05d.png", ref, k);
		assert_same_file(a, b);
	}
	free(rgb8);
	rm_tree(g_dir);
}

START_TEST(pool_png8_matches_serial) { pool_matches_serial(8, 0); }
END_TEST
START_TEST(pool_png16_matches_serial) { pool_matches_serial(16, 0); }
END_TEST
START_TEST(pool_png8_from_rgb8_matches_serial) { pool_matches_serial(8, 1); }
END_TEST

/* Many small frames through a one-slot ring and a pool of 2 jobs, with the
 * preview of the last frame taking the same buffers: every file holds its
 * own frame (flat grey k % 251, read back with libpng), the preview the
 * last. as8: frames as RGB8 (the 8-bit buffers circulate instead). */
static void tiny_queue_case(int as8)
{
	make_tmpdir();
	struct scene sc;
	const int w = 24, h = 16, n = 300;
	scene_for(&sc, w, h, n);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/f", g_dir);
	snprintf(sc.output.preview, sizeof sc.output.preview, "%s/last.jpg", g_dir);
	sc.output.preview_kind = SCENE_PREVIEW_LAST;
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 1, 2, 2, &wr), 0);
	uint8_t *rgb8 = malloc((size_t)w * h * 3);
	for (int k = 0; k < n; k++) {
		int v = k % 251;
		uint16_t *img = make_gray(w, h, (uint16_t)(v * 257));
		memset(rgb8, v, (size_t)w * h * 3);
		struct out_frame8 f = {.index = k, .w = w, .h = h};
		if (as8)
			f.rgb8 = rgb8;
		else
			f.rgb16 = img;
		ck_assert_int_eq(out_writer_push8(wr, &f), 0);
		free(img);
	}
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	assert_frames_complete(sc.output.png_dir, n);
	for (int k = 0; k < n; k++) {
		char path[SCENE_PATH_MAX + 32];
		int rw, rh, rd;
		snprintf(path, sizeof path, "%s/frame_%05d.png", sc.output.png_dir, k);
		uint16_t *b = read_png(path, &rw, &rh, &rd);
		ck_assert_int_eq(rd, 8);
		ck_assert_msg(b[0] == k % 251 && b[(size_t)w * h * 3 - 1] == k % 251,
			      "frame %d holds %d", k, b[0]);
		free(b);
	}
	ck_assert(file_exists(sc.output.preview));
	free(rgb8);
	rm_tree(g_dir);
}

START_TEST(pool_tiny_queue_keeps_every_frame) { tiny_queue_case(0); }
END_TEST
START_TEST(pool_tiny_queue_keeps_every_frame_rgb8) { tiny_queue_case(1); }
END_TEST

START_TEST(pool_close_without_frames)
{
	make_tmpdir();
	struct scene sc;
	scene_for(&sc, 64, 48, 10);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/none", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 4, 4, 8, &wr), 0);
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	ck_assert_ptr_null(wr);
	ck_assert_int_eq(count_files(sc.output.png_dir, ""), 2);
	ck_assert_int_eq(out_writer_open(&sc, 1, &wr), 0); /* default pool size */
	ck_assert_int_eq(out_writer_close(&wr, 0, 0), 0);
	ck_assert_int_eq(count_files(sc.output.png_dir, ""), 2);
	rm_tree(g_dir);
}
END_TEST

/* ---- failures: stderr is captured to count the messages ---- */
static int capture_stderr(const char *path)
{
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

/* Restore stderr; the number of "error:" lines captured, the first in
 * first (cap bytes). */
static int restore_stderr(int saved, const char *path, char *first, size_t cap)
{
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[8192];
	int n = 0;
	first[0] = '\0';
	while (fgets(line, sizeof line, f))
		if (strstr(line, "error:") && n++ == 0)
			snprintf(first, cap, "%s", line);
	fclose(f);
	return n;
}

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

/* A full disk from frame 10 on (a file size limit: flat frames fit, noise
 * does not): the failure is logged once naming a frame file, push and
 * close report it, and nothing is left: neither partial files nor the
 * frames 0..9 written before (a failed run removes its frames). Runs in
 * Check's forked child, so the limit stays there. */
START_TEST(pool_full_disk_mid_run_reported_once)
{
	make_tmpdir();
	char log[300];
	snprintf(log, sizeof log, "%s.log", g_dir);
	signal(SIGXFSZ, SIG_IGN);
	struct scene sc;
	const int w = 160, h = 96; /* 92 KB of noise per 16-bit PNG */
	scene_for(&sc, w, h, 200);
	sc.output.png_depth = 16;
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/fr", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 2, 3, 4, &wr), 0);
	int saved = capture_stderr(log);
	struct rlimit rl = {60000, 60000};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	int err = 0, k;
	for (k = 0; k < 200 && !err; k++) {
		uint16_t *img = k < 10 ? make_gray(w, h, 1000) : make_noise(w, h, (uint32_t)k);
		struct out_frame f = {k, w, h, img};
		err = out_writer_push(wr, &f);
		free(img);
	}
	int cerr = out_writer_close(&wr, 1, 0);
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &rl);
	char first[8192];
	int nerr = restore_stderr(saved, log, first, sizeof first);
	ck_assert_int_eq(err, NB_ERUNTIME);
	ck_assert_int_eq(cerr, NB_ERUNTIME);
	ck_assert_msg(nerr == 1, "%d error lines, first: %s", nerr, first);
	ck_assert_msg(strstr(first, sc.output.png_dir) && strstr(first, "/frame_000") &&
			      strstr(first, ".png: ") && strstr(first, "File too large"),
		      "message: %s", first);
	ck_assert_int_eq(count_files(sc.output.png_dir, "frame_"), 0);
	ck_assert_int_eq(count_files(sc.output.png_dir, "partial"), 0);
	unlink(log);
	rm_tree(g_dir);
}
END_TEST

/* The directory disappears after open: the next frame fails, once, with
 * its name; push stops taking frames within a bounded number; close
 * returns the error. */
START_TEST(pool_dir_removed_reported_once)
{
	make_tmpdir();
	char log[300];
	snprintf(log, sizeof log, "%s.log", g_dir);
	struct scene sc;
	const int w = 32, h = 16;
	scene_for(&sc, w, h, 1000);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/gone", g_dir);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 2, 3, 3, &wr), 0);
	int saved = capture_stderr(log);
	ck_assert_int_eq(rmdir(sc.output.png_dir), 0); /* empty: no frame yet */
	uint16_t *img = make_gray(w, h, 5000);
	int err = 0, k;
	for (k = 0; k < 1000 && !err; k++) {
		struct out_frame f = {k, w, h, img};
		err = out_writer_push(wr, &f);
	}
	free(img);
	int cerr = out_writer_close(&wr, 1, 0);
	char first[8192];
	int nerr = restore_stderr(saved, log, first, sizeof first);
	ck_assert_int_eq(err, NB_ERUNTIME);
	/* ring 2 + pool 3 + the writer's and the producer's frame in hand */
	ck_assert_int_le(k, 2 + 3 + 3);
	ck_assert_int_eq(cerr, NB_ERUNTIME);
	ck_assert_msg(nerr == 1, "%d error lines, first: %s", nerr, first);
	/* Whichever worker failed first: frame 0 or one beside it. */
	ck_assert_msg(strstr(first, "/gone/frame_0000") && strstr(first, ".png: ") &&
			      strstr(first, "No such file or directory"),
		      "message: %s", first);
	unlink(log);
	rm_tree(g_dir);
}
END_TEST

/* ---- benchmark (NB_LONG): frames/s of the writer, 1080p 8-bit PNG ---- */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A star field: dark sky with a faint smooth glow and a few thousand
 * bright points, like a rendered frame. */
static uint16_t *star_field(int w, int h, int k)
{
	uint16_t *p = malloc((size_t)w * h * 3 * sizeof *p);
	ck_assert_ptr_nonnull(p);
	uint32_t seed = 12345u + (uint32_t)k;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double dx = (x - w / 2.0) / w, dy = (y - h / 2.0) / h;
			seed = seed * 1664525u + 1013904223u;
			double g = 9000.0 / (1.0 + 40.0 * (dx * dx + dy * dy)) + (seed >> 24);
			for (int c = 0; c < 3; c++)
				p[((size_t)y * w + x) * 3 + c] = (uint16_t)(g * (0.8 + 0.1 * c));
		}
	for (int s = 0; s < 5000; s++) {
		seed = seed * 1664525u + 1013904223u;
		size_t i = (size_t)(seed % ((uint32_t)w * h)) * 3;
		p[i] = p[i + 1] = p[i + 2] = 60000;
	}
	return p;
}

static double writer_fps(int threads, int frames, int video)
{
	make_tmpdir();
	struct scene sc;
	const int w = 1920, h = 1080;
	scene_for(&sc, w, h, frames);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/b", g_dir);
	if (video) /* x264 on the writer thread, as in a run */
		snprintf(sc.output.video, sizeof sc.output.video, "%s/b.mp4", g_dir);
	uint16_t *img[4];
	for (int i = 0; i < 4; i++)
		img[i] = star_field(w, h, i);
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_png(&sc, 4, threads, 0, &wr), 0);
	double t0 = now_s();
	for (int k = 0; k < frames; k++) {
		struct out_frame f = {k, w, h, img[k % 4]};
		ck_assert_int_eq(out_writer_push(wr, &f), 0);
	}
	double png_s = out_writer_png_seconds(wr);
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	double t = now_s() - t0;
	assert_frames_complete(sc.output.png_dir, frames);
	fprintf(stdout, "pool bench: 1920x1080 8-bit PNG%s, %d frames, %d worker(s): %.2f s, %.2f frames/s (PNG about %.1f ms/frame on a worker)\n",
		video ? " + H.264" : "", frames, threads, t, frames / t, png_s * 1e3 / frames);
	for (int i = 0; i < 4; i++)
		free(img[i]);
	rm_tree(g_dir);
	return frames / t;
}

START_TEST(pool_bench_1080p)
{
	if (!nb_long_tests())
		return;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double f1 = writer_fps(1, 30, 0), f2 = writer_fps(2, 30, 0);
	fprintf(stdout, "pool bench: %ld CPUs; PNG alone, 2 workers / 1 worker = %.2fx\n", cpus, f2 / f1);
	f1 = writer_fps(1, 30, 1), f2 = writer_fps(2, 30, 1);
	fprintf(stdout, "pool bench: %ld CPUs; PNG + H.264, 2 workers / 1 worker = %.2fx\n", cpus, f2 / f1);
	fflush(stdout);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output_pool");
	TCase *tc = tcase_create("pool");
	tcase_set_timeout(tc, 120);
	log_set_level(LOG_QUIET);
	tcase_add_test(tc, pool_png8_matches_serial);
	tcase_add_test(tc, pool_png16_matches_serial);
	tcase_add_test(tc, pool_png8_from_rgb8_matches_serial);
	tcase_add_test(tc, pool_tiny_queue_keeps_every_frame);
	tcase_add_test(tc, pool_tiny_queue_keeps_every_frame_rgb8);
	tcase_add_test(tc, pool_close_without_frames);
	tcase_add_test(tc, pool_full_disk_mid_run_reported_once);
	tcase_add_test(tc, pool_dir_removed_reported_once);
	tcase_add_test(tc, pool_bench_1080p);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
