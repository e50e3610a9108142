/* writer.c - the writer thread: frames from the render loop pass through a
 * ring of queue_depth slots (the producer blocks while it is full; nothing
 * is dropped) to one thread that encodes the MP4, hands the PNG frames to
 * the PNG pool (png.c: a few worker threads, since PNG files are
 * independent per frame and one core cannot keep up) and keeps what the
 * preview needs (the last frame, or the contact sheet's thumbnails). One
 * producer thread; every call but push/busy_seconds comes from the thread
 * that opened the writer.
 *
 * Memory: queue_depth slots in the ring plus png_jobs frames in the pool
 * (default: PNG threads + 1), each one buffer per kind the outputs read.
 * A slot's PNG buffer is traded with a free pool job's (no copy), so the
 * writer thread's part of a PNG frame is a pointer swap; when the ring is
 * full and every pool job is held, push waits (back-pressure).
 *
 * A frame may come as 16-bit RGB (CPU renderer) or as 8-bit data made on
 * the GPU (YUV420P planes, RGB8; output.h). A slot holds one buffer per
 * kind, allocated on first use, and push copies only the kinds the outputs
 * will read: a GPU frame for video alone costs 1.5 bytes/px. The contact
 * sheet takes 16-bit input (preview.c), so an RGB8 frame is widened for it
 * on the writer thread (v * 257: out_to8 gives v back exactly); PNG depth 8
 * writes RGB8 frames as they are (png.c: the same bytes as widening). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

struct slot {
	int index;
	uint16_t *rgb16; /* w*h*3, or NULL until first needed */
	uint8_t *yuv;    /* Y, U, V planes back to back (w*h*3/2), or NULL */
	uint8_t *rgb8;   /* w*h*3, or NULL */
	int has16, hasyuv, has8; /* what this frame carries */
};

struct out_writer {
	/* configuration (read-only once the thread runs) */
	int w, h, fps, frames, png_depth;
	char video[SCENE_PATH_MAX], png_dir[SCENE_PATH_MAX], preview[SCENE_PATH_MAX];
	enum scene_preview preview_kind;
	struct out_video_meta meta; /* the video's projection and stereo tags */

	/* outputs, touched only by the thread until it is joined */
	struct out_mp4 *mp4;
	long mp4_frames;            /* frames encoded into the MP4 */
	int mp4_failed;             /* the MP4 itself failed: cannot be finished */
	uint16_t *last;             /* preview_kind last: the newest frame, or NULL */
	uint8_t *last8;             /* same, when frames came as RGB8 */
	int have_last;              /* 0 none, 16 in last, 8 in last8 */
	uint16_t *wide;             /* scratch: an RGB8 frame widened to 16 bits */
	struct out_sheet sheet;     /* preview_kind sheet */
	struct out_png_pool *png;   /* png_dir set: the PNG worker threads */

	/* the ring, guarded by lock */
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	struct slot *slots;
	int depth, head, count;
	int closing;                /* no more frames will come */
	int err;                    /* first error of the thread (0 if none) */
	pthread_t thread;
	int thread_started;

	_Atomic uint64_t busy_ns;   /* time the thread spent encoding/writing,
				     * waits for the PNG pool included */
};

/* s's RGB8 frame as 16-bit values in w->wide (v * 257, which out_to8 maps
 * back to v exactly). Writer thread. */
static const uint16_t *widen(struct out_writer *w, const struct slot *s)
{
	size_t n = (size_t)w->w * w->h * 3;
	if (!w->wide && !(w->wide = malloc(n * sizeof *w->wide))) {
		log_error("writer: out of memory for a %dx%d frame", w->w, w->h);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		w->wide[i] = (uint16_t)(s->rgb8[i] * 257u);
	return w->wide;
}

/* Copy the n bytes at src into dst (a new buffer when dst is NULL) and
 * return dst; NULL when out of memory (logged). Writer thread. */
static void *keep_copy(struct out_writer *w, void *dst, const void *src, size_t n)
{
	if (!dst && !(dst = malloc(n))) {
		log_error("%s: out of memory for a %dx%d frame", w->preview, w->w, w->h);
		return NULL;
	}
	memcpy(dst, src, n);
	return dst;
}

/* Write one frame to every output. Runs on the writer thread. */
static int write_frame(struct out_writer *w, struct slot *s)
{
	/* PNG depth 8 reads the frame's RGB8 data when it has some. */
	const int png8 = w->png && w->png_depth == 8 && s->has8;
	const int png16 = w->png && !png8;
	const size_t n = (size_t)w->w * w->h * 3;
	int err = 0;
	if (w->mp4) {
		if (s->hasyuv) {
			const size_t ny = (size_t)w->w * w->h, nc = ny / 4;
			err = out_mp4_write_yuv(w->mp4, s->yuv, s->yuv + ny, s->yuv + ny + nc);
		} else {
			err = out_mp4_write(w->mp4, s->rgb16);
		}
		if (err) {
			w->mp4_failed = 1;
			return err;
		}
		w->mp4_frames++;
	}
	if (w->preview[0] && w->preview_kind == SCENE_PREVIEW_LAST) {
		/* Swap buffers instead of copying (the slot gets the old one),
		 * unless the PNG pool takes this buffer below. */
		if (s->has8 && png8) {
			if (!(w->last8 = keep_copy(w, w->last8, s->rgb8, n)))
				return NB_ERUNTIME;
		} else if (s->has8) {
			uint8_t *t = w->last8;
			w->last8 = s->rgb8;
			s->rgb8 = t;
		} else if (png16) {
			if (!(w->last = keep_copy(w, w->last, s->rgb16, n * sizeof *s->rgb16)))
				return NB_ERUNTIME;
		} else {
			uint16_t *t = w->last;
			w->last = s->rgb16;
			s->rgb16 = t;
		}
		w->have_last = s->has8 ? 8 : 16;
	} else if (w->preview[0] && w->preview_kind == SCENE_PREVIEW_SHEET &&
		   out_sheet_slot(&w->sheet, s->index) >= 0) {
		const uint16_t *src = s->rgb16;
		if (s->has8 && !(src = widen(w, s)))
			return NB_ERUNTIME;
		out_sheet_add(&w->sheet, s->index, w->w, w->h, src);
	}
	/* Last: the pool takes the slot's buffer (and leaves it a spare one). */
	if (w->png)
		return out_png_pool_submit(w->png, s->index, png8 ? NULL : &s->rgb16,
					   png8 ? &s->rgb8 : NULL);
	return 0;
}

static void *writer_main(void *arg)
{
	struct out_writer *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->count == 0 && !w->closing)
			pthread_cond_wait(&w->not_empty, &w->lock);
		if (w->count == 0)
			break; /* closing and drained */
		struct slot *s = &w->slots[w->head];
		int failed = w->err != 0;
		pthread_mutex_unlock(&w->lock);

		/* The slot is ours until head moves: the producer only fills
		 * slots past head + count. After a failure, frames are dropped
		 * (push already reports the error). */
		int err = 0;
		if (!failed) {
			uint64_t t0 = log_clock_ns();
			err = write_frame(w, s);
			atomic_fetch_add(&w->busy_ns, log_clock_ns() - t0);
		}

		pthread_mutex_lock(&w->lock);
		if (err && !w->err)
			w->err = err;
		w->head = (w->head + 1) % w->depth;
		w->count--;
		pthread_cond_signal(&w->not_full);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void writer_free(struct out_writer *w)
{
	if (!w)
		return;
	if (w->slots)
		for (int i = 0; i < w->depth; i++) {
			free(w->slots[i].rgb16);
			free(w->slots[i].yuv);
			free(w->slots[i].rgb8);
		}
	free(w->slots);
	free(w->last);
	free(w->last8);
	free(w->wide);
	out_sheet_free(&w->sheet);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->not_full);
	pthread_cond_destroy(&w->not_empty);
	free(w);
}

/* Can we create files in DIR? Checked at open so a bad path fails before
 * the simulation starts. */
static int check_writable_dir(const char *dir, const char *what)
{
	const char *d = dir[0] ? dir : ".";
	if (access(d, W_OK | X_OK) != 0) {
		log_error("%s: %s: directory is not writable: %s", d, what, strerror(errno));
		return NB_ERUNTIME;
	}
	return 0;
}

static int dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (slash == path)
		n = 1;
	if (n >= cap)
		return NB_ERUNTIME;
	memcpy(out, path, n);
	out[n] = '\0';
	return 0;
}

/* PNG worker threads when the caller leaves it to us: NB_PNG_THREADS when
 * set (1..64), else the online CPUs less two (the writer thread with the
 * encoder, and the render loop), 1..8: eight 8-bit 1080p frames at tens of
 * ms each keep up with any frame rate the renderer reaches, and more would
 * only hold more frames in memory. */
int out_png_threads_default(void)
{
	const char *e = getenv("NB_PNG_THREADS");
	if (e && *e) {
		int n = atoi(e);
		if (n >= 1 && n <= 64)
			return n;
		log_warn("NB_PNG_THREADS: must be 1..64, got '%s'; using the default", e);
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long n = cpus - 2;
	return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

static int writer_open(const struct scene *sc, int queue_depth, int png_threads, int png_jobs,
		       const struct out_video_meta *meta, struct out_writer **out);

int out_writer_open(const struct scene *sc, int queue_depth, struct out_writer **out)
{
	return writer_open(sc, queue_depth, 0, 0, NULL, out);
}

int out_writer_open_meta(const struct scene *sc, int queue_depth,
			 const struct out_video_meta *meta, struct out_writer **out)
{
	return writer_open(sc, queue_depth, 0, 0, meta, out);
}

/* The frame size and the PNG and preview folders: checked, made. */
static int writer_prepare_dirs(struct out_writer *w)
{
	int err;
	if (w->w <= 0 || w->h <= 0) {
		log_error("writer: bad frame size %dx%d", w->w, w->h);
		return NB_EINPUT;
	}
	if (w->png_dir[0]) {
		if (w->png_depth != 8 && w->png_depth != 16) {
			log_error("output.png_depth: must be 8 or 16, got %d", w->png_depth);
			return NB_EINPUT;
		}
		if ((err = out_mkdirs(w->png_dir)) != 0 ||
		    (err = check_writable_dir(w->png_dir, "output.png_dir")) != 0)
			return err;
	}
	if (w->preview[0]) {
		char d[SCENE_PATH_MAX];
		if ((err = out_mkdirs_for(w->preview)) != 0)
			return err;
		if (dir_of(w->preview, d, sizeof d) == 0 &&
		    (err = check_writable_dir(d, "output.preview")) != 0)
			return err;
		if (w->preview_kind == SCENE_PREVIEW_SHEET &&
		    (err = out_sheet_init(&w->sheet, w->frames, w->w, w->h)) != 0)
			return err;
	}
	return 0;
}

/* Start the PNG pool (when there are PNG frames) and the writer thread. */
static int writer_start(struct out_writer *w, int png_threads, int png_jobs)
{
	/* SIGINT/SIGTERM go to the render loop's thread, never to ours: the
	 * thread starts with them blocked (it inherits this mask).
	 * The PNG workers likewise. */
	int err = 0;
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int perr = 0;
	if (w->png_dir[0]) {
		if (png_threads < 1)
			png_threads = out_png_threads_default();
		if (png_jobs < 1)
			png_jobs = png_threads + 1;
		err = out_png_pool_open(&w->png, w->png_dir, w->w, w->h, w->png_depth, png_threads,
					png_jobs);
	}
	if (!err)
		perr = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	if (perr != 0) {
		log_error("writer: cannot start the writer thread");
		return NB_ERUNTIME;
	}
	w->thread_started = 1;
	return 0;
}

int out_writer_open_png(const struct scene *sc, int queue_depth, int png_threads, int png_jobs,
			struct out_writer **out)
{
	return writer_open(sc, queue_depth, png_threads, png_jobs, NULL, out);
}

static int writer_open(const struct scene *sc, int queue_depth, int png_threads, int png_jobs,
		       const struct out_video_meta *meta, struct out_writer **out)
{
	*out = NULL;
	int err = NB_ERUNTIME;
	struct out_writer *w = calloc(1, sizeof *w);
	if (!w) {
		log_error("writer: out of memory");
		return NB_ERUNTIME;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->not_full, NULL);
	pthread_cond_init(&w->not_empty, NULL);
	w->w = sc->render.width;
	w->h = sc->render.height;
	w->fps = sc->output.fps;
	w->frames = sc->output.frames;
	w->png_depth = sc->output.png_depth;
	w->preview_kind = sc->output.preview_kind;
	if (meta)
		w->meta = *meta;
	snprintf(w->video, sizeof w->video, "%s", sc->output.video);
	snprintf(w->png_dir, sizeof w->png_dir, "%s", sc->output.png_dir);
	if (sc->output.preview_kind != SCENE_PREVIEW_NONE)
		snprintf(w->preview, sizeof w->preview, "%s", sc->output.preview);
	w->depth = queue_depth < 1 ? 1 : queue_depth;
	if ((err = writer_prepare_dirs(w)) != 0)
		goto fail;

	/* Slot buffers come with the first frame that needs them (push). */
	w->slots = calloc((size_t)w->depth, sizeof *w->slots);
	if (!w->slots)
		goto oom;

	/* Last, so that a failure above leaves no temp file behind. */
	if (w->video[0]) {
		if ((err = out_mkdirs_for(w->video)) != 0)
			goto fail;
		err = out_mp4_open_meta(&w->mp4, w->video, w->w, w->h, w->fps, sc->output.codec,
					sc->output.crf, sc->output.preset, &w->meta);
		if (err)
			goto fail;
	}
	if ((err = writer_start(w, png_threads, png_jobs)) != 0)
		goto fail;
	*out = w;
	return 0;

oom:
	log_error("writer: out of memory for a queue of %d frames of %dx%d", w->depth, w->w, w->h);
	err = NB_ERUNTIME;
fail:
	out_png_pool_close(&w->png, 0);
	out_mp4_close(&w->mp4, 0);
	writer_free(w);
	return err;
}

/* buf, or a new buffer of cap bytes when buf is NULL (first use); NULL
 * when out of memory (logged). */
static void *ensure(void *buf, size_t cap, const struct out_writer *w)
{
	if (!buf && !(buf = malloc(cap)))
		log_error("writer: out of memory for a queue of %d frames of %dx%d", w->depth, w->w,
			  w->h);
	return buf;
}

/* Which kinds of f the outputs read (see output.h). NB_ERUNTIME (logged)
 * when an output finds nothing it can use. */
static int plan_copy(const struct out_writer *w, const struct out_frame8 *f, int *need16,
		     int *needyuv, int *need8)
{
	const int hasyuv = f->y && f->u && f->v;
	const char *missing = NULL;
	*need16 = *needyuv = *need8 = 0;
	if (w->video[0]) {
		if (hasyuv)
			*needyuv = 1;
		else if (f->rgb16)
			*need16 = 1;
		else
			missing = "the video needs YUV420P planes or 16-bit RGB";
	}
	if (w->png_dir[0]) {
		if (w->png_depth == 8 && f->rgb8)
			*need8 = 1;
		else if (f->rgb16)
			*need16 = 1;
		else
			missing = w->png_depth == 16 ? "output.png_depth 16 needs 16-bit RGB"
						     : "the PNG frames need RGB8 or 16-bit RGB";
	}
	if (w->preview[0] && (w->preview_kind == SCENE_PREVIEW_LAST ||
			      out_sheet_slot(&w->sheet, f->index) >= 0)) {
		if (f->rgb8)
			*need8 = 1;
		else if (f->rgb16)
			*need16 = 1;
		else
			missing = "the preview needs RGB8 or 16-bit RGB";
	}
	if (missing) {
		log_error("writer: frame %d: %s", f->index, missing);
		return NB_ERUNTIME;
	}
	return 0;
}

int out_writer_push8(struct out_writer *w, const struct out_frame8 *f)
{
	int need16, needyuv, need8;
	if (f->w != w->w || f->h != w->h) {
		log_error("writer: frame %d is %dx%d, the outputs are %dx%d", f->index, f->w, f->h,
			  w->w, w->h);
		return NB_ERUNTIME;
	}
	if (plan_copy(w, f, &need16, &needyuv, &need8))
		return NB_ERUNTIME;
	pthread_mutex_lock(&w->lock);
	while (w->count == w->depth && !w->err)
		pthread_cond_wait(&w->not_full, &w->lock);
	if (w->err) {
		pthread_mutex_unlock(&w->lock);
		return NB_ERUNTIME;
	}
	struct slot *s = &w->slots[(w->head + w->count) % w->depth];
	pthread_mutex_unlock(&w->lock);

	/* The slot past head + count is ours until count grows. */
	const size_t npix = (size_t)w->w * w->h;
	s->index = f->index;
	s->has16 = need16, s->hasyuv = needyuv, s->has8 = need8;
	if (need16) {
		if (!(s->rgb16 = ensure(s->rgb16, npix * 3 * sizeof(uint16_t), w)))
			return NB_ERUNTIME;
		memcpy(s->rgb16, f->rgb16, npix * 3 * sizeof(uint16_t));
	}
	if (need8) {
		if (!(s->rgb8 = ensure(s->rgb8, npix * 3, w)))
			return NB_ERUNTIME;
		memcpy(s->rgb8, f->rgb8, npix * 3);
	}
	if (needyuv) {
		if (!(s->yuv = ensure(s->yuv, npix + npix / 2, w)))
			return NB_ERUNTIME;
		memcpy(s->yuv, f->y, npix);
		memcpy(s->yuv + npix, f->u, npix / 4);
		memcpy(s->yuv + npix + npix / 4, f->v, npix / 4);
	}

	pthread_mutex_lock(&w->lock);
	w->count++;
	pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int out_writer_push(struct out_writer *w, const struct out_frame *f)
{
	const struct out_frame8 f8 = {.index = f->index, .w = f->w, .h = f->h, .rgb16 = f->rgb16};
	return out_writer_push8(w, &f8);
}

/* After the thread is joined: write the preview (only for a good run). */
static int finish_preview(struct out_writer *w)
{
	if (w->preview_kind == SCENE_PREVIEW_SHEET)
		return out_preview_write(w->preview, w->sheet.sw, w->sheet.sh, w->sheet.rgb8);
	if (!w->have_last)
		return 0;
	if (w->have_last == 8)
		return out_preview_write(w->preview, w->w, w->h, w->last8);
	size_t n = (size_t)w->w * w->h * 3;
	uint8_t *rgb8 = malloc(n);
	if (!rgb8) {
		log_error("%s: out of memory", w->preview);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < n; i++)
		rgb8[i] = out_to8(w->last[i]);
	int err = out_preview_write(w->preview, w->w, w->h, rgb8);
	free(rgb8);
	return err;
}

/* A file this writer put in place, removed because a later output failed. */
static void remove_placed(const char *path)
{
	if (out_remove_regular(path) < 0)
		log_warn("%s: cannot remove the output of this failed run: %s", path, strerror(errno));
}

int out_writer_close(struct out_writer **wp, int ok, int keep_partial_video)
{
	struct out_writer *w = *wp;
	if (!w)
		return 0;
	*wp = NULL;
	pthread_mutex_lock(&w->lock);
	w->closing = 1;
	pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->lock);
	if (w->thread_started)
		pthread_join(w->thread, NULL);

	int err = w->err;
	if (w->png) {
		/* Every PNG handed to the pool is written (or the pool failed). */
		uint64_t t0 = log_clock_ns();
		int e = out_png_pool_drain(w->png);
		atomic_fetch_add(&w->busy_ns, log_clock_ns() - t0);
		if (e && !err)
			err = e;
	}
	int good = ok && !err, video_placed = 0;
	if (w->mp4) {
		/* A cancelled run keeps the frames made so far, playable. */
		int keep = good || (keep_partial_video && !w->mp4_failed && w->mp4_frames > 0);
		uint64_t t0 = log_clock_ns();
		int e = out_mp4_close(&w->mp4, keep);
		atomic_fetch_add(&w->busy_ns, log_clock_ns() - t0);
		video_placed = keep && !e;
		if (e && !err)
			err = e;
	}
	int preview_placed = 0;
	if (ok && !err && w->preview[0]) {
		int e = finish_preview(w);
		preview_placed = !e;
		if (e && !err)
			err = e;
	}
	good = ok && !err;
	/* The run's own PNG frames go when it did not succeed; an earlier,
	 * longer run's higher numbers are the caller's to remove (the outputs
	 * table, app/outputs.h, does it for every numbered sequence). */
	out_png_pool_close(&w->png, good);
	if (!good && video_placed && !keep_partial_video)
		remove_placed(w->video);
	if (!good && preview_placed)
		remove_placed(w->preview);
	writer_free(w);
	return err;
}

double out_writer_busy_seconds(const struct out_writer *w)
{
	return (double)atomic_load(&w->busy_ns) * 1e-9;
}

double out_writer_png_seconds(const struct out_writer *w)
{
	return out_png_pool_busy_seconds(w->png);
}
