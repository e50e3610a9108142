/* snap.c - the snapshot reader's common face (sim_snap_* in sim.h): pick
 * the format's row (sim_snap_formats[], snap_internal.h), check the
 * header's counts, read ranges of particles through the row (snap_hdf5.c,
 * snap_gadget_bin.c) and refuse values that are not finite. One file per
 * handle; a series or a multi-file snapshot is a loop over
 * sim_snap_part_path's names (snap_load.c does it for scenes).
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

/* bodies.*.format: auto tries the rows in this order; the last takes what
 * no probe before it took (GADGET format 2: its open says why a file is
 * neither HDF5 nor GADGET binary). A new format goes before it. */
const struct sim_snap_format *const sim_snap_formats[] = {
	&sim_snap_fmt_gadget_hdf5,
	&sim_snap_fmt_gadget1,
	&sim_snap_fmt_gadget2,
	NULL,
};

const struct sim_snap_format *sim_snap_format_find(const char *name)
{
	for (int i = 0; sim_snap_formats[i]; i++)
		if (strcmp(sim_snap_formats[i]->name, name) == 0)
			return sim_snap_formats[i];
	return NULL;
}

const char *sim_snap_format_title(const struct sim_snap_format *f)
{
	return f->title;
}

/* The row that reads s's file: the one asked for, else the first whose
 * probe takes it, else the last. */
static const struct sim_snap_format *snap_pick(const struct sim_snap *s,
					       const struct sim_snap_format *want)
{
	if (want)
		return want;
	int i = 0;
	while (sim_snap_formats[i + 1] && !sim_snap_formats[i]->probe(s))
		i++;
	return sim_snap_formats[i];
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

/* A handle for path with its file open (scene_infile_open), or NULL logged. */
static struct sim_snap *snap_new(const char *path, int *err)
{
	char why[300];
	struct sim_snap *s = calloc(1, sizeof *s);
	*err = NB_ERUNTIME;
	if (!s) {
		log_error("%s: out of memory", path);
		return NULL;
	}
	s->fd = -1;
	*err = NB_EINPUT;
	if (strlen(path) >= sizeof s->path) {
		log_error("%s: path too long (at most %zu characters)", path, sizeof s->path - 1);
		free(s);
		return NULL;
	}
	memcpy(s->path, path, strlen(path) + 1);
	s->fd = scene_infile_open(path, why, sizeof why);
	if (s->fd < 0) {
		log_error("%s: %s; expected a snapshot file", path, why);
		free(s);
		return NULL;
	}
	s->fsize = lseek(s->fd, 0, SEEK_END);
	*err = 0;
	return s;
}

int sim_snap_open(const char *path, const struct sim_snap_format *format, struct sim_snap **out)
{
	int err = 0;
	*out = NULL;
	struct sim_snap *s = snap_new(path, &err);
	if (!s)
		return err;
	s->h.format = snap_pick(s, format);
	s->priv = calloc(1, s->h.format->priv_size);
	if (!s->priv) {
		log_error("%s: out of memory", path);
		err = NB_ERUNTIME;
	}
	if (!err)
		err = s->h.format->open(s);
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
	if (s->priv && s->h.format->close)
		s->h.format->close(s);
	free(s->priv);
	free(s);
	*ps = NULL;
}

/* Every value finite (positions, velocities, masses >= 0). */
static int snap_check_values(const struct sim_snap *s, int type, uint64_t first, size_t n,
			     const double *pos, const double *vel, const double *mass)
{
	int bad = -1;
	size_t i = 0;
	for (i = 0; i < n && bad < 0; i++) {
		for (int a = 0; a < 3 && bad < 0; a++) {
			if (pos && !isfinite(pos[3 * i + a]))
				bad = SIM_SNAP_DATA_POS;
			else if (vel && !isfinite(vel[3 * i + a]))
				bad = SIM_SNAP_DATA_VEL;
		}
		if (bad < 0 && mass && !(isfinite(mass[i]) && mass[i] >= 0))
			bad = SIM_SNAP_DATA_MASS;
	}
	if (bad < 0)
		return 0;
	char where[48];
	s->h.format->data_name(type, bad, where, sizeof where);
	log_error("%s: %s: particle %llu of type %d has a value that is not finite%s", s->path,
		  where, (unsigned long long)(first + i - 1), type,
		  bad == SIM_SNAP_DATA_MASS ? " and >= 0" : "");
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
	/* the row reads what the file stores; masses of a MassTable type and
	 * absent smoothing lengths are the same for every format */
	const int stored_mass = s->h.has_mass[type], stored_hsml = s->h.has_hsml[type];
	int err = s->h.format->read(s, type, first, n, id, pos, vel, stored_mass ? mass : NULL,
				    stored_hsml ? hsml : NULL);
	for (size_t i = 0; !err && mass && !stored_mass && i < n; i++)
		mass[i] = s->h.mass_table[type];
	for (size_t i = 0; !err && hsml && !stored_hsml && i < n; i++)
		hsml[i] = NAN;
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
