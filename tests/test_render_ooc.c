/* test_render_ooc.c - out-of-core drawing's host side (render/ooc.c): the
 * chunk plan's arithmetic under a budget, and the packing of a state into
 * float4 rows. The GPU frame itself: tests/test_gpu_ooc.c.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_render_ooc && /tmp/b/tests/test_render_ooc */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "render/render.h"
#include "scene/log.h"
#include "sim/sim.h"

/* 65000 bodies, 1000 bytes fixed, 10 a body, a budget of 1000 + 10 x
 * 10000 + 9: 10000 a chunk (the 9 spare bytes buy no body), 7 chunks, the
 * last holding 5000; the plan uses exactly fixed + 10000 x 10. */
START_TEST(plan_fills_budget_with_uneven_last_chunk)
{
	struct render_ooc_plan p;
	ck_assert_int_eq(render_ooc_plan(65000, 1000 + 10 * 10000 + 9, 1000, 10, 0, &p), 0);
	ck_assert_uint_eq(p.chunk, 10000);
	ck_assert_uint_eq(p.nchunks, 7);
	ck_assert_uint_eq(p.last, 5000);
	ck_assert_uint_eq(p.bytes, 101000);
	size_t first, count, sum = 0;
	for (size_t k = 0; k < p.nchunks; k++) {
		render_ooc_chunk(&p, k, &first, &count);
		ck_assert_uint_eq(first, k * 10000);
		ck_assert_uint_eq(count, k < 6 ? 10000 : 5000);
		sum += count;
	}
	ck_assert_uint_eq(sum, 65000);
	render_ooc_chunk(&p, 7, &first, &count);
	ck_assert_uint_eq(count, 0);
	/* an exact multiple: no short chunk */
	ck_assert_int_eq(render_ooc_plan(70000, 101000, 1000, 10, 0, &p), 0);
	ck_assert_uint_eq(p.nchunks, 7);
	ck_assert_uint_eq(p.last, 10000);
}
END_TEST

/* Everything fits: one chunk of all n (the device room is n, not the
 * budget's); max_chunk caps a large budget; 0 bodies: one empty chunk. */
START_TEST(plan_caps_at_n_and_max_chunk)
{
	struct render_ooc_plan p;
	ck_assert_int_eq(render_ooc_plan(5000, (size_t)1 << 40, 0, 16, 0, &p), 0);
	ck_assert_uint_eq(p.chunk, 5000);
	ck_assert_uint_eq(p.nchunks, 1);
	ck_assert_uint_eq(p.last, 5000);
	ck_assert_uint_eq(p.bytes, 5000 * 16);
	ck_assert_int_eq(render_ooc_plan(1000000000, (size_t)1 << 40, 0, 16, 300000000, &p), 0);
	ck_assert_uint_eq(p.chunk, 300000000);
	ck_assert_uint_eq(p.nchunks, 4);
	ck_assert_uint_eq(p.last, 100000000);
	ck_assert_int_eq(render_ooc_plan(0, 100, 0, 16, 0, &p), 0);
	ck_assert_uint_eq(p.nchunks, 1);
	ck_assert_uint_eq(p.last, 0);
}
END_TEST

/* 1e9 bodies at 55 bytes each (the stars' rate) under 8 GiB with 320 MiB
 * fixed: (8 GiB - 320 MiB) / 55 = 150,079,823 a chunk (floor), 7 chunks. */
START_TEST(plan_of_a_billion_under_8g)
{
	struct render_ooc_plan p;
	const size_t budget = (size_t)8 << 30, fixed = (size_t)320 << 20;
	ck_assert_int_eq(render_ooc_plan(1000000000, budget, fixed, 55, 0, &p), 0);
	ck_assert_uint_eq(p.chunk, (budget - fixed) / 55);
	ck_assert_uint_eq(p.chunk, 150079823);
	ck_assert_uint_eq(p.nchunks, 7);
	ck_assert_uint_eq(p.last, 1000000000 - 6 * (size_t)150079823);
	ck_assert(p.bytes <= budget);
}
END_TEST

/* Too small: below the fixed part, or room for fewer than
 * RENDER_OOC_MIN_CHUNK bodies (but a smaller n needs only n). */
START_TEST(plan_refuses_too_small_budget)
{
	struct render_ooc_plan p;
	ck_assert_int_eq(render_ooc_plan(1000000, 999, 1000, 10, 0, &p), NB_EINPUT);
	ck_assert_int_eq(render_ooc_plan(1000000, 1000 + 10 * (RENDER_OOC_MIN_CHUNK - 1), 1000, 10,
					 0, &p), NB_EINPUT);
	ck_assert_int_eq(render_ooc_plan(1000000, 1000 + 10 * RENDER_OOC_MIN_CHUNK, 1000, 10, 0, &p),
			 0);
	ck_assert_uint_eq(p.chunk, RENDER_OOC_MIN_CHUNK);
	ck_assert_int_eq(render_ooc_plan(100, 1000 + 10 * 100, 1000, 10, 0, &p), 0);
	ck_assert_uint_eq(p.chunk, 100);
	ck_assert_int_eq(render_ooc_plan(100, 1000, 0, 0, 0, &p), NB_EINPUT);
}
END_TEST

/* Rows k = body first + k: (x, y, z, m) and (vx, vy, vz, 0) as floats of
 * the doubles, components copied; a state without components packs 0. */
START_TEST(pack_rows_are_the_state_as_floats)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(sim_state_alloc(&st, 10, 3), 0);
	for (size_t i = 0; i < 10; i++) {
		for (int d = 0; d < 3; d++) {
			st.pos[3 * i + d] = 1.0 / 3.0 + (double)(10 * i + d);
			st.vel[3 * i + d] = -0.1 * (double)(i + d);
		}
		st.mass[i] = 0.5 + (double)i;
		st.comp[i] = (uint16_t)(i % 3);
	}
	float pos[4 * 4], vel[4 * 4];
	uint16_t comp[4];
	memset(vel, 0xff, sizeof vel);
	render_ooc_pack(&st, 6, 4, pos, vel, comp);
	for (int k = 0; k < 4; k++) {
		const size_t i = 6 + (size_t)k;
		for (int d = 0; d < 3; d++) {
			ck_assert(pos[4 * k + d] == (float)st.pos[3 * i + d]);
			ck_assert(vel[4 * k + d] == (float)st.vel[3 * i + d]);
		}
		ck_assert(pos[4 * k + 3] == (float)st.mass[i]);
		ck_assert(vel[4 * k + 3] == 0.0f);
		ck_assert_uint_eq(comp[k], i % 3);
	}
	uint16_t *keep = st.comp;
	st.comp = NULL;
	memset(comp, 0xff, sizeof comp);
	render_ooc_pack(&st, 0, 4, pos, NULL, comp);
	for (int k = 0; k < 4; k++)
		ck_assert_uint_eq(comp[k], 0);
	ck_assert(pos[4 * 3 + 0] == (float)st.pos[9]);
	st.comp = keep;
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("render_ooc");
	TCase *tc = tcase_create("plan");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, plan_fills_budget_with_uneven_last_chunk);
	tcase_add_test(tc, plan_caps_at_n_and_max_chunk);
	tcase_add_test(tc, plan_of_a_billion_under_8g);
	tcase_add_test(tc, plan_refuses_too_small_budget);
	tcase_add_test(tc, pack_rows_are_the_state_as_floats);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
