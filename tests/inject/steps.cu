// A small CUDA C++ program for `attnprof record` (tests/inject/README: how the fixtures were made).
// Each step copies its input to the device, runs a scale, a row softmax and a reduction,
// clears an output, copies the result back and synchronises. The mode says how the steps
// are marked, so that each of record's step rules has a program to find:
//   nvtx N    each step inside an NVTX range named "step"            (rule 1: NVTX)
//   graph N   the step's kernels captured once into a CUDA graph, launched N times (rule 2)
//   plain N   no marks at all                                         (rule 3: the period)
//   crash N   as nvtx, then abort() after N/2 steps                   (an incomplete recording)
//   nowork    CUDA initialised, no GPU work                           (record's "no GPU work" line)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
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
