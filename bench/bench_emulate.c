/* The program bench_emulate.cpp runs natively and under emulation (docs/emulation.md,
 * "Slowdown"): `pmc_bench_emulate_target N` sorts N pseudo-random ints with the C library's qsort
 * (calls through a pointer, data-dependent branches), then multiplies two 96 x 96 matrices
 * (loads, stores, a regular loop nest), and exits 0. */
#include <stdio.h>
#include <stdlib.h>

enum { kDim = 96 };

static int compare(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

static double a[kDim][kDim], b[kDim][kDim], c[kDim][kDim];

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 200000;
  if (n < 1) return 2;
  int* v = malloc((size_t)n * sizeof *v);
  if (!v) return 2;
  unsigned x = 2463534242u;
  for (long i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v[i] = (int)(x >> 1);
  }
  qsort(v, (size_t)n, sizeof *v, compare);
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) {
      a[i][j] = (double)(i + j);
      b[i][j] = (double)(i - j);
    }
  for (int i = 0; i < kDim; ++i)
    for (int k = 0; k < kDim; ++k)
      for (int j = 0; j < kDim; ++j) c[i][j] += a[i][k] * b[k][j];
  const int sorted = v[0] <= v[n - 1];
  free(v);
  return sorted && c[1][2] != 0.5 ? 0 : 1;
}
