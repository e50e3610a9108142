/* test_let_gwire.c - the checked reader of the GPU locally essential trees'
 * bytes (sim/let_gwire.c): a hand-made tree passes, and every kind of lie
 * a received buffer can tell is refused with NB_EINPUT before the device
 * walks it (the walk trusts every index). Plain C: runs in every build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "../scene/log.h"
#include "../sim/let_gwire.h"

/* A root of two children: a leaf of one body, a cell sent as moments only;
 * with extra, a third cell hung under the leaf-less second level. */
struct hand {
	float *buf; /* 16-byte aligned */
	size_t nbytes;
	struct sim_glet_view v;
};

static void hand_make(struct hand *h, size_t ncells, size_t nbodies)
{
	h->nbytes = sim_glet_bytes(ncells, nbodies);
	ck_assert(h->nbytes > 0);
	ck_assert_int_eq(posix_memalign((void **)&h->buf, 16, h->nbytes), 0);
	memset(h->buf, 0, h->nbytes);
	sim_glet_header_make((struct sim_glet_header *)h->buf, ncells, nbodies, 2, 1, 2, 0.5f, 0.05f);
	char *p = (char *)h->buf + sizeof(struct sim_glet_header);
	h->v.h = (const struct sim_glet_header *)h->buf;
	h->v.kids = (const int32_t *)p;
	h->v.open = (const float *)(p + 8 * ncells);
	h->v.mq0 = h->v.open + 4 * ncells;
	h->v.mq1 = h->v.mq0 + 4 * ncells;
	h->v.body = h->v.mq1 + 4 * ncells;
}

#define KIDS(h) ((int32_t *)(h)->v.kids)
#define OPEN(h) ((float *)(h)->v.open)
#define MQ0(h) ((float *)(h)->v.mq0)
#define BODY(h) ((float *)(h)->v.body)

/* the valid three-cell tree */
static void hand_tree(struct hand *h)
{
	hand_make(h, 3, 1);
	int32_t *k = KIDS(h);
	k[0] = 1, k[1] = 2;  /* root: cells 1, 2 */
	k[2] = 0, k[3] = -1; /* leaf: body 0 */
	k[4] = 0, k[5] = 0;  /* moments only */
	OPEN(h)[3] = 4.0f, OPEN(h)[7] = 0.5f, OPEN(h)[11] = -1.0f;
	MQ0(h)[0] = 2.0f, MQ0(h)[4] = 1.0f, MQ0(h)[8] = 1.0f;
	BODY(h)[0] = 0.1f, BODY(h)[3] = 1.0f;
}

static int check(const struct hand *h, size_t nbytes)
{
	struct sim_glet_view v;
	return sim_glet_check(h->buf, nbytes, "hand-made tree", &v);
}

START_TEST(gwire_hand_made_tree_passes)
{
	struct hand h;
	hand_tree(&h);
	struct sim_glet_view v;
	ck_assert_int_eq(sim_glet_check(h.buf, h.nbytes, "hand-made tree", &v), 0);
	ck_assert_int_eq((int)v.h->ncells, 3);
	ck_assert_int_eq(v.kids[3], -1);
	ck_assert(v.body[3] == 1.0f);
	ck_assert(sim_glet_same_walk(v.h, 2, 1, 2, 0.5f, 0.05f, "hand-made tree"));
	ck_assert(!sim_glet_same_walk(v.h, 2, 1, 2, 0.6f, 0.05f, "hand-made tree"));
	ck_assert(!sim_glet_same_walk(v.h, 1, 1, 2, 0.5f, 0.05f, "hand-made tree"));
	ck_assert(!sim_glet_same_walk(v.h, 2, 1, 2, 0.5f, 0.1f, "hand-made tree"));
	/* an empty tree (a rank of no bodies) */
	struct hand e;
	hand_make(&e, 0, 0);
	ck_assert_int_eq(check(&e, e.nbytes), 0);
	free(e.buf);
	free(h.buf);
}
END_TEST

/* Each lie (one mutation of the valid tree) is NB_EINPUT. */
START_TEST(gwire_lies_are_refused)
{
	struct hand h;
	int n = 0;
#define LIE(what, stmt, len)                                                          \
	do {                                                                          \
		hand_tree(&h);                                                        \
		stmt;                                                                 \
		ck_assert_msg(check(&h, (len) ? (size_t)(len) : h.nbytes) == NB_EINPUT, \
			      "%s: not refused", what);                               \
		free(h.buf);                                                          \
		n++;                                                                  \
	} while (0)
	LIE("a buffer cut short", (void)0, h.nbytes - 4);
	LIE("a byte too many", (void)0, h.nbytes + 4);
	LIE("shorter than a header", (void)0, 32);
	LIE("another magic", ((struct sim_glet_header *)h.buf)->magic ^= 1, 0);
	LIE("another version", ((struct sim_glet_header *)h.buf)->version = 9, 0);
	LIE("cells claimed past the bytes", ((struct sim_glet_header *)h.buf)->ncells = 4, 0);
	LIE("counts that overflow", ((struct sim_glet_header *)h.buf)->ncells = (uint64_t)1 << 62, 0);
	LIE("a child before its parent", KIDS(&h)[0] = 0, 0);
	LIE("children past the cells", KIDS(&h)[1] = 3, 0);
	LIE("nine children", KIDS(&h)[1] = 9, 0);
	LIE("an orphan cell", KIDS(&h)[1] = 1, 0);
	LIE("a leaf's bodies past the sent", KIDS(&h)[3] = -2, 0);
	LIE("a leaf's first body negative", KIDS(&h)[2] = -1, 0);
	LIE("moments only, not marked accepted", OPEN(&h)[11] = 0.5f, 0);
	LIE("moments only with a body index", KIDS(&h)[4] = 1, 0);
	LIE("a NaN centre", OPEN(&h)[4] = NAN, 0);
	LIE("an infinite moment", ((float *)h.v.mq1)[5] = INFINITY, 0);
	LIE("a negative mass", MQ0(&h)[4] = -1.0f, 0);
	LIE("a NaN opening radius", OPEN(&h)[7] = NAN, 0);
	LIE("a body at infinity", BODY(&h)[1] = INFINITY, 0);
	LIE("a body of negative mass", BODY(&h)[3] = -1.0f, 0);
#undef LIE
	/* a buffer longer than its counts say */
	hand_tree(&h);
	ck_assert_int_eq(check(&h, h.nbytes - 16), NB_EINPUT);
	free(h.buf);
	/* bodies and no cells */
	hand_make(&h, 0, 1);
	ck_assert_int_eq(check(&h, h.nbytes), NB_EINPUT);
	free(h.buf);
	/* a chain deeper than the walk's stack allows: 23 levels of one child */
	hand_make(&h, SIM_GLET_MAX_DEPTH + 1, 0);
	for (int c = 0; c < SIM_GLET_MAX_DEPTH; c++)
		KIDS(&h)[2 * c] = c + 1, KIDS(&h)[2 * c + 1] = 1;
	OPEN(&h)[4 * SIM_GLET_MAX_DEPTH + 3] = -1.0f;
	ck_assert_int_eq(check(&h, h.nbytes), NB_EINPUT);
	free(h.buf);
	/* ... and one level less passes */
	hand_make(&h, SIM_GLET_MAX_DEPTH, 0);
	for (int c = 0; c + 1 < SIM_GLET_MAX_DEPTH; c++)
		KIDS(&h)[2 * c] = c + 1, KIDS(&h)[2 * c + 1] = 1;
	OPEN(&h)[4 * (SIM_GLET_MAX_DEPTH - 1) + 3] = -1.0f;
	ck_assert_int_eq(check(&h, h.nbytes), 0);
	free(h.buf);
	printf("gpu let wire: %d lies and 3 structures refused, the deepest allowed tree passes\n",
	       n);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("let_gwire");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, gwire_hand_made_tree_passes);
	tcase_add_test(tc, gwire_lies_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
