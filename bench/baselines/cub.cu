// NVIDIA CUB on the same GPU, in the same run as gpu-scan, for side-by-side ratios: the
// toolkit's CUB, or the newest (CCCL headers given with -I). One program for both.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub cub.cu                     # the toolkit's CUB
//   nvcc -O3 -std=c++17 -arch=sm_90 -I <cccl>/include -o cub35 cub.cu  # CCCL 3.5 from PyPI
//   ./cub [--log2 20,24,28,30] [--apps-log2 28] [--iters 20] > cub.csv
//
// Every time is the median of --iters CUDA-event timings after 3 warm-up runs. CSV on stdout:
// op,type,n,ms,GBps,copy_ms,cub; GB/s counts n elements read and n written (the keys and values
// of sorts; n bytes read and 4n written by the widening sum; keys and values read by the sums by
// key), as `host` does. Inputs: scans and selects take (i * 2654435761) mod 7, as
// `gpu_scan::input::cub_pattern` makes them; random sort keys are `gpu_scan::input::bits(42, i)`.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#if __has_include(<cuda/__execution/determinism.h>)
#include <cuda/__execution/determinism.h>
#include <cuda/__execution/require.h>
#include <cuda/std/execution>
#define HAS_RUN_TO_RUN 1
#endif

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);    \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static int g_iters = 20;

template <typename F>
static float median_ms(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < g_iters; i++) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// `gpu_scan::input::bits`: splitmix64 of the seed and of the index.
__host__ __device__ static uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill(T* p, size_t n, bool random) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    if (random) {
      uint64_t b = splitmix64(42 ^ splitmix64(i));
      memcpy(&p[i], &b, sizeof(T));
    } else {
      p[i] = (T)((i * 2654435761u) % 7);
    }
  }
}

__global__ void iota(uint32_t* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (uint32_t)i;
}

static void report(const char* op, const char* ty, size_t n, double bytes, float ms, float copy_ms) {
  printf("%s,%s,%zu,%.5f,%.1f,%.5f,%d\n", op, ty, n, ms, bytes / ms / 1e6, copy_ms, CUB_VERSION);
  fflush(stdout);
}

struct GreaterThan3 {
  template <typename T>
  __device__ bool operator()(const T& x) const { return x > T(3); }
};

/// A device buffer freed at the end of its scope.
struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) { CK(cudaMalloc(&p, bytes + 16)); }
  ~Buffer() { cudaFree(p); }
  template <typename T> T* as() const { return static_cast<T*>(p); }
};

template <typename T>
static void scans(const char* ty, size_t n) {
  Buffer in(n * sizeof(T)), out(n * sizeof(T));
  fill<<<1024, 256>>>(in.as<T>(), n, false);
  float copy = median_ms([&] { CK(cudaMemcpyAsync(out.p, in.p, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  double bytes = 2.0 * n * sizeof(T);
  size_t tb = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, tb, in.as<T>(), out.as<T>(), (int64_t)n));
  size_t tb_max = 0;
  CK(cub::DeviceScan::InclusiveScan(nullptr, tb_max, in.as<T>(), out.as<T>(), cuda::maximum<>{}, (int64_t)n));
  Buffer temp(std::max(tb, tb_max));
  report("inclusive_sum", ty, n, bytes,
         median_ms([&] { CK(cub::DeviceScan::InclusiveSum(temp.p, tb, in.as<T>(), out.as<T>(), (int64_t)n)); }), copy);
  report("exclusive_sum", ty, n, bytes,
         median_ms([&] { CK(cub::DeviceScan::ExclusiveSum(temp.p, tb, in.as<T>(), out.as<T>(), (int64_t)n)); }), copy);
  report("inclusive_max", ty, n, bytes, median_ms([&] {
           CK(cub::DeviceScan::InclusiveScan(temp.p, tb_max, in.as<T>(), out.as<T>(), cuda::maximum<>{}, (int64_t)n));
         }), copy);
#ifdef HAS_RUN_TO_RUN
  if (std::is_floating_point<T>::value) {
    auto env = cuda::execution::require(cuda::execution::determinism::run_to_run);
    report("det_inclusive_sum", ty, n, bytes,
           median_ms([&] { CK(cub::DeviceScan::InclusiveSum(in.as<T>(), out.as<T>(), (int64_t)n, env)); }), copy);
  }
#endif
}

/// The widening sum of bytes into u32 (`host scan --output-type u32`): the sum is taken in u32,
/// and GB/s counts n bytes read and 4n written.
static void widening(size_t n) {
  Buffer in(n), out(n * 4);
  fill<<<1024, 256>>>(in.as<uint8_t>(), n, false);
  // The copy yardstick moves as many bytes: 2.5n read and 2.5n written.
  float copy;
  {
    Buffer a(n * 5 / 2), b(n * 5 / 2);
    copy = median_ms([&] { CK(cudaMemcpyAsync(b.p, a.p, n * 5 / 2, cudaMemcpyDeviceToDevice)); });
  }
  size_t tb = 0;
  auto sum = cuda::std::plus<uint32_t>{};
  CK(cub::DeviceScan::InclusiveScan(nullptr, tb, in.as<uint8_t>(), out.as<uint32_t>(), sum, (int64_t)n));
  Buffer temp(tb);
  float ms = median_ms(
      [&] { CK(cub::DeviceScan::InclusiveScan(temp.p, tb, in.as<uint8_t>(), out.as<uint32_t>(), sum, (int64_t)n)); });
  report("widening_sum_u32", "u8", n, 5.0 * n, ms, copy);
}

/// Where a run of equal keys starts, as `host segmented N --keys --mean-length L` makes them: at
/// i > 0 where `gpu_scan::input::bits(42 ^ 0x5e9, i)` is a multiple of L.
__global__ void run_heads(uint32_t* p, size_t n, uint32_t length) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = i > 0 && splitmix64((42 ^ 0x5e9) ^ splitmix64(i)) % length == 0;
}

/// The inclusive sum of u32 values by u32 keys; GB/s counts keys and values read, values written.
static void sum_by_key(size_t n, uint32_t length) {
  Buffer keys(n * 4), in(n * 4), out(n * 4);
  // The keys: each run's index, the inclusive sum of the heads (made in `out`, then moved).
  run_heads<<<1024, 256>>>(out.as<uint32_t>(), n, length);
  size_t th = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, th, out.as<uint32_t>(), keys.as<uint32_t>(), (int64_t)n));
  {
    Buffer heads_temp(th);
    CK(cub::DeviceScan::InclusiveSum(heads_temp.p, th, out.as<uint32_t>(), keys.as<uint32_t>(), (int64_t)n));
  }
  fill<<<1024, 256>>>(in.as<uint32_t>(), n, false);
  float copy = median_ms([&] { CK(cudaMemcpyAsync(out.p, in.p, n * 4, cudaMemcpyDeviceToDevice)); });
  size_t tb = 0;
  CK(cub::DeviceScan::InclusiveSumByKey(nullptr, tb, keys.as<uint32_t>(), in.as<uint32_t>(), out.as<uint32_t>(),
                                        (int64_t)n));
  Buffer temp(tb);
  float ms = median_ms([&] {
    CK(cub::DeviceScan::InclusiveSumByKey(temp.p, tb, keys.as<uint32_t>(), in.as<uint32_t>(), out.as<uint32_t>(),
                                          (int64_t)n));
  });
  std::string op = "inclusive_sum_by_key_" + std::to_string(length);
  report(op.c_str(), "u32", n, 12.0 * n, ms, copy);
}

/// Floats uniform over [-0.05, 1.05), as `host histogram N --type f32` makes them with seed 42.
__global__ void uniform_f32(float* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double unit = (double)(splitmix64(42 ^ splitmix64(i)) >> 11) * (1.0 / 9007199254740992.0);
    p[i] = (float)(-0.05 + 1.1 * unit);
  }
}

/// The counts of 1000 equal bins over [0, 1) of f32 values (`host histogram N --bins 1000`);
/// GB/s counts the values read.
static void histogram(size_t n) {
  Buffer in(n * 4), out(n * 4), counts(1000 * sizeof(int));
  uniform_f32<<<1024, 256>>>(in.as<float>(), n);
  float copy = median_ms([&] { CK(cudaMemcpyAsync(out.p, in.p, n * 4, cudaMemcpyDeviceToDevice)); });
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, in.as<float>(), counts.as<int>(), 1001, 0.0f, 1.0f, (int64_t)n));
  Buffer temp(tb);
  float ms = median_ms([&] {
    CK(cub::DeviceHistogram::HistogramEven(temp.p, tb, in.as<float>(), counts.as<int>(), 1001, 0.0f, 1.0f, (int64_t)n));
  });
  report("histogram_even_1000", "f32", n, 4.0 * n, ms, copy);
}

template <typename T>
static void select(const char* ty, size_t n) {
  Buffer in(n * sizeof(T)), out(n * sizeof(T)), count(sizeof(int64_t));
  fill<<<1024, 256>>>(in.as<T>(), n, false);
  float copy = median_ms([&] { CK(cudaMemcpyAsync(out.p, in.p, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  size_t tb = 0;
  CK(cub::DeviceSelect::If(nullptr, tb, in.as<T>(), out.as<T>(), count.as<int64_t>(), (int64_t)n, GreaterThan3{}));
  Buffer temp(tb);
  float ms = median_ms([&] {
    CK(cub::DeviceSelect::If(temp.p, tb, in.as<T>(), out.as<T>(), count.as<int64_t>(), (int64_t)n, GreaterThan3{}));
  });
  report("select_if_gt3", ty, n, 2.0 * n * sizeof(T), ms, copy);
}

template <typename T>
static void sorts(const char* ty, size_t n) {
  Buffer keys(n * sizeof(T)), keys_out(n * sizeof(T)), values(n * 4), values_out(n * 4);
  iota<<<1024, 256>>>(values.as<uint32_t>(), n);
  float copy = median_ms([&] { CK(cudaMemcpyAsync(keys_out.p, keys.p, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  size_t tk = 0, tp = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, tk, keys.as<T>(), keys_out.as<T>(), (int64_t)n));
  CK(cub::DeviceRadixSort::SortPairs(nullptr, tp, keys.as<T>(), keys_out.as<T>(), values.as<uint32_t>(),
                                     values_out.as<uint32_t>(), (int64_t)n));
  Buffer temp(std::max(tk, tp));
  for (bool random : {false, true}) {
    fill<<<1024, 256>>>(keys.as<T>(), n, random);
    float ms = median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(temp.p, tk, keys.as<T>(), keys_out.as<T>(), (int64_t)n)); });
    report(random ? "radix_sort_keys_random" : "radix_sort_keys", ty, n, 2.0 * n * sizeof(T), ms, copy);
  }
  float ms = median_ms([&] {
    CK(cub::DeviceRadixSort::SortPairs(temp.p, tp, keys.as<T>(), keys_out.as<T>(), values.as<uint32_t>(),
                                       values_out.as<uint32_t>(), (int64_t)n));
  });
  report("radix_sort_pairs_random", ty, n, 2.0 * n * (sizeof(T) + 4), ms, copy);
}

static std::vector<int> ints(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(atoi(p));
    while (*p && *p != ',') p++;
    if (*p == ',') p++;
  }
  return v;
}

int main(int argc, char** argv) {
  std::vector<int> log2s = {20, 24, 28, 30}, apps = {28};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--log2")) log2s = ints(argv[i + 1]);
    else if (!strcmp(argv[i], "--apps-log2")) apps = ints(argv[i + 1]);
    else if (!strcmp(argv[i], "--iters")) g_iters = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s, %d SMs, CUB %d, CUDA runtime %d\n", p.name, p.multiProcessorCount, CUB_VERSION, CUDART_VERSION);
  printf("op,type,n,ms,GBps,copy_ms,cub\n");
  for (int e : log2s) {
    size_t n = size_t(1) << e;
    scans<uint8_t>("u8", n);
    scans<uint16_t>("u16", n);
    scans<uint32_t>("u32", n);
    scans<float>("f32", n);
    scans<uint64_t>("u64", n);
    scans<double>("f64", n);
    widening(n);
  }
  for (int e : apps) {
    size_t n = size_t(1) << e;
    select<uint32_t>("u32", n);
    select<float>("f32", n);
    select<uint64_t>("u64", n);
    select<double>("f64", n);
    sorts<uint32_t>("u32", n);
    sorts<float>("f32", n);
    sorts<uint64_t>("u64", n);
    sum_by_key(n, 16);
    sum_by_key(n, 1024);
    histogram(n);
  }
  return 0;
}
