/* let_wire.h - the bytes of a locally essential tree (sim/let.h): their
 * layout, the writer and the checked reader (sim/let_wire.c), shared by
 * sim/let.c and nothing else.
 *
 * The buffer: a 64-byte header (magic, version, the sizes of what follows,
 * the sender's kernel, opening, multipoles and theta, the counts), then
 * LET_CELL_D doubles per cell (com, mass, q[6], T, bmax, centre, half,
 * eps_max, eps2_mean), LET_CELL_I int32 per cell (first child, flags:
 * children mask | leaf | pruned, first body, body count), and 4 or 5
 * doubles per body (x y z m, and eps with lengths per body). The reader
 * (sim_let_wire_read) checks the length against the counts before
 * reading, every value finite, every index in range and every cell but
 * the root the child of exactly one earlier cell, no deeper than
 * TREE_MAX_DEPTH (the walk's stack); whether the sender walked with this
 * rank's parameters is sim/let.c's to check, from the header. */
#ifndef NB_SIM_LET_WIRE_H
#define NB_SIM_LET_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "tree_internal.h"

#define LET_MAGIC 0x544c424eu /* "NBLT" little-endian */
#define LET_VERSION 1u
#define LET_CELL_D 18
#define LET_CELL_I 4
#define LET_LEAF 0x100
#define LET_PRUNED 0x200
#define LET_MAX_COUNT ((uint64_t)1 << 30) /* the CPU tree's limit */

struct let_header {
	uint32_t magic, version;
	uint32_t header_bytes, cell_doubles, cell_ints, body_doubles;
	int32_t kernel, opening, multipoles;
	uint32_t reserved;
	uint64_t ncells, nbodies;
	double theta;
};
_Static_assert(sizeof(struct let_header) == 64, "the header's layout is 64 bytes");

/* What goes: src[c] the own cell sent as cell c, meta[LET_CELL_I c] its
 * ints; nbody the bodies sent. */
struct let_plan {
	int *src;
	int32_t *meta;
	int ncell, nbody;
};

/* The length of the buffer of pl with bd doubles a body (4 or 5). */
size_t sim_let_wire_size(const struct let_plan *pl, int bd);

/* The buffer of plan pl over tree t into b (sim_let_wire_size bytes): h's
 * kernel, opening, multipoles, theta and body_doubles as given, the rest
 * (magic, sizes, counts) set here. */
void sim_let_wire_write(const struct tree *t, const struct let_plan *pl, struct let_header h,
			unsigned char *b);

/* Buffer buf (nbytes) as a foreign tree *t (multipoles: the walk's) and
 * its header *h, every part checked (top of the file; what: the buffer's
 * name in messages). 0 or NB_ERUNTIME (logged; t zeroed). */
int sim_let_wire_read(const char *what, const void *buf, size_t nbytes, int multipoles,
		      struct let_header *h, struct tree *t);

#endif
