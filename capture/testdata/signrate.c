/* The in-situ reduction's cost per traced call: the tracer's source
 * included, its signing (kr_feed) timed over a TI file's bytes, fed in
 * 64 KiB writes as the tracer's buffer flushes them, as callpath signs
 * or, with a fourth argument acurdion, with the folding of the calls into
 * loops too; with MODE+fold (callpath+fold, acurdion+fold), the lines go
 * the way the tracer's reduction takes them (kr_write: the hold, the
 * rank's trace folded with its parameters, then signed).
 *
 *   mpicc -O2 -I capture/csrc -o signrate capture/testdata/signrate.c -lm
 *   ./signrate TRACE-RANK-FILE.ti RANKS [REPEATS [MODE]]
 */
#include "kairos_trace.c"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: signrate FILE.ti RANKS [REPEATS [acurdion]]\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  static char data[1 << 26];
  size_t n = fread(data, 1, sizeof data, f), lines = 0;
  fclose(f);
  for (size_t i = 0; i < n; i++) lines += data[i] == '\n';
  const char *mode = argc > 4 ? argv[4] : "callpath";
  int fold = strstr(mode, "+fold") != NULL;
  kt_rank = 0, kt_size = atoi(argv[2]), kr_method = strncmp(mode, "acurdion", 8) == 0 ? KR_ACURDION : KR_CALLPATH;
  int repeats = argc > 3 ? atoi(argv[3]) : 100;
  struct timespec t0, t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  for (int k = 0; k < repeats; k++)
    for (size_t i = 0; i < n; i += sizeof kt_file) (fold ? kr_write : kr_feed)(data + i, n - i < sizeof kt_file ? n - i : sizeof kt_file);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("%zu lines x %d: %.1f ns a line (CPU), signature %016llx", lines, repeats, 1e9 * s / ((double)lines * repeats),
         (unsigned long long)kr_me.path[0]);
  if (fold) printf(", folded trace %.0f bytes", kc_size(&kc_trc) + (double)kp_hcap);
  printf("\n");
  return 0;
}
