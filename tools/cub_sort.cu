// CUB's radix sort on the same keys as `host sort`, beside a device copy of them: random keys
// (`input::bits(42, i)`, splitmix64, the low 32 bits for 4-byte types) with and without u32 values
// (the keys' input positions), and ../shared/bench/cub_baseline.cu's keys `(i * 2654435761) mod 7`
// (`host sort --keys cub`). cub_baseline.cu times the latter only, and those keys leave three of the
// four 8-bit passes of a u32 sort with one digit, so its time is no yardstick for random keys.
// Same CSV columns as cub_baseline.cu, so `host sort --baseline` reads it: labels
// radix_sort_keys_random, radix_sort_pairs_random, radix_sort_keys (cub_baseline.cu's keys).
// Medians of CUDA-event timings after a warm-up.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_sort tools/cub_sort.cu
//   /tmp/cub_sort [--log2 28] [--iters 10] [--types u32,f32,u64] > cub-sort.csv
#include <cub/cub.cuh>
#include "cub_common.cuh"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

/// host/src/input.rs's `splitmix64`, so that `bits` below is its `bits`.
__host__ __device__ static uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__host__ __device__ static uint64_t bits(uint64_t seed, uint64_t i) { return splitmix64(seed ^ splitmix64(i)); }

/// Keys as the CLI makes them: `random` takes the low bits of `bits(seed, i)` as the key's bits
/// (`Element::from_bits`), otherwise cub_baseline.cu's pattern converted to the key type.
template <typename T>
__global__ void fill(T* keys, uint32_t* values, size_t n, bool random, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    if (random) {
      uint64_t b = bits(seed, i);
      memcpy(&keys[i], &b, sizeof(T));
    } else {
      keys[i] = (T)((i * 2654435761u) % 7);
    }
    values[i] = (uint32_t)i;
  }
}

template <typename T>
static void run(const char* name, size_t n, int iters) {
  T *keys, *keys_out;
  uint32_t *values, *values_out;
  CHECK(cudaMalloc(&keys, n * sizeof(T)));
  CHECK(cudaMalloc(&keys_out, n * sizeof(T)));
  CHECK(cudaMalloc(&values, n * 4));
  CHECK(cudaMalloc(&values_out, n * 4));
  float copy = median_ms(iters, [&] { CHECK(cudaMemcpyAsync(keys_out, keys, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  size_t keys_bytes = 0, pairs_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortKeys(nullptr, keys_bytes, keys, keys_out, (int64_t)n));
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, pairs_bytes, keys, keys_out, values, values_out, (int64_t)n));
  void* temp;
  CHECK(cudaMalloc(&temp, std::max(keys_bytes, pairs_bytes)));
  for (bool random : {true, false}) {
    fill<<<1024, 256>>>(keys, values, n, random, 42);
    CHECK(cudaGetLastError());
    float ms = median_ms(iters, [&] { CHECK(cub::DeviceRadixSort::SortKeys(temp, keys_bytes, keys, keys_out, (int64_t)n)); });
    report(random ? "radix_sort_keys_random" : "radix_sort_keys", name, n, n * sizeof(T), ms, copy, keys_bytes);
    if (random) {
      ms = median_ms(iters, [&] {
        CHECK(cub::DeviceRadixSort::SortPairs(temp, pairs_bytes, keys, keys_out, values, values_out, (int64_t)n));
      });
      report("radix_sort_pairs_random", name, n, n * (sizeof(T) + 4), ms, copy, pairs_bytes);
    }
  }
  CHECK(cudaFree(temp));
  CHECK(cudaFree(keys));
  CHECK(cudaFree(keys_out));
  CHECK(cudaFree(values));
  CHECK(cudaFree(values_out));
}

int main(int argc, char** argv) {
  std::vector<int> log2s = {28};
  std::string types = "u32,f32,u64";
  int iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--types")) {
      types = argv[i + 1];
    } else if (!size_option(argv, i, log2s, iters)) {
      fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  int dev;
  cudaDeviceProp prop;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaGetDeviceProperties(&prop, dev));
  printf("# %s, %d SMs, CUB %d; keys random = host/src/input.rs bits(42, i), cub = (i * 2654435761) mod 7\n", prop.name,
         prop.multiProcessorCount, CUB_VERSION);
  printf("# check: bits(42, 0) = %016llx, bits(42, 1) = %016llx\n", (unsigned long long)bits(42, 0),
         (unsigned long long)bits(42, 1));
  printf("op,type,n,ms,GBps,memcpy_ms,memcpy_GBps,temp_bytes\n");
  for (int log2 : log2s) {
    size_t n = size_t(1) << log2;
    std::string list = "," + types + ",";
    if (list.find(",u32,") != std::string::npos) run<uint32_t>("u32", n, iters);
    if (list.find(",i32,") != std::string::npos) run<int32_t>("i32", n, iters);
    if (list.find(",f32,") != std::string::npos) run<float>("f32", n, iters);
    if (list.find(",u64,") != std::string::npos) run<uint64_t>("u64", n, iters);
    if (list.find(",i64,") != std::string::npos) run<int64_t>("i64", n, iters);
    if (list.find(",f64,") != std::string::npos) run<double>("f64", n, iters);
  }
  return 0;
}
