// A user kernel in a file of its own (tests/data/user_kernel_file.yaml): out[i] = start + i.
template <class T>
__device__ T value_at(T start, long long i) {
  return start + static_cast<T>(i);
}

extern "C" __global__ void iota(int* out, int start, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = value_at(start, i);
}
