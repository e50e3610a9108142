/* snap_internal.h - what the snapshot readers share (private to sim/snap*.c):
 * the open file's handle and the two back ends behind sim_snap_open and
 * sim_snap_read (sim.h). snap.c detects the format and checks values;
 * snap_gadget_bin.c and snap_hdf5.c read the bytes. */
#ifndef NB_SNAP_INTERNAL_H
#define NB_SNAP_INTERNAL_H

#include <stdint.h>

#include "sim.h"

/* One block of a GADGET binary file: the data between its record markers. */
struct snap_bin_block {
	int64_t off;  /* byte offset of its first data byte */
	uint64_t len; /* data bytes */
	int found;
	int esize;    /* bytes of one value (a coordinate, an ID, a mass): 4 or 8 */
};
enum { SNAP_POS, SNAP_VEL, SNAP_ID, SNAP_MASS, SNAP_HSML, SNAP_NBLOCKS };

struct sim_snap {
	char path[SCENE_PATH_MAX + 64];
	struct sim_snap_header h;
	int fd;          /* binary: the open file; -1 for HDF5 */
	int64_t fsize;
	struct snap_bin_block blk[SNAP_NBLOCKS];
	uint64_t first_of[SIM_SNAP_NTYPES];      /* binary: type t's first index in POS/VEL/ID */
	uint64_t mass_first_of[SIM_SNAP_NTYPES]; /* binary: ... in MASS (types stored there) */
	int64_t h5;      /* HDF5: the file (an hid_t), -1 none */
};

/* Binary (snap_gadget_bin.c): read s->fd's header and block layout into s
 * (format: SIM_SNAP_GADGET1, SIM_SNAP_GADGET2 or AUTO for either).
 * 0 or NB_EINPUT / NB_ERUNTIME, logged with s->path. */
int sim_snap_bin_open(struct sim_snap *s, enum sim_snap_format format);
/* sim_snap_read's contract for a binary file, values unchecked. */
int sim_snap_bin_read(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		      double *pos, double *vel, double *mass, double *hsml);

/* HDF5 (snap_hdf5.c): open s->path, read and check the header and the
 * PartTypeN groups. 0 or NB_EINPUT / NB_ERUNTIME, logged. */
int sim_snap_h5_open(struct sim_snap *s);
int sim_snap_h5_read(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		     double *pos, double *vel, double *mass, double *hsml);
void sim_snap_h5_close(struct sim_snap *s);
/* Dataset DSET (an hid_t; named DN in messages, of file PATH of FSIZE
 * bytes, 0 unknown), of value type TYPE (an hid_t) and NVAL values, holds
 * the data its shape claims: unfiltered, at least NVAL x the value size
 * bytes are stored; filtered (compressed), at least that over 65536
 * (deflate's own bound is about 1032:1). So a header and a dataset that
 * claim 10^12 particles in a file of a few kilobytes (a dataset never
 * written, which libhdf5 would read back as fill values) are refused
 * before anything is allocated or read. Virtual datasets and external
 * storage (bytes in other files) are not measured. 0, or NB_EINPUT logged. */
int sim_snap_h5_stored(int64_t dset, int64_t type, const char *path, const char *dn,
		       uint64_t nval, int64_t fsize);
/* 1 when path is an HDF5 file (signature anywhere libhdf5 looks). */
int sim_snap_h5_is_hdf5(const char *path);

/* Names of the types as component suffixes and in messages. */
extern const char *const sim_snap_type_names[SIM_SNAP_NTYPES];

#endif
