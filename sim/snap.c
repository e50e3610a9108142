/* snap.c - the snapshot reader's common face (sim_snap_* in sim.h): pick
 * the format, check the header's counts, read ranges of particles through
 * the back end (snap_gadget_bin.c, snap_hdf5.c) and refuse values that are
 * not finite. One file per handle; a series or a multi-file snapshot is a
 * loop over sim_snap_part_path's names (snap_load.c does it for scenes).
 *
 * Try: a scene entry {name: g, model: snapshot, file: snap_012.hdf5}. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snap_internal.h"

const char *const sim_snap_type_names[SIM_SNAP_NTYPES] = {"gas",   "halo",  "disk",
							  "bulge", "stars", "bh"};

static const unsigned char snap_h5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* The HDF5 signature at byte 0, read from fd. */
static int snap_has_h5_sig(int fd)
{
	unsigned char b[8];
	return pread(fd, b, 8, 0) == 8 && memcmp(b, snap_h5_sig, 8) == 0;
}

/* Counts the back ends do not check: a one-file snapshot holds its total
 * (a total of 0 means unknown: GADGET's own ICs write it so). */
static int snap_check_counts(const struct sim_snap *s)
{
	const struct sim_snap_header *h = &s->h;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (h->npart[t] > ((uint64_t)1 << 40)) {
			log_error("%s: type %d: %llu particles in one file, more than this reader "
				  "takes (2^40)",
				  s->path, t, (unsigned long long)h->npart[t]);
			return NB_EINPUT;
		}
		if (h->num_files == 1 && h->npart_total[t] != 0 && h->npart_total[t] != h->npart[t]) {
			log_error("%s: Header: NumPart_Total[%d] is %llu, but this one-file snapshot "
				  "holds %llu (NumPart_ThisFile)",
				  s->path, t, (unsigned long long)h->npart_total[t],
				  (unsigned long long)h->npart[t]);
			return NB_EINPUT;
		}
		if (h->npart_total[t] != 0 && h->npart_total[t] < h->npart[t]) {
			log_error("%s: Header: NumPart_Total[%d] is %llu, fewer than this file's %llu",
				  s->path, t, (unsigned long long)h->npart_total[t],
				  (unsigned long long)h->npart[t]);
			return NB_EINPUT;
		}
	}
	return 0;
}

int sim_snap_open(const char *path, enum sim_snap_format format, struct sim_snap **out)
{
	char why[300];
	int err = 0;
	*out = NULL;
	struct sim_snap *s = calloc(1, sizeof *s);
	if (!s) {
		log_error("%s: out of memory", path);
		return NB_ERUNTIME;
	}
	s->fd = -1;
	s->h5 = -1;
	if (strlen(path) >= sizeof s->path) {
		log_error("%s: path too long (at most %zu characters)", path, sizeof s->path - 1);
		free(s);
		return NB_EINPUT;
	}
	memcpy(s->path, path, strlen(path) + 1);
	s->fd = scene_infile_open(path, why, sizeof why);
	if (s->fd < 0) {
		log_error("%s: %s; expected a snapshot file", path, why);
		free(s);
		return NB_EINPUT;
	}
	s->fsize = lseek(s->fd, 0, SEEK_END);
	int h5 = format == SIM_SNAP_HDF5 ||
		 (format == SIM_SNAP_AUTO && (snap_has_h5_sig(s->fd) || sim_snap_h5_is_hdf5(path)));
	if (h5) {
		close(s->fd);
		s->fd = -1;
		err = sim_snap_h5_open(s);
	} else {
		err = sim_snap_bin_open(s, format);
	}
	if (!err)
		err = snap_check_counts(s);
	if (err) {
		sim_snap_close(&s);
		return err;
	}
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		if (s->h.npart_total[t] == 0)
			s->h.npart_total[t] = s->h.npart[t];
	*out = s;
	return 0;
}

const struct sim_snap_header *sim_snap_header(const struct sim_snap *s)
{
	return &s->h;
}

void sim_snap_close(struct sim_snap **ps)
{
	struct sim_snap *s = *ps;
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	sim_snap_h5_close(s);
	free(s);
	*ps = NULL;
}

/* Every value finite (positions, velocities, masses >= 0). */
static int snap_check_values(const struct sim_snap *s, int type, uint64_t first, size_t n,
			     const double *pos, const double *vel, const double *mass)
{
	const char *bad = NULL;
	size_t i = 0;
	for (i = 0; i < n && !bad; i++) {
		for (int a = 0; a < 3 && !bad; a++) {
			if (pos && !isfinite(pos[3 * i + a]))
				bad = s->h.format == SIM_SNAP_HDF5 ? "Coordinates" : "POS";
			else if (vel && !isfinite(vel[3 * i + a]))
				bad = s->h.format == SIM_SNAP_HDF5 ? "Velocities" : "VEL";
		}
		if (!bad && mass && !(isfinite(mass[i]) && mass[i] >= 0))
			bad = s->h.format == SIM_SNAP_HDF5 ? "Masses" : "MASS";
	}
	if (!bad)
		return 0;
	char where[48];
	if (s->h.format == SIM_SNAP_HDF5)
		snprintf(where, sizeof where, "PartType%d/%s", type, bad);
	else
		snprintf(where, sizeof where, "%s block", bad);
	log_error("%s: %s: particle %llu of type %d has a value that is not finite%s", s->path,
		  where, (unsigned long long)(first + i - 1), type,
		  strcmp(bad, "Masses") == 0 || strcmp(bad, "MASS") == 0 ? " and >= 0" : "");
	return NB_EINPUT;
}

int sim_snap_read(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		  double *pos, double *vel, double *mass, double *hsml)
{
	if (type < 0 || type >= SIM_SNAP_NTYPES || first > s->h.npart[type] ||
	    n > s->h.npart[type] - first) {
		log_error("%s: particles %llu + %zu of type %d asked for, the file has %llu", s->path,
			  (unsigned long long)first, n, type,
			  (unsigned long long)(type >= 0 && type < SIM_SNAP_NTYPES ? s->h.npart[type] : 0));
		return NB_ERUNTIME;
	}
	int err = s->h.format == SIM_SNAP_HDF5
			  ? sim_snap_h5_read(s, type, first, n, id, pos, vel, mass, hsml)
			  : sim_snap_bin_read(s, type, first, n, id, pos, vel, mass, hsml);
	if (!err)
		err = snap_check_values(s, type, first, n, pos, vel, mass);
	return err;
}

int sim_snap_part_path(const char *first, int i, char *out, size_t len)
{
	size_t n = strlen(first);
	if (i == 0) {
		if (n >= len)
			return NB_EINPUT;
		memcpy(out, first, n + 1);
		return 0;
	}
	/* the last ".0" followed by the end or by ".ext" without another dot */
	const char *at = NULL;
	for (const char *p = first; (p = strstr(p, ".0")) != NULL; p++) {
		const char *rest = p + 2;
		if (*rest == '\0' || (*rest == '.' && !strchr(rest + 1, '.') && !strchr(rest, '/')))
			at = p;
	}
	if (!at)
		return NB_EINPUT;
	int w = snprintf(out, len, "%.*s.%d%s", (int)(at - first), first, i, at + 2);
	return w < 0 || (size_t)w >= len ? NB_EINPUT : 0;
}

int sim_snap_keep_id(uint64_t id, double f)
{
	if (f >= 1)
		return 1;
	/* SplitMix64's finaliser (sim_rng_u64 with a fixed seed): the IDs a
	 * fraction keeps do not depend on the scene's seed, so every scene and
	 * every snapshot of a run keeps the same particles. */
	uint64_t h = sim_rng_u64(0x5eed5a4a5a4a5eedULL, 0, id);
	return (double)(h >> 11) * 0x1.0p-53 < f;
}
