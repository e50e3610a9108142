/* video_formats.c - the video containers: output.video's file name picks
 * one row of out_vformats[] (its extension), and the row says libavformat's
 * muxer, how the encoder is chosen, the pixel format and what --dry-run
 * calls it. output/mp4.c reads the row; nothing else branches on the
 * container. The encoders are a second table, out_vencoders[]: the options
 * each takes (output.crf, output.preset) and its own fixed settings.
 *
 * Which encoder: a row whose codec is "by key" takes output.codec (h264:
 * libx264, h265: libx265); any other row takes the first of its encoders
 * that this build of libavcodec has (avcodec_find_encoder_by_name, at run
 * time), and refuses h265, which names an encoder it will not use. A
 * refusal for a missing encoder lists what would work in this build.
 *
 * For tests: NB_HIDE_ENCODERS="libvpx-vp9,libsvtav1" hides the named
 * encoders (comma-separated libavcodec names) as if this build lacked
 * them, so that the fallback and the refusal can be tested on a machine
 * that has every encoder. */
#include <libavcodec/avcodec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

/* Rows: name, label, output.crf, output.preset, fixed options, stream tag. */
static const struct out_vencoder enc_x264 = {"libx264", "H.264", 1, 1, NULL, 0};
/* x265 prints its banner and statistics through its own logger; hvc1 is
 * the tag QuickTime/Apple players need for HEVC in MP4. */
static const struct out_vencoder enc_x265 = {"libx265", "H.265", 1, 1,
					     "x265-params=log-level=error", MKTAG('h', 'v', 'c', '1')};
/* b=0: constant quality (crf alone); cpu-used trades size for speed. */
static const struct out_vencoder enc_vp9 = {"libvpx-vp9", "VP9", 1, 0,
					    "b=0:deadline=good:cpu-used=5:row-mt=1", 0};
static const struct out_vencoder enc_svtav1 = {"libsvtav1", "AV1", 1, 0, "b=0:preset=10", 0};
static const struct out_vencoder enc_aom = {"libaom-av1", "AV1", 1, 0,
					    "b=0:cpu-used=6:row-mt=1", 0};
static const struct out_vencoder enc_gif = {"gif", "GIF, 256 fixed colours", 0, 0, NULL, 0};

/* An EBML variable-length integer at b (n bytes there): its length in
 * bytes (0: none), its value in *v without the length marker (keep: with
 * it, as element IDs are written), *unknown when every value bit is 1. */
static int ebml_vint(const unsigned char *b, size_t n, int keep, unsigned long long *v,
		     int *unknown)
{
	int len = 1;
	while (len <= 8 && !(b[0] & (0x80 >> (len - 1))))
		len++;
	if (len > 8 || (size_t)len > n)
		return 0;
	unsigned long long mask = 0x80ull >> (len - 1);
	*v = keep ? b[0] : b[0] & (mask - 1);
	int ones = (b[0] & (mask - 1)) == mask - 1;
	for (int i = 1; i < len; i++) {
		*v = *v << 8 | b[i];
		ones &= b[i] == 0xff;
	}
	*unknown = ones;
	return len;
}

/* Matroska and WebM: the EBML header, then the Segment, whose size (the
 * muxer writes it with the trailer) reaches exactly the end of the file. */
static const char *ebml_problem(const unsigned char *head, size_t n, unsigned char last,
				long long size)
{
	(void)last;
	unsigned long long id, len;
	int unk, a, b, c;
	if ((a = ebml_vint(head, n, 1, &id, &unk)) == 0 || id != 0x1A45DFA3)
		return "does not start as a Matroska file (not the file the run writes)";
	if ((b = ebml_vint(head + a, n - a, 0, &len, &unk)) == 0 || len > n - a - b)
		return "is truncated (its Matroska header is cut off)";
	size_t off = (size_t)a + b + len;
	if ((c = ebml_vint(head + off, n - off, 1, &id, &unk)) == 0 || id != 0x18538067)
		return "is not a whole Matroska file (no Segment after the header)";
	off += c;
	if ((c = ebml_vint(head + off, n - off, 0, &len, &unk)) == 0 || unk ||
	    (long long)(off + c + len) != size)
		return "is truncated (its Matroska Segment does not end at the end of the file)";
	return NULL;
}

/* GIF: the signature, and the trailer byte 0x3B last. */
static const char *gif_problem(const unsigned char *head, size_t n, unsigned char last,
			       long long size)
{
	(void)size;
	if (n < 7 || (memcmp(head, "GIF89a", 6) && memcmp(head, "GIF87a", 6)))
		return "does not start as a GIF (not the file the run writes)";
	return last == 0x3B ? NULL : "is truncated (no GIF trailer at its end)";
}

/* Columns: extension, muxer, container's name, encoders (NULL first:
 * output.codec picks), 256-colour frames, muxer options, BT.709 and
 * spherical/stereo tags, the --resume check (NULL: MP4 boxes, the
 * caller's). */
static const struct out_vformat out_vformats[] = {
	{".mp4", "mp4", "MP4", {NULL}, 0, "movflags=+faststart", 1, NULL},
	{".mkv", "matroska", "Matroska", {NULL}, 0, NULL, 1, ebml_problem},
	{".mov", "mov", "QuickTime", {NULL}, 0, "movflags=+faststart", 1, NULL},
	{".webm", "webm", "WebM", {&enc_vp9, &enc_svtav1, &enc_aom}, 0, NULL, 1, ebml_problem},
	{".gif", "gif", "GIF", {&enc_gif}, 1, NULL, 0, gif_problem},
};
#define NFORMATS ((int)(sizeof out_vformats / sizeof out_vformats[0]))

const char *out_video_accepted(void)
{
	static char list[128];
	if (!list[0])
		for (int i = 0; i < NFORMATS; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
				 out_vformats[i].ext);
	return list;
}

const struct out_vformat *out_vformat_of(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash))
		return NULL;
	for (int i = 0; i < NFORMATS; i++)
		if (strcasecmp(dot, out_vformats[i].ext) == 0)
			return &out_vformats[i];
	return NULL;
}

/* 1 when this build of libavcodec has encoder NAME and NB_HIDE_ENCODERS
 * (for tests) does not hide it. */
static int encoder_here(const char *name)
{
	const char *hide = getenv("NB_HIDE_ENCODERS");
	const size_t n = strlen(name);
	for (const char *p = hide; p && *p;) {
		const size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, name, n) == 0)
			return 0;
		p += len + (p[len] == ',');
	}
	return avcodec_find_encoder_by_name(name) != NULL;
}

/* What would work in this build, into buf: each container with the
 * encoders it has here, "; what works here: .mp4 (H.264, H.265), ...,
 * .gif (GIF, 256 fixed colours)", or "; no container works in this
 * build" when none does. */
static void what_works(char *buf, size_t n)
{
	static const struct out_vencoder *const by_key[] = {&enc_x264, &enc_x265, NULL};
	size_t len = strlen(buf);
	int any = 0;
	for (int i = 0; i < NFORMATS; i++) {
		const struct out_vformat *f = &out_vformats[i];
		const struct out_vencoder *const *e = f->encoders[0] ? f->encoders : by_key;
		const char *said = NULL; /* the last label listed for this row */
		for (int j = 0; j < OUT_VENC_MAX && e[j]; j++) {
			if (!encoder_here(e[j]->name) || (said && strcmp(said, e[j]->label) == 0))
				continue;
			len += snprintf(buf + len, n - len, "%s%s%s%s",
					said ? ", " : any ? "), " : "; what works here: ",
					said ? "" : f->ext, said ? "" : " (", e[j]->label);
			said = e[j]->label;
			any = 1;
			if (len >= n)
				return;
		}
	}
	if (len < n)
		snprintf(buf + len, n - len, "%s", any ? ")" : "; no container works in this build");
}

/* The encoders a row may use, as "a, b or c". */
static void encoder_names(const struct out_vformat *f, char *buf, size_t n)
{
	buf[0] = '\0';
	int count = 0;
	while (count < OUT_VENC_MAX && f->encoders[count])
		count++;
	for (int i = 0; i < count; i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s",
			 i == 0 ? "" : i + 1 == count ? " or " : ", ", f->encoders[i]->name);
}

int out_video_choose(const char *path, enum scene_codec codec, struct out_video_choice *ch)
{
	memset(ch, 0, sizeof *ch);
	ch->key = "output.video";
	const struct out_vformat *f = ch->format = out_vformat_of(path);
	if (!f) {
		snprintf(ch->why, sizeof ch->why,
			 "no video container is named by this file's extension; accepted: %s",
			 out_video_accepted());
		return NB_EINPUT;
	}
	if (!f->encoders[0]) {
		ch->enc = codec == SCENE_CODEC_H265 ? &enc_x265 : &enc_x264;
		if (encoder_here(ch->enc->name))
			return 0;
		ch->key = "output.codec";
		snprintf(ch->why, sizeof ch->why, "%s: this build of FFmpeg has no %s encoder",
			 codec == SCENE_CODEC_H265 ? "h265" : "h264", ch->enc->name);
		ch->enc = NULL;
		what_works(ch->why, sizeof ch->why);
		return NB_EINPUT;
	}
	char names[128];
	encoder_names(f, names, sizeof names);
	if (codec == SCENE_CODEC_H265) {
		ch->key = "output.codec";
		snprintf(ch->why, sizeof ch->why,
			 "h265 applies to .mp4, .mkv and .mov only; a %s video is encoded with %s%s; "
			 "leave output.codec at h264, its default",
			 f->ext, names, f->encoders[1] ? ", whichever this build has first" : "");
		return NB_EINPUT;
	}
	for (int i = 0; i < OUT_VENC_MAX && f->encoders[i]; i++)
		if (encoder_here(f->encoders[i]->name)) {
			ch->enc = f->encoders[i];
			return 0;
		}
	snprintf(ch->why, sizeof ch->why,
		 "this build of FFmpeg has no encoder for a %s video (it needs %s)", f->name,
		 names);
	what_works(ch->why, sizeof ch->why);
	return NB_EINPUT;
}

const char *out_video_what(const char *path, enum scene_codec codec, char *buf, size_t n)
{
	struct out_video_choice ch;
	if (out_video_choose(path, codec, &ch))
		snprintf(buf, n, "the video (%s)", ch.format ? ch.format->name : "unknown container");
	else if (ch.format->rgb8)
		snprintf(buf, n, "the video (%s)", ch.enc->label);
	else
		snprintf(buf, n, "the video (%s, %s)", ch.format->name, ch.enc->label);
	return buf;
}

int out_video_whole(const char *path, const char **why)
{
	const struct out_vformat *f = out_vformat_of(path);
	if (!f || !f->problem)
		return 0;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = "is missing";
		return 1;
	}
	if (st.st_size == 0) {
		*why = "is empty";
		return 1;
	}
	/* The Matroska header and the Segment's size lie in the first bytes;
	 * a GIF's trailer is the last one: read both ends. */
	unsigned char buf[256];
	size_t n = st.st_size < (off_t)sizeof buf ? (size_t)st.st_size : sizeof buf;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		*why = "cannot be read";
		return 1;
	}
	int ok = fread(buf, 1, n, fp) == n;
	unsigned char last = 0;
	ok = ok && fseeko(fp, -1, SEEK_END) == 0 && fread(&last, 1, 1, fp) == 1;
	fclose(fp);
	if (!ok) {
		*why = "cannot be read";
		return 1;
	}
	*why = f->problem(buf, n, last, (long long)st.st_size);
	return 1;
}
