/* The in-situ ACURDION signatures of TI files, for the differential test
 * against the Go cluster package (capture's TestTracerSignaturesMatchGo):
 * the tracer's source included, each file signed as the tracer signs the
 * lines it writes (kr_feed, in 64 KiB writes), its calls folded into loops
 * (kc_push), and one line printed per file: the loop signature, the
 * averaged signatures (count, src, dest, key, color, tag, comp:
 * ka_averages) and the type bits.
 *
 *   mpicc -O2 -I DIR-OF-kairos_trace.c -o signacurdion capture/testdata/signacurdion.c
 *   ./signacurdion RANKS FILE-OF-RANK-0.ti FILE-OF-RANK-1.ti ...
 */
#include "kairos_trace.c"

static void sign(const char *path, int rank) {
  static char data[1 << 24];
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  kr_me = (struct kr_sig){.path = {0xcbf29ce484222325u, 0x84222325cbf29ce4u},
                          .ref = {0xcbf29ce484222325u, 0x9e3779b97f4a7c15u}};
  kr_comp = 0;
  memset(&kr_more, 0, sizeof kr_more);
  kc_reset(&kc_sig);
  kt_rank = rank;
  for (size_t i = 0; i < n; i += sizeof kt_file) kr_feed(data + i, n - i < sizeof kt_file ? n - i : sizeof kt_file);
  kc_finish(&kc_sig);
  double v[8];
  ka_averages(v);
  printf("%016llx", (unsigned long long)kc_loop());
  for (int i = 0; i < 7; i++) printf(" %.17g", v[i]);
  printf(" %016llx\n", (unsigned long long)kr_me.types);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: signacurdion RANKS FILE.ti...\n");
    return 2;
  }
  kt_size = atoi(argv[1]), kr_method = KR_ACURDION;
  for (int i = 2; i < argc; i++) sign(argv[i], i - 2);
  return 0;
}
