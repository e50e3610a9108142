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
 * time), and refuses h265, which names an encoder it will not use. */
#include <libavcodec/avcodec.h>

#include <stdio.h>
#include <string.h>
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

/* Columns: extension, muxer, container's name, encoders (NULL first:
 * output.codec picks), 256-colour frames, muxer options, BT.709 and
 * spherical/stereo tags. */
static const struct out_vformat out_vformats[] = {
	{".mp4", "mp4", "MP4", {NULL}, 0, "movflags=+faststart", 1},
	{".mkv", "matroska", "Matroska", {NULL}, 0, NULL, 1},
	{".mov", "mov", "QuickTime", {NULL}, 0, "movflags=+faststart", 1},
	{".webm", "webm", "WebM", {&enc_vp9, &enc_svtav1, &enc_aom}, 0, NULL, 1},
	{".gif", "gif", "GIF", {&enc_gif}, 1, NULL, 0},
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
		if (avcodec_find_encoder_by_name(ch->enc->name))
			return 0;
		ch->key = "output.codec";
		snprintf(ch->why, sizeof ch->why, "%s: this build of FFmpeg has no %s encoder",
			 codec == SCENE_CODEC_H265 ? "h265" : "h264", ch->enc->name);
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
		if (avcodec_find_encoder_by_name(f->encoders[i]->name)) {
			ch->enc = f->encoders[i];
			return 0;
		}
	snprintf(ch->why, sizeof ch->why,
		 "this build of FFmpeg has no encoder for a %s video (it needs %s)", f->name,
		 names);
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
