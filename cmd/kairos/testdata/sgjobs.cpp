// sgjobs replays a workload of jobs with SimGrid 3.32, as its
// replay_multiple_manual example runs one: the reference for kairos
// simulate --jobs. Usage:
//
//   sgjobs PLATFORM WORKLOAD [INITIAL_NOISE BETWEEN_NOISE] [--cfg=...]
//
// WORKLOAD has a job a line, "NAME DESCRIPTION RANKS START HOSTS": a TI
// description file (one rank's trace a line, relative to the workload's
// directory), a start date in whole seconds and RANKS comma-separated
// indexes into the platform's hosts sorted by name. Jobs start in the
// order of their dates, then names. A "workload" actor on the first host
// sleeps until each job's date and starts a job actor on the job's first
// host, which starts the ranks, waits for them at a barrier and sleeps a
// second. The noise is sleeper actors (the i-th sleeping i seconds),
// created on the first host before the workload actor, and on a job's
// first host before its job actor. Each rank prints "rank JOB RANK END"
// with 9 decimals when its replay ends.
#include <simgrid/s4u.hpp>
#include <smpi/smpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Job {
  std::string name;
  std::vector<std::string> traces;
  int start;
  std::vector<int> hosts;
};

static std::vector<sg4::Host*> all_hosts;
static int between_noise;

static void make_noise(int n, sg4::Host* host)
{
  for (int i = 1; i <= n; i++)
    sg4::Actor::create("noise", host, [i] { sg4::this_actor::sleep_for(i); });
}

static void run_rank(const Job* job, int rank, sg4::BarrierPtr done)
{
  smpi_replay_run(job->name.c_str(), rank, 0, job->traces[rank].c_str());
  std::printf("rank %s %d %.9f\n", job->name.c_str(), rank, sg4::Engine::get_clock());
  done->wait();
}

static void run_job(const Job* job)
{
  auto done = sg4::Barrier::create(job->hosts.size() + 1);
  for (size_t r = 0; r < job->hosts.size(); r++)
    sg4::Actor::create(job->name + "_" + std::to_string(r), all_hosts[job->hosts[r]], run_rank, job, (int)r, done);
  done->wait();
  sg4::this_actor::sleep_for(1);
}

static void run_workload(const std::vector<Job>* jobs)
{
  for (const Job& job : *jobs) {
    double now = sg4::Engine::get_clock();
    if (job.start > now)
      sg4::this_actor::sleep_for(job.start - now);
    make_noise(between_noise, all_hosts[job.hosts[0]]);
    sg4::Actor::create("job_" + job.name, all_hosts[job.hosts[0]], run_job, &job);
  }
}

static std::vector<Job> read_jobs(const std::string& path)
{
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  std::ifstream in(path);
  std::vector<Job> jobs;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    Job job;
    std::string desc, hosts;
    int ranks;
    if (!(words >> job.name >> desc >> ranks >> job.start >> hosts))
      continue;
    std::istringstream list(hosts);
    for (std::string h; std::getline(list, h, ',');)
      job.hosts.push_back(std::stoi(h));
    std::ifstream traces(dir + desc);
    for (std::string t; std::getline(traces, t) && (int)job.traces.size() < ranks;)
      job.traces.push_back(dir + t);
    jobs.push_back(job);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.start != b.start ? a.start < b.start : a.name < b.name;
  });
  return jobs;
}

int main(int argc, char* argv[])
{
  sg4::Engine e(&argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLATFORM WORKLOAD\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  all_hosts = e.get_all_hosts();
  std::vector<Job> jobs = read_jobs(argv[2]);
  for (const Job& job : jobs)
    SMPI_app_instance_register(job.name.c_str(), nullptr, job.hosts.size());
  SMPI_init();
  if (argc > 4) {
    between_noise = std::stoi(argv[4]);
    make_noise(std::stoi(argv[3]), all_hosts[0]);
  }
  sg4::Actor::create("workload", all_hosts[0], run_workload, &jobs);
  e.run();
  std::printf("clock %.9f\n", sg4::Engine::get_clock());
  SMPI_finalize();
  return 0;
}
