/* test_pipeline.c - the overlapped frame pipeline (app/frames.c) and the
 * writer's 8-bit path (out_writer_push8, out_mp4_write_yuv).
 *
 * Everywhere: frames given as YUV420P planes (render_rgb16_to_yuv420p) and
 * RGB8 reach the MP4 and the PNGs unchanged: every frame is there, in
 * order, and the decoded colours of flat regions (decoded here with
 * libavcodec and turned back into RGB with the BT.709 limited-range
 * formula) are the colours that went in, within 3/255; the preview of
 * RGB8 frames is the last frame.
 * On a GPU: a small scene rendered through the GPU pipeline gives an MP4
 * with all frames, and its frame 0 PNG (16 bit) is within 2 LSB of the CPU
 * path's (same initial state); without one that case is neither run nor
 * counted (NB_GPU_TCASE prints SKIP).
 *   make BUILD=build build/tests/test_pipeline && build/tests/test_pipeline */
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stb_image.h>
#pragma GCC diagnostic pop

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "../sim/cuda/gpu.h"
#include "../render/yuv.h"
#include "test_output_util.h"

/* ---- an independent reader: libavformat + libavcodec ---- */

/* Decode every frame of PATH; copy up to maxf of them as YUV420P planes
 * (w*h + 2 * w/2*h/2 bytes each) into out (may be NULL). Returns the
 * number of frames decoded. */
static int decode_yuv(const char *path, int w, int h, int maxf, uint8_t *out)
{
	AVFormatContext *fmt = NULL;
	const AVCodec *dec = NULL;
	ck_assert_int_eq(avformat_open_input(&fmt, path, NULL, NULL), 0);
	ck_assert_int_ge(avformat_find_stream_info(fmt, NULL), 0);
	int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
	ck_assert_int_ge(si, 0);
	AVCodecContext *c = avcodec_alloc_context3(dec);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_ge(avcodec_parameters_to_context(c, fmt->streams[si]->codecpar), 0);
	ck_assert_int_eq(avcodec_open2(c, dec, NULL), 0);
	AVPacket *pkt = av_packet_alloc();
	AVFrame *fr = av_frame_alloc();
	const size_t fsz = (size_t)w * h * 3 / 2;
	int n = 0, eof = 0;
	while (!eof) {
		int ret = av_read_frame(fmt, pkt);
		if (ret < 0) {
			eof = 1;
			ck_assert_int_eq(avcodec_send_packet(c, NULL), 0);
		} else {
			if (pkt->stream_index == si)
				ck_assert_int_eq(avcodec_send_packet(c, pkt), 0);
			av_packet_unref(pkt);
		}
		while (avcodec_receive_frame(c, fr) == 0) {
			ck_assert_int_eq(fr->width, w);
			ck_assert_int_eq(fr->height, h);
			ck_assert_int_eq(fr->format, AV_PIX_FMT_YUV420P);
			if (out && n < maxf) {
				uint8_t *d = out + (size_t)n * fsz;
				for (int p = 0; p < 3; p++) {
					int pw = p ? w / 2 : w, ph = p ? h / 2 : h;
					for (int r = 0; r < ph; r++, d += pw)
						memcpy(d, fr->data[p] + (size_t)r * fr->linesize[p], (size_t)pw);
				}
			}
			n++;
		}
	}
	av_frame_free(&fr);
	av_packet_free(&pkt);
	avcodec_free_context(&c);
	avformat_close_input(&fmt);
	return n;
}

/* Mean RGB (0..255) of rectangle r of a decoded YUV420P frame: BT.709
 * limited range inverted from its definition (render/yuv.h): Y' = (Y-16)/219,
 * U' = (U-128)/224, V' = (V-128)/224; R = Y' + 2(1-Kr)V', B = Y' + 2(1-Kb)U',
 * G = (Y' - Kr R - Kb B)/Kg. */
static void yuv_region_rgb(const uint8_t *f, int w, int h, struct rect r, double rgb[3])
{
	const uint8_t *y = f, *u = f + (size_t)w * h, *v = u + (size_t)w * h / 4;
	const double kr = 0.2126, kb = 0.0722, kg = 1 - kr - kb;
	double s[3] = {0, 0, 0};
	long n = 0;
	for (int j = r.y0; j < r.y1; j++)
		for (int i = r.x0; i < r.x1; i++, n++) {
			double yy = (y[(size_t)j * w + i] - 16) / 219.0;
			double uu = (u[(size_t)(j / 2) * (w / 2) + i / 2] - 128) / 224.0;
			double vv = (v[(size_t)(j / 2) * (w / 2) + i / 2] - 128) / 224.0;
			double R = yy + 2 * (1 - kr) * vv, B = yy + 2 * (1 - kb) * uu;
			double G = (yy - kr * R - kb * B) / kg;
			s[0] += 255 * R, s[1] += 255 * G, s[2] += 255 * B;
		}
	for (int c = 0; c < 3; c++)
		rgb[c] = s[c] / (double)n;
}

/* ---- the writer's 8-bit path (runs everywhere) ---- */

#define YW 128
#define YH 96
#define YFRAMES 5

/* Frame k: left half colour A_k (red steps with k: order shows), right
 * half colour B, as display values in [0, 1]. */
static void colour_of(int k, int right, double c[3])
{
	const double a[3] = {0.15 + 0.15 * k, 0.5, 0.8}, b[3] = {0.9, 0.3, 0.1};
	for (int i = 0; i < 3; i++)
		c[i] = right ? b[i] : a[i];
}

START_TEST(writer_yuv_planes_make_mp4)
{
	struct scene sc;
	char video[512], frames[512];
	make_tmpdir();
	scene_for(&sc, YW, YH, YFRAMES);
	snprintf(video, sizeof video, "%s/yuv.mp4", g_dir);
	snprintf(frames, sizeof frames, "%s/frames", g_dir);
	snprintf(sc.output.video, sizeof sc.output.video, "%s", video);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s", frames);
	sc.output.png_depth = 8;

	struct out_writer *w = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 2, &w), 0);
	uint16_t *rgb16 = malloc((size_t)YW * YH * 3 * sizeof *rgb16);
	uint8_t *yuv = malloc((size_t)YW * YH * 3 / 2);
	uint8_t *rgb8[YFRAMES];
	for (int k = 0; k < YFRAMES; k++) {
		for (int j = 0; j < YH; j++)
			for (int i = 0; i < YW; i++) {
				double c[3];
				colour_of(k, i >= YW / 2, c);
				for (int ch = 0; ch < 3; ch++)
					rgb16[((size_t)j * YW + i) * 3 + ch] = (uint16_t)(c[ch] * 65535 + 0.5);
			}
		render_rgb16_to_yuv420p(rgb16, YW, YH, yuv, yuv + YW * YH, yuv + YW * YH * 5 / 4);
		/* RGB8 for the PNGs: an asymmetric texture, so the PNG must be
		 * exactly these bytes (no flip, no channel swap) */
		rgb8[k] = malloc((size_t)YW * YH * 3);
		for (int p = 0; p < YW * YH * 3; p++)
			rgb8[k][p] = (uint8_t)((p * 7 + k * 31 + (p / (YW * 3)) * 3) & 0xff);
		struct out_frame8 f = {.index = k, .w = YW, .h = YH, .y = yuv, .u = yuv + YW * YH,
				       .v = yuv + YW * YH * 5 / 4, .rgb8 = rgb8[k]};
		ck_assert_int_eq(out_writer_push8(w, &f), 0);
	}
	ck_assert_int_eq(out_writer_close(&w, 1, 0), 0);

	/* every frame, in order, with its colours */
	uint8_t *dec = malloc((size_t)YFRAMES * YW * YH * 3 / 2);
	ck_assert_int_eq(decode_yuv(video, YW, YH, YFRAMES, dec), YFRAMES);
	const struct rect left = {8, 8, YW / 2 - 8, YH - 8}, right = {YW / 2 + 8, 8, YW - 8, YH - 8};
	for (int k = 0; k < YFRAMES; k++) {
		const uint8_t *fk = dec + (size_t)k * YW * YH * 3 / 2;
		for (int side = 0; side < 2; side++) {
			double got[3], want[3];
			yuv_region_rgb(fk, YW, YH, side ? right : left, got);
			colour_of(k, side, want);
			for (int ch = 0; ch < 3; ch++)
				ck_assert_msg(fabs(got[ch] - 255 * want[ch]) <= 3.0,
					      "frame %d %s channel %d: decoded %.2f, put in %.2f", k,
					      side ? "right" : "left", ch, got[ch], 255 * want[ch]);
		}
	}
	/* PNGs from RGB8: all there, exact */
	ck_assert_int_eq(count_files(frames, "frame_"), YFRAMES);
	for (int k = 0; k < YFRAMES; k++) {
		char path[600];
		int pw, ph, depth;
		snprintf(path, sizeof path, "%s/frame_%05d.png", frames, k);
		uint16_t *png = read_png(path, &pw, &ph, &depth);
		ck_assert_int_eq(pw, YW);
		ck_assert_int_eq(ph, YH);
		ck_assert_int_eq(depth, 8);
		for (int p = 0; p < YW * YH * 3; p++)
			ck_assert_msg(png[p] == rgb8[k][p], "frame %d byte %d: %u, pushed %u", k, p,
				      png[p], rgb8[k][p]);
		free(png);
		free(rgb8[k]);
	}
	free(dec);
	free(yuv);
	free(rgb16);
	rm_tree(g_dir);
}
END_TEST

/* The preview of RGB8 frames is the last frame: two grey frames, then the
 * F picture (red bar, green arm, blue arm), read back from the JPEG. */
START_TEST(writer_preview_from_rgb8_is_last_frame)
{
	struct scene sc;
	const int w = 96, h = 64;
	make_tmpdir();
	scene_for(&sc, w, h, 3);
	snprintf(sc.output.preview, sizeof sc.output.preview, "%s/last.jpg", g_dir);
	sc.output.preview_kind = SCENE_PREVIEW_LAST;
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 1, &wr), 0);
	uint8_t *rgb8 = malloc((size_t)w * h * 3);
	for (int k = 0; k < 3; k++) {
		uint16_t *img = k == 2 ? make_f(w, h) : make_gray(w, h, 30000);
		for (int p = 0; p < w * h * 3; p++)
			rgb8[p] = (uint8_t)(img[p] >> 8);
		free(img);
		struct out_frame8 f = {.index = k, .w = w, .h = h, .rgb8 = rgb8};
		ck_assert_int_eq(out_writer_push8(wr, &f), 0);
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
	free(rgb8);
	rm_tree(g_dir);
}
END_TEST

/* PNG depth 16 needs 16-bit RGB: a frame of planes alone is refused at
 * push, naming the reason, and the run fails cleanly. */
START_TEST(writer_refuses_frame_it_cannot_use)
{
	struct scene sc;
	make_tmpdir();
	scene_for(&sc, 32, 16, 1);
	snprintf(sc.output.png_dir, sizeof sc.output.png_dir, "%s/frames", g_dir);
	sc.output.png_depth = 16;
	struct out_writer *w = NULL;
	ck_assert_int_eq(out_writer_open(&sc, 2, &w), 0);
	uint8_t *buf = calloc(32 * 16 * 3, 1);
	struct out_frame8 f = {.index = 0, .w = 32, .h = 16, .y = buf, .u = buf, .v = buf,
			       .rgb8 = buf};
	ck_assert_int_eq(out_writer_push8(w, &f), NB_ERUNTIME);
	ck_assert_int_eq(out_writer_close(&w, 0, 0), 0);
	ck_assert_int_eq(count_files(sc.output.png_dir, "frame_"), 0);
	free(buf);
	rm_tree(g_dir);
}
END_TEST

/* ---- the GPU pipeline against the CPU path ---- */

#define GW 192
#define GH 108
#define GFRAMES 6

static const char *gpu_scene =
	"units: nbody\n"
	"seed: 11\n"
	"simulation: {solver: direct, softening: 0.05, dt: 0.002, steps_per_frame: 5}\n"
	"bodies:\n"
	"  - {name: a, model: plummer, count: 3000, mass: 1.0, scale: 0.8,\n"
	"     position: [-1, 0, 0], velocity: [0, 0.2, 0], color: [1.0, 0.7, 0.4]}\n"
	"  - {name: b, model: plummer, count: 1500, mass: 0.5, scale: 0.5,\n"
	"     position: [1.5, 0, 0], velocity: [0, -0.4, 0], color: [0.4, 0.6, 1.0]}\n"
	"camera:\n"
	"  fov: 40\n"
	"  follow: a\n"
	"  keys: [{frame: 0, position: [0, -9, 3], target: [0, 0, 0]}]\n"
	"render: {width: 192, height: 108, smoothing: 0.12, tonemap: asinh}\n"
	"output: {frames: 6, fps: 30, png_depth: 16}\n";

/* Run the program on the scene with BACKEND into DIR/BACKEND.* outputs. */
static void run_backend(const char *scene, const char *backend)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "'%s' '%s' --quiet --backend %s --set output.video=%s/%s.mp4 "
		 "--set output.png_dir=%s/%s-frames --set output.stats=%s/%s-stats.csv",
		 nb_bin(), scene, backend, g_dir, backend, g_dir, backend, g_dir, backend);
	int ws = system(cmd);
	ck_assert_msg(ws == 0, "%s: exit status %d", cmd, ws);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	int n = 0, c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

START_TEST(gpu_pipeline_matches_cpu_path)
{
	char scene[512], path[600];
	make_tmpdir();
	snprintf(scene, sizeof scene, "%s/scene.yaml", g_dir);
	FILE *f = fopen(scene, "w");
	ck_assert_ptr_nonnull(f);
	fputs(gpu_scene, f);
	fclose(f);
	run_backend(scene, "cuda");
	run_backend(scene, "cpu");

	/* all frames: video (decoded), PNGs, statistics rows */
	snprintf(path, sizeof path, "%s/cuda.mp4", g_dir);
	ck_assert_int_eq(decode_yuv(path, GW, GH, 0, NULL), GFRAMES);
	snprintf(path, sizeof path, "%s/cuda-frames", g_dir);
	ck_assert_int_eq(count_files(path, "frame_"), GFRAMES);
	snprintf(path, sizeof path, "%s/cuda-stats.csv", g_dir);
	ck_assert_int_eq(count_lines(path), GFRAMES + 1);

	/* frame 0 is the same state on both paths: within 2 LSB of 16 bits */
	int w0, h0, d0, w1, h1, d1, worst = 0;
	snprintf(path, sizeof path, "%s/cuda-frames/frame_00000.png", g_dir);
	uint16_t *gpu = read_png(path, &w0, &h0, &d0);
	snprintf(path, sizeof path, "%s/cpu-frames/frame_00000.png", g_dir);
	uint16_t *cpu = read_png(path, &w1, &h1, &d1);
	ck_assert(w0 == GW && h0 == GH && d0 == 16 && w1 == GW && h1 == GH && d1 == 16);
	double sum = 0;
	for (int p = 0; p < GW * GH * 3; p++) {
		int dd = abs((int)gpu[p] - (int)cpu[p]);
		worst = dd > worst ? dd : worst;
		sum += cpu[p];
	}
	ck_assert_msg(sum > 0.01 * 65535.0 * GW * GH * 3, "frame 0 is nearly black (mean %.0f)",
		      sum / (GW * GH * 3));
	ck_assert_msg(worst <= 2, "frame 0: GPU and CPU differ by up to %d LSB", worst);
	free(gpu);
	free(cpu);
	rm_tree(g_dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("writer8");
	/* libx264/libav run here: third-party code raises FP flags by design */
	tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
	tcase_add_test(tc, writer_yuv_planes_make_mp4);
	tcase_add_test(tc, writer_preview_from_rgb8_is_last_frame);
	tcase_add_test(tc, writer_refuses_frame_it_cannot_use);
	suite_add_tcase(s, tc);
	tc = tcase_create("gpu");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, gpu_pipeline_matches_cpu_path);
	NB_GPU_TCASE(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
