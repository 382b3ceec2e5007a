// The pipelined scan's stage hand-off (gpu/src/kernels/pipelined.rs) in miniature, for
// compute-sanitizer's racecheck: a load warp fills a ring of shared-memory stages (a full tile by
// one bulk copy, the partial last tile element by element), reducing warps read each tile once it
// has landed, scanning warps read it again once the reducing warps are done, then free the stage.
//
//   full[s]    the tile in stage s has landed: the bulk copy's bytes, or the load warp's arrival
//   reduced[s] the reducing warps are done with stage s (their named barrier, then one arrival)
//   empty[s]   the scanning warps are done with stage s: the load warp may fill it again
//
// As in the scan, each warp orders its lanes' accesses with __syncwarp and lane 0 alone arrives
// (--arrive lane0); --arrive all has every lane that touched the stage arrive itself instead.
// Each of two launches checks every tile's sums against the CPU.

#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int WARP = 32;
constexpr int REDUCERS = 4;                    // reducing warps; as many scanning warps
constexpr int PART = WARP * 16;                // doubles each reducing warp reads: 8 rows of 16 bytes a lane
constexpr int TILE = REDUCERS * PART;          // 2048 doubles, the f64 pipelined scan's tile
constexpr int LOAD_WARP = 2 * REDUCERS;
constexpr int THREADS = (LOAD_WARP + 1) * WARP;
constexpr int MAX_STAGES = 6;

__device__ __forceinline__ uint32_t smem(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t *b, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *b) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem(b)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *b, uint32_t bytes) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" ::"r"(smem(b)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *b, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(smem(b)), "r"(parity)
                     : "memory");
    }
}
__device__ __forceinline__ void bulk_to_shared(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem(dst)),
                 "l"(src), "r"(bytes), "r"(smem(bar))
                 : "memory");
}

struct Options {
    bool all_arrive = false;  // every lane arrives, not lane 0 after __syncwarp
    bool bulk = true;         // full tiles by bulk copy (else every tile element by element)
    bool one_block = false;   // one block takes every tile, round the ring (else one tile a block)
    int stages = MAX_STAGES;
    int tiles = 9;            // the last one partial
    int partial = 1272;       // elements of the last tile (a 75000-element f64 shard's)
};

__device__ double warp_sum(double v) {
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

__global__ void __launch_bounds__(THREADS) stages_kernel(const double *in, long n, int tiles, int stages, bool all_arrive,
                                                         bool bulk, double *reduced_sums, double *scanned_sums) {
    extern __shared__ __align__(128) double bufs[];
    __shared__ __align__(8) uint64_t full[MAX_STAGES], reduced[MAX_STAGES], empty[MAX_STAGES];
    __shared__ double part_totals[MAX_STAGES][REDUCERS];
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const uint32_t lanes = all_arrive ? WARP : 1;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            mbar_init(&full[s], lanes);
            mbar_init(&reduced[s], all_arrive ? REDUCERS * WARP : 1);
            mbar_init(&empty[s], REDUCERS * lanes);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    int k = 0;  // this block's k-th tile: stage k % stages, phase (k / stages) & 1
    for (int t = blockIdx.x; t < tiles; t += gridDim.x, k++) {
        const int s = k % stages;
        const uint32_t phase = (k / stages) & 1;
        double *buf = bufs + s * TILE;
        const long base = (long)t * TILE;
        const int len = (int)(n - base < TILE ? n - base : TILE);
        if (warp == LOAD_WARP) {
            mbar_wait(&empty[s], phase ^ 1);
            if (bulk && len == TILE) {
                if (lane == 0) {
                    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                    mbar_arrive_expect_tx(&full[s], TILE * sizeof(double));
                    bulk_to_shared(buf, in + base, TILE * sizeof(double), &full[s]);
                } else if (all_arrive) {
                    mbar_arrive(&full[s]);
                }
            } else {
                for (int i = lane; i < TILE; i += WARP) buf[i] = i < len ? in[base + i] : 0.0;
                __syncwarp();
                if (all_arrive || lane == 0) mbar_arrive(&full[s]);
            }
        } else if (warp < REDUCERS) {
            mbar_wait(&full[s], phase);
            const double2 *part = reinterpret_cast<const double2 *>(buf + warp * PART);
            double acc = 0.0;
            for (int j = 0; j < PART / (2 * WARP); j++) {
                const double2 v = part[j * WARP + lane];
                acc += v.x + v.y;
            }
            acc = warp_sum(acc);
            if (lane == 0) part_totals[s][warp] = acc;
            asm volatile("barrier.sync.aligned 1, %0;" ::"r"(REDUCERS * WARP) : "memory");
            if (warp == 0 && lane == 0) {
                double total = 0.0;
                for (int w = 0; w < REDUCERS; w++) total += part_totals[s][w];
                reduced_sums[t] = total;
            }
            if (all_arrive || (warp == 0 && lane == 0)) mbar_arrive(&reduced[s]);
        } else if (warp < LOAD_WARP) {
            const int sw = warp - REDUCERS;
            mbar_wait(&reduced[s], phase);
            mbar_wait(&full[s], phase);
            const double2 *share = reinterpret_cast<const double2 *>(buf + sw * PART);
            double acc = 0.0;
            for (int j = 0; j < PART / (2 * WARP); j++) {
                const double2 v = share[j * WARP + lane];
                acc += v.x + v.y;
            }
            acc = warp_sum(acc);
            for (int w = 0; w < sw; w++) acc += part_totals[s][w];
            if (lane == 0) scanned_sums[t * REDUCERS + sw] = acc;  // the share's inclusive prefix in its tile
            __syncwarp();
            if (all_arrive || lane == 0) mbar_arrive(&empty[s]);
        }
    }
}

static bool check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--arrive") && (!strcmp(v, "lane0") || !strcmp(v, "all"))) o.all_arrive = !strcmp(v, "all"), i++;
        else if (!strcmp(a, "--load") && (!strcmp(v, "bulk") || !strcmp(v, "elementwise"))) o.bulk = !strcmp(v, "bulk"), i++;
        else if (!strcmp(a, "--grid") && (!strcmp(v, "tiles") || !strcmp(v, "one"))) o.one_block = !strcmp(v, "one"), i++;
        else if (!strcmp(a, "--stages") && atoi(v) >= 1 && atoi(v) <= MAX_STAGES) o.stages = atoi(v), i++;
        else if (!strcmp(a, "--tiles") && atoi(v) >= 1 && atoi(v) <= 100000) o.tiles = atoi(v), i++;
        else {
            fprintf(stderr,
                    "usage: %s [--arrive lane0|all] [--load bulk|elementwise] [--grid tiles|one] "
                    "[--stages 1..%d] [--tiles N]\n",
                    argv[0], MAX_STAGES);
            return 2;
        }
    }
    const long n = (long)(o.tiles - 1) * TILE + o.partial;
    const int grid = o.one_block ? 1 : o.tiles;
    const size_t smem_bytes = (size_t)o.stages * TILE * sizeof(double);
    printf("mbarrier_stages: arrive %s, load %s, grid %d, %d stages, %d tiles, n=%ld\n", o.all_arrive ? "all" : "lane0",
           o.bulk ? "bulk" : "elementwise", grid, o.stages, o.tiles, n);
    double *in, *reduced, *scanned;
    if (!check(cudaMalloc(&in, n * sizeof(double)), "cudaMalloc") ||
        !check(cudaMalloc(&reduced, o.tiles * sizeof(double)), "cudaMalloc") ||
        !check(cudaMalloc(&scanned, o.tiles * REDUCERS * sizeof(double)), "cudaMalloc") ||
        !check(cudaFuncSetAttribute(stages_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes),
               "cudaFuncSetAttribute"))
        return 3;
    bool pass = true;
    for (int launch = 0; launch < 2; launch++) {
        std::vector<double> h(n);
        for (long i = 0; i < n; i++) h[i] = (double)((i * 7 + launch * 5) % 13) - 6.0;  // integers: exact sums
        std::vector<double> want(o.tiles, 0.0), want_parts(o.tiles * REDUCERS, 0.0);
        for (long i = 0; i < n; i++) want[i / TILE] += h[i], want_parts[i / PART] += h[i];
        for (int p = 0; p < o.tiles * REDUCERS; p++) want_parts[p] += p % REDUCERS ? want_parts[p - 1] : 0.0;
        if (!check(cudaMemcpy(in, h.data(), n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy")) return 3;
        stages_kernel<<<grid, THREADS, smem_bytes>>>(in, n, o.tiles, o.stages, o.all_arrive, o.bulk, reduced, scanned);
        if (!check(cudaDeviceSynchronize(), "kernel")) return 3;
        std::vector<double> got(o.tiles), got_parts(o.tiles * REDUCERS);
        cudaMemcpy(got.data(), reduced, o.tiles * sizeof(double), cudaMemcpyDeviceToHost);
        cudaMemcpy(got_parts.data(), scanned, o.tiles * REDUCERS * sizeof(double), cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int t = 0; t < o.tiles; t++) wrong += got[t] != want[t];
        for (int p = 0; p < o.tiles * REDUCERS; p++) wrong += got_parts[p] != want_parts[p];
        printf("launch %d: %d tile and part sums, %d wrong\n", launch, o.tiles * (1 + REDUCERS), wrong);
        pass &= wrong == 0;
    }
    cudaFree(in);
    cudaFree(reduced);
    cudaFree(scanned);
    printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
