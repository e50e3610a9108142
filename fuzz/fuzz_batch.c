/* fuzz_batch.c - libFuzzer harness for the batch-file loader and expansion.
 *
 * The input is a batch file. Contract checked (app/batch.h):
 * batch_file_load_string returns 0 or NB_EINPUT on any bytes; a batch that
 * loads expands (batch_expand: set + sweep product) to 0 or NB_EINPUT, and
 * every expanded run has a name or a pending name. Scene paths are looked
 * up in an empty directory, so no run's scene loads; the scene loader has
 * its own harness (fuzz_scene.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../app/batch.h"
#include "fuzz_util.h"

static const char *empty_dir(void)
{
	static char dir[64];
	return fuzz_empty_dir(dir, "/tmp/nb-fuzz-batch.XXXXXX");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	char *text = fuzz_text(data, size);
	struct batch_file bf;
	int err = batch_file_load_string(text, "fuzz-batch.yaml", empty_dir(), &bf);
	if (err != 0 && err != NB_EINPUT)
		fuzz_fail("batch_file_load_string returned neither 0 nor NB_EINPUT", err);
	if (err == 0) {
		struct batch_run *runs = NULL;
		int nruns = 0;
		err = batch_expand(&bf, NULL, 0, &runs, &nruns);
		if (err != 0 && err != NB_EINPUT)
			fuzz_fail("batch_expand returned neither 0 nor NB_EINPUT", err);
		if (err == 0 && nruns < 1)
			fuzz_fail("batch_expand returned no runs for a batch that loaded", nruns);
		for (int i = 0; err == 0 && i < nruns; i++)
			if (!runs[i].name[0] && !runs[i].name_pending)
				fuzz_fail("an expanded run has neither a name nor a pending name", i);
		batch_runs_free(runs, nruns);
	}
	batch_file_free(&bf);
	free(text);
	return 0;
}
