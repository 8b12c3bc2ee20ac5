// sgroutes prints what SimGrid makes of a platform file: its hosts, links
// and the route between hosts, for platform's differential test.
// Usage: sgroutes platform.xml [stride [noself]]
// Hosts are taken in SimGrid's order (by name); with a stride s, only
// hosts 0, s, 2s... are used as route ends; noself leaves out the routes
// from a host to itself (SimGrid aborts on them in a routing="None" zone).
// A route SimGrid cannot compute (an exception) prints "route SRC DST
// error".
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine e(&argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s platform.xml [stride]\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  e.seal_platform();
  size_t stride = argc > 2 ? strtoul(argv[2], nullptr, 10) : 1;
  bool noself   = argc > 3 && std::string(argv[3]) == "noself";
  std::vector<simgrid::s4u::Host*> hosts = e.get_all_hosts();
  for (auto const* h : hosts)
    printf("host %s %.17g %d\n", h->get_cname(), h->get_speed(), h->get_core_count());
  for (auto const* l : e.get_all_links())
    printf("link %s %.17g %.17g %d\n", l->get_cname(), l->get_bandwidth(), l->get_latency(),
           static_cast<int>(l->get_sharing_policy()));
  for (size_t i = 0; i < hosts.size(); i += stride)
    for (size_t j = 0; j < hosts.size(); j += stride) {
      if (noself && i == j)
        continue;
      std::vector<simgrid::s4u::Link*> links;
      double lat = 0;
      try {
        hosts[i]->route_to(hosts[j], links, &lat);
      } catch (const std::exception&) {
        printf("route %s %s error\n", hosts[i]->get_cname(), hosts[j]->get_cname());
        continue;
      }
      printf("route %s %s %.17g", hosts[i]->get_cname(), hosts[j]->get_cname(), lat);
      for (auto const* l : links)
        printf(" %s", l->get_cname());
      printf("\n");
    }
  return 0;
}
