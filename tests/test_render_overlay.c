/* test_render_overlay.c - the overlay.* keys (render/overlay.c, the font
 * render/font.c, the pixel rule render/overlay_shared.h).
 *
 * Expectations are independent: glyphs drawn by hand below; text width
 * chars x advance x size; the scale bar's pixel length focal_px x L /
 * distance from the pinhole formula; time labels written out by hand; the
 * composite checked pixel by pixel against the rule (ink = colour, outline
 * = value >> 2, everything else untouched); a whole frame from the program
 * with the overlay equals the same frame without it with the overlay
 * composited here; bad keys give FILE:LINE:COL messages.
 *   make CUDA=0 BUILD=build-cpu build-cpu/tests/test_render_overlay &&
 *   NB_BIN=build-cpu/nbody-render build-cpu/tests/test_render_overlay */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "test_output_util.h"
#include "test_render_util.h"
#include "test_scene_util.h"

/* A glyph drawn at size s into a box of its own, compared with the hand
 * drawing (rows of '#' and '.', 9 rows of 5) scaled by s. */
static void expect_glyph(char c, int s, const char *const rows[RENDER_FONT_H])
{
	const int bw = RENDER_FONT_W * s + 3, bh = RENDER_FONT_H * s + 3;
	uint8_t *code = calloc((size_t)bw * bh, 1);
	render_text_draw(code, bw, bh, 1, 2, (const char[]){c, 0}, s, 7);
	for (int y = 0; y < bh; y++) {
		for (int x = 0; x < bw; x++) {
			int col = (x - 1) / s, row = (y - 2) / s, want = 0;
			if (x >= 1 && y >= 2 && col < RENDER_FONT_W && row < RENDER_FONT_H)
				want = rows[row][col] == '#' ? 7 : 0;
			ck_assert_msg(code[(size_t)y * bw + x] == want, "'%c' size %d: pixel (%d, %d) is %d, want %d",
				      c, s, x, y, code[(size_t)y * bw + x], want);
		}
	}
	free(code);
}

START_TEST(glyphs_match_hand_drawing)
{
	static const char *const A[RENDER_FONT_H] = {".###.", "#...#", "#...#", "#####", "#...#",
						      "#...#", "#...#", ".....", "....."};
	static const char *const g[RENDER_FONT_H] = {".....", ".....", ".####", "#...#", "#...#",
						      "#...#", ".####", "....#", ".###."};
	static const char *const seven[RENDER_FONT_H] = {"#####", "....#", "...#.", "..#..", ".#...",
							  ".#...", ".#...", ".....", "....."};
	expect_glyph('A', 1, A);
	expect_glyph('A', 3, A);
	expect_glyph('g', 2, g);
	expect_glyph('7', 1, seven);
	/* no glyph: drawn as '?' */
	for (int row = 0; row < RENDER_FONT_H; row++)
		for (int col = 0; col < RENDER_FONT_W; col++)
			ck_assert_int_eq(render_font_bit(200, col, row), render_font_bit('?', col, row));
	ck_assert(render_font_has(' ') && render_font_has('~') && !render_font_has(127) &&
		  !render_font_has('\n'));
}
END_TEST

START_TEST(text_width_is_chars_advance_size)
{
	ck_assert_int_eq(render_text_width("t = 450 Myr", 1), 11 * 6);
	ck_assert_int_eq(render_text_width("t = 450 Myr", 4), 11 * 6 * 4);
	ck_assert_int_eq(render_text_width("", 3), 0);
	/* the ink of "II" at size 2 ends at 2 advances minus the glyph's blank columns */
	uint8_t code[2 * 12 * 18];
	memset(code, 0, sizeof code);
	render_text_draw(code, 24, 18, 0, 0, "II", 2, 1);
	int last = -1;
	for (int x = 0; x < 24; x++)
		if (code[x])
			last = x;
	ck_assert_int_eq(last, 6 * 2 + 4 * 2 - 1); /* 'I' row 0 is ".###.": columns 1..3 */
}
END_TEST

static struct scene *ov_scene(int w, int h, enum scene_units units)
{
	struct scene *sc = render_test_scene(w, h, SCENE_KERNEL_CUBIC, 0.1);
	sc->units = units;
	sc->simulation.dt = 0.5;
	sc->simulation.steps_per_frame = 10;
	sc->overlay.scale_bar_word = 1; /* none, as loaded */
	for (int c = 0; c < 3; c++)
		sc->overlay.color[c] = 1;
	return sc;
}

START_TEST(time_labels_in_scene_units)
{
	char buf[64];
	struct scene *sc = ov_scene(640, 360, SCENE_UNITS_GALACTIC);
	render_overlay_time_text(sc, 90, buf, sizeof buf); /* 90 x 10 x 0.5 Myr */
	ck_assert_str_eq(buf, "t = 450 Myr");
	sc->units = SCENE_UNITS_NBODY;
	sc->simulation.dt = 0.05; /* 0.5 per frame: one decimal */
	render_overlay_time_text(sc, 25, buf, sizeof buf);
	ck_assert_str_eq(buf, "t = 12.5");
	sc->simulation.dt = 0.001; /* 0.01 per frame: two */
	render_overlay_time_text(sc, 7, buf, sizeof buf);
	ck_assert_str_eq(buf, "t = 0.07");
	render_overlay_time_text(sc, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "t = 0.00");
	render_overlay_length_text(sc, 2, buf, sizeof buf);
	ck_assert_str_eq(buf, "2");
	sc->units = SCENE_UNITS_GALACTIC;
	render_overlay_length_text(sc, 10, buf, sizeof buf);
	ck_assert_str_eq(buf, "10 kpc");
	render_overlay_length_text(sc, 0.5, buf, sizeof buf);
	ck_assert_str_eq(buf, "500 pc");
	free(sc);
}
END_TEST

/* The camera of tests/data/plummer-small.yaml: (0, -8, 3) -> origin, 40 deg. */
static const struct render_camera cam_p = {.pos = {0, -8, 3}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 40};

/* Longest run of ink in row y of box b. */
static int ink_run(const struct render_overlay *ov, int b, int y)
{
	const struct render_overlay_box *x = &ov->box[b];
	int best = 0, run = 0;
	for (int i = 0; i < x->w; i++) {
		run = ov->code[x->off + (size_t)y * x->w + i] == RENDER_OVERLAY_INK ? run + 1 : 0;
		best = run > best ? run : best;
	}
	return best;
}

START_TEST(scale_bar_length_is_focal_times_length_over_distance)
{
	struct scene *sc = ov_scene(640, 360, SCENE_UNITS_NBODY);
	const double f = 180.0 / tan(20.0 * M_PI / 180.0), d = sqrt(64.0 + 9.0);
	double len, px;
	sc->overlay.scale_bar_word = 0;
	sc->overlay.scale_bar = 1.5;
	ck_assert_int_eq(render_overlay_scale_bar(sc, &cam_p, &len, &px), 1);
	ck_assert(len == 1.5);
	ck_assert_msg(fabs(px - f * 1.5 / d) < 1e-9 * px, "px %.12g want %.12g", px, f * 1.5 / d);
	/* drawn: the bar's bottom row is one ink run of round(px) +- 1 */
	struct render_overlay ov;
	memset(&ov, 0, sizeof ov);
	ck_assert_int_eq(render_overlay_build(sc, &cam_p, 0, &ov), 0);
	ck_assert_int_eq(ov.nbox, 1);
	const struct render_overlay_box *b = &ov.box[0];
	int o = render_overlay_outline(render_overlay_size(sc));
	int run = ink_run(&ov, 0, b->h - 1 - o);
	ck_assert_msg(fabs(run - f * 1.5 / d) <= 1.0, "bar %d px, want %.2f", run, f * 1.5 / d);
	/* bottom-right, inside the margin */
	int m = render_overlay_margin(sc);
	ck_assert_int_eq(b->x + b->w, 640 - m + o);
	ck_assert_int_eq(b->y + b->h, 360 - m + o);
	/* auto: 20% of 640 px is 128 px = 2.21 units at 57.9 px per unit; of
	 * 1, 2, 5 the nearest in log is 2 (115.8 px, 18%) */
	sc->overlay.scale_bar_word = 2;
	ck_assert_int_eq(render_overlay_scale_bar(sc, &cam_p, &len, &px), 1);
	ck_assert(len == 2.0);
	ck_assert(fabs(px - f * 2 / d) < 1e-9 * px);
	/* a farther camera: 5 x farther needs 11.05 units: 10 */
	struct render_camera far = cam_p;
	far.pos[1] *= 5, far.pos[2] *= 5;
	ck_assert_int_eq(render_overlay_scale_bar(sc, &far, &len, &px), 1);
	ck_assert(len == 10.0);
	/* none; the camera on its target */
	sc->overlay.scale_bar_word = 1;
	ck_assert_int_eq(render_overlay_scale_bar(sc, &cam_p, &len, &px), 0);
	sc->overlay.scale_bar_word = 2;
	struct render_camera on = cam_p;
	memcpy(on.pos, on.target, sizeof on.pos);
	ck_assert_int_eq(render_overlay_scale_bar(sc, &on, &len, &px), 0);
	render_overlay_free(&ov);
	free(sc);
}
END_TEST

/* Every pixel of out against in under ov's rule: ink = colour, shade =
 * in >> 2, else (and outside every box) untouched. Returns ink pixels. */
static long expect_composite(const struct render_overlay *ov, const uint16_t *in,
			     const uint16_t *out, int w, int h, const uint16_t ink[3])
{
	long n_ink = 0;
	for (int j = 0; j < h; j++) {
		for (int i = 0; i < w; i++) {
			int code = 0;
			for (int b = 0; b < ov->nbox && !code; b++) {
				const struct render_overlay_box *x = &ov->box[b];
				if (i >= x->x && i < x->x + x->w && j >= x->y && j < x->y + x->h)
					code = ov->code[x->off + (size_t)(j - x->y) * x->w + (i - x->x)];
			}
			const size_t p = 3 * ((size_t)j * w + i);
			for (int c = 0; c < 3; c++) {
				int want = code == RENDER_OVERLAY_INK ? ink[c]
					 : code == RENDER_OVERLAY_SHADE ? in[p + c] >> 2
									 : in[p + c];
				ck_assert_msg(out[p + c] == want, "pixel (%d, %d) ch %d code %d: %d, want %d",
					      i, j, c, code, out[p + c], want);
			}
			n_ink += code == RENDER_OVERLAY_INK;
		}
	}
	return n_ink;
}

static long font_ink(const char *s, int size)
{
	long n = 0;
	for (; *s; s++)
		for (int r = 0; r < RENDER_FONT_H; r++)
			for (int c = 0; c < RENDER_FONT_W; c++)
				n += render_font_bit((unsigned char)*s, c, r);
	return n * size * size;
}

START_TEST(overlay_sets_colour_and_leaves_the_rest)
{
	const int w = 640, h = 360;
	struct scene *sc = ov_scene(w, h, SCENE_UNITS_GALACTIC);
	sc->overlay.time = 1;
	sc->overlay.scale_bar_word = 2;
	snprintf(sc->overlay.title, sizeof sc->overlay.title, "Mice (NGC 4676)");
	sc->overlay.color[0] = 1.0f, sc->overlay.color[1] = 0.5f, sc->overlay.color[2] = 0.25f;
	sc->overlay.size = 2;
	uint16_t *in = malloc((size_t)w * h * 3 * 2), *out = malloc((size_t)w * h * 3 * 2);
	uint64_t x = 12345;
	for (size_t k = 0; k < (size_t)w * h * 3; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		in[k] = (uint16_t)(x >> 48);
	}
	memcpy(out, in, (size_t)w * h * 3 * 2);
	struct render_overlay ov;
	memset(&ov, 0, sizeof ov);
	ck_assert_int_eq(render_overlay_build(sc, &cam_p, 90, &ov), 0);
	ck_assert_int_eq(ov.nbox, 3);
	const uint16_t ink[3] = {65535, 32768, 16384}; /* round(c x 65535) */
	for (int c = 0; c < 3; c++)
		ck_assert_int_eq(ov.ink[c], ink[c]);
	render_overlay_apply(&ov, w, h, out);
	long n_ink = expect_composite(&ov, in, out, w, h, ink);
	/* title and time: exactly their glyphs' ink, scaled */
	long bar_ink = n_ink - font_ink(sc->overlay.title, 2) - font_ink("t = 450 Myr", 2);
	ck_assert_int_gt(bar_ink, font_ink("2 kpc", 2));
	/* placement: title top-left, time top-right, bar bottom-right, all
	 * inside the frame with margin m - o */
	int m = render_overlay_margin(sc), o = render_overlay_outline(2);
	ck_assert_int_eq(ov.box[0].x, m - o);
	ck_assert_int_eq(ov.box[0].y, m - o);
	ck_assert_int_eq(ov.box[1].x + ov.box[1].w, w - m + o);
	ck_assert_int_eq(ov.box[1].y, m - o);
	ck_assert_int_eq(ov.box[2].x + ov.box[2].w, w - m + o);
	ck_assert_int_eq(ov.box[2].y + ov.box[2].h, h - m + o);
	/* every ink pixel has outline or more ink around it, none touches the box edge */
	for (int b = 0; b < 3; b++)
		for (int j = 0; j < ov.box[b].h; j++)
			for (int i = 0; i < ov.box[b].w; i++)
				if (i == 0 || j == 0 || i == ov.box[b].w - 1 || j == ov.box[b].h - 1)
					ck_assert(ov.code[ov.box[b].off + (size_t)j * ov.box[b].w + i] !=
						  RENDER_OVERLAY_INK);
	/* a frame too small for the boxes: clipped to it, still the rule */
	struct scene *small = ov_scene(48, 32, SCENE_UNITS_GALACTIC);
	small->overlay = sc->overlay;
	memcpy(out, in, (size_t)48 * 32 * 3 * 2);
	ck_assert_int_eq(render_overlay_build(small, &cam_p, 90, &ov), 0);
	for (int b = 0; b < ov.nbox; b++)
		ck_assert(ov.box[b].x >= 0 && ov.box[b].y >= 0 && ov.box[b].x + ov.box[b].w <= 48 &&
			  ov.box[b].y + ov.box[b].h <= 32);
	render_overlay_apply(&ov, 48, 32, out);
	expect_composite(&ov, in, out, 48, 32, ink);
	render_overlay_free(&ov);
	free(in);
	free(out);
	free(small);
	free(sc);
}
END_TEST

/* camera.stereo: the overlay is drawn in each eye. A stereo frame (side-by-side
 * 1280 x 360, top-bottom 640 x 720: each eye 640 x 360) with the title,
 * the time and an auto scale bar at the automatic size, composited over a
 * uniform grey: each half of the frame is, pixel for pixel, the mono
 * frame of one eye's size with the same overlay composited the same way
 * (so the same content at the same offset in both eyes, the font scale
 * and margins those of the eye's height, nothing across the split); and
 * the right eye's boxes are the left eye's moved by the eye's origin,
 * with the same codes. */
START_TEST(overlay_in_each_stereo_eye)
{
	const int modes[2] = {SCENE_STEREO_SIDE_BY_SIDE, SCENE_STEREO_TOP_BOTTOM};
	const int ew = 640, eh = 360;
	struct scene *mono = ov_scene(ew, eh, SCENE_UNITS_GALACTIC);
	mono->overlay.time = 1;
	mono->overlay.scale_bar_word = 2; /* auto */
	snprintf(mono->overlay.title, sizeof mono->overlay.title, "Two eyes");
	mono->overlay.color[1] = 0.5f;
	const uint16_t grey = 30000;
	uint16_t *want = malloc((size_t)ew * eh * 3 * 2);
	for (size_t k = 0; k < (size_t)ew * eh * 3; k++)
		want[k] = grey;
	struct render_overlay ov, ovm;
	memset(&ov, 0, sizeof ov);
	memset(&ovm, 0, sizeof ovm);
	ck_assert_int_eq(render_overlay_build(mono, &cam_p, 90, &ovm), 0);
	ck_assert_int_eq(ovm.nbox, 3);
	render_overlay_apply(&ovm, ew, eh, want);
	for (int md = 0; md < 2; md++) {
		const int fw = md ? ew : 2 * ew, fh = md ? 2 * eh : eh;
		struct scene *sc = ov_scene(fw, fh, SCENE_UNITS_GALACTIC);
		sc->overlay = mono->overlay;
		sc->camera.stereo.mode = (enum scene_stereo)modes[md];
		ck_assert_int_eq(render_overlay_size(sc), render_overlay_size(mono));
		ck_assert_int_eq(render_overlay_margin(sc), render_overlay_margin(mono));
		ck_assert_int_eq(render_overlay_build(sc, &cam_p, 90, &ov), 0);
		ck_assert_int_eq(ov.nbox, 6);
		for (int b = 0; b < 3; b++) {
			ck_assert_int_eq(ov.box[b + 3].x, ov.box[b].x + (md ? 0 : ew));
			ck_assert_int_eq(ov.box[b + 3].y, ov.box[b].y + (md ? eh : 0));
			ck_assert_int_eq(ov.box[b + 3].w, ov.box[b].w);
			ck_assert_int_eq(ov.box[b + 3].h, ov.box[b].h);
			ck_assert_int_eq(ov.box[b + 3].off, ov.box[b].off);
		}
		uint16_t *out = malloc((size_t)fw * fh * 3 * 2);
		for (size_t k = 0; k < (size_t)fw * fh * 3; k++)
			out[k] = grey;
		render_overlay_apply(&ov, fw, fh, out);
		long ink[2] = {0, 0};
		for (int eye = 0; eye < 2; eye++) {
			const int x0 = eye && !md ? ew : 0, y0 = eye && md ? eh : 0;
			for (int j = 0; j < eh; j++)
				for (int i = 0; i < ew; i++)
					for (int c = 0; c < 3; c++) {
						const uint16_t g = out[3 * ((size_t)(y0 + j) * fw + x0 + i) + c];
						const uint16_t m = want[3 * ((size_t)j * ew + i) + c];
						ck_assert_msg(g == m, "%s eye %d pixel (%d, %d) ch %d: %d, mono %d",
							      md ? "top-bottom" : "side-by-side", eye, i, j, c, g, m);
						ink[eye] += c == 1 && g == 32768; /* overlay.color green 0.5 */
					}
		}
		printf("overlay %s: ink pixels %ld and %ld\n", md ? "top-bottom" : "side-by-side", ink[0],
		       ink[1]);
		ck_assert_int_gt(ink[0], 100);
		ck_assert_int_eq(ink[0], ink[1]);
		free(out);
		free(sc);
	}
	render_overlay_free(&ov);
	render_overlay_free(&ovm);
	free(want);
	free(mono);
}
END_TEST

START_TEST(no_overlay_draws_nothing)
{
	struct scene sc;
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\n", NULL, 0, &sc), 0);
	ck_assert_int_eq(render_overlay_on(&sc), 0);
	ck_assert_int_eq(sc.overlay.scale_bar_word, 1);
	struct render_overlay ov;
	memset(&ov, 0, sizeof ov);
	ck_assert_int_eq(render_overlay_build(&sc, &cam_p, 3, &ov), 0);
	ck_assert_int_eq(ov.nbox, 0);
	uint16_t px[16 * 16 * 3], ref[16 * 16 * 3];
	for (int k = 0; k < 16 * 16 * 3; k++)
		px[k] = ref[k] = (uint16_t)(k * 977);
	render_overlay_apply(&ov, 16, 16, px);
	ck_assert(memcmp(px, ref, sizeof px) == 0);
	render_overlay_free(&ov);
}
END_TEST

/* The program's frame 0 of plummer-small (16-bit PNG, CPU) with extra
 * --set SETS, read back with libpng. */
static uint16_t *plummer_frame(const char *sets, int *w, int *h)
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
	int depth;
	uint16_t *px = read_png(path, w, h, &depth);
	ck_assert_int_eq(depth, 16);
	rm_tree(g_dir);
	return px;
}

/* End to end on the CPU: overlay keys given but all off change no byte;
 * the overlay on gives exactly the plain frame with the overlay composited
 * (so everything outside the boxes is the plain frame). */
START_TEST(program_frames_with_and_without_overlay)
{
	int w, h, w2, h2;
	uint16_t *plain = plummer_frame("", &w, &h);
	uint16_t *off = plummer_frame("--set overlay.time=false --set overlay.scale_bar=none "
				      "--set overlay.size=3 --set overlay.color=[0.2,0.3,0.4]",
				      &w2, &h2);
	ck_assert(w == w2 && h == h2);
	ck_assert(memcmp(plain, off, (size_t)w * h * 3 * 2) == 0);
	const char *on_sets[] = {"overlay.time=true", "overlay.scale_bar=auto", "overlay.title=Plummer",
				 "overlay.color=[1,0.8,0.2]", "output.frames=1"};
	uint16_t *on = plummer_frame("--set overlay.time=true --set overlay.scale_bar=auto "
				     "--set overlay.title=Plummer --set overlay.color=[1,0.8,0.2]",
				     &w2, &h2);
	struct scene sc;
	ck_assert_int_eq(load_file("tests/data/plummer-small.yaml", on_sets, 5, &sc), 0);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(&sc, 0, NULL, &cam), 0);
	struct render_overlay ov;
	memset(&ov, 0, sizeof ov);
	ck_assert_int_eq(render_overlay_build(&sc, &cam, 0, &ov), 0);
	ck_assert_int_eq(ov.nbox, 3);
	uint16_t *want = malloc((size_t)w * h * 3 * 2);
	memcpy(want, plain, (size_t)w * h * 3 * 2);
	render_overlay_apply(&ov, w, h, want);
	ck_assert(memcmp(want, plain, (size_t)w * h * 3 * 2) != 0);
	ck_assert(memcmp(want, on, (size_t)w * h * 3 * 2) == 0);
	render_overlay_free(&ov);
	free(want);
	free(plain);
	free(off);
	free(on);
}
END_TEST

/* The load failed with NB_EINPUT and one message holding every fragment. */
static void expect_msg(int err, const char *const *frags)
{
	ck_assert_msg(err == NB_EINPUT, "expected NB_EINPUT, got %d: %s", err, g_err);
	for (int i = 0; frags[i]; i++)
		ck_assert_msg(strstr(g_err, frags[i]), "message lacks '%s': %s", frags[i], g_err);
}

START_TEST(bad_overlay_keys_name_file_and_line)
{
	static const struct {
		const char *yaml, *frag[5];
	} cases[] = {
		{"overlay:\n  scale_bar: big\n",
		 {"t.yaml:3:14:", "overlay.scale_bar", "one of the words none, auto", "'big'"}},
		{"overlay:\n  scale_bar: -2\n", {"t.yaml:3:14:", "overlay.scale_bar", "> 0", NULL}},
		{"overlay:\n  time: yes please\n", {"t.yaml:3:9:", "overlay.time", "true", NULL}},
		{"overlay:\n  size: 2.5\n", {"t.yaml:3:9:", "overlay.size", NULL}},
		{"overlay:\n  size: 65\n", {"t.yaml:3:9:", "overlay.size", "64", NULL}},
		{"overlay:\n  color: [1, 2, 0]\n", {"t.yaml:3:14:", "overlay.color.1", "[0, 1]", NULL}},
		{"overlay:\n  titl: x\n", {"t.yaml:3:3:", "overlay.titl", "did you mean 'title'", NULL}},
		{"overlay:\n  title: \"caf\\xe9\"\n",
		 {"t.yaml:3:10:", "overlay.title", "byte 0xc3", "printable ASCII"}},
		{"overlay:\n  title: \"a\\tb\"\n", {"t.yaml:3:10:", "overlay.title", "character 2", NULL}},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char text[512];
		snprintf(text, sizeof text, "bodies: [{name: a, model: plummer}]\n%s", cases[k].yaml);
		struct scene sc;
		expect_msg(load_str(text, NULL, 0, &sc), cases[k].frag);
	}
	/* a good one round-trips through the resolved scene */
	struct scene sc, back;
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\noverlay: {time: true, "
				  "scale_bar: 2.5, title: \"N-body: t & x\", color: [1, 0.5, 0], size: 3}\n",
				  NULL, 0, &sc), 0);
	ck_assert(sc.overlay.time == 1 && sc.overlay.scale_bar == 2.5 && sc.overlay.scale_bar_word == 0 &&
		  sc.overlay.size == 3 && strcmp(sc.overlay.title, "N-body: t & x") == 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(scene_emit(&sc, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "scale_bar: 2.5"));
	ck_assert_int_eq(load_str(buf, NULL, 0, &back), 0);
	ck_assert(memcmp(&back.overlay, &sc.overlay, sizeof sc.overlay) == 0);
	free(buf);
	ck_assert_int_eq(load_str("bodies: [{name: a, model: plummer}]\noverlay: {scale_bar: auto}\n",
				  NULL, 0, &sc), 0);
	ck_assert_int_eq(sc.overlay.scale_bar_word, 2);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(scene_emit(&sc, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "scale_bar: auto"));
	free(buf);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_overlay");
	TCase *tc = tcase_create("overlay");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, glyphs_match_hand_drawing);
	tcase_add_test(tc, text_width_is_chars_advance_size);
	tcase_add_test(tc, time_labels_in_scene_units);
	tcase_add_test(tc, scale_bar_length_is_focal_times_length_over_distance);
	tcase_add_test(tc, overlay_sets_colour_and_leaves_the_rest);
	tcase_add_test(tc, no_overlay_draws_nothing);
	tcase_add_test(tc, overlay_in_each_stereo_eye);
	tcase_add_test(tc, program_frames_with_and_without_overlay);
	tcase_add_test(tc, bad_overlay_keys_name_file_and_line);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
