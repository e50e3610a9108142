/* frame.c - nbody-bench frame: milliseconds per frame of each CPU stage
 * between the simulation and the disk, at 1080p and 4K, for Plummer
 * spheres of 100k and 1M bodies:
 *
 *   splat      render_splat of every body (OpenMP)
 *   tonemap    render_tonemap to 16-bit RGB
 *   convert    swscale RGB48 -> YUV420P, BT.709 limited (as output/mp4.c)
 *   encode     libx264 alone on pre-converted frames (ultrafast, veryfast)
 *   mp4        out_mp4_write: convert + encode + mux, veryfast
 *   png        out_png_write_file: level 1 without filters vs libpng defaults
 *
 *   nbody-bench frame [--sizes 1080p,4k] [--n 100000,1000000] [--repeats 5]
 *                     [--dir /tmp]
 *
 * Each number is the median over --repeats runs after one warm-up. The
 * encoder is pipelined (lookahead), so its number is the time for a clip of
 * ENC_FRAMES frames, flush included, divided by ENC_FRAMES; the frames are
 * renders from a camera turning 0.5 degrees per frame, so motion search has
 * real work. convert/encode/mp4/png use the 1M-body picture when it is in
 * the list (the larger N), since their cost depends on the picture only. */
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../output/out_internal.h"
#include "../output/output.h"
#include "../render/render.h"
#include "../sim/sim.h"
#include "bench.h"

#define ENC_FRAMES 16 /* frames per encoder clip */
#define ENC_VIEWS 8   /* distinct pictures cycled through the clip */
#define MAX_LIST 8

/* CPU seconds of the whole process (all threads): next to wall time, it
 * shows when other programs were competing for the cores. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One table line from per-repeat wall and CPU seconds per frame. */
static void row(const char *size, const char *n, const char *stage, double *t, double *tc,
		int reps, const char *note)
{
	double ms = 1e3 * bench_median(t, reps), cms = 1e3 * bench_median(tc, reps);
	printf("| %-5s | %-4s | %-30s | %8.1f | %6.1f | %8.1f | %s |\n", size, n, stage, ms,
	       ms > 0 ? 1000.0 / ms : 0.0, cms, note);
	fflush(stdout);
}

/* A scene with the defaults the renderer needs (no scene file involved). */
static void bench_scene(struct scene *sc, int w, int h)
{
	memset(sc, 0, sizeof *sc);
	sc->units = SCENE_UNITS_NBODY;
	sc->render.width = w;
	sc->render.height = h;
	sc->render.exposure = 1.0;
	sc->render.gamma = 2.2;
	sc->render.tonemap = SCENE_TONEMAP_ASINH;
	sc->render.mode = SCENE_COLOR_COMPONENTS;
	sc->render.colormap = SCENE_CMAP_MAGMA;
	sc->render.kernel = SCENE_KERNEL_CUBIC;
	sc->render.smoothing = 0.02;
	sc->output.frames = 1;
	sc->output.fps = 30;
}

/* Camera at (0,-8,3) looking at the origin, turned deg degrees about z. */
static void bench_camera(struct render_camera *cam, double deg)
{
	double a = deg * M_PI / 180.0;
	memset(cam, 0, sizeof *cam);
	cam->pos[0] = 8.0 * sin(a);
	cam->pos[1] = -8.0 * cos(a);
	cam->pos[2] = 3.0;
	cam->up[2] = 1.0;
	cam->fov = 40.0;
}

/* ---- encoder alone ---- */

static AVCodecContext *open_x264(int w, int h, const char *preset)
{
	const AVCodec *codec = avcodec_find_encoder_by_name("libx264");
	if (!codec)
		return NULL;
	AVCodecContext *c = avcodec_alloc_context3(codec);
	if (!c)
		return NULL;
	c->width = w;
	c->height = h;
	c->time_base = (AVRational){1, 30};
	c->framerate = (AVRational){30, 1};
	c->pix_fmt = AV_PIX_FMT_YUV420P;
	c->thread_count = 0;
	av_opt_set(c->priv_data, "preset", preset, 0);
	av_opt_set(c->priv_data, "crf", "23", 0);
	if (avcodec_open2(c, codec, NULL) < 0)
		avcodec_free_context(&c);
	return c;
}

/* Encode a clip of ENC_FRAMES frames cycling through yuv[]; seconds. */
static double time_encode(AVFrame **yuv, int w, int h, const char *preset, long *bytes,
			  double *cpu)
{
	AVCodecContext *c = open_x264(w, h, preset);
	AVPacket *pkt = av_packet_alloc();
	if (!c || !pkt) {
		avcodec_free_context(&c);
		av_packet_free(&pkt);
		return -1;
	}
	*bytes = 0;
	double t0 = log_clock_s(), c0 = cpu_s();
	for (int k = 0; k <= ENC_FRAMES; k++) {
		AVFrame *f = NULL;
		if (k < ENC_FRAMES) {
			f = yuv[k % ENC_VIEWS];
			f->pts = k;
		}
		if (avcodec_send_frame(c, f) < 0)
			break;
		while (avcodec_receive_packet(c, pkt) == 0) {
			*bytes += pkt->size;
			av_packet_unref(pkt);
		}
	}
	double t = log_clock_s() - t0;
	*cpu = cpu_s() - c0;
	av_packet_free(&pkt);
	avcodec_free_context(&c);
	return t;
}

static int parse_size(const char *s, int *w, int *h)
{
	if (strcmp(s, "1080p") == 0)
		return *w = 1920, *h = 1080, 0;
	if (strcmp(s, "4k") == 0 || strcmp(s, "4K") == 0)
		return *w = 3840, *h = 2160, 0;
	if (strcmp(s, "720p") == 0)
		return *w = 1280, *h = 720, 0;
	return sscanf(s, "%dx%d", w, h) == 2 ? 0 : -1;
}

/* One size's measurements: the timing buffers and the rendered views. */
struct frame_bench {
	const char *size, *dir;
	int w, h, reps;
	double *t, *tc; /* wall and CPU seconds per repeat */
	uint16_t *views[ENC_VIEWS];
};

/* Splat and tonemap per N; the largest N's renders fill the views. */
static int fb_render(struct frame_bench *fb, const size_t *ns, int nn)
{
	struct scene sc;
	struct render_image img = {0};
	struct sim_units u = {1, 1, 1, 1, 1};
	double *t = fb->t, *tc = fb->tc;
	int reps = fb->reps;
	bench_scene(&sc, fb->w, fb->h);
	if (render_image_alloc(&img, fb->w, fb->h) != 0)
		return 1;
	for (int in = 0; in < nn; in++) {
		struct sim_state st = {0};
		char nlabel[16];
		snprintf(nlabel, sizeof nlabel, ns[in] >= 1000000 ? "%zuM" : "%zuk",
			 ns[in] >= 1000000 ? ns[in] / 1000000 : ns[in] / 1000);
		if (sim_state_alloc(&st, ns[in], 1) != 0)
			goto fail;
		st.comps[0].color[0] = 1.0f, st.comps[0].color[1] = 0.85f, st.comps[0].color[2] = 0.6f;
		st.comps[0].count = st.n;
		sim_ic_plummer(&st, 0, st.n, 1.0, 1.0, 20.0, 7, 0);
		struct render_camera cam;
		bench_camera(&cam, 0.0);
		for (int r = -1; r < reps; r++) {
			double t0 = log_clock_s(), c0 = cpu_s();
			render_image_clear(&img);
			if (render_splat(&sc, &cam, &st, &u, &img) != 0) {
				sim_state_free(&st);
				goto fail;
			}
			if (r >= 0)
				t[r] = log_clock_s() - t0, tc[r] = cpu_s() - c0;
		}
		row(fb->size, nlabel, "splat", t, tc, reps, "");
		for (int r = -1; r < reps; r++) {
			double t0 = log_clock_s(), c0 = cpu_s();
			render_tonemap(&sc, &img, fb->views[0]);
			if (r >= 0)
				t[r] = log_clock_s() - t0, tc[r] = cpu_s() - c0;
		}
		row(fb->size, nlabel, "tonemap", t, tc, reps, "");
		if (in == nn - 1) {
			for (int v = 1; v < ENC_VIEWS; v++) {
				bench_camera(&cam, 0.5 * v);
				render_image_clear(&img);
				render_splat(&sc, &cam, &st, &u, &img);
				render_tonemap(&sc, &img, fb->views[v]);
			}
		}
		sim_state_free(&st);
	}
	render_image_free(&img);
	return 0;
fail:
	render_image_free(&img);
	return 1;
}

/* Convert the views to YUV[] with exactly the converter output/mp4.c builds. */
static int fb_convert(struct frame_bench *fb, AVFrame **yuv)
{
	int w = fb->w, h = fb->h;
	struct SwsContext *sws = sws_getContext(w, h, AV_PIX_FMT_RGB48, w, h, AV_PIX_FMT_YUV420P,
						SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
	if (!sws)
		return 1;
	const int *coef = sws_getCoefficients(SWS_CS_ITU709);
	sws_setColorspaceDetails(sws, coef, 1, coef, 0, 0, 1 << 16, 1 << 16);
	for (int v = 0; v < ENC_VIEWS; v++) {
		yuv[v] = av_frame_alloc();
		if (!yuv[v])
			goto fail;
		yuv[v]->format = AV_PIX_FMT_YUV420P;
		yuv[v]->width = w;
		yuv[v]->height = h;
		if (av_frame_get_buffer(yuv[v], 0) < 0)
			goto fail;
	}
	for (int r = -1; r < fb->reps; r++) {
		double t0 = log_clock_s(), c0 = cpu_s();
		for (int v = 0; v < ENC_VIEWS; v++) {
			const uint8_t *src[1] = {(const uint8_t *)fb->views[v]};
			const int stride[1] = {w * 6};
			sws_scale(sws, src, stride, 0, h, yuv[v]->data, yuv[v]->linesize);
		}
		if (r >= 0)
			fb->t[r] = (log_clock_s() - t0) / ENC_VIEWS, fb->tc[r] = (cpu_s() - c0) / ENC_VIEWS;
	}
	row(fb->size, "", "convert (swscale)", fb->t, fb->tc, fb->reps, "RGB48 -> yuv420p BT.709");
	sws_freeContext(sws);
	return 0;
fail:
	sws_freeContext(sws);
	return 1;
}

/* libx264 alone on the converted frames, at two presets. */
static int fb_encode(struct frame_bench *fb, AVFrame **yuv)
{
	const char *presets[] = {"ultrafast", "veryfast"};
	for (int p = 0; p < 2; p++) {
		long bytes = 0;
		for (int r = -1; r < fb->reps; r++) {
			double cs, s = time_encode(yuv, fb->w, fb->h, presets[p], &bytes, &cs);
			if (s < 0) {
				fprintf(stderr, "nbody-bench: frame: cannot open libx264 %s\n",
					presets[p]);
				return 1;
			}
			if (r >= 0)
				fb->t[r] = s / ENC_FRAMES, fb->tc[r] = cs / ENC_FRAMES;
		}
		char stage[64], note[64];
		snprintf(stage, sizeof stage, "encode x264 %s", presets[p]);
		snprintf(note, sizeof note, "crf 23, %.0f KB/frame", bytes / 1024.0 / ENC_FRAMES);
		row(fb->size, "", stage, fb->t, fb->tc, fb->reps, note);
	}
	return 0;
}

/* The whole MP4 path as the writer thread runs it. */
static int fb_mp4(struct frame_bench *fb)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/nb-bench-frame.mp4", fb->dir);
	for (int r = -1; r < fb->reps; r++) {
		struct out_mp4 *m = NULL;
		if (out_mp4_open(&m, path, fb->w, fb->h, 30, SCENE_CODEC_H264, 23, "veryfast") != 0)
			return 1;
		double t0 = log_clock_s(), c0 = cpu_s();
		int e = 0;
		for (int k = 0; k < ENC_FRAMES && !e; k++)
			e = out_mp4_write(m, fb->views[k % ENC_VIEWS]);
		e = out_mp4_close(&m, !e) || e;
		if (e)
			return 1;
		if (r >= 0)
			fb->t[r] = (log_clock_s() - t0) / ENC_FRAMES,
			fb->tc[r] = (cpu_s() - c0) / ENC_FRAMES;
	}
	unlink(path);
	row(fb->size, "", "mp4 total (veryfast)", fb->t, fb->tc, fb->reps, "convert+encode+mux");
	return 0;
}

/* PNG settings. */
static int fb_png(struct frame_bench *fb)
{
	const struct {
		const char *name;
		int depth, level, filters;
	} pngs[] = {
		{"png 8-bit level 1, no filter", 8, 1, 0},
		{"png 8-bit libpng defaults", 8, -1, 1},
		{"png 16-bit level 1, no filter", 16, 1, 0},
		{"png 16-bit libpng defaults", 16, -1, 1},
	};
	char path[4096];
	snprintf(path, sizeof path, "%s/nb-bench-frame.png", fb->dir);
	for (size_t p = 0; p < sizeof pngs / sizeof pngs[0]; p++) {
		struct stat sb = {0};
		for (int r = -1; r < fb->reps; r++) {
			double t0 = log_clock_s(), c0 = cpu_s();
			if (out_png_write_file(path, fb->w, fb->h, pngs[p].depth,
					       fb->views[(r + 1) % ENC_VIEWS], pngs[p].level,
					       pngs[p].filters) != 0)
				return 1;
			if (r >= 0)
				fb->t[r] = log_clock_s() - t0, fb->tc[r] = cpu_s() - c0;
		}
		stat(path, &sb);
		char note[64];
		snprintf(note, sizeof note, "%.0f KB/frame", (double)sb.st_size / 1024.0);
		row(fb->size, "", pngs[p].name, fb->t, fb->tc, fb->reps, note);
	}
	unlink(path);
	return 0;
}

/* All stages at one size. */
static int bench_size(const char *size, int w, int h, const size_t *ns, int nn, int reps,
		      const char *dir)
{
	struct frame_bench fb = {.size = size, .dir = dir, .w = w, .h = h, .reps = reps};
	size_t npix = (size_t)w * h * 3;
	AVFrame *yuv[ENC_VIEWS] = {0};
	int err = 1;
	fb.t = calloc((size_t)reps, sizeof *fb.t);
	fb.tc = calloc((size_t)reps, sizeof *fb.tc);
	if (!fb.t || !fb.tc)
		goto end;
	for (int v = 0; v < ENC_VIEWS; v++)
		if (!(fb.views[v] = malloc(npix * sizeof(uint16_t))))
			goto end;
	if (fb_render(&fb, ns, nn) || fb_convert(&fb, yuv) || fb_encode(&fb, yuv) ||
	    fb_mp4(&fb) || fb_png(&fb))
		goto end;
	err = 0;
end:
	for (int v = 0; v < ENC_VIEWS; v++)
		av_frame_free(&yuv[v]);
	for (int v = 0; v < ENC_VIEWS; v++)
		free(fb.views[v]);
	free(fb.t);
	free(fb.tc);
	if (err)
		fprintf(stderr, "nbody-bench: frame: %s failed\n", size);
	return err;
}

int bench_frame(int argc, char **argv)
{
	const char *sizes = "1080p,4k", *dir = "/tmp";
	size_t ns[MAX_LIST] = {100000, 1000000};
	int nn = 2, reps = 5;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--sizes") == 0 && v)
			sizes = v, i++;
		else if (strcmp(a, "--n") == 0 && v && (nn = bench_parse_sizes(v, ns, MAX_LIST, 1e9)) > 0)
			i++;
		else if (strcmp(a, "--repeats") == 0 && v && (reps = atoi(v)) > 0)
			i++;
		else if (strcmp(a, "--dir") == 0 && v)
			dir = v, i++;
		else {
			bench_usage(stderr, "frame");
			return 2;
		}
	}
	log_set_level(LOG_QUIET);
	av_log_set_level(AV_LOG_ERROR); /* x264 prints statistics at info level */
	double load = -1;
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (fscanf(lf, "%lf", &load) != 1)
			load = -1;
		fclose(lf);
	}
	printf("nbody-bench frame: median of %d repeats; %ld cores online; load average %.2f\n",
	       reps, sysconf(_SC_NPROCESSORS_ONLN), load);
	printf("cpu ms = process CPU time (all threads) per frame; wall >> cpu/cores means "
	       "other programs shared the cores\n\n");
	printf("| size  | N    | stage                          | ms/frame | fps    | cpu ms   | note |\n");
	printf("|-------|------|--------------------------------|----------|--------|----------|------|\n");
	char buf[256];
	snprintf(buf, sizeof buf, "%s", sizes);
	for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		int w, h;
		if (parse_size(s, &w, &h) != 0 || w <= 0 || h <= 0 || w % 2 || h % 2) {
			fprintf(stderr, "nbody-bench: frame: bad size '%s' (1080p, 4k, 720p or "
					"WxH, even)\n", s);
			return 2;
		}
		if (bench_size(s, w, h, ns, nn, reps, dir) != 0)
			return 1;
	}
	return 0;
}
