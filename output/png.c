/* png.c - frames as PNG files (libpng), 8 or 16 bits per channel, RGB, each
 * written under a temp name and renamed into place when complete; and the
 * PNG pool, a few worker threads that write the frames of a sequence in
 * parallel (PNG files are independent per frame), fed by the writer thread
 * (writer.c) through a bounded set of jobs.
 *
 * Speed: a 1080p frame at zlib level 1 without row filters writes several
 * times faster than libpng's defaults for a modest size cost (measured by
 * `nbody-bench frame`, see docs/BENCHMARKS.md); out_png_write and the pool
 * use that. Even so one 8-bit 1080p frame costs one core tens of
 * milliseconds, more than the H.264 encoder's share: hence the pool. */
#include <png.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

/* Where a failure's message goes: libpng's error callback formats it into
 * msg (the caller logs it, or not: the pool reports only its first). */
struct png_ctx {
	const char *path;
	char *msg;
	size_t cap;
};

/* libpng reports errors through this callback; it must not return. */
static void png_fail(png_structp png, png_const_charp text)
{
	struct png_ctx *c = png_get_error_ptr(png);
	snprintf(c->msg, c->cap, "%s: cannot write PNG: %s%s%s", c->path, text, errno ? ": " : "",
		 errno ? strerror(errno) : "");
	png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp text)
{
	log_warn("%s: libpng: %s", ((struct png_ctx *)png_get_error_ptr(png))->path, text);
}

/* Everything that touches libpng, so that the setjmp frame holds no
 * variable that changes after setjmp. The image is rgb8 (8-bit only) or
 * rgb16; row8 is w*3 bytes scratch (8-bit from rgb16). */
static int write_png_stream(FILE *f, struct png_ctx *c, int w, int h, int depth,
			    const uint16_t *rgb16, const uint8_t *rgb8, int level, int filters,
			    uint8_t *row8)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, png_fail, png_warn);
	if (!png) {
		snprintf(c->msg, c->cap, "%s: cannot create the PNG writer", c->path);
		return NB_ERUNTIME;
	}
	png_infop info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		snprintf(c->msg, c->cap, "%s: cannot create the PNG writer", c->path);
		return NB_ERUNTIME;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return NB_ERUNTIME; /* message made by png_fail */
	}
	png_init_io(png, f);
	if (level >= 0)
		png_set_compression_level(png, level);
	if (!filters)
		png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
	png_write_info(png, info);
	if (depth == 16) {
		/* PNG stores 16-bit samples big-endian; swap on little-endian hosts. */
		const uint16_t one = 1;
		if (*(const uint8_t *)&one == 1)
			png_set_swap(png);
		for (int y = 0; y < h; y++)
			png_write_row(png, (png_const_bytep)(rgb16 + (size_t)y * w * 3));
	} else if (rgb8) {
		for (int y = 0; y < h; y++)
			png_write_row(png, rgb8 + (size_t)y * w * 3);
	} else {
		for (int y = 0; y < h; y++) {
			const uint16_t *src = rgb16 + (size_t)y * w * 3;
			for (int i = 0; i < w * 3; i++)
				row8[i] = out_to8(src[i]);
			png_write_row(png, row8);
		}
	}
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return 0;
}

/* One PNG file at PATH via its temp name. On failure msg holds the one
 * line to report (not logged here), except that sim_outfile_temp_name,
 * _fopen and _commit (sim/outfile.c) log their own rare failures. */
static int png_file(const char *path, int w, int h, int depth, const uint16_t *rgb16,
		    const uint8_t *rgb8, int level, int filters, char *msg, size_t cap)
{
	char tmp[4096];
	struct png_ctx c = {path, msg, cap};
	int err = 0;
	msg[0] = '\0';
	if (depth != 8 && depth != 16) {
		snprintf(msg, cap, "%s: output.png_depth must be 8 or 16, got %d", path, depth);
		return NB_EINPUT;
	}
	uint8_t *row8 = malloc((size_t)w * 3);
	if (!row8) {
		snprintf(msg, cap, "%s: out of memory", path);
		return NB_ERUNTIME;
	}
	/* sim_outfile_temp's file, opened here so that the pool logs only
	 * its first failure (msg). */
	if ((err = sim_outfile_temp_name(path, tmp, sizeof tmp)) != 0) {
		free(row8);
		return err;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		snprintf(msg, cap, "%s: cannot create %s: %s", path, tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(row8);
		return NB_ERUNTIME;
	}
	errno = 0;
	err = write_png_stream(f, &c, w, h, depth, rgb16, rgb8, level, filters, row8);
	/* A full disk may only show at the final flush. */
	if (fflush(f) != 0 && !err) {
		snprintf(msg, cap, "%s: cannot write PNG: %s", path, strerror(errno));
		err = NB_ERUNTIME;
	}
	if (fclose(f) != 0 && !err) {
		snprintf(msg, cap, "%s: cannot write PNG: %s", path, strerror(errno));
		err = NB_ERUNTIME;
	}
	free(row8);
	int ferr = sim_outfile_commit(tmp, path, err == 0);
	return err ? err : ferr;
}

int out_png_write_file(const char *path, int w, int h, int depth, const uint16_t *rgb16,
		       int level, int filters)
{
	char msg[4096 + 256];
	int err = png_file(path, w, h, depth, rgb16, NULL, level, filters, msg, sizeof msg);
	if (err && msg[0])
		log_error("%s", msg);
	return err;
}

/* DIR/frame_%05d.png. 0 or NB_ERUNTIME (message in msg). */
static int frame_path(const char *dir, int index, char *path, size_t cap, char *msg,
		      size_t mcap)
{
	int n = snprintf(path, cap, "%s/frame_%05d.png", dir, index);
	if (n < 0 || (size_t)n >= cap) {
		snprintf(msg, mcap, "%s: output.png_dir: path too long", dir);
		return NB_ERUNTIME;
	}
	return 0;
}

int out_png_write(const char *dir, int index, int w, int h, int depth, const uint16_t *rgb16)
{
	char path[4096], msg[4096 + 256];
	if (frame_path(dir, index, path, sizeof path, msg, sizeof msg)) {
		log_error("%s", msg);
		return NB_ERUNTIME;
	}
	return out_png_write_file(path, w, h, depth, rgb16, OUT_PNG_LEVEL, OUT_PNG_FILTERS);
}

/* ---- the pool ----
 * A fixed set of jobs, each FREE (the submitter's), READY (waiting for a
 * worker) or BUSY (a worker writes it). A job owns its frame buffers;
 * submit swaps the caller's buffer with a free job's, so no frame is
 * copied. Workers take the oldest READY job, so files appear roughly in
 * frame order. After the first failure (logged once, under the lock) the
 * jobs still waiting are dropped and submit refuses new ones. */
enum job_state { JOB_FREE, JOB_READY, JOB_BUSY };

struct png_job {
	enum job_state state;
	long seq;         /* submission order */
	int index;        /* frame number: the file name */
	int is8;          /* the frame is in rgb8, else in rgb16 */
	uint16_t *rgb16;  /* w*h*3, or NULL until a frame of this kind came */
	uint8_t *rgb8;    /* w*h*3, or NULL */
};

struct out_png_pool {
	char dir[4096];
	int w, h, depth;
	pthread_mutex_t lock;
	pthread_cond_t ready;  /* a job became READY, or closing */
	pthread_cond_t freed;  /* a job became FREE, or err set */
	struct png_job *jobs;
	int njobs;
	long next_seq;
	int closing;           /* no more jobs will come */
	int err;               /* first failure, 0 if none */
	pthread_t *threads;
	int nthreads;          /* started */
	int joined;            /* the threads are joined (drain) */
	unsigned char *written; /* written[i]: frame i is in place (ours) */
	int nwritten;          /* entries of written */
	_Atomic uint64_t busy_ns;
};

/* The oldest READY job, or NULL. Under p->lock. */
static struct png_job *oldest_ready(struct out_png_pool *p)
{
	struct png_job *best = NULL;
	for (int i = 0; i < p->njobs; i++)
		if (p->jobs[i].state == JOB_READY && (!best || p->jobs[i].seq < best->seq))
			best = &p->jobs[i];
	return best;
}

/* Record that frame INDEX is in place (the pool removes it if the run
 * fails). Under p->lock. 0, or NB_ERUNTIME with msg (out of memory). */
static int mark_written(struct out_png_pool *p, int index, char *msg, size_t cap)
{
	if (index >= p->nwritten) {
		int n = index + 1 > 2 * p->nwritten ? index + 1 : 2 * p->nwritten;
		unsigned char *w = realloc(p->written, (size_t)n);
		if (!w) {
			snprintf(msg, cap, "%s: output.png_dir: out of memory", p->dir);
			return NB_ERUNTIME;
		}
		memset(w + p->nwritten, 0, (size_t)(n - p->nwritten));
		p->written = w;
		p->nwritten = n;
	}
	p->written[index] = 1;
	return 0;
}

static void *pool_main(void *arg)
{
	struct out_png_pool *p = arg;
	char path[4096], msg[4096 + 256];
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct png_job *j;
		while (!(j = oldest_ready(p)) && !p->closing)
			pthread_cond_wait(&p->ready, &p->lock);
		if (!j)
			break; /* closing and drained */
		j->state = JOB_BUSY;
		int skip = p->err != 0;
		pthread_mutex_unlock(&p->lock);

		/* A BUSY job is this thread's alone. */
		int err = 0;
		if (!skip) {
			uint64_t t0 = log_clock_ns();
			err = frame_path(p->dir, j->index, path, sizeof path, msg, sizeof msg);
			if (!err)
				err = png_file(path, p->w, p->h, p->depth, j->is8 ? NULL : j->rgb16,
					       j->is8 ? j->rgb8 : NULL, OUT_PNG_LEVEL,
					       OUT_PNG_FILTERS, msg, sizeof msg);
			atomic_fetch_add(&p->busy_ns, log_clock_ns() - t0);
		}

		pthread_mutex_lock(&p->lock);
		if (!skip && !err)
			err = mark_written(p, j->index, msg, sizeof msg);
		if (err && !p->err) {
			p->err = err;
			if (msg[0])
				log_error("%s", msg);
			/* Drop what waits: later frames stop. */
			for (int i = 0; i < p->njobs; i++)
				if (p->jobs[i].state == JOB_READY)
					p->jobs[i].state = JOB_FREE;
		}
		j->state = JOB_FREE;
		pthread_cond_broadcast(&p->freed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void pool_free(struct out_png_pool *p)
{
	if (!p)
		return;
	if (p->jobs)
		for (int i = 0; i < p->njobs; i++) {
			free(p->jobs[i].rgb16);
			free(p->jobs[i].rgb8);
		}
	free(p->jobs);
	free(p->threads);
	free(p->written);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->freed);
	free(p);
}

int out_png_pool_open(struct out_png_pool **out, const char *dir, int w, int h, int depth,
		      int threads, int jobs)
{
	*out = NULL;
	int err = NB_ERUNTIME;
	char path[4096], tmp[4096], msg[4096 + 256];
	struct out_png_pool *p = calloc(1, sizeof *p);
	if (!p) {
		log_error("%s: output.png_dir: out of memory", dir);
		return NB_ERUNTIME;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->freed, NULL);
	if (depth != 8 && depth != 16) {
		log_error("%s: output.png_depth must be 8 or 16, got %d", dir, depth);
		err = NB_EINPUT;
		goto fail;
	}
	/* The longest name a frame gets (index up to 99999 fits %05d's width
	 * or more), and its temp name, so that no worker finds it too long. */
	int n = snprintf(p->dir, sizeof p->dir, "%s", dir);
	if (n < 0 || (size_t)n >= sizeof p->dir ||
	    frame_path(dir, 2147483647, path, sizeof path, msg, sizeof msg) ||
	    sim_outfile_temp_name(path, tmp, sizeof tmp)) {
		log_error("%s: output.png_dir: path too long", dir);
		goto fail;
	}
	p->w = w, p->h = h, p->depth = depth;
	p->nthreads = 0;
	threads = threads < 1 ? 1 : threads;
	p->njobs = jobs < threads ? threads : jobs;
	p->jobs = calloc((size_t)p->njobs, sizeof *p->jobs);
	p->threads = calloc((size_t)threads, sizeof *p->threads);
	if (!p->jobs || !p->threads) {
		log_error("%s: output.png_dir: out of memory", dir);
		goto fail;
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, pool_main, p) != 0) {
			log_error("%s: output.png_dir: cannot start PNG thread %d of %d", dir, i + 1,
				  threads);
			goto fail;
		}
		p->nthreads++;
	}
	*out = p;
	return 0;
fail:
	if (p->nthreads > 0)
		out_png_pool_close(&p, 0);
	pool_free(p);
	return err;
}

int out_png_pool_submit(struct out_png_pool *p, int index, uint16_t **rgb16, uint8_t **rgb8)
{
	pthread_mutex_lock(&p->lock);
	struct png_job *j = NULL;
	for (;;) {
		if (p->err)
			break;
		for (int i = 0; i < p->njobs && !j; i++)
			if (p->jobs[i].state == JOB_FREE)
				j = &p->jobs[i];
		if (j)
			break;
		pthread_cond_wait(&p->freed, &p->lock);
	}
	if (!j) {
		pthread_mutex_unlock(&p->lock);
		return NB_ERUNTIME; /* logged by the worker that failed */
	}
	/* A FREE job is the submitter's: trade buffers. */
	j->index = index;
	j->seq = p->next_seq++;
	j->is8 = rgb16 == NULL;
	if (j->is8) {
		uint8_t *t = j->rgb8;
		j->rgb8 = *rgb8;
		*rgb8 = t;
	} else {
		uint16_t *t = j->rgb16;
		j->rgb16 = *rgb16;
		*rgb16 = t;
	}
	j->state = JOB_READY;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int out_png_pool_drain(struct out_png_pool *p)
{
	if (!p)
		return 0;
	if (!p->joined) {
		pthread_mutex_lock(&p->lock);
		p->closing = 1;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->lock);
		for (int i = 0; i < p->nthreads; i++)
			pthread_join(p->threads[i], NULL);
		p->joined = 1;
	}
	return p->err;
}

int out_png_pool_close(struct out_png_pool **pp, int keep)
{
	struct out_png_pool *p = *pp;
	if (!p)
		return 0;
	*pp = NULL;
	int err = out_png_pool_drain(p);
	char path[4096], msg[4096 + 256];
	for (int i = 0; !keep && i < p->nwritten; i++)
		if (p->written[i] && frame_path(p->dir, i, path, sizeof path, msg, sizeof msg) == 0 &&
		    out_remove_regular(path) < 0)
			log_warn("%s: cannot remove the frame of this failed run: %s", path,
				 strerror(errno));
	pool_free(p);
	return err;
}

double out_png_pool_busy_seconds(const struct out_png_pool *p)
{
	return p ? (double)atomic_load(&p->busy_ns) * 1e-9 : 0.0;
}
