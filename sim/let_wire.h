/* let_wire.h - the bytes of a locally essential tree (sim/let.h): their
 * layout, the writer and the checked reader (sim/let_wire.c), shared by
 * sim/let.c and nothing else.
 *
 * The buffer: a 64-byte header (magic, version, the sizes of what follows,
 * which fields a cell carries, the sender's kernel, opening, multipoles
 * and theta, the counts), then per cell the doubles its walk reads - com,
 * mass, bmax always; q[6] and T with quadrupoles (LET_F_QUAD); the cube's
 * centre and half side with an opening other than bmax (LET_F_CUBE);
 * eps_max and eps2_mean with lengths per body (LET_F_EPS): 5 to 18 - then
 * LET_CELL_I int32 per cell (first child, flags: children mask | leaf |
 * pruned, first body, body count), and 4 or 5 doubles per body (x y z m,
 * and eps with lengths per body). The default walk (bmax, quadrupoles,
 * one length) sends 12 doubles a cell: 112 bytes with the ints. The reader
 * (sim_let_wire_read) checks the length against the counts before
 * reading, every value finite, every index in range and every cell but
 * the root the child of exactly one earlier cell, no deeper than
 * TREE_MAX_DEPTH (the walk's stack), and the fields those that the
 * header's own multipoles, opening and body layout need; whether the
 * sender walked with this rank's parameters is sim/let.c's to check, from
 * the header. A field not sent reads as 0 (the walk does not read it). */
#ifndef NB_SIM_LET_WIRE_H
#define NB_SIM_LET_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "tree_internal.h"

#define LET_MAGIC 0x544c424eu /* "NBLT" little-endian */
#define LET_VERSION 2u
#define LET_CELL_DMAX 18
#define LET_CELL_I 4
#define LET_F_QUAD 1u /* q[6], T */
#define LET_F_CUBE 2u /* centre[3], half */
#define LET_F_EPS 4u  /* eps_max, eps2_mean */
#define LET_LEAF 0x100
#define LET_PRUNED 0x200
#define LET_MAX_COUNT ((uint64_t)1 << 30) /* the CPU tree's limit */

struct let_header {
	uint32_t magic, version;
	uint32_t header_bytes, cell_doubles, cell_ints, body_doubles;
	int32_t kernel, opening, multipoles;
	uint32_t cell_fields; /* LET_F_* */
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

/* The header of plan pl for a walk of kernel, opening, multipoles and
 * theta, with lengths per body or not (each): every field set. */
struct let_header sim_let_wire_header(const struct let_plan *pl, int kernel, int opening,
				      int multipoles, double theta, int each);

/* The length of the buffer of header h. */
size_t sim_let_wire_size(const struct let_header *h);

/* The buffer of plan pl over tree t into b (sim_let_wire_size(h) bytes). */
void sim_let_wire_write(const struct tree *t, const struct let_plan *pl,
			const struct let_header *h, unsigned char *b);

/* Buffer buf (nbytes) as a foreign tree *t (multipoles: the walk's) and
 * its header *h, every part checked (top of the file; what: the buffer's
 * name in messages). 0 or NB_ERUNTIME (logged; t zeroed). */
int sim_let_wire_read(const char *what, const void *buf, size_t nbytes, int multipoles,
		      struct let_header *h, struct tree *t);

#endif
