/* mp4_sphere.c - spherical and stereo video metadata of an MP4 (output.h,
 * struct out_video_meta): stream side data that libavformat's mov muxer
 * turns into the boxes of Google's Spherical Video V2 RFC
 * (github.com/google/spatial-media, docs/spherical-video-v2-rfc.md), in the
 * video sample entry:
 *
 *   AV_PKT_DATA_SPHERICAL (AVSphericalMapping, av_spherical_alloc)
 *       -> sv3d { svhd, proj { prhd (yaw, pitch, roll), equi (bounds) } }
 *   AV_PKT_DATA_STEREO3D (AVStereo3D, av_stereo3d_alloc)
 *       -> st3d (stereo_mode 1 top-bottom, 2 side-by-side; left eye first)
 *
 * The muxer (libavformat/movenc.c, mov_write_video_tag) writes both only
 * for the mp4 format and only when the format context's
 * strict_std_compliance is <= FF_COMPLIANCE_UNOFFICIAL (the boxes are not
 * part of ISO/IEC 14496-12): the command line's "-strict unofficial"
 * (-1). So a tagged file gets that strictness; an untagged one keeps the
 * default and is written exactly as before. The mov demuxer reads both
 * boxes back as the same side data (ffprobe -show_streams lists them).
 * av_stream_add_side_data is libavformat 59's (FFmpeg 5.1) call; newer
 * releases deprecate it for codecpar's coded_side_data. */
#include <libavcodec/avcodec.h> /* FF_COMPLIANCE_UNOFFICIAL */
#include <libavformat/avformat.h>
#include <libavutil/spherical.h>
#include <libavutil/stereo3d.h>

#include <stdio.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "../render/render.h"
#include "output.h"

static int sphere_fail(const char *path, const char *what, int averr)
{
	char buf[AV_ERROR_MAX_STRING_SIZE];
	if (av_strerror(averr, buf, sizeof buf) < 0)
		snprintf(buf, sizeof buf, "libav error %d", averr);
	log_error("%s: %s: %s", path, what, buf);
	return NB_ERUNTIME;
}

/* sv3d: the whole frame is the sphere, longitude across, no rotation. */
static int sphere_add_equirect(AVStream *st, const char *path)
{
	size_t size = 0;
	AVSphericalMapping *sm = av_spherical_alloc(&size);
	if (!sm)
		return sphere_fail(path, "cannot allocate the spherical metadata", AVERROR(ENOMEM));
	sm->projection = AV_SPHERICAL_EQUIRECTANGULAR;
	sm->yaw = sm->pitch = sm->roll = 0;
	sm->bound_left = sm->bound_top = sm->bound_right = sm->bound_bottom = 0;
	int ret = av_stream_add_side_data(st, AV_PKT_DATA_SPHERICAL, (uint8_t *)sm, size);
	if (ret < 0) {
		av_free(sm);
		return sphere_fail(path, "cannot add the spherical metadata", ret);
	}
	return 0;
}

/* st3d: the two eyes' layout, left eye first (flags 0: the muxer writes no
 * st3d for an inverted layout). av_stereo3d_alloc gives no size: the
 * struct of the headers this file is built with, whose libavutil is the
 * one linked (same major version). */
static int sphere_add_stereo(AVStream *st, enum AVStereo3DType type, const char *path)
{
	AVStereo3D *s3 = av_stereo3d_alloc();
	if (!s3)
		return sphere_fail(path, "cannot allocate the stereo metadata", AVERROR(ENOMEM));
	s3->type = type;
	s3->flags = 0;
	int ret = av_stream_add_side_data(st, AV_PKT_DATA_STEREO3D, (uint8_t *)s3, sizeof *s3);
	if (ret < 0) {
		av_free(s3);
		return sphere_fail(path, "cannot add the stereo metadata", ret);
	}
	return 0;
}

int out_mp4_sphere_tag(struct AVFormatContext *fmt, struct AVStream *st,
		       const struct out_video_meta *meta, const char *path)
{
	if (!meta)
		return 0;
	int tagged = 0, rc = 0;
	const struct render_projection *row = render_projection_of(meta->projection);
	if (!row) {
		log_error("%s: unknown video projection %d (internal)", path, (int)meta->projection);
		return NB_EINPUT;
	}
	if (row->mp4_equirect) { /* the others have no box: see output.h */
		if ((rc = sphere_add_equirect(st, path)))
			return rc;
		tagged = 1;
	}
	switch (meta->stereo) {
	case OUT_STEREO_MONO:
		break;
	case OUT_STEREO_SIDE_BY_SIDE:
	case OUT_STEREO_TOP_BOTTOM:
		rc = sphere_add_stereo(st, meta->stereo == OUT_STEREO_TOP_BOTTOM
						   ? AV_STEREO3D_TOPBOTTOM
						   : AV_STEREO3D_SIDEBYSIDE,
				       path);
		if (rc)
			return rc;
		tagged = 1;
		break;
	default:
		log_error("%s: unknown video stereo layout %d (internal)", path, (int)meta->stereo);
		return NB_EINPUT;
	}
	if (tagged && fmt->strict_std_compliance > FF_COMPLIANCE_UNOFFICIAL)
		fmt->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
	return 0;
}
