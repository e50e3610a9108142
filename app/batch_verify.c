/* batch_verify.c - is a run's output whole? The --resume test looks into
 * every file a run writes, so a damaged output (a deleted PNG frame, a
 * truncated video or snapshot, a cut-off CSV) makes the run run again. One
 * function per row of the outputs table (app/outputs.h, batch.h says what
 * each checks); app_outputs_whole walks the table. They read only the file
 * structure (no decoder): cheap even for long runs. */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../output/output.h"
#include "batch.h"

/* Size of PATH if it is a regular file, else -1. */
static long long file_size(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (long long)st.st_size;
}

/* Read LEN bytes at OFFSET (negative: from the end) of f into buf. */
static int read_at(FILE *f, long long offset, void *buf, size_t len)
{
	if (fseeko(f, (off_t)offset, offset < 0 ? SEEK_END : SEEK_SET) != 0)
		return -1;
	return fread(buf, 1, len, f) == len ? 0 : -1;
}

static unsigned long long be(const unsigned char *b, int n)
{
	unsigned long long v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

/* The MP4's top-level boxes tile the file and include ftyp, moov, mdat. */
static const char *mp4_problem(const char *path)
{
	long long size = file_size(path), off = 0;
	int have = 0; /* bit 0 ftyp, 1 moov, 2 mdat */
	if (size < 0)
		return "is missing";
	if (size == 0)
		return "is empty";
	FILE *f = fopen(path, "rb");
	if (!f)
		return "cannot be read";
	while (off < size) {
		unsigned char h[16];
		if (size - off < 8 || read_at(f, off, h, 8)) {
			off = -1;
			break;
		}
		unsigned long long box = be(h, 4);
		if (box == 1 && (size - off < 16 || read_at(f, off + 8, h + 8, 8) || (box = be(h + 8, 8)) < 16)) {
			off = -1;
			break;
		}
		if (box == 0)
			box = (unsigned long long)(size - off); /* to the end of the file */
		if (box < 8 || box > (unsigned long long)(size - off)) {
			off = -1; /* a box runs past the end: truncated */
			break;
		}
		have |= !memcmp(h + 4, "ftyp", 4) ? 1 : !memcmp(h + 4, "moov", 4) ? 2 : !memcmp(h + 4, "mdat", 4) ? 4 : 0;
		off += (long long)box;
	}
	fclose(f);
	if (off != size)
		return "is truncated (its last MP4 box runs past the end of the file)";
	return have == 7 ? NULL : "is not a whole MP4 (no ftyp, moov or mdat box)";
}

/* The file starts with HEAD and ends with TAIL (each nh, nt bytes). */
static const char *framed_problem(const char *path, const void *head, size_t nh, const void *tail,
				  size_t nt)
{
	unsigned char b[16];
	long long size = file_size(path);
	if (size < 0)
		return "is missing";
	if (size < (long long)(nh + nt))
		return size == 0 ? "is empty" : "is truncated";
	FILE *f = fopen(path, "rb");
	if (!f)
		return "cannot be read";
	const char *why = NULL;
	if (read_at(f, 0, b, nh) || memcmp(b, head, nh))
		why = "does not start as it should (not the file the run writes)";
	else if (read_at(f, -(long long)nt, b, nt) || memcmp(b, tail, nt))
		why = "is truncated (its end is missing)";
	fclose(f);
	return why;
}

static const char *png_problem(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	return framed_problem(path, sig, sizeof sig, iend, sizeof iend);
}

/* Non-empty text ending in '\n'; *lines gets its number of lines. */
static const char *text_problem(const char *path, long *lines)
{
	FILE *f = fopen(path, "rb");
	int c, last = EOF;
	*lines = 0;
	if (file_size(path) < 0 || !f) {
		if (f)
			fclose(f);
		return "is missing";
	}
	while ((c = getc(f)) != EOF) {
		*lines += c == '\n';
		last = c;
	}
	fclose(f);
	if (last == EOF)
		return "is empty";
	return last == '\n' ? NULL : "is truncated (no end of line at its end)";
}

/* Every member of row k (app/outputs.h) that frames [0, frames) of sc
 * write is whole (check), and DIR holds no other member of that row. */
static const char *members_problem(const struct app_out_kind *k, const struct scene *sc,
				   const char *dir, const char *(*check)(const char *), char *which,
				   size_t len)
{
	int count = 0, want = 0;
	DIR *d = opendir(dir);
	snprintf(which, len, "%s", dir);
	if (!d)
		return "is missing";
	for (struct dirent *e; (e = readdir(d));)
		count += app_out_member(k, e->d_name) >= 0;
	closedir(d);
	/* members are non-decreasing in the frame: one pass over the frames;
	 * a member of K > 1 parts (a multi-file snapshot) is K files */
	const int parts = k->parts ? k->parts(sc) : 1;
	for (int f = 0, prev = -1; f < sc->output.frames; f++) {
		const int n = k->member_of_frame(sc, f);
		if (n < 0 || n == prev)
			continue;
		prev = n;
		for (int j = 0; j < parts; j++) {
			want++;
			if (parts > 1 ? app_out_part_path(k, dir, n, j, which, len)
				      : app_out_member_path(k, dir, n, which, len))
				return "has a path too long to check";
			const char *why = check(which);
			if (why)
				return why;
		}
	}
	snprintf(which, len, "%s", dir);
	return count == want ? NULL : "holds a different number of files than the run writes";
}

static const char *hdf5_problem(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
	long long size = file_size(path);
	unsigned char b[8];
	if (size < 0)
		return "is missing";
	if (size < 512)
		return size == 0 ? "is empty" : "is truncated";
	FILE *f = fopen(path, "rb");
	if (!f)
		return "cannot be read";
	const char *why = read_at(f, 0, b, 8) || memcmp(b, sig, 8)
				  ? "does not start as an HDF5 file (not the file the run writes)"
				  : NULL;
	fclose(f);
	return why;
}

static const char *fits_problem(const char *path)
{
	long long size = file_size(path);
	unsigned char b[10];
	if (size < 0)
		return "is missing";
	if (size == 0 || size % 2880 != 0)
		return size == 0 ? "is empty" : "is truncated (not a whole number of 2880-byte FITS records)";
	FILE *f = fopen(path, "rb");
	if (!f)
		return "cannot be read";
	const char *why = read_at(f, 0, b, 9) || memcmp(b, "SIMPLE  =", 9)
				  ? "does not start as a FITS file (not the file the run writes)"
				  : NULL;
	fclose(f);
	return why;
}

const char *batch_whole_video(const struct app_out_kind *k, const struct scene *sc,
			      const char *path, char *which, size_t n)
{
	(void)k, (void)sc, (void)which, (void)n;
	const char *why;
	if (out_video_whole(path, &why)) /* Matroska, WebM, GIF (output/video_formats.c) */
		return why;
	return mp4_problem(path);
}

const char *batch_whole_png(const struct app_out_kind *k, const struct scene *sc,
			    const char *path, char *which, size_t n)
{
	return members_problem(k, sc, path, png_problem, which, n);
}

const char *batch_whole_jpeg(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n)
{
	static const unsigned char soi[2] = {0xff, 0xd8}, eoi[2] = {0xff, 0xd9};
	(void)k, (void)sc, (void)which, (void)n;
	return framed_problem(path, soi, 2, eoi, 2);
}

const char *batch_whole_stats(const struct app_out_kind *k, const struct scene *sc,
			      const char *path, char *which, size_t n)
{
	long lines = 0;
	(void)k, (void)which, (void)n;
	const char *problem = text_problem(path, &lines);
	if (!problem && lines != (long)sc->output.frames + 1)
		problem = "does not hold one row per frame";
	return problem;
}

const char *batch_whole_text(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n)
{
	long lines = 0;
	(void)k, (void)sc, (void)which, (void)n;
	return text_problem(path, &lines);
}

const char *batch_whole_snapshots(const struct app_out_kind *k, const struct scene *sc,
				  const char *path, char *which, size_t n)
{
	return members_problem(k, sc, path, hdf5_problem, which, n);
}

const char *batch_whole_fits(const struct app_out_kind *k, const struct scene *sc,
			     const char *path, char *which, size_t n)
{
	return members_problem(k, sc, path, fits_problem, which, n);
}
