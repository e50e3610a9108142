/* fuzz_util.h - helpers shared by the libFuzzer harnesses (fuzz/fuzz_*.c).
 *
 * Each harness defines LLVMFuzzerTestOneInput and is built by `make fuzz`
 * with clang, -fsanitize=fuzzer,address,undefined (see the Makefile). A
 * harness asserts the contract of the loader it drives: any bytes give 0 or
 * NB_EINPUT (never a crash, a leak-free return, never another code), and
 * what loads is usable. A broken contract calls fuzz_fail, which aborts:
 * libFuzzer then keeps the input as a crash. */
#ifndef NB_FUZZ_UTIL_H
#define NB_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../scene/log.h"

static inline void fuzz_fail(const char *what, int code)
{
	fprintf(stderr, "fuzz: contract broken: %s (code %d)\n", what, code);
	abort();
}

/* The input as a NUL-terminated string (bytes after an embedded NUL are
 * dropped, as any C text API would see them). Caller frees. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Errors are the expected outcome of most inputs: keep them off stderr
 * (FUZZ_VERBOSE=1 shows them). Called once from each harness. */
static inline void fuzz_quiet_stderr(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	const char *v = getenv("FUZZ_VERBOSE");
	if (!(v && *v == '1'))
		log_set_level(LOG_SILENT);
}

/* The input as an in-memory file (memfd NAME, so that no disk is touched);
 * path gets a name that opens it (/proc/self/fd/N). The descriptor; the
 * caller closes it. */
static inline int fuzz_memfile(const char *name, const uint8_t *data, size_t size, char *path,
			       size_t len)
{
	int fd = memfd_create(name, 0);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* An empty directory made once per process from TEMPLATE (mkdtemp's
 * XXXXXX), kept in buf (64 bytes, static in the caller). */
static inline const char *fuzz_empty_dir(char buf[64], const char *template_)
{
	if (!buf[0]) {
		snprintf(buf, 64, "%s", template_);
		if (!mkdtemp(buf))
			abort();
	}
	return buf;
}
#endif
