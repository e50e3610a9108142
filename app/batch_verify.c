/* batch_verify.c - is a run's output whole? The --resume test looks into
 * every file a run writes, so a damaged output (a deleted PNG frame, a
 * truncated video, a cut-off CSV) makes the run run again:
 *
 *   video        non-empty; MP4 top-level boxes that tile the file exactly
 *                (a truncated file ends inside a box), with ftyp, moov, mdat
 *   png_dir      frame_00000.png ... one per output.frame and no other
 *                frame_*.png; each with the PNG signature and an IEND end
 *   stats        a header line and one line per frame, ending in '\n'
 *   state CSVs   non-empty, ending in '\n'
 *   preview      a JPEG: starts FF D8, ends FF D9
 *
 * It reads only the file structure (no decoder): cheap even for long runs. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* Every frame of DIR whole, and no frame_*.png beyond them. */
static const char *frames_problem(const char *dir, int frames, char *which, size_t len)
{
	int count = 0;
	DIR *d = opendir(dir);
	snprintf(which, len, "%s", dir);
	if (!d)
		return "is missing";
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		count += !strncmp(e->d_name, "frame_", 6) && n > 10 && !strcmp(e->d_name + n - 4, ".png");
	}
	closedir(d);
	for (int f = 0; f < frames; f++) {
		snprintf(which, len, "%s/frame_%05d.png", dir, f); /* output/png.c's names */
		const char *why = png_problem(which);
		if (why)
			return why;
	}
	snprintf(which, len, "%s", dir);
	return count == frames ? NULL : "holds a different number of frames than output.frames";
}

int batch_outputs_whole(const struct scene *sc, char *why, size_t len)
{
	char which[SCENE_PATH_MAX + 32];
	const char *problem = NULL;
	long lines = 0;
	if (sc->output.video[0] && (problem = mp4_problem(sc->output.video)))
		snprintf(which, sizeof which, "%s", sc->output.video);
	if (!problem && sc->output.png_dir[0])
		problem = frames_problem(sc->output.png_dir, sc->output.frames, which, sizeof which);
	if (!problem && sc->output.stats[0]) {
		snprintf(which, sizeof which, "%s", sc->output.stats);
		problem = text_problem(sc->output.stats, &lines);
		if (!problem && lines != (long)sc->output.frames + 1)
			problem = "does not hold one row per frame";
	}
	const char *csv[2] = {sc->output.initial_state, sc->output.final_state};
	for (int i = 0; i < 2 && !problem; i++)
		if (csv[i][0] && (problem = text_problem(csv[i], &lines)))
			snprintf(which, sizeof which, "%s", csv[i]);
	if (!problem && sc->output.preview_kind != SCENE_PREVIEW_NONE && sc->output.preview[0]) {
		static const unsigned char soi[2] = {0xff, 0xd8}, eoi[2] = {0xff, 0xd9};
		snprintf(which, sizeof which, "%s", sc->output.preview);
		problem = framed_problem(sc->output.preview, soi, 2, eoi, 2);
	}
	if (problem)
		snprintf(why, len, "%s %s", which, problem);
	return problem == NULL;
}
