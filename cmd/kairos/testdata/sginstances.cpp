// sginstances replays several time-independent traces side by side with
// SimGrid 3.32 (SMPI's application instances), the reference for kairos
// simulate --instances. Usage:
//
//   sginstances INSTANCES PLATFORM DEPLOYMENT [--cfg=...]
//
// INSTANCES lists "ID RANKS" per line; DEPLOYMENT places one actor per
// rank with the arguments ID RANK TRACE DELAY_FLOPS. It prints the clock
// at the end with 9 decimals.
#include <simgrid/engine.h>
#include <smpi/smpi.h>

#include <cstdio>
#include <fstream>
#include <string>

static void rank_main(int argc, char* argv[])
{
  double delay = argc > 4 ? std::stod(argv[4]) : 0.0;
  smpi_replay_run(argv[1], std::stoi(argv[2]), delay, argv[3]);
}

int main(int argc, char* argv[])
{
  simgrid_init(&argc, argv);
  SMPI_init();
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s INSTANCES PLATFORM DEPLOYMENT\n", argv[0]);
    return 2;
  }
  simgrid_load_platform(argv[2]);
  std::ifstream in(argv[1]);
  std::string id;
  int ranks;
  while (in >> id >> ranks)
    SMPI_app_instance_register(id.c_str(), rank_main, ranks);
  simgrid_load_deployment(argv[3]);
  simgrid_run();
  std::printf("clock %.9f\n", simgrid_get_clock());
  SMPI_finalize();
  return 0;
}
