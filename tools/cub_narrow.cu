// CUB's inclusive sum of 1- and 2-byte elements beside a device copy of the same bytes, for the
// narrow rows of our single-pass scan (../shared/bench/cub_baseline.cu has 4- and 8-byte types
// only). Same CSV columns as that program; medians of CUDA-event timings after a warm-up.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_narrow tools/cub_narrow.cu
//   /tmp/cub_narrow [--log2 28,30] [--iters 20] > cub-narrow.csv
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));   \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

template <typename F>
static float median_ms(int iters, F f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> t(iters);
  for (auto& ms : t) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
  }
  std::sort(t.begin(), t.end());
  return t[iters / 2];
}

template <typename T>
static void run(const char* name, int log2, int iters) {
  size_t n = size_t(1) << log2, bytes = n * sizeof(T);
  T *in, *out;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemset(in, 1, bytes));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  float scan = median_ms(iters, [&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n)); });
  float copy = median_ms(iters, [&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
  printf("scan,%s,%zu,%.4f,%.1f,%.4f,%.1f,%zu\n", name, n, scan, 2.0 * bytes / scan / 1e6, copy,
         2.0 * bytes / copy / 1e6, temp_bytes);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
}

int main(int argc, char** argv) {
  std::vector<int> log2s = {28, 30};
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--log2")) {
      log2s.clear();
      for (char* p = strtok(argv[i + 1], ","); p; p = strtok(nullptr, ",")) log2s.push_back(atoi(p));
    } else if (!strcmp(argv[i], "--iters")) {
      iters = atoi(argv[i + 1]);
    } else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  printf("op,type,n,ms,GBps,memcpy_ms,memcpy_GBps,temp_bytes\n");
  for (int l : log2s) run<uint8_t>("u8", l, iters);
  for (int l : log2s) run<uint16_t>("u16", l, iters);
  return 0;
}
