/* A program whose activity is known from its source, for test_emulate*.cpp (docs/emulation.md).
 * Built by the tests with `gcc -O1 -g` (GCC: noipa keeps it from specializing the C functions)
 * and run as `loop N [STATUS]`: each function below runs once with N, then the program exits
 * with STATUS (default 0).
 *
 * count_down and stream are written in assembly so that their instructions, loads, stores and
 * branches do not depend on the compiler; each starts a 64-byte-aligned line of its own, so its
 * code is fetched from lines no other code touched before (one L1 instruction miss and one
 * last-level miss per line, for code shorter than a line of 32 or 64 bytes). classify and
 * indirect_calls are C, whose conditional-branch counts per loop iteration follow from the
 * source at -O1 (the reasoning is in tests/hal/emulate/test_emulate.cpp).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdlib.h>
#include <sys/mman.h>

/* count_down(n), n >= 1: the loop runs n times.
 *   mov %rdi,%rax ; 1: sub $1,%rax ; jnz 1b ; ret
 * 2n + 2 instructions, n conditional branches, 1 data read (ret's return address). */
long count_down(long n);
/* stream(p, n), n >= 1: adds up n longs, writing each running sum back.
 *   xor %eax,%eax ; 2: add (%rdi),%rax ; mov %rax,(%rdi) ; add $8,%rdi ; sub $1,%rsi ; jnz 2b ; ret
 * 5n + 2 instructions, n + 1 data reads, n data writes, n conditional branches. */
long stream(long* p, long n);
__asm__(".text\n"
        ".p2align 6\n"
        ".globl count_down\n"
        ".type count_down, @function\n"
        "count_down:\n"
        "  mov %rdi, %rax\n"
        "1:\n"
        "  sub $1, %rax\n"
        "  jnz 1b\n"
        "  ret\n"
        ".size count_down, .-count_down\n"
        ".p2align 6\n"
        ".globl stream\n"
        ".type stream, @function\n"
        "stream:\n"
        "  xor %eax, %eax\n"
        "2:\n"
        "  add (%rdi), %rax\n"
        "  mov %rax, (%rdi)\n"
        "  add $8, %rdi\n"
        "  sub $1, %rsi\n"
        "  jnz 2b\n"
        "  ret\n"
        ".size stream, .-stream\n"
        ".p2align 6\n");

/* One conditional branch per iteration for the `if` (the asm statement, which may not run
 * unconditionally, keeps GCC from turning it into a conditional move), one for the loop test,
 * and one to enter the loop: 2n + 1. */
__attribute__((noinline, noipa)) long classify(const unsigned char* v, long n) {
  long odd = 0;
  for (long i = 0; i < n; ++i) {
    if (v[i] & 1) {
      odd += v[i];
      __asm__ volatile("" ::: "memory");
    }
  }
  return odd;
}

__attribute__((noinline, noipa)) long twice(long x) { return 2 * x; }
long (*volatile operation)(long) = twice;

/* n calls through a pointer (n indirect calls) and the loop's n + 1 conditional branches. */
__attribute__((noinline, noipa)) long indirect_calls(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += operation(i);
  return sum;
}

enum { kStreamBytes = 64 * 1024 };

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000;
  const int status = argc > 2 ? atoi(argv[2]) : 0;
  if (n < 1) return 2;
  /* Pseudo-random bytes (a fixed linear congruential sequence): about half are odd. */
  unsigned char* bytes = malloc((size_t)n);
  if (!bytes) return 2;
  unsigned x = 12345u;
  for (long i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    bytes[i] = (unsigned char)(x >> 16);
  }
  /* Fresh pages no code of the process touched before: every line of them misses once. */
  long* data = mmap(0, kStreamBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return 2;
  long r = count_down(n);
  r += stream(data, kStreamBytes / (long)sizeof(long));
  r += classify(bytes, n);
  r += indirect_calls(n);
  free(bytes);
  return r == 0 ? 3 : status;
}
