/* test_framing.c - camera.follow: light and camera.frame: auto on the CPU
 * (render/framing.c, render/spring.c, app/framing.c through the program):
 * each statistic against an independent count (a sort, a projection of
 * every body through render_view_project, a closed form).
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_framing && build/tests/test_framing */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "../render/render.h"
#include "../sim/sim.h"

/* xorshift64*: the test's own random numbers, in [0, 1). */
static double rnd(uint64_t *s)
{
	*s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
	return (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A point uniform in the ball of radius r around c. */
static void in_ball(uint64_t *s, const double c[3], double r, double *p)
{
	double x, y, z;
	do {
		x = 2 * rnd(s) - 1, y = 2 * rnd(s) - 1, z = 2 * rnd(s) - 1;
	} while (x * x + y * y + z * z > 1);
	p[0] = c[0] + r * x, p[1] = c[1] + r * y, p[2] = c[2] + r * z;
}

/* Two components: 0 bright (white, brightness 1), 1 dark (colour 0). */
static void state_two(struct sim_state *st, size_t n)
{
	ck_assert_int_eq(sim_state_alloc(st, n, 2), 0);
	snprintf(st->comps[0].name, sizeof st->comps[0].name, "bright");
	snprintf(st->comps[1].name, sizeof st->comps[1].name, "dark");
	for (int k = 0; k < 3; k++)
		st->comps[0].color[k] = 1.0f, st->comps[1].color[k] = 0.0f;
	st->comps[0].brightness = st->comps[1].brightness = 1.0f;
	for (size_t i = 0; i < n; i++)
		st->id[i] = (uint32_t)i;
}

static const struct scene *plain_scene(void)
{
	static struct scene sc; /* render.mode components, color_by component */
	memset(&sc, 0, sizeof sc);
	return &sc;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The trimmed mean of equal-weight values by sorting: drop the lowest and
 * highest 5% of the count. */
static double trimmed_mean_sorted(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_dbl);
	size_t cut = (size_t)(0.05 * (double)n);
	double s = 0;
	for (size_t i = cut; i < n - cut; i++)
		s += v[i];
	return s / (double)(n - 2 * cut);
}

#define N_BRIGHT 3000
#define N_DARK 6000

/* Bright cluster of radius 2 at cb, dark one (10x heavier bodies) of radius
 * 5 at cd; plus `extra` bright bodies appended by the caller. */
static void two_clusters(struct sim_state *st, size_t extra)
{
	static const double cb[3] = {10, -3, 4}, cd[3] = {-40, 20, 0};
	uint64_t seed = 12345;
	state_two(st, N_BRIGHT + N_DARK + extra);
	for (size_t i = 0; i < N_BRIGHT + N_DARK; i++) {
		int dark = i >= N_BRIGHT;
		in_ball(&seed, dark ? cd : cb, dark ? 5 : 2, st->pos + 3 * i);
		st->mass[i] = dark ? 10 : 1;
		st->comp[i] = (uint16_t)dark;
	}
}

START_TEST(light_centre_is_the_bright_cluster)
{
	struct sim_state st;
	two_clusters(&st, 0);
	float wc[2];
	render_framing_weights(plain_scene(), &st, wc);
	ck_assert_float_eq(wc[1], 0.0f); /* the dark cluster is not drawn */
	struct render_light_centre lc;
	ck_assert_int_eq(render_light_centre(&st, wc, &lc), 0);
	ck_assert_uint_eq(lc.count, N_BRIGHT);
	double com[3], m;
	sim_state_com(&st, NULL, com, &m, NULL);
	double v[N_BRIGHT];
	for (int d = 0; d < 3; d++) {
		for (int i = 0; i < N_BRIGHT; i++)
			v[i] = st.pos[3 * i + d];
		double want = trimmed_mean_sorted(v, N_BRIGHT);
		/* the bins may take in a body or two beyond the sorted cut */
		ck_assert_close(lc.c[d], want, 0.01, 0);
		printf("light centre axis %d: %.5f (sorted trimmed mean %.5f; mass centre %.3f)\n", d,
		       lc.c[d], want, com[d]);
	}
	/* the mass centre is pulled 40 units toward the dark cluster */
	ck_assert(fabs(com[0] - lc.c[0]) > 30);
	sim_state_free(&st);
}
END_TEST

/* One bright body far away (1e5 units, the cluster radius 2): of the same
 * light as the others (0.03% of all light), and of 50 times it (1.6%). */
START_TEST(outlier_does_not_move_the_light_centre)
{
	struct sim_state st, st0;
	float wc[2];
	struct render_light_centre c0, c1;
	two_clusters(&st0, 0);
	render_framing_weights(plain_scene(), &st0, wc);
	ck_assert_int_eq(render_light_centre(&st0, wc, &c0), 0);
	const double mass[2] = {1, 50};
	for (int t = 0; t < 2; t++) {
		two_clusters(&st, 1);
		size_t o = N_BRIGHT + N_DARK;
		st.pos[3 * o] = 1e5, st.pos[3 * o + 1] = -1e5, st.pos[3 * o + 2] = 1e5;
		st.mass[o] = mass[t];
		st.comp[o] = 0;
		ck_assert_int_eq(render_light_centre(&st, wc, &c1), 0);
		double shift = 0, mean_shift = 0;
		for (int d = 0; d < 3; d++) {
			shift = fmax(shift, fabs(c1.c[d] - c0.c[d]));
			/* the plain light-weighted mean would move by m x 1e5 / light */
			mean_shift = fmax(mean_shift, mass[t] * 1e5 / (N_BRIGHT + mass[t]));
		}
		/* A body with the share eps of the light, anywhere beyond the
		 * trim, moves the trim boundary on its side inward by eps of the
		 * light, and each end of the trim may take or leave one more
		 * body (a share 1 / N of the light): the centre moves by at most
		 * (eps + 2 / N) R / 0.9 (R = 2, the cluster's radius, bounds the
		 * boundary's distance from the centre), whatever the distance of
		 * the outlier. */
		double eps = mass[t] / (N_BRIGHT + mass[t]);
		double bound = (eps + 2.0 / (N_BRIGHT + mass[t])) * 2 / 0.9;
		printf("outlier of %g x a body's light (%.2f%% of it) at 1e5: centre moved %.2e, bound "
		       "%.2e (plain mean: %.3g)\n", mass[t], 100 * eps, shift, bound, mean_shift);
		fflush(stdout);
		ck_assert_msg(shift <= bound, "shift %g > bound %g", shift, bound);
		ck_assert(mean_shift > 30); /* the plain mean moves 33 and 1600 */
		sim_state_free(&st);
	}
	sim_state_free(&st0);
}
END_TEST

START_TEST(statistics_do_not_depend_on_threads)
{
	struct sim_state st;
	two_clusters(&st, 0);
	float wc[2];
	render_framing_weights(plain_scene(), &st, wc);
	struct render_camera cam = {.pos = {0, -60, 20}, .target = {5, 0, 0}, .up = {0, 0, 1}, .fov = 40};
	struct render_frame_geom g;
	render_frame_geom_make(&cam, 640, 360, 0.05, 1.0, &g);
	struct render_light_centre ref, lc;
	double dref = 0, d = 0, iref = 0, in = 0;
	const int threads[] = {1, 2, 3, 7};
	for (int t = 0; t < 4; t++) {
		omp_set_num_threads(threads[t]);
		ck_assert_int_eq(render_light_centre(&st, wc, t ? &lc : &ref), 0);
		ck_assert_int_eq(render_frame_need(&st, wc, &g, 0.9, t ? &d : &dref), 0);
		*(t ? &in : &iref) = render_frame_inside(&st, wc, &g, 50.0);
		if (t) {
			ck_assert(memcmp(&lc, &ref, sizeof lc) == 0);
			ck_assert(memcmp(&d, &dref, sizeof d) == 0);
			ck_assert(memcmp(&in, &iref, sizeof in) == 0);
		}
	}
	sim_state_free(&st);
}
END_TEST

/* t/tau where 1 - (1 + t) e^-t reaches 0.99, by bisection. */
static double t99(void)
{
	double a = 1, b = 20;
	for (int i = 0; i < 200; i++) {
		double m = 0.5 * (a + b);
		if ((1 + m) * exp(-m) > 0.01)
			a = m;
		else
			b = m;
	}
	return 0.5 * (a + b);
}

START_TEST(spring_step_is_critically_damped)
{
	const double tau = 15;
	struct render_spring s = {0};
	ck_assert_double_eq(render_spring_step(&s, 0.0, tau), 0.0); /* frame 0: at the goal */
	int first99 = -1;
	double prev = 0;
	for (int k = 1; k <= 400; k++) {
		double x = render_spring_step(&s, 1.0, tau);
		double want = 1 - (1 + k / tau) * exp(-k / tau);
		ck_assert_close(x, want, 1e-12, 0);
		ck_assert(x <= 1.0);  /* no overshoot */
		ck_assert(x >= prev); /* monotone */
		prev = x;
		if (first99 < 0 && 1 - x <= 0.01)
			first99 = k;
	}
	int predicted = (int)ceil(t99() * tau);
	printf("step response, tau %g: within 1%% after %d frames (predicted %d, t99 = %.4f tau)\n",
	       tau, first99, predicted, t99());
	ck_assert_int_eq(first99, predicted);

	/* the first frame starts at its goal with no velocity: it stays */
	struct render_spring r = {0};
	ck_assert_double_eq(render_spring_step(&r, 7.5, tau), 7.5);
	ck_assert_double_eq(render_spring_step(&r, 7.5, tau), 7.5);
	/* tau 0: no smoothing */
	ck_assert_double_eq(render_spring_step(&r, -3.0, 0), -3.0);
}
END_TEST

/* Weighted share of st's bright bodies that project inside cam's frame
 * less the margin m, counted by projecting every body. */
static double share_in_view(const struct sim_state *st, const struct render_camera *cam, int w,
			    int h, double m)
{
	struct render_view v;
	render_view_make(cam, w, h, &v);
	double in = 0, all = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (st->comp[i] != 0)
			continue;
		double x, y, depth;
		all += st->mass[i];
		if (render_view_project(&v, st->pos + 3 * i, &x, &y, &depth) &&
		    fabs(x - 0.5 * w) <= (1 - m) * 0.5 * w && fabs(y - 0.5 * h) <= (1 - m) * 0.5 * h)
			in += st->mass[i];
	}
	return in / all;
}

/* cam moved along its line of sight to distance d from its target. */
static struct render_camera at_distance(const struct render_camera *cam, double d)
{
	struct render_camera c = *cam;
	double f[3] = {cam->target[0] - cam->pos[0], cam->target[1] - cam->pos[1],
		       cam->target[2] - cam->pos[2]};
	double n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
	for (int k = 0; k < 3; k++)
		c.pos[k] = cam->target[k] - d * f[k] / n;
	return c;
}

START_TEST(frame_need_keeps_the_fraction_in_view)
{
	/* a lopsided cloud of bright bodies of unequal light, a dark one */
	struct sim_state st;
	uint64_t seed = 99;
	const size_t n = 6000;
	state_two(&st, n);
	const double c1[3] = {3, 1, -2}, c2[3] = {-12, 4, 6}, c3[3] = {30, -30, 30};
	for (size_t i = 0; i < n; i++) {
		int kind = i % 3;
		in_ball(&seed, kind == 0 ? c1 : (kind == 1 ? c2 : c3), kind == 1 ? 9 : 4, st.pos + 3 * i);
		st.mass[i] = 1 + (double)(i % 7);
		st.comp[i] = kind == 2; /* the third cloud is dark */
	}
	float wc[2];
	render_framing_weights(plain_scene(), &st, wc);
	const int w = 640, h = 360;
	struct render_camera cam = {.pos = {20, -80, 35}, .target = {-2, 1, 0}, .up = {0, 0, 1}, .fov = 35};
	const double fracs[] = {0.5, 0.9, 0.95, 1.0}, margins[] = {0, 0.05, 0.2};
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 3; b++) {
			struct render_frame_geom g;
			render_frame_geom_make(&cam, w, h, margins[b], 1.0, &g);
			double d;
			ck_assert_int_eq(render_frame_need(&st, wc, &g, fracs[a], &d), 0);
			struct render_camera at = at_distance(&cam, d);
			struct render_camera nearer = at_distance(&cam, d * 0.99);
			double in = share_in_view(&st, &at, w, h, margins[b]);
			double in_nearer = share_in_view(&st, &nearer, w, h, margins[b]);
			printf("fraction %.2f margin %.2f: distance %.4f keeps %.4f in view (1%% nearer: "
			       "%.4f)\n", fracs[a], margins[b], d, in, in_nearer);
			ck_assert(in >= fracs[a]);       /* enough light in view */
			ck_assert(in_nearer < fracs[a]); /* and the nearest such distance */
			/* render_frame_inside counts the same (without margin: the frame) */
			if (b == 0)
				ck_assert_close(render_frame_inside(&st, wc, &g, d), in, 1e-12, 0);
		}
	sim_state_free(&st);
}
END_TEST

/* Bodies evenly along the view's right axis at the target's depth, equal
 * light: the f-quantile of |x| / tx is known in closed form. */
START_TEST(frame_need_of_a_line_of_known_spread)
{
	struct sim_state st;
	const size_t n = 10000;
	const double R = 25;
	state_two(&st, n);
	for (size_t i = 0; i < n; i++) {
		double x = R * ((double)(i / 2) + 0.5) / (double)(n / 2);
		st.pos[3 * i] = i % 2 ? x : -x; /* symmetric about the target */
		st.mass[i] = 1;
	}
	float wc[2];
	render_framing_weights(plain_scene(), &st, wc);
	struct render_camera cam = {.pos = {0, -100, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 40};
	struct render_frame_geom g;
	render_frame_geom_make(&cam, 1920, 1080, 0.05, 1.0, &g);
	double d;
	ck_assert_int_eq(render_frame_need(&st, wc, &g, 0.95, &d), 0);
	double tx = 0.95 * tan(20 * M_PI / 180) * 1920.0 / 1080.0;
	ck_assert_close(d, 0.95 * R / tx, 0, 1e-3);
	sim_state_free(&st);
}
END_TEST

/* render_camera_at with follow light and frame auto (a run's frame 0). */
START_TEST(camera_at_frames_the_light)
{
	static struct scene sc;
	const char *text = "units: nbody\nseed: 3\n"
			   "bodies:\n"
			   "  - {name: a, model: plummer, count: 3000, scale: 1, position: [4, 0, 1]}\n"
			   "  - {name: dm, model: hernquist, count: 3000, mass: 5, scale: 3,"
			   " position: [-10, 3, 0], color: [0, 0, 0]}\n"
			   "camera: {follow: light, frame: auto, frame_fraction: 0.9, frame_range: [0.01, 10],"
			   " keys: [{frame: 0, position: [0, -40, 10], target: [0, 0, 0]}]}\n"
			   "render: {width: 320, height: 180}\n";
	ck_assert_int_eq(scene_load_string(text, "t.yaml", "/tmp", NULL, 0, &sc), 0);
	struct sim_state st;
	ck_assert_int_eq(sim_ic_build(&sc, &st), 0);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(&sc, 0, &st, &cam), 0);
	/* the target is near the bright cluster, not the mass centre */
	ck_assert(fabs(cam.target[0] - 4) < 0.3 && fabs(cam.target[2] - 1) < 0.3);
	double in = share_in_view(&st, &cam, 320, 180, 0.05);
	double far = sqrt(pow(cam.pos[0] - cam.target[0], 2) + pow(cam.pos[1] - cam.target[1], 2) +
			  pow(cam.pos[2] - cam.target[2], 2));
	printf("frame auto: distance %.3f (keys: %.3f), %.4f of the light in view less the margin\n",
	       far, sqrt(40 * 40 + 10 * 10.0), in);
	ck_assert(in >= 0.9);
	sim_state_free(&st);
}
END_TEST

/* frame auto's rule, the one both framings read (render/framing.c): the
 * need clamped to camera.frame_range x the keys' distance (and its ratio,
 * which a run smooths, clamped to the same bounds), the eye put that far
 * back from the target along the frame's forward axis. Keys' distance 10,
 * range [0.5, 4]: a need of 20 stays 20 (scale 2), 2 becomes 5 (0.5), 90
 * becomes 40 (4). */
START_TEST(frame_auto_rule_clamps_and_places)
{
	struct scene *sc = calloc(1, sizeof *sc);
	ck_assert_ptr_nonnull(sc);
	sc->render.width = sc->render.height = 64;
	sc->camera.frame_range[0] = 0.5;
	sc->camera.frame_range[1] = 4;
	struct render_camera cam = {.pos = {0, -10, 0}, .target = {0, 0, 0}, .up = {0, 0, 1}, .fov = 60};
	const double d0 = render_framing_dist(&cam);
	ck_assert_double_eq(d0, 10.0);
	const double need[3] = {20, 2, 90}, dist[3] = {20, 5, 40}, scale[3] = {2, 0.5, 4};
	for (int k = 0; k < 3; k++) {
		double s;
		ck_assert_double_eq(render_framing_range(sc, need[k], d0, &s), dist[k]);
		ck_assert_double_eq(s, scale[k]);
	}
	struct render_frame_geom g;
	render_framing_geom(sc, &cam, 1.0, &g);
	ck_assert_double_eq_tol(g.fwd[1], 1.0, 1e-15);
	render_framing_place(&cam, &g, 40);
	ck_assert_double_eq_tol(cam.pos[1], -40.0, 1e-12);
	ck_assert_double_eq_tol(fabs(cam.pos[0]) + fabs(cam.pos[2]), 0.0, 1e-12);
	ck_assert_double_eq_tol(render_framing_dist(&cam), 40.0, 1e-12);
	free(sc);
}
END_TEST

/* The program: follow light + frame auto reports the share in view. */
START_TEST(program_reports_light_in_view)
{
	char dir[] = "/tmp/nb-test-framing-XXXXXX", cmd[2048], line[1024];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof cmd,
		 "'%s' tests/data/plummer-small.yaml --backend cpu --set camera.follow=light"
		 " --set camera.frame=auto --set output.frames=8 --set render.width=96"
		 " --set render.height=54 --set output.video= --set output.stats="
		 " --set output.preview=%s/p.jpg --set output.resolved_scene=%s/s.yaml 2>&1",
		 nb_bin(), dir, dir);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	double min = -1, mean = -1;
	int frames = 0, below = -1;
	while (fgets(line, sizeof line, p)) {
		const char *s = strstr(line, "camera: drawn light inside the frame over ");
		if (s)
			ck_assert_int_eq(sscanf(s, "camera: drawn light inside the frame over %d frames: "
						   "min %lf%% (frame %*d), mean %lf%%, %d frames below",
						&frames, &min, &mean, &below), 4);
	}
	ck_assert_int_eq(pclose(p), 0);
	printf("program: %d frames, min %.2f%%, mean %.2f%%, %d below 95%%\n", frames, min, mean,
	       below);
	ck_assert_int_eq(frames, 8);
	ck_assert(min >= 95.0 && mean >= min && below == 0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("framing");
	TCase *tc = tcase_create("cpu");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, light_centre_is_the_bright_cluster);
	tcase_add_test(tc, frame_auto_rule_clamps_and_places);
	tcase_add_test(tc, outlier_does_not_move_the_light_centre);
	tcase_add_test(tc, statistics_do_not_depend_on_threads);
	tcase_add_test(tc, spring_step_is_critically_damped);
	tcase_add_test(tc, frame_need_keeps_the_fraction_in_view);
	tcase_add_test(tc, frame_need_of_a_line_of_known_spread);
	tcase_add_test(tc, camera_at_frames_the_light);
	tcase_add_test(tc, program_reports_light_in_view);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
