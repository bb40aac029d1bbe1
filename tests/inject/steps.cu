// A small CUDA C++ program for `attnprof record` (tests/inject/README: how the fixtures were made).
// Each step copies its input to the device, runs a scale, a row softmax and a reduction,
// clears an output, copies the result back and synchronises. The mode says how the steps
// are marked, so that each of record's step rules has a program to find:
//   nvtx N    each step inside an NVTX range named "step"            (rule 1: NVTX)
//   graph N   the step's kernels captured once into a CUDA graph, launched N times (rule 2)
//   plain N   no marks at all                                         (rule 3: the period)
//   crash N   as nvtx, then abort() after N/2 steps                   (an incomplete recording)
//   nowork    CUDA initialised, no GPU work                           (record's "no GPU work" line)
//   launches N K [Q]   N steps of K launches of a tiny kernel, each step in an NVTX range "step" and
//             between two CUDA events: the host's cost of one launch, plain or under injection
//             (bench/record_overhead_h200.sh); prints one JSON line of per-step times. With Q,
//             each launch comes after Q cudaGetDevice calls, as a PyTorch op makes about ten
//             untraced runtime calls around its launch: what injection costs calls it records none of
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

static const int ROWS = 512, COLS = 1024;

__global__ void scale_rows(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}

// One block per row: max, sum of exponentials, normalise.
__global__ void softmax_rows(const float *x, float *y, int cols)
{
    __shared__ float red[256];
    const float *row = x + (size_t)blockIdx.x * cols;
    float *out = y + (size_t)blockIdx.x * cols;
    float m = -1e30f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        sum += __expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = __expf(row[c] - m) / sum;
}

__global__ void column_sum(const float *y, float *out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    float s = 0;
    for (int r = 0; r < rows; r++)
        s += y[(size_t)r * cols + c];
    out[c] = s;
}

__global__ void tiny(float *x) { x[threadIdx.x] += 1.0f; }

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0.0;
}

// Host-bound steps: K launches of a 32-thread kernel (about 2 µs on the GPU, less than the launch
// itself) between two events, so a step's event time is the host's launch rate; the wall time of
// the K launches alone (no synchronisation inside) is the host's cost per launch.
static int launches(int steps, int k, int queries)
{
    float *x;
    CHECK(cudaMalloc(&x, 32 * sizeof(float)));
    CHECK(cudaMemset(x, 0, 32 * sizeof(float)));
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const int warmup = 20;
    std::vector<double> event_us, host_us;
    for (int i = 0; i < warmup + steps; i++) {
        nvtxRangePushA("step");
        CHECK(cudaEventRecord(a, st));
        auto t0 = std::chrono::steady_clock::now();
        int dev = 0;
        for (int j = 0; j < k; j++) {
            for (int q = 0; q < queries; q++)
                CHECK(cudaGetDevice(&dev));
            tiny<<<1, 32, 0, st>>>(x);
        }
        auto t1 = std::chrono::steady_clock::now();
        CHECK(cudaEventRecord(b, st));
        nvtxRangePop();
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (i >= warmup) {
            event_us.push_back(1000.0 * ms);
            host_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
    }
    std::printf("{\"steps\": %d, \"launches\": %d, \"queries\": %d, \"event_us_median\": %.3f, \"host_us_per_launch_median\": %.4f, "
                "\"event_us\": [", steps, k, queries, median(event_us), median(host_us) / k);
    for (size_t i = 0; i < event_us.size(); i++)
        std::printf("%s%.3f", i ? ", " : "", event_us[i]);
    std::printf("]}\n");
    return 0;
}

struct buffers {
    float *x, *y, *sum;
    std::vector<float> host, result;
};

static void kernels(buffers &b, cudaStream_t st)
{
    int n = ROWS * COLS;
    scale_rows<<<(n + 255) / 256, 256, 0, st>>>(b.x, 0.125f, n);
    softmax_rows<<<ROWS, 256, 0, st>>>(b.x, b.y, COLS);
    CHECK(cudaMemsetAsync(b.sum, 0, COLS * sizeof(float), st));
    column_sum<<<(COLS + 255) / 256, 256, 0, st>>>(b.y, b.sum, ROWS, COLS);
}

static void step(buffers &b, cudaStream_t st)
{
    CHECK(cudaMemcpyAsync(b.x, b.host.data(), b.host.size() * sizeof(float), cudaMemcpyHostToDevice, st));
    kernels(b, st);
    CHECK(cudaMemcpyAsync(b.result.data(), b.sum, COLS * sizeof(float), cudaMemcpyDeviceToHost, st));
    CHECK(cudaStreamSynchronize(st));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "nvtx";
    int steps = argc > 2 ? std::atoi(argv[2]) : 10;
    CHECK(cudaFree(0));
    if (!std::strcmp(mode, "nowork"))
        return 0;
    if (!std::strcmp(mode, "launches"))
        return launches(steps, argc > 3 ? std::atoi(argv[3]) : 100, argc > 4 ? std::atoi(argv[4]) : 0);
    buffers b;
    b.host.resize((size_t)ROWS * COLS);
    b.result.resize(COLS);
    for (size_t i = 0; i < b.host.size(); i++)
        b.host[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    CHECK(cudaMalloc(&b.x, b.host.size() * sizeof(float)));
    CHECK(cudaMalloc(&b.y, b.host.size() * sizeof(float)));
    CHECK(cudaMalloc(&b.sum, COLS * sizeof(float)));
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st));
    if (!std::strcmp(mode, "graph")) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CHECK(cudaMemcpy(b.x, b.host.data(), b.host.size() * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        kernels(b, st);
        CHECK(cudaStreamEndCapture(st, &g));
        CHECK(cudaGraphInstantiate(&ge, g, 0));
        for (int i = 0; i < steps; i++) {
            CHECK(cudaGraphLaunch(ge, st));
            CHECK(cudaStreamSynchronize(st));
        }
    } else {
        int marked = std::strcmp(mode, "plain") != 0;
        for (int i = 0; i < steps; i++) {
            if (!std::strcmp(mode, "crash") && i == steps / 2) {
                std::fprintf(stderr, "steps: crashing on purpose after %d steps\n", i);
                std::abort();
            }
            if (marked)
                nvtxRangePushA("step");
            step(b, st);
            if (marked)
                nvtxRangePop();
        }
    }
    std::printf("steps: %s, %d steps, sum[0] = %g\n", mode, steps, b.result[0]);
    return 0;
}
