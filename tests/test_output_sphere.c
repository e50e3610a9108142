/* test_output_sphere.c - spherical video metadata (output.h, struct
 * out_video_meta; output/mp4_sphere.c): short MP4s tagged equirectangular
 * top-bottom, equirectangular mono, fisheye and flat side-by-side, read
 * back with ffprobe (the mov demuxer turns the sv3d and st3d boxes back
 * into side data); an untagged MP4 has none, and the writer thread passes
 * the tags on.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_output_sphere && /tmp/b/tests/test_output_sphere */
#include "test_output_util.h"

/* The video stream's side data as ffprobe prints it, one "key=value" a
 * line ("" when there is none). */
static void probe_side_data(const char *path, char *out, size_t n)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "ffprobe -v error -select_streams v:0 -show_entries stream_side_data "
		 "-of default=noprint_wrappers=1 '%s'",
		 path);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t got = fread(out, 1, n - 1, f);
	out[got] = '\0';
	ck_assert_int_eq(pclose(f), 0);
}

/* A 128 x 64, 3-frame MP4 in g_dir/NAME tagged with meta (NULL: plain
 * out_mp4_open); its side data into sd. */
static void write_tagged(const char *name, const struct out_video_meta *meta, char *sd, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	struct out_mp4 *m = NULL;
	const int w = 128, h = 64;
	if (meta)
		ck_assert_int_eq(out_mp4_open_meta(&m, path, w, h, 30, SCENE_CODEC_H264, 23,
						   "veryfast", meta),
				 0);
	else
		ck_assert_int_eq(out_mp4_open(&m, path, w, h, 30, SCENE_CODEC_H264, 23, "veryfast"), 0);
	uint16_t *img = make_f(w, h);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(out_mp4_write(m, img), 0);
	ck_assert_int_eq(out_mp4_close(&m, 1), 0);
	free(img);
	struct probe p;
	ffprobe(path, &p);
	ck_assert_int_eq(p.frames, 3);
	assert_decodes_clean(path);
	probe_side_data(path, sd, n);
}

static int has_line(const char *sd, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = sd; (p = strstr(p, line)); p++)
		if ((p == sd || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

START_TEST(mp4_equirect_top_bottom_reads_back)
{
	make_tmpdir();
	char sd[4096];
	struct out_video_meta meta = {SCENE_PROJ_EQUIRECT, OUT_STEREO_TOP_BOTTOM};
	write_tagged("tb.mp4", &meta, sd, sizeof sd);
	ck_assert_msg(has_line(sd, "side_data_type=Spherical Mapping"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "projection=equirectangular"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "yaw=0") && has_line(sd, "pitch=0") && has_line(sd, "roll=0"),
		      "side data: %s", sd);
	ck_assert_msg(has_line(sd, "side_data_type=Stereo 3D"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "type=top and bottom"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "inverted=0"), "side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_equirect_mono_reads_back)
{
	make_tmpdir();
	char sd[4096];
	struct out_video_meta meta = {SCENE_PROJ_EQUIRECT, OUT_STEREO_MONO};
	write_tagged("mono.mp4", &meta, sd, sizeof sd);
	ck_assert_msg(has_line(sd, "side_data_type=Spherical Mapping"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "projection=equirectangular"), "side data: %s", sd);
	ck_assert_msg(!strstr(sd, "Stereo 3D"), "mono has stereo side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_untagged_has_no_side_data)
{
	make_tmpdir();
	char sd[4096];
	write_tagged("plain.mp4", NULL, sd, sizeof sd);
	ck_assert_msg(sd[0] == '\0', "untagged MP4 has side data: %s", sd);
	struct out_video_meta flat = {SCENE_PROJ_PERSPECTIVE, OUT_STEREO_MONO};
	write_tagged("flat.mp4", &flat, sd, sizeof sd);
	ck_assert_msg(sd[0] == '\0', "flat mono MP4 has side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

/* No standard box for a fisheye dome master: nothing spherical; its stereo
 * layout alone is written, as for a flat 3D film. */
START_TEST(mp4_fisheye_and_flat_stereo)
{
	make_tmpdir();
	char sd[4096];
	struct out_video_meta fish = {SCENE_PROJ_FISHEYE, OUT_STEREO_MONO};
	write_tagged("fish.mp4", &fish, sd, sizeof sd);
	ck_assert_msg(sd[0] == '\0', "fisheye MP4 has side data: %s", sd);
	struct out_video_meta sbs = {SCENE_PROJ_PERSPECTIVE, OUT_STEREO_SIDE_BY_SIDE};
	write_tagged("sbs.mp4", &sbs, sd, sizeof sd);
	ck_assert_msg(has_line(sd, "type=side by side"), "side data: %s", sd);
	ck_assert_msg(!strstr(sd, "Spherical"), "flat MP4 has spherical side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

START_TEST(mp4_unknown_tag_is_input_error)
{
	make_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%s/bad.mp4", g_dir);
	struct out_mp4 *m = NULL;
	struct out_video_meta bad = {(enum scene_projection)7, OUT_STEREO_MONO};
	ck_assert_int_eq(out_mp4_open_meta(&m, path, 64, 64, 30, SCENE_CODEC_H264, 23, "veryfast",
					   &bad),
			 NB_EINPUT);
	ck_assert_ptr_null(m);
	ck_assert(!file_exists(path));
	ck_assert_int_eq(count_files(g_dir, "partial"), 0);
	rm_tree(g_dir);
}
END_TEST

/* out_writer_open_meta hands the tags to its MP4. */
START_TEST(writer_passes_tags_on)
{
	make_tmpdir();
	struct scene sc;
	const int w = 64, h = 32, n = 4;
	scene_for(&sc, w, h, n);
	snprintf(sc.output.video, sizeof sc.output.video, "%s/w.mp4", g_dir);
	struct out_video_meta meta = {SCENE_PROJ_EQUIRECT, OUT_STEREO_SIDE_BY_SIDE};
	struct out_writer *wr = NULL;
	ck_assert_int_eq(out_writer_open_meta(&sc, 2, &meta, &wr), 0);
	for (int k = 0; k < n; k++) {
		uint16_t *img = make_gray(w, h, (uint16_t)(k * 4000));
		struct out_frame f = {k, w, h, img};
		ck_assert_int_eq(out_writer_push(wr, &f), 0);
		free(img);
	}
	ck_assert_int_eq(out_writer_close(&wr, 1, 0), 0);
	char sd[4096];
	probe_side_data(sc.output.video, sd, sizeof sd);
	ck_assert_msg(has_line(sd, "projection=equirectangular"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "type=side by side"), "side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

/* The program end to end (NB_BIN): a scene filmed equirectangular,
 * top-bottom stereo, gets the spherical and stereo side data in its MP4
 * (app_video_meta maps the camera keys); the same scene in perspective
 * gets none. */
static void program_side_data(const char *sets, char *sd, size_t n)
{
	char cmd[1600], path[400];
	snprintf(path, sizeof path, "%s/v.mp4", g_dir);
	snprintf(cmd, sizeof cmd,
		 "'%s' tests/data/plummer-small.yaml --backend cpu -q --set output.frames=2 "
		 "--set output.png_dir= --set output.stats= --set output.initial_state= "
		 "--set output.final_state= --set output.video=%s %s",
		 nb_bin(), path, sets);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	probe_side_data(path, sd, n);
}

START_TEST(program_tags_equirect_stereo_from_camera_keys)
{
	make_tmpdir();
	char sd[2048];
	program_side_data("--set camera.projection=equirectangular --set camera.stereo.mode=top-bottom "
			  "--set render.width=256 --set render.height=256",
			  sd, sizeof sd);
	ck_assert_msg(has_line(sd, "projection=equirectangular"), "side data: %s", sd);
	ck_assert_msg(has_line(sd, "type=top and bottom"), "side data: %s", sd);
	program_side_data("", sd, sizeof sd);
	ck_assert_msg(sd[0] == '\0', "perspective has side data: %s", sd);
	rm_tree(g_dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output_sphere");
	TCase *tc = tcase_create("output_sphere");
	/* libx264/libav run here: third-party code raises FP flags by design */
	tcase_add_checked_fixture(tc, nb_untrap_fpe, NULL);
	tcase_set_timeout(tc, 120);
	log_set_level(LOG_QUIET);
	tcase_add_test(tc, mp4_equirect_top_bottom_reads_back);
	tcase_add_test(tc, mp4_equirect_mono_reads_back);
	tcase_add_test(tc, mp4_untagged_has_no_side_data);
	tcase_add_test(tc, mp4_fisheye_and_flat_stereo);
	tcase_add_test(tc, mp4_unknown_tag_is_input_error);
	tcase_add_test(tc, writer_passes_tags_on);
	tcase_add_test(tc, program_tags_equirect_stereo_from_camera_keys);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
