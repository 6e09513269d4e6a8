// multicast_granularity.c: what the CUDA driver says of multicast on this box, the figure
// FlashInfer's all-reduce workspace rounds each buffer to (comm/mnnvl.py: the allocation
// granularity, then CU_MULTICAST_GRANULARITY_RECOMMENDED; memory/vllm_fi_allreduce.h).
//   cc -O1 -I/usr/local/cuda/include multicast_granularity.c -lcuda -o mcg && ./mcg
// Prints one JSON line; queries only, changes nothing.
#include <cuda.h>
#include <stdio.h>

int main(void) {
  CUdevice dev;
  int mc = -1, sms = -1;
  size_t alloc_min = 0, alloc_rec = 0, mc_min = 0, mc_rec[3] = {0, 0, 0};
  CUresult r_alloc = CUDA_SUCCESS, r_mc[3] = {CUDA_SUCCESS, CUDA_SUCCESS, CUDA_SUCCESS}, r_mcmin = CUDA_SUCCESS;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
    printf("{\"error\": \"no CUDA device\"}\n");
    return 1;
  }
  cuDeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev);
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  CUmemAllocationProp ap = {0};
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.location.id = 0;
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  r_alloc = cuMemGetAllocationGranularity(&alloc_min, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  cuMemGetAllocationGranularity(&alloc_rec, &ap, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  const size_t sizes[3] = {(size_t)64 << 20, (size_t)192 << 20, (size_t)1 << 30};
  for (int i = 0; i < 3; ++i) {
    CUmulticastObjectProp mp = {0};
    mp.numDevices = 2;
    mp.size = sizes[i];
    mp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r_mc[i] = cuMulticastGetGranularity(&mc_rec[i], &mp, CU_MULTICAST_GRANULARITY_RECOMMENDED);
    if (i == 0) r_mcmin = cuMulticastGetGranularity(&mc_min, &mp, CU_MULTICAST_GRANULARITY_MINIMUM);
  }
  printf("{\"multicast_supported\": %d, \"sms\": %d, \"alloc_granularity_min\": %zu, \"alloc_granularity_recommended\": %zu, "
         "\"alloc_rc\": %d, \"multicast_min\": %zu, \"multicast_min_rc\": %d, \"multicast_recommended\": [%zu, %zu, %zu], "
         "\"multicast_rc\": [%d, %d, %d], \"sizes\": [%zu, %zu, %zu]}\n",
         mc, sms, alloc_min, alloc_rec, (int)r_alloc, mc_min, (int)r_mcmin, mc_rec[0], mc_rec[1], mc_rec[2], (int)r_mc[0],
         (int)r_mc[1], (int)r_mc[2], sizes[0], sizes[1], sizes[2]);
  return 0;
}
