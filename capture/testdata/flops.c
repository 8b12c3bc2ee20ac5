/* The tracer's computation amounts, for capture's TestTracerFlopsExact:
 * the tracer's source included, each line of standard input "NS SPEED"
 * (nanoseconds, flop/s) printed as the TI trace writes it (kt_flops).
 *
 *   mpicc -O0 -I DIR-OF-kairos_trace.c -o flops capture/testdata/flops.c
 */
#include "kairos_trace.c"

int main(void) {
  unsigned long long ns;
  double speed;
  char s[64];
  while (scanf("%llu %lg", &ns, &speed) == 2) {
    kt_flops(s, sizeof s, (uint64_t)ns, speed);
    puts(s);
  }
  return 0;
}
