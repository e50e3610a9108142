/* infile.c - the one check every input file passes before it is read
 * (scene_infile_open in scene.h): a body file named by the scene, read by
 * sim/state_csv.c and checked by the loader. Special files are refused
 * without reading them, so a FIFO never blocks a run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scene.h"

int scene_infile_open(const char *path, char *why, size_t len)
{
	struct stat sb;
	int fd = -1;
	if (stat(path, &sb) != 0) {
		snprintf(why, len, "it cannot be opened: %s", strerror(errno));
		return -1;
	}
	if (S_ISREG(sb.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			snprintf(why, len, "it cannot be opened: %s", strerror(errno));
			return -1;
		}
		if (fstat(fd, &sb) != 0) {
			snprintf(why, len, "it cannot be examined: %s", strerror(errno));
			close(fd);
			return -1;
		}
	}
	const char *kind = S_ISDIR(sb.st_mode)    ? "it is a directory"
			   : S_ISFIFO(sb.st_mode) ? "it is a FIFO (named pipe)"
			   : S_ISSOCK(sb.st_mode) ? "it is a socket"
			   : S_ISCHR(sb.st_mode)  ? "it is a character device"
			   : S_ISBLK(sb.st_mode)  ? "it is a block device"
			   : !S_ISREG(sb.st_mode) ? "it is not a regular file"
			   : sb.st_size == 0      ? "the file is empty"
						  : NULL;
	if (kind) {
		snprintf(why, len, "%s", kind);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}
