// Positive control for compute-sanitizer racecheck on the GPU machine: the same one-barrier
// in-place Kogge-Stone as the Rust `kogge-stone-racy` block scan, in CUDA C++.
//   nvcc -arch=sm_90 -o racecheck_control tools/racecheck_control.cu
//   compute-sanitizer --tool racecheck ./racecheck_control
#include <cstdio>

__global__ void racy_kogge_stone(unsigned* data) {
  extern __shared__ unsigned s[];
  unsigned t = threadIdx.x;
  s[t] = data[t];
  __syncthreads();
  for (unsigned d = 1; d < blockDim.x; d *= 2) {
    if (t >= d) s[t] += s[t - d];
    __syncthreads();
  }
  data[t] = s[t];
}

int main() {
  unsigned* d;
  cudaMalloc(&d, 1024 * sizeof(unsigned));
  cudaMemset(d, 0, 1024 * sizeof(unsigned));
  racy_kogge_stone<<<1, 1024, 1024 * sizeof(unsigned)>>>(d);
  printf("racecheck control: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
