/* test_output_formats.c - output.video follows the file name through
 * libav's muxers (output/video_formats.c): each container writes a file
 * that libavformat opens as that format, with the expected codec, every
 * frame and the F picture's colours where they belong; an unknown
 * extension, or h265 with a container that does not take it, is refused
 * with exit 2 before any work (--dry-run too), naming the accepted names;
 * the dry run says which container and codec a run writes. With encoders
 * hidden (NB_HIDE_ENCODERS, for tests), a .webm takes the next encoder
 * this build has, and with none left it is refused before any work (the
 * dry run too) with the containers that would work.
 *
 *   make CUDA=0 BUILD=/tmp/b /tmp/b/nbody-render /tmp/b/tests/test_output_formats
 *   NB_BIN=/tmp/b/nbody-render /tmp/b/tests/test_output_formats   (from the repository root) */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <sys/wait.h>

#include "../render/yuv.h"
#include "test_output_util.h"

/* 1 when encoder NAME is one of the comma-separated names in HIDDEN. */
static int hidden_in(const char *hidden, const char *name)
{
	char list[256];
	snprintf(list, sizeof list, ",%s,", hidden ? hidden : "");
	char item[64];
	snprintf(item, sizeof item, ",%s,", name);
	return strstr(list, item) != NULL;
}

/* The encoder a .webm file must get: the first of these this build has
 * and HIDDEN (NB_HIDE_ENCODERS's list) does not name. */
static enum AVCodecID webm_codec_hiding(const char *hidden, const char **label)
{
	static const struct {
		const char *enc, *label;
		enum AVCodecID id;
	} order[] = {{"libvpx-vp9", "VP9", AV_CODEC_ID_VP9},
		     {"libsvtav1", "AV1", AV_CODEC_ID_AV1},
		     {"libaom-av1", "AV1", AV_CODEC_ID_AV1}};
	for (int i = 0; i < 3; i++)
		if (avcodec_find_encoder_by_name(order[i].enc) && !hidden_in(hidden, order[i].enc)) {
			*label = order[i].label;
			return order[i].id;
		}
	*label = NULL;
	return AV_CODEC_ID_NONE;
}

static enum AVCodecID webm_codec(const char **label) { return webm_codec_hiding(NULL, label); }

/* Open PATH with libavformat: its demuxer's name into fmt, the video
 * stream's codec; returns the number of video packets (one per frame). */
static int probe_packets(const char *path, char *fmt, size_t n, enum AVCodecID *codec)
{
	AVFormatContext *ic = NULL;
	ck_assert_int_eq(avformat_open_input(&ic, path, NULL, NULL), 0);
	ck_assert_int_ge(avformat_find_stream_info(ic, NULL), 0);
	snprintf(fmt, n, "%s", ic->iformat->name);
	int vs = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	ck_assert_int_ge(vs, 0);
	*codec = ic->streams[vs]->codecpar->codec_id;
	AVPacket *pkt = av_packet_alloc();
	int count = 0;
	while (av_read_frame(ic, pkt) >= 0) {
		count += pkt->stream_index == vs;
		av_packet_unref(pkt);
	}
	av_packet_free(&pkt);
	avformat_close_input(&ic);
	return count;
}

/* The F picture decoded from the first frame of PATH. */
static void assert_f_picture(const char *path, int w, int h)
{
	uint8_t *rgb = decode_raw(path, 1, "rgb24", (size_t)w * h * 3);
	assert_colour(rgb, w, f_bar(w, h), 255, 0, 0, "red bar");
	assert_colour(rgb, w, f_top(w, h), 0, 255, 0, "green arm");
	assert_colour(rgb, w, f_mid(w, h), 0, 0, 255, "blue arm");
	assert_colour(rgb, w, (struct rect){w * 11 / 16, h * 7 / 16, w * 15 / 16, h * 15 / 16}, 0,
		      0, 0, "background");
	free(rgb);
}

/* Write FRAMES frames of the F picture to DIR/a.EXT, through the YUV
 * planes (yuv != 0, as the GPU hands them) or 16-bit RGB. */
static void write_f(const char *path, int w, int h, int frames, int yuv)
{
	struct out_mp4 *m = NULL;
	ck_assert_int_eq(out_mp4_open(&m, path, w, h, 10, SCENE_CODEC_H264, 12, "veryfast"), 0);
	uint16_t *img = make_f(w, h);
	uint8_t *planes = malloc((size_t)w * h * 3 / 2);
	ck_assert_ptr_nonnull(planes);
	render_rgb16_to_yuv420p(img, w, h, planes, planes + w * h, planes + w * h * 5 / 4);
	for (int i = 0; i < frames; i++)
		ck_assert_int_eq(yuv ? out_mp4_write_yuv(m, planes, planes + w * h,
							 planes + w * h * 5 / 4)
				     : out_mp4_write(m, img),
				 0);
	ck_assert_int_eq(out_mp4_close(&m, 1), 0);
	free(planes);
	free(img);
}

static const struct {
	const char *ext, *demuxer;
	enum AVCodecID codec; /* NONE: the WebM's, webm_codec */
} containers[] = {
	{"mp4", "mov,mp4,m4a,3gp,3g2,mj2", AV_CODEC_ID_H264},
	{"mkv", "matroska,webm", AV_CODEC_ID_H264},
	{"MOV", "mov,mp4,m4a,3gp,3g2,mj2", AV_CODEC_ID_H264},
	{"webm", "matroska,webm", AV_CODEC_ID_NONE},
	{"gif", "gif", AV_CODEC_ID_GIF},
};

static void container_case(int i, int yuv)
{
	const char *label;
	enum AVCodecID want = containers[i].codec ? containers[i].codec : webm_codec(&label);
	if (want == AV_CODEC_ID_NONE)
		return; /* no WebM encoder here: webm_refused_without_an_encoder's case */
	make_tmpdir();
	char path[512], fmt[64];
	const int w = 96, h = 64, frames = 7;
	snprintf(path, sizeof path, "%s/a.%s", g_dir, containers[i].ext);
	write_f(path, w, h, frames, yuv);
	enum AVCodecID got;
	ck_assert_int_eq(probe_packets(path, fmt, sizeof fmt, &got), frames);
	ck_assert_str_eq(fmt, containers[i].demuxer);
	ck_assert_msg(got == want, "%s: codec %s, expected %s", path, avcodec_get_name(got),
		      avcodec_get_name(want));
	assert_f_picture(path, w, h);
	assert_decodes_clean(path);
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	rm_tree(g_dir);
}

START_TEST(each_container_has_its_format_codec_and_frames) { container_case(_i, 0); }
END_TEST

START_TEST(each_container_takes_yuv_planes) { container_case(_i, 1); }
END_TEST

/* --resume's check (out_video_whole): the written Matroska, WebM and GIF
 * are whole; cut short by one byte or by half, each is not; MP4 and
 * QuickTime are left to the box walk (0). */
START_TEST(whole_video_check_finds_a_cut_file)
{
	const char *why = "unset", *label;
	make_tmpdir();
	char path[512];
	static const char *const own[] = {"mkv", "webm", "gif"};
	for (int i = 0; i < 3; i++) {
		if (i == 1 && webm_codec(&label) == AV_CODEC_ID_NONE)
			continue;
		snprintf(path, sizeof path, "%s/w.%s", g_dir, own[i]);
		write_f(path, 64, 48, 4, 0);
		ck_assert_int_eq(out_video_whole(path, &why), 1);
		ck_assert_msg(why == NULL, "%s: %s", path, why);
		struct stat sb;
		ck_assert_int_eq(stat(path, &sb), 0);
		for (int cut = 0; cut < 2; cut++) {
			ck_assert_int_eq(truncate(path, cut ? sb.st_size / 2 : sb.st_size - 1), 0);
			ck_assert_int_eq(out_video_whole(path, &why), 1);
			ck_assert_msg(why && strstr(why, "truncated"), "%s cut: %s", path,
				      why ? why : "whole");
			stat(path, &sb);
		}
	}
	snprintf(path, sizeof path, "%s/none.mkv", g_dir);
	ck_assert_int_eq(out_video_whole(path, &why), 1);
	ck_assert_str_eq(why, "is missing");
	snprintf(path, sizeof path, "%s/w.mp4", g_dir);
	ck_assert_int_eq(out_video_whole(path, &why), 0);
	snprintf(path, sizeof path, "%s/w.MOV", g_dir);
	ck_assert_int_eq(out_video_whole(path, &why), 0);
	rm_tree(g_dir);
}
END_TEST

START_TEST(unknown_extension_is_input_error_and_writes_nothing)
{
	make_tmpdir();
	static const char *const names[] = {"a.avi", "a", "a.mp4.part", "dir.mp4/a"};
	for (int i = 0; i < 4; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", g_dir, names[i]);
		struct out_mp4 *m = NULL;
		ck_assert_int_eq(out_mp4_open(&m, path, 64, 48, 10, SCENE_CODEC_H264, 20, "veryfast"),
				 NB_EINPUT);
		ck_assert_ptr_null(m);
		struct out_video_choice ch;
		ck_assert_int_eq(out_video_choose(path, SCENE_CODEC_H264, &ch), NB_EINPUT);
		ck_assert_str_eq(ch.key, "output.video");
		ck_assert_ptr_nonnull(strstr(ch.why, "accepted: .mp4, .mkv, .mov, .webm, .gif"));
	}
	ck_assert_int_eq(count_files(g_dir, ""), 2); /* . and .. */
	rm_tree(g_dir);
}
END_TEST

static char g_out[16384], g_err[8192];

/* Run the program on scenes/plummer.yaml with ARGS (and --dry-run when
 * DRY); stdout in g_out, stderr in g_err; the exit status. */
static int run(const char *args, int dry)
{
	char cmd[2048], of[] = "/tmp/nb_fmt_outXXXXXX", ef[] = "/tmp/nb_fmt_errXXXXXX";
	int fo = mkstemp(of), fe = mkstemp(ef);
	ck_assert(fo >= 0 && fe >= 0);
	close(fo);
	close(fe);
	snprintf(cmd, sizeof cmd, "'%s' scenes/plummer.yaml %s %s >'%s' 2>'%s'", nb_bin(), args,
		 dry ? "--dry-run" : "", of, ef);
	int ws = system(cmd);
	char *bufs[2] = {g_out, g_err};
	const char *names[2] = {of, ef};
	size_t lens[2] = {sizeof g_out, sizeof g_err};
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(names[i], "rb");
		ck_assert_ptr_nonnull(f);
		size_t n = fread(bufs[i], 1, lens[i] - 1, f);
		bufs[i][n] = '\0';
		fclose(f);
		remove(names[i]);
	}
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* A run writing video NAME (in a new directory, with a stats file) and
 * its dry run: both exit 2 with WANT in stderr, and nothing is written. */
static void refused_before_any_work(const char *name, const char *want)
{
	make_tmpdir();
	char args[1024];
	for (int dry = 1; dry >= 0; dry--) {
		snprintf(args, sizeof args,
			 "--set output.video=%s/%s --set output.stats=%s/s.csv "
			 "--set bodies.0.count=200 --set output.frames=2",
			 g_dir, name, g_dir);
		ck_assert_int_eq(run(args, dry), 2);
		ck_assert_msg(strstr(g_err, want), "stderr lacks '%s': %s", want, g_err);
		ck_assert_int_eq(count_files(g_dir, ""), 2); /* nothing written: . and .. */
	}
	rm_tree(g_dir);
}

START_TEST(program_refuses_unknown_extension_before_any_work)
{
	refused_before_any_work("clip.avi", "clip.avi': no video container is named by this "
					    "file's extension; accepted: .mp4, .mkv, .mov, .webm, .gif");
	ck_assert_ptr_nonnull(strstr(g_err, "output.video: '"));
}
END_TEST

START_TEST(program_refuses_h265_for_webm_and_gif)
{
	static const char *const exts[] = {"webm", "gif"};
	for (int i = 0; i < 2; i++) {
		char args[256];
		snprintf(args, sizeof args, "--set output.video=/tmp/nb-fmt-x.%s --set output.codec=h265",
			 exts[i]);
		ck_assert_int_eq(run(args, 1), 2);
		ck_assert_msg(strstr(g_err, "--set output.codec=h265: output.codec: ") &&
				      strstr(g_err, "h265 applies to .mp4, .mkv and .mov only"),
			      "stderr: %s", g_err);
	}
}
END_TEST

START_TEST(dry_run_names_container_and_codec)
{
	const char *vp = NULL;
	webm_codec(&vp);
	char webm[64];
	snprintf(webm, sizeof webm, "the video (WebM, %s)", vp ? vp : "?");
	const struct {
		const char *set, *what;
	} cases[] = {
		{"--set output.video=o/v.mp4", "o/v.mp4: the video (MP4, H.264)"},
		{"--set output.video=o/v.mp4 --set output.codec=h265", "o/v.mp4: the video (MP4, H.265)"},
		{"--set output.video=o/v.mkv", "o/v.mkv: the video (Matroska, H.264)"},
		{"--set output.video=o/v.mov", "o/v.mov: the video (QuickTime, H.264)"},
		{"--set output.video=o/v.webm", webm},
		{"--set output.video=o/v.gif", "o/v.gif: the video (GIF, 256 fixed colours)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (i == 4 && !vp)
			continue;
		ck_assert_int_eq(run(cases[i].set, 1), 0);
		const char *list = strstr(g_out, "# outputs");
		ck_assert_msg(strstr(g_out, cases[i].what), "%s: no '%s' in:\n%.600s", cases[i].set,
			      cases[i].what, list ? list : g_out);
	}
}
END_TEST

/* A .webm with encoders hidden takes the next one this build has, as
 * webm_codec_hiding finds it from libavcodec alone; the first case writes
 * the file and libavformat reads the expected codec and every frame. */
START_TEST(webm_takes_the_next_encoder_when_one_is_hidden)
{
	static const char *const hides[] = {"libvpx-vp9", "libsvtav1", "libvpx-vp9,libsvtav1"};
	for (int i = 0; i < 3; i++) {
		setenv("NB_HIDE_ENCODERS", hides[i], 1);
		const char *label;
		enum AVCodecID want = webm_codec_hiding(hides[i], &label);
		struct out_video_choice ch;
		int err = out_video_choose("a.webm", SCENE_CODEC_H264, &ch);
		if (want == AV_CODEC_ID_NONE) {
			ck_assert_int_eq(err, NB_EINPUT); /* this build has no other: refused */
			continue;
		}
		char what[128], expect[128];
		snprintf(expect, sizeof expect, "the video (WebM, %s)", label);
		ck_assert_msg(err == 0 && strcmp(out_video_what("a.webm", SCENE_CODEC_H264, what,
								  sizeof what),
						 expect) == 0,
			      "hiding %s: %d '%s', expected '%s'", hides[i], err, what, expect);
		if (i > 0)
			continue;
		make_tmpdir();
		char path[512], fmt[64];
		snprintf(path, sizeof path, "%s/a.webm", g_dir);
		write_f(path, 96, 64, 5, 0);
		enum AVCodecID got;
		ck_assert_int_eq(probe_packets(path, fmt, sizeof fmt, &got), 5);
		ck_assert_msg(got == want, "hiding %s: codec %s, expected %s", hides[i],
			      avcodec_get_name(got), avcodec_get_name(want));
		rm_tree(g_dir);
	}
	unsetenv("NB_HIDE_ENCODERS");
}
END_TEST

/* "; what works here: .mp4 (H.264, H.265), ..." as this build has the
 * encoders (libavcodec asked directly) less those HIDDEN names. */
static void expected_works(const char *hidden, char *buf, size_t n)
{
	static const struct {
		const char *ext, *enc[3], *label[3];
	} rows[] = {
		{".mp4", {"libx264", "libx265"}, {"H.264", "H.265"}},
		{".mkv", {"libx264", "libx265"}, {"H.264", "H.265"}},
		{".mov", {"libx264", "libx265"}, {"H.264", "H.265"}},
		{".webm", {"libvpx-vp9", "libsvtav1", "libaom-av1"}, {"VP9", "AV1", "AV1"}},
		{".gif", {"gif"}, {"GIF, 256 fixed colours"}},
	};
	snprintf(buf, n, "; what works here: ");
	for (int i = 0; i < 5; i++) {
		const char *last = NULL;
		for (int j = 0; j < 3 && rows[i].enc[j]; j++) {
			if (!avcodec_find_encoder_by_name(rows[i].enc[j]) || hidden_in(hidden, rows[i].enc[j]) ||
			    (last && strcmp(last, rows[i].label[j]) == 0))
				continue;
			snprintf(buf + strlen(buf), n - strlen(buf), "%s%s%s", last ? ", " : rows[i].ext,
				 last ? "" : " (", rows[i].label[j]);
			last = rows[i].label[j];
		}
		if (last)
			snprintf(buf + strlen(buf), n - strlen(buf), "), ");
	}
	buf[strlen(buf) - 2] = '\0'; /* the last ", " */
}

/* With every WebM encoder hidden a .webm is refused, naming the encoders
 * it needs and what works here; opening writes nothing. Hiding libx264 refuses
 * an H.264 .mp4 the same way, blaming output.codec. */
START_TEST(webm_refused_without_an_encoder)
{
	const char *all = "libvpx-vp9,libsvtav1,libaom-av1";
	char want[512];
	setenv("NB_HIDE_ENCODERS", all, 1);
	expected_works(all, want, sizeof want);
	struct out_video_choice ch;
	ck_assert_int_eq(out_video_choose("a.webm", SCENE_CODEC_H264, &ch), NB_EINPUT);
	ck_assert_str_eq(ch.key, "output.video");
	ck_assert_ptr_null(ch.enc);
	ck_assert_msg(strstr(ch.why, "no encoder for a WebM video (it needs libvpx-vp9, libsvtav1 or "
				     "libaom-av1)") && strstr(ch.why, want),
		      "'%s' lacks '%s'", ch.why, want);
	ck_assert_ptr_null(strstr(ch.why, ".webm ("));
	make_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/a.webm", g_dir);
	struct out_mp4 *m = NULL;
	ck_assert_int_eq(out_mp4_open(&m, path, 64, 48, 10, SCENE_CODEC_H264, 20, "veryfast"), NB_EINPUT);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(count_files(g_dir, ""), 2); /* . and .. */
	rm_tree(g_dir);

	setenv("NB_HIDE_ENCODERS", "libx264", 1);
	expected_works("libx264", want, sizeof want);
	ck_assert_int_eq(out_video_choose("a.mp4", SCENE_CODEC_H264, &ch), NB_EINPUT);
	ck_assert_str_eq(ch.key, "output.codec");
	ck_assert_msg(strstr(ch.why, "h264: this build of FFmpeg has no libx264 encoder") &&
			      strstr(ch.why, want) && !strstr(ch.why, "H.264"),
		      "'%s' lacks '%s'", ch.why, want);
	unsetenv("NB_HIDE_ENCODERS");
}
END_TEST

/* The program: exit 2 before any work, the dry run too, and the dry run
 * names the encoder a .webm falls back to. */
START_TEST(program_refuses_webm_without_an_encoder_before_any_work)
{
	setenv("NB_HIDE_ENCODERS", "libvpx-vp9,libsvtav1,libaom-av1", 1);
	refused_before_any_work("clip.webm", "clip.webm': this build of FFmpeg has no encoder for a "
					     "WebM video (it needs libvpx-vp9, libsvtav1 or "
					     "libaom-av1); what works here: .mp4 (");
	const char *label;
	if (webm_codec_hiding("libvpx-vp9", &label) != AV_CODEC_ID_NONE) {
		setenv("NB_HIDE_ENCODERS", "libvpx-vp9", 1);
		ck_assert_int_eq(run("--set output.video=o/v.webm", 1), 0);
		ck_assert_msg(strstr(g_out, "o/v.webm: the video (WebM, AV1)"), "%.2000s", g_out);
	}
	unsetenv("NB_HIDE_ENCODERS");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output_formats");
	TCase *tc = tcase_create("output_formats");
	/* libav's encoders run here: third-party code raises FP flags by design */
	tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	log_set_level(LOG_QUIET);
	int n = (int)(sizeof containers / sizeof containers[0]);
	tcase_add_loop_test(tc, each_container_has_its_format_codec_and_frames, 0, n);
	tcase_add_loop_test(tc, each_container_takes_yuv_planes, 0, n);
	tcase_add_test(tc, whole_video_check_finds_a_cut_file);
	tcase_add_test(tc, unknown_extension_is_input_error_and_writes_nothing);
	tcase_add_test(tc, program_refuses_unknown_extension_before_any_work);
	tcase_add_test(tc, program_refuses_h265_for_webm_and_gif);
	tcase_add_test(tc, dry_run_names_container_and_codec);
	tcase_add_test(tc, webm_takes_the_next_encoder_when_one_is_hidden);
	tcase_add_test(tc, webm_refused_without_an_encoder);
	tcase_add_test(tc, program_refuses_webm_without_an_encoder_before_any_work);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
