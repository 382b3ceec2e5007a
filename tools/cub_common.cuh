// What tools/cub_*.cu share: error checks, the median of CUDA-event timings after a warm-up, and
// one CSV row in ../shared/bench/cub_baseline.cu's columns (label, type, n, ms, GB/s, copy ms,
// copy GB/s, temporary bytes), which `host bench --baseline` and `host sort --baseline` read.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[iters / 2];
}

// `bytes` read (and as many written) in `ms`, beside a device copy of them in `copy` ms.
static void report(const char* label, const char* type, size_t n, size_t bytes, float ms, float copy, size_t temp) {
  printf("%s,%s,%zu,%.5f,%.1f,%.5f,%.1f,%zu\n", label, type, n, ms, 2.0 * bytes / ms / 1e6, copy, 2.0 * bytes / copy / 1e6,
         temp);
  fflush(stdout);
}

// Reads the option at argv[i], its value at argv[i + 1]: `--log2 A,B,...` (sizes 2^A, 2^B, ...)
// into `log2s` or `--iters N` into `iters`; false for any other option.
static bool size_option(char** argv, int i, std::vector<int>& log2s, int& iters) {
  if (!strcmp(argv[i], "--log2")) {
    log2s.clear();
    for (char* p = strtok(argv[i + 1], ","); p; p = strtok(nullptr, ",")) log2s.push_back(atoi(p));
    return true;
  }
  if (!strcmp(argv[i], "--iters")) {
    iters = atoi(argv[i + 1]);
    return true;
  }
  return false;
}
