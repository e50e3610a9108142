/* snap_internal.h - what the snapshot readers share (private to sim/snap*.c):
 * the open file's handle and the format table behind sim_snap_open and
 * sim_snap_read (sim.h). snap.c picks the row and checks values; each row's
 * file reads the bytes (snap_hdf5.c: gadget-hdf5; snap_gadget_bin.c:
 * gadget1, gadget2).
 *
 * A format is one const row of callbacks, in the manner of FFmpeg's
 * AVInputFormat (read_probe, read_header, read_packet, read_close,
 * priv_data_size). Adding a format: a file that defines its row
 * (sim_snap_fmt_NAME) and one line in sim_snap_formats[] (snap.c) with its
 * extern below; bodies.*.format takes its name once the scene's list of
 * names (scene/scene_schema.c) has it. */
#ifndef NB_SNAP_INTERNAL_H
#define NB_SNAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* What messages call positions, velocities and masses (sim_snap_format's
 * data_name). */
enum { SIM_SNAP_DATA_POS, SIM_SNAP_DATA_VEL, SIM_SNAP_DATA_MASS };

struct sim_snap_format {
	const char *name;  /* bodies.*.format's name: "gadget-hdf5" */
	const char *title; /* messages and --dry-run: "GADGET-style HDF5" */
	size_t priv_size;  /* bytes of the format's own state (s->priv, zeroed) */
	/* bodies.*.format: auto: 1 when the file (s->fd, s->path) is of this
	 * format, else 0; silent. NULL: the table's last row, which takes
	 * whatever no row before it took (its open says why a file is none). */
	int (*probe)(const struct sim_snap *s);
	/* Read the header and the layout into s->h and s->priv. 0 or NB_EINPUT /
	 * NB_ERUNTIME, logged with s->path. */
	int (*open)(struct sim_snap *s);
	/* sim_snap_read's contract (range checked by the caller), values
	 * unchecked; mass and hsml are asked for only when the file stores
	 * them (h.has_mass, h.has_hsml: the caller fills the others). */
	int (*read)(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		    double *pos, double *vel, double *mass, double *hsml);
	/* Release what open took besides s->priv and s->fd (NULL: nothing);
	 * safe after a failed open. */
	void (*close)(struct sim_snap *s);
	/* Where value DATA (SIM_SNAP_DATA_*) of particle TYPE lies, for
	 * messages: "PartType1/Coordinates", "POS block". */
	void (*data_name)(int type, int data, char *out, size_t len);
};

/* The rows, in the order bodies.*.format: auto probes them (snap.c). */
extern const struct sim_snap_format *const sim_snap_formats[];
extern const struct sim_snap_format sim_snap_fmt_gadget_hdf5; /* snap_hdf5.c */
extern const struct sim_snap_format sim_snap_fmt_gadget1;     /* snap_gadget_bin.c */
extern const struct sim_snap_format sim_snap_fmt_gadget2;     /* snap_gadget_bin.c */

struct sim_snap {
	char path[SCENE_PATH_MAX + 64];
	struct sim_snap_header h; /* h.format: the row that opened the file */
	/* the file, opened by sim_snap_open (scene_infile_open) for every
	 * format; a format that reads by path through a library closes it in
	 * its open and sets -1 */
	int fd;
	int64_t fsize;
	void *priv; /* h.format->priv_size bytes */
};

/* Dataset DSET (an hid_t; named DN in messages, of file PATH of FSIZE
 * bytes, 0 unknown), of value type TYPE (an hid_t) and NVAL values, holds
 * the data its shape claims: unfiltered, at least NVAL x the value size
 * bytes are stored; filtered (compressed), at least that over 65536
 * (deflate's own bound is about 1032:1). So a header and a dataset that
 * claim 10^12 particles in a file of a few kilobytes (a dataset never
 * written, which libhdf5 would read back as fill values) are refused
 * before anything is allocated or read. Virtual datasets and external
 * storage (bytes in other files) are not measured. 0, or NB_EINPUT logged.
 * (snap_hdf5.c; snap_restart.c uses it too.) */
int sim_snap_h5_stored(int64_t dset, int64_t type, const char *path, const char *dn,
		       uint64_t nval, int64_t fsize);

/* Names of the types as component suffixes and in messages. */
extern const char *const sim_snap_type_names[SIM_SNAP_NTYPES];

#endif
