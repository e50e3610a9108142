/* mp4.c - the video file (MP4 with H.264 via libx264 or H.265 via
 * libx265, and the other containers of output/video_formats.c's table:
 * Matroska, QuickTime, WebM, GIF) through libavformat / libavcodec /
 * libswscale, in the call order of FFmpeg's doc/examples/mux.c:
 *
 *   open:  the row of the file's extension (out_video_choose) ->
 *          avformat_alloc_output_context2(its muxer) -> new stream -> codec
 *          context (time base 1/fps, yuv420p with BT.709 tags, limited
 *          range, or the GIF's RGB 3-3-2; crf/preset where the encoder
 *          takes them, the encoder's fixed options) -> avcodec_open2 ->
 *          avcodec_parameters_from_context -> spherical/stereo side data on
 *          the stream (mp4_sphere.c) -> avio_open(temp) ->
 *          avformat_write_header(the row's options: +faststart for MP4)
 *   frame: sws_scale RGB48 -> YUV420P (BT.709, limited) or RGB8 ->
 *          send_frame -> receive_packet until EAGAIN -> rescale ts ->
 *          interleaved write (out_mp4_write_yuv: planes made on the GPU
 *          are copied into the frame as they are, no swscale; a GIF
 *          converts them to RGB8)
 *   close: send NULL (flush) -> drain -> write trailer -> avio close ->
 *          rename the temp into place (or unlink it).
 *
 * Every negative libav code becomes text in av_fail(), with the path. */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

struct out_mp4 {
	char path[4096], tmp[4096];
	int w, h;
	const struct out_vformat *row;     /* the container (video_formats.c) */
	const struct out_vencoder *encrow; /* its encoder */
	AVFormatContext *fmt;
	AVStream *st;
	AVCodecContext *enc;
	struct SwsContext *sws;
	struct SwsContext *sws_yuv; /* YUV420P planes -> RGB8 (GIF), else NULL */
	AVFrame *frame;
	AVPacket *pkt;
	int64_t next_pts;  /* frames sent so far */
	int tmp_made;      /* the temp file exists (ours to remove) */
	int io_open;       /* avio_open succeeded */
	int header_done;   /* avformat_write_header succeeded */
	int failed;        /* an encode/write call failed: do not finish */
};

/* The one place where libav error codes become text. */
static int av_fail(const struct out_mp4 *m, const char *what, int averr, int code)
{
	char buf[AV_ERROR_MAX_STRING_SIZE];
	if (av_strerror(averr, buf, sizeof buf) < 0)
		snprintf(buf, sizeof buf, "libav error %d", averr);
	log_error("%s: %s: %s", m->path, what, buf);
	return code;
}

static void mp4_free(struct out_mp4 *m)
{
	if (!m)
		return;
	if (m->io_open)
		avio_closep(&m->fmt->pb);
	sws_freeContext(m->sws);
	sws_freeContext(m->sws_yuv);
	av_frame_free(&m->frame);
	av_packet_free(&m->pkt);
	avcodec_free_context(&m->enc);
	avformat_free_context(m->fmt);
	free(m);
}

/* The muxer, its one stream, the codec context, a packet and a frame. */
static int mp4_open_stream(struct out_mp4 *m, const AVCodec *enc)
{
	/* The temp name does not end in .mp4, so name the muxer explicitly. */
	int ret = avformat_alloc_output_context2(&m->fmt, NULL, m->row->muxer, m->tmp);
	if (ret < 0) {
		char what[64];
		snprintf(what, sizeof what, "cannot create the %s muxer", m->row->muxer);
		return av_fail(m, what, ret, NB_ERUNTIME);
	}
	m->st = avformat_new_stream(m->fmt, NULL);
	m->enc = avcodec_alloc_context3(enc);
	m->pkt = av_packet_alloc();
	m->frame = av_frame_alloc();
	if (!m->st || !m->enc || !m->pkt || !m->frame)
		return av_fail(m, "cannot allocate the encoder", AVERROR(ENOMEM), NB_ERUNTIME);
	m->st->id = (int)m->fmt->nb_streams - 1;
	return 0;
}

/* output.crf and output.preset, where the encoder takes them. */
static int mp4_set_quality(struct out_mp4 *m, int crf, const char *preset)
{
	int ret;
	AVCodecContext *c = m->enc;
	char crfbuf[16];
	snprintf(crfbuf, sizeof crfbuf, "%d", crf);
	if (m->encrow->crf && (ret = av_opt_set(c->priv_data, "crf", crfbuf, 0)) < 0)
		return av_fail(m, "output.crf: cannot set crf", ret, NB_EINPUT);
	if (m->encrow->preset && (ret = av_opt_set(c->priv_data, "preset", preset, 0)) < 0)
		return av_fail(m, "output.preset: cannot set preset", ret, NB_EINPUT);
	return 0;
}

/* Set up and open the encoder (time base 1/fps; yuv420p, BT.709 tags,
 * limited range, or RGB 3-3-2 for a GIF; crf/preset; the encoder's fixed
 * options), copy its parameters to the stream and allocate the frame. */
static int mp4_open_encoder(struct out_mp4 *m, const AVCodec *enc, int fps, int crf,
			    const char *preset)
{
	int ret;
	AVCodecContext *c = m->enc;
	c->width = m->w;
	c->height = m->h;
	c->time_base = (AVRational){1, fps};
	c->framerate = (AVRational){fps, 1};
	m->st->time_base = c->time_base;
	m->st->avg_frame_rate = c->framerate;
	c->pix_fmt = m->row->rgb8 ? AV_PIX_FMT_RGB8 : AV_PIX_FMT_YUV420P;
	if (m->row->tags) {
		c->color_primaries = AVCOL_PRI_BT709;
		c->color_trc = AVCOL_TRC_BT709;
		c->colorspace = AVCOL_SPC_BT709;
		c->color_range = AVCOL_RANGE_MPEG;
	}
	c->thread_count = 0; /* libavcodec chooses */
	if ((ret = mp4_set_quality(m, crf, preset)) != 0)
		return ret;
	if (m->fmt->oformat->flags & AVFMT_GLOBALHEADER)
		c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;

	AVDictionary *opts = NULL;
	if (m->encrow->opts)
		av_dict_parse_string(&opts, m->encrow->opts, "=", ":", 0);
	ret = avcodec_open2(c, enc, &opts);
	av_dict_free(&opts);
	if (ret < 0) {
		/* Usually a preset the encoder does not know. */
		char what[128];
		snprintf(what, sizeof what, "cannot open %s (output.preset '%s', output.crf %d)",
			 enc->name, preset, crf);
		return av_fail(m, what, ret, NB_EINPUT);
	}
	if ((ret = avcodec_parameters_from_context(m->st->codecpar, c)) < 0)
		return av_fail(m, "cannot copy the stream parameters", ret, NB_ERUNTIME);
	if (m->encrow->tag)
		m->st->codecpar->codec_tag = m->encrow->tag;

	m->frame->format = c->pix_fmt;
	m->frame->width = m->w;
	m->frame->height = m->h;
	if ((ret = av_frame_get_buffer(m->frame, 0)) < 0)
		return av_fail(m, "cannot allocate a frame", ret, NB_ERUNTIME);
	return 0;
}

/* The RGB48 -> YUV420P converter; for a GIF, RGB48 -> RGB8 and YUV420P
 * -> RGB8 (swscale's dither onto the fixed 3-3-2 palette). */
static int mp4_open_scaler(struct out_mp4 *m)
{
	/* AV_PIX_FMT_RGB48 is the host-endian alias (RGB48LE here), matching
	 * our uint16_t samples. BT.709 matrix, full-range input, limited-range
	 * (MPEG) output as the stream is tagged. */
	const int *coef = sws_getCoefficients(SWS_CS_ITU709);
	if (m->row->rgb8) {
		m->sws = sws_getContext(m->w, m->h, AV_PIX_FMT_RGB48, m->w, m->h, AV_PIX_FMT_RGB8,
					SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
		m->sws_yuv = sws_getContext(m->w, m->h, AV_PIX_FMT_YUV420P, m->w, m->h,
					    AV_PIX_FMT_RGB8, SWS_BILINEAR | SWS_ACCURATE_RND, NULL,
					    NULL, NULL);
		if (!m->sws || !m->sws_yuv ||
		    sws_setColorspaceDetails(m->sws_yuv, coef, 0, coef, 1, 0, 1 << 16, 1 << 16) < 0) {
			log_error("%s: cannot create the RGB48/YUV420P -> RGB8 converters", m->path);
			return NB_ERUNTIME;
		}
		return 0;
	}
	m->sws = sws_getContext(m->w, m->h, AV_PIX_FMT_RGB48, m->w, m->h, AV_PIX_FMT_YUV420P,
				SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
	if (!m->sws) {
		log_error("%s: cannot create the RGB48 -> YUV420P converter", m->path);
		return NB_ERUNTIME;
	}
	if (sws_setColorspaceDetails(m->sws, coef, 1, coef, 0, 0, 1 << 16, 1 << 16) < 0) {
		log_error("%s: cannot set BT.709 conversion coefficients", m->path);
		return NB_ERUNTIME;
	}
	return 0;
}

/* Create the temp file, open it for avio and write the header. */
static int mp4_open_io(struct out_mp4 *m)
{
	/* Create the temp file ourselves (O_EXCL: this process's own name),
	 * then let avio open it by name. */
	int ret, fd = sim_outfile_temp(m->path, m->tmp, sizeof m->tmp);
	if (fd < 0)
		return NB_ERUNTIME;
	close(fd);
	m->tmp_made = 1;
	if ((ret = avio_open(&m->fmt->pb, m->tmp, AVIO_FLAG_WRITE)) < 0) {
		char what[4200];
		snprintf(what, sizeof what, "cannot open %s for writing", m->tmp);
		return av_fail(m, what, ret, NB_ERUNTIME);
	}
	m->io_open = 1;

	AVDictionary *opts = NULL;
	if (m->row->header_opts)
		av_dict_parse_string(&opts, m->row->header_opts, "=", ":", 0);
	ret = avformat_write_header(m->fmt, &opts);
	av_dict_free(&opts);
	if (ret < 0)
		return av_fail(m, "cannot write the header", ret, NB_ERUNTIME);
	m->header_done = 1;
	return 0;
}

int out_mp4_open(struct out_mp4 **out, const char *path, int w, int h, int fps,
		 enum scene_codec codec, int crf, const char *preset)
{
	return out_mp4_open_meta(out, path, w, h, fps, codec, crf, preset, NULL);
}

int out_mp4_open_meta(struct out_mp4 **out, const char *path, int w, int h, int fps,
		      enum scene_codec codec, int crf, const char *preset,
		      const struct out_video_meta *meta)
{
	*out = NULL;
	if (w <= 0 || h <= 0 || (w % 2) != 0 || (h % 2) != 0) {
		log_error("%s: render.width and render.height must be even for video, got %dx%d",
			  path, w, h);
		return NB_EINPUT;
	}
	if (fps <= 0) {
		log_error("%s: output.fps must be >= 1, got %d", path, fps);
		return NB_EINPUT;
	}
	struct out_video_choice ch;
	if (out_video_choose(path, codec, &ch)) {
		log_error("%s: %s: %s", path, ch.key, ch.why);
		return NB_EINPUT;
	}
	const AVCodec *enc = avcodec_find_encoder_by_name(ch.enc->name);
	if (!enc) {
		log_error("%s: %s: this build of FFmpeg has no %s encoder", path, ch.key, ch.enc->name);
		return NB_EINPUT;
	}
	/* libx264/libx265 report statistics at info level; keep quiet runs quiet. */
	if (av_log_get_level() > AV_LOG_ERROR)
		av_log_set_level(AV_LOG_ERROR);

	struct out_mp4 *m = calloc(1, sizeof *m);
	if (!m) {
		log_error("%s: out of memory", path);
		return NB_ERUNTIME;
	}
	int err = NB_ERUNTIME;
	m->w = w, m->h = h;
	m->row = ch.format, m->encrow = ch.enc;
	if (strlen(path) >= sizeof m->path) {
		log_error("%s: path too long", path);
		goto fail;
	}
	strcpy(m->path, path);
	if (sim_outfile_temp_name(path, m->tmp, sizeof m->tmp) != 0)
		goto fail;
	if ((err = mp4_open_stream(m, enc)) ||
	    (err = mp4_open_encoder(m, enc, fps, crf, preset)) || (err = mp4_open_scaler(m)) ||
	    (m->row->tags && (err = out_mp4_sphere_tag(m->fmt, m->st, meta, m->path))) ||
	    (err = mp4_open_io(m)))
		goto fail;
	*out = m;
	return 0;

fail:
	if (m->io_open) {
		avio_closep(&m->fmt->pb);
		m->io_open = 0;
	}
	if (m->tmp_made)
		unlink(m->tmp);
	mp4_free(m);
	return err;
}

/* Send FRAME (NULL: flush) and write every packet the encoder returns. */
static int encode(struct out_mp4 *m, AVFrame *frame)
{
	int ret = avcodec_send_frame(m->enc, frame);
	if (ret < 0)
		return av_fail(m, "cannot send a frame to the encoder", ret, NB_ERUNTIME);
	for (;;) {
		ret = avcodec_receive_packet(m->enc, m->pkt);
		if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
			return 0;
		if (ret < 0)
			return av_fail(m, "encoding failed", ret, NB_ERUNTIME);
		av_packet_rescale_ts(m->pkt, m->enc->time_base, m->st->time_base);
		m->pkt->stream_index = m->st->index;
		/* Takes the packet's reference; also reports avio write errors
		 * (disk full) through pb->error. */
		ret = av_interleaved_write_frame(m->fmt, m->pkt);
		if (ret < 0)
			return av_fail(m, "cannot write a packet", ret, NB_ERUNTIME);
	}
}

int out_mp4_write(struct out_mp4 *m, const uint16_t *rgb16)
{
	if (m->failed)
		return NB_ERUNTIME;
	int ret = av_frame_make_writable(m->frame);
	if (ret < 0) {
		m->failed = 1;
		return av_fail(m, "cannot get a writable frame", ret, NB_ERUNTIME);
	}
	const uint8_t *src[1] = {(const uint8_t *)rgb16};
	const int stride[1] = {m->w * 3 * (int)sizeof(uint16_t)};
	sws_scale(m->sws, src, stride, 0, m->h, m->frame->data, m->frame->linesize);
	m->frame->pts = m->next_pts++;
	int err = encode(m, m->frame);
	if (err)
		m->failed = 1;
	return err;
}

int out_mp4_write_yuv(struct out_mp4 *m, const uint8_t *y, const uint8_t *u, const uint8_t *v)
{
	if (m->failed)
		return NB_ERUNTIME;
	int ret = av_frame_make_writable(m->frame);
	if (ret < 0) {
		m->failed = 1;
		return av_fail(m, "cannot get a writable frame", ret, NB_ERUNTIME);
	}
	/* The encoder's frame has padded line sizes: copy row by row. */
	const uint8_t *src[3] = {y, u, v};
	if (m->sws_yuv) {
		const int stride[3] = {m->w, m->w / 2, m->w / 2};
		sws_scale(m->sws_yuv, src, stride, 0, m->h, m->frame->data, m->frame->linesize);
	}
	for (int p = 0; p < 3 && !m->sws_yuv; p++) {
		const int pw = p ? m->w / 2 : m->w, ph = p ? m->h / 2 : m->h;
		for (int r = 0; r < ph; r++)
			memcpy(m->frame->data[p] + (size_t)r * m->frame->linesize[p],
			       src[p] + (size_t)r * pw, (size_t)pw);
	}
	m->frame->pts = m->next_pts++;
	int err = encode(m, m->frame);
	if (err)
		m->failed = 1;
	return err;
}

int out_mp4_close(struct out_mp4 **mp, int ok)
{
	struct out_mp4 *m = *mp;
	if (!m)
		return 0;
	*mp = NULL;
	int err = 0, ret;
	if (ok && m->failed)
		err = NB_ERUNTIME; /* already logged */
	if (ok && !err)
		err = encode(m, NULL);
	if (ok && !err && (ret = av_write_trailer(m->fmt)) < 0)
		err = av_fail(m, "cannot write the trailer", ret, NB_ERUNTIME);
	if (m->io_open) {
		ret = avio_closep(&m->fmt->pb);
		m->io_open = 0;
		if (ret < 0 && ok && !err)
			err = av_fail(m, "cannot close the file", ret, NB_ERUNTIME);
	}
	int ferr = sim_outfile_commit(m->tmp, m->path, ok && !err);
	if (!err)
		err = ferr;
	mp4_free(m);
	return err;
}
