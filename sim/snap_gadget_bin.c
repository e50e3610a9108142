/* snap_gadget_bin.c - GADGET-1/2 binary snapshots (the "unformatted"
 * Fortran-style files of GADGET-2's io.c): every block is a record framed
 * by its length in bytes, a 4-byte integer before and after it.
 *
 *   format 1: HEAD (256 bytes), POS, VEL, ID, MASS (only when some type
 *             with particles has MassTable 0), then gas blocks (U, ...),
 *             in this fixed order;
 *   format 2: each block is preceded by a record of 8 bytes holding its
 *             4-character label ("POS ", "ID  ", ...) and the next block's
 *             length + 8; blocks are found by label.
 *
 * The byte order is the first marker's: 256 (format 1) or 8 (format 2)
 * read natively or byte-swapped. Positions, velocities and masses are
 * float32 or float64 and IDs uint32 or uint64, whichever the block's length
 * says. Reading seeks to the wanted range (pread): a chunk costs what it
 * holds, never the whole block.
 *
 * Header (GADGET-2 user guide, table 4): int32 npart[6]; float64 mass[6];
 * float64 time, redshift; int32 flag_sfr, flag_feedback; uint32
 * npartTotal[6]; int32 flag_cooling, num_files; float64 BoxSize, Omega0,
 * OmegaLambda, HubbleParam; int32 flag_stellarage, flag_metals; uint32
 * npartTotalHighWord[6]; then padding to 256 bytes.
 *
 * Two rows of the format table (snap_internal.h): sim_snap_fmt_gadget1 and
 * sim_snap_fmt_gadget2 (bodies.*.format: gadget1, gadget2), one code. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snap_internal.h"

#define BIN_HEAD 256
#define BIN_MAX_RECORDS 4096 /* far more blocks than any GADGET writes */
#define BIN_CHUNK 8192       /* values converted per pread */

/* One block of a GADGET binary file: the data between its record markers. */
struct snap_bin_block {
	int64_t off;  /* byte offset of its first data byte */
	uint64_t len; /* data bytes */
	int found;
	int esize;    /* bytes of one value (a coordinate, an ID, a mass): 4 or 8 */
};
enum { SNAP_POS, SNAP_VEL, SNAP_ID, SNAP_MASS, SNAP_HSML, SNAP_NBLOCKS };

static const char *const bin_block_names[SNAP_NBLOCKS] = {"POS", "VEL", "ID", "MASS", "HSML"};

/* The rows' state (s->priv): the block layout. */
struct bin_state {
	struct snap_bin_block blk[SNAP_NBLOCKS];
	uint64_t first_of[SIM_SNAP_NTYPES];      /* type t's first index in POS/VEL/ID */
	uint64_t mass_first_of[SIM_SNAP_NTYPES]; /* ... in MASS (types stored there) */
};

static struct bin_state *bin_st(const struct sim_snap *s)
{
	return s->priv;
}

/* The format number a row reads: 1 or 2. */
static int bin_number(const struct sim_snap_format *f)
{
	return f == &sim_snap_fmt_gadget1 ? 1 : 2;
}

static uint32_t bin_u32(const unsigned char *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t bin_u64(const unsigned char *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static double bin_f64(const unsigned char *p, int swap)
{
	uint64_t u = bin_u64(p, swap);
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static double bin_f32(const unsigned char *p, int swap)
{
	uint32_t u = bin_u32(p, swap);
	float f;
	memcpy(&f, &u, 4);
	return (double)f;
}

/* len bytes at off, all of them. 0, NB_EINPUT (the file ends first), NB_ERUNTIME. */
static int bin_pread(const struct sim_snap *s, void *buf, size_t len, int64_t off,
		     const char *what)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(s->fd, (char *)buf + got, len - got, (off_t)(off + (int64_t)got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("%s: %s: read error at byte %lld: %s", s->path, what,
				  (long long)(off + (int64_t)got), strerror(errno));
			return NB_ERUNTIME;
		}
		if (r == 0) {
			log_error("%s: %s: the file ends at byte %lld, expected %zu more bytes "
				  "(truncated file?)",
				  s->path, what, (long long)(off + (int64_t)got), len - got);
			return NB_EINPUT;
		}
		got += (size_t)r;
	}
	return 0;
}

/* The record starting at *off: its data offset and length; *off moves past it. */
static int bin_record(struct sim_snap *s, int64_t *off, int k, const char *what, int64_t *data,
		      uint64_t *len)
{
	unsigned char m[4];
	int64_t left = s->fsize - *off;
	if (left < 8) {
		log_error("%s: record %d (%s) at byte %lld: only %lld bytes left, expected at least "
			  "its two 4-byte markers (truncated file?)",
			  s->path, k, what, (long long)*off, (long long)left);
		return NB_EINPUT;
	}
	int err = bin_pread(s, m, 4, *off, what);
	if (err)
		return err;
	uint64_t m1 = bin_u32(m, s->h.swapped);
	if (m1 > (uint64_t)(left - 8)) {
		log_error("%s: record %d (%s) at byte %lld: its marker says %llu bytes, but only %lld "
			  "remain (truncated file, or not a GADGET binary file)",
			  s->path, k, what, (long long)*off, (unsigned long long)m1, (long long)(left - 8));
		return NB_EINPUT;
	}
	if ((err = bin_pread(s, m, 4, *off + 4 + (int64_t)m1, what)))
		return err;
	uint64_t m2 = bin_u32(m, s->h.swapped);
	if (m1 != m2) {
		log_error("%s: record %d (%s) at byte %lld: start marker %llu and end marker %llu "
			  "differ (damaged file, or not a GADGET binary file)",
			  s->path, k, what, (long long)*off, (unsigned long long)m1,
			  (unsigned long long)m2);
		return NB_EINPUT;
	}
	*data = *off + 4;
	*len = m1;
	*off += (int64_t)m1 + 8;
	return 0;
}

/* The 256-byte header at data. */
static int bin_header(struct sim_snap *s, int64_t data, uint64_t len)
{
	unsigned char b[BIN_HEAD];
	struct sim_snap_header *h = &s->h;
	if (len != BIN_HEAD) {
		log_error("%s: HEAD block: %llu bytes, expected %d", s->path, (unsigned long long)len,
			  BIN_HEAD);
		return NB_EINPUT;
	}
	int err = bin_pread(s, b, BIN_HEAD, data, "HEAD");
	if (err)
		return err;
	const int sw = h->swapped;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		int32_t np = (int32_t)bin_u32(b + 4 * t, sw);
		double mt = bin_f64(b + 24 + 8 * t, sw);
		uint64_t tot = bin_u32(b + 96 + 4 * t, sw) | (uint64_t)bin_u32(b + 168 + 4 * t, sw) << 32;
		if (np < 0) {
			log_error("%s: HEAD: npart[%d] is %d, expected a count >= 0", s->path, t, np);
			return NB_EINPUT;
		}
		if (!isfinite(mt) || mt < 0) {
			log_error("%s: HEAD: mass[%d] (MassTable) is %g, expected a finite mass >= 0",
				  s->path, t, mt);
			return NB_EINPUT;
		}
		h->npart[t] = (uint64_t)np;
		h->mass_table[t] = mt;
		h->npart_total[t] = tot;
	}
	h->time = bin_f64(b + 72, sw);
	h->redshift = bin_f64(b + 80, sw);
	int32_t nf = (int32_t)bin_u32(b + 124, sw);
	h->box_size = bin_f64(b + 128, sw);
	h->hubble = bin_f64(b + 152, sw);
	if (nf < 0 || nf > 1 << 20) {
		log_error("%s: HEAD: num_files is %d, expected 0 to %d", s->path, nf, 1 << 20);
		return NB_EINPUT;
	}
	h->num_files = nf > 0 ? nf : 1;
	const char *what[] = {"time", "redshift", "BoxSize", "HubbleParam"};
	double v[] = {h->time, h->redshift, h->box_size, h->hubble};
	for (int i = 0; i < 4; i++) {
		if (!isfinite(v[i]) || (i > 1 && v[i] < 0)) {
			log_error("%s: HEAD: %s is %g, expected a finite number%s", s->path, what[i], v[i],
				  i > 1 ? " >= 0" : "");
			return NB_EINPUT;
		}
	}
	h->cosmo_flag = -1;
	return 0;
}

/* Particles that a block holds one value set for. */
static uint64_t bin_count(const struct sim_snap *s, int blk)
{
	uint64_t n = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (blk == SNAP_MASS && (s->h.mass_table[t] > 0 || s->h.npart[t] == 0))
			continue;
		if (blk == SNAP_HSML && t != 0)
			continue;
		n += s->h.npart[t];
	}
	return n;
}

/* Block blk's value size from its length: 4 or 8 bytes for each of its
 * per-particle values. */
static int bin_sizes(struct sim_snap *s, int blk)
{
	struct snap_bin_block *b = &bin_st(s)->blk[blk];
	const uint64_t per = blk == SNAP_POS || blk == SNAP_VEL ? 3 : 1;
	const uint64_t n = bin_count(s, blk) * per;
	if (!b->found) {
		b->esize = 4;
		if (n == 0 || blk == SNAP_HSML)
			return 0;
		log_error("%s: %s block: missing, expected %llu values (one for each particle%s in "
			  "the header)",
			  s->path, bin_block_names[blk], (unsigned long long)n,
			  blk == SNAP_MASS ? " of the types with MassTable 0" : "");
		return NB_EINPUT;
	}
	if (b->len == 4 * n) {
		b->esize = 4;
		return 0;
	}
	if (n > 0 && b->len == 8 * n) {
		b->esize = 8;
		return 0;
	}
	if (blk == SNAP_HSML) { /* a block we only use when it fits */
		b->found = 0;
		return 0;
	}
	log_error("%s: %s block: %llu bytes, expected %llu values of 4 or 8 bytes (%llu or %llu "
		  "bytes) for the header's particle counts",
		  s->path, bin_block_names[blk], (unsigned long long)b->len, (unsigned long long)n,
		  (unsigned long long)(4 * n), (unsigned long long)(8 * n));
	return NB_EINPUT;
}

/* Format 2's label record: 4 characters, then an int32. */
static int bin_label(struct sim_snap *s, int64_t data, uint64_t len, int k, char label[5])
{
	unsigned char b[8];
	if (len != 8) {
		log_error("%s: record %d: %llu bytes, expected the 8-byte label record of format 2",
			  s->path, k, (unsigned long long)len);
		return NB_EINPUT;
	}
	int err = bin_pread(s, b, 8, data, "label");
	if (err)
		return err;
	for (int i = 0; i < 4; i++)
		label[i] = b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : '?';
	label[4] = '\0';
	for (int i = 3; i >= 0 && label[i] == ' '; i--)
		label[i] = '\0';
	return 0;
}

/* The format a first record marker says, read natively (v) and swapped
 * (w): 256 is format 1, 8 format 2, in either byte order; 0 neither. */
static int bin_kind(uint32_t v, uint32_t w)
{
	return v == 256 || w == 256 ? 1 : v == 8 || w == 8 ? 2 : 0;
}

/* gadget1's probe (gadget2 is the table's last row and has none). */
static int bin_probe1(const struct sim_snap *s)
{
	unsigned char m[4];
	if (s->fsize < 4 || pread(s->fd, m, 4, 0) != 4)
		return 0;
	return bin_kind(bin_u32(m, 0), bin_u32(m, 1)) == 1;
}

/* The file's first record marker agrees with its row (s->h.format). */
static int bin_detect(struct sim_snap *s)
{
	unsigned char m[4];
	if (s->fsize < 4) {
		log_error("%s: %lld bytes, too short for a GADGET binary file", s->path,
			  (long long)s->fsize);
		return NB_EINPUT;
	}
	int err = bin_pread(s, m, 4, 0, "first record marker");
	if (err)
		return err;
	uint32_t v = bin_u32(m, 0), w = bin_u32(m, 1);
	const int got = bin_kind(v, w), want = bin_number(s->h.format);
	if (got == 0) {
		log_error("%s: the first record marker is %u (bytes 00 01 02 03: %02x %02x %02x %02x), "
			  "expected 256 (GADGET format 1) or 8 (format 2) in either byte order, or an "
			  "HDF5 file",
			  s->path, v, m[0], m[1], m[2], m[3]);
		return NB_EINPUT;
	}
	if (want != got) {
		log_error("%s: expected GADGET binary format %d (format: %s), but the first record "
			  "marker is %u: format %d",
			  s->path, want, s->h.format->name, v == 256 || v == 8 ? v : w, got);
		return NB_EINPUT;
	}
	s->h.swapped = !(v == 256 || v == 8);
	return 0;
}

/* Record k (data at DATA, LEN bytes) is block BLK (-1: one not read):
 * where it lies. */
static int bin_place(struct sim_snap *s, int blk, int k, int64_t data, uint64_t len)
{
	if (blk < 0)
		return 0; /* a block we do not read (U, RHO, ...) */
	struct snap_bin_block *b = &bin_st(s)->blk[blk];
	if (b->found) {
		log_error("%s: %s block given twice (records %d and before)", s->path,
			  bin_block_names[blk], k);
		return NB_EINPUT;
	}
	b->found = 1;
	b->off = data;
	b->len = len;
	return 0;
}

/* The block format 2's LABEL names, -1 one not read. */
static int bin_block_of(const char *label)
{
	int blk = -1;
	for (int i = 0; i < SNAP_NBLOCKS; i++)
		if (strcmp(label, bin_block_names[i]) == 0)
			blk = i;
	return blk;
}

/* The header (the first block), then where each block lies: format 1 by
 * the fixed order, format 2 by the labels. */
static int bin_blocks(struct sim_snap *s, int f2)
{
	int64_t off = 0, data;
	uint64_t len;
	int k = 0, have_head = 0, err;
	char label[5] = "HEAD";
	/* format 1's fixed order after the header; the MASS slot only when needed */
	int order[SNAP_NBLOCKS], norder = 0, nblk = 0;
	while (off < s->fsize) {
		if (k >= BIN_MAX_RECORDS) {
			log_error("%s: more than %d records, expected a GADGET snapshot's few blocks",
				  s->path, BIN_MAX_RECORDS);
			return NB_EINPUT;
		}
		if (f2) {
			if ((err = bin_record(s, &off, k, "label", &data, &len)) ||
			    (err = bin_label(s, data, len, k, label)))
				return err;
			k++;
		}
		const char *what = f2		  ? label
				   : !have_head	  ? "HEAD"
				   : nblk < norder ? bin_block_names[order[nblk]]
						   : "block";
		if ((err = bin_record(s, &off, k, what, &data, &len)))
			return err;
		k++;
		if (!have_head) {
			if (f2 && strcmp(label, "HEAD") != 0) {
				log_error("%s: the first block is labelled '%s', expected 'HEAD'", s->path,
					  label);
				return NB_EINPUT;
			}
			if ((err = bin_header(s, data, len)))
				return err;
			have_head = 1;
			order[norder++] = SNAP_POS;
			order[norder++] = SNAP_VEL;
			order[norder++] = SNAP_ID;
			if (bin_count(s, SNAP_MASS) > 0)
				order[norder++] = SNAP_MASS;
			continue;
		}
		const int blk = f2 ? bin_block_of(label) : nblk < norder ? order[nblk] : -1;
		nblk++;
		if ((err = bin_place(s, blk, k - 1, data, len)))
			return err;
	}
	if (!have_head) {
		log_error("%s: no HEAD block", s->path);
		return NB_EINPUT;
	}
	return 0;
}

static int bin_open(struct sim_snap *s)
{
	int err = bin_detect(s);
	if (err || (err = bin_blocks(s, bin_number(s->h.format) == 2)))
		return err;
	for (int b = 0; b < SNAP_NBLOCKS; b++)
		if ((err = bin_sizes(s, b)))
			return err;
	uint64_t at = 0, mat = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		bin_st(s)->first_of[t] = at;
		bin_st(s)->mass_first_of[t] = mat;
		at += s->h.npart[t];
		s->h.has_mass[t] = s->h.npart[t] > 0 && !(s->h.mass_table[t] > 0);
		if (s->h.has_mass[t])
			mat += s->h.npart[t];
		s->h.has_hsml[t] = t == 0 && bin_st(s)->blk[SNAP_HSML].found;
	}
	return 0;
}

/* n values of per components each, starting at value index first of block
 * blk, converted to double into out (or to uint64 into ids). */
static int bin_values(struct sim_snap *s, int blk, uint64_t first, size_t n, int per,
		      double *out, uint64_t *ids)
{
	const struct snap_bin_block *b = &bin_st(s)->blk[blk];
	const int es = b->esize;
	unsigned char *buf = malloc((size_t)BIN_CHUNK * (size_t)es);
	if (!buf) {
		log_error("%s: %s: out of memory", s->path, bin_block_names[blk]);
		return NB_ERUNTIME;
	}
	const uint64_t total = (uint64_t)n * (uint64_t)per, start = first * (uint64_t)per;
	int err = 0;
	for (uint64_t done = 0; done < total && !err;) {
		size_t m = total - done < BIN_CHUNK ? (size_t)(total - done) : BIN_CHUNK;
		int64_t off = b->off + (int64_t)((start + done) * (uint64_t)es);
		if ((start + done + m) * (uint64_t)es > b->len) {
			log_error("%s: %s block: values %llu.. lie past its end", s->path,
				  bin_block_names[blk], (unsigned long long)(start + done));
			err = NB_EINPUT;
			break;
		}
		if ((err = bin_pread(s, buf, m * (size_t)es, off, bin_block_names[blk])))
			break;
		for (size_t i = 0; i < m; i++) {
			const unsigned char *p = buf + i * (size_t)es;
			if (ids)
				ids[done + i] = es == 4 ? bin_u32(p, s->h.swapped) : bin_u64(p, s->h.swapped);
			else
				out[done + i] = es == 4 ? bin_f32(p, s->h.swapped) : bin_f64(p, s->h.swapped);
		}
		done += m;
	}
	free(buf);
	return err;
}

static int bin_read(struct sim_snap *s, int type, uint64_t first, size_t n, uint64_t *id,
		    double *pos, double *vel, double *mass, double *hsml)
{
	const uint64_t at = bin_st(s)->first_of[type] + first;
	int err = 0;
	if (pos && (err = bin_values(s, SNAP_POS, at, n, 3, pos, NULL)))
		return err;
	if (vel && (err = bin_values(s, SNAP_VEL, at, n, 3, vel, NULL)))
		return err;
	if (id && (err = bin_values(s, SNAP_ID, at, n, 1, NULL, id)))
		return err;
	if (mass && (err = bin_values(s, SNAP_MASS, bin_st(s)->mass_first_of[type] + first, n, 1,
				      mass, NULL)))
		return err;
	if (hsml) /* only type 0 has them, and it comes first */
		err = bin_values(s, SNAP_HSML, first, n, 1, hsml, NULL);
	return err;
}

static void bin_data_name(int type, int data, char *out, size_t len)
{
	static const char *const names[3] = {"POS", "VEL", "MASS"}; /* SIM_SNAP_DATA_* */
	(void)type;
	snprintf(out, len, "%s block", names[data]);
}

const struct sim_snap_format sim_snap_fmt_gadget1 = {
	.name = "gadget1",
	.title = "GADGET binary format 1",
	.priv_size = sizeof(struct bin_state),
	.probe = bin_probe1,
	.open = bin_open,
	.read = bin_read,
	.data_name = bin_data_name,
};

/* The table's last row (snap.c): it takes any file no row before it took,
 * and bin_detect says why one that does not start with 8 is none. */
const struct sim_snap_format sim_snap_fmt_gadget2 = {
	.name = "gadget2",
	.title = "GADGET binary format 2",
	.priv_size = sizeof(struct bin_state),
	.probe = NULL,
	.open = bin_open,
	.read = bin_read,
	.data_name = bin_data_name,
};
