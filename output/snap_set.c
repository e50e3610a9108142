/* snap_set.c - output.snapshots as GADGET multi-file sets
 * (output.snapshots.files: K): DIR/snap_NNN.0.hdf5 .. snap_NNN.(K-1).hdf5,
 * each a whole GADGET HDF5 file of its own bodies whose Header says the
 * set's totals and NumFilesPerSnapshot K (output/snap_write.c writes one
 * part). The set is complete or absent: every part is written under its
 * temporary name first, then what an earlier run left under the set's
 * names is retired, then the parts are renamed into place, part 0 last
 * (readers open a set by part 0). The protocol, for ranks that each write
 * their own part, is in output.h; out_snap_write runs it in one process,
 * the bodies split in index order. docs/snapshots.md, "Multi-file sets".
 *
 * Try: --set output.snapshots.dir=out/snaps --set output.snapshots.files=3,
 * then python3 -c "import yt; print(yt.load('out/snaps/snap_000.0.hdf5'))". */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "out_internal.h"
#include "output.h"

uint64_t out_snap_set_id(void)
{
	uint64_t id = 0;
	if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		id = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
		     (uint64_t)getpid() << 32;
	}
	return id ? id : 1;
}

/* Where PATH's extension starts (its last '.' after the last '/'), or
 * its end when it has none. */
static size_t stem_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');
	return dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
}

int out_snap_part_path(const char *path, int k, char *buf, size_t cap)
{
	const size_t stem = stem_len(path);
	int n = snprintf(buf, cap, "%.*s.%d%s", (int)stem, path, k, path + stem);
	if (n < 0 || (size_t)n >= cap) {
		log_error("%s: the name of its part %d is too long", path, k);
		return NB_ERUNTIME;
	}
	return 0;
}

/* NAME (no directory) is part J >= `from` of PATH's set: PATH's last
 * component's stem, '.', digits, its extension. */
static int is_part_from(const char *path, const char *name, int from)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const size_t stem = stem_len(base), ext = strlen(base) - stem, len = strlen(name);
	if (len < stem + 2 + ext || strncmp(name, base, stem) != 0 || name[stem] != '.' ||
	    strcmp(name + len - ext, base + stem) != 0)
		return 0;
	const char *d = name + stem + 1, *end = name + len - ext;
	long j = 0;
	for (const char *c = d; c < end; c++) {
		if (*c < '0' || *c > '9' || j > 100000)
			return 0;
		j = 10 * j + (*c - '0');
	}
	return end > d && (end - d == 1 || *d != '0') && j >= from;
}

/* Remove the parts J >= from of PATH's set that are there (regular files
 * only). 0, or NB_ERUNTIME (logged) when one is something else or cannot
 * be removed. */
static int remove_parts_from(const char *path, int from)
{
	const char *slash = strrchr(path, '/');
	char dir[SCENE_PATH_MAX], part[SCENE_PATH_MAX + 300];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (slash == path)
		snprintf(dir, sizeof dir, "/");
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		log_error("%s: cannot read the directory: %s", dir, strerror(errno));
		return NB_ERUNTIME;
	}
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!is_part_from(path, e->d_name, from))
			continue;
		snprintf(part, sizeof part, "%s/%s", dir, e->d_name);
		int r = out_remove_regular(part);
		if (r) {
			log_error("%s: %s; an earlier snapshot's part is not replaced", part,
				  r > 0 ? "not a regular file" : strerror(errno));
			rc = NB_ERUNTIME;
		}
	}
	closedir(d);
	return rc;
}

int out_snap_set_retire(const char *path, int K)
{
	char part0[SCENE_PATH_MAX + 32];
	int r = out_snap_part_path(path, 0, part0, sizeof part0);
	if (r)
		return r;
	/* part 0 first: from here on no earlier set of this number is visible */
	const char *names[2] = {part0, path};
	for (int i = 0; i < 2; i++) {
		if ((r = out_remove_regular(names[i])) != 0) {
			log_error("%s: %s; an earlier snapshot is not replaced", names[i],
				  r > 0 ? "not a regular file" : strerror(errno));
			return NB_ERUNTIME;
		}
	}
	return remove_parts_from(path, K);
}

int out_snap_part_publish(const char *part)
{
	char tmp[SCENE_PATH_MAX + 64];
	if (sim_outfile_temp_name(part, tmp, sizeof tmp))
		return NB_ERUNTIME;
	return sim_outfile_commit(tmp, part, 1);
}

void out_snap_part_discard(const char *part, int placed)
{
	char tmp[SCENE_PATH_MAX + 64];
	if (sim_outfile_temp_name(part, tmp, sizeof tmp) == 0)
		unlink(tmp);
	if (placed)
		out_remove_regular(part);
}

/* Part k's name into buf, or "" when it does not fit (logged). */
static const char *part_name(const char *path, int k, char *buf, size_t cap)
{
	if (out_snap_part_path(path, k, buf, cap))
		buf[0] = '\0';
	return buf;
}

/* Publish the K staged parts of PATH: K-1 .. 1, then 0. On a failure the
 * parts placed are removed and the rest discarded. 0 or NB_ERUNTIME. */
static int publish_all(const char *path, int K)
{
	char part[SCENE_PATH_MAX + 32];
	int k = K - 1, rc = 0;
	for (; k >= 0 && rc == 0; k--)
		rc = part_name(path, k, part, sizeof part)[0] ? out_snap_part_publish(part)
								   : NB_ERUNTIME;
	if (rc == 0)
		return 0;
	for (int j = 0; j < K; j++) /* k + 1 failed (its temporary gone); above it placed */
		if (part_name(path, j, part, sizeof part)[0])
			out_snap_part_discard(part, j > k + 1);
	return rc;
}

/* The set in one process: part k holds bodies [k n / K, (k+1) n / K). */
static int write_set(const char *path, const struct scene *sc, const struct sim_state *st,
		     int frame, const char *backend, const struct render_camera *cam)
{
	const int K = sc->output.snapshots.files;
	struct out_snap_part p = {.K = K, .set_id = out_snap_set_id()};
	out_snap_part_counts(st, 0, st->n, p.total, &p.extent);
	char part[SCENE_PATH_MAX + 32];
	int rc = 0, k = 0;
	for (; k < K && rc == 0; k++) {
		p.k = k;
		const size_t lo = st->n * (size_t)k / (size_t)K, hi = st->n * (size_t)(k + 1) / (size_t)K;
		rc = part_name(path, k, part, sizeof part)[0]
			     ? out_snap_part_write(part, &p, sc, st, lo, hi, frame, backend, cam)
			     : NB_ERUNTIME;
	}
	rc = rc ? rc : out_snap_set_retire(path, K);
	if (rc) {
		for (int j = 0; j < k; j++)
			if (part_name(path, j, part, sizeof part)[0])
				out_snap_part_discard(part, 0);
		return rc;
	}
	return publish_all(path, K);
}

int out_snap_write(const char *path, const struct scene *sc, const struct sim_state *st,
		   int frame, const char *backend, const struct render_camera *cam)
{
	if (sc->output.snapshots.files > 1)
		return write_set(path, sc, st, frame, backend, cam);
	struct out_snap_part p = {.k = 0, .K = 1};
	out_snap_part_counts(st, 0, st->n, p.total, &p.extent);
	int rc = out_snap_part_write(path, &p, sc, st, 0, st->n, frame, backend, cam);
	/* an earlier run's set of this number is replaced by the one file */
	return rc ? rc : remove_parts_from(path, 0);
}
