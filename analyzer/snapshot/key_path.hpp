// Where a value sits in a snapshot ("segments[3].blocks[7].size"), kept as a
// stack of steps and turned into text only when an error needs it: a large
// snapshot has millions of values and no errors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace oomlens::analyzer::snapshot {

class KeyPath {
 public:
  // Enters a dict key or a list index for as long as it lives.
  class Step {
   public:
    Step(KeyPath& path, std::string_view key) : path_(path) { path_.steps_.push_back({key, 0, false}); }
    Step(KeyPath& path, std::size_t index) : path_(path) { path_.steps_.push_back({{}, index, true}); }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    ~Step() { path_.steps_.pop_back(); }

   private:
    KeyPath& path_;
  };

  std::string str() const {
    std::string out;
    for (const Entry& step : steps_) {
      if (step.is_index) {
        out += '[' + std::to_string(step.index) + ']';
      } else {
        if (!out.empty()) out += '.';
        out += step.key;
      }
    }
    return out;
  }

 private:
  struct Entry {
    std::string_view key;  // views into the value tree (or a caller's string that outlives the step)
    std::size_t index;
    bool is_index;
  };
  std::vector<Entry> steps_;
};

}  // namespace oomlens::analyzer::snapshot
