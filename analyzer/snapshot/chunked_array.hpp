// An append-only array in fixed-size chunks. A std::vector that doubles
// holds the old and the new buffer at once while it copies, so its peak is
// up to twice its size (three times its contents just after a doubling);
// chunks never move, so the peak is the contents plus one chunk. The value
// tree's arrays hold most of a large snapshot's memory (bench/README.md).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace oomlens::analyzer::snapshot {

template <typename T, std::size_t kChunkBits = 16>
class ChunkedArray {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }

  void push_back(const T& value) {
    if ((size_ & (kChunk - 1)) == 0 && (size_ >> kChunkBits) == chunks_.size())
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(kChunk));
    (*this)[size_++] = value;
  }
  // Forgets the elements from `size` on; their chunks stay for reuse.
  void truncate(std::size_t size) {
    if (size < size_) size_ = size;
  }
  void append(const T* items, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) push_back(items[i]);
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace oomlens::analyzer::snapshot
