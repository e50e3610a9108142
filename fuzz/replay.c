/* replay.c - a plain main for a fuzz harness: feeds each FILE argument to
 * LLVMFuzzerTestOneInput once, as libFuzzer would, and reports how many ran.
 * A broken contract aborts (fuzz_util.h), so the exit status says whether
 * every seed and kept regression still holds. Directories are skipped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		uint8_t *buf = malloc((size_t)sb.st_size + 1);
		size_t len = buf ? fread(buf, 1, (size_t)sb.st_size, f) : 0;
		fclose(f);
		if (!buf)
			return 1;
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	printf("%s: %d inputs replayed, contract held\n", argv[0], n);
	return 0;
}
