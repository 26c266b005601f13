#include "analyzer/library_files.hpp"

#include <array>

namespace oomlens::analyzer {

bool is_library_file(std::string_view file) {
  static constexpr std::array<std::string_view, 14> kLibraryMarks = {
      "/site-packages/", "/dist-packages/", "<frozen ", "/lib/python", "\\Lib\\",
      "/torch/",         "/jax/",           "/jaxlib/", "/tensorflow/", "/keras/",
      "\\site-packages\\", "/flax/",        "/deepspeed/", "/accelerate/"};
  for (auto mark : kLibraryMarks)
    if (file.find(mark) != std::string_view::npos) return true;
  return file.starts_with("<");  // <string>, <stdin>, <frozen ...>
}

}  // namespace oomlens::analyzer
