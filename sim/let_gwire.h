/* let_gwire.h - the bytes of a locally essential tree made on the GPU
 * (sim/cuda/tree_let.cu, gpu.h's gpu_let_*): the layout, the header's
 * maker and the checked reader (sim/let_gwire.c). Plain C, so that the
 * checks run and are tested in every build, GPU or not.
 *
 * The buffer: a 64-byte header (magic, version, the sizes of what
 * follows, the sender's multipoles, criterion, leaf_p2p, theta and
 * softening, the counts), then the device tree's own layout (struct
 * gpu_tree's node arrays, sim/cuda/tree_internal.cuh) for the cells sent,
 * in breadth-first order: kids (2 int32 a cell: internal (first child,
 * 1..8 children); a leaf sent with its bodies (first body, -count); a
 * cell sent as moments only (0, 0)), open (4 floats: com, rcrit^2; -1 for
 * moments only: the receiver accepts it whatever its walk group), mq0 and
 * mq1 (4 floats each: mass, Qxx, Qyy, Qzz; Qxy, Qxz, Qyz, T), then 4
 * floats a body (x y z m). 56 bytes a cell, 16 a body.
 *
 * sim_glet_check: the length against the counts before anything is read,
 * every cell but the root the child of exactly one earlier cell (each
 * internal cell's children the next unclaimed ones: the breadth-first
 * layout), no deeper than SIM_GLET_MAX_DEPTH (the walk's stack bound), every
 * body range inside the bodies, every value finite, masses >= 0. Whether
 * the sender walked with this rank's parameters is the reader's to check
 * from the header (sim_glet_same_walk). */
#ifndef NB_SIM_LET_GWIRE_H
#define NB_SIM_LET_GWIRE_H

#include <stddef.h>
#include <stdint.h>

#define SIM_GLET_MAGIC 0x4c47424eu /* "NBGL" little-endian */
#define SIM_GLET_VERSION 1u
#define SIM_GLET_CELL_BYTES 56u
#define SIM_GLET_BODY_BYTES 16u
#define SIM_GLET_MAX_DEPTH 22 /* depths 0..21: the device tree's (TREE_MAX_DEPTH) */
#define SIM_GLET_MAX_COUNT ((uint64_t)1 << 31) /* int32 indices */

struct sim_glet_header {
	uint32_t magic, version, header_bytes, cell_bytes;
	int32_t multipoles, criterion, leaf_p2p, reserved;
	float theta, eps;
	uint64_t ncells, nbodies;
	uint64_t reserved2;
};
#ifdef __cplusplus
static_assert(sizeof(struct sim_glet_header) == 64, "the header's layout is 64 bytes");
#else
_Static_assert(sizeof(struct sim_glet_header) == 64, "the header's layout is 64 bytes");
#endif

/* The arrays of a checked buffer (pointers into it). */
struct sim_glet_view {
	const struct sim_glet_header *h;
	const int32_t *kids; /* 2 a cell */
	const float *open, *mq0, *mq1; /* 4 a cell each */
	const float *body; /* 4 a body */
};

/* The buffer's length for these counts; 0 when they pass SIM_GLET_MAX_COUNT. */
size_t sim_glet_bytes(uint64_t ncells, uint64_t nbodies);
/* Every field of h for a buffer of these counts and walk parameters. */
void sim_glet_header_make(struct sim_glet_header *h, uint64_t ncells, uint64_t nbodies, int multipoles,
		      int criterion, int leaf_p2p, float theta, float eps);
/* Check buf (nbytes, 4-byte aligned) as above and point v into it.
 * 0, or NB_EINPUT with the reason logged (what names the buffer). */
int sim_glet_check(const void *buf, size_t nbytes, const char *what, struct sim_glet_view *v);
/* 1 when h was made by a walk of exactly these parameters, else 0 with
 * the difference logged. */
int sim_glet_same_walk(const struct sim_glet_header *h, int multipoles, int criterion, int leaf_p2p,
		   float theta, float eps, const char *what);

#endif
