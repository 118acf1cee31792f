#pragma once
// The accesses that may still be in flight on one buffer, for the analyzer, kept by their first
// element so that an access looks only at the records that can overlap it. A loop of chunk copies
// leaves one record per chunk live, none covering another: scanning them all on every access made
// the walk quadratic in the chunks (a 4096-chunk lab took 20 s under the sanitizers).
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace streamlab {

// R has `begin` and `end` (elements, end exclusive). Visits go in the order the records were
// added, as a list would give them, so the analyzer's findings come in the same order.
template <class R>
class LiveSet {
 public:
  void add(const R& r) {
    max_len_ = std::max(max_len_, r.end - r.begin);
    by_begin_.emplace(r.begin, Entry{next_++, r});
  }

  // Removes the records inside [begin, end] for which pred(record) holds.
  template <class P>
  void erase_within(int64_t begin, int64_t end, P pred) {
    for (auto it = by_begin_.lower_bound(begin); it != by_begin_.end() && it->first <= end;)
      it = pred(it->second.r) ? by_begin_.erase(it) : std::next(it);
  }

  // Calls f(record) for each record that may overlap [begin, end) (a superset: f tests), in the
  // order added. A record overlapping it starts less than the longest record's length before it.
  template <class F>
  void for_overlapping(int64_t begin, int64_t end, F f) const {
    visit(by_begin_.lower_bound(begin - max_len_ + 1), end, f);
  }

  // Calls f(record) for every record, in the order added.
  template <class F>
  void for_each(F f) const {
    visit(by_begin_.begin(), INT64_MAX, f);
  }

 private:
  struct Entry {
    uint64_t seq;
    R r;
  };
  using Map = std::multimap<int64_t, Entry>;

  template <class F>
  void visit(typename Map::const_iterator from, int64_t end, F f) const {
    std::vector<const Entry*> hits;
    for (auto it = from; it != by_begin_.end() && it->first < end; ++it)
      hits.push_back(&it->second);
    std::sort(hits.begin(), hits.end(),
              [](const Entry* a, const Entry* b) { return a->seq < b->seq; });
    for (const Entry* e : hits) f(e->r);
  }

  Map by_begin_;
  uint64_t next_ = 0;
  int64_t max_len_ = 0;
};

}  // namespace streamlab
