// CUB's inclusive sum and max scan of 1- and 2-byte elements beside a device copy of the same
// bytes, for the narrow rows of our single-pass scan (../shared/bench/cub_baseline.cu has 4- and
// 8-byte types only). Same CSV columns and labels as that program, so `host bench --baseline` reads it;
// medians of CUDA-event timings after a warm-up.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu
//   /tmp/cub_narrow [--log2 28,30] [--iters 20] > cub-narrow.csv
#include <cub/cub.cuh>
#include "cub_common.cuh"
#include <cuda/functional>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

template <typename T>
static void run(const char* name, int log2, int iters) {
  size_t n = size_t(1) << log2, bytes = n * sizeof(T);
  T *in, *out;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemset(in, 1, bytes));
  float copy = median_ms(iters, [&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
  size_t sum_bytes = 0, max_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, sum_bytes, in, out, n));
  CHECK(cub::DeviceScan::InclusiveScan(nullptr, max_bytes, in, out, cuda::maximum<>{}, n));
  void* temp;
  CHECK(cudaMalloc(&temp, std::max(sum_bytes, max_bytes)));
  float sum = median_ms(iters, [&] { CHECK(cub::DeviceScan::InclusiveSum(temp, sum_bytes, in, out, n)); });
  report("inclusive_sum", name, n, bytes, sum, copy, sum_bytes);
  float max = median_ms(iters, [&] { CHECK(cub::DeviceScan::InclusiveScan(temp, max_bytes, in, out, cuda::maximum<>{}, n)); });
  report("inclusive_max", name, n, bytes, max, copy, max_bytes);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
}

int main(int argc, char** argv) {
  std::vector<int> log2s = {28, 30};
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!size_option(argv, i, log2s, iters)) {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  printf("op,type,n,ms,GBps,memcpy_ms,memcpy_GBps,temp_bytes\n");
  for (int l : log2s) run<uint8_t>("u8", l, iters);
  for (int l : log2s) run<uint16_t>("u16", l, iters);
  return 0;
}
