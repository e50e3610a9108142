/* probe.cu - is there a GPU this build can use? (gpu_probe, gpu_device_info)
 *
 * gpu_probe asks the runtime for a device and then for the attributes of a
 * kernel of this build: that fails when the binary has no code for the
 * device's architecture (built for sm_90 only, run on an A100, say), which
 * is the case a device count alone would miss. */
extern "C" {
#include "../../scene/log.h"
}
#include "gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void probe_kernel(int *p)
{
	if (p)
		*p = 1;
}

static int probe_cached = -1;
static char probe_reason[256];

int gpu_probe(char *why, size_t whylen)
{
	if (probe_cached < 0) {
		int count = 0;
		cudaError_t e = cudaGetDeviceCount(&count);
		if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
			snprintf(probe_reason, sizeof probe_reason, "no CUDA device found");
		} else if (e == cudaErrorInsufficientDriver) {
			snprintf(probe_reason, sizeof probe_reason,
				 "the NVIDIA driver is missing or older than this build's CUDA runtime");
		} else if (e != cudaSuccess) {
			snprintf(probe_reason, sizeof probe_reason, "CUDA: %s", cudaGetErrorString(e));
		} else {
			struct cudaFuncAttributes fa;
			e = cudaFuncGetAttributes(&fa, probe_kernel);
			if (e != cudaSuccess) {
				struct cudaDeviceProp prop;
				int ok = cudaGetDeviceProperties(&prop, 0) == cudaSuccess;
				snprintf(probe_reason, sizeof probe_reason,
					 "this build has no GPU code for %.120s (compute capability %d.%d): %s",
					 ok ? prop.name : "device 0", ok ? prop.major : 0,
					 ok ? prop.minor : 0, cudaGetErrorString(e));
			}
		}
		cudaGetLastError(); /* the probe's errors are not sticky news */
		probe_cached = probe_reason[0] == '\0';
	}
	if (why && whylen)
		snprintf(why, whylen, "%s", probe_cached ? "" : probe_reason);
	return probe_cached;
}

int gpu_bind_local(int local_rank, int *dev, int *count)
{
	int c = 0;
	*dev = -1;
	*count = 0;
	if (cudaGetDeviceCount(&c) != cudaSuccess || c < 1) {
		cudaGetLastError();
		return NB_ERUNTIME; /* no GPU: the probe says why, later */
	}
	const int d = (local_rank < 0 ? 0 : local_rank) % c;
	CUDA_CHECK(cudaSetDevice(d));
	*dev = d;
	*count = c;
	return 0;
}

int gpu_device_info(char *name, size_t namelen, size_t *free_bytes, size_t *total_bytes)
{
	struct cudaDeviceProp prop;
	size_t fr = 0, tot = 0;
	int dev = 0;
	CUDA_CHECK(cudaGetDevice(&dev)); /* gpu_bind_local's, else 0 */
	CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	if (name && namelen)
		snprintf(name, namelen, "%s", prop.name);
	if (free_bytes)
		*free_bytes = fr;
	if (total_bytes)
		*total_bytes = tot;
	return 0;
}

int gpu_stream_priorities(int *low, int *high)
{
	*low = *high = 0;
	const char *e = getenv("NB_STREAM_PRIORITY");
	if (e && strcmp(e, "0") == 0)
		return 0;
	return cudaDeviceGetStreamPriorityRange(low, high) == cudaSuccess ? 0 : NB_ERUNTIME;
}
